//! `rexbench evaluate`: apply each agent patch to a fresh copy of its task's codebase,
//! run the experiment under an executor, check the numbers, and write the results
//! directory that `rexbench pack` signs. Finished runs are never redone: an interrupted
//! evaluation resumes where it stopped.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use benchmark::confined::{self, Folder, file_limit};
use bundle::{Benchmark, Outcome, RunnerInfo};

use crate::check::{CheckSpec, ResultFiles, RunOutput};
use crate::exec::Executor;
use crate::experiment::{Experiment, Ran};
use crate::outputs::{AgentRun, discover};
use crate::results::{Evaluation, RunRecord, run_dir};
use crate::task::{Gold, TaskCard, TaskError, load_all, load_gold};
use crate::taskset::task_set_digest;

#[derive(Debug, Clone)]
pub struct Options {
    pub tasks_dir: PathBuf,
    pub outputs: PathBuf,
    pub out: PathBuf,
    pub gold: Option<PathBuf>,
    pub codebases: Option<PathBuf>,
    /// Runs at once on this machine (the local executor).
    pub jobs: usize,
    /// How the task's command runs: as a child, or in a container.
    pub executor: Executor,
    /// Hand the runs to Slurm instead of running them here.
    pub slurm: Option<crate::slurm::Options>,
    /// The task cards are the ones built into the binary, unpacked where only this
    /// process sees them: Slurm jobs get their codebases from a shared copy.
    pub builtin_tasks: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Task(#[from] TaskError),
    #[error(transparent)]
    Outputs(#[from] crate::outputs::OutputsError),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{0}")]
    Setup(String),
    #[error("--executor slurm: {0}")]
    Slurm(String),
    #[error("interrupted: {done} runs finished, {left} left; run the same command again to resume")]
    Interrupted { done: usize, left: usize },
}

/// What an evaluation did.
#[derive(Debug, Default)]
pub struct Summary {
    pub evaluated: usize,
    pub skipped: usize,
    pub outcomes: BTreeMap<Outcome, usize>,
    /// The experiments' own wall time, summed.
    pub run_seconds: f64,
    /// Successes that carry an integrity finding.
    pub flagged: usize,
}

/// One task, ready to evaluate runs of.
pub(crate) struct Prepared {
    pub card: TaskCard,
    pub codebase: PathBuf,
    check: CheckSpec,
    /// The task's gold folder, where its check came from there.
    gold_dir: Option<PathBuf>,
    gold_files: Vec<String>,
}

impl Prepared {
    /// Where the task's check reads result files.
    pub(crate) fn result_files(&self) -> ResultFiles {
        self.check.result_files()
    }
}

/// Set by Ctrl-C: finish nothing new, kill what runs, keep what is done.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

pub fn evaluate(opts: &Options) -> Result<Summary, EvalError> {
    let cards = load_all(&opts.tasks_dir)?;
    // The agent wrote this folder: it is read beneath its handle only, and every run's
    // files are checked before anything is written.
    let outputs =
        Folder::open(&opts.outputs, "outputs folder").map_err(crate::outputs::OutputsError::from)?;
    let crate::outputs::Discovered { runs, layouts } = discover(&outputs)?;
    for layout in &layouts {
        eprintln!("{}: outputs in {layout}", opts.outputs.display());
    }
    if runs.is_empty() {
        return Err(EvalError::Setup(format!("no agent outputs found under {}", opts.outputs.display())));
    }

    // Refuse up front anything that would fail every run of a task.
    let mut tasks: BTreeMap<String, Prepared> = BTreeMap::new();
    for run in &runs {
        if tasks.contains_key(&run.task) {
            continue;
        }
        let card = cards.get(&run.task).ok_or_else(|| TaskError::Unknown(run.task.clone()))?.clone();
        tasks.insert(run.task.clone(), prepare(card, opts)?);
    }
    let benchmark = benchmark_for(&cards, &tasks)?;
    // A cluster that would refuse the jobs is found out before anything is written.
    let cluster = match &opts.slurm {
        Some(slurm) => Some(crate::slurm::Cluster::check(slurm, tasks.values())?),
        None => {
            crate::slurm::refuse_local(&opts.out)?;
            None
        }
    };

    fs::create_dir_all(&opts.out).map_err(|source| EvalError::Io { path: opts.out.clone(), source })?;
    let evaluation = Evaluation {
        benchmark,
        runner: Some(RunnerInfo {
            name: crate::pack::RUNNER_NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }),
        provenance: None,
    };
    write_evaluation(&opts.out, &evaluation)?;

    let (done, todo): (Vec<&AgentRun>, Vec<&AgentRun>) =
        runs.iter().partition(|r| run_dir(&opts.out, &r.task, r.hint, r.attempt).join("run.json").is_file());
    let progress = Progress::new(todo.len(), done.len());
    let mut summary = Summary { skipped: done.len(), ..Summary::default() };
    let result = match cluster {
        Some(cluster) => cluster.evaluate(&todo, &tasks, &outputs, opts, &progress, &mut summary),
        None => evaluate_here_all(&todo, &tasks, &outputs, opts, &progress, &mut summary),
    };
    progress.done();
    result?;
    if INTERRUPTED.load(Ordering::Relaxed) {
        let finished = summary.evaluated + summary.skipped;
        return Err(EvalError::Interrupted { done: finished, left: runs.len() - finished });
    }
    Ok(summary)
}

impl Summary {
    pub(crate) fn add(&mut self, record: &RunRecord) {
        self.evaluated += 1;
        *self.outcomes.entry(record.outcome).or_default() += 1;
        self.run_seconds += record.duration_s.unwrap_or(0.0);
        self.flagged += usize::from(record.outcome == Outcome::Success && !record.findings.is_empty());
    }
}

/// The local executor: `--jobs` threads taking runs in turn.
fn evaluate_here_all(
    todo: &[&AgentRun],
    tasks: &BTreeMap<String, Prepared>,
    outputs: &Folder,
    opts: &Options,
    progress: &Progress,
    summary: &mut Summary,
) -> Result<(), EvalError> {
    let next = AtomicUsize::new(0);
    let shared = Mutex::new(std::mem::take(summary));
    let failure: Mutex<Option<EvalError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..opts.jobs.max(1) {
            scope.spawn(|| {
                loop {
                    if INTERRUPTED.load(Ordering::Relaxed) || failure.lock().unwrap().is_some() {
                        return;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(run) = todo.get(i) else { return };
                    match evaluate_here(run, &tasks[&run.task], outputs, opts) {
                        Ok(Some(record)) => {
                            progress.finished(run, &record);
                            shared.lock().unwrap().add(&record);
                        }
                        Ok(None) => return,
                        Err(e) => {
                            failure.lock().unwrap().get_or_insert(e);
                            return;
                        }
                    }
                }
            });
        }
    });
    *summary = shared.into_inner().unwrap();
    failure.into_inner().unwrap().map_or(Ok(()), Err)
}

fn prepare(mut card: TaskCard, opts: &Options) -> Result<Prepared, EvalError> {
    card.dir = card.dir.canonicalize().map_err(|source| EvalError::Io { path: card.dir.clone(), source })?;
    let gold: Gold = load_gold(opts.gold.as_deref(), &card.id)?.unwrap_or_default();
    let gold_dir = match (&card.check, &gold.check) {
        (None, Some(_)) => {
            Some(gold.dir.canonicalize().map_err(|source| EvalError::Io { path: gold.dir.clone(), source })?)
        }
        _ => None,
    };
    let check = card.check.clone().or(gold.check).ok_or_else(|| TaskError::NoGold(card.id.clone()))?;
    let codebase = match (&card.evaluation.codebase, &opts.codebases) {
        (Some(rel), _) => card.dir.join(rel),
        (None, Some(dir)) => dir.join(&card.id),
        (None, None) => {
            return Err(EvalError::Setup(format!(
                "task `{}` has no codebase in its card: give --codebases DIR with {}/ in it",
                card.id, card.id
            )));
        }
    };
    if !codebase.is_dir() {
        return Err(EvalError::Setup(format!(
            "task `{}`: codebase {} is not a directory",
            card.id,
            codebase.display()
        )));
    }
    Ok(Prepared { card, codebase, check, gold_dir, gold_files: gold.files })
}

/// The benchmark the evaluated tasks belong to: the RExBench tasks, or the examples.
/// The digest covers the whole set, so results on a subset still rank together.
fn benchmark_for(
    cards: &BTreeMap<String, TaskCard>,
    tasks: &BTreeMap<String, Prepared>,
) -> Result<Benchmark, EvalError> {
    let is_example = |c: &TaskCard| c.dir.parent().and_then(Path::file_name).is_some_and(|n| n == "examples");
    let examples = tasks.values().filter(|t| is_example(&t.card)).count();
    if examples != 0 && examples != tasks.len() {
        return Err(EvalError::Setup(
            "the outputs mix example tasks with benchmark tasks: evaluate them separately".into(),
        ));
    }
    let set = cards.values().filter(|c| is_example(c) == (examples != 0));
    let digest =
        task_set_digest(set).map_err(|source| EvalError::Io { path: PathBuf::from("tasks"), source })?;
    let name = if examples != 0 { "RExBench examples" } else { "RExBench" };
    Ok(Benchmark { name: name.into(), version: "1.0".into(), task_set_digest: digest.to_hex() })
}

fn write_evaluation(out: &Path, evaluation: &Evaluation) -> Result<(), EvalError> {
    let path = out.join("evaluation.json");
    if let Ok(bytes) = fs::read(&path) {
        let existing: Evaluation = serde_json::from_slice(&bytes)
            .map_err(|e| EvalError::Setup(format!("{}: {e}", path.display())))?;
        if let Some(p) = existing.provenance.as_ref().filter(|p| p.kind != bundle::ProvenanceKind::Evaluated)
        {
            return Err(EvalError::Setup(format!(
                "{} holds {} results ({}); evaluate into a new --out directory",
                out.display(),
                p.kind,
                p.source.as_deref().unwrap_or("no source")
            )));
        }
        if existing.benchmark != evaluation.benchmark {
            return Err(EvalError::Setup(format!(
                "{} holds results for another task set ({} {} {}); use a new --out directory",
                out.display(),
                existing.benchmark.name,
                existing.benchmark.version,
                existing.benchmark.task_set_digest
            )));
        }
        return Ok(());
    }
    write_atomically(&path, &serde_json::to_vec_pretty(evaluation).expect("serializes"))
}

/// A run's results folder in the making, `out/.staging/<task>-<hint>-<attempt>`: the
/// agent's evidence is copied in first, the experiment's after, and the whole folder
/// becomes the run's in one rename.
pub(crate) struct Staged {
    pub dir: PathBuf,
    pub record: RunRecord,
    /// Nothing to run: the patch changes nothing.
    pub empty: bool,
}

pub(crate) fn io_at(path: &Path) -> impl FnOnce(io::Error) -> EvalError + use<> {
    let path = path.to_owned();
    move |source| EvalError::Io { path, source }
}

/// Starts a run's results: its staging folder with the patch, the agent's log and
/// trajectory (read beneath the outputs folder only), and the record as far as the
/// patch alone decides it. The experiment applies the staged copy of the patch.
pub(crate) fn stage(
    run: &AgentRun,
    task: &Prepared,
    outputs: &Folder,
    out: &Path,
) -> Result<Staged, EvalError> {
    let dir = out.join(".staging").join(format!("{}-{}-{}", run.task, run.hint, run.attempt));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(io_at(&dir))?;
    let refused = |refused| {
        let _ = fs::remove_dir_all(&dir);
        EvalError::Outputs(crate::outputs::OutputsError::Refused { run: Some(run.label()), refused })
    };
    let patch_text = outputs.read(&run.patch).map_err(refused)?;
    fs::write(dir.join("patch.diff"), &patch_text).map_err(io_at(&dir))?;
    if let Some(log) = &run.agent_log {
        outputs.copy_to(log, &dir.join("agent_log.txt")).map_err(refused)?;
    }
    // Read once: staged as the run's artifact, and checked for integrity findings.
    let trajectory_bytes = match &run.trajectory {
        Some(trajectory) => {
            let bytes = outputs.read(trajectory).map_err(refused)?;
            fs::write(dir.join("x-trajectory.json"), &bytes).map_err(io_at(&dir))?;
            Some(bytes)
        }
        None => None,
    };
    let patch_text = String::from_utf8_lossy(&patch_text);
    let files = crate::patch::files_touched(&patch_text);
    let empty = crate::patch::is_empty(&patch_text);
    let record = RunRecord {
        outcome: Outcome::EmptyPatch,
        error_type: empty.then(|| "empty patch".into()),
        file_recall: crate::patch::file_recall(&files, &task.gold_files),
        files_changed: (!files.is_empty()).then_some(files),
        duration_s: None,
        cost_usd: run.cost_usd,
        metrics: BTreeMap::new(),
        findings: benchmark::integrity::run_findings(
            &task.card,
            Some(&task.check),
            &patch_text,
            trajectory_bytes.as_deref(),
        ),
    };
    Ok(Staged { dir, record, empty })
}

/// Judges what an experiment came to (its logs already in the staging folder, its
/// patched codebase at `workdir`) and makes the run's results folder.
pub(crate) fn finish(
    run: &AgentRun,
    task: &Prepared,
    out: &Path,
    mut staged: Staged,
    ran: Option<Ran>,
    workdir: &Path,
) -> Result<RunRecord, EvalError> {
    let staging = &staged.dir;
    let record = &mut staged.record;
    let note =
        |text: &str| fs::write(staging.join("x-runner.txt"), format!("{text}\n")).map_err(io_at(staging));
    match ran {
        None => {}
        Some(Ran::CopyFailed { message }) => {
            record.outcome = Outcome::InfraError;
            record.error_type = Some("codebase copy failed".into());
            note(&message)?;
        }
        Some(Ran::PatchFailed) => {
            record.outcome = Outcome::PatchFailed;
            record.error_type = Some("patch failed".into());
        }
        Some(Ran::ExecutorFailed { message, duration_s }) => {
            record.outcome = Outcome::InfraError;
            record.error_type = Some("executor failed".into());
            record.duration_s = Some(duration_s);
            note(&message)?;
        }
        Some(Ran::Cancelled) => unreachable!("a cancelled experiment is never judged"),
        Some(Ran::TimedOut { duration_s }) => {
            record.outcome = Outcome::Timeout;
            record.error_type = Some("Execution Timeout".into());
            record.duration_s = Some(duration_s);
        }
        Some(Ran::Finished { success: false, duration_s, .. }) => {
            record.outcome = Outcome::ExecutionFailed;
            record.duration_s = Some(duration_s);
            // The end of each log, where a traceback is; the experiment chose their size.
            let read = |p: &Path| {
                let tail = confined::read_file_tail(p, file_limit(), "run's logs").unwrap_or_default();
                String::from_utf8_lossy(&tail).into_owned()
            };
            record.error_type = crate::patch::classify_error(
                &read(&staging.join("stderr.txt")),
                &read(&staging.join("stdout.txt")),
            );
        }
        Some(Ran::Finished { success: true, duration_s, before, .. }) => {
            record.duration_s = Some(duration_s);
            let report = task.check.run(RunOutput {
                task_dir: &task.card.dir,
                gold_dir: task.gold_dir.as_deref(),
                workdir,
                stdout: &staging.join("stdout.txt"),
                stderr: &staging.join("stderr.txt"),
            });
            record.outcome = if report.passed { Outcome::Success } else { Outcome::WrongResult };
            record.metrics = report.metrics;
            if report.passed {
                let results = task.result_files();
                let (base, after) = (results.snapshot(&task.codebase), results.snapshot(workdir));
                benchmark::integrity::add_results_before_run(&mut record.findings, &base, &before, &after);
            }
            fs::write(staging.join("checker_log.txt"), report.log).map_err(io_at(staging))?;
        }
    }
    // The patch's findings were made when it was staged; an experiment that ran to its
    // end adds what its duration shows.
    benchmark::integrity::add_timing(&mut record.findings, &task.card, record.outcome, record.duration_s);
    place(run, out, staged)
}

/// Writes run.json and moves the staging folder to the run's place.
pub(crate) fn place(run: &AgentRun, out: &Path, staged: Staged) -> Result<RunRecord, EvalError> {
    let final_dir = run_dir(out, &run.task, run.hint, run.attempt);
    let run_json = serde_json::to_vec_pretty(&staged.record).expect("serializes");
    fs::write(staged.dir.join("run.json"), run_json).map_err(io_at(&staged.dir))?;
    // The run becomes visible whole: a folder without run.json is never left at its place.
    let _ = fs::remove_dir_all(&final_dir);
    fs::create_dir_all(final_dir.parent().expect("has a parent")).map_err(io_at(&final_dir))?;
    fs::rename(&staged.dir, &final_dir).map_err(io_at(&final_dir))?;
    Ok(staged.record)
}

/// Evaluates one run here. `None`: interrupted, nothing recorded.
fn evaluate_here(
    run: &AgentRun,
    task: &Prepared,
    outputs: &Folder,
    opts: &Options,
) -> Result<Option<RunRecord>, EvalError> {
    let staged = stage(run, task, outputs, &opts.out)?;
    let scratch = tempfile::Builder::new()
        .prefix(&format!("rexbench-{}-", run.task))
        .tempdir()
        .map_err(io_at(Path::new("scratch directory")))?;
    let workdir = scratch.path().join("codebase");
    let ran = if staged.empty {
        None
    } else {
        let experiment = Experiment {
            codebase: &task.codebase,
            patch: &staged.dir.join("patch.diff"),
            command: &task.card.evaluation.command,
            timeout: Duration::from_secs_f64(task.card.evaluation.timeout_s),
            executor: &opts.executor,
            name: &format!("rexbench-{}-{}-{}-{}", run.task, run.hint, run.attempt, std::process::id()),
            results: &task.result_files(),
        };
        match experiment.run(&workdir, &staged.dir, &INTERRUPTED).map_err(io_at(&staged.dir))? {
            Ran::Cancelled => {
                let _ = fs::remove_dir_all(&staged.dir);
                return Ok(None);
            }
            ran => Some(ran),
        }
    };
    finish(run, task, &opts.out, staged, ran, &workdir).map(Some)
}

/// Writes a file whole or not at all: readers see the old one, or none, until it is done.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EvalError> {
    let io = |source| EvalError::Io { path: path.to_owned(), source };
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    fs::write(tmp.path(), bytes).map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// A progress bar on a terminal; one line per finished run otherwise. Under Slurm both
/// also say how many runs are queued and running.
pub(crate) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: usize,
    count: AtomicUsize,
    /// Slurm's queue: runs pending, runs running.
    queue: Mutex<Option<(usize, usize)>>,
}

impl Progress {
    fn new(todo: usize, skipped: usize) -> Progress {
        if skipped > 0 {
            eprintln!("{skipped} runs already finished: not running them again");
        }
        let bar = io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(todo as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} runs, {elapsed} elapsed, ~{eta} left  {prefix}{msg}",
                )
                .expect("a valid template"),
            );
            bar
        });
        Progress { bar, total: todo, count: AtomicUsize::new(0), queue: Mutex::new(None) }
    }

    /// Slurm's counts of this evaluation's jobs.
    pub(crate) fn queue(&self, queued: usize, running: usize) {
        let mut last = self.queue.lock().unwrap();
        if *last == Some((queued, running)) {
            return;
        }
        *last = Some((queued, running));
        match &self.bar {
            Some(bar) => bar.set_prefix(format!("{queued} queued, {running} running  ")),
            None => eprintln!("slurm: {queued} queued, {running} running"),
        }
    }

    pub(crate) fn finished(&self, run: &AgentRun, record: &RunRecord) {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        let checks: Vec<&str> = record.findings.iter().map(|f| f.check.as_str()).collect();
        let line = format!(
            "{}: {}{}{}",
            run.label(),
            record.outcome,
            record.error_type.as_ref().map(|e| format!(" ({e})")).unwrap_or_default(),
            if checks.is_empty() { String::new() } else { format!(" — flagged: {}", checks.join(", ")) }
        );
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(line);
            }
            None => eprintln!("[{n}/{}] {line}", self.total),
        }
    }

    /// A message that is not a run's result.
    pub(crate) fn say(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
