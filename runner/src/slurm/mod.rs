//! `rexbench evaluate --executor slurm`: each run becomes a Slurm batch job that prepares
//! its scratch copy, applies the patch and runs the experiment on a compute node
//! (`job.rs`), while the runner, on a login node, submits, watches the queue, and judges
//! each run from what its job wrote, with the same code as the local executor.
//!
//! Everything lives in the results directory, which the nodes share:
//!
//! ```text
//! .slurm/lock            held while a runner works here (and by each sbatch it starts)
//! .slurm/journal.jsonl   every submission, before and after sbatch (journal.rs)
//! .slurm/rexbench        the runner's own binary, which the jobs run
//! .slurm/codebases/      the built-in tasks' codebases, where the nodes can read them
//! .slurm/jobs/<task>-<hint>-<attempt>-<try>/   one folder per submission
//! ```
//!
//! Exactly once: a run's try is submitted under a name of its own (`rexbench-<tag>-<task>-
//! <hint>-<attempt>-<try>`, the tag derived from the results directory), announced in
//! the journal first. Started again after a kill, the runner looks for each announced
//! try in the queue by name and in its folder before it submits anything. It takes the
//! lock only once every `sbatch` of a killed runner has returned, since each inherits it.
//! A try starts its experiment at most once (`job::CLAIM`), and only a try that ended
//! without a status is submitted again, a bounded number of times.

pub mod client;
pub mod job;
pub mod journal;

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use benchmark::confined::Folder;
use benchmark::tree::{self, copy_tree};
use bundle::Outcome;

use crate::Error;
use crate::exec::Executor;
use crate::experiment::Ran;
use crate::outputs::AgentRun;
use crate::run::{INTERRUPTED, Prepared, Progress, Setting, Summary, finish, place, stage};
use client::{Client, Listed};
use journal::{Entry, History, Journal, Last};

/// What clusters need to know about the jobs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub partition: Option<String>,
    pub account: Option<String>,
    pub qos: Option<String>,
    /// Generic resources per run, as sbatch's `--gres` (e.g. `gpu:a100:1`).
    pub gres: Option<String>,
    /// GPUs per run, as sbatch's `--gpus` (e.g. `1`, `a100:1`).
    pub gpus: Option<String>,
    pub cpus_per_run: Option<u32>,
    /// Memory per run, as sbatch's `--mem` (e.g. `32G`).
    pub mem: Option<String>,
    /// Slurm's time limit for every job, as sbatch's `--time`; by default the task's
    /// `evaluation.timeout_s` in whole minutes, plus `MARGIN_MINUTES`.
    pub time: Option<String>,
    /// Runs queued or running at once.
    pub max_jobs: usize,
    /// How many times a run whose job ended without a status is submitted again.
    pub resubmit: u32,
    /// More arguments for every `sbatch`.
    pub sbatch_args: Vec<String>,
}

/// Added to a task's own limit for Slurm's: copying the codebase and applying the patch
/// happen inside the job, and the job enforces the task's limit itself, to the second.
pub const MARGIN_MINUTES: u64 = 5;
/// How often the runner looks at its running jobs' folders.
const POLL: Duration = Duration::from_millis(250);
/// How often it asks `squeue`.
const QUEUE_EVERY: Duration = Duration::from_secs(2);
/// How soon it asks again when a running job's folder has a status.
const QUEUE_SOON: Duration = Duration::from_millis(500);
/// How long a job that left the queue may take to show its status on the shared
/// filesystem, whose caches may lag, before it counts as lost.
const LOST_GRACE: Duration = Duration::from_secs(5);
/// How long Ctrl-C waits for cancelled jobs to leave the queue.
const CANCEL_WAIT: Duration = Duration::from_secs(60);

impl Options {
    /// The arguments every job gets, its time limit aside.
    fn resources(&self) -> Vec<String> {
        let mut args = Vec::new();
        let mut opt = |flag: &str, value: &Option<String>| {
            if let Some(v) = value {
                args.push(format!("--{flag}={v}"));
            }
        };
        opt("partition", &self.partition);
        opt("account", &self.account);
        opt("qos", &self.qos);
        opt("gres", &self.gres);
        opt("gpus", &self.gpus);
        opt("cpus-per-task", &self.cpus_per_run.map(|n| n.to_string()));
        opt("mem", &self.mem);
        args.extend(self.sbatch_args.iter().cloned());
        args
    }

    /// Slurm's time limit for a task's runs.
    fn time_limit(&self, timeout_s: f64) -> String {
        self.time.clone().unwrap_or_else(|| default_minutes(timeout_s).to_string())
    }
}

fn default_minutes(timeout_s: f64) -> u64 {
    (timeout_s / 60.0).ceil() as u64 + MARGIN_MINUTES
}

/// A cluster that accepts this evaluation's jobs.
#[derive(Debug)]
pub struct Cluster {
    client: Client,
    opts: Options,
}

impl Cluster {
    /// Finds Slurm's commands and asks `sbatch --test-only` whether the longest job
    /// would be accepted: a missing command, a partition, account or QOS that does not
    /// exist, or resources the cluster lacks stop the evaluation before it writes
    /// anything.
    pub(crate) fn check<'a>(
        opts: &Options,
        tasks: impl Iterator<Item = &'a Prepared>,
    ) -> Result<Cluster, Error> {
        if opts.max_jobs == 0 {
            return Err(Error::Slurm("--max-jobs must be at least 1".into()));
        }
        let client = Client::find()?;
        let longest = tasks.map(|t| t.card.evaluation.timeout_s).fold(0.0, f64::max);
        let mut args = opts.resources();
        args.push(format!("--time={}", opts.time_limit(longest)));
        client.test(&args)?;
        client.queue()?;
        Ok(Cluster { client, opts: opts.clone() })
    }

    /// Runs `todo` through Slurm, resuming whatever the journal says was submitted.
    pub(crate) fn evaluate(
        self,
        todo: &[&AgentRun],
        tasks: &BTreeMap<String, Prepared>,
        outputs: &Folder,
        opts: &Setting<'_>,
        progress: &Progress,
        summary: &mut Summary,
    ) -> Result<(), Error> {
        let root = opts.out.join(".slurm");
        fs::create_dir_all(root.join("jobs")).map_err(Error::io_at(&root))?;
        let _lock = lock(&root)?;
        let out = opts.out.canonicalize().map_err(Error::io_at(opts.out))?;
        let tag = bundle::Digest::of(out.to_string_lossy().as_bytes()).to_hex()[..8].to_owned();
        let exe = share_exe(&root)?;
        let mut codebases = BTreeMap::new();
        for (id, task) in tasks {
            let shared = if opts.builtin_tasks {
                share_codebase(&root, id, &task.codebase)?
            } else {
                task.codebase.clone()
            };
            codebases.insert(id.clone(), shared);
        }
        let (journal, histories) = Journal::open(&root.join("journal.jsonl"))?;
        let mut queue = Queue {
            cluster: &self,
            journal,
            root: root.clone(),
            tag,
            exe,
            codebases,
            tasks,
            outputs,
            opts,
            progress,
            summary,
            ask_soon: false,
        };
        let listing = self.client.queue()?;
        let mut runs: Vec<Tracked> = Vec::with_capacity(todo.len());
        for run in todo {
            let key = run.label();
            let history = histories.get(&key).cloned().unwrap_or_default();
            let mut tracked = Tracked { run, key, history, state: State::Waiting(0) };
            queue.resume(&mut tracked, &listing)?;
            runs.push(tracked);
        }
        queue.watch(&mut runs)?;
        if runs.iter().all(|r| matches!(r.state, State::Done)) {
            for leftover in ["jobs", "codebases", "rexbench"] {
                let path = root.join(leftover);
                let _ = tree::remove(&path);
            }
        }
        Ok(())
    }
}

/// A results directory with Slurm jobs of an unfinished evaluation is not for the local
/// executor: it would run again what the jobs are running.
pub(crate) fn refuse_local(out: &Path) -> Result<(), Error> {
    let jobs = out.join(".slurm").join("jobs");
    if fs::read_dir(&jobs).is_ok_and(|mut d| d.next().is_some()) {
        return Err(Error::Setup(format!(
            "{} holds an evaluation on Slurm that is not finished ({}): resume it with --executor slurm, \
             or cancel its jobs (squeue --me; scancel) and remove {} to evaluate here",
            out.display(),
            jobs.display(),
            out.join(".slurm").display()
        )));
    }
    Ok(())
}

/// One run and where it stands.
struct Tracked<'a> {
    run: &'a AgentRun,
    /// `task/hint/attempt`.
    key: String,
    history: History,
    state: State,
}

enum State {
    /// To be submitted as this try.
    Waiting(u32),
    InFlight(Flight),
    Done,
}

struct Flight {
    name: String,
    /// Unknown only for a try a killed runner submitted that Slurm no longer lists.
    id: Option<String>,
    /// How Slurm listed it last.
    listed: Option<Listed>,
    /// When it was first seen out of the queue without a status.
    gone_since: Option<Instant>,
}

impl Flight {
    fn label(&self) -> String {
        match &self.id {
            Some(id) => format!("job {id}"),
            None => format!("job {}", self.name),
        }
    }
}

/// The evaluation's state while it waits on Slurm.
struct Queue<'a> {
    cluster: &'a Cluster,
    journal: Journal,
    root: PathBuf,
    tag: String,
    exe: PathBuf,
    codebases: BTreeMap<String, PathBuf>,
    tasks: &'a BTreeMap<String, Prepared>,
    /// The agent's outputs, read beneath their folder only.
    outputs: &'a Folder,
    opts: &'a Setting<'a>,
    progress: &'a Progress,
    summary: &'a mut Summary,
    /// A job folder has a status while Slurm last listed its job as running: ask
    /// `squeue` again soon rather than in `QUEUE_EVERY`.
    ask_soon: bool,
}

impl Queue<'_> {
    fn name(&self, run: &AgentRun, n: u32) -> String {
        format!("rexbench-{}-{}-{}-{}-{n}", self.tag, run.task, run.hint, run.attempt)
    }

    fn job_dir(&self, run: &AgentRun, n: u32) -> PathBuf {
        self.root.join("jobs").join(format!("{}-{}-{}-{n}", run.task, run.hint, run.attempt))
    }

    fn write(&mut self, entry: Entry, tracked: &mut Tracked) -> Result<(), Error> {
        self.journal.write(&entry)?;
        tracked.history.apply(entry);
        Ok(())
    }

    /// Where a run stands, from the journal and the queue.
    fn resume(&mut self, t: &mut Tracked, listing: &HashMap<String, Listed>) -> Result<(), Error> {
        let n = t.history.n;
        match t.history.last.clone() {
            Last::Over => t.state = State::Waiting(n + 1),
            Last::Submitted { name, id } => self.fly(t, name, Some(id)),
            Last::Submitting(name) => match listing.get(&name) {
                Some(listed) => {
                    let id = listed.id.clone();
                    self.write(Entry::Submitted { run: t.key.clone(), n, id: id.clone() }, t)?;
                    self.fly(t, name, Some(id));
                }
                // It ran (it has a status, or started to), but Slurm forgot it: what it
                // wrote decides.
                None if self.job_dir(t.run, n).join(job::CLAIM).exists() => self.fly(t, name, None),
                // sbatch never submitted it (every sbatch has returned: we hold the lock).
                None => t.state = State::Waiting(n),
            },
        }
        Ok(())
    }

    fn fly(&mut self, t: &mut Tracked, name: String, id: Option<String>) {
        t.state = State::InFlight(Flight { name, id, listed: None, gone_since: None });
    }

    /// Submits, watches and collects until every run is done or Ctrl-C.
    fn watch(&mut self, runs: &mut [Tracked]) -> Result<(), Error> {
        let mut asked: Option<Instant> = None;
        loop {
            if INTERRUPTED.load(Ordering::Relaxed) {
                return self.cancel(runs);
            }
            let listing = match asked {
                Some(at) if at.elapsed() < if self.ask_soon { QUEUE_SOON } else { QUEUE_EVERY } => None,
                _ => {
                    asked = Some(Instant::now());
                    self.ask_soon = false;
                    Some(self.cluster.client.queue()?)
                }
            };
            for t in runs.iter_mut() {
                if let State::InFlight(_) = t.state {
                    self.look(t, listing.as_ref())?;
                }
            }
            let mut in_flight = runs.iter().filter(|t| matches!(t.state, State::InFlight(_))).count();
            for t in runs.iter_mut() {
                if in_flight >= self.cluster.opts.max_jobs || INTERRUPTED.load(Ordering::Relaxed) {
                    break;
                }
                if let State::Waiting(n) = t.state {
                    self.submit(t, n, in_flight)?;
                    in_flight += usize::from(matches!(t.state, State::InFlight(_)));
                }
            }
            let (mut queued, mut running) = (0, 0);
            for t in runs.iter() {
                if let State::InFlight(f) = &t.state {
                    match &f.listed {
                        Some(l) if !l.queued() => running += 1,
                        _ => queued += 1,
                    }
                }
            }
            self.progress.queue(queued, running);
            if runs.iter().all(|t| matches!(t.state, State::Done)) {
                return Ok(());
            }
            std::thread::sleep(POLL);
        }
    }

    /// Looks at one submitted run: collects it if its job wrote a status, resubmits it
    /// if the job is gone without one.
    fn look(&mut self, t: &mut Tracked, listing: Option<&HashMap<String, Listed>>) -> Result<(), Error> {
        let State::InFlight(flight) = &mut t.state else { return Ok(()) };
        if let Some(listing) = listing {
            flight.listed = listing.get(&flight.name).cloned();
            if flight.id.is_none() {
                flight.id = flight.listed.as_ref().map(|l| l.id.clone());
            }
        }
        // A job Slurm lists as waiting has written nothing: spare the filesystem.
        if flight.listed.as_ref().is_some_and(Listed::queued) {
            return Ok(());
        }
        let n = t.history.n;
        let dir = self.job_dir(t.run, n);
        // The experiment runs with the job's rights, beside its status: while the job
        // runs, what is there may be the experiment's. Once Slurm lists the job as ended
        // (or no longer lists it), the job's own write, made after its experiment, is
        // the last one. Until then a status only hastens the next `squeue`.
        let over = listing.is_some() && flight.listed.as_ref().is_none_or(Listed::ended);
        if !over {
            if fs::symlink_metadata(dir.join(job::STATUS)).is_ok() {
                self.ask_soon = true;
            }
            return Ok(());
        }
        let lost = match job::status(&dir) {
            Some(Ok(Ran::Cancelled)) => Some(format!(
                "{} was stopped by a signal: cancelled, or past Slurm's time limit ({} minutes)",
                flight.label(),
                self.time_limit(t.run)
            )),
            Some(Ok(ran)) => return self.collect(t, ran, &dir),
            Some(Err(e)) => Some(format!("{} wrote a status that does not parse: {e}", flight.label())),
            None => {
                let since = *flight.gone_since.get_or_insert_with(Instant::now);
                (since.elapsed() >= LOST_GRACE).then(|| match &flight.listed {
                    Some(l) => format!("{} ended {} without writing its status", flight.label(), l.state),
                    None => format!("{} left Slurm's queue without writing its status", flight.label()),
                })
            }
        };
        if let Some(reason) = lost {
            let tries = self.cluster.opts.resubmit + 1;
            self.progress.say(&format!(
                "{}: {reason}; {}",
                t.key,
                if (t.history.lost.len() as u32) < self.cluster.opts.resubmit {
                    format!("submitting it again (try {} of {tries})", n + 1)
                } else {
                    format!("giving up after {tries} tries")
                }
            ));
            self.write(Entry::Lost { run: t.key.clone(), n, reason }, t)?;
            t.state = State::Waiting(n + 1);
        }
        Ok(())
    }

    /// The variables a job of `card` is given (`sbatch --export`): the job's runner's
    /// own (`PATH` to find its sandbox, where Slurm is, the sandbox's programs), a
    /// container engine's, and those the card or `--sandbox-env` passes to the
    /// experiment. A token or a key's passphrase in the runner's environment stays here.
    fn exported(&self, card: &crate::task::TaskCard) -> Vec<String> {
        let mut names: Vec<String> = ["HOME", "USER", "LOGNAME", "LANG", "TMPDIR", "SLURM_CONF"]
            .into_iter()
            .chain(["REXBENCH_BWRAP", "REXBENCH_STRACE"])
            .map(str::to_owned)
            .collect();
        names.extend(self.opts.executor.variables());
        if let crate::sandbox::Confinement::Sandboxed(s) = self.opts.confinement.for_task(card) {
            names.extend(s.env);
        }
        let mut seen = std::collections::BTreeSet::new();
        names.retain(|n| seen.insert(n.clone()));
        names
    }

    fn time_limit(&self, run: &AgentRun) -> String {
        self.cluster.opts.time_limit(self.tasks[&run.task].card.evaluation.timeout_s)
    }

    /// Judges a run from what its job wrote, as the local executor would.
    fn collect(&mut self, t: &mut Tracked, ran: Ran, dir: &Path) -> Result<(), Error> {
        let task = &self.tasks[&t.run.task];
        let staged = stage(t.run, task, self.outputs, self.opts.out)?;
        for log in ["stdout.txt", "stderr.txt", "x-apply.txt", crate::experiment::PROVENANCE_FILE] {
            let from = dir.join(log);
            if from.exists() {
                fs::rename(&from, staged.dir.join(log)).map_err(Error::io_at(&from))?;
            }
        }
        let record = finish(t.run, task, self.opts.out, staged, Some(ran), &dir.join(job::WORKDIR))?;
        self.done(t, &record);
        Ok(())
    }

    fn done(&mut self, t: &mut Tracked, record: &crate::results::RunRecord) {
        self.progress.finished(t.run, record);
        self.summary.add(record);
        for n in 1..=t.history.n {
            let _ = tree::remove(&self.job_dir(t.run, n));
        }
        t.state = State::Done;
    }

    /// Submits a run's try; `in_flight` jobs are already in Slurm.
    fn submit(&mut self, t: &mut Tracked, n: u32, in_flight: usize) -> Result<(), Error> {
        let task = &self.tasks[&t.run.task];
        if t.history.lost.len() as u32 > self.cluster.opts.resubmit {
            return self.give_up(t);
        }
        let patch = self
            .outputs
            .read(&t.run.patch)
            .map_err(|refused| crate::Error::Refused { run: Some(t.run.label()), refused })?;
        if crate::patch::is_empty(&String::from_utf8_lossy(&patch)) {
            // Nothing to run: judged here, as the local executor does.
            let record = place(t.run, self.opts.out, stage(t.run, task, self.outputs, self.opts.out)?)?;
            self.done(t, &record);
            return Ok(());
        }
        let name = self.name(t.run, n);
        let dir = self.job_dir(t.run, n);
        let _ = tree::remove(&dir);
        fs::create_dir_all(&dir).map_err(Error::io_at(&dir))?;
        fs::write(dir.join(job::PATCH), &patch).map_err(Error::io_at(&dir))?;
        let spec = job::Spec {
            codebase: self.codebases[&t.run.task].clone(),
            command: task.card.evaluation.command.clone(),
            timeout_s: task.card.evaluation.timeout_s,
            container: match &self.opts.executor {
                Executor::Container { template } => Some(template.clone()),
                Executor::Local => None,
            },
            name: name.clone(),
            results: task.result_files(),
            inputs: task.card.integrity.inputs.clone(),
            confinement: self.opts.confinement.for_task(&task.card),
        };
        let spec_json = serde_json::to_vec_pretty(&spec).expect("serializes");
        fs::write(dir.join(job::SPEC), spec_json).map_err(Error::io_at(&dir))?;
        let script = dir.join("job.sh");
        fs::write(&script, job::script(&self.exe, &dir, &t.key, n)).map_err(Error::io_at(&script))?;

        let mut args = self.cluster.opts.resources();
        args.extend([
            format!("--time={}", self.time_limit(t.run)),
            format!("--job-name={name}"),
            format!("--output={}", dir.join("slurm.out").display()),
            format!("--chdir={}", dir.display()),
            // A job Slurm would start again on its own would run the experiment twice.
            "--no-requeue".into(),
            // The job is given what its runner and the experiment need, by name, and
            // nothing else of this runner's environment (sbatch would pass it all on).
            format!("--export={}", self.exported(&task.card).join(",")),
        ]);
        self.write(Entry::Submitting { run: t.key.clone(), n, name: name.clone() }, t)?;
        let id = self.sbatch(&args, &script).map_err(|e| {
            // What Slurm said, without the prefix the message below repeats.
            let said = match e {
                Error::Slurm(said) => said,
                other => format!("{:#}", anyhow::Error::from(other)),
            };
            Error::Slurm(format!(
                "{said} (submitting {}); the {} jobs submitted before it keep running: run the same command again \
                 to wait for them and go on",
                t.key, in_flight
            ))
        })?;
        self.write(Entry::Submitted { run: t.key.clone(), n, id: id.clone() }, t)?;
        self.fly(t, name, Some(id));
        Ok(())
    }

    /// `sbatch`, tried again on a failure, which may be a controller that is busy.
    fn sbatch(&self, args: &[String], script: &Path) -> Result<String, Error> {
        let mut wait = Duration::from_secs(1);
        let mut tries = 0;
        loop {
            match self.cluster.client.submit(args, script) {
                Ok(id) => return Ok(id),
                Err(e) if tries == 3 || INTERRUPTED.load(Ordering::Relaxed) => return Err(e),
                Err(_) => {
                    std::thread::sleep(wait);
                    wait *= 2;
                    tries += 1;
                }
            }
        }
    }

    /// A run lost more often than `--resubmit` allows: an infrastructure error, with the
    /// story in x-runner.txt.
    fn give_up(&mut self, t: &mut Tracked) -> Result<(), Error> {
        let task = &self.tasks[&t.run.task];
        let mut staged = stage(t.run, task, self.outputs, self.opts.out)?;
        staged.record.outcome = Outcome::InfraError;
        staged.record.error_type = Some("Slurm job lost".into());
        let mut story = format!(
            "Each Slurm job of this run ended without writing its status ({} tries):\n",
            t.history.lost.len()
        );
        for reason in &t.history.lost {
            story.push_str(&format!("- {reason}\n"));
        }
        let last = self.job_dir(t.run, t.history.n);
        // Its end is the story; a job's output may be of any size.
        let slurm_out = benchmark::confined::read_file_tail(&last.join("slurm.out"), 64 * 1024, "job folder")
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        if !slurm_out.trim().is_empty() {
            story.push_str(&format!("\nThe last job's output:\n{slurm_out}"));
        }
        fs::write(staged.dir.join("x-runner.txt"), story).map_err(Error::io_at(&staged.dir))?;
        let record = place(t.run, self.opts.out, staged)?;
        self.done(t, &record);
        Ok(())
    }

    /// Ctrl-C: cancels every job of this evaluation and waits until Slurm lists none of
    /// them as queued or running. Cancelled tries are not held against a run.
    fn cancel(&mut self, runs: &mut [Tracked]) -> Result<(), Error> {
        let mut ids = Vec::new();
        let mut names = Vec::new();
        for t in runs.iter_mut() {
            if let State::InFlight(f) = &t.state {
                ids.extend(f.id.clone());
                names.push(f.name.clone());
                let n = t.history.n;
                self.write(Entry::Cancelled { run: t.key.clone(), n }, t)?;
                t.state = State::Waiting(n + 1);
            }
        }
        if ids.is_empty() {
            return Ok(());
        }
        self.progress.say(&format!("cancelling {} Slurm jobs", ids.len()));
        self.cluster.client.cancel(&ids)?;
        let deadline = Instant::now() + CANCEL_WAIT;
        loop {
            let listing = self.cluster.client.queue()?;
            let left = names.iter().filter(|n| listing.get(*n).is_some_and(|l| !l.ended())).count();
            if left == 0 {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::Slurm(format!(
                    "{left} cancelled jobs are still in Slurm's queue after {} s; see squeue --me",
                    CANCEL_WAIT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Takes `.slurm/lock`, so that one runner at a time works in a results directory, and
/// leaves it open across exec so that each `sbatch` holds it too: a runner started after
/// a kill waits until every submission of the killed one has returned.
fn lock(root: &Path) -> Result<fs::File, Error> {
    let path = root.join("lock");
    let file = fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(Error::io_at(&path))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(Error::Slurm(format!(
                    "another rexbench evaluate is working in {} (it holds {})",
                    root.parent().unwrap_or(root).display(),
                    path.display()
                )));
            }
            Err(fs::TryLockError::Error(e)) => return Err(Error::io_at(&path)(e)),
        }
    }
    #[cfg(unix)]
    {
        use nix::fcntl::{FcntlArg, FdFlag, fcntl};
        fcntl(&file, FcntlArg::F_SETFD(FdFlag::empty()))
            .map_err(|e| Error::io_at(&path)(std::io::Error::from(e)))?;
    }
    Ok(file)
}

/// The runner's binary where the nodes can run it: a hard link, or a copy.
fn share_exe(root: &Path) -> Result<PathBuf, Error> {
    let exe = std::env::current_exe().map_err(Error::io_at(Path::new("the running rexbench")))?;
    let shared = root.join("rexbench");
    let tmp = root.join(".rexbench.tmp");
    let _ = fs::remove_file(&tmp);
    if fs::hard_link(&exe, &tmp).is_err() {
        fs::copy(&exe, &tmp).map_err(Error::io_at(&tmp))?;
    }
    // A running job keeps the file it started from.
    fs::rename(&tmp, &shared).map_err(Error::io_at(&shared))?;
    Ok(shared)
}

/// A built-in task's codebase, copied once into the results directory.
fn share_codebase(root: &Path, task: &str, codebase: &Path) -> Result<PathBuf, Error> {
    let shared = root.join("codebases").join(task);
    if !shared.is_dir() {
        let tmp = root.join("codebases").join(format!(".{task}.tmp"));
        let _ = tree::remove(&tmp);
        copy_tree(codebase, &tmp).map_err(Error::io_at(codebase))?;
        fs::rename(&tmp, &shared).map_err(Error::io_at(&shared))?;
    }
    Ok(shared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_ask_for_what_the_options_say_and_the_tasks_limit_in_minutes() {
        let opts = Options {
            partition: Some("gpu".into()),
            account: Some("lab".into()),
            qos: Some("normal".into()),
            gres: Some("gpu:a100:1".into()),
            gpus: None,
            cpus_per_run: Some(8),
            mem: Some("64G".into()),
            time: None,
            max_jobs: 10,
            resubmit: 2,
            sbatch_args: vec!["--constraint=ib".into()],
        };
        assert_eq!(
            opts.resources(),
            [
                "--partition=gpu",
                "--account=lab",
                "--qos=normal",
                "--gres=gpu:a100:1",
                "--cpus-per-task=8",
                "--mem=64G",
                "--constraint=ib"
            ]
        );
        assert_eq!(opts.time_limit(3.0), "6");
        assert_eq!(opts.time_limit(43_200.0), "725");
        assert_eq!(opts.time_limit(61.0), "7");
        let opts = Options { time: Some("1-00:00:00".into()), ..opts };
        assert_eq!(opts.time_limit(3.0), "1-00:00:00");
    }
}
