//! The JSON API (`/api/v1/…`), the CSV leaderboard and artifacts, by resource, as
//! crates.io lays out its controllers: each file holds its handlers and the types they
//! answer with, and `crate::router` lists every route once. What a view means is
//! `views`'s; who may do what is `crate::auth`'s; an error's status is
//! `crate::error`'s.

pub mod admin;
pub mod agents;
pub mod changes;
pub mod compare;
pub mod evidence;
pub mod extract;
pub mod failures;
pub mod key_requests;
pub mod keys;
pub mod leaderboard;
pub mod outputs;
pub mod parity;
pub mod reproductions;
pub mod responses;
pub mod runs;
pub mod sessions;
pub mod submissions;
pub mod task_sets;
pub mod tasks;
pub mod variants;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::Shared;

/// `/readyz`: whether the database and the blob store answer, and the board's reads were
/// made once since the start ([`crate::warm`]).
pub async fn readyz(State(app): State<Shared>) -> Response {
    if app.metrics.starting() {
        return (StatusCode::SERVICE_UNAVAILABLE, "the leaderboard is being made ready\n").into_response();
    }
    if let Err(e) = app.store.ping().await {
        tracing::warn!(error = %crate::error::chain(e), "not ready");
        return (StatusCode::SERVICE_UNAVAILABLE, "database unreachable\n").into_response();
    }
    if let Err(e) = app.store.blobs().check().await {
        tracing::warn!(error = %e, "not ready");
        return (StatusCode::SERVICE_UNAVAILABLE, "blob store unreachable\n").into_response();
    }
    (StatusCode::OK, "ready\n").into_response()
}

/// Unknown `/api/…` paths answer in the API's format.
pub async fn api_not_found() -> ApiError {
    ApiError::not_found("no such API endpoint")
}

/// `/metrics`: the counters ([`crate::metrics`]), to the maintainers where the server has an admin token: the request
/// counts and the ingests' durations say when a reproduction arrived and how large it
/// was, which a patch re-run on the maintainers' machine could shape to signal (spec
/// §4j). A server with no admin token takes no reproduction over HTTP, and answers anyone.
pub async fn metrics(
    State(app): State<crate::state::Shared>,
    admin: Result<crate::auth::Admin, crate::error::ApiError>,
) -> Result<Response, crate::error::ApiError> {
    if app.admin_token.is_some() {
        admin?;
    }
    let text = app.metrics.render(app.store.board_reads_made());
    Ok(([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], text)
        .into_response())
}
