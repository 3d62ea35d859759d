//! Key requests: a key someone asked to have registered, where the request stands, and
//! the bundles its key submitted while it waited.

use serde::{Deserialize, Serialize};
use vocab::{RequestStatus, Tier};

/// A key request as the store holds it. What of it anyone may read and what only its
/// submitter and the maintainers may is `views::key_requests`'s to say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRequestRecord {
    pub id: i64,
    pub keyid: String,
    /// SubjectPublicKeyInfo PEM.
    pub public_key: String,
    pub owner: String,
    pub url: Option<String>,
    /// How the maintainers reach the requester: for them alone.
    pub contact: String,
    pub note: Option<String>,
    pub status: RequestStatus,
    /// The tier chosen at approval.
    pub tier: Option<Tier>,
    /// The maintainers' reason, for a declined request.
    pub reason: Option<String>,
    pub requested_at: String,
    pub decided_at: Option<String>,
}

/// A bundle a pending key submitted: verified, kept whole, on no public answer until
/// its key is approved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HeldBundle {
    /// The bundle's id (the SHA-256 of its envelope), as the board will name it.
    pub bundle_id: String,
    pub agent_id: String,
    pub runs: i64,
    pub successes: i64,
    /// Its size, compressed.
    pub bytes: i64,
    pub received_at: String,
}

/// What waits on the maintainers' desk, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeskCounts {
    pub requests: i64,
    pub findings: i64,
}
