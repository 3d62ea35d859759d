//! The render cache: pages and read-API answers kept per URL, served again until the
//! data change, with an ETag so a browser that has them gets a 304.
//!
//! What a page shows depends only on its URL and the data, and the data change only
//! through ingests, each of which appends to the change log. The cache is tagged with
//! the change log's position (the generation): an ingest in this process moves it at
//! once, and a poller picks up ingests by other processes sharing the database (and
//! `rexbench-server import`) within a second.

use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api::Shared;

/// Answers larger than this are not kept.
const MAX_BODY: usize = 4 << 20;
/// What the cache may hold in all; past it, it starts again empty.
const MAX_BYTES: usize = 128 << 20;

#[derive(Debug)]
pub struct RenderCache {
    generation: AtomicU64,
    enabled: AtomicBool,
    entries: RwLock<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    generation: u64,
    bytes: usize,
    by_url: HashMap<String, Entry>,
}

#[derive(Debug, Clone)]
struct Entry {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    etag: HeaderValue,
}

impl Default for RenderCache {
    fn default() -> Self {
        RenderCache::new(true)
    }
}

impl RenderCache {
    pub fn new(enabled: bool) -> RenderCache {
        RenderCache {
            generation: AtomicU64::new(0),
            enabled: AtomicBool::new(enabled),
            entries: RwLock::new(Entries::default()),
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The data are now at `generation` (the change log's newest sequence number).
    pub fn advance(&self, generation: u64) {
        self.generation.fetch_max(generation, Ordering::AcqRel);
    }

    fn get(&self, url: &str, generation: u64) -> Option<Entry> {
        let entries = self.entries.read().expect("the cache lock is never poisoned");
        (entries.generation == generation).then(|| entries.by_url.get(url).cloned()).flatten()
    }

    fn put(&self, url: String, generation: u64, entry: Entry) {
        let mut entries = self.entries.write().expect("the cache lock is never poisoned");
        if entries.generation != generation {
            if generation < entries.generation {
                // Rendered from older data than the cache already holds.
                return;
            }
            *entries = Entries { generation, ..Entries::default() };
        }
        if entries.bytes + entry.body.len() > MAX_BYTES {
            entries.by_url.clear();
            entries.bytes = 0;
        }
        entries.bytes += entry.body.len();
        if let Some(old) = entries.by_url.insert(url, entry) {
            entries.bytes -= old.body.len();
        }
    }
}

/// Whether answers to `path` may be cached: pages and the read API, not what is
/// already static, streamed, live or private.
fn cacheable(path: &str) -> bool {
    const NEVER: [&str; 8] =
        ["/artifacts/", "/metrics", "/healthz", "/readyz", "/sfn/", "/api/v1/admin", "/style/", "/submit"];
    !NEVER.iter().any(|p| path.starts_with(p)) && path != "/favicon.svg" && path != "/robots.txt"
}

/// The middleware: answers from the cache when it can, fills it when it cannot.
pub async fn layer(State(app): State<Shared>, request: Request, next: Next) -> Response {
    let cache = &app.cache;
    let method = request.method().clone();
    if !(method == Method::GET || method == Method::HEAD)
        || !cache.enabled.load(Ordering::Relaxed)
        || !cacheable(request.uri().path())
    {
        return next.run(request).await;
    }
    let url =
        request.uri().path_and_query().map_or_else(|| request.uri().path().to_owned(), |p| p.to_string());
    let if_none_match = request.headers().get(header::IF_NONE_MATCH).cloned();
    let generation = cache.generation();
    if let Some(entry) = cache.get(&url, generation) {
        return answer(entry, if_none_match.as_ref());
    }

    let response = next.run(request).await;
    if response.status() != StatusCode::OK {
        return response;
    }
    let (parts, body) = response.into_parts();
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, url = %url, "an answer could not be read for the cache");
            return (StatusCode::INTERNAL_SERVER_ERROR, "the page could not be rendered\n").into_response();
        }
    };
    if body.len() > MAX_BODY {
        return Response::from_parts(parts, Body::from(body));
    }
    let digest = bundle::Digest::of(&body).to_hex();
    let etag =
        HeaderValue::from_str(&format!("\"{generation}-{}\"", &digest[..20])).expect("hex is a valid header");
    let entry = Entry { status: parts.status, headers: parts.headers, body, etag };
    cache.put(url, generation, entry.clone());
    answer(entry, if_none_match.as_ref())
}

fn answer(entry: Entry, if_none_match: Option<&HeaderValue>) -> Response {
    let matches = if_none_match.and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(',').any(|t| t.trim() == entry.etag.to_str().unwrap_or("") || t.trim() == "*")
    });
    let mut response = if matches {
        let mut r = StatusCode::NOT_MODIFIED.into_response();
        for name in [header::CONTENT_TYPE, header::CONTENT_SECURITY_POLICY, header::X_CONTENT_TYPE_OPTIONS] {
            if let Some(v) = entry.headers.get(&name) {
                r.headers_mut().insert(name, v.clone());
            }
        }
        r
    } else {
        let mut r = Response::new(Body::from(entry.body));
        *r.status_mut() = entry.status;
        *r.headers_mut() = entry.headers;
        r
    };
    let headers = response.headers_mut();
    headers.insert(header::ETAG, entry.etag);
    // Always revalidate: a 304 costs little, and new results show at once.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Follows the change log, so that ingests by other processes invalidate this one's
/// cache within `every`.
pub async fn follow(app: Shared, every: Duration) {
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        match app.store.generation().await {
            Ok(g) => app.cache.advance(u64::try_from(g).unwrap_or(0)),
            Err(e) => tracing::warn!(error = %e, "could not read the change log's position"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_may_be_cached() {
        for path in ["/", "/agents/x", "/api/v1/leaderboard", "/leaderboard.csv", "/changes"] {
            assert!(cacheable(path), "{path}");
        }
        for path in
            ["/artifacts/ab", "/metrics", "/healthz", "/readyz", "/sfn/x", "/api/v1/admin/keys", "/submit"]
        {
            assert!(!cacheable(path), "{path}");
        }
    }

    #[test]
    fn a_new_generation_starts_afresh_and_old_renders_are_dropped() {
        let cache = RenderCache::new(true);
        let entry = |b: &'static str| Entry {
            status: StatusCode::OK,
            headers: HeaderMap::new(),
            body: Bytes::from_static(b.as_bytes()),
            etag: HeaderValue::from_static("\"x\""),
        };
        cache.put("/".into(), 1, entry("one"));
        assert_eq!(cache.get("/", 1).unwrap().body, "one");
        assert!(cache.get("/", 2).is_none());
        cache.put("/".into(), 2, entry("two"));
        cache.put("/".into(), 1, entry("stale"));
        assert_eq!(cache.get("/", 2).unwrap().body, "two");
        assert!(cache.get("/", 1).is_none());
    }
}
