//! Test helpers: a fresh database per test, on each backend. SQLite always; PostgreSQL
//! when `TEST_DATABASE_URL` names a server (a new database is created on it and dropped
//! afterwards); with `CI=true` and no `TEST_DATABASE_URL`, a failure rather than a skip.
//! Blobs in a directory, and in a real S3 server ([`S3Server`]).

use std::future::Future;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use sqlx::Connection;

use crate::{Backend, Blobs, Store};

/// Runs `test` on a fresh SQLite database with blobs in a directory, again with blobs in
/// a real S3 server, then on a fresh PostgreSQL database.
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
    let s3 = S3Server::start();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    test(
        Store::open_with(&backend, s3.blobs(&dir.path().join("staging"))).await.expect("a fresh store opens"),
    )
    .await;
}

/// A real S3 server on 127.0.0.1 that checks every request's signature: `s3s-fs`, which
/// `scripts/setup` installs (at a pinned version), serving a fresh directory with one
/// bucket, [`S3Server::BUCKET`]. Stopped when dropped.
#[derive(Debug)]
pub struct S3Server {
    child: Option<Child>,
    root: tempfile::TempDir,
    pub port: u16,
}

impl S3Server {
    pub const BUCKET: &str = "rexbench-blobs";
    pub const ACCESS_KEY: &str = "rexbench-test-key";
    pub const SECRET_KEY: &str = "rexbench-test-secret-0123456789";

    pub fn start() -> S3Server {
        let root = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir(root.path().join(Self::BUCKET)).expect("the bucket's directory");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut s3 = S3Server { child: None, root, port };
        s3.restart();
        s3
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The directory the server keeps its buckets in.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// Starts the server again on the same port and directory (after [`S3Server::stop`]).
    pub fn restart(&mut self) {
        let binary = std::env::var_os("S3S_FS").map(PathBuf::from).unwrap_or_else(|| "s3s-fs".into());
        let child = Command::new(&binary)
            .args(["--host", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--access-key", Self::ACCESS_KEY, "--secret-key", Self::SECRET_KEY])
            .arg(self.root.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{}: {e}; scripts/setup installs s3s-fs for the S3 tests", binary.display())
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "s3s-fs did not start listening");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Kills the server at once (SIGKILL), as a crash or a cut network would.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The variables a server process reads to reach this store (`AWS_*`) with
    /// `secret` as its secret key, and the `REXBENCH_BLOBS` URL of `bucket`.
    pub fn env_with(&self, bucket: &str, secret: &str) -> Vec<(String, String)> {
        [
            ("REXBENCH_BLOBS", format!("s3://{bucket}/artifacts")),
            ("AWS_ENDPOINT", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
            ("AWS_ACCESS_KEY_ID", Self::ACCESS_KEY.to_owned()),
            ("AWS_SECRET_ACCESS_KEY", secret.to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// [`S3Server::env_with`] the bucket and the right secret.
    pub fn env(&self) -> Vec<(String, String)> {
        self.env_with(Self::BUCKET, Self::SECRET_KEY)
    }

    /// A client of this server with these credentials.
    pub fn builder_with(&self, secret: &str) -> AmazonS3Builder {
        AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_region("us-east-1")
            .with_access_key_id(Self::ACCESS_KEY)
            .with_secret_access_key(secret)
    }

    /// Blobs under a prefix of the bucket, staged in `staging`.
    pub fn blobs(&self, staging: &Path) -> Blobs {
        self.blobs_in(Self::BUCKET, Self::SECRET_KEY, staging)
    }

    /// Blobs in `bucket` with `secret` (wrong ones, for the tests of what fails).
    pub fn blobs_in(&self, bucket: &str, secret: &str, staging: &Path) -> Blobs {
        Blobs::s3(&format!("s3://{bucket}/artifacts"), staging, self.builder_with(secret))
            .expect("an S3 client configures")
    }

    /// How many objects the bucket holds (files under its directory; s3s-fs keeps its
    /// own bookkeeping in dot-files, which are not objects).
    pub fn objects(&self) -> usize {
        fn count(dir: &Path) -> usize {
            std::fs::read_dir(dir)
                .map(|rd| {
                    rd.map(|e| e.expect("a directory entry").path())
                        .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
                        .map(|p| if p.is_dir() { count(&p) } else { 1 })
                        .sum()
                })
                .unwrap_or(0)
        }
        count(&self.root.path().join(Self::BUCKET))
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Like [`on_each_backend`], handing over the backend and a blob directory instead of
/// an open store (for tests that start a server process on them): [`on_sqlite`], then
/// [`on_postgres`].
pub async fn for_each_backend<F, Fut>(test: F)
where
    F: Fn(Backend, PathBuf) -> Fut,
    Fut: Future<Output = ()>,
{
    on_sqlite(&test).await;
    on_postgres(&test).await;
}

/// Runs `test` on a fresh SQLite database and a blob directory. With [`on_postgres`],
/// the halves of [`for_each_backend`] for a test long enough that its two should be
/// test functions of their own, run side by side.
pub async fn on_sqlite<F, Fut>(test: F)
where
    F: FnOnce(Backend, PathBuf) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().expect("a temporary directory");
    test(Backend::Sqlite { path: dir.path().join("db.sqlite") }, dir.path().join("blobs")).await;
}

/// Runs `test` on a fresh PostgreSQL database (what several servers share) and a blob
/// directory; without `TEST_DATABASE_URL`, nothing, except under CI, where that is a
/// failure.
pub async fn on_postgres<F, Fut>(test: F)
where
    F: FnOnce(Backend, PathBuf) -> Fut,
    Fut: Future<Output = ()>,
{
    match std::env::var("TEST_DATABASE_URL") {
        Ok(url) => {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let (backend, name) = fresh_postgres(&url).await;
            test(backend, dir.path().join("blobs")).await;
            drop_postgres(&url, &name).await;
        }
        Err(_) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI must test PostgreSQL too, but TEST_DATABASE_URL is not set")
        }
        Err(_) => eprintln!("TEST_DATABASE_URL is not set: this PostgreSQL test did nothing"),
    }
}

/// A new, empty database on the PostgreSQL server of `url`, and its name.
pub async fn fresh_postgres(url: &str) -> (Backend, String) {
    sqlx::any::install_default_drivers();
    let unique = format!("{:?}{}", std::time::SystemTime::now(), std::process::id());
    let name = format!("rexbench_test_{}", &bundle::Digest::of(unique.as_bytes()).to_hex()[..16]);
    let mut admin = sqlx::AnyConnection::connect(url).await.expect("TEST_DATABASE_URL must reach PostgreSQL");
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.expect("CREATE DATABASE");
    let base = url.rsplit_once('/').map(|(b, _)| b).unwrap_or(url);
    (Backend::Postgres { url: format!("{base}/{name}") }, name)
}

/// Drops a database [`fresh_postgres`] made.
pub async fn drop_postgres(url: &str, name: &str) {
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
    blobs.list().await.expect("blobs can be listed").len()
}
