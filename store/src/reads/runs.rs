//! One run, and an artifact's record.

use sqlx::Row;

use super::*;
use crate::Store;
use crate::db;
use crate::error::StoreError;
use crate::model::*;

impl Store {
    pub async fn run(&self, id: i64) -> Result<Option<RunDetail>, StoreError> {
        let Some(r) = db::query(
            "SELECT r.id, r.bundle_id, s.agent_id, a.display_name, s.benchmark_version, s.tier, s.provenance, \
             s.provenance_source, r.task, \
             r.hint, r.attempt, r.outcome, r.regraded_from, r.error_type, r.file_recall, r.files_changed, r.duration_s, r.cost_usd, r.metrics, \
             r.tokens_input, r.tokens_output, r.tokens_cache_read, r.tokens_cache_write, r.cost_computed_usd, r.cost_mark, r.task_folder \
             FROM runs r JOIN submissions s ON s.bundle_id = r.bundle_id JOIN agents a ON a.id = s.agent_id WHERE r.id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let artifacts = db::query_as(
            "SELECT ra.role, ra.digest, x.size, x.media_type FROM run_artifacts ra JOIN artifacts x ON x.digest = ra.digest \
             WHERE ra.run_id = $1 ORDER BY ra.role",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        let findings = self.run_findings(id).await?;
        let (sampled, reproduction) = self.run_sample(id).await?;
        let files: Option<String> = r.try_get("files_changed")?;
        let metrics: String = r.try_get("metrics")?;
        Ok(Some(RunDetail {
            id: r.try_get("id")?,
            bundle_id: r.try_get("bundle_id")?,
            agent_id: r.try_get("agent_id")?,
            agent_name: r.try_get("display_name")?,
            benchmark_version: r.try_get("benchmark_version")?,
            tier: name(&r, "tier")?,
            provenance: name(&r, "provenance")?,
            provenance_source: r.try_get("provenance_source")?,
            task: task(&r)?,
            hint: name(&r, "hint")?,
            attempt: r.try_get("attempt")?,
            outcome: name(&r, "outcome")?,
            regraded_from: r
                .try_get::<Option<String>, _>("regraded_from")?
                .map(|o| o.parse())
                .transpose()
                .map_err(|e: vocab::UnknownName| sqlx::Error::ColumnDecode {
                    index: "regraded_from".into(),
                    source: e.into(),
                })?,
            error_type: r.try_get("error_type")?,
            file_recall: r.try_get("file_recall")?,
            files_changed: files.and_then(|f| serde_json::from_str(&f).ok()),
            duration_s: r.try_get("duration_s")?,
            cost_usd: r.try_get("cost_usd")?,
            tokens: tokens(&r)?,
            cost_computed_usd: r.try_get("cost_computed_usd")?,
            task_folder: r.try_get("task_folder")?,
            cost_mark: r.try_get::<Option<String>, _>("cost_mark")?.map(|m| m.parse()).transpose().map_err(
                |e: vocab::UnknownName| sqlx::Error::ColumnDecode {
                    index: "cost_mark".into(),
                    source: e.into(),
                },
            )?,
            metrics: serde_json::from_str(&metrics).unwrap_or_default(),
            metrics_withheld: false,
            artifacts,
            findings,
            sampled,
            reproduction,
        }))
    }

    /// An artifact's record, if any run refers to it.
    pub async fn artifact(&self, digest: &str) -> Result<Option<(i64, String)>, StoreError> {
        let row = db::query("SELECT size, media_type FROM artifacts WHERE digest = $1")
            .bind(digest)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| Ok((r.try_get("size")?, r.try_get("media_type")?))).transpose()
    }

    /// The successes stored whose agent record (role `agent_log` or `x-trajectory`) is one
    /// of `digests`: each digest's runs as (agent id, task, hint, attempt), for the
    /// server's `copied-attempt` check (bundle spec §5a). At most 1,000 digests are asked
    /// at once.
    pub async fn record_uses(
        &self,
        digests: &[String],
    ) -> Result<std::collections::BTreeMap<String, Vec<(String, TaskId, Hint, u32)>>, StoreError> {
        let mut out: std::collections::BTreeMap<String, Vec<(String, TaskId, Hint, u32)>> =
            Default::default();
        for chunk in digests.chunks(1000) {
            let list = db::Placeholders::default().list(chunk.len());
            let sql = format!(
                "SELECT ra.digest, s.agent_id, r.task, r.hint, r.attempt FROM run_artifacts ra \
                 JOIN runs r ON r.id = ra.run_id JOIN submissions s ON s.bundle_id = r.bundle_id \
                 WHERE ra.role IN ('agent_log', 'x-trajectory') AND r.outcome = 'success' AND ra.digest IN ({list}) \
                 ORDER BY ra.digest, s.agent_id, r.task, r.hint, r.attempt"
            );
            let mut q = db::query(&sql);
            for d in chunk {
                q = q.bind(d);
            }
            for row in q.fetch_all(&self.pool).await? {
                let hint: String = row.try_get("hint")?;
                let Ok(hint) = hint.parse::<Hint>() else { continue };
                let attempt: i64 = row.try_get("attempt")?;
                out.entry(row.try_get("digest")?).or_default().push((
                    row.try_get("agent_id")?,
                    TaskId::from(row.try_get::<String, _>("task")?),
                    hint,
                    u32::try_from(attempt).unwrap_or(u32::MAX),
                ));
            }
        }
        Ok(out)
    }
}

/// A run's tokens, as stored (all four or none).
fn tokens(r: &sqlx::any::AnyRow) -> Result<Option<vocab::Tokens>, StoreError> {
    let count = |c: &str| -> Result<Option<u64>, StoreError> {
        Ok(r.try_get::<Option<i64>, _>(c)?.map(|n| u64::try_from(n).unwrap_or(0)))
    };
    let (Some(input), Some(output)) = (count("tokens_input")?, count("tokens_output")?) else {
        return Ok(None);
    };
    Ok(Some(vocab::Tokens {
        input,
        output,
        cache_read: count("tokens_cache_read")?.unwrap_or(0),
        cache_write: count("tokens_cache_write")?.unwrap_or(0),
    }))
}
