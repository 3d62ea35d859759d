//! The failure explorer: error types and patterns over current submissions, the paper's
//! Tables 9 and 10, and the successes with integrity findings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use store::{FailurePattern, TaskRow};

use crate::TaskNames;

/// Agents the failure explorer's chart and table show (those with the most failed runs).
pub const FAILURE_AGENTS_SHOWN: usize = 50;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailuresData {
    pub overview: store::FailureOverview,
    pub patterns: Vec<FailurePattern>,
    pub tasks: Vec<TaskRow>,
    pub names: TaskNames,
    /// Tables 9 and 10 of the paper, as printed.
    pub published: Vec<PublishedErrorTable>,
    pub published_unit: String,
    /// The known issues of those tables.
    pub issues: Vec<crate::paper::KnownIssue>,
    /// Successes with integrity findings: by check, by agent, the newest.
    pub integrity: store::IntegrityOverview,
    /// What each integrity check looks for, by slug.
    pub checks: BTreeMap<String, String>,
}

/// One of the paper's error tables: error types (rows, with their group) × agents
/// (columns) of one framework.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedErrorTable {
    pub table: String,
    pub framework: String,
    /// (agent id, model) per column, in the paper's order.
    pub agents: Vec<(String, String)>,
    /// (error type, group, count per column).
    pub rows: Vec<(String, String, Vec<i64>)>,
}

#[cfg(feature = "db")]
pub use answers::*;

#[cfg(feature = "db")]
mod answers {
    use store::Store;

    use super::*;
    use crate::ViewError;
    use crate::access::Reader;
    use crate::catalog::Catalog;

    fn published_error_tables(paper: &crate::paper::Paper) -> Vec<PublishedErrorTable> {
        let counts = &paper.error_counts;
        let mut tables: Vec<PublishedErrorTable> = counts
            .tables
            .iter()
            .map(|(framework, table)| {
                let agents: Vec<(String, String)> = paper
                    .agents
                    .iter()
                    .filter(|a| {
                        a.framework.eq_ignore_ascii_case(framework) && counts.by_agent.contains_key(&a.id)
                    })
                    .map(|a| (a.id.clone(), a.model.clone()))
                    .collect();
                let rows = counts
                    .row_order
                    .iter()
                    .map(|e| {
                        let column = |id: &String| {
                            counts.by_agent.get(id).and_then(|c| c.get(e)).copied().unwrap_or(0)
                        };
                        let group = counts.row_category.get(e).cloned().unwrap_or_default();
                        (e.clone(), group, agents.iter().map(|(id, _)| column(id)).collect())
                    })
                    .collect();
                PublishedErrorTable { table: table.clone(), framework: framework.clone(), agents, rows }
            })
            .collect();
        tables.sort_by(|a, b| a.table.cmp(&b.table));
        tables
    }

    /// The failure explorer: how runs failed over current submissions, the paper's error
    /// tables, and the successes in doubt (with integrity findings).
    pub async fn page(store: &Store, catalog: &Catalog, reader: &Reader) -> Result<FailuresData, ViewError> {
        use crate::paper::issue;
        let paper = &catalog.paper;
        let mut integrity = store.integrity_overview().await?;
        crate::access::load(store, catalog, reader).await?.finding_records(&mut integrity.runs);
        Ok(FailuresData {
            overview: store.failure_overview(FAILURE_AGENTS_SHOWN as i64).await?,
            patterns: store.failure_patterns(None).await?,
            tasks: store.tasks().await?,
            names: crate::names(catalog),
            published: published_error_tables(paper),
            published_unit: paper.error_counts.unit.clone(),
            issues: [issue::ERROR_COLUMN_ORDER, issue::ERROR_BELOW_FAILED, issue::FIGURE6]
                .into_iter()
                .filter_map(|id| paper.issue(id).cloned())
                .collect(),
            integrity,
            checks: catalog.checks.iter().cloned().collect(),
        })
    }
}
