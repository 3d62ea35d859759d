//! A submission, and its reproduction sample at a glance.

use serde::{Deserialize, Serialize};
use vocab::{Harness, ProvenanceKind, Tier};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SubmissionRecord {
    pub bundle_id: String,
    pub agent_id: String,
    pub keyid: String,
    pub tier: Tier,
    pub provenance: ProvenanceKind,
    pub provenance_source: Option<String>,
    /// The harness that executed its runs.
    pub harness: Harness,
    /// False when its source publishes only whether each run succeeded.
    pub execution_known: bool,
    pub benchmark_name: String,
    pub benchmark_version: String,
    pub task_set_digest: String,
    pub runner: String,
    pub created_at: String,
    pub received_at: String,
    pub superseded_by: Option<String>,
    pub run_count: i64,
    pub artifact_bytes: i64,
    /// Its reproduction sample (spec §4e) at a glance.
    pub sample: SampleCounts,
}

/// A submission's reproduction sample at a glance: how many of its runs were sampled,
/// how many of those the maintainers have re-run, and how many of those ended with
/// another final success than submitted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct SampleCounts {
    pub sampled: i64,
    pub reproduced: i64,
    pub differed: i64,
    /// Of the reproduced runs, how many were re-run on a held-out variant (spec §4l),
    /// and how many of those were a success there too.
    #[serde(default)]
    pub heldout: i64,
    #[serde(default)]
    pub generalised: i64,
    /// What its sample of successes catches (spec §4e): the least, over its conditions
    /// with successes, of the chance that it took a fake were the share its rule names
    /// (`/api/v1/submissions/{id}/sample`) of them fake. `null` where it was not sampled
    /// by that rule (stored before it, or not sampled).
    #[serde(default)]
    #[cfg_attr(feature = "db", sqlx(default, rename = "sample_catches"))]
    pub catches: Option<f64>,
    /// The share of fakes `catches` is for.
    #[serde(default)]
    #[cfg_attr(feature = "db", sqlx(default, rename = "sample_share"))]
    pub share: Option<f64>,
}

impl SampleCounts {
    /// Re-run, every re-run held, and every held-out re-run generalised.
    pub fn held(&self) -> bool {
        self.reproduced > 0 && self.differed == 0 && self.generalised == self.heldout
    }
}
