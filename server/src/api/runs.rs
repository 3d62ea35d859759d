//! One run: its numbers, its artifacts' digests and what the reader may know of its
//! outputs (their bytes are `evidence`'s, at `/artifacts/{digest}`).

use axum::Json;
use axum::extract::State;
use views::run::RunAnswer;

use crate::api::extract::ApiPath;
use crate::api::responses::{ErrorAnswer, PathRefusals, ReaderRefusals};
use crate::auth::Reading;
use crate::error::ApiError;
use crate::state::Shared;

/// One run with its metrics and artifacts (their bytes at `/artifacts/{digest}`).
#[utoipa::path(
    get,
    path = "/api/v1/runs/{id}",
    tag = "results",
    security((), ("session_token" = []), ("admin_token" = [])),
    params(("id" = i64, Path, description = "The run's number")),
    responses(
        (status = 200, body = RunAnswer),
        PathRefusals,
        ReaderRefusals,
        (status = 404, body = ErrorAnswer),
    )
)]
pub async fn run(
    State(app): State<Shared>,
    Reading(reader): Reading,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<RunAnswer>, ApiError> {
    Ok(Json(views::run::answer(&app.store, &app.catalog, &reader, &id).await?))
}
