//! The key registry over HTTP, every key endpoint in one place: anyone reads the
//! registry (`GET /api/v1/keys`, the evidence a reader checks an envelope with); an admin
//! holding the token set in `REXBENCH_ADMIN_TOKEN` lists, trusts and revokes keys
//! (`/api/v1/admin/keys…`). Without a token configured, admin HTTP is off.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use store::KeyRecord;
use utoipa::ToSchema;
use views::keys::KeysAnswer;

use crate::api::extract::{ApiJson, ApiPath};
use crate::api::responses::{AdminOff, AdminRefusals, ErrorAnswer, JsonBodyRefusals, PathRefusals};
use crate::auth::Admin;
use crate::error::ApiError;
use crate::state::Shared;

/// Every key that signs or signed results here, revoked ones included, with its
/// public key: what a reader needs to check a submission's envelope.
#[utoipa::path(get, path = "/api/v1/keys", tag = "evidence", responses((status = 200, body = KeysAnswer)))]
pub async fn keys(State(app): State<Shared>) -> Result<Json<KeysAnswer>, ApiError> {
    registry(&app).await
}

/// The registry, as both of its endpoints answer with it.
async fn registry(app: &Shared) -> Result<Json<KeysAnswer>, ApiError> {
    Ok(Json(KeysAnswer { keys: views::keys::list(&app.store).await? }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeyAnswer {
    pub key: KeyRecord,
}

/// The key registry (as `GET /api/v1/keys`), for an admin.
#[utoipa::path(
    get,
    path = "/api/v1/admin/keys",
    tag = "admin",
    security(("admin_token" = [])),
    responses(
        (status = 200, body = KeysAnswer),
        AdminRefusals,
        AdminOff,
    )
)]
pub async fn list_keys(State(app): State<Shared>, _: Admin) -> Result<Json<KeysAnswer>, ApiError> {
    registry(&app).await
}

/// A key to trust.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKey {
    /// SubjectPublicKeyInfo PEM of an Ed25519 key.
    public_key: String,
    /// Who holds the key, as results show it: 1 to 200 characters, not all blank.
    #[schema(min_length = 1, max_length = 200)]
    owner: String,
    #[schema(value_type = store::Tier)]
    tier: String,
}

/// Trust a key: its owner and tier decide how its results are shown.
#[utoipa::path(
    post,
    path = "/api/v1/admin/keys",
    tag = "admin",
    security(("admin_token" = [])),
    request_body = NewKey,
    responses(
        (status = 201, body = KeyAnswer),
        (status = 400, description = "A body that is not JSON", body = ErrorAnswer),
        AdminRefusals,
        AdminOff,
        (status = 409, description = "The key is registered already (`key_exists`), or has a pending key request (`key_requested`: approve it instead)", body = ErrorAnswer),
        JsonBodyRefusals,
        (status = 422, description = "A body that is not a key to add, or an invalid key, owner or tier", body = ErrorAnswer),
    )
)]
pub async fn add_key(
    State(app): State<Shared>,
    _: Admin,
    ApiJson(key): ApiJson<NewKey>,
) -> Result<(StatusCode, Json<KeyAnswer>), ApiError> {
    let bad = |code: &str, m: String| ApiError::unprocessable(code, m);
    let public =
        bundle::PublicKey::from_pem(&key.public_key).map_err(|e| bad("invalid_public_key", e.to_string()))?;
    let tier = key.tier.parse().map_err(|e: bundle::UnknownName| bad("invalid_tier", e.to_string()))?;
    if key.owner.trim().is_empty() || key.owner.chars().count() > 200 {
        return Err(bad("invalid_owner", "owner must be 1 to 200 characters".into()));
    }
    let record = app.store.add_key(&public, &key.owner, tier).await?;
    // The change log moved: `/keys` and `/api/v1/keys` are made again.
    crate::ingest::refresh_pages(&app).await;
    Ok((StatusCode::CREATED, Json(KeyAnswer { key: record })))
}

/// Revoke a key: from now on it verifies nothing (what it signed stays).
#[utoipa::path(
    post,
    path = "/api/v1/admin/keys/{keyid}/revoke",
    tag = "admin",
    security(("admin_token" = [])),
    params(("keyid" = String, Path, description = "The key's id")),
    responses(
        (status = 200, body = KeyAnswer),
        PathRefusals,
        AdminRefusals,
        (status = 404, description = "No such key, or admin over HTTP is off", body = ErrorAnswer),
    )
)]
pub async fn revoke_key(
    State(app): State<Shared>,
    ApiPath(keyid): ApiPath<String>,
    _: Admin,
) -> Result<Json<KeyAnswer>, ApiError> {
    let record = app.store.revoke_key(&keyid).await.map_err(|e| match e {
        store::StoreError::UnknownKey(_) => ApiError::not_found(format!("no key {keyid}")),
        other => other.into(),
    })?;
    crate::ingest::refresh_pages(&app).await;
    Ok(Json(KeyAnswer { key: record }))
}
