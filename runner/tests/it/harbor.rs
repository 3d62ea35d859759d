//! `rexbench import-harbor` on Harbor job folders written from Harbor's schema
//! (`tests/fixtures/harbor`): a newer job (progress counts, times with offsets,
//! `lock.json`) and an older one (`n_trials`/`n_errors`, naive times, no lock).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::{repo, runner, stderr, stdout};

const NEW_JOB: &str = "2026-02-25__10-06-58";
const OLD_JOB: &str = "2025-11-03__21-14-09";

fn fixture(job: &str) -> PathBuf {
    repo().join("runner/tests/fixtures/harbor").join(job)
}

fn import(jobs: &[&Path], out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["import-harbor".to_owned()];
    args.extend(jobs.iter().map(|j| j.to_str().unwrap().to_owned()));
    args.extend(["--out".to_owned(), out.to_str().unwrap().to_owned()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    runner(&args, &repo())
}

/// Each run as `task/hint/attempt` → its run.json and the files beside it.
fn runs(results: &Path) -> BTreeMap<String, (Value, Vec<String>)> {
    let mut out = BTreeMap::new();
    let root = results.join("runs");
    for task in fs::read_dir(&root).unwrap() {
        for hint in fs::read_dir(task.unwrap().path()).unwrap() {
            for attempt in fs::read_dir(hint.unwrap().path()).unwrap() {
                let dir = attempt.unwrap().path();
                let key = dir.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
                let record = serde_json::from_slice(&fs::read(dir.join("run.json")).unwrap()).unwrap();
                let mut files: Vec<String> = fs::read_dir(&dir)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|f| f != "run.json")
                    .collect();
                files.sort();
                out.insert(key, (record, files));
            }
        }
    }
    out
}

#[test]
fn a_newer_job_imports_every_outcome_in_the_evaluate_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let done = import(&[&fixture(NEW_JOB)], &out, &["--hint", "none"]);
    assert!(done.status.success(), "{}{}", stdout(&done), stderr(&done));
    assert!(stdout(&done).contains("imported 6 runs"), "{}", stdout(&done));
    assert!(stdout(&done).contains("harbor 0.3.1, job 2026-02-25__10-06-58"), "{}", stdout(&done));

    let got = runs(&out);
    let summary: BTreeMap<&str, Value> = got
        .iter()
        .map(|(k, (r, _))| (k.as_str(), json!([r["outcome"], r.get("error_type"), r.get("cost_usd")])))
        .collect();
    let want: BTreeMap<&str, Value> = [
        // Attempts follow the trials' start times, not their folder names.
        ("cogs/none/1", json!(["wrong_result", null, 5.02])),
        ("cogs/none/2", json!(["success", null, 4.87])),
        ("cogs/none/3", json!(["infra_error", "CancelledError", 0.11])),
        ("othello/none/1", json!(["execution_failed", "RuntimeError", 3.3])),
        ("othello/none/2", json!(["timeout", "Execution Timeout", 2.9])),
        ("othello/none/3", json!(["wrong_result", "AgentTimeoutError", 8.9])),
    ]
    .into_iter()
    .collect();
    assert_eq!(summary, want);

    let (success, files) = &got["cogs/none/2"];
    assert_eq!(
        files,
        &[
            "agent_log.txt",
            "checker_log.txt",
            "patch.diff",
            "stderr.txt",
            "stdout.txt",
            "x-trajectory.json",
            "x-trial.log"
        ]
    );
    assert_eq!(success["files_changed"], json!(["run_final.sh", "src/train.py"]));
    assert_eq!(success["duration_s"], json!(12750.5));
    assert!(success.get("file_recall").is_none(), "no gold given");
    let dir = out.join("runs/cogs/none/2");
    assert!(fs::read_to_string(dir.join("stdout.txt")).unwrap().contains("PRED ACC : 0.4562857142857143"));
    assert!(
        fs::read_to_string(dir.join("agent_log.txt")).unwrap().starts_with("==> agent/openhands.txt <==\n")
    );
    assert!(fs::read_to_string(dir.join("checker_log.txt")).unwrap().contains("reward: 1"));
    // A trial whose job collected no patch has none: it is never made up.
    let (agent_timeout, files) = &got["othello/none/3"];
    assert!(!files.contains(&"patch.diff".to_owned()) && agent_timeout.get("files_changed").is_none());
    assert!(got["cogs/none/3"].1.contains(&"x-exception.txt".to_owned()));

    let evaluation: Value = serde_json::from_slice(&fs::read(out.join("evaluation.json")).unwrap()).unwrap();
    assert_eq!(
        evaluation["provenance"],
        json!({"kind": "imported", "source": "harbor 0.3.1, job 2026-02-25__10-06-58"})
    );
    assert_eq!(evaluation["benchmark"]["name"], "RExBench");
    let agent = fs::read_to_string(out.join("agent.toml")).unwrap();
    assert!(
        agent.contains("id = \"openhands-claude-sonnet-4-5\"")
            && agent.contains("model_id = \"anthropic/claude-sonnet-4-5\""),
        "{agent}"
    );

    // The results pack into a bundle that verifies, with provenance `imported`.
    let bundle = tmp.path().join("b.tar.gz");
    let key = tmp.path().join("key");
    assert!(runner(&["keygen", "--out", key.to_str().unwrap()], tmp.path()).status.success());
    let packed = runner(
        &[
            "pack",
            out.to_str().unwrap(),
            "--agent",
            out.join("agent.toml").to_str().unwrap(),
            "--key",
            tmp.path().join("key.pem").to_str().unwrap(),
            "--out",
            bundle.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert!(packed.status.success(), "{}{}", stdout(&packed), stderr(&packed));
    let verified = runner(
        &[
            "verify",
            bundle.to_str().unwrap(),
            "--trust",
            tmp.path().join("key.pub.pem").to_str().unwrap(),
            "--json",
        ],
        tmp.path(),
    );
    assert!(verified.status.success(), "{}{}", stdout(&verified), stderr(&verified));
    let inspect = runner(&["inspect", bundle.to_str().unwrap(), "--json"], tmp.path());
    assert!(stdout(&inspect).contains("\"imported\""), "{}", stdout(&inspect));
}

#[test]
fn an_older_job_and_gold_file_lists_import_too() {
    let tmp = tempfile::tempdir().unwrap();
    let gold = tmp.path().join("gold");
    fs::create_dir_all(gold.join("cogs")).unwrap();
    fs::write(gold.join("cogs/gold.toml"), "files = [\"src/train.py\", \"src/model.py\"]\n").unwrap();
    let out = tmp.path().join("results");
    let done = import(
        &[&fixture(NEW_JOB), &fixture(OLD_JOB)],
        &out,
        &["--hint", "none", "--gold", gold.to_str().unwrap()],
    );
    assert!(done.status.success(), "{}{}", stdout(&done), stderr(&done));
    let got = runs(&out);
    assert_eq!(got.len(), 8);
    // The older job's trials started first, so they are attempt 1.
    assert_eq!(got["cogs/none/1"].0["outcome"], "success");
    assert_eq!(got["cogs/none/1"].0["duration_s"], json!(15350.25));
    assert_eq!(got["cogs/none/1"].0["file_recall"], json!(0.5));
    assert_eq!(got["othello/none/1"].0["outcome"], "wrong_result", "reward 0 read from verifier/reward.json");
    assert_eq!(got["cogs/none/3"].0["outcome"], "success");
    let evaluation: Value = serde_json::from_slice(&fs::read(out.join("evaluation.json")).unwrap()).unwrap();
    assert_eq!(
        evaluation["provenance"]["source"], "harbor 0.3.1, jobs 2026-02-25__10-06-58, 2025-11-03__21-14-09",
        "the older job records no version"
    );

    let alone = tmp.path().join("old");
    let done = import(&[&fixture(OLD_JOB)], &alone, &["--hint", "hints"]);
    assert!(done.status.success(), "{}", stderr(&done));
    assert!(runs(&alone).keys().all(|k| k.contains("/hints/")));
    let evaluation: Value =
        serde_json::from_slice(&fs::read(alone.join("evaluation.json")).unwrap()).unwrap();
    assert_eq!(evaluation["provenance"]["source"], "harbor (version not recorded), job 2025-11-03__21-14-09");
}

/// A copy of a fixture job to damage.
fn copy_job(job: &str, to: &Path) -> PathBuf {
    let dest = to.join(job);
    fs::create_dir_all(to).unwrap();
    let status = std::process::Command::new("cp").arg("-r").arg(fixture(job)).arg(&dest).status().unwrap();
    assert!(status.success());
    dest
}

fn refused(jobs: &[&Path], out: &Path, extra: &[&str]) -> String {
    let done = import(jobs, out, extra);
    assert_eq!(done.status.code(), Some(2), "{}", stdout(&done));
    assert!(!out.exists(), "nothing is written on error");
    let parent = out.parent().unwrap();
    assert!(
        fs::read_dir(parent).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".rexbench-import")),
        "no staging folder is left"
    );
    stderr(&done)
}

#[test]
fn bad_jobs_are_refused_by_name_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out").join("results");
    fs::create_dir_all(out.parent().unwrap()).unwrap();

    let truncated = copy_job(NEW_JOB, &tmp.path().join("t"));
    let result = truncated.join("rexbench__othello__Lm5nP6q/result.json");
    let text = fs::read_to_string(&result).unwrap();
    fs::write(&result, &text[..text.len() / 2]).unwrap();
    let err = refused(&[&truncated], &out, &["--hint", "none"]);
    assert!(
        err.contains("rexbench__othello__Lm5nP6q/result.json: not a Harbor trial result: EOF while parsing"),
        "{err}"
    );

    let unknown = copy_job(NEW_JOB, &tmp.path().join("u"));
    let result = unknown.join("rexbench__cogs__Qm3xT9a/result.json");
    let text = fs::read_to_string(&result)
        .unwrap()
        .replace("rexbench/rexbench__cogs", "rexbench/rexbench__swe-lancer");
    fs::write(&result, text).unwrap();
    let err = refused(&[&unknown], &out, &["--hint", "none"]);
    assert!(err.contains("trial `rexbench__cogs__Qm3xT9a` ran task `rexbench/rexbench__swe-lancer`, which is not a RExBench task"), "{err}");

    let err = refused(&[&fixture(NEW_JOB)], &out, &[]);
    assert!(err.contains("does not say which hint condition it ran; give --hint"), "{err}");

    let missing_field = copy_job(OLD_JOB, &tmp.path().join("m"));
    let result = missing_field.join("rexbench__cogs__Va8bC1d/result.json");
    let mut value: Value = serde_json::from_slice(&fs::read(&result).unwrap()).unwrap();
    value["agent_info"].as_object_mut().unwrap().remove("name");
    fs::write(&result, value.to_string()).unwrap();
    let err = refused(&[&missing_field], &out, &["--hint", "none"]);
    assert!(err.contains("missing field `name`") && err.contains("(at `agent_info`)"), "{err}");

    let running = copy_job(NEW_JOB, &tmp.path().join("r"));
    let result = running.join("result.json");
    let text =
        fs::read_to_string(&result).unwrap().replace("\"n_running_trials\": 0", "\"n_running_trials\": 1");
    fs::write(&result, text).unwrap();
    let err = refused(&[&running], &out, &["--hint", "none"]);
    assert!(err.contains("the job has 1 trials running or pending"), "{err}");

    let unfinished = copy_job(NEW_JOB, &tmp.path().join("f"));
    fs::remove_file(unfinished.join("rexbench__cogs__Hh4sD0e/result.json")).unwrap();
    let err = refused(&[&unfinished], &out, &["--hint", "none"]);
    assert!(err.contains("rexbench__cogs__Hh4sD0e: has no result.json"), "{err}");

    let half_reward = copy_job(NEW_JOB, &tmp.path().join("h"));
    let result = half_reward.join("rexbench__cogs__Zk8pL2c/result.json");
    let text = fs::read_to_string(&result).unwrap().replace("\"reward\": 0", "\"reward\": 0.5");
    fs::write(&result, text).unwrap();
    let err = refused(&[&half_reward], &out, &["--hint", "none"]);
    assert!(err.contains("`verifier_result.rewards.reward` is 0.5; RExBench rewards are 0 or 1"), "{err}");

    let two_patches = copy_job(NEW_JOB, &tmp.path().join("p"));
    fs::write(two_patches.join("rexbench__cogs__Qm3xT9a/artifacts/other.diff"), "x").unwrap();
    let err = refused(&[&two_patches], &out, &["--hint", "none"]);
    assert!(err.contains("holds 2 patches (other.diff, stage/agent_patch.patch)"), "{err}");

    let other_agent = copy_job(OLD_JOB, &tmp.path().join("a"));
    let result = other_agent.join("rexbench__othello__Ue7fG2h/result.json");
    let text = fs::read_to_string(&result).unwrap().replace("\"name\": \"openhands\"", "\"name\": \"aider\"");
    fs::write(&result, text).unwrap();
    let err = refused(&[&other_agent], &out, &["--hint", "none"]);
    assert!(err.contains("a results folder holds one agent's runs"), "{err}");

    let err = refused(&[&tmp.path().join("nowhere")], &out, &["--hint", "none"]);
    assert!(err.contains("nowhere` does not exist"), "{err}");
    fs::create_dir_all(tmp.path().join("empty")).unwrap();
    let err = refused(&[&tmp.path().join("empty")], &out, &["--hint", "none"]);
    assert!(err.contains("has no result.json: not a Harbor job folder"), "{err}");

    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("keep.txt"), "mine").unwrap();
    let done = import(&[&fixture(NEW_JOB)], &out, &["--hint", "none"]);
    assert_eq!(done.status.code(), Some(2));
    assert!(stderr(&done).contains("already exists and is not empty"), "{}", stderr(&done));
    assert_eq!(fs::read_to_string(out.join("keep.txt")).unwrap(), "mine");
}
