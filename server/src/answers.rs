//! What the JSON API answers, as types: the handlers return them and the OpenAPI
//! document (`/api/v1/openapi.json`) is derived from them, so the two cannot differ.

use serde::Serialize;
use store::{
    AgentDetail, Change, FindingRecord, Ingested, KeyRecord, RunDetail, TaskAgentRow, TaskId, TaskRow,
};
use utoipa::ToSchema;
pub use views::leaderboard::LeaderboardEntry;

/// Every error: a stable code and a sentence naming what is at fault.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorAnswer {
    pub error: ErrorBody,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// e.g. `artifact_digest_mismatch`, `not_found`, `invalid_query`.
    pub code: String,
    pub message: String,
}

/// One run: its numbers, its artifacts' digests and sizes (what the signed manifest
/// commits to), its findings, and what anyone may know of its outputs. Where the
/// outputs are private to the reader (`readable: false`), the findings' text is
/// withheld and `/artifacts/{digest}` refuses their content.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunAnswer {
    #[serde(flatten)]
    pub run: RunDetail,
    #[serde(flatten)]
    pub outline: views::run::Outline,
}

/// Reads of private content, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccessLogAnswer {
    pub reads: Vec<store::AccessEntry>,
}

/// A bundle was stored (201) or had been stored before (200).
#[derive(Debug, Serialize, ToSchema)]
pub struct SubmissionAnswer {
    #[serde(flatten)]
    pub result: Ingested,
    pub links: SubmissionLinks,
}

/// Where the stored results are shown.
#[derive(Debug, Serialize, ToSchema)]
pub struct SubmissionLinks {
    pub agent: String,
    pub api: String,
    pub envelope: String,
    pub leaderboard: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LeaderboardAnswer {
    pub rows: Vec<LeaderboardEntry>,
    /// Where the statistics are explained.
    pub method: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TasksAnswer {
    pub tasks: Vec<TaskEntry>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TaskEntry {
    pub id: TaskId,
    pub name: String,
    /// One of the runnable example tasks, not a RExBench task.
    pub example: bool,
    /// The attempts per hint condition the benchmark asks on it (spec §4f).
    pub attempts: u32,
    /// Over the agents' current submissions; absent where no agent ran it.
    pub results: Option<TaskRow>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TaskAnswer {
    pub id: TaskId,
    pub name: String,
    pub summary: Option<String>,
    /// Only the expected values the task card makes public.
    pub public_expected: Vec<ExpectedValue>,
    pub agents: Vec<TaskAgentRow>,
}

/// A metric's public expected value, in words (e.g. `0.88211 ± 0.002`).
#[derive(Debug, Serialize, ToSchema)]
pub struct ExpectedValue {
    pub metric: String,
    pub value: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ChangesAnswer {
    /// Newest first.
    pub changes: Vec<Change>,
}

/// The key registry: every key that may sign, or once could.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeysAnswer {
    pub keys: Vec<KeyRecord>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeyAnswer {
    pub key: KeyRecord,
}

/// One agent: its submissions, the task × hint grid of each current one, and every
/// integrity finding about the runs of its current submissions.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentAnswer {
    #[serde(flatten)]
    pub agent: AgentDetail,
    /// By run (task, hint, attempt), the submitter's first; reviewed ones included.
    pub findings: Vec<FindingRecord>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FindingsAnswer {
    pub findings: Vec<FindingRecord>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FindingAnswer {
    pub finding: FindingRecord,
}
