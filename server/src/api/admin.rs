//! The key registry and the review of integrity findings over HTTP, for an admin
//! holding the token set in `REXBENCH_ADMIN_TOKEN`. Without a token configured, admin
//! HTTP is off.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use store::{FindingId, FindingRecord, FindingsFilter, KeyRecord, Review};

use crate::api::evidence::KeysAnswer;
use crate::api::extract::{ApiJson, ApiPath, ApiQuery};
use crate::api::responses::{AdminOff, AdminRefusals, ErrorAnswer, JsonBodyRefusals, PathRefusals};
use crate::auth::Admin;
use crate::error::ApiError;
use crate::state::Shared;

#[derive(Debug, Serialize, ToSchema)]
pub struct KeyAnswer {
    pub key: KeyRecord,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FindingsAnswer {
    pub findings: Vec<FindingRecord>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FindingAnswer {
    pub finding: FindingRecord,
}

/// Reads of private content, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccessLogAnswer {
    pub reads: Vec<store::AccessEntry>,
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
        AdminRefusals,
        AdminOff,
        (status = 409, description = "The key is registered already", body = ErrorAnswer),
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

/// Which findings to list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FindingsQuery {
    /// `pending` (the default): findings about current successes that no maintainer has
    /// reviewed; `all`: every finding.
    #[param(schema_with = pending_or_all)]
    status: Option<String>,
    /// At most this many, newest runs first (1 to 1000; 100 if absent).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
}

pub(crate) fn pending_or_all() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["pending", "all"])).build()
}

/// Findings to review, with the runs they are about.
#[utoipa::path(
    get,
    path = "/api/v1/admin/findings",
    tag = "admin",
    security(("admin_token" = [])),
    params(FindingsQuery),
    responses(
        (status = 200, body = FindingsAnswer),
        (status = 400, description = "An unknown status, a limit out of range, or a parameter given twice", body = ErrorAnswer),
        AdminRefusals,
        AdminOff,
    )
)]
pub async fn list_findings(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<FindingsQuery>,
    _: Admin,
) -> Result<Json<FindingsAnswer>, ApiError> {
    let filter = match q.status.as_deref() {
        None | Some("pending") => FindingsFilter::Pending,
        Some("all") => FindingsFilter::All,
        Some(other) => {
            return Err(invalid_query(format!("query parameter `status`: `{other}` is not pending or all")));
        }
    };
    Ok(Json(FindingsAnswer { findings: app.store.findings(filter, limit(q.limit)?).await? }))
}

/// A maintainer's verdict on a finding.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewReview {
    #[schema(value_type = store::Review)]
    verdict: String,
    /// Why, as the run page and the change log show it: 1 to 1000 characters, not all blank.
    #[schema(min_length = 1, max_length = 1000, pattern = r"\S")]
    note: String,
}

/// Confirm or dismiss a finding. A dismissed finding no longer flags its run; a
/// confirmed one does, and says a maintainer agrees. The change log records it.
#[utoipa::path(
    post,
    path = "/api/v1/admin/findings/{id}/review",
    tag = "admin",
    security(("admin_token" = [])),
    params(("id" = String, Path, description = "The finding's id, as runs list it: `1234-server-0`")),
    request_body = NewReview,
    responses(
        (status = 200, body = FindingAnswer),
        (status = 400, description = "A body that is not JSON, or a path that is not UTF-8", body = ErrorAnswer),
        AdminRefusals,
        (status = 404, description = "No such finding, or admin over HTTP is off", body = ErrorAnswer),
        JsonBodyRefusals,
        (status = 422, description = "A body that is not a review, or an unknown verdict or a bad note", body = ErrorAnswer),
    )
)]
pub async fn review_finding(
    State(app): State<Shared>,
    ApiPath(id): ApiPath<String>,
    _: Admin,
    ApiJson(review): ApiJson<NewReview>,
) -> Result<Json<FindingAnswer>, ApiError> {
    let id: FindingId = id.parse().map_err(ApiError::not_found)?;
    let bad = |code: &str, m: String| ApiError::unprocessable(code, m);
    let verdict: Review =
        review.verdict.parse().map_err(|e: bundle::UnknownName| bad("invalid_verdict", e.to_string()))?;
    let note = review.note.trim();
    if note.is_empty() || review.note.chars().count() > 1000 {
        return Err(bad("invalid_note", "note must be 1 to 1000 characters, not all blank".into()));
    }
    let finding = app.store.review_finding(&id, verdict, note).await?;
    crate::ingest::refresh_pages(&app).await;
    Ok(Json(FindingAnswer { finding }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AccessLogQuery {
    /// At most this many (1 to 1000, default 100).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
    /// Only reads before this sequence number (for paging).
    #[param(minimum = 1)]
    before: Option<i64>,
}

/// Every read of private content, newest first: who (the admin token, a sign-in link,
/// or a key), how (a run's page, its API answer, an artifact), which run or artifact,
/// and when.
#[utoipa::path(
    get,
    path = "/api/v1/admin/access-log",
    tag = "admin",
    security(("admin_token" = [])),
    params(AccessLogQuery),
    responses(
        (status = 200, body = AccessLogAnswer),
        (status = 400, description = "A limit out of range, or a parameter given twice", body = ErrorAnswer),
        AdminRefusals,
        AdminOff,
    )
)]
pub async fn access_log(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<AccessLogQuery>,
    _: Admin,
) -> Result<Json<AccessLogAnswer>, ApiError> {
    if let Some(before) = q.before.filter(|b| *b < 1) {
        return Err(invalid_query(format!("query parameter `before`: {before} is not 1 or more")));
    }
    Ok(Json(AccessLogAnswer { reads: app.store.access_log(limit(q.limit)?, q.before).await? }))
}

/// An admin list's `limit`: 1 to 1000, 100 where not given.
fn limit(given: Option<i64>) -> Result<i64, ApiError> {
    let limit = given.unwrap_or(100);
    if (1..=1000).contains(&limit) {
        Ok(limit)
    } else {
        Err(invalid_query(format!("query parameter `limit`: {limit} is not between 1 and 1000")))
    }
}

pub(crate) fn invalid_query(message: String) -> ApiError {
    ApiError::invalid_query(message)
}
