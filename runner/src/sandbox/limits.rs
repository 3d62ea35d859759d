//! What one run may use, and the watch that holds it to it.
//!
//! The card's `[evaluation.limits]` (`benchmark::task::Limits`) are enforced in layers:
//! - by the kernel, inside the sandbox: `/tmp` and `/dev/shm` are file systems of the
//!   temporary-space limit, and `prlimit` sets `RLIMIT_NPROC` (processes and threads,
//!   counted in the run's own user namespace), `RLIMIT_FSIZE` (no file larger than the
//!   disk limit) and no core dumps (`crate::sandbox`);
//! - by the runner, which watches the run while it runs ([`Watch`]): the memory of all
//!   its processes together, its processes, its temporary space and the size of its
//!   working copy. A run over a limit is stopped at once, as a timed-out one is, and
//!   ends as a [`Breach`]: `execution_failed` with the error type
//!   `resource_limit: <resource>`, the provenance record naming the limit;
//! - its logs are cut while they are written (`crate::exec`), never refused after.
//!
//! - by the kernel again, where the runner may make control groups (`super::cgroup`):
//!   the run's memory at every allocation, its processes at every fork.
//!
//! No machine-wide setting is needed: a runner may not be allowed control groups (on a
//! workstation or a Slurm node). What the watch cannot see in the time between two looks,
//! the kernel's limits bound: a process count no run can pass, and a file no larger than
//! the disk.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use benchmark::task::Limits;
use serde::{Deserialize, Serialize};

/// A resource a run may exhaust.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    Memory,
    Processes,
    Disk,
    Tmp,
}

impl Resource {
    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Memory => "memory",
            Resource::Processes => "processes",
            Resource::Disk => "disk",
            Resource::Tmp => "temporary space",
        }
    }

    /// The run's error type: the runner's own words, one of a closed list.
    pub fn error_type(self) -> String {
        format!("{PREFIX}{}", self.as_str())
    }

    /// Every resource, for the closed list of error types.
    pub const ALL: [Resource; 4] = [Resource::Memory, Resource::Processes, Resource::Disk, Resource::Tmp];
}

/// How a run stopped by a limit's error type begins.
pub const PREFIX: &str = "resource_limit: ";

/// A run that went over one of its limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breach {
    pub resource: Resource,
    /// What it used when it was seen (bytes; for processes, processes and threads).
    pub used: u64,
    pub limit: u64,
}

impl Breach {
    /// "memory: 1.2 GiB used, over its limit of 1 GiB" (the provenance record's `limit`,
    /// and the run's `x-runner.txt`).
    pub fn describe(&self) -> String {
        let amount = |n: u64| match self.resource {
            Resource::Processes => format!("{n} processes and threads"),
            _ => bytes(n),
        };
        format!(
            "{}: {} used, over its limit of {} (the task card's [evaluation.limits])",
            self.resource.as_str(),
            amount(self.used),
            amount(self.limit)
        )
    }
}

/// Bytes as a person reads them.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let (mut value, mut unit) = (n as f64 / 1024.0, 0);
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Each limit in bytes (processes as a count).
#[derive(Debug, Clone, Copy)]
struct Bytes {
    memory: u64,
    processes: u64,
    disk: u64,
    tmp: u64,
}

impl From<&Limits> for Bytes {
    fn from(l: &Limits) -> Bytes {
        Bytes {
            memory: l.memory_mib << 20,
            processes: l.processes,
            disk: l.disk_mib << 20,
            tmp: l.tmp_mib << 20,
        }
    }
}

/// How often the processes are looked at.
const PROCESSES_EVERY: Duration = Duration::from_millis(100);
/// The working copy is walked at most this often, and never more than a twentieth of
/// the time (a large codebase takes a while to walk).
const DISK_EVERY: Duration = Duration::from_secs(1);
/// The most entries a walk of the working copy counts: past it, the walk stops, and what
/// it counted so far stands.
const WALK_ENTRIES: usize = 2_000_000;

/// The watch over one run: its process tree (from the run's first process, which the
/// runner started), and its working copy.
#[derive(Debug)]
pub struct Watch {
    root: i32,
    workdir: PathBuf,
    limits: Bytes,
    /// Whether the processes are the runner's to see (the local executor): a container's
    /// are the engine's, held to the template's limits.
    processes: bool,
    next_look: Instant,
    next_walk: Instant,
    /// What the last walk of the working copy counted.
    walked: u64,
    /// What the run's processes hold open on the working copy's file system that no walk
    /// sees (files removed while open), at the last look.
    held: u64,
}

impl Watch {
    pub fn new(root: u32, workdir: &Path, limits: &Limits, processes: bool) -> Watch {
        let now = Instant::now();
        Watch {
            root: root as i32,
            workdir: workdir.to_owned(),
            limits: Bytes::from(limits),
            processes,
            next_look: now,
            next_walk: now,
            walked: 0,
            held: 0,
        }
    }

    /// A limit the run is over now, if it is; looks only as often as each look is due.
    pub fn check(&mut self) -> Option<Breach> {
        let now = Instant::now();
        if self.processes && now >= self.next_look {
            self.next_look = now + PROCESSES_EVERY;
            if let Some(b) = self.look() {
                return Some(b);
            }
        }
        if now >= self.next_walk {
            let started = Instant::now();
            let breach = self.disk();
            self.next_walk = Instant::now() + DISK_EVERY.max(started.elapsed() * 20);
            return breach;
        }
        None
    }

    /// Once the run has ended: whether its working copy is at its disk limit (a file
    /// stopped at the size limit, or written between two walks).
    pub fn at_the_end(&mut self) -> Option<Breach> {
        self.disk()
    }

    fn disk(&mut self) -> Option<Breach> {
        self.walked = allocated(&self.workdir);
        self.disk_breach()
    }

    fn disk_breach(&self) -> Option<Breach> {
        let used = self.walked.saturating_add(self.held);
        (used >= self.limits.disk).then_some(Breach {
            resource: Resource::Disk,
            used,
            limit: self.limits.disk,
        })
    }

    fn look(&mut self) -> Option<Breach> {
        let tree = descendants(self.root);
        let (mut tasks, mut memory) = (0u64, 0u64);
        let mut inside = None;
        let disk = fs::metadata(&self.workdir).map(|m| m.dev()).ok();
        let mut open = Open::default();
        for pid in &tree {
            tasks += threads(*pid);
            memory += private_memory(*pid);
            open.add(*pid, disk);
            if inside.is_none() && other_mounts(*pid) {
                inside = Some(*pid);
            }
        }
        // Memory in a file of no file system's (`memfd_create`), written and never mapped,
        // is memory all the same; a file removed while open still takes its disk.
        memory = memory.saturating_add(open.memory);
        self.held = open.disk;
        if let Some(b) = self.disk_breach() {
            return Some(b);
        }
        if tasks >= self.limits.processes {
            return Some(Breach { resource: Resource::Processes, used: tasks, limit: self.limits.processes });
        }
        // The sandbox's temporary file systems are held in memory: what they hold counts
        // against their own limit, and (being shared memory) against the run's.
        let mut tmp_used = 0;
        if let Some(pid) = inside {
            for dir in ["tmp", "dev/shm"] {
                let used =
                    sandbox_tmp_used(&Path::new(&format!("/proc/{pid}/root")).join(dir), self.limits.tmp);
                tmp_used = tmp_used.max(used);
            }
        }
        // A file system of the limit's size is full when less than a block is left.
        if tmp_used + 64 * 1024 >= self.limits.tmp {
            return Some(Breach { resource: Resource::Tmp, used: tmp_used, limit: self.limits.tmp });
        }
        (memory >= self.limits.memory).then_some(Breach {
            resource: Resource::Memory,
            used: memory,
            limit: self.limits.memory,
        })
    }
}

/// What a run's processes hold open that neither their mappings nor a walk show: files
/// of `memfd_create` (memory), and files removed from the working copy's file system
/// while open (disk); each file counted once, however many hold it.
#[derive(Default)]
struct Open {
    seen: std::collections::BTreeSet<(u64, u64)>,
    memory: u64,
    disk: u64,
}

impl Open {
    fn add(&mut self, pid: i32, disk: Option<u64>) {
        let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else { return };
        for fd in fds.flatten().take(WALK_ENTRIES) {
            let Ok(target) = fs::read_link(fd.path()) else { continue };
            let target = target.to_string_lossy();
            let memfd = target.starts_with("/memfd:");
            if !memfd && !target.ends_with(" (deleted)") {
                continue;
            }
            // The open file itself (through the descriptor), not a path.
            let Ok(meta) = fs::metadata(fd.path()) else { continue };
            if !meta.is_file() || !self.seen.insert((meta.dev(), meta.ino())) {
                continue;
            }
            let bytes = meta.blocks().saturating_mul(512);
            if memfd {
                self.memory = self.memory.saturating_add(bytes);
            } else if Some(meta.dev()) == disk {
                self.disk = self.disk.saturating_add(bytes);
            }
        }
    }
}

/// `root` and every process beneath it, from one reading of `/proc`.
fn descendants(root: i32) -> Vec<i32> {
    let Ok(entries) = fs::read_dir("/proc") else { return vec![root] };
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if let Some(parent) = parent_of(pid) {
            children.entry(parent).or_default().push(pid);
        }
    }
    let (mut out, mut stack) = (Vec::new(), vec![root]);
    while let Some(pid) = stack.pop() {
        out.push(pid);
        if let Some(kids) = children.get(&pid) {
            stack.extend(kids);
        }
    }
    out
}

/// The parent in `/proc/PID/stat` (after the command's name, which may hold anything).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// A field of `/proc/PID/status`, as a number (kB fields in bytes).
fn status_field(pid: i32, field: &str) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?;
    let mut words = line.split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    Some(if words.next() == Some("kB") { n * 1024 } else { n })
}

fn threads(pid: i32) -> u64 {
    status_field(pid, "Threads").unwrap_or(1)
}

/// The memory a process holds that only a run's end gives back: its anonymous and shared
/// pages, each shared page divided among the processes that map it (`Pss_Anon`,
/// `Pss_Shmem` of `smaps_rollup`), or its resident anonymous and shared memory where the
/// kernel gives no rollup.
fn private_memory(pid: i32) -> u64 {
    if let Ok(rollup) = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) {
        let field = |name: &str| {
            rollup.lines().find_map(|l| {
                let rest = l.strip_prefix(name)?.strip_prefix(':')?;
                rest.split_whitespace().next()?.parse::<u64>().ok()
            })
        };
        if let Some(anon) = field("Pss_Anon") {
            return (anon + field("Pss_Shmem").unwrap_or(0)) * 1024;
        }
    }
    status_field(pid, "RssAnon").unwrap_or(0) + status_field(pid, "RssShmem").unwrap_or(0)
}

/// Whether a process is inside the sandbox: it sees other mounts than the runner, and
/// another root (one still being set up sees the host's, its `/tmp` the host's).
fn other_mounts(pid: i32) -> bool {
    let ours = fs::read_link("/proc/self/ns/mnt").ok();
    let its = fs::read_link(format!("/proc/{pid}/ns/mnt")).ok();
    let root = |p: &str| fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    its.is_some() && its != ours && root(&format!("/proc/{pid}/root")).is_some_and(|r| Some(r) != root("/"))
}

/// What the sandbox's temporary file system at `path` holds: only a file system of the
/// limit's own size is the sandbox's (a process still being set up sees the host's).
fn sandbox_tmp_used(path: &Path, size: u64) -> u64 {
    match nix::sys::statvfs::statvfs(path) {
        Ok(s) if (s.blocks() as u64).saturating_mul(s.fragment_size() as u64) == size => {
            (s.blocks().saturating_sub(s.blocks_free()) as u64).saturating_mul(s.fragment_size() as u64)
        }
        _ => 0,
    }
}

/// The bytes the files under `root` take on disk (allocated blocks: a sparse file
/// counts what it holds), walked without following a link, at most [`WALK_ENTRIES`].
pub fn allocated(root: &Path) -> u64 {
    let (mut total, mut seen, mut stack) = (0u64, 0usize, vec![root.to_owned()]);
    while let Some(dir) = stack.pop() {
        let Some(entries) = read_dir_owned(&dir) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > WALK_ENTRIES {
                return total;
            }
            let Ok(meta) = entry.path().symlink_metadata() else { continue };
            total = total.saturating_add(meta.blocks().saturating_mul(512));
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    total
}

/// A folder's entries; one its owner (the runner, or a run as the runner's user) made
/// unreadable is given back its owner's rights first, so that nothing in a working copy
/// is hidden from the walk.
fn read_dir_owned(dir: &Path) -> Option<fs::ReadDir> {
    use std::os::unix::fs::PermissionsExt;
    match fs::read_dir(dir) {
        Ok(entries) => Some(entries),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let meta = dir.symlink_metadata().ok().filter(fs::Metadata::is_dir)?;
            let mode = meta.permissions().mode() | 0o700;
            fs::set_permissions(dir, fs::Permissions::from_mode(mode)).ok()?;
            fs::read_dir(dir).ok()
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_breach_says_what_was_used_and_its_limit() {
        let b = Breach { resource: Resource::Memory, used: 3 << 29, limit: 1 << 30 };
        assert_eq!(
            b.describe(),
            "memory: 1.5 GiB used, over its limit of 1.0 GiB (the task card's [evaluation.limits])"
        );
        let p = Breach { resource: Resource::Processes, used: 64, limit: 64 };
        assert!(p.describe().starts_with("processes: 64 processes and threads used"), "{}", p.describe());
        assert_eq!(Resource::Tmp.error_type(), "resource_limit: temporary space");
        assert_eq!(bytes(1000), "1000 bytes");
    }

    #[test]
    fn the_walk_counts_what_files_hold_and_follows_no_link() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = (0..50).fold(tmp.path().to_owned(), |p, i| p.join(format!("d{i}")));
        fs::create_dir_all(&deep).unwrap();
        fs::write(deep.join("f"), vec![1u8; 1 << 20]).unwrap();
        std::os::unix::fs::symlink("/usr", tmp.path().join("usr")).unwrap();
        let used = allocated(tmp.path());
        assert!((1 << 20..4 << 20).contains(&used), "{used}");
        // A sparse file counts what it holds, not its length.
        let sparse = fs::File::create(tmp.path().join("sparse")).unwrap();
        sparse.set_len(1 << 40).unwrap();
        assert!(allocated(tmp.path()) < 8 << 20);
    }

    #[test]
    fn the_watch_sees_its_own_process_tree() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let tree = descendants(std::process::id() as i32);
        assert!(tree.contains(&(child.id() as i32)), "{tree:?}");
        let limits = Limits { processes: 1, ..Limits::default() };
        let tmp = tempfile::tempdir().unwrap();
        let mut w = Watch::new(std::process::id(), tmp.path(), &limits, true);
        let b = w.check().expect("this test's process and its child are over one");
        assert_eq!(b.resource, Resource::Processes);
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
