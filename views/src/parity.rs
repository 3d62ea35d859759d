//! Two submissions of one agent side by side under one hint condition (Harbor's parity
//! experiment, or any two): the API's `/api/v1/parity` and the `/parity` page, with the
//! analysis Harbor's adapter guide asks of an adaptation: whether the run-level rates'
//! ranges overlap (its matching criterion), each side's mean ± standard error of the mean
//! as Harbor reports it, a paired bootstrap interval of the difference (tasks as
//! clusters, as everywhere on the site), and which tasks each side solved alone.

use serde::{Deserialize, Serialize};
use store::stats::{self, AgentCells, Cell, Comparison, Interval};
use store::{Harness, Hint, ProvenanceKind, TaskId};

use crate::TaskNames;
use crate::query::{BadQuery, Params, Strictness, lenient};

/// A two-sided sign test below this calls the split of tasks solved by one side only
/// lopsided.
pub const LOPSIDED_BELOW: f64 = 0.05;

/// One side of a parity comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ParitySide {
    pub bundle_id: String,
    pub agent_id: String,
    pub display_name: String,
    pub framework: String,
    pub framework_version: Option<String>,
    pub model: String,
    pub harness: Harness,
    pub provenance: ProvenanceKind,
    /// Whether the leaderboard shows it (not superseded).
    pub current: bool,
    /// Successes and counted runs over every task, and their ratio.
    pub successes: i64,
    pub runs: i64,
    pub final_success: Option<f64>,
    /// Final success of each run over the tasks (run k: every task's k-th attempt).
    pub run_rates: Vec<f64>,
    pub run_rates_from: RunRatesFrom,
    /// Their mean, and the sample standard deviation over √n (Harbor's `±`).
    pub mean: Option<f64>,
    pub sem: Option<f64>,
    /// Their range.
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// Where a side's run-level rates come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunRatesFrom {
    /// The attempts as run: run k is every task's k-th attempt.
    Attempts,
    /// The source publishes them (reconstructed attempts say nothing of runs).
    Published,
    /// Neither: results reconstructed from per-task counts without published runs.
    NotPublished,
}

/// One task's successes and counted runs on one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskCount {
    pub successes: i64,
    pub runs: i64,
}

/// Which side solved a task (at least one success in its runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Solved {
    Both,
    OnlyA,
    OnlyB,
    Neither,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ParityTask {
    pub task: TaskId,
    /// None where that side has no counted run on the task.
    pub a: Option<TaskCount>,
    pub b: Option<TaskCount>,
    /// None unless both sides ran it.
    pub solved: Option<Solved>,
}

/// Two submissions side by side under one hint condition; differences are B − A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Parity {
    pub hint: Hint,
    pub a: ParitySide,
    pub b: ParitySide,
    /// Whether both are the same agent (framework, its version and model).
    pub same_agent: bool,
    /// Harbor's matching criterion, `max(A) ≥ min(B)` and `max(B) ≥ min(A)` over the
    /// run-level rates; none where a side's are not known.
    pub ranges_overlap: Option<bool>,
    /// The paired bootstrap interval of B − A in final success over the tasks both ran.
    pub difference: Option<Interval>,
    pub shared_tasks: usize,
    pub tasks: Vec<ParityTask>,
    pub only_a: Vec<TaskId>,
    pub only_b: Vec<TaskId>,
    pub both: Vec<TaskId>,
    pub neither: Vec<TaskId>,
    /// The exact two-sided sign test of the tasks solved by one side only, and whether
    /// it calls the split lopsided (below [`LOPSIDED_BELOW`]).
    pub sign_test_p: f64,
    pub lopsided: bool,
}

/// The mean, the standard error of the mean (sample deviation over √n; none for one
/// run) and the range of run-level rates.
pub fn summary(rates: &[f64]) -> (Option<f64>, Option<f64>, Option<f64>, Option<f64>) {
    if rates.is_empty() {
        return (None, None, None, None);
    }
    let n = rates.len() as f64;
    let mean = rates.iter().sum::<f64>() / n;
    let sem = (rates.len() > 1)
        .then(|| (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() / n.sqrt());
    let low = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let high = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (Some(mean), sem, Some(low), Some(high))
}

/// Harbor's matching criterion: the two ranges overlap.
pub fn ranges_overlap(a: &[f64], b: &[f64]) -> Option<bool> {
    let (_, _, a_low, a_high) = summary(a);
    let (_, _, b_low, b_high) = summary(b);
    Some(a_high? >= b_low? && b_high? >= a_low?)
}

/// Which side solved a task both ran.
pub fn solved(a: TaskCount, b: TaskCount) -> Solved {
    match (a.successes > 0, b.successes > 0) {
        (true, true) => Solved::Both,
        (true, false) => Solved::OnlyA,
        (false, true) => Solved::OnlyB,
        (false, false) => Solved::Neither,
    }
}

/// Two sides as the store read them, side by side: each side's run-level rates
/// (`published_runs` gives those a published source reports, which reconstructed attempts
/// cannot) and their summaries, and which side solved each task.
pub fn sides(
    a: store::ParityRead,
    b: store::ParityRead,
    published_runs: impl Fn(&store::ParityRead) -> Option<Vec<f64>>,
) -> (ParitySide, ParitySide, Vec<ParityTask>) {
    let side = |mut read: store::ParityRead| {
        let (run_rates, run_rates_from) = if read.provenance == ProvenanceKind::Published {
            match published_runs(&read) {
                Some(runs) => (runs, RunRatesFrom::Published),
                None => (Vec::new(), RunRatesFrom::NotPublished),
            }
        } else {
            (std::mem::take(&mut read.attempt_rates), RunRatesFrom::Attempts)
        };
        let (mean, sem, low, high) = summary(&run_rates);
        ParitySide {
            final_success: (read.runs > 0).then(|| read.successes as f64 / read.runs as f64),
            bundle_id: read.bundle_id,
            agent_id: read.agent_id,
            display_name: read.display_name,
            framework: read.framework,
            framework_version: read.framework_version,
            model: read.model,
            harness: read.harness,
            provenance: read.provenance,
            current: read.current,
            successes: read.successes,
            runs: read.runs,
            run_rates,
            run_rates_from,
            mean,
            sem,
            low,
            high,
        }
    };
    let count = |c: &(i64, i64)| TaskCount { successes: c.0, runs: c.1 };
    let mut names: Vec<&TaskId> = a.tasks.keys().chain(b.tasks.keys()).collect();
    names.sort();
    names.dedup();
    let tasks = names
        .into_iter()
        .map(|task| {
            let (x, y) = (a.tasks.get(task).map(count), b.tasks.get(task).map(count));
            ParityTask { task: task.clone(), a: x, b: y, solved: x.zip(y).map(|(x, y)| solved(x, y)) }
        })
        .collect();
    (side(a), side(b), tasks)
}

/// One side's cells over the tasks, under `hint` only, for the paired bootstrap.
pub fn cells(
    tasks: &[ParityTask],
    hint: Hint,
    id: &str,
    side: fn(&ParityTask) -> Option<TaskCount>,
) -> AgentCells {
    let at = Hint::ALL.iter().position(|h| *h == hint).expect("every condition is in Hint::ALL");
    AgentCells {
        id: id.to_owned(),
        cells: tasks
            .iter()
            .map(|t| {
                let mut by_hint = [None; 3];
                by_hint[at] = side(t).map(|c| Cell {
                    successes: c.successes as u32,
                    executed: 0,
                    counted: c.runs as u32,
                    exec_counted: 0,
                    short: false,
                });
                by_hint
            })
            .collect(),
    }
}

/// The comparison from its sides, tasks and paired bootstrap.
pub fn parity_of(
    hint: Hint,
    a: ParitySide,
    b: ParitySide,
    tasks: Vec<ParityTask>,
    paired: &Comparison,
) -> Parity {
    let of = |which: Solved| {
        tasks.iter().filter(|t| t.solved == Some(which)).map(|t| t.task.clone()).collect::<Vec<_>>()
    };
    let (only_a, only_b, both, neither) =
        (of(Solved::OnlyA), of(Solved::OnlyB), of(Solved::Both), of(Solved::Neither));
    let sign_test_p = stats::sign_test(only_a.len(), only_b.len());
    Parity {
        hint,
        same_agent: (&a.framework, &a.framework_version, &a.model)
            == (&b.framework, &b.framework_version, &b.model),
        ranges_overlap: ranges_overlap(&a.run_rates, &b.run_rates),
        difference: paired.difference.get(hint),
        shared_tasks: paired.shared_tasks,
        a,
        b,
        tasks,
        only_a,
        only_b,
        both,
        neither,
        sign_test_p,
        lopsided: sign_test_p < LOPSIDED_BELOW,
    }
}

/// The API's `/api/v1/parity` query, as the OpenAPI document states it.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct ParityParams {
    /// Side A: a submission's bundle id (superseded ones too), or an agent id (its
    /// newest current submission).
    #[cfg_attr(feature = "openapi", param(min_length = 1))]
    pub a: String,
    /// Side B, named the same way.
    #[cfg_attr(feature = "openapi", param(min_length = 1))]
    pub b: String,
    /// `none` (the default), `hints` or `detailed`.
    #[cfg_attr(feature = "openapi", param(schema_with = crate::query::schema::hint_or_none))]
    pub hint: Option<String>,
}

impl ParityParams {
    pub fn view(&self) -> Result<ParityQuery, BadQuery> {
        let get = |name: &str| match name {
            "a" => Some(self.a.clone()),
            "b" => Some(self.b.clone()),
            "hint" => self.hint.clone(),
            _ => None,
        };
        ParityQuery::read(get, Strictness::Strict)
    }
}

/// The two sides a parity view compares, and under which condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParityQuery {
    pub a: Option<String>,
    pub b: Option<String>,
    pub hint: Hint,
}

impl ParityQuery {
    /// From query parameters: strictly an unknown condition or a side left empty is
    /// refused (the API compares two sides); leniently the condition falls back to no
    /// hints and a page without both sides shows the pickers.
    pub fn read(get: impl Fn(&str) -> Option<String>, reading: Strictness) -> Result<ParityQuery, BadQuery> {
        let p = Params::new(&get, reading);
        let hint = p.name::<Hint>("hint")?.unwrap_or(Hint::None);
        let (a, b) = (p.text("a"), p.text("b"));
        if reading == Strictness::Strict {
            for (parameter, side) in [("a", &a), ("b", &b)] {
                if side.is_none() {
                    return Err(BadQuery {
                        parameter,
                        message: format!("query parameter `{parameter}` must name a submission or an agent"),
                    });
                }
            }
        }
        Ok(ParityQuery { a, b, hint })
    }

    /// The page's reading.
    pub fn from_page(get: impl Fn(&str) -> Option<String>) -> ParityQuery {
        lenient(ParityQuery::read(get, Strictness::Lenient))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParityData {
    /// Every agent with current results: (id, name), for the pickers.
    pub agents: Vec<(String, String)>,
    pub names: TaskNames,
    pub hint: Hint,
    /// The two sides, once both are chosen.
    pub parity: Option<Parity>,
}

#[cfg(feature = "db")]
pub use answers::*;

#[cfg(feature = "db")]
mod answers {
    use store::Store;

    use super::*;
    use crate::catalog::Catalog;
    use crate::{Missing, ViewError};

    /// A submission a parity view names: a bundle id (any submission, superseded ones
    /// included), or an agent id (its newest current submission).
    async fn parity_bundle(store: &store::Store, named: &str) -> Result<Option<String>, store::StoreError> {
        if let Some(s) = store.submission(named).await? {
            return Ok(Some(s.bundle_id));
        }
        Ok(store.agent(named).await?.and_then(|a| a.newest_current().map(|(b, _)| b.to_owned())))
    }

    /// Two submissions side by side under `hint`, each named by bundle or agent id; the
    /// error names the one that does not exist. Run-level rates of the published parity
    /// experiment come from the catalog, which read them from its data file.
    pub async fn parity(
        store: &store::Store,
        catalog: &Catalog,
        a: &str,
        b: &str,
        hint: Hint,
    ) -> Result<Parity, ViewError> {
        let mut bundles = Vec::with_capacity(2);
        for (side, named) in [("a", a), ("b", b)] {
            match parity_bundle(store, named).await? {
                Some(bundle) => bundles.push(bundle),
                None => {
                    return Err(ViewError::NotFound(Missing::ParitySide { side, named: named.to_owned() }));
                }
            }
        }
        let (Some(read_a), Some(read_b)) =
            futures::try_join!(store.parity_side(&bundles[0], hint), store.parity_side(&bundles[1], hint))?
        else {
            return Err(ViewError::NotFound(Missing::ParitySide { side: "a", named: a.to_owned() }));
        };
        let (bundle_a, bundle_b) = (read_a.bundle_id.clone(), read_b.bundle_id.clone());
        let (side_a, side_b, tasks) =
            sides(read_a, read_b, |s| catalog.parity_runs.get(&s.agent_id).cloned());
        let paired = store
            .paired(cells(&tasks, hint, &bundle_a, |t| t.a), cells(&tasks, hint, &bundle_b, |t| t.b))
            .await?;
        Ok(parity_of(hint, side_a, side_b, tasks, &paired))
    }

    /// The parity page: the pickers, and the two sides once both are named.
    pub async fn page(
        store: &Store,
        catalog: &Catalog,
        a: Option<&str>,
        b: Option<&str>,
        hint: Hint,
    ) -> Result<ParityData, ViewError> {
        let agents = store.current_agents().await?;
        let parity = match (a.filter(|s| !s.is_empty()), b.filter(|s| !s.is_empty())) {
            (Some(a), Some(b)) => Some(parity(store, catalog, a, b, hint).await?),
            _ => None,
        };
        Ok(ParityData { agents, names: crate::names(catalog), hint, parity })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Harbor's side of its published parity experiment: "41.67 +/- 12.73".
    #[test]
    fn the_summary_is_harbors() {
        let (mean, sem, low, high) = summary(&[16.67, 58.33, 50.0]);
        assert!((mean.unwrap() - 41.666).abs() < 0.01);
        assert!((sem.unwrap() - 12.73).abs() < 0.005, "{sem:?}");
        assert_eq!((low, high), (Some(16.67), Some(58.33)));
        assert_eq!(summary(&[0.5]).1, None);
    }

    #[test]
    fn ranges_overlap_as_harbor_defines() {
        assert_eq!(ranges_overlap(&[0.3333; 3], &[0.1667, 0.5833, 0.5]), Some(true));
        assert_eq!(ranges_overlap(&[0.1, 0.2], &[0.3, 0.4]), Some(false));
        assert_eq!(ranges_overlap(&[0.2, 0.3], &[0.3, 0.4]), Some(true), "touching ranges overlap");
        assert_eq!(ranges_overlap(&[], &[0.3]), None);
    }
}
