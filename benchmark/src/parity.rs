//! The parity experiment of Harbor's RExBench adapter (`docs/data/harbor-rexbench-parity-2026-02.json`):
//! one agent run on all 12 tasks, 3 times each without hints, by RExBench's original
//! harness and by Harbor. `rexbench import-published` writes it as two bundles with
//! `provenance.kind = "published"`, one per harness.
//!
//! Per task, only the successes out of 3 are published, so the runs are reconstructed
//! by the rule the paper's results follow: the first c attempts of a task with c
//! successes succeed. Which attempt succeeded is not published, so nothing shown may
//! depend on it: pages use the per-task counts, and the run-level rates Harbor's
//! matching criterion needs come from the published `runs` ([`Parity::runs`]), never from
//! the reconstructed attempts. How the other runs ended is not published either: they
//! are recorded as `execution_failed`, as the paper's runs that did not execute are, and
//! the server, which knows this experiment, shows no execution success for them
//! ([`agent_ids`]); the bundles carry no file recall, cost or duration, which were not
//! published.

use std::collections::BTreeMap;
use std::path::Path;

use bundle::{Agent, Digest, Hint, Outcome, Run, SecretKey};
use serde::Deserialize;

use crate::published::{ImportError, Imported};

/// The maintainers' record of the experiment, as published.
pub const DATA: &str = include_str!("../../docs/data/harbor-rexbench-parity-2026-02.json");

/// The two harnesses, as the data file names them.
pub const SIDES: [Side; 2] = [Side::Original, Side::Harbor];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Original,
    Harbor,
}

impl Side {
    /// The agent id of this side's bundle.
    pub fn agent_id(self) -> &'static str {
        match self {
            Side::Original => "openhands-1.4.0-claude-sonnet-4.5-rexbench",
            Side::Harbor => "openhands-1.4.0-claude-sonnet-4.5-harbor",
        }
    }

    /// The harness, in words.
    fn harness(self) -> &'static str {
        match self {
            Side::Original => "RExBench original harness",
            Side::Harbor => "Harbor",
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct Parity {
    pub source: Source,
    pub final_success_rate: FinalSuccess,
    pub per_task_successes_of_3: BTreeMap<String, BTreeMap<Side, u32>>,
}

#[derive(Debug, Deserialize)]
pub struct Source {
    pub what: String,
    #[serde(rename = "where")]
    pub place: String,
    pub date_of_runs: String,
    pub agent: ParityAgent,
    pub runs_per_task: u32,
}

#[derive(Debug, Deserialize)]
pub struct ParityAgent {
    pub framework: String,
    pub framework_version: String,
    pub model: String,
    pub model_id: String,
}

#[derive(Debug, Deserialize)]
pub struct FinalSuccess {
    pub original: RunRates,
    pub harbor: RunRates,
}

/// Each run's final success over the 12 tasks, in percent, as published.
#[derive(Debug, Deserialize)]
pub struct RunRates {
    pub runs: Vec<f64>,
}

pub fn data() -> Parity {
    serde_json::from_str(DATA).expect("the embedded parity experiment parses")
}

impl Parity {
    /// The published run-level final success rates of a side, as fractions.
    pub fn runs(&self, side: Side) -> Vec<f64> {
        let rates = match side {
            Side::Original => &self.final_success_rate.original,
            Side::Harbor => &self.final_success_rate.harbor,
        };
        rates.runs.iter().map(|p| p / 100.0).collect()
    }
}

/// The agent ids of its two submissions: published results whose source tells only
/// whether each run succeeded.
pub fn agent_ids() -> [&'static str; 2] {
    SIDES.map(Side::agent_id)
}

/// Writes `<agent>.rexb.tar.gz` into `out` for each side of the experiment.
pub fn import(
    task_set_digest: Digest,
    keys: &[&SecretKey],
    created_at: &str,
    out: &Path,
) -> Result<Vec<Imported>, ImportError> {
    let data = data();
    std::fs::create_dir_all(out).map_err(|source| ImportError::Io { path: out.to_owned(), source })?;
    let mut imported = Vec::new();
    for side in SIDES {
        let agent_id = side.agent_id().to_owned();
        // Harbor's side names its harness first, as an imported result's source does.
        let source = format!(
            "{}, {} Run {}, {} runs per task without hints; from {} Per task only the successes out of {} are \
             published, so the first that many attempts are recorded as successes; how the other runs ended \
             (execution success), file recall, cost and duration are not published.",
            side.harness(),
            data.source.what,
            data.source.date_of_runs,
            data.source.runs_per_task,
            data.source.place,
            data.source.runs_per_task,
        );
        let agent = &data.source.agent;
        let agent = Agent {
            id: agent_id.clone(),
            framework: agent.framework.clone(),
            framework_version: Some(agent.framework_version.clone()),
            model: agent.model.clone(),
            model_id: Some(agent.model_id.clone()),
            display_name: Some(format!(
                "{} {} + {} ({})",
                agent.framework,
                agent.framework_version,
                agent.model,
                side.harness()
            )),
            url: None,
        };
        let manifest =
            crate::published::manifest(task_set_digest, created_at, source, agent, reconstruct(&data, side));
        let (path, id) = crate::published::write(manifest, keys, out)?;
        imported.push(Imported { agent: agent_id, path, id, adjustments: Vec::new() });
    }
    Ok(imported)
}

/// `runs_per_task` runs per task without hints, the first `successes` of them successes.
fn reconstruct(data: &Parity, side: Side) -> Vec<Run> {
    let mut runs = Vec::new();
    for (task, by_side) in &data.per_task_successes_of_3 {
        let successes = by_side.get(&side).copied().unwrap_or(0);
        for attempt in 1..=data.source.runs_per_task {
            runs.push(Run {
                task: task.clone().into(),
                hint: Hint::None,
                attempt,
                // With execution unknown, a run that did not succeed is only that.
                outcome: if attempt <= successes { Outcome::Success } else { Outcome::ExecutionFailed },
                error_type: None,
                file_recall: None,
                files_changed: None,
                duration_s: None,
                cost_usd: None,
                tokens: None,
                task_folder: None,
                metrics: BTreeMap::new(),
                metrics_digest: None,
                artifacts: BTreeMap::new(),
                findings: Vec::new(),
                regraded: None,
            });
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reconstruction_keeps_every_published_count() {
        let data = data();
        for side in SIDES {
            let runs = reconstruct(&data, side);
            assert_eq!(runs.len(), 36);
            for (task, by_side) in &data.per_task_successes_of_3 {
                let won =
                    runs.iter().filter(|r| r.task == task.as_str() && r.outcome == Outcome::Success).count();
                assert_eq!(won as u32, by_side[&side], "{task}");
            }
        }
        let total = |side| reconstruct(&data, side).iter().filter(|r| r.outcome == Outcome::Success).count();
        assert_eq!((total(Side::Original), total(Side::Harbor)), (12, 15));
    }
}
