//! Harbor's regrades (bundle spec section 4i): a trial whose `config.source_trial` says
//! `regrade` did not run the agent; it verified a recorded trial's outputs again, from
//! copies of its `agent/` and `artifacts/`. The agent ran once, so the import counts
//! one attempt: the regrade's verdict in the source trial's place, saying what the
//! source was judged. A regrade whose source is not among the imported trials, or whose
//! copies are not byte for byte the source's, is refused: otherwise a regrade could
//! count as an attempt of its own, or bring another patch in under an earlier run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use benchmark::confined::Folder;
use bundle::{Digest, Regraded};

use super::trial::{Content, Known, Trial, files_under};
use crate::Error;

/// What a regrade copies from its source, beneath the trial's folder. (Harbor writes
/// `artifacts/manifest.json` anew for each trial it collects: not a copy.)
const COPIED: [&str; 2] = ["agent", "artifacts"];
const OWN: &str = "artifacts/manifest.json";

/// `trials` (of the jobs in `folders`) with every regrade in its source's place: the
/// source's attempt, the regrade's verdict and files, `regraded.from` the source's
/// outcome. A regrade of a regrade stands in for the first trial, the latest regrade
/// (by start) counting.
pub(super) fn resolve(
    trials: Vec<Trial>,
    folders: &[Folder],
    known: &BTreeMap<String, Known>,
) -> Result<Vec<Trial>, Error> {
    if trials.iter().all(|t| t.regrades.is_none()) {
        return Ok(trials);
    }
    // Which trial each regrade re-verified, by index.
    let mut source_of: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, t) in trials.iter().enumerate() {
        let Some(source) = &t.regrades else { continue };
        let by_id =
            source.trial_id.as_deref().and_then(|id| trials.iter().position(|s| s.id.as_deref() == Some(id)));
        let by_path = || {
            let name = Path::new(source.path.as_deref()?).file_name()?.to_str()?;
            trials.iter().position(|s| s.name == name)
        };
        let found = by_id.or_else(by_path).filter(|s| *s != i);
        let Some(s) = found else {
            let named = match (&source.trial_id, &source.path) {
                (Some(id), Some(path)) => format!("trial {id} ({path})"),
                (Some(id), None) => format!("trial {id}"),
                (None, Some(path)) => format!("the trial at {path}"),
                (None, None) => "no trial".to_owned(),
            };
            return Err(Error::Invalid {
                path: t.result_path.clone(),
                detail: format!(
                    "trial `{}` is a regrade of {named} ({} source), which is not among the trials imported: \
                     import the job that ran the agent beside this one, so that its run counts once",
                    t.name, source.kind
                ),
            });
        };
        same_outputs(&trials[i], &trials[s], folders)?;
        source_of.insert(i, s);
    }
    // Each regrade's first trial (following regrades of regrades), and the latest
    // regrade of each first trial.
    let first = |mut i: usize| {
        let mut seen = 0;
        while let Some(&s) = source_of.get(&i) {
            i = s;
            seen += 1;
            if seen > trials.len() {
                break;
            }
        }
        i
    };
    let mut latest: BTreeMap<usize, usize> = BTreeMap::new();
    for &r in source_of.keys() {
        let root = first(r);
        let later = |a: &Trial, b: &Trial| (a.started, &a.name) > (b.started, &b.name);
        match latest.get(&root) {
            Some(&have) if !later(&trials[r], &trials[have]) => {}
            _ => {
                latest.insert(root, r);
            }
        }
    }
    let replaced: BTreeMap<usize, usize> = latest.iter().map(|(&root, &r)| (r, root)).collect();
    let mut slots: Vec<Option<Trial>> = trials.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(slots.len());
    for i in 0..slots.len() {
        if let Some(&root) = replaced.get(&i) {
            let source = slots[root].as_ref().expect("a first trial is taken once");
            let (started, from, task, hint) =
                (source.started, source.record.outcome, source.task.clone(), source.hint);
            let duration_s = source.record.duration_s;
            let source_name = source.name.clone();
            let mut regrade = slots[i].take().expect("a regrade is taken once");
            if (regrade.task.as_str(), regrade.hint) != (task.as_str(), hint) {
                return Err(Error::Invalid {
                    path: regrade.result_path.clone(),
                    detail: format!(
                        "trial `{}` regrades a trial of task {task} ({hint}), but ran task {} ({})",
                        regrade.name, regrade.task, regrade.hint
                    ),
                });
            }
            // The agent run's time, not the verifier's alone: the duration and the
            // timing check are the source's run's, judged by the regrade's verdict.
            regrade.started = started;
            regrade.record.duration_s = duration_s;
            if let Some((_, Content::Bytes(log))) =
                regrade.files.iter_mut().find(|(n, _)| n == "checker_log.txt")
            {
                log.extend_from_slice(
                    format!(
                        "a regrade of trial `{source_name}`, which Harbor judged {from}: the agent ran once, and \
                         this verdict on the same outputs is the one that counts\n"
                    )
                    .as_bytes(),
                );
            }
            regrade.record.regraded = Some(Regraded { from });
            if let Some(k) = known.get(&regrade.task) {
                let fast = benchmark::integrity::IMPLAUSIBLY_FAST.slug;
                regrade.record.findings.retain(|f| f.check != fast);
                benchmark::integrity::add_timing(
                    &mut regrade.record.findings,
                    &k.card,
                    regrade.record.outcome,
                    duration_s,
                );
            }
            out.push(regrade);
        }
    }
    // Every first trial with a regrade, and every regrade but the latest, is replaced.
    let gone: Vec<usize> = source_of.keys().copied().chain(latest.keys().copied()).collect();
    for (i, slot) in slots.into_iter().enumerate() {
        if let Some(t) = slot
            && !gone.contains(&i)
        {
            out.push(t);
        }
    }
    Ok(out)
}

/// The regrade's copies of the source's `agent/` and `artifacts/` hold the same files
/// with the same bytes; else the regrade is refused, naming the first file that differs.
fn same_outputs(regrade: &Trial, source: &Trial, folders: &[Folder]) -> Result<(), Error> {
    let digests = |t: &Trial| -> Result<BTreeMap<PathBuf, Digest>, Error> {
        let job = &folders[t.job];
        let mut out = BTreeMap::new();
        for part in COPIED {
            for rel in files_under(job, &t.dir.join(part))? {
                let inside = rel.strip_prefix(&t.dir).unwrap_or(&rel).to_owned();
                if inside == Path::new(OWN) {
                    continue;
                }
                out.insert(inside, Digest::of(&job.read(&rel)?));
            }
        }
        Ok(out)
    };
    let (ours, theirs) = (digests(regrade)?, digests(source)?);
    let refused = |detail: String| Error::Invalid { path: regrade.result_path.clone(), detail };
    for (file, theirs_digest) in &theirs {
        match ours.get(file) {
            Some(d) if d == theirs_digest => {}
            Some(d) => {
                return Err(refused(format!(
                    "trial `{}` regrades trial `{}`, but its copy of {} is not the source's (SHA-256 {}, the \
                     source's {}): a regrade verifies the same outputs again",
                    regrade.name,
                    source.name,
                    file.display(),
                    d.to_hex(),
                    theirs_digest.to_hex()
                )));
            }
            None => {
                return Err(refused(format!(
                    "trial `{}` regrades trial `{}`, but has no copy of the source's {} (SHA-256 {})",
                    regrade.name,
                    source.name,
                    file.display(),
                    theirs_digest.to_hex()
                )));
            }
        }
    }
    if let Some((file, d)) = ours.iter().find(|(f, _)| !theirs.contains_key(*f)) {
        return Err(refused(format!(
            "trial `{}` regrades trial `{}`, but holds {} (SHA-256 {}), which the source does not: a regrade \
             copies the source's outputs, and adds none",
            regrade.name,
            source.name,
            file.display(),
            d.to_hex()
        )));
    }
    Ok(())
}
