//! One run, whichever executor runs its experiment: staged from the agent's outputs,
//! judged from what its experiment came to (`finish`: the one place a run's outcome is
//! decided), and placed whole in the results directory; with the progress and the
//! summary both executors report to. `evaluate` (here, on this machine) and `slurm`
//! (in jobs) both use it; it uses neither.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use benchmark::confined::{self, Folder, file_limit};
use benchmark::tree::{self, Scratch, TreeError};
use bundle::Outcome;

use crate::Error;
use crate::check::{CheckSpec, ResultFiles, RunOutput};
use crate::experiment::Ran;
use crate::outputs::AgentRun;
use crate::results::{RunRecord, run_dir};
use crate::task::TaskCard;

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

impl Summary {
    pub(crate) fn add(&mut self, record: &RunRecord) {
        self.evaluated += 1;
        *self.outcomes.entry(record.outcome).or_default() += 1;
        self.run_seconds += record.duration_s.unwrap_or(0.0);
        self.flagged += usize::from(record.outcome == Outcome::Success && !record.findings.is_empty());
    }
}

/// One task, ready to evaluate runs of.
pub(crate) struct Prepared {
    pub card: TaskCard,
    pub codebase: PathBuf,
    pub check: CheckSpec,
    /// The task's gold folder, where its check came from there.
    pub gold_dir: Option<PathBuf>,
    pub gold_files: Vec<String>,
}

impl Prepared {
    /// Where the task's check reads result files.
    pub(crate) fn result_files(&self) -> ResultFiles {
        self.check.result_files()
    }
}

/// What every run of an evaluation shares, whichever executor runs it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setting<'a> {
    /// The results directory.
    pub out: &'a Path,
    /// How the task's command runs: as a child, or in a container.
    pub executor: &'a crate::exec::Executor,
    /// Whether each experiment runs in a sandbox (the card adds its own settings).
    pub confinement: &'a crate::sandbox::Confinement,
    /// The task cards are the ones built into the binary, unpacked where only this
    /// process sees them.
    pub builtin_tasks: bool,
}

/// Set by Ctrl-C: finish nothing new, kill what runs, keep what is done.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// A run's results folder in the making, `out/.staging/<task>-<hint>-<attempt>`: the
/// agent's evidence is copied in first, the experiment's after, and the whole folder
/// becomes the run's in one rename.
pub(crate) struct Staged {
    pub dir: PathBuf,
    pub record: RunRecord,
    /// Nothing to run: the patch changes nothing.
    pub empty: bool,
}

/// Starts a run's results: its staging folder with the patch, the agent's log and
/// trajectory (read beneath the outputs folder only), and the record as far as the
/// patch alone decides it. The experiment applies the staged copy of the patch.
pub(crate) fn stage(run: &AgentRun, task: &Prepared, outputs: &Folder, out: &Path) -> Result<Staged, Error> {
    let dir = out.join(".staging").join(format!("{}-{}-{}", run.task, run.hint, run.attempt));
    let _ = tree::remove(&dir);
    fs::create_dir_all(&dir).map_err(Error::io_at(&dir))?;
    let refused = |refused| {
        let _ = tree::remove(&dir);
        Error::Refused { run: Some(run.label()), refused }
    };
    let patch_text = outputs.read(&run.patch).map_err(refused)?;
    fs::write(dir.join("patch.diff"), &patch_text).map_err(Error::io_at(&dir))?;
    if let Some(log) = &run.agent_log {
        outputs.copy_to(log, &dir.join("agent_log.txt")).map_err(refused)?;
    }
    // Read once: staged as the run's artifact, and checked for integrity findings.
    let trajectory_bytes = match &run.trajectory {
        Some(trajectory) => {
            let bytes = outputs.read(trajectory).map_err(refused)?;
            fs::write(dir.join("x-trajectory.json"), &bytes).map_err(Error::io_at(&dir))?;
            Some(bytes)
        }
        None => None,
    };
    let patch_text = String::from_utf8_lossy(&patch_text);
    let files = benchmark::diff::files_touched(&patch_text);
    let empty = crate::patch::is_empty(&patch_text);
    let record = RunRecord {
        outcome: Outcome::EmptyPatch,
        error_type: empty.then(|| "empty patch".into()),
        file_recall: crate::patch::file_recall(&files, &task.gold_files),
        files_changed: (!files.is_empty()).then_some(files),
        duration_s: None,
        cost_usd: run.cost_usd,
        // What cost.json states, else what the agent's trajectory counted.
        tokens: run.tokens.or_else(|| trajectory_bytes.as_deref().and_then(benchmark::cost::atif_tokens)),
        task_folder: None,
        metrics: BTreeMap::new(),
        regraded: None,
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
) -> Result<RunRecord, Error> {
    let staging = &staged.dir;
    let record = &mut staged.record;
    let note = |text: &str| {
        fs::write(staging.join("x-runner.txt"), format!("{text}\n")).map_err(Error::io_at(staging))
    };
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
        // Its own error type, never infra_error: a run that used more than its task
        // allows failed, as one that took longer did.
        Some(Ran::Limited { breach, duration_s }) => {
            record.outcome = Outcome::ExecutionFailed;
            record.error_type = Some(breach.resource.error_type());
            record.duration_s = Some(duration_s);
            note(&format!("stopped by a limit: {}", breach.describe()))?;
        }
        Some(Ran::Finished { success: false, duration_s, .. }) => {
            record.outcome = Outcome::ExecutionFailed;
            record.duration_s = Some(duration_s);
            // The end of each log, where a traceback is; the experiment chose their size.
            let read = |p: &Path| {
                let tail = confined::read_file_tail(p, file_limit(), "run's logs").unwrap_or_default();
                String::from_utf8_lossy(&tail).into_owned()
            };
            record.error_type = crate::error_class::classify_error(
                &read(&staging.join("stderr.txt")),
                &read(&staging.join("stdout.txt")),
            );
        }
        Some(Ran::Finished { success: true, duration_s, before, .. }) => {
            record.duration_s = Some(duration_s);
            // A check that runs a command (an evaluator, with the gold at hand) runs
            // outside the experiment's sandbox: on a copy of the working copy that holds
            // nothing but its folders and regular files.
            let copy = match task.check.external {
                Some(_) => Some(copy_for_check(workdir, &task.card)?),
                None => None,
            };
            let mut report = match &copy {
                // A working copy past a copy's bounds, or one that cannot be read, is the
                // patch's doing: its check fails (never infra_error), and the rest go on.
                Some(Err(why)) => crate::check::CheckReport {
                    passed: false,
                    log: format!("the working copy cannot be copied for the check: {why}: FAIL\n"),
                    ..Default::default()
                },
                _ => task.check.run(RunOutput {
                    task_dir: &task.card.dir,
                    gold_dir: task.gold_dir.as_deref(),
                    workdir: match &copy {
                        Some(Ok((dir, _))) => dir.path(),
                        _ => workdir,
                    },
                    stdout: &staging.join("stdout.txt"),
                    stderr: &staging.join("stderr.txt"),
                }),
            };
            if let Some(Ok((_, left_out))) = &copy
                && *left_out > 0
            {
                report.log.push_str(&format!(
                    "{left_out} entries of the working copy (links, special files, files over {} bytes) were not in the copy the check read\n",
                    file_limit()
                ));
            }
            record.outcome = if report.passed { Outcome::Success } else { Outcome::WrongResult };
            record.metrics = report.metrics;
            if report.passed {
                let results = task.result_files();
                let (base, after) = (results.snapshot(&task.codebase), results.snapshot(workdir));
                benchmark::integrity::add_results_before_run(&mut record.findings, &base, &before, &after);
            }
            fs::write(staging.join("checker_log.txt"), report.log).map_err(Error::io_at(staging))?;
        }
    }
    // The patch's findings were made when it was staged; an experiment that ran to its
    // end adds what its duration shows, and what its provenance record does.
    benchmark::integrity::add_timing(&mut record.findings, &task.card, record.outcome, record.duration_s);
    let provenance = staging.join(crate::experiment::PROVENANCE_FILE);
    if provenance.exists() {
        let bytes = fs::read(&provenance).map_err(Error::io_at(&provenance))?;
        let parsed = bundle::ProvenanceRecord::parse(&bytes)
            .map_err(|detail| Error::Invalid { path: provenance.clone(), detail })?;
        let found = benchmark::integrity::provenance_findings(&task.card, record.outcome, &parsed, &[]);
        let room = bundle::MAX_FINDINGS.saturating_sub(record.findings.len());
        record.findings.extend(found.into_iter().take(room));
    }
    benchmark::integrity::merge_repeats(&mut record.findings);
    salt_logs(staging)?;
    place(run, out, staged)
}

/// The logs the runner keeps of a run: what its experiment printed, what the check and
/// the patch tools said, and the runner's own note.
pub(crate) const RUNNER_LOGS: [&str; 6] =
    ["stdout.txt", "stderr.txt", "checker_log.txt", "x-runner.txt", "x-apply.txt", "x-exception.txt"];

/// Spec §4k: each log the runner keeps of a run ends with a line of 128 secret bits
/// (`rexbench-salt: <32 hex>`), and its provenance record carries its own, so that the
/// public digest and size of a private one cannot confirm a guess of what it says (a
/// checker's log that reads "mean: read 8, expected 7.5 ± 0.001: FAIL" was recovered
/// from its digest in 99,053 guesses).
pub(crate) fn salt_logs(dir: &Path) -> Result<(), Error> {
    use std::io::{Read as _, Seek as _, Write as _};
    for name in RUNNER_LOGS {
        let path = dir.join(name);
        if !fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let mut file =
            fs::OpenOptions::new().read(true).append(true).open(&path).map_err(Error::io_at(&path))?;
        let size = file.metadata().map_err(Error::io_at(&path))?.len();
        let mut last = [b'\n'];
        if size > 0 {
            file.seek(std::io::SeekFrom::Start(size - 1)).map_err(Error::io_at(&path))?;
            file.read_exact(&mut last).map_err(Error::io_at(&path))?;
        }
        let newline = if last[0] == b'\n' { "" } else { "\n" };
        write!(file, "{newline}{SALT_PREFIX}{}\n", hex::encode(bundle::fresh_salt()))
            .map_err(Error::io_at(&path))?;
    }
    let record = dir.join(crate::experiment::PROVENANCE_FILE);
    if record.exists() {
        let bytes = fs::read(&record).map_err(Error::io_at(&record))?;
        let mut parsed = bundle::ProvenanceRecord::parse(&bytes)
            .map_err(|detail| Error::Invalid { path: record.clone(), detail })?;
        parsed.salt = Some(hex::encode(bundle::fresh_salt()));
        fs::write(&record, parsed.to_bytes()).map_err(Error::io_at(&record))?;
    }
    Ok(())
}

/// How a log's salt line begins.
pub(crate) const SALT_PREFIX: &str = "rexbench-salt: ";

/// A copy of the working copy for a check that runs a command: its folders and regular
/// files (each at most a bundle artifact's size, with its execute bits), and nothing
/// else: no link, FIFO or device the experiment left reaches a checker that runs with
/// the runner's rights. Returns the copy and how many entries it left out, or why the
/// working copy cannot be copied (past a bound of `benchmark::tree`, or unreadable); its
/// files may hold no more bytes than its card's disk limit.
fn copy_for_check(workdir: &Path, card: &TaskCard) -> Result<Result<(Scratch, u64), TreeError>, Error> {
    let copy = Scratch::new("rexbench-check-").map_err(Error::io_at(Path::new("the check's copy")))?;
    let how = tree::CopyOptions {
        links: tree::Links::Leave,
        max_file: Some(file_limit()),
        bounds: tree::Bounds {
            bytes: card.evaluation.limits.disk_mib.saturating_mul(1 << 20),
            ..tree::Bounds::default()
        },
    };
    match tree::copy(workdir, copy.path(), &how) {
        Ok(copied) => Ok(Ok((copy, copied.left_out))),
        Err(e) if e.of_the_tree() => Ok(Err(e)),
        Err(e) => Err(Error::io_at(copy.path())(e.into())),
    }
}

/// Writes run.json and moves the staging folder to the run's place.
pub(crate) fn place(run: &AgentRun, out: &Path, staged: Staged) -> Result<RunRecord, Error> {
    let final_dir = run_dir(out, &run.task, run.hint, run.attempt);
    let run_json = serde_json::to_vec_pretty(&staged.record).expect("serializes");
    fs::write(staged.dir.join("run.json"), run_json).map_err(Error::io_at(&staged.dir))?;
    // The run becomes visible whole: a folder without run.json is never left at its place.
    let _ = tree::remove(&final_dir);
    fs::create_dir_all(final_dir.parent().expect("has a parent")).map_err(Error::io_at(&final_dir))?;
    fs::rename(&staged.dir, &final_dir).map_err(Error::io_at(&final_dir))?;
    Ok(staged.record)
}

/// Writes a file whole or not at all: readers see the old one, or none, until it is done.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let io = |source| Error::Io { path: path.to_owned(), source };
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
    pub(crate) fn new(todo: usize, skipped: usize) -> Progress {
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

    pub(crate) fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
