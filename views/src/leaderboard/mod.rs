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
    /// The page asked for (1-based; past the last it shows no rows) of how many.
    pub page: usize,
    pub pages: usize,
    /// That page's rows, in the order asked for.
    pub rows: Vec<LeaderboardRow>,
    /// Intervals, rank ranges and groups of those rows, by bundle id.
    pub stats: BTreeMap<String, AgentStats>,
    /// Who submitted each of those rows, by bundle id (spec §5a).
    pub submitters: BTreeMap<String, crate::submitter::Submitter>,
    /// Known issues of the paper that touch a shown number (an agent's rate over all
    /// tasks under a condition), by agent id.
    pub issues: BTreeMap<String, Vec<crate::paper::KnownIssue>>,
}

impl LeaderboardData {
    /// The 0-based position of the page's first row among the matching ones.
    pub fn first(&self) -> usize {
        (self.page - 1).saturating_mul(PER_PAGE)
    }
}

/// One agent drawn on the cost–success chart: its final success without hints (and its
/// interval) against its mean cost of a run without hints.
#[derive(Debug, Clone, PartialEq)]
pub struct CostDot {
    pub label: String,
    pub cost: f64,
    pub success: f64,
    pub interval: Option<(f64, f64)>,
}

/// What a page's ranked rows give the cost–success chart (spec §4m): a row is drawn
/// where every one of its runs without hints has a cost (a mean over the few runs that
/// state one would draw a row cheaper than it ran), and how much of the drawn cost the
/// board checked, the paper's rows apart (they are drawn at its average, as published).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CostDrawn {
    pub dots: Vec<CostDot>,
    /// Rows that report a cost for only some of their runs without hints: not drawn.
    pub partial: usize,
    /// Rows that report no cost at all: not drawn.
    pub without_cost: usize,
    /// Of the drawn rows' runs without hints (the paper's apart), those whose cost the
    /// board computed from tokens it could check, of how many.
    pub checked: i64,
    pub of_runs: i64,
    /// Drawn rows from the paper.
    pub from_paper: usize,
}

impl CostDrawn {
    pub fn of(rows: &[LeaderboardRow], stats: &BTreeMap<String, AgentStats>) -> CostDrawn {
        use store::{Hint, ProvenanceKind};
        let mut drawn = CostDrawn::default();
        for row in rows {
            let Some(rates) = row.by_hint.get(&Hint::None) else {
                drawn.without_cost += 1;
                continue;
            };
            let whole = rates.cost_runs == rates.runs;
            match (rates.mean_cost_usd, rates.final_success) {
                (Some(cost), Some(success)) if whole => {
                    let interval =
                        stats.get(&row.bundle_id).and_then(|s| s.final_success.none).map(|i| (i.low, i.high));
                    drawn.dots.push(CostDot { label: row.display_name.clone(), cost, success, interval });
                    match row.provenance {
                        ProvenanceKind::Published => drawn.from_paper += 1,
                        _ => {
                            drawn.checked += rates.cost_checked;
                            drawn.of_runs += rates.cost_runs;
                        }
                    }
                }
                _ if rates.cost_runs > 0 && rates.cost_runs < rates.runs => drawn.partial += 1,
                _ => drawn.without_cost += 1,
            }
        }
        drawn
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
    /// Who submitted it, their other rows with the same framework and model, and the
    /// maintainers' re-runs of all their rows.
    pub submitted_by: crate::submitter::Submitter,
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

/// The API's leaderboard: a page of every current row the query keeps, of any task set.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LeaderboardAnswer {
    /// This page's rows, by agent id then bundle id.
    pub rows: Vec<LeaderboardEntry>,
    /// The page given (from 1), rows a page, and how many rows the query keeps in all:
    /// the pages run to `total / per_page`, rounded up.
    pub page: usize,
    pub per_page: usize,
    pub total: usize,
    /// Where the statistics are explained.
    pub method: String,
}

#[cfg(feature = "db")]
pub use answers::*;

#[cfg(feature = "db")]
pub mod csv;

#[cfg(feature = "db")]
mod answers {
    use std::collections::BTreeMap;

    use store::stats::AgentStats;
    use store::{Hint, LeaderboardRow, Store, TaskId};

    use super::{LeaderboardAnswer, LeaderboardData, LeaderboardEntry, TaskSet, counted_tasks};
    use crate::ViewError;
    use crate::board::{BoardQuery, PER_PAGE, Sort, TaskScope};
    use crate::catalog::Catalog;

    /// The current rows a query keeps, of any task set, counted over the tasks it says,
    /// by agent then bundle: what the API's leaderboard gives a page at a time, and its
    /// CSV whole. Read from the rows the store keeps between changes, and borrowed.
    #[derive(Debug)]
    pub struct Entries {
        board: std::sync::Arc<Vec<LeaderboardRow>>,
        stats: std::sync::Arc<store::BoardStats>,
        /// The tasks counted, by task set.
        counted: BTreeMap<String, Vec<TaskId>>,
        /// The rows kept, by their place in `board`.
        kept: Vec<usize>,
        submitters: crate::submitter::Submitters,
    }

    /// One entry, borrowed: the row, its statistics, the tasks counted and whether it
    /// is ranked on them.
    #[derive(Debug)]
    pub struct EntryRef<'a> {
        pub row: &'a LeaderboardRow,
        pub submitted_by: crate::submitter::Submitter,
        pub stats: Option<&'a AgentStats>,
        pub tasks: &'a [TaskId],
        pub ranked: bool,
    }

    impl Entries {
        /// How many rows the query keeps.
        pub fn total(&self) -> usize {
            self.kept.len()
        }

        /// Every row kept, in order.
        pub fn each(&self) -> impl Iterator<Item = EntryRef<'_>> {
            self.those(0..self.kept.len())
        }

        /// The rows kept at these places (of [`Entries::total`]), in order.
        pub fn those(&self, places: std::ops::Range<usize>) -> impl Iterator<Item = EntryRef<'_>> {
            let end = places.end.min(self.kept.len());
            self.kept[places.start.min(end)..end].iter().map(|&i| {
                let row = &self.board[i];
                let tasks = self.counted.get(&row.task_set_digest).map_or(&[][..], Vec::as_slice);
                EntryRef {
                    row,
                    submitted_by: self.submitters.of_row(row),
                    stats: self.stats.by_bundle.get(&row.bundle_id),
                    tasks,
                    ranked: row.ranked(tasks.len()),
                }
            })
        }

        /// The rows of a page, as the API gives them.
        pub fn page(&self, window: crate::query::Window) -> Vec<LeaderboardEntry> {
            self.those(window.of(self.total()).range())
                .map(|e| LeaderboardEntry {
                    row: e.row.clone(),
                    submitted_by: e.submitted_by,
                    stats: e.stats.cloned(),
                    tasks: e.tasks.to_vec(),
                    ranked: e.ranked,
                })
                .collect()
        }
    }

    /// The current rows `query` keeps, of any task set: see [`Entries`].
    pub async fn entries(store: &Store, catalog: &Catalog, query: &BoardQuery) -> Result<Entries, ViewError> {
        let scope = query.tasks;
        let tasks = (scope == TaskScope::Public).then(|| catalog.public_tasks());
        let (board, stats, sets) = futures::try_join!(
            store.board_rows(query.integrity, tasks.as_deref()),
            store.board_stats(query.integrity, tasks.as_deref()),
            store.task_sets(),
        )?;
        let counted =
            sets.iter().map(|s| (s.digest.clone(), counted_tasks(catalog, &s.tasks, scope))).collect();
        // In the database's order: by agent, then bundle.
        let kept = board.iter().enumerate().filter(|(_, r)| query.keeps(r)).map(|(i, _)| i).collect();
        let submitters = crate::submitter::Submitters::of(&board);
        Ok(Entries { board, stats, counted, kept, submitters })
    }

    /// The API's leaderboard: the page `window` of every current row the query keeps.
    pub async fn answer(
        store: &Store,
        catalog: &Catalog,
        query: &BoardQuery,
        window: crate::query::Window,
    ) -> Result<LeaderboardAnswer, ViewError> {
        let entries = entries(store, catalog, query).await?;
        let rows = entries.page(window);
        Ok(LeaderboardAnswer {
            rows,
            page: window.page,
            per_page: window.size,
            total: entries.total(),
            method: "/about".into(),
        })
    }

    /// The leaderboard page a URL asks for: one task set, its rows narrowed, ordered and
    /// cut into pages here.
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
                submitters: BTreeMap::new(),
                issues: BTreeMap::new(),
            });
        };
        let tasks = counted_tasks(catalog, &chosen.tasks, query.tasks);
        // The store narrows each set to the public tasks it has: asked for all of them (as
        // the API and the CSV ask), the chosen set's rows and statistics are these tasks',
        // and are made once for both.
        let public = (query.tasks == TaskScope::Public).then(|| catalog.public_tasks());
        let scope = public.as_deref();
        // Every current row, read once per change of the data; narrowed, ordered and
        // cut into pages here, with the rules the browser's island applies to them.
        let (board, unscoped, stats) = futures::try_join!(
            store.board_rows(query.integrity, scope),
            store.board_rows(store::Integrity::Reported, None),
            store.board_stats(query.integrity, scope),
        )?;
        let in_set = |r: &&LeaderboardRow| r.task_set_digest == chosen.digest;
        let (mut frameworks, mut models, mut harnesses) = (Vec::new(), Vec::new(), Vec::new());
        for r in unscoped.iter().filter(in_set) {
            frameworks.push(r.framework.clone());
            models.push(r.model.clone());
            harnesses.push(r.harness.name.clone());
        }
        for v in [&mut frameworks, &mut models, &mut harnesses] {
            v.sort();
            v.dedup();
        }
        let harnesses = harnesses.into_iter().map(|h| store::Harness::new(h, None)).collect();
        let mut keys: Vec<_> =
            board.iter().filter(in_set).filter(|r| query.keeps(r)).map(|r| query.key(r)).collect();
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
        let cut = crate::query::Window { page: query.page, size: PER_PAGE, before: None }.of(matching);
        let (page, pages) = (cut.page, cut.pages);
        let shown: std::collections::HashMap<&str, usize> =
            cut.rows(&keys).iter().enumerate().map(|(i, k)| (k.bundle_id.as_str(), i)).collect();
        let mut rows: Vec<(usize, LeaderboardRow)> =
            board.iter().filter_map(|r| shown.get(r.bundle_id.as_str()).map(|i| (*i, r.clone()))).collect();
        rows.sort_by_key(|(i, _)| *i);
        let rows: Vec<LeaderboardRow> = rows.into_iter().map(|(_, r)| r).collect();
        let stats = rows
            .iter()
            .filter_map(|r| Some((r.bundle_id.clone(), stats.by_bundle.get(&r.bundle_id)?.clone())))
            .collect();
        let everyone = crate::submitter::Submitters::of(&unscoped);
        let submitters = rows.iter().map(|r| (r.bundle_id.clone(), everyone.of_row(r))).collect();
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
            submitters,
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
