//! The change log.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct Change {
    pub seq: i64,
    pub at: String,
    /// `accepted`, `superseded`, `retracted`, `reviewed`, `reproduced` (a submission's),
    /// `outputs` (a task's outputs published or made private), `sampling` (a sampling
    /// epoch began, or its key was revealed), `key` (a key registered or revoked), or
    /// `task_set` (the maintainers registered a task set results may name) or
    /// `heldout_variant` (they registered a held-out variant of a task, spec §4l).
    pub kind: String,
    /// The submission it is about; none for a task's outputs.
    pub bundle_id: Option<String>,
    pub agent_id: Option<String>,
    /// The task it is about, for a change of a task's outputs.
    pub task: Option<String>,
    pub detail: String,
}
