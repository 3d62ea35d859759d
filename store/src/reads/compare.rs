//! The paired comparison of two current submissions (the comparison page's read), and
//! the paired bootstrap it and the parity view run off the runtime's threads.

use vocab::Integrity;

use crate::stats::{self, AgentCells, Comparison};
use crate::{Store, StoreError};

impl Store {
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
        self.paired(a, b).await
    }

    /// The paired bootstrap of two agents' cells (tasks as clusters), off the runtime's
    /// threads.
    pub async fn paired(&self, a: AgentCells, b: AgentCells) -> Result<Comparison, StoreError> {
        tokio::task::spawn_blocking(move || stats::compare(&a, &b, stats::REPLICATES, stats::SEED))
            .await
            .map_err(|source| StoreError::Background { task: "computing a paired comparison", source })
    }
}
