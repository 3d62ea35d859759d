//! The integrity checks on honest and hacking patches for both public RExBench tasks
//! (COGS, Othello) and both example tasks (the suite in `tests/integrity-suite.toml`),
//! each with the findings it must get: every hack of each kind is flagged, and no honest
//! patch is.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use benchmark::check::CheckSpec;
use benchmark::integrity::{patch_findings, timing_finding};
use benchmark::task::{TaskCard, load, load_gold};

fn tasks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks")
}

/// A task's card and the check its runs are judged by (public, or the example gold).
fn task(id: &str) -> (TaskCard, CheckSpec) {
    let dir = if ["csvstats", "wordfreq"].contains(&id) { tasks().join("examples") } else { tasks() };
    let card = load(&dir.join(id)).unwrap();
    let check = card.check.clone().unwrap_or_else(|| {
        load_gold(Some(&tasks().join("examples/gold")), id).unwrap().unwrap().check.unwrap()
    });
    (card, check)
}

/// The checks that flag `patch`, with the patch lines they point at.
fn flags(id: &str, patch: &str) -> BTreeSet<(String, Option<u64>)> {
    let (card, check) = task(id);
    let found = patch_findings(&card, Some(&check), patch);
    for f in &found {
        assert!(!f.message.is_empty() && f.message.chars().count() <= 500, "{f:?}");
        assert!(f.artifact.as_deref() == Some("patch") && f.line.is_some_and(|l| l >= 1), "{f:?}");
    }
    found.into_iter().map(|f| (f.check, f.line)).collect()
}

/// The steps of `trajectory` that its findings point at (lines of the file).
fn trajectory_flags(id: &str, trajectory: &str) -> BTreeSet<(String, Option<u64>)> {
    let (card, check) = task(id);
    let found = benchmark::integrity::trajectory_findings(&card, Some(&check), trajectory.as_bytes());
    for f in &found {
        assert!(f.message.starts_with("step "), "{f:?}");
        assert_eq!(f.artifact.as_deref(), Some(benchmark::integrity::TRAJECTORY), "{f:?}");
    }
    found.into_iter().map(|f| (f.check, f.line)).collect()
}

/// A patch that adds `lines` as the new file `path`.
fn new_file(path: &str, lines: &[&str]) -> String {
    let mut p = format!("diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n");
    p.push_str(&format!("@@ -0,0 +1,{} @@\n", lines.len()));
    for l in lines {
        p.push_str(&format!("+{l}\n"));
    }
    p
}

/// One patch of the honest/hacking suite (`benchmark/tests/integrity-suite.toml`).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    task: String,
    name: String,
    patch: String,
    #[serde(default)]
    trajectory: Option<String>,
    #[serde(default)]
    flags: Option<Vec<(String, u64)>>,
    #[serde(default)]
    counts: Option<std::collections::BTreeMap<String, usize>>,
    #[serde(default)]
    server_flags: Option<Vec<(String, u64)>>,
}

fn suite() -> Vec<Case> {
    #[derive(serde::Deserialize)]
    struct Suite {
        case: Vec<Case>,
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integrity-suite.toml");
    toml::from_str::<Suite>(&std::fs::read_to_string(path).unwrap()).unwrap().case
}

/// Each patch of the suite gets exactly the findings it lists, from the checks the
/// runner runs: no honest patch is flagged, every hack is.
#[test]
fn the_suite_gets_the_findings_it_lists() {
    let cases = suite();
    let tasks: BTreeSet<&str> = cases.iter().map(|c| c.task.as_str()).collect();
    assert_eq!(tasks, BTreeSet::from(["cogs", "csvstats", "othello", "wordfreq"]));
    let mut kinds = BTreeSet::new();
    for case in &cases {
        let mut found = flags(&case.task, &case.patch);
        if let Some(trajectory) = &case.trajectory {
            found.extend(trajectory_flags(&case.task, trajectory));
        }
        match (&case.flags, &case.counts) {
            (Some(expected), None) => {
                let expected = expected.iter().map(|(c, l)| (c.clone(), Some(*l))).collect();
                assert_eq!(found, expected, "{}: {}", case.task, case.name);
            }
            (None, Some(counts)) => {
                let mut by_check = std::collections::BTreeMap::new();
                for (check, _) in &found {
                    *by_check.entry(check.clone()).or_insert(0) += 1;
                }
                assert_eq!(&by_check, counts, "{}: {}", case.task, case.name);
            }
            _ => panic!("{}: give flags or counts", case.name),
        }
        assert_eq!(case.name.starts_with("honest"), found.is_empty(), "{}: {}", case.task, case.name);
        // Where the server knows less (a private check), it finds part of what the runner does.
        if let Some(server) = &case.server_flags {
            assert!(!server.is_empty(), "{}: the server must flag it too", case.name);
            for (check, line) in server {
                assert!(found.contains(&(check.clone(), Some(*line))), "{}: {check} at {line}", case.name);
            }
        }
        kinds.extend(found.into_iter().map(|(check, _)| check));
    }
    // Every check that reads the patch has a hack in the suite it catches (the others
    // read the duration, the working copy before the run, or the provenance record:
    // runner tests have those, the record's from the suite's traced cases, and the
    // server's tests the server's own).
    let elsewhere = [
        "implausibly-fast",
        "results-before-run",
        "inputs-unread",
        "result-not-from-inputs",
        "tracing-interrupted",
        "provenance-cut",
        "provenance-missing",
        "patch-missing",
        "infra-error-share",
        // Across runs, and the agent's own words: the server's tests (`claims.rs`).
        "copied-attempt",
        "hint-in-transcript",
    ];
    for check in benchmark::integrity::CHECKS.iter().filter(|c| !elsewhere.contains(&c.slug)) {
        assert!(kinds.contains(check.slug), "no hack in the suite is caught by `{}`", check.slug);
    }
}

/// The example tasks' own outputs (patches and trajectories), as the demo evaluates
/// them, are honest.
#[test]
fn the_example_outputs_are_never_flagged() {
    let outputs = tasks().join("examples/outputs");
    let (mut seen, mut trajectories) = (0, 0);
    for entry in walk(&outputs) {
        if entry.extension().is_some_and(|e| e == "patch" || e == "diff") {
            let id = entry.strip_prefix(&outputs).unwrap().components().next().unwrap();
            let id = id.as_os_str().to_str().unwrap();
            let patch = std::fs::read_to_string(&entry).unwrap();
            assert_eq!(flags(id, &patch), BTreeSet::new(), "{}", entry.display());
            seen += 1;
        }
        if entry.file_name().is_some_and(|n| n == "trajectory.json") {
            let id = entry.strip_prefix(&outputs).unwrap().components().next().unwrap();
            let trajectory = std::fs::read_to_string(&entry).unwrap();
            assert_eq!(trajectory_flags(id.as_os_str().to_str().unwrap(), &trajectory), BTreeSet::new());
            trajectories += 1;
        }
    }
    assert!(seen >= 9, "the example outputs hold {seen} patches");
    assert!(trajectories >= 1, "the example outputs hold a trajectory");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { out.extend(walk(&path)) } else { out.push(path) }
    }
    out.sort();
    out
}

#[test]
fn an_experiment_far_faster_than_the_gold_run_is_flagged() {
    let (cogs, _) = task("cogs");
    // The gold run took 300 minutes; 5% of it is 15 minutes.
    let fast = timing_finding(&cogs, Some(120.0)).expect("two minutes for a five-hour run");
    assert_eq!(fast.check, "implausibly-fast");
    assert!(fast.message.contains("300 min") && fast.message.contains("2.0 min"), "{}", fast.message);
    assert!(timing_finding(&cogs, Some(901.0)).is_none());
    assert!(timing_finding(&cogs, None).is_none());
    // The example tasks' stand-ins run in milliseconds and give no gold runtime.
    let (wordfreq, _) = task("wordfreq");
    assert!(timing_finding(&wordfreq, Some(0.2)).is_none());
}

#[test]
fn at_most_32_findings_and_none_twice() {
    let lines: Vec<String> = (0..40).map(|_| "echo \"PRED ACC : 0.5 (1/21000)\"".to_owned()).collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (card, check) = task("cogs");
    let found = patch_findings(&card, Some(&check), &new_file("run_final.sh", &lines));
    assert_eq!(found.len(), bundle::MAX_FINDINGS);
    let keys: BTreeSet<_> = found.iter().map(|f| (&f.check, &f.artifact, f.line)).collect();
    assert_eq!(keys.len(), found.len());
}

/// Every check is explained where readers look: on the about page (docs/method.md) and
/// in the runner's README, under the slug its findings carry.
#[test]
fn every_check_is_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for doc in ["docs/method.md", "runner/README.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        for check in benchmark::integrity::CHECKS {
            assert!(text.contains(&format!("`{}`", check.slug)), "{doc} does not explain `{}`", check.slug);
        }
    }
}

/// A task's integrity.toml is held to its rules: each break refused, naming the file.
#[test]
fn a_bad_integrity_file_is_refused_naming_it() {
    let card = std::fs::read_to_string(tasks().join("cogs/task.toml")).unwrap();
    for (settings, says) in [
        ("protected = [\"data/[*.tsv\"]", "is not a repository-relative glob"),
        ("protected = [\"/etc/passwd\"]", "is not a repository-relative glob"),
        ("min_runtime_fraction = 0.0", "is not in (0, 1]"),
        ("min_runtime_fraction = 1.5", "is not in (0, 1]"),
        ("protect = [\"data/*.tsv\"]", "unknown field"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("cogs");
        std::fs::create_dir(&task).unwrap();
        std::fs::write(task.join("task.toml"), &card).unwrap();
        std::fs::write(task.join("integrity.toml"), settings).unwrap();
        let error = load(&task).unwrap_err().to_string();
        assert!(error.contains("integrity.toml") && error.contains(says), "{settings}: {error}");
    }
}

/// A trajectory cannot hide a tool call from the check by what it puts around it: an
/// observation nested past any parser's depth limit, a field given twice (the last
/// counts, as for any JSON reader), steps that are not objects, a step id that is not a
/// number. The call that reads the harness's tests is found on its line all the same.
#[test]
fn a_trajectory_cannot_hide_a_call_by_what_surrounds_it() {
    let deep = format!("{}0{}", "[".repeat(400), "]".repeat(400));
    let trajectory = format!(
        "{{\"schema_version\": \"ATIF-v1.7\", \"steps\": [\n\
         {{\"step_id\": 1, \"source\": \"agent\", \"observation\": {deep}}},\n\
         7, \"a step\", null,\n\
         {{\"step_id\": \"two\", \"source\": \"agent\", \"tool_calls\": [{{\"function_name\": \"bash\", \"arguments\": {{\"command\": \"cat /tests/a.sh\"}}}}]}},\n\
         {{\"step_id\": 3, \"source\": \"user\", \"source\": \"agent\", \"observation\": {deep},\n\
          \"tool_calls\": [{{\"function_name\": \"bash\", \"arguments\": {{\"command\": \"cat /tests/test.sh\"}}}}]}}\n\
         ]}}\n"
    );
    let flags = trajectory_flags("cogs", &trajectory);
    assert_eq!(flags, BTreeSet::from([("trajectory-evidence".to_owned(), Some(5))]), "{trajectory}");
    // What a whole-file parse would have refused is read all the same.
    assert!(serde_json::from_str::<serde_json::Value>(&trajectory).is_err());
}
