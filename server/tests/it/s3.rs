//! Artifacts in a real S3 server (`s3s-fs`, checking every request's signature): placed
//! and served through the S3 protocol, and what an operator meets when it goes wrong —
//! wrong credentials, a missing bucket, the store stopping mid-upload, a slow endpoint —
//! each a documented error that leaves nothing partial visible.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use bundle::SecretKey;
use store::testing::{S3Server, count_blobs, count_files};
use store::{Backend, Blobs, LeaderboardFilter, Tier};

use crate::api::signed;
use crate::harness::{Answer, get, post_bundle, repo, state_with};
use crate::process::bundle_file;

async fn app_with(backend: &Backend, blobs: Blobs, key: &SecretKey) -> axum::Router {
    let state = state_with(backend, blobs).await;
    state.store.add_key(&key.public_key(), "A", Tier::Maintainer).await.unwrap();
    server::build_app(state)
}

fn assert_unavailable(answer: &Answer) {
    assert_eq!(
        (answer.status, answer.code().as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, "blob_store_unavailable"),
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(answer.header(axum::http::header::RETRY_AFTER), "60");
}

async fn submissions(backend: &Backend, dir: &std::path::Path) -> usize {
    let store = store::Store::open(backend, &dir.join("unused-blobs")).await.unwrap();
    store.leaderboard(&LeaderboardFilter::default()).await.unwrap().len()
}

/// A bundle's artifacts go into the bucket under the URL's prefix, are served from
/// there, a refused bundle places none; with the store down, reads and ingests say so
/// (503) and store nothing, and it all works again once the store is back.
#[tokio::test(flavor = "multi_thread")]
async fn artifacts_are_placed_and_served_over_s3() {
    let mut s3 = S3Server::start();
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let blobs = s3.blobs(&dir.path().join("staging"));
    let key = SecretKey::generate();
    let app = app_with(&backend, blobs.clone(), &key).await;

    let mut forged = signed(&key, "agent-a", "2026-01-01T00:00:00Z");
    let at = forged.len() / 2;
    forged[at] ^= 0x40;
    assert!(post_bundle(&app, forged).await.status.is_client_error());
    assert_eq!(s3.objects(), 0, "a refused bundle places no object");

    let stored = post_bundle(&app, signed(&key, "agent-a", "2026-01-01T00:00:00Z")).await;
    assert_eq!(stored.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&stored.body));
    assert_eq!(count_files(&dir.path().join("staging")), 0, "nothing left staged");
    let store = store::Store::open_with(&backend, blobs.clone()).await.unwrap();
    let bundle_id = stored.json()["bundle_id"].as_str().unwrap().to_owned();
    let run_id = store.runs_of(&bundle_id, None, None).await.unwrap()[0].id;
    let run = get(&app, &format!("/api/v1/runs/{run_id}")).await.json();
    let artifacts = run["artifacts"].as_array().unwrap().clone();
    let digest =
        artifacts.iter().find(|a| a["role"] == "stdout").unwrap()["digest"].as_str().unwrap().to_owned();
    let object = s3.root().join(S3Server::BUCKET).join("artifacts").join(&digest[..2]).join(&digest);
    assert_eq!(std::fs::read(&object).unwrap(), b"<script>alert(1)</script>\n", "stored as ab/<digest>");
    // The log, and the patch and provenance record every evaluated success carries.
    assert_eq!(s3.objects(), artifacts.len());
    let blob = crate::harness::get_as_maintainer(&app, &format!("/artifacts/{digest}")).await;
    assert_eq!(
        (blob.status, blob.body.as_slice()),
        (StatusCode::OK, b"<script>alert(1)</script>\n".as_slice())
    );

    // The store goes away: readiness, reads and ingests say so; nothing is stored.
    s3.stop();
    assert_eq!(get(&app, "/readyz").await.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_unavailable(&crate::harness::get_as_maintainer(&app, &format!("/artifacts/{digest}")).await);
    let refused = post_bundle(&app, signed(&key, "agent-b", "2026-01-02T00:00:00Z")).await;
    assert_unavailable(&refused);
    assert_eq!(submissions(&backend, dir.path()).await, 1, "the refused bundle left no row");
    assert_eq!(count_files(&dir.path().join("staging")), 0, "nor anything staged");

    s3.restart();
    assert_eq!(get(&app, "/readyz").await.status, StatusCode::OK);
    let again = post_bundle(&app, signed(&key, "agent-b", "2026-01-02T00:00:00Z")).await;
    assert_eq!(again.status, StatusCode::CREATED, "sent again, it goes in");
    assert_eq!(
        crate::harness::get_as_maintainer(&app, &format!("/artifacts/{digest}")).await.status,
        StatusCode::OK
    );

    // A row whose object went missing is a server error, said plainly.
    blobs.remove(&bundle::Digest::from_hex(&digest).unwrap()).await.unwrap();
    let gone = crate::harness::get_as_maintainer(&app, &format!("/artifacts/{digest}")).await;
    assert_eq!((gone.status, gone.code().as_str()), (StatusCode::INTERNAL_SERVER_ERROR, "internal_error"));
}

/// A server configured with a wrong secret key or a bucket that does not exist refuses
/// to start, saying which; one whose credentials stop working later (a rotated key)
/// answers ingests 503 and stores nothing.
#[tokio::test(flavor = "multi_thread")]
async fn wrong_credentials_and_a_missing_bucket_are_named() {
    let s3 = S3Server::start();
    let dir = tempfile::tempdir().unwrap();
    let start = |env: Vec<(String, String)>| {
        let out = Command::new(env!("CARGO_BIN_EXE_rexbench-server"))
            .arg("serve")
            .envs(env)
            .env("DATABASE_URL", format!("sqlite://{}", dir.path().join("db.sqlite").display()))
            .env("REXBENCH_STAGING", dir.path().join("staging"))
            .env("REXBENCH_ADDR", "127.0.0.1:0")
            .env("REXBENCH_TASKS", repo().join("tasks"))
            .env("RUST_LOG", "error")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, said) = start(s3.env_with(S3Server::BUCKET, "not-the-secret"));
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("blob store s3://rexbench-blobs/artifacts cannot be reached")
            && said.contains("SignatureDoesNotMatch"),
        "{said}"
    );
    let (code, said) = start(s3.env_with("no-such-bucket", S3Server::SECRET_KEY));
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("blob store s3://no-such-bucket/artifacts cannot be reached")
            && said.contains("NoSuchBucket"),
        "{said}"
    );

    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let key = SecretKey::generate();
    let app =
        app_with(&backend, s3.blobs_in(S3Server::BUCKET, "rotated", &dir.path().join("staging")), &key).await;
    assert_unavailable(&post_bundle(&app, signed(&key, "agent-a", "2026-01-01T00:00:00Z")).await);
    assert_eq!(submissions(&backend, dir.path()).await, 0);
    assert_eq!(s3.objects(), 0);
}

/// A TCP proxy on 127.0.0.1 in front of the S3 server that holds every piece a client
/// sends for `delay` before passing it on: a slow or congested endpoint. With
/// `cut_puts`, it also cuts every connection that carries a PUT (an upload) instead.
struct SlowProxy {
    port: u16,
    done: Arc<AtomicBool>,
}

impl SlowProxy {
    fn start(upstream: u16, delay: Duration) -> SlowProxy {
        SlowProxy::start_with(upstream, delay, false)
    }

    fn start_with(upstream: u16, delay: Duration, cut_puts: bool) -> SlowProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let stop = done.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                client.set_nonblocking(false).unwrap();
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else { continue };
                let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 64 * 1024];
                    while let Ok(n @ 1..) = c_in.read(&mut buf) {
                        std::thread::sleep(delay);
                        let put = cut_puts && buf[..n].starts_with(b"PUT ");
                        if put || stop.load(Ordering::Relaxed) || s_out.write_all(&buf[..n]).is_err() {
                            let _ = c_in.shutdown(std::net::Shutdown::Both);
                            break;
                        }
                    }
                    let _ = s_out.shutdown(std::net::Shutdown::Both);
                });
                let (mut s_in, mut c_out) = (server, client);
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut s_in, &mut c_out);
                    let _ = c_out.shutdown(std::net::Shutdown::Both);
                });
            }
        });
        SlowProxy { port, done }
    }
}

impl Drop for SlowProxy {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

fn through(proxy: &SlowProxy, timeout: Option<Duration>) -> object_store::aws::AmazonS3Builder {
    let mut options = object_store::ClientOptions::new().with_allow_http(true);
    if let Some(t) = timeout {
        options = options.with_timeout(t);
    }
    object_store::aws::AmazonS3Builder::new()
        .with_endpoint(format!("http://127.0.0.1:{}", proxy.port))
        .with_client_options(options)
        .with_region("us-east-1")
        .with_access_key_id(S3Server::ACCESS_KEY)
        .with_secret_access_key(S3Server::SECRET_KEY)
}

/// The S3 server is killed while a bundle's artifacts are being uploaded: the ingest
/// answers 503 and stores no row; the objects placed before the cut are strays no row
/// refers to, never served, and garbage collection removes them. Sent again once the
/// store is back, the bundle goes in whole.
#[tokio::test(flavor = "multi_thread")]
async fn the_store_stopping_mid_upload_leaves_no_row_and_only_collectable_strays() {
    let mut s3 = S3Server::start();
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    // 20 ms a request: the 241 artifacts' uploads take seconds, so the kill lands among them.
    let proxy = SlowProxy::start(s3.port, Duration::from_millis(20));
    let url = format!("s3://{}/artifacts", S3Server::BUCKET);
    let blobs = Blobs::s3(&url, &dir.path().join("staging"), through(&proxy, None)).unwrap();
    let key = SecretKey::generate();
    let app = app_with(&backend, blobs.clone(), &key).await;
    let file = bundle_file(&key, "agent-cut", 120, dir.path());
    let bytes = std::fs::read(&file).unwrap();

    let ingest = tokio::spawn({
        let (app, bytes) = (app.clone(), bytes.clone());
        async move { post_bundle(&app, bytes).await }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while s3.objects() < 5 {
        assert!(Instant::now() < deadline, "no upload began");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    s3.stop();
    let answer = ingest.await.unwrap();
    assert_unavailable(&answer);
    let strays = s3.objects();
    assert!((5..241).contains(&strays), "the cut came mid-upload: {strays} of 241 objects");
    assert_eq!(submissions(&backend, dir.path()).await, 0, "no row for the cut bundle");
    assert_eq!(count_files(&dir.path().join("staging")), 0, "nothing left staged");

    s3.restart();
    let store = store::Store::open_with(&backend, blobs.clone()).await.unwrap();
    let stray = blobs.list().await.unwrap();
    assert_eq!(stray.len(), strays);
    let unserved = get(&app, &format!("/artifacts/{}", stray[0].to_hex())).await;
    assert_eq!(unserved.status, StatusCode::NOT_FOUND, "a stray object is never served");
    assert_eq!(store.collect_garbage(Duration::ZERO).await.unwrap(), strays);
    assert_eq!(s3.objects(), 0, "garbage collection removed the strays");

    let again = post_bundle(&app, bytes).await;
    assert_eq!(again.status, StatusCode::CREATED);
    // 120 logs and 120 patches (each run's own), and the one provenance record the runs
    // share.
    assert_eq!(count_blobs(&blobs).await, 241);
    let acknowledged = [again.json()["bundle_id"].as_str().unwrap().to_owned()].into();
    crate::process::assert_consistent(&store, &acknowledged).await;
}

/// An endpoint slower than the configured timeout (`AWS_TIMEOUT`): each request is
/// given up after it, retried a bounded number of times, and the ingest answers 503
/// with nothing stored, well before the client library's default three minutes.
#[tokio::test(flavor = "multi_thread")]
async fn a_slow_endpoint_times_out_with_nothing_stored() {
    let s3 = S3Server::start();
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let proxy = SlowProxy::start(s3.port, Duration::from_secs(30));
    let url = format!("s3://{}/artifacts", S3Server::BUCKET);
    let blobs =
        Blobs::s3(&url, &dir.path().join("staging"), through(&proxy, Some(Duration::from_millis(500))))
            .unwrap();
    let key = SecretKey::generate();
    let app = app_with(&backend, blobs, &key).await;
    let started = Instant::now();
    assert_unavailable(&post_bundle(&app, signed(&key, "agent-slow", "2026-01-01T00:00:00Z")).await);
    let took = started.elapsed();
    assert!(took < store::S3_RETRY_WINDOW + Duration::from_secs(5), "gave up after {took:?}");
    assert_eq!(submissions(&backend, dir.path()).await, 0);
    assert_eq!(s3.objects(), 0);
    assert_eq!(count_files(&dir.path().join("staging")), 0);
}

/// Every upload cut off at the endpoint while everything else goes through: the blob's
/// one PUT fails as the upload finishes, and the ingest answers 503 with nothing stored
/// (it once panicked there, asking the finished upload to abort).
#[tokio::test(flavor = "multi_thread")]
async fn an_upload_refused_as_it_finishes_is_a_503_with_nothing_stored() {
    let s3 = S3Server::start();
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let proxy = SlowProxy::start_with(s3.port, Duration::ZERO, true);
    let url = format!("s3://{}/artifacts", S3Server::BUCKET);
    let blobs = Blobs::s3(&url, &dir.path().join("staging"), through(&proxy, None)).unwrap();
    let key = SecretKey::generate();
    let app = app_with(&backend, blobs, &key).await;
    assert_unavailable(&post_bundle(&app, signed(&key, "agent-cut", "2026-01-01T00:00:00Z")).await);
    assert_eq!(submissions(&backend, dir.path()).await, 0);
    assert_eq!(s3.objects(), 0);
    assert_eq!(count_files(&dir.path().join("staging")), 0);
}
