//! Two agents side by side: answered by `views::compare`, as the `/compare` page is. Its
//! query is `views::compare`'s (read strictly here: both agents named).

use axum::Json;
use axum::extract::State;
use views::compare::{CompareAnswer, CompareParams};

use crate::api::extract::ApiQuery;
use crate::api::responses::{ErrorAnswer, ReaderRefusals};
use crate::auth::Reading;
use crate::error::ApiError;
use crate::state::Shared;

/// Two agents side by side: each one's submissions and task × hint grid, the paired
/// comparison of their newest current results (B − A, with its 95% interval, over the
/// tasks both ran) and the tasks each does better on without hints.
#[utoipa::path(
    get,
    path = "/api/v1/compare",
    tag = "results",
    security((), ("session_token" = []), ("admin_token" = [])),
    params(CompareParams),
    responses(
        (status = 200, body = CompareAnswer),
        ReaderRefusals,
        (status = 400, description = "An agent missing or empty, or a parameter given twice", body = ErrorAnswer),
        (status = 404, description = "An agent with no results here", body = ErrorAnswer),
    )
)]
pub async fn compare(
    State(app): State<Shared>,
    Reading(reader): Reading,
    ApiQuery(q): ApiQuery<CompareParams>,
) -> Result<Json<CompareAnswer>, ApiError> {
    Ok(Json(views::compare::answer(&app.store, &app.catalog, &reader, &q.view()?).await?))
}
