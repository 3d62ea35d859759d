//! What the pages know about the tasks: the cards' public facts, handed to the app by
//! the server (which reads `tasks/`), and what the paper publishes about the agents.

use serde::{Deserialize, Serialize};
use store::TaskId;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskInfo {
    pub id: TaskId,
    pub name: String,
    pub venue: Option<String>,
    pub extension_type: Option<String>,
    pub summary: Option<String>,
    /// `owner/name` on GitHub.
    pub repository: Option<String>,
    pub license: Option<String>,
    /// The card's README, as markdown (it cites the papers the task extends).
    pub readme: String,
    /// Only the expected values the card marks public; gold results stay private.
    pub public_expected: Vec<Expected>,
    /// One of the small example tasks rather than a RExBench task.
    pub example: bool,
    /// Anyone can run it: its codebase and its check are public (the card shows its
    /// expected values), so outside results are ranked on it on equal terms.
    pub public: bool,
    /// Its check is the maintainers' (not on its card): what shows it (a checker's log,
    /// a re-run's findings) is theirs alone (`crate::access`).
    #[serde(default)]
    pub check_private: bool,
    /// Who may read its runs' outputs, as its card says (a maintainer may have changed
    /// it since: `crate::access` knows what holds now).
    pub outputs: store::Outputs,
    /// The attempts per hint condition the benchmark asks on it: a result ranks only
    /// with that many valid attempts wherever it has runs (spec §4f).
    pub attempts: u32,
    /// How its maintainers make a held-out variant (spec §4l) and what a re-run on one
    /// costs, as its `integrity.toml` says: (how, cost).
    #[serde(default)]
    pub heldout: Option<(String, String)>,
    /// How many passages of its hints its card names for the hint check (spec §5a).
    #[serde(default)]
    pub hint_passages: usize,
    /// Why it names none, where the benchmark's hints are not public.
    #[serde(default)]
    pub hints_unpublished: Option<String>,
}

/// A public expected value of a metric, in words (e.g. `0.88211 ± 0.002`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expected {
    pub metric: String,
    pub value: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    pub tasks: Vec<TaskInfo>,
    /// What the paper publishes beside its per-task results.
    pub paper: crate::paper::Paper,
    /// The integrity checks: each one's slug and what it looks for, in words.
    pub checks: Vec<(String, String)>,
    /// The run-level final success rates a published source reports, by the agent id
    /// of its reconstructed submission (Harbor's parity experiment): reconstructed
    /// attempts cannot give them.
    pub parity_runs: std::collections::BTreeMap<String, Vec<f64>>,
    /// What a bundle's claims are held to, as the cards give it (bundle spec §5a): their
    /// task sets and each task's attempts and public bounds. The maintainers may register
    /// more task sets (`Store::task_sets`).
    #[serde(default)]
    pub claims: bundle::Claims,
}

impl Catalog {
    pub fn get(&self, id: &str) -> Option<&TaskInfo> {
        self.tasks.iter().find(|t| t.id == id)
    }

    /// The tasks anyone can run, in id order.
    pub fn public_tasks(&self) -> Vec<TaskId> {
        let mut out: Vec<TaskId> = self.tasks.iter().filter(|t| t.public).map(|t| t.id.clone()).collect();
        out.sort();
        out
    }
}

/// What a bundle's claims are held to on this board (bundle spec §5a): the cards' task
/// sets and rules in `catalog`, and the task sets the maintainers registered (read each
/// time, so that servers sharing a database agree). The server's ingest and the browser's
/// check on `/submit` both hold a bundle to this.
#[cfg(feature = "db")]
pub async fn claims(store: &store::Store, catalog: &Catalog) -> Result<bundle::Claims, crate::ViewError> {
    let mut claims = catalog.claims.clone();
    claims.task_sets.extend(store.registered_task_sets().await?.into_iter().map(|r| r.set));
    Ok(claims)
}
