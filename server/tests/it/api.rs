//! The ingest endpoint and the read API, on both databases.

use std::fs;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use bundle::{PublicKey, SecretKey};
use serde_json::{Value, json};
use store::Tier;
use store::testing::{count_files, for_each_backend};

use crate::harness::{get, post_bundle, send, state, vectors};

/// Status and code each of the spec's own conformance vectors (`../shared/vectors`)
/// gets from the endpoint.
///
/// The board holds a bundle's claims to its rules (spec §5a), which the base format's
/// vectors were not made for: their task set registered, the valid ones' successes carry
/// only a patch and the experiment's output, not the agent's own record, and are refused
/// for it (`the_conformance_vectors_through_http` stores our own, which carry one).
pub const SHARED_VECTORS: [(&str, u16, &str); 15] = [
    ("valid-basic.tar.gz", 422, "agent_record_missing"),
    ("valid-two-signers.tar.gz", 422, "agent_record_missing"),
    // A paper's numbers are the maintainers' to sign (spec §5a); the vectors' key is a
    // submitter's here (`published_from_a_maintainer_key_only` signs it as a maintainer).
    ("valid-published.tar.gz", 403, "provenance_not_maintainer"),
    ("bad-unknown-signer.tar.gz", 401, "no_trusted_signature"),
    ("bad-signature.tar.gz", 401, "signature_invalid"),
    ("bad-payload-type.tar.gz", 422, "payload_type_mismatch"),
    ("bad-artifact-digest.tar.gz", 422, "artifact_digest_mismatch"),
    ("bad-missing-artifact.tar.gz", 422, "artifact_missing"),
    ("bad-envelope-not-first.tar.gz", 400, "envelope_not_first"),
    ("bad-unknown-field.tar.gz", 422, "unknown_field"),
    ("bad-duplicate-run.tar.gz", 422, "duplicate_run"),
    ("bad-hint.tar.gz", 422, "invalid_hint"),
    ("bad-recall.tar.gz", 422, "invalid_file_recall"),
    ("bad-traversal.tar.gz", 400, "unsafe_path"),
    ("bad-not-gzip.tar.gz", 400, "not_gzip"),
];

/// The status a refusal with `code` gets: the class of the rule it breaks.
pub fn status_of(code: &str) -> u16 {
    match code {
        "manifest_too_large" | "envelope_too_large" | "artifact_too_large" | "unaccounted_data" => 413,
        "not_gzip" | "corrupt_archive" | "envelope_missing" | "envelope_not_first" | "unsafe_path"
        | "non_regular_member" | "unexpected_member" | "duplicate_member" => 400,
        "no_trusted_signature" | "signature_invalid" => 401,
        _ => 422,
    }
}

/// The repository's vectors (one per rule), each with its status and code.
pub fn repository_vectors() -> Vec<(String, u16, String)> {
    let expected: serde_json::Map<String, Value> =
        serde_json::from_slice(&fs::read(vectors().join("expected.json")).unwrap()).unwrap();
    expected
        .into_iter()
        .map(|(name, e)| match e["code"].as_str() {
            Some(code) => (name, status_of(code), code.to_owned()),
            // A valid reproduction the server refuses all the same: the vectors' key is a
            // submitter's, and only a maintainer re-runs a sample (spec §4d).
            None if name.contains("reproduction") => (name, 403, "reproduction_not_maintainer".to_owned()),
            // A paper's numbers likewise (spec §5a).
            None if name.contains("published") => (name, 403, "provenance_not_maintainer".to_owned()),
            // The same manifest again (two signers, one of them unknown) is the same bundle.
            None => {
                let status = if name.contains("two-signers") { 200 } else { 201 };
                (name, status, String::new())
            }
        })
        .collect()
}

/// Posts each vector of `dir` and holds each answer to `expected`.
async fn post_vectors(
    dir: &std::path::Path,
    expected: &[(String, u16, String)],
    backend: store::Backend,
    blobs: std::path::PathBuf,
) {
    let state = state(&backend, &blobs).await;
    // The base vectors' task set, registered as a board's maintainers would.
    let zeros = bundle::TaskSet { digest: "0".repeat(64), name: "RExBench".into(), version: "1.0".into() };
    state.store.register_task_set(&zeros, "the base format's conformance vectors").await.unwrap();
    let key = PublicKey::from_pem(&fs::read_to_string(dir.join("test-key/key.pub.pem")).unwrap()).unwrap();
    state.store.add_key(&key, "conformance", Tier::Submitter).await.unwrap();
    let app = server::build_app(state);
    let listed: serde_json::Map<String, Value> =
        serde_json::from_slice(&fs::read(dir.join("expected.json")).unwrap()).unwrap();
    assert_eq!(listed.len(), expected.len(), "a vector without an expected status");
    let mut accepted = 0;
    for (name, status, code) in expected {
        let answer = post_bundle(&app, fs::read(dir.join(name)).unwrap()).await;
        assert_eq!(answer.status.as_u16(), *status, "{name}: {}", String::from_utf8_lossy(&answer.body));
        if *status == 201 {
            accepted += 1;
            assert_eq!(answer.json()["status"], json!("stored"));
            if let Some(id) = listed[name].get("bundle_id") {
                assert_eq!(&answer.json()["bundle_id"], id, "{name}");
            }
            // The marks the bundle alone gives its runs, as the vector states them.
            assert!(
                answer.json()["marks"].is_array(),
                "{name}: a stored submission's answer lists its marks"
            );
            if let Some(marks) = listed[name].get("marks") {
                assert_eq!(&answer.json()["marks"], marks, "{name}'s marks");
            }
            // The same bundle again: 200, and nothing changes.
            let again = post_bundle(&app, fs::read(dir.join(name)).unwrap()).await;
            assert_eq!(again.status, StatusCode::OK, "{name}");
            assert_eq!(again.json().get("marks"), None, "{name}: marks are told once, on 201");
            assert_eq!(again.json()["status"], json!("already_stored"));
            assert_eq!(again.json()["bundle_id"], answer.json()["bundle_id"]);
        } else if *status == 200 {
            assert_eq!(answer.json()["status"], json!("already_stored"), "{name}");
        } else {
            assert_eq!(&answer.code(), code, "{name}");
            assert!(!answer.json()["error"]["message"].as_str().unwrap().is_empty());
        }
    }
    let changes = get(&app, "/api/v1/changes?limit=100").await.json();
    let accepted_events =
        changes["changes"].as_array().unwrap().iter().filter(|c| c["kind"] == "accepted").count();
    assert_eq!(accepted_events, accepted, "only the valid bundles left a trace");
    assert_eq!(count_files(&blobs.join("tmp")), 0, "no staged blob left behind");
}

#[tokio::test]
async fn the_conformance_vectors_through_http() {
    let expected = repository_vectors();
    assert!(expected.len() > 50, "one vector per rule");
    for_each_backend(|backend, blobs| {
        let expected = expected.clone();
        async move { post_vectors(&vectors(), &expected, backend, blobs).await }
    })
    .await;
}

#[tokio::test]
async fn the_spec_s_own_vectors_through_http() {
    let Some(shared) = crate::harness::shared() else { return };
    let expected: Vec<(String, u16, String)> =
        SHARED_VECTORS.iter().map(|(n, s, c)| ((*n).to_owned(), *s, (*c).to_owned())).collect();
    for_each_backend(|backend, blobs| {
        let (expected, dir) = (expected.clone(), shared.join("vectors"));
        async move { post_vectors(&dir, &expected, backend, blobs).await }
    })
    .await;
}

#[tokio::test]
async fn wrong_content_types_and_oversized_bodies_are_refused() {
    for_each_backend(|backend, blobs| async move {
        let mut state = state(&backend, &blobs).await;
        state.limits.compressed = 1000;
        let app = server::build_app(state);
        let bytes = fs::read(vectors().join("valid-basic.tar.gz")).unwrap();
        let request = Request::post("/api/v1/submissions")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(bytes.clone()))
            .unwrap();
        let answer = send(&app, request).await;
        assert_eq!(
            (answer.status, answer.code().as_str()),
            (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
        );
        let answer = post_bundle(&app, bytes.clone()).await;
        assert_eq!(
            (answer.status, answer.code().as_str()),
            (StatusCode::PAYLOAD_TOO_LARGE, "bundle_too_large")
        );
        // Without a Content-Length the limit holds while the body streams in.
        let chunks = bytes.chunks(100).map(|c| Ok::<_, std::io::Error>(c.to_vec())).collect::<Vec<_>>();
        let request = Request::post("/api/v1/submissions")
            .header(header::CONTENT_TYPE, "application/gzip")
            .body(Body::from_stream(futures::stream::iter(chunks)))
            .unwrap();
        let answer = send(&app, request).await;
        assert_eq!(
            (answer.status, answer.code().as_str()),
            (StatusCode::PAYLOAD_TOO_LARGE, "bundle_too_large")
        );
    })
    .await;
}

pub fn signed(key: &SecretKey, agent: &str, created_at: &str) -> Vec<u8> {
    let manifest: bundle::Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": created_at,
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "t", "version": "1"}, "provenance": {"kind": "evaluated"},
        "agent": {"id": agent, "framework": "F <b>", "model": "M"},
        "runs": [{"task": "othello", "hint": "hints", "attempt": 1, "outcome": "success"}],
    }))
    .unwrap();
    let mut b = bundle::BundleBuilder::new(manifest);
    let log = b.add_bytes(b"<script>alert(1)</script>\n".to_vec(), "text/html");
    b.manifest_mut().runs[0].artifacts.insert("stdout".into(), log.to_hex());
    crate::harness::with_patches(&mut b);
    let mut out = Vec::new();
    b.write(&[key], &mut out).unwrap();
    out
}

#[tokio::test]
async fn ownership_and_revocation_are_enforced() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let (a, b) = (SecretKey::generate(), SecretKey::generate());
        state.store.add_key(&a.public_key(), "A", Tier::Submitter).await.unwrap();
        state.store.add_key(&b.public_key(), "B", Tier::Submitter).await.unwrap();
        let store_keys = state.store.keys().await.unwrap();
        let app = server::build_app(state);
        assert_eq!(
            post_bundle(&app, signed(&a, "agent-a", "2026-01-01T00:00:00Z")).await.status,
            StatusCode::CREATED
        );
        let answer = post_bundle(&app, signed(&b, "agent-a", "2026-02-01T00:00:00Z")).await;
        assert_eq!(
            (answer.status, answer.code().as_str()),
            (StatusCode::FORBIDDEN, "agent_owned_by_other_key")
        );

        let b_id = store_keys.iter().find(|k| k.owner == "B").unwrap().keyid.clone();
        let store = store::Store::open(&backend, &blobs).await.unwrap();
        store.revoke_key(&b_id).await.unwrap();
        let answer = post_bundle(&app, signed(&b, "agent-b", "2026-02-01T00:00:00Z")).await;
        assert_eq!((answer.status, answer.code().as_str()), (StatusCode::UNAUTHORIZED, "key_revoked"));
        assert!(answer.json()["error"]["message"].as_str().unwrap().contains("was revoked at"));
    })
    .await;
}

#[tokio::test]
async fn the_read_api_and_artifacts() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let key = SecretKey::generate();
        state.store.add_key(&key.public_key(), "A", Tier::Maintainer).await.unwrap();
        let app = server::build_app(state);
        let stored = post_bundle(&app, signed(&key, "agent-a", "2026-01-01T00:00:00Z")).await.json();
        assert_eq!(stored["links"]["agent"], json!("/agents/agent-a"));

        let board = get(&app, "/api/v1/leaderboard").await.json();
        assert_eq!(board["rows"][0]["agent_id"], json!("agent-a"));
        assert_eq!(board["rows"][0]["tier"], json!("maintainer"));
        assert_eq!(board["rows"][0]["by_hint"]["hints"]["final_success"], json!(1.0));
        // Keyed by hint condition (issue 15's contract), not by position. With no run
        // without hints it covers none of its set's tasks there: described, not ranked.
        assert_eq!(board["rows"][0]["ranked"], json!(false));
        assert_eq!(board["rows"][0]["stats"]["rank"], Value::Null);
        assert_eq!(
            board["rows"][0]["stats"]["final_success"]["hints"],
            json!({"estimate": 1.0, "low": 1.0, "high": 1.0})
        );
        assert_eq!(board["rows"][0]["stats"]["final_success"]["none"], json!(null), "no runs without hints");
        assert_eq!(get(&app, "/api/v1/leaderboard?tier=submitter").await.json()["rows"], json!([]));
        assert_eq!(
            get(&app, "/api/v1/leaderboard?framework=F%20%3Cb%3E&tier=").await.json()["rows"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        // A filter that names no tier or provenance is refused, saying which and why.
        for (url, parameter) in
            [("/api/v1/leaderboard?tier=gold", "tier"), ("/leaderboard.csv?provenance=guessed", "provenance")]
        {
            let refused = get(&app, url).await;
            assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{url}");
            let error = &refused.json()["error"];
            assert_eq!(error["code"], json!("invalid_query"), "{url}");
            assert!(error["message"].as_str().unwrap().contains(&format!("`{parameter}`")), "{error}");
        }

        let csv = get(&app, "/leaderboard.csv").await;
        assert_eq!(csv.header(header::CONTENT_TYPE), "text/csv; charset=utf-8");
        let text = String::from_utf8(csv.body).unwrap();
        assert!(text.starts_with("agent_id,display_name,framework,"));
        assert!(
            text.contains("agent-a,F <b> + M,F <b>,M,maintainer,evaluated,rexbench,1,false,1,RExBench,1.0,"),
            "{text}"
        );

        let agent = get(&app, "/api/v1/agents/agent-a").await.json();
        assert_eq!(agent["submissions"].as_array().unwrap().len(), 1);
        let missing = get(&app, "/api/v1/agents/nobody").await;
        assert_eq!((missing.status, missing.code().as_str()), (StatusCode::NOT_FOUND, "not_found"));

        let tasks = get(&app, "/api/v1/tasks").await.json();
        let othello =
            tasks["tasks"].as_array().unwrap().iter().find(|t| t["id"] == "othello").unwrap().clone();
        assert_eq!(othello["name"], json!("Othello"));
        assert_eq!(othello["results"]["agents"], json!(1));
        assert_eq!(
            get(&app, "/api/v1/tasks/othello").await.json()["agents"][0]["agent_id"],
            json!("agent-a")
        );
        assert_eq!(get(&app, "/api/v1/tasks/nope").await.status, StatusCode::NOT_FOUND);

        let bundle_id = stored["bundle_id"].as_str().unwrap();
        let store = store::Store::open(&backend, &blobs).await.unwrap();
        let run_id = store.runs_of(bundle_id, None, None).await.unwrap()[0].id;
        let run = get(&app, &format!("/api/v1/runs/{run_id}")).await.json();
        assert_eq!(run["outcome"], json!("success"));
        assert_eq!(get(&app, "/api/v1/runs/abc").await.status, StatusCode::NOT_FOUND);
        assert_eq!(get(&app, "/api/v1/runs/424242").await.status, StatusCode::NOT_FOUND);

        // An artifact is served as plain text whatever its media type, never sniffed
        // (othello's outputs are private: to a maintainer).
        let stdout = run["artifacts"].as_array().unwrap().iter().find(|a| a["role"] == "stdout").unwrap();
        let digest = stdout["digest"].as_str().unwrap();
        assert_eq!(get(&app, &format!("/artifacts/{digest}")).await.status, StatusCode::UNAUTHORIZED);
        let request = axum::http::Request::get(format!("/artifacts/{digest}"))
            .header(header::AUTHORIZATION, "Bearer s3cret-token")
            .body(axum::body::Body::empty())
            .unwrap();
        let blob = crate::harness::send(&app, request).await;
        assert_eq!(blob.status, StatusCode::OK);
        assert_eq!(blob.header(header::CONTENT_TYPE), "text/plain; charset=utf-8");
        assert_eq!(blob.header(header::X_CONTENT_TYPE_OPTIONS), "nosniff");
        assert_eq!(blob.body, b"<script>alert(1)</script>\n");
        assert_eq!(get(&app, &format!("/artifacts/{}", "0".repeat(64))).await.status, StatusCode::NOT_FOUND);
        assert_eq!(get(&app, "/artifacts/..%2F..%2Fetc%2Fpasswd").await.status, StatusCode::NOT_FOUND);

        assert_eq!(get(&app, "/readyz").await.status, StatusCode::OK);
        let unknown = get(&app, "/api/v1/nothing").await;
        assert_eq!((unknown.status, unknown.code().as_str()), (StatusCode::NOT_FOUND, "not_found"));
    })
    .await;
}

fn admin(method: &str, path: &str, token: Option<&str>, body: Option<Value>) -> Request<Body> {
    let mut r = Request::builder().method(method).uri(path).header(header::CONTENT_TYPE, "application/json");
    if let Some(t) = token {
        r = r.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    r.body(body.map(|b| Body::from(b.to_string())).unwrap_or_default()).unwrap()
}

#[tokio::test]
async fn admin_over_http_needs_the_token_and_is_off_without_one() {
    for_each_backend(|backend, blobs| async move {
        let app = server::build_app(state(&backend, &blobs).await);
        let key = SecretKey::generate().public_key();
        let new = json!({"public_key": key.to_pem(), "owner": "Team A", "tier": "submitter"});
        let answer = send(&app, admin("POST", "/api/v1/admin/keys", None, Some(new.clone()))).await;
        assert_eq!((answer.status, answer.code().as_str()), (StatusCode::UNAUTHORIZED, "admin_unauthorized"));
        let answer =
            send(&app, admin("POST", "/api/v1/admin/keys", Some("s3cret-tokem"), Some(new.clone()))).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
        let answer =
            send(&app, admin("POST", "/api/v1/admin/keys", Some("s3cret-token"), Some(new.clone()))).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.json());
        assert_eq!(answer.json()["key"]["keyid"], json!(key.keyid().to_hex()));
        let again = send(&app, admin("POST", "/api/v1/admin/keys", Some("s3cret-token"), Some(new))).await;
        assert_eq!((again.status, again.code().as_str()), (StatusCode::CONFLICT, "key_exists"));
        let bad = json!({"public_key": "not a key", "owner": "x", "tier": "submitter"});
        let answer = send(&app, admin("POST", "/api/v1/admin/keys", Some("s3cret-token"), Some(bad))).await;
        assert_eq!(
            (answer.status, answer.code().as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, "invalid_public_key")
        );
        let bad = json!({"public_key": key.to_pem(), "owner": "x", "tier": "admin"});
        assert_eq!(
            send(&app, admin("POST", "/api/v1/admin/keys", Some("s3cret-token"), Some(bad))).await.code(),
            "invalid_tier"
        );

        let list = send(&app, admin("GET", "/api/v1/admin/keys", Some("s3cret-token"), None)).await.json();
        assert_eq!(list["keys"].as_array().unwrap().len(), 1);
        let path = format!("/api/v1/admin/keys/{}/revoke", key.keyid());
        let revoked = send(&app, admin("POST", &path, Some("s3cret-token"), None)).await.json();
        assert!(revoked["key"]["revoked_at"].is_string());
        let path = format!("/api/v1/admin/keys/{}/revoke", "0".repeat(64));
        assert_eq!(
            send(&app, admin("POST", &path, Some("s3cret-token"), None)).await.status,
            StatusCode::NOT_FOUND
        );

        let mut off = state(&backend, &blobs).await;
        off.admin_token = None;
        let app = server::build_app(off);
        let answer = send(&app, admin("GET", "/api/v1/admin/keys", Some("s3cret-token"), None)).await;
        assert_eq!((answer.status, answer.code().as_str()), (StatusCode::NOT_FOUND, "admin_disabled"));
    })
    .await;
}

#[tokio::test]
async fn metrics_count_requests_and_ingests() {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    let key =
        PublicKey::from_pem(&fs::read_to_string(vectors().join("test-key/key.pub.pem")).unwrap()).unwrap();
    state.store.add_key(&key, "conformance", Tier::Submitter).await.unwrap();
    let app = server::build_app(state);
    post_bundle(&app, fs::read(vectors().join("valid-basic.tar.gz")).unwrap()).await;
    post_bundle(&app, fs::read(vectors().join("valid-basic.tar.gz")).unwrap()).await;
    post_bundle(&app, fs::read(vectors().join("bad-hint.tar.gz")).unwrap()).await;
    get(&app, "/nope").await;
    // Where the server has an admin token, the counters are the maintainers' (a
    // reproduction's arrival and size show in them).
    let refused = get(&app, "/metrics").await;
    assert_eq!((refused.status, refused.code().as_str()), (StatusCode::UNAUTHORIZED, "admin_unauthorized"));
    let answer = crate::harness::get_as_maintainer(&app, "/metrics").await;
    assert_eq!(answer.header(header::CONTENT_TYPE), "text/plain; version=0.0.4; charset=utf-8");
    let text = String::from_utf8(answer.body).unwrap();
    for line in [
        "rexbench_ingests_total{result=\"stored\"} 1",
        "rexbench_ingests_total{result=\"already_stored\"} 1",
        "rexbench_ingests_total{result=\"refused\"} 1",
        "rexbench_ingest_duration_seconds_count 3",
        "rexbench_http_requests_total{status=\"2xx\"} 2",
        // The bad hint, the unknown page, and the refused read of the counters.
        "rexbench_http_requests_total{status=\"4xx\"} 3",
    ] {
        assert!(text.lines().any(|l| l == line), "missing `{line}` in\n{text}");
    }
}

/// `synth` goes through the ingest path and gives the same results for the same seed,
/// whether it records each bundle on its own (`--together 1`, as the API does) or several
/// in one transaction, flushed each time or as a bulk load (`--bulk`): every row of every
/// table the same, but for the times of arrival and the signing key (a new one each time).
#[tokio::test]
async fn synthetic_results_are_reproducible() {
    let mut boards = Vec::new();
    let mut tables = Vec::new();
    for (together, bulk) in [(1, false), (3, false), (3, true)] {
        let dir = tempfile::tempdir().unwrap();
        let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
        let state = state(&backend, &dir.path().join("blobs")).await;
        if bulk {
            state.store.bulk_load();
        }
        let stored = server::synth::synth(&state, 3, 7, together).await.unwrap();
        assert_eq!(stored, 3);
        if bulk {
            state.store.flush().await.unwrap();
        }
        tables.push(all_rows(&dir.path().join("db.sqlite")).await);
        let app = server::build_app(state);
        let board = get(&app, "/api/v1/leaderboard").await.json();
        let rows = board["rows"].as_array().unwrap().clone();
        assert_eq!(rows.len(), 3);
        for row in &rows {
            let runs: i64 = ["none", "hints", "detailed"]
                .iter()
                .map(|h| row["by_hint"][h]["runs"].as_i64().unwrap())
                .sum();
            assert_eq!(runs, 180);
        }
        let run = get(&app, "/api/v1/agents/synthetic-00000").await.json();
        assert_eq!(run["framework"], json!("OpenHands"));
        boards.push(rows.iter().map(|r| (r["bundle_id"].clone(), r["by_hint"].clone())).collect::<Vec<_>>());
    }
    assert_eq!(boards[0], boards[1], "the same seed, the same results");
    assert_eq!(boards[0], boards[2], "the same seed, the same results in a bulk load");
    let one = &tables[0];
    assert_eq!(one["runs"].len(), 3 * 180);
    for (other, how) in [(&tables[1], "three in one"), (&tables[2], "three in one, as a bulk load")] {
        assert_eq!(one.keys().collect::<Vec<_>>(), other.keys().collect::<Vec<_>>());
        for (table, rows) in one {
            assert_eq!(rows, &other[table], "table {table}: one transaction each, or {how}");
        }
    }
}

/// The API's leaderboard and a task's agents come a page at a time: the pages hold every
/// row once, in the order of the whole; a page or size out of range is refused, named.
/// A new submission, stored by another server process on the same database, is in the
/// next answer: the whole-board reads kept between changes start afresh when the change
/// log moves.
#[tokio::test]
async fn the_api_gives_the_leaderboard_and_a_task_a_page_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let writer = state(&backend, &dir.path().join("blobs")).await;
    server::synth::synth(&writer, 7, 7, 7).await.unwrap();
    let app = server::build_app(state(&backend, &dir.path().join("blobs")).await);
    for (path, list) in [("/api/v1/leaderboard", "rows"), ("/api/v1/tasks/cogs", "agents")] {
        let whole = get(&app, path).await.json();
        assert_eq!(
            (whole["page"].clone(), whole["per_page"].clone(), whole["total"].clone()),
            (json!(1), json!(100), json!(7))
        );
        let ids = |answer: &Value| -> Vec<Value> {
            answer[list].as_array().unwrap().iter().map(|r| r["bundle_id"].clone()).collect()
        };
        let mut paged = Vec::new();
        for page in 1..=3 {
            let answer = get(&app, &format!("{path}?page={page}&per_page=3")).await.json();
            assert_eq!(answer["total"], json!(7), "{path} page {page}");
            assert_eq!(ids(&answer).len(), if page < 3 { 3 } else { 1 }, "{path} page {page}");
            paged.extend(ids(&answer));
        }
        assert_eq!(paged, ids(&whole), "{path}: the pages, one after another, are the whole");
        assert_eq!(get(&app, &format!("{path}?page=4&per_page=3")).await.json()[list], json!([]));
        for (query, parameter) in
            [("page=0", "page"), ("per_page=0", "per_page"), ("per_page=501", "per_page")]
        {
            let refused = get(&app, &format!("{path}?{query}")).await;
            assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{path}?{query}");
            let error = &refused.json()["error"];
            assert_eq!(error["code"], json!("invalid_query"), "{path}?{query}");
            assert!(error["message"].as_str().unwrap().contains(&format!("`{parameter}`")), "{error}");
        }
    }
    let before = get(&app, "/api/v1/leaderboard").await.json()["rows"][0]["bundle_id"].clone();
    // Agent 0 again, with other results: its new submission stands in its row at once.
    // (A URL not asked before: the render cache learns of another process's changes
    // by polling, within a second; the store's reads are what is tested here.)
    assert_eq!(server::synth::synth(&writer, 1, 8, 1).await.unwrap(), 1);
    let after = get(&app, "/api/v1/leaderboard?per_page=99").await.json();
    assert_eq!(after["total"], json!(7));
    assert_eq!(after["rows"][0]["agent_id"], json!("synthetic-00000"));
    assert_ne!(after["rows"][0]["bundle_id"], before, "the new submission, not the one read before");
}

/// Every row of every table of an SQLite database, as text in order, with the times
/// (columns `at` and `…_at`), the signing key and the signed envelopes left out.
async fn all_rows(db: &std::path::Path) -> std::collections::BTreeMap<String, Vec<String>> {
    use sqlx::Row as _;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display())).await.unwrap();
    let keyids: Vec<String> = sqlx::query_scalar("SELECT keyid FROM keys").fetch_all(&pool).await.unwrap();
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' \
         AND name NOT LIKE '_sqlx%' ORDER BY name",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let mut tables = std::collections::BTreeMap::new();
    for name in names {
        let columns: Vec<String> = sqlx::query(&format!("PRAGMA table_info(\"{name}\")"))
            .fetch_all(&pool)
            .await
            .unwrap()
            .iter()
            .map(|c| c.get::<String, _>("name"))
            .filter(|c| c != "at" && !c.ends_with("_at") && !["envelope", "public_key"].contains(&c.as_str()))
            .collect();
        let quoted: Vec<String> = columns.iter().map(|c| format!("quote(\"{c}\")")).collect();
        let sql = format!("SELECT {} FROM \"{name}\"", quoted.join(" || '|' || "));
        let mut rows: Vec<String> = sqlx::query_scalar(&sql).fetch_all(&pool).await.unwrap();
        for row in &mut rows {
            for keyid in &keyids {
                *row = row.replace(keyid.as_str(), "KEYID");
            }
        }
        rows.sort();
        tables.insert(name, rows);
    }
    pool.close().await;
    tables
}

/// The CSV is written in parts, one a core, and joined: its rows are the API's, each once,
/// in the API's order (at a size written in more than one part on two cores).
#[tokio::test(flavor = "multi_thread")]
async fn the_csv_gives_the_apis_rows_each_once_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    state.store.bulk_load();
    assert_eq!(server::synth::synth(&state, 70, 11, 16).await.unwrap(), 70);
    state.store.flush().await.unwrap();
    let app = server::build_app(state);
    let mut api = Vec::new();
    for page in 1.. {
        let answer = get(&app, &format!("/api/v1/leaderboard?per_page=100&page={page}")).await.json();
        let rows = answer["rows"].as_array().unwrap().clone();
        if rows.is_empty() {
            break;
        }
        api.extend(rows.iter().map(|r| {
            (r["agent_id"].as_str().unwrap().to_owned(), r["bundle_id"].as_str().unwrap().to_owned())
        }));
    }
    assert_eq!(api.len(), 70);
    let csv = get(&app, "/leaderboard.csv").await;
    let mut reader = csv::Reader::from_reader(csv.body.as_slice());
    let head = reader.headers().unwrap().clone();
    let (agent, bundle) = (
        head.iter().position(|h| h == "agent_id").unwrap(),
        head.iter().position(|h| h == "bundle_id").unwrap(),
    );
    let rows: Vec<(String, String)> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            assert_eq!(r.len(), head.len(), "a row as long as the header");
            (r[agent].to_owned(), r[bundle].to_owned())
        })
        .collect();
    assert_eq!(rows, api);
}
