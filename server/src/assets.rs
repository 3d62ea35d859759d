//! The stylesheet and public files, compiled into the binary so that it serves the
//! same bytes from any working directory. Pages link the stylesheet under a name that
//! carries its digest, so browsers may keep it for a year and still never use a stale
//! one.

use std::sync::LazyLock;

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const MAIN_CSS: &str = include_str!("../../style/main.css");
const FAVICON: &str = include_str!("../../public/favicon.svg");
const ROBOTS: &str = include_str!("../../public/robots.txt");

/// `/style/main.<digest>.css`.
pub(crate) static STYLESHEET: LazyLock<String> =
    LazyLock::new(|| format!("/style/main.{}.css", &bundle::Digest::of(MAIN_CSS.as_bytes()).to_hex()[..16]));

const CSS: &str = "text/css; charset=utf-8";
const FOREVER: &str = "public, max-age=31536000, immutable";

async fn stylesheet(Path(file): Path<String>) -> Response {
    if format!("/style/{file}") == *STYLESHEET {
        ([(header::CONTENT_TYPE, CSS), (header::CACHE_CONTROL, FOREVER)], MAIN_CSS).into_response()
    } else if file == "main.css" {
        // The unhashed name, for anyone who links it: revalidated every time.
        ([(header::CONTENT_TYPE, CSS), (header::CACHE_CONTROL, "no-cache")], MAIN_CSS).into_response()
    } else {
        (StatusCode::NOT_FOUND, "no such stylesheet\n").into_response()
    }
}

pub(crate) fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/style/{file}", get(stylesheet))
        .route(
            "/favicon.svg",
            get(|| async {
                (
                    [
                        (header::CONTENT_TYPE, "image/svg+xml"),
                        (header::CACHE_CONTROL, "public, max-age=86400"),
                    ],
                    FAVICON,
                )
                    .into_response()
            }),
        )
        .route(
            "/robots.txt",
            get(|| async { ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], ROBOTS).into_response() }),
        )
}
