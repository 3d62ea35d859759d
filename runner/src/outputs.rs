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
use std::fs;
use std::path::{Path, PathBuf};

use bundle::Hint;
use serde::Deserialize;

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
}

#[derive(Debug, thiserror::Error)]
pub enum OutputsError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {detail}", path.display())]
    Layout { path: PathBuf, detail: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cost {
    cost_usd: f64,
}

/// Every run under `dir`, ordered by task, hint, attempt.
pub fn discover(dir: &Path) -> Result<Vec<AgentRun>, OutputsError> {
    let mut runs: BTreeMap<(String, Hint, u32), AgentRun> = BTreeMap::new();
    for task_dir in entries(dir)? {
        if !task_dir.is_dir() {
            return Err(layout(&task_dir, "expected a folder per task"));
        }
        let task = file_name(&task_dir);
        for entry in entries(&task_dir)? {
            let found = if entry.is_dir() {
                let hint = file_name(&entry).parse::<Hint>().map_err(|e| layout(&entry, &format!("{e}")))?;
                let mut found = Vec::new();
                for attempt_dir in entries(&entry)? {
                    found.push(from_attempt_dir(&task, hint, &attempt_dir)?);
                }
                found
            } else if entry.extension().is_some_and(|e| e == "patch") {
                vec![from_rexbench_name(&task, &entry)?]
            } else if entry.extension().is_some_and(|e| e == "log") {
                continue;
            } else {
                return Err(layout(&entry, "expected <hint>/ folders or <agent>_<level>_run<N>.patch files"));
            };
            for run in found {
                let key = (run.task.clone(), run.hint, run.attempt);
                if runs.insert(key, run.clone()).is_some() {
                    return Err(layout(&run.patch, &format!("a second patch for {}", run.label())));
                }
            }
        }
    }
    Ok(runs.into_values().collect())
}

fn from_attempt_dir(task: &str, hint: Hint, dir: &Path) -> Result<AgentRun, OutputsError> {
    let attempt = attempt_number(&file_name(dir))
        .ok_or_else(|| layout(dir, "an attempt folder is named 1, 2, 3, …"))?;
    let mut patch = None;
    let mut agent_log = None;
    let mut cost_usd = None;
    let mut trajectory = None;
    for file in entries(dir)? {
        let name = file_name(&file);
        let stem = name.split('.').next().unwrap_or_default();
        match stem {
            "patch" => patch = Some(file),
            "agent_log" => agent_log = Some(file),
            "trajectory" if name == "trajectory.json" => trajectory = Some(file),
            "cost" if name == "cost.json" => {
                let bytes =
                    fs::read(&file).map_err(|source| OutputsError::Io { path: file.clone(), source })?;
                let cost: Cost = serde_json::from_slice(&bytes).map_err(|e| layout(&file, &e.to_string()))?;
                cost_usd = Some(cost.cost_usd);
            }
            _ => {
                return Err(layout(
                    &file,
                    "unexpected file: an attempt holds patch.*, agent_log.*, cost.json and trajectory.json",
                ));
            }
        }
    }
    let patch = patch.ok_or_else(|| layout(dir, "no patch file (patch.diff) in this attempt"))?;
    Ok(AgentRun { task: task.to_owned(), hint, attempt, patch, agent_log, cost_usd, trajectory })
}

/// `<agent>_<level>_run<N>.patch`, with the log beside it as `.log`.
fn from_rexbench_name(task: &str, path: &Path) -> Result<AgentRun, OutputsError> {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let bad = || {
        layout(path, "expected <agent>_<level>_run<N>.patch with level default, hints or more_detailed_hints")
    };
    let (head, n) = stem.rsplit_once("_run").ok_or_else(bad)?;
    let attempt = attempt_number(n).ok_or_else(bad)?;
    let hint = ["more_detailed_hints", "default", "hints"]
        .into_iter()
        .find(|level| head.ends_with(&format!("_{level}")))
        .and_then(Hint::from_rexbench_level)
        .ok_or_else(bad)?;
    let log = path.with_extension("log");
    Ok(AgentRun {
        task: task.to_owned(),
        hint,
        attempt,
        patch: path.to_owned(),
        agent_log: log.is_file().then_some(log),
        cost_usd: None,
        trajectory: None,
    })
}

fn attempt_number(s: &str) -> Option<u32> {
    s.parse::<u32>().ok().filter(|n| *n >= 1 && !s.starts_with('0'))
}

fn entries(dir: &Path) -> Result<Vec<PathBuf>, OutputsError> {
    let io = |source| OutputsError::Io { path: dir.to_owned(), source };
    let mut out: Vec<PathBuf> =
        fs::read_dir(dir).map_err(io)?.map(|e| e.map(|e| e.path()).map_err(io)).collect::<Result<_, _>>()?;
    out.sort();
    Ok(out)
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn layout(path: &Path, detail: &str) -> OutputsError {
    OutputsError::Layout { path: path.to_owned(), detail: detail.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let runs = discover(d).unwrap();
        let keys: Vec<_> = runs.iter().map(AgentRun::label).collect();
        assert_eq!(keys, ["cogs/hints/2", "othello/none/1", "othello/detailed/3"]);
        assert_eq!(runs[0].cost_usd, Some(1.5));
        assert!(runs[0].trajectory.as_ref().is_some_and(|t| t.ends_with("trajectory.json")));
        assert!(runs[1].trajectory.is_none());
        assert!(runs[2].agent_log.is_some() && runs[1].agent_log.is_none());

        fs::write(d.join("othello/openhands_level9_run1.patch"), "").unwrap();
        let err = discover(d).unwrap_err().to_string();
        assert!(err.contains("openhands_level9_run1.patch: expected <agent>_<level>_run<N>.patch"), "{err}");
    }

    #[test]
    fn duplicates_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        fs::create_dir_all(d.join("cogs/none/1")).unwrap();
        fs::write(d.join("cogs/none/1/patch.diff"), "x").unwrap();
        fs::write(d.join("cogs/a_default_run1.patch"), "x").unwrap();
        assert!(discover(d).unwrap_err().to_string().contains("a second patch for cogs/none/1"));
    }
}
