//! Integrity findings after ingest: reading them, and a maintainer's review, which
//! moves the flagged counts the strict view reads when it changes whether a success is
//! flagged, and is written to the change log.

use std::collections::BTreeSet;

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};
use vocab::{FoundBy, Outcome, Review, TaskId};

use crate::db;
use crate::error::StoreError;
use crate::flags::{Cell, flagging_checks, move_flags, move_refuted};
use crate::model::{FindingId, FindingRecord, FindingReview, IntegrityOverview, RunFinding};
use crate::reads::name;
use crate::{Store, now};

/// The columns [`finding`] reads, of findings `f`.
const FINDING: &str = "f.run_id, f.found_by, f.position, f.check_name, f.message, f.artifact, f.line, f.review, f.review_note, f.reviewed_at";

/// The columns [`record`] reads: a finding's, and its run's (`r`), submission's (`s`)
/// and agent's (`a`).
const RECORD: &str = "r.bundle_id, s.agent_id, a.display_name, r.task, r.hint, r.attempt, r.outcome, \
     CASE WHEN s.superseded_by IS NULL THEN 1 ELSE 0 END AS current";

const RECORD_FROM: &str = " FROM findings f JOIN runs r ON r.id = f.run_id \
     JOIN submissions s ON s.bundle_id = r.bundle_id JOIN agents a ON a.id = s.agent_id";

/// [`RECORD_FROM`], its findings read first: the caller's `WHERE` joins the run.
const RECORD_FROM_NEWEST: &str = " FROM findings f CROSS JOIN runs r \
     JOIN submissions s ON s.bundle_id = r.bundle_id JOIN agents a ON a.id = s.agent_id";

/// Findings a run's page lists, the submitter's first.
const ORDER: &str = " ORDER BY CASE f.found_by WHEN 'submitter' THEN 0 ELSE 1 END, f.position";

/// A finding of `f` that still flags its run, with `$2` bound to [`Review::Dismissed`].
const NOT_DISMISSED: &str = "(f.review IS NULL OR f.review <> $2)";

/// The newest flagged successes `/failures` lists.
const NEWEST_FLAGGED: i64 = 20;

/// The agents with most flagged successes `/failures` names.
const MOST_FLAGGED_AGENTS: i64 = 10;

fn finding(row: &AnyRow) -> Result<RunFinding, StoreError> {
    let found_by: FoundBy = name(row, "found_by")?;
    let id = FindingId { run_id: row.try_get("run_id")?, found_by, position: row.try_get("position")? };
    let review = match row.try_get::<Option<String>, _>("review")? {
        None => None,
        Some(_) => Some(FindingReview {
            verdict: name(row, "review")?,
            note: row.try_get::<Option<String>, _>("review_note")?.unwrap_or_default(),
            at: row.try_get::<Option<String>, _>("reviewed_at")?.unwrap_or_default(),
        }),
    };
    Ok(RunFinding {
        id: id.to_string(),
        found_by,
        check: row.try_get("check_name")?,
        message: row.try_get("message")?,
        artifact: row.try_get("artifact")?,
        line: row.try_get("line")?,
        review,
        withheld: false,
    })
}

fn record(row: &AnyRow) -> Result<FindingRecord, StoreError> {
    let current: i64 = row.try_get("current")?;
    Ok(FindingRecord {
        finding: finding(row)?,
        run_id: row.try_get("run_id")?,
        bundle_id: row.try_get("bundle_id")?,
        agent_id: row.try_get("agent_id")?,
        agent_name: row.try_get("display_name")?,
        task: TaskId::new(row.try_get::<String, _>("task")?),
        hint: name(row, "hint")?,
        attempt: row.try_get("attempt")?,
        outcome: name(row, "outcome")?,
        current: current == 1,
    })
}

/// Which findings a review list holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FindingsFilter {
    /// Findings about successes of current submissions that no maintainer has reviewed:
    /// what is waiting for review.
    #[default]
    Pending,
    /// Every finding.
    All,
}

impl Store {
    /// The findings about run `run_id`, the submitter's first.
    pub async fn run_findings(&self, run_id: i64) -> Result<Vec<RunFinding>, StoreError> {
        db::query(&format!("SELECT {FINDING} FROM findings f WHERE f.run_id = $1{ORDER}"))
            .bind(run_id)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(finding)
            .collect()
    }

    /// Findings with their runs, newest runs first, at most `limit`.
    pub async fn findings(
        &self,
        filter: FindingsFilter,
        limit: i64,
    ) -> Result<Vec<FindingRecord>, StoreError> {
        let only = match filter {
            FindingsFilter::Pending => {
                " WHERE r.id = f.run_id AND f.review IS NULL AND s.superseded_by IS NULL AND r.outcome = $2"
            }
            FindingsFilter::All => " WHERE r.id = f.run_id AND $2 = $2",
        };
        // The findings are walked newest first (their key's order) and each run looked
        // up: the pending ones are most of them, so the walk stops early. Left to choose,
        // SQLite scanned every run for the outcome (4 s at 10,000 agents). `CROSS JOIN`
        // fixes the order on SQLite; PostgreSQL plans it as the inner join it is.
        db::query(&format!(
            "SELECT {FINDING}, {RECORD}{RECORD_FROM_NEWEST}{only} \
             ORDER BY f.run_id DESC, CASE f.found_by WHEN 'submitter' THEN 0 ELSE 1 END, f.position LIMIT $1"
        ))
        .bind(limit)
        .bind(Outcome::Success.as_str())
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(record)
        .collect()
    }

    /// Every finding about the runs of an agent's current submissions, reviewed or not,
    /// How many findings wait for a maintainer's review (as [`FindingsFilter::Pending`]
    /// lists them).
    pub async fn pending_findings(&self) -> Result<i64, StoreError> {
        let (n,): (i64,) = db::query_as(
            "SELECT COUNT(*) FROM findings f JOIN runs r ON r.id = f.run_id \
             JOIN submissions s ON s.bundle_id = r.bundle_id \
             WHERE f.review IS NULL AND s.superseded_by IS NULL AND r.outcome = $1",
        )
        .bind(Outcome::Success.as_str())
        .fetch_one(&self.pool)
        .await?;
        Ok(n)
    }

    /// by run (task, hint, attempt), the submitter's first.
    pub async fn agent_findings(&self, agent_id: &str) -> Result<Vec<FindingRecord>, StoreError> {
        db::query(&format!(
            "SELECT {FINDING}, {RECORD}{RECORD_FROM} WHERE s.agent_id = $1 AND s.superseded_by IS NULL \
             ORDER BY r.bundle_id, r.task, r.hint, r.attempt, f.run_id, \
             CASE f.found_by WHEN 'submitter' THEN 0 ELSE 1 END, f.position"
        ))
        .bind(agent_id)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(record)
        .collect()
    }

    /// Flagged successes over the current submissions: how many, by check and by
    /// agent, and the newest.
    /// Read once per change of the data: a review appends to the change log.
    pub async fn integrity_overview(&self) -> Result<IntegrityOverview, StoreError> {
        let generation = self.generation().await?;
        let overview = self.memo.integrity.get_or(generation, &(), || self.read_integrity_overview()).await?;
        Ok(overview.as_ref().clone())
    }

    async fn read_integrity_overview(&self) -> Result<IntegrityOverview, StoreError> {
        // The counts are kept: flagged successes per submission and condition (`totals`)
        // and per submission and check (`flagged_checks`), summed over the current ones.
        let current = " JOIN submissions s ON s.bundle_id = t.bundle_id WHERE s.superseded_by IS NULL";
        let counts = format!(
            "SELECT CAST(COALESCE(SUM(t.flagged), 0) AS BIGINT) AS flagged, \
             (SELECT CAST(COUNT(DISTINCT f.run_id) AS BIGINT) FROM findings f JOIN runs r ON r.id = f.run_id \
             JOIN submissions c ON c.bundle_id = r.bundle_id \
             WHERE f.review = 'confirmed' AND c.superseded_by IS NULL AND r.outcome = $1) AS confirmed \
             FROM totals t{current}"
        );
        let by_check = format!(
            "SELECT t.check_name, CAST(SUM(t.runs) AS BIGINT) AS runs FROM flagged_checks t{current} \
             GROUP BY t.check_name HAVING SUM(t.runs) > 0 ORDER BY runs DESC, t.check_name"
        );
        let agents = format!(
            "SELECT s.agent_id, MIN(a.display_name) AS display_name, CAST(SUM(t.flagged) AS BIGINT) AS runs \
             FROM totals t{} GROUP BY s.agent_id HAVING SUM(t.flagged) > 0 \
             ORDER BY runs DESC, s.agent_id LIMIT {MOST_FLAGGED_AGENTS}",
            current.replace(" WHERE", " JOIN agents a ON a.id = s.agent_id WHERE")
        );
        let flagging = format!(
            " FROM findings f JOIN runs r ON r.id = f.run_id JOIN submissions s ON s.bundle_id = r.bundle_id \
             WHERE s.superseded_by IS NULL AND r.outcome = $1 AND {NOT_DISMISSED}"
        );
        let newest = format!(
            "SELECT {FINDING}, {RECORD}{RECORD_FROM} WHERE f.run_id IN (SELECT f.run_id{flagging} \
             GROUP BY f.run_id ORDER BY f.run_id DESC LIMIT {NEWEST_FLAGGED}) \
             AND {NOT_DISMISSED} \
             ORDER BY f.run_id DESC, CASE f.found_by WHEN 'submitter' THEN 0 ELSE 1 END, f.position"
        );
        let (success, dismissed) = (Outcome::Success.as_str(), Review::Dismissed.as_str());
        let ((flagged, confirmed), by_check, agents, newest) = futures::future::try_join4(
            db::query_as::<(i64, i64)>(&counts).bind(success).fetch_one(&self.pool),
            db::query_as(&by_check).fetch_all(&self.pool),
            db::query_as(&agents).fetch_all(&self.pool),
            db::query(&newest).bind(success).bind(dismissed).fetch_all(&self.pool),
        )
        .await?;
        Ok(IntegrityOverview {
            flagged,
            confirmed,
            by_check,
            agents,
            runs: newest.iter().map(record).collect::<Result<_, _>>()?,
        })
    }

    /// A maintainer's review of finding `id`: `verdict`, and why. A review may be
    /// changed by another. Where it changes whether the run is a flagged success, the
    /// counts the strict view reads move with it; the change log records it.
    pub async fn review_finding(
        &self,
        id: &FindingId,
        verdict: Review,
        note: &str,
    ) -> Result<FindingRecord, StoreError> {
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let before = reviewed(&mut tx, id).await?;
        let success = before.outcome == Outcome::Success;
        let infra = before.outcome == Outcome::InfraError;
        let was =
            if success || infra { flagging_checks(&mut tx, before.run_id).await? } else { BTreeSet::new() };
        let at = now();
        db::query(
            "UPDATE findings SET review = $1, review_note = $2, reviewed_at = $3 \
             WHERE run_id = $4 AND found_by = $5 AND position = $6",
        )
        .bind(verdict.as_str())
        .bind(note)
        .bind(&at)
        .bind(id.run_id)
        .bind(id.found_by.as_str())
        .bind(id.position)
        .execute(&mut *tx)
        .await?;
        let after = FindingRecord {
            finding: RunFinding {
                review: Some(FindingReview { verdict, note: note.to_owned(), at: at.clone() }),
                ..before.finding
            },
            ..before
        };
        let is =
            if success || infra { flagging_checks(&mut tx, after.run_id).await? } else { BTreeSet::new() };
        let cell = Cell {
            bundle_id: &after.bundle_id,
            task: after.task.as_str(),
            hint: after.hint,
            current: after.current,
        };
        let delta = if infra {
            let refuted = |checks: &BTreeSet<String>| checks.contains(crate::NOT_REPRODUCED);
            move_refuted(&mut tx, &cell, refuted(&was), refuted(&is)).await?
        } else {
            move_flags(&mut tx, &cell, &was, &is).await?
        };
        // Issue 75: a refutation's review moves what it costs the rest of its submission.
        let lifted = if crate::reproductions::taint::refutes(&after.finding.check)
            && id.found_by.as_str() == "server"
        {
            crate::reproductions::taint::reviewed(&mut tx, &after.bundle_id, after.current, note, &at).await?
        } else {
            None
        };
        let mut detail = format!(
            "a maintainer {} finding {id} ({}) about run {} of {} ({} on {}, {}): {note}",
            verdict.as_str(),
            after.finding.check,
            after.run_id,
            after.agent_name,
            after.task,
            after.hint.as_str(),
            match (infra, delta) {
                (false, 1) => "its success is flagged again",
                (false, -1) => "its success is no longer flagged",
                (true, 1) => "its infrastructure error counts as a failure in the strict view again",
                (true, -1) => "its infrastructure error no longer counts as a failure in the strict view",
                _ => "whether its run is flagged is unchanged",
            },
        );
        match lifted {
            Some((false, n)) => detail.push_str(&format!(
                "; no refutation of the submission stands: {n} success(es) it had made unverified are no longer"
            )),
            Some((true, n)) => {
                detail.push_str(&format!("; the refutation stands: {n} success(es) of the submission are unverified"))
            }
            None => {}
        }
        db::query(
            "INSERT INTO changes (at, kind, bundle_id, agent_id, detail) VALUES ($1, 'reviewed', $2, $3, $4)",
        )
        .bind(&at)
        .bind(&after.bundle_id)
        .bind(&after.agent_id)
        .bind(&detail)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(after)
    }
}

/// The finding `id` with its run, or [`StoreError::UnknownFinding`].
async fn reviewed(tx: &mut Transaction<'_, Any>, id: &FindingId) -> Result<FindingRecord, StoreError> {
    db::query(&format!(
        "SELECT {FINDING}, {RECORD}{RECORD_FROM} WHERE f.run_id = $1 AND f.found_by = $2 AND f.position = $3"
    ))
    .bind(id.run_id)
    .bind(id.found_by.as_str())
    .bind(id.position)
    .fetch_optional(&mut **tx)
    .await?
    .as_ref()
    .map(record)
    .transpose()?
    .ok_or_else(|| StoreError::UnknownFinding(id.to_string()))
}
