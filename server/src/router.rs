//! The routes: the JSON API, pages (Leptos), assets, artifacts and health checks, and
//! the layers every answer passes through.

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRef};
use axum::http::header;
use axum::routing::{any, get, post};
use leptos::prelude::LeptosOptions;
use leptos_axum::{LeptosRoutes, generate_route_list};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::trace::TraceLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::{
    admin, agents, changes, compare, evidence, failures, key_requests, keys, leaderboard, outputs, parity,
    reproductions, runs, sessions, submissions, task_sets, tasks, variants,
};
use crate::metrics::Metrics;
use crate::state::{AppState, Shared};
use crate::{api, assets, cache, desk, error, headers, islands, metrics, openapi, pages};

/// The router's state: the app's, and the options Leptos's routes want.
#[derive(Debug, Clone)]
struct ServerState {
    app: Shared,
    leptos: LeptosOptions,
}

impl FromRef<ServerState> for Shared {
    fn from_ref(s: &ServerState) -> Shared {
        s.app.clone()
    }
}

impl FromRef<ServerState> for LeptosOptions {
    fn from_ref(s: &ServerState) -> LeptosOptions {
        s.leptos.clone()
    }
}

impl FromRef<ServerState> for Arc<store::Store> {
    fn from_ref(s: &ServerState) -> Arc<store::Store> {
        s.app.store.clone()
    }
}

impl FromRef<ServerState> for Arc<Metrics> {
    fn from_ref(s: &ServerState) -> Arc<Metrics> {
        s.app.metrics.clone()
    }
}

/// The whole application as a router, ready to serve or to drive in tests.
pub fn build_app(state: AppState) -> Router {
    router(Arc::new(state))
}

/// Every route of the documented API, each with its OpenAPI path from its handler's
/// annotation: the one list the router serves and the document describes.
fn api() -> OpenApiRouter<ServerState> {
    let (schemas, paths, submit) = routes!(submissions::submit);
    OpenApiRouter::with_openapi(openapi::frame())
        .routes((schemas, paths, submit.layer(DefaultBodyLimit::disable())))
        .routes(routes!(leaderboard::leaderboard))
        .routes(routes!(leaderboard::leaderboard_csv))
        .routes(routes!(agents::agent))
        .routes(routes!(tasks::tasks))
        .routes(routes!(tasks::task))
        .routes(routes!(runs::run))
        .routes(routes!(changes::changes))
        .routes(routes!(changes::changes_atom))
        .routes(routes!(parity::parity))
        .routes(routes!(failures::failures))
        .routes(routes!(compare::compare))
        .routes(routes!(keys::keys))
        .routes(routes!(evidence::envelope))
        .routes(routes!(evidence::artifact))
        .routes(routes!(keys::list_keys, keys::add_key))
        .routes(routes!(keys::revoke_key))
        .routes(routes!(admin::list_findings))
        .routes(routes!(admin::review_finding))
        .routes(routes!(sessions::challenge))
        .routes(routes!(sessions::login, sessions::whoami))
        .routes(routes!(sessions::logout))
        .routes(routes!(admin::access_log))
        .routes(routes!(outputs::list_outputs))
        .routes(routes!(outputs::set_outputs))
        .routes(routes!(reproductions::sampling))
        .routes(routes!(reproductions::sample))
        .routes(routes!(reproductions::queue))
        .routes(routes!(key_requests::request_challenge))
        .routes(routes!(key_requests::file_request))
        .routes(routes!(key_requests::request_status))
        .routes(routes!(key_requests::list_requests))
        .routes(routes!(key_requests::approve_request))
        .routes(routes!(key_requests::decline_request))
        .routes(routes!(variants::add_variant))
        .routes(routes!(variants::retire_variant))
        .routes(routes!(task_sets::add_task_set))
}

/// The site's pages as the router routes them: each page's path, `{name}` where it takes
/// a value, in the order the app declares them.
pub(crate) fn page_paths() -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for route in generate_route_list(app::App) {
        let path = route.path().to_owned();
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

pub(crate) fn router(shared: Shared) -> Router {
    let options = LeptosOptions::builder().output_name("rexbench").build();
    let routes = generate_route_list(app::App);
    let policy = axum::http::HeaderValue::from_str(
        shared.pkg.as_ref().map_or(islands::base_policy(), |p| p.policy.as_str()),
    )
    .expect("a policy is ASCII");
    let (api, document) = api().split_for_parts();
    // The OpenAPI 3.1 document, made once.
    let document = axum::body::Bytes::from(serde_json::to_vec(&document).expect("the document serializes"));
    let document =
        move || std::future::ready(([(header::CONTENT_TYPE, "application/json")], document.clone()));
    Router::new()
        .merge(api)
        .route("/api/v1/openapi.json", get(document))
        // Unknown `/api/…` paths answer in the API's format.
        .route("/api/v1", any(api::api_not_found))
        .route("/api/v1/{*rest}", any(api::api_not_found))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(api::readyz))
        .route("/metrics", get(api::metrics))
        .merge(assets::router())
        .route("/pkg/{version}/{file}", get(islands::serve).with_state(shared.pkg.clone()))
        .route("/submit", post(pages::upload).layer(DefaultBodyLimit::disable()))
        .route("/sfn/{*name}", get(pages::server_fn).post(pages::server_fn))
        .route("/login/{ticket}", post(sessions::redeem))
        .route("/signout", post(sessions::sign_out))
        .route("/desk/requests/{id}/approve", post(desk::approve))
        .route("/desk/requests/{id}/decline", post(desk::decline))
        .route("/desk/findings/{id}/review", post(desk::review))
        .route("/desk/variants", post(desk::add_variant))
        .route("/desk/variants/retire", post(desk::retire_variant))
        .route("/desk/task-sets", post(desk::add_task_set))
        .leptos_routes_with_handler(routes, pages::render)
        .fallback(pages::render)
        .layer(CatchPanicLayer::custom(error::panicked))
        .layer(axum::middleware::from_fn_with_state(shared.cache.clone(), cache::layer))
        .layer(axum::middleware::from_fn_with_state(shared.metrics.clone(), metrics::count_requests))
        .with_state(ServerState { app: shared, leptos: options })
        .layer(axum::middleware::map_response_with_state(policy, headers::secure))
        // Failed answers are logged once, where they are made (`error.rs`), not again here:
        // a 503 from `/readyz` while the board is made at a start is no error.
        .layer(TraceLayer::new_for_http().on_failure(()))
        .layer(CompressionLayer::new())
}
