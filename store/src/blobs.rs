//! Where artifact bytes live: a directory, one file per digest (`ab/abcdef…`). A blob is
//! written to `tmp/`, and moved into place and flushed to disk only once its bundle
//! verified;
//! files in `tmp/`, and blobs no row refers to, are garbage that `collect_garbage`
//! removes.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use bundle::{ArtifactInfo, ArtifactSink, Digest};

#[derive(Debug, Clone)]
pub struct Blobs {
    root: PathBuf,
}

impl Blobs {
    pub fn open(root: &Path) -> io::Result<Blobs> {
        fs::create_dir_all(root.join("tmp"))?;
        Ok(Blobs { root: root.to_owned() })
    }

    pub fn path(&self, digest: &Digest) -> PathBuf {
        let hex = digest.to_hex();
        self.root.join(&hex[..2]).join(hex)
    }

    pub fn open_blob(&self, digest: &Digest) -> io::Result<File> {
        File::open(self.path(digest))
    }

    /// A sink that stages each artifact of one bundle in `tmp/`.
    pub fn stage(&self) -> Staging {
        Staging { blobs: self.clone(), staged: Vec::new() }
    }

    /// The digest of every blob file last written more than `age` ago.
    pub fn list_older_than(&self, age: Duration) -> io::Result<Vec<Digest>> {
        let mut out = Vec::new();
        for dir in fs::read_dir(&self.root)? {
            let dir = dir?;
            if dir.file_name() == "tmp" || !dir.file_type()?.is_dir() {
                continue;
            }
            for f in fs::read_dir(dir.path())? {
                let f = f?;
                if !older_than(&f.path(), age)? {
                    continue;
                }
                if let Some(d) = f.file_name().to_str().and_then(Digest::from_hex) {
                    out.push(d);
                }
            }
        }
        Ok(out)
    }

    /// Removes staged files older than `age`: they belong to ingests that never finished.
    pub fn clear_staging(&self, age: Duration) -> io::Result<usize> {
        let mut n = 0;
        for f in fs::read_dir(self.root.join("tmp"))? {
            let path = f?.path();
            if older_than(&path, age)? {
                fs::remove_file(path)?;
                n += 1;
            }
        }
        Ok(n)
    }

    pub fn remove(&self, digest: &Digest) -> io::Result<()> {
        fs::remove_file(self.path(digest))
    }
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

/// The artifacts of one bundle, written under `tmp/`. Dropped without
/// [`Staging::publish`], they are deleted.
#[derive(Debug)]
pub struct Staging {
    blobs: Blobs,
    staged: Vec<(Digest, tempfile::TempPath)>,
}

impl ArtifactSink for Staging {
    fn artifact(&mut self, digest: &Digest, _: &ArtifactInfo, content: &mut dyn Read) -> io::Result<()> {
        if self.blobs.path(digest).is_file() {
            // Content-addressed: the same bytes are already stored.
            return io::copy(content, &mut io::sink()).map(drop);
        }
        let mut tmp = tempfile::NamedTempFile::new_in(self.blobs.root.join("tmp"))?;
        io::copy(content, &mut tmp)?;
        tmp.flush()?;
        self.staged.push((*digest, tmp.into_temp_path()));
        Ok(())
    }
}

impl Staging {
    /// Moves every staged blob into place. Called inside the ingest transaction, just
    /// before it commits: a crash after this leaves blobs without rows (garbage), never
    /// rows without blobs.
    pub fn publish(self) -> io::Result<()> {
        if self.staged.is_empty() {
            return Ok(());
        }
        let mut placed = Vec::with_capacity(self.staged.len());
        for (digest, tmp) in self.staged {
            let dest = self.blobs.path(&digest);
            fs::create_dir_all(dest.parent().expect("has a parent"))?;
            tmp.persist(&dest).map_err(|e| e.error)?;
            placed.push(dest);
        }
        durable(&self.blobs.root, &placed)
    }
}
