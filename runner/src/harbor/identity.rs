//! Which task a trial ran. Every Harbor 0.26 trial records the digest of the task folder
//! it ran (`task.digest` in its `lock.json`; older trials only the deprecated
//! `task_checksum` in their result). A task card pins the Harbor digests of the
//! benchmark's task in `harbor.toml` beside it (`digests`, and `checksums` for trials
//! without a lock; `rexbench task-digest` computes a digest from the task folder). A
//! trial that ran another folder (easier tests, a changed instruction) did not run the
//! benchmark's task: it is refused, naming the task and both digests, or, with
//! `--foreign-tasks`, imported under a task set of its own, which never ranks with the
//! benchmark's. Pinned or not, the trials of one task in one import ran one folder
//! (bundle spec §4n): each run records it (`task_folder`), and a split is refused.

use std::collections::BTreeMap;
use std::path::Path;

use bundle::Digest;
use serde::Deserialize;

use super::format::Ran;
use crate::Error;

/// A task card's pinned Harbor digests (`harbor.toml`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Pins {
    /// `sha256:<64 hex digits>`, as a trial's lock records them.
    #[serde(default)]
    pub(super) digests: Vec<String>,
    /// `task_checksum` values, for trials whose job wrote no lock.
    #[serde(default)]
    pub(super) checksums: Vec<String>,
}

impl Pins {
    fn any(&self) -> bool {
        !self.digests.is_empty() || !self.checksums.is_empty()
    }
}

/// The most a card's `harbor.toml` may hold: a list of digests.
const PINS_LIMIT: u64 = 1 << 20;

/// The pins of `task` in `tasks_dir` (none without a `harbor.toml`).
pub(super) fn pins(tasks_dir: &Path, task: &str) -> Result<Pins, Error> {
    use benchmark::confined::{Folder, Refused, Why};
    let card = tasks_dir.join(task);
    let path = card.join(benchmark::task::HARBOR_FILE);
    let bytes = match Folder::open(&card, "task card")
        .and_then(|folder| folder.read_limited(Path::new(benchmark::task::HARBOR_FILE), PINS_LIMIT))
    {
        Ok(bytes) => bytes,
        Err(Refused { why: Why::Missing, .. }) => return Ok(Pins::default()),
        Err(refused) => return Err(refused.into()),
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::Invalid { path: path.clone(), detail: "is not UTF-8 text".into() })?;
    let pins: Pins =
        toml::from_str(&text).map_err(|e| Error::Invalid { path: path.clone(), detail: e.to_string() })?;
    if let Some(bad) = pins.digests.iter().find(|d| !is_digest(d)) {
        return Err(Error::Invalid {
            path,
            detail: format!("`{bad}` is not a Harbor digest (sha256: and 64 hex digits)"),
        });
    }
    Ok(pins)
}

fn is_digest(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A trial that ran a task folder other than the one its card pins.
#[derive(Debug)]
pub(super) struct Foreign {
    pub(super) trial: String,
    pub(super) result_path: std::path::PathBuf,
    pub(super) task: String,
    /// What its files say it ran; none where it records no digest at all.
    pub(super) ran: Option<Ran>,
    pub(super) pinned: Vec<String>,
}

impl Foreign {
    fn said(&self) -> String {
        let (what, ran, whose, pinned) = match &self.ran {
            Some(Ran::Digest(d)) => {
                ("the task folder whose digest is", d, "lock.json", self.pins_of_kind(true))
            }
            Some(Ran::Checksum(c)) => (
                "the task folder whose task_checksum is",
                c,
                "result.json; it has no lock",
                self.pins_of_kind(false),
            ),
            None => {
                return format!(
                    "trial `{}` ran task {} but records no task digest (no lock.json, no task_checksum), and \
                     the task's card pins {}",
                    self.trial,
                    self.task,
                    self.pinned.join(" or ")
                );
            }
        };
        format!(
            "trial `{}` ran task {} from {what} {ran} (its {whose}), but the task's card pins {}",
            self.trial,
            self.task,
            if pinned.is_empty() { "none of that kind".to_owned() } else { pinned.join(" or ") }
        )
    }

    fn pins_of_kind(&self, digests: bool) -> Vec<String> {
        self.pinned.iter().filter(|p| p.starts_with("sha256:") == digests).cloned().collect()
    }
}

/// A trial as the check sees it: which task, and which folder its files say it ran.
#[derive(Clone)]
pub(super) struct Seen<'a> {
    pub(super) task: &'a str,
    pub(super) name: &'a str,
    pub(super) result_path: &'a Path,
    pub(super) ran: Option<&'a Ran>,
}

/// Each trial's task against its card's pins (by task): the lines the import prints,
/// and the trials that ran another task folder.
pub(super) fn check<'a>(
    trials: impl IntoIterator<Item = Seen<'a>>,
    all_pins: &BTreeMap<String, Pins>,
) -> (Vec<String>, Vec<Foreign>) {
    let mut said: BTreeMap<String, String> = BTreeMap::new();
    let mut foreign = Vec::new();
    let none = Pins::default();
    for t in trials {
        let pins = all_pins.get(t.task).unwrap_or(&none);
        let ran = match t.ran {
            Some(r) => r,
            None => {
                said.entry(t.task.to_owned()).or_insert_with(|| {
                    format!(
                        "task {}: the trials record no task digest (no lock.json, no task_checksum)",
                        t.task
                    )
                });
                if pins.any() {
                    foreign.push(Foreign {
                        trial: t.name.to_owned(),
                        result_path: t.result_path.to_owned(),
                        task: t.task.to_owned(),
                        ran: None,
                        pinned: pins.digests.iter().chain(&pins.checksums).cloned().collect(),
                    });
                }
                continue;
            }
        };
        if !pins.any() {
            said.entry(t.task.to_owned()).or_insert_with(|| {
                format!(
                    "task {}: its card pins no Harbor digest: its trials ran one task folder, {}, recorded with each \
                     run but not checked against the benchmark's",
                    t.task,
                    ran.folder()
                )
            });
            continue;
        }
        let held = match ran {
            Ran::Digest(d) => pins.digests.contains(d),
            Ran::Checksum(c) => pins.checksums.contains(c),
        };
        if held {
            said.entry(t.task.to_owned())
                .or_insert_with(|| format!("task {}: the trials ran the task folder its card pins", t.task));
        } else {
            foreign.push(Foreign {
                trial: t.name.to_owned(),
                result_path: t.result_path.to_owned(),
                task: t.task.to_owned(),
                ran: Some(ran.clone()),
                pinned: pins.digests.iter().chain(&pins.checksums).cloned().collect(),
            });
        }
    }
    (said.into_values().collect(), foreign)
}

/// Spec §4n: one task, one folder. The first two trials of one task that ran two task
/// folders (as their locks or checksums say), pinned or not: their results are not
/// attempts of one task, and a bundle refuses them (`task_folder_split`).
pub(super) fn split<'a>(trials: impl IntoIterator<Item = Seen<'a>>) -> Option<Error> {
    let mut first: BTreeMap<&str, (&str, Option<&Ran>)> = BTreeMap::new();
    let said = |r: Option<&Ran>| r.map_or_else(|| "none it records".to_owned(), |r| r.folder().to_owned());
    for t in trials {
        let (name, folder) = *first.entry(t.task).or_insert((t.name, t.ran));
        let lower = |r: Option<&Ran>| r.map(|r| r.folder().to_ascii_lowercase());
        if lower(folder) != lower(t.ran) {
            return Some(Error::Invalid {
                path: t.result_path.to_owned(),
                detail: format!(
                    "task {}: trial `{name}` ran the task folder {} and trial `{}` ran {}: one import runs one \
                     folder of a task, so that its trials are attempts at one task (spec §4n). Import the jobs \
                     of each folder apart",
                    t.task,
                    said(folder),
                    t.name,
                    said(t.ran)
                ),
            });
        }
    }
    None
}

/// The refusal of a trial that ran another task folder.
pub(super) fn refusal(f: &Foreign) -> Error {
    Error::Invalid {
        path: f.result_path.clone(),
        detail: format!(
            "{}: its results are not the benchmark's task's. Import with --foreign-tasks to keep them under \
             a task set of their own, which never ranks with the benchmark's",
            f.said()
        ),
    }
}

/// The task set of an import with trials of changed tasks: the benchmark's digest and
/// what each changed task's trials ran, hashed, so that it is the same for the same
/// tasks and never the benchmark's.
pub(super) fn own_set(benchmark: Digest, foreign: &[Foreign]) -> (Digest, Vec<String>) {
    let mut ran: Vec<String> = foreign
        .iter()
        .map(|f| match &f.ran {
            Some(Ran::Digest(d) | Ran::Checksum(d)) => format!("{} {d}", f.task),
            None => format!("{} none", f.task),
        })
        .collect();
    ran.sort();
    ran.dedup();
    let text = format!("rexbench changed tasks v1\n{}\n{}\n", benchmark.to_hex(), ran.join("\n"));
    let lines = foreign.iter().map(|f| format!("kept under a task set of its own: {}", f.said())).collect();
    (Digest::of(text.as_bytes()), lines)
}
