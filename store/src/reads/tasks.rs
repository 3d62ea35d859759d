//! The tasks: each one's totals, and one task's agents, places and runs.

use std::collections::BTreeMap;

use sqlx::Row;
use vocab::{Hint, Integrity};

use super::*;
use crate::Store;
use crate::db::{self, Placeholders};
use crate::error::StoreError;
use crate::model::*;

impl Store {
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

    /// Per agent with a current submission, the rates on one task. Read once per
    /// change of the data.
    pub async fn task(&self, task: &str) -> Result<std::sync::Arc<Vec<TaskAgentRow>>, StoreError> {
        let generation = self.generation().await?;
        self.memo.task_rows.get_or(generation, &task.to_owned(), || self.task_rows(task, None)).await
    }

    /// Per agent with a current submission with results on `task`, what places it on
    /// the task's page: a narrow read of every agent, so that the page's full rows are
    /// read for its agents only ([`Store::task_rows`]). Read once per change of the data.
    pub async fn task_places(&self, task: &str) -> Result<Vec<TaskPlace>, StoreError> {
        let generation = self.generation().await?;
        let places = self
            .memo
            .task_places
            .get_or(generation, &task.to_owned(), || self.read_task_places(task))
            .await?;
        Ok(places.as_ref().clone())
    }

    async fn read_task_places(&self, task: &str) -> Result<Vec<TaskPlace>, StoreError> {
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
            "SELECT s.agent_id, a.display_name, s.tier, s.provenance, s.bundle_id, {columns}, \
             (SELECT MAX(f.task_folder) FROM aggregates f WHERE f.bundle_id = s.bundle_id AND f.task = $1) AS task_folder \
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
                    task_folder: row.try_get("task_folder")?,
                })
            })
            .collect()
    }

    /// Spec §4n: the task folders the current submissions ran of `task`, as their runs
    /// state them, per task set: how many submissions ran each.
    pub async fn task_folders(&self, task: &str) -> Result<Vec<TaskFolderUse>, StoreError> {
        let rows = db::query(
            "SELECT s.task_set_digest, g.task_folder, COUNT(DISTINCT s.bundle_id) AS submissions \
             FROM aggregates g JOIN submissions s ON s.bundle_id = g.bundle_id \
             WHERE g.task = $1 AND s.superseded_by IS NULL AND g.task_folder IS NOT NULL \
             GROUP BY s.task_set_digest, g.task_folder ORDER BY s.task_set_digest, g.task_folder",
        )
        .bind(task)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(TaskFolderUse {
                    task_set_digest: r.try_get("task_set_digest")?,
                    folder: r.try_get("task_folder")?,
                    submissions: r.try_get("submissions")?,
                })
            })
            .collect()
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
}
