//! The render cache: pages and read-API answers kept per URL, served again until the
//! data change, with an ETag so a browser that has them gets a 304.
//!
//! What a page shows depends only on its URL and the data, and the data change only
//! through ingests, each of which appends to the change log. The cache is tagged with
//! the change log's position (the generation): an ingest in this process moves it at
//! once, and a poller picks up ingests by other processes sharing the database (and
//! `rexbench-server import`) within a second.
//!
//! Only answers for anyone are kept: a request with credentials (`Authorization`, or
//! the sign-in cookie) is answered afresh, `Cache-Control: private, no-store`.
//!
//! Text answers are compressed once, when they are cached (gzip, and brotli for the
//! browsers that accept it), rather than on every request: a leaderboard of 130 KB is
//! 10 KB compressed, and compressing it each time would cost more than serving it.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Answers larger than this are not kept.
const MAX_BODY: usize = 4 << 20;
/// What the cache may hold in all; past it, it starts again empty.
const MAX_BYTES: usize = 128 << 20;
/// Smaller answers are sent as they are: compressing them gains little.
const MIN_COMPRESSED: usize = 1024;
/// Brotli's quality for cached answers: within 5% of the best size at a small fraction
/// of the best's time (a 130 KB page: a few milliseconds, once).
const BROTLI_QUALITY: u32 = 9;

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
    /// The body compressed, for text answers large enough to gain from it.
    gzip: Option<Bytes>,
    br: Option<Bytes>,
    /// Names the body's content; each encoding's ETag adds its own suffix.
    etag: String,
}

impl Entry {
    fn size(&self) -> usize {
        self.body.len() + self.gzip.as_ref().map_or(0, Bytes::len) + self.br.as_ref().map_or(0, Bytes::len)
    }

    /// The representation to send to a client whose Accept-Encoding is `accept`:
    /// its content coding, body and ETag.
    fn representation(&self, accept: Option<&HeaderValue>) -> (Option<&'static str>, Bytes, HeaderValue) {
        let (coding, body) = match (&self.br, &self.gzip) {
            (Some(br), _) if accepts(accept, "br") => (Some("br"), br.clone()),
            (_, Some(gz)) if accepts(accept, "gzip") => (Some("gzip"), gz.clone()),
            _ => (None, self.body.clone()),
        };
        let etag = match coding {
            Some(c) => format!("\"{}-{c}\"", self.etag),
            None => format!("\"{}\"", self.etag),
        };
        (coding, body, HeaderValue::from_str(&etag).expect("digits, hex and a coding name"))
    }
}

/// Whether an Accept-Encoding header accepts `coding` (named, with a q-value above 0).
fn accepts(accept: Option<&HeaderValue>, coding: &str) -> bool {
    accept.and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(',').any(|item| {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or("").trim();
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .map_or(1.0, |q| q.trim().parse::<f32>().unwrap_or(0.0));
            name.eq_ignore_ascii_case(coding) && q > 0.0
        })
    })
}

fn compressible(headers: &HeaderMap, body: &[u8]) -> bool {
    let text = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/") || t.starts_with("application/json"));
    text && body.len() >= MIN_COMPRESSED && !headers.contains_key(header::CONTENT_ENCODING)
}

fn gzip(body: &[u8]) -> Bytes {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(body).and_then(|()| encoder.finish()).map(Bytes::from).expect("memory takes any write")
}

fn brotli(body: &[u8]) -> Bytes {
    let mut out = Vec::new();
    {
        let mut writer = brotli::CompressorWriter::new(&mut out, 64 << 10, BROTLI_QUALITY, 22);
        writer.write_all(body).expect("memory takes any write");
    }
    Bytes::from(out)
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
        if entries.bytes + entry.size() > MAX_BYTES {
            entries.by_url.clear();
            entries.bytes = 0;
        }
        entries.bytes += entry.size();
        if let Some(old) = entries.by_url.insert(url, entry) {
            entries.bytes -= old.size();
        }
    }
}

/// Whether answers to `path` may be cached: pages and the read API, not what is
/// already static, streamed, live or private.
fn cacheable(path: &str) -> bool {
    const NEVER: [&str; 12] = [
        "/login/",
        "/signout",
        "/artifacts/",
        "/metrics",
        "/healthz",
        "/readyz",
        "/sfn/",
        "/api/v1/admin",
        "/style/",
        "/submit",
        "/pkg/",
        "/desk",
    ];
    !NEVER.iter().any(|p| path.starts_with(p)) && path != "/favicon.svg" && path != "/robots.txt"
}

/// The middleware: answers from the cache when it can, fills it when it cannot.
pub async fn layer(State(cache): State<Arc<RenderCache>>, request: Request, next: Next) -> Response {
    // An answer made for a reader who proved who they are may hold what is private to
    // them: never kept here, nor by the browser or anything between. A sign-in link's
    // page holds its secret in the URL: the same, and no page it leads to learns it.
    let link = request.uri().path().starts_with("/login/");
    if crate::credentials::credentialed(request.headers()) || link {
        let mut response = next.run(request).await;
        let headers = response.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
        headers.insert(HeaderName::from_static("x-robots-tag"), HeaderValue::from_static("noindex"));
        headers.remove(header::ETAG);
        if link {
            headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
        }
        return response;
    }
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
    let accept = request.headers().get(header::ACCEPT_ENCODING).cloned();
    let generation = cache.generation();
    if let Some(entry) = cache.get(&url, generation) {
        return answer(entry, accept.as_ref(), if_none_match.as_ref());
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
    let etag = format!("{generation}-{}", &digest[..20]);
    let (gzip, br) = if compressible(&parts.headers, &body) {
        let text = body.clone();
        match tokio::task::spawn_blocking(move || (gzip(&text), brotli(&text))).await {
            Ok((gzip, br)) => (Some(gzip), Some(br)),
            Err(e) => {
                tracing::error!(error = %e, url = %url, "an answer could not be compressed");
                (None, None)
            }
        }
    } else {
        (None, None)
    };
    let entry = Entry { status: parts.status, headers: parts.headers, body, gzip, br, etag };
    cache.put(url, generation, entry.clone());
    answer(entry, accept.as_ref(), if_none_match.as_ref())
}

fn answer(entry: Entry, accept: Option<&HeaderValue>, if_none_match: Option<&HeaderValue>) -> Response {
    let (coding, body, etag) = entry.representation(accept);
    let varies = entry.gzip.is_some();
    let matches = if_none_match
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut response = if matches {
        let mut r = StatusCode::NOT_MODIFIED.into_response();
        for name in [header::CONTENT_TYPE, header::CONTENT_SECURITY_POLICY, header::X_CONTENT_TYPE_OPTIONS] {
            if let Some(v) = entry.headers.get(&name) {
                r.headers_mut().insert(name, v.clone());
            }
        }
        r
    } else {
        let mut r = Response::new(Body::from(body));
        *r.status_mut() = entry.status;
        *r.headers_mut() = entry.headers;
        if let Some(coding) = coding {
            r.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static(coding));
        }
        r
    };
    let headers = response.headers_mut();
    headers.insert(header::ETAG, etag);
    if varies {
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    // Always revalidate: a 304 costs little, and new results show at once.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Follows the change log, so that ingests by other processes invalidate this one's
/// cache within `every`; `changes` is told each new position (for [`crate::warm`]).
pub async fn follow(
    store: Arc<store::Store>,
    cache: Arc<RenderCache>,
    every: Duration,
    changes: tokio::sync::watch::Sender<i64>,
) {
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        match store.generation().await {
            Ok(g) => {
                cache.advance(u64::try_from(g).unwrap_or(0));
                changes.send_if_modified(|seen| std::mem::replace(seen, g) != g);
            }
            Err(e) => {
                tracing::warn!(error = %crate::error::chain(e), "could not read the change log's position")
            }
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
            gzip: None,
            br: None,
            etag: "x".into(),
        };
        cache.put("/".into(), 1, entry("one"));
        assert_eq!(cache.get("/", 1).unwrap().body, "one");
        assert!(cache.get("/", 2).is_none());
        cache.put("/".into(), 2, entry("two"));
        cache.put("/".into(), 1, entry("stale"));
        assert_eq!(cache.get("/", 2).unwrap().body, "two");
        assert!(cache.get("/", 1).is_none());
    }

    #[test]
    fn the_client_gets_the_best_coding_it_accepts() {
        let text = "<p>row</p>".repeat(200);
        let entry = Entry {
            status: StatusCode::OK,
            headers: HeaderMap::new(),
            body: Bytes::from(text.clone()),
            gzip: Some(gzip(text.as_bytes())),
            br: Some(brotli(text.as_bytes())),
            etag: "7-abc".into(),
        };
        let pick = |accept: Option<&'static str>| {
            let (coding, body, etag) = entry.representation(accept.map(HeaderValue::from_static).as_ref());
            (coding, body.len(), etag)
        };
        assert_eq!(pick(None), (None, text.len(), HeaderValue::from_static("\"7-abc\"")));
        assert_eq!(pick(Some("gzip, deflate, br")).0, Some("br"));
        assert_eq!(pick(Some("gzip, deflate, br")).2, "\"7-abc-br\"");
        assert_eq!(pick(Some("gzip;q=1.0, br;q=0")).0, Some("gzip"));
        assert_eq!(pick(Some("GZIP")).0, Some("gzip"));
        assert_eq!(pick(Some("deflate, identity")).0, None);
        assert_eq!(pick(Some("br;q=0, gzip;q=0")).0, None);
        assert!(pick(Some("br")).1 < text.len() / 10);
    }

    #[test]
    fn compressed_bodies_decode_to_the_original() {
        use std::io::Read;
        let text = "<tr><td>42%</td></tr>".repeat(500);
        let mut out = String::new();
        flate2::read::GzDecoder::new(&gzip(text.as_bytes())[..]).read_to_string(&mut out).unwrap();
        assert_eq!(out, text);
        out.clear();
        brotli::Decompressor::new(&brotli(text.as_bytes())[..], 4096).read_to_string(&mut out).unwrap();
        assert_eq!(out, text);
    }
}
