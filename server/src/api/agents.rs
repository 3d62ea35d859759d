//! One agent: its submissions and the task × hint grid of each current one.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use store::{AgentDetail, FindingRecord};
use utoipa::ToSchema;

use crate::api::extract::ApiPath;
use crate::api::responses::{ErrorAnswer, PathRefusals, ReaderRefusals};
use crate::auth::Reading;
use crate::error::ApiError;
use crate::state::Shared;

/// One agent: its submissions, the task × hint grid of each current one, and every
/// integrity finding about the runs of its current submissions.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentAnswer {
    #[serde(flatten)]
    pub agent: AgentDetail,
    /// By run (task, hint, attempt), the submitter's first; reviewed ones included.
    pub findings: Vec<FindingRecord>,
    /// Who submitted its current submission (the key's owner), their other rows with the
    /// same framework and model, and the maintainers' re-runs of all their rows; none
    /// without a current submission.
    pub submitted_by: Option<views::submitter::Submitter>,
}

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
    let (agent, findings) = views::agent::answer(&app.store, &app.catalog, &reader, &id).await?;
    let submitted_by = views::submitter::of_agent(&app.store, &id).await?;
    Ok(Json(AgentAnswer { agent, findings, submitted_by }))
}
