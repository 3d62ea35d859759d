//! The field rules of spec §3, checked on a parsed manifest. The first broken rule
//! is reported; its error names the run or field.

use std::collections::{BTreeSet, HashMap};

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::digest::Digest;
use crate::error::{BundleError, MAX_FINDINGS, RunRef};
use crate::findings_text::{
    FINDINGS_MEDIA_TYPE, FINDINGS_ROLE, MAX_FINDINGS_TEXT_BYTES, SEE_TEXT, is_text_digest,
};
use crate::limits::{CLOCK_TOLERANCE_S, Limits};
use crate::manifest::{ArtifactRole, Manifest, Run, SCHEMA, text};
use crate::metrics_text::{MAX_METRICS_TEXT_BYTES, METRICS_MEDIA_TYPE, METRICS_ROLE, is_metrics_digest};
use crate::provenance::{MAX_PROVENANCE_BYTES, PROVENANCE_MEDIA_TYPE, PROVENANCE_ROLE};
use vocab::{ProvenanceKind, is_slug};

pub const MAX_RUNS: usize = 100_000;

/// Spec §4f: the attempts of each task and hint condition are numbered 1…n, so that
/// one left out (a failure deleted before packing) shows as the gap it leaves.
fn validate_attempts<'a>(keys: impl Iterator<Item = (&'a str, crate::Hint, u32)>) -> Result<(), BundleError> {
    let mut cells: std::collections::BTreeMap<(&str, crate::Hint), BTreeSet<u32>> = Default::default();
    for (task, hint, attempt) in keys {
        cells.entry((task, hint)).or_default().insert(attempt);
    }
    for ((task, hint), attempts) in cells {
        let highest = *attempts.last().expect("a cell has an attempt");
        if highest as usize != attempts.len() {
            let missing = (1..highest).find(|a| !attempts.contains(a)).expect("a gap below the highest");
            return Err(BundleError::AttemptGap {
                task: task.to_owned(),
                hint: hint.as_str().to_owned(),
                missing,
                highest,
            });
        }
    }
    Ok(())
}

/// Checks every field rule. `known_tasks` is the benchmark version's task ids; `None`
/// skips that one rule (for inspecting a bundle without a task list).
pub fn validate(
    m: &Manifest,
    known_tasks: Option<&BTreeSet<String>>,
    limits: &Limits,
) -> Result<(), BundleError> {
    if m.schema != SCHEMA {
        return Err(BundleError::UnsupportedSchema { found: m.schema.clone() });
    }
    if OffsetDateTime::parse(&m.created_at, &Rfc3339).is_err() {
        return Err(BundleError::InvalidCreatedAt { value: m.created_at.clone() });
    }
    text("name", &m.benchmark.name, 100)
        .map_err(|detail| BundleError::InvalidBenchmark { field: "name", detail })?;
    text("version", &m.benchmark.version, 100)
        .map_err(|detail| BundleError::InvalidBenchmark { field: "version", detail })?;
    if Digest::from_hex(&m.benchmark.task_set_digest).is_none() {
        return Err(BundleError::InvalidTaskSetDigest { value: m.benchmark.task_set_digest.clone() });
    }
    text("name", &m.runner.name, 100)
        .map_err(|detail| BundleError::InvalidRunner { field: "name", detail })?;
    text("version", &m.runner.version, 100)
        .map_err(|detail| BundleError::InvalidRunner { field: "version", detail })?;
    let published = !m.provenance.kind.rule().carries_evidence;
    match &m.provenance.source {
        None if m.provenance.kind != ProvenanceKind::Evaluated => {
            return Err(BundleError::ProvenanceSourceMissing { kind: m.provenance.kind });
        }
        Some(source) => text("source", source, 2000)
            .map_err(|detail| BundleError::InvalidProvenance { detail: format!("provenance.{detail}") })?,
        None => {}
    }
    validate_agent(m)?;
    crate::badges::check(m)?;
    if let Some(r) = &m.reproduction {
        crate::reproduction::validate(m, r)?;
    }

    if m.runs.is_empty() || m.runs.len() > MAX_RUNS {
        return Err(BundleError::RunCountOutOfRange { count: m.runs.len() });
    }
    let mut seen: HashMap<(&str, crate::Hint, u32), usize> = HashMap::with_capacity(m.runs.len());
    let mut used: BTreeSet<&str> = BTreeSet::new();
    for (index, run) in m.runs.iter().enumerate() {
        let at = RunRef { index, key: Some((run.task.to_string(), run.hint.to_string(), run.attempt)) };
        validate_run(run, &at, known_tasks)?;
        if let Some(first) = seen.insert(run.key(), index) {
            return Err(BundleError::DuplicateRun { run: at, first });
        }
        if published && !run.artifacts.is_empty() {
            return Err(BundleError::PublishedRunHasArtifacts { run: at });
        }
        validate_evidence(m, run, &at, limits)?;
        validate_finding_text(m, run, &at)?;
        validate_metrics_text(m, run, &at)?;
        for (role, digest) in &run.artifacts {
            if ArtifactRole::parse(role).is_none() {
                return Err(BundleError::InvalidArtifactRole { run: at, role: role.clone() });
            }
            if Digest::from_hex(digest).is_none() {
                return Err(BundleError::InvalidDigest {
                    location: format!("{at}: artifacts.{role}"),
                    value: digest.clone(),
                });
            }
            if !m.artifacts.contains_key(digest) {
                return Err(BundleError::ArtifactNotListed {
                    run: at,
                    role: role.clone(),
                    digest: digest.clone(),
                });
            }
            used.insert(digest);
        }
    }
    crate::folder::validate(m)?;
    // A reproduction re-runs the sampled runs only, so its attempts have gaps by design.
    if m.reproduction.is_none() {
        validate_attempts(seen.keys().copied())?;
    }

    let mut total: u64 = 0;
    for (digest, info) in &m.artifacts {
        if Digest::from_hex(digest).is_none() {
            return Err(BundleError::InvalidDigest {
                location: "artifacts".to_owned(),
                value: digest.clone(),
            });
        }
        if !is_media_type(&info.media_type) {
            return Err(BundleError::InvalidMediaType {
                digest: digest.clone(),
                media_type: info.media_type.clone(),
            });
        }
        if info.size > limits.artifact {
            return Err(BundleError::ArtifactTooLarge { digest: digest.clone(), limit: limits.artifact });
        }
        total = total.saturating_add(info.size);
        if !used.contains(digest.as_str()) {
            return Err(BundleError::ArtifactUnused { digest: digest.clone() });
        }
    }
    if total > limits.uncompressed {
        return Err(BundleError::UncompressedTooLarge { limit: limits.uncompressed });
    }
    if m.artifacts.len() as u64 + 1 > limits.members {
        return Err(BundleError::TooManyMembers { limit: limits.members });
    }
    Ok(())
}

fn validate_agent(m: &Manifest) -> Result<(), BundleError> {
    let a = &m.agent;
    if !is_slug(&a.id) {
        return Err(BundleError::InvalidAgentId { value: a.id.clone() });
    }
    let field = |name: &'static str, value: &str, max: usize| {
        text(name, value, max).map_err(|_| BundleError::InvalidAgentField {
            field: name,
            detail: format!("must be 1 to {max} characters"),
        })
    };
    field("framework", &a.framework, 100)?;
    field("model", &a.model, 100)?;
    for (name, value) in [
        ("framework_version", &a.framework_version),
        ("model_id", &a.model_id),
        ("display_name", &a.display_name),
        ("url", &a.url),
    ] {
        if let Some(value) = value {
            field(name, value, 200)?;
        }
    }
    if let Some(url) = &a.url
        && !is_http_url(url)
    {
        return Err(BundleError::InvalidAgentUrl { value: url.clone() });
    }
    Ok(())
}

fn validate_run(run: &Run, at: &RunRef, known_tasks: Option<&BTreeSet<String>>) -> Result<(), BundleError> {
    if let Some(tasks) = known_tasks
        && !tasks.contains(run.task.as_str())
    {
        return Err(BundleError::UnknownTask { run: at.clone(), task: run.task.to_string() });
    }
    if run.attempt < 1 {
        return Err(BundleError::InvalidAttempt {
            run: at.clone(),
            detail: "attempts are numbered from 1".to_owned(),
        });
    }
    if let Some(e) = &run.error_type
        && (e.is_empty() || e.chars().count() > 100)
    {
        return Err(BundleError::InvalidErrorType { run: at.clone() });
    }
    if let Some(r) = run.file_recall
        && !(0.0..=1.0).contains(&r)
    {
        return Err(BundleError::InvalidFileRecall { run: at.clone(), value: r });
    }
    for path in run.files_changed.iter().flatten() {
        if !is_relative_path(path) {
            return Err(BundleError::InvalidFilesChanged { run: at.clone(), path: path.clone() });
        }
    }
    for (field, value) in [("duration_s", run.duration_s), ("cost_usd", run.cost_usd)] {
        if let Some(v) = value
            && (!v.is_finite() || v < 0.0)
        {
            return Err(BundleError::InvalidNumber {
                run: at.clone(),
                field,
                value: v,
                range: "a finite number ≥ 0",
            });
        }
    }
    if let Some(tokens) = &run.tokens {
        for (field, n) in tokens.fields() {
            if n > crate::manifest::Tokens::MOST {
                return Err(BundleError::InvalidNumber {
                    run: at.clone(),
                    field,
                    value: n as f64,
                    range: "a whole number of tokens from 0 to 10^12",
                });
            }
        }
    }
    if let Some(folder) = &run.task_folder
        && !crate::folder::is_task_folder(folder)
    {
        return Err(BundleError::ManifestMalformed {
            path: format!("runs[{}].task_folder", at.index),
            detail: format!(
                "`{}` is neither a Harbor lock's task digest (sha256: and 64 lowercase hex digits) nor a \
                 task_checksum (1 to 128 hex digits) (spec §4n)",
                folder.chars().take(140).collect::<String>()
            ),
        });
    }
    for name in run.metrics.keys() {
        if name.is_empty() || name.chars().count() > 200 {
            return Err(BundleError::InvalidMetric { run: at.clone(), name: name.clone() });
        }
    }
    validate_findings(run, at)
}

/// Section 4c: an evaluated run that got past applying its patch carries that patch; a
/// run's provenance record (section 4b) is JSON of at most its bound, listed as such.
fn validate_evidence(m: &Manifest, run: &Run, at: &RunRef, limits: &Limits) -> Result<(), BundleError> {
    let evaluated = m.provenance.kind == ProvenanceKind::Evaluated;
    if evaluated && run.outcome.got_past_applying() && !run.artifacts.contains_key("patch") {
        return Err(BundleError::EvidenceMissing {
            run: at.clone(),
            kind: m.provenance.kind,
            outcome: run.outcome.to_string(),
            role: "patch",
        });
    }
    if let Some(digest) = run.artifacts.get(PROVENANCE_ROLE)
        && let Some(info) = m.artifacts.get(digest)
    {
        let detail = if info.media_type != PROVENANCE_MEDIA_TYPE {
            Some(format!("its media_type is `{}`, not `{PROVENANCE_MEDIA_TYPE}`", info.media_type))
        } else if info.size > MAX_PROVENANCE_BYTES.min(limits.artifact) {
            Some(format!("it is {} bytes, over the bound of {MAX_PROVENANCE_BYTES}", info.size))
        } else {
            None
        };
        if let Some(detail) = detail {
            return Err(BundleError::InvalidProvenanceRecord { run: at.clone(), detail });
        }
    }
    Ok(())
}

/// Section 4g: a finding's words are not in the manifest. Its message says only
/// `see x-findings` and its `text_digest` names the words, which the run's `x-findings`
/// artifact (JSON within its bound) holds; a run without findings has no such artifact.
/// (That the artifact's texts hash to the digests is checked when its bytes are read.)
fn validate_finding_text(m: &Manifest, run: &Run, at: &RunRef) -> Result<(), BundleError> {
    for (index, f) in run.findings.iter().enumerate() {
        let detail = match &f.text_digest {
            _ if f.message != SEE_TEXT => Some("its message holds words, not `see x-findings`"),
            None => Some("it names no text_digest"),
            Some(d) if !is_text_digest(d) => Some("its text_digest is not 64 lowercase hex digits"),
            Some(_) => None,
        };
        if let Some(detail) = detail {
            return Err(BundleError::FindingTextInManifest { run: at.clone(), index, detail });
        }
    }
    let bad = |detail: String| Err(BundleError::InvalidFindingText { run: at.clone(), detail });
    match (run.findings.is_empty(), run.artifacts.get(FINDINGS_ROLE)) {
        (false, None) => {
            bad("are missing: a run with findings carries them as its x-findings artifact".into())
        }
        (true, Some(_)) => bad("are there, but the run has no findings".into()),
        (false, Some(digest)) => match m.artifacts.get(digest) {
            Some(info) if info.media_type != FINDINGS_MEDIA_TYPE => {
                bad(format!("have media_type `{}`, not `{FINDINGS_MEDIA_TYPE}`", info.media_type))
            }
            Some(info) if info.size > MAX_FINDINGS_TEXT_BYTES => {
                bad(format!("are {} bytes, over the bound of {MAX_FINDINGS_TEXT_BYTES}", info.size))
            }
            _ => Ok(()),
        },
        (true, None) => Ok(()),
    }
}

/// Section 4j: a run that seals its metrics names them by `metrics_digest` (64
/// lowercase hex digits) and states none in `metrics`; its `x-metrics` artifact (JSON
/// within its bound) holds them, and a run that seals none carries no such artifact.
/// (That the artifact hashes to the digest is checked when its bytes are read.)
fn validate_metrics_text(m: &Manifest, run: &Run, at: &RunRef) -> Result<(), BundleError> {
    let bad = |detail: String| Err(BundleError::InvalidMetricsText { run: at.clone(), detail });
    match (&run.metrics_digest, run.artifacts.get(METRICS_ROLE)) {
        (Some(d), _) if !is_metrics_digest(d) => bad("name them by a metrics_digest that is not 64 lowercase hex digits".into()),
        (Some(_), _) if !run.metrics.is_empty() => bad(
            "are beside metrics stated in the manifest: a run whose metrics are sealed states none in `metrics`".into(),
        ),
        (Some(_), None) => bad("are missing: a run with a metrics_digest carries its values as its x-metrics artifact".into()),
        (None, Some(_)) => bad("are there, but the run names no metrics_digest".into()),
        (Some(_), Some(digest)) => match m.artifacts.get(digest) {
            Some(info) if info.media_type != METRICS_MEDIA_TYPE => {
                bad(format!("have media_type `{}`, not `{METRICS_MEDIA_TYPE}`", info.media_type))
            }
            Some(info) if info.size > MAX_METRICS_TEXT_BYTES => {
                bad(format!("are {} bytes, over the bound of {MAX_METRICS_TEXT_BYTES}", info.size))
            }
            _ => Ok(()),
        },
        (None, None) => Ok(()),
    }
}

/// Section 4a: at most 32 findings, each naming its check by slug, saying what it saw in
/// 1 to 500 characters, and pointing (if at all) at a line ≥ 1 of one of the run's own
/// artifacts; no two alike in check, artifact and line.
fn validate_findings(run: &Run, at: &RunRef) -> Result<(), BundleError> {
    if run.findings.len() > MAX_FINDINGS {
        return Err(BundleError::TooManyFindings { run: at.clone(), count: run.findings.len() });
    }
    let mut seen: HashMap<(&str, Option<&str>, Option<u64>), usize> = HashMap::new();
    for (index, f) in run.findings.iter().enumerate() {
        if !is_check_slug(&f.check) {
            return Err(BundleError::InvalidFindingCheck { run: at.clone(), index, value: f.check.clone() });
        }
        if text("message", &f.message, 500).is_err() {
            return Err(BundleError::InvalidFindingMessage { run: at.clone(), index });
        }
        if let Some(role) = &f.artifact
            && !run.artifacts.contains_key(role)
        {
            return Err(BundleError::FindingUnknownArtifact { run: at.clone(), index, role: role.clone() });
        }
        let line = match (f.line, &f.artifact) {
            (Some(0), _) => Some("must be 1 or more (lines are counted from 1)"),
            (Some(_), None) => Some("needs the artifact it is a line of"),
            _ => None,
        };
        if let Some(detail) = line {
            return Err(BundleError::InvalidFindingLine { run: at.clone(), index, detail });
        }
        if let Some(first) = seen.insert((f.check.as_str(), f.artifact.as_deref(), f.line), index) {
            return Err(BundleError::DuplicateFinding { run: at.clone(), index, first });
        }
    }
    Ok(())
}

/// A check's slug: `^[a-z0-9][a-z0-9-]{0,63}$`.
fn is_check_slug(s: &str) -> bool {
    let b = s.as_bytes();
    (1..=64).contains(&b.len())
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// 1 to `max` characters.
fn is_http_url(url: &str) -> bool {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(rest) => {
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            !host.is_empty()
                && !url
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '<' || c == '>')
        }
        None => false,
    }
}

fn is_relative_path(path: &str) -> bool {
    !path.is_empty()
        && path.len() <= 4096
        && !path.starts_with('/')
        && !path.contains(['\0', '\\'])
        && path.split('/').all(|c| c != "..")
}

fn is_media_type(s: &str) -> bool {
    let Some((ty, sub)) = s.split_once('/') else {
        return false;
    };
    let token = |t: &str| {
        !t.is_empty()
            && t.len() <= 100
            && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b))
    };
    let sub = sub.split(';').next().unwrap_or("").trim_end();
    token(ty) && token(sub) && s.len() <= 200
}

/// The machine's clock where there is one to read (not in the browser's WebAssembly,
/// whose caller passes the page's clock to [`crate::Verifier::at`]).
pub(crate) fn clock() -> Option<OffsetDateTime> {
    #[cfg(not(target_family = "wasm"))]
    return Some(OffsetDateTime::now_utc());
    #[cfg(target_family = "wasm")]
    return None;
}

/// Spec §6a: a bundle may not say it was made later than the verifier's clock, beyond
/// [`CLOCK_TOLERANCE_S`].
pub(crate) fn not_in_future(created_at: &str, now: OffsetDateTime) -> Result<(), BundleError> {
    let created = OffsetDateTime::parse(created_at, &Rfc3339).expect("validated");
    if created > now + time::Duration::seconds(CLOCK_TOLERANCE_S) {
        return Err(BundleError::CreatedAtInFuture { value: created_at.to_owned() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert!(is_http_url("https://example.org/agent"));
        assert!(is_http_url("http://a"));
        for bad in
            ["javascript:alert(1)", "https://", "ftp://x", "https://a b", "https://x\"onmouseover=", "//x"]
        {
            assert!(!is_http_url(bad), "{bad}");
        }
    }

    #[test]
    fn paths() {
        assert!(is_relative_path("src/train.py"));
        assert!(is_relative_path("a/..b/c"));
        for bad in ["", "/etc/passwd", "../x", "a/../../b", "a\\b"] {
            assert!(!is_relative_path(bad), "{bad}");
        }
    }

    #[test]
    fn media_types() {
        for ok in ["text/plain", "text/x-diff", "application/json", "text/plain; charset=utf-8"] {
            assert!(is_media_type(ok), "{ok}");
        }
        for bad in ["", "text", "/plain", "text/", "text/<b>"] {
            assert!(!is_media_type(bad), "{bad}");
        }
    }
}
