//! Helpers shared by the tests: a valid sample bundle, and ways to craft invalid ones
//! that the writer (rightly) refuses to produce.

use std::io::Write;
use std::path::PathBuf;

use bundle::{Digest, Envelope, SecretKey};
use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::{Value, json};

/// The repository's conformance vectors (`vectors/`, made by `examples/vectors.rs`).
pub fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vectors").canonicalize().unwrap()
}

/// The benchmark maintainers' folder (the spec, its own vectors, the paper's data): an
/// independent cross-check, never required. `REXBENCH_SHARED` names it (CI does, and
/// then it must be there); otherwise `../shared` beside the repository, if it is there.
pub fn shared_dir() -> Option<PathBuf> {
    let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    let dir = match std::env::var_os("REXBENCH_SHARED") {
        Some(named) => {
            let named = PathBuf::from(named);
            assert!(
                named.join("vectors/expected.json").is_file(),
                "REXBENCH_SHARED={}: no vectors there",
                named.display()
            );
            named
        }
        None if beside.join("vectors/expected.json").is_file() => beside,
        None => {
            eprintln!(
                "no ../shared beside the repository and no REXBENCH_SHARED: the cross-check is not run"
            );
            return None;
        }
    };
    Some(dir.canonicalize().unwrap())
}

pub const TASKS: [&str; 2] = ["cogs", "othello"];

pub struct Sample {
    pub key: SecretKey,
    pub manifest: Value,
    pub artifacts: Vec<(Digest, Vec<u8>)>,
}

/// A valid evaluated manifest with two runs and three artifacts.
pub fn sample() -> Sample {
    let patch = b"--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr = 0.1\n+lr = 0.01\n".to_vec();
    let stdout = b"PRED ACC : 0.4562857142857143 (9582/21000)\n".to_vec();
    let log = b"agent: editing train.py\n".to_vec();
    let artifacts: Vec<(Digest, Vec<u8>)> =
        [patch, stdout, log].into_iter().map(|b| (Digest::of(&b), b)).collect();
    let [p, s, l] = [0, 1, 2].map(|i| artifacts[i].0.to_hex());
    let manifest = json!({
        "schema": "rexbench.manifest/v1",
        "created_at": "2026-11-20T12:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "rexbench-runner", "version": "0.1.0"},
        "provenance": {"kind": "evaluated"},
        "agent": {"id": "openhands-claude-4-sonnet", "framework": "OpenHands", "model": "Claude 4 Sonnet",
                  "url": "https://example.org/agent"},
        "runs": [
            {"task": "cogs", "hint": "none", "attempt": 1, "outcome": "success", "file_recall": 0.5,
             "files_changed": ["src/train.py"], "duration_s": 372.0, "cost_usd": 5.21,
             "metrics": {"gen_accuracy": 0.4562857142857143},
             "artifacts": {"patch": p, "stdout": s, "agent_log": l}},
            {"task": "othello", "hint": "detailed", "attempt": 1, "outcome": "execution_failed",
             "error_type": "ValueError", "artifacts": {"patch": p}}
        ],
        "artifacts": {
            p: {"media_type": "text/x-diff", "size": artifacts[0].1.len()},
            s: {"media_type": "text/plain", "size": artifacts[1].1.len()},
            l: {"media_type": "text/plain", "size": artifacts[2].1.len()},
        }
    });
    Sample { key: SecretKey::generate(), manifest, artifacts }
}

impl Sample {
    pub fn bundle(&self) -> Vec<u8> {
        let members: Vec<(String, Vec<u8>)> =
            self.artifacts.iter().map(|(d, b)| (format!("artifacts/{d}"), b.clone())).collect();
        self.bundle_with(&serde_json::to_vec_pretty(&self.manifest).unwrap(), &members)
    }

    /// A bundle signed by this sample's key with any manifest bytes and members.
    pub fn bundle_with(&self, manifest: &[u8], members: &[(String, Vec<u8>)]) -> Vec<u8> {
        let envelope = Envelope::sign(manifest, &[&self.key]).to_bytes();
        let mut all = vec![("envelope.json".to_owned(), envelope)];
        all.extend(members.iter().cloned());
        gzip(&tar_of(&all))
    }

    pub fn members(&self) -> Vec<(String, Vec<u8>)> {
        self.artifacts.iter().map(|(d, b)| (format!("artifacts/{d}"), b.clone())).collect()
    }

    /// `manifest` with the findings of run 0 (given with their words, as the runner
    /// makes them) sealed as `rexbench pack` seals them (spec §4g), and the members
    /// with the x-findings artifact; `texts` may change the artifact before it is added.
    pub fn sealed(
        &self,
        mut manifest: Value,
        findings: Value,
        texts: impl FnOnce(&mut bundle::FindingsText),
    ) -> (Value, Vec<(String, Vec<u8>)>) {
        let plain: Vec<bundle::Finding> = serde_json::from_value(findings).unwrap();
        let mut i = 0u32;
        let (sealed, mut words) = bundle::seal(plain, || {
            i += 1;
            self.key.salt(&i.to_be_bytes())
        });
        texts(&mut words);
        let bytes = words.to_bytes();
        let digest = Digest::of(&bytes).to_hex();
        manifest["runs"][0]["findings"] = serde_json::to_value(&sealed).unwrap();
        manifest["runs"][0]["artifacts"][bundle::FINDINGS_ROLE] = json!(digest);
        manifest["artifacts"][&digest] =
            json!({"media_type": bundle::FINDINGS_MEDIA_TYPE, "size": bytes.len()});
        let mut members = self.members();
        members.push((format!("artifacts/{digest}"), bytes));
        (manifest, members)
    }

    pub fn verifier(&self) -> bundle::Verifier {
        bundle::Verifier::new(vec![self.key.public_key()], TASKS)
    }
}

/// A ustar header with any name, `..` and absolute paths included (which
/// `tar::Header::set_path` rightly refuses to write).
pub fn header(path: &str, size: u64, kind: tar::EntryType) -> tar::Header {
    let mut h = tar::Header::new_ustar();
    let name = &mut h.as_ustar_mut().unwrap().name;
    name[..path.len()].copy_from_slice(path.as_bytes());
    h.set_size(size);
    h.set_mode(0o644);
    h.set_entry_type(kind);
    h.set_cksum();
    h
}

/// A ustar archive of regular files, in the order given.
pub fn tar_of(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in members {
        b.append(&header(name, data.len() as u64, tar::EntryType::Regular), data.as_slice()).unwrap();
    }
    b.into_inner().unwrap()
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

pub fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes), &mut out).unwrap();
    out
}

/// The error code `bytes` is refused with; panics if it verifies.
pub fn code_of(verifier: &bundle::Verifier, bytes: &[u8]) -> &'static str {
    match verifier.verify(bytes) {
        Ok(v) => panic!("expected a refusal, but bundle {} verified", v.id),
        Err(e) => {
            assert!(!e.to_string().is_empty());
            e.code()
        }
    }
}
