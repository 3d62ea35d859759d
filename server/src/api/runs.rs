//! One run: its numbers, its artifacts' digests and what the reader may know of its
//! outputs (their bytes are `evidence`'s, at `/artifacts/{digest}`).

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use store::RunDetail;
use utoipa::ToSchema;

use crate::api::extract::ApiPath;
use crate::api::responses::{ErrorAnswer, PathRefusals, ReaderRefusals};
use crate::auth::Reading;
use crate::error::ApiError;
use crate::state::Shared;

/// One run: its numbers, its artifacts' digests and sizes (what the signed manifest
/// commits to), its findings, and what anyone may know of its outputs. Where the
/// outputs are private to the reader (`readable: false`), the findings' text is
/// withheld and `/artifacts/{digest}` refuses their content.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunAnswer {
    #[serde(flatten)]
    pub run: RunDetail,
    #[serde(flatten)]
    pub outline: views::run::Outline,
}

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
    let (run, outline) = views::run::answer(&app.store, &app.catalog, &reader, &id).await?;
    Ok(Json(RunAnswer { run, outline }))
}
