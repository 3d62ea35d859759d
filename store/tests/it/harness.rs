//! A fresh database per test, on each backend.

use std::future::Future;
use std::path::Path;

use bundle::{BundleBuilder, Hint, Manifest, Outcome, SecretKey};
use serde_json::json;
use sqlx::Connection;
use store::{Backend, Store};

/// Runs `test` once on a fresh SQLite database and once on a fresh PostgreSQL database.
pub async fn on_each_backend<F, Fut>(test: F)
where
    F: Fn(Store) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    test(Store::open(&sqlite, &dir.path().join("blobs-sqlite")).await.unwrap()).await;

    match std::env::var("TEST_DATABASE_URL") {
        Ok(url) => {
            let (backend, cleanup) = fresh_postgres(&url).await;
            test(Store::open(&backend, &dir.path().join("blobs-pg")).await.unwrap()).await;
            cleanup.await;
        }
        Err(_) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI must test PostgreSQL too, but TEST_DATABASE_URL is not set")
        }
        Err(_) => {}
    }
}

/// A new database on the server at `url`, and a future that drops it.
async fn fresh_postgres(url: &str) -> (Backend, impl Future<Output = ()>) {
    sqlx::any::install_default_drivers();
    let name = format!(
        "rexbench_test_{}",
        bundle::Digest::of(
            &std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
                .to_le_bytes()
        )
        .to_hex()[..16]
            .to_owned()
    );
    let mut admin = sqlx::AnyConnection::connect(url).await.expect("TEST_DATABASE_URL must reach PostgreSQL");
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.unwrap();
    let base = url.rsplit_once('/').map(|(b, _)| b).unwrap_or(url);
    let backend = Backend::Postgres { url: format!("{base}/{name}") };
    let url = url.to_owned();
    let cleanup = async move {
        let mut admin = sqlx::AnyConnection::connect(&url).await.unwrap();
        sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)")).execute(&mut admin).await.unwrap();
    };
    (backend, cleanup)
}

/// A signed bundle for `agent`: `runs` runs of `cogs` with no hints, the first `ok`
/// of them successful, one patch artifact each.
pub fn bundle(key: &SecretKey, agent: &str, created_at: &str, runs: u32, ok: u32) -> Vec<u8> {
    let manifest: Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1",
        "created_at": created_at,
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "rexbench-runner", "version": "0.1.0"},
        "provenance": {"kind": "evaluated"},
        "agent": {"id": agent, "framework": "OpenHands", "model": "Claude 4 Sonnet"},
        "runs": [],
    }))
    .unwrap();
    let mut b = BundleBuilder::new(manifest);
    for attempt in 1..=runs {
        let patch = b
            .add_bytes(format!("--- a/x.py\n+++ b/x.py\n@@ attempt {attempt}\n").into_bytes(), "text/x-diff");
        let log = b.add_bytes(b"shared log\n".to_vec(), "text/plain");
        b.manifest_mut().runs.push(bundle::Run {
            task: "cogs".into(),
            hint: Hint::None,
            attempt,
            outcome: if attempt <= ok { Outcome::Success } else { Outcome::WrongResult },
            error_type: None,
            file_recall: Some(0.5),
            files_changed: Some(vec!["x.py".into()]),
            duration_s: Some(1.5),
            cost_usd: None,
            metrics: [("acc".to_owned(), 0.25)].into(),
            artifacts: [("patch".to_owned(), patch.to_hex()), ("agent_log".to_owned(), log.to_hex())].into(),
        });
    }
    let mut out = Vec::new();
    b.write(&[key], &mut out).unwrap();
    out
}

/// Verifies `bytes` against the store's registry and ingests it, as the server does.
pub async fn submit(store: &Store, bytes: &[u8]) -> Result<store::Ingested, store::StoreError> {
    let keys: Vec<_> = store.trusted_keys().await.unwrap().into_iter().map(|(k, _)| k).collect();
    let verifier = bundle::Verifier::new(keys, bundle::REXBENCH_TASKS);
    let mut staging = store.blobs().stage();
    let verified = verifier.verify_into(bytes, &mut staging).expect("a valid bundle");
    store.ingest(&verified, staging).await
}

pub fn count_files(dir: &Path) -> usize {
    walk(dir)
}

fn walk(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| rd.map(|e| e.unwrap().path()).map(|p| if p.is_dir() { walk(&p) } else { 1 }).sum())
        .unwrap_or(0)
}
