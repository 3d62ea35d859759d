//! The journal of an evaluation's Slurm jobs, `.slurm/journal.jsonl` in the results
//! directory: one JSON line per step, synced before the step it announces is taken, so
//! that a runner killed at any moment knows, when started again, every job it may have
//! submitted.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::Error;
use serde::{Deserialize, Serialize};

/// One step of one run. `try` counts the run's submissions, from 1; each has its own
/// job name and folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Entry {
    /// Written before `sbatch` is called.
    Submitting {
        run: String,
        #[serde(rename = "try")]
        n: u32,
        name: String,
    },
    /// `sbatch` answered with the job's id.
    Submitted {
        run: String,
        #[serde(rename = "try")]
        n: u32,
        id: String,
    },
    /// The job ended without writing its status; the run may be submitted again.
    Lost {
        run: String,
        #[serde(rename = "try")]
        n: u32,
        reason: String,
    },
    /// Cancelled by the runner (Ctrl-C): not the job's fault, so not counted as lost.
    Cancelled {
        run: String,
        #[serde(rename = "try")]
        n: u32,
    },
}

impl Entry {
    fn run(&self) -> &str {
        match self {
            Entry::Submitting { run, .. }
            | Entry::Submitted { run, .. }
            | Entry::Lost { run, .. }
            | Entry::Cancelled { run, .. } => run,
        }
    }
}

/// What the journal says of one run's latest try.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct History {
    /// The latest try, 0 before the first.
    pub n: u32,
    pub last: Last,
    /// Why each lost try was lost, in order.
    pub lost: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub enum Last {
    /// Nothing submitted yet, or the latest try is over (lost or cancelled).
    #[default]
    Over,
    /// `sbatch` may have been called for try `n`, under this name.
    Submitting(String),
    /// Try `n` is job `id`.
    Submitted { name: String, id: String },
}

#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Opens (or starts) the journal and reads what it holds, per run. A last line cut
    /// short by a kill is dropped: the step it announced was not taken.
    pub fn open(path: &Path) -> Result<(Journal, BTreeMap<String, History>), Error> {
        let io = |source| Error::Io { path: path.to_owned(), source };
        let mut bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io(e)),
        };
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let cut = whole < bytes.len();
        bytes.truncate(whole);
        let mut histories: BTreeMap<String, History> = BTreeMap::new();
        for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            let entry: Entry = serde_json::from_slice(line).map_err(|e| Error::Invalid {
                path: path.to_owned(),
                detail: format!(
                    "line {} is not a journal entry ({e}); it was not written by rexbench",
                    i + 1
                ),
            })?;
            histories.entry(entry.run().to_owned()).or_default().apply(entry);
        }
        let file = OpenOptions::new().create(true).append(true).open(path).map_err(io)?;
        if cut {
            file.set_len(whole as u64).map_err(io)?;
        }
        Ok((Journal { path: path.to_owned(), file }, histories))
    }

    /// Appends an entry and waits until it is on disk.
    pub fn write(&mut self, entry: &Entry) -> Result<(), Error> {
        let mut line = serde_json::to_vec(entry).expect("serializes");
        line.push(b'\n');
        let io = |source| Error::Io { path: self.path.clone(), source };
        self.file.write_all(&line).map_err(io)?;
        self.file.sync_data().map_err(io)
    }
}

impl History {
    pub fn apply(&mut self, entry: Entry) {
        match entry {
            Entry::Submitting { n, name, .. } => {
                self.n = n;
                self.last = Last::Submitting(name);
            }
            Entry::Submitted { n, id, .. } => {
                let name = match std::mem::take(&mut self.last) {
                    Last::Submitting(name) | Last::Submitted { name, .. } => name,
                    Last::Over => String::new(),
                };
                self.n = n;
                self.last = Last::Submitted { name, id };
            }
            Entry::Lost { n, reason, .. } => {
                self.n = n;
                self.last = Last::Over;
                self.lost.push(reason);
            }
            Entry::Cancelled { n, .. } => {
                self.n = n;
                self.last = Last::Over;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn submitting(run: &str, n: u32) -> Entry {
        Entry::Submitting { run: run.into(), n, name: format!("job-{run}-{n}") }
    }

    #[test]
    fn a_journal_is_read_back_per_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let (mut j, h) = Journal::open(&path).unwrap();
        assert!(h.is_empty());
        j.write(&submitting("a/none/1", 1)).unwrap();
        j.write(&Entry::Submitted { run: "a/none/1".into(), n: 1, id: "7".into() }).unwrap();
        j.write(&Entry::Lost { run: "a/none/1".into(), n: 1, reason: "job 7 vanished".into() }).unwrap();
        j.write(&submitting("a/none/1", 2)).unwrap();
        j.write(&submitting("b/none/1", 1)).unwrap();
        j.write(&Entry::Submitted { run: "b/none/1".into(), n: 1, id: "9".into() }).unwrap();
        j.write(&Entry::Cancelled { run: "b/none/1".into(), n: 1 }).unwrap();
        drop(j);
        let (_, h) = Journal::open(&path).unwrap();
        assert_eq!(
            h["a/none/1"],
            History {
                n: 2,
                last: Last::Submitting("job-a/none/1-2".into()),
                lost: vec!["job 7 vanished".into()]
            }
        );
        assert_eq!(h["b/none/1"], History { n: 1, last: Last::Over, lost: vec![] });
        let line = fs::read_to_string(&path).unwrap().lines().nth(1).unwrap().to_owned();
        assert_eq!(line, r#"{"event":"submitted","run":"a/none/1","try":1,"id":"7"}"#);
    }

    #[test]
    fn a_line_cut_short_by_a_kill_is_dropped_and_a_foreign_line_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let (mut j, _) = Journal::open(&path).unwrap();
        j.write(&submitting("a/none/1", 1)).unwrap();
        drop(j);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"event":"submitted","run":"a/no"#).unwrap();
        drop(f);
        let (mut j, h) = Journal::open(&path).unwrap();
        assert_eq!(h["a/none/1"].last, Last::Submitting("job-a/none/1-1".into()));
        j.write(&Entry::Submitted { run: "a/none/1".into(), n: 1, id: "3".into() }).unwrap();
        drop(j);
        let (_, h) = Journal::open(&path).unwrap();
        assert_eq!(h["a/none/1"].last, Last::Submitted { name: "job-a/none/1-1".into(), id: "3".into() });

        fs::write(&path, "{\"event\":\"submitting\"}\nnot json\n").unwrap();
        let e = Journal::open(&path).err().unwrap().to_string();
        assert!(e.contains("journal.jsonl: line 1 is not a journal entry"), "{e}");
    }
}
