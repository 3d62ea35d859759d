//! Harness parity: two submissions of one agent (two harnesses, two runner versions, a
//! re-run) side by side under one hint condition, with the analysis Harbor's adapter
//! guide asks of an adaptation: whether the run-level rates' ranges overlap (its
//! matching criterion), each side's mean ± standard error of the mean as Harbor reports
//! it, a paired bootstrap interval of the difference (tasks as clusters, as everywhere
//! on the site), and which tasks each side solved alone.

use serde::{Deserialize, Serialize};
use vocab::{Harness, Hint, ProvenanceKind, TaskId};

use crate::stats::Interval;

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
