//! `rexbench import-harbor` on Harbor job folders written from Harbor's schema
//! (`tests/fixtures/harbor`): a newer job (progress counts, times with offsets,
//! `lock.json`) and an older one (`n_trials`/`n_errors`, naive times, no lock), and a
//! job of Harbor 0.26, whose `reward_valid` says which rewards count.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::{repo, runner, stderr, stdout};

const NEW_JOB: &str = "2026-02-25__10-06-58";
const OLD_JOB: &str = "2025-11-03__21-14-09";
/// Written by Harbor 0.26.0's own models (`make_0_26_job.py` beside it).
const JOB_0_26: &str = "2026-11-20__09-00-00";
/// An agent's job and a job regrading one of its trials (Harbor 0.26.0's models,
/// `make_0_26_regrade_jobs.py`).
const AGENT_JOB: &str = "2026-11-24__12-00-00";
const REGRADE_JOB: &str = "2026-11-24__18-00-00";
const REGRADE: &str = "rexbench__cogs__Rg2dE7b";

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

fn read(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_harbor_0_26_job_counts_exactly_the_trials_harbor_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let done = import(&[&fixture(JOB_0_26)], &out, &["--hint", "none"]);
    assert!(done.status.success(), "{}{}", stdout(&done), stderr(&done));
    assert!(stdout(&done).contains("harbor 0.26.0, job 2026-11-20__09-00-00"), "{}", stdout(&done));
    let got = runs(&out);
    let outcome = |k: &str| {
        let r = &got[k].0;
        (r["outcome"].as_str().unwrap().to_owned(), r["error_type"].as_str().map(str::to_owned))
    };
    let o = |s: &str, e: Option<&str>| (s.to_owned(), e.map(str::to_owned));
    // In the order the trials started: graded after an agent timeout, reward valid;
    // a reward of 1 after a rate-limit error, which Harbor does not count; a wrong result.
    assert_eq!(outcome("cogs/none/1"), o("success", Some("AgentTimeoutError")));
    assert_eq!(outcome("cogs/none/2"), o("infra_error", Some("ApiRateLimitError")));
    assert_eq!(outcome("cogs/none/3"), o("wrong_result", None));
    // A verifier timeout and a cancelled trial are not counted; a reward after the agent
    // exited non-zero is; an `ApiError` the job's policy override makes valid is too.
    assert_eq!(outcome("othello/none/1"), o("infra_error", Some("VerifierTimeoutError")));
    assert_eq!(outcome("othello/none/2"), o("infra_error", Some("CancelledError")));
    assert_eq!(outcome("othello/none/3"), o("execution_failed", Some("NonZeroAgentExitCodeError")));
    assert_eq!(outcome("othello/none/4"), o("success", Some("ApiError")));
    let log = fs::read_to_string(out.join("runs/cogs/none/2/checker_log.txt")).unwrap();
    assert!(
        log.contains("reward: 1") && log.contains("not counted") && log.contains("`ApiRateLimitError`"),
        "{log}"
    );

    // The rates the board computes (infra_error excluded) are Harbor's own job result's.
    let job = read(&fixture(JOB_0_26).join("result.json"));
    let evals = job["stats"]["evals"].as_object().unwrap();
    assert_eq!(evals.len(), 1);
    let (key, eval) = evals.iter().next().unwrap();
    let counted: Vec<&Value> =
        got.values().map(|(r, _)| r).filter(|r| r["outcome"] != "infra_error").collect();
    let successes = counted.iter().filter(|r| r["outcome"] == "success").count();
    assert_eq!(counted.len() as u64, eval["n_trials"].as_u64().unwrap());
    let mean = eval["metrics"][0]["mean"].as_f64().unwrap();
    assert_eq!(successes as f64 / counted.len() as f64, mean);
    // Every trial Harbor leaves out of its mean is one the rates leave out.
    let rewarded: Vec<&str> = eval["reward_stats"]["reward"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|v| v.as_array().unwrap().iter().map(|n| n.as_str().unwrap()))
        .collect();
    assert_eq!(rewarded.len(), counted.len());
    assert!(
        stdout(&done)
            .contains(&format!("`{key}`: Harbor's mean {mean} over the 4 trials it counts; imported 2 of 4")),
        "{}",
        stdout(&done)
    );
    // Harbor's statistics by their current names, each compared and printed.
    for line in [
        "job 2026-11-20__09-00-00: Harbor counts 7 completed trials (`n_completed_trials`); imported 7, the same",
        "job 2026-11-20__09-00-00: Harbor counts 6 trials that recorded an exception (`n_errored_trials`); imported 6, the same",
        &format!("job 2026-11-20__09-00-00: `{key}`: Harbor's pass@2 1; imported the same"),
    ] {
        assert!(stdout(&done).contains(line), "{line}\n{}", stdout(&done));
    }

    // Packed and verified as any import: the infra_error runs travel, shown as such.
    let root = tmp.path();
    let made = runner(&["keygen", "--out", "k"], root);
    assert!(made.status.success(), "{}", stderr(&made));
    let packed = runner(&["pack", "results", "--agent", "results/agent.toml", "--key", "k.pem"], root);
    assert!(packed.status.success(), "{}{}", stdout(&packed), stderr(&packed));
    let bundle = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".rexb.tar.gz"))
        .expect("a bundle");
    let verified = runner(&["verify", &bundle, "--trust", "k.pub.pem", "--json"], root);
    assert!(verified.status.success(), "{}{}", stdout(&verified), stderr(&verified));
    let v: Value = serde_json::from_slice(&verified.stdout).unwrap();
    assert_eq!(
        v["outcomes"],
        json!({"success": 2, "wrong_result": 1, "execution_failed": 1, "infra_error": 3})
    );
}

/// Harbor's job statistics (`n_completed_trials`, `n_errored_trials`, and pass@k where
/// Harbor 0.26 wrote it; `n_trials` and `n_errors` in older jobs) hold the job folder to
/// what Harbor ran: a failed trial taken out, or a statistic edited, is refused.
#[test]
fn harbor_s_statistics_hold_the_job_folder_to_what_harbor_ran() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out").join("results");
    fs::create_dir_all(out.parent().unwrap()).unwrap();

    // An older job by the legacy names, a 0.25 job by the current ones: both compared.
    let old = import(&[&fixture(OLD_JOB)], &tmp.path().join("old"), &["--hint", "none"]);
    assert!(old.status.success(), "{}", stderr(&old));
    assert!(
        stdout(&old)
            .contains("Harbor counts 2 completed trials (`n_completed_trials`); imported 2, the same")
    );
    assert!(
        stdout(&old)
            .contains("Harbor counts 0 trials that recorded an exception (`n_errored_trials`); imported 0")
    );
    let new = import(&[&fixture(NEW_JOB)], &tmp.path().join("new"), &["--hint", "none"]);
    assert!(new.status.success(), "{}", stderr(&new));
    assert!(stdout(&new).contains("Harbor counts 6 completed trials"), "{}", stdout(&new));
    assert!(stdout(&new).contains("Harbor counts 3 trials that recorded an exception"), "{}", stdout(&new));

    // The wrong result taken out of the 0.26 job, to leave a better row.
    let pruned = copy_job(JOB_0_26, &tmp.path().join("pruned"));
    fs::remove_dir_all(pruned.join("rexbench__cogs__Wr0nG7a")).unwrap();
    let err = refused(&[&pruned], &out, &["--hint", "none"]);
    assert!(
        err.contains("counts 7 completed trials (`n_completed_trials`), but the job folder holds 6")
            && err.contains("changed after Harbor wrote it"),
        "{err}"
    );
    // The same, with the counts edited to match: the mean no longer does.
    let edited = |name: &str, f: &dyn Fn(&mut Value)| {
        let job = copy_job(JOB_0_26, &tmp.path().join(name));
        let mut value = read(&job.join("result.json"));
        f(&mut value);
        fs::write(job.join("result.json"), value.to_string()).unwrap();
        job
    };
    let errored = edited("errored", &|v| v["stats"]["n_errored_trials"] = json!(5));
    let err = refused(&[&errored], &out, &["--hint", "none"]);
    assert!(err.contains("counts 5 trials that recorded an exception (`n_errored_trials`), but 6"), "{err}");
    let pass = edited("pass", &|v| {
        let evals = v["stats"]["evals"].as_object_mut().unwrap();
        let (_, eval) = evals.iter_mut().next().unwrap();
        eval["pass_at_k"] = json!({"2": 0.75});
    });
    let err = refused(&[&pass], &out, &["--hint", "none"]);
    assert!(err.contains("pass@2 0.75, but its trials, read by Harbor 0.26's rule, give pass@2 1"), "{err}");
    // Legacy names in a job that has the current ones too: the current ones count, as
    // Harbor reads them.
    let both = edited("both", &|v| v["stats"]["n_trials"] = json!(99));
    let done = import(&[&both], &tmp.path().join("both-results"), &["--hint", "none"]);
    assert!(done.status.success(), "{}", stderr(&done));
}

#[test]
fn a_harbor_0_26_job_changed_to_count_a_reward_harbor_does_not_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out").join("results");
    fs::create_dir_all(out.parent().unwrap()).unwrap();
    let limited = "rexbench__cogs__Rl8tE4x/result.json";
    let edit = |name: &str, f: &dyn Fn(&mut Value)| {
        let job = copy_job(JOB_0_26, &tmp.path().join(name));
        let path = job.join(limited);
        let mut value = read(&path);
        f(&mut value);
        fs::write(&path, value.to_string()).unwrap();
        job
    };

    let flipped = edit("flipped", &|v| v["reward_valid"] = json!(true));
    let err = refused(&[&flipped], &out, &["--hint", "none"]);
    assert!(
        err.contains(limited)
            && err.contains("trial `rexbench__cogs__Rl8tE4x`: `reward_valid` is true, but Harbor's policy for `ApiRateLimitError` gives no valid reward"),
        "{err}"
    );

    let policy = edit("policy", &|v| {
        v["reward_valid"] = json!(true);
        v["exception_info"]["policy"]["has_valid_reward"] = json!(true);
    });
    let err = refused(&[&policy], &out, &["--hint", "none"]);
    assert!(
        err.contains("`exception_info.policy` for `ApiRateLimitError` says has_valid_reward true")
            && err.contains("Harbor 0.26's policy for it is has_valid_reward false"),
        "{err}"
    );

    let overridden = edit("override", &|v| {
        v["reward_valid"] = json!(true);
        v["exception_info"]["policy"]["has_valid_reward"] = json!(true);
        v["exception_info"]["policy_override"] = json!({"has_valid_reward": true});
    });
    let err = refused(&[&overridden], &out, &["--hint", "none"]);
    assert!(
        err.contains("`exception_info.policy_override` for `ApiRateLimitError`")
            && err.contains("the trial's config overrides nothing"),
        "{err}"
    );

    // Made to look like an older Harbor's trial: the rest of the job says otherwise.
    let disguised = edit("disguised", &|v| {
        for field in ["reward_valid", "schema_version"] {
            v.as_object_mut().unwrap().remove(field);
        }
        v["exception_info"].as_object_mut().unwrap().remove("policy");
    });
    // The lock names Harbor 0.26, whose rule then judges the trial all the same.
    let kept = tmp.path().join("kept");
    let done = import(&[&disguised], &kept, &["--hint", "none"]);
    assert!(done.status.success(), "{}{}", stdout(&done), stderr(&done));
    assert_eq!(runs(&kept)["cogs/none/2"].0["outcome"], "infra_error");
    // Without the lock, the rest of the job says which Harbor wrote it.
    fs::remove_file(disguised.join("lock.json")).unwrap();
    let err = refused(&[&disguised], &out, &["--hint", "none"]);
    assert!(err.contains("trial `rexbench__cogs__Rl8tE4x` carries none of what Harbor 0.26 writes"), "{err}");

    // The whole override, config included, makes a reward count: then the job's own mean
    // no longer matches its trials.
    let all = edit("all", &|v| {
        v["reward_valid"] = json!(true);
        v["exception_info"]["policy"]["has_valid_reward"] = json!(true);
        v["exception_info"]["policy_override"] = json!({"has_valid_reward": true});
        v["config"]["override_error_policy"]["ApiRateLimitError"] = json!({"has_valid_reward": true});
    });
    let err = refused(&[&all], &out, &["--hint", "none"]);
    assert!(
        err.contains("2026-11-20__09-00-00/result.json")
            && err.contains("Harbor's job result counts 4 trials of `openhands__claude-sonnet-4-5__rexbench` whose reward is valid, but its trials, read by Harbor 0.26's rule, count 5 with 3 successes (0.6)"),
        "{err}"
    );

    // And a job result whose mean was changed.
    let job = copy_job(JOB_0_26, &tmp.path().join("mean"));
    let path = job.join("result.json");
    let text = fs::read_to_string(&path).unwrap().replace("\"mean\": 0.5", "\"mean\": 0.75");
    fs::write(&path, text).unwrap();
    let err = refused(&[&job], &out, &["--hint", "none"]);
    assert!(
        err.contains("gives `openhands__claude-sonnet-4-5__rexbench` a mean of 0.75 over 4 trials"),
        "{err}"
    );
}

/// A trial and its regrade are one agent run: one attempt, the regrade's verdict, and
/// what the trial was judged before said in the run (spec section 4i). Its ATIF-v1.8
/// trajectory travels as the run's `x-trajectory`.
#[test]
fn a_trial_and_its_regrade_count_one_attempt_with_the_regrade_s_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let done = import(&[&fixture(AGENT_JOB), &fixture(REGRADE_JOB)], &out, &["--hint", "none"]);
    assert!(done.status.success(), "{}{}", stdout(&done), stderr(&done));
    let got = runs(&out);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        ["cogs/none/1", "othello/none/1"],
        "one attempt per agent run"
    );
    let cogs = &got["cogs/none/1"].0;
    assert_eq!(cogs["outcome"], "success", "the regrade's verdict counts");
    assert_eq!(cogs["regraded"], json!({"from": "wrong_result"}));
    assert_eq!(cogs["duration_s"], json!(4800.0), "the agent run's time, not the verifier's alone");
    // Section 4m: Harbor's token counts, the prompt's cached ones apart from the rest.
    for run in ["cogs/none/1", "othello/none/1"] {
        assert_eq!(got[run].0["cost_usd"], json!(0.11), "{run}");
        assert_eq!(
            got[run].0["tokens"],
            json!({"input": 7000, "output": 1100, "cache_read": 20000}),
            "{run}"
        );
    }
    let log = fs::read_to_string(out.join("runs/cogs/none/1/checker_log.txt")).unwrap();
    assert!(
        log.contains("a regrade of trial `rexbench__cogs__At1vF8a`, which Harbor judged wrong_result"),
        "{log}"
    );
    let trajectory = fs::read_to_string(out.join("runs/cogs/none/1/x-trajectory.json")).unwrap();
    assert!(trajectory.contains("\"ATIF-v1.8\"") && trajectory.contains("\"audio\""));
    assert!(got["othello/none/1"].0.get("regraded").is_none());
    // Each job's statistics are its own: the regrade job counts the regrade.
    assert!(
        stdout(&done).contains(
            "job 2026-11-24__18-00-00: Harbor counts 1 completed trials (`n_completed_trials`); imported 1"
        ),
        "{}",
        stdout(&done)
    );
    assert!(stdout(&done).contains("job 2026-11-24__12-00-00: Harbor counts 2 completed trials"));

    // Packed and verified: the bundle says so (section 4i).
    let root = tmp.path();
    let made = runner(&["keygen", "--out", "k"], root);
    assert!(made.status.success(), "{}", stderr(&made));
    let packed = runner(
        &["pack", "results", "--agent", "results/agent.toml", "--key", "k.pem", "--out", "r.rexb.tar.gz"],
        root,
    );
    assert!(packed.status.success(), "{}{}", stdout(&packed), stderr(&packed));
    let verified = runner(&["verify", "r.rexb.tar.gz", "--trust", "k.pub.pem", "--json"], root);
    assert!(verified.status.success(), "{}{}", stdout(&verified), stderr(&verified));
    let report: Value = serde_json::from_str(&stdout(&verified)).unwrap();
    assert_eq!(
        report["regraded"],
        json!([{"task": "cogs", "hint": "none", "attempt": 1, "outcome": "success", "from": "wrong_result"}]),
        "{report}"
    );
    let text = runner(&["verify", "r.rexb.tar.gz", "--trust", "k.pub.pem"], root);
    assert!(
        stdout(&text).contains("regraded    cogs/none/1: success, judged wrong_result before the regrade")
    );
}

/// A regrade alone, or one whose copies are not its source's, is refused by name.
#[test]
fn a_regrade_without_its_source_or_with_other_outputs_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out").join("results");
    fs::create_dir_all(out.parent().unwrap()).unwrap();

    let err = refused(&[&fixture(REGRADE_JOB)], &out, &["--hint", "none"]);
    assert!(
        err.contains(&format!(
            "trial `{REGRADE}` is a regrade of trial df7bec0d-0d81-5fd8-b313-b78a8ebe9574"
        )) && err.contains("which is not among the trials imported"),
        "{err}"
    );

    // Another patch in the regrade's copy: a better patch under the earlier run's name.
    let changed = copy_job(REGRADE_JOB, &tmp.path().join("changed"));
    let patch = changed.join(REGRADE).join("artifacts/stage/agent_patch.patch");
    fs::write(&patch, fs::read_to_string(&patch).unwrap().replace("extension", "a better extension"))
        .unwrap();
    let err = refused(&[&fixture(AGENT_JOB), &changed], &out, &["--hint", "none"]);
    assert!(
        err.contains(&format!("trial `{REGRADE}` regrades trial `rexbench__cogs__At1vF8a`, but its copy of artifacts/stage/agent_patch.patch is not the source's (SHA-256 "))
            && err.contains(", the source's "),
        "{err}"
    );

    // A file the source never had.
    let added = copy_job(REGRADE_JOB, &tmp.path().join("added"));
    fs::write(added.join(REGRADE).join("agent/extra.txt"), "more\n").unwrap();
    let err = refused(&[&fixture(AGENT_JOB), &added], &out, &["--hint", "none"]);
    assert!(err.contains("but holds agent/extra.txt"), "{err}");

    // The source's trajectory dropped from the copy.
    let dropped = copy_job(REGRADE_JOB, &tmp.path().join("dropped"));
    fs::remove_file(dropped.join(REGRADE).join("agent/trajectory.json")).unwrap();
    let err = refused(&[&fixture(AGENT_JOB), &dropped], &out, &["--hint", "none"]);
    assert!(err.contains("but has no copy of the source's agent/trajectory.json"), "{err}");

    // A derivation other than a regrade.
    let other = copy_job(REGRADE_JOB, &tmp.path().join("other"));
    let result = other.join(REGRADE).join("result.json");
    let mut value = read(&result);
    value["config"]["source_trial"]["action"] = json!("fork");
    fs::write(&result, value.to_string()).unwrap();
    let err = refused(&[&fixture(AGENT_JOB), &other], &out, &["--hint", "none"]);
    assert!(err.contains("derives from another by `fork`"), "{err}");
}

/// `rexbench task-digest` is Harbor's own definition of a task folder's digest (the
/// trial lock's `task.digest`): the fixture's, computed by Harbor 0.26.0's Packager
/// (`make_task_digests.py`), and what changes it or does not.
#[test]
fn task_digest_is_harbor_s_own() {
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = fixture("tasks");
    let expected: Value = read(&fixtures.join("digests.json"));
    let digest_of = |dir: &Path| {
        let done = runner(&["task-digest", dir.to_str().unwrap()], &repo());
        assert!(done.status.success(), "{}", stderr(&done));
        stdout(&done).split_whitespace().next().unwrap().to_owned()
    };
    let cogs = fixtures.join("rexbench-cogs");
    assert_eq!(digest_of(&cogs), expected["rexbench-cogs"]["digest"].as_str().unwrap());
    let edited = |name: &str, file: &str, text: Option<&str>| {
        let dest = tmp.path().join(name);
        let status = std::process::Command::new("cp").arg("-r").arg(&cogs).arg(&dest).status().unwrap();
        assert!(status.success());
        match text {
            Some(t) => fs::write(dest.join(file), t).unwrap(),
            None => fs::remove_file(dest.join(file)).unwrap(),
        }
        digest_of(&dest)
    };
    let pinned = expected["rexbench-cogs"]["digest"].as_str().unwrap();
    // Left out by .harborignore (a folder, a pattern) or Harbor's default ignores: no change.
    assert_eq!(edited("scratch", "tests/scratch/notes.txt", Some("other")), pinned);
    assert_eq!(edited("log", "tests/run.log", Some("other")), pinned);
    assert_eq!(edited("pyc", "solution/__pycache__/solve.cpython-312.pyc", Some("other")), pinned);
    assert_eq!(edited("swp", "environment/.Dockerfile.swp", Some("other")), pinned);
    // Kept by a negation, or part of the task: a change is another task.
    assert_ne!(edited("keep", "tests/keep.log", Some("other")), pinned);
    assert_ne!(edited("tests", "tests/test.sh", Some("exit 0\n")), pinned);
    assert_ne!(edited("instruction", "instruction.md", Some("Easier.\n")), pinned);
    assert_ne!(edited("gone", "tests/data/expected.json", None), pinned);
    // The task's own .gitignore replaces the default ignores.
    assert_ne!(edited("gitignore", ".gitignore", Some("*.md\n")), pinned);
    // A link is refused, not followed.
    let linked = tmp.path().join("linked");
    let status = std::process::Command::new("cp").arg("-r").arg(&cogs).arg(&linked).status().unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink("/etc/passwd", linked.join("tests/passwd")).unwrap();
    let done = runner(&["task-digest", linked.to_str().unwrap()], &repo());
    assert_eq!(done.status.code(), Some(2), "{}", stdout(&done));
    assert!(
        stderr(&done)
            .contains("tests/passwd: a task's input must be a file or a folder, not a symbolic link"),
        "{}",
        stderr(&done)
    );
    // What a hostile task folder may hold instead is refused by what it is, and a folder
    // refused among several prints no digest at all.
    let refusal = |name: &str, plant: &dyn Fn(&Path), said: &str| {
        let dest = tmp.path().join(name);
        let status = std::process::Command::new("cp").arg("-r").arg(&cogs).arg(&dest).status().unwrap();
        assert!(status.success());
        plant(&dest);
        let done = runner(&["task-digest", cogs.to_str().unwrap(), dest.to_str().unwrap()], &repo());
        assert_eq!(done.status.code(), Some(2), "{name}: {}", stdout(&done));
        assert!(stderr(&done).contains(said), "{name}: {}", stderr(&done));
        assert_eq!(stdout(&done), "", "{name}: no digest is printed when one folder is refused");
    };
    let fifo = |path: &Path| {
        assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
    };
    refusal(
        "fifo",
        &|d| fifo(&d.join("tests/pipe")),
        "tests/pipe: a task's input must be a file or a folder, not a FIFO",
    );
    refusal(
        "fifo-ignore",
        &|d| {
            fs::remove_file(d.join("tests/.harborignore")).unwrap();
            fifo(&d.join("tests/.harborignore"))
        },
        "tests/.harborignore: ignore rules must be a regular file, not a FIFO",
    );
    refusal(
        "latin1-ignore",
        &|d| fs::write(d.join(".gitignore"), b"caf\xe9\n").unwrap(),
        ".gitignore: ignore rules must be UTF-8 text",
    );
    refusal(
        "latin1-name",
        &|d| {
            use std::os::unix::ffi::OsStrExt as _;
            fs::write(d.join("tests").join(std::ffi::OsStr::from_bytes(b"bad\xff")), "x").unwrap()
        },
        "a task's file name must be UTF-8",
    );
    let missing = runner(&["task-digest", tmp.path().join("nowhere").to_str().unwrap()], &repo());
    assert!(stderr(&missing).contains("nowhere: does not exist"), "{}", stderr(&missing));
    // A control character in a name reaches the terminal escaped.
    let escape = tmp.path().join("escape");
    let status = std::process::Command::new("cp").arg("-r").arg(&cogs).arg(&escape).status().unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink("/etc/passwd", escape.join("tests/\u{1b}[2Kok")).unwrap();
    let done = runner(&["task-digest", escape.to_str().unwrap()], &repo());
    assert!(!stderr(&done).contains('\u{1b}'), "{:?}", stderr(&done));
    assert!(stderr(&done).contains("\\u{1b}[2Kok"), "{:?}", stderr(&done));
}

/// The task cards with `cogs` (and, if given, `othello`) pinned in `harbor.toml`.
fn pinned_tasks(to: &Path, cogs: &str, othello: Option<&str>) -> PathBuf {
    let tasks = to.join("tasks");
    fs::create_dir_all(to).unwrap();
    let status =
        std::process::Command::new("cp").arg("-r").arg(repo().join("tasks")).arg(&tasks).status().unwrap();
    assert!(status.success());
    fs::write(tasks.join("cogs/harbor.toml"), format!("digests = [\"{cogs}\"]\n")).unwrap();
    if let Some(checksum) = othello {
        fs::write(tasks.join("othello/harbor.toml"), format!("checksums = [\"{checksum}\"]\n")).unwrap();
    }
    tasks
}

/// A trial of a task folder other than the one its card pins is refused, naming the
/// task and both digests; with --foreign-tasks it is kept under a task set of its own.
#[test]
fn a_trial_of_another_task_folder_is_refused_or_kept_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = [fixture(AGENT_JOB), fixture(REGRADE_JOB)];
    let jobs: Vec<&Path> = jobs.iter().map(PathBuf::as_path).collect();
    let harbor: Value = read(&fixture("tasks").join("digests.json"));
    let pinned = harbor["rexbench-cogs"]["digest"].as_str().unwrap();

    // Unpinned (the cards as they are): said, and not checked.
    let plain = tmp.path().join("plain");
    let done = import(&jobs, &plain, &["--hint", "none"]);
    assert!(done.status.success(), "{}", stderr(&done));
    assert!(stdout(&done).contains("task cogs: its card pins no Harbor digest"), "{}", stdout(&done));
    let benchmark: Value = read(&plain.join("evaluation.json"));

    // Pinned to the folder the trials ran (cogs by lock, othello by task_checksum).
    let good = pinned_tasks(&tmp.path().join("good"), pinned, Some("4b7e21c9"));
    let out = tmp.path().join("same");
    let done = import(&jobs, &out, &["--hint", "none", "--tasks", good.to_str().unwrap()]);
    assert!(done.status.success(), "{}", stderr(&done));
    assert!(
        stdout(&done).contains("task cogs: the trials ran the task folder its card pins"),
        "{}",
        stdout(&done)
    );
    assert!(stdout(&done).contains("task othello: the trials ran the task folder its card pins"));
    assert_eq!(read(&out.join("evaluation.json"))["benchmark"], benchmark["benchmark"]);

    // Another folder: refused, both digests named.
    let other = "sha256:".to_owned() + &"0".repeat(64);
    let bad = pinned_tasks(&tmp.path().join("bad"), &other, None);
    let out = tmp.path().join("out").join("results");
    fs::create_dir_all(out.parent().unwrap()).unwrap();
    let err = refused(&jobs, &out, &["--hint", "none", "--tasks", bad.to_str().unwrap()]);
    assert!(
        err.contains(&format!("ran task cogs from the task folder whose digest is {pinned} (its lock.json), but the task's card pins {other}"))
            && err.contains("--foreign-tasks"),
        "{err}"
    );
    // A trial without a lock is held to the card's checksums.
    let checked = pinned_tasks(&tmp.path().join("checked"), pinned, Some("ffffffff"));
    let err = refused(&jobs, &out, &["--hint", "none", "--tasks", checked.to_str().unwrap()]);
    assert!(err.contains("ran task othello from the task folder whose task_checksum is 4b7e21c9"), "{err}");
    // A trial that records no digest at all cannot be the pinned task's.
    let bare = copy_job(AGENT_JOB, &tmp.path().join("bare"));
    let result = bare.join("rexbench__othello__Ok3aY5c/result.json");
    let mut value = read(&result);
    value.as_object_mut().unwrap().remove("task_checksum");
    fs::write(&result, value.to_string()).unwrap();
    let err = refused(
        &[&bare, &fixture(REGRADE_JOB)],
        &out,
        &["--hint", "none", "--tasks", checked.to_str().unwrap()],
    );
    assert!(
        err.contains("ran task othello but records no task digest (no lock.json, no task_checksum)"),
        "{err}"
    );

    // Kept apart: a task set of its own, named so, never the benchmark's.
    let apart = tmp.path().join("apart");
    let done =
        import(&jobs, &apart, &["--hint", "none", "--tasks", bad.to_str().unwrap(), "--foreign-tasks"]);
    assert!(done.status.success(), "{}", stderr(&done));
    assert!(stdout(&done).contains("kept under a task set of its own: trial `"), "{}", stdout(&done));
    let evaluation: Value = read(&apart.join("evaluation.json"));
    assert_eq!(evaluation["benchmark"]["name"], "RExBench, changed tasks");
    assert_ne!(evaluation["benchmark"]["task_set_digest"], benchmark["benchmark"]["task_set_digest"]);
}

/// Spec §4n: one task, one folder. Every imported run says which task folder its trial
/// ran; trials of one task that ran two folders are refused, pinned or not, with
/// --foreign-tasks too, naming the task, both folders and a trial of each.
#[test]
fn trials_of_one_task_that_ran_two_folders_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let done = import(&[&fixture(JOB_0_26)], &out, &["--hint", "none"]);
    assert!(done.status.success(), "{}", stderr(&done));
    for (key, (run, _)) in runs(&out) {
        assert_eq!(run["task_folder"], "4b7e21c9", "{key}: {run}");
    }

    let split = copy_job(JOB_0_26, &tmp.path().join("split"));
    let result = split.join("rexbench__cogs__Wr0nG7a/result.json");
    let mut value = read(&result);
    value["task_checksum"] = json!("5c8f32da");
    fs::write(&result, value.to_string()).unwrap();
    let out = tmp.path().join("out").join("results");
    fs::create_dir_all(out.parent().unwrap()).unwrap();
    for extra in [&["--hint", "none"][..], &["--hint", "none", "--foreign-tasks"]] {
        let err = refused(&[&split], &out, extra);
        assert!(
            err.contains("task cogs: trial `rexbench__cogs__")
                && err.contains("ran the task folder 4b7e21c9 and trial `rexbench__cogs__")
                && err.contains("ran 5c8f32da")
                && err.contains("one import runs one folder of a task"),
            "{err}"
        );
    }
    // A trial that records no folder beside others that do: refused too.
    let bare = copy_job(JOB_0_26, &tmp.path().join("bare"));
    let result = bare.join("rexbench__cogs__Wr0nG7a/result.json");
    let mut value = read(&result);
    value.as_object_mut().unwrap().remove("task_checksum");
    fs::write(&result, value.to_string()).unwrap();
    let err = refused(&[&bare], &out, &["--hint", "none"]);
    assert!(err.contains("task cogs: trial `rexbench__cogs__") && err.contains("none it records"), "{err}");
    // Othello's trials, all of one folder, are not what is refused.
    let other = copy_job(JOB_0_26, &tmp.path().join("one-changed"));
    for trial in [
        "rexbench__othello__Cx2lD5c",
        "rexbench__othello__Nz4eX6d",
        "rexbench__othello__Ov7rR1e",
        "rexbench__othello__Vt9oU3b",
    ] {
        let result = other.join(trial).join("result.json");
        let mut value = read(&result);
        value["task_checksum"] = json!("5c8f32da");
        fs::write(&result, value.to_string()).unwrap();
    }
    let apart = tmp.path().join("apart");
    let done = import(&[&other], &apart, &["--hint", "none"]);
    assert!(done.status.success(), "{}", stderr(&done));
    assert_eq!(runs(&apart)["othello/none/1"].0["task_folder"], "5c8f32da");
}
