//! Task sets over HTTP, for an admin: register one that bundles may name beside the
//! cards' own (results naming it rank apart). The desk's form and `rexbench-server
//! task-sets add` call [`register`], the one rule.

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

/// A task set to register, and why.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTaskSet {
    /// Its digest (64 lowercase hex digits), as results name it in `benchmark.task_set_digest`.
    #[schema(pattern = r"^[0-9a-f]{64}$")]
    pub digest: String,
    /// The benchmark's name results give it (e.g. "RExBench"): 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    /// Its version: 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub version: String,
    /// What the set is, as the change log shows it: 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub note: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TaskSetAnswer {
    pub digest: String,
    pub name: String,
    pub version: String,
    /// False if it was registered already: nothing changed.
    pub changed: bool,
}

/// Register a task set: results that name its digest, name and version are taken from now on.
#[utoipa::path(
    post,
    path = "/api/v1/admin/task-sets",
    tag = "admin",
    security(("admin_token" = [])),
    request_body = NewTaskSet,
    responses(
        (status = 201, description = "Registered", body = TaskSetAnswer),
        (status = 200, description = "Registered before; nothing changed", body = TaskSetAnswer),
        (status = 400, description = "A body that is not JSON", body = ErrorAnswer),
        AdminRefusals,
        AdminOff,
        JsonBodyRefusals,
        (status = 422, description = "A body that is not a task set, a bad digest (`invalid_task_set_digest`), or a bad name, version or note (`invalid_task_set`)", body = ErrorAnswer),
    )
)]
pub async fn add_task_set(
    State(app): State<Shared>,
    _: Admin,
    ApiJson(set): ApiJson<NewTaskSet>,
) -> Result<(StatusCode, Json<TaskSetAnswer>), ApiError> {
    let answer = register(&app, &set).await?;
    Ok((if answer.changed { StatusCode::CREATED } else { StatusCode::OK }, Json(answer)))
}

/// The registration rule (the store's: digest, fields, once).
pub(crate) async fn register(app: &AppState, set: &NewTaskSet) -> Result<TaskSetAnswer, ApiError> {
    let named =
        bundle::TaskSet { digest: set.digest.clone(), name: set.name.clone(), version: set.version.clone() };
    let changed = app.store.register_task_set(&named, set.note.trim()).await?;
    crate::ingest::refresh_pages(app).await;
    Ok(TaskSetAnswer {
        digest: set.digest.clone(),
        name: set.name.clone(),
        version: set.version.clone(),
        changed,
    })
}
