//! The rest of the paper on the board: Table 7's cost and duration, Tables 9–10's error
//! counts and the known issues of the published numbers, checked against the
//! maintainers' transcription of the paper (`docs/data/`, the same file as `../shared/data`
//! where that is beside the repository), not against the server's own derived copy; cost
//! on the leaderboard; and agent trajectories on run pages, hostile ones included.

use axum::http::StatusCode;
use bundle::SecretKey;
use serde_json::{Value, json};
use store::Tier;

use crate::harness::{get, post_bundle, repo, state};

/// The paper's numbers as the maintainers' data file records them.
fn shared_data() -> Value {
    let path = repo().join("docs/data/rexbench-v3-results.json");
    serde_json::from_slice(&std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap()
}

#[test]
fn the_repository_s_copy_of_the_paper_s_data_is_the_maintainers() {
    let Some(shared) = crate::harness::shared() else { return };
    let theirs = std::fs::read(shared.join("data/rexbench-v3-results.json")).unwrap();
    let ours = std::fs::read(repo().join("docs/data/rexbench-v3-results.json")).unwrap();
    assert!(
        theirs == ours,
        "docs/data/rexbench-v3-results.json differs from ../shared/data's: copy it again"
    );
}

/// The demo's leaderboard: the paper's 14 agents and the example agent.
async fn demo() -> (axum::Router, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    crate::harness::seed_demo(&state).await;
    (server::build_app(state), dir)
}

async fn html(app: &axum::Router, path: &str) -> String {
    html_of(path, get(app, path).await)
}

/// A page as a maintainer reads it, private outputs shown.
async fn maintainer_html(app: &axum::Router, path: &str) -> String {
    html_of(path, crate::harness::get_as_maintainer(app, path).await)
}

fn html_of(path: &str, answer: crate::harness::Answer) -> String {
    assert_eq!(answer.status, StatusCode::OK, "{path}");
    let html = String::from_utf8(answer.body).unwrap();
    assert!(html.len() < 200_000, "{path}: {} bytes", html.len());
    html
}

#[tokio::test]
async fn table_7_is_reproduced_on_every_published_agents_page() {
    let (app, _dir) = demo().await;
    let data = shared_data();
    let table7 = data["cost"]["by_agent"].as_object().unwrap();
    assert_eq!(table7.len(), 14);
    for (agent, printed) in table7 {
        let avg_cost = printed["avg_cost_usd"].as_f64().unwrap();
        let avg_duration = printed["avg_duration_s"].as_f64().unwrap();
        // The runs' mean cost and duration per hint condition are the paper's averages.
        let answer = get(&app, &format!("/api/v1/agents/{agent}")).await.json();
        let grid = answer["current"].as_object().unwrap().values().next().unwrap();
        for (task, by_hint) in grid.as_object().unwrap() {
            for (hint, rates) in by_hint.as_object().unwrap() {
                let mean = rates["mean_cost_usd"].as_f64().unwrap();
                assert!((mean - avg_cost).abs() < 1e-9, "{agent} {task} {hint}: {mean} vs {avg_cost}");
                let mean = rates["mean_duration_s"].as_f64().unwrap();
                assert!(
                    (mean - avg_duration).abs() < 1e-9,
                    "{agent} {task} {hint}: {mean} vs {avg_duration}"
                );
            }
        }
        // The page shows them, and Table 7 as printed beside them.
        let page = html(&app, &format!("/agents/{agent}")).await;
        let cents = format!("${avg_cost:.2}");
        assert!(page.contains(&format!(">{cents}<")), "{agent}: mean cost {cents} not shown");
        for printed in [
            format!(">{avg_cost:.2}<"),
            format!(">{}<", printed["avg_duration_printed"].as_str().unwrap()),
            format!(">{:.2}<", printed["total_cost_usd"].as_f64().unwrap()),
            format!(">{}<", printed["total_duration_printed"].as_str().unwrap()),
        ] {
            assert!(page.contains(&printed), "{agent}: Table 7's {printed} not shown");
        }
        assert!(page.contains("As published: Table 7"), "{agent}");
        assert!(page.contains("carries the published average"), "{agent}: what is reconstructed is said");
        // Table 7's run count is marked where its numbers are.
        assert!(page.contains("#issue-table7-run-count"), "{agent}");
        assert!(page.contains(r#"id="issue-table7-run-count""#), "{agent}");
    }
}

#[tokio::test]
async fn tables_9_and_10_and_the_known_issues_are_shown_where_their_numbers_are() {
    let (app, _dir) = demo().await;
    let data = shared_data();
    let counts = &data["error_counts"]["by_agent"];

    // Every agent's column of Tables 9–10, on its page and on /failures.
    let failures = html(&app, "/failures").await;
    assert!(failures.contains("Table 9 as published") && failures.contains("Table 10 as published"));
    assert!(failures.contains("Evaluated here"), "beside the evaluated agents' error types");
    for id in ["error-counts-column-order", "error-counts-below-failed-runs", "figure6-vs-error-tables"] {
        assert!(failures.contains(&format!(r#"id="issue-{id}""#)), "{id}");
        assert!(failures.contains(&format!("#issue-{id}")), "{id} is marked");
    }
    // The API's answer is the page's: each published column as the paper's data gives it.
    let answer = crate::harness::get(&app, "/api/v1/failures").await.json();
    let tables = answer["published"].as_array().unwrap();
    assert_eq!(tables.len(), 2, "{answer}");
    let mut columns = 0;
    for table in tables {
        for (c, agent) in table["agents"].as_array().unwrap().iter().enumerate() {
            let column = &counts[agent["agent_id"].as_str().unwrap()];
            for row in table["rows"].as_array().unwrap() {
                let printed = column[row["error_type"].as_str().unwrap()].as_i64().unwrap_or(0);
                assert_eq!(row["counts"][c].as_i64(), Some(printed), "{agent} {row}");
            }
            columns += 1;
        }
    }
    assert_eq!(columns, counts.as_object().unwrap().len(), "every agent of Tables 9–10 is a column");
    for (agent, column) in counts.as_object().unwrap() {
        let page = html(&app, &format!("/agents/{agent}")).await;
        assert!(page.contains("Error types as published"), "{agent}");
        let total: i64 = column.as_object().unwrap().values().map(|n| n.as_i64().unwrap()).sum();
        assert!(page.contains(&format!("({total} in all;")), "{agent}: {total} errors in all");
        let value_errors = column["ValueError"].as_i64().unwrap();
        if value_errors > 0 {
            assert!(page.contains(&format!("<th scope=\"row\">ValueError</th><td>Python Errors</td><td class=\"num\">{value_errors}</td>")), "{agent}");
        }
    }

    // Each issue that touches a shown number is marked there, and explained.
    for issue in data["known_issues"].as_array().unwrap() {
        let (id, agent) = (issue["id"].as_str().unwrap(), issue["agent"].as_str());
        let Some(agent) = agent else { continue };
        let page = html(&app, &format!("/agents/{agent}")).await;
        assert!(page.contains(&format!(r#"id="issue-{id}""#)), "{id} is explained on {agent}'s page");
        if issue["task"].is_string() {
            assert!(page.contains(&format!(r##"href="#issue-{id}""##)), "{id} is marked in the task table");
        }
    }
    // With every column shown (the default choice leaves file recall out).
    let board = html(&app, "/?col=final&col=delta&col=every&col=exec&col=recall&col=cost").await;
    for (agent, id) in [
        ("aider-claude-4-sonnet", "text-19-percent"),
        ("openhands-gpt-5", "mean-openhands-gpt-5-none-file_recall"),
    ] {
        assert!(
            board.contains(&format!(r#"href="/agents/{agent}#issue-{id}""#)),
            "{id} marked on the leaderboard"
        );
    }
    let page = html(&app, "/agents/aider-claude-4-sonnet").await;
    assert!(page.contains(r#"id="issue-text-19-percent""#));
}

#[tokio::test]
async fn the_leaderboard_has_cost_and_the_cost_success_frontier() {
    let (app, _dir) = demo().await;
    let board = html(&app, "/").await;
    assert!(board.contains("Cost per run"));
    assert!(board.contains(r#"href="/?sort=cost-none&amp;dir=asc""#), "{board}");
    assert!(board.contains(">$1.34<"), "OpenHands + Claude 4.5 Opus's Table 7 average");
    assert!(board.contains("<title>Final success against mean cost per run"), "the chart");
    assert!(board.contains("cost–success frontier"));
    // Sorted by cost, cheapest first: aider + DeepSeek R1 ($0.02) leads.
    let sorted = html(&app, "/?sort=cost-none").await;
    let first = sorted.find("aider + DeepSeek").unwrap();
    let dearest = sorted.find("OpenHands + Claude 4 Sonnet").unwrap();
    assert!(first < dearest, "cheapest first");
    let api = get(&app, "/api/v1/leaderboard").await.json();
    let row = api["rows"].as_array().unwrap().iter().find(|r| r["agent_id"] == "aider-o1").unwrap();
    let mean = row["by_hint"]["none"]["mean_cost_usd"].as_f64().unwrap();
    assert!((mean - 0.69).abs() < 1e-9, "{mean}");
    assert_eq!(row["by_hint"]["none"]["cost_runs"], json!(60));
}

/// A bundle with one run per trajectory given (role `x-trajectory`).
fn with_trajectories(key: &SecretKey, trajectories: &[Vec<u8>]) -> Vec<u8> {
    let runs: Vec<Value> = (1..=trajectories.len())
        .map(|attempt| {
            json!({"task": "cogs", "hint": "none", "attempt": attempt, "outcome": "execution_failed",
                   "error_type": "<b>KeyError</b>", "metrics": {}})
        })
        .collect();
    let manifest: bundle::Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-11-01T00:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "t", "version": "1"}, "provenance": {"kind": "evaluated"},
        "agent": {"id": "trajectory-agent", "framework": "F", "model": "M"},
        "runs": runs,
    }))
    .unwrap();
    let mut b = bundle::BundleBuilder::new(manifest);
    for (i, t) in trajectories.iter().enumerate() {
        let digest = b.add_bytes(t.clone(), "application/json");
        b.manifest_mut().runs[i].artifacts.insert("x-trajectory".into(), digest.to_hex());
    }
    crate::harness::with_patches(&mut b);
    let mut out = Vec::new();
    b.write(&[key], &mut out).unwrap();
    out
}

#[tokio::test]
async fn hostile_trajectories_render_inert_and_within_limits() {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    let key = SecretKey::generate();
    state.store.add_key(&key.public_key(), "Team", Tier::Submitter).await.unwrap();
    let store = state.store.clone();
    let app = server::build_app(state);

    let markup = "<script>alert(1)</script><img src=x onerror=alert(2)>";
    let hostile = json!({
        "schema_version": "ATIF-v1.7",
        "agent": {"name": markup, "version": markup, "model_name": markup},
        "steps": [
            {"step_id": 1, "source": "user", "message": markup, "timestamp": markup},
            {"step_id": 2, "source": markup, "model_name": markup, "message": [{"type": "text", "text": markup}],
             "reasoning_content": markup,
             "tool_calls": [{"tool_call_id": markup, "function_name": markup, "arguments": {markup: markup}}],
             "observation": {"results": [{"source_call_id": markup, "content": format!("{markup} <b>KeyError</b>")}]},
             "metrics": {"prompt_tokens": 1, "cost_usd": 0.5}},
        ],
    });
    let big_observation = "x".repeat(1 << 20);
    let big = json!({
        "agent": {"name": "a"},
        "steps": (1..=10).map(|i| json!({
            "step_id": i, "source": "agent", "message": "m",
            "observation": {"results": [{"content": big_observation}]}
        })).collect::<Vec<_>>(),
    });
    // A version that is not ATIF's is refused, the note saying so with the version in it.
    let mut versioned = hostile.clone();
    versioned["schema_version"] = json!(markup);
    let trajectories = [
        serde_json::to_vec(&hostile).unwrap(),
        serde_json::to_vec(&big).unwrap(),
        b"{\"steps\": [ <script>alert(3)</script>".to_vec(),
        serde_json::to_vec(&versioned).unwrap(),
    ];
    assert!(trajectories[1].len() > 10 << 20, "10 MB of observations");
    let stored = post_bundle(&app, with_trajectories(&key, &trajectories)).await;
    assert_eq!(stored.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&stored.body));
    let bundle_id = stored.json()["bundle_id"].as_str().unwrap().to_owned();
    let runs = store.runs_of(&bundle_id, None, None).await.unwrap();

    let policy = server::islands::Pkg::embedded()
        .map_or_else(|| server::islands::base_policy().to_owned(), |p| p.policy);
    let inert = |page: &str| {
        crate::harness::check_scripts("a run page", page, &policy);
        assert!(!page.contains("<img src=x"), "an element got through");
        assert!(!page.contains("<b>"), "an element got through");
    };
    let page = maintainer_html(&app, &format!("/runs/{}", runs[0].id)).await;
    inert(&page);
    assert!(page.contains("Agent trajectory"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{page}");
    assert!(
        page.contains(r#"id="step-2""#) && page.contains(r##"href="#step-2""##),
        "the error's step is marked"
    );

    let page = maintainer_html(&app, &format!("/runs/{}", runs[1].id)).await;
    inert(&page);
    assert!(page.contains(r#"id="step-1""#), "the steps of a 10 MB trajectory are shown");
    assert!(page.contains("the whole trajectory"), "cut texts link to the whole file");

    let page = maintainer_html(&app, &format!("/runs/{}", runs[2].id)).await;
    inert(&page);
    assert!(page.contains("cannot be shown step by step"), "invalid JSON is said to be so");
    assert!(page.contains("&lt;script&gt;alert(3)&lt;/script&gt;"), "and shown as text");

    let page = maintainer_html(&app, &format!("/runs/{}", runs[3].id)).await;
    inert(&page);
    assert!(page.contains("cannot be shown step by step"), "{page}");
    assert!(page.contains("is not an ATIF version (ATIF-v1.0 to v1.8)"), "{page}");
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the version shown as text");
}

#[tokio::test]
async fn the_example_run_shows_its_trajectory() {
    let (app, _dir) = demo().await;
    let page = html(&app, "/agents/example-agent?task=wordfreq&hint=hints").await;
    let run = page.split("href=\"/runs/").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let page = maintainer_html(&app, &format!("/runs/{run}")).await;
    assert!(page.contains("Agent trajectory"), "{page}");
    assert!(page.contains("example-agent v0.1.0 (example-model)"));
    assert!(page.contains("Tool call bash · call_4"));
    // The ValueError the run ended with first shows in step 4, which the facts link to.
    assert!(page.contains(r#"id="step-4""#) && page.contains(r##"href="#step-4""##), "{page}");
}
