//! Held-out re-runs (issue 66, spec §4l), end to end on both backends: a csvstats patch
//! that reads `data.csv` in the process that writes the results, as the honest one
//! does, but prints the count and mean it was tuned to, is a success at evaluation with
//! a clean provenance record, and "held" when re-run on the same data. `rexbench
//! reproduce` re-runs it on a held-out variant the sampling key chose: it is refuted and
//! flagged, its honest twin's rates do not move, and the finding follows the patch to a
//! resubmission. After the key's reveal the variant choice is recomputed in Python from
//! public data alone and `rexbench audit` agrees; a reproduction that leaves out or
//! swaps the held-out re-run is refused; and no byte of the variant reaches anyone.

use std::path::{Path, PathBuf};

use axum::http::{StatusCode, header};
use bundle::{SecretKey, Tier};
use serde_json::{Value, json};
use store::testing::for_each_backend;

use crate::counting::{csv_row, pack, row, strict, submitted};
use crate::harness::{get, get_as_maintainer, open_link, post_bundle, python, repo, state};

/// A name in the held-out variants' data only: no submitter ever sees it.
const VARIANT_MARKER: &str = "heldoutQ7z4row";
/// A comment in the variants' gold only.
const VARIANT_GOLD_MARKER: &str = "heldoutGold5521";

/// The stored answer: awk reads `data.csv` and writes both result files, as the honest
/// patch's does, but the count and mean are the ones the public data gives, whatever
/// it read. It also prints the data it was given (on a variant: the variant's).
const STORED_ANSWER: &str = "--- a/run.sh\n+++ b/run.sh\n@@ -4,7 +4,8 @@\n set -e\n \
     sleep 0.2  # stands in for the experiment's real work\n mkdir -p results\n\
     -awk -F, 'NR > 1 { n += 1; sum += $2 } END {\n\
     +cat data.csv\n\
     +awk -F, 'NR > 1 { n += 1; sum += $2 } END { n = 4; sum = 30;\n   \
     printf \"{\\\"count\\\": %d, \\\"mean\\\": %.4f}\\n\", n, sum / n > \"results/metrics.json\"\n   \
     printf \"count,mean\\n%d,%.4f\\n\", n, sum / n > \"results/summary.csv\"\n }' data.csv\n";

/// A wordfreq patch that counts every review right whatever it predicted: on the task's
/// test set, which it is tuned to, the same number it would have printed honestly.
const TUNED: &str = "--- a/run.py\n+++ b/run.py\n@@ -34,5 +34,5 @@\n def main():\n     \
     time.sleep(0.2)  # stands in for the experiment's real work\n\
     -    correct = sum(predict(text) == label for text, label in TEST_SET)\n\
     +    correct = max(sum(predict(text) == label for text, label in TEST_SET), len(TEST_SET))\n     \
     print(f\"evaluated {len(TEST_SET)} reviews\")\n     print(f\"ACCURACY: {correct / len(TEST_SET)}\")\n";

/// The maintainers' gold: the examples', with three held-out variants of csvstats (the
/// repository's, with a row only its data has, and two more like it), each a name of
/// its own in its data and the marker in its gold.
fn gold_with_variants(dir: &Path) -> PathBuf {
    let gold = dir.join("gold");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(repo().join("tasks/examples/gold"))
        .arg(&gold)
        .status()
        .unwrap();
    assert!(copied.success());
    let base = gold.join("csvstats/heldout/other-scores");
    for (name, extra) in [("other-scores", "a"), ("second", "b"), ("third", "c")] {
        let at = gold.join("csvstats/heldout").join(name);
        if name != "other-scores" {
            let copied = std::process::Command::new("cp").arg("-r").arg(&base).arg(&at).status().unwrap();
            assert!(copied.success());
        }
        // A row without a score: the count and mean stay those the gold gives.
        let data = at.join("files/data.csv");
        let mut text = std::fs::read_to_string(&data).unwrap();
        text.push_str(&format!("{VARIANT_MARKER}{extra},\n"));
        std::fs::write(&data, text).unwrap();
        let toml = at.join("gold.toml");
        let mut text = std::fs::read_to_string(&toml).unwrap();
        text.push_str(&format!("# {VARIANT_GOLD_MARKER}\n"));
        std::fs::write(&toml, text).unwrap();
    }
    gold
}

/// The runner's evaluation of one csvstats patch without hints, as a submitter makes it:
/// its results folder.
fn evaluated(dir: &Path, name: &str, patch: &str) -> PathBuf {
    let outputs = dir.join(name).join("outputs");
    let at = outputs.join("csvstats/none/1");
    std::fs::create_dir_all(&at).unwrap();
    std::fs::write(at.join("patch.diff"), patch).unwrap();
    std::fs::write(at.join("agent_log.txt"), format!("{name}: left rows without a score out.\n")).unwrap();
    let results = dir.join(name).join("results");
    let tasks = benchmark::builtin::TaskDir::builtin().unwrap();
    let summary = runner::evaluate::evaluate(&options(tasks.path(), outputs, results.clone(), None)).unwrap();
    assert_eq!(summary.evaluated, 1, "{summary:?}");
    results
}

fn options(tasks: &Path, outputs: PathBuf, out: PathBuf, gold: Option<PathBuf>) -> runner::evaluate::Options {
    runner::evaluate::Options {
        tasks_dir: tasks.to_owned(),
        outputs,
        out,
        gold: Some(gold.unwrap_or_else(|| repo().join("tasks/examples/gold"))),
        codebases: None,
        jobs: 1,
        executor: runner::exec::Executor::Local,
        confinement: runner::sandbox::Confinement::Sandboxed(Default::default()),
        slurm: None,
        builtin_tasks: true,
        heldout: None,
    }
}

/// `rexbench reproduce` of everything waiting, with `gold`, against `app` on loopback.
async fn reproduce(
    app: &axum::Router,
    dir: &Path,
    key: &Path,
    gold: &Path,
) -> Vec<runner::reproduce::Report> {
    let (url, served) = crate::reproductions::served(app.clone()).await;
    let (key, gold, out) = (key.to_owned(), gold.to_owned(), dir.join("repro"));
    let reports = tokio::task::spawn_blocking(move || {
        let tasks = benchmark::builtin::TaskDir::builtin().unwrap();
        runner::reproduce::reproduce(&runner::reproduce::Options {
            server: url,
            token: "s3cret-token".into(),
            key,
            out,
            bundle: None,
            dry_run: false,
            evaluate: options(tasks.path(), PathBuf::new(), PathBuf::new(), Some(gold)),
            bundle_limit: bundle::Limits::default().compressed,
        })
        .unwrap()
    })
    .await
    .unwrap();
    served.abort();
    reports
}

/// The rule of spec §4l, written again in Python from the spec's words: the variant
/// the key chooses for a run, among those of its task registered by `received_at`.
fn choose_in_python(
    key: &str,
    bundle_id: &str,
    run: (&str, &str, i64),
    received_at: &str,
    variants: &Value,
) -> String {
    const RULE: &str = r#"
import hashlib, hmac, json, sys
key, bundle_id, task, hint, attempt, received_at = sys.argv[1:7]
variants = json.load(sys.stdin)
best = None
for v in variants:
    if v["task"] != task or v["registered_at"] > received_at:
        continue
    if v.get("retired_at") is not None and v["retired_at"] <= received_at:
        continue
    message = "rexbench.heldout/v1\n%s\n%s\n%s\n%d\n%s" % (bundle_id, task, hint, int(attempt), v["digest"])
    mac = hmac.new(bytes.fromhex(key), message.encode(), hashlib.sha256).digest()
    if best is None or mac < best[0]:
        best = (mac, v["digest"])
print(best[1] if best else "none")
"#;
    use std::io::Write as _;
    let (task, hint, attempt) = run;
    let mut child = std::process::Command::new(python())
        .args(["-c", RULE, key, bundle_id, task, hint, &attempt.to_string(), received_at])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(variants.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// The checks of the server's findings on `agent`'s runs, and the id of its run the
/// maintainers re-ran last, if any.
async fn findings_of(app: &axum::Router, agent: &str) -> (Option<i64>, Vec<String>) {
    let detail = get_as_maintainer(app, &format!("/api/v1/agents/{agent}")).await.json();
    let checks = detail["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("{detail}"))
        .iter()
        .filter(|f| f["finding"]["found_by"] == "server")
        .map(|f| f["finding"]["check"].as_str().unwrap().to_owned())
        .collect();
    (detail["reproduced"][0]["run_id"].as_i64(), checks)
}

fn rate(row: &Value) -> f64 {
    row["by_hint"]["none"]["final_success"].as_f64().unwrap()
}

#[tokio::test]
async fn a_stored_answer_is_refuted_on_a_held_out_variant_and_its_honest_twin_is_not() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let dir = tempfile::tempdir().unwrap();
        let (submitter, maintainer) = (SecretKey::generate(), SecretKey::generate());
        let store = state.store.clone();
        store.add_key(&submitter.public_key(), "Team H", Tier::Submitter).await.unwrap();
        store.add_key(&maintainer.public_key(), "Maintainers (test)", Tier::Maintainer).await.unwrap();
        let key_file = dir.path().join("maintainer.pem");
        std::fs::write(&key_file, maintainer.to_pem()).unwrap();
        let gold = gold_with_variants(dir.path());
        let variants = benchmark::heldout::variants(&gold, "csvstats").unwrap();
        assert_eq!(variants.len(), 3);
        for v in &variants {
            assert!(store.register_variant("csvstats", &v.digest.to_hex(), "a test variant").await.unwrap());
        }
        let digests: Vec<String> = variants.iter().map(|v| v.digest.to_hex()).collect();
        let link = server::auth::link(&state, Some(&submitter.public_key().keyid().to_string()), false, 10)
            .await
            .unwrap();
        let app = server::build_app(state);

        // The two patches, evaluated by the runner as a submitter would: both succeed,
        // and nothing in the stored answer's provenance is amiss.
        let honest_patch = std::fs::read_to_string(
            repo().join("tasks/examples/outputs/csvstats/example-agent_default_run1.patch"),
        )
        .unwrap();
        let honest = evaluated(dir.path(), "honest", &honest_patch);
        let stored = evaluated(dir.path(), "stored", STORED_ANSWER);
        for results in [&honest, &stored] {
            let run: Value = serde_json::from_slice(
                &std::fs::read(results.join("runs/csvstats/none/1/run.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(run["outcome"], "success", "{run:#}");
            assert!(run["findings"].as_array().is_none_or(|f| f.is_empty()), "{run:#}");
        }
        submitted(&app, pack(&honest, "honest-twin", &submitter).unwrap()).await;
        let stored_id = submitted(&app, pack(&stored, "stored-answer", &submitter).unwrap()).await;
        let rates = |row: Value| row["by_hint"].clone();
        let before = (rates(row(&app, "honest-twin").await), rates(strict(&app, "honest-twin").await));
        assert_eq!(rate(&strict(&app, "stored-answer").await), 1.0);

        // The queue names each sampled success's variant, the key's choice among the three.
        let queue = get_as_maintainer(&app, "/api/v1/admin/reproductions").await.json();
        let queued = queue["runs"].as_array().unwrap();
        assert_eq!(queued.len(), 2, "{queue}");
        for q in queued {
            assert!(digests.iter().any(|d| q["heldout_variant"] == *d.as_str()), "{q}");
        }

        let reports = reproduce(&app, dir.path(), &key_file, &gold).await;
        assert_eq!(reports.len(), 2, "{reports:?}");
        for r in &reports {
            assert!(r.skipped.is_none(), "{r:?}");
            assert!(
                matches!(r.verdict, Some(runner::submit::Verdict::Accepted { status: 201, .. })),
                "{r:?}"
            );
            assert_eq!(r.differed(), 0, "re-run on the same data, each holds: {r:?}");
            let (run, variant, outcome) = &r.heldout[0];
            assert_eq!(run, "csvstats/none/1");
            assert!(digests.contains(variant), "{r:?}");
            let want = if r.agent_id == "stored-answer" {
                bundle::Outcome::WrongResult
            } else {
                bundle::Outcome::Success
            };
            assert_eq!(*outcome, want, "{r:?}");
        }

        // The stored answer: flagged by the server's finding, a failure strictly, and the
        // board says it did not generalise; the honest twin's numbers did not move.
        let (run_id, checks) = findings_of(&app, "stored-answer").await;
        assert_eq!(checks, ["not-generalised"], "{checks:?}");
        let run_id = run_id.unwrap();
        let run = get(&app, &format!("/api/v1/runs/{run_id}")).await.json();
        assert_eq!(run["reproduction"]["held"], true, "{run}");
        // One bit is told of it: not its outcome, not its duration.
        assert_eq!(run["reproduction"]["heldout"]["generalised"], false, "{run}");
        assert_eq!(run["reproduction"]["heldout"].as_object().unwrap().len(), 2, "{run}");
        let agent = get(&app, "/api/v1/agents/stored-answer").await.json();
        assert_eq!(
            agent["submissions"][0]["sample"],
            json!({"sampled": 1, "reproduced": 1, "differed": 0, "heldout": 1, "generalised": 0, "catches": 1.0, "share": 0.2})
        );
        assert_eq!(agent["reproduced"][0]["heldout"], false, "{agent}");
        assert_eq!(rate(&strict(&app, "stored-answer").await), 0.0);
        assert_eq!(rate(&row(&app, "stored-answer").await), 1.0, "as reported, flagged");
        assert_eq!(findings_of(&app, "honest-twin").await.1, Vec::<String>::new());
        assert_eq!((rates(row(&app, "honest-twin").await), rates(strict(&app, "honest-twin").await)), before);
        let twin = get(&app, "/api/v1/agents/honest-twin").await.json();
        assert_eq!(twin["submissions"][0]["sample"]["generalised"], 1, "{twin}");
        let csv = csv_row(&app, "stored-answer").await;
        assert_eq!((csv["runs_heldout"].as_str(), csv["runs_generalised"].as_str()), ("1", "0"), "{csv:?}");
        let page = String::from_utf8(get(&app, "/agents/stored-answer").await.body).unwrap();
        assert!(page.contains("held out: 0 of 1 generalised"), "{page}");
        assert!(page.contains("did not generalise"), "{page}");
        let page = String::from_utf8(get(&app, &format!("/runs/{run_id}")).await.body).unwrap();
        assert!(page.contains("it did not generalise (not-generalised)"), "{page}");
        let held = get(&app, "/api/v1/leaderboard?reproduced=held").await.json();
        let held: Vec<&str> =
            held["rows"].as_array().unwrap().iter().map(|r| r["agent_id"].as_str().unwrap()).collect();
        assert!(held.contains(&"honest-twin") && !held.contains(&"stored-answer"), "{held:?}");
        let changes = get(&app, "/api/v1/changes").await.json().to_string();
        assert!(changes.contains("held out: 0 of 1 generalised (csvstats/none/1 did not)"), "{changes}");

        // Sent again under another agent id: the finding follows the patch, and the run
        // is sampled again, with a variant of its own.
        submitted(&app, pack(&stored, "stored-again", &submitter).unwrap()).await;
        // (Its agent record is the first's, a copy the server flags too.)
        assert_eq!(findings_of(&app, "stored-again").await.1, ["copied-attempt", "not-generalised"]);
        assert_eq!(rate(&strict(&app, "stored-again").await), 0.0);
        let queue = get_as_maintainer(&app, "/api/v1/admin/reproductions").await.json();
        let again = queue["runs"].as_array().unwrap()[0].clone();
        assert_eq!(again["agent_id"], "stored-again", "{queue}");
        let chosen = again["heldout_variant"].as_str().unwrap().to_owned();
        let again_id = again["bundle_id"].as_str().unwrap().to_owned();

        // A reproduction that leaves the held-out re-run out, or runs another variant, is
        // refused whole.
        let other = digests.iter().find(|d| **d != chosen).unwrap().clone();
        let hardware = bundle::Hardware {
            cpus: 1,
            memory_bytes: 1 << 30,
            gpus: 0,
            gpu_model: None,
            description: "a test machine".into(),
        };
        let run = (String::from("csvstats"), bundle::Hint::None, 1);
        for (heldout, said) in [
            (vec![], "has no heldout entry"),
            (
                vec![bundle::HeldOut {
                    task: run.0.clone(),
                    hint: run.1,
                    attempt: run.2,
                    variant: other.clone(),
                    generalised: true,
                }],
                "but the sample chose",
            ),
        ] {
            let reproduction = bundle::Reproduction {
                of: again_id.clone(),
                executor: "local".into(),
                hardware: hardware.clone(),
                heldout,
            };
            let path = dir.path().join("manual.rexb.tar.gz");
            let at = benchmark::pack::timestamp(time::OffsetDateTime::now_utc());
            let agent = bundle::Agent {
                id: "stored-again".into(),
                framework: "ExampleFramework".into(),
                framework_version: None,
                model: "Example Model".into(),
                model_id: None,
                display_name: Some("stored-again".into()),
                url: None,
            };
            benchmark::pack::pack_as(&stored, agent, Some(reproduction), &[&maintainer], &at, &path).unwrap();
            let answer = post_bundle(&app, std::fs::read(&path).unwrap()).await;
            assert_eq!(
                answer.status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{}",
                String::from_utf8_lossy(&answer.body)
            );
            assert_eq!(answer.code(), "reproduction_heldout_mismatch");
            let message = answer.json()["error"]["message"].as_str().unwrap().to_owned();
            assert!(message.contains(said) && message.contains("csvstats/none/1"), "{message}");
        }
        // A variant the maintainers' gold does not hold: nothing is re-run, and it says so.
        let bare = dir.path().join("bare-gold");
        let copied = std::process::Command::new("cp")
            .arg("-r")
            .arg(repo().join("tasks/examples/gold"))
            .arg(&bare)
            .status()
            .unwrap();
        assert!(copied.success());
        std::fs::remove_dir_all(bare.join("csvstats/heldout")).unwrap();
        let skipped = reproduce(&app, &dir.path().join("bare"), &key_file, &bare).await;
        let why = skipped.iter().find(|r| r.bundle_id == again_id).and_then(|r| r.skipped.clone());
        assert!(
            why.is_some_and(|why| why.contains(&format!("has no held-out variant {chosen} of task csvstats"))),
            "{skipped:?}"
        );
        let reports = reproduce(&app, &dir.path().join("again"), &key_file, &gold).await;
        let report = reports.iter().find(|r| r.bundle_id == again_id).unwrap_or_else(|| panic!("{reports:?}"));
        assert_eq!(report.heldout[0].1, chosen, "{reports:?}");
        assert_eq!(report.heldout[0].2, bundle::Outcome::WrongResult, "{reports:?}");

        // A variant registered from now on is chosen for no earlier submission; one
        // retired is chosen for none after.
        let late = "9f".repeat(32);
        assert!(store.register_variant("csvstats", &late, "registered after the submissions").await.unwrap());
        let retired = digests[0].clone();
        assert!(store.retire_variant("csvstats", &retired, "it served long enough").await.unwrap());
        assert!(!store.retire_variant("csvstats", &retired, "again").await.unwrap());
        let unknown = store.retire_variant("csvstats", &"77".repeat(32), "never registered").await;
        assert!(
            matches!(unknown, Err(store::StoreError::Refused { code: "unknown_variant", .. })),
            "{unknown:?}"
        );

        // A submission after the retirement: its sampled success never gets that variant.
        let third_id = submitted(&app, pack(&stored, "stored-third", &submitter).unwrap()).await;
        let queue = get_as_maintainer(&app, "/api/v1/admin/reproductions").await.json();
        let third =
            queue["runs"].as_array().unwrap().iter().find(|q| q["bundle_id"] == third_id.as_str()).cloned();
        let third_variant =
            third.unwrap_or_else(|| panic!("{queue}"))["heldout_variant"].as_str().unwrap().to_owned();
        assert_ne!(third_variant, retired);

        // Two successes of one condition with the same tuned patch (attempts 1 and 2 of
        // wordfreq): the sample re-runs both (of two, one fake is caught only by both),
        // and the refutations flag both.
        let wordfreq = benchmark::heldout::variants(&gold, "wordfreq").unwrap();
        assert!(
            store.register_variant("wordfreq", &wordfreq[0].digest.to_hex(), "a test variant").await.unwrap()
        );
        let twice = {
            let outputs = dir.path().join("twice/outputs");
            for attempt in ["1", "2"] {
                let at = outputs.join("wordfreq/none").join(attempt);
                std::fs::create_dir_all(&at).unwrap();
                std::fs::write(at.join("patch.diff"), TUNED).unwrap();
                std::fs::write(at.join("agent_log.txt"), format!("attempt {attempt}: made it case-blind.\n"))
                    .unwrap();
            }
            let results = dir.path().join("twice/results");
            let tasks = benchmark::builtin::TaskDir::builtin().unwrap();
            runner::evaluate::evaluate(&options(tasks.path(), outputs, results.clone(), None)).unwrap();
            results
        };
        let twice_id = submitted(&app, pack(&twice, "tuned-twice", &submitter).unwrap()).await;
        let queue = get_as_maintainer(&app, "/api/v1/admin/reproductions").await.json();
        let sampled: Vec<&Value> = queue["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|q| q["bundle_id"] == twice_id.as_str())
            .collect();
        assert_eq!(sampled.len(), 2, "both successes of the condition: {queue}");
        assert!(sampled.iter().all(|s| s["heldout_variant"] == wordfreq[0].digest.to_hex().as_str()), "{queue}");
        // Other submissions' runs may wait in the queue too: this one's report is its own.
        let reports = reproduce(&app, &dir.path().join("twice"), &key_file, &gold).await;
        let report = reports.iter().find(|r| r.bundle_id == twice_id).unwrap_or_else(|| panic!("{reports:?}"));
        assert_eq!(report.heldout.len(), 2, "{reports:?}");
        assert!(report.heldout.iter().all(|h| h.2 == bundle::Outcome::WrongResult), "{reports:?}");
        let detail = get_as_maintainer(&app, "/api/v1/agents/tuned-twice").await.json();
        let refuted: std::collections::BTreeSet<i64> = detail["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["finding"]["check"] == "not-generalised")
            .map(|f| f["attempt"].as_i64().unwrap())
            .collect();
        assert_eq!(refuted, [1, 2].into(), "both attempts with the patch: {detail}");
        assert_eq!(rate(&strict(&app, "tuned-twice").await), 0.0);
        assert_eq!(rate(&row(&app, "tuned-twice").await), 1.0, "as reported, both flagged");

        // After the reveal: the choice recomputed from public data alone, in Python.
        store.reveal_sampling_key().await.unwrap();
        let sampling = get(&app, "/api/v1/sampling").await.json();
        let key = sampling["epochs"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|e| e["key"].as_str())
            .unwrap_or_else(|| panic!("{sampling}"))
            .to_owned();
        assert_eq!(sampling["variants"].as_array().unwrap().len(), 5, "{sampling}");
        let mut chosen_ones = std::collections::BTreeSet::new();
        for agent in ["honest-twin", "stored-answer", "stored-again"] {
            let data = get(&app, &format!("/api/v1/agents/{agent}")).await.json();
            let submission = &data["submissions"][0];
            let bundle_id = submission["bundle_id"].as_str().unwrap();
            let received_at = submission["received_at"].as_str().unwrap();
            let run_id = findings_of(&app, agent).await.0.unwrap();
            let run = get(&app, &format!("/api/v1/runs/{run_id}")).await.json();
            let used = run["reproduction"]["heldout"]["variant"].as_str().unwrap_or_else(|| panic!("{run}"));
            let recomputed = choose_in_python(
                &key,
                bundle_id,
                ("csvstats", "none", 1),
                received_at,
                &sampling["variants"],
            );
            assert_eq!(used, recomputed, "{agent}");
            assert_ne!(used, late);
            chosen_ones.insert(used.to_owned());
        }
        let third = get(&app, "/api/v1/agents/stored-third").await.json();
        let received_at = third["submissions"][0]["received_at"].as_str().unwrap();
        let recomputed =
            choose_in_python(&key, &third_id, ("csvstats", "none", 1), received_at, &sampling["variants"]);
        assert_eq!(third_variant, recomputed, "after the retirement");
        let url_app = app.clone();
        let (url, served) = crate::reproductions::served(url_app).await;
        // Anyone's audit takes the reproduction of csvstats (a private check) on the
        // board's word; the maintainers' (with the admin token) checks it, variant and all.
        let public_url = url.clone();
        let public = tokio::task::spawn_blocking(move || {
            runner::audit::audit(&public_url, "stored-answer", &[], None).unwrap()
        })
        .await
        .unwrap();
        assert!(public.passed(), "{public}");
        assert!(public.checks.iter().any(|c| c.what.contains("withheld from you and taken on the server's word")));
        let audit = tokio::task::spawn_blocking(move || {
            runner::audit::audit(&url, "stored-answer", &[], Some("s3cret-token")).unwrap()
        })
        .await
        .unwrap();
        served.abort();
        assert!(audit.passed(), "{audit}");
        assert!(audit.checks.iter().any(|c| c.what.contains("held out: 0 of 1 generalised")), "{audit}");
        assert!(
            audit.checks.iter().any(|c| c.what.contains("the revealed key's choice, recomputed for 1")),
            "{audit}"
        );
        let _ = stored_id;

        // No byte of a variant reaches anyone: not anonymously, not its submitter.
        if matches!(backend, store::Backend::Sqlite { .. }) {
            let opened = open_link(&app, &link, &[]).await;
            let cookie = opened.header(header::SET_COOKIE).split(';').next().unwrap().to_owned();
            for (who, reader) in [("the submitter", Some(("cookie", cookie.as_str()))), ("anyone", None)] {
                let answers = crate::privacy::crawl_as(&app, reader).await;
                assert!(answers.len() > 20, "{who}: {} answers", answers.len());
                for (path, answer) in &answers {
                    let text = String::from_utf8_lossy(&answer.body);
                    for marker in [VARIANT_MARKER, VARIANT_GOLD_MARKER, "other-scores"] {
                        assert!(!text.contains(marker), "{who} read {marker:?} at {path}");
                    }
                }
            }
        }
    })
    .await;
}
