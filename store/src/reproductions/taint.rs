//! A caught lie costs the whole submission (issue 75; spec §4e). Once a re-run refutes a
//! run of a submission (`not-reproduced` on a claimed success or on an `infra_error`, or
//! `not-generalised`), every other success of it that was not itself re-run and held
//! gets the server's finding `unverified`: a failure in the strict view, and flagged in
//! both. Each is queued for the maintainers (an *escalated* sample, public from the
//! moment it is queued: it follows from the refutation, which is public). A re-run that
//! holds lifts a run's `unverified`; a maintainer's dismissal of the last refutation
//! standing lifts them all, with its note.

use std::collections::BTreeSet;

use sqlx::Row;
use vocab::Hint;

use crate::db;
use crate::error::StoreError;
use crate::flags::{Cell, flagging_checks, move_flags};
use crate::steps::Tx;

use super::NOT_REPRODUCED;

/// The check an unverified success of a refuted submission gets.
pub const UNVERIFIED: &str = "unverified";

/// The refutations that taint a submission: what a re-run or a held-out re-run found.
const REFUTING: [&str; 2] = [NOT_REPRODUCED, crate::NOT_GENERALISED];

/// `bundle_id`'s successes that a refutation of `refuted` makes unverified: each gets
/// `unverified` and is queued for re-run. How many.
pub(super) async fn taint(
    tx: &mut Tx<'_>,
    bundle_id: &str,
    current: bool,
    refuted: i64,
    at: &str,
) -> Result<usize, StoreError> {
    let rows = db::query(
        "SELECT r.id, r.task, r.hint FROM runs r WHERE r.bundle_id = $1 AND r.outcome = 'success' \
         AND NOT EXISTS (SELECT 1 FROM reproduced_runs rr WHERE rr.run_id = r.id AND rr.held = 1 \
             AND (rr.heldout_generalised IS NULL OR rr.heldout_generalised = 1)) \
         AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.run_id = r.id AND f.found_by = 'server' \
             AND f.check_name IN ($2, $3, $4) AND (f.review IS NULL OR f.review <> 'dismissed')) \
         ORDER BY r.task, r.hint, r.attempt",
    )
    .bind(bundle_id)
    .bind(UNVERIFIED)
    .bind(REFUTING[0])
    .bind(REFUTING[1])
    .fetch_all(&mut **tx)
    .await?;
    let (epoch,): (Option<i64>,) = db::query_as("SELECT MIN(epoch) FROM samples WHERE bundle_id = $1")
        .bind(bundle_id)
        .fetch_one(&mut **tx)
        .await?;
    let message = format!(
        "Run {refuted} of this submission did not reproduce when the maintainers re-ran it: a caught lie costs the \
         whole submission, so this success, which was not itself re-run and held, is unverified (a failure in the \
         strict view) until the maintainers re-run it and it holds, or dismiss the finding on run {refuted}."
    );
    let mut queued = 0;
    for row in &rows {
        let run_id: i64 = row.try_get("id")?;
        let task: String = row.try_get("task")?;
        let hint: Hint = crate::reads::name(row, "hint")?;
        let cell = Cell { bundle_id, task: &task, hint, current };
        let was = flagging_checks(tx, run_id).await?;
        super::refuted::add_finding(tx, run_id, UNVERIFIED, &message).await?;
        let is = flagging_checks(tx, run_id).await?;
        move_flags(tx, &cell, &was, &is).await?;
        if let Some(epoch) = epoch {
            let inserted = db::query(
                "INSERT INTO samples (run_id, bundle_id, epoch, sampled_at, escalated_by) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (run_id) DO NOTHING",
            )
            .bind(run_id)
            .bind(bundle_id)
            .bind(epoch)
            .bind(at)
            .bind(refuted)
            .execute(&mut **tx)
            .await?
            .rows_affected();
            queued += inserted as usize;
        }
    }
    if queued > 0 {
        db::query("UPDATE submissions SET sampled = sampled + $1 WHERE bundle_id = $2")
            .bind(queued as i64)
            .bind(bundle_id)
            .execute(&mut **tx)
            .await?;
    }
    recount(tx, bundle_id).await?;
    Ok(rows.len())
}

/// A submission that carries a refutation from an earlier one of its agent (the same
/// run, by its patch's identity) is as caught as the earlier one: its other successes
/// are tainted in turn, before its totals join the task's (`current` false here: the
/// ingest adds them after). How many.
pub(crate) async fn carried(tx: &mut Tx<'_>, bundle_id: &str, at: &str) -> Result<usize, StoreError> {
    let Some(&first) = standing(tx, bundle_id).await?.first() else { return Ok(0) };
    taint(tx, bundle_id, false, first, at).await
}

/// Run `run_id` of `cell` was re-run and held: its `unverified` finding, if any, is
/// lifted (dismissed by the server, saying why).
pub(super) async fn verified(
    tx: &mut Tx<'_>,
    run_id: i64,
    cell: &Cell<'_>,
    reproduction: &str,
    at: &str,
) -> Result<(), StoreError> {
    let note = format!("re-run by the maintainers and held (reproduction {reproduction})");
    lift(tx, run_id, cell, &note, at).await
}

/// Dismisses `run_id`'s standing `unverified` findings with `note`, moving its cell's
/// flagged counts.
async fn lift(tx: &mut Tx<'_>, run_id: i64, cell: &Cell<'_>, note: &str, at: &str) -> Result<(), StoreError> {
    let was = flagging_checks(tx, run_id).await?;
    if !was.contains(UNVERIFIED) {
        return Ok(());
    }
    db::query(
        "UPDATE findings SET review = 'dismissed', review_note = $1, reviewed_at = $2 \
         WHERE run_id = $3 AND found_by = 'server' AND check_name = $4 AND (review IS NULL OR review <> 'dismissed')",
    )
    .bind(note)
    .bind(at)
    .bind(run_id)
    .bind(UNVERIFIED)
    .execute(&mut **tx)
    .await?;
    let is = flagging_checks(tx, run_id).await?;
    move_flags(tx, cell, &was, &is).await?;
    Ok(())
}

/// After a maintainer's review of a refutation on `bundle_id`: where none stands any
/// more, every `unverified` finding of the submission is lifted with `note`; where one
/// stands (a dismissal undone), the submission is tainted again. How many successes
/// moved, and which way (`true`: unverified again).
pub(crate) async fn reviewed(
    tx: &mut Tx<'_>,
    bundle_id: &str,
    current: bool,
    note: &str,
    at: &str,
) -> Result<Option<(bool, usize)>, StoreError> {
    let standing = standing(tx, bundle_id).await?;
    let result = match standing.first() {
        Some(&refuted) => {
            let n = taint(tx, bundle_id, current, refuted, at).await?;
            (n > 0).then_some((true, n))
        }
        None => {
            let rows = db::query(
                "SELECT DISTINCT r.id, r.task, r.hint FROM runs r JOIN findings f ON f.run_id = r.id \
                 WHERE r.bundle_id = $1 AND f.found_by = 'server' AND f.check_name = $2 \
                 AND (f.review IS NULL OR f.review <> 'dismissed') ORDER BY r.id",
            )
            .bind(bundle_id)
            .bind(UNVERIFIED)
            .fetch_all(&mut **tx)
            .await?;
            let note = format!("lifted with the maintainers' dismissal of the refutation behind it: {note}");
            for row in &rows {
                let task: String = row.try_get("task")?;
                let cell = Cell { bundle_id, task: &task, hint: crate::reads::name(row, "hint")?, current };
                lift(tx, row.try_get("id")?, &cell, &note, at).await?;
            }
            (!rows.is_empty()).then_some((false, rows.len()))
        }
    };
    recount(tx, bundle_id).await?;
    Ok(result)
}

/// Whether `check` is one that taints its submission.
pub(crate) fn refutes(check: &str) -> bool {
    REFUTING.contains(&check)
}

/// The runs of `bundle_id` with a refutation no maintainer dismissed, oldest first.
async fn standing(tx: &mut Tx<'_>, bundle_id: &str) -> Result<Vec<i64>, StoreError> {
    let rows: Vec<(i64,)> = db::query_as(
        "SELECT DISTINCT r.id FROM runs r JOIN findings f ON f.run_id = r.id WHERE r.bundle_id = $1 \
         AND f.found_by = 'server' AND f.check_name IN ($2, $3) AND (f.review IS NULL OR f.review <> 'dismissed') \
         AND (r.outcome = 'success' OR r.outcome = 'infra_error') ORDER BY r.id",
    )
    .bind(bundle_id)
    .bind(REFUTING[0])
    .bind(REFUTING[1])
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows.into_iter().map(|(r,)| r).collect())
}

/// Keeps `submissions.refuted` (the runs with a standing refutation) and
/// `submissions.unverified` (the successes a standing `unverified` flags) true.
async fn recount(tx: &mut Tx<'_>, bundle_id: &str) -> Result<(), StoreError> {
    let refuted = standing(tx, bundle_id).await?.len() as i64;
    let unverified: BTreeSet<i64> = db::query_as::<(i64,)>(
        "SELECT DISTINCT f.run_id FROM findings f JOIN runs r ON r.id = f.run_id WHERE r.bundle_id = $1 \
         AND f.found_by = 'server' AND f.check_name = $2 AND (f.review IS NULL OR f.review <> 'dismissed')",
    )
    .bind(bundle_id)
    .bind(UNVERIFIED)
    .fetch_all(&mut **tx)
    .await?
    .into_iter()
    .map(|(r,)| r)
    .collect();
    db::query("UPDATE submissions SET refuted = $1, unverified = $2 WHERE bundle_id = $3")
        .bind(refuted)
        .bind(unverified.len() as i64)
        .bind(bundle_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
