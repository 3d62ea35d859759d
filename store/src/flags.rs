//! The counts a run's flag moves (the strict view's): which checks flag a success, and
//! how its cell's `flagged` and `refuted` counts and its submission's counts by check
//! move when that changes. Shared by a review (`findings`), a reproduction's findings
//! (`reproductions::refuted`) and what a caught lie costs (`reproductions::taint`).

use std::collections::BTreeSet;

use sqlx::{Any, Transaction};
use vocab::{Hint, Review};

use crate::db;
use crate::error::StoreError;

/// A finding no maintainer dismissed (binding the dismissal as `$2`).
const NOT_DISMISSED: &str = "(f.review IS NULL OR f.review <> $2)";

/// The checks whose findings about run `run_id` no maintainer dismissed: what flags the
/// run, if it is a success.
pub(crate) async fn flagging_checks(
    tx: &mut Transaction<'_, Any>,
    run_id: i64,
) -> Result<BTreeSet<String>, StoreError> {
    let rows: Vec<(String,)> = db::query_as(&format!(
        "SELECT DISTINCT f.check_name FROM findings f WHERE f.run_id = $1 AND {NOT_DISMISSED}"
    ))
    .bind(run_id)
    .bind(Review::Dismissed.as_str())
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows.into_iter().map(|(c,)| c).collect())
}

/// Where a success run's counts are kept: its submission, task, hint condition, and
/// whether the submission is current.
pub(crate) struct Cell<'a> {
    pub(crate) bundle_id: &'a str,
    pub(crate) task: &'a str,
    pub(crate) hint: Hint,
    pub(crate) current: bool,
}

/// A success run once flagged by the checks `before` and now by `after`: its cell's
/// flagged counts move if it became flagged or stopped being so, and its submission's
/// counts by check move for each check that began or stopped flagging it. Returns how
/// the run's flag moved: 1 flagged now, -1 no longer, 0 unchanged.
pub(crate) async fn move_flags(
    tx: &mut Transaction<'_, Any>,
    cell: &Cell<'_>,
    before: &BTreeSet<String>,
    after: &BTreeSet<String>,
) -> Result<i64, StoreError> {
    let delta = i64::from(!after.is_empty()) - i64::from(!before.is_empty());
    if delta != 0 {
        move_count(tx, "flagged", cell, delta).await?;
    }
    for check in before.difference(after) {
        db::query("UPDATE flagged_checks SET runs = runs - 1 WHERE bundle_id = $1 AND check_name = $2")
            .bind(cell.bundle_id)
            .bind(check)
            .execute(&mut **tx)
            .await?;
    }
    for check in after.difference(before) {
        db::query(
            "INSERT INTO flagged_checks (bundle_id, check_name, runs) VALUES ($1, $2, 1) \
             ON CONFLICT (bundle_id, check_name) DO UPDATE SET runs = flagged_checks.runs + 1",
        )
        .bind(cell.bundle_id)
        .bind(check)
        .execute(&mut **tx)
        .await?;
    }
    Ok(delta)
}

/// Moves the count `column` (`flagged`, `refuted`) of a run's cell (`bundle_id`,
/// `task`, `hint`) by `delta`: in its aggregate, its submission's totals and, if the
/// submission is `current`, the task's totals.
async fn move_count(
    tx: &mut Transaction<'_, Any>,
    column: &str,
    cell: &Cell<'_>,
    delta: i64,
) -> Result<(), StoreError> {
    db::query(&format!(
        "UPDATE aggregates SET {column} = {column} + $1 WHERE bundle_id = $2 AND task = $3 AND hint = $4"
    ))
    .bind(delta)
    .bind(cell.bundle_id)
    .bind(cell.task)
    .bind(cell.hint.as_str())
    .execute(&mut **tx)
    .await?;
    db::query(&format!("UPDATE totals SET {column} = {column} + $1 WHERE bundle_id = $2 AND hint = $3"))
        .bind(delta)
        .bind(cell.bundle_id)
        .bind(cell.hint.as_str())
        .execute(&mut **tx)
        .await?;
    if cell.current {
        db::query(&format!("UPDATE task_totals SET {column} = {column} + $1 WHERE task = $2 AND hint = $3"))
            .bind(delta)
            .bind(cell.task)
            .bind(cell.hint.as_str())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// An `infra_error` run once refuted (`before`: a `not-reproduced` finding no
/// maintainer dismissed) and now `after`: its cell's refuted counts move with it, which
/// the strict view counts as failures.
pub(crate) async fn move_refuted(
    tx: &mut Transaction<'_, Any>,
    cell: &Cell<'_>,
    before: bool,
    after: bool,
) -> Result<i64, StoreError> {
    let delta = i64::from(after) - i64::from(before);
    if delta != 0 {
        move_count(tx, "refuted", cell, delta).await?;
    }
    Ok(delta)
}
