//! The leaderboard's rows, what narrows and orders them, and the task sets they are
//! ranked within.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use vocab::{Harness, Hint, Integrity, ProvenanceKind, TaskId, Tier};

use super::rates::Rates;
use super::submissions::SampleCounts;

/// One row of the leaderboard: an agent's current submission for a benchmark version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LeaderboardRow {
    pub agent_id: String,
    pub display_name: String,
    pub framework: String,
    pub model: String,
    pub url: Option<String>,
    pub tier: Tier,
    /// Who submitted it: the key that signed it, and the owner the registry names.
    pub keyid: String,
    pub submitter: String,
    pub provenance: ProvenanceKind,
    /// What `imported` and `published` results name as their source.
    pub provenance_source: Option<String>,
    pub benchmark_name: String,
    pub benchmark_version: String,
    pub task_set_digest: String,
    pub bundle_id: String,
    /// The harness that executed its runs.
    pub harness: Harness,
    pub by_hint: BTreeMap<Hint, Rates>,
    /// What it covers under each hint condition it has runs under.
    pub coverage: BTreeMap<Hint, Coverage>,
    /// Its reproduction sample at a glance.
    pub sample: SampleCounts,
    /// The agent's earlier submission whose re-run runs did not reproduce, no maintainer
    /// having dismissed the finding (spec §6a): it follows the agent.
    pub not_reproduced_before: Option<String>,
    /// What a caught lie costs it, and its submitter (issue 75).
    #[serde(default)]
    pub taint: Taint,
    /// How many of its verdicts a Harbor regrade changed (spec §4i): each such run is
    /// sampled, whatever the key (§4e).
    #[serde(default)]
    pub regrades_flipped: i64,
    /// The change in final success from no hints to hints, paired (issue 75).
    #[serde(default)]
    pub uplift: PairedUplift,
}

/// The board's Δ (issue 75): the change in final success from no hints to hints over the
/// tasks both conditions cover with their full attempts, so that hints run on a chosen
/// few tasks are not set against no hints on all of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PairedUplift {
    /// Hints' final success minus no hints', both over the paired tasks.
    pub delta: Option<f64>,
    /// How many tasks it is over.
    pub tasks: i64,
    /// How many tasks the no-hints condition covers: fewer paired tasks than that make
    /// the Δ partial, shown so and never sorted among complete ones.
    pub of: i64,
}

impl PairedUplift {
    /// Whether it is over fewer tasks than no hints covers.
    pub fn partial(&self) -> bool {
        self.delta.is_some() && self.tasks < self.of
    }

    /// The Δ a sort orders by: none where it is partial.
    pub fn sortable(&self) -> Option<f64> {
        self.delta.filter(|_| !self.partial())
    }
}

/// A caught lie's cost to a row (spec §4e): a re-run refuted runs of this submission, so
/// its successes not themselves re-run and held are unverified; or another submission
/// of its submitter's key stands refuted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Taint {
    /// Its runs with a refutation (`not-reproduced`, `not-generalised`) no maintainer
    /// dismissed.
    pub refuted: i64,
    /// Its successes that are unverified for it (each a failure in the strict view).
    pub unverified: i64,
    /// The agent of another submission of this row's key that stands refuted.
    pub submitter_refuted: Option<String>,
}

impl Taint {
    /// Whether the row is flagged, in both views.
    pub fn flagged(&self) -> bool {
        self.refuted > 0
    }
}

/// What a submission covers under one hint condition, in valid attempts (runs whose
/// outcome the rates count, not `infra_error`; spec §4f): the tasks with one, the fewest
/// and most on one of them, and the tasks it has runs on with fewer valid attempts than
/// the benchmark asks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Coverage {
    pub tasks: i64,
    pub fewest_attempts: i64,
    pub most_attempts: i64,
    /// Tasks with runs under this condition but fewer valid attempts than the benchmark
    /// asks (always 0 for published results, which keep their source's design).
    pub short_tasks: i64,
}

impl LeaderboardRow {
    /// Its successes flagged by a reproduction, over the conditions.
    pub fn flagged(&self) -> i64 {
        self.by_hint.values().map(|r| r.flagged).sum()
    }

    /// Its runs that ended `infra_error` (counted in no rate), over the conditions.
    pub fn infra_errors(&self) -> i64 {
        self.by_hint.values().map(|r| r.infra_errors).sum()
    }

    /// Whether it covers all `of` tasks of its set under `hint`.
    pub fn covers(&self, hint: Hint, of: usize) -> bool {
        self.coverage.get(&hint).is_some_and(|c| c.tasks as usize >= of)
    }

    /// Whether every task it has runs on, under every condition, has the valid attempts
    /// the benchmark asks.
    pub fn has_every_attempt(&self) -> bool {
        self.coverage.values().all(|c| c.short_tasks == 0)
    }

    /// Whether it is ranked on a set of `of` tasks: it covers them all without hints,
    /// with the attempts the benchmark asks wherever it has runs.
    pub fn ranked(&self, of: usize) -> bool {
        self.covers(Hint::None, of) && self.has_every_attempt()
    }
}

/// Narrows the leaderboard; every field is optional.
#[derive(Debug, Clone, Default)]
pub struct LeaderboardFilter {
    pub framework: Option<String>,
    pub model: Option<String>,
    pub tier: Option<Tier>,
    pub provenance: Option<ProvenanceKind>,
    pub benchmark_version: Option<String>,
    pub task_set_digest: Option<String>,
    /// The harness's name (`harbor`, `rexbench`, …).
    pub harness: Option<String>,
    /// How the rows' successes are counted (this does not narrow).
    pub integrity: Integrity,
    /// Only these tasks count (the public-tasks view), and only submissions with runs
    /// on them without hints are kept; every task when none.
    pub tasks: Option<Vec<TaskId>>,
    /// Only submissions whose sample the maintainers re-ran, every re-run holding.
    pub reproduced: bool,
}

/// A number a leaderboard row can be ordered by, computed in the query from the kept
/// counts exactly as [`Rates`] computes it (a ratio of the same integers and sums).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKey {
    Final(Hint),
    Execution(Hint),
    Recall(Hint),
    Cost(Hint),
    /// The runs' cost over the successes (`Rates::cost_per_success_usd`).
    CostPerSuccess(Hint),
    /// Final success with hints minus without.
    Uplift,
}

/// What a leaderboard row is ordered by: its bundle, its name and the value of a
/// [`RateKey`] (`None` where there is none).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct RowKey {
    pub bundle_id: String,
    pub display_name: String,
    pub value: Option<f64>,
    /// The tasks it has valid attempts on without hints, or 0 where some task it has
    /// runs on falls short of the attempts asked: it is ranked if they are all of its
    /// set's.
    pub ranked_tasks: i64,
    /// Its runs that ended `infra_error`, over the tasks the view counts.
    pub infra_errors: i64,
}

/// A task set current submissions were evaluated on (results on different sets are
/// never ranked together).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskSetSummary {
    pub digest: String,
    pub benchmark_name: String,
    pub benchmark_version: String,
    /// Agents with a current submission on it.
    pub agents: i64,
    /// Its tasks, in id order: those the server knows the set by, else those its
    /// results ran.
    pub tasks: Vec<TaskId>,
}

/// The bootstrap's findings for every current submission, by bundle id
/// (see [`crate::stats`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BoardStats {
    pub by_bundle: BTreeMap<String, crate::stats::AgentStats>,
}
