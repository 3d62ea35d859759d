//! What a reproduction's re-runs refute (spec §4d, §4l): the server's `not-reproduced`
//! and `not-generalised` findings on the runs they re-ran and on every other success of
//! their submission with the same patch, and the tries a re-run that could not complete
//! counts towards.

use sqlx::Row;
use vocab::Outcome;

use crate::db;
use crate::error::StoreError;
use crate::flags::{Cell, flagging_checks, move_flags, move_refuted};
use crate::steps::Tx;

use super::NOT_REPRODUCED;

/// A run of the reproduced submission, as a reproduction's run is checked against it.
pub(super) struct Target {
    pub(super) run_id: i64,
    pub(super) outcome: Outcome,
    pub(super) sampled: bool,
    pub(super) reproduced: bool,
    pub(super) patch: Option<String>,
    /// Its patch's identity (bundle spec §5b), where the server read it.
    pub(super) identity: Option<String>,
    /// The held-out variant the key chose for it at ingest (spec §4l).
    pub(super) heldout_variant: Option<String>,
}

/// A submission other than the reproduced one that a refutation reached, by a success
/// with the same patch (bundle spec §5b): it is tainted in turn.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Reached {
    pub(super) bundle_id: String,
    pub(super) agent_id: String,
    pub(super) current: bool,
    /// Its run the finding went to.
    pub(super) run_id: i64,
}

/// The server's `not-generalised` finding on a sampled success whose re-run on a
/// held-out variant of its task was not a success: the success is flagged (a failure in
/// the strict view), as a different re-run flags it; so is every other stored success
/// with the same patch on the same task, of any submission.
pub(super) async fn write_not_generalised(
    tx: &mut Tx<'_>,
    target: &Target,
    h: &bundle::HeldOut,
    cell: &Cell<'_>,
    reproduction: &str,
) -> Result<Vec<Reached>, StoreError> {
    let message = format!(
        "The maintainers re-ran this run's patch on a held-out variant of its task (inputs no submitter sees, variant \
         {}) and it was not a success there: the result did not generalise (reproduction {reproduction}).",
        h.variant
    );
    flag(tx, target.run_id, cell, crate::NOT_GENERALISED, &message).await?;
    flag_same_patch(
        tx,
        target,
        cell,
        crate::NOT_GENERALISED,
        "was not a success on a held-out variant of its task",
    )
    .await
}

/// Adds the server's finding `check` to success `run_id` of `cell`, and moves the
/// cell's flagged counts if that newly flags it.
async fn flag(
    tx: &mut Tx<'_>,
    run_id: i64,
    cell: &Cell<'_>,
    check: &str,
    message: &str,
) -> Result<(), StoreError> {
    let was = flagging_checks(tx, run_id).await?;
    add_finding(tx, run_id, check, message).await?;
    let is = flagging_checks(tx, run_id).await?;
    move_flags(tx, cell, &was, &is).await?;
    Ok(())
}

/// The re-run of `target`'s patch refuted it (`check`): every other stored success of
/// the same task with the same patch (by its identity, bundle spec §5b, or byte for
/// byte), of this submission or any other, earlier or later, under any agent or key,
/// claims what was refuted and gets the finding too (the sample re-runs a few successes;
/// a copy beside them, or elsewhere, is the same claim). The other submissions reached.
async fn flag_same_patch(
    tx: &mut Tx<'_>,
    target: &Target,
    cell: &Cell<'_>,
    check: &str,
    what: &str,
) -> Result<Vec<Reached>, StoreError> {
    let Some(patch) = &target.patch else { return Ok(Vec::new()) };
    let rows = db::query(
        "SELECT r.id, r.bundle_id, r.hint, r.attempt, s.agent_id, p.digest, \
         CASE WHEN s.superseded_by IS NULL THEN 1 ELSE 0 END AS current \
         FROM runs r JOIN submissions s ON s.bundle_id = r.bundle_id \
         JOIN run_artifacts p ON p.run_id = r.id AND p.role = 'patch' \
         LEFT JOIN patch_identities i ON i.digest = p.digest \
         WHERE r.task = $1 AND r.outcome = 'success' AND r.id <> $2 AND (p.digest = $3 OR i.identity = $4) \
         ORDER BY s.received_at, r.bundle_id, r.hint, r.attempt",
    )
    .bind(cell.task)
    .bind(target.run_id)
    .bind(patch)
    .bind(target.identity.as_deref())
    .fetch_all(&mut **tx)
    .await?;
    let (agent,): (String,) = db::query_as("SELECT agent_id FROM submissions WHERE bundle_id = $1")
        .bind(cell.bundle_id)
        .fetch_one(&mut **tx)
        .await?;
    let mut reached = Vec::new();
    for row in &rows {
        let run_id: i64 = row.try_get("id")?;
        if flagging_checks(tx, run_id).await?.contains(check) {
            continue;
        }
        let bundle_id: String = row.try_get("bundle_id")?;
        let digest: String = row.try_get("digest")?;
        let hint: vocab::Hint = crate::reads::name(row, "hint")?;
        let current = row.try_get::<i64, _>("current")? != 0;
        let written = if &digest == patch { "" } else { ", written otherwise: it changes the same lines" };
        let message = if bundle_id == cell.bundle_id {
            format!(
                "This run's patch ({digest}{written}) is the one of run {} of this submission, which the maintainers \
                 re-ran: it {what}. The same patch makes the same claim.",
                target.run_id
            )
        } else {
            format!(
                "This run's patch ({digest}{written}) is the one of run {} (agent {agent}, submission {}), which the \
                 maintainers re-ran: it {what}. The same patch makes the same claim, whenever and by whomever it \
                 was submitted.",
                target.run_id, cell.bundle_id
            )
        };
        let same = Cell { bundle_id: &bundle_id, task: cell.task, hint, current };
        flag(tx, run_id, &same, check, &message).await?;
        if bundle_id != cell.bundle_id {
            reached.push(Reached { bundle_id, agent_id: row.try_get("agent_id")?, current, run_id });
        }
    }
    Ok(reached)
}

/// The server's `not-reproduced` finding on a submitted run whose final success the
/// reproduction did not repeat, or whose re-runs could not be completed in `exhausted`
/// tries (spec §4d). A success it newly flags (no finding a maintainer has not dismissed
/// flagged it before) counts as flagged in the kept sums, as a review's change does
/// (`findings::move_flagged`).
pub(super) async fn write_not_reproduced(
    tx: &mut Tx<'_>,
    target: &Target,
    run: &bundle::Run,
    cell: &Cell<'_>,
    exhausted: Option<i64>,
    reproduction: &str,
) -> Result<Vec<Reached>, StoreError> {
    let success = target.outcome == Outcome::Success;
    let infra = target.outcome == Outcome::InfraError;
    let was = if success || infra { flagging_checks(tx, target.run_id).await? } else { Default::default() };
    let message = match exhausted {
        Some(tries) => format!(
            "The maintainers' runner could not complete a re-run of this run's patch in {tries} tries (each ended \
             infra_error, the last with {}), where the submission says {}: a run that cannot be re-run counts as not \
             reproduced (reproduction {reproduction}).",
            run.error_type.as_deref().unwrap_or("no error type"),
            target.outcome.as_str(),
        ),
        None => format!(
            "The maintainers re-ran this run's patch and it ended {} ({}), where the submission says {}: the result \
             did not reproduce (reproduction {reproduction}).",
            run.outcome.as_str(),
            if run.outcome.succeeded() == Some(true) { "a success" } else { "not a success" },
            target.outcome.as_str(),
        ),
    };
    add_finding(tx, target.run_id, NOT_REPRODUCED, &message).await?;
    if success {
        let is = flagging_checks(tx, target.run_id).await?;
        move_flags(tx, cell, &was, &is).await?;
        let what = if exhausted.is_some() { "could not be re-run" } else { "did not reproduce" };
        return flag_same_patch(tx, target, cell, NOT_REPRODUCED, what).await;
    } else if infra {
        // A run said to prove nothing either way, whose re-run ended in a counted
        // outcome, or could not be re-run at all: a failure in the strict view (spec §4e).
        move_refuted(tx, cell, was.contains(NOT_REPRODUCED), true).await?;
    }
    Ok(Vec::new())
}

/// One try of a sampled run (spec §4d): a re-run that ended `infra_error`, kept with what
/// it left for the maintainers. How many tries the run has had, this one included.
pub(super) async fn write_try(
    tx: &mut Tx<'_>,
    target: &Target,
    run: &bundle::Run,
    reproduction: &str,
    at: &str,
) -> Result<i64, StoreError> {
    db::query(
        "INSERT INTO reproduction_tries (run_id, reproduction, error_type, tried_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(target.run_id)
    .bind(reproduction)
    .bind(&run.error_type)
    .bind(at)
    .execute(&mut **tx)
    .await?;
    for (role, digest) in &run.artifacts {
        db::query(
            "INSERT INTO reproduction_try_artifacts (run_id, reproduction, role, digest) VALUES ($1, $2, $3, $4)",
        )
        .bind(target.run_id)
        .bind(reproduction)
        .bind(role)
        .bind(digest)
        .execute(&mut **tx)
        .await?;
    }
    let (tries,): (i64,) =
        db::query_as("SELECT CAST(COUNT(*) AS BIGINT) FROM reproduction_tries WHERE run_id = $1")
            .bind(target.run_id)
            .fetch_one(&mut **tx)
            .await?;
    Ok(tries)
}

/// Adds the server's finding `check` to run `run_id`, after the server's others.
pub(super) async fn add_finding(
    tx: &mut Tx<'_>,
    run_id: i64,
    check: &str,
    message: &str,
) -> Result<(), StoreError> {
    let (next,): (i64,) = db::query_as(
        "SELECT CAST(COALESCE(MAX(position) + 1, 0) AS BIGINT) FROM findings WHERE run_id = $1 AND found_by = 'server'",
    )
    .bind(run_id)
    .fetch_one(&mut **tx)
    .await?;
    db::query(
        "INSERT INTO findings (run_id, found_by, position, check_name, message, artifact, line) \
         VALUES ($1, 'server', $2, $3, $4, NULL, NULL)",
    )
    .bind(run_id)
    .bind(next)
    .bind(check)
    .bind(message)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
