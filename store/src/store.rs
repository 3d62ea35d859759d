//! The store: a database pool, the blob store, and the one-writer lock.

use std::path::Path;

use sqlx::AnyPool;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::db::Placeholders;
use crate::{Backend, Blobs, Digest, StoreError, db};
use vocab::TaskId;

/// Blobs asked about in one query when collecting garbage.
const GARBAGE_BATCH: usize = 500;

#[derive(Debug)]
pub struct Store {
    pub(crate) pool: AnyPool,
    backend: Backend,
    blobs: Blobs,
    pub(crate) write_lock: tokio::sync::Mutex<()>,
    /// Reads of the whole board, each kept until the change log moves.
    pub(crate) memo: crate::memo::Memos,
    /// The tasks of the task sets the server knows (by digest), which results are
    /// complete against; a set it does not know is the tasks its results ran.
    known_sets: std::sync::RwLock<std::collections::BTreeMap<String, Vec<TaskId>>>,
    /// Agents whose published results the server knows to tell only whether each run
    /// succeeded: how their other runs ended, and so execution success, is unknown.
    success_only: std::sync::RwLock<std::collections::BTreeSet<String>>,
    /// Whether each ingest is flushed to disk before it is acknowledged (always, but
    /// for a bulk load: see [`Store::bulk_load`]).
    pub(crate) flush_each: std::sync::atomic::AtomicBool,
    /// How many re-runs of a sampled run may end `infra_error` before it counts as not
    /// reproduced (spec §4d; the server's `REXBENCH_REPRODUCTION_TRIES`).
    pub(crate) reproduction_tries: std::sync::atomic::AtomicU32,
    /// How many successes a submission's sample takes (spec §4e; the server's
    /// `REXBENCH_SAMPLE_SHARE`, `REXBENCH_SAMPLE_PROBABILITY`, `REXBENCH_SAMPLE_CAP`).
    pub(crate) sample_rule: std::sync::RwLock<bundle::sample::Rule>,
}

/// The tries a sampled run's re-runs get before it counts as not reproduced, unless the
/// server says otherwise ([`Store::set_reproduction_tries`]).
pub const REPRODUCTION_TRIES: u32 = 3;

impl Store {
    /// Connects, applies the migrations, and opens the blob store in the directory
    /// `blob_dir`.
    pub async fn open(backend: &Backend, blob_dir: &Path) -> Result<Store, StoreError> {
        let blobs =
            Blobs::dir(blob_dir).map_err(StoreError::io(format!("blob store {}", blob_dir.display())))?;
        Store::open_with(backend, blobs).await
    }

    /// Connects, applies the migrations, and keeps artifacts in `blobs`.
    pub async fn open_with(backend: &Backend, blobs: Blobs) -> Result<Store, StoreError> {
        let store = Store::connect(backend, blobs).await?;
        store.migrate().await?;
        Ok(store)
    }

    /// Connects without migrating.
    pub async fn connect(backend: &Backend, blobs: Blobs) -> Result<Store, StoreError> {
        let pool = db::connect(backend, 16).await?;
        Ok(Store {
            pool,
            backend: backend.clone(),
            blobs,
            write_lock: tokio::sync::Mutex::new(()),
            memo: Default::default(),
            known_sets: Default::default(),
            success_only: Default::default(),
            flush_each: std::sync::atomic::AtomicBool::new(true),
            reproduction_tries: std::sync::atomic::AtomicU32::new(REPRODUCTION_TRIES),
            sample_rule: std::sync::RwLock::new(bundle::sample::Rule::DEFAULT),
        })
    }

    /// How many re-runs of a sampled run may end `infra_error` (each one try) before the
    /// run counts as not reproduced (spec §4d): at least 1.
    pub fn set_reproduction_tries(&self, tries: u32) {
        self.reproduction_tries.store(tries.max(1), std::sync::atomic::Ordering::SeqCst);
    }

    /// The tries [`Store::set_reproduction_tries`] set.
    pub fn reproduction_tries(&self) -> u32 {
        self.reproduction_tries.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many successes each submission sampled from now on takes (spec §4e). A rule
    /// [`bundle::sample::Rule::problem`] refuses is not taken: the one before stays.
    pub fn set_sample_rule(&self, rule: bundle::sample::Rule) -> Result<(), String> {
        if let Some(problem) = rule.problem() {
            return Err(problem);
        }
        *self.sample_rule.write().unwrap_or_else(std::sync::PoisonError::into_inner) = rule;
        Ok(())
    }

    /// The rule [`Store::set_sample_rule`] set.
    pub fn sample_rule(&self) -> bundle::sample::Rule {
        *self.sample_rule.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A bulk load (`rexbench-server synth --bulk`): from now on an ingest is not flushed
    /// to disk before it is acknowledged (no `syncfs` of the blobs, SQLite's commits not
    /// synced), until [`Store::flush`] makes everything durable at once. The rows are
    /// those of the normal path; a crash meanwhile may lose the load, which is then run
    /// again. Never for submissions: the API acknowledges only what is on disk.
    pub fn bulk_load(&self) {
        self.flush_each.store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// Ends a bulk load: the blobs and the database are flushed to disk, and each ingest
    /// is flushed again from now on.
    pub async fn flush(&self) -> Result<(), StoreError> {
        let _one_writer = self.write_lock.lock().await;
        self.blobs.flush().await.map_err(StoreError::io("flushing the blobs"))?;
        if matches!(self.backend, Backend::Sqlite { .. }) {
            // With the pool's `synchronous = FULL`, the checkpoint syncs the log and the
            // database file.
            db::query("PRAGMA wal_checkpoint(FULL)").fetch_all(&self.pool).await?;
        }
        self.flush_each.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    pub async fn migrate(&self) -> Result<(), StoreError> {
        db::migrate(&self.pool, &self.backend).await
    }

    /// Says which tasks the set of `digest` holds: results are complete, and ranked,
    /// only if they cover them all.
    pub fn know_task_set(&self, digest: &str, mut tasks: Vec<TaskId>) {
        tasks.sort();
        tasks.dedup();
        self.known_sets
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(digest.to_owned(), tasks);
        self.memo.clear();
    }

    /// The tasks of the set of `digest`, if the server knows it.
    pub fn known_task_set(&self, digest: &str) -> Option<Vec<TaskId>> {
        self.known_sets.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(digest).cloned()
    }

    /// Says that the published results of `agent` tell only whether each run
    /// succeeded (how the others ended is not published).
    pub fn know_success_only(&self, agent: &str) {
        self.success_only.write().unwrap_or_else(std::sync::PoisonError::into_inner).insert(agent.to_owned());
    }

    /// Whether the execution of a bundle's runs is known: always, but for published
    /// results of an agent [`Store::know_success_only`] names.
    pub(crate) fn execution_known(&self, manifest: &bundle::Manifest) -> bool {
        manifest.provenance.kind != vocab::ProvenanceKind::Published
            || !self
                .success_only
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .contains(&manifest.agent.id)
    }

    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    pub fn blobs(&self) -> &Blobs {
        &self.blobs
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        db::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Whether any bundle was ever stored (keys registered alone do not count).
    pub async fn holds_submissions(&self) -> Result<bool, StoreError> {
        let row = db::query("SELECT 1 FROM submissions LIMIT 1").fetch_optional(&self.pool).await?;
        Ok(row.is_some())
    }

    /// Removes staged blobs of ingests that never finished, and blobs no artifact row
    /// refers to (left by a crash between moving blobs into place and committing), if
    /// they are older than `grace`: younger ones may belong to an ingest another
    /// server process is committing right now.
    ///
    /// The blobs no row refers to are found first without holding up ingests, by name
    /// alone: at 10,000 agents the store holds 1.8 million blobs, and reading each one's
    /// age under the writers' lock kept every submission waiting for minutes after a
    /// start. Only those few are then checked again, aged and removed under the lock.
    pub async fn collect_garbage(&self, grace: std::time::Duration) -> Result<usize, StoreError> {
        let all = self.blobs.list().await.map_err(StoreError::io("listing the blobs"))?;
        let mut candidates = Vec::new();
        for batch in all.chunks(GARBAGE_BATCH) {
            candidates.extend(self.unreferenced(batch).await?);
        }
        let _one_writer = self.write_lock.lock().await;
        let mut removed =
            self.blobs.clear_staging(grace).map_err(StoreError::io("clearing the staging area"))?;
        // An ingest may have referred to a candidate since it was listed.
        for batch in candidates.chunks(GARBAGE_BATCH) {
            for digest in self.unreferenced(batch).await? {
                if self
                    .blobs
                    .older_than(&digest, grace)
                    .await
                    .map_err(StoreError::io("reading a blob's age"))?
                {
                    self.blobs
                        .remove(&digest)
                        .await
                        .map_err(StoreError::io("removing an unreferenced blob"))?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// Those of `batch` no artifact row nor held bundle refers to, asked in one query (a store of
    /// 180,000 blobs asked one by one took 180,000 queries).
    async fn unreferenced(&self, batch: &[Digest]) -> Result<Vec<Digest>, StoreError> {
        let hex: Vec<String> = batch.iter().map(Digest::to_hex).collect();
        let sql = format!(
            "SELECT digest FROM artifacts WHERE digest IN ({list}) \
             UNION SELECT blob FROM held_bundles WHERE blob IN ({list})",
            list = Placeholders::default().list(hex.len())
        );
        let mut q = db::query_as::<(String,)>(&sql);
        for h in &hex {
            q = q.bind(h.as_str());
        }
        let known: std::collections::HashSet<String> =
            q.fetch_all(&self.pool).await?.into_iter().map(|(digest,)| digest).collect();
        Ok(batch.iter().zip(&hex).filter(|(_, h)| !known.contains(*h)).map(|(d, _)| *d).collect())
    }
}

/// Now, as the store writes times: RFC 3339 in UTC, to the microsecond.
pub(crate) fn now() -> String {
    let t = OffsetDateTime::now_utc();
    let t = t.replace_nanosecond(t.nanosecond() / 1000 * 1000).expect("a valid nanosecond");
    t.format(&Rfc3339).expect("a UTC time formats")
}
