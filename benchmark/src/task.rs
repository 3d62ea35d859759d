//! Task cards (`tasks/<id>/task.toml`) and the private gold directory.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::check::CheckSpec;

/// Twelve hours: the limit RExBench puts on an agent's solution (paper §3.2).
pub const DEFAULT_TIMEOUT_S: f64 = 12.0 * 60.0 * 60.0;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskCard {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub venue: Option<String>,
    #[serde(default)]
    pub extension_type: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub repository: Option<String>,
    #[serde(default)]
    pub license: Option<String>,
    #[serde(default)]
    pub delta_cyclomatic_complexity: Option<f64>,
    #[serde(default)]
    pub gold_run: Option<GoldRun>,
    #[serde(default)]
    pub papers: Vec<Paper>,
    #[serde(default)]
    pub evaluation: Evaluation,
    /// A check whose expected values are public; otherwise it comes from `--gold`.
    #[serde(default)]
    pub check: Option<CheckSpec>,
    /// Names of the expected values that pages may show. Default: none.
    #[serde(default)]
    pub public_expected: Vec<String>,
    /// Who may read its runs' patches, logs and trajectories (default `private`): it
    /// changes who may read, never how a run is judged, so its line stays out of the
    /// task-set digest (`crate::taskset`).
    #[serde(default)]
    pub outputs: bundle::Outputs,
    /// How many attempts per hint condition the benchmark asks of an agent on this task
    /// (default RExBench's 5): a result ranks only with that many valid attempts
    /// wherever it has runs (spec §4f). It says how results are compared, never how a
    /// run is judged, so its line stays out of the task-set digest like `outputs`'s.
    #[serde(default = "default_attempts")]
    pub attempts: u32,
    /// The integrity checks' settings, from `integrity.toml` beside the card: they
    /// never change how a run is judged, so they stay out of the task-set digest.
    #[serde(skip)]
    pub integrity: Integrity,
    /// Where the card was read from.
    #[serde(skip)]
    pub dir: PathBuf,
}

/// `integrity.toml`: what the integrity checks need to know about a task beyond its
/// check (see `crate::integrity`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Integrity {
    /// Repository-relative paths (globs: `*` within a segment, `**` across them) that an
    /// honest solution never changes: evaluation scripts, test data, the result
    /// directory. A patch that adds, changes or deletes one is flagged.
    #[serde(default)]
    pub protected: Vec<String>,
    /// An experiment that takes less than this share of the gold run's runtime is
    /// flagged; default `crate::integrity::MIN_RUNTIME_FRACTION`.
    #[serde(default)]
    pub min_runtime_fraction: Option<f64>,
    /// Paths (globs; absolute ones name the agent's environment) whose mere mention in
    /// an agent's tool call is a sign: the checker's files and the gold. Harbor's
    /// `/tests/**` and `/solution/**` are always watched
    /// (`crate::integrity::ALWAYS_WATCHED`).
    #[serde(default)]
    pub watched: Vec<String>,
    /// The task's inputs (repository-relative globs): the data and checkpoints every
    /// honest experiment reads. A traced success that opened none of them, or whose
    /// result files no process they reached wrote, is flagged
    /// (`crate::integrity::INPUTS_UNREAD`, `crate::integrity::RESULT_NOT_FROM_INPUTS`).
    #[serde(default)]
    pub inputs: Vec<String>,
    /// Passages of the hints the benchmark gives an agent under the hinted conditions: a
    /// run labelled `none` whose agent record quotes one is flagged
    /// (`crate::integrity::HINT_IN_TRANSCRIPT`). Each at least 30 characters, so that
    /// no common phrase is one.
    #[serde(default)]
    pub hint_passages: Vec<String>,
    /// Why the card names no hint passages, where it names none: the benchmark's hints
    /// are not public, so the check cannot run on the task (its page says so).
    #[serde(default)]
    pub hints_unpublished: Option<String>,
    /// How the task's maintainers make a held-out variant of it (spec §4l), and what a
    /// re-run on one costs: public words, never a variant's contents.
    #[serde(default)]
    pub heldout: Option<HeldOutGuide>,
}

/// `integrity.toml`'s `[heldout]`: how a held-out variant of the task is made.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HeldOutGuide {
    pub how: String,
    pub cost: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoldRun {
    pub hardware: String,
    pub runtime: String,
    /// Absent where the paper gives no figure (e.g. "<1m").
    #[serde(default)]
    pub runtime_minutes: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    pub citation: String,
    pub venue: String,
    pub reference: String,
}

/// How a run of the task is executed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evaluation {
    /// The experiment, run in the patched codebase.
    #[serde(default = "default_command")]
    pub command: Vec<String>,
    /// Wall-clock limit in seconds.
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
    /// The base codebase, relative to the card's folder. Without it, the codebase is
    /// `<--codebases DIR>/<task id>`.
    #[serde(default)]
    pub codebase: Option<PathBuf>,
    /// The experiment needs the network: without this its sandbox has none.
    #[serde(default)]
    pub network: bool,
    /// Variables the experiment reads from the environment it is run in (`CUDA_VISIBLE_DEVICES`,
    /// …): the only ones its sandbox passes in, by name; the runner's own (`REXBENCH_…`)
    /// never.
    #[serde(default)]
    pub env: Vec<String>,
    /// What one run may use (`[evaluation.limits]`): each limit the card leaves out is
    /// [`Limits::default`]'s.
    #[serde(default)]
    pub limits: Limits,
}

impl Default for Evaluation {
    fn default() -> Self {
        Evaluation {
            command: default_command(),
            timeout_s: default_timeout(),
            codebase: None,
            network: false,
            env: Vec::new(),
            limits: Limits::default(),
        }
    }
}

/// `[evaluation.limits]`: what one run of the task may use, enforced by its sandbox (the
/// runner's `sandbox::limits`). A run stopped by one ends `execution_failed` with the
/// error type `resource_limit: <resource>`, never `infra_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Memory of all the run's processes together (their private and shared memory,
    /// each page counted once), in MiB.
    #[serde(default = "Limits::default_memory")]
    pub memory_mib: u64,
    /// Processes and threads at once.
    #[serde(default = "Limits::default_processes")]
    pub processes: u64,
    /// What the working copy may hold (the codebase, what the experiment writes), in MiB.
    #[serde(default = "Limits::default_disk")]
    pub disk_mib: u64,
    /// The experiment's `/tmp` and `/dev/shm`, each a file system of this size, in MiB
    /// (they are held in memory).
    #[serde(default = "Limits::default_tmp")]
    pub tmp_mib: u64,
    /// Each of its logs (standard output and error), cut when written past this, in MiB.
    #[serde(default = "Limits::default_log")]
    pub log_mib: u64,
}

impl Limits {
    /// The most a card may give a log: a bundle's artifact is at most 64 MiB (spec §7),
    /// and a cut log keeps its last line saying so.
    pub const MAX_LOG_MIB: u64 = 63;

    fn default_memory() -> u64 {
        8 * 1024
    }
    fn default_processes() -> u64 {
        1024
    }
    fn default_disk() -> u64 {
        20 * 1024
    }
    fn default_tmp() -> u64 {
        2 * 1024
    }
    fn default_log() -> u64 {
        16
    }

    /// A limit a card may not set: a zero, or a log over what a bundle carries.
    pub fn problem(&self) -> Option<String> {
        for (name, value) in [
            ("memory_mib", self.memory_mib),
            ("processes", self.processes),
            ("disk_mib", self.disk_mib),
            ("tmp_mib", self.tmp_mib),
            ("log_mib", self.log_mib),
        ] {
            if value == 0 {
                return Some(format!("[evaluation.limits] {name} must be at least 1"));
            }
        }
        (self.log_mib > Self::MAX_LOG_MIB).then(|| {
            format!(
                "[evaluation.limits] log_mib is {}: a log is at most {} MiB, so that a bundle can carry it",
                self.log_mib,
                Self::MAX_LOG_MIB
            )
        })
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_mib: Self::default_memory(),
            processes: Self::default_processes(),
            disk_mib: Self::default_disk(),
            tmp_mib: Self::default_tmp(),
            log_mib: Self::default_log(),
        }
    }
}

fn default_command() -> Vec<String> {
    vec!["bash".to_owned(), "run.sh".to_owned()]
}

fn default_attempts() -> u32 {
    bundle::BENCHMARK_ATTEMPTS
}

fn default_timeout() -> f64 {
    DEFAULT_TIMEOUT_S
}

/// Whether an experiment's sandbox may pass in the variable `name`: a variable's name
/// alone (a letter or `_`, then letters, digits and `_`; no pattern, no value), and never
/// one of the runner's own (`REXBENCH_…`). The card's `[evaluation] env`, `evaluate
/// --sandbox-env` and a container template's `--env` are each held to it.
pub fn passable_variable(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("REXBENCH_")
}

impl TaskCard {
    /// Whether the task's check is private: not on its card, but in the maintainers'
    /// gold. Its runs' metrics are then its gold (bundle spec §4j).
    pub fn check_is_private(&self) -> bool {
        self.check.is_none()
    }

    /// One of the small example tasks (a card in an `examples` folder), which make a
    /// task set of their own.
    pub fn is_example(&self) -> bool {
        self.dir.parent().and_then(std::path::Path::file_name).is_some_and(|n| n == "examples")
    }

    /// What the board holds a bundle's runs of this task to (bundle spec §5a): the
    /// attempts the card asks, and the bounds of its check that the card makes public
    /// (`public_expected`: any other is not said to anyone, in a refusal either).
    pub fn rule(&self) -> bundle::TaskRule {
        let bounds = self.check.as_ref().map(CheckSpec::expectations).unwrap_or_default();
        bundle::TaskRule {
            attempts: self.attempts,
            bounds: bounds
                .into_iter()
                .filter(|(metric, _)| self.public_expected.contains(metric))
                .map(|(metric, expectation)| bundle::Bound { metric, expectation })
                .collect(),
        }
    }
}

/// `GOLD/<task>/gold.toml`: what only the maintainers know.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gold {
    /// Files the gold solution changes, for file recall.
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub check: Option<CheckSpec>,
    /// Where it was read from: `{gold}` in an external check.
    #[serde(skip)]
    pub dir: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("{}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {detail}", path.display())]
    Invalid { path: PathBuf, detail: String },
    #[error("no task `{0}` in the tasks directory")]
    Unknown(String),
    #[error(
        "task `{0}` has no public check and no gold for it was found: give --gold DIR with {0}/gold.toml \
         (the maintainers' private gold results)"
    )]
    NoGold(String),
}

/// Every task card under `dir` (`<id>/task.toml`, and `examples/<id>/task.toml`).
pub fn load_all(dir: &Path) -> Result<BTreeMap<String, TaskCard>, TaskError> {
    let mut cards = BTreeMap::new();
    for sub in [dir.to_owned(), dir.join("examples")] {
        if !sub.is_dir() {
            continue;
        }
        let mut entries: Vec<PathBuf> = fs::read_dir(&sub)
            .map_err(|source| TaskError::Io { path: sub.clone(), source })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("task.toml").is_file())
            .collect();
        entries.sort();
        for task_dir in entries {
            let card = load(&task_dir)?;
            cards.insert(card.id.clone(), card);
        }
    }
    Ok(cards)
}

pub fn load(task_dir: &Path) -> Result<TaskCard, TaskError> {
    let path = task_dir.join("task.toml");
    let text = fs::read_to_string(&path).map_err(|source| TaskError::Io { path: path.clone(), source })?;
    let mut card: TaskCard = toml::from_str(&text)
        .map_err(|e| TaskError::Invalid { path: path.clone(), detail: e.to_string() })?;
    let folder = task_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if card.id != folder || !bundle::is_slug(&card.id) {
        return Err(TaskError::Invalid {
            path,
            detail: format!("id `{}` must be a slug and match the folder name `{folder}`", card.id),
        });
    }
    if card.attempts == 0 {
        return Err(TaskError::Invalid {
            path,
            detail: "attempts must be at least 1: the attempts per hint condition a result needs to rank"
                .into(),
        });
    }
    if !(card.evaluation.timeout_s.is_finite() && card.evaluation.timeout_s > 0.0) {
        return Err(TaskError::Invalid {
            path,
            detail: "evaluation.timeout_s must be a positive number".into(),
        });
    }
    if card.evaluation.command.is_empty() {
        return Err(TaskError::Invalid { path, detail: "evaluation.command is empty".into() });
    }
    if let Some(detail) = card.evaluation.limits.problem() {
        return Err(TaskError::Invalid { path, detail });
    }
    if let Some(name) = card.evaluation.env.iter().find(|n| !passable_variable(n)) {
        return Err(TaskError::Invalid {
            path,
            detail: format!(
                "evaluation.env names {name:?}: a variable's name (letters, digits, _), never one of the runner's own (REXBENCH_…)"
            ),
        });
    }
    if let Some(check) = &card.check {
        check.validate().map_err(|detail| TaskError::Invalid { path: path.clone(), detail })?;
        if check.uses_gold_dir() {
            return Err(TaskError::Invalid {
                path,
                detail: "a card's check cannot name `{gold}`: a private evaluator belongs in gold.toml"
                    .into(),
            });
        }
    }
    let known: Vec<String> = card.check.iter().flat_map(|c| c.expectations()).map(|(name, _)| name).collect();
    if let Some(name) = card.public_expected.iter().find(|n| !known.contains(n)) {
        return Err(TaskError::Invalid {
            path,
            detail: format!("public_expected names `{name}`, which the card's check does not report"),
        });
    }
    card.integrity = load_integrity(task_dir)?;
    card.dir = task_dir.to_owned();
    Ok(card)
}

/// The task's `integrity.toml`, if it has one.
fn load_integrity(task_dir: &Path) -> Result<Integrity, TaskError> {
    let path = task_dir.join(INTEGRITY_FILE);
    if !path.is_file() {
        return Ok(Integrity::default());
    }
    let text = fs::read_to_string(&path).map_err(|source| TaskError::Io { path: path.clone(), source })?;
    let integrity: Integrity = toml::from_str(&text)
        .map_err(|e| TaskError::Invalid { path: path.clone(), detail: e.to_string() })?;
    if let Some(bad) =
        integrity.protected.iter().find(|p| glob::Pattern::new(p).is_err() || p.starts_with('/'))
    {
        return Err(TaskError::Invalid {
            path,
            detail: format!("protected path `{bad}` is not a repository-relative glob"),
        });
    }
    if let Some(bad) =
        integrity.inputs.iter().find(|p| glob::Pattern::new(p).is_err() || p.is_empty() || p.starts_with('/'))
    {
        return Err(TaskError::Invalid {
            path,
            detail: format!("input `{bad}` is not a repository-relative glob"),
        });
    }
    if let Some(bad) = integrity.watched.iter().find(|p| glob::Pattern::new(p).is_err() || p.is_empty()) {
        return Err(TaskError::Invalid { path, detail: format!("watched path `{bad}` is not a glob") });
    }
    if let Some(bad) =
        integrity.hint_passages.iter().find(|p| p.split_whitespace().collect::<String>().len() < 30)
    {
        return Err(TaskError::Invalid {
            path,
            detail: format!(
                "hint passage {bad:?} is shorter than 30 characters: a common phrase would match it"
            ),
        });
    }
    if let Some(f) = integrity.min_runtime_fraction
        && !(f > 0.0 && f <= 1.0)
    {
        return Err(TaskError::Invalid {
            path,
            detail: format!("min_runtime_fraction {f} is not in (0, 1]"),
        });
    }
    Ok(integrity)
}

/// The integrity checks' settings beside a card.
pub const INTEGRITY_FILE: &str = "integrity.toml";

/// The Harbor digests of the benchmark's task that a card pins (`digests`, `checksums`):
/// which task folder a Harbor trial must have run. They say which trials are the
/// task's, never how a run is judged, so they stay out of the task-set digest.
pub const HARBOR_FILE: &str = "harbor.toml";

/// The gold for `task` from the private directory, if it has any.
pub fn load_gold(gold_dir: Option<&Path>, task: &str) -> Result<Option<Gold>, TaskError> {
    let Some(dir) = gold_dir else { return Ok(None) };
    let path = dir.join(task).join("gold.toml");
    if !path.is_file() {
        return Ok(None);
    }
    let text = fs::read_to_string(&path).map_err(|source| TaskError::Io { path: path.clone(), source })?;
    let mut gold: Gold = toml::from_str(&text)
        .map_err(|e| TaskError::Invalid { path: path.clone(), detail: e.to_string() })?;
    gold.dir = dir.join(task);
    if let Some(check) = &gold.check {
        check.validate().map_err(|detail| TaskError::Invalid { path, detail })?;
    }
    Ok(Some(gold))
}
