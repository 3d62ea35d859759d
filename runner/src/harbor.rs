//! `rexbench import-harbor`: the job directories that Harbor's RExBench adapter writes,
//! turned into a results directory in the layout `evaluate` writes (so `pack` signs it),
//! with provenance `imported`. Harbor ran and judged these runs; nothing is re-run, and
//! nothing is made up: a patch is kept only where the job collected one.
//!
//! What is read of Harbor's format (its `TrialResult` and `JobResult` models): a job
//! folder holds `result.json` and one folder per trial, each with `result.json`
//! (`task_name`, `trial_name`, `agent_info`, `agent_result.cost_usd`,
//! `verifier_result.rewards`, `exception_info`, `started_at`, `finished_at`), `agent/`,
//! `verifier/` (`reward.txt` or `reward.json`, `test-stdout.txt`, `test-stderr.txt`),
//! `artifacts/`, `trial.log` and `exception.txt`.
//!
//! A job folder is as hostile as a bundle: the agent filled `artifacts/` and `agent/`
//! from inside its container. Every file is read beneath the job folder's handle
//! (`benchmark::confined`): a link out of it, a FIFO, a device or a file over a bundle
//! artifact's size is refused by name, and nothing is written. Files are copied into
//! the results one at a time, never all held at once.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use benchmark::confined::{Folder, Kind, Refused, file_limit};
use bundle::{Agent, Benchmark, Hint, Outcome, Provenance, ProvenanceKind, REXBENCH_TASKS, RunnerInfo};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::results::{Evaluation, RunRecord, run_dir};
use crate::task::{TaskError, load_all, load_gold};

#[derive(Debug, Clone)]
pub struct Options {
    pub jobs: Vec<PathBuf>,
    pub out: PathBuf,
    /// The hint condition every trial ran under, where the trials do not say.
    pub hint: Option<Hint>,
    /// The task cards, for the task-set digest.
    pub tasks_dir: PathBuf,
    /// The private gold directory, for file recall.
    pub gold: Option<PathBuf>,
    /// Harbor's version, for jobs whose `lock.json` does not record it.
    pub harbor_version: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// A file that is not as Harbor writes it, or a run it cannot stand for.
    #[error("{}: {detail}", path.display())]
    Invalid { path: PathBuf, detail: String },
    /// A file that is not read: a link out of the job folder, a FIFO, too large.
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error(transparent)]
    Task(#[from] TaskError),
    #[error("{0}")]
    Setup(String),
}

/// What an import wrote.
#[derive(Debug)]
pub struct Imported {
    pub runs: usize,
    pub outcomes: BTreeMap<Outcome, usize>,
    pub source: String,
    /// The agent as Harbor names it, written to `agent.toml` for `pack`.
    pub agent: Agent,
}

// ---------------------------------------------------------------- Harbor's files

#[derive(Deserialize)]
struct JobResult {
    #[serde(rename = "n_total_trials")]
    _n_total_trials: u64,
    stats: JobStats,
}

/// Older jobs count `n_trials`/`n_errors`; newer ones count progress as well.
#[derive(Deserialize)]
struct JobStats {
    #[serde(default)]
    n_running_trials: u64,
    #[serde(default)]
    n_pending_trials: u64,
}

#[derive(Deserialize)]
struct JobConfig {
    #[serde(default)]
    job_name: Option<String>,
}

#[derive(Deserialize)]
struct JobLock {
    #[serde(default)]
    harbor: Option<HarborInfo>,
}

#[derive(Deserialize)]
struct HarborInfo {
    #[serde(default)]
    version: Option<String>,
}

#[derive(Deserialize)]
struct TrialResult {
    task_name: String,
    trial_name: String,
    agent_info: AgentInfo,
    #[serde(default)]
    agent_result: Option<AgentContext>,
    #[serde(default)]
    verifier_result: Option<VerifierResult>,
    #[serde(default)]
    exception_info: Option<ExceptionInfo>,
    #[serde(default)]
    started_at: Option<String>,
    #[serde(default)]
    finished_at: Option<String>,
}

#[derive(Deserialize, Clone, PartialEq)]
struct AgentInfo {
    name: String,
    version: String,
    #[serde(default)]
    model_info: Option<ModelInfo>,
}

#[derive(Deserialize, Clone, PartialEq)]
struct ModelInfo {
    name: String,
    #[serde(default)]
    provider: Option<String>,
}

#[derive(Deserialize)]
struct AgentContext {
    #[serde(default)]
    cost_usd: Option<f64>,
}

#[derive(Deserialize)]
struct VerifierResult {
    #[serde(default)]
    rewards: Option<BTreeMap<String, f64>>,
}

#[derive(Deserialize)]
struct ExceptionInfo {
    exception_type: String,
}

/// `dir/result.json`, which every job and trial folder Harbor finished holds.
fn result_json(job: &Folder, dir: &Path, otherwise: &str) -> Result<PathBuf, ImportError> {
    let path = dir.join("result.json");
    if job.kind(&path)?.is_some() {
        return Ok(path);
    }
    Err(ImportError::Invalid { path: job.shown(dir), detail: format!("has no result.json: {otherwise}") })
}

/// Reads a JSON file, naming the field at fault when it does not fit.
fn read_json<T: DeserializeOwned>(job: &Folder, rel: &Path, what: &str) -> Result<T, ImportError> {
    let bytes = job.read(rel)?;
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." { String::new() } else { format!(" (at `{at}`)") };
        ImportError::Invalid { path: job.shown(rel), detail: format!("not {what}: {}{at}", e.inner()) }
    })
}

fn read_optional_json<T: DeserializeOwned>(
    job: &Folder,
    rel: &Path,
    what: &str,
) -> Result<Option<T>, ImportError> {
    if job.kind(rel)?.is_some() { read_json(job, rel, what).map(Some) } else { Ok(None) }
}

// ---------------------------------------------------------------- one trial

/// What a run folder's file is made of.
enum Content {
    Bytes(Vec<u8>),
    /// A file of the job folder, copied as it is.
    Copy(PathBuf),
    /// The agent's text logs, one after another with a header each.
    AgentLogs(Vec<PathBuf>),
}

/// A trial, judged and placed, before its attempt number is known.
struct Trial {
    /// Which of the jobs it belongs to.
    job: usize,
    /// Its `result.json`, as the user knows it.
    result_path: PathBuf,
    task: String,
    hint: Hint,
    started: Option<OffsetDateTime>,
    name: String,
    agent: AgentInfo,
    record: RunRecord,
    /// Artifact file name in the run folder → what it holds.
    files: Vec<(String, Content)>,
}

/// The RExBench task a Harbor task name stands for, and the hint condition the name
/// shows, if any: `rexbench/rexbench__cogs` → cogs; `rexbench-othello-hints` → othello
/// with hints.
pub fn task_of(task_name: &str) -> Option<(String, Option<Hint>)> {
    let name = task_name.rsplit('/').next().unwrap_or(task_name);
    let name = name.strip_prefix("rexbench__").or_else(|| name.strip_prefix("rexbench-")).unwrap_or(name);
    let (name, hint) = [("-none", Hint::None), ("-hints", Hint::Hints), ("-detailed", Hint::Detailed)]
        .into_iter()
        .find_map(|(suffix, hint)| name.strip_suffix(suffix).map(|n| (n, Some(hint))))
        .unwrap_or((name, None));
    let name = if name == "implicit-instructions" { "implicit-ins" } else { name };
    REXBENCH_TASKS.contains(&name).then(|| (name.to_owned(), hint))
}

/// Python's `isoformat()`: with an offset in newer jobs, naive in older ones (read as
/// UTC; a trial's two ends share their zone, so durations and order are right).
fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok().or_else(|| OffsetDateTime::parse(&format!("{s}Z"), &Rfc3339).ok())
}

fn time_field(
    path: &Path,
    field: &str,
    value: &Option<String>,
) -> Result<Option<OffsetDateTime>, ImportError> {
    value
        .as_deref()
        .map(|s| {
            parse_time(s).ok_or_else(|| ImportError::Invalid {
                path: path.to_owned(),
                detail: format!("`{field}` is `{s}`, not an ISO 8601 time"),
            })
        })
        .transpose()
}

/// The trial's reward: `verifier_result.rewards.reward`, or the verifier's reward file.
fn reward(
    job: &Folder,
    dir: &Path,
    result_path: &Path,
    verifier: &VerifierResult,
) -> Result<f64, ImportError> {
    if let Some(r) = verifier.rewards.as_ref().and_then(|r| r.get("reward")) {
        return Ok(*r);
    }
    let txt = dir.join("verifier/reward.txt");
    if let Some(bytes) = job.read_if_present(&txt)? {
        let text = String::from_utf8_lossy(&bytes);
        return text.trim().parse().map_err(|_| ImportError::Invalid {
            path: job.shown(&txt),
            detail: format!("`{}` is not a reward", text.trim()),
        });
    }
    let json = dir.join("verifier/reward.json");
    if let Some(rewards) = read_optional_json::<BTreeMap<String, f64>>(job, &json, "a reward file")? {
        return rewards.get("reward").copied().ok_or_else(|| ImportError::Invalid {
            path: job.shown(&json),
            detail: "has no `reward`".into(),
        });
    }
    Err(ImportError::Invalid {
        path: job.shown(result_path),
        detail: "`verifier_result.rewards` has no `reward`, and verifier/ holds no reward file".into(),
    })
}

/// `rel`, if something is there: checked now (a regular file within the limits,
/// beneath the job folder), copied when the run is written.
fn copy_if_present(job: &Folder, rel: &Path) -> Result<Option<Content>, ImportError> {
    if job.kind(rel)?.is_none() {
        return Ok(None);
    }
    job.open_file(rel, file_limit())?;
    Ok(Some(Content::Copy(rel.to_owned())))
}

/// Every file under `dir` (relative to the job folder), in path order. Anything
/// that is neither a file nor a folder is refused, as is a link out of the job folder.
fn files_under(job: &Folder, dir: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let mut out = Vec::new();
    if job.kind(dir)? != Some(Kind::Folder) {
        return Ok(out);
    }
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        for entry in job.entries(&at)? {
            match entry.kind {
                Kind::Folder => stack.push(entry.rel),
                Kind::File { .. } => out.push(entry.rel),
                Kind::Other(_) | Kind::LinkOutside => {
                    // Named as refused by the one place that says why.
                    job.open_file(&entry.rel, file_limit())?;
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The agent's patch, where the job collected exactly one into `artifacts/`: where it
/// is, and its bytes.
fn patch(job: &Folder, dir: &Path) -> Result<Option<(PathBuf, Vec<u8>)>, ImportError> {
    let artifacts = dir.join("artifacts");
    let found: Vec<PathBuf> = files_under(job, &artifacts)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "patch" || e == "diff"))
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some((one.clone(), job.read(one)?))),
        several => Err(ImportError::Invalid {
            path: job.shown(&artifacts),
            detail: format!(
                "holds {} patches ({}); keep only the agent's",
                several.len(),
                several
                    .iter()
                    .map(|p| p.strip_prefix(&artifacts).unwrap_or(p).display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

/// What a trial's `agent/` folder holds.
struct AgentFiles {
    /// Its files but the trajectory, for the agent log (text ones only, when written).
    logs: Vec<PathBuf>,
    /// `trajectory.json`, Harbor's ATIF.
    trajectory: Option<PathBuf>,
}

fn agent_files(job: &Folder, dir: &Path) -> Result<AgentFiles, ImportError> {
    let agent = dir.join("agent");
    let mut logs = Vec::new();
    let mut trajectory = None;
    for rel in files_under(job, &agent)? {
        job.open_file(&rel, file_limit())?;
        if rel.strip_prefix(&agent).is_ok_and(|r| r == Path::new("trajectory.json")) {
            trajectory = Some(rel);
        } else {
            logs.push(rel);
        }
    }
    Ok(AgentFiles { logs, trajectory })
}

/// Writes the agent's text logs one after another, each under a header, up to a bundle
/// artifact's size; a log that would pass it is left out with a line saying so. One
/// file is held at a time. Nothing is written when no log is text.
fn write_agent_logs(job: &Folder, logs: &[PathBuf], to: &Path) -> Result<(), ImportError> {
    let io = |source| ImportError::Io { path: to.to_owned(), source };
    let mut out: Option<fs::File> = None;
    let mut written = 0u64;
    for rel in logs {
        let bytes = job.read(rel)?;
        if std::str::from_utf8(&bytes).is_err() {
            continue;
        }
        let shown = rel.iter().skip(1).collect::<PathBuf>();
        let mut piece = format!("==> {} <==\n", shown.display()).into_bytes();
        if written + piece.len() as u64 + bytes.len() as u64 + 1 > file_limit() - 1024 {
            piece = format!(
                "==> {} ({} bytes) left out: the agent log would pass the {} MiB a bundle artifact may hold <==\n",
                shown.display(),
                bytes.len(),
                file_limit() / (1024 * 1024)
            )
            .into_bytes();
        } else {
            piece.extend_from_slice(&bytes);
            if !bytes.ends_with(b"\n") {
                piece.push(b'\n');
            }
        }
        if written + piece.len() as u64 > file_limit() {
            break;
        }
        let file = match &mut out {
            Some(f) => f,
            None => out.insert(fs::File::create(to).map_err(io)?),
        };
        file.write_all(&piece).map_err(io)?;
        written += piece.len() as u64;
    }
    Ok(())
}

/// What the import knows of a task: its card, the check it is judged by where known
/// (the card's public one, or the maintainers' gold), and the gold solution's files.
struct Known {
    card: crate::task::TaskCard,
    check: Option<benchmark::check::CheckSpec>,
    gold_files: Vec<String>,
}

/// The trial in `dir`, a folder of the job folder `job` (the `index`-th job).
fn read_trial(
    job: &Folder,
    index: usize,
    dir: &Path,
    opts: &Options,
    known: &BTreeMap<String, Known>,
) -> Result<Trial, ImportError> {
    let result_rel = result_json(job, dir, "the trial did not finish, or this is not a Harbor job folder")?;
    let t: TrialResult = read_json(job, &result_rel, "a Harbor trial result")?;
    let result_path = job.shown(&result_rel);
    let invalid = |detail: String| ImportError::Invalid { path: result_path.clone(), detail };
    let (task, shown) = task_of(&t.task_name).ok_or_else(|| {
        invalid(format!(
            "trial `{}` ran task `{}`, which is not a RExBench task ({})",
            t.trial_name,
            t.task_name,
            REXBENCH_TASKS.join(", ")
        ))
    })?;
    let hint = match (shown, opts.hint) {
        (Some(h), Some(given)) if h != given => {
            return Err(invalid(format!(
                "trial `{}` ran task `{}`, whose name says hint condition `{h}`, but --hint says `{given}`",
                t.trial_name, t.task_name
            )));
        }
        (Some(h), _) | (None, Some(h)) => h,
        (None, None) => {
            return Err(invalid(format!(
                "trial `{}`: task `{}` does not say which hint condition it ran; give --hint \
                 (none for the adapter's own tasks, which carry the no-hint instructions)",
                t.trial_name, t.task_name
            )));
        }
    };
    let started = time_field(&result_path, "started_at", &t.started_at)?;
    let finished = time_field(&result_path, "finished_at", &t.finished_at)?;

    let (out_rel, err_rel) = (dir.join("verifier/test-stdout.txt"), dir.join("verifier/test-stderr.txt"));
    let verifier_out = job.read_if_present(&out_rel)?;
    let verifier_err = job.read_if_present(&err_rel)?;
    let text =
        |b: &Option<Vec<u8>>| b.as_deref().map(String::from_utf8_lossy).unwrap_or_default().into_owned();
    let exception = t.exception_info.as_ref().map(|e| e.exception_type.clone());
    let mut log = String::from("Judged by Harbor's verifier when the job ran; imported, not re-run.\n");
    let (outcome, error_type) = match &t.verifier_result {
        Some(verifier) => {
            let r = reward(job, dir, &result_rel, verifier)?;
            log.push_str(&format!("reward: {r}\n"));
            if r == 1.0 {
                (Outcome::Success, exception.clone())
            } else if r == 0.0 {
                // The adapter's test.sh says so when the experiment itself failed.
                if text(&verifier_out).contains("run_docker.sh failed") {
                    let classified = crate::patch::classify_error(&text(&verifier_err), &text(&verifier_out));
                    (Outcome::ExecutionFailed, classified.or(exception.clone()))
                } else {
                    (Outcome::WrongResult, exception.clone())
                }
            } else {
                return Err(invalid(format!(
                    "trial `{}`: `verifier_result.rewards.reward` is {r}; RExBench rewards are 0 or 1",
                    t.trial_name
                )));
            }
        }
        None if exception.as_deref() == Some("VerifierTimeoutError") => {
            log.push_str("no reward: the verifier ran past its limit\n");
            (Outcome::Timeout, Some("Execution Timeout".to_owned()))
        }
        None => {
            log.push_str("no reward: the trial ended before the verifier judged it\n");
            (Outcome::InfraError, Some(exception.clone().unwrap_or_else(|| "no verifier result".to_owned())))
        }
    };
    if let Some(e) = &exception {
        log.push_str(&format!("exception: {e}\n"));
    }
    log.push_str(&format!("outcome: {outcome}\n"));

    let patch = patch(job, dir)?;
    let patch_text = patch.as_ref().map(|(_, bytes)| String::from_utf8_lossy(bytes)).unwrap_or_default();
    let changed = benchmark::diff::files_touched(&patch_text);
    let facts = known.get(&task);
    let gold = facts.map(|k| k.gold_files.as_slice()).unwrap_or_default();
    let duration_s = match (started, finished) {
        (Some(s), Some(f)) if f >= s => Some(((f - s).as_seconds_f64() * 1000.0).round() / 1000.0),
        _ => None,
    };
    let cost_usd = t.agent_result.as_ref().and_then(|a| a.cost_usd).filter(|c| c.is_finite() && *c >= 0.0);
    let mut record = RunRecord {
        outcome,
        error_type: error_type.map(|e| e.chars().take(100).collect()),
        file_recall: patch.as_ref().and_then(|_| crate::patch::file_recall(&changed, gold)),
        files_changed: (!changed.is_empty()).then_some(changed),
        duration_s,
        cost_usd,
        metrics: BTreeMap::new(),
        findings: Vec::new(),
    };
    let agent = agent_files(job, dir)?;
    // What the job kept shows: the patch, the agent's trajectory, and the trial's duration
    // (the agent's time and the verifier's together, so never shorter than the
    // experiment's).
    if let Some(k) = facts {
        let trajectory = match &agent.trajectory {
            Some(rel) => Some(job.read(rel)?),
            None => None,
        };
        let check = k.check.as_ref();
        record.findings =
            benchmark::integrity::run_findings(&k.card, check, &patch_text, trajectory.as_deref());
        benchmark::integrity::add_timing(&mut record.findings, &k.card, outcome, duration_s);
    }

    let mut files = vec![("checker_log.txt".to_owned(), Content::Bytes(log.into_bytes()))];
    // Only names and checks are kept here; the bytes are copied when the run is written.
    for (name, content) in [
        ("patch.diff", patch.filter(|(_, bytes)| !bytes.is_empty()).map(|(rel, _)| Content::Copy(rel))),
        ("agent_log.txt", (!agent.logs.is_empty()).then_some(Content::AgentLogs(agent.logs))),
        ("x-trajectory.json", agent.trajectory.map(Content::Copy)),
        ("stdout.txt", verifier_out.map(|_| Content::Copy(out_rel))),
        ("stderr.txt", verifier_err.map(|_| Content::Copy(err_rel))),
        ("x-trial.log", copy_if_present(job, &dir.join("trial.log"))?),
        ("x-exception.txt", copy_if_present(job, &dir.join("exception.txt"))?),
    ] {
        if let Some(content) = content {
            files.push((name.to_owned(), content));
        }
    }
    Ok(Trial {
        job: index,
        result_path,
        task,
        hint,
        started,
        name: t.trial_name,
        agent: t.agent_info,
        record,
        files,
    })
}

// ---------------------------------------------------------------- jobs

struct Job {
    folder: Folder,
    name: String,
    harbor_version: Option<String>,
    trials: Vec<Trial>,
}

/// The job in `dir`, the `index`-th of those imported.
fn read_job(
    dir: &Path,
    index: usize,
    opts: &Options,
    known: &BTreeMap<String, Known>,
) -> Result<Job, ImportError> {
    let folder = Folder::open(dir, "Harbor job folder")?;
    let job = &folder;
    let root = Path::new("");
    let result_rel = result_json(job, root, "not a Harbor job folder")?;
    let result: JobResult = read_json(job, &result_rel, "a Harbor job result")?;
    let unfinished = result.stats.n_running_trials + result.stats.n_pending_trials;
    if unfinished > 0 {
        return Err(ImportError::Invalid {
            path: job.shown(&result_rel),
            detail: format!(
                "the job has {unfinished} trials running or pending: import it once it has finished"
            ),
        });
    }
    let config: Option<JobConfig> = read_optional_json(job, Path::new("config.json"), "a Harbor job config")?;
    let lock: Option<JobLock> = read_optional_json(job, Path::new("lock.json"), "a Harbor job lock")?;
    let folder_name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = config.and_then(|c| c.job_name).unwrap_or(folder_name);
    let harbor_version = lock.and_then(|l| l.harbor).and_then(|h| h.version);
    let mut trials = Vec::new();
    let mut folders = Vec::new();
    for entry in job.entries(root)? {
        entry.check(job)?;
        if entry.kind == Kind::Folder {
            folders.push(entry.rel);
        }
    }
    folders.sort();
    for trial_dir in folders {
        trials.push(read_trial(job, index, &trial_dir, opts, known)?);
    }
    if trials.is_empty() {
        return Err(ImportError::Invalid { path: dir.to_owned(), detail: "holds no trials".into() });
    }
    Ok(Job { folder, name, harbor_version, trials })
}

/// A slug for the agent's id: `openhands` + `anthropic/claude-sonnet-4-5` →
/// `openhands-claude-sonnet-4-5`.
fn agent_id(agent: &AgentInfo) -> String {
    let model = agent.model_info.as_ref().map(|m| m.name.rsplit('/').next().unwrap_or(&m.name).to_owned());
    let raw =
        [Some(agent.name.clone()), model].into_iter().flatten().collect::<Vec<_>>().join("-").to_lowercase();
    let mut id = String::new();
    for c in raw.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' { c } else { '-' };
        if !(c == '-' && (id.is_empty() || id.ends_with('-'))) {
            id.push(c);
        }
    }
    let id: String = id.trim_end_matches('-').chars().take(64).collect();
    if id.is_empty() { "harbor-agent".to_owned() } else { id }
}

fn agent_of(info: &AgentInfo) -> Agent {
    let model = info.model_info.as_ref();
    Agent {
        id: agent_id(info),
        framework: info.name.clone(),
        framework_version: Some(info.version.clone()).filter(|v| !v.is_empty()),
        model: model.map_or_else(
            || "unknown".to_owned(),
            |m| m.name.rsplit('/').next().unwrap_or(&m.name).to_owned(),
        ),
        model_id: model.map(|m| match &m.provider {
            Some(p) if !m.name.contains('/') => format!("{p}/{}", m.name),
            _ => m.name.clone(),
        }),
        display_name: None,
        url: None,
    }
}

/// Imports the jobs into `opts.out`, which must not exist yet or be empty. Everything is
/// written into a folder beside it and moved into place at the end, so an error leaves
/// nothing behind.
pub fn import(opts: &Options) -> Result<Imported, ImportError> {
    if opts.jobs.is_empty() {
        return Err(ImportError::Setup("name at least one Harbor job folder".into()));
    }
    if opts.out.exists() && fs::read_dir(&opts.out).map(|mut d| d.next().is_some()).unwrap_or(true) {
        return Err(ImportError::Setup(format!(
            "{} already exists and is not empty: import into a new folder",
            opts.out.display()
        )));
    }
    let cards = load_all(&opts.tasks_dir)?;
    if let Some(missing) = REXBENCH_TASKS.iter().find(|t| !cards.contains_key(**t)) {
        return Err(ImportError::Setup(format!(
            "{} has no card for task `{missing}`: give --tasks with the RExBench task cards",
            opts.tasks_dir.display()
        )));
    }
    let mut known = BTreeMap::new();
    for task in REXBENCH_TASKS {
        let gold = load_gold(opts.gold.as_deref(), task)?;
        let card = cards[task].clone();
        let check = card.check.clone().or_else(|| gold.as_ref().and_then(|g| g.check.clone()));
        let gold_files = gold.map(|g| g.files).unwrap_or_default();
        known.insert(task.to_owned(), Known { card, check, gold_files });
    }
    let benchmark_cards = cards.values().filter(|c| REXBENCH_TASKS.contains(&c.id.as_str()));
    let digest = crate::taskset::task_set_digest(benchmark_cards)
        .map_err(|source| ImportError::Io { path: opts.tasks_dir.clone(), source })?;

    let mut jobs = Vec::with_capacity(opts.jobs.len());
    for (index, dir) in opts.jobs.iter().enumerate() {
        jobs.push(read_job(dir, index, opts, &known)?);
    }
    let first = &jobs[0].trials[0];
    for job in &jobs {
        if let Some(other) = job
            .trials
            .iter()
            .find(|t| t.agent.name != first.agent.name || t.agent.model_info != first.agent.model_info)
        {
            return Err(ImportError::Invalid {
                path: other.result_path.clone(),
                detail: format!(
                    "trial `{}` ran agent {}, but trial `{}` ran {}: a results folder holds one agent's runs",
                    other.name,
                    describe(&other.agent),
                    first.name,
                    describe(&first.agent)
                ),
            });
        }
    }
    let agent = agent_of(&first.agent);
    let versions: Vec<String> = {
        let mut v: Vec<String> = jobs
            .iter()
            .filter_map(|j| j.harbor_version.clone().or_else(|| opts.harbor_version.clone()))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let harness = match versions.as_slice() {
        [] => "harbor (version not recorded)".to_owned(),
        vs => format!("harbor {}", vs.join("/")),
    };
    let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    let source = format!("{harness}, {} {}", if names.len() == 1 { "job" } else { "jobs" }, names.join(", "));

    // Attempts count from 1 within a task and hint condition, in the order the trials started.
    let mut folders = Vec::with_capacity(jobs.len());
    let mut trials: Vec<Trial> = Vec::new();
    for job in jobs {
        folders.push(job.folder);
        trials.extend(job.trials);
    }
    trials.sort_by(|a, b| (&a.task, a.hint, a.started, &a.name).cmp(&(&b.task, b.hint, b.started, &b.name)));

    let parent = opts.out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|source| ImportError::Io { path: parent.to_owned(), source })?;
    let staging = tempfile::Builder::new()
        .prefix(".rexbench-import-")
        .tempdir_in(parent)
        .map_err(|source| ImportError::Io { path: parent.to_owned(), source })?;
    let write = |path: &Path, bytes: &[u8]| -> Result<(), ImportError> {
        fs::create_dir_all(path.parent().expect("has a parent"))
            .and_then(|()| fs::write(path, bytes))
            .map_err(|source| ImportError::Io { path: path.to_owned(), source })
    };
    let mut outcomes = BTreeMap::new();
    let mut attempt = 0;
    let mut previous: Option<(String, Hint)> = None;
    for trial in &trials {
        let key = (trial.task.clone(), trial.hint);
        attempt = if previous.as_ref() == Some(&key) { attempt + 1 } else { 1 };
        previous = Some(key);
        let dir = run_dir(staging.path(), &trial.task, trial.hint, attempt);
        write(&dir.join("run.json"), &serde_json::to_vec_pretty(&trial.record).expect("serializes"))?;
        let job = &folders[trial.job];
        for (name, content) in &trial.files {
            let to = dir.join(name);
            match content {
                Content::Bytes(bytes) => write(&to, bytes)?,
                Content::Copy(rel) => {
                    job.copy_to(rel, &to)?;
                }
                Content::AgentLogs(logs) => write_agent_logs(job, logs, &to)?,
            }
        }
        *outcomes.entry(trial.record.outcome).or_default() += 1;
    }
    let evaluation = Evaluation {
        benchmark: Benchmark {
            name: "RExBench".into(),
            version: "1.0".into(),
            task_set_digest: digest.to_hex(),
        },
        runner: Some(RunnerInfo {
            name: crate::pack::RUNNER_NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }),
        provenance: Some(Provenance::new(ProvenanceKind::Imported, Some(source.clone()))),
    };
    write(
        &staging.path().join("evaluation.json"),
        &serde_json::to_vec_pretty(&evaluation).expect("serializes"),
    )?;
    write(&staging.path().join("agent.toml"), agent_toml(&agent).as_bytes())?;

    if opts.out.exists() {
        fs::remove_dir(&opts.out).map_err(|source| ImportError::Io { path: opts.out.clone(), source })?;
    }
    let staged = staging.keep();
    fs::rename(&staged, &opts.out).map_err(|source| {
        let _ = fs::remove_dir_all(&staged);
        ImportError::Io { path: opts.out.clone(), source }
    })?;
    Ok(Imported { runs: trials.len(), outcomes, source, agent })
}

fn describe(agent: &AgentInfo) -> String {
    match &agent.model_info {
        Some(m) => format!("`{}` with model `{}`", agent.name, m.name),
        None => format!("`{}`", agent.name),
    }
}

/// The agent file `pack --agent` reads, from what Harbor recorded; edit it before packing.
fn agent_toml(agent: &Agent) -> String {
    let fields = toml::to_string(agent).expect("an agent is a TOML table");
    format!("# The agent as Harbor recorded it; check the names before `rexbench pack`.\n{fields}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_names_map_to_rexbench_tasks_and_hints() {
        assert_eq!(task_of("rexbench/rexbench__cogs"), Some(("cogs".into(), None)));
        assert_eq!(task_of("rexbench-othello"), Some(("othello".into(), None)));
        assert_eq!(task_of("org/rexbench__implicit-instructions"), Some(("implicit-ins".into(), None)));
        assert_eq!(task_of("rexbench-cogs-hints"), Some(("cogs".into(), Some(Hint::Hints))));
        assert_eq!(task_of("rexbench__winodict-detailed"), Some(("winodict".into(), Some(Hint::Detailed))));
        assert_eq!(task_of("rexbench/rexbench__swe-task"), None);
    }

    #[test]
    fn times_with_and_without_an_offset() {
        let naive = parse_time("2026-02-25T10:06:58.123456").unwrap();
        let utc = parse_time("2026-02-25T10:06:58.123456+00:00").unwrap();
        assert_eq!(naive, utc);
        assert_eq!(parse_time("2026-02-25T12:06:58+02:00").unwrap().unix_timestamp(), utc.unix_timestamp());
        assert!(parse_time("yesterday").is_none());
    }

    #[test]
    fn agent_ids_are_slugs() {
        let info = |name: &str, model: Option<&str>| AgentInfo {
            name: name.into(),
            version: "1.4.0".into(),
            model_info: model.map(|m| ModelInfo { name: m.into(), provider: Some("anthropic".into()) }),
        };
        assert_eq!(agent_id(&info("openhands", Some("claude-sonnet-4-5"))), "openhands-claude-sonnet-4-5");
        assert_eq!(
            agent_id(&info("Claude Code", Some("anthropic/Claude Opus 4.5"))),
            "claude-code-claude-opus-4.5"
        );
        assert!(bundle::is_slug(&agent_id(&info("!!", None))));
        let agent = agent_of(&info("openhands", Some("claude-sonnet-4-5")));
        assert_eq!(agent.model_id.as_deref(), Some("anthropic/claude-sonnet-4-5"));
        let parsed: Agent = toml::from_str(&agent_toml(&agent)).unwrap();
        assert_eq!(parsed, agent);
    }
}
