//! The sandbox every experiment runs in: the submitter's code sees its working copy and
//! the system, and nothing of the machine that runs it.
//!
//! Under the local executor (and so in each Slurm job, which runs the local executor on
//! its node) the task's command runs beneath Debian's `bubblewrap`:
//! - its own PID namespace (`--unshare-pid`): no other process is visible or reachable,
//!   and when the command ends the kernel kills whatever it left there;
//! - a filesystem made of the system, read-only (`/usr` and the links beside it, a short
//!   list of `/etc`'s files, and the folders named by `--sandbox-ro`), the working copy
//!   read-write at its own path (so the provenance record's paths are the same), and an
//!   empty `/tmp` and `/dev/shm`: no gold, no results folder, no keys, no home;
//! - a clean environment (`--clearenv`): `PATH`, `HOME` (the working copy), `TMPDIR`,
//!   `LANG`, and the variables the card declares (`[evaluation] env`) or `--sandbox-env`
//!   names, never one of the runner's own (`REXBENCH_…`);
//! - no network (`--unshare-net`: only a loopback of its own) unless the card says the
//!   task needs it (`[evaluation] network = true`);
//! - its own IPC, UTS and cgroup namespaces and session (`--new-session`: no terminal to
//!   inject keystrokes into), and it dies with the runner (`--die-with-parent`);
//! - an unprivileged user, in a user namespace of its own that can make no other
//!   (`--unshare-user --disable-userns`): run as root, the runner first becomes `nobody`
//!   (65534) with `setpriv` (no capabilities, no supplementary groups, `no_new_privs`)
//!   and starts bubblewrap as that user; run as anyone else, bubblewrap starts as the
//!   runner's user. Either way bubblewrap holds no privilege the experiment lacks, and
//!   drops every capability in its namespace;
//! - nothing of the runner's environment: every process between the runner and the
//!   experiment (the keeper, the tracer, `setpriv`, bubblewrap) starts from a cleared
//!   environment (`crate::exec`), so that no variable of the runner's is in any of their
//!   `/proc/PID/environ`, which a process of the same user could read;
//! - limits on what it uses ([`limits`]): `/tmp` and `/dev/shm` are file systems of the
//!   card's size, `prlimit` holds its processes and file sizes within the card's limits
//!   (in its own user namespace, so that runs side by side do not share the count), and
//!   the runner watches its memory and its working copy's size.
//!
//! Under `--container` the engine is the sandbox: [`lint_container`] refuses a template
//! that lacks the flags that give these guarantees. `evaluate --unsandboxed` (one's own
//! agent on one's own machine) runs without one; `reproduce` never does.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

pub(crate) mod cgroup;
pub(crate) mod container;
pub(crate) mod engine;
pub mod limits;
pub use container::{give_to_container, lint_container};

/// The user an experiment runs as when the runner is root: `nobody`.
pub const SANDBOX_UID: u32 = 65534;

/// What a task's sandbox lets in beyond the working copy and the system; it travels to
/// a Slurm job in its `job.json`, and the node's runner makes the sandbox from it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// The task needs the network (its card's `[evaluation] network`).
    #[serde(default)]
    pub network: bool,
    /// Variables passed from the runner's environment, by name (the card's
    /// `[evaluation] env`, then `--sandbox-env`); a name not set there is left out.
    #[serde(default)]
    pub env: Vec<String>,
    /// Folders mounted read-only at their own paths (`--sandbox-ro`: a Python or CUDA
    /// installation outside `/usr`).
    #[serde(default)]
    pub readonly: Vec<PathBuf>,
    /// Devices passed through (`--sandbox-dev`: `/dev/nvidia0`, …).
    #[serde(default)]
    pub devices: Vec<PathBuf>,
    /// What one run may use: its card's `[evaluation.limits]`.
    #[serde(default)]
    pub limits: benchmark::task::Limits,
}

/// Whether experiments run sandboxed, and with what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confinement {
    /// The default: every experiment in a sandbox, or not at all.
    Sandboxed(Settings),
    /// `evaluate --unsandboxed`: the agent's code runs with the runner's rights.
    Unsandboxed,
}

impl Confinement {
    /// The task's own settings (its card's network and variables) added to these.
    pub fn for_task(&self, card: &benchmark::task::TaskCard) -> Confinement {
        match self {
            Confinement::Unsandboxed => Confinement::Unsandboxed,
            Confinement::Sandboxed(base) => {
                let mut s = base.clone();
                s.network = card.evaluation.network;
                s.limits = card.evaluation.limits;
                let mut env = card.evaluation.env.clone();
                for name in &base.env {
                    if !env.contains(name) {
                        env.push(name.clone());
                    }
                }
                s.env = env;
                Confinement::Sandboxed(s)
            }
        }
    }
}

/// Which system folders the sandbox mounts (read-only), or recreates as the links they
/// are (`/bin → usr/bin` on a merged-`/usr` system).
const SYSTEM: &[&str] = &["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/// The files of `/etc` a program may need (the dynamic linker's cache, users and
/// groups without passwords, name resolution, certificates, time zone, Debian's
/// alternatives); the rest of `/etc` stays out.
const ETC: &[&str] = &[
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "host.conf",
    "resolv.conf",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "localtime",
    "timezone",
    "mime.types",
    "protocols",
    "services",
    "os-release",
    "debian_version",
    "fonts",
    "locale.alias",
    "locale.gen",
    "gai.conf",
    "shells",
];

/// The `PATH` inside the sandbox, and of every process between it and the runner.
pub(crate) const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// A sandbox that can be made on this machine.
#[derive(Debug, Clone)]
pub struct Sandbox {
    tools: Tools,
    settings: Settings,
}

/// The programs a sandbox is made with, found once.
#[derive(Debug, Clone)]
struct Tools {
    bwrap: PathBuf,
    /// `setpriv`, where the runner is root: it becomes [`SANDBOX_UID`] first.
    setpriv: Option<PathBuf>,
    /// `prlimit` (util-linux), inside the sandbox: the limits the kernel holds it to.
    prlimit: PathBuf,
    /// Where the runner is root and this machine lets no unprivileged user make a user
    /// namespace: bubblewrap runs as root and `setpriv` drops to [`SANDBOX_UID`] inside
    /// (the experiment's own user namespaces are then refused by the same rule).
    root_bwrap: bool,
}

/// How many processes at the start of a sandboxed experiment's trace are the
/// sandbox's: bubblewrap, and the first process of its PID namespace.
pub const WRAPPER_PROCESSES: usize = 2;

impl Sandbox {
    /// The sandbox on this machine, or why none can be made (no bubblewrap, or one
    /// that cannot make namespaces here).
    pub fn new(settings: &Settings) -> Result<Sandbox, String> {
        static FOUND: OnceLock<Result<Tools, String>> = OnceLock::new();
        let tools = FOUND.get_or_init(probe).clone()?;
        Ok(Sandbox { tools, settings: settings.clone() })
    }

    /// What one run may use.
    pub fn limits(&self) -> &benchmark::task::Limits {
        &self.settings.limits
    }

    /// Makes the working copy the sandbox user's, so that the experiment may write it.
    pub fn prepare(&self, workdir: &Path) -> std::io::Result<()> {
        if self.tools.setpriv.is_some() { chown_tree(workdir, SANDBOX_UID, SANDBOX_UID) } else { Ok(()) }
    }

    /// The command line that runs `command` in the sandbox, in `workdir`.
    pub fn argv(&self, workdir: &Path, command: &[OsString]) -> Vec<OsString> {
        let t = &self.tools;
        let limits = &self.settings.limits;
        let mut first = Vec::new();
        if let (Some(setpriv), false) = (&t.setpriv, t.root_bwrap) {
            first.push(setpriv.clone().into());
            first.extend(drop_to_nobody());
        }
        first.push(t.bwrap.clone().into());
        let mut a = Mounts { argv: first, binds: Vec::new(), made: Vec::new() };
        let mut flags = vec!["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
        if !t.root_bwrap {
            flags.extend(["--unshare-user", "--disable-userns"]);
        }
        if !self.settings.network {
            flags.push("--unshare-net");
        }
        flags.extend(["--die-with-parent", "--new-session", "--clearenv"]);
        a.argv.extend(flags.into_iter().map(OsString::from));
        for name in SYSTEM {
            let path = Path::new("/").join(name);
            match fs::symlink_metadata(&path) {
                Ok(m) if m.file_type().is_symlink() => {
                    if let Ok(target) = fs::read_link(&path) {
                        a.argv.extend(["--symlink".into(), target.into(), path.clone().into()]);
                        a.made.push(path);
                    }
                }
                Ok(m) if m.is_dir() => a.mount("--ro-bind", &path, &path),
                _ => {}
            }
        }
        for name in ETC {
            let path = Path::new("/etc").join(name);
            if fs::symlink_metadata(&path).is_ok() {
                a.mount("--ro-bind-try", &path, &path);
            }
        }
        a.special("--proc", Path::new("/proc"));
        a.special("--dev", Path::new("/dev"));
        let tmp_bytes = (limits.tmp_mib << 20).to_string();
        for tmp in ["/tmp", "/dev/shm"] {
            a.argv.extend(["--perms".into(), "1777".into(), "--size".into(), tmp_bytes.clone().into()]);
            a.special("--tmpfs", Path::new(tmp));
        }
        for path in &self.settings.readonly {
            a.mount("--ro-bind", path, path);
        }
        for path in &self.settings.devices {
            a.mount("--dev-bind", path, path);
        }
        a.mount("--bind", workdir, workdir);
        let mut a = a.argv;
        a.extend(["--chdir".into(), workdir.into()]);
        let mut set = |name: &str, value: OsString| a.extend(["--setenv".into(), name.into(), value]);
        set("PATH", PATH.into());
        set("HOME", workdir.into());
        set("TMPDIR", "/tmp".into());
        set("LANG", "C.UTF-8".into());
        for name in &self.settings.env {
            if let Some(value) = std::env::var_os(name) {
                set(name, value);
            }
        }
        a.push("--".into());
        if let (Some(setpriv), true) = (&t.setpriv, t.root_bwrap) {
            a.push(setpriv.clone().into());
            a.extend(drop_to_nobody());
        }
        // The kernel's own limits, set inside the run's user namespace: its processes
        // are counted there, apart from every other run's. A file larger than the disk
        // limit is refused where it is written (SIGXFSZ); no core is dumped.
        a.push(t.prlimit.clone().into());
        let disk = (limits.disk_mib << 20).to_string();
        for w in [
            format!("--nproc={0}:{0}", limits.processes),
            format!("--fsize={disk}:{disk}"),
            "--core=0:0".to_owned(),
            "--".to_owned(),
        ] {
            a.push(w.into());
        }
        a.extend(command.iter().cloned());
        a
    }
}

/// `setpriv`'s words that make it `nobody`, with no capability, group or privilege left
/// to gain.
fn drop_to_nobody() -> Vec<OsString> {
    [
        format!("--reuid={SANDBOX_UID}"),
        format!("--regid={SANDBOX_UID}"),
        "--clear-groups".into(),
        "--inh-caps=-all".into(),
        "--bounding-set=-all".into(),
        "--no-new-privs".into(),
        "--".into(),
    ]
    .into_iter()
    .map(OsString::from)
    .collect()
}

/// bubblewrap's arguments as they are made, with the places mounted so far: each
/// folder a mount needs on its way is made first, open to every user (bubblewrap makes
/// them private to root, where the sandbox's user could not pass).
struct Mounts {
    argv: Vec<OsString>,
    /// Host folders mounted at their own paths: what is beneath them is there.
    binds: Vec<PathBuf>,
    /// Places made here (folders, file systems of their own, links): nothing beneath.
    made: Vec<PathBuf>,
}

impl Mounts {
    fn mount(&mut self, how: &str, source: &Path, at: &Path) {
        self.folders_to(at);
        self.argv.extend([how.into(), source.into(), at.into()]);
        self.binds.push(at.to_owned());
    }

    fn special(&mut self, how: &str, at: &Path) {
        self.folders_to(at);
        self.argv.extend([how.into(), at.into()]);
        self.made.push(at.to_owned());
    }

    /// `--dir` for each folder above `at` that is not there yet: neither made here nor
    /// a host folder inside a host folder mounted.
    fn folders_to(&mut self, at: &Path) {
        let mut above: Vec<&Path> = at.ancestors().skip(1).filter(|p| *p != Path::new("/")).collect();
        above.reverse();
        for folder in above {
            let there = self.made.iter().any(|m| m == folder)
                || (self.binds.iter().any(|b| folder.starts_with(b)) && folder.is_dir());
            if there {
                continue;
            }
            self.argv.extend(["--perms".into(), "0755".into(), "--dir".into(), folder.into()]);
            self.made.push(folder.to_owned());
        }
    }
}

/// bubblewrap from `REXBENCH_BWRAP` or the `PATH`, tried once; `setpriv` where the
/// runner is root; `prlimit`. Where the runner is root, bubblewrap is tried as `nobody`
/// first (in a user namespace that can make no other), then as root where this machine
/// lets no unprivileged user make a user namespace.
fn probe() -> Result<Tools, String> {
    // By its path: the sandbox's programs start with no `PATH` to look it up by.
    let bwrap = match std::env::var_os("REXBENCH_BWRAP") {
        Some(named) => PathBuf::from(named),
        None => std::env::var_os("PATH")
            .and_then(|path| std::env::split_paths(&path).map(|d| d.join("bwrap")).find(|p| p.is_file()))
            .ok_or("no bubblewrap (`bwrap`) on the PATH")?,
    };
    let root = nix::unistd::geteuid().is_root();
    let system =
        |name: &str| ["/usr/bin", "/bin"].iter().map(|d| Path::new(d).join(name)).find(|p| p.is_file());
    let setpriv = if root {
        Some(system("setpriv").ok_or("no setpriv (util-linux) in /usr/bin: the sandbox cannot drop root")?)
    } else {
        None
    };
    let prlimit =
        system("prlimit").ok_or("no prlimit (util-linux) in /usr/bin: the sandbox cannot limit a run")?;
    let dir = tempfile::Builder::new()
        .prefix("rexbench-sandbox-")
        .tempdir()
        .map_err(|e| format!("no folder for the sandbox's probe: {e}"))?;
    let mut said = String::new();
    for root_bwrap in if root { vec![false, true] } else { vec![false] } {
        let tools =
            Tools { bwrap: bwrap.clone(), setpriv: setpriv.clone(), prlimit: prlimit.clone(), root_bwrap };
        let probe = Sandbox { tools: tools.clone(), settings: Settings::default() };
        probe.prepare(dir.path()).map_err(|e| format!("the sandbox's probe: {e}"))?;
        let argv = probe.argv(dir.path(), &["true".into()]);
        let out = Command::new(&argv[0])
            .args(&argv[1..])
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("bubblewrap (`{}`) cannot run: {e}", bwrap.display()))?;
        if out.status.success() {
            return Ok(tools);
        }
        said = String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or("").trim().to_owned();
    }
    Err(format!("bubblewrap cannot make a sandbox here: {said}"))
}

/// Gives `root` and everything beneath it to `uid:gid`, links themselves and not what
/// they point at. Unbounded: the working copy is the codebase and what the patch made of
/// it (a patch can make folders deeper than a copy's bound, or many files), and a walk
/// beneath each folder's descriptor is safe at any depth; a bound hit here would make the
/// run `infra_error`, which is never re-run to a verdict.
pub(crate) fn chown_tree(root: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    let bounds = benchmark::tree::Bounds { depth: usize::MAX, entries: u64::MAX, bytes: u64::MAX };
    benchmark::tree::chown(root, uid, gid, &bounds).map(drop).map_err(std::io::Error::from)
}

/// Checks what `--sandbox-ro`, `--sandbox-dev` and `--sandbox-env` name before anything
/// runs: no folder that is or holds the gold, the results, the agent's outputs or a
/// home, nor the root; no runner variable.
pub fn check_settings(settings: &Settings, private: &[&Path]) -> Result<(), String> {
    for name in &settings.env {
        if !benchmark::task::passable_variable(name) {
            return Err(format!(
                "--sandbox-env {name}: a variable's name alone, never one of the runner's own (REXBENCH_…)"
            ));
        }
    }
    for path in &settings.readonly {
        let shown = path.display();
        if !path.is_absolute() {
            return Err(format!("--sandbox-ro {shown}: name an absolute path"));
        }
        let canonical = path.canonicalize().map_err(|e| format!("--sandbox-ro {shown}: {e}"))?;
        if canonical == Path::new("/") || canonical.starts_with("/root") || canonical.starts_with("/home") {
            return Err(format!("--sandbox-ro {shown}: the root and homes never enter the sandbox"));
        }
        for p in private {
            let Ok(p) = p.canonicalize() else { continue };
            if p.starts_with(&canonical) || canonical.starts_with(&p) {
                return Err(format!(
                    "--sandbox-ro {shown}: it overlaps {}, which the experiment must not see",
                    p.display()
                ));
            }
        }
    }
    for path in &settings.devices {
        use std::os::unix::fs::FileTypeExt;
        // Read through links and `..` first: `/dev/../work/gold` is not under /dev.
        let canonical = path.canonicalize().ok();
        let device = canonical.as_ref().filter(|c| c.starts_with("/dev/")).and_then(|c| fs::metadata(c).ok());
        if !device.is_some_and(|m| m.file_type().is_char_device() || m.file_type().is_block_device()) {
            return Err(format!(
                "--sandbox-dev {}: only a device under /dev (a character or block device)",
                path.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_folders_never_hold_what_the_experiment_must_not_see() {
        let gold = tempfile::tempdir().unwrap();
        let inner = gold.path().join("csvstats");
        fs::create_dir(&inner).unwrap();
        for (path, said) in [
            (gold.path().to_owned(), "overlaps"),
            (inner.clone(), "overlaps"),
            (PathBuf::from("/"), "root"),
            (PathBuf::from("relative"), "absolute"),
        ] {
            let s = Settings { readonly: vec![path.clone()], ..Settings::default() };
            let e = check_settings(&s, &[gold.path()]).unwrap_err();
            assert!(e.contains(said), "{}: {e}", path.display());
        }
        let parent = gold.path().parent().unwrap().to_owned();
        let s = Settings { readonly: vec![parent], ..Settings::default() };
        assert!(check_settings(&s, &[gold.path()]).unwrap_err().contains("overlaps"));
        let s = Settings { env: vec!["REXBENCH_ADMIN_TOKEN".into()], ..Settings::default() };
        assert!(check_settings(&s, &[]).unwrap_err().contains("REXBENCH_"));
        // Not a device, or one only by its name's beginning.
        for path in ["/etc/shadow", "/dev/../etc", "/dev/shm", "/dev/missing"] {
            let s = Settings { devices: vec![path.into()], ..Settings::default() };
            assert!(check_settings(&s, &[]).unwrap_err().contains("/dev"), "{path}");
        }
        let s = Settings { devices: vec!["/dev/null".into()], ..Settings::default() };
        check_settings(&s, &[]).unwrap();
    }
}
