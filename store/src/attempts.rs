//! How many valid attempts the benchmark asks per task and hint condition (spec §4f),
//! as the task cards say it: kept in `attempt_rules`, which an ingest reads inside its
//! transaction (so that servers sharing a database hold every bundle to the same rule)
//! and which [`Store::know_attempts`] brings in line with the cards at start, recounting
//! the cells of a task whose rule changed.

use std::collections::BTreeMap;

use vocab::{BENCHMARK_ATTEMPTS, TaskId};

use crate::steps::Tx;
use crate::{Store, StoreError, db};

/// Attempts asked per task, as `attempt_rules` holds them.
pub(crate) type Rules = BTreeMap<String, i64>;

pub(crate) async fn rules(tx: &mut Tx<'_>) -> Result<Rules, StoreError> {
    Ok(db::query_as::<(String, i64)>("SELECT task, attempts FROM attempt_rules")
        .fetch_all(&mut **tx)
        .await?
        .into_iter()
        .collect())
}

/// The attempts asked of `task`: its rule, else RExBench's.
pub(crate) fn asked(rules: &Rules, task: &str) -> i64 {
    rules.get(task).copied().unwrap_or(i64::from(BENCHMARK_ATTEMPTS))
}

impl Store {
    /// Holds each task of `cards` to the attempts they ask: writes the rules that
    /// changed and recounts, in one transaction, how many valid attempts each of those
    /// tasks' cells lacks (published results excepted) and so which rows are complete.
    /// Returns the tasks whose rule changed.
    pub async fn know_attempts(&self, cards: &BTreeMap<TaskId, u32>) -> Result<Vec<TaskId>, StoreError> {
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let kept = rules(&mut tx).await?;
        let changed: Vec<(&TaskId, i64)> = cards
            .iter()
            .map(|(task, n)| (task, i64::from(*n)))
            .filter(|(task, n)| kept.get(task.as_str()) != Some(n))
            .collect();
        for (task, n) in &changed {
            db::query(
                "INSERT INTO attempt_rules (task, attempts) VALUES ($1, $2) \
                 ON CONFLICT (task) DO UPDATE SET attempts = excluded.attempts",
            )
            .bind(task.as_str())
            .bind(*n)
            .execute(&mut *tx)
            .await?;
            db::query(
                "UPDATE aggregates SET shortfall = CASE WHEN counted < $2 THEN $2 - counted ELSE 0 END \
                 WHERE task = $1 AND bundle_id IN (SELECT bundle_id FROM submissions WHERE provenance <> 'published')",
            )
            .bind(task.as_str())
            .bind(*n)
            .execute(&mut *tx)
            .await?;
            db::query(
                "UPDATE totals SET short_tasks = (SELECT COUNT(*) FROM aggregates g \
                 WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint AND g.shortfall > 0) \
                 WHERE bundle_id IN (SELECT bundle_id FROM aggregates WHERE task = $1)",
            )
            .bind(task.as_str())
            .execute(&mut *tx)
            .await?;
            db::query(
                "UPDATE submissions SET short_cells = (SELECT COUNT(*) FROM aggregates g \
                 WHERE g.bundle_id = submissions.bundle_id AND g.shortfall > 0) \
                 WHERE bundle_id IN (SELECT bundle_id FROM aggregates WHERE task = $1)",
            )
            .bind(task.as_str())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        // Another process's reads kept from before see the new counts when the change
        // log next moves; this one's start afresh now.
        if !changed.is_empty() {
            self.memo.clear();
        }
        Ok(changed.into_iter().map(|(t, _)| t.clone()).collect())
    }
}
