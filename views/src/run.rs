//! A run: its outcome and metrics, what anyone may know of its outputs (the files its
//! patch touched with lines counted, its trajectory's statistics), and, for a reader
//! who may read them (`crate::access`), each artifact's text as a page shows it
//! (bounded: a log's head and tail, a patch's first lines) and its trajectory.

use serde::{Deserialize, Serialize};
use store::{Outputs, RunDetail};

use crate::catalog::Expected;
use crate::trajectory::TrajectoryStats;

/// A file the run's patch touched, with its lines counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FileLines {
    pub path: String,
    pub added: usize,
    pub removed: usize,
    /// Git says its bytes differ without lines (a binary file).
    pub binary: bool,
}

/// What anyone may know of a run's outputs, whoever may read them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Outline {
    /// Who may read the run's outputs: its task's, as they are now.
    pub outputs: Outputs,
    /// Whether this reader may: the artifacts' content (`/artifacts/{digest}`) and the
    /// findings' text are theirs to read.
    pub readable: bool,
    /// Whether this reader is a maintainer, who also reads what shows a private check
    /// (the artifacts marked `maintainers_only`).
    #[serde(default)]
    pub reads_gold: bool,
    /// The files the patch touched, in its order, with lines added and removed.
    pub files: Vec<FileLines>,
    /// The patch is larger than was read to count it: `files` are its head's.
    pub files_cut: bool,
    /// The trajectory's statistics, where the run carries one that reads as ATIF.
    pub trajectory: Option<TrajectoryStats>,
    /// What the run's provenance record says of its experiment, in counts, where it
    /// carries one.
    pub experiment: Option<ExperimentOutline>,
}

/// A provenance record in counts: what anyone may know of what an experiment did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExperimentOutline {
    /// The tracer that watched it; `null` when nothing was traced.
    pub tracer: Option<String>,
    /// Why nothing was traced.
    pub untraced: Option<String>,
    /// How tracing fell short of the whole experiment.
    pub interrupted: Option<String>,
    pub processes: usize,
    /// Processes the runner killed when the run ended: they outlived the task's command.
    pub killed: usize,
    pub duration_ms: u64,
}

/// One process of an experiment, as a run page shows it to a reader of its outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessNode {
    pub id: u32,
    pub parent: Option<u32>,
    /// Its arguments (or program), joined and cut.
    pub command: String,
    pub start_ms: u64,
    pub duration_ms: Option<u64>,
    pub exit: Option<String>,
    pub killed: bool,
    pub read: Vec<String>,
    pub wrote: Vec<String>,
}

/// An artifact's text as a page shows it: whole, or its head and tail with the middle
/// cut, each line with its number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactText {
    pub role: String,
    pub digest: String,
    pub size: i64,
    /// Runs of consecutive lines: (number of the first line, the lines).
    pub parts: Vec<(usize, Vec<String>)>,
    pub total_lines: usize,
    /// Whether anything was left out (lines, or the end of a very large file).
    pub cut: bool,
    /// For a patch, what each shown line is (`benchmark::diff::line_kinds`, read by the
    /// hunks' counts), in the order of `parts`; empty for other artifacts.
    #[serde(default)]
    pub kinds: Vec<store::DiffLine>,
}

impl ArtifactText {
    /// The lines shown, over its parts.
    pub fn shown_lines(&self) -> usize {
        self.parts.iter().map(|(_, l)| l.len()).sum()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunData {
    /// The run, its findings' text withheld where its outputs are private to the reader.
    pub run: RunDetail,
    pub outline: Outline,
    pub task_name: String,
    /// The task's public expected values; empty where the gold results are private.
    pub expected: Vec<Expected>,
    /// Each artifact's text; none where the reader may not read the outputs.
    pub texts: Vec<ArtifactText>,
    /// The agent's trajectory, where the run carries one in a form the page reads and
    /// the reader may read it.
    pub trajectory: Option<crate::trajectory::Trajectory>,
    /// Why a trajectory the run carries is shown as plain text instead (among `texts`).
    pub trajectory_problem: Option<String>,
    /// What its experiment did, process by process (the first [`SHOWN_PROCESSES`]),
    /// where the run carries a provenance record and the reader may read it.
    pub processes: Vec<ProcessNode>,
}

/// The most processes a run page lists.
pub const SHOWN_PROCESSES: usize = 500;

/// One run: its numbers, its artifacts' digests and sizes (what the signed manifest
/// commits to), its findings, and what anyone may know of its outputs. Where the
/// outputs are private to the reader (`readable: false`), the findings' text is
/// withheld and `/artifacts/{digest}` refuses their content.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunAnswer {
    #[serde(flatten)]
    pub run: RunDetail,
    #[serde(flatten)]
    pub outline: Outline,
}

#[cfg(feature = "db")]
pub use answers::*;

#[cfg(feature = "db")]
mod answers {
    use store::Store;

    use super::*;
    use crate::access::{Access, Reader};
    use crate::catalog::Catalog;
    use crate::{Missing, ViewError};

    /// Lines of a log shown before and after the cut, and of a patch in all.
    const LOG_HEAD: usize = 60;
    const LOG_TAIL: usize = 140;
    const PATCH_LINES: usize = 600;
    /// Bytes of an artifact read for a page, and characters of a line shown.
    const READ_CAP: usize = 2 << 20;
    /// Bytes of a trajectory read to show it step by step (it is JSON, so it is read whole;
    /// a larger one is shown as the head of its text).
    const TRAJECTORY_CAP: usize = 32 << 20;
    /// Bytes of a patch read to count its files' lines, and of a trajectory read for its
    /// statistics.
    const COUNT_CAP: usize = 32 << 20;
    const LINE_CAP: usize = 400;

    /// The API's run: the run and what anyone may know of its outputs, its findings'
    /// text withheld where `reader` may not read them.
    pub async fn answer(
        store: &Store,
        catalog: &Catalog,
        reader: &Reader,
        id: &str,
    ) -> Result<RunAnswer, ViewError> {
        let access = crate::access::load(store, catalog, reader).await?;
        let mut run = run(store, id).await?;
        let (outline, _) = outline(store, &access, &mut run, "api").await?;
        Ok(RunAnswer { run, outline })
    }

    async fn run(store: &Store, id: &str) -> Result<RunDetail, ViewError> {
        let not_found = || ViewError::NotFound(Missing::Run(id.to_owned()));
        let run_id: i64 = id.parse().map_err(|_| not_found())?;
        store.run(run_id).await?.ok_or_else(not_found)
    }

    /// What anyone may know of `run`'s outputs, and its findings as the reader may see
    /// them; with its provenance record, read once for both. A read of private outputs
    /// (`via` a `page` or the `api`) is logged.
    async fn outline(
        store: &Store,
        access: &Access,
        run: &mut RunDetail,
        via: &str,
    ) -> Result<(Outline, Option<bundle::ProvenanceRecord>), ViewError> {
        access.findings(run.task.as_str(), &run.bundle_id, &mut run.findings);
        access.mark(run.task.as_str(), &mut run.artifacts, false);
        // Spec §4j: a private check's metrics are its gold.
        if !access.may_read_metrics(run.task.as_str(), &run.bundle_id, false) {
            run.metrics.clear();
            run.metrics_withheld = true;
        }
        if let Some(r) = run.reproduction.as_mut() {
            access.reproduction(run.task.as_str(), &run.bundle_id, r);
        }
        let mut record = None;
        let mut outline = Outline {
            outputs: access.outputs(run.task.as_str()),
            readable: access.may_read(run.task.as_str(), &run.bundle_id),
            reads_gold: matches!(access.reader(), Reader::Maintainer { .. }),
            ..Outline::default()
        };
        if outline.readable && !access.public(run.task.as_str()) {
            crate::access::logged(store, access, via, Some(run.id), None).await?;
        }
        for a in &run.artifacts {
            let Some(digest) = store::Digest::from_hex(&a.digest) else { continue };
            if a.role == "patch" {
                let bytes = read_capped(store, &digest, COUNT_CAP).await?;
                outline.files_cut = (bytes.len() as i64) < a.size;
                outline.files = benchmark::diff::parse(&String::from_utf8_lossy(&bytes))
                    .into_iter()
                    .map(|f| FileLines {
                        path: clip_line(f.path()),
                        added: f.added.len(),
                        removed: f.removed,
                        binary: f.binary,
                    })
                    .collect();
            } else if a.role == crate::trajectory::ROLE && a.size as usize <= COUNT_CAP {
                let bytes = read_capped(store, &digest, COUNT_CAP).await?;
                outline.trajectory = crate::trajectory::stats(&bytes).ok();
            } else if a.role == bundle::PROVENANCE_ROLE && a.size as u64 <= bundle::MAX_PROVENANCE_BYTES {
                let bytes = read_capped(store, &digest, bundle::MAX_PROVENANCE_BYTES as usize).await?;
                // The verifier read it at ingest; one that does not read now is left out.
                if let Ok(r) = bundle::ProvenanceRecord::parse(&bytes) {
                    outline.experiment = Some(ExperimentOutline {
                        tracer: r.tracer.clone(),
                        untraced: r.untraced.clone(),
                        interrupted: r.interrupted.clone(),
                        processes: r.processes.len() + r.cut.processes as usize,
                        killed: r.processes.iter().filter(|p| p.killed).count(),
                        duration_ms: r.duration_ms,
                    });
                    record = Some(r);
                }
            }
        }
        Ok((outline, record))
    }

    /// The processes of a record as a page lists them.
    fn processes(record: &bundle::ProvenanceRecord) -> Vec<ProcessNode> {
        record
            .processes
            .iter()
            .take(SHOWN_PROCESSES)
            .map(|p| {
                let words = if p.argv.is_empty() { vec![p.program.clone()] } else { p.argv.clone() };
                ProcessNode {
                    id: p.id,
                    parent: p.parent,
                    command: clip_line(&words.join(" ")),
                    start_ms: p.start_ms,
                    duration_ms: p.end_ms.map(|end| end - p.start_ms),
                    exit: p.exit.clone(),
                    killed: p.killed,
                    read: p.read.clone(),
                    wrote: p.wrote.clone(),
                }
            })
            .collect()
    }

    /// A run's page for `reader`: the run, its task's public expected values and what
    /// anyone may know of its outputs; where the reader may read them, each artifact's
    /// text as a page shows it (bounded) and its trajectory step by step.
    pub async fn page(
        store: &Store,
        catalog: &Catalog,
        reader: &Reader,
        id: &str,
    ) -> Result<RunData, ViewError> {
        let access = crate::access::load(store, catalog, reader).await?;
        let mut run = run(store, id).await?;
        let (outline, record) = outline(store, &access, &mut run, "page").await?;
        let task = catalog.get(run.task.as_str());
        // The record is shown as its processes, not as text.
        let processes = match (&record, outline.readable) {
            (Some(record), true) => processes(record),
            _ => Vec::new(),
        };
        let mut texts = Vec::new();
        let mut trajectory = None;
        let mut trajectory_problem = None;
        let readable = if outline.readable { run.artifacts.as_slice() } else { &[] };
        for a in readable {
            let Some(digest) = store::Digest::from_hex(&a.digest) else { continue };
            if a.role == bundle::PROVENANCE_ROLE && record.is_some() {
                continue;
            }
            // The findings' words are shown as the findings; what shows a private check
            // is shown to the maintainers only.
            if a.role == bundle::FINDINGS_ROLE
                || !access.may_read_role(run.task.as_str(), &run.bundle_id, &a.role, false)
            {
                continue;
            }
            if a.role == crate::trajectory::ROLE && a.size as usize <= TRAJECTORY_CAP {
                let bytes = read_capped(store, &digest, TRAJECTORY_CAP).await?;
                match crate::trajectory::read(&bytes, &a.digest, a.size, run.error_type.as_deref()) {
                    Ok(t) => {
                        trajectory = Some(t);
                        continue;
                    }
                    Err(problem) => trajectory_problem = Some(problem),
                }
            } else if a.role == crate::trajectory::ROLE {
                trajectory_problem =
                    Some(format!("it is {}, more than a page reads", crate::format::bytes(a.size)));
            }
            let bytes = read_capped(store, &digest, READ_CAP).await?;
            let whole = bytes.len() as i64 == a.size;
            let text = String::from_utf8_lossy(&bytes);
            let lines: Vec<String> = text.lines().map(clip_line).collect();
            let total = lines.len();
            let kinds = if a.role == "patch" {
                benchmark::diff::line_kinds(&text).into_iter().take(PATCH_LINES).collect()
            } else {
                Vec::new()
            };
            let (parts, cut) = if a.role == "patch" {
                (vec![(1, lines.into_iter().take(PATCH_LINES).collect())], total > PATCH_LINES || !whole)
            } else if total > LOG_HEAD + LOG_TAIL {
                let tail_start = total - LOG_TAIL;
                (vec![(1, lines[..LOG_HEAD].to_vec()), (tail_start + 1, lines[tail_start..].to_vec())], true)
            } else {
                (vec![(1, lines)], !whole)
            };
            texts.push(ArtifactText {
                role: a.role.clone(),
                digest: a.digest.clone(),
                size: a.size,
                parts,
                total_lines: total,
                cut,
                kinds,
            });
        }
        Ok(RunData {
            outline,
            task_name: task.map_or_else(|| run.task.to_string(), |t| t.name.clone()),
            expected: task.map(|t| t.public_expected.clone()).unwrap_or_default(),
            run,
            texts,
            trajectory,
            trajectory_problem,
            processes,
        })
    }

    fn clip_line(line: &str) -> String {
        if line.len() <= LINE_CAP {
            return line.to_owned();
        }
        let mut end = LINE_CAP;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &line[..end])
    }

    async fn read_capped(store: &Store, digest: &store::Digest, cap: usize) -> Result<Vec<u8>, ViewError> {
        use futures::StreamExt;
        let unreadable = |cause| ViewError::Artifact { digest: digest.to_hex(), cause };
        let mut stream = store.blobs().read(digest).await.map_err(unreadable)?;
        let mut out = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(unreadable)?;
            out.extend_from_slice(&chunk[..chunk.len().min(cap - out.len())]);
            if out.len() >= cap {
                break;
            }
        }
        Ok(out)
    }
}
