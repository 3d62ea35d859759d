//! The server's own integrity checks at ingest: every check that needs only the bundle
//! and the task cards (the patch's, the trajectory's and the experiment's duration), run
//! on each run's staged artifacts. Their findings are stored as the server's, beside the
//! submitter's, so a bundle whose findings were deleted and re-signed is flagged all the
//! same.

use std::collections::BTreeMap;

use benchmark::integrity::TRAJECTORY;
use bundle::{ArtifactRole, Digest, ProvenanceKind, VerifiedBundle};
use store::{ServerFindings, Staging};

use crate::error::ApiError;
use crate::state::AppState;

/// What the server finds about each run of `bundle`, whose artifacts `staging` holds.
pub async fn server_findings(
    app: &AppState,
    bundle: &VerifiedBundle,
    staging: &Staging,
) -> Result<ServerFindings, ApiError> {
    let patch_role = ArtifactRole::Patch.to_string();
    // Runs of one bundle may share an artifact (the same outputs judged twice): read each once.
    let mut read: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut found = ServerFindings::new();
    for (i, run) in bundle.manifest.runs.iter().enumerate() {
        // The verifier has checked that every run's task is a card's.
        let Some(card) = app.cards.get(run.task.as_str()) else { continue };
        for role in [patch_role.as_str(), TRAJECTORY] {
            if let Some(hex) = run.artifacts.get(role)
                && !read.contains_key(hex)
            {
                let digest = Digest::from_hex(hex)
                    .ok_or_else(|| ApiError::internal(format!("an artifact digest `{hex}` not in hex")))?;
                // The bundle's limits bound an artifact's size already.
                let bytes = staging.read(&digest, app.limits.artifact).await.map_err(ApiError::internal)?;
                read.insert(hex.clone(), bytes);
            }
        }
        let bytes = |role: &str| run.artifacts.get(role).map(|hex| read[hex].as_slice());
        let patch = bytes(&patch_role).map(String::from_utf8_lossy).unwrap_or_default();
        let mut findings =
            benchmark::integrity::run_findings(card, card.check.as_ref(), &patch, bytes(TRAJECTORY));
        // A published run's duration is its agent's average over all runs (all the paper
        // gives), not the run's own: it says nothing about one experiment.
        if bundle.manifest.provenance.kind != ProvenanceKind::Published {
            benchmark::integrity::add_timing(&mut findings, card, run.outcome, run.duration_s);
        }
        if !findings.is_empty() {
            found.insert(i, findings);
        }
    }
    Ok(found)
}
