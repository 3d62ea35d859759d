//! The server as a real process, on real sockets: killed with SIGKILL while ingests
//! are in flight, and loaded by concurrent submitters and readers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bundle::SecretKey;
use serde_json::json;
use store::testing::{for_each_backend, on_postgres, on_sqlite};
use store::{Backend, LeaderboardFilter, Store, Tier};

/// A server process on a free port of 127.0.0.1.
pub struct Server {
    child: Child,
    pub url: String,
}

pub fn database_url(backend: &Backend) -> String {
    match backend {
        Backend::Sqlite { path } => format!("sqlite://{}", path.display()),
        Backend::Postgres { url } => url.clone(),
    }
}

impl Server {
    pub fn start(backend: &Backend, blobs: &Path) -> Server {
        Server::start_with(backend, blobs, &[])
    }

    /// With the rate limits out of the way (every test client shares one address) and
    /// `env` besides.
    pub fn start_with(backend: &Backend, blobs: &Path, env: &[(&str, &str)]) -> Server {
        Server::start_args(&["serve"], backend, blobs, env)
    }

    /// `rexbench-server ARGS` (`serve` and its flags), as [`Server::start_with`].
    pub fn start_args(args: &[&str], backend: &Backend, blobs: &Path, env: &[(&str, &str)]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(env!("CARGO_BIN_EXE_rexbench-server"))
            .args(args)
            .env("REXBENCH_SUBMISSIONS_PER_HOUR", "1000000")
            .env("REXBENCH_KEY_SUBMISSIONS_PER_HOUR", "1000000")
            .env("REXBENCH_CONCURRENT_UPLOADS_PER_ADDRESS", "1000000")
            .env("DATABASE_URL", database_url(backend))
            .env("REXBENCH_BLOBS", blobs)
            // `env` may say where the blobs are instead (an S3 bucket).
            .envs(env.iter().copied())
            .env("REXBENCH_ADDR", format!("127.0.0.1:{port}"))
            .env("REXBENCH_TASKS", crate::harness::repo().join("tasks"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            // Its warnings, and why it ended if it ends, with the test's own output.
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while ureq::get(&format!("{url}/readyz")).call().is_err() {
            assert!(Instant::now() < deadline, "the server did not become ready");
            std::thread::sleep(Duration::from_millis(20));
        }
        Server { child, url }
    }

    pub fn kill(mut self) {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// GET `url`: the status and the body, whatever the status.
pub fn fetch(url: &str) -> (u16, Vec<u8>) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut answer = agent.get(url).call().unwrap();
    (answer.status().as_u16(), answer.body_mut().read_to_vec().unwrap())
}

/// GET `url` with `Authorization: Bearer <token>`: the status and the body.
pub fn fetch_as(url: &str, token: &str) -> (u16, Vec<u8>) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut answer = agent.get(url).header("authorization", &format!("Bearer {token}")).call().unwrap();
    (answer.status().as_u16(), answer.body_mut().read_to_vec().unwrap())
}

/// A bundle of `runs` runs with a few KB of artifacts each, written to `dir`.
pub fn bundle_file(key: &SecretKey, agent: &str, runs: u32, dir: &Path) -> std::path::PathBuf {
    let manifest: bundle::Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-11-20T12:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "t", "version": "1"}, "provenance": {"kind": "evaluated"},
        "agent": {"id": agent, "framework": "F", "model": "M"}, "runs": [],
    }))
    .unwrap();
    let mut b = bundle::BundleBuilder::new(manifest);
    for i in 0..runs {
        let task = bundle::REXBENCH_TASKS[(i % 12) as usize];
        let log = b.add_bytes(format!("{agent} run {i}\n").repeat(200).into_bytes(), "text/plain");
        b.manifest_mut().runs.push(bundle::Run {
            task: task.into(),
            hint: bundle::Hint::ALL[(i / 12 % 3) as usize],
            attempt: i / 36 + 1,
            outcome: if i % 3 == 0 { bundle::Outcome::Success } else { bundle::Outcome::WrongResult },
            error_type: None,
            file_recall: Some(0.5),
            files_changed: None,
            duration_s: Some(1.0),
            cost_usd: None,
            tokens: None,
            task_folder: None,
            metrics: Default::default(),
            metrics_digest: None,
            artifacts: [("agent_log".to_owned(), log.to_hex())].into(),
            findings: Vec::new(),
            regraded: None,
        });
    }
    crate::harness::with_patches(&mut b);
    let path = dir.join(format!("{agent}.tar.gz"));
    b.write(&[key], std::fs::File::create(&path).unwrap()).unwrap();
    path
}

/// Every submission the store holds is whole: its runs, aggregates and blobs.
pub async fn assert_consistent(store: &Store, acknowledged: &BTreeSet<String>) {
    let mut held = BTreeSet::new();
    for row in store.leaderboard(&LeaderboardFilter::default()).await.unwrap() {
        let agent = store.agent(&row.agent_id).await.unwrap().unwrap();
        for s in &agent.submissions {
            held.insert(s.bundle_id.clone());
            let runs = store.runs_of(&s.bundle_id, None, None).await.unwrap();
            assert_eq!(runs.len() as i64, s.run_count, "{}: partial runs", s.bundle_id);
            let counted: i64 = row.by_hint.values().map(|r| r.runs).sum();
            assert_eq!(counted, s.run_count, "{}: partial aggregates", s.bundle_id);
            for run in runs.iter().take(3) {
                for a in store.run(run.id).await.unwrap().unwrap().artifacts {
                    let digest = bundle::Digest::from_hex(&a.digest).unwrap();
                    let bytes = store::testing::blob_bytes(store.blobs(), &digest).await;
                    assert_eq!(bytes.map(|b| b.len() as i64).ok(), Some(a.size), "{}: blob", a.digest);
                }
            }
        }
    }
    let lost: Vec<_> = acknowledged.difference(&held).collect();
    assert!(lost.is_empty(), "acknowledged bundles lost: {lost:?}");
}

/// Times the server is killed with SIGKILL while ingests are in flight, per database.
const KILLS: usize = 50;

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_during_ingests_loses_nothing_acknowledged_and_leaves_nothing_partial_on_sqlite() {
    on_sqlite(sigkill_during_ingests_loses_nothing_acknowledged_and_leaves_nothing_partial).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_during_ingests_loses_nothing_acknowledged_and_leaves_nothing_partial_on_postgres() {
    on_postgres(sigkill_during_ingests_loses_nothing_acknowledged_and_leaves_nothing_partial).await;
}

async fn sigkill_during_ingests_loses_nothing_acknowledged_and_leaves_nothing_partial(
    backend: Backend,
    blobs: PathBuf,
) {
    let key = SecretKey::generate();
    let store = Store::open(&backend, &blobs).await.unwrap();
    store.add_key(&key.public_key(), "load", Tier::Submitter).await.unwrap();
    crate::harness::know_test_set(&store).await;
    let files = tempfile::tempdir().unwrap();
    let bundles: Vec<_> =
        (0..400).map(|i| bundle_file(&key, &format!("agent-{i:03}"), 36, files.path())).collect();
    let acknowledged = Arc::new(Mutex::new(BTreeSet::new()));
    let next = Arc::new(AtomicUsize::new(0));
    let mut in_flight_kills = 0;
    for kill in 0..KILLS {
        // The restart after the last kill: the server recovers by itself, and what it
        // acknowledged before dying is whole.
        let server = Server::start(&backend, &blobs);
        let mut workers = Vec::new();
        let cut = Arc::new(AtomicUsize::new(0));
        for _ in 0..4 {
            let (url, bundles, acknowledged, next, cut) =
                (server.url.clone(), bundles.clone(), acknowledged.clone(), next.clone(), cut.clone());
            workers.push(std::thread::spawn(move || {
                while let Some(path) = bundles.get(next.fetch_add(1, Ordering::Relaxed) % bundles.len()) {
                    match runner::submit::submit(path, &url) {
                        Ok(runner::submit::Verdict::Accepted { body, .. }) => {
                            acknowledged
                                .lock()
                                .unwrap()
                                .insert(body["bundle_id"].as_str().unwrap().to_owned());
                        }
                        Ok(other) => panic!("refused: {other:?}"),
                        // The server died under us: not acknowledged.
                        Err(_) => {
                            cut.fetch_add(1, Ordering::Relaxed);
                            return;
                        }
                    }
                }
            }));
        }
        // Once this round has stored something (so that ingests are flowing, however
        // loaded the machine), somewhere in the next 60 ms, varied by the round.
        let (had, deadline) = (acknowledged.lock().unwrap().len(), Instant::now() + Duration::from_secs(30));
        while acknowledged.lock().unwrap().len() == had {
            assert!(Instant::now() < deadline, "round {kill}: nothing was stored");
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis((kill as u64 * 37) % 60));
        server.kill();
        for w in workers {
            w.join().unwrap();
        }
        in_flight_kills += usize::from(cut.load(Ordering::Relaxed) > 0);
        if kill % 10 == 9 {
            let acknowledged = acknowledged.lock().unwrap().clone();
            assert_consistent(&store, &acknowledged).await;
        }
    }
    assert!(in_flight_kills >= KILLS * 9 / 10, "only {in_flight_kills} of {KILLS} kills cut an ingest short");

    let server = Server::start(&backend, &blobs);
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() >= KILLS, "only {} bundles went in", acknowledged.len());
    assert_consistent(&store, &acknowledged).await;
    // What was cut off can simply be sent again.
    for path in &bundles[..next.load(Ordering::Relaxed).min(bundles.len())] {
        assert!(matches!(
            runner::submit::submit(path, &server.url).unwrap(),
            runner::submit::Verdict::Accepted { .. }
        ));
    }
    let all: BTreeSet<String> = store
        .leaderboard(&LeaderboardFilter::default())
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.bundle_id)
        .collect();
    assert_consistent(&store, &all).await;
    server.kill();
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_submitters_and_a_hundred_readers_for_thirty_seconds_on_sqlite() {
    on_sqlite(twenty_submitters_and_a_hundred_readers_for_thirty_seconds).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_submitters_and_a_hundred_readers_for_thirty_seconds_on_postgres() {
    on_postgres(twenty_submitters_and_a_hundred_readers_for_thirty_seconds).await;
}

async fn twenty_submitters_and_a_hundred_readers_for_thirty_seconds(backend: Backend, blobs: PathBuf) {
    let key = SecretKey::generate();
    let store = Store::open(&backend, &blobs).await.unwrap();
    store.add_key(&key.public_key(), "load", Tier::Submitter).await.unwrap();
    crate::harness::know_test_set(&store).await;
    let files = tempfile::tempdir().unwrap();
    // Twenty at once: the cap on ingests at once has its own test.
    let server = Server::start_with(&backend, &blobs, &[("REXBENCH_CONCURRENT_INGESTS", "32")]);
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = Arc::new(Mutex::new(BTreeSet::new()));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let reads = Arc::new(AtomicUsize::new(0));
    let mut threads = Vec::new();
    for s in 0..20 {
        let path = files.path().join(format!("s{s}"));
        std::fs::create_dir_all(&path).unwrap();
        let (url, stop, acknowledged, errors, key) = (
            server.url.clone(),
            stop.clone(),
            acknowledged.clone(),
            errors.clone(),
            SecretKey::from_pem(&key.to_pem()).unwrap(),
        );
        threads.push(std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let file = bundle_file(&key, &format!("load-{s:02}-{n:04}"), 36, &path);
                n += 1;
                match runner::submit::submit(&file, &url) {
                    Ok(runner::submit::Verdict::Accepted { body, .. }) => {
                        acknowledged.lock().unwrap().insert(body["bundle_id"].as_str().unwrap().to_owned());
                    }
                    other => errors.lock().unwrap().push(format!("submit: {other:?}")),
                }
            }
        }));
    }
    for r in 0..100 {
        let (url, stop, errors, reads) = (server.url.clone(), stop.clone(), errors.clone(), reads.clone());
        threads.push(std::thread::spawn(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
            let paths = ["/api/v1/leaderboard", "/leaderboard.csv", "/api/v1/changes", "/api/v1/tasks", "/"];
            while !stop.load(Ordering::Relaxed) {
                let path = paths[r % paths.len()];
                match agent.get(&format!("{url}{path}")).call() {
                    Ok(mut resp) if resp.status().as_u16() < 500 => {
                        let _ = resp.body_mut().read_to_vec();
                        reads.fetch_add(1, Ordering::Relaxed);
                    }
                    other => {
                        errors.lock().unwrap().push(format!("GET {path}: {:?}", other.map(|r| r.status())))
                    }
                }
            }
        }));
    }
    std::thread::sleep(Duration::from_secs(30));
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let errors = errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "{} failures, e.g. {:?}", errors.len(), &errors[..errors.len().min(5)]);
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() >= 20, "only {} bundles went in", acknowledged.len());
    assert!(reads.load(Ordering::Relaxed) >= 100);
    server.kill();
    assert_consistent(&store, &acknowledged).await;
    eprintln!(
        "{}: {} bundles ingested, {} reads",
        database_url(&backend).split(':').next().unwrap(),
        acknowledged.len(),
        reads.load(Ordering::Relaxed)
    );
}

/// One server process caches its pages; another process (`rexbench-server import`)
/// ingests a bundle into the same database; the server shows it within its poll.
#[tokio::test(flavor = "multi_thread")]
async fn ingests_by_another_process_invalidate_the_render_cache() {
    for_each_backend(|backend, blobs| async move {
        let store = Store::open(&backend, &blobs).await.unwrap();
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team", Tier::Maintainer).await.unwrap();
        crate::harness::know_test_set(&store).await;
        let dir = tempfile::tempdir().unwrap();
        let first = bundle_file(&key, "agent-first", 12, dir.path());
        let second = bundle_file(&key, "agent-second", 12, dir.path());
        let server = Server::start(&backend, &blobs);
        let page = |url: String| async move {
            tokio::task::spawn_blocking(move || {
                ureq::get(&url).call().unwrap().body_mut().read_to_string().unwrap()
            })
            .await
            .unwrap()
        };
        let import = |path: std::path::PathBuf| {
            let status = Command::new(env!("CARGO_BIN_EXE_rexbench-server"))
                .arg("import")
                .arg(path)
                .env("DATABASE_URL", database_url(&backend))
                .env("REXBENCH_BLOBS", &blobs)
                .env("REXBENCH_TASKS", crate::harness::repo().join("tasks"))
                .env("RUST_LOG", "warn")
                .stdout(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
        };
        import(first);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !page(format!("{}/", server.url)).await.contains("agent-first") {
            assert!(Instant::now() < deadline, "the first import never showed");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Cached now; the second import comes from another process.
        assert!(!page(format!("{}/", server.url)).await.contains("agent-second"));
        import(second);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !page(format!("{}/", server.url)).await.contains("agent-second") {
            assert!(Instant::now() < deadline, "the cache kept serving the old page");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
}

/// The value of the metric `name` (a line `name value`) on the server at `url`.
fn metric(url: &str, name: &str) -> f64 {
    let (status, body) = fetch(&format!("{url}/metrics"));
    assert_eq!(status, 200);
    let text = String::from_utf8(body).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no `{name}` in\n{text}"))
}

/// The board's reads (the leaderboard's rows, task sets and statistics) are made at a
/// start (before `/readyz` says ready) and again after each change, before anyone asks: the leaderboard's views, its
/// CSV and its API answers, rendered afresh (the render cache off), then make none
/// themselves. With `REXBENCH_WARM=off` the same requests make them, so the count is
/// one that moves.
#[tokio::test(flavor = "multi_thread")]
async fn the_boards_reads_are_made_ready_at_a_start_and_after_each_change() {
    for_each_backend(|backend, blobs| async move {
        let store = Store::open(&backend, &blobs).await.unwrap();
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team", Tier::Maintainer).await.unwrap();
        crate::harness::know_test_set(&store).await;
        let dir = tempfile::tempdir().unwrap();
        let paths = [
            "/",
            "/?tasks=public",
            "/leaderboard.csv",
            "/api/v1/leaderboard",
            "/api/v1/leaderboard?tasks=public",
        ];
        let read_all = |url: String| async move {
            tokio::task::spawn_blocking(move || {
                for path in paths {
                    let (status, _) = fetch(&format!("{url}{path}"));
                    assert_eq!(status, 200, "{path}");
                }
            })
            .await
            .unwrap()
        };
        // Until the server says its reads are made at the change log's position.
        let ready = |url: String| {
            let store = &store;
            async move {
                let deadline = Instant::now() + Duration::from_secs(120);
                loop {
                    let generation = store.generation().await.unwrap() as f64;
                    let at = {
                        let url = url.clone();
                        tokio::task::spawn_blocking(move || metric(&url, "rexbench_board_ready_generation"))
                            .await
                            .unwrap()
                    };
                    if at == generation {
                        return;
                    }
                    assert!(Instant::now() < deadline, "never made ready at {generation}: at {at}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        };
        let made = |url: String| async move {
            tokio::task::spawn_blocking(move || metric(&url, "rexbench_board_reads_made_total"))
                .await
                .unwrap()
        };
        let first = bundle_file(&key, "agent-first", 12, dir.path());
        let second = bundle_file(&key, "agent-second", 12, dir.path());
        assert!(matches!(
            runner::submit::submit(&first, &Server::start(&backend, &blobs).url).unwrap(),
            runner::submit::Verdict::Accepted { .. }
        ));

        let server = Server::start_with(&backend, &blobs, &[("REXBENCH_RENDER_CACHE", "off")]);
        // At the start: the server says it is ready only once they are made.
        assert_eq!(
            metric(&server.url, "rexbench_board_ready_generation"),
            store.generation().await.unwrap() as f64,
            "ready before the board was"
        );
        let before = made(server.url.clone()).await;
        assert!(before > 0.0, "nothing was made at the start");
        let generation = store.generation().await.unwrap();
        read_all(server.url.clone()).await;
        assert_eq!(store.generation().await.unwrap(), generation, "the data changed meanwhile");
        assert_eq!(made(server.url.clone()).await, before, "a request made a read the start did not");
        // After a change.
        let url = server.url.clone();
        let verdict = tokio::task::spawn_blocking(move || runner::submit::submit(&second, &url).unwrap())
            .await
            .unwrap();
        assert!(matches!(verdict, runner::submit::Verdict::Accepted { .. }));
        ready(server.url.clone()).await;
        let before = made(server.url.clone()).await;
        read_all(server.url.clone()).await;
        assert_eq!(
            made(server.url.clone()).await,
            before,
            "a request made a read the change's round did not"
        );
        drop(server);

        let cold = Server::start_with(
            &backend,
            &blobs,
            &[("REXBENCH_RENDER_CACHE", "off"), ("REXBENCH_WARM", "off")],
        );
        assert_eq!(metric(&cold.url, "rexbench_board_ready_generation"), -1.0);
        assert_eq!(made(cold.url.clone()).await, 0.0);
        read_all(cold.url.clone()).await;
        assert!(made(cold.url.clone()).await > 0.0, "the requests made nothing without the warm-up");
        // The start's garbage collection says when it has ended (the benchmarks wait for it).
        let deadline = Instant::now() + Duration::from_secs(120);
        while metric(&cold.url, "rexbench_start_collection_pending") != 0.0 {
            assert!(Instant::now() < deadline, "the start's collection never ended");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
}
