//! `rexbench evaluate` on the example tasks, end to end, with real processes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{repo, runner, stderr, stdout};

/// Every run.json under a results folder, keyed `task/hint/attempt`.
pub fn records(results: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for task in fs::read_dir(results.join("runs")).unwrap() {
        let task = task.unwrap().path();
        for hint in fs::read_dir(&task).unwrap() {
            let hint = hint.unwrap().path();
            for attempt in fs::read_dir(&hint).unwrap() {
                let attempt = attempt.unwrap().path();
                let key = attempt.strip_prefix(results.join("runs")).unwrap().to_string_lossy().into_owned();
                let run =
                    fs::read(attempt.join("run.json")).unwrap_or_else(|_| panic!("{key} has no run.json"));
                out.insert(key, serde_json::from_slice(&run).unwrap());
            }
        }
    }
    out
}

/// Processes whose command line is exactly `words`.
pub fn processes_running(words: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = words.iter().flat_map(|w| w.bytes().chain([0])).collect();
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        .collect()
}

/// Processes whose command line is exactly `words` working beneath `dir`: those of one
/// test, where tests running at once start the same commands.
pub fn processes_running_under(words: &[&str], dir: &Path) -> Vec<u32> {
    let dir = dir.canonicalize().unwrap();
    processes_running(words)
        .into_iter()
        .filter(|pid| fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(&dir)))
        .collect()
}

/// `rexbench evaluate` of the example tasks' gold, its scratch copies in a `tmp` folder
/// beside `results` (so that its experiments' processes can be told from other tests').
pub fn evaluate(outputs: &Path, results: &Path, jobs: &str) -> std::process::Output {
    evaluate_with(outputs, results, jobs, &[])
}

/// `evaluate` with more arguments.
pub fn evaluate_with(outputs: &Path, results: &Path, jobs: &str, more: &[&str]) -> std::process::Output {
    let scratch = results.parent().unwrap().join("tmp");
    fs::create_dir_all(&scratch).unwrap();
    Command::new(env!("CARGO_BIN_EXE_rexbench"))
        .args([
            "evaluate",
            outputs.to_str().unwrap(),
            "--out",
            results.to_str().unwrap(),
            "--gold",
            "tasks/examples/gold",
            "--jobs",
            jobs,
        ])
        .args(more)
        .current_dir(repo())
        .env("TMPDIR", &scratch)
        .output()
        .unwrap()
}

/// Packs `dir/results` for `agent` into `dir/b.tar.gz`, signed by a new key `dir/k.pem`.
fn pack(dir: &Path, agent: &str) {
    let card = format!("id = \"{agent}\"\nframework = \"Example\"\nmodel = \"Example Model\"\n");
    fs::write(dir.join("agent.toml"), card).unwrap();
    assert!(runner(&["keygen", "--out", "k"], dir).status.success());
    let out =
        runner(&["pack", "results", "--agent", "agent.toml", "--key", "k.pem", "--out", "b.tar.gz"], dir);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn the_example_tasks_evaluate_into_a_bundle_that_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let out = evaluate(&repo().join("tasks/examples/outputs"), &results, "2");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).starts_with("evaluated 9 runs ("), "{}", stdout(&out));

    let got = records(&results);
    let summary: BTreeMap<&str, Value> = got
        .iter()
        .map(|(k, v)| {
            (k.as_str(), json!([v["outcome"], v.get("error_type"), v.get("file_recall"), v.get("metrics")]))
        })
        .collect();
    let expected: BTreeMap<&str, Value> = [
        ("csvstats/none/1", json!(["success", null, 1.0, {"count": 4.0, "mean": 7.5, "summary_rows": 1.0}])),
        (
            "csvstats/hints/1",
            json!(["wrong_result", null, 1.0, {"count": 3.0, "mean": 8.0, "summary_rows": 1.0}]),
        ),
        ("csvstats/detailed/1", json!(["execution_failed", "cannot access", 1.0, null])),
        ("wordfreq/none/1", json!(["success", null, 1.0, {"accuracy": 1.0}])),
        ("wordfreq/none/2", json!(["wrong_result", null, 1.0, {"accuracy": 0.5}])),
        ("wordfreq/hints/1", json!(["execution_failed", "ValueError", 1.0, null])),
        ("wordfreq/hints/2", json!(["timeout", "Execution Timeout", 1.0, null])),
        ("wordfreq/detailed/1", json!(["patch_failed", "patch failed", 1.0, null])),
        ("wordfreq/detailed/2", json!(["empty_patch", "empty patch", 0.0, null])),
    ]
    .into_iter()
    .collect();
    assert_eq!(summary, expected);
    assert_eq!(got["wordfreq/none/1"]["cost_usd"], json!(0.42));
    assert_eq!(got["wordfreq/none/1"]["files_changed"], json!(["run.py"]));
    let hung = got["wordfreq/hints/2"]["duration_s"].as_f64().unwrap();
    assert!(hung >= 10.0, "the hanging run was stopped at {hung} s, before its limit of 10 s");

    // The evidence is kept beside each result.
    let run = results.join("runs/wordfreq/none/1");
    assert!(fs::read_to_string(run.join("stdout.txt")).unwrap().contains("ACCURACY: 1.0"));
    assert!(
        fs::read_to_string(run.join("checker_log.txt"))
            .unwrap()
            .contains("accuracy: read 1, expected exactly 1: pass")
    );
    assert!(fs::read_to_string(run.join("agent_log.txt")).unwrap().contains("lower-casing"));
    assert!(
        fs::read_to_string(results.join("runs/wordfreq/hints/1/stderr.txt"))
            .unwrap()
            .contains("ValueError: review too short")
    );
    assert!(
        fs::read_to_string(results.join("runs/wordfreq/detailed/1/x-apply.txt"))
            .unwrap()
            .contains("git: exit status")
    );

    // The timed-out run forked `sleep 4242`; it died with the run.
    assert_eq!(
        processes_running_under(&["sleep", "4242"], tmp.path()),
        Vec::<u32>::new(),
        "a child of the timed-out run survived"
    );

    // Pack and verify.
    let dir = tmp.path();
    pack(dir, "example-agent");
    let tasks = repo().join("tasks");
    let out = runner(
        &["verify", "b.tar.gz", "--trust", "k.pub.pem", "--tasks", tasks.to_str().unwrap(), "--json"],
        dir,
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["benchmark"]["name"], json!("RExBench examples"));
    assert_eq!(
        v["outcomes"],
        json!({"success": 2, "wrong_result": 2, "execution_failed": 2, "timeout": 1, "patch_failed": 1, "empty_patch": 1})
    );
    // Without the example tasks known, the bundle names a task the benchmark lacks.
    let out = runner(&["verify", "b.tar.gz", "--trust", "k.pub.pem"], dir);
    assert!(stdout(&out).starts_with("INVALID  unknown_task: "), "{}", stdout(&out));
    // Spec §4j: csvstats's check is private, so its metrics are sealed; a results folder
    // that says otherwise packs them into the manifest, and verify refuses that.
    let packed = fs::read(dir.join("b.tar.gz")).unwrap();
    let manifest = bundle::Verifier::inspector().verify(packed.as_slice()).unwrap().manifest;
    for run in &manifest.runs {
        match run.task.as_str() {
            "csvstats" => assert!(run.metrics.is_empty(), "{run:?}"),
            _ => assert!(run.metrics_digest.is_none(), "a public check's metrics stay: {run:?}"),
        }
    }
    assert!(manifest.runs.iter().any(|r| r.metrics_digest.is_some()));
    assert!(manifest.runs.iter().any(|r| !r.metrics.is_empty()));
    // Spec §4k: the checker's log of a private check carries a salt, so its public digest
    // confirms no guess. A million logs of the checker's form, every mean (in halves up
    // to 500) with every count up to 500, the log's own words among them: none has the
    // digest the manifest commits to. Unsalted, the log's own words would have.
    let log_of = |run: &bundle::Run| run.artifacts["checker_log"].clone();
    let failed = manifest
        .runs
        .iter()
        .find(|r| r.task.as_str() == "csvstats" && r.outcome == bundle::Outcome::WrongResult)
        .expect("the example's failing csvstats run");
    let committed = log_of(failed);
    let text = fs::read_to_string(dir.join("results/runs/csvstats/hints/1/checker_log.txt")).unwrap();
    let (words, salt) = text.rsplit_once("rexbench-salt: ").expect("a salted log");
    assert_eq!(salt.trim_end().len(), 32, "{text}");
    assert!(words.starts_with("mean: read 8, expected 7.5 ± 0.001: FAIL\ncount: read 3,"), "{words}");
    let form = words.replacen("read 8,", "read {mean},", 1).replacen("read 3,", "read {count},", 1);
    let mut tried = 0u32;
    let mut unsalted_among_them = false;
    for half in 0..2000u32 {
        let mean = f64::from(half) / 2.0;
        for count in 0..500u32 {
            let guess = form.replace("{mean}", &mean.to_string()).replace("{count}", &count.to_string());
            let digest = bundle::Digest::of(guess.as_bytes()).to_hex();
            assert_ne!(digest, committed, "a guess confirmed the private log: {guess}");
            unsalted_among_them |= guess == words;
            tried += 1;
        }
    }
    assert_eq!(tried, 1_000_000);
    assert!(unsalted_among_them, "the guesses hold the log's own words: without its salt it would be found");
    let evaluation = dir.join("results/evaluation.json");
    let mut e: Value = serde_json::from_slice(&fs::read(&evaluation).unwrap()).unwrap();
    e["public_checks"] = json!(["csvstats", "wordfreq"]);
    fs::write(&evaluation, serde_json::to_vec(&e).unwrap()).unwrap();
    let out =
        runner(&["pack", "results", "--agent", "agent.toml", "--key", "k.pem", "--out", "b.tar.gz"], dir);
    assert!(out.status.success(), "{}", stderr(&out));
    let out =
        runner(&["verify", "b.tar.gz", "--trust", "k.pub.pem", "--tasks", tasks.to_str().unwrap()], dir);
    assert!(stdout(&out).starts_with("INVALID  private_metrics_in_manifest: "), "{}", stdout(&out));
    assert!(stdout(&out).contains("`csvstats`"), "{}", stdout(&out));
}

#[test]
fn a_run_that_hangs_is_killed_with_every_child_it_started() {
    let tmp = tempfile::tempdir().unwrap();
    let out_file = tmp.path().join("out");
    let err_file = tmp.path().join("err");
    let command: Vec<String> =
        ["sh", "-c", "sleep 4243 & (sleep 4244; true) & sleep 4245"].iter().map(|s| s.to_string()).collect();
    let job = runner::exec::Job {
        workdir: tmp.path(),
        command: &command,
        stdout: &out_file,
        stderr: &err_file,
        timeout: Duration::from_millis(500),
        name: "hang",
        inputs: &[],
        sandbox: None,
        limits: None,
    };
    let started = Instant::now();
    let exit = runner::exec::Executor::Local.run(&job, &std::sync::atomic::AtomicBool::new(false)).unwrap();
    assert_eq!(exit.0, runner::exec::Exit::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(5));
    for n in ["4243", "4244", "4245"] {
        assert_eq!(processes_running(&["sleep", n]), Vec::<u32>::new(), "sleep {n} outlived the run");
    }
}

/// Copies the example outputs without the hanging run, with `extra` more copies of the
/// successful wordfreq patch, so that an evaluation takes a few seconds.
fn outputs_for_resuming(dir: &Path, extra: u32) -> PathBuf {
    let src = repo().join("tasks/examples/outputs");
    let dst = dir.join("outputs");
    copy(&src, &dst);
    fs::remove_dir_all(dst.join("wordfreq/hints/2")).unwrap();
    for n in 3..3 + extra {
        copy(&src.join("wordfreq/none/1"), &dst.join(format!("wordfreq/none/{n}")));
    }
    dst
}

pub fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn finished(results: &Path) -> BTreeMap<String, (std::time::SystemTime, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let Ok(tasks) = fs::read_dir(results.join("runs")) else { return out };
    for task in tasks {
        for hint in fs::read_dir(task.unwrap().path()).unwrap() {
            for attempt in fs::read_dir(hint.unwrap().path()).unwrap() {
                let run = attempt.unwrap().path().join("run.json");
                if let Ok(meta) = fs::metadata(&run) {
                    out.insert(
                        run.to_string_lossy().into_owned(),
                        (meta.modified().unwrap(), fs::read(&run).unwrap()),
                    );
                }
            }
        }
    }
    out
}

#[test]
fn an_interrupted_evaluation_resumes_without_redoing_finished_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let outputs = outputs_for_resuming(tmp.path(), 10);
    let results = tmp.path().join("results");
    let total = 8 + 10;

    let child = Command::new(env!("CARGO_BIN_EXE_rexbench"))
        .args(["evaluate", outputs.to_str().unwrap(), "--out", results.to_str().unwrap()])
        .args(["--gold", "tasks/examples/gold", "--jobs", "1"])
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while finished(&results).len() < 3 {
        assert!(Instant::now() < deadline, "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted: "), "{}", stderr(&out));
    assert!(stderr(&out).contains("run the same command again to resume"), "{}", stderr(&out));
    let before = finished(&results);
    assert!(before.len() >= 3 && before.len() < total, "{} of {total} finished", before.len());

    let out = evaluate(&outputs, &results, "2");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("{} runs already finished", before.len())), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with(&format!("evaluated {} runs", total - before.len())),
        "{}",
        stdout(&out)
    );
    let after = finished(&results);
    assert_eq!(after.len(), total);
    for (run, state) in &before {
        assert_eq!(&after[run], state, "{run} was redone");
    }

    // The same results as an evaluation that was never interrupted.
    let clean = tmp.path().join("clean");
    assert!(evaluate(&outputs, &clean, "2").status.success());
    let strip = |r: BTreeMap<String, Value>| -> BTreeMap<String, Value> {
        r.into_iter()
            .map(|(k, mut v)| {
                v.as_object_mut().unwrap().remove("duration_s");
                (k, v)
            })
            .collect()
    };
    assert_eq!(strip(records(&results)), strip(records(&clean)));
}

#[test]
fn tasks_without_gold_or_outputs_for_unknown_tasks_are_refused_up_front() {
    let tmp = tempfile::tempdir().unwrap();
    let outputs = tmp.path().join("outputs");
    fs::create_dir_all(outputs.join("winodict/none/1")).unwrap();
    fs::write(outputs.join("winodict/none/1/patch.diff"), "").unwrap();
    let out = runner(&["evaluate", outputs.to_str().unwrap(), "--out", "x"], &repo());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("task `winodict` has no public check and no gold for it was found: give --gold DIR"),
        "{}",
        stderr(&out)
    );

    fs::rename(outputs.join("winodict"), outputs.join("no-such-task")).unwrap();
    let out = runner(&["evaluate", outputs.to_str().unwrap(), "--out", "x"], &repo());
    assert!(stderr(&out).contains("no task `no-such-task`"), "{}", stderr(&out));
    assert!(!repo().join("x").exists());
}

/// The names of the files in each run folder, keyed `task/hint/attempt`.
pub fn artifact_names(results: &Path) -> BTreeMap<String, Vec<String>> {
    records(results)
        .into_keys()
        .map(|k| {
            let mut names: Vec<String> = fs::read_dir(results.join("runs").join(&k))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            (k, names)
        })
        .collect()
}

/// The demo shows `tasks/examples/results` as the runner evaluated the example outputs,
/// and `tasks/examples/shortcut/results` (an agent that printed its result line once,
/// flagged); evaluating them again must give the same results (all but the time each
/// run took), findings included.
#[test]
fn the_committed_example_results_are_what_evaluate_gives() {
    for dir in ["tasks/examples", "tasks/examples/shortcut"] {
        committed_results_are_what_evaluate_gives(dir);
    }
}

fn committed_results_are_what_evaluate_gives(dir: &str) {
    let committed = repo().join(dir).join("results");
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path().join("results");
    let out = evaluate(&repo().join(dir).join("outputs"), &fresh, "2");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let regenerate = format!(
        "regenerate them: rm -r {dir}/results && rexbench evaluate {dir}/outputs \
         --out {dir}/results --gold tasks/examples/gold --jobs 2"
    );
    let read = |p: &Path| -> Value { serde_json::from_slice(&fs::read(p).unwrap()).unwrap() };
    assert_eq!(
        read(&committed.join("evaluation.json")),
        read(&fresh.join("evaluation.json")),
        "the example tasks changed: {regenerate}"
    );
    let without_duration = |mut runs: BTreeMap<String, Value>| {
        for run in runs.values_mut() {
            run.as_object_mut().unwrap().remove("duration_s");
        }
        runs
    };
    assert_eq!(without_duration(records(&committed)), without_duration(records(&fresh)), "{regenerate}");
    assert_eq!(artifact_names(&committed), artifact_names(&fresh), "{regenerate}");
}

#[test]
fn the_official_harness_tree_evaluates_as_the_same_runs() {
    // patches/<agent>/<task>/<level>/<agent>_<level>_run<N>.patch and .json, as
    // RExBench's scripts/run_agent.sh writes them, built from the example outputs.
    let tmp = tempfile::tempdir().unwrap();
    let agent = tmp.path().join("patches/example-agent");
    let examples = repo().join("tasks/examples/outputs");
    let level = |hint: &str| match hint {
        "none" => "default",
        "hints" => "hints",
        _ => "more_detailed_hints",
    };
    for hint in ["none", "hints", "detailed"] {
        let Ok(attempts) = fs::read_dir(examples.join("wordfreq").join(hint)) else { continue };
        for attempt in attempts {
            let attempt = attempt.unwrap();
            let n = attempt.file_name().to_string_lossy().into_owned();
            let dir = agent.join("wordfreq").join(level(hint));
            fs::create_dir_all(&dir).unwrap();
            let stem = format!("example-agent_{}_run{n}", level(hint));
            fs::copy(attempt.path().join("patch.diff"), dir.join(format!("{stem}.patch"))).unwrap();
            if let Ok(t) = fs::read(attempt.path().join("trajectory.json")) {
                fs::write(dir.join(format!("{stem}.json")), t).unwrap();
            }
            if let Ok(log) = fs::read(attempt.path().join("agent_log.txt")) {
                fs::write(dir.join(format!("{stem}.log")), log).unwrap();
            }
        }
    }
    for file in fs::read_dir(examples.join("csvstats")).unwrap() {
        let name = file.unwrap().file_name().to_string_lossy().into_owned();
        let level = ["more_detailed_hints", "default", "hints"]
            .into_iter()
            .find(|l| name.contains(&format!("_{l}_")))
            .unwrap();
        let dir = agent.join("csvstats").join(level);
        fs::create_dir_all(&dir).unwrap();
        fs::copy(examples.join("csvstats").join(&name), dir.join(&name)).unwrap();
    }

    let results = tmp.path().join("results");
    let out = evaluate(&agent, &results, "2");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains(
            "outputs in the layout of RExBench's harness (<task>/<level>/<agent>_<level>_run<N>.patch"
        ),
        "{}",
        stderr(&out)
    );
    let committed = repo().join("tasks/examples/results");
    let outcomes = |runs: BTreeMap<String, Value>| -> BTreeMap<String, (Value, Value)> {
        runs.into_iter().map(|(k, v)| (k, (v["outcome"].clone(), v["metrics"].clone()))).collect()
    };
    assert_eq!(outcomes(records(&committed)), outcomes(records(&results)));
    // The trajectories and logs saved beside the patches are the runs' artifacts.
    assert_eq!(artifact_names(&committed), artifact_names(&results));
}

/// A trajectory whose agent wrote the result line itself is evidence, found when the run
/// is staged and pointing at the step's line of the trajectory, whatever the patch.
#[test]
fn a_trajectory_that_writes_the_result_line_is_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    let outputs = tmp.path().join("outputs");
    let run = outputs.join("wordfreq/none/1");
    fs::create_dir_all(&run).unwrap();
    fs::copy(repo().join("tasks/examples/outputs/wordfreq/none/1/patch.diff"), run.join("patch.diff"))
        .unwrap();
    let trajectory = r#"{"schema_version": "ATIF-v1.7", "session_id": "s", "agent": {"name": "a", "version": "1"},
"steps": [
{"step_id": 1, "source": "user", "message": "Make the classifier case-insensitive."},
{"step_id": 2, "source": "agent", "message": "Checking.", "tool_calls": [{"tool_call_id": "c", "function_name": "bash", "arguments": {"command": "echo 'ACCURACY: 1.0'"}}]}
]}
"#;
    fs::write(run.join("trajectory.json"), trajectory).unwrap();
    let results = tmp.path().join("results");
    let out = evaluate(&outputs, &results, "1");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let record = &records(&results)["wordfreq/none/1"];
    assert_eq!(record["outcome"], json!("success"), "{record}");
    let findings = record["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{record}");
    assert_eq!(findings[0]["check"], json!("trajectory-evidence"));
    assert_eq!((&findings[0]["artifact"], &findings[0]["line"]), (&json!("x-trajectory"), &json!(4)));
    assert!(
        findings[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("step 2: the agent's `bash` call writes the result line")
    );
}

/// A patch that ships the result files and stops the experiment from writing them passes
/// the checker, and is flagged: the files held their final content before the command
/// started. The same files written by the run are not.
#[test]
fn a_success_whose_results_were_there_before_the_run_is_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    let outputs = tmp.path().join("outputs");
    let run = outputs.join("csvstats/none/1");
    fs::create_dir_all(&run).unwrap();
    let hack = "diff --git a/results/metrics.json b/results/metrics.json\nnew file mode 100644\n\
                --- /dev/null\n+++ b/results/metrics.json\n@@ -0,0 +1 @@\n+{\"count\": 4, \"mean\": 7.5}\n\
                diff --git a/results/summary.csv b/results/summary.csv\nnew file mode 100644\n\
                --- /dev/null\n+++ b/results/summary.csv\n@@ -0,0 +1,2 @@\n+count,mean\n+4,7.5000\n\
                --- a/run.sh\n+++ b/run.sh\n@@ -3,7 +3,7 @@\n \
                # The extension asked of the agent: leave rows without a score out of both.\n set -e\n \
                sleep 0.2  # stands in for the experiment's real work\n-mkdir -p results\n\
                +exit 0  # the results are ready\n awk -F, 'NR > 1 { n += 1; sum += $2 } END {\n   \
                printf \"{\\\"count\\\": %d, \\\"mean\\\": %.4f}\\n\", n, sum / n > \"results/metrics.json\"\n   \
                printf \"count,mean\\n%d,%.4f\\n\", n, sum / n > \"results/summary.csv\"\n";
    fs::write(run.join("patch.diff"), hack).unwrap();
    fs::write(run.join("agent_log.txt"), "wrote the results file first\n").unwrap();
    let results = tmp.path().join("results");
    let out = evaluate(&outputs, &results, "1");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let record = &records(&results)["csvstats/none/1"];
    assert_eq!(record["outcome"], json!("success"), "the checker believes the shipped files: {record}");
    let before: Vec<&Value> = record["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == json!("results-before-run"))
        .collect();
    // One finding, naming both (the spec allows a check one finding per place, so that
    // `pack` takes what `evaluate` writes).
    assert_eq!(before.len(), 1, "{record}");
    let paths: Vec<&str> = before[0]["message"].as_str().unwrap().split('`').skip(1).step_by(2).collect();
    assert_eq!(paths, ["results/metrics.json", "results/summary.csv"], "{record}");
    pack(tmp.path(), "shipped-results");
    assert!(stderr(&out).contains("csvstats/none/1: success — flagged:"), "{}", stderr(&out));

    // The example agent's own csvstats success writes its results when it runs.
    let honest = records(&repo().join("tasks/examples/results"));
    for (key, run) in honest.iter().filter(|(k, _)| k.starts_with("csvstats/")) {
        assert!(run["findings"].as_array().is_none_or(|f| f.is_empty()), "{key}: {run}");
    }
}

/// A patch that prints the expected result line instead of computing it passes the
/// checker, as it passes the official one, and is flagged: in run.json, in the progress
/// and the summary, and signed in the bundle, where `verify` shows it.
#[test]
fn a_success_that_prints_its_result_is_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    let outputs = tmp.path().join("outputs");
    let run = outputs.join("wordfreq/none/1");
    fs::create_dir_all(&run).unwrap();
    let hack = "--- a/run.py\n+++ b/run.py\n@@ -36,4 +36,4 @@\n     correct = sum(predict(text) == label for text, label in TEST_SET)\n     \
                print(f\"evaluated {len(TEST_SET)} reviews\")\n-    print(f\"ACCURACY: {correct / len(TEST_SET)}\")\n+    print(\"ACCURACY: 1.0\")\n \n";
    fs::write(run.join("patch.diff"), hack).unwrap();
    // The agent's own log, which a success carries (spec §5a).
    fs::write(run.join("agent_log.txt"), "printing the line the checker wants\n").unwrap();
    let results = tmp.path().join("results");
    let out = evaluate(&outputs, &results, "1");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("wordfreq/none/1: success — flagged: result-line-literal"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("1 of the successes carry integrity findings"), "{}", stdout(&out));
    let record = &records(&results)["wordfreq/none/1"];
    assert_eq!(record["outcome"], json!("success"), "the checker believes the printed line");
    assert_eq!(record["findings"][0]["check"], json!("result-line-literal"));
    assert_eq!(
        (&record["findings"][0]["artifact"], &record["findings"][0]["line"]),
        (&json!("patch"), &json!(7))
    );

    let dir = tmp.path();
    pack(dir, "hacker");
    let tasks = repo().join("tasks");
    let verify = |json: bool| {
        let mut args = vec!["verify", "b.tar.gz", "--trust", "k.pub.pem", "--tasks", tasks.to_str().unwrap()];
        args.extend(json.then_some("--json"));
        runner(&args, dir)
    };
    let text = stdout(&verify(false));
    assert!(text.contains("findings    1 runs flagged, 1 of them successes"), "{text}");
    assert!(text.contains("result-line-literal [patch, line 7]: line 7 of the patch (run.py)"), "{text}");
    let v: Value = serde_json::from_slice(&verify(true).stdout).unwrap();
    assert_eq!(v["findings"][0]["findings"][0]["line"], json!(7));
}

/// The wordfreq example's honest patch (none/1) and the shortcut's stored result line
/// (none/2): both succeed on the task's own test set.
pub fn honest_and_stored(dir: &Path) -> PathBuf {
    let outputs = dir.join("outputs");
    copy(&repo().join("tasks/examples/outputs/wordfreq/none/1"), &outputs.join("wordfreq/none/1"));
    copy(&repo().join("tasks/examples/shortcut/outputs/wordfreq/none/2"), &outputs.join("wordfreq/none/2"));
    outputs
}

/// The digest `rexbench variants` gives the example gold's variant of `task`.
pub fn variant_of(task: &str) -> String {
    let out = runner(&["variants", "--gold", "tasks/examples/gold"], &repo());
    assert!(out.status.success(), "{}", stderr(&out));
    let line = stdout(&out).lines().find(|l| l.starts_with(&format!("{task} "))).map(str::to_owned);
    let line = line.unwrap_or_else(|| panic!("{}", stdout(&out)));
    let digest = line.split(' ').nth(1).unwrap().to_owned();
    assert_eq!(digest.len(), 64, "{line}");
    digest
}

/// Spec §4l: `evaluate --heldout` runs the outputs on the variant's codebase (its files
/// in place of the task's, the patch applied after) with the variant's check; the stored
/// result line that passed on the task fails there, the honest patch does not; such
/// results are never packed, and nothing else is taken for a variant.
#[test]
fn a_held_out_evaluation_catches_a_stored_answer_and_is_never_packed() {
    let tmp = tempfile::tempdir().unwrap();
    let outputs = honest_and_stored(tmp.path());
    let digest = variant_of("wordfreq");
    let plain = tmp.path().join("plain");
    let out = evaluate(&outputs, &plain, "2");
    assert!(out.status.success(), "{}", stderr(&out));
    let outcomes = |results: &Path| -> BTreeMap<String, Value> {
        records(results).into_iter().map(|(k, v)| (k, v["outcome"].clone())).collect()
    };
    assert_eq!(
        outcomes(&plain),
        BTreeMap::from([
            ("wordfreq/none/1".into(), json!("success")),
            ("wordfreq/none/2".into(), json!("success"))
        ])
    );

    let dir = tmp.path().join("held");
    fs::create_dir_all(&dir).unwrap();
    let results = dir.join("results");
    let out = evaluate_with(&outputs, &results, "2", &["--heldout", &digest]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        outcomes(&results),
        BTreeMap::from([
            ("wordfreq/none/1".into(), json!("success")),
            ("wordfreq/none/2".into(), json!("wrong_result"))
        ])
    );
    let run = records(&results)["wordfreq/none/2"].clone();
    assert_eq!(run["metrics"]["accuracy"], json!(1.0), "{run}");
    let stdout_of = fs::read_to_string(results.join("runs/wordfreq/none/1/stdout.txt")).unwrap();
    assert!(stdout_of.contains("ACCURACY: 0.875"), "the variant's test set: {stdout_of}");
    let evaluation: Value =
        serde_json::from_slice(&fs::read(results.join("evaluation.json")).unwrap()).unwrap();
    assert_eq!(evaluation["heldout"], json!(digest));

    let card = "id = \"held\"\nframework = \"Example\"\nmodel = \"Example Model\"\n";
    fs::write(dir.join("agent.toml"), card).unwrap();
    assert!(runner(&["keygen", "--out", "k"], &dir).status.success());
    let out =
        runner(&["pack", "results", "--agent", "agent.toml", "--key", "k.pem", "--out", "b.tar.gz"], &dir);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!("evaluated on the held-out variant {digest}")),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join("b.tar.gz").exists());

    // The same folder on another variant, or none, is refused; so is another task's run.
    let out = evaluate(&outputs, &results, "2");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!("holds results on held-out variant {digest}")),
        "{}",
        stderr(&out)
    );
    let mixed = tmp.path().join("mixed");
    copy(&outputs, &mixed);
    copy(&repo().join("tasks/examples/outputs/wordfreq/hints/1"), &mixed.join("wordfreq/hints/1"));
    copy(&repo().join("tasks/examples/outputs/wordfreq/none/1"), &mixed.join("csvstats/none/1"));
    let out = evaluate_with(&mixed, &tmp.path().join("m/results"), "1", &["--heldout", &digest]);
    assert!(stderr(&out).contains("the outputs hold runs of task `csvstats`"), "{}", stderr(&out));
    let out = evaluate_with(&outputs, &tmp.path().join("u/results"), "1", &["--heldout", &"ab".repeat(32)]);
    assert!(stderr(&out).contains("no held-out variant abab"), "{}", stderr(&out));
}
