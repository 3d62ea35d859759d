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
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_task("does not exist")),
        Ok(m) if !m.is_dir() => return Err(not_task("is not a folder: not a Harbor task folder")),
        _ => {}
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
            Some(e) => {
                return Err(refused(
                    dir,
                    name,
                    &format!("a task's folder must be a folder, not {}", what(e)),
                ));
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
    let path = folder.path().join(rel);
    let mut builder = GitignoreBuilder::new(base);
    for line in rules {
        builder
            .add_line(None, line)
            .map_err(|e| invalid(&path, &format!("a pattern git would not read: {e}")))?;
    }
    builder.build().map_err(|e| invalid(&path, &format!("cannot be read as git does: {e}")))
}

/// The lines of the ignore file `rel`, a regular file (never a link) of at most
/// [`IGNORE_LIMIT`] bytes.
fn ignore_lines(folder: &Folder, entry: &Entry) -> Result<Vec<String>, Error> {
    let path = folder.path().join(&entry.rel);
    if entry.link || !matches!(entry.kind, Kind::File { .. }) {
        return Err(invalid(&path, &format!("ignore rules must be a regular file, not {}", what(entry))));
    }
    let bytes = folder.read_limited(&entry.rel, IGNORE_LIMIT)?;
    let text = String::from_utf8(bytes).map_err(|_| invalid(&path, "ignore rules must be UTF-8 text"))?;
    Ok(text.lines().map(str::to_owned).collect())
}

/// What an entry that is not a plain file or folder is, for a refusal.
fn what(entry: &Entry) -> &'static str {
    match entry.kind {
        _ if entry.link => "a symbolic link",
        Kind::Other(what) => what,
        Kind::Folder => "a folder",
        Kind::File { .. } => "a file",
        Kind::LinkOutside => "a symbolic link",
    }
}

fn invalid(path: &Path, why: &str) -> Error {
    Error::Invalid { path: path.to_owned(), detail: why.to_owned() }
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
        // Only `rel` itself is weighed: the walk never enters a folder the rules leave out,
        // and every rule that could reach a folder above `rel` was in force when that folder
        // was weighed, so weighing it again would give the same answer, at a cost that grows
        // with the cube of a deep tree's depth.
        if !in_scope(rel) {
            return false;
        }
        let mut excluded = false;
        for (folder, rules) in &self.rules {
            let Ok(inside) = rel.strip_prefix(folder) else { continue };
            if inside.as_os_str().is_empty() {
                continue;
            }
            match rules.matched(inside, is_dir) {
                Match::Ignore(_) => excluded = true,
                Match::Whitelist(_) => excluded = false,
                Match::None => {}
            }
        }
        excluded
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
        if entry.name.to_str().is_none() {
            // Two names that differ only in bytes that are not UTF-8 would be hashed as one.
            return Err(refused(folder.path(), &entry.rel, "a task's file name must be UTF-8"));
        }
        match entry.kind {
            Kind::Folder if !entry.link => walk(folder, &entry.rel, scopes, files)?,
            Kind::File { .. } if !entry.link => files.push(entry.rel),
            _ => {
                let why = format!("a task's input must be a file or a folder, not {}", what(&entry));
                return Err(refused(folder.path(), &entry.rel, &why));
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
