//! Publishing a task's outputs, or making them private again: for a maintainer, over
//! HTTP (the admin token) and from `rexbench-server outputs`. Each change is in the
//! public change log and takes effect on every page and answer at once (the render
//! cache follows the change log).

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use store::{Outputs, TaskId};
use utoipa::ToSchema;

use crate::api::extract::{ApiJson, ApiPath};
use crate::api::responses::{AdminOff, AdminRefusals, ErrorAnswer, JsonBodyRefusals};
use crate::auth::Admin;
use crate::error::ApiError;
use crate::state::{AppState, Shared};

/// A task's outputs: what its card says and what holds now.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskOutputs {
    #[schema(value_type = String)]
    pub task: TaskId,
    /// As the task's card says.
    pub card: Outputs,
    /// As they are now (a maintainer's change wins over the card).
    pub outputs: Outputs,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OutputsAnswer {
    pub tasks: Vec<TaskOutputs>,
}

/// What a change did.
#[derive(Debug, Serialize, ToSchema)]
pub struct OutputsChangeAnswer {
    #[serde(flatten)]
    pub task: TaskOutputs,
    /// The change log's entry; none where the outputs already were so.
    pub change_seq: Option<i64>,
}

/// A maintainer's change of a task's outputs.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewOutputs {
    #[schema(value_type = Outputs)]
    outputs: String,
    /// Why, as the change log shows it: 1 to 1000 characters, not all blank.
    #[schema(min_length = 1, max_length = 1000, pattern = r"\S")]
    reason: String,
}

/// Every task's outputs now.
pub async fn list(app: &AppState) -> Result<Vec<TaskOutputs>, ApiError> {
    let access = views::access::load(&app.store, &app.catalog, &views::access::Reader::Public).await?;
    Ok(app
        .catalog
        .tasks
        .iter()
        .map(|t| TaskOutputs { task: t.id.clone(), card: t.outputs, outputs: access.outputs(t.id.as_str()) })
        .collect())
}

/// Makes `task`'s outputs `outputs`, for `reason`, and refreshes the pages.
pub async fn set(
    app: &AppState,
    task: &str,
    outputs: Outputs,
    reason: &str,
) -> Result<OutputsChangeAnswer, ApiError> {
    let info = app.catalog.get(task).ok_or_else(|| ApiError::not_found(format!("no task `{task}`")))?;
    let reason = reason.trim();
    if reason.is_empty() || reason.chars().count() > 1000 {
        return Err(ApiError::unprocessable(
            "invalid_reason",
            "reason must be 1 to 1000 characters, not all blank",
        ));
    }
    let change = app.store.set_outputs(&info.id, outputs, info.outputs, reason).await?;
    crate::ingest::refresh_pages(app).await;
    Ok(OutputsChangeAnswer {
        task: TaskOutputs { task: info.id.clone(), card: info.outputs, outputs: change.outputs },
        change_seq: change.seq,
    })
}

/// Every task's outputs: as its card says, and as they are now.
#[utoipa::path(
    get,
    path = "/api/v1/admin/outputs",
    tag = "admin",
    security(("admin_token" = [])),
    responses(
        (status = 200, body = OutputsAnswer),
        AdminRefusals,
        AdminOff,
    )
)]
pub async fn list_outputs(State(app): State<Shared>, _: Admin) -> Result<Json<OutputsAnswer>, ApiError> {
    Ok(Json(OutputsAnswer { tasks: list(&app).await? }))
}

/// Publish a task's runs' outputs (patches, logs, trajectories), or make them private
/// again. The change log records it, with the reason.
#[utoipa::path(
    put,
    path = "/api/v1/admin/tasks/{id}/outputs",
    tag = "admin",
    security(("admin_token" = [])),
    params(("id" = String, Path, description = "The task's id")),
    request_body = NewOutputs,
    responses(
        (status = 200, body = OutputsChangeAnswer),
        (status = 400, description = "A body that is not JSON, or a path that is not UTF-8", body = ErrorAnswer),
        AdminRefusals,
        (status = 404, description = "No such task, or admin over HTTP is off", body = ErrorAnswer),
        JsonBodyRefusals,
        (status = 422, description = "A body that is not a change, an unknown visibility or a bad reason", body = ErrorAnswer),
    )
)]
pub async fn set_outputs(
    State(app): State<Shared>,
    ApiPath(id): ApiPath<String>,
    _: Admin,
    ApiJson(new): ApiJson<NewOutputs>,
) -> Result<Json<OutputsChangeAnswer>, ApiError> {
    let outputs: Outputs = new
        .outputs
        .parse()
        .map_err(|e: bundle::UnknownName| ApiError::unprocessable("invalid_outputs", e.to_string()))?;
    Ok(Json(set(&app, &id, outputs, &new.reason).await?))
}
