//! `rexbench pack`: an evaluation results directory plus agent information → a signed
//! bundle. The layout is documented in `runner/README.md`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::confined::{self, Folder, Kind, Refused};
use crate::results::{Evaluation, RunRecord};
use bundle::{
    Agent, BundleBuilder, Digest, Hint, Manifest, Provenance, ProvenanceKind, Run, RunnerInfo, SecretKey,
};

pub const RUNNER_NAME: &str = "rexbench-runner";

#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("{}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// A file that is not read: a link out of the results folder, a FIFO, too large.
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error("{}: {detail}", path.display())]
    Layout { path: PathBuf, detail: String },
    #[error("{}: {detail}", path.display())]
    Parse { path: PathBuf, detail: String },
    #[error("{}: no runs found under runs/<task>/<hint>/<attempt>/", .0.display())]
    NoRuns(PathBuf),
    /// Results evaluated on a held-out variant (spec §4l): what the runs printed is the
    /// variant's, the maintainers' alone.
    #[error(
        "{}: these results were evaluated on the held-out variant {variant}: they are the maintainers' own, \
         and are never packed (a reproduction records the outcome on a variant, nothing else)",
        path.display()
    )]
    HeldOut { path: PathBuf, variant: String },
    #[error(transparent)]
    Write(#[from] bundle::WriteError),
    /// The results claim what their task cards refuse (bundle spec §5a): a board would
    /// refuse the bundle, so it is not signed.
    #[error("{}: the results break what their task cards ask (bundle spec §5a)", path.display())]
    Claims { path: PathBuf, source: bundle::BundleError },
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
    let bytes = confined::read_file(path, "agent file's folder")?;
    let text = String::from_utf8(bytes)
        .map_err(|e| PackError::Parse { path: path.to_owned(), detail: format!("not UTF-8: {e}") })?;
    toml::from_str(&text).map_err(|e| PackError::Parse { path: path.to_owned(), detail: e.to_string() })
}

/// Packs `results` into a bundle written to `out` (atomically: a temporary file in
/// the same directory, renamed into place once complete). Every file is read beneath
/// the results folder (`confined`): a link out of it, a FIFO, a device or a file over
/// a bundle artifact's size is refused by name, and nothing is written.
pub fn pack(
    results: &Path,
    agent: Agent,
    keys: &[&SecretKey],
    created_at: &str,
    out: &Path,
) -> Result<Packed, PackError> {
    pack_as(results, agent, None, keys, created_at, out)
}

/// [`pack`], as a reproduction (spec §4d) when `reproduction` says what it re-ran.
pub fn pack_as(
    results: &Path,
    agent: Agent,
    reproduction: Option<bundle::Reproduction>,
    keys: &[&SecretKey],
    created_at: &str,
    out: &Path,
) -> Result<Packed, PackError> {
    let folder = Rc::new(Folder::open(results, "results folder")?);
    let eval: Evaluation = read_json(&folder, Path::new("evaluation.json"))?;
    if let Some(variant) = eval.heldout {
        return Err(PackError::HeldOut { path: results.to_owned(), variant });
    }
    let manifest = Manifest {
        schema: bundle::SCHEMA.to_owned(),
        created_at: created_at.to_owned(),
        benchmark: eval.benchmark,
        runner: eval.runner.unwrap_or_else(|| RunnerInfo {
            name: RUNNER_NAME.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }),
        provenance: eval.provenance.unwrap_or(Provenance::new(ProvenanceKind::Evaluated, None)),
        agent,
        runs: Vec::new(),
        reproduction,
        artifacts: BTreeMap::new(),
    };
    let mut builder = BundleBuilder::new(manifest);
    for task_dir in sorted_dirs(&folder, Path::new("runs"))? {
        let task = name_of(&task_dir);
        if !bundle::is_slug(&task) {
            return Err(layout(&folder, &task_dir, "a task directory must be named by the task id"));
        }
        let mut hints = Vec::new();
        for hint_dir in sorted_dirs(&folder, &task_dir)? {
            let hint: Hint =
                name_of(&hint_dir).parse().map_err(|e| layout(&folder, &hint_dir, &format!("{e}")))?;
            hints.push((hint, hint_dir));
        }
        hints.sort();
        for (hint, hint_dir) in hints {
            for run_dir in sorted_dirs(&folder, &hint_dir)? {
                let attempt = name_of(&run_dir).parse::<u32>().ok().filter(|a| *a >= 1).ok_or_else(|| {
                    layout(&folder, &run_dir, "an attempt directory must be named 1, 2, 3, …")
                })?;
                let run = read_run(&folder, &run_dir, task.clone(), hint, attempt, &mut builder)?;
                builder.manifest_mut().runs.push(run);
            }
        }
    }
    let runs = builder.manifest_mut().runs.len();
    if runs == 0 {
        return Err(PackError::NoRuns(results.to_owned()));
    }
    // Spec §4g: the findings' words go into each run's x-findings artifact, private with
    // its outputs; the public manifest keeps each finding's check, place and salted digest
    // (sealed with the first key: `write` would seal them too, but the count below is
    // the bundle's).
    // The cards built into the runner: which checks are public (for older results) and
    // what each of their tasks asks (spec §5a).
    let builtin = builtin_cards();
    let rules: BTreeMap<String, bundle::TaskRule> =
        builtin.iter().map(|(id, card)| (id.clone(), card.rule())).collect();
    if let Some(key) = keys.first() {
        builder.seal_findings(key);
        // Spec §4j: a run's metrics are its task's gold where the check is private: they
        // go into its x-metrics artifact, named by a salted digest.
        let public = eval.public_checks.clone().unwrap_or_else(|| public_checks_of(&builtin));
        builder.seal_metrics(key, |task| !public.iter().any(|t| t == task));
    }
    // Spec §5a: what the cards say of these tasks (the runner's own), held before signing
    // once the format's own rules hold (each keeps its code; the findings and the private
    // metrics are sealed by now).
    if !keys.is_empty() {
        bundle::validate(builder.manifest(), None, &bundle::Limits::default())
            .map_err(bundle::WriteError::from)?;
    }
    if let Err(source) = bundle::check_runs(builder.manifest(), &rules, &BTreeMap::new()) {
        return Err(PackError::Claims { path: results.to_owned(), source });
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
    folder: &Rc<Folder>,
    dir: &Path,
    task: String,
    hint: Hint,
    attempt: u32,
    builder: &mut BundleBuilder,
) -> Result<Run, PackError> {
    let record: RunRecord = read_json(folder, &dir.join("run.json"))?;
    let mut artifacts = BTreeMap::new();
    for entry in folder.entries(dir)? {
        let file = entry.name_lossy();
        if file == "run.json" {
            continue;
        }
        let (role, ext) = file.split_once('.').unwrap_or((&file, ""));
        if bundle::ArtifactRole::parse(role).is_none() || entry.kind == Kind::Folder {
            return Err(layout(
                folder,
                &entry.rel,
                "unexpected file: a run directory holds run.json and artifacts named by role \
                 (patch, agent_log, stdout, stderr, checker_log, x-<name>) with any extension",
            ));
        }
        if role == bundle::FINDINGS_ROLE {
            return Err(layout(
                folder,
                &entry.rel,
                "the x-findings artifact is made when the bundle is packed, from run.json's findings",
            ));
        }
        // Checked now (type, size, where a link leads), and read beneath the folder
        // again when the bundle is written.
        folder.open_file(&entry.rel, confined::file_limit())?;
        let (reopen, rel) = (Rc::clone(folder), entry.rel.clone());
        let digest = builder
            .add_reader(&folder.shown(&entry.rel), media_type(ext), move || {
                let (file, _) = reopen
                    .open_file(&rel, confined::file_limit())
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
                Ok(Box::new(file) as Box<dyn Read>)
            })
            .map_err(|source| PackError::Io { path: folder.shown(&entry.rel), source })?;
        if artifacts.insert(role.to_owned(), digest.to_hex()).is_some() {
            return Err(layout(folder, &entry.rel, &format!("two files for the role `{role}`")));
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
        tokens: record.tokens,
        task_folder: record.task_folder.clone(),
        metrics: record.metrics,
        metrics_digest: None,
        artifacts,
        // A results folder an earlier runner wrote may name one place twice: packed as
        // one finding, as the spec asks.
        findings: {
            let mut findings = record.findings;
            crate::integrity::merge_repeats(&mut findings);
            findings
        },
        regraded: record.regraded,
    })
}

/// The cards built into the runner (read once a pack: they are unpacked to read them).
fn builtin_cards() -> BTreeMap<String, crate::task::TaskCard> {
    crate::builtin::TaskDir::builtin().and_then(|dir| dir.cards()).unwrap_or_default()
}

/// For results written before `evaluation.json` said which checks are public: the tasks
/// whose card, among `cards`, carries its check. Any other task's metrics are sealed.
fn public_checks_of(cards: &BTreeMap<String, crate::task::TaskCard>) -> Vec<String> {
    cards.values().filter(|c| !c.check_is_private()).map(|c| c.id.clone()).collect()
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

fn read_json<T: serde::de::DeserializeOwned>(folder: &Folder, rel: &Path) -> Result<T, PackError> {
    let bytes = folder.read(rel)?;
    serde_json::from_slice(&bytes)
        .map_err(|e| PackError::Parse { path: folder.shown(rel), detail: e.to_string() })
}

/// The folders in `dir`, relative to the results folder.
fn sorted_dirs(folder: &Folder, dir: &Path) -> Result<Vec<PathBuf>, PackError> {
    let mut out = Vec::new();
    for entry in folder.entries(dir)? {
        entry.check(folder)?;
        if entry.kind != Kind::Folder {
            return Err(layout(folder, &entry.rel, "expected only directories here"));
        }
        out.push(entry.rel);
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

fn layout(folder: &Folder, rel: &Path, detail: &str) -> PackError {
    PackError::Layout { path: folder.shown(rel), detail: detail.to_owned() }
}
