//! Harbor's digest of a task folder (`TaskLock.digest` in a 0.26 trial's `lock.json`,
//! `sha256:<hex>`), by Harbor's own definition (`Packager.compute_content_hash`): the
//! task's files are `task.toml`, `instruction.md`, `README.md` and `trajectory.json` where
//! present, and every file under `environment/`, `tests/`, `solution/` and `steps/`
//! except those a `.harborignore` in a `tests/` or `solution/` folder (inherited by the
//! folders beneath) leaves out; then those the task's `.gitignore` (else Harbor's default
//! ignores) leaves out are dropped. Sorted by their path, each adds the line
//! `PATH\0SHA256\n` to one SHA-256. `rexbench task-digest` prints it, so that the
//! maintainers can pin a task card's (`harbor.toml`) from the task folder they publish.
//!
//! A task folder is the maintainers' own, but it is read as any input, through
//! [`benchmark::confined`]: nothing is read outside it, a link is refused (never
//! followed, even one that stays inside), as is a FIFO or a device, and an ignore file
//! is read up to a bound.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use benchmark::confined::{Entry, Folder, Kind};
use bundle::Digest;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::Error;

const SINGLE: [&str; 4] = ["task.toml", "instruction.md", "README.md", "trajectory.json"];
const FOLDERS: [&str; 4] = ["environment", "tests", "solution", "steps"];
/// Harbor's `DEFAULT_IGNORES`, where the task has no `.gitignore`.
const DEFAULT_IGNORES: [&str; 6] = ["__pycache__/", "*.pyc", ".DS_Store", "*.swp", "*.swo", "*~"];
const HARBORIGNORE: &str = ".harborignore";
/// The most an ignore file (`.gitignore`, `.harborignore`) may hold.
const IGNORE_LIMIT: u64 = 1 << 20;

/// The digest Harbor records for the task in `dir`: `sha256:` and 64 hex digits.
pub fn task_digest(dir: &Path) -> Result<String, Error> {
    let not_task = |detail: &str| Error::Invalid { path: dir.to_owned(), detail: detail.to_owned() };
    if !dir.is_dir() {
        return Err(not_task("is not a Harbor task folder"));
    }
    let folder = Folder::open(dir, "task folder")?;
    let top: BTreeMap<String, Entry> =
        folder.entries(Path::new(""))?.into_iter().map(|e| (e.name_lossy(), e)).collect();
    if !top.contains_key("task.toml") {
        return Err(not_task("has no task.toml: not a Harbor task folder"));
    }
    let mut files: Vec<PathBuf> = Vec::new();
    for name in SINGLE {
        match top.get(name) {
            Some(e) if !e.link && matches!(e.kind, Kind::File { .. }) => files.push(PathBuf::from(name)),
            Some(_) => {
                return Err(refused(
                    dir,
                    name,
                    "a task's file must be a regular file, not a link or a folder",
                ));
            }
            None => {}
        }
    }
    let mut scopes = Scopes::default();
    for name in FOLDERS {
        match top.get(name) {
            Some(e) if !e.link && e.kind == Kind::Folder => {
                walk(&folder, Path::new(name), &mut scopes, &mut files)?
            }
            Some(_) => {
                return Err(refused(dir, name, "a task's folder must be a folder, not a link or a file"));
            }
            None => {}
        }
    }
    let ignored = root_ignores(&folder, top.get(".gitignore"))?;
    files.retain(|rel| !ignored.matched_path_or_any_parents(rel, false).is_ignore());
    let mut names: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|rel| {
            let posix = rel.iter().map(|c| c.to_string_lossy()).collect::<Vec<_>>().join("/");
            (posix, rel)
        })
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    let mut lines = Vec::new();
    for (posix, rel) in &names {
        let hash = file_hash(&folder, rel)?;
        lines.extend_from_slice(format!("{posix}\0{hash}\n").as_bytes());
    }
    Ok(format!("sha256:{}", Digest::of(&lines).to_hex()))
}

fn refused(dir: &Path, rel: impl AsRef<Path>, why: &str) -> Error {
    Error::Invalid { path: dir.join(rel), detail: why.to_owned() }
}

/// The rules of the ignore file `rel`, over paths from `base`.
fn ignore_rules(folder: &Folder, rel: &Path, base: &Path, rules: &[String]) -> Result<Gitignore, Error> {
    let path = folder.shown(rel);
    let mut builder = GitignoreBuilder::new(base);
    for line in rules {
        builder
            .add_line(None, line)
            .map_err(|e| refused(&path, "", &format!("a pattern git would not read: {e}")))?;
    }
    builder.build().map_err(|e| refused(&path, "", &format!("cannot be read as git does: {e}")))
}

/// The lines of the ignore file `rel`, a regular file (never a link) of at most
/// [`IGNORE_LIMIT`] bytes.
fn ignore_lines(folder: &Folder, entry: &Entry) -> Result<Vec<String>, Error> {
    if entry.link || !matches!(entry.kind, Kind::File { .. }) {
        return Err(refused(&folder.shown(&entry.rel), "", "ignore rules must be a regular file"));
    }
    let bytes = folder.read_limited(&entry.rel, IGNORE_LIMIT)?;
    Ok(String::from_utf8_lossy(&bytes).lines().map(str::to_owned).collect())
}

/// The task's `.gitignore`, else Harbor's default ignores, over paths from its root.
fn root_ignores(folder: &Folder, own: Option<&Entry>) -> Result<Gitignore, Error> {
    let lines = match own {
        Some(entry) => ignore_lines(folder, entry)?,
        None => DEFAULT_IGNORES.iter().map(|l| (*l).to_owned()).collect(),
    };
    ignore_rules(folder, Path::new(".gitignore"), Path::new(""), &lines)
}

/// The `.harborignore` rules in force: one set per folder that has the file, from the
/// task's root down, each over paths from its folder.
#[derive(Default)]
struct Scopes {
    rules: Vec<(PathBuf, Gitignore)>,
}

impl Scopes {
    /// Whether `rel` (a path from the task's root) is left out: a `.harborignore` file
    /// always is; within a `tests/` or `solution/` folder (or a step's), the deepest
    /// rule that matches it or a folder above it decides, as Harbor's `TaskFileFilter`.
    fn excluded(&self, rel: &Path, is_dir: bool) -> bool {
        if rel.file_name().is_some_and(|n| n == HARBORIGNORE) {
            return true;
        }
        let parts: Vec<_> = rel.components().collect();
        for end in 1..=parts.len() {
            let candidate: PathBuf = parts[..end].iter().collect();
            if !in_scope(&candidate) {
                continue;
            }
            let dir = is_dir || end < parts.len();
            let mut excluded = false;
            for (folder, rules) in &self.rules {
                let Ok(inside) = candidate.strip_prefix(folder) else { continue };
                if inside.as_os_str().is_empty() {
                    continue;
                }
                match rules.matched(inside, dir) {
                    Match::Ignore(_) => excluded = true,
                    Match::Whitelist(_) => excluded = false,
                    Match::None => {}
                }
            }
            if excluded {
                return true;
            }
        }
        false
    }
}

/// Within `tests/`, `solution/`, `steps/*/tests/` or `steps/*/solution/`.
fn in_scope(rel: &Path) -> bool {
    let parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    match parts.as_slice() {
        [first, ..] if first == "tests" || first == "solution" => true,
        [steps, _, sub, ..] if steps == "steps" && (sub == "tests" || sub == "solution") => true,
        _ => false,
    }
}

/// Every file under `rel` (a folder of the task), in no order, the `.harborignore` rules
/// of each folder read as it is entered; a link or anything but a file or a folder is
/// refused.
fn walk(folder: &Folder, rel: &Path, scopes: &mut Scopes, files: &mut Vec<PathBuf>) -> Result<(), Error> {
    let mut entries = folder.entries(rel)?;
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    if in_scope(rel) {
        if let Some(ignore) = entries.iter().find(|e| e.name == HARBORIGNORE) {
            let lines = ignore_lines(folder, ignore)?;
            let rules = ignore_rules(folder, &ignore.rel, rel, &lines)?;
            scopes.rules.push((rel.to_owned(), rules));
        }
    }
    for entry in entries {
        let is_dir = !entry.link && entry.kind == Kind::Folder;
        if scopes.excluded(&entry.rel, is_dir) {
            continue;
        }
        match entry.kind {
            _ if entry.link => {
                return Err(refused(
                    folder.path(),
                    &entry.rel,
                    "a task's input must be a file or a folder, not a link",
                ));
            }
            Kind::Folder => walk(folder, &entry.rel, scopes, files)?,
            Kind::File { .. } => files.push(entry.rel),
            Kind::Other(_) | Kind::LinkOutside => {
                return Err(refused(
                    folder.path(),
                    &entry.rel,
                    "a task's input must be a file or a folder, not a link",
                ));
            }
        }
    }
    Ok(())
}

/// The SHA-256 of a task's file, read a megabyte at a time (a task's file may be larger
/// than an artifact; it is never held whole).
fn file_hash(folder: &Folder, rel: &Path) -> Result<String, Error> {
    let (mut file, _) = folder.open_file(rel, u64::MAX)?;
    let io = |source| Error::Io { path: folder.shown(rel), source };
    let mut hasher = bundle::Hasher::default();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finish().to_hex())
}
