//! The key registry.

use serde::{Deserialize, Serialize};
use vocab::Tier;

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
