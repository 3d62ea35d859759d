//! The change log, newest first. Its query is `views::changes`'s (read strictly here).

use axum::Json;
use axum::extract::State;
use views::changes::{ChangesAnswer, ChangesParams};

use crate::api::extract::ApiQuery;
use crate::api::responses::ErrorAnswer;
use crate::error::ApiError;
use crate::state::Shared;

/// The change log, newest first: every submission stored and every one it superseded.
#[utoipa::path(
    get,
    path = "/api/v1/changes",
    tag = "results",
    params(ChangesParams),
    responses(
        (status = 200, body = ChangesAnswer),
        (status = 400, description = "A parameter out of its range, malformed, or given twice", body = ErrorAnswer),
    )
)]
pub async fn changes(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<ChangesParams>,
) -> Result<Json<ChangesAnswer>, ApiError> {
    let changes = views::changes::list(&app.store, q.view()?).await?;
    Ok(Json(ChangesAnswer { changes }))
}
