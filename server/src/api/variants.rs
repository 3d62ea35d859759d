//! Held-out variants over HTTP (bundle spec §4l), for an admin: register one by its
//! digest, or retire one (it is chosen for no new submission). The desk's forms and
//! `rexbench-server variants` call [`register`] and [`retire`], the one rule each.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::extract::ApiJson;
use crate::api::responses::{AdminOff, AdminRefusals, ErrorAnswer, JsonBodyRefusals};
use crate::auth::Admin;
use crate::error::ApiError;
use crate::state::{AppState, Shared};

/// A variant to register or retire, and why.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VariantChange {
    /// The task's id, one of the server's cards.
    pub task: String,
    /// The variant's digest (64 lowercase hex digits), as `rexbench variants --gold DIR` prints it.
    #[schema(pattern = r"^[0-9a-f]{64}$")]
    pub digest: String,
    /// Why, in words the change log shows (never the variant's contents): 1 to 1000 characters.
    #[schema(min_length = 1, max_length = 1000)]
    pub note: String,
}

/// What became of it.
#[derive(Debug, Serialize, ToSchema)]
pub struct VariantAnswer {
    pub task: String,
    pub digest: String,
    /// False if it was registered (or retired) already: nothing changed.
    pub changed: bool,
}

/// Register a held-out variant: sampled successes of submissions that arrive from now on
/// may be re-run on it.
#[utoipa::path(
    post,
    path = "/api/v1/admin/variants",
    tag = "admin",
    security(("admin_token" = [])),
    request_body = VariantChange,
    responses(
        (status = 201, description = "Registered", body = VariantAnswer),
        (status = 200, description = "Registered before; nothing changed", body = VariantAnswer),
        (status = 400, description = "A body that is not JSON", body = ErrorAnswer),
        AdminRefusals,
        AdminOff,
        JsonBodyRefusals,
        (status = 422, description = "A body that is not a variant, an unknown task (`unknown_task`), or a bad digest or note (`invalid_variant`)", body = ErrorAnswer),
    )
)]
pub async fn add_variant(
    State(app): State<Shared>,
    _: Admin,
    ApiJson(change): ApiJson<VariantChange>,
) -> Result<(StatusCode, Json<VariantAnswer>), ApiError> {
    let answer = register(&app, &change).await?;
    let status = if answer.changed { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(answer)))
}

/// Retire a held-out variant: it is chosen for no new submission from now on.
#[utoipa::path(
    post,
    path = "/api/v1/admin/variants/retire",
    tag = "admin",
    security(("admin_token" = [])),
    request_body = VariantChange,
    responses(
        (status = 200, body = VariantAnswer),
        (status = 400, description = "A body that is not JSON", body = ErrorAnswer),
        AdminRefusals,
        AdminOff,
        JsonBodyRefusals,
        (status = 422, description = "A body that is not a variant, a variant never registered (`unknown_variant`), or a bad note (`invalid_variant`)", body = ErrorAnswer),
    )
)]
pub async fn retire_variant(
    State(app): State<Shared>,
    _: Admin,
    ApiJson(change): ApiJson<VariantChange>,
) -> Result<Json<VariantAnswer>, ApiError> {
    Ok(Json(retire(&app, &change).await?))
}

/// The registration rule: a task of the server's cards, then the store's digest and note.
pub(crate) async fn register(app: &AppState, change: &VariantChange) -> Result<VariantAnswer, ApiError> {
    if !app.catalog.tasks.iter().any(|t| t.id.as_str() == change.task) {
        return Err(ApiError::unprocessable(
            "unknown_task",
            format!("no task `{}` among the server's task cards", change.task),
        ));
    }
    let changed = app.store.register_variant(&change.task, &change.digest, change.note.trim()).await?;
    crate::ingest::refresh_pages(app).await;
    Ok(VariantAnswer { task: change.task.clone(), digest: change.digest.clone(), changed })
}

/// The retirement rule.
pub(crate) async fn retire(app: &AppState, change: &VariantChange) -> Result<VariantAnswer, ApiError> {
    let changed = app.store.retire_variant(&change.task, &change.digest, change.note.trim()).await?;
    crate::ingest::refresh_pages(app).await;
    Ok(VariantAnswer { task: change.task.clone(), digest: change.digest.clone(), changed })
}
