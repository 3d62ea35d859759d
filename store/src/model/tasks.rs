//! The tasks' totals, and one task's agents.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use vocab::{Hint, ProvenanceKind, TaskId, Tier};

use super::rates::Rates;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskRow {
    pub task: TaskId,
    /// Agents with a current submission that ran the task.
    pub agents: i64,
    pub by_hint: BTreeMap<Hint, Rates>,
}

/// What places an agent on a task's page, read for every agent before the page's rows
/// are: its no-hint final success on the task, and whether it succeeded only with hints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskPlace {
    pub bundle_id: String,
    pub agent_id: String,
    pub display_name: String,
    /// Final success without hints, where it ran without hints.
    pub final_success: Option<f64>,
    /// No successful run without hints, at least one with hints or detailed hints.
    pub hinted_only: bool,
    /// The conditions under which every counted run succeeded (pass^n = 1).
    pub every_time: Vec<Hint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskAgentRow {
    pub agent_id: String,
    pub display_name: String,
    pub tier: Tier,
    pub provenance: ProvenanceKind,
    pub bundle_id: String,
    pub by_hint: BTreeMap<Hint, Rates>,
    /// The task folder its runs ran, where they say (spec §4n).
    #[serde(default)]
    pub task_folder: Option<String>,
}

/// A task folder that current submissions on a task set ran of a task (spec §4n).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskFolderUse {
    pub task_set_digest: String,
    /// A Harbor lock's `sha256:` digest, or a trial's `task_checksum`.
    pub folder: String,
    /// The current submissions on the task set whose runs ran it.
    pub submissions: i64,
}
