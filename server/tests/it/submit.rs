//! `rexbench submit`, the real client, against the real server on a real socket.

use std::fs;

use bundle::PublicKey;
use store::Tier;
use store::testing::for_each_backend;

use crate::harness::{get, repo, state, vectors};

#[tokio::test]
async fn runner_submit_against_a_server_on_127_0_0_1() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let key = PublicKey::from_pem(&fs::read_to_string(vectors().join("test-key/key.pub.pem")).unwrap())
            .unwrap();
        state.store.add_key(&key, "conformance", Tier::Submitter).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(axum::serve(listener, server::build_app(state)).into_future());

        let submit = |name: &'static str, url: String| {
            tokio::task::spawn_blocking(move || runner::submit::submit(&vectors().join(name), &url).unwrap())
        };
        match submit("valid-basic.tar.gz", url.clone()).await.unwrap() {
            runner::submit::Verdict::Accepted { status, body } => {
                assert_eq!(status, 201);
                let expected: serde_json::Value =
                    serde_json::from_slice(&fs::read(vectors().join("expected.json")).unwrap()).unwrap();
                assert_eq!(body["bundle_id"], expected["valid-basic.tar.gz"]["bundle_id"]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            submit("valid-basic.tar.gz", url.clone()).await.unwrap(),
            runner::submit::Verdict::Accepted { status: 200, .. }
        ));
        match submit("bad-duplicate-run.tar.gz", url.clone()).await.unwrap() {
            runner::submit::Verdict::Refused { status, code, message } => {
                assert_eq!((status, code.as_str()), (422, "duplicate_run"));
                assert!(message.contains("runs[2]"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        server.abort();
    })
    .await;
}

/// The benchmark's own harness to the board: a Harbor job → `import-harbor` → `pack` →
/// `submit` to a server on 127.0.0.1 → the row, the badge, and a run's evidence.
#[tokio::test]
async fn a_harbor_job_reaches_the_leaderboard_as_imported_results() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let tmp = tempfile::tempdir().unwrap();
        let results = tmp.path().join("results");
        let job = repo().join("runner/tests/fixtures/harbor/2026-02-25__10-06-58");
        runner::harbor::import(&runner::harbor::Options {
            jobs: vec![job],
            out: results.clone(),
            hint: Some(bundle::Hint::None),
            tasks_dir: repo().join("tasks"),
            gold: None,
            harbor_version: None,
            foreign_tasks: false,
        })
        .unwrap();
        let key = bundle::SecretKey::generate();
        state.store.add_key(&key.public_key(), "Harbor user", Tier::Submitter).await.unwrap();
        let agent = runner::pack::read_agent(&results.join("agent.toml")).unwrap();
        let path = tmp.path().join("imported.rexb.tar.gz");
        runner::pack::pack(&results, agent, &[&key], "2026-03-01T00:00:00Z", &path).unwrap();

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let store = state.store.clone();
        let app = server::build_app(state);
        let server = tokio::spawn(axum::serve(listener, app.clone()).into_future());
        let verdict =
            tokio::task::spawn_blocking(move || runner::submit::submit(&path, &url).unwrap()).await.unwrap();
        assert!(matches!(verdict, runner::submit::Verdict::Accepted { status: 201, .. }), "{verdict:?}");
        server.abort();

        let board = get(&app, "/api/v1/leaderboard").await.json();
        let row = board["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["agent_id"] == "openhands-claude-sonnet-4-5")
            .unwrap_or_else(|| panic!("no imported row: {board}"))
            .clone();
        assert_eq!(row["provenance"], "imported");
        assert_eq!(row["provenance_source"], "harbor 0.3.1, job 2026-02-25__10-06-58");
        let none = &row["by_hint"]["none"];
        assert_eq!(
            (none["runs"].as_i64(), none["counted"].as_i64(), none["successes"].as_i64()),
            (Some(6), Some(5), Some(1))
        );
        assert_eq!(none["final_success"], 0.2);

        let page = String::from_utf8(get(&app, "/").await.body).unwrap();
        // A row's badges are short ("Imported", "Harbor"); their titles say the rest.
        assert!(
            page.contains(r#"title="Run and judged by another harness (harbor 0.3.1, job"#)
                && page.contains(">Imported</span>"),
            "no imported badge on the leaderboard"
        );
        let agent_page =
            String::from_utf8(get(&app, "/agents/openhands-claude-sonnet-4-5").await.body).unwrap();
        assert!(agent_page.contains("harbor 0.3.1, job 2026-02-25__10-06-58"), "the job is named");

        let current = store.leaderboard(&Default::default()).await.unwrap();
        let bundle_id =
            &current.iter().find(|r| r.agent_id == "openhands-claude-sonnet-4-5").unwrap().bundle_id;
        let runs = store.runs_of(bundle_id, Some("cogs"), Some(store::Hint::None)).await.unwrap();
        let success = runs.iter().find(|r| r.outcome == store::Outcome::Success).unwrap();
        let run_page = String::from_utf8(
            crate::harness::get_as_maintainer(&app, &format!("/runs/{}", success.id)).await.body,
        )
        .unwrap();
        assert!(
            run_page.contains("PRED ACC : 0.4562857142857143 (9582/21000)"),
            "the verifier's output is shown"
        );
        assert!(run_page.contains("--no-early-stopping"), "the patch is shown");
        assert!(run_page.contains("Imported from Harbor"));
    })
    .await;
}
