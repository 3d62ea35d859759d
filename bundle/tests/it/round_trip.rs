//! What the writer writes, the reader reads back unchanged.

use std::collections::BTreeMap;
use std::io::Read;

use bundle::{
    ArtifactInfo, ArtifactSink, BundleBuilder, Digest, Hint, Manifest, Outcome, SecretKey, SignatureStatus,
    Verifier,
};

use crate::common::{TASKS, sample};

#[derive(Default)]
struct Collect(BTreeMap<Digest, Vec<u8>>);

impl ArtifactSink for Collect {
    fn artifact(&mut self, digest: &Digest, _: &ArtifactInfo, content: &mut dyn Read) -> std::io::Result<()> {
        let mut buf = Vec::new();
        content.read_to_end(&mut buf)?;
        self.0.insert(*digest, buf);
        Ok(())
    }
}

#[test]
fn builder_output_verifies_with_identical_content() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("agent.log");
    let log = "step 1\nstep 2\n".repeat(5000);
    std::fs::write(&log_path, &log).unwrap();

    let s = sample();
    let mut manifest: Manifest = serde_json::from_value(s.manifest.clone()).unwrap();
    manifest.artifacts.clear();
    for run in &mut manifest.runs {
        run.artifacts.clear();
    }
    let mut builder = BundleBuilder::new(manifest);
    let patch = builder.add_bytes(b"--- a/x\n+++ b/x\n".to_vec(), "text/x-diff");
    let log_digest = builder.add_file(&log_path, "text/plain").unwrap();
    // The same bytes twice are stored once.
    assert_eq!(builder.add_bytes(log.clone().into_bytes(), "text/plain"), log_digest);
    builder.manifest_mut().runs[0].artifacts.insert("patch".into(), patch.to_hex());
    builder.manifest_mut().runs[1].artifacts.insert("patch".into(), patch.to_hex());
    builder.manifest_mut().runs[0].artifacts.insert("agent_log".into(), log_digest.to_hex());
    builder.manifest_mut().runs[1].artifacts.insert("x-notes".into(), log_digest.to_hex());

    let second = SecretKey::generate();
    let mut out = Vec::new();
    let id = builder.write(&[&s.key, &second], &mut out).unwrap();

    let mut sink = Collect::default();
    let v = Verifier::new(vec![second.public_key()], TASKS).verify_into(out.as_slice(), &mut sink).unwrap();
    assert_eq!(v.id, id);
    assert_eq!(v.id, Digest::of(&v.manifest_bytes));
    assert_eq!(v.manifest.runs[0].outcome, Outcome::Success);
    assert_eq!(v.manifest.runs[1].hint, Hint::Detailed);
    assert_eq!(v.manifest.artifacts.len(), 2);
    assert_eq!(v.artifact_bytes, (log.len() + 16) as u64);
    assert_eq!(v.compressed_bytes, out.len() as u64);
    assert_eq!(sink.0[&log_digest], log.as_bytes());
    assert_eq!(sink.0[&patch], b"--- a/x\n+++ b/x\n");
    assert_eq!(
        v.signatures.iter().map(|(_, s)| *s).collect::<Vec<_>>(),
        vec![SignatureStatus::Unknown, SignatureStatus::Verified]
    );
    // The manifest parses back to what was signed.
    assert_eq!(Manifest::parse(&v.manifest_bytes).unwrap(), v.manifest);

    // Inspecting needs no trust and reports signatures as unchecked.
    let seen = Verifier::inspector().verify(out.as_slice()).unwrap();
    assert_eq!(seen.id, id);
    assert!(seen.signatures.iter().all(|(_, s)| *s == SignatureStatus::Unchecked));
}

#[test]
fn the_writer_refuses_to_sign_an_invalid_manifest() {
    let s = sample();
    let mut manifest: Manifest = serde_json::from_value(s.manifest.clone()).unwrap();
    manifest.runs[0].file_recall = Some(3.0);
    let err = BundleBuilder::new(manifest).write(&[&s.key], Vec::new()).unwrap_err();
    // The message says what failed; the rule broken is its cause, said once.
    assert_eq!(err.to_string(), "the bundle would be invalid");
    let cause = std::error::Error::source(&err).expect("the broken rule").to_string();
    assert!(cause.contains("file_recall 3 is outside [0, 1]"), "{cause}");
}

#[test]
fn a_file_that_changes_while_packing_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stdout.txt");
    std::fs::write(&path, "before").unwrap();
    let s = sample();
    let mut manifest: Manifest = serde_json::from_value(s.manifest.clone()).unwrap();
    manifest.artifacts.clear();
    manifest.runs.iter_mut().for_each(|r| r.artifacts.clear());
    let mut b = BundleBuilder::new(manifest);
    let d = b.add_file(&path, "text/plain").unwrap();
    let patch = b.add_bytes(b"--- a/x\n+++ b/x\n".to_vec(), "text/x-diff");
    b.manifest_mut().runs[0].artifacts.insert("stdout".into(), d.to_hex());
    for run in &mut b.manifest_mut().runs {
        run.artifacts.insert("patch".into(), patch.to_hex());
    }
    std::fs::write(&path, "after!").unwrap();
    assert!(matches!(b.write(&[&s.key], Vec::new()), Err(bundle::WriteError::Changed(_))));
}
