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

/// Section 4n: one task, one folder. Where any run of a task states the folder it ran,
/// every run of that task states the same one (a run that states none beside them could
/// have run any).
pub(crate) fn validate(m: &Manifest) -> Result<(), BundleError> {
    let mut first: std::collections::BTreeMap<&str, Option<&str>> = std::collections::BTreeMap::new();
    for run in &m.runs {
        let folder = run.task_folder.as_deref();
        let seen = *first.entry(run.task.as_str()).or_insert(folder);
        if seen != folder {
            let said = |f: Option<&str>| f.unwrap_or("none stated").to_owned();
            return Err(BundleError::TaskFolderSplit {
                task: run.task.to_string(),
                first: said(seen),
                second: said(folder),
            });
        }
    }
    Ok(())
}
