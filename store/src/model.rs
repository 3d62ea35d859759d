//! What the store answers with: plain data for the pages and the API, without the
//! database (so the app can name these types in a build without one).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use vocab::{Hint, Outcome, ProvenanceKind, TaskId, Tier};

/// Counts for one agent (or task) under one hint condition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Rates {
    /// All runs, infrastructure failures included.
    pub runs: i64,
    /// Runs that count towards the rates (not `infra_error`).
    pub counted: i64,
    pub successes: i64,
    pub executed: i64,
    pub final_success: Option<f64>,
    pub execution_success: Option<f64>,
    pub file_recall: Option<f64>,
}

impl Rates {
    #[cfg(feature = "db")]
    pub(crate) fn from_sums(
        runs: i64,
        counted: i64,
        successes: i64,
        executed: i64,
        recall_sum: f64,
        recall_runs: i64,
    ) -> Rates {
        let ratio = |n: i64, d: i64| (d > 0).then(|| n as f64 / d as f64);
        Rates {
            runs,
            counted,
            successes,
            executed,
            final_success: ratio(successes, counted),
            execution_success: ratio(executed, counted),
            file_recall: (recall_runs > 0).then(|| recall_sum / recall_runs as f64),
        }
    }
}

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
    pub provenance: ProvenanceKind,
    /// What `imported` and `published` results name as their source.
    pub provenance_source: Option<String>,
    pub benchmark_name: String,
    pub benchmark_version: String,
    pub task_set_digest: String,
    pub bundle_id: String,
    pub by_hint: BTreeMap<Hint, Rates>,
}

/// A key of the registry: who signs with it, how far their results are trusted, and
/// its public key (SubjectPublicKeyInfo PEM) for anyone to check their signatures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct KeyRecord {
    pub keyid: String,
    pub owner: String,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub tier: Tier,
    pub added_at: String,
    pub revoked_at: Option<String>,
    pub public_key: String,
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
    /// The tasks their runs cover, in id order.
    pub tasks: Vec<TaskId>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct SubmissionRecord {
    pub bundle_id: String,
    pub agent_id: String,
    pub keyid: String,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub tier: Tier,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub provenance: ProvenanceKind,
    pub provenance_source: Option<String>,
    pub benchmark_name: String,
    pub benchmark_version: String,
    pub task_set_digest: String,
    pub runner: String,
    pub created_at: String,
    pub received_at: String,
    pub superseded_by: Option<String>,
    pub run_count: i64,
    pub artifact_bytes: i64,
}

/// Task → hint → rates.
pub type TaskGrid = BTreeMap<TaskId, BTreeMap<Hint, Rates>>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentDetail {
    pub id: String,
    pub display_name: String,
    pub framework: String,
    pub framework_version: Option<String>,
    pub model: String,
    pub model_id: Option<String>,
    pub url: Option<String>,
    pub first_seen_at: String,
    /// Newest first, superseded ones included.
    pub submissions: Vec<SubmissionRecord>,
    /// For each current submission (one per benchmark version), by bundle id: task →
    /// hint → rates.
    pub current: BTreeMap<String, TaskGrid>,
}

impl AgentDetail {
    /// The newest current submission and its grid: the one the agent's page shows.
    pub fn newest_current(&self) -> Option<(&str, &TaskGrid)> {
        let newest = self.submissions.iter().find(|s| s.superseded_by.is_none())?;
        self.current.get_key_value(&newest.bundle_id).map(|(b, g)| (b.as_str(), g))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct RunSummary {
    pub id: i64,
    pub bundle_id: String,
    pub agent_id: String,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub task: TaskId,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub hint: Hint,
    pub attempt: i64,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub outcome: Outcome,
    pub error_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunDetail {
    pub id: i64,
    pub bundle_id: String,
    pub agent_id: String,
    pub agent_name: String,
    pub benchmark_version: String,
    pub tier: Tier,
    pub provenance: ProvenanceKind,
    pub provenance_source: Option<String>,
    pub task: TaskId,
    pub hint: Hint,
    pub attempt: i64,
    pub outcome: Outcome,
    pub error_type: Option<String>,
    pub file_recall: Option<f64>,
    pub files_changed: Option<Vec<String>>,
    pub duration_s: Option<f64>,
    pub cost_usd: Option<f64>,
    pub metrics: BTreeMap<String, f64>,
    pub artifacts: Vec<ArtifactRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct ArtifactRef {
    pub role: String,
    pub digest: String,
    pub size: i64,
    pub media_type: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskRow {
    pub task: TaskId,
    /// Agents with a current submission that ran the task.
    pub agents: i64,
    pub by_hint: BTreeMap<Hint, Rates>,
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct Change {
    pub seq: i64,
    pub at: String,
    pub kind: String,
    pub bundle_id: String,
    pub agent_id: String,
    pub detail: String,
}

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
    /// How many agents had at least one run end this way.
    pub agents: i64,
    pub runs: i64,
}

/// The bootstrap's findings for every current submission, by bundle id
/// (see [`crate::stats`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BoardStats {
    pub by_bundle: BTreeMap<String, crate::stats::AgentStats>,
}
