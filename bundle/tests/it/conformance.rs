//! The conformance vectors, each against its expected verdict and, for invalid ones,
//! the specific rule it breaks: the repository's own (`vectors/`, one per rule, made by
//! this crate and checked to be what it makes), and the spec's (`shared/vectors/`, made
//! independently) where they are beside the repository.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use bundle::{PublicKey, Verifier, vectors};

use crate::common::{TASKS, shared_dir, vectors_dir};

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
fn the_repository_s_vectors_are_what_the_generator_makes() {
    let dir = vectors_dir();
    let key = |name: &str| {
        bundle::SecretKey::from_pem(&fs::read_to_string(dir.join("test-key").join(name)).unwrap()).unwrap()
    };
    let made = vectors::all(&key("key.pem"), &key("stranger.pem"));
    let regenerate =
        "regenerate them: cargo run -p rexbench-bundle --features vectors --example vectors -- vectors";
    let expected: BTreeMap<String, vectors::Expected> =
        serde_json::from_slice(&fs::read(dir.join("expected.json")).unwrap()).unwrap();
    assert_eq!(
        made.iter().map(|v| (v.name.clone(), v.expected.clone())).collect::<BTreeMap<_, _>>(),
        expected,
        "expected.json is not what the generator makes: {regenerate}"
    );
    for v in &made {
        assert!(fs::read(dir.join(&v.name)).unwrap() == v.bytes, "{} differs: {regenerate}", v.name);
    }
}

/// Verifies each vector in `dir` (trusting its `test-key/key.pub.pem`, knowing `tasks`, holding
/// its claims to `claims` where given)
/// against its `expected.json`: a valid one verifies (with its bundle id, where given),
/// an invalid one is refused with `code(name, expected)`. Returns what was expected.
fn verdicts(
    dir: &Path,
    tasks: &[&str],
    claims: Option<bundle::Claims>,
    code: impl Fn(&str, &vectors::Expected) -> String,
) -> BTreeMap<String, vectors::Expected> {
    let expected: BTreeMap<String, vectors::Expected> =
        serde_json::from_slice(&fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let key = PublicKey::from_pem(&fs::read_to_string(dir.join("test-key/key.pub.pem")).unwrap()).unwrap();
    let mut verifier = Verifier::new(vec![key], tasks.iter().copied());
    if let Some(claims) = claims {
        verifier = verifier.holding(claims);
    }
    let mut on_disk: Vec<String> = fs::read_dir(dir)
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
        let bytes = fs::read(dir.join(name)).unwrap();
        match (verifier.verify(bytes.as_slice()), want.valid) {
            (Ok(v), true) => {
                if let Some(id) = &want.bundle_id {
                    assert_eq!(&v.id.to_hex(), id, "{name}: bundle id");
                }
            }
            (Err(e), false) => {
                assert_eq!(
                    e.code(),
                    code(name, want),
                    "{name} ({}): refused for the wrong reason: {e}",
                    want.why
                )
            }
            (Ok(_), false) => panic!("{name} verified but must not ({})", want.why),
            (Err(e), true) => panic!("{name} was refused but is valid ({}): {}: {e}", want.why, e.code()),
        }
    }
    expected
}

#[test]
fn every_repository_vector_gets_its_verdict_and_every_rule_has_one() {
    // Ours are held to a board's claims too (spec §5a); the spec's own know only the format.
    let expected = verdicts(&vectors_dir(), &vectors::TASKS, Some(vectors::claims()), |name, want| {
        want.code.clone().unwrap_or_else(|| panic!("{name}: an invalid vector without its code"))
    });
    // Every code a bundle can be refused with has a vector, or a reason it has none.
    let covered: std::collections::BTreeSet<&str> = expected
        .values()
        .filter_map(|e| e.code.as_deref())
        .chain(vectors::NOT_VECTORS.iter().map(|(code, _)| *code))
        .collect();
    let all: std::collections::BTreeSet<&str> = bundle::BundleError::CODES.iter().copied().collect();
    assert_eq!(covered, all, "a rule without a vector");
}

#[test]
fn every_shared_vector_gets_its_expected_verdict() {
    let Some(shared) = shared_dir() else { return };
    let codes: BTreeMap<&str, &str> = CODES.into_iter().collect();
    verdicts(&shared.join("vectors"), &TASKS, None, |name, _| {
        codes.get(name).unwrap_or_else(|| panic!("{name}: no expected code recorded")).to_string()
    });
}

#[test]
fn the_test_key_is_the_one_that_signed_the_vectors() {
    let Some(shared) = shared_dir() else { return };
    let vectors = shared.join("vectors");
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

/// The spec split at its `## ` headings: the text before the first, then each section.
fn sections(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in text.split_inclusive('\n') {
        if line.starts_with("## ") {
            out.push(String::new());
        }
        out.last_mut().expect("one at least").push_str(line);
    }
    out
}

/// The repository's spec is the contract, extended: each of the contract's sections is
/// there unchanged and in order; the only others are headed as this project's additions.
#[test]
fn the_repository_s_spec_is_the_contract_extended_section_by_section() {
    let ours = fs::read_to_string(vectors_dir().join("../docs/spec/result-bundle-v1.md")).unwrap();
    let (preface, text) = ours.split_once("-->\n").expect("the preface ends with -->");
    assert!(preface.starts_with("<!--"));
    assert!(text.starts_with("# RExBench result bundle, version 1"));
    let ours = sections(text);
    let additions: Vec<&String> = ours
        .iter()
        .filter(|s| s.lines().next().is_some_and(|h| h.ends_with("(this project's addition)")))
        .collect();
    assert!(!additions.is_empty(), "sections 4b and 4c are the project's additions");
    let Some(shared) = shared_dir() else { return };
    let theirs = sections(&fs::read_to_string(shared.join("spec/result-bundle-v1.md")).unwrap());
    let kept: Vec<&String> = ours.iter().filter(|s| !additions.contains(s)).collect();
    assert_eq!(
        kept.len(),
        theirs.len(),
        "docs/spec/result-bundle-v1.md drops or adds a section of the contract"
    );
    for (ours, theirs) in kept.iter().zip(&theirs) {
        assert!(
            *ours == theirs,
            "docs/spec/result-bundle-v1.md changes the contract's section `{}`: copy it again",
            theirs.lines().next().unwrap_or("")
        );
    }
}
