//! The evaluation results directory (layout in `runner/README.md`): what `evaluate`
//! writes and `pack` reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bundle::{Benchmark, Hint, Outcome, Provenance, RunnerInfo};
use serde::{Deserialize, Serialize};

/// `evaluation.json`: what the runs were evaluated against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evaluation {
    pub benchmark: Benchmark,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<RunnerInfo>,
    /// Where the results come from; absent: `evaluated` by this runner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// The tasks whose check is on their card (public): their runs' metrics stay in the
    /// manifest; every other run's are sealed (spec §4j). Absent (results written before
    /// it): `pack` asks the cards built into the runner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_checks: Option<Vec<String>>,
    /// The held-out variant (its digest, spec §4l) the runs were evaluated on: such
    /// results are the maintainers' own, and `pack` never signs them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heldout: Option<String>,
}

/// `run.json`: one run's result. Where the run is comes from its directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_recall: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_changed: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The tokens the agent's model read and wrote, as the agent recorded them (the bundle
    /// format's section 4m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<bundle::Tokens>,
    /// The task folder the harness ran, as it recorded it (bundle spec §4n).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_folder: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
    /// Integrity findings about the run (the bundle format's section 4a).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<bundle::Finding>,
    /// The outcome is a regrade's verdict; what the agent run was judged before (section 4i).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regraded: Option<bundle::Regraded>,
}

/// `runs/<task>/<hint>/<attempt>` under a results directory.
pub fn run_dir(results: &Path, task: &str, hint: Hint, attempt: u32) -> PathBuf {
    results.join("runs").join(task).join(hint.as_str()).join(attempt.to_string())
}
