//! What counts (issue 49; spec §4f and §6a), held against a submitter who wants a better
//! row: each attack is made on the committed example results (`tasks/examples/results`)
//! before packing, as a submitter would make it, and submitted beside the untouched
//! results to a server on each backend.

use std::path::{Path, PathBuf};

use axum::Router;
use axum::http::StatusCode;
use bundle::SecretKey;
use serde_json::{Value, json};
use store::Tier;
use store::testing::for_each_backend;

use crate::harness::{get, post_bundle, repo, state};

/// A copy of the committed example results, to edit as a submitter would.
pub(crate) fn example_results() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy(&repo().join("tasks/examples/results"), dir.path());
    dir
}

pub(crate) fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The results made `agent`'s own: each agent's log says whose it is, as two agents' logs
/// would (the same log under two agent ids is a copy, spec §5a).
pub(crate) fn personalise(results: &Path, agent: &str) {
    for dir in run_dirs(results) {
        let log = dir.join("agent_log.txt");
        if log.exists() {
            let mut text = std::fs::read(&log).unwrap();
            text.extend_from_slice(format!("(the log of {agent})\n").as_bytes());
            std::fs::write(&log, text).unwrap();
        }
    }
}

/// Every run folder (`runs/<task>/<hint>/<attempt>`) of a results folder.
pub(crate) fn run_dirs(results: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(results.join("runs")).unwrap() {
        for hint in std::fs::read_dir(task.unwrap().path()).unwrap() {
            for attempt in std::fs::read_dir(hint.unwrap().path()).unwrap() {
                out.push(attempt.unwrap().path());
            }
        }
    }
    out.sort();
    out
}

/// Every run that did not succeed relabelled `infra_error`, its outputs kept.
fn relabel_failures(results: &Path) -> usize {
    let mut relabelled = 0;
    for dir in run_dirs(results) {
        let path = dir.join("run.json");
        let mut run: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        if run["outcome"] != "success" {
            run["outcome"] = json!("infra_error");
            std::fs::write(&path, serde_json::to_vec_pretty(&run).unwrap()).unwrap();
            relabelled += 1;
        }
    }
    relabelled
}

/// The results packed and signed for `agent`, dated now.
pub(crate) fn pack(
    results: &Path,
    agent: &str,
    key: &SecretKey,
) -> Result<Vec<u8>, benchmark::pack::PackError> {
    pack_at(results, agent, key, &benchmark::pack::timestamp(time::OffsetDateTime::now_utc()))
}

/// The same, dated `at`.
pub(crate) fn pack_at(
    results: &Path,
    agent: &str,
    key: &SecretKey,
    at: &str,
) -> Result<Vec<u8>, benchmark::pack::PackError> {
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("bundle.tar.gz");
    let agent = bundle::Agent {
        id: agent.into(),
        framework: "ExampleFramework".into(),
        framework_version: None,
        model: "Example Model".into(),
        model_id: None,
        display_name: Some(agent.into()),
        url: None,
    };
    benchmark::pack::pack(results, agent, &[key], at, &path)?;
    Ok(std::fs::read(&path).unwrap())
}

pub(crate) async fn submitted(app: &Router, bytes: Vec<u8>) -> String {
    let answer = post_bundle(app, bytes).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&answer.body));
    answer.json()["bundle_id"].as_str().unwrap().to_owned()
}

/// The API's leaderboard row of `agent`.
pub(crate) async fn row(app: &Router, agent: &str) -> Value {
    let board = get(app, "/api/v1/leaderboard").await.json();
    board["rows"].as_array().unwrap().iter().find(|r| r["agent_id"] == agent).cloned().unwrap()
}

/// The API's leaderboard row of `agent` in the strict view.
pub(crate) async fn strict(app: &Router, agent: &str) -> Value {
    let board = get(app, "/api/v1/leaderboard?integrity=strict").await.json();
    board["rows"].as_array().unwrap().iter().find(|r| r["agent_id"] == agent).cloned().unwrap()
}

/// The CSV's record of `agent`, by column name.
pub(crate) async fn csv_row(app: &Router, agent: &str) -> std::collections::BTreeMap<String, String> {
    let csv = get(app, "/leaderboard.csv").await;
    let mut reader = csv::Reader::from_reader(csv.body.as_slice());
    let head: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    reader
        .records()
        .map(|r| r.unwrap())
        .find(|r| &r[0] == agent)
        .map(|r| head.iter().cloned().zip(r.iter().map(str::to_owned)).collect())
        .unwrap()
}

#[tokio::test]
async fn failures_relabelled_infra_error_are_shown_flagged_sampled_and_not_ranked() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let store = state.store.clone();
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "a submitter", Tier::Submitter).await.unwrap();
        let app = server::build_app(state);

        let honest = example_results();
        submitted(&app, pack(honest.path(), "honest-agent", &key).unwrap()).await;
        let relabelled = example_results();
        personalise(relabelled.path(), "relabelled-agent");
        assert_eq!(relabel_failures(relabelled.path()), 7);
        let bundle = submitted(&app, pack(relabelled.path(), "relabelled-agent", &key).unwrap()).await;

        // The honest row is ranked at its own rate: 2 of 3 runs without hints.
        let h = row(&app, "honest-agent").await;
        assert_eq!(h["ranked"], true, "{h}");
        assert!((h["by_hint"]["none"]["final_success"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(h["by_hint"]["none"]["infra_errors"], 0);

        // The relabelled row reports 100% over the runs it counts, and is not ranked:
        // wordfreq has 1 valid attempt of the 2 asked without hints, and no task any
        // with hints.
        let r = row(&app, "relabelled-agent").await;
        assert_eq!(r["by_hint"]["none"]["final_success"], 1.0, "{r}");
        assert_eq!(r["ranked"], false, "{r}");
        assert_eq!(r["coverage"]["none"]["short_tasks"], 1);
        assert_eq!(
            (r["coverage"]["hints"]["tasks"].as_i64(), r["coverage"]["hints"]["short_tasks"].as_i64()),
            (Some(0), Some(2))
        );
        // Its runs that ended infra_error, and their share, per condition.
        assert_eq!(r["by_hint"]["none"]["infra_errors"], 1);
        assert!((r["by_hint"]["none"]["infra_error_share"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(r["by_hint"]["hints"]["infra_errors"], 3);
        // More than a tenth of its runs without hints ended infra_error: both its
        // successes there carry the server's finding, and the strict view counts them
        // as failures.
        assert_eq!(r["by_hint"]["none"]["flagged"], 2, "{r}");
        let strict_row = strict(&app, "relabelled-agent").await;
        assert_eq!(strict_row["by_hint"]["none"]["final_success"], 0.0);
        let agent = get(&app, "/api/v1/agents/relabelled-agent").await.json();
        let checks: Vec<&str> = agent["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["finding"]["check"].as_str())
            .collect();
        assert_eq!(checks, ["infra-error-share", "infra-error-share"], "{agent}");

        // The CSV says the same, per condition.
        let csv = csv_row(&app, "relabelled-agent").await;
        assert_eq!((csv["infra_errors_none"].as_str(), csv["infra_errors_hints"].as_str()), ("1", "3"));
        assert_eq!((csv["ranked"].as_str(), csv["short_tasks_none"].as_str()), ("false", "1"));
        assert_eq!(csv["infra_error_share_none"], "0.3333");
        assert_eq!(csv_row(&app, "honest-agent").await["infra_errors_none"], "0");

        // The page: the row lists apart, saying what it lacks and what was not counted,
        // and the board says how many rows have runs not counted.
        let page = get(&app, "/").await;
        let html = String::from_utf8_lossy(&page.body);
        let partial = &html[html.find("Not ranked: partial results").expect("a partial table")..];
        assert!(partial.contains("relabelled-agent"));
        assert!(partial.contains("1 task short of the attempts asked with no hints"), "{partial}");
        assert!(partial.contains("7 runs not counted (infra_error)"), "{partial}");
        assert!(html.contains("1 row here has some, and says how many."), "{html}");
        let agent_page =
            String::from_utf8_lossy(&get(&app, "/agents/relabelled-agent").await.body).into_owned();
        assert!(agent_page.contains("1 of 3 runs with no hints (33%)"), "{agent_page}");

        // Its relabelled runs are in the reproduction sample: one per condition that
        // has any with a patch.
        let queue = store.reproduction_queue(false).await.unwrap();
        let sampled: Vec<_> = queue.iter().filter(|q| q.bundle_id == bundle).collect();
        for hint in [store::Hint::None, store::Hint::Hints] {
            let infra =
                sampled.iter().filter(|q| q.hint == hint && q.outcome == store::Outcome::InfraError).count();
            assert_eq!(infra, 1, "{hint:?}: {sampled:?}");
        }
        // The maintainers re-run the relabelled run without hints: it ends a wrong result,
        // which the submission said proves nothing. It differs, and the strict view counts
        // it as the failure it was.
        let maintainer = SecretKey::generate();
        store.add_key(&maintainer.public_key(), "maintainers", Tier::Maintainer).await.unwrap();
        let relabelled_run = sampled
            .iter()
            .find(|q| q.hint == store::Hint::None && q.outcome == store::Outcome::InfraError)
            .unwrap();
        let patch = crate::reproductions::blob(&store, relabelled_run.patch.as_deref().unwrap()).await;
        let (task, attempt) = (relabelled_run.task.to_string(), relabelled_run.attempt as u32);
        let rerun = [(task.as_str(), "none", attempt, &patch[..], "wrong_result")];
        let b = crate::reproductions::reproduction(
            &bundle,
            "relabelled-agent",
            &relabelled_run.task_set_digest,
            &rerun,
        );
        let answer = post_bundle(&app, crate::reproductions::signed(b, &maintainer)).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&answer.body));
        let r = row(&app, "relabelled-agent").await;
        assert_eq!(
            (r["sample"]["reproduced"].as_i64(), r["sample"]["differed"].as_i64()),
            (Some(1), Some(1))
        );
        assert_eq!(
            (r["by_hint"]["none"]["counted"].as_i64(), r["by_hint"]["none"]["refuted"].as_i64()),
            (Some(2), Some(1))
        );
        let strict_row = strict(&app, "relabelled-agent").await;
        assert_eq!(strict_row["by_hint"]["none"]["counted"], 3, "{strict_row}");
        // A maintainer who dismisses the finding takes it out again.
        let run = store.run(relabelled_run.run_id).await.unwrap().unwrap();
        let finding = run.findings.iter().find(|f| f.check == "not-reproduced").unwrap();
        let answer = crate::integrity::review(
            &app,
            &finding.id,
            json!({"verdict": "dismissed", "note": "the node was down that day"}),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", String::from_utf8_lossy(&answer.body));
        // Strictly, every infra_error run is a failure all the same (spec §4f).
        let strict_row = strict(&app, "relabelled-agent").await;
        assert_eq!(strict_row["by_hint"]["none"]["counted"], 3, "{strict_row}");

        // Once the key is revealed, the rule written again from the spec's words (in
        // Python) picks the same runs from the public envelope, and `rexbench audit`
        // recomputes the coverage (valid attempts, tasks short) and the sample.
        store.reveal_sampling_key().await.unwrap();
        let sampling = get(&app, "/api/v1/sampling").await.json();
        let key = sampling["epochs"][1]["key"].as_str().unwrap().to_owned();
        let envelope = get(&app, &format!("/api/v1/submissions/{bundle}/envelope")).await.json();
        let manifest: Value = serde_json::from_slice(&crate::reproductions::base64_decode(
            envelope["payload"].as_str().unwrap(),
        ))
        .unwrap();
        let sizing =
            get(&app, &format!("/api/v1/submissions/{bundle}/sample")).await.json()["sizing"].clone();
        assert_eq!(sizing, json!({"share": 0.2, "probability": 0.9, "cap": 30}));
        let mine = crate::reproductions::recompute_in_python(&key, &bundle, &manifest, &sizing);
        assert!(
            mine.iter()
                .filter(|r| r.starts_with("wordfreq/hints/") || r.starts_with("csvstats/hints/"))
                .count()
                >= 1
        );
        let shown: std::collections::BTreeSet<String> =
            sampled.iter().map(|q| format!("{}/{}/{}", q.task, q.hint, q.attempt)).collect();
        assert_eq!(mine, shown);
        let (url, server) = crate::reproductions::served(app.clone()).await;
        let audit = tokio::task::spawn_blocking(move || {
            runner::audit::audit(&url, "relabelled-agent", &[], None).unwrap()
        })
        .await
        .unwrap();
        server.abort();
        assert!(audit.passed(), "{audit}");
        assert!(audit.checks.iter().any(|c| c.what.contains("are the rule's, recomputed")), "{audit}");
        assert!(audit.checks.iter().any(|c| c.ok && c.what.starts_with("coverage, pass@k")), "{audit}");
    })
    .await;
}

#[tokio::test]
async fn a_failed_reproduction_follows_the_agent_across_a_resubmission() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let store = state.store.clone();
        let (key, maintainer) = (SecretKey::generate(), SecretKey::generate());
        store.add_key(&key.public_key(), "a submitter", Tier::Submitter).await.unwrap();
        store.add_key(&maintainer.public_key(), "maintainers", Tier::Maintainer).await.unwrap();
        let app = server::build_app(state);

        // wordfreq without hints, attempt 2, claims the success its patch never earned.
        let claimed = example_results();
        let run_json = claimed.path().join("runs/wordfreq/none/2/run.json");
        let mut run: Value = serde_json::from_slice(&std::fs::read(&run_json).unwrap()).unwrap();
        run["outcome"] = json!("success");
        // Its metrics would refute it (spec §5a): the submitter leaves them out.
        run.as_object_mut().unwrap().remove("metrics");
        std::fs::write(&run_json, serde_json::to_vec_pretty(&run).unwrap()).unwrap();
        let at = |s: &str| format!("2026-11-2{s}T00:00:00Z");
        let first = submitted(&app, pack_at(claimed.path(), "claiming-agent", &key, &at("0")).unwrap()).await;

        // The maintainers re-run it (put in the sample here, whichever success the key
        // chose) and it ends a wrong result: not reproduced.
        refute_wordfreq_attempt_2(&app, &store, &backend, &first, "claiming-agent", &maintainer).await;
        let before = row(&app, "claiming-agent").await;
        assert_eq!(before["sample"]["differed"], 1);

        // The submitter sends the same results again: the new bundle stands, but the
        // failed reproduction follows the agent.
        let second =
            submitted(&app, pack_at(claimed.path(), "claiming-agent", &key, &at("1")).unwrap()).await;
        let now = row(&app, "claiming-agent").await;
        assert_eq!(now["bundle_id"], second.as_str());
        assert_eq!(now["sample"]["differed"], 0, "nothing of the new bundle was re-run yet");
        assert_eq!(now["not_reproduced_before"], first.as_str(), "{now}");
        // The strict view counts the same run as a failure again, and, a caught lie
        // costing the whole submission, the other successes too until re-run: 0 of 3.
        assert_eq!(now["by_hint"]["none"]["final_success"], 1.0);
        let strict_row = strict(&app, "claiming-agent").await;
        assert_eq!(strict_row["by_hint"]["none"]["final_success"], 0.0, "{strict_row}");
        assert_eq!(
            strict_row["taint"],
            json!({"refuted": 1, "unverified": 2, "submitter_refuted": "claiming-agent"})
        );
        // The first bundle's sample not yet re-run stays in the maintainers' queue,
        // marked superseded, for them to re-run all the same.
        let pending = store.reproduction_queue(true).await.unwrap();
        let left: Vec<_> = pending.iter().filter(|q| q.bundle_id == first).collect();
        assert!(!left.is_empty() && left.iter().all(|q| q.superseded), "{pending:?}");
        // Its sample holds the same run, for the maintainers to check again.
        let sample = get(&app, &format!("/api/v1/submissions/{second}/sample")).await.json();
        let carried: Vec<&Value> = sample["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["carried_from"] == first.as_str())
            .collect();
        assert_eq!(carried.len(), 1, "{sample}");
        assert_eq!(
            (carried[0]["task"].as_str(), carried[0]["hint"].as_str(), carried[0]["attempt"].as_i64()),
            (Some("wordfreq"), Some("none"), Some(2))
        );
        // The board and the agent's page say so, with a link.
        let html = String::from_utf8_lossy(&get(&app, "/").await.body).into_owned();
        assert!(html.contains("a previous submission did not reproduce"), "{html}");
        let page = String::from_utf8_lossy(&get(&app, "/agents/claiming-agent").await.body).into_owned();
        assert!(
            page.contains(&format!("a previous submission ({}) did not reproduce", &first[..12])),
            "{page}"
        );
        // `rexbench audit` accepts the carried run: the earlier re-run differed.
        let (url, server) = crate::reproductions::served(app.clone()).await;
        let audit = tokio::task::spawn_blocking(move || {
            runner::audit::audit(&url, "claiming-agent", &[], None).unwrap()
        })
        .await
        .unwrap();
        server.abort();
        assert!(audit.passed(), "{audit}");
        assert!(
            audit
                .checks
                .iter()
                .any(|c| c.ok && c.what.contains("did not reproduce in the earlier submission")),
            "{audit}"
        );

        // A maintainer dismisses the findings: the next bundle carries nothing.
        for bundle in [&first, &second] {
            let runs = store.runs_of(bundle, Some("wordfreq"), Some(store::Hint::None)).await.unwrap();
            for r in runs.iter().filter(|r| r.attempt == 2) {
                for f in store
                    .run(r.id)
                    .await
                    .unwrap()
                    .unwrap()
                    .findings
                    .iter()
                    .filter(|f| f.check == "not-reproduced")
                {
                    store
                        .review_finding(
                            &f.id.parse().unwrap(),
                            store::Review::Dismissed,
                            "re-checked by hand",
                        )
                        .await
                        .unwrap();
                }
            }
        }
        submitted(&app, pack_at(claimed.path(), "claiming-agent", &key, &at("2")).unwrap()).await;
        assert!(row(&app, "claiming-agent").await["not_reproduced_before"].is_null());
    })
    .await;
}

#[tokio::test]
async fn a_failing_attempt_left_out_is_not_ranked_and_a_gap_is_refused() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let key = SecretKey::generate();
        state.store.add_key(&key.public_key(), "a submitter", Tier::Submitter).await.unwrap();
        let app = server::build_app(state);

        // wordfreq without hints, attempt 2 of 2 (a wrong result) deleted.
        let last = example_results();
        std::fs::remove_dir_all(last.path().join("runs/wordfreq/none/2")).unwrap();
        submitted(&app, pack(last.path(), "last-left-out", &key).unwrap()).await;
        let r = row(&app, "last-left-out").await;
        assert_eq!(r["by_hint"]["none"]["final_success"], 1.0);
        assert_eq!(
            (r["ranked"].as_bool(), r["coverage"]["none"]["short_tasks"].as_i64()),
            (Some(false), Some(1)),
            "{r}"
        );
        let page = String::from_utf8_lossy(&get(&app, "/").await.body).into_owned();
        assert!(page.contains("1 task short of the attempts asked with no hints"), "{page}");

        // Attempt 1 deleted instead: the gap is named, and nothing is packed.
        let first = example_results();
        std::fs::remove_dir_all(first.path().join("runs/wordfreq/none/1")).unwrap();
        let err = pack(first.path(), "first-left-out", &key).unwrap_err();
        let said = format!("{:#}", anyhow::Error::new(err));
        assert!(
            said.contains("task wordfreq, hint none: attempt 1 is missing, but attempt 2 is there"),
            "{said}"
        );

        // The same gap signed by hand is refused by the server, naming it.
        let gapped = gapped_bundle(&key);
        let answer = post_bundle(&app, gapped).await;
        assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
        let error = answer.json()["error"].clone();
        assert_eq!(error["code"], "attempt_gap");
        assert!(
            error["message"].as_str().unwrap().contains("attempt 2 is missing, but attempt 3 is there"),
            "{error}"
        );
        assert!(get(&app, "/agents/gapped-agent").await.status == StatusCode::NOT_FOUND, "nothing stored");
    })
    .await;
}

/// cogs without hints, attempts 1 and 3, signed by hand (the writer refuses the gap).
fn gapped_bundle(key: &SecretKey) -> Vec<u8> {
    let runs: Vec<Value> = [1, 3]
        .iter()
        .map(|a| json!({"task": "cogs", "hint": "none", "attempt": a, "outcome": "wrong_result"}))
        .collect();
    let manifest = serde_json::to_vec(&json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-11-20T12:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
        "runner": {"name": "rexbench-runner", "version": "0.1.0"},
        "provenance": {"kind": "imported", "source": "harbor 0.26.0, job 2026-11-19__10-00-00"},
        "agent": {"id": "gapped-agent", "framework": "Terminus", "model": "Some Model"},
        "runs": runs,
        "artifacts": {},
    }))
    .unwrap();
    let envelope = bundle::Envelope::sign(&manifest, &[key]).to_bytes();
    crate::abuse::bundle_of(&[("envelope.json", envelope)], tar::EntryType::Regular)
}

#[tokio::test]
async fn a_rexbench_result_with_four_of_five_attempts_on_one_task_is_partial_and_published_rows_keep_their_design()
 {
    for_each_backend(|backend, blobs| async move {
        // The paper's results and the parity experiment, signed by a maintainer key.
        let (app, key, digest) = crate::coverage::seeded(state(&backend, &blobs).await).await;
        let board = get(&app, "/api/v1/leaderboard").await.json();
        let published = board["rows"].as_array().unwrap().len();
        let every_task = |fewer_on: Option<&str>| -> Vec<Value> {
            let mut runs = Vec::new();
            for task in bundle::REXBENCH_TASKS {
                let attempts = if Some(task) == fewer_on { 4 } else { 5 };
                for attempt in 1..=attempts {
                    let outcome = if attempt == 1 { "success" } else { "wrong_result" };
                    runs.push(json!({"task": task, "hint": "none", "attempt": attempt, "outcome": outcome}));
                }
            }
            runs
        };
        submitted(&app, crate::coverage::imported(&key, "five-each", &digest, every_task(None))).await;
        submitted(&app, crate::coverage::imported(&key, "four-on-cogs", &digest, every_task(Some("cogs"))))
            .await;

        let five = row(&app, "five-each").await;
        assert_eq!(five["ranked"], true, "{five}");
        let four = row(&app, "four-on-cogs").await;
        assert_eq!(four["ranked"], false, "{four}");
        assert_eq!(
            (
                four["coverage"]["none"]["tasks"].as_i64(),
                four["coverage"]["none"]["fewest_attempts"].as_i64()
            ),
            (Some(12), Some(4))
        );
        assert_eq!(four["coverage"]["none"]["short_tasks"], 1);
        // No rank among the complete rows either.
        assert!(four["stats"]["rank"].is_null(), "{four}");

        // The paper's rows and the parity experiment's (3 trials by its design) keep
        // their rank and say their attempts.
        let board = get(&app, "/api/v1/leaderboard").await.json();
        let ranked_published: Vec<&Value> =
            board["rows"].as_array().unwrap().iter().filter(|r| r["provenance"] == "published").collect();
        assert_eq!(ranked_published.len(), published);
        for p in &ranked_published {
            assert_eq!(p["ranked"], true, "{p}");
            assert!(p["coverage"].as_object().unwrap().values().all(|c| c["short_tasks"] == 0), "{p}");
        }
        let html = String::from_utf8_lossy(&get(&app, "/").await.body).into_owned();
        assert!(html.contains("3 valid attempts each"), "the parity rows state their design");
    })
    .await;
}

/// OWASP's CSV-injection rule: a submitter's framework `=1+2`, model `@SUM(1,2)` and
/// display name `+cmd…` reach the CSV as text no spreadsheet runs.
#[tokio::test]
async fn the_csv_writes_no_cell_a_spreadsheet_would_run() {
    let dir = tempfile::tempdir().unwrap();
    let backend = store::Backend::Sqlite { path: dir.path().join("db.sqlite") };
    let state = state(&backend, &dir.path().join("blobs")).await;
    let key = SecretKey::generate();
    state.store.add_key(&key.public_key(), "=HYPERLINK(\"http://x\")", Tier::Submitter).await.unwrap();
    let app = server::build_app(state);
    let results = example_results();
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("bundle.tar.gz");
    let agent = bundle::Agent {
        id: "formulas".into(),
        framework: "=1+2".into(),
        framework_version: None,
        model: "@SUM(1,2)".into(),
        model_id: None,
        display_name: Some("+cmd|' /C calc'!A0".into()),
        url: None,
    };
    let at = benchmark::pack::timestamp(time::OffsetDateTime::now_utc());
    benchmark::pack::pack(results.path(), agent, &[&key], &at, &path).unwrap();
    submitted(&app, std::fs::read(&path).unwrap()).await;
    let row = csv_row(&app, "formulas").await;
    assert_eq!(row["framework"], "'=1+2");
    assert_eq!(row["model"], "'@SUM(1,2)");
    assert_eq!(row["display_name"], "'+cmd|' /C calc'!A0");
    for (column, cell) in &row {
        // A number the board wrote (a negative Δ) is a number to a spreadsheet, not a
        // formula: only digits, one point and its sign.
        let number = cell
            .strip_prefix('-')
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'));
        assert!(
            number || !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
            "{column} = {cell:?} begins a formula"
        );
    }
    assert_eq!(row["uplift_hints"], "-0.6667", "a negative number is written as one");
}

/// Spec §4j: a private check's metrics are its gold. A submitter whose results folder
/// says csvstats's check is public (so that `pack` leaves its metrics in the manifest) is
/// refused, naming the run and the task; packed as the runner packs them, the same
/// results are accepted, and anyone reads no csvstats metric while its submitter does.
#[tokio::test]
async fn a_private_checks_metrics_stated_in_the_manifest_are_refused() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let key = SecretKey::generate();
        state.store.add_key(&key.public_key(), "a submitter", Tier::Submitter).await.unwrap();
        let store = state.store.clone();
        let app = server::build_app(state);
        let claimed = example_results();
        let evaluation = claimed.path().join("evaluation.json");
        let mut e: Value = serde_json::from_slice(&std::fs::read(&evaluation).unwrap()).unwrap();
        e["public_checks"] = json!(["csvstats", "wordfreq"]);
        std::fs::write(&evaluation, serde_json::to_vec_pretty(&e).unwrap()).unwrap();
        let answer = post_bundle(&app, pack(claimed.path(), "claims-public", &key).unwrap()).await;
        assert_eq!(
            answer.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        let said = answer.json();
        assert_eq!(answer.code(), "private_metrics_in_manifest", "{said}");
        assert!(said["error"]["message"].as_str().unwrap().contains("`csvstats`"), "{said}");

        let honest = example_results();
        let bundle = submitted(&app, pack(honest.path(), "sealed-agent", &key).unwrap()).await;
        let envelope = get(&app, &format!("/api/v1/submissions/{bundle}/envelope")).await;
        assert_eq!(envelope.status, StatusCode::OK);
        let payload = crate::reproductions::base64_decode(envelope.json()["payload"].as_str().unwrap());
        let manifest: bundle::Manifest = serde_json::from_slice(&payload).unwrap();
        for run in &manifest.runs {
            match run.task.as_str() {
                "csvstats" => assert!(run.metrics.is_empty(), "{run:?}"),
                _ => assert!(run.metrics_digest.is_none(), "a public check's metrics stay: {run:?}"),
            }
        }
        let runs = store.runs_of(&bundle, Some("csvstats"), None).await.unwrap();
        let mut seen = 0;
        for r in runs.iter().filter(|r| r.outcome == bundle::Outcome::Success) {
            let id = r.id;
            let anyone = get(&app, &format!("/api/v1/runs/{id}")).await.json();
            assert_eq!(anyone["metrics"], json!({}), "{anyone}");
            assert_eq!(anyone["metrics_withheld"], true, "{anyone}");
            let maintainer =
                crate::harness::get_as_maintainer(&app, &format!("/api/v1/runs/{id}")).await.json();
            assert_eq!(maintainer["metrics"]["count"], 4.0, "{maintainer}");
            assert_eq!(maintainer["metrics_withheld"], false);
            seen += 1;
        }
        assert!(seen > 0, "{runs:?}");
    })
    .await;
}

/// The maintainers re-run wordfreq's attempt 2 without hints of submission `first` (put in
/// its sample here, whichever run the key chose) and it ends a wrong result: not
/// reproduced (spec §4d). Returns the patch's digest.
pub(crate) async fn refute_wordfreq_attempt_2(
    app: &Router,
    store: &store::Store,
    backend: &store::Backend,
    first: &str,
    agent: &str,
    maintainer: &SecretKey,
) -> String {
    let target = store
        .runs_of(first, Some("wordfreq"), Some(store::Hint::None))
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.attempt == 2)
        .unwrap();
    crate::evidence::tamper(
        backend,
        &format!(
            "INSERT INTO samples (run_id, bundle_id, epoch, sampled_at) SELECT {id}, '{first}', 1, 't' \
             WHERE NOT EXISTS (SELECT 1 FROM samples WHERE run_id = {id})",
            id = target.id
        ),
    )
    .await;
    let detail = store.run(target.id).await.unwrap().unwrap();
    let patch_digest = detail.artifacts.iter().find(|a| a.role == "patch").unwrap().digest.clone();
    let patch = crate::reproductions::blob(store, &patch_digest).await;
    let digest = store.submission(first).await.unwrap().unwrap().task_set_digest;
    let rerun = [("wordfreq", "none", 2, &patch[..], "wrong_result")];
    let b = crate::reproductions::reproduction(first, agent, &digest, &rerun);
    let answer = post_bundle(app, crate::reproductions::signed(b, maintainer)).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&answer.body));
    patch_digest
}

/// Issue 75, attack 5: hints run on 3 of 12 tasks, all successes, beside no hints at 40%
/// on all 12. The board's Δ is paired, over the 3 tasks both cover (+60 points there),
/// not hints-on-3 minus none-on-12; it is marked partial ("3 of 12 tasks") in the API,
/// the CSV and the page, and sorts after every complete row, as its interval is paired
/// too.
#[tokio::test]
async fn the_uplift_is_paired_and_a_row_with_hints_on_a_few_tasks_is_partial_and_sorts_apart() {
    for_each_backend(|backend, blobs| async move {
        let (app, key, digest) = crate::coverage::seeded(state(&backend, &blobs).await).await;
        let runs = |hinted: usize, hinted_successes: u32| -> Vec<Value> {
            let mut runs = Vec::new();
            for (t, task) in bundle::REXBENCH_TASKS.iter().enumerate() {
                for attempt in 1..=5u32 {
                    let outcome = if attempt <= 2 { "success" } else { "wrong_result" };
                    runs.push(json!({"task": task, "hint": "none", "attempt": attempt, "outcome": outcome}));
                    if t < hinted {
                        let outcome = if attempt <= hinted_successes { "success" } else { "wrong_result" };
                        runs.push(
                            json!({"task": task, "hint": "hints", "attempt": attempt, "outcome": outcome}),
                        );
                    }
                }
            }
            runs
        };
        submitted(&app, crate::coverage::imported(&key, "chosen-few", &digest, runs(3, 5))).await;
        submitted(&app, crate::coverage::imported(&key, "all-twelve", &digest, runs(12, 3))).await;

        let few = row(&app, "chosen-few").await;
        let delta = few["uplift"]["delta"].as_f64().unwrap();
        assert!((delta - 0.6).abs() < 1e-9, "{few}");
        assert_eq!(
            (few["uplift"]["tasks"].as_i64(), few["uplift"]["of"].as_i64()),
            (Some(3), Some(12)),
            "{few}"
        );
        let up = few["stats"]["uplift"]["hints"]["estimate"].as_f64().unwrap();
        assert!((up - 0.6).abs() < 1e-9, "the interval is paired too: {few}");
        let all = row(&app, "all-twelve").await;
        assert!((all["uplift"]["delta"].as_f64().unwrap() - 0.2).abs() < 1e-9, "{all}");
        assert_eq!(all["uplift"]["tasks"], 12);

        // Sorted by Δ, the partial row comes after the complete ones, whichever way.
        for dir in ["desc", "asc"] {
            let html = String::from_utf8_lossy(
                &get(&app, &format!("/?set={digest}&sort=uplift&dir={dir}")).await.body,
            )
            .into_owned();
            let (few_at, all_at) =
                (html.find("/agents/chosen-few").unwrap(), html.find("/agents/all-twelve").unwrap());
            assert!(all_at < few_at, "{dir}: the partial row sorts among complete ones");
            assert!(html.contains("partial: 3 of 12 tasks"), "{html}");
        }
        let csv = String::from_utf8_lossy(&get(&app, "/leaderboard.csv").await.body).into_owned();
        let mut lines = csv.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let at = |name: &str| head.iter().position(|h| *h == name).unwrap();
        let line = lines.find(|l| l.starts_with("chosen-few,")).unwrap();
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(
            (cells[at("uplift_hints")], cells[at("uplift_hints_tasks")], cells[at("uplift_hints_partial")]),
            ("0.6000", "3", "true")
        );
    })
    .await;
}
