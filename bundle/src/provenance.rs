//! A run's provenance record (spec §4b): what its experiment did, as the runner that
//! watched it recorded it — each process (its program, its arguments, when it started
//! and ended, how it ended, whether the runner killed it when the run ended), the files
//! under the working copy it read and wrote, and the pipes that joined it to others. It
//! travels as the run's `x-provenance` artifact, signed with the run; the verifier
//! refuses one that is malformed or over its bounds, so every reader can take its shape
//! for granted. It says what the runner saw; whether that is true is the runner's word.
//!
//! The file is JSON, laid out one process per line (line `id + 1`), so that a finding
//! can point at the process that is its evidence.

use serde::{Deserialize, Serialize};

/// The record's `schema`.
pub const PROVENANCE_SCHEMA: &str = "rexbench.provenance/v1";
/// The artifact role a run's record travels under.
pub const PROVENANCE_ROLE: &str = "x-provenance";
/// Its media type.
pub const PROVENANCE_MEDIA_TYPE: &str = "application/json";
/// The largest record, in bytes.
pub const MAX_PROVENANCE_BYTES: u64 = 8 * 1024 * 1024;
/// The most processes a record lists.
pub const MAX_PROCESSES: usize = 10_000;
/// The most entries in one process's `argv`, `read`, `wrote`, `renamed`, `pipes_in` or
/// `pipes_out`, and in the record's `results`.
pub const MAX_LIST: usize = 64;
/// The longest argument, path or sentence, in characters.
pub const MAX_TEXT: usize = 512;

/// What the runner saw an experiment do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvenanceRecord {
    pub schema: String,
    /// The tracer, as it named itself (`strace 6.1, seccomp-bpf`); `null` when nothing
    /// was traced.
    pub tracer: Option<String>,
    /// Why nothing was traced (no tracer on the node, a container the tracer cannot see
    /// into); required exactly when `tracer` is `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untraced: Option<String>,
    /// How the trace fell short of the whole experiment (the tracer or the process
    /// keeper killed from inside the run): what it shows after that is not all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// The limit that stopped the run, where one did (spec §4b): the resource, what was
    /// used and the limit, in the runner's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    /// What the bounds left out.
    #[serde(default)]
    pub cut: Cut,
    /// The experiment's wall time, from the command's start to its last process's end.
    pub duration_ms: u64,
    /// The result files the check read, as paths in the working copy.
    #[serde(default)]
    pub results: Vec<String>,
    /// Spec §4k: 32 lowercase hex digits nobody else can guess, so that the record's
    /// public digest and size cannot confirm a guess of what it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub salt: Option<String>,
    /// Every process, in the order they started: ids 1, 2, …; the first is the task's
    /// command.
    pub processes: Vec<Process>,
}

/// Counts of what the record's bounds left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cut {
    /// Processes started after the record held [`MAX_PROCESSES`], and those cut for the
    /// record's size ([`ProvenanceRecord::fit`]).
    #[serde(default)]
    pub processes: u64,
    /// Paths, arguments and pipes beyond a list's bound.
    #[serde(default)]
    pub entries: u64,
}

impl Cut {
    pub fn is_empty(&self) -> bool {
        self.processes == 0 && self.entries == 0
    }
}

/// One process of the experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Process {
    pub id: u32,
    /// The process that started it; `null` for the task's command.
    pub parent: Option<u32>,
    /// The program it ran last (its parent's, where it never ran one of its own).
    pub program: String,
    /// Its arguments, the first [`MAX_LIST`], each cut to [`MAX_TEXT`] characters.
    #[serde(default)]
    pub argv: Vec<String>,
    /// Milliseconds after the command started.
    pub start_ms: u64,
    /// `null` where the trace ended first.
    pub end_ms: Option<u64>,
    /// `exit N`, or the signal that ended it (`SIGKILL`); `null` where unknown.
    pub exit: Option<String>,
    /// The runner killed it when the run ended: it outlived the task's command.
    #[serde(default)]
    pub killed: bool,
    /// Files under the working copy it opened for reading (paths in the working copy).
    #[serde(default)]
    pub read: Vec<String>,
    /// Files under the working copy it opened for writing.
    #[serde(default)]
    pub wrote: Vec<String>,
    /// Files it renamed (or moved) within the working copy: `[from, to]`.
    #[serde(default)]
    pub renamed: Vec<[String; 2]>,
    /// Pipes on its standard input (numbered within the record).
    #[serde(default)]
    pub pipes_in: Vec<u32>,
    /// Pipes on its standard output or error.
    #[serde(default)]
    pub pipes_out: Vec<u32>,
}

impl ProvenanceRecord {
    /// A record of an experiment nothing traced, saying why.
    pub fn untraced(why: impl Into<String>, duration_ms: u64) -> ProvenanceRecord {
        ProvenanceRecord {
            schema: PROVENANCE_SCHEMA.to_owned(),
            tracer: None,
            untraced: Some(why.into()),
            interrupted: None,
            limit: None,
            cut: Cut::default(),
            duration_ms,
            results: Vec::new(),
            salt: None,
            processes: Vec::new(),
        }
    }

    /// The line of the file [`ProvenanceRecord::to_bytes`] writes that holds process `id`.
    pub fn line_of(id: u32) -> u64 {
        u64::from(id) + 1
    }

    /// The record as its artifact holds it: the fields on the first line, then one
    /// process per line.
    pub fn to_bytes(&self) -> Vec<u8> {
        let head = ProvenanceRecord { processes: Vec::new(), ..self.clone() };
        let mut text = serde_json::to_string(&head).expect("serializes");
        debug_assert!(text.ends_with("\"processes\":[]}"));
        text.truncate(text.len() - "]}".len());
        for (i, p) in self.processes.iter().enumerate() {
            text.push_str(if i == 0 { "\n" } else { ",\n" });
            text.push_str(&serde_json::to_string(p).expect("serializes"));
        }
        text.push_str(if self.processes.is_empty() { "]}\n" } else { "\n]}\n" });
        text.into_bytes()
    }

    /// Cuts the record until [`ProvenanceRecord::to_bytes`] fits in
    /// [`MAX_PROVENANCE_BYTES`] (each list within its bound, a record of 10,000 processes
    /// could be far larger): first every process's arguments after its first, then the
    /// last processes, each counted in [`Cut`]. A record that fits is left as it is.
    pub fn fit(&mut self) {
        let max = MAX_PROVENANCE_BYTES as usize;
        if self.to_bytes().len() <= max {
            return;
        }
        for p in &mut self.processes {
            if p.argv.len() > 1 {
                self.cut.entries += (p.argv.len() - 1) as u64;
                p.argv.truncate(1);
            }
        }
        let head = ProvenanceRecord { processes: Vec::new(), ..self.clone() }.to_bytes().len();
        // Each process takes its line and the `,\n` before it (and the record's end two
        // bytes more): keep the longest run of first processes that fits, with room for
        // the cut's count to grow by a few digits.
        let mut size = head + 16;
        let keep = self
            .processes
            .iter()
            .take_while(|p| {
                size += serde_json::to_string(p).expect("serializes").len() + 2;
                size <= max
            })
            .count();
        let dropped = self.processes.len() - keep;
        if dropped > 0 {
            self.processes.truncate(keep);
            self.cut.processes += dropped as u64;
        }
    }

    /// Reads and checks a record: its JSON, its schema and every bound of spec §4b. The
    /// error names the field.
    pub fn parse(bytes: &[u8]) -> Result<ProvenanceRecord, String> {
        if bytes.len() as u64 > MAX_PROVENANCE_BYTES {
            return Err(format!("it is larger than {MAX_PROVENANCE_BYTES} bytes"));
        }
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let record: ProvenanceRecord =
            serde_path_to_error::deserialize(&mut de).map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
        de.end().map_err(|e| format!("after the record: {e}"))?;
        record.check()?;
        Ok(record)
    }

    /// Every rule of spec §4b beyond the JSON shape.
    pub fn check(&self) -> Result<(), String> {
        if self.schema != PROVENANCE_SCHEMA {
            return Err(format!("schema `{}` is not `{PROVENANCE_SCHEMA}`", cut_for_message(&self.schema)));
        }
        match (&self.tracer, &self.untraced) {
            (None, None) => return Err("an untraced record must say why (`untraced`)".into()),
            (Some(_), Some(_)) => return Err("a traced record has no `untraced`".into()),
            (None, Some(_)) if !self.processes.is_empty() => {
                return Err("an untraced record lists no processes".into());
            }
            _ => {}
        }
        for (field, value) in [
            ("tracer", &self.tracer),
            ("untraced", &self.untraced),
            ("interrupted", &self.interrupted),
            ("limit", &self.limit),
        ] {
            if let Some(text) = value {
                bounded_text(field, text)?;
            }
        }
        if let Some(salt) = &self.salt
            && !(salt.len() == 32 && salt.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        {
            return Err("salt is not 32 lowercase hex digits".into());
        }
        list("results", &self.results)?;
        for (i, r) in self.results.iter().enumerate() {
            relative_path(&format!("results[{i}]"), r)?;
        }
        if self.processes.len() > MAX_PROCESSES {
            return Err(format!("processes: more than {MAX_PROCESSES}"));
        }
        for (i, p) in self.processes.iter().enumerate() {
            let at = |field: &str| format!("processes[{i}].{field}");
            if p.id as usize != i + 1 {
                return Err(format!(
                    "{}: {} where {} was due (ids count from 1 in order)",
                    at("id"),
                    p.id,
                    i + 1
                ));
            }
            match p.parent {
                None if i > 0 => return Err(format!("{}: only the first process has none", at("parent"))),
                Some(parent) if parent == 0 || parent >= p.id => {
                    return Err(format!("{}: {parent} is not an earlier process", at("parent")));
                }
                _ => {}
            }
            bounded_text(&at("program"), &p.program)?;
            if let Some(exit) = &p.exit {
                bounded_text(&at("exit"), exit)?;
            }
            if let (Some(end), start) = (p.end_ms, p.start_ms)
                && end < start
            {
                return Err(format!("{}: {end} is before its start, {start}", at("end_ms")));
            }
            list(&at("argv"), &p.argv)?;
            for (j, word) in p.argv.iter().enumerate() {
                bounded_text(&format!("{}[{j}]", at("argv")), word)?;
            }
            for (field, paths) in [("read", &p.read), ("wrote", &p.wrote)] {
                list(&at(field), paths)?;
                for (j, path) in paths.iter().enumerate() {
                    relative_path(&format!("{}[{j}]", at(field)), path)?;
                }
            }
            list(&at("renamed"), &p.renamed)?;
            for (j, pair) in p.renamed.iter().enumerate() {
                for (k, path) in pair.iter().enumerate() {
                    relative_path(&format!("{}[{j}][{k}]", at("renamed")), path)?;
                }
            }
            list(&at("pipes_in"), &p.pipes_in)?;
            list(&at("pipes_out"), &p.pipes_out)?;
        }
        Ok(())
    }
}

fn list<T>(field: &str, items: &[T]) -> Result<(), String> {
    if items.len() > MAX_LIST {
        return Err(format!("{field}: more than {MAX_LIST} entries"));
    }
    Ok(())
}

fn bounded_text(field: &str, text: &str) -> Result<(), String> {
    if text.chars().count() > MAX_TEXT {
        return Err(format!("{field}: longer than {MAX_TEXT} characters"));
    }
    Ok(())
}

/// A path in the working copy: relative, in `/`-separated segments, none empty, `.`
/// or `..`.
fn relative_path(field: &str, path: &str) -> Result<(), String> {
    bounded_text(field, path)?;
    let bad = path.is_empty()
        || path.starts_with('/')
        || path.contains('\0')
        || path.split('/').any(|s| s.is_empty() || s == "." || s == "..");
    if bad {
        return Err(format!("{field}: `{}` is not a path in the working copy", cut_for_message(path)));
    }
    Ok(())
}

fn cut_for_message(text: &str) -> String {
    text.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> ProvenanceRecord {
        let process = |id, parent| Process {
            id,
            parent,
            program: "/usr/bin/python3".into(),
            argv: vec!["python3".into(), "score.py".into()],
            start_ms: 3,
            end_ms: Some(40),
            exit: Some("exit 0".into()),
            killed: false,
            read: vec!["data/gen.tsv".into()],
            wrote: vec!["eval_results.txt".into()],
            renamed: vec![["a.tmp".into(), "a".into()]],
            pipes_in: vec![],
            pipes_out: vec![1],
        };
        ProvenanceRecord {
            schema: PROVENANCE_SCHEMA.into(),
            tracer: Some("strace 6.1, seccomp-bpf".into()),
            untraced: None,
            interrupted: None,
            limit: None,
            cut: Cut::default(),
            duration_ms: 41,
            results: vec!["eval_results.txt".into()],
            salt: Some("0123456789abcdef0123456789abcdef".into()),
            processes: vec![process(1, None), process(2, Some(1))],
        }
    }

    /// The largest record each list's bound allows is far over the size bound: cut to
    /// fit, it reads back, its cuts counted; a record that fits is not touched.
    #[test]
    fn a_record_over_the_size_bound_is_cut_to_fit_and_reads_back() {
        let mut small = record();
        let before = small.clone();
        small.fit();
        assert_eq!(small, before);
        let long = "x".repeat(MAX_TEXT);
        let mut big = record();
        let template = big.processes[1].clone();
        // A thousand processes, each with its lists full: 64 MB.
        let n = 1000;
        big.processes = (1..=n as u32)
            .map(|id| Process {
                id,
                parent: (id > 1).then_some(1),
                argv: vec![long.clone(); MAX_LIST],
                read: vec![long.clone(); MAX_LIST],
                ..template.clone()
            })
            .collect();
        assert!(big.to_bytes().len() as u64 > MAX_PROVENANCE_BYTES);
        big.fit();
        let bytes = big.to_bytes();
        assert!(bytes.len() as u64 <= MAX_PROVENANCE_BYTES, "{} bytes", bytes.len());
        let read = ProvenanceRecord::parse(&bytes).expect("a cut record reads");
        assert!(read.processes.len() < n && !read.processes.is_empty());
        assert_eq!(read.cut.processes, (n - read.processes.len()) as u64);
        assert_eq!(read.cut.entries, (n * (MAX_LIST - 1)) as u64);
        assert!(read.processes.iter().all(|p| p.argv.len() == 1));
    }

    #[test]
    fn a_salt_is_32_lowercase_hex_digits() {
        for bad in ["00", "0123456789ABCDEF0123456789ABCDEF", "0123456789abcdef0123456789abcdeg"] {
            let r = ProvenanceRecord { salt: Some(bad.into()), ..record() };
            assert!(ProvenanceRecord::parse(&r.to_bytes()).unwrap_err().contains("salt"), "{bad}");
        }
        // Before spec §4k records had none; they read as they were.
        let r = ProvenanceRecord { salt: None, ..record() };
        assert_eq!(ProvenanceRecord::parse(&r.to_bytes()).unwrap(), r);
    }

    #[test]
    fn a_record_reads_back_with_one_process_per_line() {
        let r = record();
        let bytes = r.to_bytes();
        assert_eq!(ProvenanceRecord::parse(&bytes).unwrap(), r);
        let text = String::from_utf8(bytes).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[ProvenanceRecord::line_of(2) as usize - 1].starts_with("{\"id\":2,"), "{text}");
        let empty = ProvenanceRecord::untraced("no tracer on this node", 5);
        assert_eq!(ProvenanceRecord::parse(&empty.to_bytes()).unwrap(), empty);
    }

    #[test]
    fn every_rule_is_enforced() {
        let breaks: Vec<(&str, Box<dyn Fn(&mut ProvenanceRecord)>)> = vec![
            ("schema", Box::new(|r| r.schema = "x".into())),
            ("must say why", Box::new(|r| r.tracer = None)),
            ("no `untraced`", Box::new(|r| r.untraced = Some("x".into()))),
            ("processes[1].id", Box::new(|r| r.processes[1].id = 5)),
            ("processes[1].parent", Box::new(|r| r.processes[1].parent = Some(2))),
            ("processes[1].parent", Box::new(|r| r.processes[1].parent = None)),
            ("processes[0].read[0]", Box::new(|r| r.processes[0].read[0] = "/etc/passwd".into())),
            ("processes[0].wrote[0]", Box::new(|r| r.processes[0].wrote[0] = "a/../../b".into())),
            ("processes[0].renamed[0][1]", Box::new(|r| r.processes[0].renamed[0][1] = String::new())),
            ("processes[0].argv", Box::new(|r| r.processes[0].argv = vec!["a".into(); MAX_LIST + 1])),
            ("processes[0].program", Box::new(|r| r.processes[0].program = "p".repeat(MAX_TEXT + 1))),
            ("processes[0].end_ms", Box::new(|r| r.processes[0].end_ms = Some(1))),
            ("results[0]", Box::new(|r| r.results[0] = "../x".into())),
        ];
        for (named, breaking) in breaks {
            let mut r = record();
            breaking(&mut r);
            let e = ProvenanceRecord::parse(&r.to_bytes()).unwrap_err();
            assert!(e.contains(named), "{named}: {e}");
        }
        assert!(ProvenanceRecord::parse(b"{\"schema\": 1}").unwrap_err().contains("schema"));
        assert!(ProvenanceRecord::parse(b"{} []").is_err());
    }
}
