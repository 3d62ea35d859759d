//! `rexbench evaluate`: apply each agent patch to a fresh copy of its task's codebase,
//! run the experiment under an executor, check the numbers, and write the results
//! directory that `rexbench pack` signs. Finished runs are never redone: an interrupted
//! evaluation resumes where it stopped. This is the orchestration: it prepares the
//! tasks, chooses the executor (runs here, or `slurm`'s jobs), and hands each run to
//! `run`, which both executors share.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use benchmark::confined::Folder;
use bundle::{Benchmark, RunnerInfo};

/// What stops an evaluation: the runner's one error type.
pub use crate::Error as EvalError;
use crate::Error;
use crate::exec::Executor;
use crate::experiment::{Experiment, Ran};
use crate::outputs::{AgentRun, discover};
use crate::results::{Evaluation, RunRecord, run_dir};
pub use crate::run::{INTERRUPTED, Summary};
use crate::run::{Prepared, Progress, Setting, finish, stage, write_atomically};
use crate::sandbox::Confinement;
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
    /// Whether the local executor runs each experiment in a sandbox (always, but for
    /// `evaluate --unsandboxed`).
    pub confinement: Confinement,
    /// Hand the runs to Slurm instead of running them here.
    pub slurm: Option<crate::slurm::Options>,
    /// The task cards are the ones built into the binary, unpacked where only this
    /// process sees them: Slurm jobs get their codebases from a shared copy.
    pub builtin_tasks: bool,
    /// Evaluate on a held-out variant of its task instead (`rexbench reproduce`, spec
    /// §4l): the runs of that task on its codebase with the variant's files in place,
    /// judged by the variant's check.
    pub heldout: Option<HeldOutRun>,
}

/// A held-out evaluation: the variant, and where its codebase is made (once).
#[derive(Debug, Clone)]
pub struct HeldOutRun {
    pub variant: benchmark::heldout::Variant,
    pub codebase: PathBuf,
}

pub fn evaluate(opts: &Options) -> Result<Summary, Error> {
    let cards = load_all(&opts.tasks_dir)?;
    // The agent wrote this folder: it is read beneath its handle only, and every run's
    // files are checked before anything is written.
    let outputs = Folder::open(&opts.outputs, "outputs folder").map_err(crate::Error::from)?;
    let crate::outputs::Discovered { runs, layouts } = discover(&outputs)?;
    for layout in &layouts {
        eprintln!("{}: outputs in {layout}", opts.outputs.display());
    }
    if runs.is_empty() {
        return Err(Error::Setup(format!("no agent outputs found under {}", opts.outputs.display())));
    }

    if let Some(h) = &opts.heldout
        && let Some(other) = runs.iter().find(|r| r.task != h.variant.task)
    {
        return Err(Error::Setup(format!(
            "the outputs hold runs of task `{}`: an evaluation on a held-out variant of `{}` is of that task's runs only",
            other.task, h.variant.task
        )));
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
    let benchmark = benchmark_for(&cards, tasks.values().map(|t| &t.card))?;
    // A cluster that would refuse the jobs is found out before anything is written.
    let cluster = match &opts.slurm {
        Some(slurm) => Some(crate::slurm::Cluster::check(slurm, tasks.values())?),
        None => {
            crate::slurm::refuse_local(&opts.out)?;
            None
        }
    };

    fs::create_dir_all(&opts.out).map_err(|source| Error::Io { path: opts.out.clone(), source })?;
    let evaluation = Evaluation {
        benchmark,
        runner: Some(RunnerInfo {
            name: crate::pack::RUNNER_NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }),
        provenance: None,
        public_checks: Some(cards.values().filter(|c| !c.check_is_private()).map(|c| c.id.clone()).collect()),
        heldout: opts.heldout.as_ref().map(|h| h.variant.digest.to_hex()),
    };
    write_evaluation(&opts.out, &evaluation)?;

    let (done, todo): (Vec<&AgentRun>, Vec<&AgentRun>) =
        runs.iter().partition(|r| run_dir(&opts.out, &r.task, r.hint, r.attempt).join("run.json").is_file());
    let progress = Progress::new(todo.len(), done.len());
    let mut summary = Summary { skipped: done.len(), ..Summary::default() };
    let result = match cluster {
        Some(cluster) => {
            let setting = Setting {
                out: &opts.out,
                executor: &opts.executor,
                confinement: &opts.confinement,
                builtin_tasks: opts.builtin_tasks,
            };
            cluster.evaluate(&todo, &tasks, &outputs, &setting, &progress, &mut summary)
        }
        None => evaluate_here_all(&todo, &tasks, &outputs, opts, &progress, &mut summary),
    };
    progress.done();
    result?;
    if INTERRUPTED.load(Ordering::Relaxed) {
        let finished = summary.evaluated + summary.skipped;
        return Err(Error::Interrupted { done: finished, left: runs.len() - finished });
    }
    Ok(summary)
}

/// The local executor: `--jobs` threads taking runs in turn.
fn evaluate_here_all(
    todo: &[&AgentRun],
    tasks: &BTreeMap<String, Prepared>,
    outputs: &Folder,
    opts: &Options,
    progress: &Progress,
    summary: &mut Summary,
) -> Result<(), Error> {
    let next = AtomicUsize::new(0);
    let shared = Mutex::new(std::mem::take(summary));
    let failure: Mutex<Option<Error>> = Mutex::new(None);
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

fn prepare(mut card: TaskCard, opts: &Options) -> Result<Prepared, Error> {
    card.dir = card.dir.canonicalize().map_err(|source| Error::Io { path: card.dir.clone(), source })?;
    let gold: Gold = load_gold(opts.gold.as_deref(), &card.id)?.unwrap_or_default();
    let gold_dir = match (&card.check, &gold.check) {
        (None, Some(_)) => {
            Some(gold.dir.canonicalize().map_err(|source| Error::Io { path: gold.dir.clone(), source })?)
        }
        _ => None,
    };
    let check = card.check.clone().or(gold.check).ok_or_else(|| TaskError::NoGold(card.id.clone()))?;
    let codebase = match (&card.evaluation.codebase, &opts.codebases) {
        (Some(rel), _) => card.dir.join(rel),
        (None, Some(dir)) => dir.join(&card.id),
        (None, None) => {
            return Err(Error::Setup(format!(
                "task `{}` has no codebase in its card: give --codebases DIR with {}/ in it",
                card.id, card.id
            )));
        }
    };
    if !codebase.is_dir() {
        return Err(Error::Setup(format!(
            "task `{}`: codebase {} is not a directory",
            card.id,
            codebase.display()
        )));
    }
    if let Some(h) = opts.heldout.as_ref().filter(|h| h.variant.task == card.id) {
        // The variant's files in place of the codebase's, before the patch is applied.
        if !h.codebase.is_dir() {
            let tmp = h.codebase.with_extension("partial");
            let _ = benchmark::tree::remove(&tmp);
            h.variant.codebase(&codebase, &tmp).map_err(Error::io_at(&tmp))?;
            fs::rename(&tmp, &h.codebase).map_err(Error::io_at(&h.codebase))?;
        }
        let dir = h.variant.dir.canonicalize().map_err(Error::io_at(&h.variant.dir))?;
        return Ok(Prepared {
            card,
            codebase: h.codebase.clone(),
            check: h.variant.check.clone(),
            gold_dir: Some(dir),
            gold_files: gold.files,
        });
    }
    Ok(Prepared { card, codebase, check, gold_dir, gold_files: gold.files })
}

/// The benchmark the evaluated tasks belong to: the RExBench tasks, or the examples.
/// The digest covers the whole set, so results on a subset still rank together.
pub(crate) fn benchmark_for<'a>(
    cards: &BTreeMap<String, TaskCard>,
    tasks: impl Iterator<Item = &'a TaskCard>,
) -> Result<Benchmark, Error> {
    let is_example = TaskCard::is_example;
    let (mut examples, mut count) = (0, 0);
    for card in tasks {
        count += 1;
        examples += usize::from(is_example(card));
    }
    if examples != 0 && examples != count {
        return Err(Error::Setup(
            "the outputs mix example tasks with benchmark tasks: evaluate them separately".into(),
        ));
    }
    let set = cards.values().filter(|c| is_example(c) == (examples != 0));
    let digest = task_set_digest(set).map_err(|source| Error::Io { path: PathBuf::from("tasks"), source })?;
    let name = if examples != 0 { crate::taskset::EXAMPLES_NAME } else { crate::taskset::BENCHMARK_NAME };
    Ok(Benchmark {
        name: name.into(),
        version: crate::taskset::VERSION.into(),
        task_set_digest: digest.to_hex(),
    })
}

fn write_evaluation(out: &Path, evaluation: &Evaluation) -> Result<(), Error> {
    let path = out.join("evaluation.json");
    if let Ok(bytes) = fs::read(&path) {
        let existing: Evaluation =
            serde_json::from_slice(&bytes).map_err(|e| Error::Setup(format!("{}: {e}", path.display())))?;
        if let Some(p) = existing.provenance.as_ref().filter(|p| p.kind != bundle::ProvenanceKind::Evaluated)
        {
            return Err(Error::Setup(format!(
                "{} holds {} results ({}); evaluate into a new --out directory",
                out.display(),
                p.kind,
                p.source.as_deref().unwrap_or("no source")
            )));
        }
        if existing.heldout != evaluation.heldout {
            let words = |h: &Option<String>| {
                h.as_ref().map_or("no held-out variant".to_owned(), |d| format!("held-out variant {d}"))
            };
            return Err(Error::Setup(format!(
                "{} holds results on {}, not {}; use a new --out directory",
                out.display(),
                words(&existing.heldout),
                words(&evaluation.heldout)
            )));
        }
        if existing.benchmark != evaluation.benchmark {
            return Err(Error::Setup(format!(
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

/// Evaluates one run here. `None`: interrupted, nothing recorded.
fn evaluate_here(
    run: &AgentRun,
    task: &Prepared,
    outputs: &Folder,
    opts: &Options,
) -> Result<Option<RunRecord>, Error> {
    let staged = stage(run, task, outputs, &opts.out)?;
    // Removed without recursion when the run is done, whatever its experiment left in it.
    let scratch = benchmark::tree::Scratch::new(&format!("rexbench-{}-", run.task))
        .map_err(Error::io_at(Path::new("scratch directory")))?;
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
            inputs: &task.card.integrity.inputs,
            confinement: &opts.confinement.for_task(&task.card),
        };
        match experiment.run(&workdir, &staged.dir, &INTERRUPTED).map_err(Error::io_at(&staged.dir))? {
            Ran::Cancelled => {
                let _ = benchmark::tree::remove(&staged.dir);
                return Ok(None);
            }
            ran => Some(ran),
        }
    };
    finish(run, task, &opts.out, staged, ran, &workdir).map(Some)
}
