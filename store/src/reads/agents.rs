//! Agents and their submissions: an agent with its grid, a submission, its runs and
//! its signed envelope.

use std::collections::BTreeMap;

use sqlx::Row;
use vocab::{Harness, Hint};

use super::*;
use crate::Store;
use crate::db::{self, Placeholders};
use crate::error::StoreError;
use crate::model::*;

/// An agent's own columns, as [`Store::agent`] reads them.
#[derive(sqlx::FromRow)]
struct AgentHead {
    id: String,
    display_name: String,
    framework: String,
    framework_version: Option<String>,
    model: String,
    model_id: Option<String>,
    url: Option<String>,
    first_seen_at: String,
}

impl Store {
    /// The same agent (framework, its version and model) under other agent ids, with
    /// the harness of each one's current submission: (agent id, name, harness), by name.
    pub async fn same_agent_elsewhere(&self, id: &str) -> Result<Vec<(String, String, Harness)>, StoreError> {
        let rows = db::query_as(
            "SELECT o.id, o.display_name, s.harness, s.harness_version FROM agents a \
             JOIN agents o ON o.framework = a.framework AND o.model = a.model \
             AND COALESCE(o.framework_version, '') = COALESCE(a.framework_version, '') AND o.id <> a.id \
             JOIN submissions s ON s.agent_id = o.id AND s.superseded_by IS NULL \
             WHERE a.id = $1 ORDER BY o.display_name, o.id",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, name, harness, version): (String, String, String, Option<String>)| {
                (id, name, Harness::new(harness, version))
            })
            .collect())
    }

    /// Where attempts of submission `bundle_id` made the same patch (the same identity,
    /// bundle spec §5b: the same changes however written, or else the same digest): per
    /// task and hint condition, the most attempts that share one patch and the attempts
    /// with a patch, where two or more share one. Shown for every outcome; two successes
    /// of one task sharing one are flagged too (`copied-attempt`, §5a).
    pub async fn same_patches(
        &self,
        bundle_id: &str,
    ) -> Result<std::collections::BTreeMap<(TaskId, Hint), (i64, i64)>, StoreError> {
        let rows: Vec<(String, String, i64, i64)> = db::query_as(
            "SELECT task, hint, CAST(MAX(n) AS BIGINT), CAST(SUM(n) AS BIGINT) FROM (SELECT r.task, r.hint, \
             CASE WHEN i.identity IS NULL OR i.identity = '-' THEN ra.digest ELSE i.identity END AS patch, COUNT(*) AS n \
             FROM runs r JOIN run_artifacts ra ON ra.run_id = r.id AND ra.role = 'patch' \
             LEFT JOIN patch_identities i ON i.digest = ra.digest WHERE r.bundle_id = $1 \
             GROUP BY r.task, r.hint, CASE WHEN i.identity IS NULL OR i.identity = '-' THEN ra.digest ELSE i.identity END) p \
             GROUP BY task, hint HAVING MAX(n) > 1",
        )
        .bind(bundle_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(task, hint, most, of)| Some(((TaskId::new(task), hint.parse().ok()?), (most, of))))
            .collect())
    }

    /// The agents with a current submission, as (id, name), by name.
    /// Read once per change of the data.
    pub async fn current_agents(&self) -> Result<Vec<(String, String)>, StoreError> {
        let generation = self.generation().await?;
        let agents = self
            .memo
            .current_agents
            .get_or(generation, &(), || async {
                Ok(db::query_as(
                    "SELECT DISTINCT a.id, a.display_name FROM submissions s JOIN agents a ON a.id = s.agent_id \
                     WHERE s.superseded_by IS NULL ORDER BY a.display_name, a.id",
                )
                .fetch_all(&self.pool)
                .await?)
            })
            .await?;
        Ok(agents.as_ref().clone())
    }

    pub async fn agent(&self, id: &str) -> Result<Option<AgentDetail>, StoreError> {
        // Every current submission's grid in one read, not one read per submission.
        let sums = sums();
        let grid = format!(
            "SELECT g.bundle_id, g.task, g.hint, {sums} FROM aggregates g JOIN submissions s ON s.bundle_id = g.bundle_id \
             WHERE s.agent_id = $1 AND s.superseded_by IS NULL GROUP BY g.bundle_id, g.task, g.hint ORDER BY g.task"
        );
        // The four reads side by side (on PostgreSQL, each on a connection of its own); an
        // unknown agent's three others find nothing.
        let (head, submissions, rows, reproduced, cost_marked) = tokio::try_join!(
            async {
                db::query_as::<AgentHead>(
                    "SELECT id, display_name, framework, framework_version, model, model_id, url, first_seen_at FROM agents WHERE id = $1",
                )
                .bind(id)
                .fetch_optional(&self.pool)
                .await
                .map_err(StoreError::from)
            },
            self.submissions_of(id),
            async { db::query(&grid).bind(id).fetch_all(&self.pool).await.map_err(StoreError::from) },
            self.reproduced_runs_of(id),
            self.cost_marked_of(id),
        )?;
        let Some(a) = head else {
            return Ok(None);
        };
        let mut grids: BTreeMap<String, TaskGrid> = BTreeMap::new();
        for row in &rows {
            grids
                .entry(row.try_get("bundle_id")?)
                .or_default()
                .entry(task(row)?)
                .or_default()
                .insert(name(row, "hint")?, rates(row)?);
        }
        let current = submissions
            .iter()
            .filter(|s| s.superseded_by.is_none())
            .map(|s| (s.bundle_id.clone(), grids.remove(&s.bundle_id).unwrap_or_default()))
            .collect();
        Ok(Some(AgentDetail {
            id: a.id,
            display_name: a.display_name,
            framework: a.framework,
            framework_version: a.framework_version,
            model: a.model,
            model_id: a.model_id,
            url: a.url,
            first_seen_at: a.first_seen_at,
            submissions,
            current,
            reproduced,
            cost_marked,
        }))
    }

    /// The runs of `agent`'s current submissions whose cost carries a mark.
    async fn cost_marked_of(&self, agent: &str) -> Result<Vec<CostMarkedRun>, StoreError> {
        let rows = db::query(
            "SELECT r.id, r.bundle_id, r.task, r.hint, r.attempt, r.cost_usd, r.cost_computed_usd, r.cost_mark \
             FROM runs r JOIN submissions s ON s.bundle_id = r.bundle_id \
             WHERE s.agent_id = $1 AND s.superseded_by IS NULL AND r.cost_mark IS NOT NULL \
             ORDER BY r.id LIMIT $2",
        )
        .bind(agent)
        .bind(AgentDetail::COST_MARKED_SHOWN)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(CostMarkedRun {
                    run_id: r.try_get("id")?,
                    bundle_id: r.try_get("bundle_id")?,
                    task: task(r)?,
                    hint: name(r, "hint")?,
                    attempt: r.try_get("attempt")?,
                    cost_usd: r.try_get("cost_usd")?,
                    cost_computed_usd: r.try_get("cost_computed_usd")?,
                    mark: name(r, "cost_mark")?,
                })
            })
            .collect()
    }

    async fn submissions_of(&self, agent: &str) -> Result<Vec<SubmissionRecord>, StoreError> {
        db::query(&format!(
            "SELECT {SUBMISSION} FROM submissions WHERE agent_id = $1 ORDER BY received_at DESC"
        ))
        .bind(agent)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(submission)
        .collect()
    }

    /// One submission, current or not.
    pub async fn submission(&self, bundle_id: &str) -> Result<Option<SubmissionRecord>, StoreError> {
        db::query(&format!("SELECT {SUBMISSION} FROM submissions WHERE bundle_id = $1"))
            .bind(bundle_id)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(submission)
            .transpose()
    }

    /// The runs of a submission, optionally of one task and hint condition.
    pub async fn runs_of(
        &self,
        bundle_id: &str,
        task: Option<&str>,
        hint: Option<Hint>,
    ) -> Result<Vec<RunSummary>, StoreError> {
        let mut query = format!(
            "SELECT {RUN_SUMMARY} FROM runs r JOIN submissions s ON s.bundle_id = r.bundle_id WHERE r.bundle_id = $1"
        );
        let mut marks = Placeholders::after(1);
        if task.is_some() {
            query.push_str(&format!(" AND r.task = {}", marks.next()));
        }
        if hint.is_some() {
            query.push_str(&format!(" AND r.hint = {}", marks.next()));
        }
        query.push_str(" ORDER BY r.task, r.hint, r.attempt");
        let mut q = db::query_as(&query).bind(bundle_id);
        for v in [task, hint.map(Hint::as_str)].into_iter().flatten() {
            q = q.bind(v);
        }
        Ok(q.fetch_all(&self.pool).await?)
    }

    /// A submission's or a reproduction's signed envelope, byte for byte as it was received.
    pub async fn envelope(&self, bundle_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row = db::query(
            "SELECT envelope FROM envelopes WHERE bundle_id = $1 \
             UNION ALL SELECT envelope FROM reproductions WHERE bundle_id = $1",
        )
        .bind(bundle_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.try_get("envelope")).transpose()?)
    }
}
