//! The failure explorer: how the runs of every agent's current results failed (by agent
//! and outcome, by error type), the tasks no agent solves and those solved only with
//! hints, the failures agents share, the paper's Tables 9 and 10 beside the error types
//! here, and the successes in doubt. One answer, [`FailuresAnswer`], for the API
//! (`GET /api/v1/failures`) and the page (`/failures`), built by [`answer`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use store::{FindingRecord, Hint, Outcome, TaskId};

/// Agents the failure explorer's chart and table show (those with the most failed runs).
pub const FAILURE_AGENTS_SHOWN: usize = 50;

/// Ways of failing a task that agents share, shown at most.
pub const SHARED_SHOWN: usize = 30;

/// How the runs of every agent's current results failed; what `/failures` shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FailuresAnswer {
    /// Agents whose current results have at least one failed run.
    pub agents: i64,
    /// The outcomes of a failed run, in the order of each agent's `runs`.
    pub outcomes: Vec<Outcome>,
    /// The agents with the most failed runs (at most 50), most first, then by name.
    pub by_agent: Vec<AgentFailures>,
    /// The error types failed runs carry, alphabetically.
    pub error_types: Vec<ErrorTypeEntry>,
    /// Tasks with no successful run under any hint condition, of any current results.
    pub unsolved: Vec<TaskSuccesses>,
    /// Tasks with no successful run without hints, and at least one with hints.
    pub only_hinted: Vec<TaskSuccesses>,
    /// Ways of failing a task (outcome and error type) that at least two agents share,
    /// most agents first (at most 30).
    pub shared: Vec<SharedFailure>,
    /// The paper's error analysis, Tables 9 (aider) and 10 (OpenHands), as printed.
    pub published: Vec<PublishedErrorTable>,
    /// The unit of the paper's counts, in its words.
    pub published_unit: String,
    /// Each error type, as published (summed over each table's agents) and as evaluated
    /// here: the paper's order, then the types only the results here carry; a type
    /// neither has runs of is left out.
    pub comparison: Vec<ErrorComparison>,
    /// The known issues of the paper's error tables.
    pub issues: Vec<crate::paper::KnownIssue>,
    /// Successes with integrity findings no maintainer has dismissed.
    pub integrity: IntegritySummary,
    /// What each integrity check looks for, by its slug.
    pub checks: BTreeMap<String, String>,
    /// The tasks' names, by id (for the flagged successes' tasks).
    #[cfg_attr(feature = "openapi", schema(value_type = BTreeMap<String, String>))]
    pub names: crate::TaskNames,
}

/// One agent's failed runs, by outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentFailures {
    pub agent_id: String,
    pub display_name: String,
    /// Failed runs per outcome, in the order of the answer's `outcomes`.
    pub runs: Vec<i64>,
    /// All its failed runs.
    pub total: i64,
}

/// Failed runs that carry one error type, over current results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorTypeEntry {
    pub error_type: String,
    pub runs: i64,
    pub agents: i64,
    /// The agents with the most such runs, most first.
    pub most: Vec<AgentCount>,
}

/// An agent (by its display name) and a count of its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentCount {
    pub display_name: String,
    pub runs: i64,
}

/// A task and its successful runs under each hint condition, over current results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskSuccesses {
    pub task: TaskId,
    pub name: String,
    /// Agents whose current results ran it.
    pub agents: i64,
    pub successes: BTreeMap<Hint, i64>,
}

/// One way of failing a task that several agents share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SharedFailure {
    pub task: TaskId,
    pub name: String,
    pub outcome: Outcome,
    pub error_type: Option<String>,
    /// Agents with at least one run that ended this way.
    pub agents: i64,
    pub runs: i64,
}

/// One of the paper's error tables: error types (rows, with their group) × agents
/// (columns) of one framework.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PublishedErrorTable {
    pub table: String,
    pub framework: String,
    /// Its columns, in the paper's order.
    pub agents: Vec<PublishedAgent>,
    pub rows: Vec<PublishedErrorRow>,
    /// The sum of its counts.
    pub total: i64,
}

/// A column of a published error table: the agent it is (its id here) and its model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PublishedAgent {
    pub agent_id: String,
    pub model: String,
}

/// A row of a published error table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PublishedErrorRow {
    pub error_type: String,
    /// The paper's group of error types it is in.
    pub group: String,
    /// Its count per column, in the order of the table's `agents`.
    pub counts: Vec<i64>,
}

/// The failed runs the board's evaluations classified, over every error type.
pub fn evaluated_runs(comparison: &[ErrorComparison]) -> i64 {
    comparison.iter().map(|c| c.runs).sum()
}

/// One error type as the paper's tables print it and as the results here carry it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorComparison {
    pub error_type: String,
    /// Its count in each published table (summed over the table's agents), in the order
    /// of `published`.
    pub published: Vec<i64>,
    /// Failed runs evaluated here that carry it, and their agents.
    pub runs: i64,
    pub agents: i64,
}

/// Successes of the current results whose integrity findings no maintainer has dismissed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IntegritySummary {
    pub flagged: i64,
    /// Of them, those with a finding a maintainer confirmed.
    pub confirmed: i64,
    /// Flagged successes per check (a run counts once under each check that flags it).
    pub by_check: Vec<CheckCount>,
    /// The agents with the most flagged successes, most first.
    pub agents: Vec<AgentFlagged>,
    /// The newest flagged successes, with their findings (their words withheld where the
    /// run's outputs are private to the reader).
    pub runs: Vec<FindingRecord>,
}

/// A check and the flagged successes it found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CheckCount {
    pub check: String,
    pub successes: i64,
}

/// An agent and its flagged successes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentFlagged {
    pub agent_id: String,
    pub display_name: String,
    pub flagged: i64,
}

/// The outcomes of a failed run, in the order the board names them.
pub fn failed_outcomes() -> Vec<Outcome> {
    Outcome::ALL.into_iter().filter(|o| *o != Outcome::Success).collect()
}

/// The agents' failed runs per outcome (the columns `outcomes`), most first, then by name.
pub fn by_agent(counts: &[store::FailureCount], outcomes: &[Outcome]) -> Vec<AgentFailures> {
    let mut agents: BTreeMap<&str, AgentFailures> = BTreeMap::new();
    for f in counts {
        let entry = agents.entry(&f.agent_id).or_insert_with(|| AgentFailures {
            agent_id: f.agent_id.clone(),
            display_name: f.display_name.clone(),
            runs: vec![0; outcomes.len()],
            total: 0,
        });
        if let Some(i) = outcomes.iter().position(|o| *o == f.outcome) {
            entry.runs[i] += f.runs;
            entry.total += f.runs;
        }
    }
    let mut rows: Vec<AgentFailures> = agents.into_values().collect();
    rows.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.display_name.cmp(&b.display_name)));
    rows
}

/// The tasks no agent solves, and those solved only with hints.
pub fn unsolved_and_hinted(
    tasks: &[store::TaskRow],
    names: &crate::TaskNames,
) -> (Vec<TaskSuccesses>, Vec<TaskSuccesses>) {
    let entry = |r: &store::TaskRow| TaskSuccesses {
        task: r.task.clone(),
        name: names.get(&r.task).cloned().unwrap_or_else(|| r.task.to_string()),
        agents: r.agents,
        successes: Hint::ALL.into_iter().map(|h| (h, r.by_hint.get(&h).map_or(0, |r| r.successes))).collect(),
    };
    let all: Vec<TaskSuccesses> = tasks.iter().map(entry).collect();
    let of = |t: &TaskSuccesses, h: Hint| t.successes.get(&h).copied().unwrap_or(0);
    let unsolved = all.iter().filter(|t| Hint::ALL.into_iter().all(|h| of(t, h) == 0)).cloned().collect();
    let only_hinted = all
        .into_iter()
        .filter(|t| of(t, Hint::None) == 0 && of(t, Hint::Hints) + of(t, Hint::Detailed) > 0)
        .collect();
    (unsolved, only_hinted)
}

/// The ways of failing a task that at least two agents share, as many as are shown.
pub fn shared(patterns: &[store::FailurePattern], names: &crate::TaskNames) -> Vec<SharedFailure> {
    patterns
        .iter()
        .filter(|p| p.agents >= 2)
        .take(SHARED_SHOWN)
        .map(|p| SharedFailure {
            task: p.task.clone(),
            name: names.get(&p.task).cloned().unwrap_or_else(|| p.task.to_string()),
            outcome: p.outcome,
            error_type: p.error_type.clone(),
            agents: p.agents,
            runs: p.runs,
        })
        .collect()
}

/// Each error type as published and as evaluated here (see [`FailuresAnswer::comparison`]).
pub fn comparison(published: &[PublishedErrorTable], evaluated: &[ErrorTypeEntry]) -> Vec<ErrorComparison> {
    let Some(first) = published.first() else { return Vec::new() };
    let mut types: Vec<&str> = first.rows.iter().map(|r| r.error_type.as_str()).collect();
    for e in evaluated {
        if !types.contains(&e.error_type.as_str()) {
            types.push(&e.error_type);
        }
    }
    let column = |t: &PublishedErrorTable, e: &str| -> i64 {
        t.rows.iter().find(|r| r.error_type == e).map_or(0, |r| r.counts.iter().sum())
    };
    types
        .into_iter()
        .map(|e| {
            let here = evaluated.iter().find(|x| x.error_type == e);
            ErrorComparison {
                error_type: e.to_owned(),
                published: published.iter().map(|t| column(t, e)).collect(),
                runs: here.map_or(0, |x| x.runs),
                agents: here.map_or(0, |x| x.agents),
            }
        })
        .filter(|c| c.runs > 0 || c.published.iter().any(|n| *n > 0))
        .collect()
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
                let agents: Vec<PublishedAgent> = paper
                    .agents
                    .iter()
                    .filter(|a| {
                        a.framework.eq_ignore_ascii_case(framework) && counts.by_agent.contains_key(&a.id)
                    })
                    .map(|a| PublishedAgent { agent_id: a.id.clone(), model: a.model.clone() })
                    .collect();
                let rows: Vec<PublishedErrorRow> = counts
                    .row_order
                    .iter()
                    .map(|e| {
                        let column = |id: &String| {
                            counts.by_agent.get(id).and_then(|c| c.get(e)).copied().unwrap_or(0)
                        };
                        PublishedErrorRow {
                            error_type: e.clone(),
                            group: counts.row_category.get(e).cloned().unwrap_or_default(),
                            counts: agents.iter().map(|a| column(&a.agent_id)).collect(),
                        }
                    })
                    .collect();
                let total = rows.iter().map(|r| r.counts.iter().sum::<i64>()).sum();
                PublishedErrorTable {
                    table: table.clone(),
                    framework: framework.clone(),
                    agents,
                    rows,
                    total,
                }
            })
            .collect();
        tables.sort_by(|a, b| a.table.cmp(&b.table));
        tables
    }

    /// The failure explorer for `reader`: how runs failed over current submissions, the
    /// paper's error tables beside the error types here, and the successes in doubt
    /// (their findings' words as the one visibility rule lets `reader` see them).
    pub async fn answer(
        store: &Store,
        catalog: &Catalog,
        reader: &Reader,
    ) -> Result<FailuresAnswer, ViewError> {
        use crate::paper::issue;
        let paper = &catalog.paper;
        let names = crate::names(catalog);
        let mut integrity = store.integrity_overview().await?;
        crate::access::load(store, catalog, reader).await?.finding_records(&mut integrity.runs);
        let overview = store.failure_overview(FAILURE_AGENTS_SHOWN as i64).await?;
        let outcomes = failed_outcomes();
        let (unsolved, only_hinted) = unsolved_and_hinted(&store.tasks().await?, &names);
        let shared = shared(&store.failure_patterns(None).await?, &names);
        let error_types: Vec<ErrorTypeEntry> = overview
            .error_types
            .into_iter()
            .map(|e| ErrorTypeEntry {
                error_type: e.error_type,
                runs: e.runs,
                agents: e.agents,
                most: e
                    .most
                    .into_iter()
                    .map(|(display_name, runs)| AgentCount { display_name, runs })
                    .collect(),
            })
            .collect();
        let published = published_error_tables(paper);
        Ok(FailuresAnswer {
            agents: overview.agents,
            by_agent: by_agent(&overview.by_agent, &outcomes),
            outcomes,
            comparison: comparison(&published, &error_types),
            error_types,
            unsolved,
            only_hinted,
            shared,
            published,
            published_unit: paper.error_counts.unit.clone(),
            issues: [issue::ERROR_COLUMN_ORDER, issue::ERROR_BELOW_FAILED, issue::FIGURE6]
                .into_iter()
                .filter_map(|id| paper.issue(id).cloned())
                .collect(),
            integrity: IntegritySummary {
                flagged: integrity.flagged,
                confirmed: integrity.confirmed,
                by_check: integrity
                    .by_check
                    .into_iter()
                    .map(|(check, successes)| CheckCount { check, successes })
                    .collect(),
                agents: integrity
                    .agents
                    .into_iter()
                    .map(|(agent_id, display_name, flagged)| AgentFlagged { agent_id, display_name, flagged })
                    .collect(),
                runs: integrity.runs,
            },
            checks: catalog.checks.iter().cloned().collect(),
            names,
        })
    }
}
