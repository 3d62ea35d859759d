//! Harness parity's read: one submission's side under one hint condition (who, which
//! harness, its successes, its attempts' rates and its per-task counts). What it means
//! (the statistics, Harbor's matching criterion, the thresholds) is `views::parity`'s.

use std::collections::BTreeMap;

use sqlx::Row;
use vocab::{Hint, TaskId};

use super::{harness, name};
use crate::{ParityRead, Store, StoreError, db};

impl Store {
    /// A submission's side under `hint` (current or not); none if it is not stored.
    pub async fn parity_side(&self, bundle: &str, hint: Hint) -> Result<Option<ParityRead>, StoreError> {
        let Some(mut side) = self.parity_who(bundle, hint).await? else {
            return Ok(None);
        };
        if side.provenance != vocab::ProvenanceKind::Published {
            side.attempt_rates = self.attempt_rates(bundle, hint).await?;
        }
        side.tasks = self.task_counts(bundle, hint).await?;
        Ok(Some(side))
    }

    /// Who a submission is, which harness, and its successes under `hint`.
    async fn parity_who(&self, bundle: &str, hint: Hint) -> Result<Option<ParityRead>, StoreError> {
        let Some(row) = db::query(
            "SELECT s.bundle_id, s.agent_id, a.display_name, a.framework, a.framework_version, a.model, s.harness, \
             s.harness_version, s.provenance, s.superseded_by, t.successes, t.counted \
             FROM submissions s JOIN agents a ON a.id = s.agent_id \
             LEFT JOIN totals t ON t.bundle_id = s.bundle_id AND t.hint = $2 WHERE s.bundle_id = $1",
        )
        .bind(bundle)
        .bind(hint.as_str())
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let successes = row.try_get::<Option<i64>, _>("successes")?.unwrap_or(0);
        let runs = row.try_get::<Option<i64>, _>("counted")?.unwrap_or(0);
        // Who: the query's first six columns, in their order.
        let (bundle_id, agent_id, display_name, framework, framework_version, model) =
            sqlx::FromRow::from_row(&row)?;
        Ok(Some(ParityRead {
            bundle_id,
            agent_id,
            display_name,
            framework,
            framework_version,
            model,
            harness: harness(&row)?,
            provenance: name(&row, "provenance")?,
            current: row.try_get::<Option<String>, _>("superseded_by")?.is_none(),
            successes,
            runs,
            attempt_rates: Vec::new(),
            tasks: BTreeMap::new(),
        }))
    }

    /// Final success of each attempt number over the tasks that have it counted.
    async fn attempt_rates(&self, bundle: &str, hint: Hint) -> Result<Vec<f64>, StoreError> {
        let rows: Vec<(i64, i64)> = db::query_as(
            "SELECT CAST(SUM(CASE WHEN outcome = $3 THEN 1 ELSE 0 END) AS BIGINT) AS won, \
             CAST(COUNT(*) AS BIGINT) AS n FROM runs WHERE bundle_id = $1 AND hint = $2 AND outcome <> $4 \
             GROUP BY attempt ORDER BY attempt",
        )
        .bind(bundle)
        .bind(hint.as_str())
        .bind(vocab::Outcome::Success.as_str())
        .bind(vocab::Outcome::InfraError.as_str())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|(won, n)| won as f64 / n as f64).collect())
    }

    /// A submission's successes and counted runs per task under `hint`.
    async fn task_counts(
        &self,
        bundle: &str,
        hint: Hint,
    ) -> Result<BTreeMap<TaskId, (i64, i64)>, StoreError> {
        let rows: Vec<(String, i64, i64)> = db::query_as(
            "SELECT task, successes, counted FROM aggregates WHERE bundle_id = $1 AND hint = $2 AND counted > 0",
        )
        .bind(bundle)
        .bind(hint.as_str())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|(task, successes, runs)| (TaskId::new(task), (successes, runs))).collect())
    }
}
