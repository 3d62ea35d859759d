//! An agent: its submissions, runs, statistics, flagged successes, what its current
//! submission covers, and what the paper publishes about it.

use serde::{Deserialize, Serialize};
use store::stats::AgentStats;
use store::{AgentDetail, FailureCount, Hint, RunSummary};

use crate::TaskNames;
use crate::query::{BadQuery, Params, Strictness, lenient};

/// What an agent's page reads of its URL: the task and hint condition its runs are
/// narrowed to (`?task=`, `?hint=`), and the submission just sent (`?submitted=`, the
/// bundle id the submit form comes back with).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentQuery {
    pub task: Option<String>,
    pub hint: Option<store::Hint>,
    pub submitted: Option<String>,
}

impl AgentQuery {
    /// From query parameters: strictly an unknown hint condition is refused; leniently
    /// it narrows nothing.
    pub fn read(get: impl Fn(&str) -> Option<String>, reading: Strictness) -> Result<AgentQuery, BadQuery> {
        let p = Params::new(get, reading);
        Ok(AgentQuery { hint: p.name("hint")?, task: p.text("task"), submitted: p.text("submitted") })
    }

    /// The page's reading.
    pub fn from_page(get: impl Fn(&str) -> Option<String>) -> AgentQuery {
        lenient(AgentQuery::read(get, Strictness::Lenient))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentData {
    pub agent: AgentDetail,
    pub failures: Vec<FailureCount>,
    /// The runs of the chosen task and hint condition (all runs if neither is chosen).
    pub runs: Vec<RunSummary>,
    pub names: TaskNames,
    /// The current submission's intervals, rank range and group.
    pub stats: Option<AgentStats>,
    /// What the paper publishes about the agent, where its results are the paper's.
    pub published: Option<PublishedFacts>,
    /// The current submissions' flagged successes, with the findings that flag them.
    pub flagged: Vec<store::FindingRecord>,
    /// The same agent measured under other agent ids: (agent id, name, harness).
    pub elsewhere: Vec<(String, String, store::Harness)>,
    /// What its current submission covers of its task set.
    pub coverage: Option<Coverage>,
    /// Who submitted its current submission, their other rows with the same framework and
    /// model, and the maintainers' re-runs of all their rows (spec §5a).
    pub submitted_by: Option<crate::submitter::Submitter>,
    /// Per task and hint condition of its current submission where two or more attempts
    /// made the same patch: the most that share one, of the attempts with a patch.
    pub same_patches: Vec<(store::TaskId, store::Hint, i64, i64)>,
}

/// What a submission covers of its task set of `of` tasks: in words where it is less
/// than RExBench's design, and whether that ranks it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    pub words: Option<String>,
    pub ranked: bool,
    pub of: usize,
    /// Its runs that ended `infra_error`, per condition, in words (none if none did).
    pub infra_errors: Option<String>,
    /// The agent's earlier submission whose re-run did not reproduce (spec §6a).
    pub not_reproduced_before: Option<String>,
    /// What a caught lie costs it and its submitter (spec §4e).
    #[serde(default)]
    pub taint: store::Taint,
}

/// What the paper publishes about one agent beside its per-task results, and the known
/// issues that touch its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedFacts {
    /// The table of its per-task results (e.g. "Table 11").
    pub table: String,
    pub cost: Option<crate::paper::CostRow>,
    pub cost_caption: String,
    /// Its column of Table 9 or 10.
    pub errors: Option<ErrorColumn>,
    pub errors_unit: String,
    /// Issues about its numbers, and about the tables shown with them.
    pub issues: Vec<crate::paper::KnownIssue>,
}

/// An agent's column of Table 9 or 10: every error type in the table's row order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorColumn {
    pub table: String,
    pub rows: Vec<ErrorCountRow>,
}

impl ErrorColumn {
    /// The column's errors, over its rows.
    pub fn total(&self) -> i64 {
        self.rows.iter().map(|r| r.count).sum()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorCountRow {
    pub error_type: String,
    /// The table's group of it ("Python Errors", "Bash Errors", …).
    pub group: String,
    pub count: i64,
}

// The API's agent (`/api/v1/agents/{id}`).
/// One agent: its submissions, the task × hint grid of each current one, and every
/// integrity finding about the runs of its current submissions.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentAnswer {
    #[serde(flatten)]
    pub agent: AgentDetail,
    /// By run (task, hint, attempt), the submitter's first; reviewed ones included.
    pub findings: Vec<store::FindingRecord>,
    /// Who submitted its current submission (the key's owner), their other rows with the
    /// same framework and model, and the maintainers' re-runs of all their rows; none
    /// without a current submission.
    pub submitted_by: Option<crate::submitter::Submitter>,
}

/// What an agent's runs under one hint condition cost and took, over all tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub runs: i64,
    pub successes: i64,
    pub cost_runs: i64,
    pub cost_checked: i64,
    pub cost_marked: i64,
    pub cost: f64,
    pub duration_runs: i64,
    pub duration: f64,
}

impl Spent {
    pub fn of(grid: &store::TaskGrid, hint: Hint) -> Spent {
        let cells: Vec<&store::Rates> = grid.values().filter_map(|b| b.get(&hint)).collect();
        Spent {
            runs: cells.iter().map(|r| r.runs).sum(),
            successes: cells.iter().map(|r| r.successes).sum(),
            cost_runs: cells.iter().map(|r| r.cost_runs).sum(),
            cost_checked: cells.iter().map(|r| r.cost_checked).sum(),
            cost_marked: cells.iter().map(|r| r.cost_marked).sum(),
            cost: cells.iter().filter_map(|r| r.total_cost_usd).sum(),
            duration_runs: cells.iter().map(|r| r.duration_runs).sum(),
            duration: cells.iter().filter_map(|r| r.total_duration_s).sum(),
        }
    }

    /// The sum of several (an agent's three conditions).
    pub fn over<'a>(each: impl Iterator<Item = &'a Spent>) -> Spent {
        each.fold(Spent::default(), |t, s| Spent {
            runs: t.runs + s.runs,
            successes: t.successes + s.successes,
            cost_runs: t.cost_runs + s.cost_runs,
            cost_checked: t.cost_checked + s.cost_checked,
            cost_marked: t.cost_marked + s.cost_marked,
            cost: t.cost + s.cost,
            duration_runs: t.duration_runs + s.duration_runs,
            duration: t.duration + s.duration,
        })
    }
}

#[cfg(feature = "db")]
pub use answers::*;

#[cfg(feature = "db")]
mod answers {
    use store::{Hint, Store};

    use super::*;
    use crate::access::Reader;
    use crate::catalog::Catalog;
    use crate::{Missing, ViewError};

    /// The API's agent: its submissions, every integrity finding on its runs, and who
    /// submitted it.
    pub async fn answer(
        store: &Store,
        catalog: &Catalog,
        reader: &Reader,
        id: &str,
    ) -> Result<AgentAnswer, ViewError> {
        let mut agent =
            store.agent(id).await?.ok_or_else(|| ViewError::NotFound(Missing::Agent(id.to_owned())))?;
        let mut findings = store.agent_findings(id).await?;
        let access = crate::access::load(store, catalog, reader).await?;
        access.finding_records(&mut findings);
        access.reproduced(&mut agent.reproduced);
        let submitted_by = crate::submitter::of_agent(store, id).await?;
        Ok(AgentAnswer { agent, findings, submitted_by })
    }

    /// An agent's page: its submissions, the runs of `task` and `hint` (all where neither
    /// is chosen), its statistics, what the paper publishes about it, its flagged
    /// successes and what its current submission covers.
    pub async fn page(
        store: &Store,
        catalog: &Catalog,
        reader: &Reader,
        id: &str,
        task: Option<&str>,
        hint: Option<Hint>,
    ) -> Result<AgentData, ViewError> {
        let mut agent =
            store.agent(id).await?.ok_or_else(|| ViewError::NotFound(Missing::Agent(id.to_owned())))?;
        let failures = store.failures_by_agent(Some(id)).await?;
        let mut runs = Vec::new();
        for bundle_id in agent.current.keys() {
            runs.extend(store.runs_of(bundle_id, task, hint).await?);
        }
        let board = store.board_stats(store::Integrity::Reported, None).await?;
        let current = agent.newest_current().map(|(b, _)| b.to_owned());
        let stats = current.as_ref().and_then(|b| board.by_bundle.get(b).cloned());
        let published = published_facts(&catalog.paper, &agent);
        let mut flagged = store.agent_findings(id).await?;
        // Of the findings, those that flag a success: the rest are on the run pages.
        let flagging: std::collections::BTreeSet<i64> = flagged
            .iter()
            .filter(|f| f.outcome == store::Outcome::Success && f.finding.flags())
            .map(|f| f.run_id)
            .collect();
        flagged.retain(|f| flagging.contains(&f.run_id) && f.finding.flags());
        let access = crate::access::load(store, catalog, reader).await?;
        access.finding_records(&mut flagged);
        access.reproduced(&mut agent.reproduced);
        let elsewhere = store.same_agent_elsewhere(id).await?;
        let submitted_by = crate::submitter::of_agent(store, id).await?;
        let same_patches = match &current {
            None => Vec::new(),
            Some(bundle) => store
                .same_patches(bundle)
                .await?
                .into_iter()
                .map(|((t, h), (most, of))| (t, h, most, of))
                .collect(),
        };
        let coverage = match &current {
            None => None,
            Some(bundle) => {
                let rows = store
                    .leaderboard_rows(std::slice::from_ref(bundle), store::Integrity::Reported, None)
                    .await?;
                let sets = crate::leaderboard::task_sets(store, catalog).await?;
                rows.first().and_then(|row| {
                    let of = sets.iter().find(|s| s.digest == row.task_set_digest)?.tasks.len();
                    Some(Coverage {
                        words: crate::format::coverage_words(&row.coverage, of),
                        ranked: row.ranked(of),
                        of,
                        infra_errors: crate::format::infra_error_words(&row.by_hint),
                        not_reproduced_before: row.not_reproduced_before.clone(),
                        taint: row.taint.clone(),
                    })
                })
            }
        };
        Ok(AgentData {
            agent,
            failures,
            runs,
            names: crate::names(catalog),
            stats,
            published,
            flagged,
            elsewhere,
            coverage,
            submitted_by,
            same_patches,
        })
    }

    fn published_facts(paper: &crate::paper::Paper, agent: &AgentDetail) -> Option<PublishedFacts> {
        use crate::paper::issue;
        let current = agent.submissions.iter().find(|s| s.superseded_by.is_none())?;
        if current.provenance != store::ProvenanceKind::Published {
            return None;
        }
        let known = paper.agent(&agent.id)?;
        let counts = &paper.error_counts;
        let errors = paper.error_counts.by_agent.get(&agent.id).and_then(|column| {
            let table = counts.table_of(&known.framework)?.to_owned();
            let rows = counts
                .row_order
                .iter()
                .map(|e| ErrorCountRow {
                    error_type: e.clone(),
                    group: counts.row_category.get(e).cloned().unwrap_or_default(),
                    count: column.get(e).copied().unwrap_or(0),
                })
                .collect();
            Some(ErrorColumn { table, rows })
        });
        let mut shared = vec![issue::TABLE7_RUN_COUNT, issue::ERROR_COLUMN_ORDER, issue::ERROR_BELOW_FAILED];
        if agent.id == issue::TEXT_19_PERCENT_AGENT {
            shared.push(issue::TEXT_19_PERCENT);
        }
        let mut issues: Vec<crate::paper::KnownIssue> =
            shared.into_iter().filter_map(|id| paper.issue(id)).cloned().collect();
        issues.extend(
            paper.known_issues.iter().filter(|i| i.agent.as_deref() == Some(agent.id.as_str())).cloned(),
        );
        Some(PublishedFacts {
            table: known.table.clone(),
            cost: paper.table7.by_agent.get(&agent.id).cloned(),
            cost_caption: paper.table7.caption.clone(),
            errors,
            errors_unit: counts.unit.clone(),
            issues,
        })
    }
}
