//! Rendering the Leptos app into complete HTML documents.

use std::future::Future;
use std::pin::Pin;

use axum::body::Body;
use axum::http::Request;
use axum::response::Response;
use futures::{Stream, StreamExt, stream};
use leptos::prelude::*;

type Chunks = Pin<Box<dyn Stream<Item = String> + Send>>;

/// Renders the page for one request, in order and in full. Leptos would stream
/// hydration data as inline scripts after the document; our pages are complete
/// without JavaScript and send none, so that data is dropped.
pub(crate) async fn render(req: Request<Body>) -> Response {
    leptos_axum::handle_response_inner(|| {}, app::shell, req, complete_document).await
}

fn complete_document<IV: IntoView + 'static>(
    app: IV,
    _hydration_data: Box<dyn FnOnce() -> Chunks + Send>,
    _out_of_order: bool,
) -> Pin<Box<dyn Future<Output = Chunks> + Send>> {
    Box::pin(async move {
        let html = app.to_html_stream_in_order().collect::<String>().await;
        Box::pin(stream::once(async move { html })) as Chunks
    })
}
