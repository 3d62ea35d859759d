//! Each run's cost as the board counts it (bundle spec §4m), recomputed for the audit:
//! its tokens priced with this build's price table, held to its trajectory's where the
//! server serves it. Where the trajectory is private, its agreement is the server's word
//! (its list of marked runs), and a run it says disagrees cannot be priced here.

use std::collections::BTreeMap;

use bundle::Manifest;

use super::api::{AgentAnswer, CostMarkedAnswer};

/// Each run's cost (none where it cannot be recomputed), and what the audit says of it;
/// `trajectories` holds each trajectory's bytes as served (none where private).
pub(super) fn priced(
    trajectories: &BTreeMap<String, Option<Vec<u8>>>,
    manifest: &Manifest,
    detail: &AgentAnswer,
    bundle_id: &str,
) -> (Vec<Option<benchmark::cost::Checked>>, String) {
    let prices = benchmark::cost::Prices::builtin();
    let marked: Vec<&CostMarkedAnswer> =
        detail.cost_marked.iter().filter(|m| m.bundle_id == bundle_id).collect();
    let mut private_trajectories = 0;
    let mut costs = Vec::with_capacity(manifest.runs.len());
    for run in &manifest.runs {
        let trajectory = match run.artifacts.get(benchmark::integrity::TRAJECTORY) {
            None => Some(None),
            Some(d) => trajectories.get(d).and_then(Option::as_deref).map(Some),
        };
        costs.push(match trajectory {
            Some(bytes) => Some(benchmark::cost::check_run(prices, manifest, run, bytes)),
            None => {
                private_trajectories += 1;
                let disagrees = marked.iter().any(|m| {
                    m.task == run.task.as_str()
                        && m.hint == run.hint
                        && m.attempt == run.attempt
                        && m.mark == bundle::CostMark::TrajectoryDisagrees
                });
                (!disagrees).then(|| benchmark::cost::check_run(prices, manifest, run, None))
            }
        });
    }
    let unpriced = costs.iter().filter(|c| c.is_none()).count();
    let words = format!(
        "cost: each run's tokens priced with the price table of this build ({} rows){}",
        prices.rows().len(),
        match (private_trajectories, unpriced) {
            (0, _) => String::new(),
            (n, 0) => format!(
                "; {n} trajectories are private: that they agree with their runs' tokens is the server's word"
            ),
            (n, u) => format!(
                "; {n} trajectories are private: that they agree with their runs' tokens is the server's word, and \
                 the {u} it says disagree cannot be priced here, so their cells' costs are not compared"
            ),
        }
    );
    (costs, words)
}
