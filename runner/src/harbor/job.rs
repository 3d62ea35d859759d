//! One job folder: its result, config and lock, and its trials.

use std::collections::BTreeMap;
use std::path::Path;

use benchmark::confined::{Folder, Kind};

use super::Options;
use super::format::*;
use super::trial::*;
use crate::Error;

pub(super) struct Job {
    pub(super) folder: Folder,
    pub(super) name: String,
    pub(super) harbor_version: Option<String>,
    pub(super) trials: Vec<Trial>,
    /// Harbor's own statistics beside the import's, one line each: the trials it
    /// finished and those that errored, and, where the job was judged by Harbor 0.26's
    /// rule, per `agent__model__dataset` the trials it counts, their mean and pass@k.
    pub(super) comparison: Vec<String>,
}

/// The job in `dir`, the `index`-th of those imported.
pub(super) fn read_job(
    dir: &Path,
    index: usize,
    opts: &Options,
    known: &BTreeMap<String, Known>,
) -> Result<Job, Error> {
    let folder = Folder::open(dir, "Harbor job folder")?;
    let job = &folder;
    let root = Path::new("");
    let result_rel = result_json(job, root, "not a Harbor job folder")?;
    let result: JobResult = read_json(job, &result_rel, "a Harbor job result")?;
    let unfinished = result.stats.n_running_trials + result.stats.n_pending_trials;
    if unfinished > 0 {
        return Err(Error::Invalid {
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
    let version = harbor_version.as_deref().or(opts.harbor_version.as_deref());
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
        trials.push(read_trial(job, index, &trial_dir, opts, known, version)?);
    }
    if trials.is_empty() {
        return Err(Error::Invalid { path: dir.to_owned(), detail: "holds no trials".into() });
    }
    if let Some(graded) = trials.iter().find(|t| t.by_validity)
        && let Some(other) = trials.iter().find(|t| !t.by_validity)
    {
        return Err(Error::Invalid {
            path: other.result_path.clone(),
            detail: format!(
                "trial `{}` carries none of what Harbor 0.26 writes (`reward_valid`, `schema_version`, an \
                 exception's `policy`), but trial `{}` of the same job does: one Harbor writes a job",
                other.name, graded.name
            ),
        });
    }
    let refused = |detail| Error::Invalid { path: job.shown(&result_rel), detail };
    let mut comparison = same_counts(&result.stats, &trials).map_err(refused)?;
    if trials.iter().any(|t| t.by_validity) {
        comparison.extend(same_mean(&result.stats.evals, &trials).map_err(refused)?);
        comparison.extend(same_pass_at_k(&result.stats.evals, &trials).map_err(refused)?);
    }
    Ok(Job { folder, name, harbor_version, trials, comparison })
}

/// Harbor's job result counts the trials it finished (`n_completed_trials`; `n_trials`
/// in older jobs) and those that recorded an exception (`n_errored_trials`; `n_errors`).
/// The job folder must hold as many: a trial taken out of it (a failure a submitter
/// would rather not count) or one added is refused.
fn same_counts(stats: &JobStats, trials: &[Trial]) -> Result<Vec<String>, String> {
    let mut lines = Vec::new();
    let changed = "the job folder was changed after Harbor wrote it";
    if let Some(n) = stats.completed() {
        let held = trials.len() as u64;
        if n != held {
            return Err(format!(
                "Harbor's job result counts {n} completed trials (`n_completed_trials`), but the job folder \
                 holds {held}: {changed}"
            ));
        }
        lines.push(format!(
            "Harbor counts {n} completed trials (`n_completed_trials`); imported {held}, the same"
        ));
    }
    if let Some(n) = stats.errored() {
        let ours = trials.iter().filter(|t| t.errored).count() as u64;
        if n != ours {
            return Err(format!(
                "Harbor's job result counts {n} trials that recorded an exception (`n_errored_trials`), but \
                 {ours} of the job folder's trials record one: {changed}"
            ));
        }
        lines.push(format!(
            "Harbor counts {n} trials that recorded an exception (`n_errored_trials`); imported {ours}, the same"
        ));
    }
    Ok(lines)
}

/// Harbor 0.26's pass@k per `agent__model__dataset`, computed as Harbor computes it:
/// over the trials whose reward is valid, per task the unbiased estimate
/// 1 − C(n−c, k)/C(n, k), averaged over tasks, for k = 2, 4, 8, … and 5, 10, 15, … up to
/// the fewest trials of any task. The import must find the same values.
fn same_pass_at_k(
    evals: &BTreeMap<String, serde_json::Value>,
    trials: &[Trial],
) -> Result<Vec<String>, String> {
    let mut lines = Vec::new();
    for (key, theirs) in evals {
        let Some(theirs) = theirs.get("pass_at_k").and_then(|p| p.as_object()).filter(|p| !p.is_empty())
        else {
            continue;
        };
        let mut by_task: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
        for t in
            trials.iter().filter(|t| t.evals_key == *key && t.record.outcome != bundle::Outcome::InfraError)
        {
            let e = by_task.entry(t.harbor_task.as_str()).or_default();
            e.0 += 1;
            e.1 += u64::from(t.record.outcome == bundle::Outcome::Success);
        }
        let ours = pass_at_k(&by_task);
        let theirs: BTreeMap<u64, f64> =
            theirs.iter().filter_map(|(k, v)| Some((k.parse().ok()?, v.as_f64()?))).collect();
        let same = ours.len() == theirs.len()
            && ours.iter().zip(&theirs).all(|((k, a), (j, b))| k == j && (a - b).abs() <= 1e-9);
        let said = |m: &BTreeMap<u64, f64>| {
            m.iter().map(|(k, v)| format!("pass@{k} {v}")).collect::<Vec<_>>().join(", ")
        };
        if !same {
            return Err(format!(
                "Harbor's job result gives `{key}` {}, but its trials, read by Harbor 0.26's rule, give {}: the \
                 job folder was changed after Harbor wrote it",
                said(&theirs),
                if ours.is_empty() { "none".to_owned() } else { said(&ours) }
            ));
        }
        lines.push(format!("`{key}`: Harbor's {}; imported the same", said(&theirs)));
    }
    Ok(lines)
}

/// pass@k over tasks of (trials, successes), as Harbor's `_compute_pass_at_k_for_trials`.
fn pass_at_k(by_task: &BTreeMap<&str, (u64, u64)>) -> BTreeMap<u64, f64> {
    let Some(fewest) = by_task.values().map(|(n, _)| *n).min() else { return BTreeMap::new() };
    let mut ks: Vec<u64> =
        std::iter::successors(Some(2u64), |k| Some(k * 2)).take_while(|k| *k <= fewest).collect();
    ks.extend((5..=fewest).step_by(5));
    ks.sort_unstable();
    ks.dedup();
    ks.into_iter()
        .map(|k| {
            let per_task = by_task.values().map(|&(n, c)| {
                if n - c < k {
                    return 1.0;
                }
                1.0 - (0..k).map(|i| (n - c - i) as f64 / (n - i) as f64).product::<f64>()
            });
            (k, per_task.sum::<f64>() / by_task.len() as f64)
        })
        .collect()
}

/// Harbor 0.26's job result counts only trials whose reward is valid: per
/// `agent__model__dataset`, `n_trials` of them, and a `mean` of their rewards. The import
/// must count the same trials and find the same rate; a job whose trials say otherwise
/// was changed after Harbor wrote it, and is refused. A job result without counts (one
/// Harbor did not finish writing) is not compared.
fn same_mean(evals: &BTreeMap<String, serde_json::Value>, trials: &[Trial]) -> Result<Vec<String>, String> {
    if evals.is_empty() {
        return Ok(Vec::new());
    }
    let mut ours: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for t in trials {
        let entry = ours.entry(t.evals_key.as_str()).or_default();
        if t.record.outcome != bundle::Outcome::InfraError {
            entry.0 += 1;
            entry.1 += u64::from(t.record.outcome == bundle::Outcome::Success);
        }
    }
    let mut lines = Vec::new();
    for (key, &(counted, successes)) in &ours {
        let theirs = evals.get(*key);
        let n = theirs.and_then(|e| e.get("n_trials")).and_then(|n| n.as_u64()).unwrap_or(0);
        let mean = theirs
            .and_then(|e| e.get("metrics"))
            .and_then(|m| m.as_array())
            .and_then(|m| m.iter().find_map(|x| x.get("mean").and_then(|v| v.as_f64())));
        let rate = if counted == 0 { None } else { Some(successes as f64 / counted as f64) };
        let ours_said = format!(
            "its trials, read by Harbor 0.26's rule, count {counted} with {successes} successes{}",
            rate.map(|r| format!(" ({r})")).unwrap_or_default()
        );
        if n != counted {
            return Err(format!(
                "Harbor's job result counts {n} trials of `{key}` whose reward is valid, but {ours_said}: \
                 the job folder was changed after Harbor wrote it"
            ));
        }
        if let (Some(m), Some(r)) = (mean, rate)
            && (m - r).abs() > 1e-9
        {
            return Err(format!(
                "Harbor's job result gives `{key}` a mean of {m} over {n} trials, but {ours_said}: \
                 the job folder was changed after Harbor wrote it"
            ));
        }
        lines.push(match mean {
            Some(m) => format!("`{key}`: Harbor's mean {m} over the {n} trials it counts; imported {successes} of {counted}, the same"),
            None => format!("`{key}`: Harbor counts {n} trials; imported {counted}, the same"),
        });
    }
    Ok(lines)
}
