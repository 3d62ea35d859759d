//! Keys are interchangeable with openssl's, both ways. These tests need the `openssl`
//! command and fail (not skip) without it: CI installs it.

use std::fs;
use std::path::Path;
use std::process::Command;

use bundle::{BundleBuilder, Manifest, PublicKey, SecretKey, Verifier, pae};

use crate::common::{TASKS, sample};

fn openssl(args: &[&str], dir: &Path) -> std::process::Output {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the `openssl` command is needed for these tests (Debian package `openssl`)");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn a_key_made_by_openssl_signs_a_bundle_that_verifies() {
    let dir = tempfile::tempdir().unwrap();
    openssl(&["genpkey", "-algorithm", "ed25519", "-out", "key.pem"], dir.path());
    openssl(&["pkey", "-in", "key.pem", "-pubout", "-out", "key.pub.pem"], dir.path());
    let secret = SecretKey::from_pem(&fs::read_to_string(dir.path().join("key.pem")).unwrap()).unwrap();
    let public = PublicKey::from_pem(&fs::read_to_string(dir.path().join("key.pub.pem")).unwrap()).unwrap();

    let s = sample();
    let manifest: Manifest = serde_json::from_value(s.manifest.clone()).unwrap();
    let mut b = BundleBuilder::new(Manifest { artifacts: Default::default(), ..manifest });
    for (_, bytes) in &s.artifacts {
        b.add_bytes(bytes.clone(), "text/plain");
    }
    let mut out = Vec::new();
    b.write(&[&secret], &mut out).unwrap();
    let v = Verifier::new(vec![public.clone()], TASKS).verify(out.as_slice()).unwrap();
    assert_eq!(v.signatures[0].0, public.keyid().to_hex());
}

#[test]
fn openssl_reads_our_keys_and_checks_our_signatures() {
    let dir = tempfile::tempdir().unwrap();
    let key = SecretKey::generate();
    fs::write(dir.path().join("ours.pem"), key.to_pem()).unwrap();
    let derived = openssl(&["pkey", "-in", "ours.pem", "-pubout"], dir.path());
    assert_eq!(String::from_utf8(derived.stdout).unwrap(), key.public_key().to_pem());

    fs::write(dir.path().join("ours.pub.pem"), key.public_key().to_pem()).unwrap();
    let message = pae(bundle::PAYLOAD_TYPE, b"{\"manifest\": true}");
    fs::write(dir.path().join("pae.bin"), &message).unwrap();
    fs::write(dir.path().join("sig.bin"), key.sign(&message)).unwrap();
    openssl(
        &[
            "pkeyutl",
            "-verify",
            "-pubin",
            "-inkey",
            "ours.pub.pem",
            "-rawin",
            "-in",
            "pae.bin",
            "-sigfile",
            "sig.bin",
        ],
        dir.path(),
    );
}
