//! Finding an agent's outputs: one patch (and optionally a log, a trajectory and a
//! cost) per task, hint condition and attempt. Three layouts are read, and may mix:
//!
//! ```text
//! outputs/<task>/<hint>/<attempt>/patch.diff       hint: none | hints | detailed
//!                                 agent_log.txt    optional
//!                                 cost.json        optional: {"cost_usd": 1.23, "tokens": {…}}
//!                                 trajectory.json  optional: the agent's steps (Harbor's ATIF)
//! outputs/<task>/<agent>_<level>_run<N>.patch      RExBench's own naming; level:
//! outputs/<task>/<agent>_<level>_run<N>.log        default | hints | more_detailed_hints
//! outputs/<task>/<agent>_<level>_run<N>.json       optional: the agent's trajectory
//! patches/<agent>/<task>/<level>/<agent>_<level>_run<N>.patch
//! patches/<agent>/<task>/<level>/<agent>_<level>_run<N>.json
//! ```
//!
//! The last is what RExBench's public harness (`scripts/run_agent.sh`) writes: point
//! `evaluate` at `patches/<agent>/`. A `hints/` folder is this runner's hint folder when
//! it holds attempt folders, and the harness's level folder when it holds patches.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::Error;
use benchmark::confined::{Folder, Kind, file_limit};
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
    /// The tokens `cost.json` states (else the trajectory's are taken when the run is
    /// staged).
    pub tokens: Option<bundle::Tokens>,
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

/// `cost.json`: what the agent's run cost, and the tokens it was billed for (the bundle
/// format's section 4m: input, output, cache_read, cache_write).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cost {
    cost_usd: f64,
    #[serde(default)]
    tokens: Option<bundle::Tokens>,
}

/// How an agent's outputs were laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layout {
    /// `<task>/<hint>/<attempt>/patch.diff`
    Attempts,
    /// `<task>/<agent>_<level>_run<N>.patch`
    RexbenchNames,
    /// `<task>/<level>/<agent>_<level>_run<N>.patch`, as RExBench's harness writes it.
    Harness,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layout::Attempts => "this runner's layout (<task>/<hint>/<attempt>/patch.diff)",
            Layout::RexbenchNames => "RExBench's file names (<task>/<agent>_<level>_run<N>.patch)",
            Layout::Harness => {
                "the layout of RExBench's harness (<task>/<level>/<agent>_<level>_run<N>.patch, as under patches/<agent>/)"
            }
        })
    }
}

/// What [`discover`] found.
#[derive(Debug)]
pub struct Discovered {
    /// Ordered by task, hint, attempt.
    pub runs: Vec<AgentRun>,
    pub layouts: BTreeSet<Layout>,
}

/// Every run in the outputs folder. Each run's files are checked here, before
/// anything is written: a file that would be refused when read stops the evaluation
/// now, naming the run and the file.
pub fn discover(outputs: &Folder) -> Result<Discovered, Error> {
    let mut runs: BTreeMap<(String, Hint, u32), AgentRun> = BTreeMap::new();
    let mut layouts = BTreeSet::new();
    for task_dir in outputs.entries(Path::new(""))? {
        task_dir.check(outputs)?;
        if task_dir.kind != Kind::Folder {
            return Err(layout(outputs, &task_dir.rel, "expected a folder per task"));
        }
        let task = task_dir.name_lossy();
        for entry in outputs.entries(&task_dir.rel)? {
            let name = entry.name_lossy();
            let found = if entry.kind == Kind::Folder {
                let inside = outputs.entries(&entry.rel)?;
                let level = Hint::from_rexbench_level(&name);
                if level.is_some() && inside.iter().any(|e| e.name_lossy().ends_with(".patch")) {
                    layouts.insert(Layout::Harness);
                    level_folder(outputs, &task, &name, &inside)?
                } else {
                    let hint = name.parse::<Hint>().map_err(|e| {
                        layout(
                            outputs,
                            &entry.rel,
                            &format!(
                                "{e}; or a level of RExBench's harness (default, hints, more_detailed_hints) \
                                 holding <agent>_<level>_run<N>.patch files"
                            ),
                        )
                    })?;
                    layouts.insert(Layout::Attempts);
                    let mut found = Vec::new();
                    for attempt_dir in inside {
                        attempt_dir.check(outputs)?;
                        found.push(from_attempt_dir(outputs, &task, hint, &attempt_dir)?);
                    }
                    found
                }
            } else if name.ends_with(".patch") {
                layouts.insert(Layout::RexbenchNames);
                vec![from_rexbench_name(outputs, &task, &entry.rel)?]
            } else if name.ends_with(".log") || name.ends_with(".json") {
                continue;
            } else {
                entry.check(outputs)?;
                return Err(layout(
                    outputs,
                    &entry.rel,
                    "expected <hint>/ or <level>/ folders, or <agent>_<level>_run<N>.patch files",
                ));
            };
            for run in found {
                for file in run.files() {
                    outputs
                        .open_file(file, file_limit())
                        .map_err(|refused| Error::Refused { run: Some(run.label()), refused })?;
                }
                let key = (run.task.clone(), run.hint, run.attempt);
                if runs.insert(key, run.clone()).is_some() {
                    return Err(layout(outputs, &run.patch, &format!("a second patch for {}", run.label())));
                }
            }
        }
    }
    Ok(Discovered { runs: runs.into_values().collect(), layouts })
}

/// A level folder of RExBench's harness: `<agent>_<level>_run<N>.patch`, each with its
/// trajectory (`.json`) and log (`.log`) beside it where there is one.
fn level_folder(
    outputs: &Folder,
    task: &str,
    level: &str,
    inside: &[benchmark::confined::Entry],
) -> Result<Vec<AgentRun>, Error> {
    let mut found = Vec::new();
    for file in inside {
        let name = file.name_lossy();
        if name.ends_with(".json") || name.ends_with(".log") {
            continue;
        }
        if !name.ends_with(".patch") {
            file.check(outputs)?;
            return Err(layout(
                outputs,
                &file.rel,
                "unexpected file: a level folder holds <agent>_<level>_run<N>.patch files and their .json trajectories",
            ));
        }
        let run = from_rexbench_name(outputs, task, &file.rel)?;
        if run.hint != Hint::from_rexbench_level(level).expect("a level") {
            return Err(layout(
                outputs,
                &file.rel,
                &format!("a patch of another level, in the `{level}` folder"),
            ));
        }
        found.push(run);
    }
    Ok(found)
}

fn from_attempt_dir(
    outputs: &Folder,
    task: &str,
    hint: Hint,
    dir: &benchmark::confined::Entry,
) -> Result<AgentRun, Error> {
    let attempt = attempt_number(&dir.name_lossy())
        .filter(|_| dir.kind == Kind::Folder)
        .ok_or_else(|| layout(outputs, &dir.rel, "an attempt folder is named 1, 2, 3, …"))?;
    let mut patch = None;
    let mut agent_log = None;
    let mut cost_usd = None;
    let mut tokens = None;
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
                    .map_err(|refused| Error::Refused { run: Some(label), refused })?;
                let cost: Cost =
                    serde_json::from_slice(&bytes).map_err(|e| layout(outputs, &file.rel, &e.to_string()))?;
                cost_usd = Some(cost.cost_usd);
                tokens = cost.tokens;
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
    Ok(AgentRun { task: task.to_owned(), hint, attempt, patch, agent_log, cost_usd, tokens, trajectory })
}

/// `<agent>_<level>_run<N>.patch`, with the log beside it as `.log` and the
/// trajectory as `.json`.
fn from_rexbench_name(outputs: &Folder, task: &str, path: &Path) -> Result<AgentRun, Error> {
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
    let beside = |ext: &str| -> Result<Option<PathBuf>, Error> {
        let path = path.with_extension(ext);
        let label = format!("{task}/{hint}/{attempt}");
        let there = outputs.kind(&path).map_err(|refused| Error::Refused { run: Some(label), refused })?;
        Ok(there.is_some().then_some(path))
    };
    Ok(AgentRun {
        task: task.to_owned(),
        hint,
        attempt,
        patch: path.to_owned(),
        agent_log: beside("log")?,
        cost_usd: None,
        tokens: None,
        trajectory: beside("json")?,
    })
}

fn attempt_number(s: &str) -> Option<u32> {
    s.parse::<u32>().ok().filter(|n| *n >= 1 && !s.starts_with('0'))
}

fn layout(outputs: &Folder, rel: &Path, detail: &str) -> Error {
    Error::Invalid { path: outputs.shown(rel), detail: detail.to_owned() }
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
        let runs = discover(&Folder::open(d, "outputs folder").unwrap()).unwrap().runs;
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
    fn the_harness_layout_and_a_hints_folder_of_either_kind() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        for (level, run) in [("default", 1), ("default", 2), ("hints", 1), ("more_detailed_hints", 5)] {
            let dir = d.join("cogs").join(level);
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join(format!("oh_claude_{level}_run{run}.patch")), "x").unwrap();
            fs::write(dir.join(format!("oh_claude_{level}_run{run}.json")), "{}").unwrap();
        }
        fs::create_dir_all(d.join("othello/hints/3")).unwrap();
        fs::write(d.join("othello/hints/3/patch.diff"), "x").unwrap();
        let found = discover(&Folder::open(d, "outputs folder").unwrap()).unwrap();
        let keys: Vec<_> = found.runs.iter().map(AgentRun::label).collect();
        assert_eq!(
            keys,
            ["cogs/none/1", "cogs/none/2", "cogs/hints/1", "cogs/detailed/5", "othello/hints/3"]
        );
        assert_eq!(found.layouts.into_iter().collect::<Vec<_>>(), [Layout::Attempts, Layout::Harness]);
        let trajectory = found.runs[3].trajectory.as_ref().unwrap();
        assert_eq!(trajectory, Path::new("cogs/more_detailed_hints/oh_claude_more_detailed_hints_run5.json"));

        fs::write(d.join("cogs/default/oh_claude_hints_run9.patch"), "x").unwrap();
        let err = discover(&Folder::open(d, "outputs folder").unwrap()).unwrap_err().to_string();
        assert!(
            err.ends_with("oh_claude_hints_run9.patch: a patch of another level, in the `default` folder"),
            "{err}"
        );
        fs::remove_file(d.join("cogs/default/oh_claude_hints_run9.patch")).unwrap();
        fs::create_dir_all(d.join("cogs/medium")).unwrap();
        let err = discover(&Folder::open(d, "outputs folder").unwrap()).unwrap_err().to_string();
        assert!(err.contains("cogs/medium: unknown hint `medium`"), "{err}");
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
