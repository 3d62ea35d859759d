//! The routes: the JSON API, pages (Leptos), assets, artifacts and health checks, and
//! the layers every answer passes through.

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRef};
use axum::routing::{get, post};
use leptos::prelude::LeptosOptions;
use leptos_axum::{LeptosRoutes, generate_route_list};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::trace::TraceLayer;

use crate::metrics::Metrics;
use crate::state::{AppState, Shared};
use crate::{admin, api, assets, cache, error, headers, islands, metrics, pages};

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

impl FromRef<ServerState> for Arc<Metrics> {
    fn from_ref(s: &ServerState) -> Arc<Metrics> {
        s.app.metrics.clone()
    }
}

/// The whole application as a router, ready to serve or to drive in tests.
pub fn build_app(state: AppState) -> Router {
    router(Arc::new(state))
}

pub(crate) fn router(shared: Shared) -> Router {
    let options = LeptosOptions::builder().output_name("rexbench").build();
    let routes = generate_route_list(app::App);
    let policy = axum::http::HeaderValue::from_str(
        shared.pkg.as_ref().map_or(islands::base_policy(), |p| p.policy.as_str()),
    )
    .expect("a policy is ASCII");
    let api = Router::new()
        .route("/submissions", post(api::submit).layer(DefaultBodyLimit::disable()))
        .route("/leaderboard", get(api::leaderboard))
        .route("/agents/{id}", get(api::agent))
        .route("/tasks", get(api::tasks))
        .route("/tasks/{id}", get(api::task))
        .route("/runs/{id}", get(api::run))
        .route("/changes", get(api::changes))
        .route("/parity", get(api::parity))
        .route("/keys", get(api::keys))
        .route("/submissions/{bundle_id}/envelope", get(api::envelope))
        .route("/openapi.json", get(api::openapi))
        .route("/admin/keys", get(admin::list_keys).post(admin::add_key))
        .route("/admin/keys/{keyid}/revoke", post(admin::revoke_key))
        .route("/admin/findings", get(admin::list_findings))
        .route("/admin/findings/{id}/review", post(admin::review_finding))
        .fallback(api::api_not_found);
    Router::new()
        .nest("/api/v1", api)
        .route("/leaderboard.csv", get(api::leaderboard_csv))
        .route("/artifacts/{digest}", get(api::artifact))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(api::readyz))
        .route("/metrics", get(metrics::metrics))
        .merge(assets::router())
        .route("/pkg/{version}/{file}", get(islands::serve).with_state(shared.pkg.clone()))
        .route("/submit", post(pages::upload).layer(DefaultBodyLimit::disable()))
        .route("/sfn/{*name}", get(pages::server_fn).post(pages::server_fn))
        .leptos_routes_with_handler(routes, pages::render)
        .fallback(pages::render)
        .layer(CatchPanicLayer::custom(error::panicked))
        .layer(axum::middleware::from_fn_with_state(shared.cache.clone(), cache::layer))
        .layer(axum::middleware::from_fn_with_state(shared.metrics.clone(), metrics::count_requests))
        .with_state(ServerState { app: shared, leptos: options })
        .layer(axum::middleware::map_response_with_state(policy, headers::secure))
        .layer(TraceLayer::new_for_http())
        .layer(CompressionLayer::new())
}
