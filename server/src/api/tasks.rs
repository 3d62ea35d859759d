//! The tasks, and one task: both answered by `views::task`, as the pages are.

use axum::Json;
use axum::extract::State;
use views::query::PageParams;
use views::task::{TaskAnswer, TasksAnswer};

use crate::api::extract::{ApiPath, ApiQuery};
use crate::api::responses::{ErrorAnswer, PathRefusals};
use crate::error::ApiError;
use crate::state::Shared;

/// The tasks (RExBench's and the examples), each with its results over current submissions.
#[utoipa::path(get, path = "/api/v1/tasks", tag = "results", responses((status = 200, body = TasksAnswer)))]
pub async fn tasks(State(app): State<Shared>) -> Result<Json<TasksAnswer>, ApiError> {
    Ok(Json(views::task::list(&app.store, &app.catalog).await?.into()))
}

/// One task: its public facts and each agent's rates on it, a page of agents at a time
/// (`page`, `per_page`); a page past the last has no agents.
#[utoipa::path(
    get,
    path = "/api/v1/tasks/{id}",
    tag = "results",
    params(("id" = String, Path, description = "The task's id"), PageParams),
    responses(
        (status = 200, body = TaskAnswer),
        PathRefusals,
        (status = 400, description = "A path that is not UTF-8, a page or page size out of range, or a parameter given twice", body = ErrorAnswer),
        (status = 404, body = ErrorAnswer),
    )
)]
pub async fn task(
    State(app): State<Shared>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<PageParams>,
) -> Result<Json<TaskAnswer>, ApiError> {
    let window = q.window()?;
    Ok(Json(views::task::answer(&app.store, &app.catalog, &id, window).await?))
}
