//! Limits on every resource (the card's `[evaluation.limits]`): a patch that goes over
//! one is stopped and ends `execution_failed` with `resource_limit: <resource>`, its
//! provenance record naming the limit, never `infra_error`; its logs are cut while
//! written; it can make no user namespace of its own; an honest run beside them keeps
//! its verdict.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::evaluate::records;
use crate::hostile::{agent_patch, task_of, wait_within};
use crate::{repo, stderr};

/// A task like the hostile tests' `leaky`, with small limits.
fn limited_task(root: &Path) -> PathBuf {
    let limits =
        "\n[evaluation.limits]\nmemory_mib = 256\nprocesses = 48\ndisk_mib = 64\ntmp_mib = 8\nlog_mib = 1\n";
    task_of(root, "limited", 60, limits)
}

const OK: &str = "echo 'ACC: 1.0' > result.txt";

/// Each attempt's script: what it reaches for, then the right result, so that only a
/// limit can make it fail.
fn attempts() -> Vec<(u32, String)> {
    vec![
        // An honest run.
        (1, OK.to_owned()),
        // Memory: 1 GiB written, then held.
        (2, format!("python3 -c 'import time; b = bytes(range(256)) * (4 << 20); time.sleep(20)'; {OK}")),
        // Processes: more sleepers than the limit.
        (3, format!("for i in $(seq 200); do sleep 20 & done; wait; {OK}")),
        // Temporary space: /tmp filled past its size, then held.
        (4, format!("dd if=/dev/zero of=/tmp/fill bs=1M count=40 2>/dev/null; sleep 20; {OK}")),
        // Disk: a file of 200 MiB in the working copy (refused at 64 MiB).
        (5, format!("dd if=/dev/zero of=big bs=1M count=200 2>/dev/null && {OK}")),
    ]
}

fn outputs(root: &Path) -> PathBuf {
    let outputs = root.join("outputs");
    for (attempt, script) in attempts() {
        let dir = outputs.join(format!("limited/none/{attempt}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("patch.diff"), agent_patch(&script)).unwrap();
    }
    // Hinted: its logs past their limit, and a user namespace of its own; both succeed.
    for (attempt, script) in [
        (1, format!("head -c 3000000 /dev/zero | tr '\\000' x; echo; echo visible >&2; {OK}")),
        (2, format!("unshare -U true 2>/dev/null && echo made-a-namespace || echo no-namespace; {OK}")),
    ] {
        let dir = outputs.join(format!("limited/hints/{attempt}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("patch.diff"), agent_patch(&script)).unwrap();
    }
    // Detailed: what a look at the processes' mappings or a walk alone would miss.
    for (attempt, script) in [
        // Memory in memfds, written and never mapped, each under the file size limit.
        (
            1,
            format!(
                "python3 -c 'import os, time; fs = [os.memfd_create(str(i)) for i in range(8)]; [os.write(f, bytes(1 << 20)) for f in fs for _ in range(40)]; time.sleep(20)'; {OK}"
            ),
        ),
        // Disk in files removed while open, each under the file size limit.
        (
            2,
            format!(
                "python3 -c 'import os, time; fds = [os.open(str(i), os.O_WRONLY | os.O_CREAT) for i in range(8)]; [os.write(fd, bytes(12 << 20)) for fd in fds]; [os.unlink(str(i)) for i in range(8)]; time.sleep(20)'; {OK}"
            ),
        ),
        // Disk behind a folder made unreadable.
        (
            3,
            format!(
                "mkdir -p hid/sub && for i in 1 2; do dd if=/dev/zero of=hid/sub/f$i bs=1M count=36 2>/dev/null; done; chmod 000 hid; sleep 20; {OK}"
            ),
        ),
    ] {
        let dir = outputs.join(format!("limited/detailed/{attempt}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("patch.diff"), agent_patch(&script)).unwrap();
    }
    outputs
}

/// `evaluate` of the outputs (only the runs `only` names, where it names any).
fn evaluate(root: &Path, more: &[&str], only: &[&str]) -> (std::process::ExitStatus, String) {
    let tasks = limited_task(root);
    let outputs = outputs(root);
    if !only.is_empty() {
        for hint in ["none", "hints", "detailed"] {
            for attempt in fs::read_dir(outputs.join("limited").join(hint)).unwrap().flatten() {
                let key = format!("{hint}/{}", attempt.file_name().to_string_lossy());
                if !only.contains(&key.as_str()) {
                    fs::remove_dir_all(attempt.path()).unwrap();
                }
            }
        }
    }
    let results = root.join("results");
    let scratch = root.join("tmp");
    fs::create_dir_all(&scratch).unwrap();
    let args: Vec<&str> = ["evaluate", outputs.to_str().unwrap(), "--out", results.to_str().unwrap()]
        .into_iter()
        .chain(["--tasks", tasks.to_str().unwrap(), "--jobs", "2"])
        .chain(more.iter().copied())
        .collect();
    let logs = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rexbench"))
        .args(&args)
        .current_dir(repo())
        .env("TMPDIR", &scratch)
        .stdout(fs::File::create(logs.path().join("out")).unwrap())
        .stderr(fs::File::create(logs.path().join("err")).unwrap())
        .spawn()
        .unwrap();
    let status = wait_within(&mut child, Duration::from_secs(240), &args);
    let said = fs::read_to_string(logs.path().join("out")).unwrap()
        + &fs::read_to_string(logs.path().join("err")).unwrap();
    (status, said)
}

#[test]
fn each_limit_stops_a_patch_that_exceeds_it_and_the_honest_run_keeps_its_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let (status, said) = evaluate(tmp.path(), &[], &[]);
    assert!(status.success(), "{said}");
    let results = tmp.path().join("results");
    let got = records(&results);
    assert_eq!(got["limited/none/1"]["outcome"], json!("success"), "{:?}", got["limited/none/1"]);
    let limited = [
        ("none/2", "memory"),
        ("none/3", "processes"),
        ("none/4", "temporary space"),
        ("none/5", "disk"),
        ("detailed/1", "memory"),
        ("detailed/2", "disk"),
        ("detailed/3", "disk"),
    ];
    for (run, resource) in limited {
        let key = format!("limited/{run}");
        let run = &got[&key];
        let note =
            fs::read_to_string(results.join("runs").join(&key).join("x-runner.txt")).unwrap_or_default();
        eprintln!("{key}: {note}");
        assert_eq!(run["outcome"], json!("execution_failed"), "{key}: {run}");
        assert_eq!(run["error_type"], json!(format!("resource_limit: {resource}")), "{key}: {run}");
        let dir = results.join("runs").join(&key);
        let record: Value =
            serde_json::from_slice(&fs::read(dir.join("x-provenance.json")).unwrap()).unwrap();
        let limit = record["limit"].as_str().unwrap_or_default();
        assert!(
            limit.starts_with(&format!("{resource}: ")) && limit.contains("over its limit"),
            "{key}: {record}"
        );
        // Stopped when seen, not at the task's limit of 60 s.
        assert!(run["duration_s"].as_f64().unwrap() < 30.0, "{key}: {run}");
    }
    // Its logs, cut at 1 MiB while written, with a line that says so; the other log whole.
    let logged = results.join("runs/limited/hints/1");
    let out = fs::read(logged.join("stdout.txt")).unwrap();
    assert!(out.len() <= (1 << 20) + 200, "{} bytes kept", out.len());
    let tail = String::from_utf8_lossy(&out[out.len() - 150..]).into_owned();
    assert!(tail.contains("more bytes were cut here: the task's log limit is 1048576 bytes"), "{tail}");
    // (The runner's salt line follows, spec §4k.)
    assert!(fs::read_to_string(logged.join("stderr.txt")).unwrap().starts_with("visible\n"));
    assert_eq!(got["limited/hints/1"]["outcome"], json!("success"));
    // No user namespace of its own.
    let ns = fs::read_to_string(results.join("runs/limited/hints/2/stdout.txt")).unwrap();
    assert!(ns.starts_with("no-namespace\n"), "{ns}");
    // The sleepers and the holders are gone with their runs.
    assert!(crate::evaluate::processes_running(&["sleep", "20"]).is_empty());
    // Nothing is left of the working copies.
    let left: Vec<_> = fs::read_dir(tmp.path().join("tmp")).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "scratch left: {left:?}");

    // Without a sandbox (one's own agent on one's own machine) the limits are not the
    // runner's to set: the same memory hog runs to its end, so the test can fail.
    let again = tmp.path().join("unsandboxed");
    fs::create_dir_all(&again).unwrap();
    let (status, said) = evaluate(&again, &["--unsandboxed"], &["none/2", "hints/2"]);
    assert!(status.success(), "{said}");
    let got = records(&again.join("results"));
    assert_eq!(got["limited/none/2"]["outcome"], json!("success"), "{}", stdout_of(&got));
    let ns = fs::read_to_string(again.join("results/runs/limited/hints/2/stdout.txt")).unwrap();
    assert!(ns.starts_with("made-a-namespace\n"), "{ns}");
}

/// Under podman the card's memory and processes are the container's own limits, which the
/// runner sets (a template may not), and the command's own exit status 125 is its
/// failure, not the engine's: the engine's record of the container tells them apart.
#[test]
fn a_container_holds_a_run_to_the_cards_limits_and_its_own_exit_125_is_its_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let tasks = limited_task(root);
    let outputs = root.join("outputs");
    let shown = "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max \
                 /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max 2>/dev/null";
    for (attempt, script) in [
        (1, format!("{shown}; {OK}")),
        (2, format!("python3 -c 'b = bytes(range(256)) * (4 << 20)' && {OK}")),
        (3, format!("n=0; for i in $(seq 200); do sleep 20 & n=$((n+1)); done; echo forked; {OK}; exit 125")),
    ] {
        let dir = outputs.join(format!("limited/none/{attempt}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("patch.diff"), agent_patch(&script)).unwrap();
    }
    let template = crate::sandbox::podman_template(&crate::sandbox::rootfs(root));
    let results = root.join("results");
    let scratch = root.join("tmp");
    fs::create_dir_all(&scratch).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rexbench"))
        .args(["evaluate", outputs.to_str().unwrap(), "--out", results.to_str().unwrap()])
        .args(["--tasks", tasks.to_str().unwrap(), "--container", &template])
        .current_dir(repo())
        .env("TMPDIR", &scratch)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let got = records(&results);
    // The container sees the card's 256 MiB and 48 processes as its own limits.
    let said = fs::read_to_string(results.join("runs/limited/none/1/stdout.txt")).unwrap();
    assert!(said.starts_with("268435456\n48\n"), "{said}");
    assert_eq!(got["limited/none/1"]["outcome"], json!("success"), "{}", stdout_of(&got));
    // 1 GiB is refused it (it would succeed on this machine without the limit).
    assert_eq!(got["limited/none/2"]["outcome"], json!("execution_failed"), "{}", stdout_of(&got));
    // Forks past the limit fail; the command's own 125 is its failure, not infra_error.
    let r = &got["limited/none/3"];
    assert_eq!(r["outcome"], json!("execution_failed"), "{r}");
    let note = fs::read_to_string(results.join("runs/limited/none/3/x-runner.txt")).unwrap_or_default();
    assert!(!note.contains("failed before the task's command ran"), "{note}");
    assert!(crate::evaluate::processes_running(&["sleep", "20"]).is_empty());
    // The runner removed every container it ran.
    let store = root.join("podman");
    let listed = Command::new("podman")
        .args(["--storage-driver=vfs", "--root"])
        .arg(store.join("storage"))
        .arg("--runroot")
        .arg(store.join("run"))
        .args(["ps", "--all", "--quiet"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert!(listed.stdout.is_empty(), "containers left: {}", String::from_utf8_lossy(&listed.stdout));

    // A template's own limits would come after the runner's and win: refused.
    let own = template.replace(" --rm ", " --rm --memory 64g ");
    let out = Command::new(env!("CARGO_BIN_EXE_rexbench"))
        .args(["evaluate", outputs.to_str().unwrap(), "--out", root.join("own").to_str().unwrap()])
        .args(["--tasks", tasks.to_str().unwrap(), "--container", &own])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--memory (the runner sets memory and processes"), "{}", stderr(&out));
}

/// Where the runner may make control groups (root, as the tests run), each run is in one
/// of its own, at the card's memory and processes, so that the kernel holds it at every
/// allocation and fork; none is left when the evaluation ends.
#[test]
fn a_run_is_held_in_a_control_group_of_its_own_at_the_cards_limits() {
    assert!(nix::unistd::geteuid().is_root(), "the runner's tests run as root");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let tasks = limited_task(root);
    let outputs = root.join("outputs");
    let dir = outputs.join("limited/none/1");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("patch.diff"), agent_patch(&format!("sleep 4; {OK}"))).unwrap();
    let results = root.join("results");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rexbench"))
        .args(["evaluate", outputs.to_str().unwrap(), "--out", results.to_str().unwrap()])
        .args(["--tasks", tasks.to_str().unwrap()])
        .current_dir(repo())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let prefix = format!("rexbench-{}-", child.id());
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut seen: Vec<(PathBuf, String)> = Vec::new();
    while seen.is_empty() && std::time::Instant::now() < deadline {
        for group in groups(&prefix) {
            let procs = fs::read_to_string(group.join("cgroup.procs")).unwrap_or_default();
            if procs.trim().is_empty() {
                continue;
            }
            let limit = ["memory.limit_in_bytes", "memory.max", "pids.max"]
                .iter()
                .filter_map(|f| fs::read_to_string(group.join(f)).ok())
                .map(|v| v.trim().to_owned())
                .collect::<Vec<_>>()
                .join(" ");
            seen.push((group, limit));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = wait_within(&mut child, Duration::from_secs(120), &["evaluate"]);
    assert!(status.success());
    assert!(!seen.is_empty(), "no control group of the run's was seen under /sys/fs/cgroup");
    let limits: Vec<&str> = seen.iter().map(|(_, l)| l.as_str()).collect();
    // v1: the memory hierarchy's group (256 MiB) and the pids one's (48); v2: one of both.
    assert!(
        limits.iter().any(|l| l.contains("268435456")) && limits.iter().any(|l| l.ends_with("48")),
        "{seen:?}"
    );
    assert_eq!(records(&results)["limited/none/1"]["outcome"], json!("success"));
    let left = groups(&prefix);
    assert!(left.is_empty(), "control groups left: {left:?}");
}

/// The control groups under `/sys/fs/cgroup` whose names begin with `prefix`.
fn groups(prefix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![(PathBuf::from("/sys/fs/cgroup"), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if e.file_name().to_string_lossy().starts_with(prefix) {
                found.push(e.path());
            } else if depth < 6 {
                stack.push((e.path(), depth + 1));
            }
        }
    }
    found
}

fn stdout_of(got: &std::collections::BTreeMap<String, Value>) -> String {
    serde_json::to_string_pretty(got).unwrap()
}

#[test]
fn a_card_that_gives_no_limit_or_a_log_a_bundle_cannot_carry_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = limited_task(tmp.path());
    let card = tasks.join("examples/limited/task.toml");
    let text = fs::read_to_string(&card).unwrap();
    let outputs = outputs(tmp.path());
    for (from, to, said) in [
        ("memory_mib = 256", "memory_mib = 0", "memory_mib must be at least 1"),
        ("log_mib = 1", "log_mib = 64", "a log is at most 63 MiB"),
        ("tmp_mib = 8", "tmp_mb = 8", "unknown field `tmp_mb`"),
    ] {
        fs::write(&card, text.replace(from, to)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_rexbench"))
            .args(["evaluate", outputs.to_str().unwrap(), "--out", tmp.path().join("r").to_str().unwrap()])
            .args(["--tasks", tasks.to_str().unwrap()])
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{to}");
        assert!(stderr(&out).contains(said), "{to}: {}", stderr(&out));
        assert!(!tmp.path().join("r").exists(), "{to}: a refused card's evaluation wrote results");
    }
}

/// A re-run that prints 70 MiB (more than a bundle's artifact may hold) is judged and
/// packed: its log is cut at the default 16 MiB while written, so that `pack` (and so
/// `reproduce`, which packs its re-runs the same way) never refuses it.
#[test]
fn a_run_that_prints_70_mib_is_judged_and_packed_with_its_log_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let tasks = task_of(root, "loud", 60, "");
    let dir = root.join("outputs/loud/none/1");
    fs::create_dir_all(&dir).unwrap();
    let script = "head -c 73400320 /dev/zero | tr '\\000' x; echo 'ACC: 0.5' > result.txt";
    fs::write(dir.join("patch.diff"), agent_patch(script)).unwrap();
    let scratch = root.join("tmp");
    fs::create_dir_all(&scratch).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_rexbench"))
            .args(args)
            .current_dir(root)
            .env("TMPDIR", &scratch)
            .output()
            .unwrap()
    };
    let out = run(&["evaluate", "outputs", "--out", "results", "--tasks", tasks.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = records(&root.join("results"));
    assert_eq!(got["loud/none/1"]["outcome"], json!("wrong_result"), "{:?}", got["loud/none/1"]);
    let log = root.join("results/runs/loud/none/1/stdout.txt");
    let size = fs::metadata(&log).unwrap().len();
    assert!(((16 << 20)..(16 << 20) + 200).contains(&size), "{size} bytes kept");
    fs::write(
        root.join("agent.toml"),
        "id = \"loud-agent\"\nframework = \"OpenHands\"\nmodel = \"Claude 4 Sonnet\"\nurl = \"https://example.org\"\n",
    )
    .unwrap();
    assert!(run(&["keygen", "--out", "team"]).status.success());
    let out = run(&["pack", "results", "--agent", "agent.toml", "--key", "team.pem", "--out", "b.tar.gz"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(root.join("b.tar.gz").is_file());
}

/// Run by an unprivileged user (a maintainer's workstation, a Slurm job), the same limits
/// hold: a folder the experiment made unreadable hides nothing from the walk, and is
/// removed with the rest.
#[test]
fn an_unprivileged_runner_holds_a_run_to_the_same_limits() {
    use crate::sandbox::{as_user, hand_over, unprivileged};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let tasks = limited_task(root);
    let outputs = outputs(root);
    for gone in ["none/1", "none/2", "none/4", "none/5", "hints/1", "hints/2", "detailed/1", "detailed/2"] {
        fs::remove_dir_all(outputs.join("limited").join(gone)).unwrap();
    }
    let scratch = root.join("tmp");
    fs::create_dir_all(&scratch).unwrap();
    let uid = unprivileged();
    let exe = hand_over(root, uid);
    let out = as_user(Command::new("setpriv"), uid, &exe)
        .args(["evaluate", outputs.to_str().unwrap(), "--out", root.join("results").to_str().unwrap()])
        .args(["--tasks", tasks.to_str().unwrap(), "--jobs", "2"])
        .current_dir(root)
        .env("TMPDIR", &scratch)
        .env("HOME", root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let got = records(&root.join("results"));
    for (run, resource) in [("none/3", "processes"), ("detailed/3", "disk")] {
        let r = &got[&format!("limited/{run}")];
        assert_eq!(r["error_type"], json!(format!("resource_limit: {resource}")), "{run}: {r}");
    }
    let left: Vec<_> = fs::read_dir(&scratch).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "scratch left: {left:?}");
}

/// A patch may itself make folders deeper than a copy's bound (git applies paths of
/// thousands of characters): giving its working copy to the sandbox's user walks them
/// all, and the run comes to its verdict, never to `infra_error`.
#[test]
fn a_patch_that_makes_a_tree_deeper_than_a_copys_bound_is_judged() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let tasks = task_of(root, "deep", 60, "");
    let dir = root.join("outputs/deep/none/1");
    fs::create_dir_all(&dir).unwrap();
    let deep = "d/".repeat(400) + "f.txt";
    let patch = format!(
        "{}diff --git a/{deep} b/{deep}\nnew file mode 100644\n--- /dev/null\n+++ b/{deep}\n@@ -0,0 +1 @@\n+deep\n",
        agent_patch(OK)
    );
    fs::write(dir.join("patch.diff"), patch).unwrap();
    let scratch = root.join("tmp");
    fs::create_dir_all(&scratch).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rexbench"))
        .args(["evaluate", "outputs", "--out", "results", "--tasks", tasks.to_str().unwrap()])
        .current_dir(root)
        .env("TMPDIR", &scratch)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let got = records(&root.join("results"));
    assert_eq!(got["deep/none/1"]["outcome"], json!("success"), "{:?}", got["deep/none/1"]);
    let left: Vec<_> = fs::read_dir(&scratch).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "scratch left: {left:?}");
}
