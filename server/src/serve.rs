//! The accept loop: HTTP/1 connections as axum's own server would take them, plus a
//! deadline for each request's head, the peer's address for the guard, and a graceful
//! shutdown.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tower::ServiceExt;

use crate::config::Config;
use crate::state::AppState;

/// Serves until SIGINT or SIGTERM, then finishes the requests in flight (for up to 30 s).
pub async fn serve(config: Config, state: AppState) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    let header_timeout = state.guard.limits().headers;
    tracing::info!(addr = %listener.local_addr()?, database = %config.backend, "serving");
    let shared = Arc::new(state);
    let start = shared.store.generation().await.ok();
    if let Some(g) = start {
        shared.cache.advance(u64::try_from(g).unwrap_or(0));
    }
    let (changes, changed) = tokio::sync::watch::channel(start.unwrap_or(-1));
    tokio::spawn(crate::cache::follow(
        shared.store.clone(),
        shared.cache.clone(),
        Duration::from_secs(1),
        changes,
    ));
    // The board's reads are made before anyone asks (at the start and after each change),
    // unless measuring the request that makes them.
    let (first, made) = tokio::sync::oneshot::channel();
    if config.warm {
        shared.metrics.set_starting(true);
        tokio::spawn(crate::warm::follow(shared.clone(), changed, first));
    } else {
        drop((changed, first));
    }
    // Blobs left by unfinished ingests are collected in the background, once the board is
    // ready: a large blob store must not delay serving, nor the first page.
    let background = shared.clone();
    shared.metrics.set_collecting(true);
    tokio::spawn(async move {
        let _ = made.await;
        match background.store.collect_garbage(Duration::from_secs(600)).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(removed = n, "collected blobs left by unfinished ingests"),
            Err(e) => tracing::warn!(error = %crate::error::chain(e), "could not collect garbage blobs"),
        }
        background.metrics.set_collecting(false);
        match crate::integrity::identify_stored_patches(&background).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(patches = n, "computed the identities of patches stored before them"),
            Err(e) => tracing::warn!(error = %e, "could not compute the identities of stored patches"),
        }
    });
    let app = crate::router::router(shared);
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
