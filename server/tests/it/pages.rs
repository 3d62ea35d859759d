//! The pages, rendered on the server from a store with a hostile agent's results.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use bundle::SecretKey;
use serde_json::json;
use store::Tier;

use crate::harness::{Answer, app_on_sqlite, check_scripts, get, post_bundle, send, state};

/// Every page must stay within this, whatever the data.
const PAGE_LIMIT: usize = 200_000;

/// A bundle whose texts try to inject markup everywhere a page shows them: runs of
/// cogs (public expected values) and checkeval (private), with a patch and a log.
fn hostile(key: &SecretKey, agent: &str) -> Vec<u8> {
    let manifest: bundle::Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-11-01T00:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "t", "version": "1"}, "provenance": {"kind": "evaluated"},
        "agent": {
            "id": agent,
            "framework": "<img src=x onerror=alert(1)>",
            "model": "M\"><script>alert(2)</script>",
            "display_name": "<script>alert(3)</script> Agent </title><script>alert(8)</script>",
            "url": "https://example.org/a'onmouseover=alert(4)&b=1"
        },
        "runs": [
            {"task": "cogs", "hint": "none", "attempt": 1, "outcome": "wrong_result",
             "metrics": {"pred_acc": 0.25, "<b>m</b>": 1.0}, "file_recall": 0.5, "duration_s": 75.0},
            {"task": "cogs", "hint": "hints", "attempt": 1, "outcome": "success", "metrics": {"pred_acc": 0.4562857142857143},
             "findings": [
                {"check": "result-line-literal", "message": "<script>alert(9)</script> printed literally",
                 "artifact": "patch", "line": 7},
                {"check": "implausibly-fast", "message": "done in 2 s"},
                {"check": "result-line-literal", "message": "in the log", "artifact": "stdout", "line": 250}]},
            // checkeval's check is private: its metrics would be its gold (spec §4j).
            {"task": "checkeval", "hint": "none", "attempt": 1, "outcome": "execution_failed",
             "error_type": "<svg onload=alert(5)>Error"},
        ],
    }))
    .unwrap();
    // The 5 attempts the benchmark asks of each, so that the row ranks (spec §4f): the
    // later ones end as the first, without its findings.
    let mut manifest = manifest;
    let firsts = manifest.runs.clone();
    for attempt in 2..=5 {
        manifest.runs.extend(firsts.iter().map(|r| bundle::Run {
            attempt,
            findings: Vec::new(),
            ..r.clone()
        }));
    }
    let mut b = bundle::BundleBuilder::new(manifest);
    let patch = b.add_bytes(
        b"diff --git a/train.py b/train.py\n--- a/train.py\n+++ b/train.py\n@@ -1,2 +1,2 @@\n keep\n-old <b>line</b>\n+new <script>alert(6)</script>\n"
            .to_vec(),
        "text/x-diff",
    );
    let mut log = String::new();
    for i in 1..=500 {
        log.push_str(&format!("step {i} <script>alert(7)</script>\n"));
    }
    log.push_str("Traceback (most recent call last):\nValueError: bad shape\n");
    let log = b.add_bytes(log.into_bytes(), "text/html");
    for run in &mut b.manifest_mut().runs {
        run.artifacts.insert("patch".into(), patch.to_hex());
        run.artifacts.insert("stdout".into(), log.to_hex());
    }
    crate::harness::with_patches(&mut b);
    let mut out = Vec::new();
    b.write(&[key], &mut out).unwrap();
    out
}

/// The app on a fresh SQLite database, with a submitter's key registered for `owner`.
async fn app_with_submitter(
    owner: &str,
) -> (Router, tempfile::TempDir, SecretKey, std::sync::Arc<store::Store>) {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    let key = SecretKey::generate();
    state.store.add_key(&key.public_key(), owner, Tier::Submitter).await.unwrap();
    let store = state.store.clone();
    (server::build_app(state), dir, key, store)
}

async fn app_with_hostile_agent() -> (Router, tempfile::TempDir, i64) {
    let (app, dir, key, store) = app_with_submitter("Team <X>").await;
    let stored = post_bundle(&app, hostile(&key, "evil-agent")).await;
    assert_eq!(stored.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&stored.body));
    let bundle_id = stored.json()["bundle_id"].as_str().unwrap().to_owned();
    let first = store.runs_of(&bundle_id, Some("cogs"), Some(store::Hint::None)).await.unwrap()[0].id;
    (app, dir, first)
}

/// A page: its status, and its HTML, which must never carry a script or an injected
/// element.
async fn page(app: &Router, path: &str) -> (StatusCode, String) {
    checked_page(path, get(app, path).await)
}

/// A page as a maintainer reads it: a run's private outputs are on it (the hostile
/// agent's tasks are RExBench's, whose outputs are private).
async fn maintainer_page(app: &Router, path: &str) -> (StatusCode, String) {
    checked_page(path, crate::harness::get_as_maintainer(app, path).await)
}

fn checked_page(path: &str, answer: crate::harness::Answer) -> (StatusCode, String) {
    assert!(answer.header(header::CONTENT_TYPE).starts_with("text/html"), "{path}");
    let html = String::from_utf8(answer.body.clone()).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{path}");
    check_scripts(path, &html, answer.header(header::CONTENT_SECURITY_POLICY));
    // Styles come from the stylesheet only (`style-src 'self'`).
    assert!(!html.contains(" style=\""), "{path}: a style attribute");
    assert!(!html.contains("<img src=x"), "{path}: an element got through");
    assert!(!html.contains("<svg onload"), "{path}: an element got through");
    assert!(!html.contains("javascript:"), "{path}: a script link got through");
    assert!(html.len() < PAGE_LIMIT, "{path}: {} bytes", html.len());
    (answer.status, html)
}

#[tokio::test]
async fn every_page_renders_and_escapes_what_bundles_say() {
    let (app, _dir, run) = app_with_hostile_agent().await;

    let (status, html) = page(&app, "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("<title>RExBench leaderboard</title>"));
    assert!(html.contains("&lt;script&gt;alert(3)&lt;/script&gt; Agent &lt;/title&gt;"), "{html}");
    assert!(html.contains(r#"<svg class="chart" role="img""#));
    assert!(html.contains(r#"href="/agents/evil-agent?hint=none#runs""#), "rates link to their runs");
    assert!(html.contains("1 of 1 agents"));
    // Final success: 0% without hints, 100% with hints, +100 points.
    assert!(html.contains(">0%<") && html.contains(">100%<") && html.contains(">+100<"), "{html}");
    assert!(html.contains("Self-reported") && html.contains("Evaluated"));
    assert!(html.contains("group 1") && html.contains("Small figures are 95% intervals"), "{html}");

    let (status, html) = page(&app, "/agents/evil-agent").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains(
            "<title>&lt;script&gt;alert(3)&lt;/script&gt; Agent &lt;/title&gt;&lt;script&gt;alert(8)&lt;/script&gt; · RExBench leaderboard</title>"
        ),
        "{html}"
    );
    assert!(html.contains(&format!(r#"href="/runs/{run}""#)));
    assert!(html.contains("&lt;svg onload=alert(5)&gt;Error"), "error types are text");
    assert!(
        html.contains(
            r#"href="https://example.org/a'onmouseover=alert(4)&amp;b=1" rel="nofollow noopener noreferrer""#
        ),
        "{html}"
    );

    // Anyone sees what the run did, not its outputs (its task's are private).
    let (status, public) = page(&app, &format!("/runs/{run}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(public.contains("The outputs of this run are private"), "{public}");
    assert!(!public.contains("alert(6)") && !public.contains(r#"class="line add">"#), "{public}");
    let (status, html) = maintainer_page(&app, &format!("/runs/{run}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"class="line add">"#) && html.contains(r#"class="line del">"#), "{html}");
    assert!(html.contains("+new &lt;script&gt;alert(6)&lt;/script&gt;"), "{html}");
    // The log is cut in the middle, with its last lines and the error kept.
    assert!(html.contains("lines not shown of 502"), "{html}");
    assert!(html.contains(r#"class="line err">"#), "{html}");
    assert!(html.contains(r#"<span id="L-stdout-501" class="line err">"#), "each line its anchor: {html}");
    assert!(html.contains("ValueError: bad shape"));
    assert!(html.contains("/artifacts/"), "a link to the whole log");
    // cogs makes its expected value public.
    assert!(html.contains("0.4562857142857143"), "{html}");
    assert!(html.contains("&lt;b&gt;m&lt;/b&gt;"));

    // 75 s for a five-hour experiment: the server's own check flags it, though it failed.
    assert!(
        html.contains("Integrity findings") && html.contains("this run did not succeed anyway"),
        "{html}"
    );
    assert!(html.contains("implausibly-fast") && html.contains("this server"), "{html}");
    let (_, html) = maintainer_page(&app, &format!("/runs/{}", run + 2)).await;
    assert!(!html.contains("Integrity findings"), "this run carries no finding");

    // A flagged success: each finding escaped, its evidence linked to the line shown.
    let flagged = run + 1;
    let (status, html) = maintainer_page(&app, &format!("/runs/{flagged}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("Integrity findings") && html.contains("This success is flagged"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(9)&lt;/script&gt; printed literally"), "{html}");
    assert!(html.contains(r##"<a href="#L-patch-7">Patch, line 7</a>"##), "{html}");
    assert!(html.contains(r#"id="L-patch-7""#), "the line it links to");
    // Line 250 of the log is cut from the page: the link goes to the whole log.
    assert!(
        html.contains(">Standard output, line 250</a>") && !html.contains(r#"id="L-stdout-250""#),
        "{html}"
    );
    assert!(html.contains("the submitter, signed in the bundle"), "{html}");
    let api = crate::harness::get_as_maintainer(&app, &format!("/api/v1/runs/{flagged}")).await.json();
    assert_eq!(
        api["findings"][0],
        json!({"id": format!("{flagged}-submitter-0"), "found_by": "submitter", "check": "result-line-literal",
               "message": "<script>alert(9)</script> printed literally", "artifact": "patch", "line": 7,
               "review": null, "withheld": false})
    );
    // To anyone, the finding's check and place, not its text (it quotes private outputs).
    let public = get(&app, &format!("/api/v1/runs/{flagged}")).await.json();
    assert_eq!(public["findings"][0]["withheld"], json!(true));
    assert_eq!(
        (public["findings"][0]["check"].clone(), public["findings"][0]["line"].clone()),
        (json!("result-line-literal"), json!(7))
    );
    assert!(!public.to_string().contains("alert(9)"));
    assert_eq!(api["findings"][1]["artifact"], json!(null));
    // The submitter's three, and the server's: the five attempts carry one patch, one
    // attempt's work counted five times (bundle spec §5b).
    assert_eq!(api["findings"].as_array().unwrap().len(), 4, "{api}");
    assert_eq!(
        (api["findings"][3]["check"].clone(), api["findings"][3]["found_by"].clone()),
        (json!("copied-attempt"), json!("server"))
    );

    let private = get(&app, "/api/v1/tasks/checkeval").await.json();
    assert_eq!(private["public_expected"], json!([]));

    let (status, html) = page(&app, "/tasks").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"<a href="/tasks/cogs">COGS</a>"#), "{html}");
    assert!(html.contains("Example tasks"));

    let (status, html) = page(&app, "/tasks/cogs").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("<h1>COGS</h1>"), "the card's README as HTML: {html}");
    assert!(html.contains("Expected results") && html.contains("0.4562857142857143"));
    assert!(html.contains(r#"class="try fail""#) && html.contains(r#"class="try ok""#));
    // Its hints are not public: the page says the hint check cannot run there.
    assert!(
        html.contains("The hint check cannot run on this task: RExBench&#x27;s hints")
            || html.contains("The hint check cannot run on this task: RExBench's hints"),
        "{html}"
    );
    let (_, html) = page(&app, "/tasks/wordfreq").await;
    assert!(html.contains("one of the 1 hint passages"), "{html}");

    let (status, html) = page(&app, "/tasks/checkeval").await;
    assert_eq!(status, StatusCode::OK);
    assert!(!html.contains("Expected results"), "checkeval's gold stays private");

    let (status, html) = page(&app, "/about").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("cluster bootstrap"), "{html}");
    let (_, html) = page(&app, "/agents/evil-agent").await;
    assert!(html.contains("Plausible rank by final success without hints: 1 of 1"), "{html}");
    assert!(html.contains("With hints: +100 points"), "{html}");

    for path in ["/failures", "/changes", "/submit", "/compare", "/compare?a=evil-agent&b=evil-agent"] {
        let (status, _) = page(&app, path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
    }
    let (_, html) = page(&app, "/failures").await;
    // The error type, its runs and agents, and the agent with most such runs.
    assert!(
        html.contains("<code>&lt;svg onload=alert(5)&gt;Error</code></th><td class=\"num\">5</td><td class=\"num\">1</td>"),
        "{html}"
    );
    assert!(
        html.contains("Tasks solved only with hints")
            && html.contains(r#"<a href="/tasks/cogs#results">COGS</a>"#),
        "{html}"
    );
    // The API answers with what the page shows (one answer, `views::failures`), its
    // hostile error type as data, not markup.
    let answer = get(&app, "/api/v1/failures").await;
    assert!(answer.header(header::CONTENT_TYPE).starts_with("application/json"));
    let answer = answer.json();
    let error = &answer["error_types"][0];
    assert_eq!(
        (error["error_type"].as_str(), error["runs"].as_i64(), error["agents"].as_i64()),
        (Some("<svg onload=alert(5)>Error"), Some(5), Some(1)),
        "{answer}"
    );
    assert_eq!(answer["only_hinted"][0]["task"], "cogs", "{answer}");
    assert_eq!(answer["only_hinted"][0]["successes"]["none"], 0, "{answer}");
    let agent = &answer["by_agent"][0];
    assert_eq!(agent["agent_id"], "evil-agent", "{answer}");
    let outcomes = answer["outcomes"].as_array().unwrap();
    let runs = agent["runs"].as_array().unwrap();
    assert_eq!(runs.len(), outcomes.len());
    assert_eq!(runs.iter().map(|n| n.as_i64().unwrap()).sum::<i64>(), agent["total"].as_i64().unwrap());
    let row = format!("<td class=\"num\">{}</td></tr>", agent["total"]);
    assert!(html.contains(&row), "the page's total for the agent: {row}");
    let (_, html) = page(&app, "/compare?a=evil-agent&b=evil-agent").await;
    assert!(html.contains("B − A"));
    assert!(html.contains("Paired comparison") && html.contains("the two cannot be told apart"), "{html}");
}

#[tokio::test]
async fn sorting_and_filtering_live_in_the_url() {
    let (app, _dir, _) = app_with_hostile_agent().await;
    let (_, html) = page(&app, "/?tier=maintainer").await;
    assert!(html.contains("0 of 1 agents") && html.contains("No agent matches these filters."), "{html}");
    let (_, html) = page(&app, "/?tier=submitter&sort=agent&dir=desc").await;
    assert!(html.contains("1 of 1 agents"));
    assert!(html.contains(r#"aria-sort="descending""#), "{html}");
    assert!(html.contains(r#"<option value="submitter" selected"#), "{html}");
    // The column headers keep the filters and flip the direction.
    assert!(html.contains(r#"href="/?tier=submitter&amp;sort=agent&amp;dir=asc""#), "{html}");
    // The benchmark's version narrows the board and its filter form keeps it, as the
    // column headers do.
    let (_, html) = page(&app, "/?benchmark_version=0.9").await;
    assert!(html.contains("0 of 1 agents"), "{html}");
    assert!(html.contains(r#"<input type="hidden" name="benchmark_version" value="0.9">"#), "{html}");
    assert!(html.contains("benchmark_version=0.9&amp;sort="), "{html}");
    let (_, html) = page(&app, "/").await;
    assert!(!html.contains(r#"name="benchmark_version""#), "{html}");
}

#[tokio::test]
async fn unknown_things_get_real_404_pages() {
    let (app, _dir, _) = app_with_hostile_agent().await;
    for path in
        ["/no/such/page", "/agents/nobody", "/runs/424242", "/runs/abc", "/tasks/nope", "/compare?a=nobody"]
    {
        let (status, html) = page(&app, path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert!(html.contains("<h1>Not found</h1>"), "{path}");
        assert!(html.contains("<title>Not found · RExBench leaderboard</title>"), "{path}");
    }
}

pub fn multipart(bytes: &[u8]) -> Request<Body> {
    let boundary = "XyZzY0123";
    let mut body = Vec::new();
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"bundle\"; filename=\"b.tar.gz\"\r\nContent-Type: application/gzip\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    Request::post("/submit")
        .header(header::CONTENT_TYPE, format!("multipart/form-data; boundary={boundary}"))
        .body(Body::from(body))
        .unwrap()
}

#[tokio::test]
async fn the_upload_form_stores_or_says_why_not() {
    let (app, _dir, key, _) = app_with_submitter("Team").await;

    let refused: Answer = send(&app, multipart(b"this is not a bundle")).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let html = String::from_utf8(refused.body).unwrap();
    assert!(html.contains("The bundle was not accepted") && html.contains("<code>not_gzip</code>"), "{html}");
    assert!(html.contains("Nothing was stored."));
    let unknown = send(&app, multipart(&hostile(&SecretKey::generate(), "x"))).await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    assert!(String::from_utf8(unknown.body).unwrap().contains("no_trusted_signature"));
    assert_eq!(get(&app, "/api/v1/leaderboard").await.json()["rows"], json!([]));

    let stored = send(&app, multipart(&hostile(&key, "evil-agent"))).await;
    assert_eq!(stored.status, StatusCode::SEE_OTHER);
    let to = stored.header(header::LOCATION).to_owned();
    assert!(to.starts_with("/agents/evil-agent?submitted="), "{to}");
    let (status, html) = page(&app, &to).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("was verified and stored"));
}

#[tokio::test]
async fn a_store_failure_is_a_500_page_without_internals() {
    use sqlx::Connection;
    let (app, dir, _) = app_with_hostile_agent().await;
    // A table vanishes from under the server.
    let url = format!("sqlite://{}", dir.path().join("db.sqlite").display());
    let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::query("DROP TABLE failure_totals").execute(&mut db).await.unwrap();
    let (status, html) = page(&app, "/failures").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(html.contains("Something went wrong"), "{html}");
    assert!(
        !html.to_lowercase().contains("failure_totals") && !html.contains("no such table"),
        "no internals: {html}"
    );
    // Pages that do not need the table still work.
    assert_eq!(page(&app, "/").await.0, StatusCode::OK);
}

#[tokio::test]
async fn health_and_assets() {
    let (app, _dir) = app_on_sqlite().await;
    assert_eq!(get(&app, "/healthz").await.status, StatusCode::OK);
    let css = get(&app, "/style/main.css").await;
    assert_eq!((css.status, css.header(header::CONTENT_TYPE)), (StatusCode::OK, "text/css; charset=utf-8"));
    assert!(String::from_utf8(css.body.clone()).unwrap().contains("prefers-color-scheme: dark"));
    // Pages link it under its digest, which may be kept for a year.
    let html = String::from_utf8(get(&app, "/").await.body).unwrap();
    let at = html.find("/style/main.").unwrap();
    let href = &html[at..at + html[at..].find('"').unwrap()];
    assert!(href.len() == "/style/main.0123456789abcdef.css".len(), "{href}");
    let hashed = get(&app, href).await;
    assert_eq!(hashed.body, css.body);
    assert_eq!(hashed.header(header::CACHE_CONTROL), "public, max-age=31536000, immutable");
    assert_eq!(get(&app, "/style/main.0000000000000000.css").await.status, StatusCode::NOT_FOUND);
    let icon = get(&app, "/favicon.svg").await;
    assert_eq!((icon.status, icon.header(header::CONTENT_TYPE)), (StatusCode::OK, "image/svg+xml"));
    assert_eq!(get(&app, "/robots.txt").await.status, StatusCode::OK);
}

#[tokio::test]
async fn serves_over_a_real_socket() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (app, _dir) = app_on_sqlite().await;
    let server = tokio::spawn(axum::serve(listener, app).into_future());
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.ends_with("\r\n\r\nok\n"), "{response}");
    server.abort();
}

#[tokio::test]
async fn pages_are_cached_until_the_data_change_and_revalidate_with_etags() {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    let key = SecretKey::generate();
    state.store.add_key(&key.public_key(), "Team", Tier::Submitter).await.unwrap();
    let app = server::build_app(state);

    let first = get(&app, "/").await;
    let etag = first.header(header::ETAG).to_owned();
    assert!(etag.starts_with('"') && etag.len() > 10, "{etag}");
    assert_eq!(first.header(header::CACHE_CONTROL), "no-cache");
    assert_eq!(get(&app, "/").await.header(header::ETAG), etag, "the same page, the same tag");
    let revalidate =
        |tag: String| Request::get("/").header(header::IF_NONE_MATCH, tag).body(Body::empty()).unwrap();
    let not_modified = send(&app, revalidate(etag.clone())).await;
    assert_eq!(not_modified.status, StatusCode::NOT_MODIFIED);
    assert!(not_modified.body.is_empty());

    // An ingest changes what the page shows: a new tag, and the new agent.
    assert_eq!(post_bundle(&app, hostile(&key, "evil-agent")).await.status, StatusCode::CREATED);
    let after = send(&app, revalidate(etag.clone())).await;
    assert_eq!(after.status, StatusCode::OK);
    assert_ne!(after.header(header::ETAG), etag);
    assert!(String::from_utf8(after.body).unwrap().contains("1 of 1 agents"));

    // The API is cached the same way; errors and artifacts are not.
    let api = get(&app, "/api/v1/leaderboard").await;
    assert!(!api.header(header::ETAG).is_empty());
    assert!(get(&app, "/agents/nobody").await.header(header::ETAG).is_empty());
}

#[tokio::test]
async fn answers_are_compressed_once_for_clients_that_ask() {
    use std::io::Read;
    let (app, _dir, _) = app_with_hostile_agent().await;
    let plain = get(&app, "/").await;
    assert_eq!(plain.header(header::CONTENT_ENCODING), "");
    assert_eq!(plain.header(header::VARY), "accept-encoding");
    for encoding in ["br", "gzip"] {
        let ask = |tag: Option<&str>| {
            let mut r =
                Request::get("/").header(header::ACCEPT_ENCODING, format!("{encoding}, identity;q=0.5"));
            if let Some(tag) = tag {
                r = r.header(header::IF_NONE_MATCH, tag);
            }
            r.body(Body::empty()).unwrap()
        };
        let answer = send(&app, ask(None)).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.header(header::CONTENT_ENCODING), encoding);
        assert!(answer.body.len() < 20_000, "{encoding}: {} bytes", answer.body.len());
        // Compressed when cached, not per request: the cache's own tag for this coding,
        // the same bytes again, and once decoded the page itself.
        let etag = answer.header(header::ETAG).to_owned();
        assert!(etag.ends_with(&format!("-{encoding}\"")), "{etag}");
        assert_ne!(etag, plain.header(header::ETAG));
        assert_eq!(send(&app, ask(None)).await.body, answer.body);
        let mut decoded = Vec::new();
        match encoding {
            "br" => brotli::Decompressor::new(&answer.body[..], 4096).read_to_end(&mut decoded),
            _ => flate2::read::GzDecoder::new(&answer.body[..]).read_to_end(&mut decoded),
        }
        .unwrap();
        assert_eq!(decoded, plain.body, "{encoding}");
        assert_eq!(send(&app, ask(Some(&etag))).await.status, StatusCode::NOT_MODIFIED);
        assert_eq!(send(&app, ask(Some(plain.header(header::ETAG)))).await.status, StatusCode::OK);
    }
}

/// With more agents than a page holds, the leaderboard and a task's results come in
/// pages, linked to one another, and each page stays small.
#[tokio::test]
async fn many_agents_come_in_pages() {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    server::synth::synth(&state, 52, 3, 16).await.unwrap();
    let app = server::build_app(state);

    let (status, html) = page(&app, "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("52 of 52 agents") && html.contains(" · showing 1–50 (page 1 of 2)"), "{html}");
    assert_eq!(html.matches("<tr class=\"group-").count(), 50);
    assert!(
        html.contains(r#"<a rel="next" href="/?sort=final-none&amp;dir=desc&amp;page=2">Agents 51–52 →</a>"#),
        "{html}"
    );
    let (_, last) = page(&app, "/?sort=final-none&dir=desc&page=2").await;
    assert!(last.contains(" · showing 51–52 (page 2 of 2)"));
    assert_eq!(last.matches("<tr class=\"group-").count(), 2);
    assert!(
        last.contains(r#"<a rel="prev" href="/?sort=final-none&amp;dir=desc">← Agents 1–50</a>"#),
        "{last}"
    );
    // The one rule past the end (the API's too): a page past the last shows no rows,
    // says so and links the last.
    let (_, past) = page(&app, "/?page=99").await;
    assert!(past.contains("Page 99 is past the last: 52 agents make 2 pages."), "{past}");
    assert!(
        past.contains(r#"<a href="/?sort=final-none&amp;dir=desc&amp;page=2">The last page</a>"#),
        "{past}"
    );
    assert_eq!(past.matches("<tr class=\"group-").count(), 0);
    assert!(!past.contains(" · showing"));

    let (_, task) = page(&app, "/tasks/cogs").await;
    assert!(task.contains("Agents 1–50 of 52, best without hints first."), "{task}");
    assert!(task.contains(r#"href="/tasks/cogs?page=2#results""#));
    let (_, last) = page(&app, "/tasks/cogs?page=2").await;
    assert!(last.contains("Agents 51–52 of 52"), "{last}");
    let (_, past) = page(&app, "/tasks/cogs?page=3").await;
    assert!(past.contains("Page 3 is past the last: 52 agents make 2 pages."), "{past}");
    assert!(past.contains(r#"<a href="/tasks/cogs?page=2#results">The last page</a>"#), "{past}");
    assert!(!past.contains("rel=\"prev\""), "{past}");
}

/// Agents tied on a task (the same name, the same rates) are listed by id, whatever order
/// the database returns them in: the order a restored copy and every page must agree on.
#[tokio::test]
async fn agents_tied_on_a_task_are_listed_by_id() {
    let (app, dir, key, _) = app_with_submitter("Team").await;
    // Stored in an order that is neither the ids' nor their reverse.
    for agent in ["tie-b", "tie-c", "tie-a"] {
        let file = crate::process::bundle_file(&key, agent, 36, dir.path());
        let stored = post_bundle(&app, std::fs::read(file).unwrap()).await;
        assert_eq!(stored.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&stored.body));
    }
    let (_, html) = page(&app, "/tasks/cogs").await;
    let at = |agent: &str| {
        html.find(&format!(r#"href="/agents/{agent}""#)).unwrap_or_else(|| panic!("{agent}: {html}"))
    };
    assert!(at("tie-a") < at("tie-b") && at("tie-b") < at("tie-c"), "{html}");
}

/// The islands' WebAssembly this test binary was built with: scripts/wasm must have run.
fn pkg() -> server::islands::Pkg {
    server::islands::Pkg::embedded().expect(
        "the server was built without its WebAssembly: run scripts/wasm, then the tests (scripts/test does)",
    )
}

#[tokio::test]
async fn islands_load_through_a_hashed_loader_from_a_versioned_path() {
    let pkg = pkg();
    let (app, dir) = app_on_sqlite().await;
    let answer = get(&app, "/").await;
    let html = String::from_utf8(answer.body.clone()).unwrap();
    let policy = answer.header(header::CONTENT_SECURITY_POLICY).to_owned();
    assert_eq!(check_scripts("/", &html, &policy), 1, "every page loads the islands");
    assert!(policy.contains("script-src 'self' 'wasm-unsafe-eval' 'sha256-"), "{policy}");
    assert!(policy.contains("connect-src 'self'") && policy.contains("worker-src 'self'"), "{policy}");
    assert!(!html.contains(" nonce="), "no per-response nonce: pages are cached per URL");
    assert!(!html.contains(" style="), "no style attributes under style-src 'self'");
    assert!(
        html.contains(&format!(r#"<link rel="modulepreload" href="/{}/rexbench.js""#, pkg.dir)),
        "{html}"
    );
    // Rendered twice, a page is the same bytes (the cache keeps one per URL).
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let again = server::build_app(state(&backend, &dir.path().join("blobs")).await);
    assert_eq!(get(&again, "/").await.body, answer.body);

    for (file, kind) in [
        ("rexbench.js", "text/javascript; charset=utf-8"),
        ("rexbench_bg.wasm", "application/wasm"),
        ("verify-worker.js", "text/javascript; charset=utf-8"),
        ("rexbench_verify_bg.wasm", "application/wasm"),
    ] {
        let path = format!("/{}/{file}", pkg.dir);
        let plain = get(&app, &path).await;
        assert_eq!(plain.status, StatusCode::OK, "{path}");
        assert_eq!(plain.header(header::CONTENT_TYPE), kind);
        assert_eq!(plain.header(header::CACHE_CONTROL), "public, max-age=31536000, immutable");
        let request =
            Request::get(&path).header(header::ACCEPT_ENCODING, "gzip, br").body(Body::empty()).unwrap();
        let packed = send(&app, request).await;
        assert_eq!(packed.header(header::CONTENT_ENCODING), "br", "{path}");
        let mut unpacked = Vec::new();
        std::io::Read::read_to_end(&mut brotli::Decompressor::new(&packed.body[..], 4096), &mut unpacked)
            .unwrap();
        assert_eq!(unpacked, plain.body, "{path}: the brotli file is the same file");
        assert!(packed.body.len() < plain.body.len());
    }
    // Another build's path is not served: a page names the version it needs.
    assert_eq!(get(&app, "/pkg/0000000000000000/rexbench.js").await.status, StatusCode::NOT_FOUND);
    assert_eq!(get(&app, &format!("/{}/nothing.js", pkg.dir)).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn without_its_webassembly_the_server_serves_every_page_without_islands() {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let mut state = state(&backend, &dir.path().join("blobs")).await;
    crate::harness::seed_demo(&state).await;
    state.pkg = None;
    let app = server::build_app(state);
    for path in ["/", "/submit", "/tasks", "/agents/example-agent", "/failures", "/about"] {
        let answer = get(&app, path).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(answer.header(header::CONTENT_SECURITY_POLICY), server::islands::base_policy(), "{path}");
        let html = String::from_utf8(answer.body).unwrap();
        assert!(!html.contains("<script") && !html.contains("modulepreload"), "{path}: {html}");
        assert!(
            !html.contains("leptos-island data-component=\"NewResults"),
            "{path}: no notice without islands"
        );
    }
    let (_, html) = page(&app, "/submit").await;
    assert!(
        html.contains(
            r#"<form method="post" action="/submit" enctype="multipart/form-data" class="upload">"#
        ),
        "{html}"
    );
    assert_eq!(get(&app, &format!("/{}/rexbench.js", pkg().dir)).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_browser_orders_and_filters_rows_as_the_server_does() {
    use views::board::{BoardQuery, Sort};
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    crate::harness::seed_demo(&state).await;
    let store = state.store.clone();
    let app = server::build_app(state);
    let filter = store::LeaderboardFilter::default();
    let rows = store.leaderboard(&filter).await.unwrap();
    for sort in Sort::ALL {
        // The value each row is ordered by: in SQL for the server, from the row in the browser.
        let keys = store.leaderboard_keys(&filter, sort.rate_key()).await.unwrap();
        for key in &keys {
            let row = rows.iter().find(|r| r.bundle_id == key.bundle_id).unwrap();
            assert_eq!(sort.value(row), key.value, "{sort:?} of {}", row.display_name);
        }
    }
    // The name search: the same rows from the page as from the filter the island runs.
    let view = BoardQuery::from_params(|k| (k == "q").then(|| "  ClAuDe 4 ".to_owned()));
    let (_, html) = page(&app, "/?q=ClAuDe+4").await;
    let set = rows
        .iter()
        .filter(|r| r.agent_id == "openhands-claude-4.5-opus")
        .map(|r| &r.task_set_digest)
        .next()
        .unwrap();
    let kept: Vec<_> = rows.iter().filter(|r| &r.task_set_digest == set && view.keeps(r)).collect();
    assert!(kept.len() >= 2 && kept.len() < 16, "{}", kept.len());
    assert!(html.contains(&format!("{} of 16 agents", kept.len())), "{html}");
    assert!(html.contains(r#"name="q" value="ClAuDe 4""#), "{html}");
    for r in &rows {
        let shown = html.contains(&format!(">{}</a>", r.display_name));
        assert_eq!(shown, kept.iter().any(|k| k.bundle_id == r.bundle_id), "{}", r.display_name);
    }
}

/// A patch is drawn line by line as `benchmark::diff` reads it, by the hunks' counts: an
/// added line whose text begins `++ ` is an added line, not a file's header, and opens
/// no fold; a file starts at its first header line.
#[tokio::test]
async fn the_run_page_draws_an_added_line_that_looks_like_a_header_as_added() {
    let (app, _dir, key, store) = app_with_submitter("Team D").await;
    let manifest: bundle::Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-11-20T12:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "t", "version": "1"}, "provenance": {"kind": "evaluated"},
        "agent": {"id": "diff-agent", "framework": "F", "model": "M"},
        "runs": [{"task": "wordfreq", "hint": "none", "attempt": 1, "outcome": "wrong_result"}],
    }))
    .unwrap();
    let mut b = bundle::BundleBuilder::new(manifest);
    let patch = "--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,2 @@\n-old\n+++ x\n keep\n";
    let digest = b.add_bytes(patch.as_bytes().to_vec(), "text/x-diff");
    b.manifest_mut().runs[0].artifacts.insert("patch".into(), digest.to_hex());
    let mut bytes = Vec::new();
    b.write(&[&key], &mut bytes).unwrap();
    let stored = post_bundle(&app, bytes).await;
    assert_eq!(stored.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&stored.body));
    let bundle_id = stored.json()["bundle_id"].as_str().unwrap().to_owned();
    let run = store.runs_of(&bundle_id, None, None).await.unwrap()[0].id;
    let (status, html) = page(&app, &format!("/runs/{run}")).await;
    assert_eq!(status, StatusCode::OK);
    let class_of = |n: usize| {
        let anchor = format!("id=\"L-patch-{n}\"");
        let at = html.find(&anchor).unwrap_or_else(|| panic!("line {n}: {html}"));
        let open = html[..at].rfind("<span").unwrap();
        let tag = &html[open..html[open..].find('>').unwrap() + open];
        tag.split("class=\"").nth(1).unwrap_or_else(|| panic!("{tag}")).split('"').next().unwrap().to_owned()
    };
    assert_eq!(class_of(1), "line file file-head");
    assert_eq!(class_of(2), "line file");
    assert_eq!(class_of(3), "line hunk");
    assert_eq!(class_of(4), "line del");
    assert_eq!(class_of(5), "line add", "`+++ x` inside a hunk adds `++ x`");
    assert_eq!(class_of(6), "line ctx");
    assert_eq!(html.matches("file-head").count(), 1, "one file, one fold");
}

/// A run made from a Harbor regrade (spec section 4i) says both verdicts: on its page,
/// to anyone, and in its API answer (`regraded_from`).
#[tokio::test]
async fn a_regraded_run_says_what_it_was_judged_before_the_regrade() {
    let (app, _dir, key, store) = app_with_submitter("Team R").await;
    let manifest: bundle::Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-11-24T20:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "t", "version": "1"}, "provenance": {"kind": "imported", "source": "harbor 0.26.0"},
        "agent": {"id": "regraded-agent", "framework": "F", "model": "M"},
        "runs": [
            {"task": "wordfreq", "hint": "none", "attempt": 1, "outcome": "success", "regraded": {"from": "wrong_result"}},
            {"task": "wordfreq", "hint": "none", "attempt": 2, "outcome": "wrong_result"},
        ],
    }))
    .unwrap();
    let mut bytes = Vec::new();
    let mut b = bundle::BundleBuilder::new(manifest);
    // The agent's log its success carries (spec §5a).
    let log = b.add_bytes(b"regraded-agent: lower-cased the tokens\n".to_vec(), "text/plain");
    b.manifest_mut().runs[0].artifacts.insert("agent_log".into(), log.to_hex());
    b.write(&[&key], &mut bytes).unwrap();
    let stored = post_bundle(&app, bytes).await;
    assert_eq!(stored.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&stored.body));
    let bundle_id = stored.json()["bundle_id"].as_str().unwrap().to_owned();
    let runs = store.runs_of(&bundle_id, None, None).await.unwrap();
    let (first, second) =
        (runs.iter().find(|r| r.attempt == 1).unwrap().id, runs.iter().find(|r| r.attempt == 2).unwrap().id);
    let (status, html) = page(&app, &format!("/runs/{first}")).await;
    assert_eq!(status, StatusCode::OK);
    let said = html.split("class=\"regraded\"").nth(1).unwrap_or_else(|| panic!("{html}"));
    let said = &said[..said.find("</dd>").unwrap()];
    assert!(
        said.contains("first judged this agent run")
            && said.contains("wrong result")
            && said.contains("success"),
        "{said}"
    );
    let (_, other) = page(&app, &format!("/runs/{second}")).await;
    assert!(!other.contains("class=\"regraded\""), "only the regraded run says so");
    let answer = crate::harness::get(&app, &format!("/api/v1/runs/{first}")).await;
    assert_eq!(answer.json()["regraded_from"], "wrong_result");
    assert_eq!(answer.json()["outcome"], "success");
    let answer = crate::harness::get(&app, &format!("/api/v1/runs/{second}")).await;
    assert_eq!(answer.json()["regraded_from"], serde_json::Value::Null);
}
