//! The key registry over HTTP, for an admin holding the token set in
//! `REXBENCH_ADMIN_TOKEN`. Without a token configured, admin HTTP is off.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use serde::Deserialize;
use subtle::ConstantTimeEq;
use utoipa::ToSchema;

use crate::answers::{ErrorAnswer, KeyAnswer, KeysAnswer};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use crate::state::Shared;

/// Checks `Authorization: Bearer <token>` in constant time.
fn authorize(app: &Shared, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(expected) = &app.admin_token else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "admin_disabled",
            "admin over HTTP is off: no REXBENCH_ADMIN_TOKEN is configured",
        ));
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if bool::from(given.as_bytes().ct_eq(expected.as_bytes())) {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "admin_unauthorized",
            "a valid admin token is needed (Authorization: Bearer …)",
        ))
    }
}

/// The key registry (as `GET /api/v1/keys`), for an admin.
#[utoipa::path(
    get,
    path = "/api/v1/admin/keys",
    tag = "admin",
    security(("admin_token" = [])),
    responses(
        (status = 200, body = KeysAnswer),
        (status = 401, description = "No valid admin token", body = ErrorAnswer),
        (status = 404, description = "Admin over HTTP is off", body = ErrorAnswer),
    )
)]
pub async fn list_keys(State(app): State<Shared>, headers: HeaderMap) -> Result<Json<KeysAnswer>, ApiError> {
    authorize(&app, &headers)?;
    Ok(Json(KeysAnswer { keys: app.store.keys().await? }))
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
        (status = 401, description = "No valid admin token", body = ErrorAnswer),
        (status = 404, description = "Admin over HTTP is off", body = ErrorAnswer),
        (status = 409, description = "The key is registered already", body = ErrorAnswer),
        (status = 415, description = "Not sent as application/json", body = ErrorAnswer),
        (status = 422, description = "A body that is not a key to add, or an invalid key, owner or tier", body = ErrorAnswer),
    )
)]
pub async fn add_key(
    State(app): State<Shared>,
    headers: HeaderMap,
    ApiJson(key): ApiJson<NewKey>,
) -> Result<(StatusCode, Json<KeyAnswer>), ApiError> {
    authorize(&app, &headers)?;
    let bad = |code: &str, m: String| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, m);
    let public =
        bundle::PublicKey::from_pem(&key.public_key).map_err(|e| bad("invalid_public_key", e.to_string()))?;
    let tier = key.tier.parse().map_err(|e: bundle::UnknownName| bad("invalid_tier", e.to_string()))?;
    if key.owner.trim().is_empty() || key.owner.chars().count() > 200 {
        return Err(bad("invalid_owner", "owner must be 1 to 200 characters".into()));
    }
    let record = app.store.add_key(&public, &key.owner, tier).await?;
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
        (status = 400, description = "A path that is not UTF-8", body = ErrorAnswer),
        (status = 401, description = "No valid admin token", body = ErrorAnswer),
        (status = 404, description = "No such key, or admin over HTTP is off", body = ErrorAnswer),
    )
)]
pub async fn revoke_key(
    State(app): State<Shared>,
    headers: HeaderMap,
    ApiPath(keyid): ApiPath<String>,
) -> Result<Json<KeyAnswer>, ApiError> {
    authorize(&app, &headers)?;
    let record = app.store.revoke_key(&keyid).await.map_err(|e| match e {
        store::StoreError::UnknownKey(_) => ApiError::not_found(format!("no key {keyid}")),
        other => other.into(),
    })?;
    Ok(Json(KeyAnswer { key: record }))
}
