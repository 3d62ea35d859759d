//! Bundles to ingest, and the ingest path the server takes.

use bundle::{BundleBuilder, Hint, Manifest, Outcome, SecretKey};
use serde_json::json;
use store::Store;
pub use store::testing::{blob_bytes, count_blobs, count_files, on_each_backend};

/// A signed bundle for `agent`: `runs` runs of `cogs` with no hints, the first `ok`
/// of them successful, one patch artifact each.
pub fn bundle(key: &SecretKey, agent: &str, created_at: &str, runs: u32, ok: u32) -> Vec<u8> {
    bundle_with(key, agent, created_at, runs, ok, |_| {})
}

/// [`bundle`], with its manifest changed by `edit` once its runs are in it.
pub fn bundle_with(
    key: &SecretKey,
    agent: &str,
    created_at: &str,
    runs: u32,
    ok: u32,
    edit: impl FnOnce(&mut Manifest),
) -> Vec<u8> {
    let endings =
        (1..=runs).map(|attempt| (if attempt <= ok { Outcome::Success } else { Outcome::WrongResult }, None));
    bundle_ending(key, agent, created_at, &endings.collect::<Vec<_>>(), edit)
}

/// A signed bundle for `agent` whose runs of `cogs` with no hints end as `endings`
/// say (outcome, error type), one per attempt; its manifest then changed by `edit`.
pub fn bundle_ending(
    key: &SecretKey,
    agent: &str,
    created_at: &str,
    endings: &[(Outcome, Option<&str>)],
    edit: impl FnOnce(&mut Manifest),
) -> Vec<u8> {
    let manifest: Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1",
        "created_at": created_at,
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "rexbench-runner", "version": "0.1.0"},
        "provenance": {"kind": "evaluated"},
        "agent": {"id": agent, "framework": "OpenHands", "model": "Claude 4 Sonnet"},
        "runs": [],
    }))
    .unwrap();
    let mut b = BundleBuilder::new(manifest);
    for (attempt, (outcome, error_type)) in (1..).zip(endings) {
        let patch = b
            .add_bytes(format!("--- a/x.py\n+++ b/x.py\n@@ attempt {attempt}\n").into_bytes(), "text/x-diff");
        let log = b.add_bytes(b"shared log\n".to_vec(), "text/plain");
        b.manifest_mut().runs.push(bundle::Run {
            task: "cogs".into(),
            hint: Hint::None,
            attempt,
            outcome: *outcome,
            error_type: error_type.map(str::to_owned),
            file_recall: Some(0.5),
            files_changed: Some(vec!["x.py".into()]),
            duration_s: Some(1.5),
            cost_usd: None,
            tokens: None,
            task_folder: None,
            metrics: [("acc".to_owned(), 0.25)].into(),
            metrics_digest: None,
            artifacts: [("patch".to_owned(), patch.to_hex()), ("agent_log".to_owned(), log.to_hex())].into(),
            findings: Vec::new(),
            regraded: None,
        });
    }
    edit(b.manifest_mut());
    b.seal_findings(key);
    let mut out = Vec::new();
    b.write(&[key], &mut out).unwrap();
    out
}

/// Verifies `bytes` against the store's registry and ingests it, as the server does.
pub async fn submit(store: &Store, bytes: &[u8]) -> Result<store::Ingested, store::StoreError> {
    let keys: Vec<_> = store.trusted_keys().await.unwrap().into_iter().map(|(k, _)| k).collect();
    let verifier = bundle::Verifier::new(keys, bundle::REXBENCH_TASKS);
    let mut staging = store.blobs().stage();
    let verified = verifier.verify_into(bytes, &mut staging).expect("a valid bundle");
    store.ingest(&verified, staging, &Default::default()).await
}
