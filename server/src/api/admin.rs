//! The review of integrity findings and the access log over HTTP, for an admin
//! holding the token set in `REXBENCH_ADMIN_TOKEN`. Without a token configured, admin
//! HTTP is off. The key registry's endpoints are `crate::api::keys`'s.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use store::{FindingId, FindingRecord, Review};
use views::admin::{AccessLogAnswer, AccessLogParams, FindingsAnswer, FindingsParams};

use crate::api::extract::{ApiJson, ApiPath, ApiQuery};
use crate::api::responses::{AdminOff, AdminRefusals, ErrorAnswer, JsonBodyRefusals};
use crate::auth::Admin;
use crate::error::ApiError;
use crate::state::Shared;

#[derive(Debug, Serialize, ToSchema)]
pub struct FindingAnswer {
    pub finding: FindingRecord,
}

/// Findings to review, with the runs they are about.
#[utoipa::path(
    get,
    path = "/api/v1/admin/findings",
    tag = "admin",
    security(("admin_token" = [])),
    params(FindingsParams),
    responses(
        (status = 200, body = FindingsAnswer),
        (status = 400, description = "An unknown status, a limit out of range, or a parameter given twice", body = ErrorAnswer),
        AdminRefusals,
        AdminOff,
    )
)]
pub async fn list_findings(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<FindingsParams>,
    _: Admin,
) -> Result<Json<FindingsAnswer>, ApiError> {
    Ok(Json(views::admin::findings(&app.store, q.view()?).await?))
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
    Ok(Json(review_rule(&app, &id, &review.verdict, &review.note).await?))
}

/// The review rule, for the API and the desk alike: the finding named, the verdict
/// read, the note held to its length; the change log records it.
pub(crate) async fn review_rule(
    app: &crate::state::AppState,
    id: &str,
    verdict: &str,
    note: &str,
) -> Result<FindingAnswer, ApiError> {
    let id: FindingId = id.parse().map_err(ApiError::not_found)?;
    let bad = |code: &str, m: String| ApiError::unprocessable(code, m);
    let verdict: Review =
        verdict.parse().map_err(|e: bundle::UnknownName| bad("invalid_verdict", e.to_string()))?;
    let trimmed = note.trim();
    if trimmed.is_empty() || note.chars().count() > 1000 {
        return Err(bad("invalid_note", "note must be 1 to 1000 characters, not all blank".into()));
    }
    let finding = app.store.review_finding(&id, verdict, trimmed).await?;
    crate::ingest::refresh_pages(app).await;
    Ok(FindingAnswer { finding })
}

/// Every read of private content, newest first: who (the admin token, a sign-in link,
/// or a key), how (a run's page, its API answer, an artifact), which run or artifact,
/// and when.
#[utoipa::path(
    get,
    path = "/api/v1/admin/access-log",
    tag = "admin",
    security(("admin_token" = [])),
    params(AccessLogParams),
    responses(
        (status = 200, body = AccessLogAnswer),
        (status = 400, description = "A limit out of range, or a parameter given twice", body = ErrorAnswer),
        AdminRefusals,
        AdminOff,
    )
)]
pub async fn access_log(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<AccessLogParams>,
    _: Admin,
) -> Result<Json<AccessLogAnswer>, ApiError> {
    Ok(Json(views::admin::access_log(&app.store, q.view()?).await?))
}
