//! Comparable rows: what each submission covers (partial results are listed apart and
//! ranked only on the tasks they cover, in the public-tasks view), the harness of every
//! submission, and the parity view, held to the maintainers' record of Harbor's parity
//! experiment (`docs/data/harbor-rexbench-parity-2026-02.json`, read here, not copied).

use std::collections::BTreeMap;

use axum::Router;
use axum::http::StatusCode;
use bundle::SecretKey;
use serde_json::{Value, json};
use store::Tier;
use store::testing::for_each_backend;

use crate::harness::{get, post_bundle, repo, state};

const ORIGINAL: &str = "openhands-1.4.0-claude-sonnet-4.5-rexbench";
const HARBOR: &str = "openhands-1.4.0-claude-sonnet-4.5-harbor";

fn parity_data() -> Value {
    let path = repo().join("docs/data/harbor-rexbench-parity-2026-02.json");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// The copy in the repository is the maintainers' file, where it is beside it.
#[test]
fn the_parity_data_is_the_maintainers() {
    let Some(shared) = crate::harness::shared() else { return };
    let theirs = std::fs::read(shared.join("data/harbor-rexbench-parity-2026-02.json")).unwrap();
    let ours = std::fs::read(repo().join("docs/data/harbor-rexbench-parity-2026-02.json")).unwrap();
    assert!(theirs == ours, "docs/data/harbor-rexbench-parity-2026-02.json differs from ../shared/data's");
}

/// A server holding the paper's results and the parity experiment, signed by a
/// maintainer key, and a submitter key; with the benchmark's task-set digest.
pub(crate) async fn seeded(state: server::AppState) -> (Router, SecretKey, String) {
    let maintainer = SecretKey::generate();
    let submitter = SecretKey::generate();
    state.store.add_key(&maintainer.public_key(), "maintainers", Tier::Maintainer).await.unwrap();
    state.store.add_key(&submitter.public_key(), "outside team", Tier::Submitter).await.unwrap();
    let cards = state.tasks.cards().unwrap();
    let digest = benchmark::taskset::task_set_digest(
        cards.values().filter(|c| bundle::REXBENCH_TASKS.contains(&c.id.as_str())),
    )
    .unwrap();
    let app = server::build_app(state);
    let out = tempfile::tempdir().unwrap();
    let at = "2026-04-21T00:00:00Z";
    let paper = benchmark::published::import(digest, &[&maintainer], at, out.path()).unwrap();
    let parity = benchmark::parity::import(digest, &[&maintainer], at, out.path()).unwrap();
    for b in paper.iter().chain(&parity) {
        let answer = post_bundle(&app, std::fs::read(&b.path).unwrap()).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&answer.body));
    }
    (app, submitter, digest.to_hex())
}

/// A Harbor import of the two public tasks, as an outside submitter packs it.
fn two_tasks(key: &SecretKey, digest: &str) -> Vec<u8> {
    let mut runs = Vec::new();
    for (task, wins) in [("cogs", 3), ("othello", 1)] {
        for attempt in 1..=5 {
            let outcome = if attempt <= wins { "success" } else { "wrong_result" };
            runs.push(json!({"task": task, "hint": "none", "attempt": attempt, "outcome": outcome}));
        }
    }
    imported(key, "outside-agent", digest, runs)
}

/// A Harbor import for `agent` on the task set `digest` holding `runs`, signed with `key`,
/// each run that got past applying its patch with one of its own.
pub(crate) fn imported(key: &SecretKey, agent: &str, digest: &str, runs: Vec<Value>) -> Vec<u8> {
    let manifest: bundle::Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-11-20T12:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": digest},
        "runner": {"name": "rexbench-runner", "version": "0.1.0"},
        "provenance": {"kind": "imported", "source": "harbor 0.3.1, job 2026-11-19__10-00-00"},
        "agent": {"id": agent, "framework": "Terminus", "model": "Some Model"},
        "runs": runs,
    }))
    .unwrap();
    let mut out = Vec::new();
    let mut b = bundle::BundleBuilder::new(manifest);
    crate::harness::with_patches(&mut b);
    b.write(&[key], &mut out).unwrap();
    out
}

fn rows(answer: &Value) -> BTreeMap<String, Value> {
    answer["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["agent_id"].as_str().unwrap().to_owned(), r.clone()))
        .collect()
}

#[tokio::test]
async fn the_parity_experiment_is_on_the_board_and_in_the_parity_view() {
    for_each_backend(|backend, blobs| async move {
        let (app, _, _) = seeded(state(&backend, &blobs).await).await;
        let data = parity_data();
        let per_task = data["per_task_successes_of_3"].as_object().unwrap();
        let runs_per_task = data["source"]["runs_per_task"].as_i64().unwrap();
        let side = |name: &str| -> BTreeMap<String, i64> {
            per_task.iter().map(|(t, s)| (t.clone(), s[name].as_i64().unwrap())).collect()
        };
        let (original, harbor) = (side("original"), side("harbor"));

        // The board: both sides, ranked on the 12 tasks, their harness named, and the
        // numbers that were not published absent.
        let board = get(&app, "/api/v1/leaderboard").await.json();
        let board = rows(&board);
        for (id, counts, harness) in [(ORIGINAL, &original, "rexbench-original"), (HARBOR, &harbor, "harbor")]
        {
            let row = &board[id];
            assert_eq!(row["harness"]["name"], harness, "{id}");
            assert_eq!(row["ranked"], true, "{id}");
            assert_eq!(row["tasks"].as_array().unwrap().len(), 12);
            let none = &row["by_hint"]["none"];
            let won: i64 = counts.values().sum();
            assert_eq!(none["successes"].as_i64().unwrap(), won);
            assert_eq!(none["counted"].as_i64().unwrap(), 12 * runs_per_task);
            for absent in ["execution_success", "file_recall", "mean_cost_usd", "mean_duration_s"] {
                assert_eq!(none[absent], Value::Null, "{id}: {absent} was not published");
            }
            assert_eq!(
                row["coverage"]["none"],
                json!({"tasks": 12, "fewest_attempts": 3, "most_attempts": 3, "short_tasks": 0})
            );
            assert!(row["by_hint"].get("hints").is_none(), "no hinted runs were published");
            assert!(row["stats"]["rank"].is_object(), "{id} is ranked");
        }
        assert_eq!(board[ORIGINAL]["by_hint"]["none"]["successes"], 12);
        assert_eq!(board[HARBOR]["by_hint"]["none"]["successes"], 15);
        // The paper's agents are the original harness's too.
        assert_eq!(board["openhands-claude-3.7-sonnet"]["harness"]["name"], "rexbench-original");
        let harbor_only = rows(&get(&app, "/api/v1/leaderboard?harness=harbor").await.json());
        assert_eq!(harbor_only.keys().collect::<Vec<_>>(), [HARBOR]);

        // The parity view, against the file.
        let answer = get(&app, &format!("/api/v1/parity?a={ORIGINAL}&b={HARBOR}")).await;
        assert_eq!(answer.status, StatusCode::OK);
        let p = answer.json();
        for (key, counts) in [("a", &original), ("b", &harbor)] {
            for t in p["tasks"].as_array().unwrap() {
                let task = t["task"].as_str().unwrap();
                assert_eq!(t[key], json!({"successes": counts[task], "runs": runs_per_task}), "{task}");
            }
        }
        let published = |name: &str| -> Vec<f64> {
            let runs = data["final_success_rate"][name]["runs"].as_array().unwrap();
            runs.iter().map(|r| r.as_f64().unwrap() / 100.0).collect()
        };
        let (runs_a, runs_b) = (published("original"), published("harbor"));
        let max = |v: &[f64]| v.iter().copied().fold(f64::MIN, f64::max);
        let min = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
        let overlap = max(&runs_a) >= min(&runs_b) && max(&runs_b) >= min(&runs_a);
        assert_eq!(p["ranges_overlap"], overlap);
        for (key, runs) in [("a", &runs_a), ("b", &runs_b)] {
            let shown: Vec<f64> =
                p[key]["run_rates"].as_array().unwrap().iter().map(|r| r.as_f64().unwrap()).collect();
            assert_eq!(shown.len(), runs.len());
            assert!(shown.iter().zip(runs.iter()).all(|(x, y)| (x - y).abs() < 1e-12), "{key}: {shown:?}");
        }
        assert_eq!(p["a"]["run_rates_from"], "published");
        let list = |pred: &dyn Fn(i64, i64) -> bool| -> Vec<&str> {
            original.keys().filter(|t| pred(original[*t], harbor[*t])).map(String::as_str).collect()
        };
        assert_eq!(p["only_a"], json!(list(&|a, b| a > 0 && b == 0)));
        assert_eq!(p["only_b"], json!(list(&|a, b| a == 0 && b > 0)));
        assert_eq!(p["both"], json!(list(&|a, b| a > 0 && b > 0)));
        assert_eq!(p["neither"], json!(list(&|a, b| a == 0 && b == 0)));
        assert_eq!(p["only_b"], json!(["tree-of-thoughts", "winodict"]));
        assert_eq!((p["a"]["successes"].as_i64(), p["b"]["successes"].as_i64()), (Some(12), Some(15)));
        assert_eq!((p["a"]["runs"].as_i64(), p["b"]["runs"].as_i64()), (Some(36), Some(36)));
        assert_eq!(p["lopsided"], false, "2 against 0 is a sign test of p = 0.5");
        let mean = p["b"]["mean"].as_f64().unwrap();
        let sem = p["b"]["sem"].as_f64().unwrap();
        assert_eq!(
            (format!("{:.2}", mean * 100.0), format!("{:.2}", sem * 100.0)),
            ("41.67".into(), "12.73".into())
        );
        let d = &p["difference"];
        assert!((d["estimate"].as_f64().unwrap() - 3.0 / 36.0).abs() < 1e-9);
        assert!(d["low"].as_f64().unwrap() < 0.0 && d["high"].as_f64().unwrap() > 0.0);
        // The same answer again: the interval is deterministic.
        assert_eq!(get(&app, &format!("/api/v1/parity?a={ORIGINAL}&b={HARBOR}")).await.json(), p);

        // The page says the same.
        let page = get(&app, &format!("/parity?a={ORIGINAL}&b={HARBOR}")).await;
        assert_eq!(page.status, StatusCode::OK);
        let html = String::from_utf8(page.body).unwrap();
        for text in [
            "12/36",
            "15/36",
            "The ranges overlap",
            "Tree of Thoughts",
            "16.67%, 58.33%, 50.00%",
            "41.67 ± 12.73",
        ] {
            assert!(html.contains(text), "the parity page lacks {text:?}");
        }
        // And each side's agent page links to it.
        let agent = String::from_utf8(get(&app, &format!("/agents/{HARBOR}")).await.body).unwrap();
        assert!(agent.contains(&format!("/parity?a={HARBOR}&amp;b={ORIGINAL}")), "no parity link");
    })
    .await;
}

#[tokio::test]
async fn partial_results_are_listed_apart_and_ranked_on_the_public_tasks() {
    for_each_backend(|backend, blobs| async move {
        let (app, submitter, digest) = seeded(state(&backend, &blobs).await).await;
        assert_eq!(post_bundle(&app, two_tasks(&submitter, &digest)).await.status, StatusCode::CREATED);

        let all = rows(&get(&app, "/api/v1/leaderboard").await.json());
        let outside = &all["outside-agent"];
        assert_eq!(outside["ranked"], false);
        assert_eq!(outside["stats"]["rank"], Value::Null);
        assert_eq!(outside["stats"]["group"], Value::Null);
        assert_eq!(outside["harness"], json!({"name": "harbor", "version": "0.3.1"}));
        assert_eq!(
            outside["coverage"]["none"],
            json!({"tasks": 2, "fewest_attempts": 5, "most_attempts": 5, "short_tasks": 0})
        );
        // Its rate is over its own runs, and says so; it takes no place among the others.
        assert_eq!(outside["by_hint"]["none"]["final_success"], 0.4);
        let ranked: Vec<&Value> = all.values().filter(|r| r["ranked"] == true).collect();
        assert_eq!(ranked.len(), 16, "the paper's 14 agents and the parity pair");
        for r in &ranked {
            assert_eq!(r["stats"]["of"], 16, "{}: ranked among complete rows only", r["agent_id"]);
            assert!(r["stats"]["rank"]["worst"].as_u64().unwrap() <= 16);
        }

        // On the public tasks, everyone is ranked on equal terms.
        let public = rows(&get(&app, "/api/v1/leaderboard?tasks=public").await.json());
        assert_eq!(public.len(), 17);
        for (id, r) in &public {
            assert_eq!(r["ranked"], true, "{id}");
            assert_eq!(r["tasks"], json!(["cogs", "othello"]));
            assert_eq!(r["stats"]["of"], 17, "{id}");
        }
        // A paper agent's rate there is its cogs and othello results alone.
        let agent = get(&app, "/api/v1/agents/openhands-claude-3.7-sonnet").await.json();
        let grid = agent["current"].as_object().unwrap().values().next().unwrap().clone();
        let (won, counted) = ["cogs", "othello"].iter().fold((0, 0), |(w, c), t| {
            let r = &grid[*t]["none"];
            (w + r["successes"].as_i64().unwrap(), c + r["counted"].as_i64().unwrap())
        });
        let paper = &public["openhands-claude-3.7-sonnet"]["by_hint"]["none"];
        assert_eq!(
            (paper["successes"].as_i64().unwrap(), paper["counted"].as_i64().unwrap()),
            (won, counted)
        );
        assert_eq!(public["outside-agent"]["by_hint"]["none"]["final_success"], 0.4);

        // The pages: apart on the full board, with its coverage; ranked on the public one.
        let html = String::from_utf8(get(&app, "/").await.body).unwrap();
        let apart = html.find("Not ranked: partial results").expect("a section of partial results");
        let row = html.find("/agents/outside-agent").unwrap();
        assert!(row > apart, "the partial row is listed after the ranked ones");
        assert!(html[row..].contains("2 of 12 tasks, no hints only, 5 valid attempts each"));
        let html = String::from_utf8(get(&app, "/?tasks=public").await.body).unwrap();
        assert!(!html.contains("Not ranked: partial results"));
        assert!(html.contains("/agents/outside-agent"));
        // Its own page says so too.
        let page = String::from_utf8(get(&app, "/agents/outside-agent").await.body).unwrap();
        assert!(
            page.contains("2 of 12 tasks, no hints only, 5 valid attempts each"),
            "the agent page names its coverage"
        );
        assert!(page.contains("not ranked"));
        let csv = String::from_utf8(get(&app, "/leaderboard.csv").await.body).unwrap();
        let line = csv.lines().find(|l| l.starts_with("outside-agent,")).unwrap();
        assert!(line.contains(",imported,harbor,0.3.1,false,12,"), "{line}");
    })
    .await;
}

/// pass@k and pass^k of every agent of the paper, against `server/tests/python/pass_k.py`,
/// which computes them from the paper's per-task means by the formulas alone; and the
/// same intervals from a second server holding the same results.
#[tokio::test]
async fn pass_at_k_and_pass_all_k_equal_an_independent_computation() {
    let dir = tempfile::tempdir().unwrap();
    let mut boards = Vec::new();
    for name in ["one", "two"] {
        let backend = store::Backend::Sqlite { path: dir.path().join(format!("{name}.sqlite")) };
        let (app, _, _) = seeded(state(&backend, &dir.path().join(name)).await).await;
        boards.push(get(&app, "/api/v1/leaderboard").await.json());
    }
    let input = dir.path().join("board.json");
    std::fs::write(&input, serde_json::to_vec(&boards[0]).unwrap()).unwrap();
    let out = std::process::Command::new(crate::harness::python())
        .arg(repo().join("server/tests/python/pass_k.py"))
        .arg(&input)
        .arg(repo().join("docs/data/rexbench-v3-results.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|_| panic!("pass_k.py: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(report["mismatches"], json!([]));
    assert_eq!(report["checked"], 14 * 3 * 5 * 2, "every agent, condition, k and measure");

    let reliability = |board: &Value| -> BTreeMap<String, Value> {
        rows(board).into_iter().map(|(id, r)| (id, r["stats"]["reliability"].clone())).collect()
    };
    assert_eq!(reliability(&boards[0]), reliability(&boards[1]), "the intervals are deterministic");
    // The parity pair has 3 attempts a task: its curve stops at k = 3.
    let harbor = &reliability(&boards[0])[HARBOR]["none"];
    assert_eq!(harbor["pass_all"].as_array().unwrap().len(), 3);
    // pass^3 is the share of tasks solved all 3 times: cogs and othello, 2 of 12.
    assert!((harbor["pass_all"][2]["estimate"].as_f64().unwrap() - 2.0 / 12.0).abs() < 1e-12);
}
