//! Scaling out: two `rexbench-server` processes on one PostgreSQL database and one S3
//! bucket, as the README's deployment has them. What one ingests the other shows and
//! serves; killing the one ingesting loses nothing it acknowledged and stores nothing
//! half.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bundle::SecretKey;
use store::testing::{S3Server, on_postgres};
use store::{Store, Tier};

use crate::process::{Server, assert_consistent, bundle_file, fetch};

/// The two servers' environment: the bucket, and a staging directory each.
fn env_for(s3: &S3Server, staging: &Path) -> Vec<(String, String)> {
    let mut env = s3.env();
    env.push(("REXBENCH_STAGING".into(), staging.display().to_string()));
    // A maintainer reads the private outputs either server serves.
    env.push(("REXBENCH_ADMIN_TOKEN".into(), "s3cret-token".into()));
    env
}

fn start(backend: &store::Backend, env: &[(String, String)]) -> Server {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Server::start_args(&["serve"], backend, Path::new("unused"), &env)
}

fn submit(path: &Path, url: &str) -> String {
    match runner::submit::submit(path, url).unwrap() {
        runner::submit::Verdict::Accepted { body, .. } => body["bundle_id"].as_str().unwrap().to_owned(),
        other => panic!("refused: {other:?}"),
    }
}

/// Polls `url` until its body contains `text`; how long that took.
fn until_shown(url: &str, text: &str) -> Duration {
    let started = Instant::now();
    loop {
        let (status, body) = fetch(url);
        if status == 200 && String::from_utf8_lossy(&body).contains(text) {
            return started.elapsed();
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{url} never showed {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_servers_on_one_database_and_one_bucket() {
    on_postgres(|backend, _| async move {
        let s3 = S3Server::start();
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_with(&backend, s3.blobs(&dir.path().join("test-staging"))).await.unwrap();
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team", Tier::Submitter).await.unwrap();
        crate::harness::know_test_set(&store).await;
        let (env_a, env_b) = (env_for(&s3, &dir.path().join("a")), env_for(&s3, &dir.path().join("b")));
        let a = start(&backend, &env_a);
        let b = start(&backend, &env_b);

        // B has the leaderboard cached without the agent; A ingests it.
        let board = format!("{}/", b.url);
        assert!(!String::from_utf8_lossy(&fetch(&board).1).contains("agent-shared"));
        let file = bundle_file(&key, "agent-shared", 36, dir.path());
        let bundle_id = submit(&file, &a.url);
        // Other processes' ingests reach a server's render cache through its poll of the
        // change log, once a second: within a poll and a render, not a second poll.
        let shown = until_shown(&board, "agent-shared");
        eprintln!("A's ingest on B's leaderboard after {shown:?}");
        assert!(shown < Duration::from_millis(1900), "B showed A's ingest after {shown:?}");
        until_shown(&format!("{}/api/v1/agents/agent-shared", b.url), &bundle_id);
        // B serves the artifacts A placed.
        let runs = store.runs_of(&bundle_id, None, None).await.unwrap();
        for run in runs.iter().take(5) {
            for artifact in store.run(run.id).await.unwrap().unwrap().artifacts {
                let (status, bytes) = crate::process::fetch_as(
                    &format!("{}/artifacts/{}", b.url, artifact.digest),
                    "s3cret-token",
                );
                assert_eq!(status, 200);
                assert_eq!(bundle::Digest::of(&bytes).to_hex(), artifact.digest);
            }
        }
        drop(a);

        // A is killed, again and again, while four clients submit to it; B serves on.
        let bundles: Vec<_> =
            (0..60).map(|i| bundle_file(&key, &format!("agent-{i:02}"), 36, dir.path())).collect();
        let acknowledged = Arc::new(Mutex::new(BTreeSet::from([bundle_id])));
        let next = Arc::new(AtomicUsize::new(0));
        let mut cut_short = 0;
        for round in 0..5u64 {
            let a = start(&backend, &env_a);
            let cut = Arc::new(AtomicUsize::new(0));
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    let (url, bundles, acknowledged, next, cut) =
                        (a.url.clone(), bundles.clone(), acknowledged.clone(), next.clone(), cut.clone());
                    std::thread::spawn(move || {
                        while let Some(path) = bundles.get(next.fetch_add(1, Ordering::Relaxed)) {
                            match runner::submit::submit(path, &url) {
                                Ok(runner::submit::Verdict::Accepted { body, .. }) => {
                                    let id = body["bundle_id"].as_str().unwrap().to_owned();
                                    acknowledged.lock().unwrap().insert(id);
                                }
                                Ok(other) => panic!("refused: {other:?}"),
                                Err(_) => {
                                    cut.fetch_add(1, Ordering::Relaxed);
                                    return;
                                }
                            }
                        }
                    })
                })
                .collect();
            let had = acknowledged.lock().unwrap().len();
            let deadline = Instant::now() + Duration::from_secs(30);
            while acknowledged.lock().unwrap().len() == had {
                assert!(Instant::now() < deadline, "round {round}: nothing was stored");
                std::thread::sleep(Duration::from_millis(2));
            }
            std::thread::sleep(Duration::from_millis(round * 13 % 40));
            a.kill();
            for w in workers {
                w.join().unwrap();
            }
            cut_short += usize::from(cut.load(Ordering::Relaxed) > 0);
        }
        assert!(cut_short >= 3, "only {cut_short} of 5 kills cut an ingest short");
        let acknowledged = acknowledged.lock().unwrap().clone();
        assert_consistent(&store, &acknowledged).await;
        // Every acknowledged bundle is on B, which never stopped, within its poll.
        let stored: BTreeSet<String> = store
            .leaderboard(&store::LeaderboardFilter::default())
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.bundle_id)
            .collect();
        assert!(stored.is_superset(&acknowledged));
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let (status, body) = fetch(&format!("{}/api/v1/leaderboard", b.url));
            assert_eq!(status, 200);
            let board: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let listed: BTreeSet<String> = board["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["bundle_id"].as_str().unwrap().to_owned())
                .collect();
            if listed == stored {
                break;
            }
            assert!(Instant::now() < deadline, "B lists {} of {} stored bundles", listed.len(), stored.len());
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(b);
    })
    .await;
}
