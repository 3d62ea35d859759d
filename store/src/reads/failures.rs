//! Failures: by agent, by pattern, and the explorer's overview.

use sqlx::Row;
use vocab::Outcome;

use super::*;
use crate::Store;
use crate::db;
use crate::error::StoreError;
use crate::model::*;

impl Store {
    /// The current runs that did not succeed, by agent (of one agent, if given),
    /// outcome and error type.
    pub async fn failures_by_agent(&self, agent: Option<&str>) -> Result<Vec<FailureCount>, StoreError> {
        Ok(db::query_as(
            "SELECT s.agent_id, a.display_name, e.outcome, NULLIF(e.error_type, '') AS error_type, \
             CAST(SUM(e.runs) AS BIGINT) AS runs \
             FROM error_counts e JOIN submissions s ON s.bundle_id = e.bundle_id JOIN agents a ON a.id = s.agent_id \
             WHERE s.superseded_by IS NULL AND e.outcome <> $1 AND (CAST($2 AS TEXT) IS NULL OR s.agent_id = $2) \
             GROUP BY s.agent_id, a.display_name, e.outcome, e.error_type ORDER BY s.agent_id, e.outcome, e.error_type",
        )
        .bind(Outcome::Success.as_str())
        .bind(agent)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The ways tasks were failed (of one task, if given), with how many current
    /// submissions failed each way, most first (kept at ingest in `pattern_totals`).
    pub async fn failure_patterns(&self, task: Option<&str>) -> Result<Vec<FailurePattern>, StoreError> {
        let only_task = if task.is_some() { " AND task = $2" } else { "" };
        let sql = format!(
            "SELECT task, outcome, NULLIF(error_type, '') AS error_type, bundles AS agents, runs \
             FROM pattern_totals WHERE bundles > 0 AND outcome <> $1{only_task} \
             ORDER BY agents DESC, runs DESC, task, outcome, error_type"
        );
        let mut q = db::query_as(&sql).bind(Outcome::Success.as_str());
        if let Some(t) = task {
            q = q.bind(t);
        }
        Ok(q.fetch_all(&self.pool).await?)
    }

    /// The failure explorer's view of every current submission: how many agents failed
    /// runs, the failed runs of the `top` agents with the most (by outcome and error
    /// type), and per error type its runs, its agents and the five agents with most.
    /// Read from the counts kept at ingest (`agent_failure_totals`, `error_type_agents`).
    pub async fn failure_overview(&self, top: i64) -> Result<FailureOverview, StoreError> {
        let success = Outcome::Success.as_str();
        let agents =
            db::query("SELECT CAST(COUNT(*) AS BIGINT) AS agents FROM agent_failure_totals WHERE runs > 0")
                .fetch_one(&self.pool);
        let by_agent = db::query_as(
            "SELECT s.agent_id, a.display_name, f.outcome, NULLIF(f.error_type, '') AS error_type, \
             CAST(SUM(f.runs) AS BIGINT) AS runs \
             FROM failure_totals f JOIN submissions s ON s.bundle_id = f.bundle_id JOIN agents a ON a.id = s.agent_id \
             WHERE s.superseded_by IS NULL AND f.outcome <> $1 AND s.agent_id IN ( \
               SELECT agent_id FROM agent_failure_totals WHERE runs > 0 ORDER BY runs DESC, agent_id LIMIT $2) \
             GROUP BY s.agent_id, a.display_name, f.outcome, f.error_type ORDER BY s.agent_id, f.outcome, f.error_type",
        )
        .bind(success)
        .bind(top)
        .fetch_all(&self.pool);
        let types = db::query(
            "SELECT error_type, CAST(SUM(runs) AS BIGINT) AS runs, CAST(COUNT(*) AS BIGINT) AS agents \
             FROM error_type_agents WHERE runs > 0 GROUP BY error_type ORDER BY error_type",
        )
        .fetch_all(&self.pool);
        let (agents, by_agent, types) = tokio::try_join!(agents, by_agent, types)?;
        // Each type's leaders through the index on (error_type, runs): a few rows each,
        // where ranking every agent under every type read them all.
        let most = types.iter().map(|row| async move {
            let error_type: String = row.try_get("error_type")?;
            let most = db::query(
                "SELECT a.display_name, e.runs FROM error_type_agents e JOIN agents a ON a.id = e.agent_id \
                 WHERE e.error_type = $1 AND e.runs > 0 ORDER BY e.runs DESC, a.display_name, a.id LIMIT $2",
            )
            .bind(&error_type)
            .bind(MOST_PER_ERROR_TYPE)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| Ok((r.try_get("display_name")?, r.try_get("runs")?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
            Ok::<_, StoreError>(ErrorTypeCount {
                error_type,
                runs: row.try_get("runs")?,
                agents: row.try_get("agents")?,
                most,
            })
        });
        let error_types = futures::future::try_join_all(most).await?;
        Ok(FailureOverview { agents: agents.try_get("agents")?, by_agent, error_types })
    }
}
