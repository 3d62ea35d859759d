//! The spec's conformance vectors (`shared/vectors/`), each against its expected verdict
//! and, for invalid ones, the specific rule it breaks.

use std::collections::BTreeMap;
use std::fs;

use bundle::{PublicKey, Verifier};
use serde::Deserialize;

use crate::common::{TASKS, shared_dir};

#[derive(Deserialize)]
struct Expected {
    valid: bool,
    why: String,
    bundle_id: Option<String>,
}

/// The rule each invalid vector breaks, by our codes.
const CODES: [(&str, &str); 12] = [
    ("bad-unknown-signer.tar.gz", "no_trusted_signature"),
    ("bad-signature.tar.gz", "signature_invalid"),
    ("bad-payload-type.tar.gz", "payload_type_mismatch"),
    ("bad-artifact-digest.tar.gz", "artifact_digest_mismatch"),
    ("bad-missing-artifact.tar.gz", "artifact_missing"),
    ("bad-envelope-not-first.tar.gz", "envelope_not_first"),
    ("bad-unknown-field.tar.gz", "unknown_field"),
    ("bad-duplicate-run.tar.gz", "duplicate_run"),
    ("bad-hint.tar.gz", "invalid_hint"),
    ("bad-recall.tar.gz", "invalid_file_recall"),
    ("bad-traversal.tar.gz", "unsafe_path"),
    ("bad-not-gzip.tar.gz", "not_gzip"),
];

#[test]
fn every_vector_gets_its_expected_verdict() {
    let vectors = shared_dir().join("vectors");
    let expected: BTreeMap<String, Expected> =
        serde_json::from_slice(&fs::read(vectors.join("expected.json")).unwrap()).unwrap();
    let key =
        PublicKey::from_pem(&fs::read_to_string(vectors.join("test-key/key.pub.pem")).unwrap()).unwrap();
    let verifier = Verifier::new(vec![key], TASKS);
    let codes: BTreeMap<&str, &str> = CODES.into_iter().collect();

    let mut on_disk: Vec<String> = fs::read_dir(&vectors)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tar.gz"))
        .collect();
    on_disk.sort();
    assert_eq!(
        on_disk,
        expected.keys().cloned().collect::<Vec<_>>(),
        "expected.json and the vectors disagree"
    );

    for (name, want) in &expected {
        let bytes = fs::read(vectors.join(name)).unwrap();
        match (verifier.verify(bytes.as_slice()), want.valid) {
            (Ok(v), true) => {
                if let Some(id) = &want.bundle_id {
                    assert_eq!(&v.id.to_hex(), id, "{name}: bundle id");
                }
            }
            (Err(e), false) => {
                let code =
                    codes.get(name.as_str()).unwrap_or_else(|| panic!("{name}: no expected code recorded"));
                assert_eq!(e.code(), *code, "{name} ({}): refused for the wrong reason: {e}", want.why);
            }
            (Ok(_), false) => panic!("{name} verified but must not ({})", want.why),
            (Err(e), true) => panic!("{name} was refused but is valid ({}): {}: {e}", want.why, e.code()),
        }
    }
}

#[test]
fn the_test_key_is_the_one_that_signed_the_vectors() {
    let vectors = shared_dir().join("vectors");
    let secret =
        bundle::SecretKey::from_pem(&fs::read_to_string(vectors.join("test-key/key.pem")).unwrap()).unwrap();
    let public =
        PublicKey::from_pem(&fs::read_to_string(vectors.join("test-key/key.pub.pem")).unwrap()).unwrap();
    assert_eq!(secret.public_key(), public);
    let v = Verifier::new(vec![public.clone()], TASKS)
        .verify(fs::read(vectors.join("valid-basic.tar.gz")).unwrap().as_slice())
        .unwrap();
    assert_eq!(v.signatures, vec![(public.keyid().to_hex(), bundle::SignatureStatus::Verified)]);
    assert_eq!(v.manifest.runs.len(), 12);
}
