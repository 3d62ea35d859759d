//! Signed evidence anyone can check: the key registry, each submission's envelope byte
//! for byte as received (verified here by an independent DSSE implementation, Python's
//! securesystemslib), and `rexbench audit`, which tells when a stored number no longer
//! matches what was signed.

use std::fs;
use std::io::Read as _;

use bundle::SecretKey;
use serde_json::Value;
use sqlx::Connection as _;
use store::testing::for_each_backend;
use store::{Backend, Tier};

use crate::api::signed;
use crate::harness::{Answer, get, post_bundle, python, repo, state};

/// The first member of a bundle: its envelope, as the submitter's runner wrote it.
fn envelope_of(bundle: &[u8]) -> Vec<u8> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bundle));
    let mut first = archive.entries().unwrap().next().unwrap().unwrap();
    let mut bytes = Vec::new();
    first.read_to_end(&mut bytes).unwrap();
    bytes
}

/// securesystemslib's verdict on `envelope` with the PEM key `keyid` names.
fn independent_verdict(envelope: &[u8], pem: &str, keyid: &str) -> (bool, Value) {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("envelope.json"), envelope).unwrap();
    fs::write(dir.path().join("key.pem"), pem).unwrap();
    let out = std::process::Command::new(python())
        .arg(repo().join("server/tests/python/dsse_check.py"))
        .arg(dir.path().join("envelope.json"))
        .arg(dir.path().join("key.pem"))
        .arg(keyid)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "dsse_check.py: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.success(), report)
}

fn key_pem(keys: &Answer, keyid: &str) -> String {
    let keys = keys.json();
    let key =
        keys["keys"].as_array().unwrap().iter().find(|k| k["keyid"] == keyid).expect("the signer is listed");
    key["public_key"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn served_envelopes_verify_with_an_independent_dsse_implementation() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        crate::harness::seed_demo(&state).await;
        let key = SecretKey::generate();
        state.store.add_key(&key.public_key(), "Evidence team", Tier::Submitter).await.unwrap();
        let app = server::build_app(state);
        let bundle = signed(&key, "evidence-agent", "2026-11-20T12:00:00Z");
        let stored = post_bundle(&app, bundle.clone()).await.json();
        let bundle_id = stored["bundle_id"].as_str().unwrap().to_owned();

        // Exactly as received.
        let link = stored["links"]["envelope"].as_str().unwrap().to_owned();
        assert_eq!(link, format!("/api/v1/submissions/{bundle_id}/envelope"));
        let envelope = get(&app, &link).await;
        assert_eq!(envelope.header(axum::http::header::CONTENT_TYPE), "application/json");
        assert_eq!(envelope.body, envelope_of(&bundle), "the envelope is served byte for byte");

        // Verified by another implementation with the key the registry publishes.
        let keys = get(&app, "/api/v1/keys").await;
        let keyid = key.public_key().keyid().to_hex();
        let (ok, report) = independent_verdict(&envelope.body, &key_pem(&keys, &keyid), &keyid);
        assert!(ok, "{report}");
        assert_eq!(report["payload_sha256"], bundle_id.as_str(), "the bundle id is the payload's SHA-256");

        // A demo submission signed by the maintainers' key, as listed on the agent's page.
        let agent = get(&app, "/api/v1/agents/openhands-claude-4.5-opus").await.json();
        let submission = &agent["submissions"][0];
        let (bundle_id, keyid) =
            (submission["bundle_id"].as_str().unwrap(), submission["keyid"].as_str().unwrap());
        let envelope = get(&app, &format!("/api/v1/submissions/{bundle_id}/envelope")).await.body;
        let (ok, report) = independent_verdict(&envelope, &key_pem(&keys, keyid), keyid);
        assert!(ok, "{report}");

        // One changed character of the payload, and it no longer verifies.
        let mut tampered: Value = serde_json::from_slice(&envelope).unwrap();
        let payload = tampered["payload"].as_str().unwrap().to_owned();
        let flipped = if payload.starts_with('e') { "f" } else { "e" };
        tampered["payload"] = Value::String(format!("{flipped}{}", &payload[1..]));
        let (ok, report) =
            independent_verdict(&serde_json::to_vec(&tampered).unwrap(), &key_pem(&keys, keyid), keyid);
        assert!(!ok, "a tampered envelope verified: {report}");

        // The pages show the same: every key with its PEM, every submission's envelope.
        let page = String::from_utf8(get(&app, "/keys").await.body).unwrap();
        assert!(page.contains(&format!("id=\"key-{keyid}\"")), "{page}");
        assert!(page.contains("-----BEGIN PUBLIC KEY-----"));
        assert!(page.contains("RExBench maintainers (demo key)"));
        let page = String::from_utf8(get(&app, "/agents/openhands-claude-4.5-opus").await.body).unwrap();
        assert!(page.contains(&format!("href=\"/api/v1/submissions/{bundle_id}/envelope\"")), "{page}");
        assert!(page.contains(&format!("href=\"/keys#key-{keyid}\"")));
    })
    .await;
}

/// Runs SQL against the test's database directly, as someone with access to it could.
pub(crate) async fn tamper(backend: &Backend, sql: &str) {
    match backend {
        Backend::Sqlite { path } => {
            let mut db =
                sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display())).await.unwrap();
            sqlx::query(sql).execute(&mut db).await.unwrap();
        }
        Backend::Postgres { url } => {
            let mut db = sqlx::PgConnection::connect(url).await.unwrap();
            sqlx::query(sql).execute(&mut db).await.unwrap();
        }
    }
}

/// `rexbench audit` against a real server on 127.0.0.1 (a new process's view: nothing
/// cached), before and after its data is changed behind its back.
async fn audit(backend: &Backend, blobs: &std::path::Path, agent: &'static str) -> runner::audit::Audit {
    audit_as(backend, blobs, agent, None).await
}

/// The same, with a token that reaches private outputs.
async fn audit_as(
    backend: &Backend,
    blobs: &std::path::Path,
    agent: &'static str,
    token: Option<&'static str>,
) -> runner::audit::Audit {
    let app = server::build_app(state(backend, blobs).await);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(axum::serve(listener, app).into_future());
    let audit = tokio::task::spawn_blocking(move || runner::audit::audit(&url, agent, &[], token).unwrap())
        .await
        .unwrap();
    server.abort();
    audit
}

#[tokio::test]
async fn audit_verifies_an_agent_and_catches_a_changed_row_or_artifact() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        crate::harness::seed_demo(&state).await;
        // Every artifact the example agent's runs name, each fetched and hashed once; its
        // csvstats runs' outputs are private.
        let (bundle, _) = state.store.agent("example-agent").await.unwrap().unwrap().newest_current().map(|(b, g)| (b.to_owned(), g.clone())).unwrap();
        let (mut named, mut public) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for run in state.store.runs_of(&bundle, None, None).await.unwrap() {
            let run = state.store.run(run.id).await.unwrap().unwrap();
            let digests = run.artifacts.into_iter().map(|a| a.digest);
            if run.task != "csvstats" { public.extend(digests.clone()) }
            named.extend(digests);
        }
        // A blob a public run refers to is public, whichever other runs refer to it.
        let private: std::collections::BTreeSet<&String> = named.difference(&public).collect();
        drop(state);

        // The example agent: evaluated runs with patches and logs; a published one; and
        // one whose source tells only successes (no execution success is shown).
        for agent in ["example-agent", "openhands-claude-4.5-opus", "openhands-1.4.0-claude-sonnet-4.5-harbor"] {
            let clean = audit(&backend, &blobs, agent).await;
            assert!(clean.passed(), "{clean}");
        }
        let clean = audit(&backend, &blobs, "example-agent").await;
        let artifacts = format!(
            "ok      artifacts: all {} served to you hash to their digests; {} more are private outputs",
            named.len() - private.len(),
            private.len()
        );
        assert!(named.len() > 10 && !private.is_empty() && clean.to_string().contains(&artifacts), "{clean}");
        // A maintainer's audit hashes the private ones too.
        let whole = audit_as(&backend, &blobs, "example-agent", Some("s3cret-token")).await;
        let artifacts = format!("ok      artifacts: all {} the runs name are served with their digests", named.len());
        assert!(whole.passed() && whole.to_string().contains(&artifacts), "{whole}");

        // One success more in one cell, behind the server's back.
        let bundle = clean.bundle_id.clone();
        tamper(
            &backend,
            &format!(
                "UPDATE aggregates SET successes = successes + 1 WHERE bundle_id = '{bundle}' AND task = 'wordfreq' AND hint = 'none'"
            ),
        )
        .await;
        let caught = audit(&backend, &blobs, "example-agent").await;
        assert!(!caught.passed(), "{caught}");
        let text = caught.to_string();
        assert!(text.contains("FAILED  per task: wordfreq / No hints: successes"), "{text}");
        // pass@k and pass^k, computed from the changed counts, no longer follow the manifest.
        assert!(text.contains("FAILED  coverage and reliability: No hints: pass@k or pass^k differ"), "{text}");
        assert!(text.contains("NOT VERIFIED: 2 check(s) failed"), "{text}");

        // The leaderboard's totals too.
        tamper(&backend, &format!("UPDATE totals SET counted = counted - 1 WHERE bundle_id = '{bundle}' AND hint = 'hints'")).await;
        let caught = audit(&backend, &blobs, "example-agent").await;
        assert!(caught.to_string().contains("FAILED  leaderboard: Hints: counted runs"), "{caught}");

        // And what the runs cost.
        tamper(&backend, &format!("UPDATE totals SET cost_sum = cost_sum + 1 WHERE bundle_id = '{bundle}' AND hint = 'none'")).await;
        let caught = audit(&backend, &blobs, "example-agent").await;
        assert!(caught.to_string().contains("FAILED  leaderboard: No hints: mean cost per run"), "{caught}");
    })
    .await;
}

/// A stored artifact whose bytes changed on disk is named.
/// The audit holds the findings and the flagged counts to the signed manifest: every
/// signed finding shown as the submitter's, the flagged successes counted as the findings
/// shown say, as reported and in the strict view.
#[tokio::test]
async fn audit_checks_the_findings_and_the_flagged_counts() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        crate::harness::seed_demo(&state).await;
        drop(state);
        let clean = audit(&backend, &blobs, "shortcut-agent").await;
        assert!(clean.passed(), "{clean}");
        let text = clean.to_string();
        assert!(text.contains("ok      findings: all 1 the manifest signs are shown"), "{text}");
        assert!(text.contains("ok      flagged: 1 successes with a finding not dismissed"), "{text}");

        // The flag taken off the leaderboard's totals, behind the server's back.
        let bundle = clean.bundle_id.clone();
        tamper(&backend, &format!("UPDATE totals SET flagged = 0 WHERE bundle_id = '{bundle}'")).await;
        let caught = audit(&backend, &blobs, "shortcut-agent").await;
        let text = caught.to_string();
        assert!(
            text.contains("FAILED  flagged: as reported, No hints: 0 flagged, the findings shown give 1"),
            "{text}"
        );
        assert!(text.contains("strict, No hints: successes 2, the signed manifest gives 1"), "{text}");

        // The submitter's finding hidden.
        tamper(&backend, "DELETE FROM findings WHERE found_by = 'submitter'").await;
        let caught = audit(&backend, &blobs, "shortcut-agent").await;
        assert!(
            caught.to_string().contains("FAILED  findings: the runs wordfreq/none/2 show other findings"),
            "{caught}"
        );
    })
    .await;
}

#[tokio::test]
async fn audit_names_an_artifact_whose_bytes_changed() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let blobs = dir.path().join("blobs");
    let state = state(&backend, &blobs).await;
    crate::harness::seed_demo(&state).await;
    let agent = state.store.agent("example-agent").await.unwrap().unwrap();
    let (bundle, _) = agent.newest_current().unwrap();
    let mut digests = std::collections::BTreeMap::new();
    for run in state.store.runs_of(bundle, None, None).await.unwrap() {
        let run = state.store.run(run.id).await.unwrap().unwrap();
        digests.entry(run.task.to_string()).or_insert_with(|| run.artifacts[0].digest.clone());
    }
    drop(state);
    // A public output (wordfreq's) is caught by anyone's audit; a private one
    // (csvstats') by a maintainer's.
    for (task, token) in [("wordfreq", None), ("csvstats", Some("s3cret-token"))] {
        let digest = &digests[task];
        let path = walk(&blobs).into_iter().find(|p| p.ends_with(digest)).expect("the blob's file");
        // The same length (the server sends the stored size), other bytes.
        let mut bytes = fs::read(&path).unwrap();
        bytes[0] ^= 0x20;
        fs::write(&path, bytes).unwrap();
        let caught = audit_as(&backend, &blobs, "example-agent", token).await;
        assert!(!caught.passed(), "{task}");
        assert!(
            caught.to_string().contains(&format!("{digest} is served as bytes that hash to")),
            "{caught}"
        );
    }
}

/// Every file under `dir`.
pub fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}
