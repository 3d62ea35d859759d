//! The statistics of the current results, computed from the aggregates (never from
//! runs) and cached until the change log moves: every ingest appends to it, so a new
//! change in any server process sharing the database invalidates the cache.

use std::collections::BTreeMap;
use std::sync::Arc;

use sqlx::Row;
use vocab::{Hint, Integrity};

use crate::model::BoardStats;
use crate::stats::{self, AgentCells, Cell, Comparison};
use crate::{Store, StoreError, db};

/// Per task set: its tasks, and each current bundle's cells over them.
type Sets = BTreeMap<String, (Vec<String>, Vec<AgentCells>)>;

/// Bundle → task → hint → cell.
type BundleCells = BTreeMap<String, BTreeMap<String, [Option<Cell>; 3]>>;

impl Store {
    /// Intervals, rank ranges and groups of every current submission, within its task
    /// set, their successes counted as `integrity` says. Computed once per change of the
    /// data, on a blocking thread.
    pub async fn board_stats(&self, integrity: Integrity) -> Result<Arc<BoardStats>, StoreError> {
        let generation = self.generation().await?;
        let mut cache = self.stats_cache.lock().await;
        if let Some((at, stats)) = cache.get(&integrity)
            && *at == generation
        {
            return Ok(stats.clone());
        }
        let sets = self.cells(None, integrity).await?;
        let stats = tokio::task::spawn_blocking(move || {
            let mut by_bundle = BTreeMap::new();
            for (tasks, agents) in sets.values() {
                for s in stats::analyse(agents, tasks.len(), stats::REPLICATES, stats::SEED) {
                    by_bundle.insert(s.id.clone(), s);
                }
            }
            BoardStats { by_bundle }
        })
        .await
        .map_err(|source| StoreError::Background { task: "computing the statistics", source })?;
        let stats = Arc::new(stats);
        cache.insert(integrity, (generation, stats.clone()));
        Ok(stats)
    }

    /// The paired comparison of two current submissions over the tasks both ran.
    pub async fn compare_bundles(&self, a: &str, b: &str) -> Result<Comparison, StoreError> {
        let sets = self.cells(Some((a, b)), Integrity::Reported).await?;
        let mut tasks: Vec<String> = sets.values().flat_map(|(t, _)| t.clone()).collect();
        tasks.sort();
        tasks.dedup();
        let find = |id: &str| {
            sets.values().find_map(|(set_tasks, agents)| {
                let agent = agents.iter().find(|x| x.id == id)?;
                // Re-index the agent's cells over the tasks of both.
                let cells = tasks
                    .iter()
                    .map(|t| set_tasks.iter().position(|s| s == t).map_or([None; 3], |i| agent.cells[i]))
                    .collect();
                Some(AgentCells { id: id.to_owned(), cells })
            })
        };
        let empty = |id: &str| AgentCells { id: id.to_owned(), cells: vec![[None; 3]; tasks.len()] };
        let (a, b) = (find(a).unwrap_or_else(|| empty(a)), find(b).unwrap_or_else(|| empty(b)));
        tokio::task::spawn_blocking(move || stats::compare(&a, &b, stats::REPLICATES, stats::SEED))
            .await
            .map_err(|source| StoreError::Background { task: "computing the comparison", source })
    }

    /// The newest change's sequence number: moves with every ingest.
    pub async fn generation(&self) -> Result<i64, StoreError> {
        let row = db::query("SELECT CAST(COALESCE(MAX(seq), 0) AS BIGINT) AS g FROM changes")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get("g")?)
    }

    /// The current submissions' cells, by task set (of two bundles only, if given), their
    /// successes counted as `integrity` says.
    async fn cells(&self, only: Option<(&str, &str)>, integrity: Integrity) -> Result<Sets, StoreError> {
        let mut query = String::from(
            "SELECT s.task_set_digest, s.bundle_id, g.task, g.hint, g.successes, g.flagged, g.executed, g.counted \
             FROM aggregates g JOIN submissions s ON s.bundle_id = g.bundle_id WHERE s.superseded_by IS NULL",
        );
        if only.is_some() {
            query.push_str(" AND s.bundle_id IN ($1, $2)");
        }
        query.push_str(" ORDER BY s.task_set_digest, s.bundle_id, g.task");
        let mut q = db::query(&query);
        if let Some((a, b)) = only {
            q = q.bind(a).bind(b);
        }
        let rows = q.fetch_all(&self.pool).await?;

        // Task set → bundle → task → hint → cell.
        let mut raw: BTreeMap<String, BundleCells> = BTreeMap::new();
        for row in &rows {
            let hint: String = row.try_get("hint")?;
            // The cells are indexed in `Hint::ALL`'s order.
            let Some(h) = Hint::ALL.iter().position(|x| x.as_str() == hint) else { continue };
            let count = |name: &str| -> Result<u32, StoreError> {
                let n: i64 = row.try_get(name)?;
                Ok(u32::try_from(n).unwrap_or(u32::MAX))
            };
            let flagged = match integrity {
                Integrity::Reported => 0,
                Integrity::Strict => count("flagged")?,
            };
            let cell = Cell {
                successes: count("successes")? - flagged,
                executed: count("executed")?,
                counted: count("counted")?,
            };
            raw.entry(row.try_get("task_set_digest")?)
                .or_default()
                .entry(row.try_get("bundle_id")?)
                .or_default()
                .entry(row.try_get("task")?)
                .or_default()[h] = Some(cell);
        }
        Ok(raw
            .into_iter()
            .map(|(digest, bundles)| {
                let mut tasks: Vec<String> = bundles.values().flat_map(|t| t.keys().cloned()).collect();
                tasks.sort();
                tasks.dedup();
                let agents = bundles
                    .into_iter()
                    .map(|(id, by_task)| AgentCells {
                        id,
                        cells: tasks.iter().map(|t| by_task.get(t).copied().unwrap_or([None; 3])).collect(),
                    })
                    .collect();
                (digest, (tasks, agents))
            })
            .collect())
    }
}
