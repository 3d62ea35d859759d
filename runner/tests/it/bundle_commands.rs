//! keygen, pack, verify, inspect.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::{runner, stderr, stdout};

/// The repository's conformance vectors.
fn vectors() -> PathBuf {
    crate::repo().join("vectors")
}

#[test]
fn verify_accepts_the_valid_vectors_and_names_the_rule_each_invalid_one_breaks() {
    let dir = vectors();
    let expected: serde_json::Map<String, Value> =
        serde_json::from_slice(&fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let key = dir.join("test-key/key.pub.pem");
    // The vectors name a task set a board's maintainers register (vectors/README.md).
    let set = format!("RExBench 1.0 {}", "ab".repeat(32));
    // The built-in cards' folder goes when the `TaskDir` does.
    let builtin = benchmark::builtin::TaskDir::builtin().unwrap();
    let mut claims = runner::taskset::claims(&builtin.cards().unwrap()).unwrap();
    claims.task_sets.insert(bundle::TaskSet {
        digest: "ab".repeat(32),
        name: "RExBench".into(),
        version: "1.0".into(),
    });
    let library = bundle::Verifier::new(
        vec![bundle::PublicKey::from_pem(&fs::read_to_string(&key).unwrap()).unwrap()],
        bundle::REXBENCH_TASKS,
    )
    .holding(claims);
    for (name, want) in &expected {
        let path = dir.join(name);
        let args = ["verify", path.to_str().unwrap(), "--trust", key.to_str().unwrap(), "--task-set", &set];
        let out = runner(&args, &dir);
        let text = stdout(&out);
        if want["valid"] == json!(true) {
            assert!(out.status.success(), "{name}: {text}{}", stderr(&out));
            assert!(text.starts_with("VALID  bundle "), "{name}: {text}");
            assert!(text.contains("(trusted, verified)"), "{text}");
            if let Some(id) = want.get("bundle_id") {
                assert!(text.contains(id.as_str().unwrap()), "{text}");
            }
            // The marks a board will give (spec §4m, §5b), as the vector states them: in
            // the JSON as they are, and one line a run in the text.
            let json_out = runner(&[&args[..], &["--json"]].concat(), &dir);
            let v: Value = serde_json::from_slice(&json_out.stdout).unwrap();
            assert_eq!(v.get("marks"), want.get("marks"), "{name}'s marks");
            if let Some(marks) = want.get("marks").and_then(Value::as_array) {
                assert!(
                    text.contains(&format!("  marks       {} runs a board marks", marks.len())),
                    "{text}"
                );
                for r in marks {
                    let words: Vec<&str> =
                        r["marks"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
                    let line = format!(
                        "    {} / {} / attempt {}: {}",
                        r["task"].as_str().unwrap(),
                        r["hint"].as_str().unwrap(),
                        r["attempt"],
                        words.join(", ")
                    );
                    assert!(text.contains(&line), "{name}: no `{line}` in {text}");
                }
            } else {
                assert!(!text.contains("  marks  "), "{name}: a reproduction is not marked: {text}");
            }
        } else {
            assert_eq!(out.status.code(), Some(1), "{name}: {text}{}", stderr(&out));
            let code = library.verify(fs::read(&path).unwrap().as_slice()).unwrap_err().code();
            assert_ne!(code, "io_error");
            assert!(text.starts_with(&format!("INVALID  {code}: ")), "{name}: {text}");
            let json_out = runner(&[&args[..], &["--json"]].concat(), &dir);
            let v: Value = serde_json::from_slice(&json_out.stdout).unwrap();
            assert_eq!(v["valid"], json!(false));
            assert_eq!(v["error"]["code"], json!(code), "{name}");
        }
    }
}

#[test]
fn verify_summarises_what_the_bundle_holds() {
    let dir = vectors();
    // Without the vectors' task set, the board's rules refuse it (spec §5a).
    let out = runner(&["verify", "valid-basic.tar.gz", "--trust", "test-key/key.pub.pem"], &dir);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).starts_with("INVALID  unknown_task_set: "), "{}", stdout(&out));
    let out = runner(
        &["verify", "valid-basic.tar.gz", "--trust", "test-key/key.pub.pem", "--task-set", "x 1.0 zz"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let set = format!("RExBench 1.0 {}", "ab".repeat(32));
    let out = runner(
        &["verify", "valid-basic.tar.gz", "--trust", "test-key/key.pub.pem", "--task-set", &set, "--json"],
        &dir,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected: Value = serde_json::from_slice(&fs::read(dir.join("expected.json")).unwrap()).unwrap();
    assert_eq!(v["bundle_id"], expected["valid-basic.tar.gz"]["bundle_id"]);
    assert_eq!(v["agent"]["id"], json!("ref-agent"));
    assert_eq!(v["runs"], json!(2));
    assert_eq!(v["outcomes"], json!({"execution_failed": 1, "success": 1}));
    assert_eq!(v["artifacts"], json!(3));
}

#[test]
fn inspect_reads_without_trust() {
    let dir = vectors();
    let out = runner(&["inspect", "bad-unknown-signer.tar.gz"], &dir);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("READABLE  bundle "), "{text}");
    assert!(text.contains("(not checked)"), "{text}");
    let out = runner(&["inspect", "bad-traversal.tar.gz"], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).starts_with("INVALID  unsafe_path: "), "{}", stdout(&out));
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    let dir = vectors();
    let out = runner(&["verify", "missing.tar.gz", "--trust", "test-key/key.pub.pem"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot open missing.tar.gz"), "{}", stderr(&out));
    let out = runner(&["verify", "valid-basic.tar.gz", "--trust", "test-key/key.pem"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not an Ed25519 public key"), "{}", stderr(&out));
}

/// A results directory as `rexbench evaluate` writes it (see runner/README.md).
fn results_dir(root: &Path) -> PathBuf {
    let results = root.join("results");
    let run = |task: &str, hint: &str, attempt: u32, record: Value, files: &[(&str, &str)]| {
        let dir = results.join("runs").join(task).join(hint).join(attempt.to_string());
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("run.json"), serde_json::to_vec(&record).unwrap()).unwrap();
        for (name, content) in files {
            fs::write(dir.join(name), content).unwrap();
        }
    };
    fs::create_dir_all(&results).unwrap();
    fs::write(
        results.join("evaluation.json"),
        json!({"benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "cd".repeat(32)}})
            .to_string(),
    )
    .unwrap();
    run(
        "cogs",
        "none",
        1,
        json!({"outcome": "success", "file_recall": 1.0, "files_changed": ["src/model.py"], "duration_s": 12.5,
               "metrics": {"pred_acc": 0.4562857142857143}}),
        &[
            ("patch.diff", "--- a/src/model.py\n+++ b/src/model.py\n"),
            ("stdout.txt", "PRED ACC : 0.4562857142857143 (9582/21000)\n"),
            ("agent_log.txt", "thinking\n"),
        ],
    );
    run(
        "cogs",
        "hints",
        1,
        json!({"outcome": "execution_failed", "error_type": "ValueError", "duration_s": 3.0}),
        &[
            ("patch.diff", "--- a/src/model.py\n+++ b/src/model.py\n"),
            ("stderr.txt", "Traceback\nValueError: bad\n"),
        ],
    );
    run(
        "othello",
        "detailed",
        1,
        json!({"outcome": "empty_patch", "error_type": "empty patch"}),
        &[("patch.diff", "")],
    );
    fs::write(
        root.join("agent.toml"),
        "id = \"openhands-claude-4-sonnet\"\nframework = \"OpenHands\"\nmodel = \"Claude 4 Sonnet\"\nurl = \"https://example.org\"\n",
    )
    .unwrap();
    results
}

#[test]
fn keygen_then_pack_then_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let out = runner(&["keygen", "--out", "team"], root);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("keyid "), "{}", stdout(&out));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(root.join("team.pem")).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let again = runner(&["keygen", "--out", "team"], root);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("already exists"), "{}", stderr(&again));

    results_dir(root);
    let out = runner(
        &[
            "pack",
            "results",
            "--agent",
            "agent.toml",
            "--key",
            "team.pem",
            "--created-at",
            "2026-11-20T12:00:00Z",
        ],
        root,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("3 runs, 5 artifacts"), "{}", stdout(&out));
    let bundle_path = root.join("openhands-claude-4-sonnet.rexb.tar.gz");
    assert!(bundle_path.is_file());

    // The task set the results name, as a board's maintainers would register it.
    let set = format!("RExBench 1.0 {}", "cd".repeat(32));
    let out = runner(
        &[
            "verify",
            "openhands-claude-4-sonnet.rexb.tar.gz",
            "--trust",
            "team.pub.pem",
            "--task-set",
            &set,
            "--json",
        ],
        root,
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"], json!(3));
    assert_eq!(v["outcomes"], json!({"success": 1, "execution_failed": 1, "empty_patch": 1}));

    // The bundle carries exactly what the directory said.
    let key = bundle::PublicKey::from_pem(&fs::read_to_string(root.join("team.pub.pem")).unwrap()).unwrap();
    let got = bundle::Verifier::new(vec![key], bundle::REXBENCH_TASKS)
        .verify(fs::read(&bundle_path).unwrap().as_slice())
        .unwrap();
    let m = &got.manifest;
    assert_eq!(m.created_at, "2026-11-20T12:00:00Z");
    assert_eq!(m.runner.name, "rexbench-runner");
    assert_eq!(m.benchmark.task_set_digest, "cd".repeat(32));
    let keys: Vec<_> = m.runs.iter().map(|r| (r.task.as_str(), r.hint.as_str(), r.attempt)).collect();
    assert_eq!(keys, vec![("cogs", "none", 1), ("cogs", "hints", 1), ("othello", "detailed", 1)]);
    assert_eq!(m.runs[0].metrics["pred_acc"], 0.4562857142857143);
    assert_eq!(m.runs[0].artifacts.len(), 3);
    assert_eq!(m.runs[1].error_type.as_deref(), Some("ValueError"));
    let patch = &m.runs[0].artifacts["patch"];
    assert_eq!(m.artifacts[patch].media_type, "text/x-diff");
    // Two runs with the same patch share one artifact.
    assert_eq!(&m.runs[1].artifacts["patch"], patch);

    // Untrusted key: refused with its code.
    runner(&["keygen", "--out", "stranger"], root);
    let out =
        runner(&["verify", "openhands-claude-4-sonnet.rexb.tar.gz", "--trust", "stranger.pub.pem"], root);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).starts_with("INVALID  no_trusted_signature: "), "{}", stdout(&out));

    // An attempt left out (othello's detailed-hints attempt 1 renamed 3): nothing is
    // packed, and the gap is named.
    fs::rename(root.join("results/runs/othello/detailed/1"), root.join("results/runs/othello/detailed/3"))
        .unwrap();
    let out = runner(
        &["pack", "results", "--agent", "agent.toml", "--key", "team.pem", "--out", "gapped.tar.gz"],
        root,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("task othello, hint detailed: attempt 1 is missing, but attempt 3 is there"),
        "{}",
        stderr(&out)
    );
    assert!(!root.join("gapped.tar.gz").exists());
}

#[test]
fn pack_explains_what_is_wrong_with_a_results_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    runner(&["keygen", "--out", "k"], root);
    let results = results_dir(root);
    let pack =
        || runner(&["pack", "results", "--agent", "agent.toml", "--key", "k.pem", "--out", "b.tar.gz"], root);

    let stray = results.join("runs/cogs/none/1/screenshot.png");
    fs::write(&stray, "x").unwrap();
    let out = pack();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("screenshot.png: unexpected file"), "{}", stderr(&out));
    fs::remove_file(&stray).unwrap();

    fs::rename(results.join("runs/othello/detailed"), results.join("runs/othello/level2")).unwrap();
    let out = pack();
    assert!(stderr(&out).contains("unknown hint `level2`"), "{}", stderr(&out));
    fs::rename(results.join("runs/othello/level2"), results.join("runs/othello/detailed")).unwrap();

    fs::write(results.join("runs/cogs/none/1/run.json"), r#"{"outcome": "success", "file_recall": 2}"#)
        .unwrap();
    let out = pack();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("the bundle would be invalid: runs[0] (task cogs, hint none, attempt 1): file_recall 2 is outside [0, 1]"), "{}", stderr(&out));
    assert!(!root.join("b.tar.gz").exists(), "a failed pack must leave no bundle behind");

    fs::write(results.join("runs/cogs/none/1/run.json"), r#"{"outcome": "succeeded"}"#).unwrap();
    let out = pack();
    assert!(stderr(&out).contains("run.json: unknown variant `succeeded`"), "{}", stderr(&out));

    fs::remove_file(results.join("evaluation.json")).unwrap();
    let out = pack();
    assert!(stderr(&out).contains("rexbench: `results/evaluation.json` does not exist"), "{}", stderr(&out));
}

/// Tried as a submitter who wants the credit would try it: the example shortcut agent's
/// results with their patches, logs, provenance records and findings deleted. `pack`
/// refuses to sign them, naming the run and what it lacks (and the server refuses such
/// a bundle, made by hand: the `bad-evidence-missing` vector).
#[test]
fn a_success_stripped_of_its_evidence_is_not_packed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let results = root.join("results");
    crate::evaluate::copy(&crate::repo().join("tasks/examples/shortcut/results"), &results);
    for run in ["wordfreq/none/1", "wordfreq/none/2", "wordfreq/hints/1"] {
        let dir = results.join("runs").join(run);
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().unwrap() != "run.json" {
                fs::remove_file(path).unwrap();
            }
        }
        let mut record: Value = serde_json::from_slice(&fs::read(dir.join("run.json")).unwrap()).unwrap();
        record.as_object_mut().unwrap().remove("findings");
        fs::write(dir.join("run.json"), serde_json::to_vec(&record).unwrap()).unwrap();
    }
    assert!(runner(&["keygen", "--out", "team"], root).status.success());
    fs::write(root.join("agent.toml"), "id = \"shortcut\"\nframework = \"F\"\nmodel = \"M\"\n").unwrap();
    let out =
        runner(&["pack", "results", "--agent", "agent.toml", "--key", "team.pem", "--out", "b.tar.gz"], root);
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        stderr(&out)
            .contains("(task wordfreq, hint none, attempt 1) was evaluated and got past applying its patch")
            && stderr(&out).contains("carries no `patch` artifact"),
        "{}",
        stderr(&out)
    );
    assert!(!root.join("b.tar.gz").exists(), "nothing written");
}
