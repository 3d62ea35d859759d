//! Rendering the Leptos app into complete HTML documents, the server functions'
//! endpoint, and the upload form's handler.

use std::future::Future;
use std::io::Write;
use std::pin::Pin;

use app::Verdict;
use app::data::PageContext;
use axum::body::Body;
use axum::extract::FromRequest;
use axum::extract::{Multipart, State};
use axum::http::Request;
use axum::response::{IntoResponse, Redirect, Response};
use futures::{Stream, StreamExt, stream};
use leptos::prelude::*;
use store::Ingested;

use crate::error::ApiError;
use crate::ingest::{Received, ingest_measured};
use crate::state::Shared;

type Chunks = Pin<Box<dyn Stream<Item = String> + Send>>;

async fn context(app: &Shared, headers: &axum::http::HeaderMap) -> PageContext {
    let reader = crate::auth::page_reader(app, headers).await;
    let desk = match &reader {
        views::access::Reader::Maintainer { .. } => match app.store.desk_counts().await {
            Ok(counts) => Some(counts),
            Err(e) => {
                tracing::warn!(error = %crate::error::chain(e), "could not count what waits on the desk");
                None
            }
        },
        _ => None,
    };
    PageContext {
        form_token: crate::auth::form_token(headers),
        desk,
        reader,
        store: app.store.clone(),
        catalog: app.catalog.clone(),
        stylesheet: crate::assets::STYLESHEET.clone(),
        pkg: app.pkg.as_ref().map(|p| p.dir.clone()),
        generation: i64::try_from(app.cache.generation()).unwrap_or(i64::MAX),
        limits: app.limits,
    }
}

/// Renders the page for one request, in order and in full. Leptos would stream
/// hydration data as inline scripts after the document; our pages are complete
/// without JavaScript and send none, so that data is dropped.
pub(crate) async fn render(State(app): State<Shared>, req: Request<Body>) -> Response {
    let ctx = context(&app, req.headers()).await;
    leptos_axum::handle_response_inner(
        move || provide_context(ctx.clone()),
        app::shell,
        req,
        complete_document,
    )
    .await
}

fn complete_document<IV: IntoView + 'static>(
    app: IV,
    _hydration_data: Box<dyn FnOnce() -> Chunks + Send>,
    _out_of_order: bool,
) -> Pin<Box<dyn Future<Output = Chunks> + Send>> {
    Box::pin(async move {
        let html = without_nonce(app.to_html_stream_in_order().collect::<String>().await);
        Box::pin(stream::once(async move { html })) as Chunks
    })
}

/// The page without the nonce leptos_axum makes for every response: pages are cached
/// per URL, so the policy names the loader script by its hash instead, and a nonce
/// would only make each render differ. (Leptos also writes it into `crossorigin`,
/// where any value but `use-credentials` means `anonymous`.) It is random per request,
/// so nothing a bundle put on the page can name it.
fn without_nonce(html: String) -> String {
    const MARK: &str = "<script type=\"module\" nonce=\"";
    let Some(start) = html.find(MARK).map(|i| i + MARK.len()) else { return html };
    let Some(len) = html[start..].find('"') else { return html };
    let nonce = html[start..start + len].to_owned();
    html.replace(&format!(" nonce=\"{nonce}\""), "")
        .replace(&format!(" crossorigin=\"{nonce}\""), " crossorigin")
}

/// `/sfn/…`: the pages' server functions, callable over HTTP too (for islands later).
pub(crate) async fn server_fn(State(app): State<Shared>, req: Request<Body>) -> Response {
    let ctx = context(&app, req.headers()).await;
    leptos_axum::handle_server_fns_with_context(move || provide_context(ctx.clone()), req)
        .await
        .into_response()
}

/// A desk form refused: the desk again (as `GET /desk` renders it for this browser),
/// with the refusal in words and its status.
pub(crate) async fn desk_refused(app: &Shared, headers: &axum::http::HeaderMap, e: ApiError) -> Response {
    e.log();
    let ctx = context(app, headers).await;
    let verdict = Verdict { status: e.status.as_u16(), code: e.code, message: e.message };
    let mut page = Request::builder().uri("/desk").body(Body::empty()).expect("a request");
    *page.headers_mut() = headers.clone();
    leptos_axum::handle_response_inner(
        move || {
            provide_context(ctx.clone());
            provide_context(verdict.clone());
        },
        app::shell,
        page,
        complete_document,
    )
    .await
}

/// `POST /submit`: the upload form. An accepted bundle redirects to its agent's page;
/// a refused one gets the submit page again, with the verdict in words and the
/// fitting status.
pub(crate) async fn upload(State(app): State<Shared>, req: Request<Body>) -> Response {
    let (parts, body) = req.into_parts();
    let ctx = context(&app, &parts.headers).await;
    let refused = |e: ApiError| {
        e.log();
        let verdict = Verdict { status: e.status.as_u16(), code: e.code, message: e.message };
        let page = Request::from_parts(parts.clone(), Body::empty());
        let ctx = ctx.clone();
        async move {
            leptos_axum::handle_response_inner(
                move || {
                    provide_context(ctx.clone());
                    provide_context(verdict.clone());
                },
                app::shell,
                page,
                complete_document,
            )
            .await
        }
    };
    let client = app.guard.client(&parts.headers, &parts.extensions);
    let (body, clock) = app.guard.timed(body.into_data_stream());
    let body = Body::from_stream(body);
    let multipart = match Multipart::from_request(Request::from_parts(parts.clone(), body), &()).await {
        Ok(m) => m,
        Err(e) => {
            let e = ApiError::unreadable("bad_form", format!("the upload form was not sent whole: {e}"));
            return refused(e).await;
        }
    };
    let outcome =
        clock.judge(ingest_measured(&app, Some(client), receive(multipart, app.limits.compressed)).await);
    match outcome {
        Ok(Received::Held(held)) => Redirect::to(&views::key_requests::page_of(held.request)).into_response(),
        Ok(Received::Recorded(
            Ingested::Stored { bundle_id, agent_id, .. } | Ingested::AlreadyStored { bundle_id, agent_id },
            _,
        )) => {
            let to = views::format::href(
                &format!("/agents/{}", views::format::segment(&agent_id)),
                &[("submitted", Some(bundle_id.as_str()))],
            );
            Redirect::to(&to).into_response()
        }
        Err(e) => refused(e).await,
    }
}

/// The form's `bundle` file, spooled to a temporary file no larger than `limit`.
async fn receive(mut form: Multipart, limit: u64) -> Result<std::fs::File, ApiError> {
    let bad = |m: String| ApiError::unreadable("bad_form", m);
    let spooling = |e: std::io::Error| ApiError::internal(format!("spooling the upload: {e}"));
    while let Some(mut field) = form.next_field().await.map_err(|e| bad(format!("reading the form: {e}")))? {
        if field.name() != Some("bundle") {
            continue;
        }
        let mut file = tempfile::tempfile().map_err(spooling)?;
        let mut size = 0u64;
        while let Some(chunk) = field.chunk().await.map_err(|e| bad(format!("reading the upload: {e}")))? {
            size += chunk.len() as u64;
            if size > limit {
                return Err(bundle::BundleError::CompressedTooLarge { limit }.into());
            }
            file.write_all(&chunk).map_err(spooling)?;
        }
        if size == 0 {
            return Err(bad("the form carried no file: choose a bundle to upload".into()));
        }
        std::io::Seek::rewind(&mut file).map_err(spooling)?;
        return Ok(file);
    }
    Err(bad("the form carried no `bundle` file".into()))
}
