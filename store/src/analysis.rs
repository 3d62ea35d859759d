//! The statistics of the current results: the bootstrap (crate `stats`) over the cells
//! [`crate::cells`] reads from the aggregates (never from runs), cached until the change
//! log moves: every ingest appends to it, so a new change in any server process sharing
//! the database invalidates the cache.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use vocab::{Integrity, TaskId};

use crate::cells::Sets;
use crate::model::BoardStats;
use crate::stats::{self, AgentCells, Cell};
use crate::{Store, StoreError};

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
