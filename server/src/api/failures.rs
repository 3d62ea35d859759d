//! How runs fail, over every agent's current results: answered by `views::failures`, as
//! the `/failures` page is.

use axum::Json;
use axum::extract::State;
use views::failures::FailuresAnswer;

use crate::api::responses::ReaderRefusals;
use crate::auth::Reading;
use crate::error::ApiError;
use crate::state::Shared;

/// How runs fail: failed runs by agent and outcome, error types, the tasks no agent
/// solves and those solved only with hints, failures agents share, the paper's error
/// tables beside the error types here, and the successes in doubt (a finding's words
/// withheld where the run's outputs are private to the reader).
#[utoipa::path(
    get,
    path = "/api/v1/failures",
    tag = "results",
    security((), ("session_token" = []), ("admin_token" = [])),
    responses((status = 200, body = FailuresAnswer), ReaderRefusals)
)]
pub async fn failures(
    State(app): State<Shared>,
    Reading(reader): Reading,
) -> Result<Json<FailuresAnswer>, ApiError> {
    Ok(Json(views::failures::answer(&app.store, &app.catalog, &reader).await?))
}
