//! What `verify` and `inspect` print about a bundle, as text or JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use std::io::{self, Read};

use bundle::{
    ArtifactInfo, ArtifactSink, BundleError, Digest, Outcome, RunMarks, SignatureStatus, VerifiedBundle,
};
use serde_json::{Value, json};

/// Runs per outcome, in the spec's order, leaving out outcomes with no runs.
fn outcomes(v: &VerifiedBundle) -> Vec<(Outcome, usize)> {
    let mut counts: BTreeMap<Outcome, usize> = BTreeMap::new();
    for run in &v.manifest.runs {
        *counts.entry(run.outcome).or_default() += 1;
    }
    Outcome::ALL.into_iter().filter_map(|o| counts.get(&o).map(|n| (o, *n))).collect()
}

fn status_word(s: SignatureStatus) -> &'static str {
    match s {
        SignatureStatus::Verified => "trusted, verified",
        SignatureStatus::Unknown => "unknown key, ignored",
        SignatureStatus::Unchecked => "not checked",
    }
}

/// What `verify` and `inspect` keep of the provenance records (spec §4b) as they pass:
/// each record's counts, by digest.
#[derive(Debug, Default)]
pub struct Records {
    by_digest: BTreeMap<Digest, RecordCounts>,
}

#[derive(Debug, Clone, Default)]
struct RecordCounts {
    tracer: Option<String>,
    interrupted: bool,
    processes: usize,
    killed: usize,
}

impl ArtifactSink for Records {
    fn artifact(&mut self, digest: &Digest, info: &ArtifactInfo, content: &mut dyn Read) -> io::Result<()> {
        if info.media_type != bundle::PROVENANCE_MEDIA_TYPE || info.size > bundle::MAX_PROVENANCE_BYTES {
            return io::copy(content, &mut io::sink()).map(drop);
        }
        let mut bytes = Vec::new();
        content.take(bundle::MAX_PROVENANCE_BYTES).read_to_end(&mut bytes)?;
        if let Ok(r) = bundle::ProvenanceRecord::parse(&bytes) {
            self.by_digest.insert(
                *digest,
                RecordCounts {
                    tracer: r.tracer.clone(),
                    interrupted: r.interrupted.is_some(),
                    processes: r.processes.len() + r.cut.processes as usize,
                    killed: r.processes.iter().filter(|p| p.killed).count(),
                },
            );
        }
        Ok(())
    }
}

impl Records {
    /// One line: how many runs carry a record, traced by what, and what they counted.
    fn line(&self, v: &VerifiedBundle) -> Option<String> {
        let runs: Vec<&RecordCounts> = v
            .manifest
            .runs
            .iter()
            .filter_map(|r| r.artifacts.get(bundle::PROVENANCE_ROLE))
            .filter_map(|hex| self.by_digest.get(&Digest::from_hex(hex)?))
            .collect();
        if runs.is_empty() {
            return None;
        }
        let traced: Vec<&&RecordCounts> = runs.iter().filter(|r| r.tracer.is_some()).collect();
        let tracers: std::collections::BTreeSet<&str> =
            traced.iter().filter_map(|r| r.tracer.as_deref()).collect();
        let interrupted = runs.iter().filter(|r| r.interrupted).count();
        Some(format!(
            "{} runs with a record: {} traced ({}), {} untraced, {interrupted} interrupted; {} processes, {} killed at their run's end",
            runs.len(),
            traced.len(),
            tracers.into_iter().collect::<Vec<_>>().join(", "),
            runs.len() - traced.len(),
            runs.iter().map(|r| r.processes).sum::<usize>(),
            runs.iter().map(|r| r.killed).sum::<usize>(),
        ))
    }
}

pub fn text(verdict: &str, v: &VerifiedBundle, records: &Records, marks: Option<&[RunMarks]>) -> String {
    let m = &v.manifest;
    let mut out = String::new();
    let _ = writeln!(out, "{verdict}  bundle {}", v.id);
    for (keyid, status) in &v.signatures {
        let _ = writeln!(out, "  signature   {keyid} ({})", status_word(*status));
    }
    let _ = writeln!(out, "  agent       {} ({})", m.agent.id, m.agent.name());
    let _ = writeln!(
        out,
        "  benchmark   {} {} (task set {})",
        m.benchmark.name, m.benchmark.version, m.benchmark.task_set_digest
    );
    let _ = write!(out, "  provenance  {}", m.provenance.kind);
    if let Some(source) = &m.provenance.source {
        let _ = write!(out, ": {source}");
    }
    let _ = writeln!(out);
    if let Some(r) = &m.reproduction {
        let hours = m.runs.iter().filter_map(|r| r.duration_s).sum::<f64>() / 3600.0;
        let _ = writeln!(
            out,
            "  reproduces  {} ({} executor: {}; {hours:.2} hours of runs)",
            r.of, r.executor, r.hardware.description
        );
    }
    let _ = writeln!(out, "  created     {} by {} {}", m.created_at, m.runner.name, m.runner.version);
    let per: Vec<String> = outcomes(v).iter().map(|(o, n)| format!("{o} {n}")).collect();
    let _ = writeln!(out, "  runs        {}: {}", m.runs.len(), per.join(", "));
    for r in &m.runs {
        if let Some(g) = r.regraded {
            let _ = writeln!(
                out,
                "  regraded    {}/{}/{}: {}, judged {} before the regrade",
                r.task, r.hint, r.attempt, r.outcome, g.from
            );
        }
    }
    let _ = writeln!(out, "  artifacts   {} ({} bytes)", m.artifacts.len(), v.artifact_bytes);
    if let Some(line) = records.line(v) {
        let _ = writeln!(out, "  executions  {line}");
    }
    // The findings with their words (from each run's x-findings, spec §4g): whoever holds
    // the bundle holds its outputs.
    let flagged: Vec<(usize, &bundle::Run)> =
        m.runs.iter().enumerate().filter(|(_, r)| !r.findings.is_empty()).collect();
    let successes = flagged.iter().filter(|(_, r)| r.outcome == bundle::Outcome::Success).count();
    let _ = writeln!(out, "  findings    {} runs flagged, {successes} of them successes", flagged.len());
    for (i, run) in flagged {
        let _ = writeln!(out, "    {} / {} / attempt {} ({})", run.task, run.hint, run.attempt, run.outcome);
        for f in &v.findings_of(i) {
            let place = match (&f.artifact, f.line) {
                (Some(a), Some(l)) => format!(" [{a}, line {l}]"),
                (Some(a), None) => format!(" [{a}]"),
                _ => String::new(),
            };
            let _ = writeln!(out, "      {}{place}: {}", f.check, f.message);
        }
    }
    // What a board will mark (spec §4m, §5b), before the bundle is sent.
    if let Some(marks) = marks {
        let _ = writeln!(out, "  marks       {} runs a board marks (cost, copied attempts)", marks.len());
        for r in marks {
            let _ =
                writeln!(out, "    {} / {} / attempt {}: {}", r.task, r.hint, r.attempt, r.marks.join(", "));
        }
    }
    out
}

pub fn json(v: &VerifiedBundle, marks: Option<&[RunMarks]>) -> Value {
    let m = &v.manifest;
    let mut out = json!({
        "valid": true,
        "bundle_id": v.id.to_hex(),
        "signatures": v.signatures.iter().map(|(k, s)| json!({"keyid": k, "status": match s {
            SignatureStatus::Verified => "verified",
            SignatureStatus::Unknown => "unknown",
            SignatureStatus::Unchecked => "unchecked",
        }})).collect::<Vec<_>>(),
        "agent": m.agent,
        "benchmark": m.benchmark,
        "provenance": m.provenance,
        "reproduction": m.reproduction,
        "runs": m.runs.len(),
        "outcomes": outcomes(v).into_iter().map(|(o, n)| (o.as_str().to_owned(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "artifacts": m.artifacts.len(),
        "artifact_bytes": v.artifact_bytes,
        "regraded": m.runs.iter().filter_map(|r| r.regraded.map(|g| json!({
            "task": r.task, "hint": r.hint, "attempt": r.attempt, "outcome": r.outcome, "from": g.from,
        }))).collect::<Vec<_>>(),
        "findings": m.runs.iter().enumerate().filter(|(_, r)| !r.findings.is_empty()).map(|(i, r)| json!({
            "task": r.task, "hint": r.hint, "attempt": r.attempt, "outcome": r.outcome, "findings": v.findings_of(i),
        })).collect::<Vec<_>>(),
    });
    // Absent for a reproduction, which is not marked.
    if let Some(marks) = marks {
        out["marks"] = json!(marks);
    }
    out
}

pub fn error_json(e: &BundleError) -> Value {
    json!({"valid": false, "error": {"code": e.code(), "message": e.to_string()}})
}
