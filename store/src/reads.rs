//! The queries behind the pages and the read API. Rates come from the aggregates kept
//! at ingest, never from scanning runs.

use std::collections::BTreeMap;

use sqlx::Row;
use sqlx::any::AnyRow;
use vocab::{Harness, Hint, Integrity, Outcome, TaskId};

use crate::Store;
use crate::db::{self, Placeholders};
use crate::error::StoreError;
use crate::model::*;

/// Each kept sum of the aggregates `g`, summed over what a query groups.
fn sums() -> String {
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
fn by_hint_joins(table: &str, per_task: bool) -> (String, String) {
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
fn by_hint(row: &AnyRow, integrity: Integrity) -> Result<BTreeMap<Hint, Rates>, StoreError> {
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
fn sums_of(row: &AnyRow, prefix: &str) -> Result<Sums, StoreError> {
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

fn task(row: &AnyRow) -> Result<TaskId, StoreError> {
    Ok(TaskId::new(row.try_get::<String, _>("task")?))
}

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

/// Agents named beside each error type on the failure explorer.
const MOST_PER_ERROR_TYPE: i64 = 5;

const RUN_SUMMARY: &str = "r.id, r.bundle_id, s.agent_id, r.task, r.hint, r.attempt, r.outcome, r.error_type";

fn rates(row: &AnyRow) -> Result<Rates, StoreError> {
    Ok(sums_of(row, "")?.rates(Integrity::Reported))
}

/// The coverage columns `totals` keeps beside the sums.
const COVERAGE: [&str; 4] = ["tasks", "fewest_runs", "most_runs", "short_tasks"];

/// The leaderboard's rows: every column, narrowed by `filter` (and to `only` these
/// bundles, if given), ordered by `order`.
fn board_query<'f>(
    filter: &'f LeaderboardFilter,
    only: Option<&'f [String]>,
    order: &str,
) -> (String, Vec<&'f str>) {
    let (with, from, binds, _) = board_from(filter, only, &Hint::ALL);
    // The columns name each condition's alias, whichever table it is joined from.
    let columns = by_hint_joins("totals", false).0;
    (
        format!(
            "{with}SELECT s.bundle_id, s.agent_id, a.display_name, a.framework, a.model, a.url, s.tier, s.provenance, \
             s.provenance_source, s.harness, s.harness_version, s.benchmark_name, s.benchmark_version, \
             s.task_set_digest, s.sampled, s.reproduced, s.differed, s.not_reproduced_before, {columns}{from}{order}"
        ),
        binds,
    )
}

/// The current submissions `filter` keeps (of `only` these bundles, if given), with their
/// agents and their totals under each hint condition (joined as `none`, `hints`,
/// `detailed`): the `WITH` clause (when only some tasks count) and the `FROM … WHERE …`
/// of a leaderboard query, what they bind, and the placeholders used.
///
/// When only some tasks count, each condition in `hints` has its own sums
/// (`scoped_none`, …) over those tasks, of `only` these bundles if given, and the others
/// are not joined: the sums are the costly part, so a query sums what it reads and no
/// more. (One table of every condition's sums, joined three times by condition, made
/// PostgreSQL expect 10 rows of each join, not 1,000, and loop over them: 125 ms.)
fn board_from<'f>(
    filter: &'f LeaderboardFilter,
    only: Option<&'f [String]>,
    hints: &[Hint],
) -> (String, String, Vec<&'f str>, Placeholders) {
    let mut marks = Placeholders::default();
    let mut binds: Vec<&str> = Vec::new();
    let (with, joins) = match &filter.tasks {
        // Every task counts: the totals kept per submission and condition.
        None => (String::new(), by_hint_joins("totals", false).1),
        Some(tasks) => {
            // Each condition's sums use the same placeholders.
            let list = marks.list(tasks.len());
            binds.extend(tasks.iter().map(TaskId::as_str));
            let mut narrower = String::new();
            if let Some(bundles) = only {
                narrower.push_str(&format!(" AND g.bundle_id IN ({})", marks.list(bundles.len())));
                binds.extend(bundles.iter().map(String::as_str));
            }
            let sums = sums();
            let tables: Vec<String> = hints
                .iter()
                .map(|h| {
                    format!(
                        "scoped_{h} AS (SELECT g.bundle_id, \
                         CAST(SUM(CASE WHEN g.counted > 0 THEN 1 ELSE 0 END) AS BIGINT) AS tasks, \
                         CAST(COALESCE(MIN(CASE WHEN g.counted > 0 THEN g.counted END), 0) AS BIGINT) AS fewest_runs, \
                         CAST(MAX(g.counted) AS BIGINT) AS most_runs, \
                         CAST(SUM(CASE WHEN g.shortfall > 0 THEN 1 ELSE 0 END) AS BIGINT) AS short_tasks, {sums} \
                         FROM aggregates g JOIN submissions c ON c.bundle_id = g.bundle_id \
                         WHERE c.superseded_by IS NULL AND g.hint = '{h}' AND g.task IN ({list}){narrower} \
                         GROUP BY g.bundle_id)"
                    )
                })
                .collect();
            let joins: String = hints
                .iter()
                .map(|h| format!(" LEFT JOIN scoped_{h} {h} ON {h}.bundle_id = s.bundle_id"))
                .collect();
            (format!("WITH {} ", tables.join(", ")), joins)
        }
    };
    let mut from = format!(
        " FROM submissions s JOIN agents a ON a.id = s.agent_id{joins} WHERE s.superseded_by IS NULL"
    );
    if filter.reproduced {
        from.push_str(" AND s.reproduced > 0 AND s.differed = 0");
    }
    // Counting only some tasks, a submission with no run on them without hints has
    // nothing to show.
    if filter.tasks.is_some() {
        from.push_str(" AND none.tasks IS NOT NULL");
    }
    for (column, value) in [
        ("a.framework", filter.framework.as_deref()),
        ("a.model", filter.model.as_deref()),
        ("s.tier", filter.tier.map(|t| t.as_str())),
        ("s.provenance", filter.provenance.map(|p| p.as_str())),
        ("s.harness", filter.harness.as_deref()),
        ("s.benchmark_version", filter.benchmark_version.as_deref()),
        ("s.task_set_digest", filter.task_set_digest.as_deref()),
    ] {
        if let Some(v) = value {
            from.push_str(&format!(" AND {column} = {}", marks.next()));
            binds.push(v);
        }
    }
    if let Some(bundles) = only {
        from.push_str(&format!(" AND s.bundle_id IN ({})", marks.list(bundles.len())));
        binds.extend(bundles.iter().map(String::as_str));
    }
    (with, from, binds, marks)
}

/// What [`submission`] reads.
const SUBMISSION: &str = "bundle_id, agent_id, keyid, tier, provenance, provenance_source, harness, harness_version, \
     execution_known, benchmark_name, benchmark_version, task_set_digest, \
     runner_name || ' ' || runner_version AS runner, created_at, received_at, superseded_by, run_count, artifact_bytes, \
     sampled, reproduced, differed";

/// What a row's `sampled`, `reproduced` and `differed` say.
fn sample_counts(row: &AnyRow) -> Result<SampleCounts, StoreError> {
    Ok(SampleCounts {
        sampled: row.try_get("sampled")?,
        reproduced: row.try_get("reproduced")?,
        differed: row.try_get("differed")?,
    })
}

fn submission(row: &AnyRow) -> Result<SubmissionRecord, StoreError> {
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

fn harness(row: &AnyRow) -> Result<Harness, StoreError> {
    Ok(Harness::new(row.try_get::<String, _>("harness")?, row.try_get("harness_version")?))
}

/// What [`by_hint_joins`] read of the coverage under each condition.
fn coverage(row: &AnyRow) -> Result<BTreeMap<Hint, Coverage>, StoreError> {
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

fn board_row(row: &AnyRow, integrity: Integrity) -> Result<LeaderboardRow, StoreError> {
    Ok(LeaderboardRow {
        agent_id: row.try_get("agent_id")?,
        display_name: row.try_get("display_name")?,
        framework: row.try_get("framework")?,
        model: row.try_get("model")?,
        url: row.try_get("url")?,
        tier: name(row, "tier")?,
        provenance: name(row, "provenance")?,
        provenance_source: row.try_get("provenance_source")?,
        benchmark_name: row.try_get("benchmark_name")?,
        benchmark_version: row.try_get("benchmark_version")?,
        task_set_digest: row.try_get("task_set_digest")?,
        bundle_id: row.try_get("bundle_id")?,
        harness: harness(row)?,
        by_hint: by_hint(row, integrity)?,
        coverage: coverage(row)?,
        sample: sample_counts(row)?,
        not_reproduced_before: row.try_get("not_reproduced_before")?,
    })
}

impl Store {
    /// The current rows of the leaderboard that `filter` keeps, narrowed in the query.
    pub async fn leaderboard(&self, filter: &LeaderboardFilter) -> Result<Vec<LeaderboardRow>, StoreError> {
        let (sql, binds) = board_query(filter, None, " ORDER BY s.agent_id, s.bundle_id");
        let mut q = db::query(&sql);
        for b in binds {
            q = q.bind(b);
        }
        q.fetch_all(&self.pool).await?.iter().map(|r| board_row(r, filter.integrity)).collect()
    }

    /// The current rows of these bundles, in no particular order, their successes
    /// counted as `integrity` says, over `tasks` only if given.
    pub async fn leaderboard_rows(
        &self,
        bundles: &[String],
        integrity: Integrity,
        tasks: Option<&[TaskId]>,
    ) -> Result<Vec<LeaderboardRow>, StoreError> {
        if bundles.is_empty() {
            return Ok(Vec::new());
        }
        let filter = LeaderboardFilter { tasks: tasks.map(<[TaskId]>::to_vec), ..Default::default() };
        let (sql, binds) = board_query(&filter, Some(bundles), "");
        let mut q = db::query(&sql);
        for b in binds {
            q = q.bind(b);
        }
        q.fetch_all(&self.pool).await?.iter().map(|r| board_row(r, integrity)).collect()
    }

    /// What ordering the rows `filter` keeps needs, and no more: each row's bundle, name
    /// and `key`'s value. A page of thousands of agents then reads whole rows only for
    /// the ones it shows ([`Store::leaderboard_rows`]).
    pub async fn leaderboard_keys(
        &self,
        filter: &LeaderboardFilter,
        key: Option<RateKey>,
    ) -> Result<Vec<RowKey>, StoreError> {
        let ratio = |n: &str, d: &str| format!("CAST({n} AS DOUBLE PRECISION) / NULLIF({d}, 0)");
        // The successes and counted runs as the view counts them, as `Sums::rates` does.
        let successes = |h: Hint| match filter.integrity {
            Integrity::Reported => format!("{h}.successes"),
            Integrity::Strict => format!("({h}.successes - {h}.flagged)"),
        };
        let counted = |h: Hint| match filter.integrity {
            Integrity::Reported => format!("{h}.counted"),
            Integrity::Strict => format!("({h}.counted + {h}.refuted)"),
        };
        let expression = match key {
            None => "NULL".to_owned(),
            Some(RateKey::Final(h)) => ratio(&successes(h), &counted(h)),
            Some(RateKey::Execution(h)) => ratio(&format!("{h}.executed"), &format!("{h}.exec_counted")),
            Some(RateKey::Recall(h)) => ratio(&format!("{h}.recall_sum"), &format!("{h}.recall_runs")),
            Some(RateKey::Cost(h)) => ratio(&format!("{h}.cost_sum"), &format!("{h}.cost_runs")),
            Some(RateKey::Uplift) => format!(
                "{} - {}",
                ratio(&successes(Hint::Hints), &counted(Hint::Hints)),
                ratio(&successes(Hint::None), &counted(Hint::None))
            ),
        };
        // The sums of the conditions the key reads, and of `none` (the rank's coverage).
        let mut hints = vec![Hint::None];
        match key {
            Some(RateKey::Uplift) => hints.push(Hint::Hints),
            Some(RateKey::Final(h) | RateKey::Execution(h) | RateKey::Recall(h) | RateKey::Cost(h))
                if h != Hint::None =>
            {
                hints.push(h)
            }
            _ => {}
        }
        let (with, from, mut binds, mut marks) = board_from(filter, None, &hints);
        // The cells short of the attempts asked, of the tasks the view counts: kept per
        // submission, or counted over those tasks (bound after the rest).
        let (short, infra_errors) = match &filter.tasks {
            None => ("s.short_cells".to_owned(), "s.infra_errors".to_owned()),
            Some(tasks) => {
                let mut over = |what: &str| {
                    binds.extend(tasks.iter().map(TaskId::as_str));
                    format!(
                        "(SELECT {what} FROM aggregates g WHERE g.bundle_id = s.bundle_id AND g.task IN ({}))",
                        marks.list(tasks.len())
                    )
                };
                (
                    over("COUNT(CASE WHEN g.shortfall > 0 THEN 1 END)"),
                    over("COALESCE(SUM(g.runs - g.counted), 0)"),
                )
            }
        };
        let mut sql = format!(
            "{with}SELECT s.bundle_id, a.display_name, \
             CAST(CASE WHEN {short} = 0 THEN COALESCE(none.tasks, 0) ELSE 0 END AS BIGINT) AS ranked_tasks, \
             CAST({infra_errors} AS BIGINT) AS infra_errors, CAST("
        );
        sql.push_str(&expression);
        sql.push_str(" AS DOUBLE PRECISION) AS value");
        sql.push_str(&from);
        let mut q = db::query_as::<RowKey>(&sql);
        for b in binds {
            q = q.bind(b);
        }
        Ok(q.fetch_all(&self.pool).await?)
    }

    /// The task sets current submissions were evaluated on, with how many agents each
    /// has and the tasks their runs cover; most agents first.
    pub async fn task_sets(&self) -> Result<Vec<TaskSetSummary>, StoreError> {
        let sets: Vec<(String, String, String, i64)> = db::query_as(
            "SELECT task_set_digest, MIN(benchmark_name) AS benchmark_name, MIN(benchmark_version) AS benchmark_version, \
             CAST(COUNT(*) AS BIGINT) AS agents FROM submissions WHERE superseded_by IS NULL \
             GROUP BY task_set_digest ORDER BY agents DESC, task_set_digest",
        )
        .fetch_all(&self.pool)
        .await?;
        // Each (set, task) pair is probed with EXISTS, which stops at the first run found:
        // joining every current cell and grouping read 36,000 rows for 1,000 agents
        // (98 ms on SQLite; this way 7 ms). The tasks to probe are those of the current
        // totals, a few rows, not the distinct tasks of every cell (a scan of them all).
        let tasks: Vec<(String, String)> = db::query_as(
            "SELECT s.task_set_digest, t.task FROM (SELECT DISTINCT task FROM task_totals WHERE bundles > 0) t \
             JOIN (SELECT DISTINCT task_set_digest FROM submissions WHERE superseded_by IS NULL) s ON 1 = 1 \
             WHERE EXISTS (SELECT 1 FROM aggregates g JOIN submissions c ON c.bundle_id = g.bundle_id \
             WHERE g.task = t.task AND c.task_set_digest = s.task_set_digest AND c.superseded_by IS NULL) \
             ORDER BY s.task_set_digest, t.task",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut tasks_of: BTreeMap<String, Vec<TaskId>> = BTreeMap::new();
        for (digest, task) in tasks {
            tasks_of.entry(digest).or_default().push(TaskId::new(task));
        }
        Ok(sets
            .into_iter()
            .map(|(digest, benchmark_name, benchmark_version, agents)| {
                let ran = tasks_of.remove(&digest).unwrap_or_default();
                TaskSetSummary {
                    tasks: self.known_task_set(&digest).unwrap_or(ran),
                    digest,
                    benchmark_name,
                    benchmark_version,
                    agents,
                }
            })
            .collect())
    }

    /// The frameworks, the models and the harnesses (by name) of the current
    /// submissions on one task set, each sorted: what the leaderboard's filters offer.
    pub async fn leaderboard_choices(
        &self,
        task_set: &str,
    ) -> Result<(Vec<String>, Vec<String>, Vec<Harness>), StoreError> {
        let rows: Vec<(String, String, String)> = db::query_as(
            "SELECT DISTINCT a.framework, a.model, s.harness FROM submissions s JOIN agents a ON a.id = s.agent_id \
             WHERE s.superseded_by IS NULL AND s.task_set_digest = $1",
        )
        .bind(task_set)
        .fetch_all(&self.pool)
        .await?;
        let mut frameworks = Vec::with_capacity(rows.len());
        let mut models = Vec::with_capacity(rows.len());
        let mut harnesses = Vec::new();
        for (framework, model, harness) in rows {
            frameworks.push(framework);
            models.push(model);
            harnesses.push(harness);
        }
        for v in [&mut frameworks, &mut models, &mut harnesses] {
            v.sort();
            v.dedup();
        }
        Ok((frameworks, models, harnesses.into_iter().map(|h| Harness::new(h, None)).collect()))
    }

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

    /// The agents with a current submission, as (id, name), by name.
    pub async fn current_agents(&self) -> Result<Vec<(String, String)>, StoreError> {
        Ok(db::query_as(
            "SELECT DISTINCT a.id, a.display_name FROM submissions s JOIN agents a ON a.id = s.agent_id \
             WHERE s.superseded_by IS NULL ORDER BY a.display_name, a.id",
        )
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn agent(&self, id: &str) -> Result<Option<AgentDetail>, StoreError> {
        let Some(a) = db::query_as::<AgentHead>(
            "SELECT id, display_name, framework, framework_version, model, model_id, url, first_seen_at FROM agents WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let submissions = self.submissions_of(id).await?;
        // Every current submission's grid in one read, not one read per submission.
        let sums = sums();
        let rows = db::query(&format!(
            "SELECT g.bundle_id, g.task, g.hint, {sums} FROM aggregates g JOIN submissions s ON s.bundle_id = g.bundle_id \
             WHERE s.agent_id = $1 AND s.superseded_by IS NULL GROUP BY g.bundle_id, g.task, g.hint ORDER BY g.task"
        ))
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
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
            reproduced: self.reproduced_runs_of(id).await?,
        }))
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

    pub async fn run(&self, id: i64) -> Result<Option<RunDetail>, StoreError> {
        let Some(r) = db::query(
            "SELECT r.id, r.bundle_id, s.agent_id, a.display_name, s.benchmark_version, s.tier, s.provenance, \
             s.provenance_source, r.task, \
             r.hint, r.attempt, r.outcome, r.error_type, r.file_recall, r.files_changed, r.duration_s, r.cost_usd, r.metrics \
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
            error_type: r.try_get("error_type")?,
            file_recall: r.try_get("file_recall")?,
            files_changed: files.and_then(|f| serde_json::from_str(&f).ok()),
            duration_s: r.try_get("duration_s")?,
            cost_usd: r.try_get("cost_usd")?,
            metrics: serde_json::from_str(&metrics).unwrap_or_default(),
            artifacts,
            findings,
            sampled,
            reproduction,
        }))
    }

    /// Per task, over current submissions (kept at ingest in `task_totals`).
    pub async fn tasks(&self) -> Result<Vec<TaskRow>, StoreError> {
        let rows = db::query(&format!(
            "SELECT task, hint, bundles AS agents, {} FROM task_totals WHERE bundles > 0 ORDER BY task, hint",
            Sums::COLUMNS.join(", ")
        ))
        .fetch_all(&self.pool)
        .await?;
        let mut out: Vec<TaskRow> = Vec::new();
        for row in &rows {
            let task = task(row)?;
            if out.last().is_none_or(|t| t.task != task) {
                out.push(TaskRow { task, agents: 0, by_hint: BTreeMap::new() });
            }
            let last = out.last_mut().expect("pushed");
            last.agents = last.agents.max(row.try_get("agents")?);
            last.by_hint.insert(name(row, "hint")?, rates(row)?);
        }
        Ok(out)
    }

    /// Per agent with a current submission, the rates on one task.
    pub async fn task(&self, task: &str) -> Result<Vec<TaskAgentRow>, StoreError> {
        self.task_rows(task, None).await
    }

    /// Per agent with a current submission with results on `task`, what places it on
    /// the task's page: a narrow read of every agent, so that the page's full rows are
    /// read for its agents only ([`Store::task_rows`]).
    pub async fn task_places(&self, task: &str) -> Result<Vec<TaskPlace>, StoreError> {
        let (hint, hints, detailed) = (Hint::None.as_str(), Hint::Hints.as_str(), Hint::Detailed.as_str());
        let of =
            |column: &str, h: &str| format!("CAST(SUM(CASE WHEN hint = '{h}' THEN {column} END) AS BIGINT)");
        // Grouped from the task's entries of the index `aggregates_task`, which holds
        // the counts: one agent's three conditions lie side by side there.
        let rows = db::query(&format!(
            "SELECT s.bundle_id, s.agent_id, a.display_name, p.none_successes, p.none_counted, \
             p.hints_successes, p.hints_counted, p.detailed_successes, p.detailed_counted \
             FROM (SELECT bundle_id, {} AS none_successes, {} AS none_counted, {} AS hints_successes, \
               {} AS hints_counted, {} AS detailed_successes, {} AS detailed_counted \
               FROM aggregates WHERE task = $1 GROUP BY bundle_id) p \
             JOIN submissions s ON s.bundle_id = p.bundle_id JOIN agents a ON a.id = s.agent_id \
             WHERE s.superseded_by IS NULL",
            of("successes", hint),
            of("counted", hint),
            of("successes", hints),
            of("counted", hints),
            of("successes", detailed),
            of("counted", detailed),
        ))
        .bind(task)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let successes = |c: &str| row.try_get::<Option<i64>, _>(c).map(Option::unwrap_or_default);
                let none = Sums {
                    successes: successes("none_successes")?,
                    counted: row.try_get::<Option<i64>, _>("none_counted")?.unwrap_or_default(),
                    ..Sums::default()
                };
                Ok(TaskPlace {
                    bundle_id: row.try_get("bundle_id")?,
                    agent_id: row.try_get("agent_id")?,
                    display_name: row.try_get("display_name")?,
                    final_success: none.rates(Integrity::Reported).final_success,
                    hinted_only: none.successes == 0
                        && successes("hints_successes")? + successes("detailed_successes")? > 0,
                    every_time: Hint::ALL
                        .into_iter()
                        .filter_map(|h| {
                            let (won, counted) =
                                (successes(&format!("{h}_successes")), successes(&format!("{h}_counted")));
                            match (won, counted) {
                                (Ok(w), Ok(c)) => (c > 0 && w == c).then_some(Ok(h)),
                                (Err(e), _) | (_, Err(e)) => Some(Err(e)),
                            }
                        })
                        .collect::<Result<_, _>>()?,
                })
            })
            .collect()
    }

    /// The rates on `task` of the current submissions `bundles` (of every current
    /// submission with results on it, if none are named), by agent.
    pub async fn task_rows(
        &self,
        task: &str,
        bundles: Option<&[String]>,
    ) -> Result<Vec<TaskAgentRow>, StoreError> {
        if bundles.is_some_and(<[String]>::is_empty) {
            return Ok(Vec::new());
        }
        let (columns, joins) = by_hint_joins("aggregates", true);
        let only = bundles.map_or_else(String::new, |b| {
            format!(" AND s.bundle_id IN ({})", Placeholders::after(1).list(b.len()))
        });
        let sql = format!(
            "SELECT s.agent_id, a.display_name, s.tier, s.provenance, s.bundle_id, {columns} \
             FROM submissions s JOIN agents a ON a.id = s.agent_id{joins} \
             WHERE s.superseded_by IS NULL AND (none.runs IS NOT NULL OR hints.runs IS NOT NULL \
             OR detailed.runs IS NOT NULL){only} ORDER BY s.agent_id, s.bundle_id"
        );
        let mut q = db::query(&sql).bind(task);
        for b in bundles.unwrap_or_default() {
            q = q.bind(b);
        }
        q.fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                Ok(TaskAgentRow {
                    agent_id: row.try_get("agent_id")?,
                    display_name: row.try_get("display_name")?,
                    tier: name(row, "tier")?,
                    provenance: name(row, "provenance")?,
                    bundle_id: row.try_get("bundle_id")?,
                    by_hint: by_hint(row, Integrity::Reported)?,
                })
            })
            .collect()
    }

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

    /// The runs of `task` in the given submissions, by agent, hint condition and attempt.
    pub async fn task_runs(&self, task: &str, bundles: &[String]) -> Result<Vec<RunSummary>, StoreError> {
        if bundles.is_empty() {
            return Ok(Vec::new());
        }
        let marks = Placeholders::after(1).list(bundles.len());
        let sql = format!(
            "SELECT {RUN_SUMMARY} FROM runs r JOIN submissions s ON s.bundle_id = r.bundle_id \
             WHERE r.task = $1 AND r.bundle_id IN ({marks}) ORDER BY s.agent_id, r.hint, r.attempt"
        );
        let mut q = db::query_as(&sql).bind(task);
        for b in bundles {
            q = q.bind(b);
        }
        Ok(q.fetch_all(&self.pool).await?)
    }

    /// The change log, newest first: at most `limit` events before `before` (a seq).
    pub async fn changes(&self, limit: i64, before: Option<i64>) -> Result<Vec<Change>, StoreError> {
        Ok(db::query_as(
            "SELECT seq, at, kind, bundle_id, agent_id, task, detail FROM changes WHERE seq < $1 ORDER BY seq DESC LIMIT $2",
        )
        .bind(before.unwrap_or(i64::MAX))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    /// An artifact's record, if any run refers to it.
    pub async fn artifact(&self, digest: &str) -> Result<Option<(i64, String)>, StoreError> {
        let row = db::query("SELECT size, media_type FROM artifacts WHERE digest = $1")
            .bind(digest)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| Ok((r.try_get("size")?, r.try_get("media_type")?))).transpose()
    }
}
