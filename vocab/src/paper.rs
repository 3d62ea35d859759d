//! The RExBench paper's published numbers (arXiv:2506.22598 v3), as the project's own
//! copy (`vocab/data/rexbench-v3-published.json`) gives them: the per-task results
//! (Tables 11–24), Table 5's averages, Table 7 (cost and duration per agent), Tables
//! 9–10 (error counts by error type) and the known inconsistencies of the published
//! numbers. Read here once, for `rexbench import-published` (which reconstructs runs
//! from the cells) and for the pages (which show the rest labelled as published).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Hint;

/// The project's copy of the paper's numbers.
pub const DATA: &str = include_str!("../data/rexbench-v3-published.json");

/// The paper's numbers, read from [`DATA`].
pub fn published() -> Paper {
    serde_json::from_str(DATA).expect("the embedded published results parse")
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Paper {
    pub source: Source,
    pub agents: Vec<PaperAgent>,
    /// Table 5: per agent and hint condition, the averages over the 12 tasks.
    pub table5: BTreeMap<String, BTreeMap<Hint, Cell>>,
    pub table7: Table7,
    pub error_counts: ErrorCounts,
    pub known_issues: Vec<KnownIssue>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Source {
    pub citation: String,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperAgent {
    pub id: String,
    pub framework: String,
    pub model: String,
    /// The table of its per-task results (e.g. "Table 11").
    pub table: String,
    /// Its per-task results: hint condition → task → the cell as printed.
    pub results: BTreeMap<Hint, BTreeMap<String, Cell>>,
}

/// A cell of the paper's results: a mean over 5 runs, as printed (2 decimals).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub final_success: f64,
    pub execution_success: f64,
    pub file_recall: f64,
}

/// Table 7 as printed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Table7 {
    pub caption: String,
    pub by_agent: BTreeMap<String, CostRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostRow {
    pub avg_cost_usd: f64,
    pub avg_duration_printed: String,
    pub avg_duration_s: f64,
    pub total_cost_usd: f64,
    pub total_duration_printed: String,
    pub total_duration_s: f64,
}

/// Tables 9 (aider) and 10 (OpenHands).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// Framework (`aider`, `OpenHands`) → table name.
    pub tables: BTreeMap<String, String>,
    /// What a count counts, in words.
    pub unit: String,
    /// The error types in the tables' row order, and the group of each.
    pub row_order: Vec<String>,
    pub row_category: BTreeMap<String, String>,
    /// Agent id → error type → count.
    pub by_agent: BTreeMap<String, BTreeMap<String, i64>>,
}

impl ErrorCounts {
    /// The table that prints an agent's column (e.g. "Table 9").
    pub fn table_of(&self, framework: &str) -> Option<&str> {
        self.tables.iter().find(|(f, _)| f.eq_ignore_ascii_case(framework)).map(|(_, t)| t.as_str())
    }
}

/// An inconsistency of the published numbers; the optional fields say which number it
/// touches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KnownIssue {
    pub id: String,
    pub kind: String,
    pub description: String,
    pub agent: Option<String>,
    pub condition: Option<Hint>,
    pub task: Option<String>,
    pub metric: Option<String>,
    #[serde(default)]
    pub tables: Vec<String>,
    /// For a mismatch between Table 5 and the per-task tables: what each gives.
    pub printed_table5: Option<f64>,
    pub computed_mean: Option<f64>,
}

impl KnownIssue {
    /// The issue in a few words, for the mark on the number it touches (the whole
    /// sentence is where the mark links to).
    pub fn summary(&self) -> String {
        match (self.printed_table5, self.computed_mean) {
            (Some(printed), Some(mean)) => {
                format!("Table 5: {printed:.2}; per-task mean: {mean:.2}")
            }
            _ => match self.kind.as_str() {
                "final_gt_execution" => "Final success above execution success as printed".to_owned(),
                "note_success_with_zero_file_recall" => "Success with file recall 0.00 as printed".to_owned(),
                "text_vs_table" => "The paper's text gives another figure".to_owned(),
                _ => self.tables.join(", "),
            },
        }
    }
}

/// The ids of the issues that touch the whole of a table or a text (not one cell).
pub mod issue {
    pub const TABLE7_RUN_COUNT: &str = "table7-run-count";
    pub const ERROR_COLUMN_ORDER: &str = "error-counts-column-order";
    pub const ERROR_BELOW_FAILED: &str = "error-counts-below-failed-runs";
    pub const FIGURE6: &str = "figure6-vs-error-tables";
    pub const TEXT_19_PERCENT: &str = "text-19-percent";
    pub const TABLE5_RECALL: &str = "table5-file-recall-pattern";
    /// The agent Section I's 19% is about.
    pub const TEXT_19_PERCENT_AGENT: &str = "aider-claude-4-sonnet";
}

impl Paper {
    pub fn agent(&self, id: &str) -> Option<&PaperAgent> {
        self.agents.iter().find(|a| a.id == id)
    }

    pub fn issue(&self, id: &str) -> Option<&KnownIssue> {
        self.known_issues.iter().find(|i| i.id == id)
    }

    /// The issues about one agent's number under one condition: of a metric over all
    /// tasks (`task` none), or of a task's cell.
    pub fn issues_of(&self, agent: &str, condition: Hint, task: Option<&str>) -> Vec<&KnownIssue> {
        self.known_issues
            .iter()
            .filter(|i| {
                i.agent.as_deref() == Some(agent)
                    && i.condition == Some(condition)
                    && i.task.as_deref() == task
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paper() -> Paper {
        published()
    }

    #[test]
    fn the_projects_copy_reads_as_the_pages_need_it() {
        let p = paper();
        assert_eq!(p.agents.len(), 14);
        assert_eq!(p.table5.len(), 14);
        assert!(p.agents.iter().all(|a| a.results.len() == 3), "every agent's three conditions");
        assert_eq!(p.table7.by_agent.len(), 14);
        assert_eq!(p.error_counts.by_agent.len(), 14);
        assert_eq!(p.error_counts.table_of("OpenHands"), Some("Table 10"));
        for id in [
            issue::TABLE7_RUN_COUNT,
            issue::ERROR_COLUMN_ORDER,
            issue::ERROR_BELOW_FAILED,
            issue::FIGURE6,
            issue::TEXT_19_PERCENT,
            issue::TABLE5_RECALL,
        ] {
            assert!(p.issue(id).is_some(), "{id}");
        }
        let recall = p.issues_of("openhands-gpt-5", Hint::None, None);
        assert_eq!(recall.len(), 1);
        assert_eq!(recall[0].metric.as_deref(), Some("file_recall"));
        let cell = p.issues_of("openhands-claude-4.5-opus", Hint::None, Some("implicit-ins"));
        assert_eq!(cell.len(), 2, "final above execution, and success with zero recall");
        assert_eq!(recall[0].summary(), "Table 5: 0.76; per-task mean: 0.68");
    }
}
