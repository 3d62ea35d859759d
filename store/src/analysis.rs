//! The statistics of the current results, computed from the aggregates (never from
//! runs) and cached until the change log moves: every ingest appends to it, so a new
//! change in any server process sharing the database invalidates the cache.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use sqlx::Row;
use vocab::{Harness, Hint, Integrity, ProvenanceKind, TaskId};

/// A condition's place in the cells (`Hint::ALL`'s order).
fn hint_index(hint: Hint) -> usize {
    Hint::ALL.iter().position(|h| *h == hint).expect("every condition is in Hint::ALL")
}

use crate::model::BoardStats;
use crate::parity::{self, Parity, ParitySide, ParityTask, RunRatesFrom, Solved, TaskCount};
use crate::stats::{self, AgentCells, Cell, Comparison};
use crate::{Store, StoreError, db};

/// Per task set: its tasks, and each current bundle's cells over them.
type Sets = BTreeMap<String, (Vec<String>, Vec<AgentCells>)>;

/// Bundle → task → hint → cell.
type BundleCells = BTreeMap<String, BTreeMap<String, [Option<Cell>; 3]>>;

/// The statistics of one integrity and task scope, with the cells they were made from:
/// after a change, an agent whose cells are as they were keeps its own numbers
/// ([`stats::Earlier`]).
#[derive(Debug)]
pub(crate) struct Analysed {
    stats: Arc<BoardStats>,
    /// By bundle.
    cells: HashMap<String, Vec<[Option<Cell>; 3]>>,
}

impl Analysed {
    fn new(sets: &Sets, earlier: Option<&Analysed>) -> Analysed {
        let kept = |agent: &AgentCells| {
            let earlier = earlier?;
            if earlier.cells.get(&agent.id)? != &agent.cells {
                return None;
            }
            earlier.stats.by_bundle.get(&agent.id).cloned()
        };
        let mut by_bundle = BTreeMap::new();
        let mut cells = HashMap::new();
        for (_, agents) in sets.values() {
            for s in stats::analyse_set_after(agents, stats::REPLICATES, stats::SEED, &kept) {
                by_bundle.insert(s.id.clone(), s);
            }
            cells.extend(agents.iter().map(|a| (a.id.clone(), a.cells.clone())));
        }
        Analysed { stats: Arc::new(BoardStats { by_bundle }), cells }
    }
}

impl Store {
    /// Intervals, rank ranges and groups of every current submission, within its task
    /// set, their successes counted as `integrity` says. Computed once per change of the
    /// data, on blocking threads: ranks and groups anew, an agent's own numbers only where
    /// its cells changed.
    ///
    /// With `tasks`, only those tasks count (the public-tasks view): a result is ranked
    /// if it covers its set's tasks among them.
    pub async fn board_stats(
        &self,
        integrity: Integrity,
        tasks: Option<&[TaskId]>,
    ) -> Result<Arc<BoardStats>, StoreError> {
        let generation = self.generation().await?;
        let key = (integrity, tasks.map(<[TaskId]>::to_vec));
        let analysed = self
            .memo
            .stats
            .get_or_after(generation, &key, |earlier| async {
                let sets = self.cells(None, integrity, tasks).await?;
                tokio::task::spawn_blocking(move || Analysed::new(&sets, earlier.as_deref()))
                    .await
                    .map_err(|source| StoreError::Background { task: "computing the statistics", source })
            })
            .await?;
        Ok(analysed.stats.clone())
    }

    /// The paired comparison of two current submissions over the tasks both ran.
    pub async fn compare_bundles(&self, a: &str, b: &str) -> Result<Comparison, StoreError> {
        let sets = self.cells(Some((a, b)), Integrity::Reported, None).await?;
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

    /// Two submissions (current or not) side by side under `hint` (see
    /// [`crate::parity`]); none if either is not stored. `published_runs` gives the
    /// run-level rates a published source reports for a submission, which its
    /// reconstructed attempts cannot.
    pub async fn parity(
        &self,
        a: &str,
        b: &str,
        hint: Hint,
        published_runs: impl Fn(&ParitySide) -> Option<Vec<f64>>,
    ) -> Result<Option<Parity>, StoreError> {
        let (Some(mut side_a), Some(mut side_b)) =
            (self.parity_side(a, hint).await?, self.parity_side(b, hint).await?)
        else {
            return Ok(None);
        };
        for (side, bundle) in [(&mut side_a, a), (&mut side_b, b)] {
            if side.provenance == ProvenanceKind::Published {
                match published_runs(side) {
                    Some(runs) => {
                        side.run_rates = runs;
                        side.run_rates_from = RunRatesFrom::Published;
                    }
                    None => {
                        side.run_rates.clear();
                        side.run_rates_from = RunRatesFrom::NotPublished;
                    }
                }
            } else {
                side.run_rates = self.attempt_rates(bundle, hint).await?;
            }
            (side.mean, side.sem, side.low, side.high) = parity::summary(&side.run_rates);
        }
        let (counts_a, counts_b) = (self.task_counts(a, hint).await?, self.task_counts(b, hint).await?);
        let mut names: Vec<&TaskId> = counts_a.keys().chain(counts_b.keys()).collect();
        names.sort();
        names.dedup();
        let mut tasks = Vec::with_capacity(names.len());
        let (mut only_a, mut only_b, mut both, mut neither) = (vec![], vec![], vec![], vec![]);
        for task in names {
            let (x, y) = (counts_a.get(task).copied(), counts_b.get(task).copied());
            let solved = x.zip(y).map(|(x, y)| parity::solved(x, y));
            match solved {
                Some(Solved::OnlyA) => only_a.push(task.clone()),
                Some(Solved::OnlyB) => only_b.push(task.clone()),
                Some(Solved::Both) => both.push(task.clone()),
                Some(Solved::Neither) => neither.push(task.clone()),
                None => {}
            }
            tasks.push(ParityTask { task: task.clone(), a: x, b: y, solved });
        }
        // The paired bootstrap over the tasks both ran, as the comparison page does.
        let cells = |counts: &BTreeMap<TaskId, TaskCount>, id: &str| AgentCells {
            id: id.to_owned(),
            cells: tasks
                .iter()
                .map(|t| {
                    let mut by_hint = [None; 3];
                    by_hint[hint_index(hint)] = counts.get(&t.task).map(|c| Cell {
                        successes: c.successes as u32,
                        executed: 0,
                        counted: c.runs as u32,
                        exec_counted: 0,
                        short: false,
                    });
                    by_hint
                })
                .collect(),
        };
        let (cells_a, cells_b) = (cells(&counts_a, a), cells(&counts_b, b));
        let comparison = tokio::task::spawn_blocking(move || {
            stats::compare(&cells_a, &cells_b, stats::REPLICATES, stats::SEED)
        })
        .await
        .map_err(|source| StoreError::Background { task: "computing the parity", source })?;
        let sign_test_p = parity::sign_test(only_a.len(), only_b.len());
        Ok(Some(Parity {
            hint,
            same_agent: (&side_a.framework, &side_a.framework_version, &side_a.model)
                == (&side_b.framework, &side_b.framework_version, &side_b.model),
            ranges_overlap: parity::ranges_overlap(&side_a.run_rates, &side_b.run_rates),
            difference: comparison.difference.get(hint),
            shared_tasks: comparison.shared_tasks,
            a: side_a,
            b: side_b,
            tasks,
            only_a,
            only_b,
            both,
            neither,
            sign_test_p,
            lopsided: sign_test_p < parity::LOPSIDED_BELOW,
        }))
    }

    /// A submission's side: who, which harness, and its successes under `hint`.
    async fn parity_side(&self, bundle: &str, hint: Hint) -> Result<Option<ParitySide>, StoreError> {
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
        Ok(Some(ParitySide {
            bundle_id: row.try_get("bundle_id")?,
            agent_id: row.try_get("agent_id")?,
            display_name: row.try_get("display_name")?,
            framework: row.try_get("framework")?,
            framework_version: row.try_get("framework_version")?,
            model: row.try_get("model")?,
            harness: Harness::new(row.try_get::<String, _>("harness")?, row.try_get("harness_version")?),
            provenance: crate::reads::name(&row, "provenance")?,
            current: row.try_get::<Option<String>, _>("superseded_by")?.is_none(),
            successes,
            runs,
            final_success: (runs > 0).then(|| successes as f64 / runs as f64),
            run_rates: Vec::new(),
            run_rates_from: RunRatesFrom::Attempts,
            mean: None,
            sem: None,
            low: None,
            high: None,
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
    async fn task_counts(&self, bundle: &str, hint: Hint) -> Result<BTreeMap<TaskId, TaskCount>, StoreError> {
        let rows: Vec<(String, i64, i64)> = db::query_as(
            "SELECT task, successes, counted FROM aggregates WHERE bundle_id = $1 AND hint = $2 AND counted > 0",
        )
        .bind(bundle)
        .bind(hint.as_str())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(task, successes, runs)| (TaskId::new(task), TaskCount { successes, runs }))
            .collect())
    }

    /// How many reads of the whole board (the leaderboard's rows, the statistics, the
    /// task sets, …) this store has made rather than answered from what it keeps: a
    /// page whose reads were all made ready before it was asked leaves it as it was.
    pub fn board_reads_made(&self) -> u64 {
        self.memo.made()
    }

    /// The newest change's sequence number: moves with every ingest.
    pub async fn generation(&self) -> Result<i64, StoreError> {
        let (generation,) = db::query_as("SELECT CAST(COALESCE(MAX(seq), 0) AS BIGINT) AS g FROM changes")
            .fetch_one(&self.pool)
            .await?;
        Ok(generation)
    }

    /// The current submissions' cells, by task set (of two bundles only, if given; of
    /// `tasks` only, if given), their successes counted as `integrity` says. A set's
    /// tasks are those the server knows it by, else those its results ran.
    async fn cells(
        &self,
        only: Option<(&str, &str)>,
        integrity: Integrity,
        tasks: Option<&[TaskId]>,
    ) -> Result<Sets, StoreError> {
        // One row per submission, its cells joined in one text: read cell by cell, the
        // 360,000 cells of 10,000 agents cost 6 s in the driver's conversion of each value;
        // joined in the database, they cost what the database's own reading does.
        let join = match self.backend() {
            crate::Backend::Sqlite { .. } => "group_concat",
            crate::Backend::Postgres { .. } => "string_agg",
        };
        let mut query = format!(
            "SELECT MAX(s.task_set_digest) AS task_set_digest, g.bundle_id, {join}(g.task || ' ' || g.hint || ' ' || g.successes || ' ' || \
             g.flagged || ' ' || g.executed || ' ' || g.counted || ' ' || g.exec_counted || ' ' || g.shortfall || ' ' || \
             g.runs, ';') AS cells FROM aggregates g JOIN submissions s ON s.bundle_id = g.bundle_id \
             WHERE s.superseded_by IS NULL"
        );
        if only.is_some() {
            query.push_str(" AND s.bundle_id IN ($1, $2)");
        }
        // By the aggregates' own key, SQLite groups as it reads them, with no sort (its
        // submission's one task set taken by MAX, which both databases accept).
        query.push_str(" GROUP BY g.bundle_id");
        let mut q = db::query(&query);
        if let Some((a, b)) = only {
            q = q.bind(a).bind(b);
        }
        let rows = q.fetch_all(&self.pool).await?;

        // Task set → bundle → task → hint → cell.
        let mut raw: BTreeMap<String, BundleCells> = BTreeMap::new();
        for row in &rows {
            let bundle: String = row.try_get("bundle_id")?;
            let joined: String = row.try_get("cells")?;
            let by_task: &mut BTreeMap<String, [Option<Cell>; 3]> =
                raw.entry(row.try_get("task_set_digest")?).or_default().entry(bundle.clone()).or_default();
            for text in joined.split(';') {
                let stored = StoredCell::parse(text).ok_or_else(|| {
                    StoreError::Unreadable(format!("aggregate {text:?} of bundle {bundle}"))
                })?;
                // The cells are indexed in `Hint::ALL`'s order.
                let Some(h) = Hint::ALL.iter().position(|x| x.as_str() == stored.hint) else { continue };
                if tasks.is_some_and(|only| !only.iter().any(|t| *t == stored.task)) {
                    continue;
                }
                by_task.entry(stored.task.to_owned()).or_default()[h] = Some(stored.cell(integrity));
            }
        }
        Ok(raw
            .into_iter()
            .map(|(digest, bundles)| {
                let mut set: Vec<String> = match self.known_task_set(&digest) {
                    Some(known) => known.into_iter().map(String::from).collect(),
                    None => bundles.values().flat_map(|t| t.keys().cloned()).collect(),
                };
                if let Some(only) = tasks {
                    set.retain(|t| only.iter().any(|o| o == t.as_str()));
                }
                set.sort();
                set.dedup();
                let tasks = set;
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

/// One stored aggregate as [`Store::cells`] reads it: task, hint and seven counts.
struct StoredCell<'a> {
    task: &'a str,
    hint: &'a str,
    /// successes, flagged, executed, counted, exec_counted, shortfall, runs.
    counts: [u32; 7],
}

impl<'a> StoredCell<'a> {
    fn parse(text: &'a str) -> Option<StoredCell<'a>> {
        let mut fields = text.split(' ');
        let (task, hint) = (fields.next()?, fields.next()?);
        let mut counts = [0; 7];
        for count in &mut counts {
            // Counts are never negative; one past u32 is held at its largest.
            let n: i64 = fields.next()?.parse().ok()?;
            *count = u32::try_from(n.max(0)).unwrap_or(u32::MAX);
        }
        fields.next().is_none().then_some(StoredCell { task, hint, counts })
    }

    /// The cell, its successes counted as `integrity` says: strictly, flagged successes
    /// and every infrastructure error are failures.
    fn cell(&self, integrity: Integrity) -> Cell {
        let [successes, flagged, executed, counted, exec_counted, shortfall, runs] = self.counts;
        let (flagged, counted) = match integrity {
            Integrity::Reported => (0, counted),
            Integrity::Strict => (flagged, runs.max(counted)),
        };
        Cell {
            successes: successes.saturating_sub(flagged),
            executed,
            counted,
            exec_counted,
            short: shortfall > 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(successes: u32) -> Option<Cell> {
        Some(Cell { successes, executed: 5, counted: 5, exec_counted: 5, short: false })
    }

    fn sets(agents: &[(&str, u32)]) -> Sets {
        let agents = agents
            .iter()
            .map(|(id, k)| AgentCells {
                id: (*id).into(),
                cells: vec![[cell(*k), cell(1), cell(2)], [cell(3); 3]],
            })
            .collect();
        BTreeMap::from([("set".into(), (vec!["t1".into(), "t2".into()], agents))])
    }

    /// A stored aggregate reads back as its counts, strictly or as reported; anything else
    /// is refused, not read as zeros.
    #[test]
    fn a_stored_aggregate_reads_back_whole_or_not_at_all() {
        // Seven runs, five counted: strictly the two infra_error runs are failures too.
        let stored = StoredCell::parse("cogs hints 3 1 4 5 5 0 7").unwrap();
        assert_eq!((stored.task, stored.hint), ("cogs", "hints"));
        let reported = Cell { successes: 3, executed: 4, counted: 5, exec_counted: 5, short: false };
        assert_eq!(stored.cell(Integrity::Reported), reported);
        assert_eq!(stored.cell(Integrity::Strict), Cell { successes: 2, counted: 7, ..reported });
        assert!(StoredCell::parse("cogs hints 3 1 4 5 5 1 2").unwrap().cell(Integrity::Reported).short);
        for bad in [
            "",
            "cogs hints",
            "cogs hints 3 1 4 5 5 0",
            "cogs hints 3 1 4 5 5 0 2 9",
            "cogs hints 3 x 4 5 5 0 2",
        ] {
            assert!(StoredCell::parse(bad).is_none(), "{bad:?}");
        }
    }

    /// An agent keeps its own numbers after a change only if its cells are as they were:
    /// an analysis after a change is what a fresh one gives.
    #[test]
    fn after_a_change_the_statistics_are_what_a_fresh_analysis_gives() {
        let before = Analysed::new(&sets(&[("a", 1), ("b", 4), ("c", 2)]), None);
        let changed = sets(&[("a", 1), ("b", 0), ("c", 2), ("d", 5)]);
        let after = Analysed::new(&changed, Some(&before));
        let fresh = Analysed::new(&changed, None);
        assert_eq!(after.stats, fresh.stats);
        assert_ne!(before.stats.by_bundle["b"].final_success, after.stats.by_bundle["b"].final_success);
    }
}
