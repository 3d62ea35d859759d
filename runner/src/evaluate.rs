//! `rexbench evaluate`: apply each agent patch to a fresh copy of its task's codebase,
//! run the experiment under an executor, check the numbers, and write the results
//! directory that `rexbench pack` signs. Finished runs are never redone: an interrupted
//! evaluation resumes where it stopped.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bundle::{Benchmark, Outcome, RunnerInfo};

use crate::check::{CheckSpec, RunOutput};
use crate::exec::{Executor, Exit, Job};
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
    pub jobs: usize,
    pub executor: Executor,
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
}

/// One task, ready to evaluate runs of.
struct Prepared {
    card: TaskCard,
    codebase: PathBuf,
    check: CheckSpec,
    /// The task's gold folder, where its check came from there.
    gold_dir: Option<PathBuf>,
    gold_files: Vec<String>,
}

/// Set by Ctrl-C: finish nothing new, kill what runs, keep what is done.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

pub fn evaluate(opts: &Options) -> Result<Summary, EvalError> {
    let cards = load_all(&opts.tasks_dir)?;
    let runs = discover(&opts.outputs)?;
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
    let next = AtomicUsize::new(0);
    let summary = Mutex::new(Summary { skipped: done.len(), ..Summary::default() });
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
                    match evaluate_run(run, &tasks[&run.task], opts) {
                        Ok(Some(record)) => {
                            progress.finished(run, &record);
                            let mut s = summary.lock().unwrap();
                            s.evaluated += 1;
                            *s.outcomes.entry(record.outcome).or_default() += 1;
                            s.run_seconds += record.duration_s.unwrap_or(0.0);
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
    progress.done();
    if let Some(e) = failure.into_inner().unwrap() {
        return Err(e);
    }
    let summary = summary.into_inner().unwrap();
    if INTERRUPTED.load(Ordering::Relaxed) {
        let finished = summary.evaluated + summary.skipped;
        return Err(EvalError::Interrupted { done: finished, left: runs.len() - finished });
    }
    Ok(summary)
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

/// Evaluates one run into its results folder. `None`: interrupted, nothing recorded.
fn evaluate_run(run: &AgentRun, task: &Prepared, opts: &Options) -> Result<Option<RunRecord>, EvalError> {
    let io_at = |path: &Path| {
        let path = path.to_owned();
        move |source| EvalError::Io { path, source }
    };
    let final_dir = run_dir(&opts.out, &run.task, run.hint, run.attempt);
    let staging = opts.out.join(".staging").join(format!("{}-{}-{}", run.task, run.hint, run.attempt));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging).map_err(io_at(&staging))?;

    let patch_text = fs::read(&run.patch).map_err(io_at(&run.patch))?;
    fs::write(staging.join("patch.diff"), &patch_text).map_err(io_at(&staging))?;
    if let Some(log) = &run.agent_log {
        fs::copy(log, staging.join("agent_log.txt")).map_err(io_at(log))?;
    }
    if let Some(trajectory) = &run.trajectory {
        fs::copy(trajectory, staging.join("x-trajectory.json")).map_err(io_at(trajectory))?;
    }
    let patch_text = String::from_utf8_lossy(&patch_text);
    let files = crate::patch::files_touched(&patch_text);
    let mut record = RunRecord {
        outcome: Outcome::EmptyPatch,
        error_type: None,
        file_recall: crate::patch::file_recall(&files, &task.gold_files),
        files_changed: (!files.is_empty()).then_some(files),
        duration_s: None,
        cost_usd: run.cost_usd,
        metrics: BTreeMap::new(),
    };

    let scratch = tempfile::Builder::new()
        .prefix(&format!("rexbench-{}-", run.task))
        .tempdir()
        .map_err(io_at(Path::new("scratch directory")))?;
    let workdir = scratch.path().join("codebase");
    if crate::patch::is_empty(&patch_text) {
        record.error_type = Some("empty patch".into());
    } else if let Err(e) = copy_tree(&task.codebase, &workdir) {
        record.outcome = Outcome::InfraError;
        record.error_type = Some("codebase copy failed".into());
        fs::write(staging.join("x-runner.txt"), format!("copying {}: {e}\n", task.codebase.display()))
            .map_err(io_at(&staging))?;
    } else if !apply_patch(&run.patch, &workdir, &staging)? {
        record.outcome = Outcome::PatchFailed;
        record.error_type = Some("patch failed".into());
    } else {
        let (stdout, stderr) = (staging.join("stdout.txt"), staging.join("stderr.txt"));
        let job = Job {
            workdir: &workdir,
            command: &task.card.evaluation.command,
            stdout: &stdout,
            stderr: &stderr,
            timeout: Duration::from_secs_f64(task.card.evaluation.timeout_s),
            name: &format!("rexbench-{}-{}-{}-{}", run.task, run.hint, run.attempt, std::process::id()),
        };
        let started = Instant::now();
        let exit = opts.executor.run(&job, &INTERRUPTED);
        record.duration_s = Some(round_ms(started.elapsed().as_secs_f64()));
        match exit {
            Err(e) => {
                record.outcome = Outcome::InfraError;
                record.error_type = Some("executor failed".into());
                fs::write(staging.join("x-runner.txt"), format!("{e}\n")).map_err(io_at(&staging))?;
            }
            Ok(Exit::Cancelled) => {
                let _ = fs::remove_dir_all(&staging);
                return Ok(None);
            }
            Ok(Exit::TimedOut) => {
                record.outcome = Outcome::Timeout;
                record.error_type = Some("Execution Timeout".into());
            }
            Ok(Exit::Finished { success: false, .. }) => {
                record.outcome = Outcome::ExecutionFailed;
                let read = |p: &Path| String::from_utf8_lossy(&fs::read(p).unwrap_or_default()).into_owned();
                record.error_type = crate::patch::classify_error(&read(&stderr), &read(&stdout));
            }
            Ok(Exit::Finished { success: true, .. }) => {
                let report = task.check.run(RunOutput {
                    task_dir: &task.card.dir,
                    gold_dir: task.gold_dir.as_deref(),
                    workdir: &workdir,
                    stdout: &stdout,
                    stderr: &stderr,
                });
                record.outcome = if report.passed { Outcome::Success } else { Outcome::WrongResult };
                record.metrics = report.metrics;
                fs::write(staging.join("checker_log.txt"), report.log).map_err(io_at(&staging))?;
            }
        }
    }
    let run_json = serde_json::to_vec_pretty(&record).expect("serializes");
    fs::write(staging.join("run.json"), run_json).map_err(io_at(&staging))?;
    // The run becomes visible whole: a folder without run.json is never left at its place.
    let _ = fs::remove_dir_all(&final_dir);
    fs::create_dir_all(final_dir.parent().expect("has a parent")).map_err(io_at(&final_dir))?;
    fs::rename(&staging, &final_dir).map_err(io_at(&final_dir))?;
    Ok(Some(record))
}

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

/// `git apply`, falling back to `patch -p1`. Their messages go to x-apply.txt.
fn apply_patch(patch: &Path, workdir: &Path, staging: &Path) -> Result<bool, EvalError> {
    let patch = patch.canonicalize().map_err(|source| EvalError::Io { path: patch.to_owned(), source })?;
    let ceiling = workdir.parent().unwrap_or(workdir);
    let attempts: [(&str, Vec<&std::ffi::OsStr>); 2] = [
        ("git", vec!["apply".as_ref(), "--whitespace=nowarn".as_ref(), patch.as_os_str()]),
        (
            "patch",
            vec!["-p1".as_ref(), "--batch".as_ref(), "--forward".as_ref(), "-i".as_ref(), patch.as_os_str()],
        ),
    ];
    let mut log = String::new();
    for (program, args) in attempts {
        // Outside any repository, so that `git apply` patches relative to the codebase.
        let out = Command::new(program)
            .args(&args)
            .current_dir(workdir)
            .env("GIT_CEILING_DIRECTORIES", ceiling)
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(o) if o.status.success() => return Ok(true),
            Ok(o) => {
                log.push_str(&format!("{program}: {}\n", o.status));
                log.push_str(&String::from_utf8_lossy(&o.stdout));
                log.push_str(&String::from_utf8_lossy(&o.stderr));
            }
            Err(e) => log.push_str(&format!("{program}: cannot run: {e}\n")),
        }
    }
    fs::write(staging.join("x-apply.txt"), log)
        .map_err(|source| EvalError::Io { path: staging.to_owned(), source })?;
    Ok(false)
}

/// Copies a directory tree, keeping permissions and symbolic links.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let ty = entry.file_type()?;
        if ty.is_dir() {
            copy_tree(&src, &dst)?;
        } else if ty.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(fs::read_link(&src)?, &dst)?;
        } else {
            fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EvalError> {
    let io = |source| EvalError::Io { path: path.to_owned(), source };
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    fs::write(tmp.path(), bytes).map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// A progress bar on a terminal; one line per finished run otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: usize,
    count: AtomicUsize,
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
                    "{bar:30} {pos}/{len} runs, {elapsed} elapsed, ~{eta} left  {msg}",
                )
                .expect("a valid template"),
            );
            bar
        });
        Progress { bar, total: todo, count: AtomicUsize::new(0) }
    }

    fn finished(&self, run: &AgentRun, record: &RunRecord) {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        let line = format!(
            "{}: {}{}",
            run.label(),
            record.outcome,
            record.error_type.as_ref().map(|e| format!(" ({e})")).unwrap_or_default()
        );
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(line);
            }
            None => eprintln!("[{n}/{}] {line}", self.total),
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
