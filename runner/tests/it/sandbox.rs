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
    assert_canary_nowhere(&results);
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

/// An unprivileged user the runner is run as (a maintainer's workstation; a Slurm job
/// runs as its submitter): one of Debian's own, which Slurm can look up.
pub fn unprivileged() -> u32 {
    let passwd = fs::read_to_string("/etc/passwd").unwrap();
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f[0] == "games").then(|| f[2].parse().unwrap())
        })
        .expect("Debian's user `games`")
}

/// `root` handed to `uid`, with a copy of the runner it can run: a run as that user
/// reads and writes nothing the user could not.
pub fn hand_over(root: &Path, uid: u32) -> PathBuf {
    let bin = root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("rexbench");
    fs::copy(env!("CARGO_BIN_EXE_rexbench"), &exe).unwrap();
    let status = Command::new("chown").args(["-R", &format!("{uid}:{uid}")]).arg(root).status().unwrap();
    assert!(status.success());
    exe
}

/// `setpriv` (`cmd`) that runs `exe` as `uid`, with no other group.
pub fn as_user(mut cmd: Command, uid: u32, exe: &Path) -> Command {
    cmd.args([format!("--reuid={uid}"), format!("--regid={uid}"), "--clear-groups".into(), "--".into()])
        .arg(exe);
    cmd
}

/// A canary as the admin token would be in a maintainer's environment.
pub const TOKEN_CANARY: &str = "rxadmin-canary-9b2e41";

#[test]
fn an_unprivileged_runner_gives_the_experiment_nothing_of_its_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let h = hostile(tmp.path());
    let uid = unprivileged();
    let exe = hand_over(tmp.path(), uid);
    let results = tmp.path().join("results");
    let scratch = tmp.path().join("tmp");
    fs::create_dir_all(&scratch).unwrap();
    let chown = Command::new("chown").arg(format!("{uid}:{uid}")).arg(&scratch).status().unwrap();
    assert!(chown.success());
    let out = as_user(Command::new("setpriv"), uid, &exe)
        .args(["evaluate", h.outputs.to_str().unwrap(), "--out", results.to_str().unwrap()])
        .args(["--tasks", h.tasks.to_str().unwrap()])
        .current_dir(tmp.path())
        .env("TMPDIR", &scratch)
        .env("HOME", tmp.path())
        .env("SANDBOX_TEST_MARKER", ENV_MARKER)
        .env("REXBENCH_ADMIN_TOKEN", TOKEN_CANARY)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert_confined(&h, &results, tmp.path(), &uid.to_string());
    assert_canary_nowhere(tmp.path());
}

/// No file under `dir` holds the token's canary.
pub fn assert_canary_nowhere(dir: &Path) {
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            let ty = entry.file_type().unwrap();
            if ty.is_dir() {
                stack.push(path);
            } else if ty.is_file() {
                let bytes = fs::read(&path).unwrap();
                let found = bytes.windows(TOKEN_CANARY.len()).any(|w| w == TOKEN_CANARY.as_bytes());
                assert!(!found, "{} holds the token's canary", path.display());
            }
        }
    }
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
        .env("REXBENCH_ADMIN_TOKEN", TOKEN_CANARY)
        .output()
        .unwrap()
}

/// A root filesystem for podman of mount points alone: the system comes in read-only
/// as volumes, as the runner's README shows.
pub fn rootfs(root: &Path) -> PathBuf {
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
/// machine's nested runc can set. Its storage is the test's own, beside the root
/// filesystem (vfs, as this machine's podman needs): no other test's podman, and no
/// state the machine's own storage is in, can meet it.
pub fn podman_template(rootfs: &Path) -> String {
    let store = rootfs.parent().expect("a root filesystem in a folder").join("podman");
    format!(
        "podman --storage-driver=vfs --root {} --runroot {} run --rm --name {{name}} --user 65534:65534 --network none \
         --read-only --cap-drop ALL --security-opt no-new-privileges --ulimit nofile=1024:1024 \
         --ulimit nproc=1000:1000 -v /usr:/usr:ro -v {{workdir}}:{{workdir}} -w {{workdir}} --rootfs {} {{command}}",
        store.join("storage").display(),
        store.join("run").display(),
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

/// Podman's own failure (exit status 125: here an option it cannot parse) is the
/// maintainers' setup failing, not the patch: `infra_error`, which a re-run counts as a
/// try (spec §4d), never a failure of the agent's.
#[test]
fn a_container_engine_that_fails_is_an_infra_error_not_the_patchs_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let h = hostile(tmp.path());
    let template = podman_template(&rootfs(tmp.path())).replace(" --rm ", " --rm --ulimit bogus=1:1 ");
    let results = tmp.path().join("results");
    let out = evaluate_env(&h, &results, &["--container", &template]);
    assert!(results.join("runs").is_dir(), "{}{}", stdout(&out), stderr(&out));
    let mut records = Vec::new();
    let mut stack = vec![results.join("runs")];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if e.file_name() == "run.json" {
                let record: serde_json::Value = serde_json::from_slice(&fs::read(e.path()).unwrap()).unwrap();
                let note = fs::read_to_string(d.join("x-runner.txt")).unwrap_or_default();
                records.push((record, note));
            }
        }
    }
    assert!(!records.is_empty(), "{}{}", stdout(&out), stderr(&out));
    for (record, note) in records {
        assert_eq!(record["outcome"], "infra_error", "{record}");
        assert_eq!(record["error_type"], "executor failed", "{record}");
        assert!(note.contains("exit status 125"), "{note}");
    }
}

#[test]
fn reproduce_never_runs_unsandboxed_and_a_sandbox_holds_nothing_private() {
    let tmp = tempfile::tempdir().unwrap();
    let token = tmp.path().join("token");
    fs::write(&token, "t\n").unwrap();
    let reproduce = |env: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rexbench"));
        cmd.args(["reproduce", "--server", "http://127.0.0.1:9", "--token-file", token.to_str().unwrap()])
            .args(["--key", "k.pem", "--out", tmp.path().join("r").to_str().unwrap(), "--unsandboxed"])
            .current_dir(repo())
            .env_remove("REXBENCH_ADMIN_TOKEN");
        if let Some(value) = env {
            cmd.env("REXBENCH_ADMIN_TOKEN", value);
        }
        cmd.output().unwrap()
    };
    let out = reproduce(None);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("reproduce never runs unsandboxed"), "{}", stderr(&out));
    // The token is read from a file (or typed), never taken from the environment, which
    // every process of a re-run would be started from.
    let out = reproduce(Some("t"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("REXBENCH_ADMIN_TOKEN is set in reproduce's environment"),
        "{}",
        stderr(&out)
    );
    fs::write(&token, "\n").unwrap();
    let out = reproduce(None);
    assert!(stderr(&out).contains("no admin token in"), "{}", stderr(&out));
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
