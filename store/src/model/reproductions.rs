//! Sampling epochs, the maintainers' queue and the runs they re-ran.

use serde::{Deserialize, Serialize};
use vocab::{Hint, Outcome, TaskId};

/// A sampling epoch (spec §4e): the commitment to its key, public from its start, and
/// the key once the epoch has ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SamplingEpoch {
    pub epoch: i64,
    /// Lowercase hex SHA-256 of the key's 32 bytes.
    pub commitment: String,
    pub committed_at: String,
    /// The key (64 hex digits), once revealed.
    pub key: Option<String>,
    pub revealed_at: Option<String>,
}

/// A sampled run in the maintainers' queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueuedRun {
    pub run_id: i64,
    pub bundle_id: String,
    pub agent_id: String,
    pub benchmark_name: String,
    pub task_set_digest: String,
    /// Its submission has been superseded (its sample is re-run all the same).
    pub superseded: bool,
    pub task: TaskId,
    pub hint: Hint,
    pub attempt: i64,
    pub outcome: Outcome,
    pub duration_s: Option<f64>,
    /// The submitted patch's digest: the one a reproduction must re-run.
    pub patch: Option<String>,
    pub epoch: i64,
    pub sampled_at: String,
    /// How its reproduction ended, once there is one.
    pub reproduced: Option<Outcome>,
    /// Whether that reproduction had the same final success.
    pub held: Option<bool>,
    /// The held-out variant (its digest) the sampling key chose for it, a sampled
    /// success (spec §4l), where its task had variants when it was sampled.
    pub heldout_variant: Option<String>,
    /// Whether its re-run on that variant was a success, once there is one.
    pub heldout: Option<bool>,
    /// Its re-runs that ended `infra_error` so far, each one try (spec §4d): at the
    /// server's limit it counts as not reproduced.
    pub tries: i64,
}

/// A run the maintainers re-ran, as an agent's page lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReproducedRun {
    pub run_id: i64,
    pub bundle_id: String,
    /// The reproduction bundle that re-ran it.
    pub reproduction: String,
    pub task: TaskId,
    pub hint: Hint,
    pub attempt: i64,
    pub submitted: Outcome,
    pub reproduced: Outcome,
    pub held: bool,
    /// What the re-run took; `null` for a reader who is not a maintainer where its task's
    /// check is private (spec §4j: a patch could shape it to signal).
    pub duration_s: Option<f64>,
    pub received_at: String,
    /// Whether its re-run on a held-out variant was a success (spec §4l), where it had one.
    pub heldout: Option<bool>,
}

/// A held-out variant the maintainers registered (spec §4l): its task and digest only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RegisteredVariant {
    pub task: String,
    /// The variant's digest (64 lowercase hex): all anyone but the maintainers learns of it.
    pub digest: String,
    pub registered_at: String,
    pub note: String,
    /// From when it is chosen for no new submission, if the maintainers retired it.
    pub retired_at: Option<String>,
}
