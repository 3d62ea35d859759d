//! Integrity findings after ingest: reading them, and a maintainer's review, which
//! moves the flagged counts the strict view reads when it changes whether a success is
//! flagged, and is written to the change log.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};
use vocab::{FoundBy, Hint, Outcome, Review, TaskId};

use crate::db;
use crate::error::StoreError;
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
                " WHERE f.review IS NULL AND s.superseded_by IS NULL AND r.outcome = $2"
            }
            FindingsFilter::All => " WHERE $2 = $2",
        };
        db::query(&format!(
            "SELECT {FINDING}, {RECORD}{RECORD_FROM}{only} \
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
    pub async fn integrity_overview(&self) -> Result<IntegrityOverview, StoreError> {
        let flagging = format!(
            " FROM findings f JOIN runs r ON r.id = f.run_id JOIN submissions s ON s.bundle_id = r.bundle_id \
             WHERE s.superseded_by IS NULL AND r.outcome = $1 AND {NOT_DISMISSED}"
        );
        let bind = |sql| db::query(sql).bind(Outcome::Success.as_str()).bind(Review::Dismissed.as_str());
        let counts = format!(
            "SELECT CAST(COUNT(DISTINCT f.run_id) AS BIGINT) AS flagged, \
             CAST(COUNT(DISTINCT CASE WHEN f.review = 'confirmed' THEN f.run_id END) AS BIGINT) AS confirmed{flagging}"
        );
        let by_check = format!(
            "SELECT f.check_name, CAST(COUNT(DISTINCT f.run_id) AS BIGINT) AS runs{flagging} \
             GROUP BY f.check_name ORDER BY runs DESC, f.check_name"
        );
        let agents = format!(
            "SELECT s.agent_id, MIN(a.display_name) AS display_name, CAST(COUNT(DISTINCT f.run_id) AS BIGINT) AS runs\
             {} GROUP BY s.agent_id ORDER BY runs DESC, s.agent_id LIMIT {MOST_FLAGGED_AGENTS}",
            flagging.replace(" WHERE", " JOIN agents a ON a.id = s.agent_id WHERE")
        );
        let newest = format!(
            "SELECT {FINDING}, {RECORD}{RECORD_FROM} WHERE f.run_id IN (SELECT f.run_id{flagging} \
             GROUP BY f.run_id ORDER BY f.run_id DESC LIMIT {NEWEST_FLAGGED}) \
             AND {NOT_DISMISSED} \
             ORDER BY f.run_id DESC, CASE f.found_by WHEN 'submitter' THEN 0 ELSE 1 END, f.position"
        );
        let (success, dismissed) = (Outcome::Success.as_str(), Review::Dismissed.as_str());
        let ((flagged, confirmed), by_check, agents, newest) = futures::future::try_join4(
            db::query_as::<(i64, i64)>(&counts).bind(success).bind(dismissed).fetch_one(&self.pool),
            db::query_as(&by_check).bind(success).bind(dismissed).fetch_all(&self.pool),
            db::query_as(&agents).bind(success).bind(dismissed).fetch_all(&self.pool),
            bind(&newest).fetch_all(&self.pool),
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
        let was = before.outcome == Outcome::Success && flagged(&mut tx, before.run_id).await?;
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
        let is = after.outcome == Outcome::Success && flagged(&mut tx, after.run_id).await?;
        let delta = i64::from(is) - i64::from(was);
        if delta != 0 {
            move_flagged(&mut tx, &after.bundle_id, after.task.as_str(), after.hint, after.current, delta).await?;
        }
        let detail = format!(
            "a maintainer {} finding {id} ({}) about run {} of {} ({} on {}, {}): {note}",
            verdict.as_str(),
            after.finding.check,
            after.run_id,
            after.agent_name,
            after.task,
            after.hint.as_str(),
            match delta {
                1 => "its success is flagged again",
                -1 => "its success is no longer flagged",
                _ => "whether its run is flagged is unchanged",
            },
        );
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

/// Whether a finding not dismissed is about run `run_id`.
pub(crate) async fn flagged(tx: &mut Transaction<'_, Any>, run_id: i64) -> Result<bool, StoreError> {
    let row = db::query(&format!("SELECT 1 FROM findings f WHERE f.run_id = $1 AND {NOT_DISMISSED} LIMIT 1"))
        .bind(run_id)
        .bind(Review::Dismissed.as_str())
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.is_some())
}

/// Moves the flagged count of a run's cell (`bundle_id`, `task`, `hint`) by `delta`: in
/// its aggregate, its submission's totals and, if the submission is `current`, the
/// task's totals.
pub(crate) async fn move_flagged(
    tx: &mut Transaction<'_, Any>,
    bundle_id: &str,
    task: &str,
    hint: Hint,
    current: bool,
    delta: i64,
) -> Result<(), StoreError> {
    db::query(
        "UPDATE aggregates SET flagged = flagged + $1 WHERE bundle_id = $2 AND task = $3 AND hint = $4",
    )
    .bind(delta)
    .bind(bundle_id)
    .bind(task)
    .bind(hint.as_str())
    .execute(&mut **tx)
    .await?;
    db::query("UPDATE totals SET flagged = flagged + $1 WHERE bundle_id = $2 AND hint = $3")
        .bind(delta)
        .bind(bundle_id)
        .bind(hint.as_str())
        .execute(&mut **tx)
        .await?;
    if current {
        db::query("UPDATE task_totals SET flagged = flagged + $1 WHERE task = $2 AND hint = $3")
            .bind(delta)
            .bind(task)
            .bind(hint.as_str())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
