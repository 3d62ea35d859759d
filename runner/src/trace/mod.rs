//! Recording what an experiment did (its provenance, the bundle format's §4b), with
//! strace.
//!
//! Why strace: it is the maintained, packaged (Debian's `strace`) ptrace tracer that
//! needs no privilege, follows every fork from its start (`-f`: a process cannot fork
//! away from it), and with `--seccomp-bpf` stops a traced process only at the system
//! calls asked for — process starts and ends, opens, renames, and the fd copies that
//! build pipelines — so that a CPU-bound experiment runs at full speed (BENCHMARKS.md
//! measures it). Its lines come through a FIFO in a folder only the runner uses, read as
//! they come: the record's memory is bounded whatever the experiment does, and nothing
//! is written to disk until the record, itself bounded.
//!
//! The tracer runs beneath the process keeper (`crate::keep`): killing the tracer ends
//! the run (the keeper sees it go and kills everything), and the record says tracing
//! was interrupted; killing the keeper leaves the tracer, which still sees every
//! process, and the runner kills those it shows alive.

mod strace;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use benchmark::integrity::Flow;
use bundle::{MAX_LIST, PROVENANCE_SCHEMA, Process, ProvenanceRecord};
use glob::Pattern;

pub use strace::Model;

/// The system calls traced: process starts and ends, opens, renames, fd copies.
const SYSCALLS: &str = "trace=execve,execveat,open,openat,openat2,creat,clone,clone3,fork,vfork,\
                        dup2,dup3,rename,renameat,renameat2";
/// The longest line read from the trace; a longer one is cut.
const MAX_LINE: usize = 64 * 1024;

/// The tracer on this machine, found once.
#[derive(Debug, Clone)]
pub struct Tracer {
    program: PathBuf,
    /// How it names itself in records: `strace 6.1, seccomp-bpf`.
    pub name: String,
}

impl Tracer {
    /// strace, from `REXBENCH_STRACE` or the `PATH`, if it runs and can filter with
    /// seccomp-bpf; otherwise why not. `REXBENCH_STRACE=off` turns tracing off.
    pub fn find() -> Result<Tracer, String> {
        static FOUND: OnceLock<Result<Tracer, String>> = OnceLock::new();
        FOUND.get_or_init(probe).clone()
    }
}

fn probe() -> Result<Tracer, String> {
    let program = match std::env::var_os("REXBENCH_STRACE") {
        Some(v) if v == "off" => return Err("tracing is turned off (REXBENCH_STRACE=off)".into()),
        Some(v) => PathBuf::from(v),
        // By its path: it starts from a cleared environment whose `PATH` is the sandbox's.
        None => std::env::var_os("PATH")
            .and_then(|path| std::env::split_paths(&path).map(|d| d.join("strace")).find(|p| p.is_file()))
            .unwrap_or_else(|| PathBuf::from("strace")),
    };
    let version = Command::new(&program)
        .arg("-V")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("no tracer on this machine: `{}` cannot run ({e})", program.display()))?;
    let first = String::from_utf8_lossy(&version.stdout).lines().next().unwrap_or("").to_owned();
    let number = first.rsplit(' ').next().unwrap_or("").to_owned();
    // One traced `true`: ptrace may be forbidden here (a container without it).
    let works = Command::new(&program)
        .args(["-f", "--seccomp-bpf", "-qq", "-e", "trace=execve", "-o", "/dev/null", "--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("the tracer cannot run: {e}"))?;
    if !works.status.success() {
        let said = String::from_utf8_lossy(&works.stderr);
        return Err(format!("the tracer cannot trace here: {}", said.lines().next().unwrap_or("").trim()));
    }
    Ok(Tracer { program, name: format!("strace {number}, seccomp-bpf") })
}

/// A trace being read: the tracer's lines, as they come, into a [`Model`].
#[derive(Debug)]
pub struct Recording {
    pub model: Arc<Mutex<Model>>,
    /// Set by the runner: 1, stop if the tracer never started; 2, stop now.
    stop: Arc<AtomicU8>,
    reader: Option<JoinHandle<()>>,
    /// The private folder holding the FIFO.
    _dir: tempfile::TempDir,
    fifo: PathBuf,
}

impl Recording {
    /// A FIFO for the tracer to write into, and a thread reading it into a model of
    /// `workdir` (whose reads of `inputs` it always keeps).
    pub fn start(workdir: &Path, inputs: &[String]) -> std::io::Result<Recording> {
        let dir = tempfile::Builder::new().prefix("rexbench-trace-").tempdir()?;
        let fifo = dir.path().join("trace");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR)
            .map_err(std::io::Error::from)?;
        let canonical = workdir.canonicalize()?;
        let model = Arc::new(Mutex::new(Model::new(&canonical.to_string_lossy(), inputs)));
        let (connected, stop) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU8::new(0)));
        // Opened without waiting for a writer: the tracer may never start.
        let file = nix::fcntl::open(
            &fifo,
            nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .map_err(std::io::Error::from)?;
        let file = File::from(file);
        let reader = {
            let (model, connected, stop) = (model.clone(), connected.clone(), stop.clone());
            std::thread::spawn(move || read_trace(file, &model, &connected, &stop))
        };
        Ok(Recording { model, stop, reader: Some(reader), _dir: dir, fifo })
    }

    /// The tracer's command line around `command`.
    pub fn argv(&self, tracer: &Tracer, command: &[OsString]) -> Vec<OsString> {
        let mut argv: Vec<OsString> = vec![
            tracer.program.clone().into(),
            "-f".into(),
            "--seccomp-bpf".into(),
            "-q".into(),
            "-ttt".into(),
            "-y".into(),
            // A clone inside the sandbox's PID namespace returns the child's id there:
            // this adds the id the trace's lines name it by.
            "--pidns-translation".into(),
            "-X".into(),
            "raw".into(),
            "-s".into(),
            "512".into(),
            // Signals as they are delivered are not needed (only how a process ended,
            // which `signal=none` would hide as well): SIGCHLD, the commonest, is left out.
            "-e".into(),
            "signal=!SIGCHLD".into(),
            "-e".into(),
            SYSCALLS.into(),
            "-o".into(),
            self.fifo.clone().into(),
            "--".into(),
        ];
        argv.extend(command.iter().cloned());
        argv
    }

    /// Waits (at most `limit`) for the tracer's last line, after the keeper is gone.
    pub fn finish(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        self.stop.store(1, Ordering::SeqCst);
        while self.reader.as_ref().is_some_and(|r| !r.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.stop.store(2, Ordering::SeqCst);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }

    /// Whether the tracer has stopped writing (its end of the FIFO is closed).
    pub fn ended(&self) -> bool {
        self.reader.as_ref().is_none_or(|r| r.is_finished())
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.stop.store(2, Ordering::SeqCst);
    }
}

/// Reads the FIFO until the tracer closes it (or, if it never opens it, until told
/// to stop), handing each line to the model.
fn read_trace(file: File, model: &Mutex<Model>, connected: &AtomicBool, stop: &AtomicU8) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let mut line = Vec::with_capacity(1024);
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        if stopping == 2 || (stopping == 1 && !connected.load(Ordering::SeqCst)) {
            return;
        }
        let ready = {
            let mut fds = [PollFd::new(reader.get_ref().as_fd(), PollFlags::POLLIN)];
            poll(&mut fds, PollTimeout::from(50u16)).unwrap_or(0) > 0
        };
        if !ready && reader.buffer().is_empty() {
            continue;
        }
        // Whatever is there, line by line; a partial line waits for its end.
        loop {
            let available = match reader.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            if available.is_empty() {
                // End of file: the writer closed it (or none has opened it yet).
                if connected.load(Ordering::SeqCst) {
                    if !line.is_empty() {
                        take_line(&line, model);
                    }
                    return;
                }
                break;
            }
            connected.store(true, Ordering::SeqCst);
            let (used, complete) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            };
            if line.len() < MAX_LINE {
                let room = MAX_LINE - line.len();
                line.extend_from_slice(&available[..used.min(room)]);
            }
            reader.consume(used);
            if complete {
                take_line(&line, model);
                line.clear();
            }
        }
    }
}

fn take_line(line: &[u8], model: &Mutex<Model>) {
    let text = String::from_utf8_lossy(line);
    model.lock().expect("not poisoned").line(text.trim_end_matches('\n'));
}

/// The record of a traced experiment: the model's processes, each list bounded, keeping
/// first what the inputs' flow needs (reads of inputs and of files written by a process
/// the inputs reached; writes of result files and of files another process read).
pub(crate) fn record(
    model: &Model,
    tracer: &Tracer,
    interrupted: Option<String>,
    inputs: &[String],
    results: Vec<String>,
    duration_ms: u64,
) -> ProvenanceRecord {
    let full = ProvenanceRecord {
        schema: PROVENANCE_SCHEMA.to_owned(),
        tracer: Some(tracer.name.clone()),
        untraced: None,
        interrupted,
        limit: None,
        cut: model.cut.clone(),
        duration_ms,
        results: results.into_iter().take(MAX_LIST).collect(),
        salt: None,
        // The sandbox's own processes (bubblewrap and its namespace's first process)
        // are not the experiment's: the task's command is the record's first.
        processes: model
            .procs
            .iter()
            .skip(model.wrapper)
            .enumerate()
            .map(|(i, p)| Process {
                id: i as u32 + 1,
                // A process whose start its parent's trace did not show (a call cut
                // short) is put beneath the command.
                parent: (i > 0).then(|| {
                    p.parent
                        .and_then(|q| q.checked_sub(model.wrapper))
                        .filter(|&q| q < i)
                        .map_or(1, |q| q as u32 + 1)
                }),
                program: if p.program.is_empty() { "?".to_owned() } else { p.program.clone() },
                argv: p.argv.clone(),
                start_ms: model.ms(p.start),
                end_ms: p.end.map(|t| model.ms(t).max(model.ms(p.start))),
                exit: p.exit.clone(),
                killed: p.killed,
                read: p.read.clone(),
                wrote: p.wrote.clone(),
                renamed: p.renamed.clone(),
                pipes_in: p.pipes_in.iter().copied().collect(),
                pipes_out: p.pipes_out.iter().copied().collect(),
            })
            .collect(),
    };
    bound(full, inputs)
}

/// Cuts each list of `record` to its bound, keeping what the inputs' flow needs first.
fn bound(mut record: ProvenanceRecord, inputs: &[String]) -> ProvenanceRecord {
    let patterns: Vec<Pattern> = inputs.iter().filter_map(|p| Pattern::new(p).ok()).collect();
    let flow = Flow::of(&record, &patterns);
    let is_input = |path: &str| patterns.iter().any(|p| p.matches_with(path, benchmark::integrity::GLOB));
    let fed_wrote: BTreeSet<String> = record
        .processes
        .iter()
        .enumerate()
        .filter(|(i, _)| flow.fed[*i])
        .flat_map(|(_, p)| p.wrote.iter().chain(p.renamed.iter().map(|[_, to]| to)).cloned())
        .collect();
    let read_anywhere: BTreeSet<String> = record
        .processes
        .iter()
        .flat_map(|p| p.read.iter().chain(p.renamed.iter().map(|[from, _]| from)).cloned())
        .collect();
    let results: BTreeSet<String> = record.results.iter().cloned().collect();
    let mut dropped = 0u64;
    for p in &mut record.processes {
        dropped += keep_first(&mut p.read, |r| is_input(r) || fed_wrote.contains(r));
        dropped += keep_first(&mut p.wrote, |w| results.contains(w) || read_anywhere.contains(w));
        dropped += keep_first(&mut p.renamed, |[_, to]| results.contains(to) || read_anywhere.contains(to));
        dropped += keep_first(&mut p.pipes_in, |_| true);
        dropped += keep_first(&mut p.pipes_out, |_| true);
    }
    record.cut.entries += dropped;
    // Within its bounds, a record of many processes with long lists could still be
    // larger than a record may be (spec §4b): cut to fit, never refused.
    record.fit();
    record
}

/// Cuts `items` to [`MAX_LIST`], those `first` picks before the rest (each group in
/// its order); returns how many were dropped.
fn keep_first<T>(items: &mut Vec<T>, first: impl Fn(&T) -> bool) -> u64 {
    if items.len() <= MAX_LIST {
        return 0;
    }
    let dropped = (items.len() - MAX_LIST) as u64;
    let (mut kept, rest): (Vec<T>, Vec<T>) = std::mem::take(items).into_iter().partition(|i| first(i));
    kept.truncate(MAX_LIST);
    let room = MAX_LIST - kept.len();
    kept.extend(rest.into_iter().take(room));
    *items = kept;
    dropped
}

/// Reads at most `limit` bytes of `path` (the keeper's report, in the runner's folder).
pub(crate) fn read_small(path: &Path, limit: u64) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    File::open(path).ok()?.take(limit).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}
