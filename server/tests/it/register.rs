//! The community's way in, over real HTTP on 127.0.0.1, on SQLite and PostgreSQL: a new
//! key registers with `rexbench register` (proof of possession), submits while pending
//! (its bundle held: seen by itself and the maintainers, absent from every anonymous
//! answer, page, CSV and feed), is approved on the desk by a signed-in maintainer, and
//! its row appears for everyone; another is declined and its bundle is gone. Every bad
//! request and every desk form sent without its session's token, cross-site or by
//! someone else is refused with its code. The feed is read by feedparser.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use bundle::SecretKey;
use serde_json::{Value, json};
use store::Tier;
use store::testing::for_each_backend;

use crate::harness::{Answer, get, get_as_maintainer, open_link, post_bundle, send, state};

/// A bundle of one othello run (private outputs) of `agent`, signed by `key`.
pub(crate) fn bundle_of(key: &SecretKey, agent: &str) -> Vec<u8> {
    let manifest: bundle::Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-12-04T12:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "t", "version": "1"}, "provenance": {"kind": "evaluated"},
        "agent": {"id": agent, "framework": "F", "model": "M"},
        "runs": [{"task": "othello", "hint": "none", "attempt": 1, "outcome": "success"}],
    }))
    .unwrap();
    let mut b = bundle::BundleBuilder::new(manifest);
    let patch = format!("--- a/train.py\n+++ b/train.py\n@@ -1 +1,2 @@\n-x = 1\n+x = 2  # {agent}\n+y = 3\n");
    let patch = b.add_bytes(patch.into_bytes(), "text/x-diff");
    b.manifest_mut().runs[0].artifacts.insert("patch".into(), patch.to_hex());
    crate::harness::with_patches(&mut b);
    let mut out = Vec::new();
    b.write(&[key], &mut out).unwrap();
    out
}

async fn serve(app: Router) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        axum::serve(listener, app.into_make_service_with_connect_info::<std::net::SocketAddr>())
            .await
            .unwrap();
    });
    (url, handle)
}

/// `rexbench register` against `url`, from a blocking thread: the answer or the refusal.
async fn register(url: &str, key: &SecretKey, owner: &str) -> Result<Value, String> {
    let (url, key, owner) = (url.to_owned(), SecretKey::from_pem(&key.to_pem()).unwrap(), owner.to_owned());
    tokio::task::spawn_blocking(move || {
        let request = runner::register::Request {
            owner: &owner,
            contact: "team@lab.example.org",
            url: Some("https://lab.example.org"),
            note: Some("the private note <img src=x onerror=alert(9)>"),
        };
        runner::register::register(&url, &key, &request).map_err(|e| format!("{e:#}"))
    })
    .await
    .unwrap()
}

async fn login(url: &str, key: &SecretKey) -> Result<runner::login::Saved, String> {
    let (url, key) = (url.to_owned(), SecretKey::from_pem(&key.to_pem()).unwrap());
    tokio::task::spawn_blocking(move || runner::login::login(&url, &key).map_err(|e| format!("{e:#}")))
        .await
        .unwrap()
}

fn post_json(path: &str, body: Value, token: Option<&str>) -> Request<Body> {
    let mut r = Request::post(path).header(header::CONTENT_TYPE, "application/json");
    if let Some(t) = token {
        r = r.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    r.body(Body::from(body.to_string())).unwrap()
}

fn bearer(path: &str, token: &str) -> Request<Body> {
    Request::get(path).header(header::AUTHORIZATION, format!("Bearer {token}")).body(Body::empty()).unwrap()
}

fn with_cookie(path: &str, cookie: &str) -> Request<Body> {
    Request::get(path).header(header::COOKIE, cookie).body(Body::empty()).unwrap()
}

/// A desk form POSTed by a browser with `cookie`, `site` as its `Sec-Fetch-Site`.
fn desk_form(path: &str, cookie: &str, site: &str, fields: &[(&str, &str)]) -> Request<Body> {
    let body = form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
    Request::post(path)
        .header(header::COOKIE, cookie)
        .header("sec-fetch-site", site)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body))
        .unwrap()
}

fn refused(answer: &Answer, status: StatusCode, code: &str) {
    assert_eq!(
        (answer.status, answer.code().as_str()),
        (status, code),
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
}

fn text(a: &Answer) -> String {
    String::from_utf8_lossy(&a.body).into_owned()
}

/// A browser session's cookie (`rexbench_session=…`) from a one-time link.
async fn browser(app: &Router, link: &str) -> String {
    let button = open_link(app, link, &[]).await;
    assert_eq!(button.status, StatusCode::SEE_OTHER, "{}", text(&button));
    button.header(header::SET_COOKIE).split(';').next().unwrap().to_owned()
}

/// The form token in the desk's page.
fn form_token(desk: &str) -> String {
    desk.split("name=\"token\" value=\"")
        .nth(1)
        .expect("a form token on the desk")
        .split('"')
        .next()
        .unwrap()
        .to_owned()
}

/// Every anonymous answer that could show an agent: none of them shows `agent`.
async fn absent_for_anyone(app: &Router, agent: &str) {
    for path in [
        "/",
        "/api/v1/leaderboard",
        "/leaderboard.csv",
        "/changes",
        "/changes.atom",
        "/api/v1/changes",
        "/keys",
    ] {
        let a = get(app, path).await;
        assert_eq!(a.status, StatusCode::OK, "{path}");
        assert!(!text(&a).contains(agent), "{path} shows the held agent {agent}");
        assert!(!text(&a).contains("team@lab.example.org"), "{path} shows a contact");
        assert!(!text(&a).contains("the private note"), "{path} shows a request's note");
    }
    assert_eq!(get(app, &format!("/agents/{agent}")).await.status, StatusCode::NOT_FOUND);
    assert_eq!(get(app, &format!("/api/v1/agents/{agent}")).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_key_registers_submits_while_pending_and_is_approved_or_declined_on_the_desk() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let maintainer_link = server::auth::link(&state, None, true, 10).await.unwrap();
        let other = SecretKey::generate();
        state.store.add_key(&other.public_key(), "Other Team", Tier::Submitter).await.unwrap();
        let other_link =
            server::auth::link(&state, Some(&other.public_key().keyid().to_hex()), false, 10).await.unwrap();
        let store = state.store.clone();
        let app = server::build_app(state);
        let (url, server) = serve(app.clone()).await;
        let kept = |bytes: &[u8]| {
            let (store, digest) = (store.clone(), bundle::Digest::of(bytes));
            async move { store.blobs().contains(&digest).await.unwrap() }
        };

        // A new key registers with one command.
        let a = SecretKey::generate();
        let filed = register(&url, &a, "Lab of Agents").await.unwrap();
        let id = filed["request"]["id"].as_i64().unwrap();
        assert_eq!(filed["request"]["status"], "pending");
        assert_eq!(filed["request"]["private"]["contact"], "team@lab.example.org");
        assert_eq!(filed["page"], format!("/keys/request?id={id}"));
        // Anyone reads its status, not its contact or note.
        let public = get(&app, &format!("/api/v1/key-requests/{id}")).await.json();
        assert_eq!(
            (public["request"]["owner"].as_str(), public["request"].get("private")),
            (Some("Lab of Agents"), None)
        );
        let page = text(&get(&app, &format!("/keys/request?id={id}")).await);
        assert!(page.contains("Pending") && !page.contains("team@lab.example.org"), "{page}");

        // It submits at once: held.
        let held = post_bundle(&app, bundle_of(&a, "agent-a")).await;
        assert_eq!(held.status, StatusCode::ACCEPTED, "{}", text(&held));
        assert_eq!(
            (held.json()["status"].as_str(), held.json()["request"].as_i64()),
            (Some("held"), Some(id))
        );
        absent_for_anyone(&app, "agent-a").await;
        // Its holder, signed in, sees it held; another submitter does not.
        let session = login(&url, &a).await.unwrap();
        let own = send(&app, bearer(&format!("/api/v1/key-requests/{id}"), &session.token)).await.json();
        assert_eq!(own["request"]["private"]["held"][0]["agent_id"], "agent-a", "{own}");
        let own_page = text(
            &send(
                &app,
                with_cookie(
                    &format!("/keys/request?id={id}"),
                    &browser(&app, session.browser_link.strip_prefix(&url).unwrap()).await,
                ),
            )
            .await,
        );
        assert!(own_page.contains("agent-a") && own_page.contains("team@lab.example.org"), "{own_page}");
        let other_cookie = browser(&app, &other_link).await;
        let theirs = text(&send(&app, with_cookie(&format!("/keys/request?id={id}"), &other_cookie)).await);
        assert!(!theirs.contains("agent-a") && !theirs.contains("team@lab.example.org"));
        // The maintainers see it on their list.
        let listed = get_as_maintainer(&app, "/api/v1/admin/key-requests").await.json();
        assert_eq!(listed["requests"][0]["private"]["held"][0]["agent_id"], "agent-a", "{listed}");

        // The desk: a maintainer's only.
        assert_eq!(get(&app, "/desk").await.status, StatusCode::FORBIDDEN);
        assert_eq!(send(&app, with_cookie("/desk", &other_cookie)).await.status, StatusCode::FORBIDDEN);
        let cookie = browser(&app, &maintainer_link).await;
        let desk = send(&app, with_cookie("/desk", &cookie)).await;
        assert_eq!(desk.status, StatusCode::OK);
        assert_eq!(desk.header(header::CACHE_CONTROL), "private, no-store");
        let desk = text(&desk);
        assert!(desk.contains(&format!("Request {id}: ")) && desk.contains("agent-a"), "{desk}");
        assert!(
            desk.contains("the private note &lt;img src=x") && !desk.contains("<img src=x"),
            "escaped: {desk}"
        );
        let home = text(&send(&app, with_cookie("/", &cookie)).await);
        assert!(home.contains("Desk: 1 request · "), "the header counts what waits");
        let token = form_token(&desk);
        let approve = format!("/desk/requests/{id}/approve");
        // Refused: cross-site, without the token, with another session's token, by a submitter.
        let cross = send(
            &app,
            desk_form(&approve, &cookie, "cross-site", &[("token", &token), ("tier", "submitter")]),
        )
        .await;
        assert_eq!(cross.status, StatusCode::FORBIDDEN);
        assert!(text(&cross).contains("cross_site"), "{}", text(&cross));
        let tokenless =
            send(&app, desk_form(&approve, &cookie, "same-origin", &[("tier", "submitter")])).await;
        assert_eq!(tokenless.status, StatusCode::FORBIDDEN);
        assert!(text(&tokenless).contains("bad_form_token"));
        let by_submitter = send(
            &app,
            desk_form(&approve, &other_cookie, "same-origin", &[("token", &token), ("tier", "maintainer")]),
        )
        .await;
        assert_eq!(by_submitter.status, StatusCode::FORBIDDEN);
        assert!(text(&by_submitter).contains("not_maintainer"));
        assert_eq!(
            get(&app, &format!("/api/v1/key-requests/{id}")).await.json()["request"]["status"],
            "pending"
        );
        // Approved on the desk: the row appears for everyone.
        let approved = send(
            &app,
            desk_form(&approve, &cookie, "same-origin", &[("token", &token), ("tier", "submitter")]),
        )
        .await;
        assert_eq!(approved.status, StatusCode::SEE_OTHER, "{}", text(&approved));
        assert_eq!(approved.header(header::LOCATION), "/desk?done=approved#requests");
        assert_eq!(get(&app, "/api/v1/agents/agent-a").await.status, StatusCode::OK);
        assert!(text(&get(&app, "/leaderboard.csv").await).contains("agent-a"));
        let status = get(&app, &format!("/api/v1/key-requests/{id}")).await.json();
        assert_eq!(
            (status["request"]["status"].as_str(), status["request"]["tier"].as_str()),
            (Some("approved"), Some("submitter"))
        );
        let keys = get(&app, "/api/v1/keys").await.json();
        assert!(keys["keys"].as_array().unwrap().iter().any(|k| k["owner"] == "Lab of Agents"));
        let log = get_as_maintainer(&app, "/api/v1/admin/access-log").await.json();
        assert!(
            log["reads"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["via"] == "desk"
                    && r["action"].as_str().unwrap().starts_with("approve key request")),
            "{log}"
        );
        // Approved twice: refused.
        let again = send(
            &app,
            post_json(
                &format!("/api/v1/admin/key-requests/{id}/approve"),
                json!({"tier": "submitter"}),
                Some("s3cret-token"),
            ),
        )
        .await;
        refused(&again, StatusCode::CONFLICT, "request_decided");

        // Another key is declined: its held bundle is gone from every answer.
        let b = SecretKey::generate();
        let filed = register(&url, &b, "Second Lab").await.unwrap();
        let id_b = filed["request"]["id"].as_i64().unwrap();
        let held_b = bundle_of(&b, "agent-b");
        assert_eq!(post_bundle(&app, held_b.clone()).await.status, StatusCode::ACCEPTED);
        assert!(kept(&held_b).await, "a held bundle is kept whole");
        // A bundle the board refuses keeps nothing: another key's agent.
        let theirs = bundle_of(&b, "agent-a");
        refused(&post_bundle(&app, theirs.clone()).await, StatusCode::FORBIDDEN, "agent_owned_by_other_key");
        assert!(!kept(&theirs).await, "a refused bundle leaves no blob");
        let declined = send(
            &app,
            post_json(
                &format!("/api/v1/admin/key-requests/{id_b}/decline"),
                json!({"reason": "not a research agent"}),
                Some("s3cret-token"),
            ),
        )
        .await;
        assert_eq!(declined.status, StatusCode::OK, "{}", text(&declined));
        assert_eq!(declined.json()["removed"], 1);
        absent_for_anyone(&app, "agent-b").await;
        assert!(!kept(&held_b).await, "a declined request's bundles leave the disk at once");
        let status = get(&app, &format!("/api/v1/key-requests/{id_b}")).await.json();
        assert_eq!(
            (status["request"]["status"].as_str(), status["request"]["reason"].as_str()),
            (Some("declined"), Some("not a research agent"))
        );
        let listed = get_as_maintainer(&app, "/api/v1/admin/key-requests?status=all").await.json();
        assert!(
            listed["requests"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["private"]["held"].as_array().unwrap().is_empty())
        );
        let changes = text(&get(&app, "/api/v1/changes").await);
        assert!(
            changes.contains(&format!(
                "key request {id_b} for Second Lab declined: not a research agent; its 1 held bundle removed"
            )),
            "{changes}"
        );
        // Its key signs in no more, and submits nothing.
        assert!(login(&url, &b).await.unwrap_err().contains("unknown_key"));
        refused(
            &post_bundle(&app, bundle_of(&b, "agent-b")).await,
            StatusCode::UNAUTHORIZED,
            "no_trusted_signature",
        );

        // The feed, read by feedparser: valid, and no private word in it.
        let feed = get(&app, "/changes.atom").await;
        assert_eq!(feed.header(header::CONTENT_TYPE), "application/atom+xml; charset=utf-8");
        let checked = feed_check(&feed.body);
        assert_eq!(checked["bozo"], false, "{checked}");
        assert_eq!(checked["version"], "atom10");
        assert!(checked["entries"].as_i64().unwrap() >= 4, "{checked}");
        assert!(
            checked["ids"]
                .as_array()
                .unwrap()
                .iter()
                .all(|i| i.as_str().unwrap().starts_with("http://board.test/changes#change-"))
        );
        server.abort();
    })
    .await;
}

/// feedparser's reading of a feed: whether it found it malformed (`bozo`), its version,
/// and its entries' ids.
fn feed_check(feed: &[u8]) -> Value {
    use std::io::Write as _;
    let script = "import sys, json, feedparser\n\
                  d = feedparser.parse(sys.stdin.buffer.read())\n\
                  print(json.dumps({'bozo': bool(d.bozo), 'problem': str(d.get('bozo_exception', '')), \
                  'version': d.version, 'entries': len(d.entries), 'ids': [e.id for e in d.entries], \
                  'title': d.feed.get('title')}))\n";
    let mut child = std::process::Command::new(crate::harness::python())
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(feed).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn every_bad_key_request_is_refused_with_its_code() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let known = SecretKey::generate();
        state.store.add_key(&known.public_key(), "Team A", Tier::Submitter).await.unwrap();
        let app = server::build_app(state);
        let (url, server) = serve(app.clone()).await;
        let refusal = |r: Result<Value, String>| r.unwrap_err();

        // Without proof of possession: another key's signature over the challenge.
        let k = SecretKey::generate();
        let pem = k.public_key().to_pem();
        let challenge = send(&app, post_json("/api/v1/key-requests/challenge", json!({"public_key": pem}), None)).await;
        assert_eq!(challenge.status, StatusCode::CREATED);
        let nonce = challenge.json()["challenge"].as_str().unwrap().to_owned();
        use base64::Engine as _;
        let forged = base64::engine::general_purpose::STANDARD.encode(SecretKey::generate().sign(challenge.json()["message"].as_str().unwrap().as_bytes()));
        let body = |signature: &str, challenge: &str| json!({"public_key": pem, "owner": "Lab", "contact": "a@b.org", "challenge": challenge, "signature": signature});
        refused(&send(&app, post_json("/api/v1/key-requests", body(&forged, &nonce), None)).await, StatusCode::UNAUTHORIZED, "bad_signature");
        // A login signature is no request signature (another domain).
        let login_sig = base64::engine::general_purpose::STANDARD
            .encode(k.sign(server::auth::signed_message(&nonce, &k.public_key().keyid().to_hex()).as_slice()));
        refused(&send(&app, post_json("/api/v1/key-requests", body(&login_sig, &nonce), None)).await, StatusCode::UNAUTHORIZED, "bad_signature");
        // A challenge never issued.
        let message = format!("rexbench-key-request/v1\n{}\n{}\n", "00".repeat(32), k.public_key().keyid().to_hex());
        let unissued = base64::engine::general_purpose::STANDARD.encode(k.sign(message.as_bytes()));
        refused(&send(&app, post_json("/api/v1/key-requests", body(&unissued, &"00".repeat(32)), None)).await, StatusCode::UNAUTHORIZED, "bad_challenge");

        // A key registered already, or requested before.
        assert!(refusal(register(&url, &known, "Team Z").await).contains("409 key_registered"));
        let fresh = SecretKey::generate();
        register(&url, &fresh, "Fresh Lab").await.unwrap();
        assert!(refusal(register(&url, &fresh, "Fresh Lab 2").await).contains("409 key_requested"));
        // Owners that imitate the board's badges or another owner (look-alikes included).
        assert!(refusal(register(&url, &SecretKey::generate(), "Verified Agents").await).contains("422 owner_imitates_badge"));
        assert!(refusal(register(&url, &SecretKey::generate(), "Team \u{0410}").await).contains("422 owner_taken"), "Cyrillic А reads as A");
        assert!(refusal(register(&url, &SecretKey::generate(), "fresh lab").await).contains("422 owner_taken"));
        // Over the address's allowance (3 a day: one filed above, two more).
        register(&url, &SecretKey::generate(), "Third Lab").await.unwrap();
        register(&url, &SecretKey::generate(), "Fourth Lab").await.unwrap();
        assert!(refusal(register(&url, &SecretKey::generate(), "Fifth Lab").await).contains("429 too_many_key_requests"));
        // Bad fields, each its own code.
        let bad = |field: &str, value: Value| {
            let mut b = json!({"public_key": pem, "owner": "Lab", "contact": "a@b.org", "challenge": "c", "signature": "s"});
            b[field] = value;
            b
        };
        for (field, value, code) in [
            ("contact", json!("call us"), "invalid_contact"),
            ("url", json!("javascript:alert(1)"), "invalid_url"),
            ("owner", json!(" "), "invalid_owner"),
            ("public_key", json!("not a key"), "invalid_public_key"),
        ] {
            refused(&send(&app, post_json("/api/v1/key-requests", bad(field, value), None)).await, StatusCode::UNPROCESSABLE_ENTITY, code);
        }
        server.abort();
    })
    .await;
}
