//! Signing in with a registered key, over real HTTP on 127.0.0.1: `rexbench login`
//! signs a challenge and gets a token and a one-time browser link; a submitter reads
//! their own bundles' private outputs and no one else's; every bad token, ticket and
//! challenge is refused with its code, counted and rate-limited; sessions end at
//! sign-out, on expiry and when their key is revoked; every private read is logged.
//! On SQLite and PostgreSQL, and across two server processes.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use bundle::SecretKey;
use serde_json::{Value, json};
use store::Tier;
use store::testing::{drop_postgres, for_each_backend, fresh_postgres};

use crate::harness::{Answer, get, get_as_maintainer, open_link, post_bundle, send, state};
use crate::process::Server;

/// A bundle of one othello run (RExBench's: private outputs) whose patch and log name
/// the agent, so that two agents' outputs differ.
fn bundle_of(key: &SecretKey, agent: &str) -> Vec<u8> {
    let manifest: bundle::Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-11-20T12:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "t", "version": "1"}, "provenance": {"kind": "evaluated"},
        "agent": {"id": agent, "framework": "F", "model": "M"},
        "runs": [{"task": "othello", "hint": "none", "attempt": 1, "outcome": "success"}],
    }))
    .unwrap();
    let mut b = bundle::BundleBuilder::new(manifest);
    let patch = format!(
        "--- a/train.py\n+++ b/train.py\n@@ -1 +1,2 @@\n-x = 1\n+x = 2  # {agent}'s secret change\n+y = 3\n"
    );
    let patch = b.add_bytes(patch.into_bytes(), "text/x-diff");
    let log = b.add_bytes(format!("{agent}: the private log of this run\n").into_bytes(), "text/plain");
    b.manifest_mut().runs[0].artifacts.insert("patch".into(), patch.to_hex());
    b.manifest_mut().runs[0].artifacts.insert("stdout".into(), log.to_hex());
    crate::harness::with_patches(&mut b);
    let mut out = Vec::new();
    b.write(&[key], &mut out).unwrap();
    out
}

/// The one run of `agent`'s current submission: its number and its artifacts' digests.
async fn run_of(app: &Router, agent: &str) -> (i64, Vec<String>) {
    let page = String::from_utf8(get(app, &format!("/agents/{agent}")).await.body).unwrap();
    let id: i64 = page.split("href=\"/runs/").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    let run = get(app, &format!("/api/v1/runs/{id}")).await.json();
    let digests =
        run["artifacts"].as_array().unwrap().iter().map(|a| a["digest"].as_str().unwrap().to_owned());
    (id, digests.collect())
}

/// Serves `app` on 127.0.0.1 until the returned handle is dropped (aborted).
async fn serve(app: Router) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (url, handle)
}

fn with(path: &str, name: header::HeaderName, value: &str) -> Request<Body> {
    Request::get(path).header(name, value).body(Body::empty()).unwrap()
}

fn bearer(path: &str, token: &str) -> Request<Body> {
    with(path, header::AUTHORIZATION, &format!("Bearer {token}"))
}

fn cookie(path: &str, value: &str) -> Request<Body> {
    with(path, header::COOKIE, &format!("rexbench_session={value}"))
}

fn post_json(path: &str, body: Value) -> Request<Body> {
    Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// `rexbench login` against `url`, from a blocking thread.
async fn login(url: &str, key: &SecretKey) -> Result<runner::login::Saved, String> {
    let (url, key) = (url.to_owned(), SecretKey::from_pem(&key.to_pem()).unwrap());
    tokio::task::spawn_blocking(move || runner::login::login(&url, &key).map_err(|e| format!("{e:#}")))
        .await
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

#[tokio::test]
async fn a_submitter_signs_in_with_their_key_and_reads_their_own_private_outputs_only() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let (a, b) = (SecretKey::generate(), SecretKey::generate());
        state.store.add_key(&a.public_key(), "Team A", Tier::Submitter).await.unwrap();
        state.store.add_key(&b.public_key(), "Team B", Tier::Submitter).await.unwrap();
        let app = server::build_app(state);
        assert_eq!(post_bundle(&app, bundle_of(&a, "agent-a")).await.status, StatusCode::CREATED);
        assert_eq!(post_bundle(&app, bundle_of(&b, "agent-b")).await.status, StatusCode::CREATED);
        let (run_a, digests_a) = run_of(&app, "agent-a").await;
        let (run_b, digests_b) = run_of(&app, "agent-b").await;
        let (url, server) = serve(app.clone()).await;

        let session = login(&url, &a).await.unwrap();
        assert_eq!(session.reads_as, "submitter");
        assert!(
            session.token.starts_with("rxs_") && session.browser_link.starts_with(&format!("{url}/login/"))
        );
        let who = send(&app, bearer("/api/v1/login", &session.token)).await.json();
        assert_eq!(who["reads_as"], "submitter");
        assert!(who["who"].as_str().unwrap().contains("Team A"));

        // Their own run: the content; the other team's: what anyone sees.
        let own = send(&app, bearer(&format!("/api/v1/runs/{run_a}"), &session.token)).await;
        assert_eq!(own.header(header::CACHE_CONTROL), "private, no-store");
        assert_eq!(own.json()["readable"], true);
        assert_eq!(
            send(&app, bearer(&format!("/api/v1/runs/{run_b}"), &session.token)).await.json()["readable"],
            false
        );
        for d in &digests_a {
            let answer = send(&app, bearer(&format!("/artifacts/{d}"), &session.token)).await;
            assert_eq!(answer.status, StatusCode::OK);
            assert_eq!(answer.header(header::CACHE_CONTROL), "private, no-store");
        }
        for d in &digests_b {
            let answer = send(&app, bearer(&format!("/artifacts/{d}"), &session.token)).await;
            refused(&answer, StatusCode::FORBIDDEN, "outputs_private");
            assert!(!String::from_utf8_lossy(&answer.body).contains("agent-b: the private log"));
        }
        let page =
            String::from_utf8(send(&app, bearer(&format!("/runs/{run_a}"), &session.token)).await.body)
                .unwrap();
        assert!(
            page.contains("agent-a&#x27;s secret change") || page.contains("agent-a's secret change"),
            "{page}"
        );
        let theirs =
            String::from_utf8(send(&app, bearer(&format!("/runs/{run_b}"), &session.token)).await.body)
                .unwrap();
        assert!(!theirs.contains("secret change") && theirs.contains("The outputs of this run are private"));

        // `rexbench runs download` with the session: each file checked against its digest.
        let dir = tempfile::tempdir().unwrap();
        let (u, t, out) = (url.clone(), session.token.clone(), dir.path().join("a"));
        let files = tokio::task::spawn_blocking(move || runner::login::download(&u, Some(&t), run_a, &out))
            .await
            .unwrap()
            .unwrap();
        // The patch, the log, the agent's log and the provenance record an evaluated
        // success carries.
        assert_eq!(files.len(), 4);
        assert!(
            std::fs::read_to_string(dir.path().join("a/stdout"))
                .unwrap()
                .contains("agent-a: the private log")
        );
        let (u, t, out) = (url.clone(), session.token.clone(), dir.path().join("b"));
        let theirs = tokio::task::spawn_blocking(move || runner::login::download(&u, Some(&t), run_b, &out))
            .await
            .unwrap()
            .unwrap_err();
        assert!(format!("{theirs:#}").contains("403 outputs_private"), "{theirs:#}");

        // The one-time link signs a browser in, once.
        let path = session.browser_link.strip_prefix(&url).unwrap().to_owned();
        let opened = open_link(&app, &path, &[]).await;
        assert_eq!(opened.status, StatusCode::SEE_OTHER);
        assert_eq!(opened.header(header::LOCATION), "/signin");
        let set = opened.header(header::SET_COOKIE).to_owned();
        for attribute in ["rexbench_session=", "HttpOnly", "SameSite=Strict", "Path=/"] {
            assert!(set.contains(attribute), "{set}");
        }
        assert!(!set.contains("Secure"), "not over TLS: {set}");
        let browser = set.split(';').next().unwrap().strip_prefix("rexbench_session=").unwrap().to_owned();
        let again = open_link(&app, &path, &[]).await;
        assert_eq!(again.header(header::LOCATION), "/signin?problem=used", "a link opens one session");
        let signed_in = send(&app, cookie(&format!("/runs/{run_a}"), &browser)).await;
        assert_eq!(signed_in.header(header::CACHE_CONTROL), "private, no-store");
        assert!(String::from_utf8_lossy(&signed_in.body).contains("secret change"));
        let status = String::from_utf8(send(&app, cookie("/signin", &browser)).await.body).unwrap();
        assert!(
            status.contains("You are signed in as submitter key") && status.contains("Sign out"),
            "{status}"
        );
        // The same page for anyone, from the cache, says nothing of that session.
        assert!(!String::from_utf8(get(&app, "/signin").await.body).unwrap().contains("You are signed in"));
        let tls = login_link(&app, &url, &a).await;
        assert!(tls.header(header::SET_COOKIE).contains("Secure"), "behind a TLS proxy");

        // Signing out: only from this site's own page, and then the cookie reads as nothing.
        let out = |site: &str| {
            Request::post("/signout")
                .header(header::COOKIE, format!("rexbench_session={browser}"))
                .header("sec-fetch-site", site)
                .body(Body::empty())
                .unwrap()
        };
        refused(&send(&app, out("cross-site")).await, StatusCode::FORBIDDEN, "cross_site");
        let gone = send(&app, out("same-origin")).await;
        assert_eq!(gone.status, StatusCode::SEE_OTHER);
        let cleared = gone.header(header::SET_COOKIE);
        assert!(cleared.starts_with("rexbench_session=") && cleared.contains("Max-Age=0"), "{cleared}");
        let after = send(&app, cookie(&format!("/runs/{run_a}"), &browser)).await;
        assert!(!String::from_utf8_lossy(&after.body).contains("secret change"));
        refused(
            &send(&app, cookie(&format!("/api/v1/runs/{run_a}"), &browser)).await,
            StatusCode::UNAUTHORIZED,
            "session_ended",
        );

        // Every read of private content was logged, with who read what.
        let log = get_as_maintainer(&app, "/api/v1/admin/access-log").await.json();
        let reads = log["reads"].as_array().unwrap();
        let keyid = a.public_key().keyid().to_string();
        assert!(reads.iter().all(|r| r["keyid"] == json!(keyid)), "{log}");
        for via in ["api", "page", "artifact"] {
            assert!(reads.iter().any(|r| r["via"] == via), "{via}: {log}");
        }
        assert!(reads.iter().any(|r| r["run_id"] == json!(run_a)));
        assert!(!reads.iter().any(|r| r["run_id"] == json!(run_b)), "nothing of B's was read");
        server.abort();
    })
    .await;
}

/// A one-time link opened as if through a TLS-terminating proxy: the button's answer.
async fn login_link(app: &Router, url: &str, key: &SecretKey) -> Answer {
    let session = login(url, key).await.unwrap();
    let path = session.browser_link.strip_prefix(url).unwrap().to_owned();
    open_link(app, &path, &[("x-forwarded-proto", "https")]).await
}

#[tokio::test]
async fn forged_expired_replayed_and_cross_key_credentials_are_refused() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let (a, b, stranger) = (SecretKey::generate(), SecretKey::generate(), SecretKey::generate());
        state.store.add_key(&a.public_key(), "Team A", Tier::Submitter).await.unwrap();
        state.store.add_key(&b.public_key(), "Team B", Tier::Submitter).await.unwrap();
        let store = state.store.clone();
        let app = server::build_app(state);
        assert_eq!(post_bundle(&app, bundle_of(&a, "agent-a")).await.status, StatusCode::CREATED);
        let (run_a, _) = run_of(&app, "agent-a").await;
        let (ka, kb) = (a.public_key().keyid().to_string(), b.public_key().keyid().to_string());
        let challenge = |keyid: &str| post_json("/api/v1/login/challenge", json!({ "keyid": keyid }));
        let sign = |key: &SecretKey, nonce: &str, keyid: &str| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .encode(key.sign(format!("rexbench-login/v1\n{nonce}\n{keyid}\n").as_bytes()))
        };
        let answer = |keyid: &str, nonce: &str, signature: String| {
            post_json("/api/v1/login", json!({ "keyid": keyid, "challenge": nonce, "signature": signature }))
        };

        // A key the registry does not hold gets no challenge.
        refused(
            &send(&app, challenge(&stranger.public_key().keyid().to_string())).await,
            StatusCode::NOT_FOUND,
            "unknown_key",
        );
        let issued = send(&app, challenge(&ka)).await;
        assert_eq!(issued.status, StatusCode::CREATED);
        let nonce = issued.json()["challenge"].as_str().unwrap().to_owned();
        // Another key's signature, under A's name or its own; a signature of other bytes.
        refused(
            &send(&app, answer(&ka, &nonce, sign(&b, &nonce, &ka))).await,
            StatusCode::UNAUTHORIZED,
            "bad_signature",
        );
        refused(
            &send(&app, answer(&kb, &nonce, sign(&b, &nonce, &kb))).await,
            StatusCode::UNAUTHORIZED,
            "bad_challenge",
        );
        refused(
            &send(&app, answer(&ka, &nonce, sign(&a, "other", &ka))).await,
            StatusCode::UNAUTHORIZED,
            "bad_signature",
        );
        refused(
            &send(&app, answer(&ka, &nonce, "not base64!".into())).await,
            StatusCode::UNAUTHORIZED,
            "bad_signature",
        );
        refused(
            &send(&app, answer(&ka, &"0".repeat(64), sign(&a, &"0".repeat(64), &ka))).await,
            StatusCode::UNAUTHORIZED,
            "bad_challenge",
        );
        // The right answer once; the same answer again is a replay.
        let session = send(&app, answer(&ka, &nonce, sign(&a, &nonce, &ka))).await;
        assert_eq!(session.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&session.body));
        let token = session.json()["token"].as_str().unwrap().to_owned();
        refused(
            &send(&app, answer(&ka, &nonce, sign(&a, &nonce, &ka))).await,
            StatusCode::UNAUTHORIZED,
            "bad_challenge",
        );
        // An expired challenge.
        let late = send(&app, challenge(&ka)).await.json()["challenge"].as_str().unwrap().to_owned();
        crate::evidence::tamper(
            &backend,
            &format!("UPDATE login_challenges SET expires_at = 0 WHERE challenge = '{late}'"),
        )
        .await;
        refused(
            &send(&app, answer(&ka, &late, sign(&a, &late, &ka))).await,
            StatusCode::UNAUTHORIZED,
            "bad_challenge",
        );
        // Bodies that are not requests.
        refused(
            &send(&app, post_json("/api/v1/login", json!({ "keyid": ka }))).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        );

        // Tokens: forged, then the real one expired, signed out, its key revoked.
        let run = format!("/api/v1/runs/{run_a}");
        assert_eq!(send(&app, bearer(&run, &token)).await.json()["readable"], true);
        refused(
            &send(&app, bearer(&run, "rxs_forged")).await,
            StatusCode::UNAUTHORIZED,
            "invalid_credentials",
        );
        refused(
            &send(&app, bearer(&run, "not-a-token")).await,
            StatusCode::UNAUTHORIZED,
            "invalid_credentials",
        );
        refused(&send(&app, cookie(&run, "forged")).await, StatusCode::UNAUTHORIZED, "invalid_credentials");
        let hash = bundle::Digest::of(token.as_bytes()).to_hex();
        crate::evidence::tamper(
            &backend,
            &format!("UPDATE sessions SET expires_at = 0 WHERE token_hash = '{hash}'"),
        )
        .await;
        refused(&send(&app, bearer(&run, &token)).await, StatusCode::UNAUTHORIZED, "session_expired");
        crate::evidence::tamper(
            &backend,
            &format!("UPDATE sessions SET expires_at = 99999999999 WHERE token_hash = '{hash}'"),
        )
        .await;
        let out = Request::post("/api/v1/logout")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(&app, out).await.status, StatusCode::NO_CONTENT);
        refused(&send(&app, bearer(&run, &token)).await, StatusCode::UNAUTHORIZED, "session_ended");
        let fresh = {
            let nonce = send(&app, challenge(&ka)).await.json()["challenge"].as_str().unwrap().to_owned();
            send(&app, answer(&ka, &nonce, sign(&a, &nonce, &ka))).await.json()
        };
        let (fresh_token, link) =
            (fresh["token"].as_str().unwrap().to_owned(), fresh["browser_link"].as_str().unwrap().to_owned());
        store.revoke_key(&ka).await.unwrap();
        refused(&send(&app, bearer(&run, &fresh_token)).await, StatusCode::UNAUTHORIZED, "key_revoked");
        assert_eq!(open_link(&app, &link, &[]).await.header(header::LOCATION), "/signin?problem=revoked");
        refused(&send(&app, challenge(&ka)).await, StatusCode::UNAUTHORIZED, "key_revoked");
        // Tickets: forged, expired.
        assert_eq!(
            open_link(&app, "/login/forged", &[]).await.header(header::LOCATION),
            "/signin?problem=unknown"
        );
        let nonce = send(&app, challenge(&kb)).await.json()["challenge"].as_str().unwrap().to_owned();
        let link = send(&app, answer(&kb, &nonce, sign(&b, &nonce, &kb))).await.json()["browser_link"]
            .as_str()
            .unwrap()
            .to_owned();
        let ticket = bundle::Digest::of(link.strip_prefix("/login/").unwrap().as_bytes()).to_hex();
        crate::evidence::tamper(
            &backend,
            &format!("UPDATE sessions SET expires_at = 0 WHERE token_hash = '{ticket}'"),
        )
        .await;
        assert_eq!(open_link(&app, &link, &[]).await.header(header::LOCATION), "/signin?problem=expired");
        // A ticket is no token, nor a token a cookie.
        refused(
            &send(&app, cookie(&run, &fresh_token)).await,
            StatusCode::UNAUTHORIZED,
            "invalid_credentials",
        );

        let metrics =
            String::from_utf8(crate::harness::get_as_maintainer(&app, "/metrics").await.body).unwrap();
        let counted: u64 = metrics
            .lines()
            .find_map(|l| l.strip_prefix("rexbench_refused_reads_total{reason=\"invalid_credentials\"} "))
            .unwrap()
            .parse()
            .unwrap();
        assert!(counted >= 15, "every refusal is counted: {counted}\n{metrics}");
    })
    .await;
}

#[tokio::test]
async fn sign_in_attempts_are_rate_limited_per_address() {
    let dir = tempfile::tempdir().unwrap();
    let app = crate::harness::guarded_app(dir.path()).await;
    // A quarter of the hourly allowance may come at once: one here.
    refused(
        &send(&app, bearer("/api/v1/runs/1", "rxs_guess")).await,
        StatusCode::UNAUTHORIZED,
        "invalid_credentials",
    );
    let limited = send(&app, bearer("/api/v1/runs/1", "rxs_guess")).await;
    refused(&limited, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert!(!limited.header(header::RETRY_AFTER).is_empty());
    let challenge = send(&app, post_json("/api/v1/login/challenge", json!({ "keyid": "ab" }))).await;
    refused(&challenge, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    // Reading as anyone is no attempt.
    assert_eq!(get(&app, "/api/v1/leaderboard").await.status, StatusCode::OK);
}

/// Once an address has spent its allowance of refused credentials, every credential it
/// sends is refused until the wait is over, the right admin token and sign-in included:
/// the limit slows guessing. Requests that send no credential spend nothing.
#[tokio::test]
async fn during_a_lockout_the_right_admin_token_is_refused_too() {
    let dir = tempfile::tempdir().unwrap();
    let app = crate::harness::guarded_app(dir.path()).await;
    let keys = "/api/v1/admin/keys";
    // Without credentials: refused, and nothing spent (the allowance is one at once);
    // the same for an artifact read without them.
    for _ in 0..3 {
        refused(&get(&app, keys).await, StatusCode::UNAUTHORIZED, "admin_unauthorized");
        let artifact = get(&app, &format!("/artifacts/{}", "ab".repeat(32))).await;
        assert_ne!(artifact.status, StatusCode::TOO_MANY_REQUESTS);
    }
    assert_eq!(send(&app, bearer(keys, "s3cret-token")).await.status, StatusCode::OK);
    // A wrong token spends the allowance; then even the right one is refused.
    refused(&send(&app, bearer(keys, "a-guess")).await, StatusCode::UNAUTHORIZED, "admin_unauthorized");
    refused(&send(&app, bearer(keys, "a-guess")).await, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    let right = send(&app, bearer(keys, "s3cret-token")).await;
    refused(&right, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert!(!right.header(header::RETRY_AFTER).is_empty());
    refused(
        &send(&app, bearer("/api/v1/runs/1", "rxs_guess")).await,
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
    );
    refused(
        &send(&app, post_json("/api/v1/login/challenge", json!({ "keyid": "ab" }))).await,
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
    );
    // Reading as anyone sends no credential: it is answered.
    assert_eq!(get(&app, "/api/v1/leaderboard").await.status, StatusCode::OK);
}

#[tokio::test]
async fn a_session_opened_on_one_server_process_holds_on_another() {
    let Ok(url) = std::env::var("TEST_DATABASE_URL") else {
        panic!("TEST_DATABASE_URL must name a PostgreSQL server (scripts/test sets it)");
    };
    let (backend, name) = fresh_postgres(&url).await;
    let dir = tempfile::tempdir().unwrap();
    let blobs = dir.path().join("blobs");
    let token = [("REXBENCH_ADMIN_TOKEN", "s3cret-token")];
    let a = Server::start_args(&["serve"], &backend, &blobs, &token);
    let b = Server::start_args(&["serve"], &backend, &blobs, &token);
    let key = SecretKey::generate();
    let store = store::Store::open(&backend, &blobs).await.unwrap();
    store.add_key(&key.public_key(), "Team", Tier::Submitter).await.unwrap();
    crate::harness::know_test_set(&store).await;
    let dir2 = tempfile::tempdir().unwrap();
    let bundle = dir2.path().join("b.rexb.tar.gz");
    std::fs::write(&bundle, bundle_of(&key, "agent-x")).unwrap();
    let (bundle_path, url_a) = (bundle.clone(), a.url.clone());
    let verdict = tokio::task::spawn_blocking(move || runner::submit::submit(&bundle_path, &url_a))
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(verdict, runner::submit::Verdict::Accepted { status: 201, .. }), "{verdict:?}");

    // Signed in through A, reading through B.
    let session = login(&a.url, &key).await.unwrap();
    let (bundle_id, _) = store
        .agent("agent-x")
        .await
        .unwrap()
        .unwrap()
        .newest_current()
        .map(|(b, g)| (b.to_owned(), g.clone()))
        .unwrap();
    let run = store.runs_of(&bundle_id, None, None).await.unwrap()[0].id;
    let read = |base: &str, token: &str| {
        let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        let mut answer = agent
            .get(&format!("{base}/api/v1/runs/{run}"))
            .header("authorization", &format!("Bearer {token}"))
            .call()
            .unwrap();
        (answer.status().as_u16(), answer.body_mut().read_to_string().unwrap())
    };
    let (status, body) = read(&b.url, &session.token);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"readable\":true"), "{body}");
    // Signed out through B: A refuses it at once.
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let out = agent
        .post(&format!("{}/api/v1/logout", b.url))
        .header("authorization", &format!("Bearer {}", session.token))
        .send_empty()
        .unwrap();
    assert_eq!(out.status().as_u16(), 204);
    let (status, body) = read(&a.url, &session.token);
    assert_eq!(status, 401);
    assert!(body.contains("session_ended"), "{body}");
    // A browser link made by A opens on B.
    let again = login(&a.url, &key).await.unwrap();
    let path = again.browser_link.strip_prefix(&a.url).unwrap();
    let no_redirects: ureq::Agent =
        ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().into();
    let button =
        |link: &str| no_redirects.post(link).header("sec-fetch-site", "same-origin").send_empty().unwrap();
    let opened = button(&format!("{}{path}", b.url));
    assert_eq!(opened.status().as_u16(), 303);
    let browser =
        opened.headers().get("set-cookie").unwrap().to_str().unwrap().split(';').next().unwrap().to_owned();
    let who = |url: &str| {
        let mut answer = agent.get(&format!("{url}/api/v1/login")).header("cookie", &browser).call().unwrap();
        (answer.status().as_u16(), answer.body_mut().read_to_string().unwrap())
    };
    assert_eq!(who(&a.url).0, 200, "the browser session made on B holds on A");
    // Its token signed out through A: the browser session made from it ends, on B too.
    let out = agent
        .post(&format!("{}/api/v1/logout", a.url))
        .header("authorization", &format!("Bearer {}", again.token))
        .send_empty()
        .unwrap();
    assert_eq!(out.status().as_u16(), 204);
    let (status, body) = who(&b.url);
    assert_eq!(status, 401);
    assert!(body.contains("session_ended"), "{body}");

    // A maintainer's link from the admin command, opened on B: every private output.
    let (code, said) = crate::backup::admin(&["sign-in-link", "--base", &b.url], &backend, &blobs);
    assert_eq!(code, 0, "{said}");
    let link = said.lines().find(|l| l.starts_with(&b.url)).unwrap_or_else(|| panic!("{said}")).to_owned();
    let opened = button(&link);
    assert_eq!(opened.status().as_u16(), 303);
    let set = opened.headers().get("set-cookie").unwrap().to_str().unwrap().to_owned();
    let value = set.split(';').next().unwrap().to_owned();
    let mut page =
        no_redirects.get(&format!("{}/runs/{run}", a.url)).header("cookie", &value).call().unwrap();
    assert!(page.body_mut().read_to_string().unwrap().contains("secret change"));
    let (code, said) = crate::backup::admin(&["access-log"], &backend, &blobs);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("maintainer (sign-in link)") && said.contains(&format!("run {run}")), "{said}");
    drop((a, b));
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop_postgres(&url, &name).await;
}
