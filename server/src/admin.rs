//! The key registry over HTTP, for an admin holding the token set in
//! `REXBENCH_ADMIN_TOKEN`. Without a token configured, admin HTTP is off.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use serde::Deserialize;
use serde_json::{Value, json};
use subtle::ConstantTimeEq;

use crate::error::ApiError;
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

pub async fn list_keys(State(app): State<Shared>, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    authorize(&app, &headers)?;
    Ok(Json(json!({ "keys": app.store.keys().await? })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewKey {
    public_key: String,
    owner: String,
    tier: String,
}

pub async fn add_key(
    State(app): State<Shared>,
    headers: HeaderMap,
    Json(key): Json<NewKey>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    authorize(&app, &headers)?;
    let bad = |code: &str, m: String| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, m);
    let public =
        bundle::PublicKey::from_pem(&key.public_key).map_err(|e| bad("invalid_public_key", e.to_string()))?;
    let tier = key.tier.parse().map_err(|e: bundle::UnknownName| bad("invalid_tier", e.to_string()))?;
    if key.owner.trim().is_empty() || key.owner.chars().count() > 200 {
        return Err(bad("invalid_owner", "owner must be 1 to 200 characters".into()));
    }
    let record = app.store.add_key(&public, &key.owner, tier).await?;
    Ok((StatusCode::CREATED, Json(json!({ "key": record }))))
}

pub async fn revoke_key(
    State(app): State<Shared>,
    headers: HeaderMap,
    Path(keyid): Path<String>,
) -> Result<Json<Value>, ApiError> {
    authorize(&app, &headers)?;
    let record = app.store.revoke_key(&keyid).await.map_err(|e| match e {
        store::StoreError::UnknownKey(_) => ApiError::not_found(format!("no key {keyid}")),
        other => other.into(),
    })?;
    Ok(Json(json!({ "key": record })))
}
