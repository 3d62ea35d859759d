//! The RExBench leaderboard server: the Leptos pages, the JSON API, the ingest endpoint,
//! artifacts, static assets and health checks, behind one axum router.

mod admin;
mod api;
mod assets;
pub mod cache;
pub mod catalog;
pub mod cli;
mod config;
mod demo;
mod error;
pub mod guard;
mod headers;
mod metrics;
mod pages;
pub mod synth;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::extract::{DefaultBodyLimit, FromRef};
use axum::routing::{get, post};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use leptos::prelude::LeptosOptions;
use leptos_axum::{LeptosRoutes, generate_route_list};
use tower::ServiceExt;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::trace::TraceLayer;

pub use api::AppState;
pub use config::{Config, ConfigError};
pub use demo::seed_demo;

/// The router's state: the app's, and the options Leptos's routes want.
#[derive(Debug, Clone)]
struct ServerState {
    app: api::Shared,
    leptos: LeptosOptions,
}

impl FromRef<ServerState> for api::Shared {
    fn from_ref(s: &ServerState) -> api::Shared {
        s.app.clone()
    }
}

impl FromRef<ServerState> for LeptosOptions {
    fn from_ref(s: &ServerState) -> LeptosOptions {
        s.leptos.clone()
    }
}

/// Opens the store (migrating it), and reads the task cards.
pub async fn open_state(config: &Config) -> Result<AppState, String> {
    let blobs = store::Blobs::open(&config.blobs).map_err(|e| format!("blob store {}: {e}", config.blobs))?;
    let store = store::Store::open_with(&config.backend, blobs).await.map_err(|e| e.to_string())?;
    Ok(AppState {
        store: Arc::new(store),
        limits: config.limits,
        catalog: Arc::new(catalog::load(&config.tasks_dir)?),
        admin_token: config.admin_token.clone(),
        metrics: Default::default(),
        cache: cache::RenderCache::new(config.render_cache),
        guard: guard::Guard::new(config.guard),
    })
}

/// The whole application as a router, ready to serve or to drive in tests.
pub fn build_app(state: AppState) -> Router {
    router(Arc::new(state))
}

fn router(shared: api::Shared) -> Router {
    let options = LeptosOptions::builder().output_name("rexbench").build();
    let routes = generate_route_list(app::App);
    let api = Router::new()
        .route("/submissions", post(api::submit).layer(DefaultBodyLimit::disable()))
        .route("/leaderboard", get(api::leaderboard))
        .route("/agents/{id}", get(api::agent))
        .route("/tasks", get(api::tasks))
        .route("/tasks/{id}", get(api::task))
        .route("/runs/{id}", get(api::run))
        .route("/changes", get(api::changes))
        .route("/admin/keys", get(admin::list_keys).post(admin::add_key))
        .route("/admin/keys/{keyid}/revoke", post(admin::revoke_key))
        .fallback(api::api_not_found);
    Router::new()
        .nest("/api/v1", api)
        .route("/leaderboard.csv", get(api::leaderboard_csv))
        .route("/artifacts/{digest}", get(api::artifact))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(api::readyz))
        .route("/metrics", get(metrics::metrics))
        .merge(assets::router())
        .route("/submit", post(pages::upload).layer(DefaultBodyLimit::disable()))
        .route("/sfn/{*name}", get(pages::server_fn).post(pages::server_fn))
        .leptos_routes_with_handler(routes, pages::render)
        .fallback(pages::render)
        .layer(CatchPanicLayer::custom(error::panicked))
        .layer(axum::middleware::from_fn_with_state(shared.clone(), cache::layer))
        .layer(axum::middleware::from_fn_with_state(shared.clone(), metrics::count_requests))
        .with_state(ServerState { app: shared, leptos: options })
        .layer(axum::middleware::map_response(headers::secure))
        .layer(TraceLayer::new_for_http())
        .layer(CompressionLayer::new())
}

/// Serves until SIGINT or SIGTERM, then finishes the requests in flight (for up to 30 s).
pub async fn serve(config: Config, state: AppState) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    let header_timeout = state.guard.limits().headers;
    tracing::info!(addr = %listener.local_addr()?, database = %config.backend, "serving");
    let shared = Arc::new(state);
    // Blobs left by unfinished ingests are collected in the background: a large blob
    // store must not delay serving.
    if let Ok(g) = shared.store.generation().await {
        shared.cache.advance(u64::try_from(g).unwrap_or(0));
    }
    tokio::spawn(cache::follow(shared.clone(), Duration::from_secs(1)));
    let background = shared.clone();
    tokio::spawn(async move {
        match background.store.collect_garbage(Duration::from_secs(600)).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(removed = n, "collected blobs left by unfinished ingests"),
            Err(e) => tracing::warn!(error = %e, "could not collect garbage blobs"),
        }
    });
    let app = router(shared);
    // Each connection speaks HTTP/1, as axum's own server would, but with a deadline
    // for the request's head: a client that trickles its headers is cut off.
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(header_timeout);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown_signal());
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: wait rather than spin.
                    tracing::warn!(error = %e, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = app.clone().map_request(move |mut r: axum::http::Request<hyper::body::Incoming>| {
            r.extensions_mut().insert(ConnectInfo(peer));
            r.map(axum::body::Body::new)
        });
        let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, %peer, "connection ended");
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(30)) => tracing::warn!("connections still open after 30 s: closed"),
    }
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}
