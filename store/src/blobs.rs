//! Where artifact bytes live, content-addressed (`ab/abcdef…`): a local directory (the
//! default), or an object store such as S3 when several server machines share them.
//!
//! Either way a bundle's artifacts are first staged as local files while it is being
//! verified, and placed only when its transaction is about to commit, so a refused
//! bundle leaves nothing. A crash between placing and committing leaves blobs no row
//! refers to; [`crate::Store::collect_garbage`] removes them, and staged files, later.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
#[cfg(feature = "s3")]
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bundle::{ArtifactInfo, ArtifactSink, Digest};
#[cfg(feature = "s3")]
use futures::stream::TryStreamExt;
use futures::stream::{BoxStream, StreamExt};
#[cfg(feature = "s3")]
use object_store::aws::AmazonS3Builder;
#[cfg(feature = "s3")]
use object_store::path::Path as ObjectPath;
#[cfg(feature = "s3")]
use object_store::{ObjectStore, ObjectStoreExt, RetryConfig};

use crate::StoreError;

/// Bytes of a blob as they arrive.
pub type BlobStream = BoxStream<'static, io::Result<bytes::Bytes>>;

/// Where the blobs are, as configured (`REXBENCH_BLOBS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobLocation {
    /// A local directory; staged files go to its `tmp/`.
    Dir(PathBuf),
    /// `s3://bucket[/prefix]`: region, endpoint (for S3-compatible services) and
    /// credentials come from the usual `AWS_*` variables; staged files go to `staging`.
    S3 { url: String, staging: PathBuf },
}

impl BlobLocation {
    /// `s3://…` names an object store, anything else a directory.
    pub fn parse(location: &str, staging: &Path) -> BlobLocation {
        if location.starts_with("s3://") {
            BlobLocation::S3 { url: location.to_owned(), staging: staging.to_owned() }
        } else {
            BlobLocation::Dir(location.into())
        }
    }
}

impl fmt::Display for BlobLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlobLocation::Dir(dir) => write!(f, "{}", dir.display()),
            BlobLocation::S3 { url, .. } => f.write_str(url),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Blobs {
    /// Local files of bundles being verified.
    staging: PathBuf,
    place: Place,
}

#[derive(Debug, Clone)]
enum Place {
    Dir(PathBuf),
    #[cfg(feature = "s3")]
    Objects(Arc<dyn ObjectStore>),
}

impl Blobs {
    pub fn open(location: &BlobLocation) -> io::Result<Blobs> {
        match location {
            BlobLocation::Dir(dir) => Blobs::dir(dir),
            #[cfg(feature = "s3")]
            BlobLocation::S3 { url, staging } => Blobs::s3(url, staging, AmazonS3Builder::from_env()),
            #[cfg(not(feature = "s3"))]
            BlobLocation::S3 { url, .. } => Err(not_built(url)),
        }
    }

    /// Blobs at `url` (`s3://bucket[/prefix]`) of the S3 service `builder` describes
    /// (endpoint, region, credentials, timeouts), staged in `staging`.
    ///
    /// A request is tried at most [`S3_TRIES`] times within [`S3_RETRY_WINDOW`]: a store
    /// that is down makes an ingest fail in seconds, not in the client library's default
    /// three minutes, while a blip is ridden out.
    #[cfg(feature = "s3")]
    pub fn s3(url: &str, staging: &Path, builder: AmazonS3Builder) -> io::Result<Blobs> {
        // Installing the process's TLS provider fails harmlessly if one is set.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let retry = RetryConfig {
            max_retries: S3_TRIES - 1,
            retry_timeout: S3_RETRY_WINDOW,
            ..RetryConfig::default()
        };
        let s3 = builder
            .with_url(url)
            .with_retry(retry)
            .build()
            .map_err(|e| io::Error::other(format!("{url}: {e}")))?;
        let prefix = url.trim_start_matches("s3://").split_once('/').map_or("", |(_, p)| p);
        let store: Arc<dyn ObjectStore> = if prefix.trim_matches('/').is_empty() {
            Arc::new(s3)
        } else {
            Arc::new(object_store::prefix::PrefixStore::new(s3, prefix.trim_matches('/')))
        };
        Blobs::object_store(store, staging)
    }

    /// Whether the blobs can be reached: the directory exists, or the object store
    /// answers a listing of the prefix with these credentials. Said at start-up and by
    /// `/readyz`, so a wrong bucket or key shows before the first submission.
    pub async fn check(&self) -> io::Result<()> {
        match &self.place {
            Place::Dir(root) => tokio::fs::metadata(root).await.map(drop),
            #[cfg(feature = "s3")]
            Place::Objects(store) => {
                // A listing of nothing in particular: one request, whatever the bucket holds.
                let probe = ObjectPath::from("rexbench-readiness-probe");
                store.list_with_delimiter(Some(&probe)).await.map(drop).map_err(io_error)
            }
        }
    }

    /// Blobs in the directory `root`.
    pub fn dir(root: &Path) -> io::Result<Blobs> {
        fs::create_dir_all(root.join("tmp"))?;
        Ok(Blobs { staging: root.join("tmp"), place: Place::Dir(root.to_owned()) })
    }

    /// Blobs in `store`, staged in the local directory `staging`.
    #[cfg(feature = "s3")]
    pub fn object_store(store: Arc<dyn ObjectStore>, staging: &Path) -> io::Result<Blobs> {
        fs::create_dir_all(staging)?;
        Ok(Blobs { staging: staging.to_owned(), place: Place::Objects(store) })
    }

    /// Where staged files are written.
    pub fn staging_dir(&self) -> &Path {
        &self.staging
    }

    /// A sink that stages each artifact of one bundle.
    pub fn stage(&self) -> Staging {
        Staging { blobs: self.clone(), dir: None, staged: Vec::new() }
    }

    /// The bytes of a blob, or `NotFound`.
    pub async fn read(&self, digest: &Digest) -> io::Result<BlobStream> {
        match &self.place {
            Place::Dir(root) => {
                let file = tokio::fs::File::open(file_path(root, digest)).await?;
                // Chunks of 64 KiB: each read of a file is a task on the blocking pool.
                Ok(tokio_util::io::ReaderStream::with_capacity(file, 64 * 1024).boxed())
            }
            #[cfg(feature = "s3")]
            Place::Objects(store) => {
                let got = store.get(&object_path(digest)).await.map_err(io_error)?;
                Ok(got.into_stream().map_err(io_error).boxed())
            }
        }
    }

    /// Whether a blob is stored.
    pub async fn contains(&self, digest: &Digest) -> io::Result<bool> {
        match &self.place {
            Place::Dir(root) => tokio::fs::try_exists(file_path(root, digest)).await,
            #[cfg(feature = "s3")]
            Place::Objects(store) => match store.head(&object_path(digest)).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::NotFound { .. }) => Ok(false),
                Err(e) => Err(io_error(e)),
            },
        }
    }

    /// Stores `bytes` directly, outside any ingest: for repairs and tests.
    pub async fn put(&self, bytes: &[u8]) -> io::Result<Digest> {
        let digest = Digest::of(bytes);
        match &self.place {
            Place::Dir(root) => {
                let path = file_path(root, &digest);
                tokio::fs::create_dir_all(path.parent().expect("has a parent")).await?;
                tokio::fs::write(path, bytes).await?;
            }
            #[cfg(feature = "s3")]
            Place::Objects(store) => {
                store.put(&object_path(&digest), bytes.to_vec().into()).await.map_err(io_error)?;
            }
        }
        Ok(digest)
    }

    /// Flushes what was placed without [`Staging::publish_all`]'s flush (a bulk load)
    /// to disk. An object store's writes are durable when they are acknowledged.
    pub async fn flush(&self) -> io::Result<()> {
        match &self.place {
            Place::Dir(root) => {
                let root = root.clone();
                tokio::task::spawn_blocking(move || durable(&root, &[])).await?
            }
            #[cfg(feature = "s3")]
            Place::Objects(_) => Ok(()),
        }
    }

    /// The digest of every blob, by name alone: nothing is read of each but its
    /// directory entry.
    pub async fn list(&self) -> io::Result<Vec<Digest>> {
        match &self.place {
            Place::Dir(root) => {
                let root = root.clone();
                tokio::task::spawn_blocking(move || list_names(&root)).await?
            }
            #[cfg(feature = "s3")]
            Place::Objects(store) => {
                let mut out = Vec::new();
                let mut listing = store.list(None);
                while let Some(meta) = listing.next().await {
                    out.extend(meta.map_err(io_error)?.location.filename().and_then(Digest::from_hex));
                }
                Ok(out)
            }
        }
    }

    /// Whether the blob `digest` was last written more than `age` ago; false if it is
    /// gone.
    pub async fn older_than(&self, digest: &Digest, age: Duration) -> io::Result<bool> {
        match &self.place {
            Place::Dir(root) => match older_than(&file_path(root, digest), age) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
                other => other,
            },
            #[cfg(feature = "s3")]
            Place::Objects(store) => match store.head(&object_path(digest)).await {
                Ok(meta) => Ok(SystemTime::now()
                    .duration_since(SystemTime::from(meta.last_modified))
                    .unwrap_or_default()
                    >= age),
                Err(object_store::Error::NotFound { .. }) => Ok(false),
                Err(e) => Err(io_error(e)),
            },
        }
    }

    /// Removes what staging left older than `age`: it belongs to ingests that never
    /// finished (a process killed mid-ingest).
    pub fn clear_staging(&self, age: Duration) -> io::Result<usize> {
        let mut n = 0;
        for entry in fs::read_dir(&self.staging)? {
            let entry = entry?;
            let path = entry.path();
            if older_than(&path, age)? {
                if entry.file_type()?.is_dir() {
                    fs::remove_dir_all(path)?;
                } else {
                    fs::remove_file(path)?;
                }
                n += 1;
            }
        }
        Ok(n)
    }

    pub async fn remove(&self, digest: &Digest) -> io::Result<()> {
        match &self.place {
            Place::Dir(root) => tokio::fs::remove_file(file_path(root, digest)).await,
            #[cfg(feature = "s3")]
            Place::Objects(store) => store.delete(&object_path(digest)).await.map_err(io_error),
        }
    }
}

/// Why a build without the `s3` feature opens no `s3://` location.
#[cfg_attr(feature = "s3", allow(dead_code))]
fn not_built(url: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "{url}: this build has no object store (Cargo feature `s3`, on in the default build; \
             `scripts/demo` leaves it out): give a blob directory, or build with --features s3"
        ),
    )
}

/// How many times one request to an object store is tried, and within how long.
pub const S3_TRIES: usize = 4;
pub const S3_RETRY_WINDOW: Duration = Duration::from_secs(20);

fn file_path(root: &Path, digest: &Digest) -> PathBuf {
    let hex = digest.to_hex();
    root.join(&hex[..2]).join(hex)
}

#[cfg(feature = "s3")]
fn object_path(digest: &Digest) -> ObjectPath {
    let hex = digest.to_hex();
    ObjectPath::from_iter([&hex[..2], &hex])
}

#[cfg(feature = "s3")]
fn io_error(e: object_store::Error) -> io::Error {
    match e {
        object_store::Error::NotFound { .. } => io::Error::new(io::ErrorKind::NotFound, e),
        e => io::Error::other(e),
    }
}

/// The digests of the files of `root`'s two-letter folders (its `tmp` aside).
fn list_names(root: &Path) -> io::Result<Vec<Digest>> {
    let mut out = Vec::new();
    for dir in fs::read_dir(root)? {
        let dir = dir?;
        if dir.file_name() == "tmp" || !dir.file_type()?.is_dir() {
            continue;
        }
        for f in fs::read_dir(dir.path())? {
            out.extend(f?.file_name().to_str().and_then(Digest::from_hex));
        }
    }
    Ok(out)
}

/// Makes the blobs just placed, bytes and names, survive a power cut before the
/// transaction that refers to them commits. On Linux one flush of the file system
/// does it for all of them; elsewhere, each file and its directory.
#[cfg(target_os = "linux")]
fn durable(root: &Path, _placed: &[PathBuf]) -> io::Result<()> {
    nix::unistd::syncfs(File::open(root)?).map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn durable(_root: &Path, placed: &[PathBuf]) -> io::Result<()> {
    for path in placed {
        File::open(path)?.sync_all()?;
        File::open(path.parent().expect("has a parent"))?.sync_all()?;
    }
    Ok(())
}

fn older_than(path: &Path, age: Duration) -> io::Result<bool> {
    let modified = fs::metadata(path)?.modified()?;
    Ok(SystemTime::now().duration_since(modified).unwrap_or_default() >= age)
}

/// The artifacts of one bundle, staged as local files in a directory of the bundle's
/// own: creating files in a fresh directory stays fast, where a single staging
/// directory that thousands of files have passed through slows every create down
/// (20× on ext4 here). Dropped without [`Staging::publish`], they are deleted.
#[derive(Debug)]
pub struct Staging {
    blobs: Blobs,
    dir: Option<tempfile::TempDir>,
    staged: Vec<(Digest, PathBuf)>,
}

impl ArtifactSink for Staging {
    fn artifact(&mut self, digest: &Digest, _: &ArtifactInfo, content: &mut dyn Read) -> io::Result<()> {
        if let Place::Dir(root) = &self.blobs.place
            && file_path(root, digest).is_file()
        {
            // Content-addressed: the same bytes are already stored.
            return io::copy(content, &mut io::sink()).map(drop);
        }
        if self.dir.is_none() {
            self.dir = Some(tempfile::TempDir::new_in(&self.blobs.staging)?);
        }
        let dir = self.dir.as_ref().expect("just made");
        let path = dir.path().join(self.staged.len().to_string());
        let mut file = File::create_new(&path)?;
        io::copy(content, &mut file)?;
        file.flush()?;
        self.staged.push((*digest, path));
        Ok(())
    }
}

impl Staging {
    /// The bytes of an artifact of this bundle: its staged file, or the stored blob
    /// (content-addressed, so an artifact stored before is not staged again). At most
    /// `limit` bytes are read; a longer one is an `InvalidData` error.
    pub async fn read(&self, digest: &Digest, limit: u64) -> io::Result<Vec<u8>> {
        let staged = self.staged.iter().find(|(d, _)| d == digest).map(|(_, path)| path.clone());
        let local = match &self.blobs.place {
            Place::Dir(root) => Some(staged.unwrap_or_else(|| file_path(root, digest))),
            #[cfg(feature = "s3")]
            Place::Objects(_) => staged,
        };
        let bytes = if let Some(path) = local {
            // One task on the blocking pool for the whole file (tokio's files take one
            // per chunk read).
            tokio::task::spawn_blocking(move || {
                let mut bytes = Vec::new();
                File::open(path)?.take(limit + 1).read_to_end(&mut bytes)?;
                io::Result::Ok(bytes)
            })
            .await
            .map_err(io::Error::other)??
        } else {
            let mut bytes = Vec::new();
            let mut stream = self.blobs.read(digest).await?;
            while let Some(chunk) = stream.next().await {
                bytes.extend_from_slice(&chunk?);
                if bytes.len() as u64 > limit {
                    break;
                }
            }
            bytes
        };
        if bytes.len() as u64 > limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("artifact {digest} exceeds {limit} bytes"),
            ));
        }
        Ok(bytes)
    }

    /// Places every staged blob. Called inside the ingest transaction, just before it
    /// commits: a crash after this leaves blobs without rows (garbage), never rows
    /// without blobs. An object store that fails part-way leaves the blobs placed so far
    /// without rows too: never served (an artifact is served only through its row), and
    /// removed by [`crate::Store::collect_garbage`] once older than its grace period.
    pub async fn publish(self) -> Result<(), StoreError> {
        Staging::publish_all(vec![self], true).await
    }

    /// [`Staging::publish`] of several bundles' artifacts at once (bundles recorded in one
    /// transaction): in a blob directory, one flush to disk for all of them (none where
    /// not `flush`: a bulk load, flushed once at its end by [`Blobs::flush`]).
    pub async fn publish_all(stagings: Vec<Staging>, flush: bool) -> Result<(), StoreError> {
        let stagings: Vec<Staging> = stagings.into_iter().filter(|s| !s.staged.is_empty()).collect();
        let Some(first) = stagings.first() else { return Ok(()) };
        match first.blobs.place.clone() {
            Place::Dir(root) => {
                tokio::task::spawn_blocking(move || {
                    let mut placed = Vec::new();
                    for staging in stagings {
                        for (digest, tmp) in &staging.staged {
                            let dest = file_path(&root, digest);
                            fs::create_dir_all(dest.parent().expect("has a parent"))?;
                            fs::rename(tmp, &dest)?;
                            placed.push(dest);
                        }
                        // The bundle's staging directory, empty now, goes when it drops.
                    }
                    if flush || cfg!(not(target_os = "linux")) { durable(&root, &placed) } else { Ok(()) }
                })
                .await
                .map_err(|source| StoreError::Background { task: "placing the blobs", source })?
                .map_err(|e| match e.kind() {
                    io::ErrorKind::StorageFull => StoreError::StorageFull(e),
                    _ => StoreError::io("placing the artifacts in the blob directory")(e),
                })
            }
            #[cfg(feature = "s3")]
            Place::Objects(store) => {
                for (digest, tmp) in stagings.iter().flat_map(|s| &s.staged) {
                    let path = object_path(digest);
                    match store.head(&path).await {
                        Ok(_) => continue,
                        Err(object_store::Error::NotFound { .. }) => {}
                        Err(e) => return Err(StoreError::BlobStore(io_error(e))),
                    }
                    // Small blobs in one request; large ones as a multipart upload, so
                    // memory stays bounded whatever the artifact's size.
                    let mut upload = object_store::buffered::BufWriter::new(store.clone(), path);
                    let copied = async {
                        let mut file = tokio::fs::File::open(tmp).await?;
                        tokio::io::copy(&mut file, &mut upload).await
                    }
                    .await;
                    if let Err(e) = copied {
                        // An unfinished multipart upload would be billed for, invisibly.
                        let _ = upload.abort().await;
                        return Err(StoreError::BlobStore(e));
                    }
                    // Once shutting down the writer can no longer abort (it panics if
                    // asked): a multipart upload whose completion fails is left to the
                    // bucket's rule for incomplete uploads (README, "Deploy").
                    tokio::io::AsyncWriteExt::shutdown(&mut upload).await.map_err(StoreError::BlobStore)?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_build_without_s3_says_which_feature_an_s3_location_needs() {
        let e = super::not_built("s3://bucket/prefix");
        assert_eq!(e.kind(), std::io::ErrorKind::Unsupported);
        assert!(
            e.to_string()
                .starts_with("s3://bucket/prefix: this build has no object store (Cargo feature `s3`"),
            "{e}"
        );
    }
}
