//! The stylesheet and public files, compiled into the binary so that it serves the
//! same bytes from any working directory.

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

const MAIN_CSS: &str = include_str!("../../style/main.css");
const FAVICON: &str = include_str!("../../public/favicon.svg");
const ROBOTS: &str = include_str!("../../public/robots.txt");

pub(crate) fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/style/main.css",
            get(|| async { ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], MAIN_CSS).into_response() }),
        )
        .route(
            "/favicon.svg",
            get(|| async { ([(header::CONTENT_TYPE, "image/svg+xml")], FAVICON).into_response() }),
        )
        .route(
            "/robots.txt",
            get(|| async { ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], ROBOTS).into_response() }),
        )
}
