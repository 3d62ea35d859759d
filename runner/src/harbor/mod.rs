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

mod agent;
pub mod digest;
mod format;
mod identity;
mod job;
mod policy;
mod regrade;
mod trial;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use benchmark::confined::Folder;
use bundle::{Agent, Benchmark, Hint, Outcome, Provenance, ProvenanceKind, REXBENCH_TASKS, RunnerInfo};

use crate::results::{Evaluation, run_dir};
use crate::task::{load_all, load_gold};

use crate::Error;
use agent::{agent_of, agent_toml, describe};
pub use format::task_of;
use job::read_job;
use trial::*;

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
    /// Keep trials of task folders other than the ones the cards pin, under a task set
    /// of their own (never ranked with the benchmark's), rather than refuse them.
    pub foreign_tasks: bool,
}

/// What an import wrote.
#[derive(Debug)]
pub struct Imported {
    pub runs: usize,
    pub outcomes: BTreeMap<Outcome, usize>,
    pub source: String,
    /// The agent as Harbor names it, written to `agent.toml` for `pack`.
    pub agent: Agent,
    /// Harbor's own statistics beside the import's, a line each (`job NAME: …`): the
    /// completed and errored trials, and for jobs judged by Harbor 0.26's rule the
    /// counted trials, mean and pass@k of each `agent__model__dataset`.
    pub comparison: Vec<String>,
}

/// Imports the jobs into `opts.out`, which must not exist yet or be empty. Everything is
/// written into a folder beside it and moved into place at the end, so an error leaves
/// nothing behind.
pub fn import(opts: &Options) -> Result<Imported, Error> {
    if opts.jobs.is_empty() {
        return Err(Error::Setup("name at least one Harbor job folder".into()));
    }
    let listed = || Folder::open(&opts.out, "output folder")?.entries(Path::new(""));
    if opts.out.exists() && listed().map_or(true, |entries| !entries.is_empty()) {
        return Err(Error::Setup(format!(
            "{} already exists and is not empty: import into a new folder",
            opts.out.display()
        )));
    }
    let cards = load_all(&opts.tasks_dir)?;
    if let Some(missing) = REXBENCH_TASKS.iter().find(|t| !cards.contains_key(**t)) {
        return Err(Error::Setup(format!(
            "{} has no card for task `{missing}`: give --tasks with the RExBench task cards",
            opts.tasks_dir.display()
        )));
    }
    let mut known = BTreeMap::new();
    let mut pins = BTreeMap::new();
    for task in REXBENCH_TASKS {
        let gold = load_gold(opts.gold.as_deref(), task)?;
        let card = cards[task].clone();
        let check = card.check.clone().or_else(|| gold.as_ref().and_then(|g| g.check.clone()));
        let gold_files = gold.map(|g| g.files).unwrap_or_default();
        pins.insert(task.to_owned(), identity::pins(&opts.tasks_dir, task)?);
        known.insert(task.to_owned(), Known { card, check, gold_files });
    }
    let benchmark_cards = cards.values().filter(|c| REXBENCH_TASKS.contains(&c.id.as_str()));
    let digest = crate::taskset::task_set_digest(benchmark_cards)
        .map_err(|source| Error::Io { path: opts.tasks_dir.clone(), source })?;

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
            return Err(Error::Invalid {
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
    let mut comparison = Vec::new();
    for job in jobs {
        comparison.extend(job.comparison.iter().map(|m| format!("job {}: {m}", job.name)));
        folders.push(job.folder);
        trials.extend(job.trials);
    }
    let mut trials = regrade::resolve(trials, &folders, &known)?;
    let seen = trials.iter().map(|t| identity::Seen {
        task: &t.task,
        name: &t.name,
        result_path: &t.result_path,
        ran: t.ran.as_ref(),
    });
    let seen: Vec<identity::Seen> = seen.collect();
    if let Some(refusal) = identity::split(seen.iter().cloned()) {
        return Err(refusal);
    }
    let (said, foreign) = identity::check(seen, &pins);
    comparison.extend(said);
    let (digest, changed) = match (foreign.first(), opts.foreign_tasks) {
        (None, _) => (digest, false),
        (Some(first), false) => return Err(identity::refusal(first)),
        (Some(_), true) => {
            let (own, lines) = identity::own_set(digest, &foreign);
            comparison.extend(lines);
            (own, true)
        }
    };
    trials.sort_by(|a, b| (&a.task, a.hint, a.started, &a.name).cmp(&(&b.task, b.hint, b.started, &b.name)));

    let parent = opts.out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|source| Error::Io { path: parent.to_owned(), source })?;
    let staging = tempfile::Builder::new()
        .prefix(".rexbench-import-")
        .tempdir_in(parent)
        .map_err(|source| Error::Io { path: parent.to_owned(), source })?;
    let write = |path: &Path, bytes: &[u8]| -> Result<(), Error> {
        fs::create_dir_all(path.parent().expect("has a parent"))
            .and_then(|()| fs::write(path, bytes))
            .map_err(|source| Error::Io { path: path.to_owned(), source })
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
        // Spec §4k: the verifier's logs and the importer's checker log are salted as the
        // runner's own are (the agent's files are kept as the agent made them).
        crate::run::salt_logs(&dir)?;
        *outcomes.entry(trial.record.outcome).or_default() += 1;
    }
    let evaluation = Evaluation {
        heldout: None,
        benchmark: Benchmark {
            name: if changed { "RExBench, changed tasks".into() } else { "RExBench".into() },
            version: "1.0".into(),
            task_set_digest: digest.to_hex(),
        },
        runner: Some(RunnerInfo {
            name: crate::pack::RUNNER_NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }),
        provenance: Some(Provenance::new(ProvenanceKind::Imported, Some(source.clone()))),
        // Harbor's runs carry no metrics (its reward is the outcome): nothing to seal.
        public_checks: None,
    };
    write(
        &staging.path().join("evaluation.json"),
        &serde_json::to_vec_pretty(&evaluation).expect("serializes"),
    )?;
    write(&staging.path().join("agent.toml"), agent_toml(&agent).as_bytes())?;

    if opts.out.exists() {
        fs::remove_dir(&opts.out).map_err(|source| Error::Io { path: opts.out.clone(), source })?;
    }
    let staged = staging.keep();
    fs::rename(&staged, &opts.out).map_err(|source| {
        let _ = fs::remove_dir_all(&staged);
        Error::Io { path: opts.out.clone(), source }
    })?;
    Ok(Imported { runs: trials.len(), outcomes, source, agent, comparison })
}
