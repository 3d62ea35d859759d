//! Hostile clients: malicious bundles leave no trace, submissions are rate-limited per
//! address and per key, slow bodies are cut off, ingests at once are capped, and
//! every answer carries the headers that keep a browser from running what a bundle
//! says.

use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use bundle::{Envelope, PublicKey, SecretKey};
use serde_json::json;
use server::guard::{Guard, Limits};
use store::testing::{count_files, for_each_backend};
use store::{Backend, Tier};

use crate::api::signed;
use crate::harness::{get, post_bundle, send, state, vectors};
use crate::pages::multipart;

/// The database's whole content as its own dump tool writes it.
fn dump(backend: &Backend) -> String {
    let output = match backend {
        Backend::Sqlite { path } => Command::new("sqlite3").arg(path).arg(".dump").output(),
        Backend::Postgres { url } => {
            Command::new("pg_dump").args(["--data-only", "--inserts", "--no-owner", url]).output()
        }
    }
    .expect("sqlite3 and pg_dump are installed (scripts/test checks)");
    assert!(output.status.success(), "dump: {}", String::from_utf8_lossy(&output.stderr));
    // pg_dump brackets its output with a random key (\restrict): not content.
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("\\restrict") && !l.starts_with("\\unrestrict"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A gzip stream of `tar` with these members, in order.
pub(crate) fn bundle_of(members: &[(&str, Vec<u8>)], kind: tar::EntryType) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in members {
        let kind = if *name == "envelope.json" { tar::EntryType::Regular } else { kind };
        let data: &[u8] = if kind == tar::EntryType::Regular { data } else { &[] };
        let mut h = tar::Header::new_ustar();
        let field = &mut h.as_ustar_mut().unwrap().name;
        field[..name.len()].copy_from_slice(name.as_bytes());
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(kind);
        if kind == tar::EntryType::Symlink {
            h.set_link_name("/etc/passwd").unwrap();
        }
        h.set_cksum();
        b.append(&h, data).unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &b.into_inner().unwrap()).unwrap();
    gz.finish().unwrap()
}

/// Malicious bundles of our own, each with the code it must be refused with.
fn malicious(key: &SecretKey) -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let manifest = |runs: serde_json::Value| {
        serde_json::to_vec(&json!({
            "schema": "rexbench.manifest/v1", "created_at": "2026-11-20T12:00:00Z",
            "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
            "runner": {"name": "t", "version": "1"}, "provenance": {"kind": "evaluated"},
            "agent": {"id": "evil", "framework": "F", "model": "M"},
            "runs": runs,
        }))
        .unwrap()
    };
    // A run that never got past applying its patch: it needs no artifact (spec §4c), so
    // that each bundle is refused for its archive alone.
    let run = json!([{"task": "cogs", "hint": "none", "attempt": 1, "outcome": "patch_failed"}]);
    let envelope = |m: &[u8]| Envelope::sign(m, &[key]).to_bytes();
    let valid = manifest(run.clone());
    let deep = String::from_utf8(manifest(run.clone())).unwrap().replacen(
        "\"outcome\"",
        &format!("\"metrics\":{{\"x\":{}1{}}},\"outcome\"", "[".repeat(5000), "]".repeat(5000)),
        1,
    );
    let huge =
        String::from_utf8(manifest(run.clone())).unwrap().replacen("\"attempt\":1", "\"attempt\":1e999", 1);
    let mut not_utf8 = manifest(run.clone());
    let at = not_utf8.windows(5).position(|w| w == b"\"evil").unwrap() + 1;
    not_utf8.insert(at, 0xff);
    let bomb = {
        // 64 MB of zeros after a valid envelope: refused within the first megabyte.
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_ustar();
        h.set_path("envelope.json").unwrap();
        h.set_size(envelope(&valid).len() as u64);
        h.set_cksum();
        b.append(&h, envelope(&valid).as_slice()).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut gz, &b.into_inner().unwrap()).unwrap();
        for _ in 0..64 {
            std::io::Write::write_all(&mut gz, &[0u8; 1 << 20]).unwrap();
        }
        gz.finish().unwrap()
    };
    let other = SecretKey::generate();
    vec![
        (
            "absolute path",
            bundle_of(
                &[("envelope.json", envelope(&valid)), ("/etc/passwd", b"x".to_vec())],
                tar::EntryType::Regular,
            ),
            "unsafe_path",
        ),
        (
            "parent path",
            bundle_of(
                &[("envelope.json", envelope(&valid)), ("artifacts/../../x", b"x".to_vec())],
                tar::EntryType::Regular,
            ),
            "unsafe_path",
        ),
        (
            "symlink",
            bundle_of(
                &[("envelope.json", envelope(&valid)), ("artifacts/link", vec![])],
                tar::EntryType::Symlink,
            ),
            "non_regular_member",
        ),
        (
            "member twice",
            bundle_of(
                &[("envelope.json", envelope(&valid)), ("envelope.json", envelope(&valid))],
                tar::EntryType::Regular,
            ),
            "duplicate_member",
        ),
        (
            "deep nesting",
            bundle_of(&[("envelope.json", envelope(deep.as_bytes()))], tar::EntryType::Regular),
            "manifest_malformed",
        ),
        (
            "huge number",
            bundle_of(&[("envelope.json", envelope(huge.as_bytes()))], tar::EntryType::Regular),
            "invalid_attempt",
        ),
        (
            "invalid UTF-8",
            bundle_of(&[("envelope.json", envelope(&not_utf8))], tar::EntryType::Regular),
            "manifest_malformed",
        ),
        ("gzip bomb", bomb, "unaccounted_data"),
        (
            "an untrusted key",
            bundle_of(
                &[("envelope.json", Envelope::sign(&valid, &[&other]).to_bytes())],
                tar::EntryType::Regular,
            ),
            "no_trusted_signature",
        ),
        (
            "trailing garbage",
            [bundle_of(&[("envelope.json", envelope(&valid))], tar::EntryType::Regular), b"junk".to_vec()]
                .concat(),
            "corrupt_archive",
        ),
        ("empty", Vec::new(), "not_gzip"),
    ]
}

/// Every invalid conformance vector and every malicious bundle of ours, through
/// `POST /api/v1/submissions`: each refused with its own code, and afterwards the
/// database dumps exactly as before and no blob or staged file is left.
#[tokio::test]
async fn malicious_bundles_are_refused_and_leave_no_trace() {
    for_each_backend(|backend, blobs| async move {
        let mut state = state(&backend, &blobs).await;
        state.limits.uncompressed = 16 << 20;
        let conformance =
            PublicKey::from_pem(&fs::read_to_string(vectors().join("test-key/key.pub.pem")).unwrap())
                .unwrap();
        state.store.add_key(&conformance, "conformance", Tier::Submitter).await.unwrap();
        let key = SecretKey::generate();
        state.store.add_key(&key.public_key(), "Team", Tier::Submitter).await.unwrap();
        let app = server::build_app(state);
        // Something stored already, so that "unchanged" means something.
        assert_eq!(
            post_bundle(&app, signed(&key, "honest", "2026-11-20T12:00:00Z")).await.status,
            StatusCode::CREATED
        );

        let before = (dump(&backend), count_files(&blobs));
        // The invalid vectors but those of the size limits (this test lowers one; the
        // vectors' test holds them with the default limits).
        let mut corpus: Vec<(String, Vec<u8>, String)> = crate::api::repository_vectors()
            .into_iter()
            .filter(|(_, status, _)| *status >= 400 && *status != 413)
            .map(|(name, _, code)| {
                let bytes = fs::read(vectors().join(&name)).unwrap();
                (name, bytes, code)
            })
            .collect();
        assert!(corpus.len() > 40, "the invalid conformance vectors: {}", corpus.len());
        corpus.extend(malicious(&key).into_iter().map(|(n, b, c)| (n.to_owned(), b, c.to_owned())));
        for (name, bytes, code) in &corpus {
            let answer = post_bundle(&app, bytes.clone()).await;
            assert!(answer.status.is_client_error(), "{name}: {}", answer.status);
            assert_eq!(&answer.code(), code, "{name}: {}", String::from_utf8_lossy(&answer.body));
        }
        assert!(before.0.contains("honest"));
        let after = dump(&backend);
        let changed = after.lines().zip(before.0.lines()).find(|(a, b)| a != b);
        assert!(changed.is_none() && after.len() == before.0.len(), "the database changed: {changed:?}");
        assert_eq!(count_files(&blobs), before.1, "a blob or staged file was left behind");
    })
    .await;
}

fn from(address: &str, request: Request<Body>) -> Request<Body> {
    let (mut parts, body) = request.into_parts();
    parts.extensions.insert(ConnectInfo(format!("{address}:40000").parse::<SocketAddr>().unwrap()));
    Request::from_parts(parts, body)
}

fn submission(bytes: Vec<u8>) -> Request<Body> {
    Request::post("/api/v1/submissions")
        .header(header::CONTENT_TYPE, "application/gzip")
        .body(Body::from(bytes))
        .unwrap()
}

async fn app_with(blobs: &Path, limits: Limits) -> (Router, SecretKey) {
    let mut state = state(&Backend::Sqlite { path: blobs.join("db.sqlite") }, &blobs.join("blobs")).await;
    state.guard = Guard::new(limits);
    let key = SecretKey::generate();
    state.store.add_key(&key.public_key(), "Team", Tier::Maintainer).await.unwrap();
    (server::build_app(state), key)
}

#[tokio::test]
async fn submissions_are_rate_limited_per_address_and_per_key() {
    let dir = tempfile::tempdir().unwrap();
    // Four an hour: one at once, then one every 15 minutes.
    let (app, key) =
        app_with(dir.path(), Limits { per_address_hourly: 4, per_key_hourly: 8, ..Limits::default() }).await;
    let bundle = |n: u32| signed(&key, &format!("agent-{n}"), "2026-11-20T12:00:00Z");
    assert_eq!(send(&app, from("192.0.2.1", submission(bundle(1)))).await.status, StatusCode::CREATED);
    let limited = send(&app, from("192.0.2.1", submission(bundle(2)))).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(limited.code(), "rate_limited");
    assert!(limited.json()["error"]["message"].as_str().unwrap().contains("from 192.0.2.1"));
    let wait: u64 = limited.header(header::RETRY_AFTER).parse().unwrap();
    assert!((800..=900).contains(&wait), "Retry-After {wait}");
    // The upload form shares the address's allowance, and says so on the page.
    let page = send(&app, from("192.0.2.1", multipart(&bundle(2)))).await;
    assert_eq!(page.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(String::from_utf8(page.body).unwrap().contains("rate_limited"));

    // Another address may submit, until the key's own allowance (two at once) is spent.
    assert_eq!(send(&app, from("192.0.2.2", submission(bundle(3)))).await.status, StatusCode::CREATED);
    let by_key = send(&app, from("192.0.2.3", submission(bundle(4)))).await;
    assert_eq!(by_key.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(
        by_key.json()["error"]["message"].as_str().unwrap().contains("signed by key"),
        "{}",
        by_key.json()
    );
    // Nothing of what was refused was stored.
    let board = get(&app, "/api/v1/leaderboard").await.json();
    assert_eq!(board["rows"].as_array().unwrap().len(), 2, "{board}");
}

/// A body that sends a little and then nothing, as a stream that never ends.
pub fn stalled(first: Vec<u8>) -> Body {
    let stream = futures::StreamExt::chain(
        futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from(first))]),
        futures::stream::pending(),
    );
    Body::from_stream(stream)
}

#[tokio::test]
async fn a_slow_body_is_cut_off_with_a_408_and_nothing_stored() {
    let dir = tempfile::tempdir().unwrap();
    let (app, key) =
        app_with(dir.path(), Limits { body_idle: Duration::from_secs(1), ..Limits::default() }).await;
    let bytes = signed(&key, "slow", "2026-11-20T12:00:00Z");
    let started = Instant::now();
    let request = Request::post("/api/v1/submissions")
        .header(header::CONTENT_TYPE, "application/gzip")
        .body(stalled(bytes[..bytes.len() / 2].to_vec()))
        .unwrap();
    let answer = send(&app, request).await;
    assert_eq!(answer.status, StatusCode::REQUEST_TIMEOUT);
    assert_eq!(answer.code(), "request_timeout");
    assert!(started.elapsed() < Duration::from_secs(10));
    // The form too.
    let form = multipart(&bytes);
    let (parts, _) = form.into_parts();
    let page = send(&app, Request::from_parts(parts, stalled(b"--XyZzY0123\r\n".to_vec()))).await;
    assert_eq!(page.status, StatusCode::REQUEST_TIMEOUT);
    let board = get(&app, "/api/v1/leaderboard").await.json();
    assert!(board["rows"].as_array().unwrap().is_empty(), "{board}");
}

#[tokio::test]
async fn ingests_beyond_the_cap_get_a_429_until_a_place_is_free() {
    let dir = tempfile::tempdir().unwrap();
    let (app, key) = app_with(dir.path(), Limits { concurrent_ingests: 1, ..Limits::default() }).await;
    let bytes = signed(&key, "first", "2026-11-20T12:00:00Z");
    // The first upload holds the only place while its body trickles in.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
    let request = Request::post("/api/v1/submissions")
        .header(header::CONTENT_TYPE, "application/gzip")
        .body(Body::from_stream(tokio_stream(rx)))
        .unwrap();
    let first = tokio::spawn({
        let app = app.clone();
        async move { send(&app, request).await }
    });
    tx.send(Ok(Bytes::copy_from_slice(&bytes[..10]))).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = post_bundle(&app, signed(&key, "second", "2026-11-20T12:00:00Z")).await;
    assert_eq!(second.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(second.code(), "too_many_ingests");
    assert_eq!(second.header(header::RETRY_AFTER), "1");
    tx.send(Ok(Bytes::copy_from_slice(&bytes[10..]))).await.unwrap();
    drop(tx);
    assert_eq!(first.await.unwrap().status, StatusCode::CREATED);
    let again = post_bundle(&app, signed(&key, "second", "2026-11-20T12:00:00Z")).await;
    assert_eq!(again.status, StatusCode::CREATED);
}

fn tokio_stream(
    mut rx: tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

#[tokio::test]
async fn every_answer_carries_the_security_headers() {
    let dir = tempfile::tempdir().unwrap();
    let (app, key) = app_with(dir.path(), Limits::default()).await;
    let stored = post_bundle(&app, signed(&key, "agent", "2026-11-20T12:00:00Z")).await;
    assert_eq!(stored.status, StatusCode::CREATED);
    let agent = String::from_utf8(get(&app, "/agents/agent?task=othello&hint=hints").await.body).unwrap();
    let run: i64 = agent.split("href=\"/runs/").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    for path in [
        "/".to_owned(),
        "/agents/agent".into(),
        format!("/runs/{run}"),
        "/tasks/cogs".into(),
        "/submit".into(),
        "/nowhere".into(),
        "/api/v1/leaderboard".into(),
        "/favicon.svg".into(),
    ] {
        let answer = get(&app, &path).await;
        let csp = answer.header(header::CONTENT_SECURITY_POLICY);
        assert!(
            csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"),
            "{path}: {csp}"
        );
        // Scripts: this site's files and Leptos's loader by its hash, nothing inline else.
        assert!(!csp.contains("unsafe-inline") && !csp.contains("'nonce-"), "{path}: {csp}");
        if let Some(scripts) = csp.split("; ").find(|d| d.starts_with("script-src")) {
            let sources: Vec<&str> = scripts.split(' ').skip(1).collect();
            assert_eq!(sources[..2], ["'self'", "'wasm-unsafe-eval'"], "{path}: {csp}");
            assert!(sources[2..].iter().all(|s| s.starts_with("'sha256-") && s.len() == 53), "{path}: {csp}");
        }
        assert_eq!(answer.header(header::X_CONTENT_TYPE_OPTIONS), "nosniff", "{path}");
        assert_eq!(answer.header(header::REFERRER_POLICY), "strict-origin-when-cross-origin", "{path}");
        assert_eq!(answer.header(header::X_FRAME_OPTIONS), "DENY", "{path}");
    }
    // An artifact keeps its own, stricter policy, and is plain text (othello's outputs
    // are private: a maintainer reads it).
    let detail = get(&app, &format!("/api/v1/runs/{run}")).await.json();
    let artifact = detail["artifacts"][0]["digest"].as_str().unwrap().to_owned();
    let request = axum::http::Request::get(format!("/artifacts/{artifact}"))
        .header(header::AUTHORIZATION, "Bearer s3cret-token")
        .body(axum::body::Body::empty())
        .unwrap();
    let answer = crate::harness::send(&app, request).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(answer.header(header::CONTENT_SECURITY_POLICY).starts_with("sandbox;"));
    assert_eq!(answer.header(header::CONTENT_TYPE), "text/plain; charset=utf-8");
}
