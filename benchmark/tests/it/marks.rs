//! The marks of the conformance vectors (`vectors/expected.json`'s `marks`): what
//! `benchmark::marks` gives each valid submission vector's runs, priced with the
//! repository's table (which prices nothing of the vectors' `RefModel`), is what the
//! vectors state. The server's answer and `rexbench verify` are held to the same list.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use benchmark::cost::Prices;
use benchmark::marks::{self, WantedArtifacts};
use bundle::{PublicKey, RunMarks, Verifier};
use serde_json::Value;

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors")
}

/// The marks of the bundle at `path`, read twice as `rexbench verify` does.
fn marks_of(verifier: &Verifier, path: &Path) -> Vec<RunMarks> {
    let v = verifier.verify(fs::File::open(path).unwrap()).unwrap();
    let mut reading = WantedArtifacts::new(&v.manifest);
    verifier.verify_into(fs::File::open(path).unwrap(), &mut reading).unwrap();
    marks::of(Prices::builtin(), &v.manifest, &reading.read).by_run(&v.manifest)
}

#[test]
fn each_valid_submission_vector_has_the_marks_it_states() {
    let dir = vectors();
    let expected: BTreeMap<String, Value> =
        serde_json::from_slice(&fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let key = PublicKey::from_pem(&fs::read_to_string(dir.join("test-key/key.pub.pem")).unwrap()).unwrap();
    let verifier = Verifier::new(vec![key], ["cogs", "othello"]);
    let mut stated = 0;
    for (name, want) in &expected {
        let Some(marks) = want.get("marks") else {
            assert!(
                want["valid"] == false || name.contains("reproduction"),
                "{name}: a valid submission vector states its marks"
            );
            continue;
        };
        let want: Vec<RunMarks> = serde_json::from_value(marks.clone()).unwrap();
        assert_eq!(marks_of(&verifier, &dir.join(name)), want, "{name}'s marks");
        stated += 1;
    }
    assert_eq!(stated, 7, "the valid submission vectors, each with its marks");
    // Each kind of mark is among them, so a board that gives none of one fails here.
    let marked: Vec<RunMarks> =
        serde_json::from_value(expected["valid-marked.tar.gz"]["marks"].clone()).unwrap();
    let kinds: std::collections::BTreeSet<&str> =
        marked.iter().flat_map(|r| r.marks.iter().map(String::as_str)).collect();
    assert_eq!(kinds, ["copied-attempt", "implausible-tokens", "no-tokens", "unpriced"].into());
}

#[test]
fn a_patch_written_otherwise_is_the_same_patch_and_a_different_one_is_not() {
    // The two `cogs` patches of valid-marked: one identity (spec §5b).
    let first = "--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr = 0.1\n+lr = 0.01\n";
    let second =
        "A patch written otherwise\n--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr = 0.1\n+lr  =  0.01\n";
    let other = "--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr = 0.1\n+lr = 0.02\n";
    let id = benchmark::diff::identity;
    assert_eq!(id(first), id(second));
    assert_ne!(id(first), id(other));
}
