//! The maintainers' queue of sampled runs, what the re-runs found and cost, and the
//! runs that did not reproduce, which follow the agent (spec §6a).

use sqlx::Row;
use vocab::Hint;

use crate::Store;
use crate::db;
use crate::error::StoreError;
use crate::model::{ArtifactRef, HeldOutRun, QueuedRun, ReproducedRun, RunReproduction};
use crate::reads::name;
use crate::steps::Tx;

use super::*;

/// A run of an agent's earlier submission whose reproduction differed, with a
/// `not-reproduced` finding no maintainer has dismissed: it follows the agent (spec §6a).
#[derive(Debug, Clone)]
pub(crate) struct Carried {
    pub task: String,
    pub hint: Hint,
    pub attempt: u32,
    /// The earlier submission.
    pub from: String,
    /// Its agent.
    pub agent: String,
    /// The patch that did not reproduce, where the run had one: a later run of the same
    /// task with the same patch carries the finding whatever its agent or key.
    pub patch: Option<String>,
    /// That patch's identity (bundle spec §5b): a later patch that changes the same
    /// lines, however written, is the same patch.
    pub identity: Option<String>,
    /// What it failed: `not-reproduced` (a re-run of its patch ended with another final
    /// success) or `not-generalised` (it was no success on a held-out variant).
    pub check: String,
}

impl Carried {
    /// Whether `run` of a submission of `agent`, its patch's identity `identity`, carries
    /// what did not reproduce: it is the same run of the same agent, or the same patch
    /// (by identity, or byte for byte) on the same task.
    pub fn reaches(&self, agent: &str, run: &bundle::Run, identity: Option<&str>) -> bool {
        self.same_run(agent, run) || self.same_patch(run, identity)
    }

    fn same_run(&self, agent: &str, run: &bundle::Run) -> bool {
        self.agent == agent
            && self.task == run.task.as_str()
            && self.hint == run.hint
            && self.attempt == run.attempt
    }

    fn same_patch(&self, run: &bundle::Run, identity: Option<&str>) -> bool {
        let digest = run.artifacts.get("patch").map(String::as_str);
        self.task == run.task.as_str()
            && ((self.patch.is_some() && self.patch.as_deref() == digest)
                || (self.identity.is_some() && self.identity.as_deref() == identity))
    }

    /// Where it came from, in words.
    pub fn source(&self, agent: &str, run: &bundle::Run, identity: Option<&str>) -> String {
        let written_otherwise = self.patch.as_deref() != run.artifacts.get("patch").map(String::as_str)
            && self.same_patch(run, identity);
        if self.same_run(agent, run) && !self.same_patch(run, identity) {
            format!(
                "The same run (task {}, hint {}, attempt {}) of this agent's earlier submission {}",
                self.task,
                self.hint.as_str(),
                self.attempt,
                self.from
            )
        } else {
            format!(
                "The same patch ({}{}) on task {}, in attempt {} ({}) of agent {}'s submission {},",
                self.patch.as_deref().unwrap_or_default(),
                if written_otherwise { ", written otherwise: it changes the same lines" } else { "" },
                self.task,
                self.attempt,
                self.hint.as_str(),
                self.agent,
                self.from
            )
        }
    }
}

/// The runs stored before that did not reproduce, no maintainer having dismissed the
/// finding, which `bundle` may carry: its agent's earlier submissions' (for the same
/// benchmark version), and any agent's whose patch one of its runs has; oldest
/// submission first.
pub(crate) async fn not_reproduced_before(
    tx: &mut Tx<'_>,
    bundle: &bundle::VerifiedBundle,
    bundle_id: &str,
    checks: &crate::ServerChecks,
) -> Result<Vec<Carried>, StoreError> {
    let m = &bundle.manifest;
    // Its patches, by digest and by identity.
    let patches: Vec<&str> = {
        let mut p: Vec<&str> = m
            .runs
            .iter()
            .filter_map(|r| r.artifacts.get("patch").map(String::as_str))
            .chain(m.runs.iter().filter_map(|r| checks.identity_of(r)))
            .collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    // The patches are bound after the four fixed parameters, a thousand at most (a
    // bundle's runs have fewer distinct patches than that in any real case; beyond, the
    // first thousand are asked).
    let patches = &patches[..patches.len().min(1000)];
    let by_patch = if patches.is_empty() {
        String::new()
    } else {
        let list = db::Placeholders::after(5).list(patches.len());
        format!(" OR p.digest IN ({list}) OR i.identity IN ({list})")
    };
    let sql = format!(
        "SELECT DISTINCT r.task, r.hint, r.attempt, r.bundle_id, s.agent_id, s.received_at, p.digest AS patch, \
         i.identity, f.check_name \
         FROM findings f JOIN runs r ON r.id = f.run_id JOIN submissions s ON s.bundle_id = r.bundle_id \
         LEFT JOIN run_artifacts p ON p.run_id = r.id AND p.role = 'patch' \
         LEFT JOIN patch_identities i ON i.digest = p.digest \
         WHERE r.bundle_id <> $3 AND f.check_name IN ($4, $5) \
         AND f.found_by = 'server' AND (f.review IS NULL OR f.review <> 'dismissed') \
         AND ((s.agent_id = $1 AND s.benchmark_version = $2){by_patch}) \
         ORDER BY s.received_at, r.bundle_id, r.task, r.hint, r.attempt, f.check_name"
    );
    let mut q = db::query(&sql)
        .bind(&m.agent.id)
        .bind(&m.benchmark.version)
        .bind(bundle_id)
        .bind(NOT_REPRODUCED)
        .bind(crate::NOT_GENERALISED);
    for p in patches {
        q = q.bind(*p);
    }
    let rows = q.fetch_all(&mut **tx).await?;
    rows.iter()
        .map(|r| {
            Ok(Carried {
                task: r.try_get("task")?,
                hint: name(r, "hint")?,
                attempt: u32::try_from(r.try_get::<i64, _>("attempt")?).unwrap_or(u32::MAX),
                from: r.try_get("bundle_id")?,
                agent: r.try_get("agent_id")?,
                patch: r.try_get("patch")?,
                identity: r.try_get::<Option<String>, _>("identity")?.filter(|i| i != crate::NO_IDENTITY),
                check: r.try_get("check_name")?,
            })
        })
        .collect()
}

impl Store {
    /// The sampled runs, oldest sample first; only those not yet reproduced when
    /// `pending`.
    pub async fn reproduction_queue(&self, pending: bool) -> Result<Vec<QueuedRun>, StoreError> {
        self.queue_rows(pending, None).await
    }

    /// A window of [`Store::reproduction_queue`]: `take` runs after the first `skip`, and
    /// how many runs the whole list holds.
    pub async fn reproduction_queue_window(
        &self,
        pending: bool,
        skip: i64,
        take: i64,
    ) -> Result<(Vec<QueuedRun>, i64), StoreError> {
        let only = if pending { " WHERE rr.run_id IS NULL" } else { "" };
        let total: i64 = db::query(&format!(
            "SELECT CAST(COUNT(*) AS BIGINT) AS n FROM samples x \
             LEFT JOIN reproduced_runs rr ON rr.run_id = x.run_id{only}"
        ))
        .fetch_one(&self.pool)
        .await?
        .try_get("n")?;
        Ok((self.queue_rows(pending, Some((skip, take))).await?, total))
    }

    async fn queue_rows(
        &self,
        pending: bool,
        window: Option<(i64, i64)>,
    ) -> Result<Vec<QueuedRun>, StoreError> {
        let only = if pending { " WHERE rr.run_id IS NULL" } else { "" };
        let cut = window.map_or(String::new(), |(skip, take)| format!(" LIMIT {take} OFFSET {skip}"));
        let rows = db::query(&format!(
            "SELECT r.id, r.bundle_id, s.agent_id, s.task_set_digest, s.benchmark_name, s.superseded_by, \
             r.task, r.hint, r.attempt, r.outcome, r.duration_s, p.digest AS patch, x.epoch, x.sampled_at, \
             rr.outcome AS reproduced_outcome, rr.held, x.heldout_variant, rr.heldout_generalised, \
             (SELECT CAST(COUNT(*) AS BIGINT) FROM reproduction_tries t WHERE t.run_id = r.id) AS tries \
             FROM samples x JOIN runs r ON r.id = x.run_id JOIN submissions s ON s.bundle_id = r.bundle_id \
             LEFT JOIN run_artifacts p ON p.run_id = r.id AND p.role = 'patch' \
             LEFT JOIN reproduced_runs rr ON rr.run_id = r.id{only} \
             ORDER BY x.sampled_at, r.bundle_id, r.task, r.hint, r.attempt{cut}"
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
                    heldout_variant: r.try_get("heldout_variant")?,
                    heldout: r.try_get::<Option<i64>, _>("heldout_generalised")?.map(|g| g != 0),
                    tries: r.try_get("tries")?,
                })
            })
            .collect()
    }

    /// An agent's runs the maintainers re-ran, newest reproduction first.
    pub async fn reproduced_runs_of(&self, agent: &str) -> Result<Vec<ReproducedRun>, StoreError> {
        let rows = db::query(
            "SELECT r.id, r.bundle_id, rr.reproduction, r.task, r.hint, r.attempt, r.outcome, rr.outcome AS reproduced, rr.held, \
             rr.duration_s, rp.received_at, rr.heldout_generalised FROM reproduced_runs rr JOIN runs r ON r.id = rr.run_id \
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
                    duration_s: Some(r.try_get("duration_s")?),
                    received_at: r.try_get("received_at")?,
                    heldout: r.try_get::<Option<i64>, _>("heldout_generalised")?.map(|g| g != 0),
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
             rr.heldout_variant, rr.heldout_generalised, \
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
                duration_s: Some(row.try_get("duration_s")?),
                metrics: serde_json::from_str(&metrics).unwrap_or_default(),
                metrics_withheld: false,
                outputs_withheld: false,
                held: row.try_get::<i64, _>("held")? != 0,
                executor: row.try_get("executor")?,
                hardware: hardware.description,
                gpus: row.try_get("gpus")?,
                received_at: row.try_get("received_at")?,
                artifacts,
                heldout: match (
                    row.try_get::<Option<String>, _>("heldout_variant")?,
                    row.try_get::<Option<i64>, _>("heldout_generalised")?,
                ) {
                    (Some(variant), Some(g)) => Some(HeldOutRun { variant, generalised: g != 0 }),
                    _ => None,
                },
            }),
        ))
    }
}
