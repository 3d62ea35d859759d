//! A reproduction's own rules (spec §4d) and those of its held-out re-runs (spec §4l),
//! which `validate` holds a manifest with a `reproduction` to.

use std::collections::BTreeSet;

use crate::digest::Digest;
use crate::error::{BundleError, RunRef};
use crate::manifest::{EXECUTORS, Manifest, Reproduction, text};
use vocab::ProvenanceKind;

/// A reproduction (spec §4d): the runner re-ran another bundle's runs, each by the
/// patch it names, and says on what.
pub(crate) fn validate(m: &Manifest, r: &Reproduction) -> Result<(), BundleError> {
    let bad = |detail: String| Err(BundleError::InvalidReproduction { detail });
    if Digest::from_hex(&r.of).is_none() {
        return bad(format!("`of` must be a bundle id (64 lowercase hex digits), not {:?}", r.of));
    }
    if m.provenance.kind != ProvenanceKind::Evaluated {
        return bad(format!(
            "provenance.kind is `{}`: a reproduction's runs are `evaluated` by the runner",
            m.provenance.kind
        ));
    }
    if !EXECUTORS.contains(&r.executor.as_str()) {
        return bad(format!("executor {:?} is none of {}", r.executor, EXECUTORS.join(", ")));
    }
    if r.hardware.cpus == 0 {
        return bad("hardware.cpus must be at least 1".into());
    }
    text("description", &r.hardware.description, 200).or_else(|d| bad(format!("hardware.{d}")))?;
    if let Some(model) = &r.hardware.gpu_model {
        text("gpu_model", model, 200).or_else(|d| bad(format!("hardware.{d}")))?;
    }
    for (index, run) in m.runs.iter().enumerate() {
        let at = RunRef { index, key: Some((run.task.to_string(), run.hint.to_string(), run.attempt)) };
        if !run.artifacts.contains_key("patch") {
            return bad(format!("{at} carries no `patch`: a reproduction names each patch it re-ran"));
        }
        // An `infra_error` run is a try the runner could not complete (spec §4d): the
        // server counts it towards the run's tries. It was re-run on no held-out variant.
        if run.outcome == vocab::Outcome::InfraError
            && r.heldout
                .iter()
                .any(|h| h.task == run.task.as_str() && h.hint == run.hint && h.attempt == run.attempt)
        {
            return bad(format!(
                "{at} ended `infra_error`, yet reproduction.heldout has a re-run of it on a held-out variant: a try \
                 that could not complete is re-run on its variant with the next try"
            ));
        }
        if run.duration_s.is_none() && run.outcome.got_past_applying() {
            return bad(format!(
                "{at} ran its experiment but has no duration_s: a reproduction records what each run cost"
            ));
        }
    }
    // Spec §4l: each held-out re-run is of a run this reproduction re-ran, once.
    let mut seen = BTreeSet::new();
    for (index, h) in r.heldout.iter().enumerate() {
        let at = format!("heldout[{index}] ({}/{}/{})", h.task, h.hint, h.attempt);
        if !m
            .runs
            .iter()
            .any(|run| run.task.as_str() == h.task && run.hint == h.hint && run.attempt == h.attempt)
        {
            return bad(format!(
                "{at} names no run of this reproduction: a held-out re-run is of a run it re-ran"
            ));
        }
        if !seen.insert((h.task.as_str(), h.hint, h.attempt)) {
            return bad(format!("{at}: that run has a held-out re-run already"));
        }
        if Digest::from_hex(&h.variant).is_none() {
            return bad(format!(
                "{at}: `variant` must be a digest (64 lowercase hex digits), not {:?}",
                h.variant
            ));
        }
    }
    Ok(())
}
