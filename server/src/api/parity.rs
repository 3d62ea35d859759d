//! Two submissions of one agent side by side. Its query is `views::parity`'s (read
//! strictly here).

use axum::Json;
use axum::extract::State;
use views::parity::ParityParams;

use crate::api::extract::ApiQuery;
use crate::api::responses::ErrorAnswer;
use crate::error::ApiError;
use crate::state::Shared;

/// Two submissions of one agent side by side under one hint condition: each side's
/// run-level rates with their mean ± SEM and range, Harbor's matching criterion (the
/// ranges overlap), a paired bootstrap interval of B − A, and which tasks each side
/// solved alone, with an exact sign test of that split (see `/parity`).
#[utoipa::path(
    get,
    path = "/api/v1/parity",
    tag = "results",
    params(ParityParams),
    responses(
        (status = 200, body = views::parity::Parity),
        (status = 400, description = "A side missing or empty, an unknown hint condition, or a parameter given twice", body = ErrorAnswer),
        (status = 404, description = "A side names no submission and no agent with current results", body = ErrorAnswer),
    )
)]
pub async fn parity(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<ParityParams>,
) -> Result<Json<views::parity::Parity>, ApiError> {
    let view = q.view()?;
    let (a, b) = (view.a.unwrap_or_default(), view.b.unwrap_or_default());
    Ok(Json(views::parity::parity(&app.store, &app.catalog, &a, &b, view.hint).await?))
}
