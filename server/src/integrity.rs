//! The server's own integrity checks at ingest: every check that needs only the bundle
//! and the task cards (the patch's, the trajectory's and the experiment's duration), run
//! on each run's staged artifacts. Their findings are stored as the server's, beside the
//! submitter's, so a bundle whose findings were deleted and re-signed is flagged all the
//! same. Each run's cost is checked here too (spec §4m): its tokens priced with the
//! repository's price table, and held to its trajectory's.

use std::collections::BTreeMap;

use benchmark::integrity::{
    INFRA_ERROR_SHARE, MAX_INFRA_ERROR_SHARE, PATCH_MISSING, PROVENANCE_MISSING, TRAJECTORY,
};
use bundle::{
    ArtifactRole, Digest, Finding, Hint, MAX_FINDINGS, Outcome, PROVENANCE_ROLE, ProvenanceKind,
    ProvenanceRecord, RunMarks, Tier, VerifiedBundle,
};
use store::{CostCheck, ServerChecks, ServerFindings, Staging};

use crate::error::ApiError;
use crate::state::AppState;

/// What the server finds about each run of `bundle`, whose artifacts `staging` holds,
/// and what it makes of each run's cost; `tier` is its signer's. With them, the marks of
/// the bundle's runs that the bundle alone gives (`benchmark::marks`), for the uploader.
pub async fn server_checks(
    app: &AppState,
    bundle: &VerifiedBundle,
    staging: &Staging,
    tier: Option<Tier>,
) -> Result<(ServerChecks, Vec<RunMarks>), ApiError> {
    let patch_role = ArtifactRole::Patch.to_string();
    // Runs of one bundle may share an artifact (the same outputs judged twice): read each once.
    let mut read: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for run in &bundle.manifest.runs {
        // Every run's trajectory, for its tokens.
        if let Some(hex) = run.artifacts.get(TRAJECTORY)
            && !read.contains_key(hex)
        {
            read.insert(hex.clone(), read_staged(app, staging, hex).await?);
        }
        // The verifier has checked that every run's task is a card's.
        if app.cards.get(run.task.as_str()).is_none() {
            continue;
        }
        // The agent's log too where the run says it had no hints: the hint check reads it.
        let log = (run.hint == Hint::None).then_some("agent_log");
        for role in [patch_role.as_str(), TRAJECTORY, PROVENANCE_ROLE].into_iter().chain(log) {
            if let Some(hex) = run.artifacts.get(role)
                && !read.contains_key(hex)
            {
                read.insert(hex.clone(), read_staged(app, staging, hex).await?);
            }
        }
    }
    // Reading patches, trajectories and provenance records is work for a core, not for
    // the workers that answer requests.
    let (cards, manifest) = (app.cards.clone(), bundle.manifest.clone());
    let (mut found, marks) = tokio::task::spawn_blocking(move || {
        let marks = benchmark::marks::of(benchmark::cost::Prices::builtin(), &manifest, &read);
        judge(&cards, manifest.provenance.kind, &manifest.runs, &read).map(|found| (found, marks))
    })
    .await
    .map_err(ApiError::internal)??;
    if tier == Some(Tier::Submitter) {
        flag_infra_error_share(bundle, &mut found);
    }
    flag_copied_attempts(app, bundle, &mut found).await?;
    let by_run = marks.by_run(&bundle.manifest);
    for (i, finding) in marks.copied {
        let findings = found.entry(i).or_default();
        if findings.len() < MAX_FINDINGS {
            findings.push(finding);
        }
    }
    let costs = marks
        .costs
        .into_iter()
        .map(|(i, c)| {
            let check = CostCheck {
                computed_usd: c.computed,
                mark: c.mark,
                counted_usd: c.counted,
                checked: c.checked,
            };
            (i, check)
        })
        .collect();
    Ok((ServerChecks { findings: found, costs, identities: marks.identities }, by_run))
}

/// A staged artifact's bytes (the bundle's limits bound its size already).
async fn read_staged(app: &AppState, staging: &Staging, hex: &str) -> Result<Vec<u8>, ApiError> {
    let digest = Digest::from_hex(hex)
        .ok_or_else(|| ApiError::internal(format!("an artifact digest `{hex}` not in hex")))?;
    staging.read(&digest, app.limits.artifact).await.map_err(ApiError::internal)
}

/// Spec §5a: attempts whose agent records are byte for byte another's, in this bundle or
/// under another agent id stored before, each carry the server's `copied-attempt` finding.
async fn flag_copied_attempts(
    app: &AppState,
    bundle: &VerifiedBundle,
    found: &mut ServerFindings,
) -> Result<(), ApiError> {
    let runs = &bundle.manifest.runs;
    let records: Vec<String> = runs
        .iter()
        .filter(|r| r.outcome == Outcome::Success)
        .filter_map(benchmark::integrity::record_of)
        .map(|(_, d)| d.to_owned())
        .collect();
    let elsewhere = app
        .store
        .record_uses(&records)
        .await?
        .into_iter()
        .map(|(digest, uses)| {
            let uses = uses.into_iter().map(|(agent_id, task, hint, attempt)| {
                benchmark::integrity::RecordUse { agent_id, task: task.to_string(), hint, attempt }
            });
            (digest, uses.collect())
        })
        .collect();
    for (i, finding) in benchmark::integrity::copied_attempts(runs, &bundle.manifest.agent.id, &elsewhere) {
        let findings = found.entry(i).or_default();
        if findings.len() < MAX_FINDINGS {
            findings.push(finding);
        }
    }
    Ok(())
}

/// The findings of each run of a bundle of provenance `kind`, its artifacts `read`.
fn judge(
    cards: &crate::catalog::Cards,
    kind: ProvenanceKind,
    runs: &[bundle::Run],
    read: &BTreeMap<String, Vec<u8>>,
) -> Result<ServerFindings, ApiError> {
    let patch_role = ArtifactRole::Patch.to_string();
    let mut found = ServerFindings::new();
    for (i, run) in runs.iter().enumerate() {
        let Some(card) = cards.get(run.task.as_str()) else { continue };
        let bytes = |role: &str| run.artifacts.get(role).and_then(|hex| read.get(hex)).map(Vec::as_slice);
        let patch = bytes(&patch_role).map(String::from_utf8_lossy).unwrap_or_default();
        let mut findings =
            benchmark::integrity::run_findings(card, card.check.as_ref(), &patch, bytes(TRAJECTORY));
        // A run labelled `none` whose agent record quotes the task's hints.
        let record = benchmark::integrity::record_of(run).and_then(|(role, _)| bytes(role));
        findings.extend(benchmark::integrity::hint_in_transcript(card, run, record));
        // A published run's duration is its agent's average over all runs (all the paper
        // gives), not the run's own: it says nothing about one experiment.
        if kind != ProvenanceKind::Published {
            benchmark::integrity::add_timing(&mut findings, card, run.outcome, run.duration_s);
        }
        // What the run's provenance record shows (the verifier has checked its shape);
        // an evaluated success without one cannot be checked, and says so.
        let room = MAX_FINDINGS.saturating_sub(findings.len());
        match bytes(PROVENANCE_ROLE).map(ProvenanceRecord::parse) {
            Some(Ok(record)) => {
                let results = public_results(card, &record);
                findings.extend(
                    benchmark::integrity::provenance_findings(card, run.outcome, &record, &results)
                        .into_iter()
                        .take(room),
                );
            }
            Some(Err(detail)) => {
                return Err(ApiError::internal(format!("a verified provenance record: {detail}")));
            }
            None if kind == ProvenanceKind::Evaluated && run.outcome == Outcome::Success && room > 0 => {
                findings.push(Finding {
                    check: PROVENANCE_MISSING.slug.to_owned(),
                    message: "this evaluated success carries no provenance record (x-provenance): what its \
                              experiment did cannot be checked"
                        .to_owned(),
                    artifact: None,
                    line: None,
                    text_digest: None,
                });
            }
            None => {}
        }
        // An imported success without its patch: nothing of the above could look at it.
        if kind == ProvenanceKind::Imported
            && run.outcome == Outcome::Success
            && !run.artifacts.contains_key(&patch_role)
            && findings.len() < MAX_FINDINGS
        {
            findings.push(Finding {
                check: PATCH_MISSING.slug.to_owned(),
                message: "this imported success carries no patch: the change its result rests on cannot be \
                          checked"
                    .to_owned(),
                artifact: None,
                line: None,
                text_digest: None,
            });
        }
        if !findings.is_empty() {
            found.insert(i, findings);
        }
    }
    Ok(found)
}

/// Spec §4f: under a hint condition in which more than [`MAX_INFRA_ERROR_SHARE`] of a
/// self-reported bundle's runs ended `infra_error`, each success carries the server's
/// `infra-error-share` finding, for a maintainer to review.
fn flag_infra_error_share(bundle: &VerifiedBundle, found: &mut ServerFindings) {
    let runs = &bundle.manifest.runs;
    for hint in Hint::ALL {
        let under = || runs.iter().enumerate().filter(move |(_, r)| r.hint == hint);
        let all = under().count();
        let errors = under().filter(|(_, r)| r.outcome == Outcome::InfraError).count();
        if all == 0 || (errors as f64) <= MAX_INFRA_ERROR_SHARE * all as f64 {
            continue;
        }
        for (i, _) in under().filter(|(_, r)| r.outcome == Outcome::Success) {
            let findings = found.entry(i).or_default();
            if findings.len() < MAX_FINDINGS {
                findings.push(Finding {
                    check: INFRA_ERROR_SHARE.slug.to_owned(),
                    message: format!(
                        "{errors} of this bundle's {all} runs under {} ended infra_error, more than the tenth \
                         the board lets pass unreviewed: they count in no rate",
                        hint.label().to_lowercase()
                    ),
                    artifact: None,
                    line: None,
                    text_digest: None,
                });
            }
        }
    }
}

/// The files a public check reads that the record shows written: the server's own list
/// beside the record's, so that a record that leaves its results out is judged all the
/// same. A private check's files are the record's alone.
fn public_results(card: &benchmark::task::TaskCard, record: &ProvenanceRecord) -> Vec<String> {
    let Some(check) = card.check.as_ref() else { return Vec::new() };
    let files = check.result_files();
    let patterns: Vec<glob::Pattern> = files
        .files
        .iter()
        .cloned()
        .chain(files.series.iter().map(|(each, _, file)| format!("{each}/{file}")))
        .filter_map(|p| glob::Pattern::new(&p).ok())
        .collect();
    let written: std::collections::BTreeSet<&str> =
        record.processes.iter().flat_map(|p| p.wrote.iter().map(String::as_str)).collect();
    written
        .into_iter()
        .filter(|w| patterns.iter().any(|p| p.matches_with(w, benchmark::integrity::GLOB)))
        .map(str::to_owned)
        .collect()
}

/// Bundle spec §5b: the identities of patches stored before the server computed them at
/// ingest, from their blobs, a hundred at a time; run once the board is ready. A patch
/// whose blob is missing or larger than an artifact may be is recorded as having none.
/// How many were recorded.
pub async fn identify_stored_patches(app: &AppState) -> Result<usize, ApiError> {
    use futures::TryStreamExt;
    let mut done = 0;
    loop {
        let digests = app.store.patches_without_identity(100).await?;
        if digests.is_empty() {
            return Ok(done);
        }
        let mut got = Vec::with_capacity(digests.len());
        for digest in digests {
            let mut bytes = Vec::new();
            let read = match app.store.blobs().read(&digest).await {
                Ok(mut chunks) => loop {
                    match chunks.try_next().await {
                        Ok(Some(chunk)) if (bytes.len() + chunk.len()) as u64 <= app.limits.artifact => {
                            bytes.extend_from_slice(&chunk)
                        }
                        Ok(Some(_)) => break Err("larger than an artifact may be".to_owned()),
                        Ok(None) => break Ok(()),
                        Err(e) => break Err(e.to_string()),
                    }
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err("its blob is missing".to_owned()),
                Err(e) => return Err(ApiError::blob_store_unavailable().with_cause(e.to_string())),
            };
            let identity = match read {
                Ok(()) => {
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    tokio::task::spawn_blocking(move || benchmark::diff::identity(&text))
                        .await
                        .map_err(ApiError::internal)?
                }
                Err(why) => {
                    tracing::warn!(patch = %digest.to_hex(), why, "a stored patch has no identity");
                    None
                }
            };
            got.push((digest, identity));
        }
        app.store.record_identities(&got).await?;
        done += got.len();
    }
}
