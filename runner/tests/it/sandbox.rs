//! The sandbox every experiment runs in: a hostile patch, run as `evaluate` runs it
//! under each executor here (local, a container, Slurm's in `slurm.rs`), sees nothing
//! of the machine. Honest runs keep their verdicts and provenance: every other test of
//! `evaluate` runs sandboxed (`evaluate.rs`: the committed example results are what a
//! sandboxed evaluation gives; `provenance.rs`: the honest/hacking suite).

use std::fs;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::evaluate::records;
use crate::hostile::{SECRET, agent_patch, assert_secret_nowhere, host_secret, reading_task};
use crate::{repo, stderr, stdout};

/// A variable set in the runner's environment, as a maintainer's token would be.
pub const ENV_MARKER: &str = "sandbox-env-marker-5d1f";

/// What a hostile patch reaches for, and where to look afterwards.
pub struct Hostile {
    pub outputs: PathBuf,
    pub tasks: PathBuf,
    /// A file outside the working copy the patch tries to write.
    pub outside: PathBuf,
    /// A listener on 127.0.0.1 the patch tries to connect to.
    pub listener: TcpListener,
}

/// The `leaky` task's outputs: one run whose patch prints every process's environment
/// and command line, a key file, the gold and its own uid, writes outside its working
/// copy and connects to 127.0.0.1; then writes the right result, so that its verdict
/// is a success whatever it could see.
pub fn hostile(root: &Path) -> Hostile {
    let key = host_secret(root);
    let tasks = reading_task(root);
    let outside = root.join("host").join("written-by-the-patch");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let gold = repo().join("tasks/examples/gold/csvstats/gold.toml");
    let script = [
        "echo uid=$(id -u)".to_owned(),
        "echo processes=$(ls -d /proc/[0-9]* | wc -l)".to_owned(),
        "for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null | tr '\\000' '\\n'; done".to_owned(),
        format!("cat {} 2>&1", key.display()),
        format!("cat {} 2>&1", gold.display()),
        "cat $HOME/../../../../../../root/.ssh/id_ed25519 2>&1".to_owned(),
        format!("echo pwned > {} 2>&1", outside.display()),
        // Descriptors the runner's caller left open (on the gold, and on a file outside).
        "cat <&7 2>&1; echo pwned >&8 2>&1".to_owned(),
        format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('connected')\" 2>&1 | tail -1"
        ),
        "echo 'ACC: 1.0' > result.txt".to_owned(),
    ]
    .join("; ");
    let outputs = root.join("outputs");
    let dir = outputs.join("leaky/none/1");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("patch.diff"), agent_patch(&script)).unwrap();
    Hostile { outputs, tasks, outside, listener }
}

/// Nothing the patch reached for was within reach, and the run is judged as before.
pub fn assert_confined(h: &Hostile, results: &Path, root: &Path, uid: &str) {
    let run = results.join("runs/leaky/none/1");
    let said = fs::read_to_string(run.join("stdout.txt")).unwrap();
    assert!(said.contains(&format!("uid={uid}\n")), "the experiment's uid: {said}");
    assert!(!said.contains(ENV_MARKER), "the runner's environment reached the experiment: {said}");
    assert!(!said.contains(SECRET), "a key file reached the experiment: {said}");
    // The gold's content (the patch names its path, which its own error repeats).
    for gold in ["expected = 7.5", "evaluate.sh"] {
        assert!(!said.contains(gold), "{gold:?} reached the experiment: {said}");
    }
    // The runner's command line.
    for runner in ["--gold", "--tasks"] {
        assert!(!said.contains(runner), "the runner's command line reached the experiment: {said}");
    }
    assert!(!said.contains("connected"), "the experiment reached 127.0.0.1: {said}");
    assert!(
        matches!(h.listener.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock),
        "the listener on 127.0.0.1 was connected to"
    );
    assert!(!h.outside.exists(), "the experiment wrote outside its working copy");
    let inherited = std::fs::read_to_string(root.join("host").join("inherited")).unwrap_or_default();
    assert!(!inherited.contains("pwned"), "the experiment wrote through a descriptor it inherited");
    let got = records(results);
    assert_eq!(got["leaky/none/1"]["outcome"], json!("success"), "{:?}", got["leaky/none/1"]);
    assert_secret_nowhere(root);
}

#[test]
fn a_hostile_patch_sees_nothing_of_the_machine_under_the_local_executor() {
    let tmp = tempfile::tempdir().unwrap();
    let h = hostile(tmp.path());
    let results = tmp.path().join("results");
    let out = evaluate_env(&h, &results, &[]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let said = fs::read_to_string(results.join("runs/leaky/none/1/stdout.txt")).unwrap();
    // Its own PID namespace: bubblewrap's first process and the experiment's own.
    let seen: usize =
        said.lines().find_map(|l| l.strip_prefix("processes=")).unwrap().trim().parse().unwrap();
    assert!(seen <= 6, "the experiment saw {seen} processes: {said}");
    assert_confined(&h, &results, tmp.path(), "65534");
    // The provenance record begins with the task's command, not with the sandbox.
    let record: serde_json::Value =
        serde_json::from_slice(&fs::read(results.join("runs/leaky/none/1/x-provenance.json")).unwrap())
            .unwrap();
    assert!(record["tracer"].is_string(), "{record}");
    let first = &record["processes"][0];
    assert_eq!(first["argv"], json!(["sh", "run.sh"]), "{record}");
    assert_eq!(first["parent"], json!(null));
    assert_eq!(first["exit"], json!("exit 0"), "{record}");
    let text = record.to_string();
    assert!(!text.contains("bwrap") && !text.contains("setpriv"), "{text}");

    // Unsandboxed (one's own agent), the same patch reaches what it reached before: the
    // test can fail.
    let results = tmp.path().join("unsandboxed");
    let out = evaluate_env(&h, &results, &["--unsandboxed"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let said = fs::read_to_string(results.join("runs/leaky/none/1/stdout.txt")).unwrap();
    assert!(said.contains(ENV_MARKER) && said.contains(SECRET) && said.contains("connected"), "{said}");
    assert!(h.outside.exists());
    fs::remove_file(&h.outside).unwrap();
}

/// `evaluate` of the hostile outputs, with a variable in the runner's environment as a
/// maintainer's token would be.
fn evaluate_env(h: &Hostile, results: &Path, more: &[&str]) -> std::process::Output {
    let mut args = vec!["--tasks", h.tasks.to_str().unwrap()];
    args.extend(more);
    evaluate_with_env(&h.outputs, results, &args)
}

fn evaluate_with_env(outputs: &Path, results: &Path, more: &[&str]) -> std::process::Output {
    let root = results.parent().unwrap();
    let scratch = root.join("tmp");
    fs::create_dir_all(&scratch).unwrap();
    // Started with descriptors open that its caller did not mean it to hand on, as a CI
    // job or a wrapper script leaves them: 7 on the gold, 8 on a file outside.
    let gold = repo().join("tasks/examples/gold/csvstats/gold.toml");
    let inherited = root.join("host").join("inherited");
    let open = format!("exec 7<'{}' 8>>'{}'; exec \"$0\" \"$@\"", gold.display(), inherited.display());
    Command::new("sh")
        .args(["-c", &open, env!("CARGO_BIN_EXE_rexbench")])
        .args(["evaluate", outputs.to_str().unwrap(), "--out", results.to_str().unwrap()])
        .args(["--gold", "tasks/examples/gold"])
        .args(more)
        .current_dir(repo())
        .env("TMPDIR", &scratch)
        .env("SANDBOX_TEST_MARKER", ENV_MARKER)
        .output()
        .unwrap()
}

/// A root filesystem for podman of mount points alone: the system comes in read-only
/// as volumes, as the runner's README shows.
fn rootfs(root: &Path) -> PathBuf {
    let dir = root.join("rootfs");
    for d in ["usr", "etc", "tmp", "proc", "dev", "sys"] {
        fs::create_dir_all(dir.join(d)).unwrap();
    }
    for (link, to) in [("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64"), ("sbin", "usr/sbin")] {
        std::os::unix::fs::symlink(to, dir.join(link)).unwrap();
    }
    dir
}

/// podman's sandboxing flags, as `lint_container` asks them, with the limits this
/// machine's nested runc can set, on the storage every test here uses (vfs: the image
/// test's).
pub fn podman_template(rootfs: &Path) -> String {
    format!(
        "podman --storage-driver=vfs run --rm --name {{name}} --user 65534:65534 --network none --read-only --cap-drop ALL \
         --security-opt no-new-privileges --ulimit nofile=1024:1024 --ulimit nproc=1000:1000 \
         -v /usr:/usr:ro -v {{workdir}}:{{workdir}} -w {{workdir}} --rootfs {} {{command}}",
        rootfs.display()
    )
}

#[test]
fn a_hostile_patch_sees_nothing_of_the_machine_in_a_container() {
    let tmp = tempfile::tempdir().unwrap();
    let h = hostile(tmp.path());
    let template = podman_template(&rootfs(tmp.path()));
    let results = tmp.path().join("results");
    let out = evaluate_env(&h, &results, &["--container", &template]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert_confined(&h, &results, tmp.path(), "65534");

    // A template that leaves the network and the user as they are is refused before
    // anything runs, naming what it lacks.
    let loose = template.replace("--user 65534:65534 ", "").replace("--network none ", "");
    let results = tmp.path().join("loose");
    let out = evaluate_env(&h, &results, &["--container", &loose]);
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(said.contains("does not sandbox the experiment") && said.contains("--network none"), "{said}");
    assert!(said.contains("--user"), "{said}");
    assert!(!results.exists(), "a refused evaluation wrote {}", results.display());
}

#[test]
fn reproduce_never_runs_unsandboxed_and_a_sandbox_holds_nothing_private() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rexbench"))
        .args(["reproduce", "--server", "http://127.0.0.1:9", "--token", "t", "--key", "k.pem"])
        .args(["--out", tmp.path().join("r").to_str().unwrap(), "--unsandboxed"])
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("reproduce never runs unsandboxed"), "{}", stderr(&out));
    let h = hostile(tmp.path());
    for (flag, value, said) in [
        ("--sandbox-ro", repo().join("tasks/examples").display().to_string(), "overlaps"),
        ("--sandbox-ro", "/".to_owned(), "root"),
        ("--sandbox-env", "REXBENCH_ADMIN_TOKEN".to_owned(), "REXBENCH_"),
        ("--sandbox-dev", "/etc/shadow".to_owned(), "/dev"),
    ] {
        let results = tmp.path().join("results");
        let out = evaluate_env(&h, &results, &[flag, &value]);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {}", stderr(&out));
        assert!(stderr(&out).contains(said), "{flag} {value}: {}", stderr(&out));
        assert!(!results.exists());
    }
    // Without a sandbox to be had (no bubblewrap), evaluate stops and says why.
    let results = tmp.path().join("results");
    let scratch = tmp.path().join("tmp");
    fs::create_dir_all(&scratch).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rexbench"))
        .args(["evaluate", h.outputs.to_str().unwrap(), "--out", results.to_str().unwrap()])
        .args(["--tasks", h.tasks.to_str().unwrap()])
        .current_dir(repo())
        .env("TMPDIR", &scratch)
        .env("REXBENCH_BWRAP", "/nonexistent/bwrap")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("no sandbox can be made here") && said.contains("--unsandboxed"), "{said}");
    assert!(!results.exists());
}
