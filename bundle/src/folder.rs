//! Section 4n: the task folder a run ran, as its harness recorded it, and the rule of
//! one folder per task in a bundle.

use crate::error::BundleError;
use crate::manifest::Manifest;

/// Section 4n: a Harbor lock's task digest, or a trial's `task_checksum`.
pub fn is_task_folder(s: &str) -> bool {
    let hex = |h: &str, most: usize| {
        (1..=most).contains(&h.len()) && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    match s.strip_prefix("sha256:") {
        Some(digest) => digest.len() == 64 && hex(digest, 64),
        None => hex(s, 128),
    }
}

/// Section 4n: one task, one folder. Every run of a task that states the folder it ran
/// states the same one.
pub(crate) fn validate(m: &Manifest) -> Result<(), BundleError> {
    let mut first: std::collections::BTreeMap<&str, &str> = std::collections::BTreeMap::new();
    for run in &m.runs {
        let Some(folder) = run.task_folder.as_deref() else { continue };
        let seen = *first.entry(run.task.as_str()).or_insert(folder);
        if seen != folder {
            return Err(BundleError::TaskFolderSplit {
                task: run.task.to_string(),
                first: seen.to_owned(),
                second: folder.to_owned(),
            });
        }
    }
    Ok(())
}
