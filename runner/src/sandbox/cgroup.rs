//! A run's own control group, where the runner may make one: the kernel then holds the
//! run to the card's memory and processes at every allocation and every fork, not only
//! at the watch's looks (`super::limits`), and no process of the run can leave it.
//!
//! - cgroup v2, where the runner's own group is delegated to it (its `cgroup.procs` and
//!   `cgroup.subtree_control` writable, `memory` and `pids` among its controllers): the
//!   runner moves itself into a leaf of its group (`rexbench-runner`), enables both
//!   controllers for its group's children, and makes one child per run (`memory.max`,
//!   `memory.swap.max`, `pids.max`);
//! - cgroup v1, where the runner may write the `memory` and `pids` hierarchies (root, on
//!   a machine whose cgroups are v1): one group per run in each, under the runner's own
//!   (`memory.limit_in_bytes`, `memory.memsw.limit_in_bytes` where swap is accounted,
//!   `pids.max`);
//! - elsewhere (an unprivileged runner on v1, a v2 group not delegated, a Slurm step
//!   whose cgroup plugin owns its group), none: the watch and the kernel's rlimits hold
//!   the run, as SECURITY.md says.
//!
//! The run's first process (the keeper) joins the group before it starts anything
//! (`rexbench keep --cgroup FILE`), so everything of the run is in it. At the end, the
//! group says whether the kernel stopped the run at a limit (`oom_kill`, `pids.events`),
//! whatever is left in it is killed, and it is removed.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use benchmark::task::Limits;

use super::limits::{Breach, Resource};

/// One run's group: a folder per hierarchy (v2: one; v1: memory's and pids').
#[derive(Debug)]
pub struct Group {
    version: Version,
    /// Where the memory controller's files are.
    memory: PathBuf,
    /// Where the pids controller's files are.
    pids: PathBuf,
    limits: (u64, u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// Where runs' groups are made on this machine, found once: `None` where the runner may
/// make none.
#[derive(Debug, Clone)]
struct Parents {
    version: Version,
    memory: PathBuf,
    pids: PathBuf,
}

impl Group {
    /// A group for the run `name` with the card's memory and processes, where the runner
    /// may make one; `None` otherwise (nothing is left made).
    pub fn make(name: &str, limits: &Limits) -> Option<Group> {
        let parents = parents()?;
        let leaf: String =
            name.chars().take(160).map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        let leaf = format!("rexbench-{}-{leaf}", std::process::id());
        let memory = parents.memory.join(&leaf);
        let pids = parents.pids.join(&leaf);
        let group = Group {
            version: parents.version,
            memory,
            pids,
            limits: (limits.memory_mib << 20, limits.processes),
        };
        fs::create_dir(&group.memory).ok()?;
        if group.pids != group.memory && fs::create_dir(&group.pids).is_err() {
            group.remove();
            return None;
        }
        if group.set().is_none() {
            group.remove();
            return None;
        }
        Some(group)
    }

    fn set(&self) -> Option<()> {
        let (memory, processes) = self.limits;
        match self.version {
            Version::V2 => {
                fs::write(self.memory.join("memory.max"), memory.to_string()).ok()?;
                // Swap is memory the run holds all the same.
                let _ = fs::write(self.memory.join("memory.swap.max"), "0");
                fs::write(self.pids.join("pids.max"), processes.to_string()).ok()?;
            }
            Version::V1 => {
                fs::write(self.memory.join("memory.limit_in_bytes"), memory.to_string()).ok()?;
                let memsw = self.memory.join("memory.memsw.limit_in_bytes");
                if memsw.exists() {
                    fs::write(memsw, memory.to_string()).ok()?;
                }
                fs::write(self.pids.join("pids.max"), processes.to_string()).ok()?;
            }
        }
        Some(())
    }

    /// The files a process writes its id to, to join the group (the keeper's
    /// `--cgroup`).
    pub fn procs(&self) -> Vec<PathBuf> {
        let mut files = vec![self.memory.join("cgroup.procs")];
        if self.pids != self.memory {
            files.push(self.pids.join("cgroup.procs"));
        }
        files
    }

    /// Whether the kernel killed a process of the run at its memory limit: the run was
    /// over it, and is stopped as the watch would stop it (a process killed while its
    /// shell goes on must not let the run end as if nothing happened).
    pub fn out_of_memory(&self) -> Option<Breach> {
        let memory = self.limits.0;
        let oom = match self.version {
            Version::V2 => field(&self.memory.join("memory.events"), "oom_kill"),
            Version::V1 => field(&self.memory.join("memory.oom_control"), "oom_kill"),
        };
        (oom.unwrap_or(0) > 0).then(|| {
            let peak = match self.version {
                Version::V2 => read_number(&self.memory.join("memory.peak")),
                Version::V1 => read_number(&self.memory.join("memory.max_usage_in_bytes")),
            };
            Breach { resource: Resource::Memory, used: peak.unwrap_or(memory).max(memory), limit: memory }
        })
    }

    /// The limit the kernel held a failed run at, if it did: a process killed for memory,
    /// or a fork refused at the processes' limit.
    pub fn breach(&self) -> Option<Breach> {
        let processes = self.limits.1;
        if let Some(b) = self.out_of_memory() {
            return Some(b);
        }
        if field(&self.pids.join("pids.events"), "max").unwrap_or(0) > 0 {
            return Some(Breach { resource: Resource::Processes, used: processes, limit: processes });
        }
        None
    }

    /// Kills whatever is left in the group (a second's tries) and removes it.
    pub fn end(self) {
        self.remove();
    }

    fn remove(&self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut left = false;
            for dir in [&self.memory, &self.pids] {
                if self.version == Version::V2 {
                    // Every process of it, at once (kernels from 5.14).
                    let _ = fs::write(dir.join("cgroup.kill"), "1");
                }
                for pid in members(dir) {
                    left = true;
                    let _ =
                        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
                }
            }
            let gone = [&self.memory, &self.pids].iter().all(|d| fs::remove_dir(d).is_ok() || !d.exists());
            if gone || Instant::now() >= deadline {
                return;
            }
            if left {
                std::thread::sleep(Duration::from_millis(20));
            } else {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

/// The processes in a group.
fn members(dir: &Path) -> Vec<i32> {
    fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// `NAME N` in a flat-keyed file.
fn field(file: &Path, name: &str) -> Option<u64> {
    let text = fs::read_to_string(file).ok()?;
    text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

fn read_number(file: &Path) -> Option<u64> {
    fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// Where this runner's runs' groups go, found (and, for v2, prepared) once.
fn parents() -> Option<Parents> {
    static FOUND: OnceLock<Option<Parents>> = OnceLock::new();
    FOUND.get_or_init(find).clone()
}

fn find() -> Option<Parents> {
    let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut v1 = (None, None);
    let mut v2 = None;
    for line in mounts.lines() {
        let Some((before, after)) = line.split_once(" - ") else { continue };
        let fields: Vec<&str> = before.split(' ').collect();
        let after: Vec<&str> = after.split(' ').collect();
        let (Some(root), Some(point), Some(kind)) = (fields.get(3), fields.get(4), after.first()) else {
            continue;
        };
        let options = after.get(2).copied().unwrap_or("");
        match *kind {
            "cgroup2" => v2 = Some((root.to_string(), PathBuf::from(point))),
            "cgroup" => {
                let has = |c: &str| options.split(',').any(|o| o == c);
                if has("memory") {
                    v1.0 = Some((root.to_string(), PathBuf::from(point)));
                }
                if has("pids") {
                    v1.1 = Some((root.to_string(), PathBuf::from(point)));
                }
            }
            _ => {}
        }
    }
    // The runner's own group in a hierarchy: its path, beneath the mount's root.
    let own_in = |controller: Option<&str>, (root, point): &(String, PathBuf)| -> Option<PathBuf> {
        let path = own.lines().find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let ours = match controller {
                None => controllers.is_empty(),
                Some(c) => controllers.split(',').any(|x| x == c),
            };
            ours.then(|| path.to_owned())
        })?;
        let relative = path.strip_prefix(root.as_str()).unwrap_or(&path).trim_start_matches('/').to_owned();
        let dir = point.join(relative);
        dir.is_dir().then_some(dir)
    };
    if let (Some(memory), Some(pids)) = (&v1.0, &v1.1) {
        let memory = own_in(Some("memory"), memory)?;
        let pids = own_in(Some("pids"), pids)?;
        return (writable(&memory) && writable(&pids)).then_some(Parents {
            version: Version::V1,
            memory,
            pids,
        });
    }
    let dir = own_in(None, v2.as_ref()?)?;
    delegated_v2(&dir).map(|dir| Parents { version: Version::V2, memory: dir.clone(), pids: dir })
}

/// Whether the runner may make a group under `dir`: it makes and removes one.
fn writable(dir: &Path) -> bool {
    let probe = dir.join(format!("rexbench-probe-{}", std::process::id()));
    let made = fs::create_dir(&probe).is_ok();
    if made {
        let _ = fs::remove_dir(&probe);
    }
    made
}

/// A v2 group delegated to the runner, prepared for runs' groups beneath it: the runner
/// moved into a leaf of its own, and `memory` and `pids` enabled for the children. `None`
/// (and nothing changed) where the group is not the runner's to divide: not writable, its
/// controllers lacking, or other processes in it.
fn delegated_v2(dir: &Path) -> Option<PathBuf> {
    let controllers = fs::read_to_string(dir.join("cgroup.controllers")).ok()?;
    let has = |c: &str| controllers.split_whitespace().any(|x| x == c);
    if !has("memory") || !has("pids") {
        return None;
    }
    let enabled = fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
    let on = |c: &str| enabled.split_whitespace().any(|x| x == c);
    if on("memory") && on("pids") {
        // Already divided: the runner is in a leaf of it, or at the root.
        return writable(dir).then(|| dir.to_owned());
    }
    let me = std::process::id() as i32;
    if members(dir).iter().any(|p| *p != me) {
        return None;
    }
    let leaf = dir.join("rexbench-runner");
    if fs::create_dir(&leaf).is_err() && !leaf.is_dir() {
        return None;
    }
    if fs::write(leaf.join("cgroup.procs"), me.to_string()).is_err() {
        let _ = fs::remove_dir(&leaf);
        return None;
    }
    if fs::write(dir.join("cgroup.subtree_control"), "+memory +pids").is_err() {
        let _ = fs::write(dir.join("cgroup.procs"), me.to_string());
        let _ = fs::remove_dir(&leaf);
        return None;
    }
    Some(dir.to_owned())
}

/// Joins the groups whose `cgroup.procs` files are given (the keeper, before it starts
/// anything): every process it then starts is in them.
pub fn join(files: &[PathBuf]) -> Result<(), String> {
    for file in files {
        fs::write(file, std::process::id().to_string())
            .map_err(|e| format!("cannot join the run's control group {}: {e}", file.display()))?;
    }
    Ok(())
}
