//! The leaderboard: which tasks a view counts, which rows it ranks, in what order and
//! with which statistics. The page (one task set, ordered and cut into pages) and the
//! API and CSV (every current row) are answered here from the same rules.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use store::stats::AgentStats;
use store::{LeaderboardRow, TaskId};

use crate::board::{PER_PAGE, TaskScope};
use crate::catalog::Catalog;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeaderboardData {
    /// The task sets with current results, most agents first. Rows of different sets
    /// are never ranked together.
    pub sets: Vec<TaskSet>,
    /// The set shown: the one asked for, else the one with most agents.
    pub set: Option<TaskSet>,
    /// What the filters offer on that set.
    pub frameworks: Vec<String>,
    pub models: Vec<String>,
    pub harnesses: Vec<store::Harness>,
    /// The tasks the view counts: the set's, or its public ones (`?tasks=public`).
    pub tasks: Vec<TaskId>,
    /// How many of the matching rows are ranked (they cover those tasks without hints);
    /// the others come after them, listed apart.
    pub ranked: usize,
    /// How many of the set's agents the filters keep.
    pub matching: usize,
    /// How many of those have runs that ended `infra_error` (counted in no rate).
    pub with_infra_errors: usize,
    /// The page shown (1-based, within range) of how many.
    pub page: usize,
    pub pages: usize,
    /// That page's rows, in the order asked for.
    pub rows: Vec<LeaderboardRow>,
    /// Intervals, rank ranges and groups of those rows, by bundle id.
    pub stats: BTreeMap<String, AgentStats>,
    /// Known issues of the paper that touch a shown number (an agent's rate over all
    /// tasks under a condition), by agent id.
    pub issues: BTreeMap<String, Vec<crate::paper::KnownIssue>>,
}

impl LeaderboardData {
    /// The 0-based position of the page's first row among the matching ones.
    pub fn first(&self) -> usize {
        (self.page - 1) * PER_PAGE
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSet {
    pub digest: String,
    pub label: String,
    pub tasks: Vec<TaskId>,
    pub agents: usize,
}

// A row of the API's leaderboard and of its CSV. (The doc comment below is the OpenAPI
// document's description of it.)
/// One agent's current submission with its rates and, where its task set has been
/// analysed, the bootstrap's intervals, rank range and tie group.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LeaderboardEntry {
    #[serde(flatten)]
    pub row: LeaderboardRow,
    pub stats: Option<AgentStats>,
    /// The tasks of its set this view counts (all, or the public ones).
    pub tasks: Vec<TaskId>,
    /// Whether it covers them all without hints, with the valid attempts the benchmark
    /// asks wherever it has runs, and so is ranked; rows that do not are listed apart,
    /// without a rank.
    pub ranked: bool,
}

/// The tasks of a set that a view counts: all of them, or those anyone can run (the
/// cards say which), in the set's order.
pub fn counted_tasks(catalog: &Catalog, set: &[TaskId], scope: TaskScope) -> Vec<TaskId> {
    match scope {
        TaskScope::All => set.to_vec(),
        TaskScope::Public => {
            set.iter().filter(|t| catalog.get(t.as_str()).is_some_and(|t| t.public)).cloned().collect()
        }
    }
}

#[cfg(feature = "db")]
pub use answers::*;

#[cfg(feature = "db")]
mod answers {
    use std::collections::BTreeMap;

    use store::{Hint, LeaderboardFilter, LeaderboardRow, Store, TaskId};

    use super::{LeaderboardData, LeaderboardEntry, TaskSet, counted_tasks};
    use crate::ViewError;
    use crate::board::{BoardQuery, PER_PAGE, Sort, TaskScope};
    use crate::catalog::Catalog;

    /// Every current row `query` keeps, of any task set, counted over the tasks it
    /// says: what the API's leaderboard and its CSV list.
    pub async fn entries(
        store: &Store,
        catalog: &Catalog,
        query: &BoardQuery,
    ) -> Result<Vec<LeaderboardEntry>, ViewError> {
        let scope = query.tasks;
        let filter = LeaderboardFilter {
            tasks: (scope == TaskScope::Public).then(|| catalog.public_tasks()),
            ..query.filter()
        };
        let (rows, stats, sets) = futures::try_join!(
            store.leaderboard(&filter),
            store.board_stats(filter.integrity, filter.tasks.as_deref()),
            store.task_sets(),
        )?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let set = sets.iter().find(|s| s.digest == row.task_set_digest).map(|s| s.tasks.as_slice());
                let tasks = counted_tasks(catalog, set.unwrap_or_default(), scope);
                LeaderboardEntry {
                    stats: stats.by_bundle.get(&row.bundle_id).cloned(),
                    ranked: row.ranked(tasks.len()),
                    tasks,
                    row,
                }
            })
            .collect())
    }

    /// The leaderboard page a URL asks for: one task set, narrowed by the database,
    /// ordered and cut into pages here.
    pub async fn page(
        store: &Store,
        catalog: &Catalog,
        query: &BoardQuery,
    ) -> Result<LeaderboardData, ViewError> {
        let sets = task_sets(store, catalog).await?;
        let set =
            query.set.as_ref().and_then(|d| sets.iter().find(|s| &s.digest == d)).or(sets.first()).cloned();
        let Some(chosen) = &set else {
            return Ok(LeaderboardData {
                sets,
                set: None,
                frameworks: vec![],
                models: vec![],
                harnesses: vec![],
                tasks: vec![],
                ranked: 0,
                matching: 0,
                with_infra_errors: 0,
                page: 1,
                pages: 1,
                rows: vec![],
                stats: BTreeMap::new(),
                issues: BTreeMap::new(),
            });
        };
        let tasks = counted_tasks(catalog, &chosen.tasks, query.tasks);
        let scope = (query.tasks == TaskScope::Public).then_some(tasks.as_slice());
        let filter = LeaderboardFilter {
            task_set_digest: Some(chosen.digest.clone()),
            tasks: scope.map(<[TaskId]>::to_vec),
            ..query.filter()
        };
        // Ordered on what ordering needs, then whole rows for the page shown only.
        let (mut keys, (frameworks, models, harnesses), stats) = futures::try_join!(
            store.leaderboard_keys(&filter, query.sort.rate_key()),
            store.leaderboard_choices(&chosen.digest),
            store.board_stats(query.integrity, scope),
        )?;
        keys.retain(|k| query.name_matches(&k.display_name));
        if let Sort::EveryTime(hint) = query.sort {
            for key in &mut keys {
                key.value = stats
                    .by_bundle
                    .get(&key.bundle_id)
                    .and_then(|s| s.reliability.get(hint))
                    .and_then(|r| r.every_time())
                    .map(|i| i.estimate);
            }
        }
        query.order(&mut keys, tasks.len());
        let ranked = keys.iter().filter(|k| k.ranked_tasks as usize >= tasks.len()).count();
        let matching = keys.len();
        let with_infra_errors = keys.iter().filter(|k| k.infra_errors > 0).count();
        let pages = matching.div_ceil(PER_PAGE).max(1);
        let page = query.page.min(pages);
        let shown: Vec<String> =
            keys.into_iter().skip((page - 1) * PER_PAGE).take(PER_PAGE).map(|k| k.bundle_id).collect();
        let mut found = store.leaderboard_rows(&shown, query.integrity, scope).await?;
        let rows: Vec<LeaderboardRow> = shown
            .iter()
            .filter_map(|b| found.iter().position(|r| &r.bundle_id == b).map(|i| found.swap_remove(i)))
            .collect();
        let stats = rows
            .iter()
            .filter_map(|r| Some((r.bundle_id.clone(), stats.by_bundle.get(&r.bundle_id)?.clone())))
            .collect();
        let issues = rows
            .iter()
            .filter(|r| r.provenance == store::ProvenanceKind::Published)
            .map(|r| (r.agent_id.clone(), rate_issues(&catalog.paper, &r.agent_id)))
            .filter(|(_, issues)| !issues.is_empty())
            .collect();
        Ok(LeaderboardData {
            sets,
            set,
            frameworks,
            models,
            harnesses,
            tasks,
            ranked,
            matching,
            with_infra_errors,
            page,
            pages,
            rows,
            stats,
            issues,
        })
    }

    /// The paper's known issues about an agent's rates over all tasks, each naming its
    /// condition and metric: Table 5's file recall against the per-task tables, and the
    /// text's 19% against Table 5's final success.
    fn rate_issues(paper: &crate::paper::Paper, agent: &str) -> Vec<crate::paper::KnownIssue> {
        use crate::paper::issue;
        let mut out: Vec<_> = paper
            .known_issues
            .iter()
            .filter(|i| {
                i.agent.as_deref() == Some(agent)
                    && i.task.is_none()
                    && i.condition.is_some()
                    && i.metric.is_some()
            })
            .cloned()
            .collect();
        if agent == issue::TEXT_19_PERCENT_AGENT
            && let Some(text) = paper.issue(issue::TEXT_19_PERCENT)
        {
            out.push(crate::paper::KnownIssue {
                agent: Some(agent.to_owned()),
                condition: Some(Hint::None),
                metric: Some("final_success".to_owned()),
                ..text.clone()
            });
        }
        out
    }

    /// The task sets with current results, each named for its benchmark version, or as
    /// the example tasks; most agents first.
    pub async fn task_sets(store: &Store, catalog: &Catalog) -> Result<Vec<TaskSet>, ViewError> {
        let mut sets: Vec<TaskSet> = store
            .task_sets()
            .await?
            .into_iter()
            .map(|s| {
                let examples = !s.tasks.is_empty()
                    && s.tasks.iter().all(|t| catalog.get(t.as_str()).is_some_and(|t| t.example));
                let label = if examples {
                    "Example tasks".to_owned()
                } else {
                    format!("{} {}", s.benchmark_name, s.benchmark_version)
                };
                TaskSet { digest: s.digest, label, tasks: s.tasks, agents: s.agents as usize }
            })
            .collect();
        // Two sets of the same name (the same tasks, changed cards) are told apart by digest.
        let labels: Vec<String> = sets.iter().map(|s| s.label.clone()).collect();
        for set in &mut sets {
            if labels.iter().filter(|l| **l == set.label).count() > 1 {
                set.label = format!("{} ({})", set.label, &set.digest[..8.min(set.digest.len())]);
            }
        }
        sets.sort_by(|a, b| b.agents.cmp(&a.agents).then_with(|| a.label.cmp(&b.label)));
        Ok(sets)
    }
}
