//! The change log, newest first. Its query is `views::changes`'s (read strictly here).

use axum::Json;
use axum::extract::State;
use views::changes::{ChangesAnswer, ChangesParams};

use crate::api::extract::ApiQuery;
use crate::api::responses::ErrorAnswer;
use crate::error::ApiError;
use crate::state::Shared;

/// The change log as an Atom feed (RFC 4287): its newest 50 changes, each with its
/// kind, agent, summary and link. Ids and links are absolute, made with the site's
/// public address (`REXBENCH_PUBLIC_URL`).
#[utoipa::path(
    get,
    path = "/changes.atom",
    tag = "results",
    responses((status = 200, content_type = "application/atom+xml", description = "An Atom 1.0 feed (RFC 4287)")),
)]
pub async fn changes_atom(State(app): State<Shared>) -> Result<axum::response::Response, ApiError> {
    use axum::response::IntoResponse as _;
    let window = views::query::Window { page: 1, size: views::changes::FEED_ENTRIES as usize, before: None };
    let changes = views::changes::list(&app.store, views::changes::ChangesQuery { window }).await?;
    let feed = views::changes::atom(&changes, &app.public_url);
    Ok(([(axum::http::header::CONTENT_TYPE, "application/atom+xml; charset=utf-8")], feed).into_response())
}

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
