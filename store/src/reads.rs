//! The queries behind the pages and the read API. Rates come from the aggregates kept
//! at ingest, never from scanning runs.

use std::collections::BTreeMap;

use bundle::Hint;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::Store;
use crate::error::StoreError;
use crate::model::*;

const SUMS: &str = "CAST(SUM(g.runs) AS BIGINT) AS runs, CAST(SUM(g.counted) AS BIGINT) AS counted, \
    CAST(SUM(g.successes) AS BIGINT) AS successes, CAST(SUM(g.executed) AS BIGINT) AS executed, \
    CAST(SUM(g.recall_sum) AS DOUBLE PRECISION) AS recall_sum, CAST(SUM(g.recall_runs) AS BIGINT) AS recall_runs";

/// The counts of `table` for each hint condition as columns of one row (`none_runs`,
/// `hints_runs`, …), joined by key to submission `s` (and, `per_task`, to a task bound
/// once per condition): a page reads one row per agent, not one per agent and
/// condition (rows are what costs most through the driver; the task page read 3,000
/// in 30 ms).
fn by_hint_joins(table: &str, per_task: bool) -> (String, String) {
    let mut columns = Vec::new();
    let mut joins = String::new();
    for hint in Hint::ALL.map(Hint::as_str) {
        for c in ["runs", "counted", "successes", "executed", "recall_sum", "recall_runs"] {
            columns.push(format!("{hint}.{c} AS {hint}_{c}"));
        }
        joins.push_str(&format!(
            " LEFT JOIN {table} {hint} ON {hint}.bundle_id = s.bundle_id AND {hint}.hint = '{hint}'"
        ));
        if per_task {
            joins.push_str(&format!(" AND {hint}.task = ?"));
        }
    }
    (columns.join(", "), joins)
}

/// What [`by_hint_joins`] read: the rates of each condition the row has.
fn by_hint(row: &AnyRow) -> Result<BTreeMap<String, Rates>, StoreError> {
    let mut out = BTreeMap::new();
    for hint in Hint::ALL.map(Hint::as_str) {
        let Some(runs) = row.try_get::<Option<i64>, _>(format!("{hint}_runs").as_str())? else { continue };
        let get = |c: &str| row.try_get::<i64, _>(format!("{hint}_{c}").as_str());
        let rates = Rates::from_sums(
            runs,
            get("counted")?,
            get("successes")?,
            get("executed")?,
            row.try_get(format!("{hint}_recall_sum").as_str())?,
            get("recall_runs")?,
        );
        out.insert(hint.to_owned(), rates);
    }
    Ok(out)
}

fn run_summary(r: &AnyRow) -> Result<RunSummary, StoreError> {
    Ok(RunSummary {
        id: r.try_get("id")?,
        bundle_id: r.try_get("bundle_id")?,
        agent_id: r.try_get("agent_id")?,
        task: r.try_get("task")?,
        hint: r.try_get("hint")?,
        attempt: r.try_get("attempt")?,
        outcome: r.try_get("outcome")?,
        error_type: r.try_get("error_type")?,
    })
}

fn error_type(row: &AnyRow) -> Result<Option<String>, StoreError> {
    let e: String = row.try_get("error_type")?;
    Ok((!e.is_empty()).then_some(e))
}

fn rates(row: &AnyRow) -> Result<Rates, StoreError> {
    Ok(Rates::from_sums(
        row.try_get("runs")?,
        row.try_get("counted")?,
        row.try_get("successes")?,
        row.try_get("executed")?,
        row.try_get("recall_sum")?,
        row.try_get("recall_runs")?,
    ))
}

impl Store {
    pub async fn leaderboard(&self, filter: &LeaderboardFilter) -> Result<Vec<LeaderboardRow>, StoreError> {
        let (columns, joins) = by_hint_joins("totals", false);
        let mut query = format!(
            "SELECT s.bundle_id, s.agent_id, a.display_name, a.framework, a.model, a.url, s.tier, s.provenance, \
             s.provenance_source, s.benchmark_name, s.benchmark_version, s.task_set_digest, {columns} \
             FROM submissions s JOIN agents a ON a.id = s.agent_id{joins} \
             WHERE s.superseded_by IS NULL"
        );
        let mut binds = Vec::new();
        for (column, value) in [
            ("a.framework", &filter.framework),
            ("a.model", &filter.model),
            ("s.tier", &filter.tier),
            ("s.provenance", &filter.provenance),
            ("s.benchmark_version", &filter.benchmark_version),
        ] {
            if let Some(v) = value {
                query.push_str(&format!(" AND {column} = ?"));
                binds.push(v.clone());
            }
        }
        query.push_str(" ORDER BY s.agent_id, s.bundle_id");
        let sql = self.sql(&query);
        let mut q = sqlx::query(&sql);
        for b in &binds {
            q = q.bind(b);
        }
        q.fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                Ok(LeaderboardRow {
                    agent_id: row.try_get("agent_id")?,
                    display_name: row.try_get("display_name")?,
                    framework: row.try_get("framework")?,
                    model: row.try_get("model")?,
                    url: row.try_get("url")?,
                    tier: row.try_get("tier")?,
                    provenance: row.try_get("provenance")?,
                    provenance_source: row.try_get("provenance_source")?,
                    benchmark_name: row.try_get("benchmark_name")?,
                    benchmark_version: row.try_get("benchmark_version")?,
                    task_set_digest: row.try_get("task_set_digest")?,
                    bundle_id: row.try_get("bundle_id")?,
                    by_hint: by_hint(row)?,
                })
            })
            .collect()
    }

    pub async fn agent(&self, id: &str) -> Result<Option<AgentDetail>, StoreError> {
        let Some(a) = sqlx::query(&self.sql(
            "SELECT id, display_name, framework, framework_version, model, model_id, url, first_seen_at FROM agents WHERE id = ?",
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let submissions = self.submissions_of(id).await?;
        // Every current submission's grid in one read, not one read per submission.
        let rows = sqlx::query(&self.sql(&format!(
            "SELECT g.bundle_id, g.task, g.hint, {SUMS} FROM aggregates g JOIN submissions s ON s.bundle_id = g.bundle_id \
             WHERE s.agent_id = ? AND s.superseded_by IS NULL GROUP BY g.bundle_id, g.task, g.hint ORDER BY g.task"
        )))
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        let mut grids: BTreeMap<String, TaskGrid> = BTreeMap::new();
        for row in rows {
            grids
                .entry(row.try_get("bundle_id")?)
                .or_default()
                .entry(row.try_get("task")?)
                .or_default()
                .insert(row.try_get("hint")?, rates(&row)?);
        }
        let current = submissions
            .iter()
            .filter(|s| s.superseded_by.is_none())
            .map(|s| (s.bundle_id.clone(), grids.remove(&s.bundle_id).unwrap_or_default()))
            .collect();
        Ok(Some(AgentDetail {
            id: a.try_get("id")?,
            display_name: a.try_get("display_name")?,
            framework: a.try_get("framework")?,
            framework_version: a.try_get("framework_version")?,
            model: a.try_get("model")?,
            model_id: a.try_get("model_id")?,
            url: a.try_get("url")?,
            first_seen_at: a.try_get("first_seen_at")?,
            submissions,
            current,
        }))
    }

    /// The tasks each of `bundles` has runs of, in task order.
    pub async fn tasks_of(&self, bundles: &[String]) -> Result<BTreeMap<String, Vec<String>>, StoreError> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        if bundles.is_empty() {
            return Ok(out);
        }
        let marks = vec!["?"; bundles.len()].join(", ");
        let text = format!(
            "SELECT DISTINCT bundle_id, task FROM aggregates WHERE bundle_id IN ({marks}) ORDER BY bundle_id, task"
        );
        let sql = self.sql(&text);
        let mut q = sqlx::query(&sql);
        for b in bundles {
            q = q.bind(b);
        }
        for row in q.fetch_all(&self.pool).await? {
            out.entry(row.try_get("bundle_id")?).or_default().push(row.try_get("task")?);
        }
        Ok(out)
    }

    async fn submissions_of(&self, agent: &str) -> Result<Vec<SubmissionRecord>, StoreError> {
        let rows = sqlx::query(&self.sql(
            "SELECT bundle_id, agent_id, keyid, tier, provenance, provenance_source, benchmark_name, benchmark_version, \
             task_set_digest, runner_name, runner_version, created_at, received_at, superseded_by, run_count, artifact_bytes \
             FROM submissions WHERE agent_id = ? ORDER BY received_at DESC",
        ))
        .bind(agent)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(SubmissionRecord {
                    bundle_id: r.try_get("bundle_id")?,
                    agent_id: r.try_get("agent_id")?,
                    keyid: r.try_get("keyid")?,
                    tier: r.try_get("tier")?,
                    provenance: r.try_get("provenance")?,
                    provenance_source: r.try_get("provenance_source")?,
                    benchmark_name: r.try_get("benchmark_name")?,
                    benchmark_version: r.try_get("benchmark_version")?,
                    task_set_digest: r.try_get("task_set_digest")?,
                    runner: format!(
                        "{} {}",
                        r.try_get::<String, _>("runner_name")?,
                        r.try_get::<String, _>("runner_version")?
                    ),
                    created_at: r.try_get("created_at")?,
                    received_at: r.try_get("received_at")?,
                    superseded_by: r.try_get("superseded_by")?,
                    run_count: r.try_get("run_count")?,
                    artifact_bytes: r.try_get("artifact_bytes")?,
                })
            })
            .collect()
    }

    /// The runs of a submission, optionally of one task and hint condition.
    pub async fn runs_of(
        &self,
        bundle_id: &str,
        task: Option<&str>,
        hint: Option<&str>,
    ) -> Result<Vec<RunSummary>, StoreError> {
        let mut query = String::from(
            "SELECT r.id, r.bundle_id, s.agent_id, r.task, r.hint, r.attempt, r.outcome, r.error_type \
             FROM runs r JOIN submissions s ON s.bundle_id = r.bundle_id WHERE r.bundle_id = ?",
        );
        if task.is_some() {
            query.push_str(" AND r.task = ?");
        }
        if hint.is_some() {
            query.push_str(" AND r.hint = ?");
        }
        query.push_str(" ORDER BY r.task, r.hint, r.attempt");
        let sql = self.sql(&query);
        let mut q = sqlx::query(&sql).bind(bundle_id);
        for v in [task, hint].into_iter().flatten() {
            q = q.bind(v);
        }
        q.fetch_all(&self.pool).await?.iter().map(run_summary).collect()
    }

    pub async fn run(&self, id: i64) -> Result<Option<RunDetail>, StoreError> {
        let Some(r) = sqlx::query(&self.sql(
            "SELECT r.id, r.bundle_id, s.agent_id, a.display_name, s.benchmark_version, s.tier, s.provenance, \
             s.provenance_source, r.task, \
             r.hint, r.attempt, r.outcome, r.error_type, r.file_recall, r.files_changed, r.duration_s, r.cost_usd, r.metrics \
             FROM runs r JOIN submissions s ON s.bundle_id = r.bundle_id JOIN agents a ON a.id = s.agent_id WHERE r.id = ?",
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let artifacts = sqlx::query(&self.sql(
            "SELECT ra.role, ra.digest, x.size, x.media_type FROM run_artifacts ra JOIN artifacts x ON x.digest = ra.digest \
             WHERE ra.run_id = ? ORDER BY ra.role",
        ))
        .bind(id)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|a| {
            Ok(ArtifactRef {
                role: a.try_get("role")?,
                digest: a.try_get("digest")?,
                size: a.try_get("size")?,
                media_type: a.try_get("media_type")?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
        let files: Option<String> = r.try_get("files_changed")?;
        let metrics: String = r.try_get("metrics")?;
        Ok(Some(RunDetail {
            id: r.try_get("id")?,
            bundle_id: r.try_get("bundle_id")?,
            agent_id: r.try_get("agent_id")?,
            agent_name: r.try_get("display_name")?,
            benchmark_version: r.try_get("benchmark_version")?,
            tier: r.try_get("tier")?,
            provenance: r.try_get("provenance")?,
            provenance_source: r.try_get("provenance_source")?,
            task: r.try_get("task")?,
            hint: r.try_get("hint")?,
            attempt: r.try_get("attempt")?,
            outcome: r.try_get("outcome")?,
            error_type: r.try_get("error_type")?,
            file_recall: r.try_get("file_recall")?,
            files_changed: files.and_then(|f| serde_json::from_str(&f).ok()),
            duration_s: r.try_get("duration_s")?,
            cost_usd: r.try_get("cost_usd")?,
            metrics: serde_json::from_str(&metrics).unwrap_or_default(),
            artifacts,
        }))
    }

    /// Per task, over current submissions.
    pub async fn tasks(&self) -> Result<Vec<TaskRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT g.task, g.hint, CAST(COUNT(DISTINCT s.agent_id) AS BIGINT) AS agents, {SUMS} \
             FROM aggregates g JOIN submissions s ON s.bundle_id = g.bundle_id WHERE s.superseded_by IS NULL \
             GROUP BY g.task, g.hint ORDER BY g.task"
        ))
        .fetch_all(&self.pool)
        .await?;
        let mut out: Vec<TaskRow> = Vec::new();
        for row in rows {
            let task: String = row.try_get("task")?;
            if out.last().is_none_or(|t| t.task != task) {
                out.push(TaskRow { task, agents: 0, by_hint: BTreeMap::new() });
            }
            let last = out.last_mut().expect("pushed");
            last.agents = last.agents.max(row.try_get("agents")?);
            last.by_hint.insert(row.try_get("hint")?, rates(&row)?);
        }
        Ok(out)
    }

    /// Per agent with a current submission, the rates on one task.
    pub async fn task(&self, task: &str) -> Result<Vec<TaskAgentRow>, StoreError> {
        let (columns, joins) = by_hint_joins("aggregates", true);
        let sql = self
            .sql(&format!(
                "SELECT s.agent_id, a.display_name, s.tier, s.provenance, s.bundle_id, {columns} \
             FROM submissions s JOIN agents a ON a.id = s.agent_id{joins} \
             WHERE s.superseded_by IS NULL AND (none.runs IS NOT NULL OR hints.runs IS NOT NULL \
             OR detailed.runs IS NOT NULL) ORDER BY s.agent_id, s.bundle_id"
            ))
            .into_owned();
        let mut q = sqlx::query(&sql);
        for _ in Hint::ALL {
            q = q.bind(task);
        }
        q.fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                Ok(TaskAgentRow {
                    agent_id: row.try_get("agent_id")?,
                    display_name: row.try_get("display_name")?,
                    tier: row.try_get("tier")?,
                    provenance: row.try_get("provenance")?,
                    bundle_id: row.try_get("bundle_id")?,
                    by_hint: by_hint(row)?,
                })
            })
            .collect()
    }

    /// The current runs that did not succeed, by agent (of one agent, if given),
    /// outcome and error type.
    pub async fn failures_by_agent(&self, agent: Option<&str>) -> Result<Vec<FailureCount>, StoreError> {
        let rows = sqlx::query(&self.sql(
            "SELECT s.agent_id, a.display_name, e.outcome, e.error_type, CAST(SUM(e.runs) AS BIGINT) AS runs \
             FROM error_counts e JOIN submissions s ON s.bundle_id = e.bundle_id JOIN agents a ON a.id = s.agent_id \
             WHERE s.superseded_by IS NULL AND e.outcome <> 'success' AND (CAST(? AS TEXT) IS NULL OR s.agent_id = ?) \
             GROUP BY s.agent_id, a.display_name, e.outcome, e.error_type ORDER BY s.agent_id, e.outcome, e.error_type",
        ))
        .bind(agent)
        .bind(agent)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(FailureCount {
                    agent_id: row.try_get("agent_id")?,
                    display_name: row.try_get("display_name")?,
                    outcome: row.try_get("outcome")?,
                    error_type: error_type(row)?,
                    runs: row.try_get("runs")?,
                })
            })
            .collect()
    }

    /// The ways tasks were failed (of one task, if given), with how many agents failed
    /// each way, most agents first.
    pub async fn failure_patterns(&self, task: Option<&str>) -> Result<Vec<FailurePattern>, StoreError> {
        // A plain `e.task = ?` (not "? IS NULL OR …") lets the index on the task serve it.
        let only_task = if task.is_some() { " AND e.task = ?" } else { "" };
        let sql = self.sql(&format!(
            "SELECT e.task, e.outcome, e.error_type, CAST(COUNT(DISTINCT s.agent_id) AS BIGINT) AS agents, \
             CAST(SUM(e.runs) AS BIGINT) AS runs \
             FROM error_counts e JOIN submissions s ON s.bundle_id = e.bundle_id \
             WHERE s.superseded_by IS NULL AND e.outcome <> 'success'{only_task} \
             GROUP BY e.task, e.outcome, e.error_type ORDER BY agents DESC, runs DESC, e.task, e.outcome, e.error_type"
        ))
        .into_owned();
        let mut q = sqlx::query(&sql);
        if let Some(t) = task {
            q = q.bind(t);
        }
        let rows = q.fetch_all(&self.pool).await?;
        rows.iter()
            .map(|row| {
                Ok(FailurePattern {
                    task: row.try_get("task")?,
                    outcome: row.try_get("outcome")?,
                    error_type: error_type(row)?,
                    agents: row.try_get("agents")?,
                    runs: row.try_get("runs")?,
                })
            })
            .collect()
    }

    /// The runs of `task` in the given submissions, by agent, hint condition and attempt.
    pub async fn task_runs(&self, task: &str, bundles: &[String]) -> Result<Vec<RunSummary>, StoreError> {
        if bundles.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; bundles.len()].join(", ");
        let sql = self
            .sql(&format!(
                "SELECT r.id, r.bundle_id, s.agent_id, r.task, r.hint, r.attempt, r.outcome, r.error_type \
             FROM runs r JOIN submissions s ON s.bundle_id = r.bundle_id \
             WHERE r.bundle_id IN ({marks}) AND r.task = ? ORDER BY s.agent_id, r.hint, r.attempt"
            ))
            .into_owned();
        let mut q = sqlx::query(&sql);
        for b in bundles {
            q = q.bind(b);
        }
        q.bind(task).fetch_all(&self.pool).await?.iter().map(run_summary).collect()
    }

    /// The change log, newest first: at most `limit` events before `before` (a seq).
    pub async fn changes(&self, limit: i64, before: Option<i64>) -> Result<Vec<Change>, StoreError> {
        let rows = sqlx::query(&self.sql(
            "SELECT seq, at, kind, bundle_id, agent_id, detail FROM changes WHERE seq < ? ORDER BY seq DESC LIMIT ?",
        ))
        .bind(before.unwrap_or(i64::MAX))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(Change {
                    seq: r.try_get("seq")?,
                    at: r.try_get("at")?,
                    kind: r.try_get("kind")?,
                    bundle_id: r.try_get("bundle_id")?,
                    agent_id: r.try_get("agent_id")?,
                    detail: r.try_get("detail")?,
                })
            })
            .collect()
    }

    /// An artifact's record, if any run refers to it.
    pub async fn artifact(&self, digest: &str) -> Result<Option<(i64, String)>, StoreError> {
        let row = sqlx::query(&self.sql("SELECT size, media_type FROM artifacts WHERE digest = ?"))
            .bind(digest)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| Ok((r.try_get("size")?, r.try_get("media_type")?))).transpose()
    }
}
