//! The queries behind the pages and the read API, by resource: the leaderboard, agents
//! and their submissions, runs, tasks, failures, the change log, the comparison of two
//! submissions and their parity. Rates come from the aggregates kept at ingest, never
//! from scanning runs (but a parity side's rate of each attempt). What several resources
//! read alike (a row's sums, rates, coverage and submission columns) is here.

mod agents;
mod changes;
mod compare;
mod failures;
mod leaderboard;
mod parity;
mod runs;
mod tasks;

use std::collections::BTreeMap;

use sqlx::Row;
use sqlx::any::AnyRow;
use vocab::{Harness, Hint, Integrity, TaskId};

use crate::error::StoreError;
use crate::model::*;

/// Each kept sum of the aggregates `g`, summed over what a query groups.
pub(super) fn sums() -> String {
    Sums::COLUMNS
        .map(|c| {
            let kind = if c.ends_with("_sum") { "DOUBLE PRECISION" } else { "BIGINT" };
            format!("CAST(SUM(g.{c}) AS {kind}) AS {c}")
        })
        .join(", ")
}

/// The counts of `table` for each hint condition as columns of one row (`none_runs`,
/// `hints_runs`, …), joined by key to submission `s` (and, `per_task`, to the task bound
/// as `$1`): a page reads one row per agent, not one per agent and condition (rows are
/// what costs most through the driver; the task page read 3,000 in 30 ms).
pub(super) fn by_hint_joins(table: &str, per_task: bool) -> (String, String) {
    let mut columns = Vec::new();
    let mut joins = String::new();
    // Per submission and condition (not per task), the table keeps the coverage too.
    let kept: &[&str] = if per_task { &[] } else { &COVERAGE };
    for hint in Hint::ALL.map(Hint::as_str) {
        for c in Sums::COLUMNS.iter().chain(kept) {
            columns.push(format!("{hint}.{c} AS {hint}_{c}"));
        }
        joins.push_str(&format!(
            " LEFT JOIN {table} {hint} ON {hint}.bundle_id = s.bundle_id AND {hint}.hint = '{hint}'"
        ));
        if per_task {
            joins.push_str(&format!(" AND {hint}.task = $1"));
        }
    }
    (columns.join(", "), joins)
}

/// What [`by_hint_joins`] read: the rates of each condition the row has.
pub(super) fn by_hint(row: &AnyRow, integrity: Integrity) -> Result<BTreeMap<Hint, Rates>, StoreError> {
    let mut out = BTreeMap::new();
    for h in Hint::ALL {
        let hint = h.as_str();
        if row.try_get::<Option<i64>, _>(format!("{hint}_runs").as_str())?.is_none() {
            continue;
        }
        out.insert(h, sums_of(row, &format!("{hint}_"))?.rates(integrity));
    }
    Ok(out)
}

/// The sums a row holds in columns named `{prefix}{column}`.
pub(super) fn sums_of(row: &AnyRow, prefix: &str) -> Result<Sums, StoreError> {
    let int = |c: &str| row.try_get::<i64, _>(format!("{prefix}{c}").as_str());
    let float = |c: &str| row.try_get::<f64, _>(format!("{prefix}{c}").as_str());
    Ok(Sums {
        runs: int("runs")?,
        counted: int("counted")?,
        successes: int("successes")?,
        executed: int("executed")?,
        recall_sum: float("recall_sum")?,
        recall_runs: int("recall_runs")?,
        cost_sum: float("cost_sum")?,
        cost_runs: int("cost_runs")?,
        cost_checked: int("cost_checked")?,
        cost_marked: int("cost_marked")?,
        duration_sum: float("duration_sum")?,
        duration_runs: int("duration_runs")?,
        flagged: int("flagged")?,
        exec_counted: int("exec_counted")?,
        refuted: int("refuted")?,
    })
}

/// A name column read back into the vocabulary type it was written from.
pub(crate) fn name<T: TryFrom<String, Error = vocab::UnknownName>>(
    row: &AnyRow,
    column: &str,
) -> Result<T, StoreError> {
    let text: String = row.try_get(column)?;
    T::try_from(text)
        .map_err(|e| sqlx::Error::ColumnDecode { index: column.to_owned(), source: e.into() }.into())
}

pub(super) fn task(row: &AnyRow) -> Result<TaskId, StoreError> {
    Ok(TaskId::new(row.try_get::<String, _>("task")?))
}

/// Agents named beside each error type on the failure explorer.
pub(super) const MOST_PER_ERROR_TYPE: i64 = 5;

pub(super) const RUN_SUMMARY: &str =
    "r.id, r.bundle_id, s.agent_id, r.task, r.hint, r.attempt, r.outcome, r.error_type";

pub(super) fn rates(row: &AnyRow) -> Result<Rates, StoreError> {
    Ok(sums_of(row, "")?.rates(Integrity::Reported))
}

/// The coverage columns `totals` keeps beside the sums.
pub(super) const COVERAGE: [&str; 4] = ["tasks", "fewest_runs", "most_runs", "short_tasks"];

/// What [`submission`] reads.
pub(super) const SUBMISSION: &str = "bundle_id, agent_id, keyid, tier, provenance, provenance_source, harness, harness_version, \
     execution_known, benchmark_name, benchmark_version, task_set_digest, \
     runner_name || ' ' || runner_version AS runner, created_at, received_at, superseded_by, run_count, artifact_bytes, \
     sampled, reproduced, differed, heldout, generalised, sample_catches, sample_share";

/// What a row's `sampled`, `reproduced` and `differed` say.
pub(super) fn sample_counts(row: &AnyRow) -> Result<SampleCounts, StoreError> {
    Ok(sqlx::FromRow::from_row(row)?)
}

pub(super) fn submission(row: &AnyRow) -> Result<SubmissionRecord, StoreError> {
    Ok(SubmissionRecord {
        bundle_id: row.try_get("bundle_id")?,
        agent_id: row.try_get("agent_id")?,
        keyid: row.try_get("keyid")?,
        tier: name(row, "tier")?,
        provenance: name(row, "provenance")?,
        provenance_source: row.try_get("provenance_source")?,
        harness: harness(row)?,
        execution_known: row.try_get::<i64, _>("execution_known")? != 0,
        benchmark_name: row.try_get("benchmark_name")?,
        benchmark_version: row.try_get("benchmark_version")?,
        task_set_digest: row.try_get("task_set_digest")?,
        runner: row.try_get("runner")?,
        created_at: row.try_get("created_at")?,
        received_at: row.try_get("received_at")?,
        superseded_by: row.try_get("superseded_by")?,
        run_count: row.try_get("run_count")?,
        artifact_bytes: row.try_get("artifact_bytes")?,
        sample: sample_counts(row)?,
    })
}

pub(super) fn harness(row: &AnyRow) -> Result<Harness, StoreError> {
    Ok(Harness::new(row.try_get::<String, _>("harness")?, row.try_get("harness_version")?))
}

/// What [`by_hint_joins`] read of the coverage under each condition.
pub(super) fn coverage(row: &AnyRow) -> Result<BTreeMap<Hint, Coverage>, StoreError> {
    let mut out = BTreeMap::new();
    for h in Hint::ALL {
        let hint = h.as_str();
        let Some(tasks) = row.try_get::<Option<i64>, _>(format!("{hint}_tasks").as_str())? else { continue };
        out.insert(
            h,
            Coverage {
                tasks,
                fewest_attempts: row.try_get(format!("{hint}_fewest_runs").as_str())?,
                most_attempts: row.try_get(format!("{hint}_most_runs").as_str())?,
                short_tasks: row.try_get(format!("{hint}_short_tasks").as_str())?,
            },
        );
    }
    Ok(out)
}
