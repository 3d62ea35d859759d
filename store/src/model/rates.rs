//! An agent's (or a task's) rates under one hint condition, and the sums kept at ingest
//! that make them.

use serde::{Deserialize, Serialize};
#[cfg(feature = "db")]
use vocab::Integrity;

/// Counts for one agent (or task) under one hint condition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Rates {
    /// All runs, infrastructure failures included.
    pub runs: i64,
    /// Runs that count towards the rates (not `infra_error`).
    pub counted: i64,
    /// Runs that ended `infra_error` (`runs - counted`): shown beside every rate, since
    /// they leave it unseen (spec §4f).
    pub infra_errors: i64,
    /// Their share of all runs.
    pub infra_error_share: Option<f64>,
    pub successes: i64,
    /// Runs that executed, of the `exec_counted` counted runs whose execution is known
    /// (a source may publish only whether each run succeeded).
    pub executed: i64,
    pub exec_counted: i64,
    pub final_success: Option<f64>,
    pub execution_success: Option<f64>,
    pub file_recall: Option<f64>,
    /// Runs that report what they cost (infrastructure failures included: they cost
    /// too), and the mean and sum of it in US dollars.
    /// Each run's cost is the one the board counts (spec §4m): its tokens' price at its
    /// model's price of its day where the board could check them, else what it states.
    pub cost_runs: i64,
    pub mean_cost_usd: Option<f64>,
    pub total_cost_usd: Option<f64>,
    /// Of the `cost_runs`, those whose cost the board computed from tokens it could
    /// check: "cost checked for `cost_checked` of `cost_runs` runs".
    pub cost_checked: i64,
    /// Runs whose stated cost carries a mark (`RunDetail::cost_mark`): not borne out by
    /// their tokens, or stated with none.
    pub cost_marked: i64,
    /// What a success cost: the mean cost of a run times the runs, over the successes
    /// (as the view counts them); none without a success or a cost.
    pub cost_per_success_usd: Option<f64>,
    /// Runs that report how long they took, and the mean and sum in seconds.
    pub duration_runs: i64,
    pub mean_duration_s: Option<f64>,
    pub total_duration_s: Option<f64>,
    /// Successes with an integrity finding no maintainer has dismissed: in the strict
    /// view these count as failures (and `successes` leaves them out).
    pub flagged: i64,
    /// Runs that ended `infra_error` but whose re-run by the maintainers ended in a
    /// counted outcome (a `not-reproduced` finding no maintainer has dismissed). In the
    /// strict view every `infra_error` run counts as a failure (`counted` is `runs`), so
    /// no relabelling lifts it; this says how many were shown to be relabelled.
    pub refuted: i64,
}

/// What a success cost: `cost_sum` over `cost_runs` runs is the mean cost of a run;
/// times all `runs` over the `successes`. Computed as the leaderboard's SQL orders by it
/// (`store::reads::leaderboard`), operation for operation, so the two agree exactly.
pub fn cost_per_success(cost_sum: f64, cost_runs: i64, runs: i64, successes: i64) -> Option<f64> {
    (cost_runs > 0 && successes > 0).then(|| (cost_sum * runs as f64) / ((cost_runs * successes) as f64))
}

/// The sums a [`Rates`] is made of, as kept at ingest.
#[cfg(feature = "db")]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sums {
    pub runs: i64,
    pub counted: i64,
    pub successes: i64,
    pub executed: i64,
    pub recall_sum: f64,
    pub recall_runs: i64,
    pub cost_sum: f64,
    pub cost_runs: i64,
    pub cost_checked: i64,
    pub cost_marked: i64,
    pub duration_sum: f64,
    pub duration_runs: i64,
    pub flagged: i64,
    pub exec_counted: i64,
    pub refuted: i64,
}

#[cfg(feature = "db")]
impl Sums {
    /// The columns kept for each of them (in `aggregates` and `totals`).
    pub const COLUMNS: [&str; 15] = [
        "runs",
        "counted",
        "successes",
        "executed",
        "recall_sum",
        "recall_runs",
        "cost_sum",
        "cost_runs",
        "duration_sum",
        "duration_runs",
        "flagged",
        "exec_counted",
        "refuted",
        "cost_checked",
        "cost_marked",
    ];

    pub fn add(&mut self, other: &Sums) {
        self.runs += other.runs;
        self.counted += other.counted;
        self.successes += other.successes;
        self.executed += other.executed;
        self.recall_sum += other.recall_sum;
        self.recall_runs += other.recall_runs;
        self.cost_sum += other.cost_sum;
        self.cost_runs += other.cost_runs;
        self.duration_sum += other.duration_sum;
        self.duration_runs += other.duration_runs;
        self.flagged += other.flagged;
        self.exec_counted += other.exec_counted;
        self.refuted += other.refuted;
        self.cost_checked += other.cost_checked;
        self.cost_marked += other.cost_marked;
    }

    /// The rates as `integrity` counts them: strictly, flagged successes are failures,
    /// and so is every `infra_error` run (pass@1 with errors as 0).
    pub fn rates(&self, integrity: Integrity) -> Rates {
        let (successes, counted) = match integrity {
            Integrity::Reported => (self.successes, self.counted),
            Integrity::Strict => (self.successes - self.flagged, self.runs),
        };
        let ratio = |n: i64, d: i64| (d > 0).then(|| n as f64 / d as f64);
        let mean = |sum: f64, n: i64| (n > 0).then(|| sum / n as f64);
        Rates {
            runs: self.runs,
            counted,
            infra_errors: self.runs - self.counted,
            infra_error_share: ratio(self.runs - self.counted, self.runs),
            successes,
            executed: self.executed,
            exec_counted: self.exec_counted,
            final_success: ratio(successes, counted),
            execution_success: ratio(self.executed, self.exec_counted),
            file_recall: mean(self.recall_sum, self.recall_runs),
            cost_runs: self.cost_runs,
            mean_cost_usd: mean(self.cost_sum, self.cost_runs),
            total_cost_usd: (self.cost_runs > 0).then_some(self.cost_sum),
            cost_checked: self.cost_checked,
            cost_marked: self.cost_marked,
            cost_per_success_usd: cost_per_success(self.cost_sum, self.cost_runs, self.runs, successes),
            duration_runs: self.duration_runs,
            mean_duration_s: mean(self.duration_sum, self.duration_runs),
            total_duration_s: (self.duration_runs > 0).then_some(self.duration_sum),
            flagged: self.flagged,
            refuted: self.refuted,
        }
    }
}
