//! Agent outputs, Harbor jobs and results folders are as hostile as uploaded bundles.
//! Each case leaves a trap where the runner reads (a link to a host file, `/dev/zero`,
//! a FIFO, a device, a file of 100 GiB) and checks that the command refuses it with its
//! own sentence, ends within seconds, stays within the bundle limits' memory, and that
//! no byte of the host file appears anywhere in what it wrote.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::evaluate::{copy, processes_running, records};
use crate::repo;

/// What a host file holds: it must never reach results or a bundle.
pub const SECRET: &str = "HOST-SECRET-7c1e0b52-do-not-publish";

/// How much memory a command may use: a bundle artifact (64 MiB) and change.
const MEMORY_LIMIT_MIB: i64 = 200;

struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs the runner with `args` in `dir`; fails the test if it is still running after
/// `limit` (and kills it), or if it has used more than the memory limit.
fn run_within(args: &[&str], dir: &Path, limit: Duration) -> Ran {
    run_within_tmp(args, dir, limit, &std::env::temp_dir())
}

/// [`run_within`], with its temporary folders (`TMPDIR`) in `tmp`.
fn run_within_tmp(args: &[&str], dir: &Path, limit: Duration, tmp: &Path) -> Ran {
    let logs = tempfile::tempdir().unwrap();
    let (out, err) = (logs.path().join("out"), logs.path().join("err"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_rexbench"))
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out).unwrap())
        .stderr(fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let status = wait_within(&mut child, limit, args);
    assert_memory_bounded();
    Ran { status, stdout: fs::read_to_string(out).unwrap(), stderr: fs::read_to_string(err).unwrap() }
}

/// Waits for the runner started with `args`; fails the test (and kills it) if it is
/// still running after `limit`.
pub fn wait_within(child: &mut std::process::Child, limit: Duration, args: &[&str]) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`rexbench {}` was still running after {limit:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The largest peak resident memory of any child this test waited for (nextest runs
/// each test in a process of its own).
fn assert_memory_bounded() {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    let mib = usage.max_rss() / 1024;
    assert!(mib < MEMORY_LIMIT_MIB, "a child used {mib} MiB, more than {MEMORY_LIMIT_MIB} MiB");
}

/// A host file outside every folder the runner is handed.
pub fn host_secret(root: &Path) -> PathBuf {
    let path = root.join("host").join("id_ed25519");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, format!("{SECRET}\n")).unwrap();
    path
}

/// No regular file under `dir` holds the secret (links are not followed: the trap
/// itself may be a link, which is not a copy). Bundles are searched uncompressed.
pub fn assert_secret_nowhere(dir: &Path) {
    if !dir.exists() {
        return;
    }
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let ty = entry.file_type().unwrap();
        let path = entry.path();
        if ty.is_dir() {
            if !path.ends_with("host") {
                assert_secret_nowhere(&path);
            }
        } else if ty.is_file() && entry.metadata().unwrap().len() <= 1 << 30 {
            // (Larger files are the tests' own sparse traps.)
            let mut bytes = fs::read(&path).unwrap();
            if bytes.starts_with(&[0x1f, 0x8b]) {
                let out = Command::new("gzip").arg("-dc").arg(&path).output().unwrap();
                bytes = out.stdout;
            }
            let found = bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes());
            assert!(!found, "{} holds the host file's bytes", path.display());
        }
    }
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// A character device standing for `/dev/zero` (major 1, minor 5), inside the folder.
fn mknod_zero(path: &Path) {
    assert!(Command::new("mknod").arg(path).args(["c", "1", "5"]).status().unwrap().success());
}

fn replace_with_link(path: &Path, target: &Path) {
    let _ = fs::remove_file(path);
    symlink(target, path).unwrap();
}

/// Sets each trap in turn at `path`: a link to the host file, a link to `/dev/zero`, a
/// FIFO, a device standing for `/dev/zero`, a sparse file of 100 GiB. Each must be
/// refused (`refused` runs the command and returns what it said) with its sentence:
/// `prefix`, the file as `shown`, and why. `original` is put back at the end.
fn each_trap(
    path: &Path,
    shown: &str,
    prefix: &str,
    folder: &str,
    secret: &Path,
    original: &[u8],
    mut refused: impl FnMut() -> String,
) {
    let start = format!("{prefix}`{shown}` is");
    let cases: [(&dyn Fn(), String); 5] = [
        (
            &|| replace_with_link(path, secret),
            format!(
                "{start} a symbolic link to the absolute path `{}`, outside the {folder}: only relative links \
                 that stay inside it are followed",
                secret.display()
            ),
        ),
        // Read for ever if it were opened; it is outside the folder, so it never is.
        (
            &|| replace_with_link(path, Path::new("/dev/zero")),
            format!("{start} a symbolic link to the absolute path `/dev/zero`, outside the {folder}"),
        ),
        (&|| mkfifo(path), format!("{start} a FIFO (named pipe), not a regular file")),
        (&|| mknod_zero(path), format!("{start} a character device, not a regular file")),
        (
            &|| fs::File::create(path).unwrap().set_len(100 << 30).unwrap(),
            format!(
                "{prefix}`{shown}` holds 107374182400 bytes, more than the 64 MiB a bundle artifact may hold"
            ),
        ),
    ];
    for (set, sentence) in cases {
        let _ = fs::remove_file(path);
        set();
        let err = refused();
        assert!(err.contains(&sentence), "expected: {sentence}\ngot: {err}");
    }
    fs::remove_file(path).unwrap();
    fs::write(path, original).unwrap();
}

// ------------------------------------------------------------------------ evaluate

/// The example outputs, copied: `outputs/wordfreq/none/1/patch.diff` and the rest.
fn example_outputs(root: &Path) -> PathBuf {
    let outputs = root.join("outputs");
    copy(&repo().join("tasks/examples/outputs"), &outputs);
    outputs
}

fn evaluate_refused(root: &Path, outputs: &Path, extra: &[&str]) -> String {
    let results = root.join("results");
    let mut args = vec![
        "evaluate",
        outputs.to_str().unwrap(),
        "--out",
        results.to_str().unwrap(),
        "--gold",
        "tasks/examples/gold",
    ];
    args.extend(extra);
    let ran = run_within(&args, &repo(), Duration::from_secs(30));
    assert_eq!(ran.status.code(), Some(2), "{}{}", ran.stdout, ran.stderr);
    assert!(!results.exists(), "evaluate stops before anything is written");
    assert_secret_nowhere(root);
    ran.stderr
}

#[test]
fn evaluate_refuses_links_out_devices_fifos_and_huge_files_before_writing_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let secret = host_secret(root);
    let outputs = example_outputs(root);
    let patch = outputs.join("wordfreq/none/1/patch.diff");
    let original = fs::read(&patch).unwrap();
    let shown = patch.display().to_string();

    let outputs_shown = outputs.clone();
    each_trap(&patch, &shown, "run wordfreq/none/1: ", "outputs folder", &secret, &original, || {
        evaluate_refused(root, &outputs_shown, &[])
    });
    replace_with_link(&patch, Path::new("../../../../host/id_ed25519"));
    let err = evaluate_refused(root, &outputs, &[]);
    assert!(
        err.contains(&format!(
            "run wordfreq/none/1: `{shown}` is a symbolic link to `../../../../host/id_ed25519`, a path outside \
             the outputs folder"
        )),
        "{err}"
    );
    // The Slurm executor reads the outputs the same way, before it submits anything.
    fs::remove_file(&patch).unwrap();
    mkfifo(&patch);
    let err = evaluate_refused(root, &outputs, &["--executor", "slurm"]);
    assert!(
        err.contains(&format!("run wordfreq/none/1: `{shown}` is a FIFO (named pipe), not a regular file")),
        "{err}"
    );
    fs::remove_file(&patch).unwrap();
    fs::write(&patch, &original).unwrap();

    // Every file of a run, in both layouts, and the folders on the way.
    let trajectory = outputs.join("wordfreq/hints/1/trajectory.json");
    let _ = fs::remove_file(&trajectory);
    mkfifo(&trajectory);
    let err = evaluate_refused(root, &outputs, &[]);
    assert!(err.contains("run wordfreq/hints/1: `") && err.contains("trajectory.json` is a FIFO"), "{err}");
    fs::remove_file(&trajectory).unwrap();

    let cost = outputs.join("wordfreq/hints/1/cost.json");
    let kept_cost = fs::read(&cost).ok();
    replace_with_link(&cost, &secret);
    let err = evaluate_refused(root, &outputs, &[]);
    assert!(
        err.contains("run wordfreq/hints/1: `") && err.contains("cost.json` is a symbolic link"),
        "{err}"
    );
    fs::remove_file(&cost).unwrap();
    if let Some(bytes) = kept_cost {
        fs::write(&cost, bytes).unwrap();
    }

    let log = outputs.join("csvstats/example-agent_default_run1.log");
    replace_with_link(&log, &secret);
    let err = evaluate_refused(root, &outputs, &[]);
    assert!(err.contains("run csvstats/none/1: `") && err.contains("run1.log` is a symbolic link"), "{err}");
    fs::remove_file(&log).unwrap();

    let elsewhere = root.join("host/hints");
    copy(&outputs.join("wordfreq/hints"), &elsewhere);
    fs::write(elsewhere.join("1/agent_log.txt"), SECRET).unwrap();
    fs::remove_dir_all(outputs.join("wordfreq/hints")).unwrap();
    symlink(&elsewhere, outputs.join("wordfreq/hints")).unwrap();
    let err = evaluate_refused(root, &outputs, &[]);
    assert!(err.contains("wordfreq/hints` is a symbolic link to the absolute path"), "{err}");
    fs::remove_file(outputs.join("wordfreq/hints")).unwrap();

    // A link that stays inside the folder is followed: the same run, evaluated.
    fs::create_dir_all(outputs.join("wordfreq/detailed/3")).unwrap();
    fs::write(outputs.join("wordfreq/detailed/3/patch.diff"), &original).unwrap();
    replace_with_link(&patch, Path::new("../../detailed/3/patch.diff"));
    let results = root.join("results");
    let ran = run_within(
        &[
            "evaluate",
            outputs.to_str().unwrap(),
            "--out",
            results.to_str().unwrap(),
            "--gold",
            "tasks/examples/gold",
        ],
        &repo(),
        Duration::from_secs(60),
    );
    assert!(ran.status.success(), "{}{}", ran.stdout, ran.stderr);
    let got = records(&results);
    assert_eq!(got["wordfreq/none/1"]["outcome"], "success");
    assert_eq!(fs::read(results.join("runs/wordfreq/none/1/patch.diff")).unwrap(), original);
    assert_secret_nowhere(root);
}

/// A task whose check reads `result.txt` from the working copy, and whose codebase
/// runs whatever `agent.sh` the patch adds.
pub fn reading_task(root: &Path) -> PathBuf {
    task_of(root, "leaky", 20, "")
}

/// A task `id` whose command runs the patch's `agent.sh` and whose check reads
/// `ACC: 1.0` from `result.txt`, with `more` at the end of its card.
pub fn task_of(root: &Path, id: &str, timeout_s: u32, more: &str) -> PathBuf {
    let tasks = root.join("tasks");
    let task = tasks.join("examples").join(id);
    fs::create_dir_all(task.join("codebase")).unwrap();
    fs::write(
        task.join("task.toml"),
        format!(
            r#"id = "{id}"
name = "Reads a result file"
extension_type = "Algorithm"
summary = "Writes ACC to result.txt."

[evaluation]
command = ["sh", "run.sh"]
timeout_s = {timeout_s}
codebase = "codebase"

[[check.metrics]]
name = "acc"
file = "result.txt"
regex = 'ACC: (\S+)'
equals = 1.0
{more}"#
        ),
    )
    .unwrap();
    fs::write(task.join("README.md"), "# Reads a result file\n").unwrap();
    fs::write(task.join("codebase/run.sh"), "sh agent.sh\n").unwrap();
    tasks
}

/// A patch that adds `agent.sh` with `script` as its only line.
pub fn agent_patch(script: &str) -> String {
    format!(
        "diff --git a/agent.sh b/agent.sh\nnew file mode 100644\n--- /dev/null\n+++ b/agent.sh\n@@ -0,0 +1 @@\n+{script}\n"
    )
}

#[test]
fn what_an_experiment_leaves_is_read_inside_its_working_copy_only() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let secret = host_secret(root);
    let tasks = reading_task(root);
    let cases = [
        // The experiment points its result file at a host file.
        (1, format!("ln -s {} result.txt", secret.display())),
        (2, "ln -s ../../../../../../../../etc/passwd result.txt".to_owned()),
        (3, "mkfifo result.txt".to_owned()),
        (
            4,
            format!(
                "mkdir out && ln -s {} out/dir && ln -s out/dir/id_ed25519 result.txt",
                secret.parent().unwrap().display()
            ),
        ),
        // A link that stays inside is followed, as Python's open() would.
        (5, "echo 'ACC: 1.0' > real.txt && ln -s real.txt result.txt".to_owned()),
    ];
    let patches: Vec<(u32, String)> = cases.iter().map(|(a, script)| (*a, agent_patch(script))).collect();
    let results = evaluate_leaky(root, &tasks, &patches);
    let got = records(&results);
    let log =
        |a: u32| fs::read_to_string(results.join(format!("runs/leaky/none/{a}/checker_log.txt"))).unwrap();
    for attempt in 1..=4 {
        // The agent's doing, not the infrastructure's: a failed run, never one left out of the rates.
        assert_eq!(got[&format!("leaky/none/{attempt}")]["outcome"], "wrong_result", "{}", log(attempt));
    }
    assert!(
        log(1).contains(&format!(
            "acc: cannot read result.txt: `result.txt` is a symbolic link to the absolute path `{}`, outside the \
             working copy",
            secret.display()
        )),
        "{}",
        log(1)
    );
    assert!(log(2).contains("`result.txt` is a symbolic link to `../../../../../../../../etc/passwd`, a path outside the working copy"), "{}", log(2));
    assert!(
        log(3)
            .contains("acc: cannot read result.txt: `result.txt` is a FIFO (named pipe), not a regular file"),
        "{}",
        log(3)
    );
    assert!(
        log(4).contains(
            "`result.txt` is a symbolic link to `out/dir/id_ed25519`, a path outside the working copy"
        ),
        "{}",
        log(4)
    );
    assert_eq!(got["leaky/none/5"]["outcome"], "success", "{}", log(5));
    assert_secret_nowhere(root);
    assert_passwd_nowhere(&results);
}

/// Evaluates each `(attempt, patch)` as a run of the task `leaky` (in `tasks`), with
/// `root`'s outputs; the results folder. The evaluation itself must succeed.
fn evaluate_leaky(root: &Path, tasks: &Path, patches: &[(u32, String)]) -> PathBuf {
    let outputs = root.join("outputs");
    for (attempt, patch) in patches {
        let dir = outputs.join(format!("leaky/none/{attempt}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("patch.diff"), patch).unwrap();
    }
    let results = root.join("results");
    let ran = run_within(
        &[
            "evaluate",
            outputs.to_str().unwrap(),
            "--out",
            results.to_str().unwrap(),
            "--tasks",
            tasks.to_str().unwrap(),
        ],
        root,
        Duration::from_secs(120),
    );
    assert!(ran.status.success(), "{}{}", ran.stdout, ran.stderr);
    results
}

/// No file of `results` holds the machine's `/etc/passwd` (its first line).
fn assert_passwd_nowhere(results: &Path) {
    let passwd = fs::read_to_string("/etc/passwd").unwrap();
    let first = passwd.lines().next().unwrap();
    for entry in walk(results) {
        assert!(!fs::read_to_string(&entry).unwrap_or_default().contains(first), "{}", entry.display());
    }
}

/// Patches whose headers name a host file, for `git apply` (run on the host, outside any
/// repository, with the runner's rights) to copy into the working copy: each is not
/// applied, with a sentence naming its line, and nothing of the file reaches the results.
#[test]
fn a_patch_whose_headers_name_a_path_outside_the_codebase_is_not_applied() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let secret = host_secret(root);
    let tasks = reading_task(root);
    // Had it been applied, the run would print the file and pass.
    let run = agent_patch("cat stolen; echo 'ACC: 1.0' > result.txt");
    let steal =
        |header: &str| format!("diff --git a/stolen b/stolen\nsimilarity index 100%\n{header}\n{run}");
    // The working copy's depth below `root` is the runner's; enough `..` reach `/` from any.
    let up = "../".repeat(40);
    let cases = [
        (1, steal(&format!("copy from {}\ncopy to stolen", secret.display()))),
        (2, steal(&format!("copy from {up}{}\ncopy to stolen", secret.display()))),
        (3, steal(&format!("copy from \"{}\"\ncopy to stolen", secret.display()))),
        (4, steal(&format!("rename from {}\nrename to stolen", secret.display()))),
        (5, format!("--- a/{up}etc/passwd\n+++ b/stolen\n@@ -1 +1 @@\n-x\n+y\n{run}")),
    ];
    let results = evaluate_leaky(root, &tasks, &cases);
    let got = records(&results);
    for (attempt, _) in &cases {
        let run = format!("leaky/none/{attempt}");
        assert_eq!(got[&run]["outcome"], "patch_failed", "{run}");
        let why = fs::read_to_string(results.join(format!("runs/{run}/x-apply.txt"))).unwrap();
        assert!(why.starts_with("rexbench: not applied: line "), "{run}: {why}");
        assert!(why.contains("a path outside the codebase"), "{run}: {why}");
    }
    assert_secret_nowhere(root);
    assert_passwd_nowhere(&results);
}

/// A task whose check runs a command: it reads a copy of the working copy, made after
/// the experiment, whatever the experiment left there.
fn checked_by_a_command(root: &Path) -> PathBuf {
    let tasks = root.join("tasks");
    let task = tasks.join("examples/shaped");
    fs::create_dir_all(task.join("codebase")).unwrap();
    fs::write(
        task.join("task.toml"),
        r#"id = "shaped"
name = "Checked by a command"
extension_type = "Algorithm"
summary = "Writes ACC to result.txt."

[evaluation]
command = ["sh", "run.sh"]
timeout_s = 300
codebase = "codebase"

[check.external]
command = ["sh", "-c", "grep -q 'ACC: 1.0' result.txt"]
"#,
    )
    .unwrap();
    fs::write(task.join("README.md"), "# Checked by a command\n").unwrap();
    fs::write(task.join("codebase/run.sh"), "sh agent.sh\n").unwrap();
    tasks
}

/// What a working copy holds when its experiment ends is the patch's to decide: a
/// folder 20,000 deep (past every path a system call takes, and deeper than a recursive
/// copy or removal has stack for), folders and a file mode 000. The run is recorded, its
/// check failed with the bound it went past; the honest run beside it is judged as
/// ever; the runner lives, and leaves no scratch folder behind.
#[test]
fn a_working_copy_of_any_depth_or_mode_is_judged_and_removed() {
    // Removed without recursion, whatever the runner left in it.
    let tmp = benchmark::tree::Scratch::new("rexbench-shaped-").unwrap();
    let root = tmp.path();
    let tasks = checked_by_a_command(root);
    let outputs = root.join("outputs");
    let hostile = "python3 -c \"import os; [(os.mkdir('d'), os.chdir('d')) for _ in range(20000)]\" && \
                   mkdir -p locked/in && echo x > locked/in/f && chmod 000 locked/in locked && \
                   echo s > sealed.txt && chmod 000 sealed.txt && echo 'ACC: 1.0' > result.txt";
    for (attempt, script) in [(1, hostile), (2, "echo 'ACC: 1.0' > result.txt")] {
        let dir = outputs.join(format!("shaped/none/{attempt}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("patch.diff"), agent_patch(script)).unwrap();
    }
    let (results, scratch) = (root.join("results"), root.join("tmp"));
    fs::create_dir_all(&scratch).unwrap();
    let args = [
        "evaluate",
        outputs.to_str().unwrap(),
        "--out",
        results.to_str().unwrap(),
        "--tasks",
        tasks.to_str().unwrap(),
        "--jobs",
        "2",
    ];
    let ran = run_within_tmp(&args, root, Duration::from_secs(600), &scratch);
    let said = format!("{}{}", ran.stdout, ran.stderr);
    assert_eq!(ran.status.code(), Some(0), "{}: {said}", ran.status);
    assert!(said.starts_with("evaluated 2 runs ("), "{said}");
    let got = records(&results);
    let log =
        |a: u32| fs::read_to_string(results.join(format!("runs/shaped/none/{a}/checker_log.txt"))).unwrap();
    // The patch's doing, not the infrastructure's: a failed run, never one left out of the rates.
    assert_eq!(got["shaped/none/1"]["outcome"], "wrong_result", "{}", log(1));
    assert!(
        log(1).contains(
            "the working copy cannot be copied for the check: past the tree's bound of 256 folders deep (depth) \
             at `d/d/d/d/d/d/d/d/…/d/d/d/d (257 deep)`: FAIL"
        ),
        "{}",
        log(1)
    );
    assert_eq!(got["shaped/none/2"]["outcome"], "success", "{}", log(2));
    let left: Vec<_> = fs::read_dir(&scratch).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(left.is_empty(), "scratch folders were left: {left:?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn sigterm_ends_an_evaluation_whatever_its_experiment_waits_on() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let tasks = reading_task(root);
    let outputs = root.join("outputs");
    fs::create_dir_all(outputs.join("leaky/none/1")).unwrap();
    // The experiment blocks reading a FIFO nobody writes to.
    fs::write(outputs.join("leaky/none/1/patch.diff"), agent_patch("mkfifo wait && cat wait")).unwrap();
    let results = root.join("results");
    let args = ["evaluate", outputs.to_str().unwrap(), "--out", results.to_str().unwrap()];
    let tasks_arg = ["--tasks", tasks.to_str().unwrap()];
    let args: Vec<&str> = args.iter().chain(&tasks_arg).copied().collect();
    let status = terminate_after(&args, root, || {
        let deadline = Instant::now() + Duration::from_secs(20);
        while processes_running(&["cat", "wait"]).is_empty() {
            assert!(Instant::now() < deadline, "the experiment never started");
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    assert_eq!(status.code(), Some(130));
    assert!(processes_running(&["cat", "wait"]).is_empty(), "the experiment outlived the runner");
    assert!(!results.join("runs/leaky/none/1/run.json").exists(), "an interrupted run is not recorded");
}

// ------------------------------------------------------------------------ import-harbor

const JOB: &str = "2026-02-25__10-06-58";
const TRIAL: &str = "rexbench__cogs__Qm3xT9a";

fn harbor_job(root: &Path) -> PathBuf {
    let job = root.join("jobs").join(JOB);
    copy(&repo().join("runner/tests/fixtures/harbor").join(JOB), &job);
    job
}

fn import_refused(root: &Path, job: &Path) -> String {
    let out = root.join("imported");
    let ran = run_within(
        &["import-harbor", job.to_str().unwrap(), "--out", out.to_str().unwrap(), "--hint", "none"],
        &repo(),
        Duration::from_secs(30),
    );
    assert_eq!(ran.status.code(), Some(2), "{}{}", ran.stdout, ran.stderr);
    assert!(!out.exists(), "nothing is written");
    let leftovers: Vec<_> = fs::read_dir(root).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(!leftovers.iter().any(|n| n.to_string_lossy().starts_with(".rexbench-import-")), "{leftovers:?}");
    assert_secret_nowhere(root);
    ran.stderr
}

#[test]
fn import_harbor_refuses_what_the_agent_left_in_its_job_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let secret = host_secret(root);
    let job = harbor_job(root);
    let trial = job.join(TRIAL);

    // The folder the agent fills inside its container, where the adapter finds the patch.
    let planted = trial.join("artifacts/logs/artifacts/patch.diff");
    fs::create_dir_all(planted.parent().unwrap()).unwrap();
    fs::remove_dir_all(trial.join("artifacts/stage")).unwrap();
    let shown = planted.display().to_string();
    each_trap(&planted, &shown, "rexbench: ", "Harbor job folder", &secret, b"--- a/x\n+++ b/x\n", || {
        import_refused(root, &job)
    });

    for file in [
        "trial.log",
        "exception.txt",
        "verifier/test-stdout.txt",
        "agent/openhands.txt",
        "agent/trajectory.json",
    ] {
        let path = trial.join(file);
        let kept = fs::read(&path).ok();
        let up = "../".repeat(3 + file.matches('/').count());
        replace_with_link(&path, &PathBuf::from(format!("{up}host/id_ed25519")));
        let err = import_refused(root, &job);
        assert!(
            err.contains(&format!("{file}` is a symbolic link to `"))
                && err.contains("outside the Harbor job folder"),
            "{file}: {err}"
        );
        fs::remove_file(&path).unwrap();
        mkfifo(&path);
        let err = import_refused(root, &job);
        assert!(
            err.contains(&format!("{file}` is a FIFO (named pipe), not a regular file")),
            "{file}: {err}"
        );
        fs::remove_file(&path).unwrap();
        if let Some(bytes) = kept {
            fs::write(&path, bytes).unwrap();
        }
    }

    // A trial folder that is a link out of the job.
    let moved = root.join("host").join(TRIAL);
    fs::rename(&trial, &moved).unwrap();
    symlink(&moved, &trial).unwrap();
    let err = import_refused(root, &job);
    assert!(err.contains(&format!("{TRIAL}` is a symbolic link to the absolute path")), "{err}");
    fs::remove_file(&trial).unwrap();
    fs::rename(&moved, &trial).unwrap();

    // With every trap gone, the same job imports.
    let out = root.join("imported");
    let ran = run_within(
        &["import-harbor", job.to_str().unwrap(), "--out", out.to_str().unwrap(), "--hint", "none"],
        &repo(),
        Duration::from_secs(30),
    );
    assert!(ran.status.success(), "{}{}", ran.stdout, ran.stderr);
    assert_secret_nowhere(root);
}

// ------------------------------------------------------------------------ pack

/// The example results and a key, ready to pack from `root`.
fn packable(root: &Path) -> PathBuf {
    let results = root.join("results");
    copy(&repo().join("tasks/examples/results"), &results);
    let ran = run_within(&["keygen", "--out", "k"], root, Duration::from_secs(10));
    assert!(ran.status.success());
    fs::write(root.join("agent.toml"), "id = \"example-agent\"\nframework = \"x\"\nmodel = \"y\"\n").unwrap();
    results
}

fn pack_args() -> Vec<&'static str> {
    vec!["pack", "results", "--agent", "agent.toml", "--key", "k.pem", "--out", "b.tar.gz"]
}

fn pack_refused(root: &Path) -> String {
    let ran = run_within(&pack_args(), root, Duration::from_secs(30));
    assert_eq!(ran.status.code(), Some(2), "{}{}", ran.stdout, ran.stderr);
    let names: Vec<String> =
        fs::read_dir(root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(!names.iter().any(|n| n.ends_with(".tar.gz") || n.starts_with(".tmp")), "{names:?}");
    assert_secret_nowhere(root);
    ran.stderr
}

#[test]
fn pack_never_signs_bytes_from_outside_the_results_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let secret = host_secret(root);
    let results = packable(root);
    let stdout = results.join("runs/wordfreq/none/1/stdout.txt");
    let original = fs::read(&stdout).unwrap();

    each_trap(
        &stdout,
        "results/runs/wordfreq/none/1/stdout.txt",
        "rexbench: ",
        "results folder",
        &secret,
        &original,
        || pack_refused(root),
    );

    let run_json = results.join("runs/wordfreq/none/1/run.json");
    let kept = fs::read(&run_json).unwrap();
    mkfifo(&root.join("fifo"));
    replace_with_link(&run_json, Path::new("../../../../../fifo"));
    let err = pack_refused(root);
    assert!(
        err.contains(
            "run.json` is a symbolic link to `../../../../../fifo`, a path outside the results folder"
        ),
        "{err}"
    );
    fs::remove_file(&run_json).unwrap();
    fs::write(&run_json, &kept).unwrap();

    // A run folder that is a link out of the results.
    let moved = root.join("host/1");
    copy(&results.join("runs/wordfreq/none/1"), &moved);
    fs::write(moved.join("x-leak.txt"), SECRET).unwrap();
    fs::remove_dir_all(results.join("runs/wordfreq/none/1")).unwrap();
    symlink(&moved, results.join("runs/wordfreq/none/1")).unwrap();
    let err = pack_refused(root);
    assert!(err.contains("runs/wordfreq/none/1` is a symbolic link to the absolute path"), "{err}");
    fs::remove_file(results.join("runs/wordfreq/none/1")).unwrap();
    copy(&moved, &results.join("runs/wordfreq/none/1"));
    fs::remove_file(results.join("runs/wordfreq/none/1/x-leak.txt")).unwrap();

    let ran = run_within(&pack_args(), root, Duration::from_secs(30));
    assert!(ran.status.success(), "{}{}", ran.stdout, ran.stderr);
    assert_secret_nowhere(root);
}

#[test]
fn sigterm_ends_import_and_pack_with_all_or_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let job = harbor_job(root);
    // Large enough that the import is still reading when the signal comes, most times.
    for n in 0..12 {
        fs::write(job.join(TRIAL).join(format!("agent/log{n}.txt")), "x".repeat(5 << 20)).unwrap();
    }
    let results = packable(root);
    for delay_ms in [20u64, 60, 150] {
        let out = root.join(format!("imported-{delay_ms}"));
        let import = [
            "import-harbor",
            job.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--hint",
            "none",
            "--tasks",
        ];
        let tasks = repo().join("tasks");
        let mut args: Vec<&str> = import.to_vec();
        args.push(tasks.to_str().unwrap());
        let status = terminate_after(&args, root, || std::thread::sleep(Duration::from_millis(delay_ms)));
        match status.code() {
            Some(0) => assert!(out.join("evaluation.json").is_file()),
            // 130: stopped by its handler; none: killed before it set one up.
            Some(130) | None => assert!(!out.exists(), "an interrupted import writes nothing"),
            other => panic!("import-harbor ended with {other:?}"),
        }
        let leftovers: Vec<_> = fs::read_dir(root).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(
            !leftovers.iter().any(|n| n.to_string_lossy().starts_with(".rexbench-import-")),
            "{leftovers:?}"
        );

        let status =
            terminate_after(&pack_args(), root, || std::thread::sleep(Duration::from_millis(delay_ms)));
        let names: Vec<String> = fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.starts_with(".tmp")), "{names:?}");
        match status.code() {
            Some(0) => assert!(root.join("b.tar.gz").is_file()),
            Some(130) | None => assert!(!root.join("b.tar.gz").exists()),
            other => panic!("pack ended with {other:?}"),
        }
        let _ = fs::remove_file(root.join("b.tar.gz"));
    }
    assert!(results.is_dir());
}

/// Starts the runner in `dir`, sends it SIGTERM once `ready` returns, and waits at
/// most 5 s for it to end.
fn terminate_after(args: &[&str], dir: &Path, ready: impl FnOnce()) -> ExitStatus {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rexbench"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ready();
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    wait_within(&mut child, Duration::from_secs(5), args)
}
