//! Integrity at the server: its own checks at ingest (the honest/hacking suite, from
//! bundles with no findings), the strict view against an independent computation, and
//! the review of findings over the admin API.

use std::collections::{BTreeMap, BTreeSet};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use bundle::{Hint, Manifest, Outcome, SecretKey};
use serde_json::{Value, json};
use store::Tier;
use store::stats::{self, AgentCells, AgentStats, Cell};

use crate::harness::{Answer, get, post_bundle, repo, send, state};

/// One patch of the suite (`benchmark/tests/integrity-suite.toml`).
#[derive(Debug, serde::Deserialize)]
struct Case {
    task: String,
    name: String,
    patch: String,
    trajectory: Option<String>,
    flags: Option<Vec<(String, u64)>>,
    counts: Option<BTreeMap<String, usize>>,
    server_flags: Option<Vec<(String, u64)>>,
}

fn suite() -> Vec<Case> {
    #[derive(serde::Deserialize)]
    struct Suite {
        case: Vec<Case>,
    }
    let text = std::fs::read_to_string(repo().join("benchmark/tests/integrity-suite.toml")).unwrap();
    toml::from_str::<Suite>(&text).unwrap().case
}

fn manifest(agent: &str, runs: Value) -> Manifest {
    // A model named after the agent, one word (a word of the board's badges, as in
    // "fast-imported", may not stand alone in it: spec §4o).
    let model = format!("m{}", agent.replace('-', ""));
    serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-11-01T00:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "rexbench-runner", "version": "0.1.0"}, "provenance": {"kind": "evaluated"},
        "agent": {"id": agent, "framework": "OpenHands", "model": model},
        "runs": runs,
    }))
    .unwrap()
}

struct Site {
    app: Router,
    store: std::sync::Arc<store::Store>,
    key: SecretKey,
    _dir: tempfile::TempDir,
}

async fn site() -> Site {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    let key = SecretKey::generate();
    state.store.add_key(&key.public_key(), "Team", Tier::Submitter).await.unwrap();
    let store = state.store.clone();
    Site { app: server::build_app(state), store, key, _dir: dir }
}

async fn stored(app: &Router, bytes: Vec<u8>) -> String {
    let answer = post_bundle(app, bytes).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&answer.body));
    answer.json()["bundle_id"].as_str().unwrap().to_owned()
}

/// The runs of a submission, by (task, hint, attempt), with their findings as the run
/// API gives them.
async fn runs_of(site: &Site, bundle_id: &str) -> BTreeMap<(String, String, i64), Value> {
    let mut out = BTreeMap::new();
    for summary in site.store.runs_of(bundle_id, None, None).await.unwrap() {
        let run = get(&site.app, &format!("/api/v1/runs/{}", summary.id)).await.json();
        let key = (
            run["task"].as_str().unwrap().to_owned(),
            run["hint"].as_str().unwrap().to_owned(),
            run["attempt"].as_i64().unwrap(),
        );
        out.insert(key, run);
    }
    out
}

/// Every hack of the suite, sent as a success with its patch and no findings at all (as
/// if the submitter had deleted them and signed again), is flagged by the server from
/// the bundle alone, with the findings the suite lists for it; no honest patch is.
#[tokio::test]
async fn the_server_flags_every_hack_of_the_suite_from_the_bundle_alone() {
    let site = site().await;
    let (app, key) = (&site.app, &site.key);
    for (i, case) in suite().iter().enumerate() {
        let agent = format!("suite-{i}");
        let mut b = bundle::BundleBuilder::new(manifest(
            &agent,
            json!([{"task": case.task, "hint": "none", "attempt": 1, "outcome": "success", "metrics": {}}]),
        ));
        let patch = b.add_bytes(case.patch.clone().into_bytes(), "text/x-diff");
        b.manifest_mut().runs[0].artifacts.insert("patch".into(), patch.to_hex());
        if let Some(trajectory) = &case.trajectory {
            let t = b.add_bytes(trajectory.clone().into_bytes(), "application/json");
            b.manifest_mut().runs[0].artifacts.insert("x-trajectory".into(), t.to_hex());
        }
        crate::harness::with_patches(&mut b);
        let mut bytes = Vec::new();
        b.write(&[key], &mut bytes).unwrap();
        let bundle_id = stored(app, bytes).await;

        let runs = runs_of(&site, &bundle_id).await;
        let run = runs.values().next().unwrap();
        let findings = run["findings"].as_array().unwrap();
        let found: BTreeSet<(String, u64)> = findings
            .iter()
            .map(|f| {
                assert_eq!(f["found_by"], json!("server"), "{f}");
                let role = if f["check"] == json!("trajectory-evidence") { "x-trajectory" } else { "patch" };
                assert_eq!(f["artifact"], json!(role), "{f}");
                (f["check"].as_str().unwrap().to_owned(), f["line"].as_u64().unwrap())
            })
            .collect();
        let what = format!("{}: {}", case.task, case.name);
        match (case.server_flags.as_ref().or(case.flags.as_ref()), &case.counts) {
            (Some(expected), _) => assert_eq!(found, expected.iter().cloned().collect(), "{what}"),
            (None, Some(counts)) => {
                let mut by_check = BTreeMap::new();
                for (check, _) in &found {
                    *by_check.entry(check.clone()).or_insert(0) += 1;
                }
                assert_eq!(&by_check, counts, "{what}");
            }
            (None, None) => panic!("{what}: no expectation"),
        }
        assert_eq!(case.name.starts_with("honest"), found.is_empty(), "{what}");
        // A trajectory's finding links to its step on the run page, which has it.
        for f in findings.iter().filter(|f| f["artifact"] == json!("x-trajectory")) {
            let step = f["message"].as_str().unwrap().trim_start_matches("step ").split(':').next().unwrap();
            // (A maintainer's page: the suite's tasks are RExBench's, whose outputs are private.)
            let page = crate::harness::get_as_maintainer(app, &format!("/runs/{}", run["id"])).await;
            let html = String::from_utf8(page.body).unwrap();
            assert!(
                html.contains(&format!(r##"<a href="#step-{step}">Trajectory, step {step}</a>"##)),
                "{what}"
            );
            assert!(html.contains(&format!(r#"id="step-{step}""#)), "{what}: the step is on the page");
        }
        let board = get(app, "/api/v1/leaderboard").await.json();
        let row = board["rows"].as_array().unwrap().iter().find(|r| r["agent_id"] == json!(agent)).unwrap();
        assert_eq!(row["by_hint"]["none"]["flagged"], json!(i64::from(!found.is_empty())), "{what}");
    }
}

/// A run's duration is timed only where it is the run's own: a published bundle's runs
/// carry their agent's average over all runs (all the paper gives), never flagged for
/// it; an evaluated run as fast is, and so is an imported one.
#[tokio::test]
async fn only_a_run_s_own_duration_is_timed() {
    let site = site().await;
    // A paper's numbers are the maintainers' to sign (spec §5a).
    let maintainers = SecretKey::generate();
    site.store.add_key(&maintainers.public_key(), "Maintainers", Tier::Maintainer).await.unwrap();
    for (agent, kind, source, flagged) in [
        ("fast-run", "evaluated", None, true),
        ("fast-harbor", "imported", Some("harbor 0.3.1, job j"), true),
        ("fast-published", "published", Some("RExBench paper, Table 7"), false),
    ] {
        let run = json!([{"task": "cogs", "hint": "none", "attempt": 1, "outcome": "success",
                          "metrics": {}, "duration_s": 60.0}]);
        let mut m = manifest(agent, run);
        m.provenance = serde_json::from_value(json!({"kind": kind, "source": source})).unwrap();
        let mut bytes = Vec::new();
        let mut b = bundle::BundleBuilder::new(m);
        crate::harness::with_patches(&mut b);
        let signer = if kind == "published" { &maintainers } else { &site.key };
        b.write(&[signer], &mut bytes).unwrap();
        let bundle_id = stored(&site.app, bytes).await;
        let runs = runs_of(&site, &bundle_id).await;
        let findings = runs.values().next().unwrap()["findings"].as_array().unwrap().clone();
        let checks: Vec<&str> = findings.iter().map(|f| f["check"].as_str().unwrap()).collect();
        assert_eq!(checks, if flagged { vec!["implausibly-fast"] } else { vec![] }, "{kind}");
    }
}

/// The runs of the strict-view test: agent `k`'s run of task `t` under `hint` at
/// `attempt`, and whether its success carries a finding.
fn ending(k: usize, t: usize, h: usize, attempt: u32) -> (Outcome, bool) {
    let outcome = match (k * 7 + t * 3 + h * 5 + attempt as usize * 11) % 5 {
        0 | 1 => Outcome::Success,
        2 if k == 0 => Outcome::Success,
        2 | 3 => Outcome::WrongResult,
        _ => Outcome::ExecutionFailed,
    };
    // Agent 0 leads as reported, but most of its successes are flagged.
    let flagged = outcome == Outcome::Success && (k == 0 && attempt <= 4 || k == 2 && t == 0 && attempt == 1);
    (outcome, flagged)
}

// Each asks five attempts (spec §4f: no more is taken), in the order the board sorts them.
const TASKS: [&str; 3] = ["cogs", "othello", "winodict"];
const HINTS: [Hint; 2] = [Hint::None, Hint::Hints];

/// The cells of every agent as the strict view must count them, made from the runs sent
/// rather than read back: a flagged success that `unflagged` does not name is a failure.
fn expected_cells(
    agents: &[(String, String)],
    unflagged: &BTreeSet<(usize, usize, usize, u32)>,
) -> Vec<AgentCells> {
    agents
        .iter()
        .map(|(agent, bundle_id)| (agent.trim_start_matches("agent-").parse::<usize>().unwrap(), bundle_id))
        .map(|(k, bundle_id)| AgentCells {
            id: bundle_id.clone(),
            cells: (0..TASKS.len())
                .map(|t| {
                    let mut by_hint = [None; 3];
                    for (h, hint) in HINTS.iter().enumerate() {
                        let mut cell = Cell::default();
                        for attempt in 1..=5 {
                            let (outcome, flagged) = ending(k, t, h, attempt);
                            cell.counted += 1;
                            cell.exec_counted += 1;
                            cell.executed += u32::from(outcome != Outcome::ExecutionFailed);
                            let doubted = flagged && !unflagged.contains(&(k, t, h, attempt));
                            cell.successes += u32::from(outcome == Outcome::Success && !doubted);
                        }
                        by_hint[Hint::ALL.iter().position(|x| x == hint).unwrap()] = Some(cell);
                    }
                    by_hint
                })
                .collect(),
        })
        .collect()
}

/// The strict leaderboard against `expected`: each row's successes and final success,
/// its flagged count, its intervals, rank range and group.
async fn check_strict(app: &Router, agents: &[(String, String)], expected: &[AgentCells]) -> Vec<AgentStats> {
    let analysed = stats::analyse(expected, TASKS.len(), stats::REPLICATES, stats::SEED);
    let board = get(app, "/api/v1/leaderboard?integrity=strict").await;
    assert_eq!(board.status, StatusCode::OK);
    let rows = board.json()["rows"].as_array().unwrap().clone();
    for (k, (agent, bundle_id)) in agents.iter().enumerate() {
        let row = rows.iter().find(|r| r["agent_id"] == json!(agent)).unwrap();
        for (h, hint) in HINTS.iter().enumerate() {
            let hi = Hint::ALL.iter().position(|x| x == hint).unwrap();
            let successes: u32 = expected[k].cells.iter().map(|c| c[hi].unwrap().successes).sum();
            let counted: u32 = expected[k].cells.iter().map(|c| c[hi].unwrap().counted).sum();
            let rates = &row["by_hint"][hint.as_str()];
            assert_eq!(rates["successes"], json!(successes), "{agent} {hint} {h}");
            assert_eq!(rates["final_success"].as_f64().unwrap(), f64::from(successes) / f64::from(counted));
        }
        let got: AgentStats = serde_json::from_value(row["stats"].clone()).unwrap();
        let want = analysed.iter().find(|s| &s.id == bundle_id).unwrap();
        // Through JSON text as the served numbers came: serde_json's parse of a float may
        // differ from it in the last bit.
        let want: AgentStats = serde_json::from_str(&serde_json::to_string(want).unwrap()).unwrap();
        assert_eq!(got, want, "{agent}: the strict view's intervals and ranks");
    }
    analysed
}

/// The strict view counts flagged successes as failures, and its rates, intervals, rank
/// ranges and groups equal those computed here from the runs sent; a dismissed finding
/// stops counting and a confirmed one keeps counting; every review is in the change log.
#[tokio::test]
async fn the_strict_view_matches_an_independent_computation() {
    let site = site().await;
    let (app, key) = (&site.app, &site.key);
    let mut agents = Vec::new();
    for k in 0..4 {
        let agent = format!("agent-{k}");
        let mut runs = Vec::new();
        for (t, task) in TASKS.iter().enumerate() {
            for (h, hint) in HINTS.iter().enumerate() {
                for attempt in 1..=5 {
                    let (outcome, flagged) = ending(k, t, h, attempt);
                    let findings = if flagged {
                        json!([{"check": "result-line-literal", "message": "prints the line it should compute"}])
                    } else {
                        json!([])
                    };
                    runs.push(json!({"task": task, "hint": hint, "attempt": attempt, "outcome": outcome,
                                     "metrics": {}, "findings": findings}));
                }
            }
        }
        let mut b = bundle::BundleBuilder::new(manifest(&agent, Value::Array(runs)));
        crate::harness::with_patches(&mut b);
        let mut bytes = Vec::new();
        b.write(&[key], &mut bytes).unwrap();
        agents.push((agent, stored(app, bytes).await));
    }
    // The analysis takes a task set's agents in the order of their bundle ids.
    agents.sort_by(|a, b| a.1.cmp(&b.1));
    let bundle_of = |agent: &str| agents.iter().find(|(a, _)| a == agent).unwrap().1.clone();

    let reported = get(app, "/api/v1/leaderboard").await.json();
    let lead = |board: &Value| {
        let rows = board["rows"].as_array().unwrap();
        let best = rows.iter().min_by_key(|r| r["stats"]["rank"]["best"].as_u64().unwrap()).unwrap();
        best["agent_id"].as_str().unwrap().to_owned()
    };
    assert_eq!(lead(&reported), "agent-0", "agent 0 leads as reported");
    let agent0 = reported["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["agent_id"] == json!("agent-0"))
        .unwrap()
        .clone();
    assert_eq!(agent0["by_hint"]["none"]["flagged"], json!(7), "{agent0}");

    let mut unflagged = BTreeSet::new();
    let analysed = check_strict(app, &agents, &expected_cells(&agents, &unflagged)).await;
    // Rank ranges overlap, so several rows may share a best rank of 1: the lead is the
    // highest estimate without hints, which the bundle ids' order cannot sway.
    let none = |s: &AgentStats| s.final_success.none.unwrap().estimate;
    let strict_lead = analysed.iter().max_by(|a, b| none(a).total_cmp(&none(b))).unwrap();
    let agent0_strict = analysed.iter().find(|s| s.id == bundle_of("agent-0")).unwrap();
    assert!(none(strict_lead) > none(agent0_strict), "strictly, agent 0 no longer leads: {analysed:?}");
    assert!(agent0_strict.rank.unwrap().best > 1, "nor may it lead: {:?}", agent0_strict.rank);

    // A maintainer dismisses the finding about agent 2's first cogs run with no hints,
    // and confirms one of agent 0's.
    let runs = runs_of(&site, &bundle_of("agent-2")).await;
    let run = &runs[&("cogs".to_owned(), "none".to_owned(), 1)];
    let id = run["findings"][0]["id"].as_str().unwrap().to_owned();
    let answer =
        review(app, &id, json!({"verdict": "dismissed", "note": "the line is printed by the scorer"})).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", String::from_utf8_lossy(&answer.body));
    assert_eq!(answer.json()["finding"]["finding"]["review"]["verdict"], json!("dismissed"));
    unflagged.insert((2, 0, 0, 1));
    let runs0 = runs_of(&site, &bundle_of("agent-0")).await;
    let confirmed = runs0.values().find(|r| !r["findings"].as_array().unwrap().is_empty()).unwrap();
    let id0 = confirmed["findings"][0]["id"].as_str().unwrap().to_owned();
    let answer = review(app, &id0, json!({"verdict": "confirmed", "note": "echoes the result"})).await;
    assert_eq!(answer.status, StatusCode::OK);
    check_strict(app, &agents, &expected_cells(&agents, &unflagged)).await;

    let run_page = get(app, &format!("/runs/{}", run["id"])).await;
    let html = String::from_utf8(run_page.body).unwrap();
    assert!(html.contains("the line is printed by the scorer") && html.contains("dismissed"), "the run page");
    let changes = get(app, "/api/v1/changes").await.json();
    let reviews: Vec<&Value> =
        changes["changes"].as_array().unwrap().iter().filter(|c| c["kind"] == json!("reviewed")).collect();
    assert_eq!(reviews.len(), 2, "{changes}");

    // The pages say it: the count per agent, the strict view, the lists of flagged runs.
    let page = |path: &str| {
        let app = app.clone();
        let path = path.to_owned();
        async move { String::from_utf8(get(&app, &path).await.body).unwrap() }
    };
    let board = page("/").await;
    let flagged0: i64 =
        HINTS.iter().map(|h| agent0["by_hint"][h.as_str()]["flagged"].as_i64().unwrap()).sum();
    assert!(
        board.contains(&format!("⚑ {flagged0} flagged")),
        "the leaderboard counts agent 0's flagged successes"
    );
    let strict = page("/?integrity=strict").await;
    assert!(strict.contains("Strict: every success with an integrity finding"), "the strict caption");
    assert!(strict.contains(r#"<option value="strict" selected"#), "the strict choice is kept in the form");
    assert!(
        page("/agents/agent-0").await.contains(r#"id="flagged""#),
        "the agent page lists its flagged runs"
    );
    let failures = page("/failures").await;
    assert!(failures.contains(r#"id="integrity""#) && failures.contains("result-line-literal"), "/failures");
}

pub(crate) async fn review(app: &Router, id: &str, body: Value) -> Answer {
    review_with(app, id, body.to_string(), Some("Bearer s3cret-token")).await
}

async fn review_with(app: &Router, id: &str, body: String, token: Option<&str>) -> Answer {
    let mut request = Request::post(format!("/api/v1/admin/findings/{id}/review"))
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, token);
    }
    send(app, request.body(Body::from(body)).unwrap()).await
}

/// Each bad review is refused with its own code, and changes nothing.
#[tokio::test]
async fn bad_reviews_are_refused_with_their_own_codes() {
    let site = site().await;
    let (app, key) = (&site.app, &site.key);
    let mut b = bundle::BundleBuilder::new(manifest(
        "agent-x",
        json!([{"task": "cogs", "hint": "none", "attempt": 1, "outcome": "success", "metrics": {},
                "findings": [{"check": "result-line-literal", "message": "m"}]}]),
    ));
    crate::harness::with_patches(&mut b);
    let mut bytes = Vec::new();
    b.write(&[key], &mut bytes).unwrap();
    let bundle_id = stored(app, bytes).await;
    let runs = runs_of(&site, &bundle_id).await;
    let id = runs.values().next().unwrap()["findings"][0]["id"].as_str().unwrap().to_owned();
    let ok = json!({"verdict": "confirmed", "note": "n"}).to_string();
    for (answer, status, code) in [
        (review_with(app, &id, ok.clone(), None).await, StatusCode::UNAUTHORIZED, "admin_unauthorized"),
        (
            review(app, "999-server-0", json!({"verdict": "confirmed", "note": "n"})).await,
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            review(app, "not-an-id", json!({"verdict": "confirmed", "note": "n"})).await,
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            review(app, &id, json!({"verdict": "maybe", "note": "n"})).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_verdict",
        ),
        (
            review(app, &id, json!({"verdict": "confirmed", "note": "  "})).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_note",
        ),
        (
            review(app, &id, json!({"verdict": "confirmed", "note": "n".repeat(1001)})).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_note",
        ),
        (
            review(app, &id, json!({"verdict": "confirmed"})).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
    ] {
        assert_eq!((answer.status, answer.code()), (status, code.to_owned()));
    }
    let listed = send(
        app,
        Request::get("/api/v1/admin/findings")
            .header(header::AUTHORIZATION, "Bearer s3cret-token")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(listed.status, StatusCode::OK);
    let findings = listed.json()["findings"].as_array().unwrap().clone();
    assert_eq!(findings.len(), 1, "still pending: {findings:?}");
    assert_eq!(findings[0]["finding"]["review"], Value::Null);
    let bad_status = send(
        app,
        Request::get("/api/v1/admin/findings?status=maybe")
            .header(header::AUTHORIZATION, "Bearer s3cret-token")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!((bad_status.status, bad_status.code()), (StatusCode::BAD_REQUEST, "invalid_query".to_owned()));
}

/// `rexbench-server findings`: the queue of findings to review, and a maintainer's
/// verdict on one, by the server's own command on the database.
#[tokio::test]
async fn the_findings_command_lists_confirms_and_dismisses() {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let blobs = dir.path().join("blobs");
    let seeded = state(&backend, &blobs).await;
    crate::harness::seed_demo(&seeded).await;
    let flagged = seeded.store.findings(store::FindingsFilter::Pending, 100).await.unwrap();
    drop(seeded);
    // The demo's shortcut agent printed its result line: the runner's finding and the
    // server's are waiting.
    assert_eq!(flagged.len(), 2, "{flagged:?}");
    let command = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rexbench-server"))
            .args(args)
            .env("DATABASE_URL", crate::process::database_url(&backend))
            .env("REXBENCH_BLOBS", &blobs)
            .env("RUST_LOG", "warn")
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let (code, listed, _) = command(&["findings", "list"]);
    assert_eq!(code, Some(0));
    let (first, second) = (&flagged[0].finding.id, &flagged[1].finding.id);
    assert!(listed.contains(first.as_str()) && listed.contains(second.as_str()), "{listed}");
    assert!(listed.contains("result-line-literal") && listed.contains("not reviewed"), "{listed}");

    let (code, said, _) =
        command(&["findings", "confirm", first, "--note", "prints ACCURACY: 1.0 literally"]);
    assert_eq!(code, Some(0));
    assert!(said.starts_with(&format!("confirmed {first}")), "{said}");
    let (code, _, _) = command(&["findings", "dismiss", second, "--note", "the same line, found twice"]);
    assert_eq!(code, Some(0));
    let (_, pending, _) = command(&["findings", "list"]);
    assert_eq!(pending, "", "nothing waits");
    let (_, all, _) = command(&["findings", "list", "--all"]);
    assert!(all.contains("confirmed: prints ACCURACY: 1.0 literally"), "{all}");
    assert!(all.contains("dismissed: the same line, found twice"), "{all}");

    for (args, says) in [
        (vec!["findings", "dismiss", first, "--note", "  "], "--note must be 1 to 1000 characters"),
        (vec!["findings", "dismiss", "999999-server-0", "--note", "n"], "no finding 999999-server-0"),
        (vec!["findings", "dismiss", "the-first", "--note", "n"], "is not a finding id"),
    ] {
        let (code, _, stderr) = command(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// The runner's results for the demo's shortcut agent, with every finding deleted from
/// each run.json and packed and signed again, are flagged all the same: by the server,
/// from the bundle alone.
#[tokio::test]
async fn results_re_signed_without_their_findings_are_flagged_by_the_server() {
    let site = site().await;
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let source = repo().join("tasks/examples/shortcut/results");
    let mut stripped = 0;
    for entry in crate::evidence::walk(&source) {
        let to = results.join(entry.strip_prefix(&source).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let mut bytes = std::fs::read(&entry).unwrap();
        if entry.file_name().is_some_and(|n| n == "run.json") {
            let mut run: Value = serde_json::from_slice(&bytes).unwrap();
            stripped +=
                run.as_object_mut().unwrap().remove("findings").map_or(0, |f| f.as_array().unwrap().len());
            bytes = serde_json::to_vec(&run).unwrap();
        }
        std::fs::write(&to, bytes).unwrap();
    }
    assert_eq!(stripped, 1, "the runner flagged the shortcut");
    let agent = bundle::Agent {
        id: "resigned-agent".into(),
        framework: "F".into(),
        framework_version: None,
        model: "M".into(),
        model_id: None,
        display_name: None,
        url: None,
    };
    let out = tmp.path().join("b.tar.gz");
    benchmark::pack::pack(&results, agent, &[&site.key], "2026-11-24T00:00:00Z", &out).unwrap();
    let bundle_id = stored(&site.app, std::fs::read(&out).unwrap()).await;
    let runs = runs_of(&site, &bundle_id).await;
    let shortcut = &runs[&("wordfreq".to_owned(), "none".to_owned(), 2)];
    let findings = shortcut["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{shortcut}");
    assert_eq!(
        (&findings[0]["found_by"], &findings[0]["check"], &findings[0]["line"]),
        (&json!("server"), &json!("result-line-literal"), &json!(7))
    );
    let board = get(&site.app, "/api/v1/leaderboard").await.json();
    let row = board["rows"].as_array().unwrap().iter().find(|r| r["bundle_id"] == json!(bundle_id)).unwrap();
    assert_eq!(row["by_hint"]["none"]["flagged"], json!(1));
}

/// A run's provenance record as the runner writes it, for cogs: the harness's
/// `bash -c '… | tee eval_results.txt'` with `writer` (its argv and what it read) as the
/// one step of `run_final.sh`, its output tee'd into the result file.
fn cogs_record(writer: &[&str], read: &[&str], interrupted: Option<&str>) -> Vec<u8> {
    let record = bundle::ProvenanceRecord {
        schema: bundle::PROVENANCE_SCHEMA.into(),
        tracer: Some("strace 6.1, seccomp-bpf".into()),
        untraced: None,
        interrupted: interrupted.map(str::to_owned),
        limit: None,
        cut: Default::default(),
        duration_ms: 900,
        results: vec!["eval_results.txt".into()],
        salt: None,
        processes: vec![
            process(
                1,
                None,
                &["bash", "-c", "bash -e run_final.sh | tee eval_results.txt"],
                &[],
                &[],
                &[],
                &[],
            ),
            process(2, Some(1), &["bash", "-e", "run_final.sh"], &["run_final.sh"], &[], &[], &[1]),
            process(3, Some(2), writer, read, &[], &[], &[1]),
            process(4, Some(1), &["tee", "eval_results.txt"], &[], &["eval_results.txt"], &[1], &[]),
        ],
    };
    record.to_bytes()
}

fn process(
    id: u32,
    parent: Option<u32>,
    argv: &[&str],
    read: &[&str],
    wrote: &[&str],
    pipes_in: &[u32],
    pipes_out: &[u32],
) -> bundle::Process {
    let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    bundle::Process {
        id,
        parent,
        program: format!("/usr/bin/{}", argv[0]),
        argv: strings(argv),
        start_ms: u64::from(id),
        end_ms: Some(800),
        exit: Some("exit 0".into()),
        killed: false,
        read: strings(read),
        wrote: strings(wrote),
        renamed: Vec::new(),
        pipes_in: pipes_in.to_vec(),
        pipes_out: pipes_out.to_vec(),
    }
}

/// The server judges each run's provenance record again, from the bundle alone and
/// whatever findings the submitter kept: a success whose result line no input reached is
/// flagged, an honest one is not, an experiment that stopped its tracing is marked; an
/// evaluated success without a record, and an imported one without its patch, are
/// flagged for what they lack.
#[tokio::test]
async fn the_server_judges_provenance_from_the_bundle_alone() {
    let site = site().await;
    let (app, key) = (&site.app, &site.key);
    let b64 = "import base64; print(base64.b64decode('UFJFRCBBQ0MgOiAwLjQ1NjI4NTcxNDI4NTcxNDMgKDk1ODIvMjEwMDAp').decode())";
    let cases: Vec<(&str, Option<Vec<u8>>, &str, Vec<(&str, Option<u64>)>)> = vec![
        ("honest", Some(cogs_record(&["python3", "score.py"], &["data/gen.tsv"], None)), "evaluated", vec![]),
        (
            "encoded",
            Some(cogs_record(&["python3", "-c", b64], &[], None)),
            "evaluated",
            vec![("inputs-unread", Some(1)), ("result-not-from-inputs", Some(5))],
        ),
        (
            "interrupted",
            Some(cogs_record(
                &["python3", "score.py"],
                &["data/gen.tsv"],
                Some("the tracer ended before the task's command did"),
            )),
            "evaluated",
            vec![("tracing-interrupted", None)],
        ),
        ("unrecorded", None, "evaluated", vec![("provenance-missing", None)]),
        ("harbor-import", None, "imported", vec![("patch-missing", None)]),
    ];
    for (agent, record, kind, expected) in cases {
        let mut m = manifest(
            agent,
            json!([{"task": "cogs", "hint": "none", "attempt": 1, "outcome": "success", "metrics": {}}]),
        );
        if kind == "imported" {
            m.provenance =
                serde_json::from_value(json!({"kind": "imported", "source": "harbor 0.26.0, job j"}))
                    .unwrap();
        }
        let mut b = bundle::BundleBuilder::new(m);
        if kind == "evaluated" {
            let patch = b.add_bytes(
                format!("--- /dev/null\n+++ b/run_final.sh\n@@ -0,0 +1 @@\n+python3 score.py  # {agent}\n")
                    .into_bytes(),
                "text/x-diff",
            );
            b.manifest_mut().runs[0].artifacts.insert("patch".into(), patch.to_hex());
        }
        if let Some(record) = record {
            let digest = b.add_bytes(record, "application/json");
            b.manifest_mut().runs[0].artifacts.insert("x-provenance".into(), digest.to_hex());
        }
        // The agent's own record, which every success carries (spec §5a).
        let log = b.add_bytes(format!("{agent}: wrote run_final.sh\n").into_bytes(), "text/plain");
        b.manifest_mut().runs[0].artifacts.insert("agent_log".into(), log.to_hex());
        let mut bytes = Vec::new();
        b.write(&[key], &mut bytes).unwrap();
        let bundle_id = stored(app, bytes).await;
        let runs = runs_of(&site, &bundle_id).await;
        let findings = runs.values().next().unwrap()["findings"].as_array().unwrap().clone();
        let got: Vec<(&str, Option<u64>)> =
            findings.iter().map(|f| (f["check"].as_str().unwrap(), f["line"].as_u64())).collect();
        assert_eq!(got, expected, "{agent}: {findings:?}");
        for f in &findings {
            assert_eq!(f["found_by"], json!("server"), "{f}");
        }
    }
}
