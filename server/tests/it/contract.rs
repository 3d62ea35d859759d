//! The API as its OpenAPI document says: every endpoint, and every status each one
//! documents, fetched from the router and checked against `/api/v1/openapi.json` by an
//! independent validator (Python's openapi-core), so the code and the document cannot
//! drift apart.

use std::collections::BTreeMap;
use std::fs;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use bundle::SecretKey;
use serde_json::{Value, json};
use server::guard::{Guard, Limits};
use sqlx::Connection as _;
use store::{Backend, Store, Tier};

use crate::abuse::stalled;
use crate::api::signed;
use crate::harness::{Answer, python, send, state, vectors};

/// What the document describes but this test does not provoke, and where it is tested:
/// a full disk needs a filesystem of its own (`faults.rs` fills a tmpfs and checks the
/// 507 and its code).
const NOT_PROVOKED_HERE: [&str; 1] = ["post /api/v1/submissions 507"];

#[derive(Default)]
struct Recorder {
    cases: Vec<Value>,
}

impl Recorder {
    async fn send(&mut self, app: &Router, template: &str, request: Request<Body>) -> Answer {
        let method = request.method().as_str().to_lowercase();
        let uri = request.uri().clone();
        let query: BTreeMap<String, String> =
            form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()).into_owned().collect();
        let answer = send(app, request).await;
        self.cases.push(json!({
            "method": method,
            "template": template,
            "path": uri.path(),
            "query": query,
            "status": answer.status.as_u16(),
            "content_type": answer.header(header::CONTENT_TYPE),
            "body": String::from_utf8_lossy(&answer.body),
        }));
        answer
    }

    async fn get(&mut self, app: &Router, template: &str, path: &str) -> Answer {
        self.send(app, template, Request::get(path).body(Body::empty()).unwrap()).await
    }

    async fn submit(&mut self, app: &Router, content_type: &str, body: Body) -> Answer {
        let request = Request::post("/api/v1/submissions")
            .header(header::CONTENT_TYPE, content_type)
            .body(body)
            .unwrap();
        self.send(app, "/api/v1/submissions", request).await
    }

    async fn admin(&mut self, app: &Router, template: &str, request: Request<Body>) -> Answer {
        self.send(app, template, request).await
    }
}

fn admin(method: &str, path: &str, token: &str, body: Option<Value>) -> Request<Body> {
    let r =
        Request::builder().method(method).uri(path).header(header::AUTHORIZATION, format!("Bearer {token}"));
    match body {
        Some(b) => {
            r.header(header::CONTENT_TYPE, "application/json").body(Body::from(b.to_string())).unwrap()
        }
        None => r.body(Body::empty()).unwrap(),
    }
}

/// A fresh server on SQLite, its state adjusted by `f`, and its store.
async fn server_with(dir: &std::path::Path, f: impl FnOnce(&mut server::AppState)) -> (Router, Arc<Store>) {
    let backend = Backend::Sqlite { path: dir.join("db.sqlite") };
    let mut state = state(&backend, &dir.join("blobs")).await;
    f(&mut state);
    let store = state.store.clone();
    (server::build_app(state), store)
}

async fn drop_table(dir: &std::path::Path, table: &str) {
    let url = format!("sqlite://{}", dir.join("db.sqlite").display());
    let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::query(&format!("DROP TABLE {table}")).execute(&mut db).await.unwrap();
}

#[tokio::test]
async fn every_answer_matches_the_openapi_document() {
    let mut r = Recorder::default();
    let tmp = tempfile::tempdir().unwrap();

    // The demo's data, and two submitter keys.
    let main = tmp.path().join("main");
    let seeded = state(&Backend::Sqlite { path: main.join("db.sqlite") }, &main.join("blobs")).await;
    crate::harness::seed_demo(&seeded).await;
    let (owner, other, stranger) = (SecretKey::generate(), SecretKey::generate(), SecretKey::generate());
    let store = seeded.store.clone();
    store.add_key(&owner.public_key(), "Contract team", Tier::Submitter).await.unwrap();
    store.add_key(&other.public_key(), "Another team", Tier::Submitter).await.unwrap();
    let conformance =
        bundle::PublicKey::from_pem(&fs::read_to_string(vectors().join("test-key/key.pub.pem")).unwrap())
            .unwrap();
    store.add_key(&conformance, "conformance", Tier::Submitter).await.unwrap();
    let app = server::build_app(seeded);

    let doc = crate::harness::get(&app, "/api/v1/openapi.json").await;
    assert_eq!(doc.status, StatusCode::OK);
    let document = doc.json();
    assert_eq!(document["openapi"], "3.1.0");

    // Submissions: each way one can go.
    let gz = "application/gzip";
    let bundle = signed(&owner, "contract-agent", "2026-11-20T12:00:00Z");
    assert_eq!(r.submit(&app, gz, Body::from(bundle.clone())).await.status, StatusCode::CREATED);
    assert_eq!(r.submit(&app, gz, Body::from(bundle)).await.status, StatusCode::OK);
    let not_gzip = fs::read(vectors().join("bad-not-gzip.tar.gz")).unwrap();
    assert_eq!(r.submit(&app, gz, Body::from(not_gzip)).await.status, StatusCode::BAD_REQUEST);
    let unknown = signed(&stranger, "stranger", "2026-11-20T12:00:00Z");
    assert_eq!(r.submit(&app, gz, Body::from(unknown)).await.status, StatusCode::UNAUTHORIZED);
    let taken = signed(&other, "contract-agent", "2026-11-21T12:00:00Z");
    assert_eq!(r.submit(&app, gz, Body::from(taken)).await.status, StatusCode::FORBIDDEN);
    let bad_hint = fs::read(vectors().join("bad-hint.tar.gz")).unwrap();
    assert_eq!(r.submit(&app, gz, Body::from(bad_hint)).await.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        r.submit(&app, "text/plain", Body::from("hello")).await.status,
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );

    // Reads.
    let board = r.get(&app, "/api/v1/leaderboard", "/api/v1/leaderboard").await;
    assert_eq!(board.status, StatusCode::OK);
    let rows = board.json()["rows"].as_array().unwrap().clone();
    assert!(rows.len() >= 16, "the demo's 15 agents and the contract's");
    let row = rows.iter().find(|r| r["agent_id"] == "openhands-claude-4.5-opus").expect("a published agent");
    // Statistics keyed by hint condition, not by position.
    assert!(row["stats"]["final_success"]["hints"]["estimate"].is_f64(), "{}", row["stats"]);
    assert!(row["stats"]["uplift"]["detailed"]["low"].is_f64(), "{}", row["stats"]);
    assert!(row["stats"]["rank"]["best"].is_u64(), "{}", row["stats"]);
    let filtered = "/api/v1/leaderboard?tier=maintainer&provenance=published&framework=OpenHands";
    assert_eq!(r.get(&app, "/api/v1/leaderboard", filtered).await.status, StatusCode::OK);
    let wrong = r.get(&app, "/api/v1/leaderboard", "/api/v1/leaderboard?tier=gold").await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.get(&app, "/leaderboard.csv", "/leaderboard.csv").await.status, StatusCode::OK);
    assert_eq!(
        r.get(&app, "/leaderboard.csv", "/leaderboard.csv?provenance=x").await.status,
        StatusCode::BAD_REQUEST
    );

    let agent = r.get(&app, "/api/v1/agents/{id}", "/api/v1/agents/example-agent").await;
    assert_eq!(agent.status, StatusCode::OK);
    let agent = agent.json();
    let current = agent["current"].as_object().expect("current is an object keyed by bundle id");
    let bundle_id = current.keys().next().unwrap().clone();
    assert_eq!(
        r.get(&app, "/api/v1/agents/{id}", "/api/v1/agents/nobody").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(r.get(&app, "/api/v1/tasks", "/api/v1/tasks").await.status, StatusCode::OK);
    assert_eq!(r.get(&app, "/api/v1/tasks/{id}", "/api/v1/tasks/cogs").await.status, StatusCode::OK);
    assert_eq!(r.get(&app, "/api/v1/tasks/{id}", "/api/v1/tasks/csvstats").await.status, StatusCode::OK);
    assert_eq!(
        r.get(&app, "/api/v1/tasks/{id}", "/api/v1/tasks/nothing").await.status,
        StatusCode::NOT_FOUND
    );
    let runs = store.runs_of(&bundle_id, None, None).await.unwrap();
    let run = r.get(&app, "/api/v1/runs/{id}", &format!("/api/v1/runs/{}", runs[0].id)).await;
    assert_eq!(run.status, StatusCode::OK);
    assert_eq!(r.get(&app, "/api/v1/runs/{id}", "/api/v1/runs/99999999").await.status, StatusCode::NOT_FOUND);
    assert_eq!(r.get(&app, "/api/v1/changes", "/api/v1/changes?limit=3").await.status, StatusCode::OK);
    let (original, harbor) =
        ("openhands-1.4.0-claude-sonnet-4.5-rexbench", "openhands-1.4.0-claude-sonnet-4.5-harbor");
    let parity = format!("/api/v1/parity?a={original}&b={harbor}");
    assert_eq!(r.get(&app, "/api/v1/parity", &parity).await.status, StatusCode::OK);
    let by_bundle = format!("/api/v1/parity?a={bundle_id}&b={harbor}&hint=hints");
    assert_eq!(r.get(&app, "/api/v1/parity", &by_bundle).await.status, StatusCode::OK);
    let nobody = format!("/api/v1/parity?a=nobody&b={harbor}");
    assert_eq!(r.get(&app, "/api/v1/parity", &nobody).await.status, StatusCode::NOT_FOUND);
    for bad in
        [format!("{parity}&hint=lots"), format!("/api/v1/parity?a={original}"), format!("{parity}&a=x")]
    {
        assert_eq!(r.get(&app, "/api/v1/parity", &bad).await.status, StatusCode::BAD_REQUEST, "{bad}");
    }
    let compare = format!("/api/v1/compare?a={original}&b={harbor}");
    let both = r.get(&app, "/api/v1/compare", &compare).await;
    assert_eq!(both.status, StatusCode::OK);
    assert!(both.json()["comparison"]["shared_tasks"].as_u64().unwrap() > 0, "{}", both.json());
    for (path, status) in [
        (format!("/api/v1/compare?a=nobody&b={harbor}"), StatusCode::NOT_FOUND),
        (format!("/api/v1/compare?a={original}"), StatusCode::BAD_REQUEST),
        (format!("/api/v1/compare?a=&b={harbor}"), StatusCode::BAD_REQUEST),
        // What schemathesis sent: an id the schema allows that names no agent.
        (format!("/api/v1/compare?a=%0C&b={harbor}"), StatusCode::NOT_FOUND),
        (format!("{compare}&a=x"), StatusCode::BAD_REQUEST),
    ] {
        assert_eq!(r.get(&app, "/api/v1/compare", &path).await.status, status, "{path}");
    }
    for (path, status) in [
        ("/api/v1/leaderboard?tasks=public&harness=harbor", StatusCode::OK),
        ("/api/v1/leaderboard?harness=Not%20A%20Slug", StatusCode::BAD_REQUEST),
        ("/api/v1/leaderboard?tasks=private", StatusCode::BAD_REQUEST),
    ] {
        assert_eq!(r.get(&app, "/api/v1/leaderboard", path).await.status, status, "{path}");
    }
    assert_eq!(r.get(&app, "/leaderboard.csv", "/leaderboard.csv?tasks=public").await.status, StatusCode::OK);
    assert_eq!(r.get(&app, "/api/v1/keys", "/api/v1/keys").await.status, StatusCode::OK);
    let envelope = format!("/api/v1/submissions/{bundle_id}/envelope");
    assert_eq!(
        r.get(&app, "/api/v1/submissions/{bundle_id}/envelope", &envelope).await.status,
        StatusCode::OK
    );
    // Reproductions: the sampling epochs, a submission's sample, the maintainers' queue,
    // and a run reproduced twice.
    assert_eq!(r.get(&app, "/api/v1/sampling", "/api/v1/sampling").await.status, StatusCode::OK);
    let sample = "/api/v1/submissions/{bundle_id}/sample";
    for (path, status) in [
        (format!("/api/v1/submissions/{bundle_id}/sample"), StatusCode::OK),
        ("/api/v1/submissions/00/sample".to_owned(), StatusCode::NOT_FOUND),
        ("/api/v1/submissions/%FF/sample".to_owned(), StatusCode::BAD_REQUEST),
    ] {
        assert_eq!(r.get(&app, sample, &path).await.status, status, "{path}");
    }
    let queue = "/api/v1/admin/reproductions";
    for (path, token, status) in [
        (queue, "s3cret-token", StatusCode::OK),
        ("/api/v1/admin/reproductions?status=all", "s3cret-token", StatusCode::OK),
        ("/api/v1/admin/reproductions?status=done", "s3cret-token", StatusCode::BAD_REQUEST),
        (queue, "wrong", StatusCode::UNAUTHORIZED),
    ] {
        assert_eq!(r.admin(&app, queue, admin("GET", path, token, None)).await.status, status, "{path}");
    }
    let maintainer = SecretKey::generate();
    store.add_key(&maintainer.public_key(), "Contract maintainers", Tier::Maintainer).await.unwrap();
    let waiting = store.reproduction_queue(true).await.unwrap();
    let first = waiting.iter().find(|q| q.agent_id == "example-agent").unwrap();
    let patch = crate::reproductions::blob(&store, first.patch.as_deref().unwrap()).await;
    let rerun = (first.task.as_str(), first.hint.as_str(), first.attempt as u32, &patch[..]);
    for (outcome, status) in [("success", StatusCode::CREATED), ("wrong_result", StatusCode::CONFLICT)] {
        let mut b = crate::reproductions::reproduction(
            &first.bundle_id,
            "example-agent",
            &first.task_set_digest,
            &[(rerun.0, rerun.1, rerun.2, rerun.3, outcome)],
        );
        // Its held-out re-run, where the sample chose a variant (spec §4l).
        crate::reproductions::generalised(&mut b, &waiting, first.run_id);
        let bytes = crate::reproductions::signed(b, &maintainer);
        assert_eq!(r.submit(&app, gz, Body::from(bytes)).await.status, status, "{outcome}");
    }
    let none = "/api/v1/submissions/00/envelope";
    assert_eq!(
        r.get(&app, "/api/v1/submissions/{bundle_id}/envelope", none).await.status,
        StatusCode::NOT_FOUND
    );
    let digest = run.json()["artifacts"][0]["digest"].as_str().unwrap().to_owned();
    // A private output: refused to anyone, read by a maintainer; credentials that are
    // not valid are refused as such.
    let artifact = format!("/artifacts/{digest}");
    assert_eq!(r.get(&app, "/artifacts/{digest}", &artifact).await.status, StatusCode::UNAUTHORIZED);
    for (token, status) in [("s3cret-token", StatusCode::OK), ("wrong", StatusCode::UNAUTHORIZED)] {
        let answer = r.admin(&app, "/artifacts/{digest}", admin("GET", &artifact, token, None)).await;
        assert_eq!(answer.status, status, "{token}");
    }
    let run_path = format!("/api/v1/runs/{}", run.json()["id"]);
    for (token, status) in [("s3cret-token", StatusCode::OK), ("wrong", StatusCode::UNAUTHORIZED)] {
        let answer = r.admin(&app, "/api/v1/runs/{id}", admin("GET", &run_path, token, None)).await;
        assert_eq!(answer.status, status, "{token}");
        let failures = r.admin(&app, "/api/v1/failures", admin("GET", "/api/v1/failures", token, None)).await;
        assert_eq!(failures.status, status, "{token}");
        let compare = "/api/v1/compare?a=example-agent&b=example-agent";
        assert_eq!(
            r.admin(&app, "/api/v1/compare", admin("GET", compare, token, None)).await.status,
            status,
            "{token}"
        );
    }
    assert_eq!(r.get(&app, "/api/v1/failures", "/api/v1/failures").await.status, StatusCode::OK);
    assert_eq!(r.get(&app, "/artifacts/{digest}", "/artifacts/abc").await.status, StatusCode::NOT_FOUND);
    // Whatever is wrong with a path or a query, the refusal is the API's own.
    for (template, path) in [
        ("/api/v1/agents/{id}", "/api/v1/agents/%FF"),
        ("/api/v1/tasks/{id}", "/api/v1/tasks/%FF%FE"),
        ("/api/v1/runs/{id}", "/api/v1/runs/%C3"),
        ("/api/v1/submissions/{bundle_id}/envelope", "/api/v1/submissions/%FF/envelope"),
        ("/artifacts/{digest}", "/artifacts/%FF"),
        ("/api/v1/changes", "/api/v1/changes?limit=0"),
        ("/api/v1/changes", "/api/v1/changes?limit=501"),
        ("/api/v1/changes", "/api/v1/changes?limit=9223372036854775808"),
        ("/api/v1/changes", "/api/v1/changes?before=0"),
        ("/api/v1/leaderboard", "/api/v1/leaderboard?tier=maintainer&tier=submitter"),
        ("/leaderboard.csv", "/leaderboard.csv?provenance=published&provenance=evaluated"),
    ] {
        let answer = r.get(&app, template, path).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{path}");
        let code = answer.json()["error"]["code"].as_str().unwrap().to_owned();
        assert!(code == "invalid_path" || code == "invalid_query", "{path}: {code}");
    }
    for path in ["/api/v1/leaderboard?tier=&provenance=", "/leaderboard.csv?tier=&provenance="] {
        let template = path.split('?').next().unwrap();
        assert_eq!(r.get(&app, template, path).await.status, StatusCode::OK, "empty is any: {path}");
    }

    // The key registry, for an admin.
    let keys = "/api/v1/admin/keys";
    assert_eq!(r.admin(&app, keys, admin("GET", keys, "s3cret-token", None)).await.status, StatusCode::OK);
    assert_eq!(r.admin(&app, keys, admin("GET", keys, "wrong", None)).await.status, StatusCode::UNAUTHORIZED);
    let new = SecretKey::generate().public_key().to_pem();
    let add = json!({"public_key": new, "owner": "New team", "tier": "submitter"});
    let added = r.admin(&app, keys, admin("POST", keys, "s3cret-token", Some(add))).await;
    assert_eq!(added.status, StatusCode::CREATED);
    // The same key again; a body that is not JSON; no content type; a body of another shape.
    let again = json!({"public_key": new, "owner": "New team", "tier": "submitter"});
    assert_eq!(
        r.admin(&app, keys, admin("POST", keys, "s3cret-token", Some(again))).await.status,
        StatusCode::CONFLICT
    );
    let not_json = Request::post(keys)
        .header(header::AUTHORIZATION, "Bearer s3cret-token")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from("{\"public_key\": "))
        .unwrap();
    let answer = r.admin(&app, keys, not_json).await;
    assert_eq!((answer.status, answer.code().as_str()), (StatusCode::BAD_REQUEST, "invalid_json"));
    let untyped = admin("POST", keys, "s3cret-token", None);
    let answer = r.admin(&app, keys, untyped).await;
    assert_eq!(
        (answer.status, answer.code().as_str()),
        (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
    );
    let shape = json!({"owner": "New team", "tier": "submitter"});
    let answer = r.admin(&app, keys, admin("POST", keys, "s3cret-token", Some(shape))).await;
    assert_eq!((answer.status, answer.code().as_str()), (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"));
    let bad = json!({"public_key": "not a key", "owner": "New team", "tier": "submitter"});
    let refused = r.admin(&app, keys, admin("POST", keys, "s3cret-token", Some(bad.clone()))).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        r.admin(&app, keys, admin("POST", keys, "wrong", Some(bad.clone()))).await.status,
        StatusCode::UNAUTHORIZED
    );
    let revoke = "/api/v1/admin/keys/{keyid}/revoke";
    let keyid = added.json()["key"]["keyid"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/admin/keys/{keyid}/revoke");
    assert_eq!(
        r.admin(&app, revoke, admin("POST", &path, "s3cret-token", None)).await.status,
        StatusCode::OK
    );
    assert_eq!(
        r.admin(&app, revoke, admin("POST", &path, "wrong", None)).await.status,
        StatusCode::UNAUTHORIZED
    );
    let missing = "/api/v1/admin/keys/ffff/revoke";
    assert_eq!(
        r.admin(&app, revoke, admin("POST", missing, "s3cret-token", None)).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        r.admin(&app, revoke, admin("POST", "/api/v1/admin/keys/%FF/revoke", "s3cret-token", None))
            .await
            .status,
        StatusCode::BAD_REQUEST
    );

    // The review of findings: the demo's shortcut agent carries some.
    let findings = "/api/v1/admin/findings";
    let listed = r.admin(&app, findings, admin("GET", findings, "s3cret-token", None)).await;
    assert_eq!(listed.status, StatusCode::OK);
    let id =
        listed.json()["findings"][0]["finding"]["id"].as_str().expect("the demo has a finding").to_owned();
    let everything = "/api/v1/admin/findings?status=all&limit=5";
    assert_eq!(
        r.admin(&app, findings, admin("GET", everything, "s3cret-token", None)).await.status,
        StatusCode::OK
    );
    for query in ["?status=maybe", "?limit=0", "?limit=1001", "?limit=x"] {
        let path = format!("{findings}{query}");
        let answer = r.admin(&app, findings, admin("GET", &path, "s3cret-token", None)).await;
        assert_eq!(
            (answer.status, answer.code().as_str()),
            (StatusCode::BAD_REQUEST, "invalid_query"),
            "{query}"
        );
    }
    assert_eq!(
        r.admin(&app, findings, admin("GET", findings, "wrong", None)).await.status,
        StatusCode::UNAUTHORIZED
    );
    let review = "/api/v1/admin/findings/{id}/review";
    let path = format!("/api/v1/admin/findings/{id}/review");
    let verdict = json!({"verdict": "confirmed", "note": "prints the accuracy the task expects"});
    let reviewed = r.admin(&app, review, admin("POST", &path, "s3cret-token", Some(verdict.clone()))).await;
    assert_eq!(reviewed.status, StatusCode::OK);
    assert_eq!(reviewed.json()["finding"]["finding"]["review"]["verdict"], json!("confirmed"));
    assert_eq!(
        r.admin(&app, review, admin("POST", &path, "wrong", Some(verdict.clone()))).await.status,
        StatusCode::UNAUTHORIZED
    );
    let unknown = "/api/v1/admin/findings/99999999-server-0/review";
    assert_eq!(
        r.admin(&app, review, admin("POST", unknown, "s3cret-token", Some(verdict.clone()))).await.status,
        StatusCode::NOT_FOUND
    );
    let maybe = json!({"verdict": "maybe", "note": "n"});
    let answer = r.admin(&app, review, admin("POST", &path, "s3cret-token", Some(maybe))).await;
    assert_eq!(
        (answer.status, answer.code().as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_verdict")
    );
    let answer = r.admin(&app, review, admin("POST", &path, "s3cret-token", None)).await;
    assert_eq!(answer.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let not_json = Request::post(&path)
        .header(header::AUTHORIZATION, "Bearer s3cret-token")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from("{\"verdict\": "))
        .unwrap();
    assert_eq!(r.admin(&app, review, not_json).await.status, StatusCode::BAD_REQUEST);
    let strict = "/api/v1/leaderboard?integrity=strict";
    assert_eq!(r.get(&app, "/api/v1/leaderboard", strict).await.status, StatusCode::OK);
    let lax = r.get(&app, "/api/v1/leaderboard", "/api/v1/leaderboard?integrity=lax").await;
    assert_eq!((lax.status, lax.code().as_str()), (StatusCode::BAD_REQUEST, "invalid_query"));

    // Who may read each task's outputs, and who read private ones.
    let outputs = "/api/v1/admin/outputs";
    assert_eq!(
        r.admin(&app, outputs, admin("GET", outputs, "s3cret-token", None)).await.status,
        StatusCode::OK
    );
    assert_eq!(
        r.admin(&app, outputs, admin("GET", outputs, "wrong", None)).await.status,
        StatusCode::UNAUTHORIZED
    );
    let set = "/api/v1/admin/tasks/{id}/outputs";
    let wordfreq = "/api/v1/admin/tasks/wordfreq/outputs";
    for (token, path, body, status) in [
        (
            "s3cret-token",
            wordfreq,
            Some(json!({"outputs": "public", "reason": "as the card says"})),
            StatusCode::OK,
        ),
        ("wrong", wordfreq, Some(json!({"outputs": "public", "reason": "r"})), StatusCode::UNAUTHORIZED),
        (
            "s3cret-token",
            "/api/v1/admin/tasks/nothing/outputs",
            Some(json!({"outputs": "public", "reason": "r"})),
            StatusCode::NOT_FOUND,
        ),
        (
            "s3cret-token",
            "/api/v1/admin/tasks/%FF/outputs",
            Some(json!({"outputs": "public", "reason": "r"})),
            StatusCode::BAD_REQUEST,
        ),
        (
            "s3cret-token",
            wordfreq,
            Some(json!({"outputs": "open", "reason": "r"})),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        ("s3cret-token", wordfreq, None, StatusCode::UNSUPPORTED_MEDIA_TYPE),
    ] {
        assert_eq!(r.admin(&app, set, admin("PUT", path, token, body)).await.status, status, "{path}");
    }
    let not_json = Request::put(wordfreq)
        .header(header::AUTHORIZATION, "Bearer s3cret-token")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from("{\"outputs\": "))
        .unwrap();
    assert_eq!(r.admin(&app, set, not_json).await.status, StatusCode::BAD_REQUEST);
    let log = "/api/v1/admin/access-log";
    assert_eq!(r.admin(&app, log, admin("GET", log, "s3cret-token", None)).await.status, StatusCode::OK);
    assert_eq!(
        r.admin(&app, log, admin("GET", "/api/v1/admin/access-log?limit=0", "s3cret-token", None))
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(r.admin(&app, log, admin("GET", log, "wrong", None)).await.status, StatusCode::UNAUTHORIZED);

    // Signing in: a challenge, its signed answer, who that is, signing out.
    let owner_id = owner.public_key().keyid().to_string();
    let challenge = "/api/v1/login/challenge";
    let login = "/api/v1/login";
    let json_post = |path: &str, body: &str| {
        Request::post(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_owned()))
            .unwrap()
    };
    let issued = r.send(&app, challenge, json_post(challenge, &json!({"keyid": owner_id}).to_string())).await;
    assert_eq!(issued.status, StatusCode::CREATED);
    let nonce = issued.json()["challenge"].as_str().unwrap().to_owned();
    let revoked = SecretKey::generate();
    store.add_key(&revoked.public_key(), "Revoked team", Tier::Submitter).await.unwrap();
    store.revoke_key(&revoked.public_key().keyid().to_string()).await.unwrap();
    for (body, status) in [
        (json!({"keyid": stranger.public_key().keyid().to_string()}).to_string(), StatusCode::NOT_FOUND),
        (json!({"keyid": revoked.public_key().keyid().to_string()}).to_string(), StatusCode::UNAUTHORIZED),
        (json!({"key": "x"}).to_string(), StatusCode::UNPROCESSABLE_ENTITY),
        ("{\"keyid\": ".to_owned(), StatusCode::BAD_REQUEST),
    ] {
        assert_eq!(r.send(&app, challenge, json_post(challenge, &body)).await.status, status, "{body}");
    }
    let untyped = Request::post(challenge).body(Body::from("{}")).unwrap();
    assert_eq!(r.send(&app, challenge, untyped).await.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let sign = |key: &SecretKey, nonce: &str, keyid: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .encode(key.sign(format!("rexbench-login/v1\n{nonce}\n{keyid}\n").as_bytes()))
    };
    let answer = |keyid: &str, signature: String| {
        json!({"keyid": keyid, "challenge": nonce, "signature": signature}).to_string()
    };
    for (body, status) in [
        (answer(&owner_id, sign(&other, &nonce, &owner_id)), StatusCode::UNAUTHORIZED),
        (
            answer(&stranger.public_key().keyid().to_string(), sign(&stranger, &nonce, "x")),
            StatusCode::NOT_FOUND,
        ),
        (json!({"keyid": owner_id}).to_string(), StatusCode::UNPROCESSABLE_ENTITY),
        ("{\"keyid\": ".to_owned(), StatusCode::BAD_REQUEST),
    ] {
        assert_eq!(r.send(&app, login, json_post(login, &body)).await.status, status, "{body}");
    }
    let untyped = Request::post(login).body(Body::from("{}")).unwrap();
    assert_eq!(r.send(&app, login, untyped).await.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let session =
        r.send(&app, login, json_post(login, &answer(&owner_id, sign(&owner, &nonce, &owner_id)))).await;
    assert_eq!(session.status, StatusCode::CREATED);
    let token = session.json()["token"].as_str().unwrap().to_owned();
    // An envelope stored before findings' words left manifests (spec §4g), another
    // team's: withheld from anyone (401) and from this session (403).
    let old = crate::secrecy::store_old_bundle(&store, &other, "othello", "old-envelope").await;
    let envelope = "/api/v1/submissions/{bundle_id}/envelope";
    let old_path = format!("/api/v1/submissions/{old}/envelope");
    assert_eq!(r.get(&app, envelope, &old_path).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        r.admin(&app, envelope, admin("GET", &old_path, &token, None)).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(r.get(&app, login, login).await.status, StatusCode::OK);
    assert_eq!(r.admin(&app, login, admin("GET", login, &token, None)).await.status, StatusCode::OK);
    assert_eq!(
        r.admin(&app, login, admin("GET", login, "rxs_forged", None)).await.status,
        StatusCode::UNAUTHORIZED
    );
    let agent_path = "/api/v1/agents/contract-agent";
    assert_eq!(
        r.admin(&app, "/api/v1/agents/{id}", admin("GET", agent_path, "rxs_forged", None)).await.status,
        StatusCode::UNAUTHORIZED
    );
    // Signed in, and still not theirs: a demo run's private output.
    let demo_private = {
        let page =
            String::from_utf8(crate::harness::get(&app, "/agents/example-agent?task=csvstats").await.body)
                .unwrap();
        let run: i64 =
            page.split("href=\"/runs/").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        let detail = crate::harness::get(&app, &format!("/api/v1/runs/{run}")).await.json();
        format!("/artifacts/{}", detail["artifacts"][0]["digest"].as_str().unwrap())
    };
    assert_eq!(
        r.admin(&app, "/artifacts/{digest}", admin("GET", &demo_private, &token, None)).await.status,
        StatusCode::FORBIDDEN
    );
    let logout = "/api/v1/logout";
    assert_eq!(
        r.admin(&app, logout, admin("POST", logout, &token, None)).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        r.admin(&app, logout, admin("POST", logout, &token, None)).await.status,
        StatusCode::UNAUTHORIZED
    );

    // Admin over HTTP switched off.
    let (off, _) = server_with(&tmp.path().join("off"), |s| s.admin_token = None).await;
    for (template, method, path) in [(outputs, "GET", outputs), (set, "PUT", wordfreq), (log, "GET", log)] {
        assert_eq!(
            r.admin(&off, template, admin(method, path, "x", Some(json!({})))).await.status,
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
    assert_eq!(r.admin(&off, keys, admin("GET", keys, "x", None)).await.status, StatusCode::NOT_FOUND);
    assert_eq!(r.admin(&off, keys, admin("POST", keys, "x", Some(bad))).await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        r.admin(&off, findings, admin("GET", findings, "x", None)).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(r.admin(&off, queue, admin("GET", queue, "x", None)).await.status, StatusCode::NOT_FOUND);

    // Limits: size, time, rate.
    let (small, _) = server_with(&tmp.path().join("small"), |s| s.limits.compressed = 100).await;
    let big = signed(&owner, "big", "2026-11-20T12:00:00Z");
    assert_eq!(r.submit(&small, gz, Body::from(big)).await.status, StatusCode::PAYLOAD_TOO_LARGE);
    let (slow, seeded_slow) = server_with(&tmp.path().join("slow"), |s| {
        s.guard = Guard::new(Limits { body_idle: Duration::from_secs(1), ..Limits::default() })
    })
    .await;
    seeded_slow.add_key(&owner.public_key(), "Contract team", Tier::Submitter).await.unwrap();
    let half = signed(&owner, "slow", "2026-11-20T12:00:00Z");
    let stalled = stalled(half[..half.len() / 2].to_vec());
    assert_eq!(r.submit(&slow, gz, stalled).await.status, StatusCode::REQUEST_TIMEOUT);
    let (busy, seeded_busy) = server_with(&tmp.path().join("busy"), |s| {
        s.guard = Guard::new(Limits { per_address_hourly: 4, ..Limits::default() })
    })
    .await;
    seeded_busy.add_key(&owner.public_key(), "Contract team", Tier::Submitter).await.unwrap();
    for (n, status) in [(1, StatusCode::CREATED), (2, StatusCode::TOO_MANY_REQUESTS)] {
        let b = signed(&owner, &format!("agent-{n}"), "2026-11-20T12:00:00Z");
        assert_eq!(r.submit(&busy, gz, Body::from(b)).await.status, status);
    }
    // Sign-in attempts and refused credentials have the same allowance per address.
    let (guarded, _) = server_with(&tmp.path().join("guarded"), |s| {
        s.guard = Guard::new(Limits { per_address_hourly: 4, ..Limits::default() })
    })
    .await;
    let body = json!({"keyid": owner_id}).to_string();
    assert_eq!(r.send(&guarded, challenge, json_post(challenge, &body)).await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        r.send(&guarded, challenge, json_post(challenge, &body)).await.status,
        StatusCode::TOO_MANY_REQUESTS
    );
    let late = json!({"keyid": owner_id, "challenge": "x", "signature": "y"}).to_string();
    assert_eq!(r.send(&guarded, login, json_post(login, &late)).await.status, StatusCode::TOO_MANY_REQUESTS);
    for (template, path) in [
        (login, login),
        ("/api/v1/runs/{id}", "/api/v1/runs/1"),
        ("/api/v1/failures", "/api/v1/failures"),
        ("/api/v1/compare", "/api/v1/compare?a=x&b=y"),
        ("/api/v1/agents/{id}", "/api/v1/agents/x"),
        ("/artifacts/{digest}", "/artifacts/ab"),
        ("/api/v1/submissions/{bundle_id}/envelope", "/api/v1/submissions/ab/envelope"),
    ] {
        let limited = r.admin(&guarded, template, admin("GET", path, "rxs_guess", None)).await;
        assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS, "{path}");
    }
    // A wrong admin token is a refused credential like any other.
    let review = json!({"verdict": "confirmed", "note": "n"});
    let key = json!({"public_key": "x", "owner": "o", "tier": "submitter"});
    let outputs = json!({"outputs": "public", "reason": "r"});
    for (method, template, path, body) in [
        ("GET", "/api/v1/admin/access-log", "/api/v1/admin/access-log", None),
        ("GET", "/api/v1/admin/findings", "/api/v1/admin/findings", None),
        ("GET", "/api/v1/admin/keys", "/api/v1/admin/keys", None),
        ("GET", "/api/v1/admin/outputs", "/api/v1/admin/outputs", None),
        ("GET", "/api/v1/admin/reproductions", "/api/v1/admin/reproductions", None),
        (
            "POST",
            "/api/v1/admin/findings/{id}/review",
            "/api/v1/admin/findings/1-server-0/review",
            Some(review),
        ),
        ("POST", "/api/v1/admin/keys", "/api/v1/admin/keys", Some(key)),
        ("POST", "/api/v1/admin/keys/{keyid}/revoke", "/api/v1/admin/keys/ab/revoke", None),
        ("PUT", "/api/v1/admin/tasks/{id}/outputs", "/api/v1/admin/tasks/csvstats/outputs", Some(outputs)),
    ] {
        let limited = r.admin(&guarded, template, admin(method, path, "wrong", body)).await;
        assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS, "{method} {path}");
    }

    // The server's own failures.
    let broken_dir = tmp.path().join("broken");
    let (broken, seeded_broken) = server_with(&broken_dir, |_| {}).await;
    seeded_broken.add_key(&owner.public_key(), "Contract team", Tier::Submitter).await.unwrap();
    drop_table(&broken_dir, "totals").await;
    let failed = r.get(&broken, "/api/v1/leaderboard", "/api/v1/leaderboard").await;
    assert_eq!(failed.status, StatusCode::INTERNAL_SERVER_ERROR);
    let b = signed(&owner, "unlucky", "2026-11-20T12:00:00Z");
    assert_eq!(r.submit(&broken, gz, Body::from(b)).await.status, StatusCode::INTERNAL_SERVER_ERROR);

    // The artifact store away (a real S3 server, stopped), and a blob gone from it.
    let mut s3 = store::testing::S3Server::start();
    let stored_dir = tmp.path().join("s3");
    let state = crate::harness::state_with(
        &Backend::Sqlite { path: stored_dir.join("db.sqlite") },
        s3.blobs(&stored_dir.join("staging")),
    )
    .await;
    state.store.add_key(&owner.public_key(), "Contract team", Tier::Submitter).await.unwrap();
    let blobs = state.store.blobs().clone();
    let on_s3 = server::build_app(state);
    let b = signed(&owner, "on-s3", "2026-11-20T12:00:00Z");
    assert_eq!(r.submit(&on_s3, gz, Body::from(b)).await.status, StatusCode::CREATED);
    let digest = blobs.list().await.unwrap()[0];
    let artifact = format!("/artifacts/{digest}");
    s3.stop();
    // (A maintainer asks: the bundle's outputs are RExBench's, private.)
    let down = r.admin(&on_s3, "/artifacts/{digest}", admin("GET", &artifact, "s3cret-token", None)).await;
    assert_eq!(down.status, StatusCode::SERVICE_UNAVAILABLE);
    let b = signed(&owner, "on-s3-later", "2026-11-20T12:00:00Z");
    assert_eq!(r.submit(&on_s3, gz, Body::from(b)).await.status, StatusCode::SERVICE_UNAVAILABLE);
    s3.restart();
    blobs.remove(&digest).await.unwrap();
    assert_eq!(
        r.admin(&on_s3, "/artifacts/{digest}", admin("GET", &artifact, "s3cret-token", None)).await.status,
        StatusCode::INTERNAL_SERVER_ERROR
    );

    // The independent check.
    let input = tmp.path().join("contract.json");
    fs::write(&input, serde_json::to_vec(&json!({"document": document, "cases": r.cases})).unwrap()).unwrap();
    let script = crate::harness::repo().join("server/tests/python/openapi_check.py");
    let out = std::process::Command::new(python()).arg(&script).arg(&input).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|_| panic!("openapi_check.py: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(report["failures"], json!([]), "answers that do not match the document");
    assert_eq!(report["undocumented"], json!([]), "answers the document does not describe");
    assert_eq!(report["unexercised"], json!(NOT_PROVOKED_HERE), "documented answers no case provoked");
    assert!(out.status.success());
}
