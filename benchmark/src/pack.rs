//! `rexbench pack`: an evaluation results directory plus agent information → a signed
//! bundle. The layout is documented in `runner/README.md`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::results::{Evaluation, RunRecord};
use bundle::{
    Agent, BundleBuilder, Digest, Hint, Manifest, Provenance, ProvenanceKind, Run, RunnerInfo, SecretKey,
};

pub const RUNNER_NAME: &str = "rexbench-runner";

#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {detail}", path.display())]
    Layout { path: PathBuf, detail: String },
    #[error("{}: {detail}", path.display())]
    Parse { path: PathBuf, detail: String },
    #[error("{}: no runs found under runs/<task>/<hint>/<attempt>/", .0.display())]
    NoRuns(PathBuf),
    #[error(transparent)]
    Write(#[from] bundle::WriteError),
}

/// What a pack produced.
#[derive(Debug)]
pub struct Packed {
    pub id: Digest,
    pub runs: usize,
    pub artifacts: usize,
}

/// A bundle's `created_at`: `t` in UTC, to the second, as RFC 3339.
pub fn timestamp(t: time::OffsetDateTime) -> String {
    use time::format_description::well_known::Rfc3339;
    let t = t.to_offset(time::UtcOffset::UTC).replace_nanosecond(0).expect("0 is a valid nanosecond");
    t.format(&Rfc3339).expect("a UTC time formats as RFC 3339")
}

/// Reads the agent file (TOML with the manifest's agent fields).
pub fn read_agent(path: &Path) -> Result<Agent, PackError> {
    let text = fs::read_to_string(path).map_err(|source| PackError::Io { path: path.to_owned(), source })?;
    toml::from_str(&text).map_err(|e| PackError::Parse { path: path.to_owned(), detail: e.to_string() })
}

/// Packs `results` into a bundle written to `out` (atomically: a temporary file in
/// the same directory, renamed into place once complete).
pub fn pack(
    results: &Path,
    agent: Agent,
    keys: &[&SecretKey],
    created_at: &str,
    out: &Path,
) -> Result<Packed, PackError> {
    let eval_path = results.join("evaluation.json");
    let eval: Evaluation = read_json(&eval_path)?;
    let manifest = Manifest {
        schema: bundle::SCHEMA.to_owned(),
        created_at: created_at.to_owned(),
        benchmark: eval.benchmark,
        runner: eval.runner.unwrap_or_else(|| RunnerInfo {
            name: RUNNER_NAME.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }),
        provenance: eval.provenance.unwrap_or(Provenance { kind: ProvenanceKind::Evaluated, source: None }),
        agent,
        runs: Vec::new(),
        artifacts: BTreeMap::new(),
    };
    let mut builder = BundleBuilder::new(manifest);
    let runs_dir = results.join("runs");
    for task_dir in sorted_dirs(&runs_dir)? {
        let task = name_of(&task_dir);
        if !bundle::is_slug(&task) {
            return Err(layout(&task_dir, "a task directory must be named by the task id"));
        }
        let mut hints = Vec::new();
        for hint_dir in sorted_dirs(&task_dir)? {
            let hint: Hint = name_of(&hint_dir).parse().map_err(|e| layout(&hint_dir, &format!("{e}")))?;
            hints.push((hint, hint_dir));
        }
        hints.sort();
        for (hint, hint_dir) in hints {
            for run_dir in sorted_dirs(&hint_dir)? {
                let attempt = name_of(&run_dir)
                    .parse::<u32>()
                    .ok()
                    .filter(|a| *a >= 1)
                    .ok_or_else(|| layout(&run_dir, "an attempt directory must be named 1, 2, 3, …"))?;
                let run = read_run(&run_dir, task.clone(), hint, attempt, &mut builder)?;
                builder.manifest_mut().runs.push(run);
            }
        }
    }
    let runs = builder.manifest_mut().runs.len();
    if runs == 0 {
        return Err(PackError::NoRuns(results.to_owned()));
    }
    let artifacts = builder.manifest_mut().artifacts.len();

    let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|source| PackError::Io { path: dir.to_owned(), source })?;
    let id = builder.write(keys, std::io::BufWriter::new(tmp.as_file()))?;
    tmp.as_file().sync_all().map_err(|source| PackError::Io { path: out.to_owned(), source })?;
    tmp.persist(out).map_err(|e| PackError::Io { path: out.to_owned(), source: e.error })?;
    Ok(Packed { id, runs, artifacts })
}

fn read_run(
    dir: &Path,
    task: String,
    hint: Hint,
    attempt: u32,
    builder: &mut BundleBuilder,
) -> Result<Run, PackError> {
    let record: RunRecord = read_json(&dir.join("run.json"))?;
    let mut artifacts = BTreeMap::new();
    for path in list_dir(dir)? {
        let file = name_of(&path);
        if file == "run.json" {
            continue;
        }
        let (role, ext) = file.split_once('.').unwrap_or((&file, ""));
        if bundle::ArtifactRole::parse(role).is_none() || !path.is_file() {
            return Err(layout(
                &path,
                "unexpected file: a run directory holds run.json and artifacts named by role \
                 (patch, agent_log, stdout, stderr, checker_log, x-<name>) with any extension",
            ));
        }
        let digest = builder
            .add_file(&path, media_type(ext))
            .map_err(|source| PackError::Io { path: path.clone(), source })?;
        if artifacts.insert(role.to_owned(), digest.to_hex()).is_some() {
            return Err(layout(&path, &format!("two files for the role `{role}`")));
        }
    }
    Ok(Run {
        task: task.into(),
        hint,
        attempt,
        outcome: record.outcome,
        error_type: record.error_type,
        file_recall: record.file_recall,
        files_changed: record.files_changed,
        duration_s: record.duration_s,
        cost_usd: record.cost_usd,
        metrics: record.metrics,
        artifacts,
    })
}

/// The media type an artifact gets from its file extension.
fn media_type(ext: &str) -> &'static str {
    match ext {
        "diff" | "patch" => "text/x-diff",
        "json" => "application/json",
        "csv" => "text/csv",
        "txt" | "log" | "out" | "err" | "" => "text/plain",
        _ => "application/octet-stream",
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, PackError> {
    let bytes = fs::read(path).map_err(|source| PackError::Io { path: path.to_owned(), source })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| PackError::Parse { path: path.to_owned(), detail: e.to_string() })
}

/// The paths in `dir`.
fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, PackError> {
    let io = |source| PackError::Io { path: dir.to_owned(), source };
    fs::read_dir(dir).map_err(io)?.map(|e| e.map(|e| e.path()).map_err(io)).collect()
}

fn sorted_dirs(dir: &Path) -> Result<Vec<PathBuf>, PackError> {
    let mut out = Vec::new();
    for path in list_dir(dir)? {
        if !path.is_dir() {
            return Err(layout(&path, "expected only directories here"));
        }
        out.push(path);
    }
    // Attempts sort numerically, names alphabetically.
    out.sort_by_key(|p| {
        let n = name_of(p);
        (n.parse::<u64>().unwrap_or(u64::MAX), n)
    });
    Ok(out)
}

fn name_of(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn layout(path: &Path, detail: &str) -> PackError {
    PackError::Layout { path: path.to_owned(), detail: detail.to_owned() }
}
