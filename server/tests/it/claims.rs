//! Every claim a bundle makes, checked against the benchmark's rules and the board's own
//! records (issue 65; spec §5a), on both databases. Each lie is made as a submitter with
//! a key of their own would make it: on the committed example results before packing, or
//! on the packed bundle, edited and signed again by hand. Each is refused or flagged, or
//! ranks no higher than its honest twin of the same runs in either view.

use std::collections::BTreeMap;
use std::path::Path;

use axum::Router;
use axum::http::StatusCode;
use bundle::{ArtifactInfo, ArtifactSink, Digest, Manifest, SecretKey, Verifier};
use serde_json::{Value, json};
use store::Tier;
use store::testing::for_each_backend;

use crate::counting::{pack, personalise, row, strict, submitted};
use crate::harness::{get, post_bundle, state};

/// Every artifact of a bundle, as it passes the verifier.
#[derive(Default)]
struct Keep(BTreeMap<String, (Vec<u8>, String)>);

impl ArtifactSink for Keep {
    fn artifact(
        &mut self,
        d: &Digest,
        info: &ArtifactInfo,
        content: &mut dyn std::io::Read,
    ) -> std::io::Result<()> {
        let mut bytes = Vec::new();
        content.read_to_end(&mut bytes)?;
        self.0.insert(d.to_hex(), (bytes, info.media_type.clone()));
        Ok(())
    }
}

/// `bytes` (a bundle) with its manifest edited and signed again by `key`, as a submitter
/// would sign by hand: every artifact a run still names is carried over.
fn resign(bytes: &[u8], key: &SecretKey, edit: impl FnOnce(&mut Manifest)) -> Vec<u8> {
    resign_sealing(bytes, key, edit, None)
}

/// [`resign`], the metrics of task `seal`'s runs sealed into their x-metrics (spec §4j).
fn resign_sealing(
    bytes: &[u8],
    key: &SecretKey,
    edit: impl FnOnce(&mut Manifest),
    seal: Option<&str>,
) -> Vec<u8> {
    let mut kept = Keep::default();
    let verified = Verifier::inspector().verify_into(bytes, &mut kept).unwrap();
    let mut m = verified.manifest;
    edit(&mut m);
    let used: std::collections::BTreeSet<String> =
        m.runs.iter().flat_map(|r| r.artifacts.values().cloned()).collect();
    m.artifacts.clear();
    let mut b = bundle::BundleBuilder::new(m);
    for digest in used {
        let (bytes, media_type) = kept.0[&digest].clone();
        b.add_bytes(bytes, &media_type);
    }
    if let Some(task) = seal {
        b.seal_metrics(key, |t| t == task);
    }
    let mut out = Vec::new();
    b.write(&[key], &mut out).unwrap();
    out
}

/// Why `pack` refused: its error and what it rests on.
fn why_not_packed(e: benchmark::pack::PackError) -> String {
    let cause = std::error::Error::source(&e).map(ToString::to_string).unwrap_or_default();
    format!("{e}: {cause}")
}

/// The status and code of posting `bytes`.
async fn refusal(app: &Router, bytes: Vec<u8>) -> (StatusCode, String, String) {
    let answer = post_bundle(app, bytes).await;
    let message = answer.json()["error"]["message"].as_str().unwrap_or_default().to_owned();
    (answer.status, answer.code(), message)
}

/// A condition's rate in a row, as a number.
fn rate(row: &Value, hint: &str) -> f64 {
    row["by_hint"][hint]["final_success"].as_f64().unwrap()
}

/// The checks of the findings on `agent`'s runs of `task` without hints, by attempt.
async fn checks(app: &Router, agent: &str) -> BTreeMap<(String, i64), Vec<String>> {
    let detail = get(app, &format!("/api/v1/agents/{agent}")).await.json();
    let mut out: BTreeMap<(String, i64), Vec<String>> = BTreeMap::new();
    for f in detail["findings"].as_array().unwrap() {
        let key = (
            format!("{}/{}", f["task"].as_str().unwrap(), f["hint"].as_str().unwrap()),
            f["attempt"].as_i64().unwrap(),
        );
        out.entry(key).or_default().push(f["finding"]["check"].as_str().unwrap().to_owned());
    }
    out
}

fn write_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

/// The committed example results, made `agent`'s own (its logs its own).
fn example_results_of(agent: &str) -> tempfile::TempDir {
    let dir = crate::counting::example_results();
    personalise(dir.path(), agent);
    dir
}

/// A board with a submitter's key and the maintainers', and the honest example row.
async fn board(
    backend: store::Backend,
    blobs: std::path::PathBuf,
) -> (Router, std::sync::Arc<store::Store>, SecretKey, SecretKey) {
    let state = state(&backend, &blobs).await;
    let store = state.store.clone();
    let (key, maintainer) = (SecretKey::generate(), SecretKey::generate());
    store.add_key(&key.public_key(), "a submitter", Tier::Submitter).await.unwrap();
    store.add_key(&maintainer.public_key(), "the maintainers", Tier::Maintainer).await.unwrap();
    let app = server::build_app(state);
    let honest = example_results_of("honest-agent");
    submitted(&app, pack(honest.path(), "honest-agent", &key).unwrap()).await;
    (app, store, key, maintainer)
}

#[tokio::test]
async fn published_results_are_the_maintainers_to_sign() {
    for_each_backend(|backend, blobs| async move {
        let (app, _, key, maintainer) = board(backend, blobs).await;
        // All twelve tasks, five successes each, no artifacts: the paper's shape.
        let digest = crate::harness::rexbench_task_set().digest;
        let runs: Vec<Value> = bundle::REXBENCH_TASKS
            .iter()
            .flat_map(|t| {
                (1..=5).map(move |a| json!({"task": t, "hint": "none", "attempt": a, "outcome": "success"}))
            })
            .collect();
        let manifest: Manifest = serde_json::from_value(json!({
            "schema": "rexbench.manifest/v1", "created_at": "2026-11-01T00:00:00Z",
            "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": digest},
            "runner": {"name": "t", "version": "1"},
            "provenance": {"kind": "published", "source": "Table 11"},
            "agent": {"id": "perfect-agent", "framework": "F", "model": "M"},
            "runs": runs,
        }))
        .unwrap();
        let signed = |k: &SecretKey| {
            let mut out = Vec::new();
            bundle::BundleBuilder::new(manifest.clone()).write(&[k], &mut out).unwrap();
            out
        };
        let changes = |app: Router| async move {
            get(&app, "/api/v1/changes?limit=100").await.json()["changes"].as_array().unwrap().len()
        };
        let before = changes(app.clone()).await;
        let (status, code, message) = refusal(&app, signed(&key)).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::FORBIDDEN, "provenance_not_maintainer"),
            "{message}"
        );
        assert!(message.contains("a submitter") && message.contains("published"), "{message}");
        assert_eq!(changes(app.clone()).await, before, "nothing of it is stored");
        let board = get(&app, "/api/v1/leaderboard").await.json();
        assert!(board["rows"].as_array().unwrap().iter().all(|r| r["agent_id"] != "perfect-agent"));
        // The same bundle from the maintainers is theirs to publish.
        assert_eq!(post_bundle(&app, signed(&maintainer)).await.status, StatusCode::CREATED);
    })
    .await;
}

#[tokio::test]
async fn more_attempts_than_the_card_asks_are_refused_at_pack_and_at_the_server() {
    for_each_backend(|backend, blobs| async move {
        let (app, _, key, _) = board(backend, blobs).await;
        // A copy of the success added as wordfreq's attempt 3 (its card asks 2).
        let results = example_results_of("padded-agent");
        crate::counting::copy(
            &results.path().join("runs/wordfreq/none/1"),
            &results.path().join("runs/wordfreq/none/3"),
        );
        let err = why_not_packed(pack(results.path(), "padded-agent", &key).unwrap_err());
        assert!(err.contains("task wordfreq, hint none: 3 valid attempts, but its card asks 2"), "{err}");
        // Signed by hand instead.
        let honest =
            pack(&crate::harness::repo().join("tasks/examples/results"), "padded-agent", &key).unwrap();
        let padded = resign(&honest, &key, |m| {
            for attempt in 2..=10 {
                let mut copy = m
                    .runs
                    .iter()
                    .find(|r| r.task.as_str() == "csvstats" && r.hint == bundle::Hint::None)
                    .unwrap()
                    .clone();
                copy.attempt = attempt;
                m.runs.push(copy);
            }
        });
        let (status, code, message) = refusal(&app, padded).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, "too_many_attempts"),
            "{message}"
        );
        assert!(
            message.contains("task csvstats, hint none: 10 valid attempts, but its card asks 1"),
            "{message}"
        );
        // infra_error attempts may come in addition.
        let retried = resign(&honest, &key, |m| {
            let mut copy = m
                .runs
                .iter()
                .find(|r| r.task.as_str() == "csvstats" && r.hint == bundle::Hint::None)
                .unwrap()
                .clone();
            copy.attempt = 2;
            copy.outcome = bundle::Outcome::InfraError;
            m.runs.push(copy);
        });
        assert_eq!(post_bundle(&app, retried).await.status, StatusCode::CREATED);
    })
    .await;
}

#[tokio::test]
async fn a_failing_attempt_replaced_by_a_copy_of_the_success_is_flagged_and_ranks_no_higher() {
    for_each_backend(|backend, blobs| async move {
        let (app, _, key, _) = board(backend, blobs).await;
        let results = example_results_of("copying-agent");
        let runs = results.path().join("runs/wordfreq/none");
        std::fs::remove_dir_all(runs.join("2")).unwrap();
        crate::counting::copy(&runs.join("1"), &runs.join("2"));
        submitted(&app, pack(results.path(), "copying-agent", &key).unwrap()).await;
        let found = checks(&app, "copying-agent").await;
        for attempt in [1, 2] {
            assert!(
                found[&("wordfreq/none".to_owned(), attempt)].contains(&"copied-attempt".to_owned()),
                "{found:?}"
            );
        }
        // As reported the copy says 3 of 3, flagged; strictly it ranks below the honest 2 of 3.
        let lie = row(&app, "copying-agent").await;
        assert_eq!(lie["by_hint"]["none"]["flagged"], 2, "{lie}");
        let (honest, lie) = (strict(&app, "honest-agent").await, strict(&app, "copying-agent").await);
        assert!(rate(&lie, "none") < rate(&honest, "none"), "{lie} {honest}");
        // The agent's page says where attempts made the same patch.
        let page = String::from_utf8_lossy(&get(&app, "/agents/copying-agent").await.body).into_owned();
        assert!(page.contains("2 of 2 attempts made the same patch"), "{page}");
        // Identical patches alone are not a finding: the honest row has none.
        assert!(checks(&app, "honest-agent").await.values().flatten().all(|c| c != "copied-attempt"));
        // `rexbench audit` finds the copies from the signed manifest, and the flags on them.
        let (url, server) = crate::reproductions::served(app.clone()).await;
        let audit = tokio::task::spawn_blocking(move || {
            runner::audit::audit(&url, "copying-agent", &[], None).unwrap()
        })
        .await
        .unwrap();
        server.abort();
        assert!(audit.passed(), "{audit}");
        assert!(audit.checks.iter().any(|c| c.ok && c.what.starts_with("copies: 2 successes")), "{audit}");
        // And from the patches served, their identities recomputed (spec §5b).
        assert!(
            audit.checks.iter().any(|c| c.ok && c.what.starts_with("patch identities: 2 successes")),
            "{audit}"
        );
        assert!(audit.checks.iter().any(|c| c.ok && c.what.starts_with("attempts: no task")), "{audit}");
    })
    .await;
}

#[tokio::test]
async fn an_infra_error_is_no_free_retry_in_the_strict_view() {
    for_each_backend(|backend, blobs| async move {
        let (app, store, key, _) = board(backend, blobs).await;
        // The failing attempt relabelled infra_error, and a copy of the success added.
        let results = example_results_of("retrying-agent");
        let runs = results.path().join("runs/wordfreq/none");
        write_json(&runs.join("2/run.json"), |r| {
            r["outcome"] = json!("infra_error");
            r.as_object_mut().unwrap().remove("metrics");
        });
        crate::counting::copy(&runs.join("1"), &runs.join("3"));
        let bundle = submitted(&app, pack(results.path(), "retrying-agent", &key).unwrap()).await;
        let (honest, lie) = (strict(&app, "honest-agent").await, strict(&app, "retrying-agent").await);
        // Strictly every run counts, the infra_error one as a failure.
        assert_eq!(lie["by_hint"]["none"]["counted"], lie["by_hint"]["none"]["runs"], "{lie}");
        assert!(rate(&lie, "none") <= rate(&honest, "none"), "{lie} {honest}");
        // The relabelled run is sampled, patch or not.
        let queue = store.reproduction_queue(false).await.unwrap();
        assert!(
            queue.iter().any(|q| q.bundle_id == bundle && q.outcome == store::Outcome::InfraError),
            "{queue:?}"
        );
        // An infra_error run without a patch is sampled all the same, and the queue says
        // there is nothing to re-run.
        let results = example_results_of("patchless-agent");
        let run = results.path().join("runs/wordfreq/none/2");
        write_json(&run.join("run.json"), |r| {
            r["outcome"] = json!("infra_error");
            r.as_object_mut().unwrap().remove("metrics");
        });
        std::fs::remove_file(run.join("patch.diff")).unwrap();
        let bundle = submitted(&app, pack(results.path(), "patchless-agent", &key).unwrap()).await;
        let queue = store.reproduction_queue(false).await.unwrap();
        let sampled: Vec<_> = queue
            .iter()
            .filter(|q| q.bundle_id == bundle && q.outcome == store::Outcome::InfraError)
            .collect();
        assert!(sampled.iter().any(|q| q.patch.is_none()), "{queue:?}");
    })
    .await;
}

#[tokio::test]
async fn a_success_against_its_own_signed_metrics_is_refused() {
    for_each_backend(|backend, blobs| async move {
        let (app, _, key, _) = board(backend, blobs).await;
        let results = example_results_of("lying-agent");
        write_json(&results.path().join("runs/wordfreq/none/2/run.json"), |r| {
            r["outcome"] = json!("success")
        });
        let err = why_not_packed(pack(results.path(), "lying-agent", &key).unwrap_err());
        assert!(err.contains("success_against_check") || err.contains("`accuracy` is 0.5"), "{err}");
        let honest =
            pack(&crate::harness::repo().join("tasks/examples/results"), "lying-agent", &key).unwrap();
        let lie = resign(&honest, &key, |m| {
            let run = m
                .runs
                .iter_mut()
                .find(|r| r.task.as_str() == "wordfreq" && r.hint == bundle::Hint::None && r.attempt == 2)
                .unwrap();
            run.outcome = bundle::Outcome::Success;
        });
        let (status, code, message) = refusal(&app, lie).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, "success_against_check"),
            "{message}"
        );
        assert!(message.contains("`accuracy` is 0.5") && message.contains("exactly 1"), "{message}");
        // Sealed into its x-metrics as if the check were private, the number is judged all the same.
        let sealed = resign_sealing(
            &honest,
            &key,
            |m| {
                let run = m
                    .runs
                    .iter_mut()
                    .find(|r| r.task.as_str() == "wordfreq" && r.hint == bundle::Hint::None && r.attempt == 2)
                    .unwrap();
                run.outcome = bundle::Outcome::Success;
            },
            Some("wordfreq"),
        );
        let (status, code, message) = refusal(&app, sealed).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, "success_against_check"),
            "{message}"
        );
        // Without its metrics the claim cannot be judged from numbers: the sample's re-run
        // is what checks it (`counting::a_failed_reproduction_follows_…`).
    })
    .await;
}

#[tokio::test]
async fn only_a_task_set_the_board_knows_is_taken() {
    for_each_backend(|backend, blobs| async move {
        let (app, store, key, _) = board(backend, blobs).await;
        let honest =
            pack(&crate::harness::repo().join("tasks/examples/results"), "cohort-agent", &key).unwrap();
        let zeros = resign(&honest, &key, |m| m.benchmark.task_set_digest = "0".repeat(64));
        let (status, code, message) = refusal(&app, zeros.clone()).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, "unknown_task_set"),
            "{message}"
        );
        let renamed = resign(&honest, &key, |m| m.benchmark.version = "9.9".into());
        let (_, code, message) = refusal(&app, renamed).await;
        assert_eq!(code, "unknown_task_set");
        assert!(message.contains("that digest is RExBench examples 1.0"), "{message}");
        // Once the maintainers register it (the change log says so), it is taken, and
        // ranks apart.
        let set = bundle::TaskSet {
            digest: "0".repeat(64),
            name: "RExBench examples".into(),
            version: "1.0".into(),
        };
        assert!(store.register_task_set(&set, "a re-release of the examples").await.unwrap());
        let log = get(&app, "/api/v1/changes?limit=100").await.json();
        assert!(
            log["changes"].as_array().unwrap().iter().any(|c| c["kind"] == "task_set"
                && c["detail"].as_str().unwrap().contains("a re-release of the examples")),
            "{log}"
        );
        assert_eq!(post_bundle(&app, zeros).await.status, StatusCode::CREATED);
    })
    .await;
}

#[tokio::test]
async fn a_run_that_did_not_reproduce_follows_its_patch_under_any_agent_id_or_key() {
    for_each_backend(|backend, blobs| async move {
        let (app, store, key, maintainer) = board(backend.clone(), blobs).await;
        // wordfreq without hints, attempt 2, claims a success (its metrics left out, which
        // would refute it).
        let claimed = example_results_of("claiming-agent");
        write_json(&claimed.path().join("runs/wordfreq/none/2/run.json"), |r| {
            r["outcome"] = json!("success");
            r.as_object_mut().unwrap().remove("metrics");
        });
        let first = submitted(&app, pack(claimed.path(), "claiming-agent", &key).unwrap()).await;
        let patch_digest = crate::counting::refute_wordfreq_attempt_2(
            &app,
            &store,
            &backend,
            &first,
            "claiming-agent",
            &maintainer,
        )
        .await;

        // The same results under a new agent id, and from another key: the run with the
        // same patch carries the finding, saying where it came from, and counts as a
        // failure strictly.
        let other = SecretKey::generate();
        store.add_key(&other.public_key(), "another submitter", Tier::Submitter).await.unwrap();
        for (agent, k) in [("renamed-agent", &key), ("borrowed-agent", &other)] {
            submitted(&app, pack(claimed.path(), agent, k).unwrap()).await;
            let runs = store
                .runs_of(
                    &row(&app, agent).await["bundle_id"].as_str().unwrap().to_owned(),
                    Some("wordfreq"),
                    Some(store::Hint::None),
                )
                .await
                .unwrap();
            let run = runs.iter().find(|r| r.attempt == 2).unwrap();
            let findings = store.run(run.id).await.unwrap().unwrap().findings;
            let carried = findings
                .iter()
                .find(|f| f.check == "not-reproduced")
                .unwrap_or_else(|| panic!("{agent}: {findings:?}"));
            assert!(
                carried.message.contains(&format!("The same patch ({patch_digest}) on task wordfreq")),
                "{}",
                carried.message
            );
            assert!(carried.message.contains(&first), "{}", carried.message);
            let (honest, lie) = (strict(&app, "honest-agent").await, strict(&app, agent).await);
            assert!(rate(&lie, "none") <= rate(&honest, "none"), "{agent}: {lie} {honest}");
        }
    })
    .await;
}

#[tokio::test]
async fn one_keys_rows_name_their_submitter_and_link_those_of_the_same_model() {
    for_each_backend(|backend, blobs| async move {
        let (app, _, key, _) = board(backend, blobs).await;
        // Four more agent ids from the same key, each a draw of the same pool of runs.
        for i in 1..=4 {
            submitted(
                &app,
                pack(&crate::harness::repo().join("tasks/examples/results"), &format!("draw-{i}"), &key)
                    .unwrap(),
            )
            .await;
        }
        let agent = get(&app, "/api/v1/agents/draw-2").await.json();
        assert_eq!(agent["submitted_by"]["owner"], "a submitter", "{agent}");
        assert_eq!(agent["submitted_by"]["same_model"].as_array().unwrap().len(), 4, "{agent}");
        let r = row(&app, "draw-2").await;
        assert_eq!(r["submitter"], "a submitter", "{r}");
        assert_eq!(r["submitted_by"]["owner"], "a submitter", "{r}");
        assert_eq!(
            r["submitted_by"]["same_model"],
            json!(["draw-1", "draw-3", "draw-4", "honest-agent"]),
            "{r}"
        );
        // The same records under other agent ids are copies.
        assert!(checks(&app, "draw-2").await.values().flatten().any(|c| c == "copied-attempt"));
        let csv = crate::counting::csv_row(&app, "draw-2").await;
        assert_eq!(
            (csv["submitter"].as_str(), csv["submitter_rows_same_model"].as_str()),
            ("a submitter", "5")
        );
        let html = String::from_utf8_lossy(&get(&app, "/").await.body).into_owned();
        assert!(html.contains("one of 5 rows from this submitter with this model"), "{html}");
        assert!(html.contains("href=\"/agents/draw-3\""), "{html}");
        let page = String::from_utf8_lossy(&get(&app, "/agents/draw-2").await.body).into_owned();
        assert!(page.contains("by a submitter") && page.contains("one of 5 rows"), "{page}");
    })
    .await;
}

/// Issue 75, attacks 8 and 10: one model spelt two ways (`Claude Sonnet 4.5`,
/// `claude-sonnet-4-5`, one model of the price table) and one framework two ways, from one
/// key, are linked rows, and each shows the rate pooled over both; another model is not.
#[tokio::test]
async fn one_model_spelt_two_ways_links_its_rows_and_shows_their_pooled_rate() {
    for_each_backend(|backend, blobs| async move {
        let (app, _, key, _) = board(backend, blobs).await;
        let out = tempfile::tempdir().unwrap();
        for (id, framework, model) in [
            ("spelt-one", "OpenHands", "Claude Sonnet 4.5"),
            ("spelt-two", "open-hands", "claude-sonnet-4-5"),
            ("other-model", "OpenHands", "Claude Opus 4.5"),
        ] {
            let results = example_results_of(id);
            let agent = bundle::Agent {
                id: id.into(),
                framework: framework.into(),
                framework_version: None,
                model: model.into(),
                model_id: None,
                display_name: None,
                url: None,
            };
            let path = out.path().join(format!("{id}.tar.gz"));
            let at = benchmark::pack::timestamp(time::OffsetDateTime::now_utc());
            benchmark::pack::pack(results.path(), agent, &[&key], &at, &path).unwrap();
            submitted(&app, std::fs::read(&path).unwrap()).await;
        }
        let r = row(&app, "spelt-one").await;
        assert_eq!(r["submitted_by"]["same_model"], json!(["spelt-two"]), "{r}");
        let (one, two) = (&r["by_hint"]["none"], &row(&app, "spelt-two").await["by_hint"]["none"]);
        let pooled = (one["successes"].as_f64().unwrap() + two["successes"].as_f64().unwrap())
            / (one["counted"].as_f64().unwrap() + two["counted"].as_f64().unwrap());
        assert_eq!(r["submitted_by"]["pooled"]["rows"], 2, "{r}");
        assert!(
            (r["submitted_by"]["pooled"]["final_success"].as_f64().unwrap() - pooled).abs() < 1e-12,
            "{r}"
        );
        let other = row(&app, "other-model").await;
        assert_eq!(other["submitted_by"]["same_model"], json!([]), "{other}");
        assert!(other["submitted_by"]["pooled"].is_null(), "{other}");
        let html = String::from_utf8_lossy(&get(&app, "/agents/spelt-two").await.body).into_owned();
        assert!(html.contains("pooled over 2 rows from this submitter: "), "{html}");
    })
    .await;
}

#[tokio::test]
async fn a_run_labelled_no_hints_that_quotes_the_hint_is_flagged() {
    for_each_backend(|backend, blobs| async move {
        let (app, _, key, _) = board(backend, blobs).await;
        let results = example_results_of("hinted-agent");
        std::fs::write(
            results.path().join("runs/wordfreq/none/1/agent_log.txt"),
            "Reading the task.\nHint: lower-case each token before looking it up\nin the word lists.\nDone.\n",
        )
        .unwrap();
        submitted(&app, pack(results.path(), "hinted-agent", &key).unwrap()).await;
        let found = checks(&app, "hinted-agent").await;
        assert!(found[&("wordfreq/none".to_owned(), 1)].contains(&"hint-in-transcript".to_owned()), "{found:?}");
        let (honest, lie) = (strict(&app, "honest-agent").await, strict(&app, "hinted-agent").await);
        assert!(rate(&lie, "none") < rate(&honest, "none"), "{lie} {honest}");
    })
    .await;
}
