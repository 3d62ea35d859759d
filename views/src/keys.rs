//! The key registry as a view: every key that signs or signed results here, revoked
//! ones included, with its public key. The keys page and both registry answers of the
//! API (`/api/v1/keys`, `/api/v1/admin/keys`) read it here.

use serde::Serialize;
use store::KeyRecord;

/// The key registry: every key that may sign, or once could.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KeysAnswer {
    pub keys: Vec<KeyRecord>,
}

/// Every key, as the store orders them.
#[cfg(feature = "db")]
pub async fn list(store: &store::Store) -> Result<Vec<KeyRecord>, crate::ViewError> {
    Ok(store.keys().await?)
}
