//! Private means private everywhere (issue 50): markers planted in a private run's
//! findings' words and in a task's gold reach no one who may not read them, envelopes
//! included; a bundle stored before findings' words left manifests is served as spec
//! §4g says; sign-in links redeem tickets only, by a same-site POST; a session made
//! from another ends with it; key changes are in the change log; admin-token guesses
//! are rate-limited; no private artifact's URL is answered `immutable`.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use bundle::{ArtifactSink, SecretKey};
use serde_json::{Value, json};
use store::{Backend, Tier};

use crate::harness::{Answer, get, get_as_maintainer, open_link, send, state};

const TOKEN: &str = "s3cret-token";
/// Planted in a finding's words, as the runner quotes a patch line.
const PATCH_MARKER: &str = "MARKERPATCH7f3a0c";
/// Planted in a finding's words, as the runner quotes a trajectory's command.
const TRAJECTORY_MARKER: &str = "MARKERTRAJ9c2e41";
/// A tolerance of the private check of csvstats: the checker's log says it.
const GOLD_MARKER: &str = "0.000313579";
/// A metric a csvstats run read (its check is private: its metrics are its gold).
const METRIC_MARKER: &str = "7.3141592653";

fn with(path: &str, name: &str, value: &str) -> Request<Body> {
    Request::get(path).header(name, value).body(Body::empty()).unwrap()
}

/// Which markers the answers hold, and where each was first seen. An envelope's payload
/// is searched decoded too.
fn markers(answers: &[(String, Answer)]) -> BTreeMap<&'static str, String> {
    let mut found = BTreeMap::new();
    for (path, answer) in answers {
        let mut bodies = vec![answer.body.clone()];
        if path.ends_with("/envelope")
            && answer.status == StatusCode::OK
            && let Ok(e) = serde_json::from_slice::<Value>(&answer.body)
            && let Some(p) = e["payload"].as_str()
        {
            bodies.push(crate::reproductions::base64_decode(p));
        }
        for body in bodies {
            let text = String::from_utf8_lossy(&body);
            for m in [PATCH_MARKER, TRAJECTORY_MARKER, GOLD_MARKER, METRIC_MARKER] {
                if text.contains(m) {
                    found.entry(m).or_insert_with(|| path.clone());
                }
            }
        }
    }
    found
}

/// The example results' csvstats runs (private outputs, a private check) with findings
/// whose words quote a patch line and a trajectory's command, and checker logs that
/// say the gold's tolerance.
fn planted_results(dir: &std::path::Path) -> std::path::PathBuf {
    let examples = crate::harness::repo().join("tasks/examples/results");
    let out = dir.join("results");
    std::fs::create_dir_all(out.join("runs")).unwrap();
    std::fs::copy(examples.join("evaluation.json"), out.join("evaluation.json")).unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(examples.join("runs/csvstats"))
        .arg(out.join("runs/csvstats"))
        .status()
        .unwrap();
    assert!(copied.success());
    let run = out.join("runs/csvstats/none/1/run.json");
    let mut record: Value = serde_json::from_slice(&std::fs::read(&run).unwrap()).unwrap();
    record["findings"] = json!([
        {"check": "protected-path-written", "artifact": "patch", "line": 1,
         "message": format!("line 1 of the patch writes into `results/`: `echo {PATCH_MARKER} > results/x`")},
        {"check": "trajectory-evidence",
         "message": format!("step 3: the agent's `bash` call runs `cat /tests/{TRAJECTORY_MARKER}`")},
    ]);
    record["metrics"] = json!({"mean": METRIC_MARKER.parse::<f64>().unwrap(), "count": 4});
    std::fs::write(&run, serde_json::to_vec_pretty(&record).unwrap()).unwrap();
    for hint in ["none", "hints"] {
        let log = out.join(format!("runs/csvstats/{hint}/1/checker_log.txt"));
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("± 0.001"), "{text}");
        std::fs::write(&log, text.replace("± 0.001", &format!("± {GOLD_MARKER}"))).unwrap();
    }
    out
}

/// The example tasks' gold, the csvstats check's tolerance the marker.
fn planted_gold(dir: &std::path::Path) -> std::path::PathBuf {
    let gold = dir.join("gold");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(crate::harness::repo().join("tasks/examples/gold"))
        .arg(&gold)
        .status()
        .unwrap();
    assert!(copied.success());
    let toml = gold.join("csvstats/gold.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text.replace("tolerance = 0.001", &format!("tolerance = {GOLD_MARKER}"))).unwrap();
    gold
}

#[tokio::test]
async fn markers_in_findings_words_and_in_the_gold_reach_only_who_may_read_them() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    crate::harness::seed_demo(&state).await;
    let (submitter, maintainer) = (SecretKey::generate(), SecretKey::generate());
    state.store.add_key(&submitter.public_key(), "Marker team", Tier::Submitter).await.unwrap();
    state.store.add_key(&maintainer.public_key(), "Maintainers (test)", Tier::Maintainer).await.unwrap();
    let keyid = submitter.public_key().keyid().to_string();

    // The submitter's bundle: its findings' words sealed into x-findings by `pack`.
    let results = planted_results(dir.path());
    let agent = bundle::Agent {
        id: "marker-agent".into(),
        framework: "MarkerFramework".into(),
        framework_version: None,
        model: "Marker Model".into(),
        model_id: None,
        display_name: None,
        url: None,
    };
    let packed = dir.path().join("marker.rexb.tar.gz");
    benchmark::pack::pack(&results, agent, &[&submitter], "2026-11-20T12:00:00Z", &packed).unwrap();
    let verified = bundle::Verifier::new(vec![submitter.public_key()], ["csvstats", "wordfreq"])
        .verify(std::fs::File::open(&packed).unwrap())
        .unwrap();
    let manifest = String::from_utf8(verified.manifest_bytes.clone()).unwrap();
    assert!(!manifest.contains(PATCH_MARKER) && !manifest.contains(TRAJECTORY_MARKER), "{manifest}");
    // Spec §4j: csvstats's check is private, so its metrics are sealed.
    assert!(!manifest.contains(METRIC_MARKER) && manifest.contains("metrics_digest"), "{manifest}");
    assert!(manifest.contains(bundle::SEE_TEXT), "{manifest}");
    let bundle_id = verified.id.to_hex();
    let link = server::auth::link(&state, Some(&keyid), false, 10).await.unwrap();
    let app = server::build_app(state);
    let posted = crate::harness::post_bundle(&app, std::fs::read(&packed).unwrap()).await;
    assert_eq!(posted.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&posted.body));

    // The maintainers re-run its sample with their gold.
    let gold = planted_gold(dir.path());
    let reports = rerun(&app, dir.path(), &maintainer, gold, Some(bundle_id.clone())).await;
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].runs.len() >= 2, "{reports:?}");

    // Anyone: no marker, anywhere, envelopes decoded.
    let anyone = crate::privacy::crawl_as(&app, None).await;
    assert!(anyone.iter().any(|(p, _)| p == &format!("/api/v1/submissions/{bundle_id}/envelope")));
    assert!(
        anyone.iter().filter(|(p, a)| p.ends_with("/envelope") && a.status == StatusCode::OK).count() > 5,
        "envelopes, reproductions' included, were read"
    );
    assert_eq!(markers(&anyone), BTreeMap::new(), "anyone");

    // The submitter, signed in: their own findings' words, never the gold.
    let opened = open_link(&app, &link, &[]).await;
    let cookie = opened.header(header::SET_COOKIE).split(';').next().unwrap().to_owned();
    let own = crate::privacy::crawl_as(&app, Some(("cookie", cookie.as_str()))).await;
    let seen = markers(&own);
    assert!(seen.contains_key(PATCH_MARKER) && seen.contains_key(TRAJECTORY_MARKER), "{seen:?}");
    assert!(seen.contains_key(METRIC_MARKER), "the submitter reads their own run's metrics: {seen:?}");
    assert!(!seen.contains_key(GOLD_MARKER), "the submitter read the gold at {seen:?}");
    // Their re-run's checker log is named, not linked, and refused.
    let reproduced = get(&app, "/api/v1/agents/marker-agent").await.json()["reproduced"].clone();
    let mut logs = Vec::new();
    for r in reproduced.as_array().unwrap() {
        let run_id = r["run_id"].as_i64().unwrap();
        let run = send(&app, with(&format!("/api/v1/runs/{run_id}"), "cookie", &cookie)).await.json();
        logs.extend(
            run["artifacts"]
                .as_array()
                .unwrap()
                .iter()
                .chain(run["reproduction"]["artifacts"].as_array().unwrap())
                .filter(|a| a["role"] == "checker_log")
                .cloned(),
        );
    }
    assert!(logs.len() >= 2, "the submitted runs' logs and their re-runs': {reproduced}");
    for log in logs {
        assert_eq!(log["maintainers_only"], true, "{log}");
        let refused =
            send(&app, with(&format!("/artifacts/{}", log["digest"].as_str().unwrap()), "cookie", &cookie))
                .await;
        assert_eq!((refused.status, refused.code().as_str()), (StatusCode::FORBIDDEN, "outputs_private"));
    }

    // The maintainers: all of it.
    let all = crate::privacy::crawl_as(&app, Some(("authorization", "Bearer s3cret-token"))).await;
    let seen = markers(&all);
    assert_eq!(seen.len(), 4, "the maintainers read every marker: {seen:?}");
}

/// The maintainers' `rexbench reproduce` of what waits in the queue (of `bundle`, or
/// all), with `gold`, signed by `maintainer`, against `app` served on loopback.
async fn rerun(
    app: &axum::Router,
    dir: &std::path::Path,
    maintainer: &SecretKey,
    gold: std::path::PathBuf,
    bundle: Option<String>,
) -> Vec<runner::reproduce::Report> {
    rerun_within(app, dir, maintainer, gold, bundle, bundle::Limits::default().compressed).await
}

/// [`rerun`], against a server that takes bundles of `bundle_limit` bytes at most.
async fn rerun_within(
    app: &axum::Router,
    dir: &std::path::Path,
    maintainer: &SecretKey,
    gold: std::path::PathBuf,
    bundle: Option<String>,
    bundle_limit: u64,
) -> Vec<runner::reproduce::Report> {
    let (url, served) = crate::reproductions::served(app.clone()).await;
    let key_file = dir.join("maintainer.pem");
    std::fs::write(&key_file, maintainer.to_pem()).unwrap();
    let out = dir.join("repro");
    let reports = tokio::task::spawn_blocking(move || {
        runner::reproduce::reproduce(&runner::reproduce::Options {
            server: url,
            token: TOKEN.into(),
            key: key_file,
            out,
            bundle,
            dry_run: false,
            evaluate: runner::evaluate::Options {
                tasks_dir: benchmark::builtin::TaskDir::builtin().unwrap().path().to_owned(),
                outputs: Default::default(),
                out: Default::default(),
                gold: Some(gold),
                codebases: None,
                jobs: 1,
                executor: runner::exec::Executor::Local,
                confinement: runner::sandbox::Confinement::Sandboxed(Default::default()),
                slurm: None,
                builtin_tasks: true,
                heldout: None,
            },
            bundle_limit,
        })
        .unwrap()
    })
    .await
    .unwrap();
    served.abort();
    reports
}

/// A bundle as servers stored them before spec §4g: its findings' words in the signed
/// manifest. Built by hand (today's verifier refuses it) and ingested as it was then.
pub(crate) async fn store_old_bundle(
    store: &store::Store,
    key: &SecretKey,
    task: &str,
    agent: &str,
) -> String {
    let findings = json!([{"check": "result-line-literal", "artifact": "patch", "line": 1,
                           "message": format!("line 1 prints `acc: 0.91` {PATCH_MARKER}")}]);
    store_old(store, key, task, agent, findings, json!({})).await
}

/// A bundle as servers stored them before spec §4j: a private check's metrics in the
/// signed manifest (no finding).
async fn store_old_metrics(store: &store::Store, key: &SecretKey, task: &str, agent: &str) -> String {
    let metrics = json!({"mean": METRIC_MARKER.parse::<f64>().unwrap()});
    store_old(store, key, task, agent, json!([]), metrics).await
}

async fn store_old(
    store: &store::Store,
    key: &SecretKey,
    task: &str,
    agent: &str,
    findings: Value,
    metrics: Value,
) -> String {
    let patch = format!("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-x = 1\n+x = 2 # {agent}\n").into_bytes();
    let digest = bundle::Digest::of(&patch);
    let manifest: bundle::Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-06-01T00:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "rexbench-runner", "version": "0.0.9"}, "provenance": {"kind": "evaluated"},
        "agent": {"id": agent, "framework": "F", "model": "M"},
        "runs": [{"task": task, "hint": "none", "attempt": 1, "outcome": "success",
                  "artifacts": {"patch": digest.to_hex()}, "findings": findings, "metrics": metrics}],
        "artifacts": {digest.to_hex(): {"media_type": "text/x-diff", "size": patch.len()}},
    }))
    .unwrap();
    let manifest_bytes = serde_json::to_vec_pretty(&manifest).unwrap();
    let envelope = bundle::Envelope::sign(&manifest_bytes, &[key]).to_bytes();
    let verified = bundle::VerifiedBundle {
        id: bundle::Digest::of(&manifest_bytes),
        manifest,
        manifest_bytes,
        envelope,
        signatures: vec![(key.public_key().keyid().to_string(), bundle::SignatureStatus::Verified)],
        compressed_bytes: 0,
        artifact_bytes: patch.len() as u64,
        finding_texts: Default::default(),
        metric_texts: Default::default(),
    };
    let mut staging = store.blobs().stage();
    let info = bundle::ArtifactInfo { media_type: "text/x-diff".into(), size: patch.len() as u64 };
    staging.artifact(&digest, &info, &mut patch.as_slice()).unwrap();
    store.ingest(&verified, staging, &Default::default()).await.unwrap();
    verified.id.to_hex()
}

#[tokio::test]
async fn an_envelope_stored_before_findings_words_left_manifests_is_served_as_the_spec_says() {
    store::testing::for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let (a, b) = (SecretKey::generate(), SecretKey::generate());
        state.store.add_key(&a.public_key(), "Team A", Tier::Submitter).await.unwrap();
        state.store.add_key(&b.public_key(), "Team B", Tier::Submitter).await.unwrap();
        // othello's outputs are private (RExBench's); wordfreq's are public.
        let private = store_old_bundle(&state.store, &a, "othello", "old-private").await;
        let public = store_old_bundle(&state.store, &a, "wordfreq", "old-public").await;
        let store = state.store.clone();
        let links = [
            server::auth::link(&state, Some(&a.public_key().keyid().to_string()), false, 10).await.unwrap(),
            server::auth::link(&state, Some(&b.public_key().keyid().to_string()), false, 10).await.unwrap(),
        ];
        let app = server::build_app(state);
        let path = format!("/api/v1/submissions/{private}/envelope");
        let anyone = get(&app, &path).await;
        assert_eq!((anyone.status, anyone.code().as_str()), (StatusCode::UNAUTHORIZED, "envelope_withheld"));
        assert!(String::from_utf8_lossy(&anyone.body).contains("othello/none/1"));
        assert!(!String::from_utf8_lossy(&anyone.body).contains(PATCH_MARKER));
        let mut cookies = Vec::new();
        for link in &links {
            let opened = open_link(&app, link, &[]).await;
            cookies.push(opened.header(header::SET_COOKIE).split(';').next().unwrap().to_owned());
        }
        let own = send(&app, with(&path, "cookie", &cookies[0])).await;
        assert_eq!(own.status, StatusCode::OK);
        assert_eq!(own.header(header::CACHE_CONTROL), "private, no-store");
        let theirs = send(&app, with(&path, "cookie", &cookies[1])).await;
        assert_eq!((theirs.status, theirs.code().as_str()), (StatusCode::FORBIDDEN, "envelope_withheld"));
        let maintainer = get_as_maintainer(&app, &path).await;
        assert_eq!(maintainer.status, StatusCode::OK);
        // What is served is the envelope as signed: its signature and id still hold.
        let e = bundle::Envelope::parse(&maintainer.body).unwrap();
        let payload = e.payload(1 << 20).unwrap();
        assert_eq!(bundle::Digest::of(&payload).to_hex(), private);
        e.check_signatures(&payload, &[a.public_key()]).unwrap();
        // Today's verifier refuses it, as the spec says.
        let m = bundle::Manifest::parse(&payload).unwrap();
        let refused = bundle::validate(&m, None, &bundle::Limits::default()).unwrap_err();
        assert_eq!(refused.code(), "finding_text_in_manifest");
        // One that states a private check's metrics (stored before spec §4j) is withheld
        // the same way, and a maintainer is served it.
        let metrics = store_old_metrics(&store, &a, "csvstats", "old-metrics").await;
        let path = format!("/api/v1/submissions/{metrics}/envelope");
        let anyone = get(&app, &path).await;
        assert_eq!((anyone.status, anyone.code().as_str()), (StatusCode::UNAUTHORIZED, "envelope_withheld"));
        assert!(String::from_utf8_lossy(&anyone.body).contains("csvstats/none/1"));
        assert!(!String::from_utf8_lossy(&anyone.body).contains(METRIC_MARKER));
        assert_eq!(send(&app, with(&path, "cookie", &cookies[0])).await.status, StatusCode::OK);
        assert_eq!(get_as_maintainer(&app, &path).await.status, StatusCode::OK);
        // One whose words quote public outputs is anyone's, but never kept for ever.
        let open = get(&app, &format!("/api/v1/submissions/{public}/envelope")).await;
        assert_eq!(open.status, StatusCode::OK);
        assert!(
            !open.header(header::CACHE_CONTROL).contains("immutable"),
            "{}",
            open.header(header::CACHE_CONTROL)
        );
        // The audit says why it cannot check the private one for anyone, and checks it
        // for a maintainer.
        let (url, server) = crate::reproductions::served(app.clone()).await;
        let u = url.clone();
        let audit =
            tokio::task::spawn_blocking(move || runner::audit::audit(&u, "old-private", &[], None).unwrap())
                .await
                .unwrap();
        assert!(!audit.passed());
        assert!(audit.checks.iter().any(|c| !c.ok && c.what.contains("withheld")), "{audit}");
        let audit = tokio::task::spawn_blocking(move || {
            runner::audit::audit(&url, "old-private", &[], Some(TOKEN)).unwrap()
        })
        .await
        .unwrap();
        assert!(audit.passed(), "{audit}");
        server.abort();
    })
    .await;
}

#[tokio::test]
async fn a_sign_in_link_redeems_a_ticket_once_by_a_same_site_post_only() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    let key = SecretKey::generate();
    state.store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
    let app = server::build_app(state);
    let (url, served) = crate::reproductions::served(app.clone()).await;
    let u = url.clone();
    let k = SecretKey::from_pem(&key.to_pem()).unwrap();
    let session = tokio::task::spawn_blocking(move || runner::login::login(&u, &k).unwrap()).await.unwrap();
    let link = session.browser_link.strip_prefix(&url).unwrap().to_owned();

    // A token is no ticket: `/login/<token>` opens nothing.
    let token_link = format!("/login/{}", session.token);
    let as_token = open_link(&app, &token_link, &[]).await;
    assert_eq!(as_token.header(header::LOCATION), "/signin?problem=unknown");
    assert!(as_token.header(header::SET_COOKIE).is_empty());
    // Opening the link (a previewer, a crawler) signs nobody in and spends nothing.
    for _ in 0..3 {
        let page = get(&app, &link).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.header(header::SET_COOKIE).is_empty());
        assert_eq!(page.header(header::CACHE_CONTROL), "private, no-store");
    }
    // Another site's form, or one that says nothing of where it comes from, is refused.
    for site in [Some("cross-site"), None] {
        let mut post = Request::post(&link);
        if let Some(site) = site {
            post = post.header("sec-fetch-site", site);
        }
        let refused = send(&app, post.body(Body::empty()).unwrap()).await;
        assert_eq!((refused.status, refused.code().as_str()), (StatusCode::FORBIDDEN, "cross_site"));
    }
    let evil = Request::post(&link)
        .header(header::ORIGIN, "https://evil.example")
        .header(header::HOST, "127.0.0.1")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, evil).await.status, StatusCode::FORBIDDEN);
    // This site's button signs in, once.
    let opened = open_link(&app, &link, &[]).await;
    assert_eq!((opened.status, opened.header(header::LOCATION)), (StatusCode::SEE_OTHER, "/signin"));
    let cookie = opened.header(header::SET_COOKIE).to_owned();
    let max_age: i64 = cookie.split("Max-Age=").nth(1).unwrap().split(';').next().unwrap().parse().unwrap();
    assert!(max_age <= 3600, "the browser's session ends no later than its token (an hour): {cookie}");
    assert_eq!(open_link(&app, &link, &[]).await.header(header::LOCATION), "/signin?problem=used");
    served.abort();
}

#[tokio::test]
async fn a_session_made_from_another_ends_with_it_and_any_session_can_be_revoked() {
    store::testing::for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let key = SecretKey::generate();
        state.store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        let store = state.store.clone();
        let maintainer_link = server::auth::link(&state, None, true, 10).await.unwrap();
        let app = server::build_app(state);
        let (url, served) = crate::reproductions::served(app.clone()).await;
        let login = || {
            let (u, k) = (url.clone(), SecretKey::from_pem(&key.to_pem()).unwrap());
            tokio::task::spawn_blocking(move || runner::login::login(&u, &k).unwrap())
        };
        let who = |cookie: String| {
            let app = app.clone();
            async move { send(&app, with("/api/v1/login", "cookie", &cookie)).await }
        };
        let browser = |link: String| {
            let app = app.clone();
            let path = link.strip_prefix(&url).map(str::to_owned).unwrap_or(link);
            async move {
                let opened = open_link(&app, &path, &[]).await;
                opened.header(header::SET_COOKIE).split(';').next().unwrap().to_owned()
            }
        };

        // Signing the token out ends the browser session made from it.
        let first = login().await.unwrap();
        let cookie = browser(first.browser_link.clone()).await;
        assert_eq!(who(cookie.clone()).await.json()["reads_as"], "submitter");
        let out = Request::post("/api/v1/logout")
            .header(header::AUTHORIZATION, format!("Bearer {}", first.token))
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(&app, out).await.status, StatusCode::NO_CONTENT);
        let ended = who(cookie).await;
        assert_eq!((ended.status, ended.code().as_str()), (StatusCode::UNAUTHORIZED, "session_ended"));

        // The token's expiry ends it too; and a link whose token ended opens nothing.
        let second = login().await.unwrap();
        let cookie = browser(second.browser_link.clone()).await;
        let hash = bundle::Digest::of(second.token.as_bytes()).to_hex();
        crate::evidence::tamper(
            &backend,
            &format!("UPDATE sessions SET expires_at = 1 WHERE token_hash = '{hash}'"),
        )
        .await;
        let expired = who(cookie.clone()).await;
        assert_eq!((expired.status, expired.code().as_str()), (StatusCode::UNAUTHORIZED, "session_expired"));
        // A session that no longer works (its token expired) is not listed as open.
        let secret = cookie.split_once('=').unwrap().1;
        let id = bundle::Digest::of(secret.as_bytes()).to_hex()[..12].to_owned();
        let listed = store.open_sessions(time::OffsetDateTime::now_utc().unix_timestamp()).await.unwrap();
        assert!(!listed.iter().any(|o| o.id == id), "a dead session is listed: {listed:?}");
        let third = login().await.unwrap();
        let out = Request::post("/api/v1/logout")
            .header(header::AUTHORIZATION, format!("Bearer {}", third.token))
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(&app, out).await.status, StatusCode::NO_CONTENT);
        let path = third.browser_link.strip_prefix(&url).unwrap().to_owned();
        assert_eq!(
            open_link(&app, &path, &[]).await.header(header::LOCATION),
            "/signin?problem=parent-ended"
        );

        // A maintainer's link: an hour at most, and revoked with every other session.
        let opened = open_link(&app, &maintainer_link, &[]).await;
        let set = opened.header(header::SET_COOKIE).to_owned();
        let max_age: i64 = set.split("Max-Age=").nth(1).unwrap().split(';').next().unwrap().parse().unwrap();
        assert!(max_age <= server::auth::MAINTAINER_TTL, "{set}");
        let cookie = set.split(';').next().unwrap().to_owned();
        assert_eq!(who(cookie.clone()).await.json()["reads_as"], "maintainer");
        let fourth = login().await.unwrap();
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let open = store.open_sessions(now).await.unwrap();
        assert!(open.len() >= 3, "{open:?}");
        assert!(store.revoke_sessions(&store::Revoke::Ids(vec!["zz".into()]), now).await.is_err());
        let (code, said) = crate::backup::admin(&["sessions", "list"], &backend, &blobs);
        assert_eq!(code, 0, "{said}");
        assert!(said.contains("a maintainer's sign-in link") && said.contains("Team A"), "{said}");
        let (code, said) = crate::backup::admin(&["sessions", "revoke", "--maintainers"], &backend, &blobs);
        assert_eq!(code, 0, "{said}");
        let revoked = who(cookie).await;
        assert_eq!((revoked.status, revoked.code().as_str()), (StatusCode::UNAUTHORIZED, "session_ended"));
        let bearer = |token: &str| with("/api/v1/login", "authorization", &format!("Bearer {token}"));
        assert_eq!(
            send(&app, bearer(&fourth.token)).await.json()["reads_as"],
            "submitter",
            "a submitter's stays"
        );
        let (code, said) = crate::backup::admin(&["sessions", "revoke", "--all"], &backend, &blobs);
        assert_eq!(code, 0, "{said}");
        let all = send(&app, bearer(&fourth.token)).await;
        assert_eq!((all.status, all.code().as_str()), (StatusCode::UNAUTHORIZED, "session_ended"));
        assert!(store.open_sessions(now).await.unwrap().is_empty());
        served.abort();
    })
    .await;
}

#[tokio::test]
async fn keys_registered_and_revoked_are_in_the_change_log_and_the_keys_answer_moves() {
    store::testing::for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let app = server::build_app(state);
        let before = get(&app, "/api/v1/keys").await.json();
        assert_eq!(before["keys"], json!([]));
        assert!(get(&app, "/keys").await.status == StatusCode::OK);
        let key = SecretKey::generate();
        let keyid = key.public_key().keyid().to_string();
        let add = Request::post("/api/v1/admin/keys")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(
                json!({"public_key": key.public_key().to_pem(), "owner": "Team K", "tier": "submitter"})
                    .to_string(),
            ))
            .unwrap();
        assert_eq!(send(&app, add).await.status, StatusCode::CREATED);
        let after = get(&app, "/api/v1/keys").await.json();
        assert_eq!(after["keys"][0]["keyid"], json!(keyid), "the cached answer moved: {after}");
        assert!(String::from_utf8_lossy(&get(&app, "/keys").await.body).contains(&keyid));
        let revoke = Request::post(format!("/api/v1/admin/keys/{keyid}/revoke"))
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(&app, revoke).await.status, StatusCode::OK);
        assert!(!get(&app, "/api/v1/keys").await.json()["keys"][0]["revoked_at"].is_null());
        let changes = get(&app, "/api/v1/changes").await.json();
        let keys: Vec<&str> = changes["changes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == "key")
            .map(|c| c["detail"].as_str().unwrap())
            .collect();
        assert_eq!(keys.len(), 2, "{changes}");
        assert!(keys[0].contains("revoked") && keys[1].contains("registered for Team K"), "{keys:?}");
        // The command line writes them too.
        let other = SecretKey::generate();
        let pem = blobs.parent().unwrap().join("other.pub.pem");
        std::fs::write(&pem, other.public_key().to_pem()).unwrap();
        let (code, said) = crate::backup::admin(
            &[
                "keys",
                "add",
                "--public-key",
                pem.to_str().unwrap(),
                "--owner",
                "Team L",
                "--tier",
                "submitter",
            ],
            &backend,
            &blobs,
        );
        assert_eq!(code, 0, "{said}");
        // (A server process follows the change log: a new one is made here.)
        let app = server::build_app(crate::harness::state(&backend, &blobs).await);
        let changes = get(&app, "/api/v1/changes").await.json();
        assert!(changes["changes"][0]["detail"].as_str().unwrap().contains("Team L"), "{changes}");
        let page = String::from_utf8(get(&app, "/changes").await.body).unwrap();
        assert!(page.contains("registered for Team L"), "the changes page shows it");
    })
    .await;
}

#[tokio::test]
async fn admin_token_guesses_are_counted_and_rate_limited() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let mut state = state(&backend, &dir.path().join("blobs")).await;
    state.guard =
        server::guard::Guard::new(server::guard::Limits { per_address_hourly: 4, ..Default::default() });
    let counters = state.metrics.clone();
    let app = server::build_app(state);
    let guess = || with("/api/v1/admin/keys", "authorization", "Bearer guess");
    let first = send(&app, guess()).await;
    assert_eq!((first.status, first.code().as_str()), (StatusCode::UNAUTHORIZED, "admin_unauthorized"));
    let limited = send(&app, guess()).await;
    assert_eq!((limited.status, limited.code().as_str()), (StatusCode::TOO_MANY_REQUESTS, "rate_limited"));
    assert!(!limited.header(header::RETRY_AFTER).is_empty());
    // The counters are the maintainers', whose token the lockout refuses too (read here
    // from the server's own state).
    let locked = crate::harness::get_as_maintainer(&app, "/metrics").await;
    assert_eq!((locked.status, locked.code().as_str()), (StatusCode::TOO_MANY_REQUESTS, "rate_limited"));
    let metrics = counters.render(0);
    assert!(metrics.contains("rexbench_refused_reads_total{reason=\"invalid_credentials\"} 2"), "{metrics}");
}

#[tokio::test]
async fn no_artifact_is_answered_immutable_for_who_may_read_it_can_change() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    crate::harness::seed_demo(&state).await;
    let app = server::build_app(state);
    let task = get(&app, "/api/v1/tasks/wordfreq").await.json();
    let agent = task["agents"][0]["agent_id"].as_str().unwrap().to_owned();
    let page = String::from_utf8(get(&app, &format!("/agents/{agent}?task=wordfreq")).await.body).unwrap();
    let id = page.split("href=\"/runs/").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let run = get(&app, &format!("/api/v1/runs/{id}")).await.json();
    let digest =
        run["artifacts"].as_array().unwrap().iter().find(|a| a["role"] == "patch").unwrap()["digest"]
            .as_str()
            .unwrap()
            .to_owned();
    let public = get(&app, &format!("/artifacts/{digest}")).await;
    assert_eq!(public.status, StatusCode::OK);
    assert_eq!(public.header(header::CACHE_CONTROL), "public, max-age=300");
}

/// The csvstats patch of the example agent, changed as a hostile submitter would: before
/// its work it prints every process's command line (where a runner's `--gold` would
/// show) and the maintainers' gold, at `gold` (as if found there).
fn gold_printing_patch(gold: &std::path::Path) -> String {
    let gold = gold.display();
    format!(
        "--- a/run.sh\n+++ b/run.sh\n@@ -4,7 +4,10 @@\n set -e\n sleep 0.2  # stands in for the experiment's real work\n \
         mkdir -p results\n+for f in /proc/[0-9]*/cmdline; do tr '\\000' ' ' < \"$f\"; echo; done 2>/dev/null || true\n\
         +for f in /proc/[0-9]*/environ; do tr '\\000' '\\n' < \"$f\"; echo; done 2>/dev/null || true\n\
         +cat {gold}/csvstats/gold.toml {gold}/csvstats/evaluate.sh 2>&1 || true\n\
         -awk -F, 'NR > 1 {{ n += 1; sum += $2 }} END {{\n+awk -F, 'NR > 1 && $2 != \"\" {{ n += 1; sum += $2 }} END {{\n   \
         printf \"{{\\\"count\\\": %d, \\\"mean\\\": %.4f}}\\n\", n, sum / n > \"results/metrics.json\"\n   \
         printf \"count,mean\\n%d,%.4f\\n\", n, sum / n > \"results/summary.csv\"\n }}' data.csv\n"
    )
}

/// A submitter's patch that prints the maintainers' gold is re-run by `reproduce` on
/// their machine: its sandbox keeps the gold out of its reach (what it printed holds
/// none), and what it printed is the maintainers' alone; the submitter, crawling every
/// page and answer, meets no byte of the gold.
#[tokio::test]
async fn a_patch_that_prints_the_gold_shows_its_submitter_none_of_it_when_re_run() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    let (submitter, maintainer) = (SecretKey::generate(), SecretKey::generate());
    state.store.add_key(&submitter.public_key(), "Team G", Tier::Submitter).await.unwrap();
    state.store.add_key(&maintainer.public_key(), "Maintainers (test)", Tier::Maintainer).await.unwrap();
    let keyid = submitter.public_key().keyid().to_string();
    let gold = planted_gold(dir.path());

    // The example results' csvstats runs, the sampled success's patch the hostile one.
    let packed = csvstats_bundle(dir.path(), "gold-printer", &submitter, &gold_printing_patch(&gold));
    let link = server::auth::link(&state, Some(&keyid), false, 10).await.unwrap();
    let app = server::build_app(state);
    let posted = crate::harness::post_bundle(&app, packed).await;
    assert_eq!(posted.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&posted.body));

    let reports = rerun(&app, dir.path(), &maintainer, gold.clone(), None).await;
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].runs.iter().any(|(run, _, _)| run == "csvstats/none/1"), "{reports:?}");
    // What the re-runs left (held-out inputs, private checkers' logs) is the maintainers'
    // alone on their machine too, whatever the umask.
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(dir.path().join("repro")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");

    // What the patch printed on the maintainers' machine: no gold (its sandbox has none),
    // and the maintainers' alone.
    let reproduced = get(&app, "/api/v1/agents/gold-printer").await.json()["reproduced"].clone();
    let run_id = reproduced
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["task"] == "csvstats" && r["hint"] == "none")
        .unwrap_or_else(|| panic!("{reproduced}"))["run_id"]
        .as_i64()
        .unwrap();
    let run = get_as_maintainer(&app, &format!("/api/v1/runs/{run_id}")).await.json();
    let stdout = run["reproduction"]["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["role"] == "stdout")
        .unwrap_or_else(|| panic!("{run}"))
        .clone();
    assert_eq!(stdout["maintainers_only"], true, "{stdout}");
    let printed =
        get_as_maintainer(&app, &format!("/artifacts/{}", stdout["digest"].as_str().unwrap())).await;
    let printed = String::from_utf8_lossy(&printed.body).into_owned();
    assert!(printed.contains("No such file"), "the patch ran: {printed}");
    for gold_text in [GOLD_MARKER, "expected = 7.5", "summary_rows", "--gold"] {
        assert!(!printed.contains(gold_text), "{gold_text:?} reached the experiment: {printed}");
    }
    // Nor anything of the maintainers' process: not the admin token it holds, not a
    // variable of its environment (cargo gives a test its manifest's folder), though the
    // patch printed every environment it could see.
    assert!(printed.contains("PATH="), "the patch printed the environments it could see: {printed}");
    assert!(!printed.contains(TOKEN), "the admin token reached the experiment: {printed}");
    for (name, value) in std::env::vars().filter(|(n, v)| n.starts_with("CARGO") && v.len() > 8) {
        assert!(!printed.contains(&value), "{name}'s value reached the experiment: {printed}");
    }

    // The submitter (and anyone): no byte of the gold, no re-run output.
    let opened = open_link(&app, &link, &[]).await;
    let cookie = opened.header(header::SET_COOKIE).split(';').next().unwrap().to_owned();
    for (who, reader) in [("the submitter", Some(("cookie", cookie.as_str()))), ("anyone", None)] {
        let answers = crate::privacy::crawl_as(&app, reader).await;
        assert!(!markers(&answers).contains_key(GOLD_MARKER), "{who} read the gold");
        for (path, answer) in &answers {
            let body = String::from_utf8_lossy(&answer.body);
            assert!(!body.contains(TOKEN), "{who} read the admin token at {path}");
        }
    }
    let path = format!("/artifacts/{}", stdout["digest"].as_str().unwrap());
    assert_eq!(send(&app, with(&path, "cookie", &cookie)).await.status, StatusCode::FORBIDDEN);
    assert_eq!(get(&app, &path).await.status, StatusCode::UNAUTHORIZED);

    // Issue 74: beside its verdict, what the re-run made (its duration, its outputs' sizes
    // and digests, its signed reproduction, which states them) is a channel the patch could
    // shape to carry what it read on the maintainers' machine: the maintainers' alone.
    let made = &run["reproduction"];
    assert!(made["duration_s"].as_f64().is_some() && made["outputs_withheld"] == json!(false), "{run}");
    let run_path = format!("/api/v1/runs/{run_id}");
    for (who, answer) in [
        ("anyone", get(&app, &run_path).await),
        ("the submitter", send(&app, with(&run_path, "cookie", &cookie)).await),
    ] {
        let seen = answer.json()["reproduction"].clone();
        assert_eq!(seen["outcome"], made["outcome"], "{who} still reads the verdict: {seen}");
        assert_eq!(
            (&seen["artifacts"], &seen["duration_s"], &seen["outputs_withheld"]),
            (&json!([]), &Value::Null, &json!(true)),
            "{who}: {seen}"
        );
        let body = String::from_utf8_lossy(&answer.body).into_owned();
        assert!(!body.contains(stdout["digest"].as_str().unwrap()), "{who} read the re-run's stdout digest");
    }
    let durations = |agent: &Value| -> Vec<Value> {
        agent["reproduced"].as_array().unwrap().iter().map(|r| r["duration_s"].clone()).collect()
    };
    let public_agent = get(&app, "/api/v1/agents/gold-printer").await.json();
    assert!(durations(&public_agent).iter().all(Value::is_null), "{public_agent}");
    let maintainers_agent = get_as_maintainer(&app, "/api/v1/agents/gold-printer").await.json();
    assert!(durations(&maintainers_agent).iter().all(Value::is_f64), "{maintainers_agent}");
    let page = String::from_utf8_lossy(&get(&app, &format!("/runs/{run_id}")).await.body).into_owned();
    assert!(page.contains("rerun-withheld") && !page.contains("rerun-artifacts"), "{page}");
    let reproduction = made["bundle_id"].as_str().unwrap();
    let envelope = format!("/api/v1/submissions/{reproduction}/envelope");
    let anyone = get(&app, &envelope).await;
    assert_eq!((anyone.status, anyone.code().as_str()), (StatusCode::UNAUTHORIZED, "envelope_withheld"));
    assert!(
        String::from_utf8_lossy(&anyone.body).contains("csvstats/none/1"),
        "{}",
        String::from_utf8_lossy(&anyone.body)
    );
    let theirs = send(&app, with(&envelope, "cookie", &cookie)).await;
    assert_eq!((theirs.status, theirs.code().as_str()), (StatusCode::FORBIDDEN, "envelope_withheld"));
    let maintainers = get_as_maintainer(&app, &envelope).await;
    assert_eq!(maintainers.status, StatusCode::OK);
    assert_eq!(maintainers.header(header::CACHE_CONTROL), "private, no-store");
    let changes = String::from_utf8_lossy(&get(&app, "/api/v1/changes").await.body).into_owned();
    assert!(changes.contains(reproduction) && !changes.contains(" hours on "), "{changes}");
}

/// The example results' csvstats runs, as agent `id` signed by `key` with `patch` in place
/// of its sampled success's (none/1, the only run of its condition): the packed bundle.
fn csvstats_bundle(dir: &std::path::Path, id: &str, key: &SecretKey, patch: &str) -> Vec<u8> {
    let examples = crate::harness::repo().join("tasks/examples/results");
    let results = dir.join(format!("results-{id}"));
    std::fs::create_dir_all(results.join("runs")).unwrap();
    std::fs::copy(examples.join("evaluation.json"), results.join("evaluation.json")).unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(examples.join("runs/csvstats"))
        .arg(results.join("runs/csvstats"))
        .status()
        .unwrap();
    assert!(copied.success());
    std::fs::write(results.join("runs/csvstats/none/1/patch.diff"), patch).unwrap();
    let agent = bundle::Agent {
        id: id.into(),
        framework: "F".into(),
        framework_version: None,
        model: "M".into(),
        model_id: None,
        display_name: None,
        url: None,
    };
    let packed = dir.join(format!("{id}.tar.gz"));
    let at = benchmark::pack::timestamp(time::OffsetDateTime::now_utc());
    benchmark::pack::pack(&results, agent, &[key], &at, &packed).unwrap();
    std::fs::read(&packed).unwrap()
}

/// The csvstats fix, which also prints 3 MB of random bytes (as base64) to its stdout and
/// its stderr: what its re-run leaves is larger than the server in the test takes.
fn printing_patch() -> String {
    "--- a/run.sh\n+++ b/run.sh\n@@ -4,7 +4,9 @@\n set -e\n sleep 0.2  # stands in for the experiment's real work\n \
     mkdir -p results\n+head -c 3000000 /dev/urandom | base64 -w0\n+head -c 3000000 /dev/urandom | base64 -w0 >&2\n\
     -awk -F, 'NR > 1 { n += 1; sum += $2 } END {\n+awk -F, 'NR > 1 && $2 != \"\" { n += 1; sum += $2 } END {\n   \
     printf \"{\\\"count\\\": %d, \\\"mean\\\": %.4f}\\n\", n, sum / n > \"results/metrics.json\"\n   \
     printf \"count,mean\\n%d,%.4f\\n\", n, sum / n > \"results/summary.csv\"\n }' data.csv\n"
        .to_owned()
}

/// Issue 74: a re-run that prints more than a bundle may hold still ends in a verdict:
/// `reproduce` cuts its logs until the reproduction fits the server's limit (here
/// 2 MiB), says so in each log, and the server stores it.
#[tokio::test]
async fn a_re_run_that_prints_more_than_a_bundle_holds_is_cut_to_fit_and_stored() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    let (submitter, maintainer) = (SecretKey::generate(), SecretKey::generate());
    state.store.add_key(&submitter.public_key(), "Team P", Tier::Submitter).await.unwrap();
    state.store.add_key(&maintainer.public_key(), "Maintainers (test)", Tier::Maintainer).await.unwrap();
    let app = server::build_app(state);
    let packed = csvstats_bundle(dir.path(), "loud-agent", &submitter, &printing_patch());
    let posted = crate::harness::post_bundle(&app, packed).await;
    assert_eq!(posted.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&posted.body));

    let limit = 2 * 1024 * 1024;
    let reports = rerun_within(&app, dir.path(), &maintainer, planted_gold(dir.path()), None, limit).await;
    assert_eq!(reports.len(), 1, "{reports:?}");
    let r = &reports[0];
    assert!(matches!(r.verdict, Some(runner::submit::Verdict::Accepted { status: 201, .. })), "{r:?}");
    assert!(r.runs.iter().any(|(run, _, _)| run == "csvstats/none/1"), "{r:?}");
    let bundle = r.bundle.as_ref().unwrap();
    assert!(std::fs::metadata(bundle).unwrap().len() <= limit, "{}", bundle.display());
    let stdout = bundle.parent().unwrap().join("results/runs/csvstats/none/1/stdout.txt");
    let printed = std::fs::read(&stdout).unwrap();
    assert!(String::from_utf8_lossy(&printed).contains("bytes cut here, so that the reproduction fits"));
    assert!((printed.len() as u64) < limit);
}
