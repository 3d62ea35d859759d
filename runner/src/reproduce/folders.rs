//! `<out>/<bundle id>/`, the folder `reproduce` re-runs a submission's sample in: what it
//! keeps of a stored reproduction, and what it resumes of an interrupted one.

use std::fs;
use std::path::PathBuf;

use bundle::Digest;

use super::{QueuedRun, Skip};
use crate::Error;

/// The reproduction `reproduce` packs in `<out>/<bundle>/`, until the server stores it.
pub(super) const BUNDLE: &str = "reproduction.rexb.tar.gz";

/// Moves a stored reproduction and what it re-ran (`outputs`, `results`, `heldout`) into
/// `<dir>/submitted/<its bundle id>/`, for the maintainers to read; where it goes.
pub(super) fn archive(dir: &std::path::Path, answer: &serde_json::Value) -> Result<PathBuf, Skip> {
    let id = answer["bundle_id"].as_str().filter(|id| Digest::from_hex(id).is_some()).ok_or_else(|| {
        Skip(format!("the server stored the reproduction in {} but named no bundle id", dir.display()))
    })?;
    let kept = dir.join("submitted").join(id);
    let _ = benchmark::tree::remove(&kept);
    fs::create_dir_all(&kept).map_err(Error::io_at(&kept))?;
    for name in ["outputs", "results", "heldout", BUNDLE] {
        let from = dir.join(name);
        if fs::symlink_metadata(&from).is_ok() {
            fs::rename(&from, kept.join(name)).map_err(Error::io_at(&from))?;
        }
    }
    Ok(kept.join(BUNDLE))
}

/// Keeps, of what an earlier `reproduce` of this submission left, the results of the runs
/// still waiting (`runs`), which it resumes: the patches are written again, and the
/// results and held-out re-runs of any other run are removed.
pub(super) fn prune(dir: &std::path::Path, runs: &[QueuedRun]) -> Result<(), Skip> {
    let waiting: std::collections::BTreeSet<PathBuf> = runs
        .iter()
        .map(|r| PathBuf::from(&r.task).join(r.hint.as_str()).join(r.attempt.to_string()))
        .collect();
    let outputs = dir.join("outputs");
    benchmark::tree::remove(&outputs).map_err(|e| Skip(format!("{}: {e}", outputs.display())))?;
    let mut results = vec![dir.join("results")];
    if let Ok(variants) = fs::read_dir(dir.join("heldout")) {
        for v in variants.flatten() {
            let _ = benchmark::tree::remove(&v.path().join("outputs"));
            results.push(v.path().join("results"));
        }
    }
    for results in results {
        let runs = results.join("runs");
        for task in children(&runs) {
            for hint in children(&task) {
                for attempt in children(&hint) {
                    let rel = attempt.strip_prefix(&runs).expect("under runs").to_owned();
                    if !waiting.contains(&rel) {
                        benchmark::tree::remove(&attempt)
                            .map_err(|e| Skip(format!("{}: {e}", attempt.display())))?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// The folders in `dir` (none where it is not one), never through a link.
fn children(dir: &std::path::Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect()
}

/// The logs a re-run leaves (its command's output and its check's), which
/// [`cut_logs`] may shorten: the patch and the runner's notes stay whole.
const LOGS: [&str; 3] = ["stdout", "stderr", "checker_log"];

/// Cuts each log of each run in `results` to at most `cap` bytes (its first and last
/// halves, with a line between saying how much went), so that the reproduction fits the
/// server's bundle limit: a re-run's logs, which its patch chose, never keep its verdict
/// from the board. How many logs were cut.
pub(super) fn cut_logs(results: &std::path::Path, cap: u64) -> Result<usize, Skip> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let runs = results.join("runs");
    let mut cut = 0;
    for task in children(&runs) {
        for hint in children(&task) {
            for attempt in children(&hint) {
                let Ok(entries) = fs::read_dir(&attempt) else { continue };
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let is_log = LOGS.iter().any(|l| name.split('.').next() == Some(*l));
                    let Ok(meta) = e.metadata() else { continue };
                    if !is_log || !meta.is_file() || meta.len() <= cap {
                        continue;
                    }
                    let path = e.path();
                    let io = |err: std::io::Error| Skip(format!("cutting {}: {err}", path.display()));
                    let half = cap / 2;
                    let mut file = fs::File::open(&path).map_err(io)?;
                    let mut head = vec![0; half as usize];
                    file.read_exact(&mut head).map_err(io)?;
                    let mut tail = vec![0; half as usize];
                    file.seek(SeekFrom::End(-(half as i64))).map_err(io)?;
                    file.read_exact(&mut tail).map_err(io)?;
                    let gone = meta.len() - 2 * half;
                    let tmp = path.with_extension("cut");
                    let mut out = fs::File::create(&tmp).map_err(io)?;
                    out.write_all(&head).map_err(io)?;
                    write!(
                        out,
                        "\n[rexbench reproduce: {gone} bytes cut here, so that the reproduction fits the server's bundle \
                         limit]\n"
                    )
                    .map_err(io)?;
                    out.write_all(&tail).map_err(io)?;
                    out.sync_all().map_err(io)?;
                    fs::rename(&tmp, &path).map_err(io)?;
                    cut += 1;
                }
            }
        }
    }
    Ok(cut)
}

/// Submits every reproduction packed above, in the queue's order, once all of them are:
/// when each arrives then tells nothing of how long its own re-runs took, which a
/// patch could shape (by sleeping) to signal what it read here (spec §4j). Once
/// stored, what a reproduction re-ran is kept apart: the next `reproduce` starts afresh.
/// One whose answer never comes is submitted again by the next `reproduce`.
pub(super) fn submit_all(opts: &super::Options, reports: &mut [super::Report]) -> Result<(), Error> {
    for report in reports.iter_mut().filter(|r| r.verdict.is_none() && r.skipped.is_none()) {
        let Some(path) = report.bundle.clone() else { continue };
        let verdict = crate::submit::submit(&path, &opts.server)?;
        report.bundle = Some(match &verdict {
            crate::submit::Verdict::Accepted { body, .. } => {
                match archive(&opts.out.join(&report.bundle_id), body) {
                    Ok(kept) => kept,
                    Err(super::Skip(why)) => {
                        eprintln!("submission {}: stored, but {why}", report.bundle_id);
                        path
                    }
                }
            }
            crate::submit::Verdict::Refused { .. } => path,
        });
        report.verdict = Some(verdict);
    }
    Ok(())
}

/// Makes `dir` (and its parents) and leaves it readable by its owner only.
pub(super) fn private_dir(dir: &std::path::Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt as _;
    let io = |e: std::io::Error| Error::Setup(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)
}
