//! `rexbench-server backup DEST` and `restore SRC`: everything the leaderboard holds,
//! copied while it serves, and put back into a new database and blob store.
//!
//! A backup is a directory: `backup.json` (what it is), the database (`rexbench.db`,
//! SQLite's own consistent copy, or `rexbench.pgdump`, `pg_dump`'s), and `blobs/ab/<digest>`.
//! The database is copied first and the blobs after: rows only ever grow and a blob is
//! placed before the row that names it commits, so every row the copy holds finds its
//! blob (blobs ingested meanwhile come along too, harmlessly). It is written beside DEST
//! and renamed into place when complete: a DEST that exists is a whole backup.
//!
//! A restore places the blobs first and the database last, so a restore cut short
//! leaves at worst blobs no row names (garbage), and it goes only into a database that
//! holds no table.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};
use bundle::Digest;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use store::{Backend, Blobs, Store};

use crate::Config;

/// What `backup.json` says a backup is.
pub const FORMAT: &str = "rexbench-backup/1";
const SQLITE_FILE: &str = "rexbench.db";
const PG_DUMP_FILE: &str = "rexbench.pgdump";

#[derive(Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub created_at: String,
    /// `sqlite` or `postgresql`: a backup is restored into the same kind.
    pub database: String,
    /// The newest migration of the database copied; a newer server migrates it on.
    pub schema_version: i64,
    pub blobs: usize,
    pub blob_bytes: u64,
}

fn kind(backend: &Backend) -> &'static str {
    match backend {
        Backend::Sqlite { .. } => "sqlite",
        Backend::Postgres { .. } => "postgresql",
    }
}

pub async fn backup(config: &Config, dest: &Path) -> anyhow::Result<Manifest> {
    if dest.exists() {
        let empty = fs::read_dir(dest).map(|mut d| d.next().is_none()).unwrap_or(false);
        ensure!(
            empty,
            "{} exists and is not an empty directory: a backup goes into a new one",
            dest.display()
        );
    }
    let work = partial_path(dest)?;
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(work.join("blobs")).with_context(|| work.display().to_string())?;
    let made = write_backup(config, &work).await;
    if made.is_err() {
        let _ = fs::remove_dir_all(&work);
    }
    let manifest = made?;
    if dest.exists() {
        fs::remove_dir(dest).with_context(|| dest.display().to_string())?;
    }
    fs::rename(&work, dest).with_context(|| format!("moving the backup into {}", dest.display()))?;
    Ok(manifest)
}

/// `.NAME.partial` beside `dest`.
fn partial_path(dest: &Path) -> anyhow::Result<PathBuf> {
    let name = dest.file_name().with_context(|| format!("{} names no directory", dest.display()))?;
    Ok(dest.with_file_name(format!(".{}.partial", name.to_string_lossy())))
}

async fn write_backup(config: &Config, work: &Path) -> anyhow::Result<Manifest> {
    let blobs = Blobs::open(&config.blobs).with_context(|| format!("blob store {}", config.blobs))?;
    blobs.check().await.with_context(|| format!("blob store {} cannot be reached", config.blobs))?;
    let store = Store::connect(&config.backend, blobs.clone()).await?;
    ensure!(!store.is_blank().await?, "{} holds nothing to back up", config.backend);
    let created_at = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .expect("formats");
    match &config.backend {
        Backend::Sqlite { .. } => store.snapshot_sqlite(&work.join(SQLITE_FILE)).await?,
        Backend::Postgres { url } => {
            // One transaction's snapshot, in pg_dump's own format (pg_restore reads it).
            let file = work.join(PG_DUMP_FILE);
            tool(
                "pg_dump",
                &["--format=custom", "--no-owner", "--file", &file.display().to_string(), "--dbname", url],
            )?;
        }
    }
    let schema_version = store.schema_version().await?;
    // Read after the copy: a superset of what it refers to.
    let digests = store.artifact_digests().await?;
    let mut blob_bytes = 0;
    for hex in &digests {
        let digest =
            Digest::from_hex(hex).with_context(|| format!("artifact row `{hex}` is not a digest"))?;
        blob_bytes += copy_out(&blobs, &digest, &work.join("blobs").join(&hex[..2]), hex).await?;
    }
    let manifest = Manifest {
        format: FORMAT.to_owned(),
        created_at,
        database: kind(&config.backend).to_owned(),
        schema_version,
        blobs: digests.len(),
        blob_bytes,
    };
    let mut file = File::create_new(work.join("backup.json"))?;
    file.write_all(serde_json::to_string_pretty(&manifest)?.as_bytes())?;
    file.sync_all()?;
    Ok(manifest)
}

/// Copies one blob into `dir/<hex>`, checking its bytes against its name; its size.
async fn copy_out(blobs: &Blobs, digest: &Digest, dir: &Path, hex: &str) -> anyhow::Result<u64> {
    fs::create_dir_all(dir)?;
    let path = dir.join(hex);
    let mut file = File::create_new(&path).with_context(|| path.display().to_string())?;
    let mut hasher = bundle::Hasher::default();
    let mut size = 0u64;
    let mut stream = blobs.read(digest).await.with_context(|| format!("reading blob {hex}"))?;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.with_context(|| format!("reading blob {hex}"))?;
        hasher.update(&chunk);
        file.write_all(&chunk)?;
        size += chunk.len() as u64;
    }
    ensure!(hasher.finish() == *digest, "blob {hex}: its bytes do not have its digest");
    file.sync_all()?;
    Ok(size)
}

/// Runs one of PostgreSQL's client tools, saying plainly if it is missing or failed.
fn tool(name: &str, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new(name).args(args).output().map_err(|e| {
        anyhow::anyhow!(
            "{name}: {e}; a PostgreSQL backup needs PostgreSQL's client tools (Debian: postgresql-client)"
        )
    })?;
    if !out.status.success() {
        bail!("{name} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

pub async fn restore(config: &Config, src: &Path) -> anyhow::Result<Manifest> {
    let said = fs::read(src.join("backup.json"))
        .with_context(|| format!("{}: not a backup (no backup.json)", src.display()))?;
    let manifest: Manifest =
        serde_json::from_slice(&said).with_context(|| format!("{}/backup.json", src.display()))?;
    ensure!(manifest.format == FORMAT, "{}: format `{}`, not {FORMAT}", src.display(), manifest.format);
    ensure!(
        manifest.database == kind(&config.backend),
        "the backup is of a {} database and DATABASE_URL names {}: restore into the same kind",
        manifest.database,
        config.backend
    );
    let blobs = Blobs::open(&config.blobs).with_context(|| format!("blob store {}", config.blobs))?;
    blobs.check().await.with_context(|| format!("blob store {} cannot be reached", config.blobs))?;
    let store = Store::connect(&config.backend, blobs.clone()).await?;
    ensure!(
        store.is_blank().await?,
        "{} is not empty: a restore goes only into a new database, so that nothing is mixed or lost",
        config.backend
    );

    let placed = copy_in(&blobs, &src.join("blobs")).await?;
    ensure!(
        placed == manifest.blobs,
        "{}: {placed} blobs, where backup.json says {}",
        src.display(),
        manifest.blobs
    );
    match &config.backend {
        Backend::Sqlite { path } => {
            store.close().await;
            let from = src.join(SQLITE_FILE);
            let tmp = path.with_extension("restoring");
            fs::copy(&from, &tmp).with_context(|| format!("copying {}", from.display()))?;
            File::open(&tmp)?.sync_all()?;
            for leftover in ["-wal", "-shm"] {
                let _ = fs::remove_file(format!("{}{leftover}", path.display()));
            }
            fs::rename(&tmp, path).with_context(|| path.display().to_string())?;
        }
        Backend::Postgres { url } => {
            let file = src.join(PG_DUMP_FILE).display().to_string();
            // All of it or none of it.
            tool(
                "pg_restore",
                &["--no-owner", "--exit-on-error", "--single-transaction", "--dbname", url, &file],
            )?;
        }
    }
    // Migrated on to this server's schema, and every row's blob checked.
    let store = Store::open_with(&config.backend, blobs.clone()).await?;
    let mut missing = 0;
    for hex in store.artifact_digests().await? {
        let digest = Digest::from_hex(&hex).with_context(|| format!("artifact row `{hex}`"))?;
        missing += usize::from(!blobs.contains(&digest).await?);
    }
    ensure!(missing == 0, "{missing} artifacts of the restored database have no blob");
    Ok(manifest)
}

/// Places every blob under `dir` (`ab/<digest>`), each checked against its name; how many.
async fn copy_in(blobs: &Blobs, dir: &Path) -> anyhow::Result<usize> {
    let mut placed = 0;
    for shard in fs::read_dir(dir).with_context(|| dir.display().to_string())? {
        let shard = shard?;
        ensure!(shard.file_type()?.is_dir(), "{}: not a blob folder", shard.path().display());
        for entry in fs::read_dir(shard.path())? {
            let entry = entry?;
            let path = entry.path();
            let name = entry.file_name();
            let digest = name
                .to_str()
                .and_then(Digest::from_hex)
                .with_context(|| format!("{}: not named by a digest", path.display()))?;
            ensure!(entry.file_type()?.is_file(), "{}: not a regular file", path.display());
            let bytes = tokio::fs::read(&path).await.with_context(|| path.display().to_string())?;
            ensure!(Digest::of(&bytes) == digest, "{}: its bytes do not have its digest", path.display());
            if !blobs.contains(&digest).await? {
                blobs.put(&bytes).await.with_context(|| format!("placing {}", path.display()))?;
            }
            placed += 1;
        }
    }
    Ok(placed)
}
