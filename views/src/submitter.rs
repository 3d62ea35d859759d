//! Who submitted each row (bundle spec §5a): the key that signed it and the owner the
//! registry names, the owner's other current rows with the same framework and model (one
//! pool of runs drawn again under several agent ids shows as what it is), and the
//! maintainers' re-runs of every current row of that key.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use store::{LeaderboardRow, SampleCounts};

/// A framework's or model's name as rows are matched by it: case, and runs of spaces, not
/// telling two names apart ("M" and " m " are one model).
fn same(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Who submitted a row, and what else the board holds of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Submitter {
    /// The key that signed the row's submission.
    pub keyid: String,
    /// Its owner, as the maintainers registered the key.
    pub owner: String,
    /// The agent ids of the owner's other current rows with the same framework and
    /// model, in id order: with this row, "one of n rows from this submitter with this
    /// model".
    pub same_model: Vec<String>,
    /// The maintainers' re-runs of the samples of all the owner's current rows.
    pub sample: SampleCounts,
}

impl Submitter {
    /// How many rows the owner has with this framework and model, this one included.
    pub fn rows_with_model(&self) -> usize {
        self.same_model.len() + 1
    }
}

/// The board's rows grouped by submitter, to say [`Submitter`] of any of them.
#[derive(Debug, Default)]
pub struct Submitters {
    /// Agent ids by key, framework and model.
    by_model: HashMap<(String, String, String), Vec<String>>,
    /// Re-runs by key, summed.
    samples: HashMap<String, SampleCounts>,
}

impl Submitters {
    /// Of every current row of the board (of any task set).
    pub fn of(board: &[LeaderboardRow]) -> Submitters {
        let mut out = Submitters::default();
        for r in board {
            let key = (r.keyid.clone(), same(&r.framework), same(&r.model));
            out.by_model.entry(key).or_default().push(r.agent_id.clone());
            let s = out.samples.entry(r.keyid.clone()).or_default();
            s.sampled += r.sample.sampled;
            s.reproduced += r.sample.reproduced;
            s.differed += r.sample.differed;
        }
        for agents in out.by_model.values_mut() {
            agents.sort();
            agents.dedup();
        }
        out
    }

    /// Who submitted `row`.
    pub fn of_row(&self, row: &LeaderboardRow) -> Submitter {
        let key = (row.keyid.clone(), same(&row.framework), same(&row.model));
        let same_model = self
            .by_model
            .get(&key)
            .map(|agents| agents.iter().filter(|a| **a != row.agent_id).cloned().collect())
            .unwrap_or_default();
        Submitter {
            keyid: row.keyid.clone(),
            owner: row.submitter.clone(),
            same_model,
            sample: self.samples.get(&row.keyid).copied().unwrap_or_default(),
        }
    }
}

/// Who submitted `agent`'s current submission on the board (none if it has no current
/// row): read from the board's rows, kept between changes.
#[cfg(feature = "db")]
pub async fn of_agent(store: &store::Store, agent: &str) -> Result<Option<Submitter>, crate::ViewError> {
    let board = store.board_rows(store::Integrity::Reported, None).await?;
    let row = board.iter().find(|r| r.agent_id == agent);
    Ok(row.map(|row| Submitters::of(&board).of_row(row)))
}
