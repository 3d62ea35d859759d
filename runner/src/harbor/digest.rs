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
//! A task folder is the maintainers' own, but it is read as any input: a link is
//! refused, never followed.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use bundle::Digest;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::Error;

const SINGLE: [&str; 4] = ["task.toml", "instruction.md", "README.md", "trajectory.json"];
const FOLDERS: [&str; 4] = ["environment", "tests", "solution", "steps"];
/// Harbor's `DEFAULT_IGNORES`, where the task has no `.gitignore`.
const DEFAULT_IGNORES: [&str; 6] = ["__pycache__/", "*.pyc", ".DS_Store", "*.swp", "*.swo", "*~"];
const HARBORIGNORE: &str = ".harborignore";

/// The digest Harbor records for the task in `dir`: `sha256:` and 64 hex digits.
pub fn task_digest(dir: &Path) -> Result<String, Error> {
    let dir = dir.to_owned();
    let io = |path: &Path, source| Error::Io { path: path.to_owned(), source };
    if !fs::symlink_metadata(&dir).map_err(|e| io(&dir, e))?.is_dir() {
        return Err(Error::Invalid { path: dir, detail: "is not a Harbor task folder".into() });
    }
    if fs::symlink_metadata(dir.join("task.toml")).is_err() {
        return Err(Error::Invalid {
            path: dir,
            detail: "has no task.toml: not a Harbor task folder".into(),
        });
    }
    let mut files: Vec<PathBuf> = Vec::new();
    for name in SINGLE {
        let path = dir.join(name);
        match fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => files.push(PathBuf::from(name)),
            Ok(_) => {
                return Err(refused(&path, "a task's file must be a regular file, not a link or a folder"));
            }
            Err(_) => {}
        }
    }
    let mut scopes = Scopes::default();
    for name in FOLDERS {
        let path = dir.join(name);
        match fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => walk(&dir, Path::new(name), &mut scopes, &mut files)?,
            Ok(_) => return Err(refused(&path, "a task's folder must be a folder, not a link or a file")),
            Err(_) => {}
        }
    }
    let ignored = root_ignores(&dir)?;
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
        let hash = file_hash(&dir.join(rel))?;
        lines.extend_from_slice(format!("{posix}\0{hash}\n").as_bytes());
    }
    Ok(format!("sha256:{}", Digest::of(&lines).to_hex()))
}

fn refused(path: &Path, why: &str) -> Error {
    Error::Invalid { path: path.to_owned(), detail: why.to_owned() }
}

/// The task's `.gitignore`, else Harbor's default ignores, over paths from its root.
fn root_ignores(dir: &Path) -> Result<Gitignore, Error> {
    let mut builder = GitignoreBuilder::new(dir);
    let path = dir.join(".gitignore");
    let own = match fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() => {
            Some(fs::read_to_string(&path).map_err(|e| Error::Io { path: path.clone(), source: e })?)
        }
        Ok(_) => return Err(refused(&path, "must be a regular file")),
        Err(_) => None,
    };
    let lines: Vec<String> = match own {
        Some(text) => text.lines().map(str::to_owned).collect(),
        None => DEFAULT_IGNORES.iter().map(|l| (*l).to_owned()).collect(),
    };
    for line in lines {
        builder
            .add_line(None, &line)
            .map_err(|e| refused(&path, &format!("a pattern git would not read: {e}")))?;
    }
    builder.build().map_err(|e| refused(&path, &format!("cannot be read as git does: {e}")))
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
fn walk(root: &Path, rel: &Path, scopes: &mut Scopes, files: &mut Vec<PathBuf>) -> Result<(), Error> {
    let path = root.join(rel);
    if in_scope(rel) {
        let ignore = path.join(HARBORIGNORE);
        match fs::symlink_metadata(&ignore) {
            Ok(m) if m.is_file() => {
                let text =
                    fs::read_to_string(&ignore).map_err(|e| Error::Io { path: ignore.clone(), source: e })?;
                let mut builder = GitignoreBuilder::new(&path);
                for line in text.lines() {
                    builder
                        .add_line(None, line)
                        .map_err(|e| refused(&ignore, &format!("a pattern git would not read: {e}")))?;
                }
                let rules = builder.build().map_err(|e| refused(&ignore, &e.to_string()))?;
                scopes.rules.push((rel.to_owned(), rules));
            }
            Ok(_) => return Err(refused(&ignore, "ignore rules must be a regular file")),
            Err(_) => {}
        }
    }
    let mut entries: Vec<_> = fs::read_dir(&path)
        .map_err(|e| Error::Io { path: path.clone(), source: e })?
        .collect::<Result<_, _>>()
        .map_err(|e| Error::Io { path: path.clone(), source: e })?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let child = rel.join(entry.file_name());
        let kind = entry.file_type().map_err(|e| Error::Io { path: root.join(&child), source: e })?;
        if scopes.excluded(&child, kind.is_dir()) {
            continue;
        }
        if kind.is_dir() {
            walk(root, &child, scopes, files)?;
        } else if kind.is_file() {
            files.push(child);
        } else {
            return Err(refused(&root.join(&child), "a task's input must be a file or a folder, not a link"));
        }
    }
    Ok(())
}

/// The SHA-256 of a file, read a megabyte at a time.
fn file_hash(path: &Path) -> Result<String, Error> {
    let io = |source| Error::Io { path: path.to_owned(), source };
    let mut file = fs::File::open(path).map_err(io)?;
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
