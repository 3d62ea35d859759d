//! Finding an agent's outputs: one patch (and optionally a log and a cost) per task,
//! hint condition and attempt. Two layouts are read:
//!
//! ```text
//! outputs/<task>/<hint>/<attempt>/patch.diff       hint: none | hints | detailed
//!                                 agent_log.txt    optional
//!                                 cost.json        optional: {"cost_usd": 1.23}
//!                                 trajectory.json  optional: the agent's steps (Harbor's ATIF)
//! outputs/<task>/<agent>_<level>_run<N>.patch      RExBench's own naming; level:
//! outputs/<task>/<agent>_<level>_run<N>.log        default | hints | more_detailed_hints
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use benchmark::confined::{Folder, Kind, Refused, file_limit};
use bundle::Hint;
use serde::Deserialize;

/// One run of the agent. Its files are paths relative to the outputs folder, and are
/// read only through it (`benchmark::confined`).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRun {
    pub task: String,
    pub hint: Hint,
    pub attempt: u32,
    pub patch: PathBuf,
    pub agent_log: Option<PathBuf>,
    pub cost_usd: Option<f64>,
    /// The agent's trajectory (ATIF JSON), kept as the run's `x-trajectory` artifact.
    pub trajectory: Option<PathBuf>,
}

impl AgentRun {
    pub fn label(&self) -> String {
        format!("{}/{}/{}", self.task, self.hint, self.attempt)
    }

    /// The run's files in the outputs folder.
    pub fn files(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.patch).chain(&self.agent_log).chain(&self.trajectory)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OutputsError {
    /// A file that is not read: a link out of the outputs folder, a FIFO, a device,
    /// a file over a bundle artifact's size. The run is named where there is one.
    #[error("{}{refused}", run.as_ref().map(|r| format!("run {r}: ")).unwrap_or_default())]
    Refused { run: Option<String>, refused: Refused },
    #[error("{}: {detail}", path.display())]
    Layout { path: PathBuf, detail: String },
}

impl From<Refused> for OutputsError {
    fn from(refused: Refused) -> Self {
        OutputsError::Refused { run: None, refused }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cost {
    cost_usd: f64,
}

/// Every run in the outputs folder, ordered by task, hint, attempt. Each run's files
/// are checked here, before anything is written: a file that would be refused when
/// read stops the evaluation now, naming the run and the file.
pub fn discover(outputs: &Folder) -> Result<Vec<AgentRun>, OutputsError> {
    let mut runs: BTreeMap<(String, Hint, u32), AgentRun> = BTreeMap::new();
    for task_dir in outputs.entries(Path::new(""))? {
        task_dir.check(outputs)?;
        if task_dir.kind != Kind::Folder {
            return Err(layout(outputs, &task_dir.rel, "expected a folder per task"));
        }
        let task = task_dir.name_lossy();
        for entry in outputs.entries(&task_dir.rel)? {
            let name = entry.name_lossy();
            let found = if entry.kind == Kind::Folder {
                let hint = name.parse::<Hint>().map_err(|e| layout(outputs, &entry.rel, &format!("{e}")))?;
                let mut found = Vec::new();
                for attempt_dir in outputs.entries(&entry.rel)? {
                    attempt_dir.check(outputs)?;
                    found.push(from_attempt_dir(outputs, &task, hint, &attempt_dir)?);
                }
                found
            } else if name.ends_with(".patch") {
                vec![from_rexbench_name(outputs, &task, &entry.rel)?]
            } else if name.ends_with(".log") {
                continue;
            } else {
                entry.check(outputs)?;
                return Err(layout(
                    outputs,
                    &entry.rel,
                    "expected <hint>/ folders or <agent>_<level>_run<N>.patch files",
                ));
            };
            for run in found {
                for file in run.files() {
                    outputs
                        .open_file(file, file_limit())
                        .map_err(|refused| OutputsError::Refused { run: Some(run.label()), refused })?;
                }
                let key = (run.task.clone(), run.hint, run.attempt);
                if runs.insert(key, run.clone()).is_some() {
                    return Err(layout(outputs, &run.patch, &format!("a second patch for {}", run.label())));
                }
            }
        }
    }
    Ok(runs.into_values().collect())
}

fn from_attempt_dir(
    outputs: &Folder,
    task: &str,
    hint: Hint,
    dir: &benchmark::confined::Entry,
) -> Result<AgentRun, OutputsError> {
    let attempt = attempt_number(&dir.name_lossy())
        .filter(|_| dir.kind == Kind::Folder)
        .ok_or_else(|| layout(outputs, &dir.rel, "an attempt folder is named 1, 2, 3, …"))?;
    let mut patch = None;
    let mut agent_log = None;
    let mut cost_usd = None;
    let mut trajectory = None;
    for file in outputs.entries(&dir.rel)? {
        let name = file.name_lossy();
        let stem = name.split('.').next().unwrap_or_default();
        match stem {
            "patch" => patch = Some(file.rel),
            "agent_log" => agent_log = Some(file.rel),
            "trajectory" if name == "trajectory.json" => trajectory = Some(file.rel),
            "cost" if name == "cost.json" => {
                let label = format!("{task}/{hint}/{attempt}");
                let bytes = outputs
                    .read(&file.rel)
                    .map_err(|refused| OutputsError::Refused { run: Some(label), refused })?;
                let cost: Cost =
                    serde_json::from_slice(&bytes).map_err(|e| layout(outputs, &file.rel, &e.to_string()))?;
                cost_usd = Some(cost.cost_usd);
            }
            _ => {
                return Err(layout(
                    outputs,
                    &file.rel,
                    "unexpected file: an attempt holds patch.*, agent_log.*, cost.json and trajectory.json",
                ));
            }
        }
    }
    let patch =
        patch.ok_or_else(|| layout(outputs, &dir.rel, "no patch file (patch.diff) in this attempt"))?;
    Ok(AgentRun { task: task.to_owned(), hint, attempt, patch, agent_log, cost_usd, trajectory })
}

/// `<agent>_<level>_run<N>.patch`, with the log beside it as `.log`.
fn from_rexbench_name(outputs: &Folder, task: &str, path: &Path) -> Result<AgentRun, OutputsError> {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let bad = || {
        layout(
            outputs,
            path,
            "expected <agent>_<level>_run<N>.patch with level default, hints or more_detailed_hints",
        )
    };
    let (head, n) = stem.rsplit_once("_run").ok_or_else(bad)?;
    let attempt = attempt_number(n).ok_or_else(bad)?;
    let hint = ["more_detailed_hints", "default", "hints"]
        .into_iter()
        .find(|level| head.ends_with(&format!("_{level}")))
        .and_then(Hint::from_rexbench_level)
        .ok_or_else(bad)?;
    let log = path.with_extension("log");
    let has_log = outputs
        .kind(&log)
        .map_err(|refused| OutputsError::Refused { run: Some(format!("{task}/{hint}/{attempt}")), refused })?
        .is_some();
    Ok(AgentRun {
        task: task.to_owned(),
        hint,
        attempt,
        patch: path.to_owned(),
        agent_log: has_log.then_some(log),
        cost_usd: None,
        trajectory: None,
    })
}

fn attempt_number(s: &str) -> Option<u32> {
    s.parse::<u32>().ok().filter(|n| *n >= 1 && !s.starts_with('0'))
}

fn layout(outputs: &Folder, rel: &Path, detail: &str) -> OutputsError {
    OutputsError::Layout { path: outputs.shown(rel), detail: detail.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn both_layouts() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::create_dir_all(d.join("cogs/hints/2")).unwrap();
        fs::write(d.join("cogs/hints/2/patch.diff"), "x").unwrap();
        fs::write(d.join("cogs/hints/2/cost.json"), r#"{"cost_usd": 1.5}"#).unwrap();
        fs::write(d.join("cogs/hints/2/trajectory.json"), r#"{"steps": []}"#).unwrap();
        fs::create_dir_all(d.join("othello")).unwrap();
        fs::write(d.join("othello/openhands_more_detailed_hints_run3.patch"), "y").unwrap();
        fs::write(d.join("othello/openhands_more_detailed_hints_run3.log"), "log").unwrap();
        fs::write(d.join("othello/openhands_default_run1.patch"), "").unwrap();
        let runs = discover(&Folder::open(d, "outputs folder").unwrap()).unwrap();
        let keys: Vec<_> = runs.iter().map(AgentRun::label).collect();
        assert_eq!(keys, ["cogs/hints/2", "othello/none/1", "othello/detailed/3"]);
        assert_eq!(runs[0].cost_usd, Some(1.5));
        assert!(runs[0].trajectory.as_ref().is_some_and(|t| t.ends_with("trajectory.json")));
        assert!(runs[1].trajectory.is_none());
        assert!(runs[2].agent_log.is_some() && runs[1].agent_log.is_none());

        fs::write(d.join("othello/openhands_level9_run1.patch"), "").unwrap();
        let err = discover(&Folder::open(d, "outputs folder").unwrap()).unwrap_err().to_string();
        assert!(err.contains("openhands_level9_run1.patch: expected <agent>_<level>_run<N>.patch"), "{err}");
    }

    #[test]
    fn duplicates_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::create_dir_all(d.join("cogs/none/1")).unwrap();
        fs::write(d.join("cogs/none/1/patch.diff"), "x").unwrap();
        fs::write(d.join("cogs/a_default_run1.patch"), "x").unwrap();
        let err = discover(&Folder::open(d, "outputs folder").unwrap()).unwrap_err().to_string();
        assert!(err.contains("a second patch for cogs/none/1"), "{err}");
    }
}
