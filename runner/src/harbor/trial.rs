//! One trial folder: its result, reward, patch, agent logs and trajectory, read beneath
//! the job folder's handle, judged into a run record and the files the run folder will
//! hold.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use benchmark::confined::{Folder, Kind, file_limit};
use bundle::{Hint, Outcome, REXBENCH_TASKS};
use serde::de::DeserializeOwned;
use time::OffsetDateTime;

use crate::results::RunRecord;

use super::Options;
use super::format::*;
use super::policy::{Recorded, Validity};
use crate::Error;

/// `dir/result.json`, which every job and trial folder Harbor finished holds.
pub(super) fn result_json(job: &Folder, dir: &Path, otherwise: &str) -> Result<PathBuf, Error> {
    let path = dir.join("result.json");
    if job.kind(&path)?.is_some() {
        return Ok(path);
    }
    Err(Error::Invalid { path: job.shown(dir), detail: format!("has no result.json: {otherwise}") })
}

/// Reads a JSON file, naming the field at fault when it does not fit.
pub(super) fn read_json<T: DeserializeOwned>(job: &Folder, rel: &Path, what: &str) -> Result<T, Error> {
    let bytes = job.read(rel)?;
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." { String::new() } else { format!(" (at `{at}`)") };
        Error::Invalid { path: job.shown(rel), detail: format!("not {what}: {}{at}", e.inner()) }
    })
}

pub(super) fn read_optional_json<T: DeserializeOwned>(
    job: &Folder,
    rel: &Path,
    what: &str,
) -> Result<Option<T>, Error> {
    if job.kind(rel)?.is_some() { read_json(job, rel, what).map(Some) } else { Ok(None) }
}

/// What a run folder's file is made of.
pub(super) enum Content {
    Bytes(Vec<u8>),
    /// A file of the job folder, copied as it is.
    Copy(PathBuf),
    /// The agent's text logs, one after another with a header each.
    AgentLogs(Vec<PathBuf>),
}

/// A trial, judged and placed, before its attempt number is known.
pub(super) struct Trial {
    /// Which of the jobs it belongs to.
    pub(super) job: usize,
    /// Its `result.json`, as the user knows it.
    pub(super) result_path: PathBuf,
    pub(super) task: String,
    pub(super) hint: Hint,
    pub(super) started: Option<OffsetDateTime>,
    pub(super) name: String,
    pub(super) agent: AgentInfo,
    /// Harbor's `agent__model__dataset` key for the job's own counts.
    pub(super) evals_key: String,
    /// Judged by Harbor 0.26's `reward_valid` rule.
    pub(super) by_validity: bool,
    /// Harbor's name of the task it ran (pass@k groups by it).
    pub(super) harbor_task: String,
    /// Whether it recorded an exception (the trial's own or a step's): what Harbor's
    /// `n_errored_trials` counts.
    pub(super) errored: bool,
    /// Its folder beneath the job folder.
    pub(super) dir: PathBuf,
    /// Harbor's UUID of the trial.
    pub(super) id: Option<String>,
    /// The trial it regrades, if it is a regrade.
    pub(super) regrades: Option<SourceTrial>,
    /// Which task folder it ran: its lock's digest, else its result's `task_checksum`.
    pub(super) ran: Option<Ran>,
    pub(super) record: RunRecord,
    /// Artifact file name in the run folder → what it holds.
    pub(super) files: Vec<(String, Content)>,
}

/// The trial's reward: `verifier_result.rewards.reward`, or the verifier's reward file.
pub(super) fn reward(
    job: &Folder,
    dir: &Path,
    result_path: &Path,
    verifier: &VerifierResult,
) -> Result<f64, Error> {
    if let Some(r) = verifier.rewards.as_ref().and_then(|r| r.get("reward")) {
        return Ok(*r);
    }
    let txt = dir.join("verifier/reward.txt");
    if let Some(bytes) = job.read_if_present(&txt)? {
        let text = String::from_utf8_lossy(&bytes);
        return text.trim().parse().map_err(|_| Error::Invalid {
            path: job.shown(&txt),
            detail: format!("`{}` is not a reward", text.trim()),
        });
    }
    let json = dir.join("verifier/reward.json");
    if let Some(rewards) = read_optional_json::<BTreeMap<String, f64>>(job, &json, "a reward file")? {
        return rewards
            .get("reward")
            .copied()
            .ok_or_else(|| Error::Invalid { path: job.shown(&json), detail: "has no `reward`".into() });
    }
    Err(Error::Invalid {
        path: job.shown(result_path),
        detail: "`verifier_result.rewards` has no `reward`, and verifier/ holds no reward file".into(),
    })
}

/// `rel`, if something is there: checked now (a regular file within the limits,
/// beneath the job folder), copied when the run is written.
pub(super) fn copy_if_present(job: &Folder, rel: &Path) -> Result<Option<Content>, Error> {
    if job.kind(rel)?.is_none() {
        return Ok(None);
    }
    job.open_file(rel, file_limit())?;
    Ok(Some(Content::Copy(rel.to_owned())))
}

/// Every file under `dir` (relative to the job folder), in path order. Anything
/// that is neither a file nor a folder is refused, as is a link out of the job folder.
pub(super) fn files_under(job: &Folder, dir: &Path) -> Result<Vec<PathBuf>, Error> {
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
pub(super) fn patch(job: &Folder, dir: &Path) -> Result<Option<(PathBuf, Vec<u8>)>, Error> {
    let artifacts = dir.join("artifacts");
    let found: Vec<PathBuf> = files_under(job, &artifacts)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "patch" || e == "diff"))
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some((one.clone(), job.read(one)?))),
        several => Err(Error::Invalid {
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
pub(super) struct AgentFiles {
    /// Its files but the trajectory, for the agent log (text ones only, when written).
    pub(super) logs: Vec<PathBuf>,
    /// `trajectory.json`, Harbor's ATIF.
    pub(super) trajectory: Option<PathBuf>,
}

pub(super) fn agent_files(job: &Folder, dir: &Path) -> Result<AgentFiles, Error> {
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
pub(super) fn write_agent_logs(job: &Folder, logs: &[PathBuf], to: &Path) -> Result<(), Error> {
    let io = |source| Error::Io { path: to.to_owned(), source };
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
pub(super) struct Known {
    pub(super) card: crate::task::TaskCard,
    pub(super) check: Option<benchmark::check::CheckSpec>,
    pub(super) gold_files: Vec<String>,
}

/// Harbor 0.26's rule, where the trial or its job's version calls for it: whether the
/// reward counts. `None` for older jobs, where every reward counts.
fn validity(t: &TrialResult, version: Option<&str>) -> Result<Option<Validity>, String> {
    if !t.written_by_0_26() && !super::policy::graded_by_validity(version) {
        return Ok(None);
    }
    let recorded: Vec<Recorded<'_>> = t
        .recorded_exceptions()
        .map(|e| Recorded {
            exception_type: &e.exception_type,
            written: e.policy,
            override_written: e.policy_override,
        })
        .collect();
    let none = BTreeMap::new();
    let overrides = t.config.as_ref().map(|c| &c.override_error_policy).unwrap_or(&none);
    let has_reward =
        t.verifier_result.as_ref().and_then(|v| v.rewards.as_ref()).is_some_and(|r| !r.is_empty());
    super::policy::validity(
        has_reward,
        &recorded,
        overrides,
        t.reward_valid,
        super::policy::table_applies(version),
    )
    .map(Some)
}

/// The trial in `dir`, a folder of the job folder `job` (the `index`-th job, written by
/// Harbor `version` where its lock says).
pub(super) fn read_trial(
    job: &Folder,
    index: usize,
    dir: &Path,
    opts: &Options,
    known: &BTreeMap<String, Known>,
    version: Option<&str>,
) -> Result<Trial, Error> {
    let result_rel = result_json(job, dir, "the trial did not finish, or this is not a Harbor job folder")?;
    let t: TrialResult = read_json(job, &result_rel, "a Harbor trial result")?;
    let result_path = job.shown(&result_rel);
    let invalid = |detail: String| Error::Invalid { path: result_path.clone(), detail };
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
    let validity = validity(&t, version).map_err(|e| invalid(format!("trial `{}`: {e}", t.trial_name)))?;
    let mut log = String::from("Judged by Harbor's verifier when the job ran; imported, not re-run.\n");
    let not_counted = match &validity {
        Some(Validity::InvalidAfter(cause)) => Some((
            cause.clone(),
            format!(
                "not counted: Harbor marks this reward as not valid (`reward_valid: false`): by its error \
                 policy a trial that raised `{cause}` has no valid reward, and the job's mean and pass@k \
                 leave the trial out\n"
            ),
        )),
        Some(Validity::NoReward) => Some((
            t.recorded_exceptions()
                .next()
                .map(|e| e.exception_type.clone())
                .unwrap_or_else(|| "no reward".into()),
            "not counted: the verifier gave no reward (`reward_valid: false`), and the job's mean and \
             pass@k leave the trial out\n"
                .to_owned(),
        )),
        Some(Validity::Valid) | None => None,
    };
    let (outcome, error_type) = match (&t.verifier_result, not_counted) {
        (verifier, Some((cause, why))) => {
            if let Some(r) = verifier.as_ref().and_then(|v| v.rewards.as_ref()).and_then(|r| r.get("reward"))
            {
                log.push_str(&format!("reward: {r}\n"));
            }
            log.push_str(&why);
            (Outcome::InfraError, Some(cause))
        }
        (verifier, None) => match verifier {
            Some(verifier) => {
                let r = reward(job, dir, &result_rel, verifier)?;
                log.push_str(&format!("reward: {r}\n"));
                if r == 1.0 {
                    (Outcome::Success, exception.clone())
                } else if r == 0.0 {
                    // The adapter's test.sh says so when the experiment itself failed.
                    if text(&verifier_out).contains("run_docker.sh failed") {
                        let classified =
                            crate::error_class::classify_error(&text(&verifier_err), &text(&verifier_out));
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
                (
                    Outcome::InfraError,
                    Some(exception.clone().unwrap_or_else(|| "no verifier result".to_owned())),
                )
            }
        },
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
        // A class name (spec §4g: the manifest quotes no output): Harbor records the
        // exception's type; anything else in its place is not kept.
        error_type: error_type.filter(|e| is_class_name(e)),
        file_recall: patch.as_ref().and_then(|_| crate::patch::file_recall(&changed, gold)),
        files_changed: (!changed.is_empty()).then_some(changed),
        duration_s,
        cost_usd,
        tokens: t.agent_result.as_ref().and_then(AgentContext::tokens),
        task_folder: None,
        metrics: BTreeMap::new(),
        findings: Vec::new(),
        regraded: None,
    };
    let agent = agent_files(job, dir)?;
    // Harbor's own count, else the agent's trajectory's (read beneath the job, bounded).
    if record.tokens.is_none()
        && let Some(rel) = &agent.trajectory
    {
        record.tokens = benchmark::cost::atif_tokens(&job.read(rel)?);
    }
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
    let errored = t.recorded_exceptions().next().is_some();
    let regrades = t.config.as_ref().and_then(|c| c.source_trial.clone());
    if let Some(s) = regrades.as_ref().filter(|s| s.action != "regrade") {
        return Err(invalid(format!(
            "trial `{}` derives from another by `{}`, which this import does not read (Harbor 0.26 knows \
             `regrade` only)",
            t.trial_name, s.action
        )));
    }
    let lock: Option<TrialLock> = read_optional_json(job, &dir.join("lock.json"), "a Harbor trial lock")?;
    let ran = match (lock, &t.task_checksum) {
        (Some(lock), _) => Some(Ran::Digest(lock.task.digest)),
        (None, Some(checksum)) => Some(Ran::Checksum(checksum.clone())),
        (None, None) => None,
    };
    // Spec §4n: the folder it ran, in a form a bundle takes (else left out).
    record.task_folder =
        ran.as_ref().map(|r| r.folder().to_ascii_lowercase()).filter(|f| bundle::is_task_folder(f));
    Ok(Trial {
        job: index,
        ran,
        dir: dir.to_owned(),
        id: t.id.clone(),
        regrades,
        result_path,
        task,
        hint,
        started,
        evals_key: t.evals_key(),
        by_validity: validity.is_some(),
        errored,
        harbor_task: t.task_name.clone(),
        name: t.trial_name,
        agent: t.agent_info,
        record,
        files,
    })
}
