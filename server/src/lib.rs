//! The RExBench leaderboard server: the Leptos pages, static assets and health checks,
//! behind one axum router.

mod assets;
pub mod cli;
mod config;
mod pages;

use axum::Router;
use axum::routing::get;
use leptos::prelude::LeptosOptions;
use leptos_axum::{LeptosRoutes, generate_route_list};
use tower_http::trace::TraceLayer;

pub use config::{Config, ConfigError};

/// The whole application as a router, ready to serve or to drive in tests.
pub fn build_app(config: &Config) -> Router {
    let options = LeptosOptions::builder().output_name("rexbench").site_addr(config.addr).build();
    let routes = generate_route_list(app::App);
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(assets::router())
        .leptos_routes_with_handler(routes, pages::render)
        .fallback(pages::render)
        .with_state(options)
        .layer(TraceLayer::new_for_http())
}

/// Serves until SIGINT or SIGTERM, then finishes the requests in flight.
pub async fn serve(config: Config) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    tracing::info!(addr = %listener.local_addr()?, database = %config.backend, "serving");
    axum::serve(listener, build_app(&config)).with_graceful_shutdown(shutdown_signal()).await
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
