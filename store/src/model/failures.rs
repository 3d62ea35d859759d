//! How runs failed: by agent, by error type, by pattern.

use serde::{Deserialize, Serialize};
use vocab::{Outcome, TaskId};

/// Runs of an agent's current submission that ended one way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct FailureCount {
    pub agent_id: String,
    pub display_name: String,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub outcome: Outcome,
    /// `None` where the runs carry no error type.
    pub error_type: Option<String>,
    pub runs: i64,
}

/// The failure explorer's view of every current submission (see
/// [`crate::Store::failure_overview`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureOverview {
    /// Agents with failed runs.
    pub agents: i64,
    /// The failed runs of the agents with the most, by outcome and error type.
    pub by_agent: Vec<FailureCount>,
    /// Error types, alphabetically.
    pub error_types: Vec<ErrorTypeCount>,
}

/// Failed runs that carry one error type, over current submissions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorTypeCount {
    pub error_type: String,
    pub runs: i64,
    pub agents: i64,
    /// The agents with the most such runs (name, runs), most first.
    pub most: Vec<(String, i64)>,
}

/// One way of failing a task, across the agents' current submissions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct FailurePattern {
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub task: TaskId,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub outcome: Outcome,
    pub error_type: Option<String>,
    /// How many current submissions (one per agent and benchmark version) had at least
    /// one run end this way.
    pub agents: i64,
    pub runs: i64,
}
