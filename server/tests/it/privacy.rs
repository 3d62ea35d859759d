//! Private outputs, public proof: a crawler that starts at `/` of the demo (whose
//! csvstats runs are private, as RExBench's are) and follows every link, API answer,
//! CSV and artifact reference as an anonymous client meets no 32-byte window of any
//! private artifact, and is refused every private artifact; a maintainer reaches them.
//! A maintainer publishes a task's outputs and makes them private again, in the change
//! log; answers for a reader with credentials are never cached.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use futures::StreamExt as _;
use regex::Regex;
use serde_json::Value;
use store::testing::for_each_backend;
use store::{Backend, Digest};
use views::access::Reader;

use crate::harness::{Answer, get, send, state};

const TOKEN: &str = "s3cret-token";
/// The window the issue names: no 32 bytes of a private output in a public answer.
const WINDOW: usize = 32;
/// Windows are found through aligned blocks of this many bytes: any 32-byte run holds
/// one whole block that starts at a multiple of 16 in the answer.
const BLOCK: usize = 16;

/// The bytes of every artifact, sorted by whether anyone may read them.
struct Outputs {
    private: Vec<(String, Vec<u8>)>,
    public: Vec<Vec<u8>>,
    /// Of the private ones, those that show a private check (the maintainers' alone).
    gold: BTreeSet<String>,
}

async fn outputs(state: &server::AppState) -> Outputs {
    let access = views::access::load(&state.store, &state.catalog, &Reader::Public).await.unwrap();
    let (mut private, mut public, mut gold) = (Vec::new(), Vec::new(), BTreeSet::new());
    for hex in state.store.artifact_digests().await.unwrap() {
        let uses = state.store.artifact_uses(&hex).await.unwrap();
        let mut stream = state.store.blobs().read(&Digest::from_hex(&hex).unwrap()).await.unwrap();
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            bytes.extend_from_slice(&chunk.unwrap());
        }
        if uses.iter().all(|u| access.reveals_gold(u.task.as_str(), &u.role, u.reproduction)) {
            gold.insert(hex.clone());
        }
        if access.may_read_artifact(&uses) {
            public.push(bytes);
        } else {
            private.push((hex, bytes));
        }
    }
    Outputs { private, public, gold }
}

/// Every 16-byte block of the private outputs that no public output also holds, with
/// where it stands, to find a 32-byte window of private text in an answer quickly.
struct Finder<'a> {
    private: &'a [(String, Vec<u8>)],
    blocks: HashMap<&'a [u8], Vec<(usize, usize)>>,
    public: HashSet<&'a [u8]>,
}

impl<'a> Finder<'a> {
    fn new(outputs: &'a Outputs) -> Finder<'a> {
        let public: HashSet<&[u8]> = outputs.public.iter().flat_map(|b| b.windows(WINDOW)).collect();
        let mut blocks: HashMap<&[u8], Vec<(usize, usize)>> = HashMap::new();
        for (i, (_, bytes)) in outputs.private.iter().enumerate() {
            for (at, block) in bytes.windows(BLOCK).enumerate() {
                blocks.entry(block).or_default().push((i, at));
            }
        }
        Finder { private: &outputs.private, blocks, public }
    }

    /// A window of private text that `body` holds (and no public output does).
    fn leak(&self, body: &[u8]) -> Option<String> {
        for start in (0..body.len().saturating_sub(BLOCK - 1)).step_by(BLOCK) {
            let Some(places) = self.blocks.get(&body[start..start + BLOCK]) else { continue };
            for &(i, at) in places {
                let text = &self.private[i].1;
                // Extend the match both ways, then look for a window of it no public
                // output holds.
                let mut left = 0;
                while left < at && left < start && text[at - left - 1] == body[start - left - 1] {
                    left += 1;
                }
                let mut right = BLOCK;
                while at + right < text.len()
                    && start + right < body.len()
                    && text[at + right] == body[start + right]
                {
                    right += 1;
                }
                let common = &text[at - left..at + right];
                if let Some(w) = common.windows(WINDOW).find(|w| !self.public.contains(w)) {
                    return Some(format!("{} holds {:?}", self.private[i].0, String::from_utf8_lossy(w)));
                }
            }
        }
        None
    }
}

const START: [&str; 23] = [
    "/",
    "/?tasks=public",
    "/?integrity=strict",
    "/tasks",
    "/failures",
    "/changes",
    "/about",
    "/keys",
    "/compare",
    "/compare?a=example-agent&b=openhands-1.4.0-claude-sonnet-4.5-harbor",
    "/parity",
    "/robots.txt",
    "/api/v1/leaderboard",
    "/api/v1/tasks",
    "/api/v1/changes?limit=500",
    "/api/v1/failures",
    "/api/v1/keys",
    "/api/v1/openapi.json",
    "/leaderboard.csv",
    "/leaderboard.csv?integrity=strict",
    "/changes.atom",
    "/keys/request?id=1",
    "/api/v1/key-requests/1",
];

/// Every answer an anonymous client reaches from [`START`]: pages' links, the API twin
/// of each agent, task and run page, and every run, agent and artifact an API answer
/// names. Board variants of one page (its sort and filters) are followed for a few.
async fn crawl(app: &Router) -> Vec<(String, Answer)> {
    crawl_as(app, None).await
}

/// [`crawl`], each request carrying `credential` (a header: the admin token, a session's
/// cookie), if any.
pub(crate) async fn crawl_as(app: &Router, credential: Option<(&str, &str)>) -> Vec<(String, Answer)> {
    let link = Regex::new(r##"(?:href|src|action)="(/[^"#]*)""##).unwrap();
    let mut queue: VecDeque<String> = START.iter().map(|s| s.to_string()).collect();
    let mut seen: HashSet<String> = queue.iter().cloned().collect();
    let mut variants: HashMap<String, usize> = HashMap::new();
    let mut answers = Vec::new();
    let mut add = |path: String, queue: &mut VecDeque<String>| {
        let path = path.replace("&amp;", "&");
        if path.starts_with("/pkg/") || path.starts_with("/style/") || !seen.insert(path.clone()) {
            return;
        }
        // The same page under other query strings shows the same rows in another order.
        if let Some((bare, _)) = path.split_once('?') {
            let n = variants.entry(bare.to_owned()).or_default();
            *n += 1;
            if *n > 6 && !bare.starts_with("/api/") {
                return;
            }
        }
        queue.push_back(path);
    };
    while let Some(path) = queue.pop_front() {
        let mut request = Request::get(&path);
        if let Some((name, value)) = credential {
            request = request.header(name, value);
        }
        let answer = send(app, request.body(Body::empty()).unwrap()).await;
        let media = answer.header(header::CONTENT_TYPE).to_owned();
        let text = String::from_utf8_lossy(&answer.body).into_owned();
        if media.starts_with("text/html") {
            for c in link.captures_iter(&text) {
                let found = c[1].to_owned();
                if let Some(twin) = api_twin(&found) {
                    add(twin, &mut queue);
                }
                add(found, &mut queue);
            }
        } else if media.starts_with("application/json")
            && let Ok(doc) = serde_json::from_slice::<Value>(&answer.body)
        {
            let mut found = Vec::new();
            json_links(&doc, &mut found);
            for f in found {
                add(f, &mut queue);
            }
        }
        answers.push((path, answer));
    }
    answers
}

fn api_twin(link: &str) -> Option<String> {
    let (path, query) = link.split_once('?').unwrap_or((link, ""));
    if path == "/compare" && query.contains("a=") && query.contains("b=") {
        return Some(format!("/api/v1/compare?{query}"));
    }
    let mut parts = path.trim_start_matches('/').split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(kind @ ("agents" | "tasks" | "runs")), Some(id), None) => Some(format!("/api/v1/{kind}/{id}")),
        _ => None,
    }
}

fn json_links(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("digest", Value::String(d)) if d.len() == 64 => out.push(format!("/artifacts/{d}")),
                    ("run_id" | "id", Value::Number(n)) => out.push(format!("/api/v1/runs/{n}")),
                    ("agent_id", Value::String(a)) => out.push(format!("/api/v1/agents/{a}")),
                    ("bundle_id", Value::String(b)) => out.push(format!("/api/v1/submissions/{b}/envelope")),
                    _ => json_links(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| json_links(i, out)),
        _ => {}
    }
}

fn with_token(path: &str, token: &str) -> Request<Body> {
    Request::get(path).header(header::AUTHORIZATION, format!("Bearer {token}")).body(Body::empty()).unwrap()
}

/// The private runs of the demo (csvstats'), from each agent's page of that task.
async fn private_runs(app: &Router) -> Vec<i64> {
    let run = Regex::new(r#"href="/runs/(\d+)""#).unwrap();
    let mut runs = BTreeSet::new();
    let task = get(app, "/api/v1/tasks/csvstats").await.json();
    for agent in task["agents"].as_array().unwrap() {
        let id = agent["agent_id"].as_str().unwrap();
        let page = get(app, &format!("/agents/{id}?task=csvstats")).await;
        for c in run.captures_iter(&String::from_utf8_lossy(&page.body)) {
            runs.insert(c[1].parse::<i64>().unwrap());
        }
    }
    for id in &runs {
        assert_eq!(get(app, &format!("/api/v1/runs/{id}")).await.json()["task"], "csvstats");
    }
    runs.into_iter().collect()
}

#[tokio::test]
async fn an_anonymous_crawl_of_the_demo_meets_no_private_output() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    crate::harness::seed_demo(&state).await;
    let outputs = outputs(&state).await;
    assert!(outputs.private.len() >= 5, "the demo holds private outputs: {}", outputs.private.len());
    assert!(!outputs.public.is_empty(), "and public ones");
    let finder = Finder::new(&outputs);
    // Links that sign a browser in as the demo's submitter (whose bundle holds the private
    // runs), and as another registered submitter.
    let submitter =
        state.store.keys().await.unwrap().into_iter().find(|k| k.owner == "Example team (demo key)").unwrap();
    let other = bundle::SecretKey::generate();
    state.store.add_key(&other.public_key(), "Another team", store::Tier::Submitter).await.unwrap();
    let links = [
        server::auth::link(&state, Some(&submitter.keyid), false, 10).await.unwrap(),
        server::auth::link(&state, Some(&other.public_key().keyid().to_string()), false, 10).await.unwrap(),
    ];
    // A key whose request is pending, and the bundle it holds: its agent, the request's
    // contact and note are its holder's and the maintainers' alone.
    let pending = bundle::SecretKey::generate();
    let (pem, keyid) = (pending.public_key().to_pem(), pending.public_key().keyid().to_string());
    let new = store::NewKeyRequest {
        keyid: &keyid,
        public_key: &pem,
        owner: "Pending crawl lab",
        owner_seen: &bundle::owner_key("Pending crawl lab"),
        url: None,
        contact: "hidden-contact@crawl.example.org",
        note: Some("hidden-note-words"),
        address: "192.0.2.1",
        now_unix: time::OffsetDateTime::now_utc().unix_timestamp(),
    };
    state.store.request_key(&new, store::RequestLimits::default()).await.unwrap();
    let app = server::build_app(state);
    let held =
        crate::harness::post_bundle(&app, crate::register::bundle_of(&pending, "held-crawl-agent")).await;
    assert_eq!(held.status, StatusCode::ACCEPTED, "{}", String::from_utf8_lossy(&held.body));

    let answers = crawl(&app).await;
    assert!(answers.len() > 300, "the crawl reached the site: {} answers", answers.len());
    for (path, answer) in &answers {
        let body = String::from_utf8_lossy(&answer.body);
        for private in [
            "held-crawl-agent",
            "hidden-contact@crawl.example.org",
            "hidden-note-words",
            // The demo's own pending request, and the bundle its key holds.
            "newcomer-agent",
            "newcomer@lab.example.org",
            "Our first submission",
        ] {
            assert!(!body.contains(private), "{path} shows {private}, a pending key's");
        }
    }
    assert!(
        answers.iter().any(|(p, a)| p == "/keys/request?id=1"
            && String::from_utf8_lossy(&a.body).contains("Newcomer lab (demo request)")),
        "the demo's request is public in its status"
    );
    let mut refused = BTreeSet::new();
    for (path, answer) in &answers {
        if let Some(leak) = finder.leak(&answer.body) {
            panic!("{path} ({}) leaks a private output: {leak}", answer.status);
        }
        if let Some(hex) = path.strip_prefix("/artifacts/")
            && outputs.private.iter().any(|(d, _)| d == hex)
        {
            assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{path}");
            assert_eq!(answer.code(), "outputs_private");
            assert!(answer.header(header::WWW_AUTHENTICATE).starts_with("Bearer"), "{path}");
            refused.insert(hex.to_owned());
        }
    }
    let private: BTreeSet<String> = outputs.private.iter().map(|(d, _)| d.clone()).collect();
    assert_eq!(refused, private, "every private artifact was reached through the API's digests, and refused");
    let run_pages = answers.iter().filter(|(p, _)| p.starts_with("/runs/")).count();
    assert!(run_pages > 50, "run pages crawled: {run_pages}");

    // The pages' server function answers as the pages do.
    let runs = private_runs(&app).await;
    assert!(!runs.is_empty());
    for id in &runs {
        let request = Request::post("/sfn/run")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(format!("id={id}")))
            .unwrap();
        let answer = send(&app, request).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", String::from_utf8_lossy(&answer.body));
        assert_eq!(finder.leak(&answer.body), None, "/sfn/run {id}");
    }

    // A maintainer reads it all, in answers no cache keeps.
    let mut shown = 0;
    for id in &runs {
        let page = send(&app, with_token(&format!("/runs/{id}"), TOKEN)).await;
        assert_eq!(page.status, StatusCode::OK);
        assert_eq!(page.header(header::CACHE_CONTROL), "private, no-store");
        assert_eq!(page.header(header::ETAG), "");
        shown += usize::from(finder.leak(&page.body).is_some());
        let api = send(&app, with_token(&format!("/api/v1/runs/{id}"), TOKEN)).await.json();
        assert_eq!((api["outputs"].as_str(), api["readable"].as_bool()), (Some("private"), Some(true)));
        let anonymous = get(&app, &format!("/api/v1/runs/{id}")).await.json();
        assert_eq!(anonymous["readable"], false);
        for (mine, theirs) in
            api["findings"].as_array().unwrap().iter().zip(anonymous["findings"].as_array().unwrap())
        {
            assert_eq!(
                (mine["check"].clone(), mine["line"].clone()),
                (theirs["check"].clone(), theirs["line"].clone())
            );
            assert_eq!((mine["withheld"].as_bool(), theirs["withheld"].as_bool()), (Some(false), Some(true)));
        }
    }
    assert_eq!(shown, runs.len(), "every private run page shows its outputs to a maintainer");
    for (hex, bytes) in &outputs.private {
        let answer = send(&app, with_token(&format!("/artifacts/{hex}"), TOKEN)).await;
        assert_eq!(answer.status, StatusCode::OK, "{hex}");
        assert_eq!(&answer.body, bytes);
        assert_eq!(answer.header(header::CACHE_CONTROL), "private, no-store");
    }
    // The demo's submitter, signed in, reads them; another submitter does not.
    let mut cookies = Vec::new();
    for link in &links {
        let opened = crate::harness::open_link(&app, link, &[]).await;
        assert_eq!(opened.status, StatusCode::SEE_OTHER, "{link}");
        cookies.push(opened.header(header::SET_COOKIE).split(';').next().unwrap().to_owned());
    }
    let as_cookie = |path: String, cookie: &str| {
        Request::get(path).header(header::COOKIE, cookie).body(Body::empty()).unwrap()
    };
    for id in &runs {
        let own = send(&app, as_cookie(format!("/runs/{id}"), &cookies[0])).await;
        assert!(finder.leak(&own.body).is_some(), "the submitter reads /runs/{id}");
        let theirs = send(&app, as_cookie(format!("/runs/{id}"), &cookies[1])).await;
        assert_eq!(theirs.status, StatusCode::OK);
        assert_eq!(finder.leak(&theirs.body), None, "another submitter reads /runs/{id}");
    }
    assert!(!outputs.gold.is_empty(), "the demo's csvstats checker logs say what its private check expects");
    for (hex, bytes) in &outputs.private {
        let own = send(&app, as_cookie(format!("/artifacts/{hex}"), &cookies[0])).await;
        if outputs.gold.contains(hex) {
            // The submitter's own checker log: the gold's, the maintainers' alone.
            assert_eq!(
                (own.status, own.code().as_str()),
                (StatusCode::FORBIDDEN, "outputs_private"),
                "{hex}"
            );
            continue;
        }
        assert_eq!((own.status, &own.body), (StatusCode::OK, bytes));
        let theirs = send(&app, as_cookie(format!("/artifacts/{hex}"), &cookies[1])).await;
        assert_eq!((theirs.status, theirs.code().as_str()), (StatusCode::FORBIDDEN, "outputs_private"));
    }

    // Wrong credentials are refused, never read as none.
    let wrong = send(&app, with_token(&format!("/api/v1/runs/{}", runs[0]), "guess")).await;
    assert_eq!((wrong.status, wrong.code()), (StatusCode::UNAUTHORIZED, "invalid_credentials".to_owned()));
    let metrics = String::from_utf8(crate::harness::get_as_maintainer(&app, "/metrics").await.body).unwrap();
    assert!(metrics.contains("rexbench_refused_reads_total{reason=\"invalid_credentials\"} 1"), "{metrics}");
    assert!(metrics.contains("rexbench_refused_reads_total{reason=\"private_outputs\"}"), "{metrics}");
}

/// A public run page of a private run: its files touched with lines counted, each
/// output's size and SHA-256, its trajectory counted and its findings by place.
#[tokio::test]
async fn a_private_run_page_shows_what_anyone_may_know() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    crate::harness::seed_demo(&state).await;
    let app = server::build_app(state);
    let runs = private_runs(&app).await;
    let mut with_patch = 0;
    for id in runs {
        let api = get(&app, &format!("/api/v1/runs/{id}")).await.json();
        let page = String::from_utf8(get(&app, &format!("/runs/{id}")).await.body).unwrap();
        assert!(page.contains("The outputs of this run are private"), "/runs/{id}");
        for artifact in api["artifacts"].as_array().unwrap() {
            let digest = artifact["digest"].as_str().unwrap();
            assert!(page.contains(digest), "/runs/{id} shows {digest}");
            assert!(!page.contains(&format!("href=\"/artifacts/{digest}\"")), "/runs/{id} links {digest}");
        }
        for file in api["files"].as_array().unwrap() {
            with_patch += 1;
            let path = file["path"].as_str().unwrap();
            assert!(page.contains(&format!("<code>{path}</code>")), "/runs/{id}: {path}");
            assert!(page.contains(&format!("+{}", file["added"])), "/runs/{id}: {file}");
        }
        assert!(!page.contains("id=\"logs\""), "/runs/{id} has no logs section");
    }
    assert!(with_patch > 0, "some private run carries a patch");
}

#[tokio::test]
async fn a_maintainer_publishes_a_task_s_outputs_and_makes_them_private_again() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        crate::harness::seed_demo(&state).await;
        let outputs = outputs(&state).await;
        // (A checker's log of csvstats shows its private check: published outputs or not,
        // it stays the maintainers'.)
        let (hex, bytes) = outputs.private.iter().find(|(h, _)| !outputs.gold.contains(h)).cloned().unwrap();
        let app = server::build_app(state);
        let put = |body: &str, token: &str| {
            Request::put("/api/v1/admin/tasks/csvstats/outputs")
                .header(header::AUTHORIZATION, format!("Bearer {token}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_owned()))
                .unwrap()
        };
        // Warm the cache with the refusal and the private page.
        assert_eq!(get(&app, &format!("/artifacts/{hex}")).await.status, StatusCode::UNAUTHORIZED);
        let refused = send(&app, put(r#"{"outputs": "public", "reason": "x"}"#, "guess")).await;
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
        for (body, code) in [
            (r#"{"outputs": "open", "reason": "x"}"#, "invalid_outputs"),
            (r#"{"outputs": "public", "reason": "  "}"#, "invalid_reason"),
            (r#"{"outputs": "public"}"#, "invalid_body"),
        ] {
            let answer = send(&app, put(body, TOKEN)).await;
            assert_eq!(
                (answer.status, answer.code()),
                (StatusCode::UNPROCESSABLE_ENTITY, code.to_owned()),
                "{body}"
            );
        }
        let nothing = send(
            &app,
            Request::put("/api/v1/admin/tasks/nothing/outputs")
                .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(r#"{"outputs": "public", "reason": "x"}"#))
                .unwrap(),
        )
        .await;
        assert_eq!(nothing.status, StatusCode::NOT_FOUND);
        assert_eq!(
            get(&app, &format!("/artifacts/{hex}")).await.status,
            StatusCode::UNAUTHORIZED,
            "nothing changed"
        );

        let published = send(
            &app,
            put(r#"{"outputs": "public", "reason": "the example's outputs are ours to show"}"#, TOKEN),
        )
        .await;
        assert_eq!(published.status, StatusCode::OK, "{}", String::from_utf8_lossy(&published.body));
        let done = published.json();
        assert_eq!((done["card"].as_str(), done["outputs"].as_str()), (Some("private"), Some("public")));
        let seq = done["change_seq"].as_i64().expect("a change");
        let open = get(&app, &format!("/artifacts/{hex}")).await;
        assert_eq!(open.status, StatusCode::OK, "the cache follows the change at once");
        assert_eq!(open.body, bytes);
        // Never `immutable`: a task's outputs may be made private again (below).
        assert_eq!(open.header(header::CACHE_CONTROL), "public, max-age=300");
        let again = send(&app, put(r#"{"outputs": "public", "reason": "again"}"#, TOKEN)).await.json();
        assert_eq!(again["change_seq"], Value::Null, "asking for what holds writes nothing");

        let changes = get(&app, "/api/v1/changes").await.json();
        let newest = &changes["changes"][0];
        assert_eq!((newest["seq"].as_i64(), newest["kind"].as_str()), (Some(seq), Some("outputs")));
        assert_eq!((newest["task"].as_str(), newest["bundle_id"].clone()), (Some("csvstats"), Value::Null));
        assert!(newest["detail"].as_str().unwrap().contains("the example's outputs are ours to show"));
        let page = String::from_utf8(get(&app, "/changes").await.body).unwrap();
        assert!(page.contains("task csvstats"), "the change log page names the task");

        let hidden = send(&app, put(r#"{"outputs": "private", "reason": "second thoughts"}"#, TOKEN)).await;
        assert_eq!(hidden.status, StatusCode::OK);
        assert_eq!(get(&app, &format!("/artifacts/{hex}")).await.status, StatusCode::UNAUTHORIZED);
        let list = send(&app, with_token("/api/v1/admin/outputs", TOKEN)).await.json();
        let csv = list["tasks"].as_array().unwrap().iter().find(|t| t["task"] == "csvstats").unwrap().clone();
        assert_eq!(csv["outputs"], "private");
    })
    .await;
}
