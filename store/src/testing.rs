//! Test helpers: a fresh database per test, on each backend. SQLite always; PostgreSQL
//! when `TEST_DATABASE_URL` names a server (a new database is created on it and dropped
//! afterwards); with `CI=true` and no `TEST_DATABASE_URL`, a failure rather than a skip.

use std::future::Future;
use std::path::Path;

use std::sync::Arc;

use futures::TryStreamExt;
use object_store::memory::InMemory;
use sqlx::Connection;

use crate::{Backend, Blobs, Store};

/// Runs `test` on a fresh SQLite database with blobs in a directory, again with blobs in
/// an (in-memory) object store, then on a fresh PostgreSQL database.
pub async fn on_each_backend<F, Fut>(test: F)
where
    F: Fn(Store) -> Fut,
    Fut: Future<Output = ()>,
{
    for_each_backend(|backend, blobs| {
        let test = &test;
        async move { test(Store::open(&backend, &blobs).await.expect("a fresh store opens")).await }
    })
    .await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let objects = Blobs::object_store(Arc::new(InMemory::new()), &dir.path().join("staging"))
        .expect("a staging directory");
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    test(Store::open_with(&backend, objects).await.expect("a fresh store opens")).await;
}

/// Like [`on_each_backend`], handing over the backend and a blob directory instead of
/// an open store (for tests that start a server process on them).
pub async fn for_each_backend<F, Fut>(test: F)
where
    F: Fn(Backend, std::path::PathBuf) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().expect("a temporary directory");
    test(Backend::Sqlite { path: dir.path().join("db.sqlite") }, dir.path().join("blobs-sqlite")).await;
    match std::env::var("TEST_DATABASE_URL") {
        Ok(url) => {
            let (backend, name) = fresh_postgres(&url).await;
            test(backend, dir.path().join("blobs-pg")).await;
            drop_postgres(&url, &name).await;
        }
        Err(_) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI must test PostgreSQL too, but TEST_DATABASE_URL is not set")
        }
        Err(_) => {}
    }
}

async fn fresh_postgres(url: &str) -> (Backend, String) {
    sqlx::any::install_default_drivers();
    let unique = format!("{:?}{}", std::time::SystemTime::now(), std::process::id());
    let name = format!("rexbench_test_{}", &bundle::Digest::of(unique.as_bytes()).to_hex()[..16]);
    let mut admin = sqlx::AnyConnection::connect(url).await.expect("TEST_DATABASE_URL must reach PostgreSQL");
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.expect("CREATE DATABASE");
    let base = url.rsplit_once('/').map(|(b, _)| b).unwrap_or(url);
    (Backend::Postgres { url: format!("{base}/{name}") }, name)
}

async fn drop_postgres(url: &str, name: &str) {
    let mut admin = sqlx::AnyConnection::connect(url).await.expect("TEST_DATABASE_URL must reach PostgreSQL");
    sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .execute(&mut admin)
        .await
        .expect("DROP DATABASE");
}

/// How many files are under `dir` (0 if it does not exist).
pub fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.expect("a directory entry").path())
                .map(|p| if p.is_dir() { count_files(&p) } else { 1 })
                .sum()
        })
        .unwrap_or(0)
}

/// The bytes of the blob `digest`, however the store keeps them.
pub async fn blob_bytes(blobs: &Blobs, digest: &bundle::Digest) -> std::io::Result<Vec<u8>> {
    let chunks: Vec<_> = blobs.read(digest).await?.try_collect().await?;
    Ok(chunks.concat())
}

/// How many blobs the store holds.
pub async fn count_blobs(blobs: &Blobs) -> usize {
    blobs.list_older_than(std::time::Duration::ZERO).await.expect("blobs can be listed").len()
}
