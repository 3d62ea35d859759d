//! The task cards every binary carries: the benchmark's twelve and the runnable example
//! tasks (with the results the demo shows), compiled in from the repository's `tasks/`.
//! An installed binary needs no checkout; `REXBENCH_TASKS` / `--tasks` point elsewhere.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};

use crate::task::{TaskCard, TaskError, load_all};

static TASKS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../tasks");

/// The task cards a process works with, as a directory: the code that reads cards, copies
/// codebases and packs results works on paths, so the compiled-in cards are unpacked
/// into a private temporary directory that lives as long as this value.
#[derive(Debug)]
pub struct TaskDir {
    path: PathBuf,
    origin: Origin,
    _unpacked: Option<tempfile::TempDir>,
}

/// Where the cards came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    Given(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Builtin => f.write_str("the task cards built into this binary"),
            Origin::Given(p) => write!(f, "the task cards in {}", p.display()),
        }
    }
}

impl TaskDir {
    /// The given directory, or the compiled-in cards when none is given.
    pub fn open(given: Option<&Path>) -> Result<TaskDir, TaskError> {
        match given {
            Some(dir) => TaskDir::given(dir),
            None => TaskDir::builtin(),
        }
    }

    /// The cards compiled into this binary.
    pub fn builtin() -> Result<TaskDir, TaskError> {
        let unpacked = tempfile::Builder::new()
            .prefix("rexbench-tasks-")
            .tempdir()
            .map_err(|source| TaskError::Io { path: std::env::temp_dir(), source })?;
        unpack(&TASKS, unpacked.path())?;
        Ok(TaskDir { path: unpacked.path().to_owned(), origin: Origin::Builtin, _unpacked: Some(unpacked) })
    }

    /// A directory the user named: it must exist and hold at least one card, since a
    /// server or runner without cards would refuse every task it is shown.
    pub fn given(dir: &Path) -> Result<TaskDir, TaskError> {
        if !dir.is_dir() {
            return Err(TaskError::Invalid {
                path: dir.to_owned(),
                detail: "no such directory of task cards".into(),
            });
        }
        let found = TaskDir { path: dir.to_owned(), origin: Origin::Given(dir.to_owned()), _unpacked: None };
        if found.cards()?.is_empty() {
            return Err(TaskError::Invalid {
                path: dir.to_owned(),
                detail: "holds no task cards (expected <task>/task.toml or examples/<task>/task.toml)".into(),
            });
        }
        Ok(found)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Every card, by task id.
    pub fn cards(&self) -> Result<BTreeMap<String, TaskCard>, TaskError> {
        load_all(&self.path)
    }

    /// The example tasks' results as the runner evaluated them (what the demo shows).
    pub fn example_results(&self) -> PathBuf {
        self.path.join("examples/results")
    }

    /// The results of an example agent that took a shortcut on one run (it prints the
    /// result line instead of computing it), as the runner evaluated and flagged them:
    /// the demo's flagged success.
    pub fn shortcut_results(&self) -> PathBuf {
        self.path.join("examples/shortcut/results")
    }
}

/// Writes the embedded tree under `to`. Hidden entries are left out: what a working
/// copy holds besides the committed files (a runner's `.staging`) is not part of the
/// benchmark.
fn unpack(dir: &Dir<'_>, to: &Path) -> Result<(), TaskError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| TaskError::Io { path, source }
    };
    for entry in dir.entries() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
            continue;
        }
        let target = to.join(path);
        match entry {
            include_dir::DirEntry::Dir(sub) => {
                fs::create_dir_all(&target).map_err(io(&target))?;
                unpack(sub, to)?;
            }
            include_dir::DirEntry::File(file) => {
                fs::write(&target, file.contents()).map_err(io(&target))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_cards_are_the_repositorys() {
        let builtin = TaskDir::builtin().unwrap();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks");
        let ids = |cards: BTreeMap<String, TaskCard>| cards.into_keys().collect::<Vec<_>>();
        assert_eq!(ids(builtin.cards().unwrap()), ids(load_all(&repo).unwrap()));
        for task in bundle::REXBENCH_TASKS {
            assert!(builtin.path().join(task).join("task.toml").is_file(), "{task}");
        }
        assert!(builtin.example_results().join("evaluation.json").is_file());
        assert!(builtin.shortcut_results().join("evaluation.json").is_file());
        assert!(builtin.path().join("examples/csvstats/codebase/run.sh").is_file());
        // Issue 75: each of the twelve names its hint passages, or says why it cannot.
        let cards = load_all(&repo).unwrap();
        for task in bundle::REXBENCH_TASKS {
            let i = &cards[task].integrity;
            assert!(
                !i.hint_passages.is_empty() || i.hints_unpublished.as_deref().is_some_and(|w| w.len() > 40),
                "{task}: no hint passages, and no word on why"
            );
        }
        let path = builtin.path().to_owned();
        drop(builtin);
        assert!(!path.exists(), "the unpacked cards are removed with the value");
    }

    #[test]
    fn a_given_directory_must_exist_and_hold_cards() {
        let missing = TaskDir::given(Path::new("/nonexistent/tasks")).unwrap_err();
        assert_eq!(missing.to_string(), "/nonexistent/tasks: no such directory of task cards");
        let empty = tempfile::tempdir().unwrap();
        let err = TaskDir::given(empty.path()).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("holds no task cards (expected <task>/task.toml or examples/<task>/task.toml)"),
            "{err}"
        );
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks");
        assert_eq!(TaskDir::given(&repo).unwrap().origin(), &Origin::Given(repo));
    }
}
