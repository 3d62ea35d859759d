//! A server state on a fresh database, and requests against its router.

use std::path::{Path, PathBuf};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::Value;
use server::AppState;
use store::{Backend, Store};
use tower::ServiceExt;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap()
}

/// The Python with the independent checkers (openapi-core, securesystemslib) that the
/// test command installs: `REXBENCH_PYTHON`, or the repository's `.venv`.
pub fn python() -> PathBuf {
    let python = std::env::var_os("REXBENCH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv/bin/python"));
    assert!(
        python.is_file(),
        "{} is missing: `bash scripts/test` installs the Python checkers (scripts/requirements.txt)",
        python.display()
    );
    python
}

/// The repository's conformance vectors (`vectors/`).
pub fn vectors() -> PathBuf {
    repo().join("vectors")
}

/// The benchmark maintainers' folder (the spec, its own vectors, the paper's data): an
/// independent cross-check, never required. `REXBENCH_SHARED` names it (CI does, and
/// then it must be there); otherwise `../shared` beside the repository, if it is there.
pub fn shared() -> Option<PathBuf> {
    let beside = repo().join("../shared");
    match std::env::var_os("REXBENCH_SHARED") {
        Some(named) => {
            let named = PathBuf::from(named);
            assert!(
                named.join("vectors/expected.json").is_file(),
                "REXBENCH_SHARED={}: no vectors there",
                named.display()
            );
            Some(named)
        }
        None if beside.join("vectors/expected.json").is_file() => Some(beside),
        None => {
            eprintln!(
                "no ../shared beside the repository and no REXBENCH_SHARED: the cross-check is not run"
            );
            None
        }
    }
}

/// The benchmark's own task set, as the built-in cards give it.
pub fn rexbench_task_set() -> bundle::TaskSet {
    // The built-in cards' folder goes when the `TaskDir` does.
    let dir = benchmark::builtin::TaskDir::builtin().unwrap();
    let cards = dir.cards().unwrap();
    benchmark::taskset::sets(&cards).unwrap().into_iter().find(|s| s.name == "RExBench").unwrap()
}

/// Registers [`test_task_set`] in `store`, as the maintainers of a board the tests' own
/// bundles go to would (for a server the tests start as a process).
pub async fn know_test_set(store: &Store) {
    store
        .register_task_set(&test_task_set(), "the tests' bundles and the conformance vectors")
        .await
        .unwrap();
}

/// The task set the tests' hand-made bundles and the conformance vectors name.
pub fn test_task_set() -> bundle::TaskSet {
    bundle::TaskSet { digest: "ab".repeat(32), name: "RExBench".into(), version: "1.0".into() }
}

pub async fn state(backend: &Backend, blobs: &Path) -> AppState {
    state_with(backend, store::Blobs::dir(blobs).unwrap()).await
}

/// Seeds `state`'s fresh database with the demo data (the one helper every test that
/// starts from the demo calls).
pub async fn seed_demo(state: &AppState) {
    server::seed_demo(state).await.unwrap().expect("a fresh database");
}

pub async fn state_with(backend: &Backend, blobs: store::Blobs) -> AppState {
    let store = Store::open_with(backend, blobs).await.unwrap();
    // The cards built into the server, as an installed server uses them.
    let tasks = benchmark::builtin::TaskDir::builtin().unwrap();
    let (catalog, cards) = server::catalog::load(&tasks).unwrap();
    server::know_benchmark(&store, &cards).await.unwrap();
    // The task set the tests' own bundles and the conformance vectors name (spec §5a), as
    // a board's maintainers would register it.
    store
        .register_task_set(&test_task_set(), "the tests' bundles and the conformance vectors")
        .await
        .unwrap();
    AppState {
        store: std::sync::Arc::new(store),
        limits: bundle::Limits::default(),
        catalog: std::sync::Arc::new(catalog),
        cards: std::sync::Arc::new(cards),
        tasks: std::sync::Arc::new(tasks),
        admin_token: Some("s3cret-token".into()),
        metrics: Default::default(),
        cache: Default::default(),
        // Tests post many bundles from one address; the limits have tests of their own.
        guard: server::guard::Guard::new(server::guard::Limits {
            per_address_hourly: 1_000_000,
            per_key_hourly: 1_000_000,
            per_address_concurrent: 64,
            concurrent_ingests: 64,
            ..Default::default()
        }),
        pkg: server::islands::Pkg::embedded().map(std::sync::Arc::new),
        public_url: "http://board.test".into(),
    }
}

pub async fn app_on_sqlite() -> (Router, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    (server::build_app(state(&backend, &dir.path().join("blobs")).await), dir)
}

pub struct Answer {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: header::HeaderName) -> &str {
        self.headers.get(name).map(|v| v.to_str().unwrap()).unwrap_or("")
    }

    /// The error code of a JSON error answer.
    pub fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_else(|| panic!("no error code: {}", self.json()))
            .to_owned()
    }
}

pub async fn send(app: &Router, request: Request<Body>) -> Answer {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = axum::body::to_bytes(response.into_body(), 64 << 20).await.unwrap().to_vec();
    Answer { status, headers, body }
}

pub async fn get(app: &Router, path: &str) -> Answer {
    send(app, Request::get(path).body(Body::empty()).unwrap()).await
}

/// GET `path` as a maintainer (the admin token): private outputs are shown.
pub async fn get_as_maintainer(app: &Router, path: &str) -> Answer {
    let request =
        Request::get(path).header(header::AUTHORIZATION, "Bearer s3cret-token").body(Body::empty()).unwrap();
    send(app, request).await
}

/// Opens a one-time sign-in link as a browser does: its page (which signs nobody in),
/// then the page's button, a POST from this site (`headers` added). The button's answer.
pub async fn open_link(app: &Router, path: &str, headers: &[(&str, &str)]) -> Answer {
    let page = get(app, path).await;
    assert_eq!(page.status, StatusCode::OK, "{path}");
    let html = String::from_utf8_lossy(&page.body);
    assert!(html.contains("<form method=\"post\" action=\"/login/"), "{html}");
    assert!(page.header(header::SET_COOKIE).is_empty(), "opening the link signs nobody in");
    let mut request = Request::post(path).header("sec-fetch-site", "same-origin");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    send(app, request.body(Body::empty()).unwrap()).await
}

/// A server on SQLite in `dir` whose sign-in allowance per address is 4 an hour: one
/// refused credential at once, then 429.
pub async fn guarded_app(dir: &Path) -> Router {
    let backend = Backend::Sqlite { path: dir.join("db.sqlite") };
    let mut state = state(&backend, &dir.join("blobs")).await;
    state.guard =
        server::guard::Guard::new(server::guard::Limits { per_address_hourly: 4, ..Default::default() });
    server::build_app(state)
}

pub async fn post_bundle(app: &Router, bytes: Vec<u8>) -> Answer {
    let request = Request::post("/api/v1/submissions")
        .header(header::CONTENT_TYPE, "application/gzip")
        .body(Body::from(bytes))
        .unwrap();
    send(app, request).await
}

/// A page's scripts: at most Leptos's islands loader, inline in the head before anything
/// a bundle says, allowed by its SHA-256 in the policy, which allows no other inline
/// script. Returns how many there are.
pub fn check_scripts(path: &str, html: &str, policy: &str) -> usize {
    use base64::Engine as _;
    assert!(!policy.contains("unsafe-inline") && !policy.contains("'nonce-"), "{path}: {policy}");
    let mut rest = html;
    let mut seen = 0;
    while let Some(start) = rest.find("<script") {
        let after = &rest[start..];
        let open_end = after.find('>').expect("a whole tag");
        let close = after.find("</script>").unwrap_or_else(|| panic!("{path}: an unclosed script"));
        assert!(!after[..open_end].contains("src="), "{path}: a script from a file in the page");
        let text = &after[open_end + 1..close];
        assert!(text.contains("hydrateIslands"), "{path}: a script that is not the islands' loader: {text}");
        let hash =
            base64::engine::general_purpose::STANDARD.encode(bundle::Digest::of(text.as_bytes()).as_bytes());
        assert!(policy.contains(&format!("'sha256-{hash}'")), "{path}: the loader's hash is not in {policy}");
        seen += 1;
        rest = &after[close..];
    }
    assert!(seen <= 1, "{path}: {seen} scripts");
    if seen == 1 {
        assert!(html.find("<script") < html.find("</head>"), "{path}: the loader is not in the head");
    }
    seen
}

/// Gives every run of `b` that got past applying its patch what a runner gives it (spec
/// §4c): a patch, and a provenance record (one that says nothing was traced, so that it
/// adds no finding of its own); and every success the agent's log of it (spec §5a), each
/// its own.
pub fn with_patches(b: &mut bundle::BundleBuilder) {
    if b.manifest_mut().provenance.kind == bundle::ProvenanceKind::Published {
        return;
    }
    let agent = b.manifest_mut().agent.id.clone();
    let lacking: Vec<usize> = (b.manifest_mut().runs.iter().enumerate())
        .filter(|(_, r)| {
            r.outcome == bundle::Outcome::Success
                && !bundle::AGENT_RECORD_ROLES.iter().any(|role| r.artifacts.contains_key(*role))
        })
        .map(|(i, _)| i)
        .collect();
    for i in lacking {
        let run = &b.manifest_mut().runs[i];
        let log = format!("{agent}: worked on {} ({}, attempt {})\n", run.task, run.hint, run.attempt);
        let log = b.add_bytes(log.into_bytes(), "text/plain");
        b.manifest_mut().runs[i].artifacts.insert("agent_log".into(), log.to_hex());
    }
    // Each run's own, so that no two submissions share an artifact and no two attempts
    // one patch (which would be a copied attempt, bundle spec §5b).
    let agent = b.manifest_mut().agent.id.clone();
    let past = |run: &bundle::Run| run.outcome.got_past_applying();
    let lacking: Vec<usize> = (b.manifest_mut().runs.iter().enumerate())
        .filter(|(_, r)| past(r) && !r.artifacts.contains_key("patch"))
        .map(|(i, _)| i)
        .collect();
    for i in lacking {
        let run = &b.manifest_mut().runs[i];
        let patch = format!(
            "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2  # {agent} {} {} {}\n",
            run.task, run.hint, run.attempt
        );
        let patch = b.add_bytes(patch.into_bytes(), "text/x-diff");
        b.manifest_mut().runs[i].artifacts.insert("patch".into(), patch.to_hex());
    }
    let evaluated = b.manifest_mut().provenance.kind == bundle::ProvenanceKind::Evaluated;
    if evaluated && b.manifest_mut().runs.iter().any(|r| past(r) && !r.artifacts.contains_key("x-provenance"))
    {
        let why = format!("a test's bundle ({agent}): nothing was traced");
        let record = bundle::ProvenanceRecord::untraced(why, 1).to_bytes();
        let record = b.add_bytes(record, "application/json");
        for run in b.manifest_mut().runs.iter_mut().filter(|r| past(r)) {
            run.artifacts.entry("x-provenance".into()).or_insert(record.to_hex());
        }
    }
}
