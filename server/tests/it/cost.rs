//! Cost you can check (issue 68; spec §4m): a run's tokens are priced with the
//! repository's price table at ingest, and what a bundle states is held to them. Made on
//! the committed example results as a submitter who wants a cheaper row would make it,
//! and submitted beside an honest twin to a server on each backend.

use std::path::Path;

use bundle::SecretKey;
use serde_json::{Value, json};
use store::Tier;
use store::testing::for_each_backend;

use crate::counting::{csv_row, example_results, pack, personalise, row, submitted};
use crate::harness::{get, state};

/// Sets what the run at `runs/<run>` states of its cost and tokens.
fn state_cost(results: &Path, run: &str, cost: Option<f64>, tokens: Option<Value>) {
    let path = results.join("runs").join(run).join("run.json");
    let mut json: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let object = json.as_object_mut().unwrap();
    match cost {
        Some(c) => object.insert("cost_usd".into(), json!(c)),
        None => object.remove("cost_usd"),
    };
    match tokens {
        Some(t) => object.insert("tokens".into(), t),
        None => object.remove("tokens"),
    };
    std::fs::write(&path, serde_json::to_vec_pretty(&json).unwrap()).unwrap();
}

const NONE_RUNS: [&str; 3] = ["csvstats/none/1", "wordfreq/none/1", "wordfreq/none/2"];

/// A server on `backend` and a submitter's key it trusts.
async fn board(backend: &store::Backend, blobs: &Path) -> (axum::Router, SecretKey) {
    let state = state(backend, blobs).await;
    let key = SecretKey::generate();
    state.store.add_key(&key.public_key(), "a submitter", Tier::Submitter).await.unwrap();
    (server::build_app(state), key)
}

/// The price of `input` and `output` tokens of the examples' model today.
fn price(input: u64, output: u64) -> f64 {
    let today = time::OffsetDateTime::now_utc().date();
    let price = benchmark::cost::Prices::builtin().find(["Example Model"], today).expect("a price");
    price.cost(&bundle::Tokens { input, output, cache_read: 0, cache_write: 0 })
}

#[tokio::test]
async fn a_cost_its_tokens_do_not_bear_out_is_marked_and_the_frontier_counts_their_price() {
    for_each_backend(|backend, blobs| async move {
        let (app, key) = board(&backend, &blobs).await;

        // The honest agent states what its tokens cost: $0.90 a run without hints.
        let honest = example_results();
        let (honest_cost, under_price) = (price(200_000, 20_000), price(2_000_000, 200_000));
        assert!((honest_cost - 0.9).abs() < 1e-9 && (under_price - 9.0).abs() < 1e-9);
        for run in NONE_RUNS {
            state_cost(
                honest.path(),
                run,
                Some(honest_cost),
                Some(json!({"input": 200_000, "output": 20_000})),
            );
        }
        submitted(&app, pack(honest.path(), "honest-agent", &key).unwrap()).await;

        // The other states a tenth of what its tokens cost, so that its stated costs
        // ($0.90 against $0.90) would tie... and a twentieth, cheaper than the honest
        // agent's; on one run with hints it states fewer tokens than its trajectory counts.
        let under = example_results();
        personalise(under.path(), "under-agent");
        let tokens = json!({"input": 2_000_000, "output": 200_000});
        state_cost(under.path(), NONE_RUNS[0], Some(under_price / 10.0), Some(tokens.clone()));
        for run in &NONE_RUNS[1..] {
            state_cost(under.path(), run, Some(under_price / 20.0), Some(tokens.clone()));
        }
        state_cost(under.path(), "wordfreq/hints/1", Some(0.0001), Some(json!({"input": 292, "output": 36})));
        submitted(&app, pack(under.path(), "under-agent", &key).unwrap()).await;

        // The API: each stated cost beside its tokens' price, and the mark.
        let agent = get(&app, "/api/v1/agents/under-agent").await.json();
        let marked = agent["cost_marked"].as_array().unwrap();
        let marks: Vec<(&str, &str)> =
            marked.iter().map(|m| (m["task"].as_str().unwrap(), m["mark"].as_str().unwrap())).collect();
        assert_eq!(
            marks,
            [
                ("csvstats", "differs"),
                ("wordfreq", "differs"),
                ("wordfreq", "differs"),
                ("wordfreq", "trajectory-disagrees")
            ],
            "{agent}"
        );
        let tenth = &marked[0];
        assert_eq!(tenth["cost_usd"].as_f64().unwrap(), under_price / 10.0);
        assert!((tenth["cost_computed_usd"].as_f64().unwrap() - under_price).abs() < 1e-9, "{tenth}");
        let run = get(&app, &format!("/api/v1/runs/{}", tenth["run_id"])).await.json();
        assert_eq!(
            (run["cost_mark"].as_str(), run["tokens"]["input"].as_u64()),
            (Some("differs"), Some(2_000_000))
        );
        assert!((run["cost_computed_usd"].as_f64().unwrap() - under_price).abs() < 1e-9, "{run}");
        // The page says both, and the mark.
        let page = get(&app, &format!("/runs/{}", tenth["run_id"])).await;
        let html = String::from_utf8_lossy(&page.body);
        assert!(
            html.contains("$0.90 stated; its tokens cost $9.00 at its model&#x27;s price of its day")
                || html.contains("$0.90 stated; its tokens cost $9.00 at its model's price of its day"),
            "{html}"
        );
        assert!(html.contains("cost differs: the stated cost is not what its tokens cost"), "{html}");
        // Tokens fewer than its trajectory counts: marked, and the most any says counts.
        let fewer = &marked[3];
        let run = get(&app, &format!("/api/v1/runs/{}", fewer["run_id"])).await.json();
        assert_eq!(run["cost_mark"], "trajectory-disagrees", "{run}");
        let page = String::from_utf8_lossy(&get(&app, &format!("/runs/{}", fewer["run_id"])).await.body)
            .into_owned();
        assert!(page.contains("cost trajectory-disagrees"), "{page}");

        // The rates count the tokens' price, and say how much was checked.
        let u = row(&app, "under-agent").await;
        let h = row(&app, "honest-agent").await;
        let none = |r: &Value, f: &str| r["by_hint"]["none"][f].clone();
        assert!((none(&u, "mean_cost_usd").as_f64().unwrap() - under_price).abs() < 1e-9, "{u}");
        assert!((none(&h, "mean_cost_usd").as_f64().unwrap() - honest_cost).abs() < 1e-9, "{h}");
        assert_eq!(
            (none(&u, "cost_checked"), none(&u, "cost_runs"), none(&u, "cost_marked")),
            (json!(3), json!(3), json!(3))
        );
        assert_eq!((none(&h, "cost_checked"), none(&h, "cost_marked")), (json!(3), json!(0)));
        // A run whose tokens disagree with its trajectory is not checked; it counts at
        // the most any figure says, here its trajectory's tokens' price.
        let hints = &u["by_hint"]["hints"];
        assert_eq!((hints["cost_runs"].as_i64(), hints["cost_checked"].as_i64()), (Some(1), Some(0)), "{u}");
        let traced = benchmark::cost::Prices::builtin()
            .find(["Example Model"], time::OffsetDateTime::now_utc().date())
            .unwrap()
            .cost(&bundle::Tokens { input: 2920, output: 360, cache_read: 6400, cache_write: 0 });
        assert!((hints["mean_cost_usd"].as_f64().unwrap() - traced).abs() < 1e-12, "{u}");
        // Cost per success: 2 of 3 runs succeeded, so one success cost 1.5 runs' cost.
        assert!((none(&h, "cost_per_success_usd").as_f64().unwrap() - honest_cost * 1.5).abs() < 1e-9, "{h}");

        // The CSV says the same.
        let csv = csv_row(&app, "under-agent").await;
        assert_eq!(csv["mean_cost_usd_none"], "9.0000");
        assert_eq!(
            (
                csv["cost_runs_none"].as_str(),
                csv["cost_checked_runs_none"].as_str(),
                csv["cost_marked_runs_none"].as_str()
            ),
            ("3", "3", "3")
        );
        assert_eq!(csv["cost_marked_runs_hints"], "1");
        assert_eq!(csv_row(&app, "honest-agent").await["cost_marked_runs_none"], "0");

        // The frontier and the cost order follow the checked cost: by what they state
        // the under-reporting agent is the cheaper of two equally successful ones; by
        // what their tokens cost, the honest one is, and alone on the frontier.
        let board = String::from_utf8_lossy(&get(&app, "/?sort=cost-none&dir=asc").await.body).into_owned();
        let at = |name: &str| board.find(&format!(">{name}<")).unwrap_or_else(|| panic!("{name} in {board}"));
        assert!(at("honest-agent") < at("under-agent"), "cheapest first: {board}");
        assert!(board.contains("no other agent here beats on both counts (honest-agent)"), "{board}");
        assert!(board.contains("cost checked for 6 of 6 runs drawn"), "{board}");
        let keys = get(&app, "/api/v1/leaderboard").await.json();
        let names: Vec<&str> =
            keys["rows"].as_array().unwrap().iter().filter_map(|r| r["agent_id"].as_str()).collect();
        assert_eq!(names.len(), 2);
        // The agent's page lists the marked runs beside their tokens' price.
        let page = String::from_utf8_lossy(&get(&app, "/agents/under-agent").await.body).into_owned();
        let table = &page[page.find("id=\"cost-marked\"").expect("the marked runs' table")..];
        assert!(table.contains("$0.90") && table.contains("$9.00") && table.contains("differs"), "{table}");
        assert!(page.contains("3 of 3 · 3 marked"), "{page}");
    })
    .await;
}

#[tokio::test]
async fn a_cost_stated_with_no_tokens_is_marked_and_counted_unchecked() {
    for_each_backend(|backend, blobs| async move {
        let (app, key) = board(&backend, &blobs).await;
        // The committed examples: wordfreq/none/1 states $0.42 and no tokens;
        // wordfreq/hints/1 states its trajectory's tokens and no cost.
        let results = example_results();
        submitted(&app, pack(results.path(), "example-agent", &key).unwrap()).await;
        let agent = get(&app, "/api/v1/agents/example-agent").await.json();
        let marked = agent["cost_marked"].as_array().unwrap();
        assert_eq!(marked.len(), 1, "{agent}");
        assert_eq!(
            (marked[0]["mark"].as_str(), marked[0]["cost_usd"].as_f64()),
            (Some("no-tokens"), Some(0.42))
        );
        assert_eq!(marked[0]["cost_computed_usd"], Value::Null);
        let r = row(&app, "example-agent").await;
        assert_eq!(
            (r["by_hint"]["none"]["cost_runs"].as_i64(), r["by_hint"]["none"]["cost_checked"].as_i64()),
            (Some(1), Some(0))
        );
        assert_eq!(r["by_hint"]["none"]["mean_cost_usd"], 0.42);
        // The run with tokens and no cost is priced, checked and unmarked.
        assert_eq!(
            (r["by_hint"]["hints"]["cost_runs"].as_i64(), r["by_hint"]["hints"]["cost_checked"].as_i64()),
            (Some(1), Some(1))
        );
        let board = String::from_utf8_lossy(&get(&app, "/").await.body).into_owned();
        // One of its three runs without hints states a cost: the mean is over that one,
        // which the cell says, and the chart does not draw it as if it were the row's.
        assert!(board.contains(r#"<span class="ci">1 of 3 runs, 0 checked</span>"#), "{board}");
        assert!(
            board.contains(
                "No agent on this page reports what all its runs without hints cost (1 report some"
            ),
            "{board}"
        );
    })
    .await;
}

/// Spec §4n: each run says which task folder it ran; a task's page shows each agent's,
/// and says when current submissions on one task set ran different folders of it. A
/// bundle whose runs of one task ran two folders is refused at pack (and by the server).
#[tokio::test]
async fn the_task_folder_each_agent_ran_is_shown_and_a_split_is_said() {
    for_each_backend(|backend, blobs| async move {
        let (app, key) = board(&backend, &blobs).await;
        let folder = |results: &Path, hex: &str| {
            for dir in crate::counting::run_dirs(results).into_iter().filter(|d| d.to_string_lossy().contains("/wordfreq/")) {
                let path = dir.join("run.json");
                let mut run: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
                run["task_folder"] = json!(format!("sha256:{}", hex.repeat(32)));
                std::fs::write(&path, serde_json::to_vec_pretty(&run).unwrap()).unwrap();
            }
        };
        let first = example_results();
        folder(first.path(), "aa");
        submitted(&app, pack(first.path(), "first-agent", &key).unwrap()).await;
        let page = String::from_utf8_lossy(&get(&app, "/tasks/wordfreq").await.body).into_owned();
        assert!(page.contains("folder sha256:aaaaaaaaaaaa"), "{page}");
        assert!(!page.contains("different folders of this task"), "{page}");

        let second = example_results();
        personalise(second.path(), "second-agent");
        folder(second.path(), "bb");
        submitted(&app, pack(second.path(), "second-agent", &key).unwrap()).await;
        let page = String::from_utf8_lossy(&get(&app, "/tasks/wordfreq").await.body).into_owned();
        assert!(page.contains("folder sha256:bbbbbbbbbbbb"), "{page}");
        assert!(
            page.contains("ran 2 different folders of this task: sha256:aaaaaaaaaaaa (1 submission), sha256:bbbbbbbbbbbb (1 submission)"),
            "{page}"
        );
        // The other task's runs state no folder: nothing is said of it.
        let page = String::from_utf8_lossy(&get(&app, "/tasks/csvstats").await.body).into_owned();
        assert!(!page.contains("different folders") && !page.contains("folder sha256"), "{page}");
        // The API's task answer carries each agent's folder.
        let task = get(&app, "/api/v1/tasks/wordfreq").await.json();
        let folders: Vec<&str> = task["agents"].as_array().unwrap().iter().filter_map(|a| a["task_folder"].as_str()).collect();
        assert_eq!(folders.len(), 2, "{task}");

        // One bundle, two folders of wordfreq: pack refuses it.
        let split = example_results();
        folder(split.path(), "cc");
        let one = split.path().join("runs/wordfreq/none/1/run.json");
        let mut run: Value = serde_json::from_slice(&std::fs::read(&one).unwrap()).unwrap();
        run["task_folder"] = json!("0123abcd");
        std::fs::write(&one, serde_json::to_vec_pretty(&run).unwrap()).unwrap();
        let err = pack(split.path(), "split-agent", &key).unwrap_err();
        let cause = std::error::Error::source(&err).map(ToString::to_string).unwrap_or_default();
        assert!(cause.contains("task wordfreq: its runs ran two task folders"), "{err}: {cause}");
    })
    .await;
}

/// What a submitter with a key of their own tried (issue 68's attack): a model named so
/// that only a cheap name of it is priced, and a trajectory made unreadable so that it
/// bears nothing out. Neither is checked at the cheap price.
#[tokio::test]
async fn a_name_the_table_does_not_know_or_an_unreadable_trajectory_checks_nothing() {
    for_each_backend(|backend, blobs| async move {
        let (app, key) = board(&backend, &blobs).await;
        let results = example_results();
        for run in NONE_RUNS {
            state_cost(results.path(), run, Some(0.01), Some(json!({"input": 1_000_000, "output": 100_000})));
        }
        // The trajectory of wordfreq/hints/1 does not read past its end, and its run
        // states a tenth of its tokens.
        let trajectory = results.path().join("runs/wordfreq/hints/1/x-trajectory.json");
        let mut bytes = std::fs::read(&trajectory).unwrap();
        bytes.extend_from_slice(b"}garbage");
        std::fs::write(&trajectory, bytes).unwrap();
        state_cost(
            results.path(),
            "wordfreq/hints/1",
            Some(0.0001),
            Some(json!({"input": 292, "output": 36})),
        );
        let out = tempfile::tempdir().unwrap();
        let path = out.path().join("bundle.tar.gz");
        let agent = bundle::Agent {
            id: "renamed-agent".into(),
            framework: "ExampleFramework".into(),
            framework_version: None,
            // Not a name the table knows, beside a cheap one it does.
            model: "Claude Opus 4.5".into(),
            model_id: Some("deepseek-r1".into()),
            display_name: None,
            url: None,
        };
        let at = benchmark::pack::timestamp(time::OffsetDateTime::now_utc());
        benchmark::pack::pack(results.path(), agent, &[&key], &at, &path).unwrap();
        submitted(&app, std::fs::read(&path).unwrap()).await;
        let r = row(&app, "renamed-agent").await;
        let none = &r["by_hint"]["none"];
        assert_eq!(
            (none["cost_checked"].as_i64(), none["mean_cost_usd"].as_f64()),
            (Some(0), Some(0.01)),
            "{r}"
        );
        let agent = get(&app, "/api/v1/agents/renamed-agent").await.json();
        let marks: Vec<&str> =
            agent["cost_marked"].as_array().unwrap().iter().filter_map(|m| m["mark"].as_str()).collect();
        // Tokens the table cannot price are marked so (issue 75): unchecked, never silently.
        assert_eq!(marks, ["unpriced", "unpriced", "unpriced", "trajectory-disagrees"], "{agent}");
        assert_eq!(r["by_hint"]["hints"]["cost_checked"], 0, "{r}");
    })
    .await;
}

/// Issue 75: every run stating 0 tokens and $0 for a model the table prices, as a
/// submitter would state it to be the cheapest row: each run that wrote a patch is
/// marked `implausible-tokens` and none is checked, on the API, the agent's page and
/// the board.
#[tokio::test]
async fn zero_tokens_for_a_run_that_wrote_a_patch_are_not_believed() {
    for_each_backend(|backend, blobs| async move {
        let (app, key) = board(&backend, &blobs).await;
        let results = example_results();
        let zero = json!({"input": 0, "output": 0});
        let mut with_patch = 0;
        for task in std::fs::read_dir(results.path().join("runs")).unwrap().flatten() {
            for hint in std::fs::read_dir(task.path()).unwrap().flatten() {
                for attempt in std::fs::read_dir(hint.path()).unwrap().flatten() {
                    let run = attempt.path().strip_prefix(results.path().join("runs")).unwrap().to_owned();
                    let record: Value =
                        serde_json::from_slice(&std::fs::read(attempt.path().join("run.json")).unwrap())
                            .unwrap();
                    let patch =
                        std::fs::metadata(attempt.path().join("patch.diff")).is_ok_and(|m| m.len() > 0);
                    if patch && record["outcome"] != "empty_patch" {
                        with_patch += 1;
                    }
                    state_cost(results.path(), run.to_str().unwrap(), Some(0.0), Some(zero.clone()));
                }
            }
        }
        assert!(with_patch > 0);
        submitted(&app, pack(results.path(), "zero-agent", &key).unwrap()).await;
        let agent = get(&app, "/api/v1/agents/zero-agent").await.json();
        let marks: Vec<&str> =
            agent["cost_marked"].as_array().unwrap().iter().filter_map(|m| m["mark"].as_str()).collect();
        assert_eq!(marks.len(), with_patch, "{agent}");
        // (A run whose trajectory counts other tokens says that first.)
        assert!(marks.iter().all(|m| ["implausible-tokens", "trajectory-disagrees"].contains(m)), "{agent}");
        assert!(marks.contains(&"implausible-tokens"), "{agent}");
        // Every run without hints wrote a patch: none of their costs is checked.
        let r = row(&app, "zero-agent").await;
        for hint in ["none", "hints"] {
            assert_eq!(r["by_hint"][hint]["cost_checked"], 0, "{hint}: {r}");
        }
        let page = String::from_utf8_lossy(&get(&app, "/agents/zero-agent").await.body).into_owned();
        assert!(page.contains("it wrote a patch, yet states that its model wrote no token"), "{page}");
    })
    .await;
}
