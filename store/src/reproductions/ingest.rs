//! A reproduction's ingest (spec §4d): refused whole, with a code, unless it re-ran
//! sampled runs of a submission held here, each from the patch it was submitted with.

use std::collections::BTreeMap;

use bundle::VerifiedBundle;
use sqlx::Row;
use vocab::{Outcome, Tier};

use crate::blobs::Staging;
use crate::db;
use crate::error::StoreError;
use crate::flags::Cell;
use crate::reads::name;
use crate::steps::{Ingested, Tx, signer, write_artifacts, write_change};
use crate::{Store, now};

use super::refuted::{Target, write_not_generalised, write_not_reproduced, write_try};
use super::taint;

/// A reproduction the server refuses, with the code the API answers.
fn refused(code: &'static str, message: String) -> StoreError {
    StoreError::Refused { code, message }
}

/// The submission a reproduction names, as the reproduction needs it.
struct Reproduced {
    agent_id: String,
    task_set_digest: String,
    superseded_by: Option<String>,
}

impl Store {
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
        let heldout = heldout_of(r, m, &targets, &r.of)?;
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
        let mut not_generalised = Vec::new();
        // Spec §4d: a re-run that ended infra_error is one try; the run waits for another
        // until its tries reach the server's number, and then did not reproduce.
        let allowed = i64::from(self.reproduction_tries());
        let mut waiting = Vec::new();
        let mut untried = Vec::new();
        let mut refuting = Vec::new();
        let mut reached: Vec<super::refuted::Reached> = Vec::new();
        for (index, (run, target)) in m.runs.iter().zip(&targets).enumerate() {
            let key = format!("{}/{}/{}", run.task, run.hint, run.attempt);
            let mut exhausted = None;
            if run.outcome == Outcome::InfraError {
                let tries = write_try(&mut tx, target, run, &bundle_id, &received_at).await?;
                if tries < allowed {
                    waiting.push(format!("{key}, try {tries} of {allowed}"));
                    continue;
                }
                exhausted = Some(tries);
                untried.push(key.clone());
            }
            let held = exhausted.is_none() && run.outcome.succeeded() == target.outcome.succeeded();
            db::query(
                "INSERT INTO reproduced_runs (run_id, reproduction, outcome, error_type, duration_s, metrics, held) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(target.run_id)
            .bind(&bundle_id)
            .bind(run.outcome.as_str())
            .bind(&run.error_type)
            .bind(run.duration_s.unwrap_or(0.0))
            // Spec §4j: sealed or not, the values the verifier read.
            .bind(serde_json::to_string(&bundle.metrics_of(index)).expect("serializes"))
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
            let cell = Cell {
                bundle_id: &r.of,
                task: run.task.as_str(),
                hint: run.hint,
                current: of.superseded_by.is_none(),
            };
            if !held {
                reached
                    .extend(write_not_reproduced(&mut tx, target, run, &cell, exhausted, &bundle_id).await?);
                if exhausted.is_none() {
                    differed.push(key);
                }
                // A claimed success, or a failure said to be the infrastructure's: a lie
                // in the submission's favour, caught.
                if matches!(target.outcome, Outcome::Success | Outcome::InfraError) {
                    refuting.push(target.run_id);
                }
            } else if heldout[index].is_none_or(|h| h.generalised) {
                taint::verified(&mut tx, target.run_id, &cell, &bundle_id, &received_at).await?;
            }
            if let Some(h) = heldout[index] {
                db::query("UPDATE reproduced_runs SET heldout_variant = $1, heldout_generalised = $2 WHERE run_id = $3")
                    .bind(&h.variant)
                    .bind(i64::from(h.generalised))
                    .bind(target.run_id)
                    .execute(&mut *tx)
                    .await?;
                if !h.generalised {
                    let cell = Cell {
                        bundle_id: &r.of,
                        task: run.task.as_str(),
                        hint: run.hint,
                        current: of.superseded_by.is_none(),
                    };
                    reached.extend(write_not_generalised(&mut tx, target, h, &cell, &bundle_id).await?);
                    not_generalised.push(format!("{}/{}/{}", run.task, run.hint, run.attempt));
                    refuting.push(target.run_id);
                }
            }
        }
        let tried = heldout.iter().flatten().count() as i64;
        db::query(
            "UPDATE submissions SET reproduced = reproduced + $1, differed = differed + $2, heldout = heldout + $3, \
             generalised = generalised + $4 WHERE bundle_id = $5",
        )
        .bind((m.runs.len() - waiting.len()) as i64)
        .bind((differed.len() + untried.len()) as i64)
        .bind(tried)
        .bind(tried - not_generalised.len() as i64)
        .bind(&r.of)
        .execute(&mut *tx)
        .await?;
        let mut detail = format!(
            "maintainers ({}) re-ran {} sampled runs of {} ({}): {} held",
            signer.owner,
            m.runs.len(),
            r.of,
            of.agent_id,
            m.runs.len() - differed.len() - waiting.len() - untried.len()
        );
        if !differed.is_empty() {
            detail.push_str(&format!("; {} did not reproduce ({})", differed.len(), differed.join(", ")));
        }
        if !waiting.is_empty() {
            detail.push_str(&format!(
                "; {} could not be re-run and will be tried again ({})",
                waiting.len(),
                waiting.join("; ")
            ));
        }
        if !untried.is_empty() {
            detail.push_str(&format!(
                "; {} could not be re-run in {allowed} tries and count as not reproduced ({})",
                untried.len(),
                untried.join(", ")
            ));
        }
        if tried > 0 {
            detail.push_str(&format!(
                "; held out: {} of {tried} generalised",
                tried - not_generalised.len() as i64
            ));
            if !not_generalised.is_empty() {
                detail.push_str(&format!(" ({} did not)", not_generalised.join(", ")));
            }
        }
        // Issue 75: a caught lie costs the whole submission.
        if let Some(&first) = refuting.first() {
            let unverified =
                taint::taint(&mut tx, &r.of, of.superseded_by.is_none(), first, &received_at).await?;
            if unverified > 0 {
                detail.push_str(&format!(
                    "; a caught lie costs the submission: {unverified} other success(es), not themselves re-run and \
                     held, are unverified (failures in the strict view) and queued for re-run"
                ));
            }
        }
        // Bundle spec §5b: the refutation reached every stored success with the same patch;
        // each other submission it reached is tainted in turn, and its log says so.
        reached.sort();
        reached.dedup_by(|a, b| a.bundle_id == b.bundle_id);
        for other in &reached {
            let unverified =
                taint::taint(&mut tx, &other.bundle_id, other.current, other.run_id, &received_at).await?;
            let mut said = format!(
                "a reproduction ({bundle_id}) of {} ({}) refuted a patch that run {} of this submission has too (the \
                 same changes, however written): the run carries the finding",
                r.of, of.agent_id, other.run_id
            );
            if unverified > 0 {
                said.push_str(&format!(
                    "; a caught lie costs the submission: {unverified} other success(es) are unverified and queued for re-run"
                ));
            }
            write_change(&mut tx, &received_at, "reproduced", &other.bundle_id, &other.agent_id, &said)
                .await?;
            detail.push_str(&format!(
                "; the same patch in {} ({}) was flagged too",
                other.bundle_id, other.agent_id
            ));
        }
        // Not the hours it took: the change log is anyone's, and a re-run's duration is a
        // channel a patch could shape (spec §4j); the maintainers' queue sums them.
        detail
            .push_str(&format!("; on {} ({}), reproduction {bundle_id}", r.executor, r.hardware.description));
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
         CASE WHEN rr.run_id IS NULL THEN 0 ELSE 1 END AS reproduced, x.heldout_variant, i.identity \
         FROM runs r LEFT JOIN run_artifacts p ON p.run_id = r.id AND p.role = 'patch' \
         LEFT JOIN patch_identities i ON i.digest = p.digest \
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
                identity: row.try_get::<Option<String>, _>("identity")?.filter(|i| i != crate::NO_IDENTITY),
                heldout_variant: row.try_get("heldout_variant")?,
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

/// Spec §4l: the reproduction's held-out re-run of each of its runs, in the manifest's
/// order: one for each run the key chose a variant for, on that variant, and none for
/// another.
fn heldout_of<'a>(
    r: &'a bundle::Reproduction,
    m: &bundle::Manifest,
    targets: &[Target],
    of: &str,
) -> Result<Vec<Option<&'a bundle::HeldOut>>, StoreError> {
    let mut out = Vec::with_capacity(m.runs.len());
    for (run, target) in m.runs.iter().zip(targets) {
        let label = format!("run {}/{}/{}", run.task, run.hint, run.attempt);
        let h = r
            .heldout
            .iter()
            .find(|h| h.task == run.task.as_str() && h.hint == run.hint && h.attempt == run.attempt);
        match (&target.heldout_variant, h) {
            // A re-run that could not complete was not re-run on its variant either: the
            // next try is (spec §4d, §4l).
            (Some(_), None) if run.outcome == Outcome::InfraError => out.push(None),
            (Some(chosen), None) => {
                return Err(refused(
                    "reproduction_heldout_mismatch",
                    format!(
                        "{label} of {of} was to be re-run on the held-out variant {chosen} as well, and the reproduction \
                         has no heldout entry for it"
                    ),
                ));
            }
            (Some(chosen), Some(h)) if h.variant != *chosen => {
                return Err(refused(
                    "reproduction_heldout_mismatch",
                    format!(
                        "{label} of {of}: the reproduction re-ran it on the held-out variant {}, but the sample chose {chosen}",
                        h.variant
                    ),
                ));
            }
            (None, Some(h)) => {
                return Err(refused(
                    "reproduction_heldout_mismatch",
                    format!(
                        "{label} of {of}: the reproduction re-ran it on the held-out variant {}, but the sample chose no \
                         variant for it",
                        h.variant
                    ),
                ));
            }
            _ => out.push(h),
        }
    }
    Ok(out)
}
