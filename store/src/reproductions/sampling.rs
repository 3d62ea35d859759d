//! The sample each self-reported submission gets at ingest (spec §4e), and the
//! sampling keys behind it: each epoch's key committed at its start, revealed at its end,
//! and what anyone may know of a submission's sample meanwhile.

use std::collections::BTreeMap;

use bundle::VerifiedBundle;
use bundle::sample::{self, Candidate};
use rand_core::{OsRng, RngCore};
use sqlx::Row;
use vocab::{Hint, Tier};

use crate::db;
use crate::error::StoreError;
use crate::model::{KeyRecord, SamplingEpoch};
use crate::reads::name;
use crate::steps::Tx;
use crate::{Store, now};

use super::*;

/// Whether a bundle signed by `signer` is sampled: a submitter's own evaluation or
/// import (a maintainer's is verified already; a paper's numbers have no patch).
fn sampled_kind(bundle: &VerifiedBundle, signer: &KeyRecord) -> bool {
    signer.tier == Tier::Submitter
        && bundle.manifest.reproduction.is_none()
        && bundle.manifest.provenance.kind.rule().sampled
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
    checks: &crate::ServerChecks,
    rule: sample::Rule,
) -> Result<(), StoreError> {
    if !sampled_kind(bundle, signer) {
        return Ok(());
    }
    let runs = Candidate::of(&bundle.manifest);
    let (epoch, key) = current_key(tx, at).await?;
    // Spec §4e: a submitter one of whose submissions stands refuted (the count the
    // reproductions keep, which also marks the submitter's rows) is sampled by the
    // enlarged rule.
    let (refuted,): (i64,) = db::query_as(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM submissions WHERE keyid = $1 AND refuted > 0 AND bundle_id <> $2",
    )
    .bind(&signer.keyid)
    .bind(bundle_id)
    .fetch_one(&mut **tx)
    .await?;
    let rule = if refuted > 0 { rule.enlarged() } else { rule };
    // The keyed rule's choice, and the runs whose same run of an earlier submission did
    // not reproduce (spec §4e), where this bundle has them.
    let mut chosen: BTreeMap<usize, Option<&str>> =
        sample::choose(&key, bundle_id, &runs, &rule).into_iter().map(|i| (i, None)).collect();
    let successes = sample::successes(&runs);
    let sizes = sample::sizes(successes, &rule);
    let catches = sample::power(successes, sizes, rule.share);
    let agent = &bundle.manifest.agent.id;
    for c in carried {
        let same = bundle.manifest.runs.iter().position(|r| c.reaches(agent, r, checks.identity_of(r)));
        // Carried is said even where the key chose it too: that it is sampled follows
        // from public facts, so saying so tells a submitter nothing of the key's choice.
        if let Some(i) = same {
            chosen.insert(i, Some(c.from.as_str()));
        }
    }
    // Spec §4l: each sampled success is re-run on a held-out variant of its task too,
    // the key's choice among the variants registered by now.
    let registered: Vec<(String, String)> = db::query_as(
        "SELECT task, digest FROM heldout_variants WHERE retired_at IS NULL ORDER BY task, digest",
    )
    .fetch_all(&mut **tx)
    .await?;
    for (i, from) in &chosen {
        let c = &runs[*i];
        let variant = if c.outcome == vocab::Outcome::Success && c.has_patch {
            let of_task = registered.iter().filter(|(t, _)| *t == c.task).map(|(_, d)| d.as_str());
            sample::choose_variant(&key, bundle_id, &c.task, c.hint, c.attempt, of_task)
        } else {
            None
        };
        db::query(
            "INSERT INTO samples (run_id, bundle_id, epoch, sampled_at, carried_from, heldout_variant) \
             SELECT id, bundle_id, $1, $2, $7, $8 FROM runs WHERE bundle_id = $3 AND task = $4 AND hint = $5 AND attempt = $6",
        )
        .bind(epoch)
        .bind(at)
        .bind(bundle_id)
        .bind(c.task.as_str())
        .bind(c.hint.as_str())
        .bind(i64::from(c.attempt))
        .bind(*from)
        .bind(variant)
        .execute(&mut **tx)
        .await?;
    }
    let rule_json = serde_json::to_string(&rule).expect("a rule serialises");
    db::query("UPDATE submissions SET sampled = $1, sample_rule = $3, sample_catches = $4, sample_share = $5 WHERE bundle_id = $2")
        .bind(chosen.len() as i64)
        .bind(bundle_id)
        .bind(rule_json)
        .bind(catches)
        .bind(rule.share)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// A sampled run anyone may know of: reproduced, sampled under a revealed key, carried
/// from an earlier submission, or escalated by a refutation of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicSampled {
    pub task: String,
    pub hint: Hint,
    pub attempt: i64,
    pub carried_from: Option<String>,
    /// The run of its submission whose refutation queued it (issue 75).
    pub escalated_by: Option<i64>,
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

    /// The runs of a submission whose sample anyone may know of (reproduced, under a
    /// revealed key, or sampled because the same run of the agent's earlier submission
    /// did not reproduce, which anyone can see), as (task, hint, attempt, that earlier
    /// submission); every sampled run once its key is out.
    pub async fn public_sample(&self, bundle_id: &str) -> Result<Vec<PublicSampled>, StoreError> {
        let rows = db::query(
            "SELECT r.task, r.hint, r.attempt, x.carried_from, x.escalated_by FROM samples x JOIN runs r ON r.id = x.run_id \
             JOIN sampling_keys k ON k.epoch = x.epoch LEFT JOIN reproduced_runs rr ON rr.run_id = x.run_id \
             WHERE x.bundle_id = $1 AND (k.revealed_at IS NOT NULL OR rr.run_id IS NOT NULL OR x.carried_from IS NOT NULL \
             OR x.escalated_by IS NOT NULL) ORDER BY r.task, r.hint, r.attempt",
        )
        .bind(bundle_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(PublicSampled {
                    task: r.try_get("task")?,
                    hint: name(r, "hint")?,
                    attempt: r.try_get("attempt")?,
                    carried_from: r.try_get("carried_from")?,
                    escalated_by: r.try_get("escalated_by")?,
                })
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

    /// Records the rule [`Store::sample_rule`] holds as the one in force from now on,
    /// unless it is the one recorded last; the change log says so. Whether it changed.
    pub async fn record_sample_rule(&self) -> Result<bool, StoreError> {
        let rule = self.sample_rule();
        let text = serde_json::to_string(&rule).expect("a rule serialises");
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let last: Option<(String,)> =
            db::query_as("SELECT rule FROM sample_rules ORDER BY since DESC LIMIT 1")
                .fetch_optional(&mut *tx)
                .await?;
        if last.is_some_and(|(r,)| r == text) {
            return Ok(false);
        }
        let at = now();
        db::query("INSERT INTO sample_rules (since, rule) VALUES ($1, $2)")
            .bind(&at)
            .bind(&text)
            .execute(&mut *tx)
            .await?;
        sampling_change(
            &mut tx,
            &at,
            &format!(
                "the sample rule is now: the successes that catch a {}% share of fakes with {}% probability, at most {} \
                 per submission (spec §4e)",
                rule.share * 100.0,
                rule.probability * 100.0,
                rule.cap
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Every sample rule the server has used, oldest first, each with when it began.
    pub async fn sample_rules(&self) -> Result<Vec<(String, sample::Rule)>, StoreError> {
        let rows: Vec<(String, String)> =
            db::query_as("SELECT since, rule FROM sample_rules ORDER BY since").fetch_all(&self.pool).await?;
        rows.into_iter()
            .map(|(since, text)| {
                let rule = rule_of(&text, &since)?;
                Ok((since, rule))
            })
            .collect()
    }

    /// The rule a submission's sample of successes was sized by (spec §4e), where it was
    /// sampled by one.
    pub async fn sample_rule_of(&self, bundle_id: &str) -> Result<Option<sample::Rule>, StoreError> {
        let row: Option<(Option<String>,)> =
            db::query_as("SELECT sample_rule FROM submissions WHERE bundle_id = $1")
                .bind(bundle_id)
                .fetch_optional(&self.pool)
                .await?;
        row.and_then(|(r,)| r).map(|text| rule_of(&text, bundle_id)).transpose()
    }
}

/// A stored sample rule (of `whose`: a submission, or the time it came into force).
fn rule_of(text: &str, whose: &str) -> Result<sample::Rule, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Unreadable(format!("the sample rule of {whose}: {e}")))
}
