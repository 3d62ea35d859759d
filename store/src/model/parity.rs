//! One submission's side of a parity comparison, as the store reads it (what it means is
//! `views::parity`'s).

use std::collections::BTreeMap;

use vocab::{Harness, ProvenanceKind, TaskId};

/// One submission's side of a parity comparison as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ParityRead {
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
    /// Successes and counted runs over every task.
    pub successes: i64,
    pub runs: i64,
    /// Final success of each attempt number over the tasks that have it counted (not read
    /// for a published side: its attempts are reconstructed and say nothing of runs).
    pub attempt_rates: Vec<f64>,
    /// Successes and counted runs per task (tasks with a counted run only).
    pub tasks: BTreeMap<TaskId, (i64, i64)>,
}
