//! Hostile clients: malicious bundles leave no trace, submissions are rate-limited per
//! address and per key, uploads at once are capped per address, slow and trickling
//! bodies are cut off, ingests at once are capped (and an upload takes a place only once
//! its envelope has been read), and every answer carries the headers that keep a browser
//! from running what a bundle says.

use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use bundle::{Envelope, PublicKey, SecretKey};
use serde_json::json;
use server::guard::{Guard, Limits};
use store::testing::{count_files, for_each_backend};
use store::{Backend, Store, Tier};

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
async fn an_upload_takes_an_ingest_place_once_its_envelope_is_read_and_holds_it_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let (app, key) = app_with(dir.path(), Limits { concurrent_ingests: 1, ..Limits::default() }).await;
    let bytes = signed(&key, "first", "2026-11-20T12:00:00Z");
    let n = bytes.len();
    // The first upload's body comes through a channel of one chunk: a send returns once
    // the chunk before it has been taken, so each step below is known to have been read.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
    let request = Request::post("/api/v1/submissions")
        .header(header::CONTENT_TYPE, "application/gzip")
        .body(Body::from_stream(tokio_stream(rx)))
        .unwrap();
    let first = tokio::spawn({
        let app = app.clone();
        async move { send(&app, request).await }
    });
    let chunk = |range: std::ops::Range<usize>| Ok(Bytes::copy_from_slice(&bytes[range]));
    tx.send(chunk(0..5)).await.unwrap();
    tx.send(chunk(5..10)).await.unwrap();
    // Being read, its envelope not yet: it holds no place, and another is stored.
    let before = post_bundle(&app, signed(&key, "before", "2026-11-20T12:00:00Z")).await;
    assert_eq!(before.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&before.body));
    // All but the gzip trailer, read: past its envelope and its artifacts, it holds the
    // only place until it ends.
    tx.send(chunk(10..n - 9)).await.unwrap();
    tx.send(chunk(n - 9..n - 8)).await.unwrap();
    tx.send(chunk(n - 8..n)).await.unwrap();
    let second = post_bundle(&app, signed(&key, "second", "2026-11-20T12:00:00Z")).await;
    assert_eq!(second.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(second.code(), "too_many_ingests");
    assert_eq!(second.header(header::RETRY_AFTER), "1");
    drop(tx);
    assert_eq!(first.await.unwrap().status, StatusCode::CREATED);
    let again = post_bundle(&app, signed(&key, "second", "2026-11-20T12:00:00Z")).await;
    assert_eq!(again.status, StatusCode::CREATED);
}

/// A server process on 127.0.0.1 with a submitter key registered, `uploads` at once per
/// address, and a body's rate (at least 1 KiB/s) judged over `window` seconds, so that
/// a trickle is cut within seconds; the pause rule and the places are the defaults'
/// (20 s, 4), and a body must be whole within 60 s.
fn rate_server(dir: &Path, uploads: &str, window: &str) -> (crate::process::Server, SecretKey, Store) {
    let env = [
        ("REXBENCH_CONCURRENT_UPLOADS_PER_ADDRESS", uploads),
        ("REXBENCH_BODY_MIN_BYTES_PER_SEC", "1024"),
        ("REXBENCH_BODY_RATE_WINDOW_SECS", window),
        ("REXBENCH_BODY_SECS", "60"),
    ];
    let backend = Backend::Sqlite { path: dir.join("db.sqlite") };
    let key = SecretKey::generate();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt.block_on(Store::open(&backend, &dir.join("blobs"))).unwrap();
    rt.block_on(store.add_key(&key.public_key(), "Team", Tier::Submitter)).unwrap();
    rt.block_on(crate::harness::know_test_set(&store));
    (crate::process::Server::start_with(&backend, &dir.join("blobs"), &env), key, store)
}

/// An upload over a raw socket that sends its headers with the bundle's true
/// `Content-Length`, then the bundle one byte each `gap`, until it is answered.
struct Trickle {
    /// Bytes of the body sent so far.
    sent: Arc<AtomicUsize>,
    /// Its answer, whole as it came, and when it began to come.
    answer: std::thread::JoinHandle<(String, Instant)>,
}

impl Trickle {
    fn start(url: &str, bundle: Vec<u8>, gap: Duration) -> Trickle {
        let mut stream = TcpStream::connect(url.trim_start_matches("http://")).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut writer = stream.try_clone().unwrap();
        let sent = Arc::new(AtomicUsize::new(0));
        let counted = sent.clone();
        std::thread::spawn(move || {
            let head = format!(
                "POST /api/v1/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/gzip\r\n\
                 Content-Length: {}\r\n\r\n",
                bundle.len()
            );
            if writer.write_all(head.as_bytes()).is_err() {
                return;
            }
            for byte in &bundle {
                if writer.write_all(std::slice::from_ref(byte)).is_err() {
                    return;
                }
                counted.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(gap);
            }
        });
        let answer = std::thread::spawn(move || {
            let (mut answer, mut buf, mut began) = (Vec::new(), [0u8; 4096], None);
            // Until the answer is whole (its headers and the length they give), or the
            // connection ends.
            while !whole(&answer) {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        began.get_or_insert_with(Instant::now);
                        answer.extend_from_slice(&buf[..n]);
                    }
                }
            }
            // The writer stops at its next byte.
            let _ = stream.shutdown(std::net::Shutdown::Both);
            (String::from_utf8_lossy(&answer).into_owned(), began.unwrap_or_else(Instant::now))
        });
        Trickle { sent, answer }
    }
}

/// Whether an HTTP/1.1 answer has come whole: its head, and the body its length gives.
fn whole(answer: &[u8]) -> bool {
    let text = String::from_utf8_lossy(answer);
    let Some((head, body)) = text.split_once("\r\n\r\n") else { return false };
    let length = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()))
        .and_then(|v| v.parse::<usize>().ok());
    length.is_none_or(|n| body.len() >= n)
}

/// `n` trickles of bundles signed by `key`, a byte each `gap`, once each has sent two
/// bytes of its body (waited for a bounded while).
fn trickling(url: &str, key: &SecretKey, n: usize, gap: Duration) -> Vec<Trickle> {
    let trickles: Vec<Trickle> = (0..n)
        .map(|i| Trickle::start(url, signed(key, &format!("trickle-{i}"), "2026-11-20T12:00:00Z"), gap))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while trickles.iter().any(|t| t.sent.load(Ordering::Relaxed) < 2) {
        assert!(Instant::now() < deadline, "the trickles did not get going");
        std::thread::sleep(Duration::from_millis(20));
    }
    trickles
}

fn post(url: &str, bundle: Vec<u8>) -> (u16, Option<String>, serde_json::Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut answer = agent
        .post(&format!("{url}/api/v1/submissions"))
        .content_type("application/gzip")
        .send(bundle)
        .unwrap();
    let retry = answer.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    let body = serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
    (answer.status().as_u16(), retry, body)
}

/// The hostile review's flood: as many connections as there are ingest places, each
/// with a valid `Content-Length` and then a byte at a time (each well within the pause
/// rule), from one address within its allowance. They hold no place: a fifth submitter's
/// bundle is stored while they trickle, and each ends with `upload_too_slow`.
#[test]
fn trickling_uploads_keep_no_one_waiting_and_are_cut_for_their_rate() {
    let dir = tempfile::tempdir().unwrap();
    // Windows of 3 s: the fifth has the grace and a window to be stored in, however
    // loaded the machine.
    let (server, key, store) = rate_server(dir.path(), "8", "3");
    let started = Instant::now();
    let trickles =
        trickling(&server.url, &key, Limits::default().concurrent_ingests, Duration::from_millis(250));
    let (status, _, body) = post(&server.url, signed(&key, "fifth", "2026-11-20T12:00:00Z"));
    assert_eq!(status, 201, "{body}");
    let stored = Instant::now();
    for (i, t) in trickles.into_iter().enumerate() {
        let (answer, came) = t.answer.join().unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "trickle {i}: {answer}");
        assert!(answer.contains("\"upload_too_slow\""), "trickle {i}: {answer}");
        assert!(answer.contains("under the minimum of 1024 bytes/s"), "trickle {i}: {answer}");
        assert!(came > stored, "trickle {i} was answered before the fifth was stored: it proved nothing");
    }
    // Cut after the grace and one window (6 s of waiting), not after the pause rule's
    // 20 s or the whole body's 60.
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let board = rt.block_on(store.leaderboard(&store::LeaderboardFilter::default())).unwrap();
    assert_eq!(board.iter().map(|r| r.agent_id.as_str()).collect::<Vec<_>>(), ["fifth"]);
    server.kill();
}

/// An address has its most uploads under way at once (here 2): a third is refused with
/// its own code before anything of it is read, and is taken once one has been answered.
#[test]
fn an_address_over_its_uploads_at_once_gets_a_429_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let (server, key, _store) = rate_server(dir.path(), "2", "1");
    let trickles = trickling(&server.url, &key, 2, Duration::from_millis(100));
    let (status, retry, body) = post(&server.url, signed(&key, "third", "2026-11-20T12:00:00Z"));
    assert_eq!((status, body["error"]["code"].as_str()), (429, Some("too_many_uploads")), "{body}");
    assert_eq!(retry.as_deref(), Some("10"));
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("127.0.0.1 is already sending 2 bundles"), "{message}");
    // Once they are answered (cut for their rate), the address may send again.
    for t in trickles {
        let (answer, _) = t.answer.join().unwrap();
        assert!(answer.starts_with("HTTP/1.1 408") && answer.contains("upload_too_slow"), "{answer}");
    }
    let (status, _, body) = post(&server.url, signed(&key, "third", "2026-11-20T12:00:00Z"));
    assert_eq!(status, 201, "{body}");
    server.kill();
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
