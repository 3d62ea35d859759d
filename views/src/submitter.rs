//! Who submitted each row (bundle spec §5a): the key that signed it and the owner the
//! registry names, the owner's other current rows with the same framework and model (one
//! pool of runs drawn again under several agent ids shows as what it is), and the
//! maintainers' re-runs of every current row of that key.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use store::{LeaderboardRow, SampleCounts};

/// A model's name as rows are matched by it: the price table's model where it names one
/// (`Claude Sonnet 4.5` and `claude-sonnet-4-5` are one model), else the name with case
/// and runs of spaces not telling two apart ("M" and " m " are one model).
fn same_model(name: &str) -> String {
    #[cfg(feature = "db")]
    if let Some(p) = benchmark::cost::Prices::builtin().rows().iter().find(|p| p.names(name)) {
        return format!("priced:{}", p.model.to_lowercase());
    }
    name.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// A framework's name as rows are matched by it: its letters and digits alone, in lower
/// case ("OpenHands", "open hands" and "Open-Hands" are one framework).
fn same_framework(name: &str) -> String {
    name.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// A group's final success without hints, pooled over its rows of one task set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Pooled {
    /// How many rows it pools, this one included.
    pub rows: usize,
    /// Their successes over their counted runs, without hints.
    pub final_success: f64,
}

/// One row of a group: its agent, task set, and successes and counted runs without hints.
#[derive(Debug, Clone)]
struct Member {
    agent: String,
    set: String,
    successes: i64,
    counted: i64,
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
    /// model (the price table's model where it names one, however spelt), in id order:
    /// with this row, "one of n rows from this submitter with this model".
    pub same_model: Vec<String>,
    /// The final success without hints pooled over this row and those of them on its
    /// task set, where there are any and the row is self-reported (issue 75: the best of
    /// several ids shows beside the pool it was drawn from).
    #[serde(default)]
    pub pooled: Option<Pooled>,
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
    /// Rows by key, framework and model.
    by_model: HashMap<(String, String, String), Vec<Member>>,
    /// Re-runs by key, summed.
    samples: HashMap<String, SampleCounts>,
}

impl Submitters {
    /// Of every current row of the board (of any task set).
    pub fn of(board: &[LeaderboardRow]) -> Submitters {
        let mut out = Submitters::default();
        for r in board {
            let key = (r.keyid.clone(), same_framework(&r.framework), same_model(&r.model));
            let none = r.by_hint.get(&store::Hint::None);
            out.by_model.entry(key).or_default().push(Member {
                agent: r.agent_id.clone(),
                set: r.task_set_digest.clone(),
                successes: none.map_or(0, |n| n.successes),
                counted: none.map_or(0, |n| n.counted),
            });
            let s = out.samples.entry(r.keyid.clone()).or_default();
            s.sampled += r.sample.sampled;
            s.reproduced += r.sample.reproduced;
            s.differed += r.sample.differed;
        }
        for members in out.by_model.values_mut() {
            members.sort_by(|a, b| (&a.agent, &a.set).cmp(&(&b.agent, &b.set)));
            members.dedup_by(|a, b| a.agent == b.agent && a.set == b.set);
        }
        out
    }

    /// Who submitted `row`.
    pub fn of_row(&self, row: &LeaderboardRow) -> Submitter {
        let key = (row.keyid.clone(), same_framework(&row.framework), same_model(&row.model));
        let members = self.by_model.get(&key).map(Vec::as_slice).unwrap_or_default();
        let mut same_model: Vec<String> =
            members.iter().filter(|m| m.agent != row.agent_id).map(|m| m.agent.clone()).collect();
        same_model.dedup();
        let on_set: Vec<&Member> = members.iter().filter(|m| m.set == row.task_set_digest).collect();
        let (k, n) = on_set.iter().fold((0, 0), |(k, n), m| (k + m.successes, n + m.counted));
        // Self-reported rows only: the maintainers' are theirs to run (the parity
        // experiment's two harnesses are two rows of one model by design).
        let pooled = (row.tier == store::Tier::Submitter && on_set.len() > 1 && n > 0)
            .then(|| Pooled { rows: on_set.len(), final_success: k as f64 / n as f64 });
        Submitter {
            keyid: row.keyid.clone(),
            owner: row.submitter.clone(),
            same_model,
            pooled,
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
