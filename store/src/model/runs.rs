//! A run, in a list and whole, its artifacts and a reproduction of it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use vocab::{CostMark, Hint, Outcome, ProvenanceKind, TaskId, Tier, Tokens};

use super::findings::RunFinding;

/// A sampled run's reproduction: how the maintainers' re-run of its patch ended, where,
/// and its own evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunReproduction {
    /// The reproduction bundle's id.
    pub bundle_id: String,
    pub outcome: Outcome,
    pub error_type: Option<String>,
    /// What the re-run took; `null` where its outputs are withheld from the reader.
    pub duration_s: Option<f64>,
    pub metrics: BTreeMap<String, f64>,
    /// The metrics are a private check's (its gold, bundle spec §4j) and not the
    /// reader's to read: `metrics` is empty.
    #[serde(default)]
    pub metrics_withheld: bool,
    /// The re-run was of a task whose check is private, and the reader is not a
    /// maintainer: what it made beside its verdict (its artifacts with their digests and
    /// sizes, its duration) is the maintainers' (spec §4j), for a patch could shape
    /// any of them to signal what it read on their machine. `artifacts` is empty and
    /// `duration_s` is `null`.
    #[serde(default)]
    pub outputs_withheld: bool,
    /// The same final success as submitted.
    pub held: bool,
    pub executor: String,
    /// The hardware in words.
    pub hardware: String,
    pub gpus: i64,
    pub received_at: String,
    pub artifacts: Vec<ArtifactRef>,
    /// Its re-run on a held-out variant (spec §4l): the variant's digest and whether it
    /// was a success there, nothing more (its files, gold and logs are the maintainers').
    #[serde(default)]
    pub heldout: Option<HeldOutRun>,
}

/// A run's re-run on a held-out variant of its task (spec §4l): one bit is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HeldOutRun {
    pub variant: String,
    /// Whether it was a success there too.
    pub generalised: bool,
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

/// What the server made of a run's cost at ingest (spec §4m).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CostCheck {
    /// Its tokens' price at its model's price of its day.
    pub computed_usd: Option<f64>,
    pub mark: Option<CostMark>,
    /// The cost its rates sum.
    pub counted_usd: Option<f64>,
    /// `counted_usd` is the computed cost, of tokens borne out.
    pub checked: bool,
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
    /// The outcome is a Harbor regrade's verdict on the agent run's outputs; what the
    /// run was judged before the regrade (bundle spec section 4i).
    pub regraded_from: Option<Outcome>,
    pub error_type: Option<String>,
    pub file_recall: Option<f64>,
    pub files_changed: Option<Vec<String>>,
    pub duration_s: Option<f64>,
    /// The cost the run states, in US dollars.
    pub cost_usd: Option<f64>,
    /// The tokens it states (spec §4m).
    pub tokens: Option<Tokens>,
    /// What those tokens cost at its model's price of its day, where the board's price
    /// table has one: the cost its rates count.
    pub cost_computed_usd: Option<f64>,
    /// Why its stated cost is not borne out, if it is not.
    pub cost_mark: Option<CostMark>,
    /// The task folder its harness ran, where it says (spec §4n).
    #[serde(default)]
    pub task_folder: Option<String>,
    pub metrics: BTreeMap<String, f64>,
    /// The metrics are a private check's (its gold, bundle spec §4j) and not the
    /// reader's to read: `metrics` is empty. Outcomes and rates stay public.
    #[serde(default)]
    pub metrics_withheld: bool,
    pub artifacts: Vec<ArtifactRef>,
    /// Why a reader should doubt the outcome, the submitter's findings first.
    pub findings: Vec<RunFinding>,
    /// In its submission's reproduction sample, as far as anyone may know (spec §4e):
    /// reproduced, or sampled under a key since revealed.
    pub sampled: bool,
    /// The maintainers' re-run of it, if there is one.
    pub reproduction: Option<RunReproduction>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct ArtifactRef {
    pub role: String,
    pub digest: String,
    pub size: i64,
    pub media_type: String,
    /// It shows the task's success criteria (a private check's log, the words of a
    /// maintainers' re-run's findings): only the maintainers read it, whoever ran it.
    #[serde(default)]
    #[cfg_attr(feature = "db", sqlx(default))]
    pub maintainers_only: bool,
}

/// One way a run refers to an artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactUse {
    pub task: TaskId,
    /// The run's bundle (for a re-run's evidence, the reproduced run's).
    pub bundle: String,
    /// The role the artifact plays there.
    pub role: String,
    /// Evidence of a maintainers' re-run (spec §4d), not the submitted run's own.
    pub reproduction: bool,
}
