//! `rexbench import-published`: the RExBench paper's per-task results (Tables 11–24) as
//! one bundle per agent, with `provenance.kind = "published"`.
//!
//! Each published cell is a mean over 5 runs, so the runs are reconstructed from it:
//! round(5 × final success) runs succeed, round(5 × execution success) minus those
//! ran but got the wrong result, and the rest did not execute. The paper does not say
//! how a run that did not execute failed, so those are recorded as `execution_failed`.
//! Every run carries the cell's file recall, so the cell's mean is kept.
//!
//! Every run carries the agent's average cost and duration per run from Table 7 (the
//! paper publishes only averages and totals), which keeps the agent's mean; its total
//! over the 180 runs is then 180 × the rounded average, near the printed total.
//!
//! Where a cell gives more final successes than executions (which outcomes cannot
//! express, since a success is a run that executed), final success is kept as printed
//! and the successful runs count as executed; the bundle's provenance and the terminal
//! say so.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bundle::{
    Agent, Benchmark, BundleBuilder, Digest, Manifest, Outcome, Provenance, ProvenanceKind, Run, RunnerInfo,
    SecretKey,
};

/// The paper's numbers, read once by `vocab::paper` (the pages read the same types).
pub use vocab::paper::{
    Cell, CostRow, DATA, Paper as Published, PaperAgent as PublishedAgent, Source, Table7,
};

pub fn data() -> Published {
    vocab::paper::published()
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{agent}")]
    Write { agent: String, source: Box<bundle::WriteError> },
}

/// One written bundle, and what had to be adjusted to write it.
#[derive(Debug)]
pub struct Imported {
    pub agent: String,
    pub path: PathBuf,
    pub id: Digest,
    pub adjustments: Vec<String>,
}

/// Writes `<agent>.rexb.tar.gz` into `out` for every agent of the paper.
pub fn import(
    task_set_digest: Digest,
    keys: &[&SecretKey],
    created_at: &str,
    out: &Path,
) -> Result<Vec<Imported>, ImportError> {
    let data = data();
    std::fs::create_dir_all(out).map_err(|source| ImportError::Io { path: out.to_owned(), source })?;
    let mut imported = Vec::new();
    for agent in &data.agents {
        let (runs, adjustments) = reconstruct(agent, data.table7.by_agent.get(&agent.id));
        let agent_id = agent.id.clone();
        let mut source = format!(
            "{} {}, {} (per-task results; each cell a mean over 5 runs, from which 5 runs were reconstructed; \
             runs that did not execute are recorded as execution_failed, since the paper does not say how they failed; \
             every run carries Table 7's average cost and duration per run, as only averages and totals are published)",
            data.source.citation, data.source.url, agent.table
        );
        if !adjustments.is_empty() {
            let _ = write!(source, ". Inconsistent in the paper: {}", adjustments.join("; "));
        }
        let agent = Agent {
            id: agent.id.clone(),
            framework: agent.framework.clone(),
            framework_version: None,
            model: agent.model.clone(),
            model_id: None,
            display_name: Some(format!("{} + {}", agent.framework, agent.model)),
            url: None,
        };
        let manifest = manifest(task_set_digest, created_at, source, agent, runs);
        let (path, id) = write(manifest, keys, out)?;
        imported.push(Imported { agent: agent_id, path, id, adjustments });
    }
    Ok(imported)
}

/// A manifest of results published by `source`, for the benchmark's task set.
pub(crate) fn manifest(
    task_set_digest: Digest,
    created_at: &str,
    source: String,
    agent: Agent,
    runs: Vec<Run>,
) -> Manifest {
    Manifest {
        schema: bundle::SCHEMA.to_owned(),
        created_at: created_at.to_owned(),
        benchmark: Benchmark {
            name: "RExBench".into(),
            version: "1.0".into(),
            task_set_digest: task_set_digest.to_hex(),
        },
        runner: RunnerInfo {
            name: crate::pack::RUNNER_NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        provenance: Provenance::new(ProvenanceKind::Published, Some(source)),
        agent,
        runs,
        reproduction: None,
        artifacts: BTreeMap::new(),
    }
}

/// Signs `manifest` with `keys` into `<agent>.rexb.tar.gz` in `out`.
pub(crate) fn write(
    manifest: Manifest,
    keys: &[&SecretKey],
    out: &Path,
) -> Result<(PathBuf, Digest), ImportError> {
    let agent = manifest.agent.id.clone();
    let path = out.join(format!("{agent}.rexb.tar.gz"));
    let file =
        std::fs::File::create(&path).map_err(|source| ImportError::Io { path: path.clone(), source })?;
    let id = BundleBuilder::new(manifest)
        .write(keys, std::io::BufWriter::new(file))
        .map_err(|source| ImportError::Write { agent, source: Box::new(source) })?;
    Ok((path, id))
}

/// Five runs per cell, and a sentence for every cell that had to be adjusted.
fn reconstruct(agent: &PublishedAgent, cost: Option<&CostRow>) -> (Vec<Run>, Vec<String>) {
    let mut runs = Vec::new();
    let mut adjustments = Vec::new();
    for (hint, cells) in &agent.results {
        for (task, cell) in cells {
            let successes = (cell.final_success * 5.0).round() as u32;
            let mut executed = (cell.execution_success * 5.0).round() as u32;
            if successes > executed {
                adjustments.push(format!(
                    "{task} with {} has final success {:.2} above execution success {:.2}; final success is kept \
                     and its {successes} successful runs count as executed (execution success {:.2})",
                    hint.label().to_lowercase(),
                    cell.final_success,
                    cell.execution_success,
                    f64::from(successes) / 5.0
                ));
                executed = successes;
            }
            for attempt in 1..=5 {
                let outcome = if attempt <= successes {
                    Outcome::Success
                } else if attempt <= executed {
                    Outcome::WrongResult
                } else {
                    Outcome::ExecutionFailed
                };
                runs.push(Run {
                    task: task.clone().into(),
                    hint: *hint,
                    attempt,
                    outcome,
                    error_type: None,
                    file_recall: Some(cell.file_recall),
                    files_changed: None,
                    duration_s: cost.map(|c| c.avg_duration_s),
                    // The paper's average per run, as it printed it: no tokens to check it by.
                    cost_usd: cost.map(|c| c.avg_cost_usd),
                    tokens: None,
                    task_folder: None,
                    metrics: BTreeMap::new(),
                    metrics_digest: None,
                    artifacts: BTreeMap::new(),
                    findings: Vec::new(),
                    regraded: None,
                });
            }
        }
    }
    (runs, adjustments)
}
