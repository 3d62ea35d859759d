//! Reproductions (spec §4d, §4e): the sample each self-reported submission gets at
//! ingest, the sampling keys behind it (committed, then revealed), the maintainers'
//! queue, and a reproduction's ingest: its runs beside the ones they re-ran, a
//! `not-reproduced` finding where the final success differs, all in one transaction.

use std::collections::BTreeMap;

use bundle::VerifiedBundle;
use bundle::sample::{self, Candidate};
use rand_core::{OsRng, RngCore};
use sqlx::Row;
use vocab::{Hint, Outcome, ProvenanceKind, Tier};

use crate::blobs::Staging;
use crate::db;
use crate::error::StoreError;
use crate::findings::{Cell, flagging_checks, move_flags, move_refuted};
use crate::model::{ArtifactRef, KeyRecord, QueuedRun, ReproducedRun, RunReproduction, SamplingEpoch};
use crate::reads::name;
use crate::steps::{Ingested, Tx, signer, write_artifacts, write_change};
use crate::{Store, now};

/// The check a reproduced run that differs from its submission gets (spec §4a).
pub const NOT_REPRODUCED: &str = "not-reproduced";

/// Whether a bundle signed by `signer` is sampled: a submitter's own evaluation or
/// import (a maintainer's is verified already; a paper's numbers have no patch).
fn sampled_kind(bundle: &VerifiedBundle, signer: &KeyRecord) -> bool {
    signer.tier == Tier::Submitter
        && bundle.manifest.reproduction.is_none()
        && matches!(bundle.manifest.provenance.kind, ProvenanceKind::Evaluated | ProvenanceKind::Imported)
}

/// The current epoch and its key, beginning the first if there is none.
async fn current_key(tx: &mut Tx<'_>, at: &str) -> Result<(i64, Vec<u8>), StoreError> {
    let row = db::query(
        "SELECT epoch, secret FROM sampling_keys WHERE revealed_at IS NULL ORDER BY epoch DESC LIMIT 1",
    )
    .fetch_optional(&mut **tx)
    .await?;
    if let Some(row) = row {
        let secret: String = row.try_get("secret")?;
        let key =
            hex::decode(&secret).map_err(|_| StoreError::BadKey("a sampling key that is not hex".into()))?;
        return Ok((row.try_get("epoch")?, key));
    }
    let (max,): (Option<i64>,) =
        db::query_as("SELECT MAX(epoch) FROM sampling_keys").fetch_one(&mut **tx).await?;
    begin_epoch(tx, max.unwrap_or(0) + 1, at).await
}

/// A new epoch with a fresh key from the operating system's generator; the change log
/// records its commitment, so that anyone can see it was published before the epoch's
/// bundles arrived.
async fn begin_epoch(tx: &mut Tx<'_>, epoch: i64, at: &str) -> Result<(i64, Vec<u8>), StoreError> {
    let mut key = vec![0u8; sample::KEY_BYTES];
    OsRng.fill_bytes(&mut key);
    let commitment = sample::commitment(&key);
    db::query("INSERT INTO sampling_keys (epoch, commitment, secret, committed_at) VALUES ($1, $2, $3, $4)")
        .bind(epoch)
        .bind(&commitment)
        .bind(hex::encode(&key))
        .bind(at)
        .execute(&mut **tx)
        .await?;
    sampling_change(
        tx,
        at,
        &format!(
            "sampling epoch {epoch} began: the reproduction sample of each self-reported submission from now on is \
             chosen with a secret key whose SHA-256 is {commitment}"
        ),
    )
    .await?;
    Ok((epoch, key))
}

/// A change-log entry about the sampling keys (no submission, agent or task).
async fn sampling_change(tx: &mut Tx<'_>, at: &str, detail: &str) -> Result<(), StoreError> {
    db::query("INSERT INTO changes (at, kind, detail) VALUES ($1, 'sampling', $2)")
        .bind(at)
        .bind(detail)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The ingest step that samples a bundle's runs (spec §4e), when its signer's tier and
/// its provenance call for it. The runs are in the transaction already.
pub(crate) async fn write_sample(
    tx: &mut Tx<'_>,
    bundle: &VerifiedBundle,
    bundle_id: &str,
    signer: &KeyRecord,
    at: &str,
    carried: &[Carried],
) -> Result<(), StoreError> {
    if !sampled_kind(bundle, signer) {
        return Ok(());
    }
    let runs = Candidate::of(&bundle.manifest);
    let (epoch, key) = current_key(tx, at).await?;
    // The keyed rule's choice, and the runs whose same run of an earlier submission did
    // not reproduce (spec §4e), where this bundle has them.
    let mut chosen: BTreeMap<usize, Option<&str>> =
        sample::choose(&key, bundle_id, &runs).into_iter().map(|i| (i, None)).collect();
    for c in carried {
        let same = runs.iter().position(|r| r.task == c.task && r.hint == c.hint && r.attempt == c.attempt);
        // Carried is said even where the key chose it too: that it is sampled follows
        // from public facts, so saying so tells a submitter nothing of the key's choice.
        if let Some(i) = same {
            chosen.insert(i, Some(c.from.as_str()));
        }
    }
    for (i, from) in &chosen {
        let c = &runs[*i];
        db::query(
            "INSERT INTO samples (run_id, bundle_id, epoch, sampled_at, carried_from) \
             SELECT id, bundle_id, $1, $2, $7 FROM runs WHERE bundle_id = $3 AND task = $4 AND hint = $5 AND attempt = $6",
        )
        .bind(epoch)
        .bind(at)
        .bind(bundle_id)
        .bind(c.task.as_str())
        .bind(c.hint.as_str())
        .bind(i64::from(c.attempt))
        .bind(*from)
        .execute(&mut **tx)
        .await?;
    }
    db::query("UPDATE submissions SET sampled = $1 WHERE bundle_id = $2")
        .bind(chosen.len() as i64)
        .bind(bundle_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// A run of an agent's earlier submission whose reproduction differed, with a
/// `not-reproduced` finding no maintainer has dismissed: it follows the agent (spec §6a).
#[derive(Debug, Clone)]
pub(crate) struct Carried {
    pub task: String,
    pub hint: Hint,
    pub attempt: u32,
    /// The earlier submission.
    pub from: String,
}

/// The runs of the agent's earlier submissions (for the same benchmark version) that
/// did not reproduce, no maintainer having dismissed the finding; oldest submission
/// first.
pub(crate) async fn not_reproduced_before(
    tx: &mut Tx<'_>,
    agent: &str,
    version: &str,
    bundle_id: &str,
) -> Result<Vec<Carried>, StoreError> {
    let rows = db::query(
        "SELECT DISTINCT r.task, r.hint, r.attempt, r.bundle_id, s.received_at FROM findings f \
         JOIN runs r ON r.id = f.run_id JOIN submissions s ON s.bundle_id = r.bundle_id \
         WHERE s.agent_id = $1 AND s.benchmark_version = $2 AND r.bundle_id <> $3 AND f.check_name = $4 \
         AND f.found_by = 'server' AND (f.review IS NULL OR f.review <> 'dismissed') \
         ORDER BY s.received_at, r.bundle_id, r.task, r.hint, r.attempt",
    )
    .bind(agent)
    .bind(version)
    .bind(bundle_id)
    .bind(NOT_REPRODUCED)
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Carried {
                task: r.try_get("task")?,
                hint: name(r, "hint")?,
                attempt: u32::try_from(r.try_get::<i64, _>("attempt")?).unwrap_or(u32::MAX),
                from: r.try_get("bundle_id")?,
            })
        })
        .collect()
}

/// A reproduction the server refuses, with the code the API answers.
fn refused(code: &'static str, message: String) -> StoreError {
    StoreError::ReproductionRefused { code, message }
}

/// The submission a reproduction names, as the reproduction needs it.
struct Reproduced {
    agent_id: String,
    task_set_digest: String,
    superseded_by: Option<String>,
}

/// A run of the reproduced submission, as a reproduction's run is checked against it.
struct Target {
    run_id: i64,
    outcome: Outcome,
    sampled: bool,
    reproduced: bool,
    patch: Option<String>,
}

impl Store {
    /// The sampling epochs, newest first: each one's commitment, and its key once it
    /// has been revealed.
    pub async fn sampling_epochs(&self) -> Result<Vec<SamplingEpoch>, StoreError> {
        let rows = db::query(
            "SELECT epoch, commitment, secret, committed_at, revealed_at FROM sampling_keys ORDER BY epoch DESC",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let revealed_at: Option<String> = r.try_get("revealed_at")?;
                let secret: String = r.try_get("secret")?;
                Ok(SamplingEpoch {
                    epoch: r.try_get("epoch")?,
                    commitment: r.try_get("commitment")?,
                    committed_at: r.try_get("committed_at")?,
                    key: revealed_at.is_some().then_some(secret),
                    revealed_at,
                })
            })
            .collect()
    }

    /// Begins a sampling epoch when there is none, so that its commitment is public
    /// before the first bundle is sampled with it. The current epoch.
    pub async fn begin_sampling(&self) -> Result<i64, StoreError> {
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let (epoch, _) = current_key(&mut tx, &now()).await?;
        tx.commit().await?;
        Ok(epoch)
    }

    /// Ends the current epoch: its key is published, and the next epoch begins with a
    /// new key whose commitment is published now. The revealed epoch and the new one.
    pub async fn reveal_sampling_key(&self) -> Result<(SamplingEpoch, SamplingEpoch), StoreError> {
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let at = now();
        let (epoch, key) = current_key(&mut tx, &at).await?;
        db::query("UPDATE sampling_keys SET revealed_at = $1 WHERE epoch = $2")
            .bind(&at)
            .bind(epoch)
            .execute(&mut *tx)
            .await?;
        sampling_change(
            &mut tx,
            &at,
            &format!(
                "sampling epoch {epoch} ended: its key is {}; with it anyone can recompute the sample of each \
                 submission of the epoch",
                hex::encode(&key)
            ),
        )
        .await?;
        begin_epoch(&mut tx, epoch + 1, &at).await?;
        tx.commit().await?;
        let epochs = self.sampling_epochs().await?;
        let of = |e: i64| epochs.iter().find(|x| x.epoch == e).cloned().expect("just written");
        Ok((of(epoch), of(epoch + 1)))
    }

    /// The sampled runs, oldest sample first; only those not yet reproduced when
    /// `pending`.
    pub async fn reproduction_queue(&self, pending: bool) -> Result<Vec<QueuedRun>, StoreError> {
        let only = if pending { " WHERE rr.run_id IS NULL" } else { "" };
        let rows = db::query(&format!(
            "SELECT r.id, r.bundle_id, s.agent_id, s.task_set_digest, s.benchmark_name, s.superseded_by, \
             r.task, r.hint, r.attempt, r.outcome, r.duration_s, p.digest AS patch, x.epoch, x.sampled_at, \
             rr.outcome AS reproduced_outcome, rr.held \
             FROM samples x JOIN runs r ON r.id = x.run_id JOIN submissions s ON s.bundle_id = r.bundle_id \
             LEFT JOIN run_artifacts p ON p.run_id = r.id AND p.role = 'patch' \
             LEFT JOIN reproduced_runs rr ON rr.run_id = r.id{only} \
             ORDER BY x.sampled_at, r.bundle_id, r.task, r.hint, r.attempt"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let reproduced: Option<String> = r.try_get("reproduced_outcome")?;
                Ok(QueuedRun {
                    run_id: r.try_get("id")?,
                    bundle_id: r.try_get("bundle_id")?,
                    agent_id: r.try_get("agent_id")?,
                    benchmark_name: r.try_get("benchmark_name")?,
                    task_set_digest: r.try_get("task_set_digest")?,
                    superseded: r.try_get::<Option<String>, _>("superseded_by")?.is_some(),
                    task: crate::TaskId::new(r.try_get::<String, _>("task")?),
                    hint: name(r, "hint")?,
                    attempt: r.try_get("attempt")?,
                    outcome: name(r, "outcome")?,
                    duration_s: r.try_get("duration_s")?,
                    patch: r.try_get("patch")?,
                    epoch: r.try_get("epoch")?,
                    sampled_at: r.try_get("sampled_at")?,
                    reproduced: reproduced.map(|o| o.parse()).transpose().map_err(
                        |e: vocab::UnknownName| sqlx::Error::ColumnDecode {
                            index: "reproduced_outcome".into(),
                            source: e.into(),
                        },
                    )?,
                    held: r.try_get::<Option<i64>, _>("held")?.map(|h| h != 0),
                })
            })
            .collect()
    }

    /// An agent's runs the maintainers re-ran, newest reproduction first.
    pub async fn reproduced_runs_of(&self, agent: &str) -> Result<Vec<ReproducedRun>, StoreError> {
        let rows = db::query(
            "SELECT r.id, r.bundle_id, rr.reproduction, r.task, r.hint, r.attempt, r.outcome, rr.outcome AS reproduced, rr.held, \
             rr.duration_s, rp.received_at FROM reproduced_runs rr JOIN runs r ON r.id = rr.run_id \
             JOIN submissions s ON s.bundle_id = r.bundle_id JOIN reproductions rp ON rp.bundle_id = rr.reproduction \
             WHERE s.agent_id = $1 ORDER BY rp.received_at DESC, r.task, r.hint, r.attempt",
        )
        .bind(agent)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(ReproducedRun {
                    run_id: r.try_get("id")?,
                    bundle_id: r.try_get("bundle_id")?,
                    reproduction: r.try_get("reproduction")?,
                    task: crate::TaskId::new(r.try_get::<String, _>("task")?),
                    hint: name(r, "hint")?,
                    attempt: r.try_get("attempt")?,
                    submitted: name(r, "outcome")?,
                    reproduced: name(r, "reproduced")?,
                    held: r.try_get::<i64, _>("held")? != 0,
                    duration_s: r.try_get("duration_s")?,
                    received_at: r.try_get("received_at")?,
                })
            })
            .collect()
    }

    /// What the reproductions so far took: runs, hours of runs, and hours of runs on
    /// GPUs (each run's duration times its GPUs).
    pub async fn reproduction_hours(&self) -> Result<(i64, f64, f64), StoreError> {
        let row = db::query(
            "SELECT CAST(COUNT(*) AS BIGINT) AS runs, CAST(COALESCE(SUM(rr.duration_s), 0) AS DOUBLE PRECISION) AS seconds, \
             CAST(COALESCE(SUM(rr.duration_s * rp.gpus), 0) AS DOUBLE PRECISION) AS gpu_seconds \
             FROM reproduced_runs rr JOIN reproductions rp ON rp.bundle_id = rr.reproduction",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok((
            row.try_get("runs")?,
            row.try_get::<f64, _>("seconds")? / 3600.0,
            row.try_get::<f64, _>("gpu_seconds")? / 3600.0,
        ))
    }

    /// Whether a run is in a sample anyone may know of: reproduced already, or sampled
    /// with a key that has been revealed. Its reproduction, if it has one.
    pub async fn run_sample(&self, run_id: i64) -> Result<(bool, Option<RunReproduction>), StoreError> {
        let row = db::query(
            "SELECT k.revealed_at, rr.outcome, rr.error_type, rr.duration_s, rr.metrics, rr.held, \
             rp.bundle_id, rp.executor, rp.hardware, rp.gpus, rp.received_at \
             FROM samples x JOIN sampling_keys k ON k.epoch = x.epoch \
             LEFT JOIN reproduced_runs rr ON rr.run_id = x.run_id \
             LEFT JOIN reproductions rp ON rp.bundle_id = rr.reproduction WHERE x.run_id = $1",
        )
        .bind(run_id)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok((false, None)) };
        let revealed = row.try_get::<Option<String>, _>("revealed_at")?.is_some();
        let Some(outcome) = row.try_get::<Option<String>, _>("outcome")? else { return Ok((revealed, None)) };
        let artifacts: Vec<ArtifactRef> = db::query_as(
            "SELECT ra.role, ra.digest, x.size, x.media_type FROM reproduced_artifacts ra \
             JOIN artifacts x ON x.digest = ra.digest WHERE ra.run_id = $1 ORDER BY ra.role",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        let hardware: String = row.try_get("hardware")?;
        let hardware: bundle::Hardware = serde_json::from_str(&hardware)
            .map_err(|e| sqlx::Error::ColumnDecode { index: "hardware".into(), source: e.into() })?;
        let metrics: String = row.try_get("metrics")?;
        Ok((
            true,
            Some(RunReproduction {
                bundle_id: row.try_get("bundle_id")?,
                outcome: outcome.parse().map_err(|e: vocab::UnknownName| sqlx::Error::ColumnDecode {
                    index: "outcome".into(),
                    source: e.into(),
                })?,
                error_type: row.try_get("error_type")?,
                duration_s: row.try_get("duration_s")?,
                metrics: serde_json::from_str(&metrics).unwrap_or_default(),
                held: row.try_get::<i64, _>("held")? != 0,
                executor: row.try_get("executor")?,
                hardware: hardware.description,
                gpus: row.try_get("gpus")?,
                received_at: row.try_get("received_at")?,
                artifacts,
            }),
        ))
    }

    /// The runs of a submission whose sample anyone may know of (reproduced, under a
    /// revealed key, or sampled because the same run of the agent's earlier submission
    /// did not reproduce, which anyone can see), as (task, hint, attempt, that earlier
    /// submission); every sampled run once its key is out.
    pub async fn public_sample(
        &self,
        bundle_id: &str,
    ) -> Result<Vec<(String, Hint, i64, Option<String>)>, StoreError> {
        let rows = db::query(
            "SELECT r.task, r.hint, r.attempt, x.carried_from FROM samples x JOIN runs r ON r.id = x.run_id \
             JOIN sampling_keys k ON k.epoch = x.epoch LEFT JOIN reproduced_runs rr ON rr.run_id = x.run_id \
             WHERE x.bundle_id = $1 AND (k.revealed_at IS NOT NULL OR rr.run_id IS NOT NULL OR x.carried_from IS NOT NULL) \
             ORDER BY r.task, r.hint, r.attempt",
        )
        .bind(bundle_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok((r.try_get("task")?, name(r, "hint")?, r.try_get("attempt")?, r.try_get("carried_from")?))
            })
            .collect()
    }

    /// The epoch whose key sampled a submission, if it was sampled.
    pub async fn sample_epoch(&self, bundle_id: &str) -> Result<Option<i64>, StoreError> {
        let row: Option<(i64,)> =
            db::query_as("SELECT MIN(epoch) FROM samples WHERE bundle_id = $1 HAVING COUNT(*) > 0")
                .bind(bundle_id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|(e,)| e))
    }

    /// Records a verified reproduction (spec §4d), whose artifacts `staging` holds: the
    /// maintainers re-ran sampled runs of a submission this store holds, each from the
    /// patch it was submitted with. Refused whole, with a code, when any of that fails.
    pub async fn ingest_reproduction(
        &self,
        bundle: &VerifiedBundle,
        staging: Staging,
    ) -> Result<Ingested, StoreError> {
        let m = &bundle.manifest;
        let r = m.reproduction.as_ref().expect("a reproduction");
        let bundle_id = bundle.id.to_hex();
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;

        if db::query("SELECT 1 FROM reproductions WHERE bundle_id = $1")
            .bind(&bundle_id)
            .fetch_optional(&mut *tx)
            .await?
            .is_some()
        {
            return Ok(Ingested::AlreadyStored { bundle_id, agent_id: m.agent.id.clone() });
        }
        let signer = signer(&mut tx, bundle).await?;
        if signer.tier != Tier::Maintainer {
            return Err(refused(
                "reproduction_not_maintainer",
                format!(
                    "a reproduction must be signed by a maintainer key; {} ({}) is a {} key",
                    signer.keyid,
                    signer.owner,
                    signer.tier.as_str()
                ),
            ));
        }
        let of = reproduced(&mut tx, &r.of, m).await?;
        let targets = targets(&mut tx, &r.of, m).await?;
        let received_at = now();
        write_artifacts(&mut tx, bundle, &received_at).await?;
        let hardware = serde_json::to_string(&r.hardware).expect("serializes");
        db::query(
            "INSERT INTO reproductions (bundle_id, of_bundle, keyid, executor, hardware, gpus, runner_version, \
             created_at, received_at, envelope) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(&bundle_id)
        .bind(&r.of)
        .bind(&signer.keyid)
        .bind(&r.executor)
        .bind(&hardware)
        .bind(i64::from(r.hardware.gpus))
        .bind(&m.runner.version)
        .bind(&m.created_at)
        .bind(&received_at)
        .bind(bundle.envelope.clone())
        .execute(&mut *tx)
        .await?;
        let mut differed = Vec::new();
        for (run, target) in m.runs.iter().zip(&targets) {
            let held = run.outcome.succeeded() == target.outcome.succeeded();
            db::query(
                "INSERT INTO reproduced_runs (run_id, reproduction, outcome, error_type, duration_s, metrics, held) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(target.run_id)
            .bind(&bundle_id)
            .bind(run.outcome.as_str())
            .bind(&run.error_type)
            .bind(run.duration_s.unwrap_or(0.0))
            .bind(serde_json::to_string(&run.metrics).expect("serializes"))
            .bind(i64::from(held))
            .execute(&mut *tx)
            .await?;
            for (role, digest) in &run.artifacts {
                db::query("INSERT INTO reproduced_artifacts (run_id, role, digest) VALUES ($1, $2, $3)")
                    .bind(target.run_id)
                    .bind(role)
                    .bind(digest)
                    .execute(&mut *tx)
                    .await?;
            }
            if !held {
                write_not_reproduced(&mut tx, target, run, &r.of, of.superseded_by.is_none(), &bundle_id)
                    .await?;
                differed.push(format!("{}/{}/{}", run.task, run.hint, run.attempt));
            }
        }
        db::query("UPDATE submissions SET reproduced = reproduced + $1, differed = differed + $2 WHERE bundle_id = $3")
            .bind(m.runs.len() as i64)
            .bind(differed.len() as i64)
            .bind(&r.of)
            .execute(&mut *tx)
            .await?;
        let gpu_hours: f64 = m.runs.iter().filter_map(|x| x.duration_s).sum::<f64>() / 3600.0;
        let mut detail = format!(
            "maintainers ({}) re-ran {} sampled runs of {} ({}): {} held",
            signer.owner,
            m.runs.len(),
            r.of,
            of.agent_id,
            m.runs.len() - differed.len()
        );
        if !differed.is_empty() {
            detail.push_str(&format!("; {} did not reproduce ({})", differed.len(), differed.join(", ")));
        }
        detail.push_str(&format!(
            "; {:.2} hours on {} ({}), reproduction {bundle_id}",
            gpu_hours, r.executor, r.hardware.description
        ));
        write_change(&mut tx, &received_at, "reproduced", &r.of, &of.agent_id, &detail).await?;
        staging.publish().await?;
        tx.commit().await?;
        Ok(Ingested::Stored { bundle_id, agent_id: of.agent_id, superseded: Vec::new() })
    }
}

/// The submission a reproduction names: held here, of the same agent and task set.
async fn reproduced(tx: &mut Tx<'_>, of: &str, m: &bundle::Manifest) -> Result<Reproduced, StoreError> {
    let row =
        db::query("SELECT agent_id, task_set_digest, superseded_by FROM submissions WHERE bundle_id = $1")
            .bind(of)
            .fetch_optional(&mut **tx)
            .await?
            .ok_or_else(|| {
                refused(
                    "reproduction_unknown_submission",
                    format!("reproduction.of names {of}, which this board does not hold"),
                )
            })?;
    let of_bundle = Reproduced {
        agent_id: row.try_get("agent_id")?,
        task_set_digest: row.try_get("task_set_digest")?,
        superseded_by: row.try_get("superseded_by")?,
    };
    if of_bundle.agent_id != m.agent.id {
        return Err(refused(
            "reproduction_mismatch",
            format!("agent.id is `{}`, but {of} is agent `{}`'s", m.agent.id, of_bundle.agent_id),
        ));
    }
    if of_bundle.task_set_digest != m.benchmark.task_set_digest {
        return Err(refused(
            "reproduction_mismatch",
            format!(
                "benchmark.task_set_digest is {}, but {of} was evaluated against {}: re-run with the same task cards",
                m.benchmark.task_set_digest, of_bundle.task_set_digest
            ),
        ));
    }
    Ok(of_bundle)
}

/// The submitted run each of a reproduction's runs re-ran, in the manifest's order:
/// sampled, not yet reproduced, and submitted with the same patch.
async fn targets(tx: &mut Tx<'_>, of: &str, m: &bundle::Manifest) -> Result<Vec<Target>, StoreError> {
    let rows = db::query(
        "SELECT r.id, r.task, r.hint, r.attempt, r.outcome, p.digest AS patch, \
         CASE WHEN x.run_id IS NULL THEN 0 ELSE 1 END AS sampled, \
         CASE WHEN rr.run_id IS NULL THEN 0 ELSE 1 END AS reproduced \
         FROM runs r LEFT JOIN run_artifacts p ON p.run_id = r.id AND p.role = 'patch' \
         LEFT JOIN samples x ON x.run_id = r.id LEFT JOIN reproduced_runs rr ON rr.run_id = r.id \
         WHERE r.bundle_id = $1",
    )
    .bind(of)
    .fetch_all(&mut **tx)
    .await?;
    let mut by_key: BTreeMap<(String, String, i64), Target> = BTreeMap::new();
    for row in &rows {
        let key = (row.try_get("task")?, row.try_get("hint")?, row.try_get("attempt")?);
        by_key.insert(
            key,
            Target {
                run_id: row.try_get("id")?,
                outcome: name(row, "outcome")?,
                sampled: row.try_get::<i64, _>("sampled")? != 0,
                reproduced: row.try_get::<i64, _>("reproduced")? != 0,
                patch: row.try_get("patch")?,
            },
        );
    }
    let mut out = Vec::with_capacity(m.runs.len());
    for run in &m.runs {
        let label = format!("run {}/{}/{}", run.task, run.hint, run.attempt);
        let key = (run.task.to_string(), run.hint.as_str().to_owned(), i64::from(run.attempt));
        let target = by_key
            .remove(&key)
            .ok_or_else(|| refused("reproduction_not_sampled", format!("{label}: {of} has no such run")))?;
        if !target.sampled {
            return Err(refused(
                "reproduction_not_sampled",
                format!("{label} of {of} is not in its sample: a reproduction re-runs sampled runs only"),
            ));
        }
        if target.reproduced {
            return Err(refused(
                "run_already_reproduced",
                format!("{label} of {of} has been reproduced already"),
            ));
        }
        let got = run.artifacts.get("patch").map(String::as_str).unwrap_or("");
        if target.patch.as_deref() != Some(got) {
            return Err(refused(
                "reproduction_patch_mismatch",
                format!(
                    "{label}: the reproduction applied the patch {got}, but {of} was submitted with {}: \
                     a reproduction re-runs the submitted patch",
                    target.patch.as_deref().unwrap_or("none")
                ),
            ));
        }
        out.push(target);
    }
    Ok(out)
}

/// The server's `not-reproduced` finding on a submitted run whose final success the
/// reproduction did not repeat. A success it newly flags (no finding a maintainer has
/// not dismissed flagged it before) counts as flagged in the kept sums, as a review's
/// change does (`findings::move_flagged`).
async fn write_not_reproduced(
    tx: &mut Tx<'_>,
    target: &Target,
    run: &bundle::Run,
    of: &str,
    current: bool,
    reproduction: &str,
) -> Result<(), StoreError> {
    let success = target.outcome == Outcome::Success;
    let infra = target.outcome == Outcome::InfraError;
    let was = if success || infra { flagging_checks(tx, target.run_id).await? } else { Default::default() };
    let (next,): (i64,) = db::query_as(
        "SELECT CAST(COALESCE(MAX(position) + 1, 0) AS BIGINT) FROM findings WHERE run_id = $1 AND found_by = 'server'",
    )
    .bind(target.run_id)
    .fetch_one(&mut **tx)
    .await?;
    let message = format!(
        "The maintainers re-ran this run's patch and it ended {} ({}), where the submission says {}: the result did not \
         reproduce (reproduction {reproduction}).",
        run.outcome.as_str(),
        if run.outcome.succeeded() == Some(true) { "a success" } else { "not a success" },
        target.outcome.as_str(),
    );
    db::query(
        "INSERT INTO findings (run_id, found_by, position, check_name, message, artifact, line) \
         VALUES ($1, 'server', $2, $3, $4, NULL, NULL)",
    )
    .bind(target.run_id)
    .bind(next)
    .bind(NOT_REPRODUCED)
    .bind(&message)
    .execute(&mut **tx)
    .await?;
    let cell = Cell { bundle_id: of, task: run.task.as_str(), hint: run.hint, current };
    if success {
        let is = flagging_checks(tx, target.run_id).await?;
        move_flags(tx, &cell, &was, &is).await?;
    } else if infra {
        // A run said to prove nothing either way, whose re-run ended in a counted
        // outcome: a failure in the strict view (spec §4e).
        move_refuted(tx, &cell, was.contains(NOT_REPRODUCED), true).await?;
    }
    Ok(())
}

/// Whether a verified bundle is a reproduction rather than a submission.
pub fn is_reproduction(bundle: &VerifiedBundle) -> bool {
    bundle.manifest.reproduction.is_some()
}
