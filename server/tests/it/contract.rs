//! The API as its OpenAPI document says: every endpoint, and every status each one
//! documents, fetched from the router and checked against `/api/v1/openapi.json` by an
//! independent validator (Python's openapi-core), so the code and the document cannot
//! drift apart.
//!
//! One test, read as its named steps (each a table of requests and the status each must
//! get, where the requests need nothing of each other's answers), against one demo
//! server; the steps that need a server of another kind (admin off, tight limits, a
//! broken database, an artifact store away) make their own. Every answer is recorded,
//! and the last step hands them all to the validator.

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

const GZ: &str = "application/gzip";
/// The demo server's admin token, and one that is not.
const TOKEN: &str = "s3cret-token";
const WRONG: &str = "wrong";

const KEYS: &str = "/api/v1/admin/keys";
const FINDINGS: &str = "/api/v1/admin/findings";
const OUTPUTS: &str = "/api/v1/admin/outputs";
const SET_OUTPUTS: &str = "/api/v1/admin/tasks/{id}/outputs";
const WORDFREQ_OUTPUTS: &str = "/api/v1/admin/tasks/wordfreq/outputs";
const ACCESS_LOG: &str = "/api/v1/admin/access-log";
const QUEUE: &str = "/api/v1/admin/reproductions";
const CHALLENGE: &str = "/api/v1/login/challenge";
const LOGIN: &str = "/api/v1/login";
const ENVELOPE: &str = "/api/v1/submissions/{bundle_id}/envelope";
const REQUEST_CHALLENGE: &str = "/api/v1/key-requests/challenge";
const REQUESTS: &str = "/api/v1/key-requests";
const REQUEST: &str = "/api/v1/key-requests/{id}";
const ADMIN_REQUESTS: &str = "/api/v1/admin/key-requests";
const APPROVE: &str = "/api/v1/admin/key-requests/{id}/approve";
const DECLINE: &str = "/api/v1/admin/key-requests/{id}/decline";
const VARIANTS: &str = "/api/v1/admin/variants";
const RETIRE: &str = "/api/v1/admin/variants/retire";
const TASK_SETS: &str = "/api/v1/admin/task-sets";

/// One request of a table: its method, the document's path template, the path asked
/// for, a bearer token, a JSON body, and the status it must get.
struct Case {
    method: &'static str,
    template: &'static str,
    path: String,
    token: Option<String>,
    body: Option<Value>,
    status: StatusCode,
}

/// `GET path` (of `template`), answered `status`.
fn get(template: &'static str, path: impl Into<String>, status: StatusCode) -> Case {
    Case { method: "GET", template, path: path.into(), token: None, body: None, status }
}

/// `method path` (of `template`) with a JSON body, answered `status`.
fn send_json(
    method: &'static str,
    template: &'static str,
    path: impl Into<String>,
    body: Value,
    status: StatusCode,
) -> Case {
    Case { method, template, path: path.into(), token: None, body: Some(body), status }
}

impl Case {
    /// The same request with `Authorization: Bearer token`.
    fn as_(mut self, token: &str) -> Case {
        self.token = Some(token.to_owned());
        self
    }

    fn post(template: &'static str, path: impl Into<String>, status: StatusCode) -> Case {
        Case { method: "POST", ..get(template, path, status) }
    }

    fn request(&self) -> Request<Body> {
        let mut r = Request::builder().method(self.method).uri(&self.path);
        if let Some(token) = &self.token {
            r = r.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        match &self.body {
            Some(b) => r.header(header::CONTENT_TYPE, "application/json").body(Body::from(b.to_string())),
            None => r.body(Body::empty()),
        }
        .unwrap()
    }
}

/// A request whose body is JSON cut short, with the token if any.
fn truncated(method: &str, path: &str, token: Option<&str>, body: &'static str) -> Request<Body> {
    let mut r = Request::builder().method(method).uri(path).header(header::CONTENT_TYPE, "application/json");
    if let Some(token) = token {
        r = r.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    r.body(Body::from(body)).unwrap()
}

/// Every request sent and its answer, for the validator.
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

    /// Sends each case in order, asserting its status; the answers, in the same order.
    async fn table(&mut self, app: &Router, cases: Vec<Case>) -> Vec<Answer> {
        let mut answers = Vec::new();
        for case in cases {
            let answer = self.send(app, case.template, case.request()).await;
            assert_eq!(answer.status, case.status, "{} {}", case.method, case.path);
            answers.push(answer);
        }
        answers
    }

    async fn one(&mut self, app: &Router, case: Case) -> Answer {
        self.table(app, vec![case]).await.pop().unwrap()
    }

    async fn submit(&mut self, app: &Router, content_type: &str, body: Body) -> Answer {
        let request = Request::post("/api/v1/submissions")
            .header(header::CONTENT_TYPE, content_type)
            .body(body)
            .unwrap();
        self.send(app, "/api/v1/submissions", request).await
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

/// The demo server every step but the last few asks, its store, and the keys of three
/// teams: two registered (`owner`, `other`), one not (`stranger`).
struct Demo {
    r: Recorder,
    app: Router,
    store: Arc<Store>,
    tmp: tempfile::TempDir,
    owner: SecretKey,
    other: SecretKey,
    stranger: SecretKey,
}

/// What the reads found that later steps ask about: the example agent's current
/// submission and one of its runs (as the API answered it).
struct Found {
    bundle_id: String,
    run: Value,
}

#[tokio::test]
async fn every_answer_matches_the_openapi_document() {
    let (mut demo, document) = demo().await;
    submissions(&mut demo).await;
    let found = reads(&mut demo).await;
    reproductions(&mut demo, &found).await;
    private_outputs(&mut demo, &found).await;
    refused_paths_and_queries(&mut demo).await;
    key_registry(&mut demo).await;
    findings_review(&mut demo).await;
    outputs_and_access_log(&mut demo).await;
    signing_in(&mut demo).await;
    key_requests(&mut demo).await;
    registrations(&mut demo).await;
    admin_switched_off(&mut demo).await;
    limits(&mut demo).await;
    own_failures(&mut demo).await;
    artifact_store_away(&mut demo).await;
    independent_check(demo, document);
}

/// The demo's data, two submitter keys and the conformance vectors' key; the document.
async fn demo() -> (Demo, Value) {
    let tmp = tempfile::tempdir().unwrap();
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
    (Demo { r: Recorder::default(), app, store, tmp, owner, other, stranger }, document)
}

/// Submissions: each way one can go.
async fn submissions(d: &mut Demo) {
    let bundle = signed(&d.owner, "contract-agent", "2026-11-20T12:00:00Z");
    let cases: Vec<(&str, Vec<u8>, StatusCode)> = vec![
        (GZ, bundle.clone(), StatusCode::CREATED),
        (GZ, bundle, StatusCode::OK),
        (GZ, fs::read(vectors().join("bad-not-gzip.tar.gz")).unwrap(), StatusCode::BAD_REQUEST),
        (GZ, signed(&d.stranger, "stranger", "2026-11-20T12:00:00Z"), StatusCode::UNAUTHORIZED),
        (GZ, signed(&d.other, "contract-agent", "2026-11-21T12:00:00Z"), StatusCode::FORBIDDEN),
        (GZ, fs::read(vectors().join("bad-hint.tar.gz")).unwrap(), StatusCode::UNPROCESSABLE_ENTITY),
        ("text/plain", b"hello".to_vec(), StatusCode::UNSUPPORTED_MEDIA_TYPE),
    ];
    for (n, (media, body, status)) in cases.into_iter().enumerate() {
        assert_eq!(d.r.submit(&d.app, media, Body::from(body)).await.status, status, "submission {n}");
    }
}

/// The public reads, and what each refuses.
async fn reads(d: &mut Demo) -> Found {
    let board = d.r.one(&d.app, get("/api/v1/leaderboard", "/api/v1/leaderboard", StatusCode::OK)).await;
    let rows = board.json()["rows"].as_array().unwrap().clone();
    assert!(rows.len() >= 16, "the demo's 15 agents and the contract's");
    let row = rows.iter().find(|r| r["agent_id"] == "openhands-claude-4.5-opus").expect("a published agent");
    // Statistics keyed by hint condition, not by position.
    assert!(row["stats"]["final_success"]["hints"]["estimate"].is_f64(), "{}", row["stats"]);
    assert!(row["stats"]["uplift"]["detailed"]["low"].is_f64(), "{}", row["stats"]);
    assert!(row["stats"]["rank"]["best"].is_u64(), "{}", row["stats"]);
    let agent =
        d.r.one(&d.app, get("/api/v1/agents/{id}", "/api/v1/agents/example-agent", StatusCode::OK)).await;
    let agent = agent.json();
    let current = agent["current"].as_object().expect("current is an object keyed by bundle id");
    let bundle_id = current.keys().next().unwrap().clone();
    let runs = d.store.runs_of(&bundle_id, None, None).await.unwrap();
    let run_path = format!("/api/v1/runs/{}", runs[0].id);
    let run = d.r.one(&d.app, get("/api/v1/runs/{id}", run_path, StatusCode::OK)).await.json();

    let (original, harbor) =
        ("openhands-1.4.0-claude-sonnet-4.5-rexbench", "openhands-1.4.0-claude-sonnet-4.5-harbor");
    let parity = format!("/api/v1/parity?a={original}&b={harbor}");
    let compare = format!("/api/v1/compare?a={original}&b={harbor}");
    let (ok, bad, missing) = (StatusCode::OK, StatusCode::BAD_REQUEST, StatusCode::NOT_FOUND);
    let answers =
        d.r.table(
            &d.app,
            vec![
                get(
                    "/api/v1/leaderboard",
                    "/api/v1/leaderboard?tier=maintainer&provenance=published&framework=OpenHands",
                    ok,
                ),
                get("/api/v1/leaderboard", "/api/v1/leaderboard?tier=gold", bad),
                get("/leaderboard.csv", "/leaderboard.csv", ok),
                get("/leaderboard.csv", "/leaderboard.csv?provenance=x", bad),
                get("/api/v1/agents/{id}", "/api/v1/agents/nobody", missing),
                get("/api/v1/tasks", "/api/v1/tasks", ok),
                get("/api/v1/tasks/{id}", "/api/v1/tasks/cogs", ok),
                get("/api/v1/tasks/{id}", "/api/v1/tasks/csvstats", ok),
                get("/api/v1/tasks/{id}", "/api/v1/tasks/nothing", missing),
                get("/api/v1/runs/{id}", "/api/v1/runs/99999999", missing),
                get("/api/v1/changes", "/api/v1/changes?limit=3", ok),
                get("/api/v1/parity", parity.clone(), ok),
                get("/api/v1/parity", format!("/api/v1/parity?a={bundle_id}&b={harbor}&hint=hints"), ok),
                get("/api/v1/parity", format!("/api/v1/parity?a=nobody&b={harbor}"), missing),
                get("/api/v1/parity", format!("{parity}&hint=lots"), bad),
                get("/api/v1/parity", format!("/api/v1/parity?a={original}"), bad),
                get("/api/v1/parity", format!("{parity}&a=x"), bad),
                get("/api/v1/compare", compare.clone(), ok),
                get("/api/v1/compare", format!("/api/v1/compare?a=nobody&b={harbor}"), missing),
                get("/api/v1/compare", format!("/api/v1/compare?a={original}"), bad),
                get("/api/v1/compare", format!("/api/v1/compare?a=&b={harbor}"), bad),
                // What schemathesis sent: an id the schema allows that names no agent.
                get("/api/v1/compare", format!("/api/v1/compare?a=%0C&b={harbor}"), missing),
                get("/api/v1/compare", format!("{compare}&a=x"), bad),
                get("/api/v1/leaderboard", "/api/v1/leaderboard?tasks=public&harness=harbor", ok),
                get("/api/v1/leaderboard", "/api/v1/leaderboard?harness=Not%20A%20Slug", bad),
                get("/api/v1/leaderboard", "/api/v1/leaderboard?tasks=private", bad),
                get("/leaderboard.csv", "/leaderboard.csv?tasks=public", ok),
                get("/api/v1/keys", "/api/v1/keys", ok),
                get(ENVELOPE, format!("/api/v1/submissions/{bundle_id}/envelope"), ok),
            ],
        )
        .await;
    let both = answers[17].json();
    assert!(both["comparison"]["shared_tasks"].as_u64().unwrap() > 0, "{both}");
    Found { bundle_id, run }
}

/// The sampling epochs, a submission's sample, the maintainers' queue a page at a time,
/// and a run reproduced twice.
async fn reproductions(d: &mut Demo, found: &Found) {
    let sample = "/api/v1/submissions/{bundle_id}/sample";
    let bundle_id = &found.bundle_id;
    d.r.table(
        &d.app,
        vec![
            get("/api/v1/sampling", "/api/v1/sampling", StatusCode::OK),
            get(sample, format!("/api/v1/submissions/{bundle_id}/sample"), StatusCode::OK),
            get(sample, "/api/v1/submissions/00/sample", StatusCode::NOT_FOUND),
            get(sample, "/api/v1/submissions/%FF/sample", StatusCode::BAD_REQUEST),
            get(QUEUE, QUEUE, StatusCode::OK).as_(TOKEN),
            get(QUEUE, "/api/v1/admin/reproductions?status=all", StatusCode::OK).as_(TOKEN),
            get(QUEUE, "/api/v1/admin/reproductions?status=done", StatusCode::BAD_REQUEST).as_(TOKEN),
            get(QUEUE, "/api/v1/admin/reproductions?page=2&per_page=1", StatusCode::OK).as_(TOKEN),
            get(QUEUE, "/api/v1/admin/reproductions?page=999", StatusCode::OK).as_(TOKEN),
            get(QUEUE, "/api/v1/admin/reproductions?page=0", StatusCode::BAD_REQUEST).as_(TOKEN),
            get(QUEUE, "/api/v1/admin/reproductions?per_page=1001", StatusCode::BAD_REQUEST).as_(TOKEN),
            get(QUEUE, QUEUE, StatusCode::UNAUTHORIZED).as_(WRONG),
        ],
    )
    .await;
    let maintainer = SecretKey::generate();
    d.store.add_key(&maintainer.public_key(), "Contract maintainers", Tier::Maintainer).await.unwrap();
    let waiting = d.store.reproduction_queue(true).await.unwrap();
    let first = waiting.iter().find(|q| q.agent_id == "example-agent").unwrap();
    let patch = crate::reproductions::blob(&d.store, first.patch.as_deref().unwrap()).await;
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
        assert_eq!(d.r.submit(&d.app, GZ, Body::from(bytes)).await.status, status, "{outcome}");
    }
    d.r.one(&d.app, get(ENVELOPE, "/api/v1/submissions/00/envelope", StatusCode::NOT_FOUND)).await;
}

/// A private output: refused to anyone, read by a maintainer; credentials that are not
/// valid are refused as such. The views behind it (a run, the failures, a comparison)
/// likewise.
async fn private_outputs(d: &mut Demo, found: &Found) {
    let artifact = format!("/artifacts/{}", found.run["artifacts"][0]["digest"].as_str().unwrap());
    let run = format!("/api/v1/runs/{}", found.run["id"]);
    let compare = "/api/v1/compare?a=example-agent&b=example-agent";
    let mut cases = vec![get("/artifacts/{digest}", artifact.clone(), StatusCode::UNAUTHORIZED)];
    for token in [TOKEN, WRONG] {
        let status = if token == TOKEN { StatusCode::OK } else { StatusCode::UNAUTHORIZED };
        cases.push(get("/artifacts/{digest}", artifact.clone(), status).as_(token));
    }
    for token in [TOKEN, WRONG] {
        let status = if token == TOKEN { StatusCode::OK } else { StatusCode::UNAUTHORIZED };
        cases.push(get("/api/v1/runs/{id}", run.clone(), status).as_(token));
        cases.push(get("/api/v1/failures", "/api/v1/failures", status).as_(token));
        cases.push(get("/api/v1/compare", compare, status).as_(token));
    }
    cases.push(get("/api/v1/failures", "/api/v1/failures", StatusCode::OK));
    cases.push(get("/artifacts/{digest}", "/artifacts/abc", StatusCode::NOT_FOUND));
    d.r.table(&d.app, cases).await;
}

/// Whatever is wrong with a path or a query, the refusal is the API's own; an empty
/// filter is "any".
async fn refused_paths_and_queries(d: &mut Demo) {
    for (template, path) in [
        ("/api/v1/agents/{id}", "/api/v1/agents/%FF"),
        ("/api/v1/tasks/{id}", "/api/v1/tasks/%FF%FE"),
        ("/api/v1/runs/{id}", "/api/v1/runs/%C3"),
        (ENVELOPE, "/api/v1/submissions/%FF/envelope"),
        ("/artifacts/{digest}", "/artifacts/%FF"),
        ("/api/v1/changes", "/api/v1/changes?limit=0"),
        ("/api/v1/changes", "/api/v1/changes?limit=501"),
        ("/api/v1/changes", "/api/v1/changes?limit=9223372036854775808"),
        ("/api/v1/changes", "/api/v1/changes?before=0"),
        ("/api/v1/leaderboard", "/api/v1/leaderboard?tier=maintainer&tier=submitter"),
        ("/leaderboard.csv", "/leaderboard.csv?provenance=published&provenance=evaluated"),
    ] {
        let answer = d.r.one(&d.app, get(template, path, StatusCode::BAD_REQUEST)).await;
        let code = answer.json()["error"]["code"].as_str().unwrap().to_owned();
        assert!(code == "invalid_path" || code == "invalid_query", "{path}: {code}");
    }
    d.r.table(
        &d.app,
        vec![
            get("/api/v1/leaderboard", "/api/v1/leaderboard?tier=&provenance=", StatusCode::OK),
            get("/leaderboard.csv", "/leaderboard.csv?tier=&provenance=", StatusCode::OK),
        ],
    )
    .await;
}

/// The key registry, for an admin: listing, adding (the same key again, a body that is
/// not JSON, no content type, a body of another shape, not a key), revoking.
async fn key_registry(d: &mut Demo) {
    let new = SecretKey::generate().public_key().to_pem();
    let add = json!({"public_key": new, "owner": "New team", "tier": "submitter"});
    let bad = json!({"public_key": "not a key", "owner": "New team", "tier": "submitter"});
    let answers =
        d.r.table(
            &d.app,
            vec![
                get(KEYS, KEYS, StatusCode::OK).as_(TOKEN),
                get(KEYS, KEYS, StatusCode::UNAUTHORIZED).as_(WRONG),
                send_json("POST", KEYS, KEYS, add.clone(), StatusCode::CREATED).as_(TOKEN),
                send_json("POST", KEYS, KEYS, add, StatusCode::CONFLICT).as_(TOKEN),
            ],
        )
        .await;
    let keyid = answers[2].json()["key"]["keyid"].as_str().unwrap().to_owned();
    let not_json = d.r.send(&d.app, KEYS, truncated("POST", KEYS, Some(TOKEN), "{\"public_key\": ")).await;
    assert_eq!((not_json.status, not_json.code().as_str()), (StatusCode::BAD_REQUEST, "invalid_json"));
    let untyped =
        d.r.one(&d.app, Case::post(KEYS, KEYS, StatusCode::UNSUPPORTED_MEDIA_TYPE).as_(TOKEN)).await;
    assert_eq!(untyped.code(), "unsupported_media_type");
    let shape = json!({"owner": "New team", "tier": "submitter"});
    let shape =
        d.r.one(&d.app, send_json("POST", KEYS, KEYS, shape, StatusCode::UNPROCESSABLE_ENTITY).as_(TOKEN))
            .await;
    assert_eq!(shape.code(), "invalid_body");
    let revoke = "/api/v1/admin/keys/{keyid}/revoke";
    let path = format!("/api/v1/admin/keys/{keyid}/revoke");
    d.r.table(
        &d.app,
        vec![
            send_json("POST", KEYS, KEYS, bad.clone(), StatusCode::UNPROCESSABLE_ENTITY).as_(TOKEN),
            send_json("POST", KEYS, KEYS, bad, StatusCode::UNAUTHORIZED).as_(WRONG),
            Case::post(revoke, path.clone(), StatusCode::OK).as_(TOKEN),
            Case::post(revoke, path, StatusCode::UNAUTHORIZED).as_(WRONG),
            Case::post(revoke, "/api/v1/admin/keys/ffff/revoke", StatusCode::NOT_FOUND).as_(TOKEN),
            Case::post(revoke, "/api/v1/admin/keys/%FF/revoke", StatusCode::BAD_REQUEST).as_(TOKEN),
        ],
    )
    .await;
}

/// The review of findings: the demo's shortcut agent carries some.
async fn findings_review(d: &mut Demo) {
    let listed = d.r.one(&d.app, get(FINDINGS, FINDINGS, StatusCode::OK).as_(TOKEN)).await;
    let id =
        listed.json()["findings"][0]["finding"]["id"].as_str().expect("the demo has a finding").to_owned();
    d.r.one(&d.app, get(FINDINGS, "/api/v1/admin/findings?status=all&limit=5", StatusCode::OK).as_(TOKEN))
        .await;
    for query in ["?status=maybe", "?limit=0", "?limit=1001", "?limit=x"] {
        let answer =
            d.r.one(&d.app, get(FINDINGS, format!("{FINDINGS}{query}"), StatusCode::BAD_REQUEST).as_(TOKEN))
                .await;
        assert_eq!(answer.code(), "invalid_query", "{query}");
    }
    d.r.one(&d.app, get(FINDINGS, FINDINGS, StatusCode::UNAUTHORIZED).as_(WRONG)).await;
    let review = "/api/v1/admin/findings/{id}/review";
    let path = format!("/api/v1/admin/findings/{id}/review");
    let verdict = json!({"verdict": "confirmed", "note": "prints the accuracy the task expects"});
    let answers =
        d.r.table(
            &d.app,
            vec![
                send_json("POST", review, path.clone(), verdict.clone(), StatusCode::OK).as_(TOKEN),
                send_json("POST", review, path.clone(), verdict.clone(), StatusCode::UNAUTHORIZED).as_(WRONG),
                send_json(
                    "POST",
                    review,
                    "/api/v1/admin/findings/99999999-server-0/review",
                    verdict,
                    StatusCode::NOT_FOUND,
                )
                .as_(TOKEN),
                send_json(
                    "POST",
                    review,
                    path.clone(),
                    json!({"verdict": "maybe", "note": "n"}),
                    StatusCode::UNPROCESSABLE_ENTITY,
                )
                .as_(TOKEN),
                Case::post(review, path.clone(), StatusCode::UNSUPPORTED_MEDIA_TYPE).as_(TOKEN),
            ],
        )
        .await;
    assert_eq!(answers[0].json()["finding"]["finding"]["review"]["verdict"], json!("confirmed"));
    assert_eq!(answers[3].code(), "invalid_verdict");
    let not_json = d.r.send(&d.app, review, truncated("POST", &path, Some(TOKEN), "{\"verdict\": ")).await;
    assert_eq!(not_json.status, StatusCode::BAD_REQUEST);
    d.r.one(&d.app, get("/api/v1/leaderboard", "/api/v1/leaderboard?integrity=strict", StatusCode::OK)).await;
    let lax = d
        .r
        .one(&d.app, get("/api/v1/leaderboard", "/api/v1/leaderboard?integrity=lax", StatusCode::BAD_REQUEST))
        .await;
    assert_eq!(lax.code(), "invalid_query");
}

/// Who may read each task's outputs, and who read private ones.
async fn outputs_and_access_log(d: &mut Demo) {
    let public = json!({"outputs": "public", "reason": "as the card says"});
    let r = json!({"outputs": "public", "reason": "r"});
    let put = |path: &str, body: Option<Value>, status| Case {
        method: "PUT",
        template: SET_OUTPUTS,
        path: path.to_owned(),
        token: None,
        body,
        status,
    };
    d.r.table(
        &d.app,
        vec![
            get(OUTPUTS, OUTPUTS, StatusCode::OK).as_(TOKEN),
            get(OUTPUTS, OUTPUTS, StatusCode::UNAUTHORIZED).as_(WRONG),
            put(WORDFREQ_OUTPUTS, Some(public), StatusCode::OK).as_(TOKEN),
            put(WORDFREQ_OUTPUTS, Some(r.clone()), StatusCode::UNAUTHORIZED).as_(WRONG),
            put("/api/v1/admin/tasks/nothing/outputs", Some(r.clone()), StatusCode::NOT_FOUND).as_(TOKEN),
            put("/api/v1/admin/tasks/%FF/outputs", Some(r), StatusCode::BAD_REQUEST).as_(TOKEN),
            put(
                WORDFREQ_OUTPUTS,
                Some(json!({"outputs": "open", "reason": "r"})),
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .as_(TOKEN),
            put(WORDFREQ_OUTPUTS, None, StatusCode::UNSUPPORTED_MEDIA_TYPE).as_(TOKEN),
        ],
    )
    .await;
    let not_json =
        d.r.send(&d.app, SET_OUTPUTS, truncated("PUT", WORDFREQ_OUTPUTS, Some(TOKEN), "{\"outputs\": "))
            .await;
    assert_eq!(not_json.status, StatusCode::BAD_REQUEST);
    d.r.table(
        &d.app,
        vec![
            get(ACCESS_LOG, ACCESS_LOG, StatusCode::OK).as_(TOKEN),
            get(ACCESS_LOG, "/api/v1/admin/access-log?limit=0", StatusCode::BAD_REQUEST).as_(TOKEN),
            get(ACCESS_LOG, ACCESS_LOG, StatusCode::UNAUTHORIZED).as_(WRONG),
        ],
    )
    .await;
}

/// The answer to a sign-in challenge, signed by `key`.
fn signature(key: &SecretKey, nonce: &str, keyid: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .encode(key.sign(format!("rexbench-login/v1\n{nonce}\n{keyid}\n").as_bytes()))
}

/// Signing in: a challenge, its signed answer, who that is, what a session may and may
/// not read, signing out.
async fn signing_in(d: &mut Demo) {
    let owner_id = d.owner.public_key().keyid().to_string();
    let issued = d
        .r
        .one(&d.app, send_json("POST", CHALLENGE, CHALLENGE, json!({"keyid": owner_id}), StatusCode::CREATED))
        .await;
    let nonce = issued.json()["challenge"].as_str().unwrap().to_owned();
    let revoked = SecretKey::generate();
    d.store.add_key(&revoked.public_key(), "Revoked team", Tier::Submitter).await.unwrap();
    d.store.revoke_key(&revoked.public_key().keyid().to_string()).await.unwrap();
    let stranger_id = d.stranger.public_key().keyid().to_string();
    let answer =
        |keyid: &str, signature: String| json!({"keyid": keyid, "challenge": nonce, "signature": signature});
    d.r.table(
        &d.app,
        vec![
            send_json("POST", CHALLENGE, CHALLENGE, json!({"keyid": stranger_id}), StatusCode::NOT_FOUND),
            send_json(
                "POST",
                CHALLENGE,
                CHALLENGE,
                json!({"keyid": revoked.public_key().keyid().to_string()}),
                StatusCode::UNAUTHORIZED,
            ),
            send_json("POST", CHALLENGE, CHALLENGE, json!({"key": "x"}), StatusCode::UNPROCESSABLE_ENTITY),
        ],
    )
    .await;
    let cut = d.r.send(&d.app, CHALLENGE, truncated("POST", CHALLENGE, None, "{\"keyid\": ")).await;
    assert_eq!(cut.status, StatusCode::BAD_REQUEST);
    let untyped = Request::post(CHALLENGE).body(Body::from("{}")).unwrap();
    assert_eq!(d.r.send(&d.app, CHALLENGE, untyped).await.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    d.r.table(
        &d.app,
        vec![
            send_json(
                "POST",
                LOGIN,
                LOGIN,
                answer(&owner_id, signature(&d.other, &nonce, &owner_id)),
                StatusCode::UNAUTHORIZED,
            ),
            send_json(
                "POST",
                LOGIN,
                LOGIN,
                answer(&stranger_id, signature(&d.stranger, &nonce, "x")),
                StatusCode::NOT_FOUND,
            ),
            send_json("POST", LOGIN, LOGIN, json!({"keyid": owner_id}), StatusCode::UNPROCESSABLE_ENTITY),
        ],
    )
    .await;
    let cut = d.r.send(&d.app, LOGIN, truncated("POST", LOGIN, None, "{\"keyid\": ")).await;
    assert_eq!(cut.status, StatusCode::BAD_REQUEST);
    let untyped = Request::post(LOGIN).body(Body::from("{}")).unwrap();
    assert_eq!(d.r.send(&d.app, LOGIN, untyped).await.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let session =
        d.r.one(
            &d.app,
            send_json(
                "POST",
                LOGIN,
                LOGIN,
                answer(&owner_id, signature(&d.owner, &nonce, &owner_id)),
                StatusCode::CREATED,
            ),
        )
        .await;
    let token = session.json()["token"].as_str().unwrap().to_owned();
    // An envelope stored before findings' words left manifests (spec §4g), another
    // team's: withheld from anyone (401) and from this session (403).
    let old = crate::secrecy::store_old_bundle(&d.store, &d.other, "othello", "old-envelope").await;
    let old_path = format!("/api/v1/submissions/{old}/envelope");
    // Signed in, and still not theirs: a demo run's private output.
    let demo_private = {
        let page =
            String::from_utf8(crate::harness::get(&d.app, "/agents/example-agent?task=csvstats").await.body)
                .unwrap();
        let run: i64 =
            page.split("href=\"/runs/").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        let detail = crate::harness::get(&d.app, &format!("/api/v1/runs/{run}")).await.json();
        format!("/artifacts/{}", detail["artifacts"][0]["digest"].as_str().unwrap())
    };
    let logout = "/api/v1/logout";
    d.r.table(
        &d.app,
        vec![
            get(ENVELOPE, old_path.clone(), StatusCode::UNAUTHORIZED),
            get(ENVELOPE, old_path, StatusCode::FORBIDDEN).as_(&token),
            get(LOGIN, LOGIN, StatusCode::OK),
            get(LOGIN, LOGIN, StatusCode::OK).as_(&token),
            get(LOGIN, LOGIN, StatusCode::UNAUTHORIZED).as_("rxs_forged"),
            get("/api/v1/agents/{id}", "/api/v1/agents/contract-agent", StatusCode::UNAUTHORIZED)
                .as_("rxs_forged"),
            get("/artifacts/{digest}", demo_private, StatusCode::FORBIDDEN).as_(&token),
            Case::post(logout, logout, StatusCode::NO_CONTENT).as_(&token),
            Case::post(logout, logout, StatusCode::UNAUTHORIZED).as_(&token),
        ],
    )
    .await;
}

/// A key request's challenge answered by `key`.
fn request_signature(key: &SecretKey, nonce: &str) -> String {
    use base64::Engine as _;
    let keyid = key.public_key().keyid().to_string();
    base64::engine::general_purpose::STANDARD
        .encode(key.sign(format!("rexbench-key-request/v1\n{nonce}\n{keyid}\n").as_bytes()))
}

/// Key requests: a challenge, the signed request, its status, a bundle held while it is
/// pending, the maintainers' list, an approval and a decline, and each refusal.
async fn key_requests(d: &mut Demo) {
    let (ok, created) = (StatusCode::OK, StatusCode::CREATED);
    let fresh = SecretKey::generate();
    let pem = fresh.public_key().to_pem();
    let issued =
        d.r.one(
            &d.app,
            send_json("POST", REQUEST_CHALLENGE, REQUEST_CHALLENGE, json!({"public_key": pem}), created),
        )
        .await;
    let nonce = issued.json()["challenge"].as_str().unwrap().to_owned();
    let owner_pem = d.owner.public_key().to_pem();
    let request = |pem: &str, owner: &str, nonce: &str, signature: String| {
        json!({"public_key": pem, "owner": owner, "contact": "team@lab.org", "url": "https://lab.org",
               "note": "a note", "challenge": nonce, "signature": signature})
    };
    let (conflict, bad, unprocessable) =
        (StatusCode::CONFLICT, StatusCode::BAD_REQUEST, StatusCode::UNPROCESSABLE_ENTITY);
    d.r.table(
        &d.app,
        vec![
            send_json(
                "POST",
                REQUEST_CHALLENGE,
                REQUEST_CHALLENGE,
                json!({"public_key": owner_pem}),
                conflict,
            ),
            send_json(
                "POST",
                REQUEST_CHALLENGE,
                REQUEST_CHALLENGE,
                json!({"public_key": "x"}),
                unprocessable,
            ),
            send_json("POST", REQUEST_CHALLENGE, REQUEST_CHALLENGE, json!({"key": "x"}), unprocessable),
            send_json(
                "POST",
                REQUESTS,
                REQUESTS,
                request(&pem, "Lab", &nonce, request_signature(&d.other, &nonce)),
                StatusCode::UNAUTHORIZED,
            ),
            send_json(
                "POST",
                REQUESTS,
                REQUESTS,
                request(&pem, "Verified Lab", &nonce, request_signature(&fresh, &nonce)),
                unprocessable,
            ),
            send_json(
                "POST",
                REQUESTS,
                REQUESTS,
                request(&owner_pem, "Lab", &nonce, request_signature(&d.owner, &nonce)),
                conflict,
            ),
            send_json("POST", REQUESTS, REQUESTS, json!({"owner": "Lab"}), unprocessable),
        ],
    )
    .await;
    for template in [REQUEST_CHALLENGE, REQUESTS] {
        let cut = d.r.send(&d.app, template, truncated("POST", template, None, "{\"public_key\": ")).await;
        assert_eq!(cut.status, bad);
        let untyped = Request::post(template).body(Body::from("{}")).unwrap();
        assert_eq!(d.r.send(&d.app, template, untyped).await.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }
    let filed =
        d.r.one(
            &d.app,
            send_json(
                "POST",
                REQUESTS,
                REQUESTS,
                request(&pem, "Lab of Contracts", &nonce, request_signature(&fresh, &nonce)),
                created,
            ),
        )
        .await;
    let id = filed.json()["request"]["id"].as_i64().unwrap();
    // Its key submits while pending: held (202).
    let held =
        d.r.submit(&d.app, GZ, Body::from(signed(&fresh, "pending-agent", "2026-11-20T12:00:00Z"))).await;
    assert_eq!(held.status, StatusCode::ACCEPTED, "{}", String::from_utf8_lossy(&held.body));
    let path = format!("/api/v1/key-requests/{id}");
    let keyid = fresh.public_key().keyid().to_string();
    // A second request, to decline.
    let second = SecretKey::generate();
    let issued =
        d.r.one(
            &d.app,
            send_json(
                "POST",
                REQUEST_CHALLENGE,
                REQUEST_CHALLENGE,
                json!({"public_key": second.public_key().to_pem()}),
                created,
            ),
        )
        .await;
    let nonce2 = issued.json()["challenge"].as_str().unwrap().to_owned();
    let filed2 =
        d.r.one(
            &d.app,
            send_json(
                "POST",
                REQUESTS,
                REQUESTS,
                request(
                    &second.public_key().to_pem(),
                    "Lab Two",
                    &nonce2,
                    request_signature(&second, &nonce2),
                ),
                created,
            ),
        )
        .await;
    let id2 = filed2.json()["request"]["id"].as_i64().unwrap();
    let approve = format!("/api/v1/admin/key-requests/{id}/approve");
    let decline = format!("/api/v1/admin/key-requests/{id2}/decline");
    d.r.table(
        &d.app,
        vec![
            get(REQUEST, path.clone(), ok),
            get(REQUEST, format!("/api/v1/key-requests/{keyid}"), ok),
            get(REQUEST, path.clone(), ok).as_(TOKEN),
            get(REQUEST, path.clone(), StatusCode::UNAUTHORIZED).as_("rxs_forged"),
            get(REQUEST, "/api/v1/key-requests/0", bad),
            get(REQUEST, "/api/v1/key-requests/99999", StatusCode::NOT_FOUND),
            get(ADMIN_REQUESTS, ADMIN_REQUESTS, ok).as_(TOKEN),
            get(ADMIN_REQUESTS, "/api/v1/admin/key-requests?status=all&page=2&per_page=1", ok).as_(TOKEN),
            get(ADMIN_REQUESTS, "/api/v1/admin/key-requests?status=maybe", bad).as_(TOKEN),
            get(ADMIN_REQUESTS, ADMIN_REQUESTS, StatusCode::UNAUTHORIZED).as_(WRONG),
            send_json("POST", APPROVE, approve.clone(), json!({"tier": "gold"}), unprocessable).as_(TOKEN),
            send_json(
                "POST",
                APPROVE,
                approve.clone(),
                json!({"tier": "submitter"}),
                StatusCode::UNAUTHORIZED,
            )
            .as_(WRONG),
            send_json(
                "POST",
                APPROVE,
                "/api/v1/admin/key-requests/99999/approve",
                json!({"tier": "submitter"}),
                StatusCode::NOT_FOUND,
            )
            .as_(TOKEN),
            send_json(
                "POST",
                APPROVE,
                "/api/v1/admin/key-requests/x/approve",
                json!({"tier": "submitter"}),
                bad,
            )
            .as_(TOKEN),
            send_json("POST", APPROVE, approve.clone(), json!({"tier": "submitter"}), ok).as_(TOKEN),
            send_json("POST", APPROVE, approve.clone(), json!({"tier": "submitter"}), conflict).as_(TOKEN),
            send_json("POST", DECLINE, decline.clone(), json!({"reason": " "}), unprocessable).as_(TOKEN),
            send_json("POST", DECLINE, decline.clone(), json!({"reason": "no"}), StatusCode::UNAUTHORIZED)
                .as_(WRONG),
            send_json(
                "POST",
                DECLINE,
                "/api/v1/admin/key-requests/99999/decline",
                json!({"reason": "no"}),
                StatusCode::NOT_FOUND,
            )
            .as_(TOKEN),
            send_json("POST", DECLINE, "/api/v1/admin/key-requests/x/decline", json!({"reason": "no"}), bad)
                .as_(TOKEN),
            send_json("POST", DECLINE, decline.clone(), json!({"reason": "not an agent"}), ok).as_(TOKEN),
            send_json("POST", DECLINE, decline.clone(), json!({"reason": "again"}), conflict).as_(TOKEN),
        ],
    )
    .await;
    for (template, path, cut) in [(APPROVE, approve, "{\"tier\": "), (DECLINE, decline, "{\"reason\": ")] {
        let cut = d.r.send(&d.app, template, truncated("POST", &path, Some(TOKEN), cut)).await;
        assert_eq!(cut.status, bad);
        let untyped = Case::post(template, path, StatusCode::UNSUPPORTED_MEDIA_TYPE).as_(TOKEN);
        d.r.one(&d.app, untyped).await;
    }
    // The held bundle is on the board now: its agent answers.
    d.r.one(&d.app, get("/api/v1/agents/{id}", "/api/v1/agents/pending-agent", ok)).await;
    d.r.one(&d.app, get("/changes.atom", "/changes.atom", ok)).await;
}

/// Held-out variants and task sets registered (and a variant retired) over HTTP.
async fn registrations(d: &mut Demo) {
    let (ok, created, bad, unprocessable) =
        (StatusCode::OK, StatusCode::CREATED, StatusCode::BAD_REQUEST, StatusCode::UNPROCESSABLE_ENTITY);
    let variant = json!({"task": "csvstats", "digest": "cd".repeat(32), "note": "a held-out variant"});
    let set =
        json!({"digest": "ef".repeat(32), "name": "RExBench", "version": "2.0", "note": "the next set"});
    d.r.table(
        &d.app,
        vec![
            send_json("POST", VARIANTS, VARIANTS, variant.clone(), created).as_(TOKEN),
            send_json("POST", VARIANTS, VARIANTS, variant.clone(), ok).as_(TOKEN),
            send_json(
                "POST",
                VARIANTS,
                VARIANTS,
                json!({"task": "nothing", "digest": "cd".repeat(32), "note": "n"}),
                unprocessable,
            )
            .as_(TOKEN),
            send_json("POST", VARIANTS, VARIANTS, variant.clone(), StatusCode::UNAUTHORIZED).as_(WRONG),
            send_json("POST", RETIRE, RETIRE, variant.clone(), ok).as_(TOKEN),
            send_json(
                "POST",
                RETIRE,
                RETIRE,
                json!({"task": "csvstats", "digest": "00".repeat(32), "note": "n"}),
                unprocessable,
            )
            .as_(TOKEN),
            send_json("POST", RETIRE, RETIRE, variant, StatusCode::UNAUTHORIZED).as_(WRONG),
            send_json("POST", TASK_SETS, TASK_SETS, set.clone(), created).as_(TOKEN),
            send_json("POST", TASK_SETS, TASK_SETS, set.clone(), ok).as_(TOKEN),
            send_json(
                "POST",
                TASK_SETS,
                TASK_SETS,
                json!({"digest": "x", "name": "n", "version": "v", "note": "n"}),
                unprocessable,
            )
            .as_(TOKEN),
            send_json("POST", TASK_SETS, TASK_SETS, set, StatusCode::UNAUTHORIZED).as_(WRONG),
        ],
    )
    .await;
    for (template, cut) in [(VARIANTS, "{\"task\": "), (RETIRE, "{\"task\": "), (TASK_SETS, "{\"digest\": ")]
    {
        let cut = d.r.send(&d.app, template, truncated("POST", template, Some(TOKEN), cut)).await;
        assert_eq!(cut.status, bad);
        d.r.one(&d.app, Case::post(template, template, StatusCode::UNSUPPORTED_MEDIA_TYPE).as_(TOKEN)).await;
    }
}

/// Admin over HTTP switched off: every admin endpoint is not there.
async fn admin_switched_off(d: &mut Demo) {
    let (off, _) = server_with(&d.tmp.path().join("off"), |s| s.admin_token = None).await;
    let bad = json!({"public_key": "not a key", "owner": "New team", "tier": "submitter"});
    let missing = StatusCode::NOT_FOUND;
    d.r.table(
        &off,
        vec![
            send_json("GET", OUTPUTS, OUTPUTS, json!({}), missing).as_("x"),
            send_json("PUT", SET_OUTPUTS, WORDFREQ_OUTPUTS, json!({}), missing).as_("x"),
            send_json("GET", ACCESS_LOG, ACCESS_LOG, json!({}), missing).as_("x"),
            get(KEYS, KEYS, missing).as_("x"),
            send_json("POST", KEYS, KEYS, bad, missing).as_("x"),
            get(FINDINGS, FINDINGS, missing).as_("x"),
            get(QUEUE, QUEUE, missing).as_("x"),
            get(ADMIN_REQUESTS, ADMIN_REQUESTS, missing).as_("x"),
            send_json(
                "POST",
                APPROVE,
                "/api/v1/admin/key-requests/1/approve",
                json!({"tier": "submitter"}),
                missing,
            )
            .as_("x"),
            send_json(
                "POST",
                DECLINE,
                "/api/v1/admin/key-requests/1/decline",
                json!({"reason": "r"}),
                missing,
            )
            .as_("x"),
            send_json("POST", VARIANTS, VARIANTS, json!({}), missing).as_("x"),
            send_json("POST", RETIRE, RETIRE, json!({}), missing).as_("x"),
            send_json("POST", TASK_SETS, TASK_SETS, json!({}), missing).as_("x"),
        ],
    )
    .await;
}

/// Limits: size, time, rate; sign-in attempts and refused credentials (a guessed
/// session, a wrong admin token) have the same allowance per address.
async fn limits(d: &mut Demo) {
    let owner = &d.owner;
    let (small, _) = server_with(&d.tmp.path().join("small"), |s| s.limits.compressed = 100).await;
    let big = signed(owner, "big", "2026-11-20T12:00:00Z");
    assert_eq!(d.r.submit(&small, GZ, Body::from(big)).await.status, StatusCode::PAYLOAD_TOO_LARGE);
    let (slow, seeded_slow) = server_with(&d.tmp.path().join("slow"), |s| {
        s.guard = Guard::new(Limits { body_idle: Duration::from_secs(1), ..Limits::default() })
    })
    .await;
    seeded_slow.add_key(&owner.public_key(), "Contract team", Tier::Submitter).await.unwrap();
    let half = signed(owner, "slow", "2026-11-20T12:00:00Z");
    let stalled = stalled(half[..half.len() / 2].to_vec());
    assert_eq!(d.r.submit(&slow, GZ, stalled).await.status, StatusCode::REQUEST_TIMEOUT);
    let (busy, seeded_busy) = server_with(&d.tmp.path().join("busy"), |s| {
        s.guard = Guard::new(Limits { per_address_hourly: 4, ..Limits::default() })
    })
    .await;
    seeded_busy.add_key(&owner.public_key(), "Contract team", Tier::Submitter).await.unwrap();
    for (n, status) in [(1, StatusCode::CREATED), (2, StatusCode::TOO_MANY_REQUESTS)] {
        let b = signed(owner, &format!("agent-{n}"), "2026-11-20T12:00:00Z");
        assert_eq!(d.r.submit(&busy, GZ, Body::from(b)).await.status, status);
    }
    let (guarded, _) = server_with(&d.tmp.path().join("guarded"), |s| {
        s.guard = Guard::new(Limits { per_address_hourly: 4, ..Limits::default() })
    })
    .await;
    let owner_id = owner.public_key().keyid().to_string();
    let limited = StatusCode::TOO_MANY_REQUESTS;
    let mut cases = vec![
        send_json("POST", CHALLENGE, CHALLENGE, json!({"keyid": owner_id}), StatusCode::NOT_FOUND),
        send_json("POST", CHALLENGE, CHALLENGE, json!({"keyid": owner_id}), limited),
        send_json(
            "POST",
            LOGIN,
            LOGIN,
            json!({"keyid": owner_id, "challenge": "x", "signature": "y"}),
            limited,
        ),
    ];
    for (template, path) in [
        (LOGIN, LOGIN),
        ("/api/v1/runs/{id}", "/api/v1/runs/1"),
        ("/api/v1/failures", "/api/v1/failures"),
        ("/api/v1/compare", "/api/v1/compare?a=x&b=y"),
        ("/api/v1/agents/{id}", "/api/v1/agents/x"),
        ("/artifacts/{digest}", "/artifacts/ab"),
        (ENVELOPE, "/api/v1/submissions/ab/envelope"),
    ] {
        cases.push(get(template, path, limited).as_("rxs_guess"));
    }
    let review = json!({"verdict": "confirmed", "note": "n"});
    let key = json!({"public_key": "x", "owner": "o", "tier": "submitter"});
    let outputs = json!({"outputs": "public", "reason": "r"});
    cases.extend([
        get(ACCESS_LOG, ACCESS_LOG, limited).as_(WRONG),
        get(FINDINGS, FINDINGS, limited).as_(WRONG),
        get(KEYS, KEYS, limited).as_(WRONG),
        get(OUTPUTS, OUTPUTS, limited).as_(WRONG),
        get(QUEUE, QUEUE, limited).as_(WRONG),
        send_json(
            "POST",
            "/api/v1/admin/findings/{id}/review",
            "/api/v1/admin/findings/1-server-0/review",
            review,
            limited,
        )
        .as_(WRONG),
        send_json("POST", KEYS, KEYS, key, limited).as_(WRONG),
        Case::post("/api/v1/admin/keys/{keyid}/revoke", "/api/v1/admin/keys/ab/revoke", limited).as_(WRONG),
        send_json("PUT", SET_OUTPUTS, "/api/v1/admin/tasks/csvstats/outputs", outputs, limited).as_(WRONG),
        send_json("POST", REQUEST_CHALLENGE, REQUEST_CHALLENGE, json!({"public_key": "x"}), limited),
        send_json("POST", REQUESTS, REQUESTS, json!({"public_key": "x", "owner": "o", "contact": "a@b.org", "challenge": "c", "signature": "s"}), limited),
        get(REQUEST, "/api/v1/key-requests/1", limited).as_("rxs_guess"),
        get(ADMIN_REQUESTS, ADMIN_REQUESTS, limited).as_(WRONG),
        send_json("POST", APPROVE, "/api/v1/admin/key-requests/1/approve", json!({"tier": "submitter"}), limited).as_(WRONG),
        send_json("POST", DECLINE, "/api/v1/admin/key-requests/1/decline", json!({"reason": "r"}), limited).as_(WRONG),
        send_json("POST", VARIANTS, VARIANTS, json!({}), limited).as_(WRONG),
        send_json("POST", RETIRE, RETIRE, json!({}), limited).as_(WRONG),
        send_json("POST", TASK_SETS, TASK_SETS, json!({}), limited).as_(WRONG),
    ]);
    d.r.table(&guarded, cases).await;
}

/// The server's own failures: a table gone from its database.
async fn own_failures(d: &mut Demo) {
    let broken_dir = d.tmp.path().join("broken");
    let (broken, seeded_broken) = server_with(&broken_dir, |_| {}).await;
    seeded_broken.add_key(&d.owner.public_key(), "Contract team", Tier::Submitter).await.unwrap();
    drop_table(&broken_dir, "totals").await;
    d.r.one(&broken, get("/api/v1/leaderboard", "/api/v1/leaderboard", StatusCode::INTERNAL_SERVER_ERROR))
        .await;
    let b = signed(&d.owner, "unlucky", "2026-11-20T12:00:00Z");
    assert_eq!(d.r.submit(&broken, GZ, Body::from(b)).await.status, StatusCode::INTERNAL_SERVER_ERROR);
}

/// The artifact store away (a real S3 server, stopped), and a blob gone from it. (A
/// maintainer asks: the bundle's outputs are RExBench's, private.)
async fn artifact_store_away(d: &mut Demo) {
    let mut s3 = store::testing::S3Server::start();
    let stored_dir = d.tmp.path().join("s3");
    let state = crate::harness::state_with(
        &Backend::Sqlite { path: stored_dir.join("db.sqlite") },
        s3.blobs(&stored_dir.join("staging")),
    )
    .await;
    state.store.add_key(&d.owner.public_key(), "Contract team", Tier::Submitter).await.unwrap();
    let blobs = state.store.blobs().clone();
    let on_s3 = server::build_app(state);
    let b = signed(&d.owner, "on-s3", "2026-11-20T12:00:00Z");
    assert_eq!(d.r.submit(&on_s3, GZ, Body::from(b)).await.status, StatusCode::CREATED);
    let digest = blobs.list().await.unwrap()[0];
    let artifact = format!("/artifacts/{digest}");
    s3.stop();
    d.r.one(&on_s3, get("/artifacts/{digest}", artifact.clone(), StatusCode::SERVICE_UNAVAILABLE).as_(TOKEN))
        .await;
    let b = signed(&d.owner, "on-s3-later", "2026-11-20T12:00:00Z");
    assert_eq!(d.r.submit(&on_s3, GZ, Body::from(b)).await.status, StatusCode::SERVICE_UNAVAILABLE);
    s3.restart();
    blobs.remove(&digest).await.unwrap();
    d.r.one(&on_s3, get("/artifacts/{digest}", artifact, StatusCode::INTERNAL_SERVER_ERROR).as_(TOKEN)).await;
}

/// Every answer recorded, checked against the document by openapi-core: none fails it,
/// none is undocumented, and every documented answer but those provoked elsewhere was
/// provoked.
fn independent_check(d: Demo, document: Value) {
    let input = d.tmp.path().join("contract.json");
    fs::write(&input, serde_json::to_vec(&json!({"document": document, "cases": d.r.cases})).unwrap())
        .unwrap();
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
