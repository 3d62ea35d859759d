//! The bootstrap's feed: the current submissions' cells (an agent's counts on each task
//! under each hint condition), read from the aggregates kept at ingest, by task set.

use std::collections::BTreeMap;

use sqlx::Row;
use vocab::{Hint, Integrity, TaskId};

use crate::stats::{AgentCells, Cell};
use crate::{Store, StoreError, db};

/// Per task set: its tasks, and each current bundle's cells over them.
pub(crate) type Sets = BTreeMap<String, (Vec<String>, Vec<AgentCells>)>;

/// Bundle → task → hint → cell.
type BundleCells = BTreeMap<String, BTreeMap<String, [Option<Cell>; 3]>>;

impl Store {
    /// The current submissions' cells, by task set (of two bundles only, if given; of
    /// `tasks` only, if given), their successes counted as `integrity` says. A set's
    /// tasks are those the server knows it by, else those its results ran.
    pub(crate) async fn cells(
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
}
