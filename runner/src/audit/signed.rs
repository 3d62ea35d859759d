//! The audit's first steps: the signed envelope and what it signs (the signature, by the
//! key the server names or one the auditor trusts; the bundle id; the manifest naming the
//! agent), and every artifact the manifest's runs name, byte for byte.

use std::collections::BTreeMap;

use bundle::{Digest, Envelope, Limits, Manifest, PublicKey};

use super::api::*;
use crate::Error;

/// The submission's signed envelope, by the key the server names (or one of `trust`),
/// the bundle id its manifest's SHA-256, and the manifest naming the agent: the manifest
/// and the server's keys, or `None` where the audit cannot go on (the envelope withheld
/// or unreadable, the manifest unreadable), which the checks say.
pub(super) fn signed_manifest(
    api: &Api,
    agent: &str,
    submission: &SubmissionAnswer,
    trust: &[PublicKey],
    check: &mut impl FnMut(bool, String),
) -> Result<Option<(Manifest, KeysAnswer)>, Error> {
    let bundle_id = &submission.bundle_id;
    let envelope_bytes = match api.bytes(&format!("/api/v1/submissions/{bundle_id}/envelope")) {
        Ok(bytes) => bytes,
        // Spec §4g: stored before findings' words left manifests, and quoting outputs this
        // reader may not read: the server serves it to its submitter and the maintainers.
        Err(Error::Fetch { reason, .. }) if reason.contains("envelope_withheld") => {
            check(
                false,
                "envelope: withheld from you. Its manifest was stored before findings' words left manifests \
                 (spec §4g) and quotes private outputs; audit it signed in as its submitter (rexbench login) \
                 or as a maintainer (--token)"
                    .into(),
            );
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let keys: KeysAnswer = api.json("/api/v1/keys")?;
    let listed = keys.keys.iter().find(|k| k.keyid == submission.keyid);
    let signed =
        Envelope::parse(&envelope_bytes).and_then(|e| Ok((e.payload(Limits::default().manifest)?, e)));
    let (manifest_bytes, envelope) = match signed {
        Ok(x) => x,
        Err(e) => {
            check(false, format!("envelope: not a readable DSSE envelope: {e}"));
            return Ok(None);
        }
    };
    let server_key = listed.map(|k| PublicKey::from_pem(&k.public_key));
    let trusted: Vec<PublicKey> = match (trust.is_empty(), server_key) {
        (false, _) => trust.to_vec(),
        (true, Some(Ok(k))) => vec![k],
        (true, Some(Err(e))) => {
            check(
                false,
                format!("signer: the key the server lists for {} is not a public key: {e}", submission.keyid),
            );
            Vec::new()
        }
        (true, None) => {
            check(false, format!("signer: the server lists no key {}", submission.keyid));
            Vec::new()
        }
    };
    if !trusted.is_empty() {
        let whose = match listed {
            Some(k) => format!(
                "{}, {} ({})",
                k.owner,
                k.tier,
                if trust.is_empty() { "as the server lists it" } else { "a key you trust" }
            ),
            None => "a key you trust".to_owned(),
        };
        match envelope.check_signatures(&manifest_bytes, &trusted) {
            Ok(_) => check(true, format!("signature: verifies with key {} ({whose})", submission.keyid)),
            Err(e) => check(false, format!("signature: {e}")),
        }
        if let Some(at) = listed.and_then(|k| k.revoked_at.as_deref()) {
            check(true, format!("signer: the key was revoked at {at}; what it signed before stays"));
        }
    }
    let id = Digest::of(&manifest_bytes).to_hex();
    check(id == *bundle_id, format!("bundle id: the SHA-256 of the signed manifest is {id}"));
    let manifest = match Manifest::parse(&manifest_bytes) {
        Ok(m) => m,
        Err(e) => {
            check(false, format!("manifest: {e}"));
            return Ok(None);
        }
    };
    check(
        manifest.agent.id == agent,
        format!("agent: the signed manifest names agent `{}`", manifest.agent.id),
    );
    Ok(Some((manifest, keys)))
}

/// Every artifact a run names, byte for byte; the trajectories and patches are kept as
/// they are hashed, none fetched twice: each run's cost is priced from them, and each
/// patch's identity recomputed (§5b).
pub(super) fn artifacts(
    api: &Api,
    manifest: &Manifest,
    check: &mut impl FnMut(bool, String),
) -> BTreeMap<String, Option<Vec<u8>>> {
    let named: std::collections::BTreeSet<&String> =
        manifest.runs.iter().flat_map(|r| r.artifacts.values()).collect();
    let mut bad = Vec::new();
    let mut private = 0;
    let kept_roles = [benchmark::integrity::TRAJECTORY, "patch"];
    let trajectories: std::collections::BTreeSet<&String> =
        manifest.runs.iter().flat_map(|r| kept_roles.iter().filter_map(|k| r.artifacts.get(*k))).collect();
    let mut kept: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    for digest in &named {
        let hashed = if trajectories.contains(*digest) {
            api.artifact(digest).map(|bytes| {
                let d = bytes.as_deref().map(Digest::of);
                kept.insert((*digest).clone(), bytes);
                d
            })
        } else {
            api.digest_of(digest)
        };
        match hashed {
            Ok(Some(d)) if d.to_hex() == **digest => {}
            Ok(Some(d)) => bad.push(format!("{digest} is served as bytes that hash to {}", d.to_hex())),
            // Private outputs are not served to this reader: the signed manifest's digest
            // is what anyone holding a copy checks it against.
            Ok(None) => private += 1,
            Err(e) => bad.push(e.to_string()),
        }
    }
    let served = named.len() - private;
    check(
        bad.is_empty(),
        match (bad.is_empty(), private) {
            (true, 0) => {
                format!("artifacts: all {} the runs name are served with their digests", named.len())
            }
            (true, _) => format!(
                "artifacts: all {served} served to you hash to their digests; {private} more are private outputs, \
                 not served to you (their SHA-256 is the signed manifest's: check a copy with sha256sum)"
            ),
            (false, _) => format!("artifacts: {}", bad.join("; ")),
        },
    );
    kept
}
