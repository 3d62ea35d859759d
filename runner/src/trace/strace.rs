//! What strace's lines say, gathered as they come: one line at a time, memory bounded
//! whatever the experiment does. The lines are strace's with `-f -ttt -y -X raw`: each
//! starts with the thread's id and the time, then a system call with its arguments and
//! result (fds annotated with their paths, `3</work/data/gen.tsv>`, `1<pipe:[123]>`),
//! a call split in two (`<unfinished ...>` and `<... openat resumed>`), or how a
//! process ended (`+++ exited with 0 +++`, `+++ killed by SIGKILL +++`).
//!
//! A line is the experiment's only through what strace prints: strings are quoted with
//! `"` and `\` escaped, and an fd's path has `<` and `>` escaped, so a file named to
//! look like a result cannot end an argument early.

use std::collections::{BTreeSet, HashMap, HashSet};

use bundle::{Cut, MAX_PROCESSES};

/// The most distinct paths one process's lists hold while tracing; the record keeps
/// fewer (those the inputs' flow needs first).
const MAX_HELD: usize = 4096;
/// The most threads, unfinished calls and pipes tracked at once.
const MAX_TRACKED: usize = 1 << 16;
/// The most paths, renames and pipes held for all processes together: the model's memory
/// is bounded whatever the experiment opens. Reads of the task's inputs are held beyond
/// it, up to a list's bound per process: one is all the checks need.
const MAX_HELD_TOTAL: usize = 1 << 20;

/// What a standard fd (0, 1, 2) of a process refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fd {
    Pipe(u32),
    Other,
}

/// One process as traced.
#[derive(Debug, Clone)]
pub struct Proc {
    pub pid: i32,
    pub parent: Option<usize>,
    pub program: String,
    pub argv: Vec<String>,
    pub start: f64,
    pub end: Option<f64>,
    pub exit: Option<String>,
    pub killed: bool,
    pub read: Vec<String>,
    pub wrote: Vec<String>,
    pub renamed: Vec<[String; 2]>,
    pub pipes_in: BTreeSet<u32>,
    pub pipes_out: BTreeSet<u32>,
    held: HashSet<(u8, String)>,
    /// Reads of the task's inputs among them.
    inputs_held: usize,
    fds: [Option<Fd>; 3],
    /// It ran a program of its own (its standard fds then are what that program used).
    execd: bool,
}

/// Everything the trace has said so far.
#[derive(Debug)]
pub struct Model {
    /// The working copy, as strace prints paths in it (canonical, no trailing `/`).
    workdir: String,
    /// The task's inputs (globs in the working copy).
    inputs: Vec<glob::Pattern>,
    /// Entries held for all processes together.
    held_total: usize,
    t0: Option<f64>,
    pub last: f64,
    pub procs: Vec<Proc>,
    /// Process id → its process, while it lives.
    live: HashMap<i32, usize>,
    /// Processes that ended before their parent's `clone` returned (a loaded machine
    /// prints a child's lines first): claimed by that parent when it does.
    unclaimed: HashMap<i32, usize>,
    /// Ends of ids with no line before them: a process that ended before its parent's
    /// `clone` returned, its first line its end (or a thread's, dropped when its clone returns).
    ended_unseen: HashMap<i32, (f64, String)>,
    /// Thread id → the id of its process.
    threads: HashMap<i32, i32>,
    /// A call's first half, by thread.
    pending: HashMap<i32, String>,
    /// Pipe inode → its number in the record.
    pipes: HashMap<u64, u32>,
    /// Processes not recorded (past the bound), and entries left out.
    pub cut: Cut,
    ignored: HashSet<i32>,
    /// When the runner began killing what outlived the command: processes that end by
    /// SIGKILL after it were killed by it.
    pub sweep_from: Option<f64>,
    /// How many processes at the start are the sandbox's (`crate::sandbox`), not the
    /// experiment's: bubblewrap and its PID namespace's first process. The record
    /// leaves them out; the task's command is the one after them.
    pub wrapper: usize,
    /// Forks the kernel refused for the process limit (`EAGAIN`): a run that failed
    /// after one was stopped by its limit (`crate::sandbox::limits`).
    pub refused_forks: u64,
}

impl Model {
    pub fn new(workdir: &str, inputs: &[String]) -> Model {
        Model {
            workdir: workdir.trim_end_matches('/').to_owned(),
            inputs: inputs.iter().filter_map(|p| glob::Pattern::new(p).ok()).collect(),
            held_total: 0,
            t0: None,
            last: 0.0,
            procs: Vec::new(),
            live: HashMap::new(),
            unclaimed: HashMap::new(),
            ended_unseen: HashMap::new(),
            threads: HashMap::new(),
            pending: HashMap::new(),
            pipes: HashMap::new(),
            cut: Cut::default(),
            ignored: HashSet::new(),
            sweep_from: None,
            wrapper: 0,
            refused_forks: 0,
        }
    }

    /// Milliseconds since the trace began.
    pub fn ms(&self, t: f64) -> u64 {
        ((t - self.t0.unwrap_or(t)).max(0.0) * 1000.0).round() as u64
    }

    /// Whether the task's command (the first process after the sandbox's own) has
    /// ended, and how.
    pub fn root_exit(&self) -> Option<&str> {
        let root = self.procs.get(self.wrapper)?;
        root.end.and(root.exit.as_deref())
    }

    /// Whether the first process traced (the sandbox's, which ends with the status of
    /// the task's command once everything in it has ended; the command itself where
    /// there is no sandbox) has ended, and how: what the keeper's command ends with.
    pub fn first_exit(&self) -> Option<&str> {
        let first = self.procs.first()?;
        first.end.and(first.exit.as_deref())
    }

    /// The processes the trace shows alive, by process id.
    pub fn alive(&self) -> Vec<i32> {
        self.live.keys().copied().collect()
    }

    /// Takes one line of the trace.
    pub fn line(&mut self, line: &str) {
        let Some((tid, rest)) = line.split_once(' ') else { return };
        let Ok(tid) = tid.trim().parse::<i32>() else { return };
        let rest = rest.trim_start();
        let Some((time, call)) = rest.split_once(' ') else { return };
        let Ok(t) = time.parse::<f64>() else { return };
        self.t0.get_or_insert(t);
        self.last = self.last.max(t);
        if let Some(first) = call.strip_suffix(" <unfinished ...>") {
            if self.pending.len() < MAX_TRACKED {
                self.pending.insert(tid, first.to_owned());
            }
            return;
        }
        let whole;
        let call = if let Some(resumed) = call.strip_prefix("<... ") {
            let Some((_, tail)) = resumed.split_once(" resumed>") else { return };
            let Some(first) = self.pending.remove(&tid) else { return };
            whole = format!("{first}{tail}");
            whole.as_str()
        } else {
            call
        };
        if let Some(end) = call.strip_prefix("+++ ") {
            self.ended(tid, t, end.trim_end_matches(" +++"));
            return;
        }
        if call.starts_with("---") {
            return;
        }
        let Some(pid) = self.process_of(tid, t) else { return };
        self.syscall(pid, t, call);
    }

    /// The process a thread belongs to, started if this is its first line.
    fn process_of(&mut self, tid: i32, t: f64) -> Option<usize> {
        let pid = self.threads.get(&tid).copied().unwrap_or(tid);
        if let Some(&i) = self.live.get(&pid) {
            return Some(i);
        }
        if self.ignored.contains(&pid) {
            return None;
        }
        self.start(pid, None, t)
    }

    fn start(&mut self, pid: i32, parent: Option<usize>, t: f64) -> Option<usize> {
        if self.procs.len() >= MAX_PROCESSES {
            self.cut.processes += 1;
            if self.ignored.len() < MAX_TRACKED {
                self.ignored.insert(pid);
            }
            return None;
        }
        let (program, argv, fds) = match parent {
            Some(q) => (self.procs[q].program.clone(), self.procs[q].argv.clone(), [None; 3]),
            None => (String::new(), Vec::new(), [None; 3]),
        };
        self.procs.push(Proc {
            pid,
            parent,
            program,
            argv,
            start: t,
            end: None,
            exit: None,
            killed: false,
            read: Vec::new(),
            wrote: Vec::new(),
            renamed: Vec::new(),
            pipes_in: BTreeSet::new(),
            pipes_out: BTreeSet::new(),
            held: HashSet::new(),
            inputs_held: 0,
            fds,
            execd: false,
        });
        let i = self.procs.len() - 1;
        self.live.insert(pid, i);
        Some(i)
    }

    fn ended(&mut self, tid: i32, t: f64, how: &str) {
        // A thread's end is not its process's.
        if self.threads.remove(&tid).is_some() {
            return;
        }
        let Some(i) = self.live.remove(&tid) else {
            if !self.ignored.contains(&tid) && self.ended_unseen.len() < MAX_TRACKED {
                self.ended_unseen.insert(tid, (t, how.to_owned()));
            }
            return;
        };
        if self.procs[i].parent.is_none() && i != 0 && self.unclaimed.len() < MAX_TRACKED {
            self.unclaimed.insert(tid, i);
        }
        // A process that ran no program of its own (a subshell, a forked worker) used the
        // fds it inherited.
        if !self.procs[i].execd {
            self.note_fds(i);
        }
        let exit = if let Some(code) = how.strip_prefix("exited with ") {
            format!("exit {}", code.trim())
        } else if let Some(signal) = how.strip_prefix("killed by ") {
            signal.trim().trim_end_matches(" (core dumped)").to_owned()
        } else {
            how.to_owned()
        };
        // In the sandbox, the kernel kills what is left in its PID namespace when the
        // task's command ends (its namespace's first process ends with it): the sweep's
        // doing as much as the keeper's.
        let command_ended =
            self.wrapper > 0 && self.procs.get(self.wrapper).and_then(|c| c.end).is_some_and(|e| t >= e);
        let p = &mut self.procs[i];
        p.killed = exit == "SIGKILL" && (self.sweep_from.is_some_and(|s| t >= s) || command_ended);
        p.end = Some(t);
        p.exit = Some(exit);
    }

    fn syscall(&mut self, i: usize, t: f64, call: &str) {
        let Some(open) = call.find('(') else { return };
        let name = &call[..open];
        let Some((args, result)) = split_call(&call[open + 1..]) else { return };
        let ret = result.trim_start().strip_prefix("= ").unwrap_or("");
        let (value, annotation) = result_value(ret);
        if value.is_none_or(|v| v < 0) {
            if matches!(name, "clone" | "clone3" | "fork" | "vfork") && ret.contains("EAGAIN") {
                self.refused_forks += 1;
            }
            return;
        }
        let value = value.unwrap_or_default();
        match name {
            "execve" | "execveat" => {
                let args = split_args(args);
                let (path, argv) =
                    if name == "execve" { (args.first(), args.get(1)) } else { (args.get(1), args.get(2)) };
                self.procs[i].execd = true;
                self.note_fds(i);
                let p = &mut self.procs[i];
                if let Some(path) = path.and_then(|a| unquote(a)) {
                    p.program = cut_text(&path);
                }
                if let Some(argv) = argv {
                    let words = split_args(argv.trim_start_matches('[').trim_end_matches(']'));
                    let kept: Vec<String> = words
                        .iter()
                        .take(bundle::MAX_LIST)
                        .filter_map(|w| unquote(w))
                        .map(|w| cut_text(&w))
                        .collect();
                    // The sandbox's own processes are not in the record: nothing of theirs
                    // is cut from it.
                    if (words.len() > bundle::MAX_LIST || argv.contains("...")) && i >= self.wrapper {
                        self.cut.entries += 1;
                    }
                    self.procs[i].argv = kept;
                }
            }
            "open" | "openat" | "openat2" | "creat" => {
                let args = split_args(args);
                let (dir, path, flags) = match name {
                    "open" => (None, args.first(), args.get(1).map(|f| number(f))),
                    "creat" => (None, args.first(), Some(Some(0o1101))),
                    "openat" => (args.first(), args.get(1), args.get(2).map(|f| number(f))),
                    _ => (
                        args.first(),
                        args.get(1),
                        args.get(2).map(|how| how.split("flags=").nth(1).and_then(number)),
                    ),
                };
                let flags = flags.flatten().unwrap_or(0);
                if (0..=2).contains(&value) {
                    self.procs[i].fds[value as usize] = Some(Fd::Other);
                }
                // A directory opened to list it is not a file read.
                if flags & O_DIRECTORY != 0 {
                    return;
                }
                let requested =
                    path.and_then(|p| unquote(p)).map(|p| match dir.and_then(|d| annotation_of(d)) {
                        Some(base) if !p.starts_with('/') => format!("{base}/{p}"),
                        _ => p,
                    });
                let place = requested
                    .as_deref()
                    .and_then(|p| self.in_workdir(p))
                    .or_else(|| annotation.as_deref().and_then(|a| self.in_workdir(a)));
                let Some(place) = place else { return };
                let writes = flags & 0b11 != 0 || flags & O_CREAT != 0;
                let reads = flags & 0b11 != 1;
                if reads {
                    self.hold(i, 0, place.clone());
                }
                if writes {
                    self.hold(i, 1, place);
                }
            }
            "dup2" | "dup3" => {
                let args = split_args(args);
                let target = value;
                if !(0..=2).contains(&target) {
                    return;
                }
                let fd = match args.first().and_then(|a| annotation_of(a)) {
                    Some(path) => match pipe_inode(&path) {
                        Some(inode) => self.pipe(inode).map_or(Fd::Other, Fd::Pipe),
                        None => Fd::Other,
                    },
                    None => Fd::Other,
                };
                self.set_fd(i, target as usize, fd);
            }
            "clone" | "clone3" | "fork" | "vfork" => {
                // Inside the sandbox's PID namespace a clone returns the child's id
                // there; `--pidns-translation` adds the id the trace's lines carry.
                let child = translated_pid(ret).unwrap_or(value as i32);
                let flags = args.split("flags=").nth(1).and_then(number).unwrap_or(0);
                if flags & CLONE_THREAD != 0 {
                    let pid = self.procs[i].pid;
                    if self.threads.len() < MAX_TRACKED {
                        self.threads.insert(child, pid);
                    }
                    self.ended_unseen.remove(&child);
                    return;
                }
                self.forked(i, child, t);
            }
            "rename" | "renameat" | "renameat2" => {
                let args = split_args(args);
                let paths: Vec<Option<String>> = if name == "rename" {
                    vec![args.first().and_then(|a| unquote(a)), args.get(1).and_then(|a| unquote(a))]
                } else {
                    vec![self.at(args.first(), args.get(1)), self.at(args.get(2), args.get(3))]
                };
                let from = paths[0].as_deref().and_then(|p| self.in_workdir(p));
                let to = paths[1].as_deref().and_then(|p| self.in_workdir(p));
                match (from, to) {
                    (Some(from), Some(to)) => {
                        let p = &mut self.procs[i];
                        if p.renamed.len() < MAX_HELD && self.held_total < MAX_HELD_TOTAL {
                            p.renamed.push([from, to]);
                            self.held_total += 1;
                        } else {
                            self.cut.entries += 1;
                        }
                    }
                    // Brought in from outside: written here.
                    (None, Some(to)) => self.hold(i, 1, to),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// A path given relative to a directory fd (`renameat`'s and `openat`'s).
    fn at(&self, dir: Option<&&str>, path: Option<&&str>) -> Option<String> {
        let path = unquote(path?)?;
        if path.starts_with('/') {
            return Some(path);
        }
        Some(format!("{}/{path}", annotation_of(dir?)?))
    }

    /// A new process forked by process `i` (its first line may have come already).
    fn forked(&mut self, i: usize, child: i32, t: f64) {
        let seen = self.live.get(&child).copied().or_else(|| self.unclaimed.remove(&child));
        let c = match seen {
            Some(c) => {
                // Its lines came before its parent's return: it is the parent's all the same.
                if self.procs[c].parent.is_none() && c != 0 {
                    self.procs[c].parent = Some(i);
                    if self.procs[c].program.is_empty() {
                        self.procs[c].program = self.procs[i].program.clone();
                        self.procs[c].argv = self.procs[i].argv.clone();
                    }
                }
                c
            }
            None => match self.start(child, Some(i), t) {
                Some(c) => c,
                None => return,
            },
        };
        // It holds its parent's standard fds, where it has not set its own.
        for fd in 0..3 {
            if self.procs[c].fds[fd].is_none()
                && let Some(inherited) = self.procs[i].fds[fd]
            {
                self.procs[c].fds[fd] = Some(inherited);
            }
        }
        // Where it ran its program (or ended) before this return, it did so with them.
        if self.procs[c].execd || self.procs[c].end.is_some() {
            self.note_fds(c);
        }
        if let Some((end, how)) = self.ended_unseen.remove(&child) {
            self.ended(child, end, &how);
        }
    }

    /// The pipes on process `i`'s standard fds, as it uses them now.
    fn note_fds(&mut self, i: usize) {
        for fd in 0..3 {
            if let Some(Fd::Pipe(n)) = self.procs[i].fds[fd] {
                self.note_pipe(i, fd, n);
            }
        }
    }

    fn note_pipe(&mut self, i: usize, fd: usize, n: u32) {
        let p = &mut self.procs[i];
        let set = if fd == 0 { &mut p.pipes_in } else { &mut p.pipes_out };
        if set.contains(&n) {
            return;
        }
        if set.len() < MAX_HELD && self.held_total < MAX_HELD_TOTAL {
            set.insert(n);
            self.held_total += 1;
        } else {
            self.cut.entries += 1;
        }
    }

    /// A standard fd set by the process itself (`dup2`, an open that took its number):
    /// noted when it runs a program, or ends without one.
    fn set_fd(&mut self, i: usize, fd: usize, to: Fd) {
        self.procs[i].fds[fd] = Some(to);
    }

    fn pipe(&mut self, inode: u64) -> Option<u32> {
        let next = self.pipes.len() as u32 + 1;
        if let Some(&n) = self.pipes.get(&inode) {
            return Some(n);
        }
        if self.pipes.len() >= MAX_TRACKED {
            return None;
        }
        self.pipes.insert(inode, next);
        Some(next)
    }

    /// Adds `path` to process `i`'s reads (0) or writes (1), once.
    fn hold(&mut self, i: usize, list: u8, path: String) {
        let input = list == 0
            && self.procs[i].inputs_held < bundle::MAX_LIST
            && self.inputs.iter().any(|g| g.matches_with(&path, benchmark::integrity::GLOB));
        let p = &mut self.procs[i];
        if p.held.contains(&(list, path.clone())) {
            return;
        }
        if !input && (p.held.len() >= 2 * MAX_HELD || self.held_total >= MAX_HELD_TOTAL) {
            self.cut.entries += 1;
            return;
        }
        self.held_total += 1;
        p.inputs_held += usize::from(input);
        p.held.insert((list, path.clone()));
        if list == 0 { p.read.push(path) } else { p.wrote.push(path) }
    }

    /// `path` as a path in the working copy, if it is in it (lexically: `.` and `..`
    /// resolved, links not followed).
    fn in_workdir(&self, path: &str) -> Option<String> {
        let path = unescape(path);
        let mut parts: Vec<&str> = Vec::new();
        for part in path.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                _ => parts.push(part),
            }
        }
        let normal = format!("/{}", parts.join("/"));
        let rest = normal.strip_prefix(&self.workdir)?.strip_prefix('/')?;
        (!rest.is_empty() && rest.chars().count() <= bundle::MAX_TEXT).then(|| rest.to_owned())
    }
}

const O_CREAT: i64 = 0o100;
const O_DIRECTORY: i64 = 0o200000;
const CLONE_THREAD: i64 = 0x10000;

/// The characters of `s` outside quoted strings and fd annotations (`3</path>`), each
/// with where it is and its bracket depth before it: strace escapes `"` in strings and
/// `<`, `>` in paths, so nothing the experiment names can close either early.
fn structure(s: &str) -> impl Iterator<Item = (usize, char, i32)> + '_ {
    let (mut depth, mut quoted, mut escaped, mut fd_path) = (0i32, false, false, false);
    s.char_indices().filter_map(move |(at, c)| {
        if escaped {
            escaped = false;
            return None;
        }
        match c {
            '\\' if quoted || fd_path => escaped = true,
            '"' if !fd_path => quoted = !quoted,
            _ if quoted => {}
            '<' if !fd_path => fd_path = true,
            '>' if fd_path => fd_path = false,
            _ if fd_path => {}
            _ => {
                let before = depth;
                match c {
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth -= 1,
                    _ => {}
                }
                return Some((at, c, before));
            }
        }
        None
    })
}

/// Splits `args) = result` at the parenthesis that closes the call: `(args, result)`.
fn split_call(s: &str) -> Option<(&str, &str)> {
    let (at, _, _) = structure(s).find(|&(_, c, depth)| c == ')' && depth == 0)?;
    Some((&s[..at], &s[at + 1..]))
}

/// The top-level arguments of a call (or elements of an array).
fn split_args(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    for (at, _, _) in structure(s).filter(|&(_, c, depth)| c == ',' && depth == 0) {
        out.push(s[from..at].trim());
        from = at + 1;
    }
    let last = s[from..].trim();
    if !last.is_empty() {
        out.push(last);
    }
    out
}

/// The number a result starts with, and the path annotating it (`3</work/x>`).
fn result_value(ret: &str) -> (Option<i64>, Option<String>) {
    let end = ret.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(ret.len());
    let value = number(&ret[..end]);
    let annotation = annotation_of(ret);
    (value, annotation)
}

/// The id in the tracer's PID namespace that `--pidns-translation` adds to a return
/// value from another: `2 /* 8295 in strace's PID NS */` → 8295.
fn translated_pid(ret: &str) -> Option<i32> {
    let comment = ret.split_once("/* ")?.1;
    let (number, rest) = comment.split_once(' ')?;
    rest.starts_with("in strace's PID NS").then(|| number.parse().ok()).flatten()
}

/// The path in an fd's annotation: `3</work/x>` → `/work/x`.
fn annotation_of(arg: &str) -> Option<String> {
    let open = arg.find('<')?;
    let close = arg.rfind('>')?;
    (close > open).then(|| arg[open + 1..close].to_owned())
}

/// `pipe:[123]` → 123.
fn pipe_inode(path: &str) -> Option<u64> {
    path.strip_prefix("pipe:[")?.strip_suffix(']')?.parse().ok()
}

/// A number as strace prints it raw: decimal, `0x…` hex or `0…` octal, possibly
/// followed by `|…` (clone's exit signal).
fn number(s: &str) -> Option<i64> {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(s.len());
    let s = &s[..end];
    if let Some(hex) = s.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        i64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

/// A quoted string argument's text (strace's escapes undone); `None` if not quoted.
fn unquote(arg: &str) -> Option<String> {
    let arg = arg.trim();
    let inner = arg.strip_prefix('"')?;
    let inner = inner.strip_suffix("\"...").or_else(|| inner.strip_suffix('"'))?;
    Some(unescape(inner))
}

/// Undoes strace's escapes: `\"`, `\\`, `\n`, `\t`, `\r`, `\v`, `\f`, `\xNN` and octal.
fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_owned();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' || i + 1 == bytes.len() {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let c = bytes[i + 1];
        i += 2;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'x' => {
                let hex = std::str::from_utf8(&bytes[i..(i + 2).min(bytes.len())]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) if hex.len() == 2 => {
                        out.push(b);
                        i += 2;
                    }
                    _ => out.push(b'x'),
                }
            }
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut n = 1;
                while n < 3 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                    v = v * 8 + u32::from(bytes[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn cut_text(s: &str) -> String {
    s.chars().take(bundle::MAX_TEXT).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(lines: &str) -> Model {
        let mut m = Model::new("/w", &["data/*.tsv".to_owned()]);
        for line in lines.lines() {
            m.line(line);
        }
        m
    }

    #[test]
    fn a_pipeline_is_followed_through_its_pipes() {
        let m = model(
            r#"10 1.000000 execve("/usr/bin/bash", ["bash", "-c", "python3 s.py | tee out.txt"], 0x7ffd /* 35 vars */) = 0
10 1.001000 pipe2([3<pipe:[900]>, 4<pipe:[900]>], 0) = 0
10 1.002000 clone(child_stack=NULL, flags=0x1200000|17, child_tidptr=0x7f3f) = 11
11 1.002500 dup2(4<pipe:[900]>, 1</tmp/out>) = 1<pipe:[900]>
10 1.003000 clone(child_stack=NULL, flags=0x1200000|17, child_tidptr=0x7f3f) = 12
12 1.003100 dup2(3<pipe:[900]>, 0</dev/null>) = 0<pipe:[900]>
11 1.004000 execve("/usr/bin/python3", ["python3", "s.py"], 0x55 /* 35 vars */) = 0
12 1.004100 execve("/usr/bin/tee", ["tee", "out.txt"], 0x55 /* 35 vars */ <unfinished ...>
11 1.005000 openat(-100</w>, "data/gen.tsv", 0x80000) = 3</w/data/gen.tsv>
12 1.005100 <... execve resumed>) = 0
12 1.006000 openat(-100</w>, "out.txt", 0x241, 0666) = 3</w/out.txt>
11 1.007000 clone(child_stack=0x7f, flags=0x3d0f00, parent_tid=0x7f, tls=0x7f, child_tidptr=0x7f) = 13
13 1.008000 openat(AT_FDCWD</w>, "/w/data/../data/dev.tsv", 0) = 4</w/data/dev.tsv>
13 1.008500 +++ exited with 0 +++
11 1.009000 +++ exited with 0 +++
12 1.010000 +++ killed by SIGKILL +++
10 1.011000 +++ exited with 1 +++"#,
        );
        assert_eq!(m.procs.len(), 3, "{:#?}", m.procs);
        let (bash, py, tee) = (&m.procs[0], &m.procs[1], &m.procs[2]);
        assert_eq!(bash.argv, ["bash", "-c", "python3 s.py | tee out.txt"]);
        assert_eq!((py.program.as_str(), py.parent), ("/usr/bin/python3", Some(0)));
        // The thread's read is its process's.
        assert_eq!(py.read, ["data/gen.tsv", "data/dev.tsv"]);
        assert_eq!(py.pipes_out, BTreeSet::from([1]));
        assert_eq!(
            (tee.pipes_in.clone(), tee.wrote.clone()),
            (BTreeSet::from([1]), vec!["out.txt".to_owned()])
        );
        assert_eq!(tee.exit.as_deref(), Some("SIGKILL"));
        assert_eq!(m.root_exit(), Some("exit 1"));
        assert_eq!(m.ms(tee.start), 3);
    }

    /// On a loaded machine a child's lines come before its parent's `clone` returns:
    /// its program, or its end, still used the pipes it inherited.
    #[test]
    fn a_child_seen_before_its_fork_returns_keeps_the_pipes_it_inherited() {
        let m = model(
            r#"10 1.000000 execve("/usr/bin/bash", ["bash", "-c", "sh run.sh | tee out.txt"], 0x7ffd /* 35 vars */) = 0
10 1.001000 pipe2([3<pipe:[900]>, 4<pipe:[900]>], 0) = 0
10 1.002000 clone(child_stack=NULL, flags=0x1200000|17, child_tidptr=0x7f3f) = 11
11 1.002500 dup2(4<pipe:[900]>, 1</tmp/out>) = 1<pipe:[900]>
11 1.003000 clone(child_stack=NULL, flags=0x1200000|17, child_tidptr=0x7f3f <unfinished ...>
13 1.003100 execve("/usr/bin/python3", ["python3", "s.py"], 0x55 /* 35 vars */) = 0
13 1.003200 openat(-100</w>, "data/gen.tsv", 0x80000) = 3</w/data/gen.tsv>
11 1.003300 <... clone resumed>) = 13
11 1.003400 clone(child_stack=NULL, flags=0x1200000|17, child_tidptr=0x7f3f <unfinished ...>
14 1.003500 +++ exited with 0 +++
11 1.003600 <... clone resumed>) = 14
13 1.004000 +++ exited with 0 +++
11 1.009000 +++ exited with 0 +++
10 1.011000 +++ exited with 0 +++"#,
        );
        assert_eq!(m.procs.len(), 4, "{:#?}", m.procs);
        let (py, sub) = (&m.procs[2], &m.procs[3]);
        assert_eq!((py.program.as_str(), py.parent), ("/usr/bin/python3", Some(1)));
        assert_eq!(py.read, ["data/gen.tsv"]);
        assert_eq!(py.pipes_out, BTreeSet::from([1]));
        // The subshell that ended before the return is the same process, not a second.
        assert_eq!((sub.pid, sub.parent, sub.exit.as_deref()), (14, Some(1), Some("exit 0")));
        assert_eq!(sub.pipes_out, BTreeSet::from([1]));
    }

    #[test]
    fn quoted_text_cannot_end_a_call_or_an_annotation() {
        let m = model(
            r#"10 1.0 execve("/bin/sh", ["sh"], 0x1 /* 1 vars */) = 0
10 1.1 openat(-100</w>, "x\") = 3</w/data/gen.tsv>", 0) = -1 ENOENT (No such file or directory)
10 1.2 openat(-100</w>, "a\x3eb", 0x241, 0666) = 3</w/a\x3eb>
10 1.3 rename("/w/tmp.txt", "/w/out.txt") = 0"#,
        );
        let p = &m.procs[0];
        assert!(p.read.is_empty(), "{p:?}");
        assert_eq!(p.wrote, ["a>b"]);
        assert_eq!(p.renamed, [["tmp.txt".to_owned(), "out.txt".to_owned()]]);
        assert_eq!(split_call(r#""a)b", 0) = 0"#), Some((r#""a)b", 0"#, " = 0")));
    }

    #[test]
    fn a_flood_of_opens_is_cut_but_an_input_read_is_kept() {
        let mut m = Model::new("/w", &["data/*.tsv".to_owned()]);
        m.line(r#"10 1.0 execve("/bin/sh", ["sh"], 0x1 /* 1 vars */) = 0"#);
        for n in 0..(2 * MAX_HELD + 10) {
            m.line(&format!(r#"10 1.1 openat(-100</w>, "junk/{n}", 0x241, 0666) = 3</w/junk/{n}>"#));
        }
        m.line(r#"10 1.2 openat(-100</w>, "data/gen.tsv", 0x80000) = 3</w/data/gen.tsv>"#);
        m.line(r#"10 1.3 openat(-100</w>, "notes.txt", 0) = 3</w/notes.txt>"#);
        let p = &m.procs[0];
        assert_eq!(p.wrote.len(), 2 * MAX_HELD);
        assert_eq!(p.read, ["data/gen.tsv"]);
        assert_eq!(m.cut.entries, 11);
    }
}
