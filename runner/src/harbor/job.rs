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
        return Err(Error::Invalid { path: dir.to_owned(), detail: "holds no trials".into() });
    }
    Ok(Job { folder, name, harbor_version, trials })
}
