//! One agent: its submissions and the task × hint grid of each current one.

use axum::Json;
use axum::extract::State;
use views::agent::AgentAnswer;

use crate::api::extract::ApiPath;
use crate::api::responses::{ErrorAnswer, PathRefusals, ReaderRefusals};
use crate::auth::Reading;
use crate::error::ApiError;
use crate::state::Shared;

/// One agent: its submissions (newest first, superseded ones included) and, for each
/// current submission, the task × hint grid of rates.
#[utoipa::path(
    get,
    path = "/api/v1/agents/{id}",
    tag = "results",
    security((), ("session_token" = []), ("admin_token" = [])),
    params(("id" = String, Path, description = "The agent's id")),
    responses(
        (status = 200, body = AgentAnswer),
        PathRefusals,
        ReaderRefusals,
        (status = 404, body = ErrorAnswer),
    )
)]
pub async fn agent(
    State(app): State<Shared>,
    Reading(reader): Reading,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<AgentAnswer>, ApiError> {
    Ok(Json(views::agent::answer(&app.store, &app.catalog, &reader, &id).await?))
}
