//! The process keeper (`rexbench keep -- COMMAND…`): the one process every process of a
//! run descends from, however it detaches. It makes itself a child subreaper (Linux's
//! `PR_SET_CHILD_SUBREAPER`), so that a process whose parent dies — a `setsid nohup …
//! &` daemon, the grandchild of a double fork — is re-parented to it rather than to the
//! machine's init, and it starts the command. When the run ends it kills every process
//! beneath it, level by level, until none is left:
//!
//! - when its command ends (for an untraced run, the task's command; for a traced one,
//!   the tracer, once every traced process is gone);
//! - on `SIGUSR1`: every process but its command (the runner's word that the task's
//!   command ended while others still ran; the tracer stays to record their end);
//! - on `SIGTERM` (the run's time is up, a Slurm job cancelled, or the runner that started
//!   it died): every process, those beneath its command first, so that a tracer records
//!   their end, then its command;
//! - on `SIGINT` (the evaluation was stopped: nothing of the run is kept): every process
//!   at once.
//!
//! A process that ignores `SIGTERM` is no obstacle: the keeper sends `SIGKILL`. It
//! exits as its command did, and writes what it killed to `--report` (JSON), so that the
//! runner can tell a keeper that finished from one killed from inside the run.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{self, Signal};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

/// What the keeper says when it is done.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// How its command ended: `exit N`, or `signal N`.
    pub command: String,
    /// The processes it killed, by id, with their program names.
    pub killed: Vec<(i32, String)>,
}

/// The keeper's program: this binary, where it is the runner's (`rexbench`); `None` in
/// a test harness that links the library, where the process group is what is killed.
pub fn program() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let name = exe.file_name()?.to_string_lossy().into_owned();
    (name == "rexbench").then_some(exe)
}

/// The keeper's command line around `command`.
pub fn argv(keeper: &Path, report: &Path, groups: &[PathBuf], command: &[OsString]) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![keeper.into(), "keep".into(), "--report".into(), report.into()];
    for group in groups {
        argv.extend(["--cgroup".into(), group.into()]);
    }
    argv.push("--".into());
    argv.extend(command.iter().cloned());
    argv
}

/// Runs `command` as the keeper; returns the exit code to leave with (after raising
/// the command's signal on itself, where a signal ended it).
/// The descriptors above the standard three the keeper was handed, open still: what its
/// callers held open without close-on-exec (a CI's pipe, a jobserver, a lock, a file a
/// wrapper opened on the gold).
fn inherited() -> Vec<String> {
    let Ok(listing) = fs::read_dir("/proc/self/fd") else { return Vec::new() };
    let listed: Vec<u32> =
        listing.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).filter(|fd| *fd > 2).collect();
    // The listing's own descriptor is among them, and closed by now.
    listed
        .into_iter()
        .filter(|fd| fs::symlink_metadata(format!("/proc/self/fd/{fd}")).is_ok())
        .map(|fd| fd.to_string())
        .collect()
}

/// `command`, started so that no descriptor the keeper inherited reaches it: where there
/// are any, bash closes each (it reads descriptors of any number; the project forbids
/// `unsafe`, which closing them here would need) and then becomes the command.
fn without_inherited(command: &[OsString]) -> Vec<OsString> {
    let fds = inherited();
    if fds.is_empty() {
        return command.to_vec();
    }
    let bash = ["/usr/bin/bash", "/bin/bash"].into_iter().find(|b| Path::new(b).is_file()).unwrap_or("bash");
    let closes: Vec<String> = fds.iter().map(|fd| format!("{fd}<&-")).collect();
    let mut argv: Vec<OsString> = vec![
        bash.into(),
        "-c".into(),
        format!("exec {}; exec \"$@\"", closes.join(" ")).into(),
        "rexbench-keep".into(),
    ];
    argv.extend(command.iter().cloned());
    argv
}

pub fn run(report: &Path, groups: &[PathBuf], command: &[OsString]) -> i32 {
    // Into the run's control group before anything starts (`crate::sandbox::cgroup`):
    // where it cannot, the run goes on, held by the runner's watch and the kernel's
    // rlimits alone.
    let _ = crate::sandbox::cgroup::join(groups);
    let command = &without_inherited(command);
    #[cfg(target_os = "linux")]
    {
        let _ = nix::sys::prctl::set_child_subreaper(true);
        // The runner gone, nothing of its run may stay.
        let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGTERM);
    }
    let (sweep_others, sweep_all, stop_now) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let _ = signal_hook::flag::register(signal_hook::consts::SIGUSR1, sweep_others.clone());
    let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, sweep_all.clone());
    let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, stop_now.clone());
    let Some((program, args)) = command.split_first() else {
        eprintln!("rexbench keep: no command");
        return 2;
    };
    // The command gets the signals' default handling back as it starts (a caught
    // signal's handler does not survive exec).
    let mut cmd = Command::new(program);
    cmd.args(args);
    let child = match cmd.spawn() {
        Ok(child) => Pid::from_raw(child.id() as i32),
        Err(e) => {
            eprintln!("rexbench keep: cannot start {}: {e}", program.to_string_lossy());
            return 127;
        }
    };
    let mut keeping = Keeping { me: Pid::this(), child, status: None, killed: BTreeMap::new() };
    let mut nap = Duration::from_millis(1);
    let status = loop {
        if stop_now.load(Ordering::SeqCst) {
            keeping.sweep(false);
        } else if sweep_all.load(Ordering::SeqCst) {
            // Everything beneath the command first, so that a tracer sees them end;
            // then the command, given a moment to end by itself (a cancelled Slurm job
            // has a few seconds in all to write its status).
            keeping.sweep(true);
            keeping.wait_for_command(Duration::from_millis(500));
            keeping.sweep(false);
        } else if sweep_others.swap(false, Ordering::SeqCst) {
            keeping.sweep(true);
        }
        if let Some(status) = keeping.status.take() {
            break status;
        }
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => {
                std::thread::sleep(nap);
                nap = (nap * 2).min(Duration::from_millis(20));
            }
            Ok(status) => {
                keeping.reaped(status);
                nap = Duration::from_millis(1);
            }
            Err(nix::errno::Errno::EINTR) => {}
            // No child left, the command's end unseen: it cannot be, but say so.
            Err(_) => break "unknown".to_owned(),
        }
    };
    keeping.sweep(false);
    let killed = keeping.killed;
    let report_text = Report { command: status.clone(), killed: killed.into_iter().collect() };
    let _ = fs::write(report, serde_json::to_vec(&report_text).expect("serializes"));
    // A signal's end is in the report; the exit code says it as a shell would.
    match status.strip_prefix("exit ").and_then(|c| c.parse().ok()) {
        Some(code) => code,
        None => 128 + status.strip_prefix("signal ").and_then(|n| n.parse::<i32>().ok()).unwrap_or(0),
    }
}

/// The keeper's charge: its command, how it ended once it has, and what was killed.
struct Keeping {
    me: Pid,
    child: Pid,
    status: Option<String>,
    killed: BTreeMap<i32, String>,
}

impl Keeping {
    fn reaped(&mut self, status: WaitStatus) {
        match status {
            WaitStatus::Exited(pid, code) if pid == self.child => self.status = Some(format!("exit {code}")),
            WaitStatus::Signaled(pid, sig, _) if pid == self.child => {
                self.status = Some(format!("signal {}", sig as i32))
            }
            _ => {}
        }
    }

    /// Waits at most `limit` for the command to end.
    fn wait_for_command(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.status.is_none() && Instant::now() < deadline {
            match waitpid(self.child, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(2)),
                Ok(status) => self.reaped(status),
                Err(_) => return,
            }
        }
    }

    /// Kills every process beneath the keeper (but its command, with `spare_command`),
    /// and reaps them, until none is left or 5 s have passed.
    fn sweep(&mut self, spare_command: bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let beneath: Vec<(i32, String)> = descendants(self.me.as_raw())
                .into_iter()
                .filter(|(pid, _)| !(spare_command && *pid == self.child.as_raw()))
                .collect();
            loop {
                match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) | Err(_) => break,
                    Ok(status) => self.reaped(status),
                }
            }
            if beneath.is_empty() || Instant::now() >= deadline {
                return;
            }
            for (pid, name) in beneath {
                if signal::kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok() && pid != self.child.as_raw() {
                    self.killed.entry(pid).or_insert(name);
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// Every process whose chain of parents reaches `root`, with its program name.
fn descendants(root: i32) -> Vec<(i32, String)> {
    let mut children: BTreeMap<i32, Vec<(i32, String)>> = BTreeMap::new();
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid …`: comm may hold anything, so read after its last `)`.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { continue };
        let name = stat[open + 1..close].to_owned();
        let ppid = stat[close + 1..].split_whitespace().nth(1).and_then(|p| p.parse::<i32>().ok());
        if let Some(ppid) = ppid {
            children.entry(ppid).or_default().push((pid, name));
        }
    }
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut todo = vec![root];
    while let Some(parent) = todo.pop() {
        for (pid, name) in children.get(&parent).into_iter().flatten() {
            if seen.insert(*pid) {
                todo.push(*pid);
                out.push((*pid, name.clone()));
            }
        }
    }
    out
}
