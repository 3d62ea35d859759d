//! One agent: its submissions and the task × hint grid of each current one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use vocab::{CostMark, Hint, TaskId};

use super::rates::Rates;
use super::reproductions::ReproducedRun;
use super::submissions::SubmissionRecord;

/// Task → hint → rates.
pub type TaskGrid = BTreeMap<TaskId, BTreeMap<Hint, Rates>>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentDetail {
    pub id: String,
    pub display_name: String,
    pub framework: String,
    pub framework_version: Option<String>,
    pub model: String,
    pub model_id: Option<String>,
    pub url: Option<String>,
    pub first_seen_at: String,
    /// Newest first, superseded ones included.
    pub submissions: Vec<SubmissionRecord>,
    /// For each current submission (one per benchmark version), by bundle id: task →
    /// hint → rates.
    pub current: BTreeMap<String, TaskGrid>,
    /// Its runs the maintainers re-ran, of every submission, newest reproduction first.
    pub reproduced: Vec<ReproducedRun>,
    /// Runs of its current submissions whose stated cost carries a mark (spec §4m), by
    /// task, hint and attempt; at most [`AgentDetail::COST_MARKED_SHOWN`].
    #[serde(default)]
    pub cost_marked: Vec<CostMarkedRun>,
}

/// A run whose stated cost is not borne out: what it states beside what its tokens cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CostMarkedRun {
    pub run_id: i64,
    pub bundle_id: String,
    pub task: TaskId,
    pub hint: Hint,
    pub attempt: i64,
    /// The cost it states.
    pub cost_usd: Option<f64>,
    /// Its tokens' price at its model's price of its day.
    pub cost_computed_usd: Option<f64>,
    pub mark: CostMark,
}

impl AgentDetail {
    /// The most cost-marked runs an agent's answer lists (their count is in the rates).
    pub const COST_MARKED_SHOWN: i64 = 200;

    /// The newest current submission and its grid: the one the agent's page shows.
    pub fn newest_current(&self) -> Option<(&str, &TaskGrid)> {
        let newest = self.submissions.iter().find(|s| s.superseded_by.is_none())?;
        self.current.get_key_value(&newest.bundle_id).map(|(b, g)| (b.as_str(), g))
    }
}
