//! Path patterns: where in a run's working copy a check reads.
//!
//! A pattern is a relative path whose segments may be shell globs (`*`, `?`, `[…]`).
//! The official RExBench evaluators pick "the first subdirectory" as Python's
//! `os.listdir` lists them, which is the order the filesystem returns them in (not
//! sorted), so a glob segment here names the first matching entry in that same order:
//! `std::fs::read_dir` and `os.listdir` both read the directory with `readdir`.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use glob::Pattern;
use serde::{Deserialize, Serialize};

use crate::confined::{Entry, Folder, Kind};

/// How the entries a series enumerates are ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryOrder {
    /// By the whole number the name ends with (0 when it ends with none), names with
    /// equal numbers in directory order: `layer2` before `layer10`.
    #[default]
    TrailingNumber,
    /// By name, byte by byte.
    Name,
}

/// Refuses a pattern that could leave the working copy or does not parse.
pub fn validate(pattern: &str) -> Result<(), String> {
    if pattern.is_empty() || pattern.starts_with('/') {
        return Err(format!("`{pattern}` must be a relative path inside the codebase"));
    }
    for segment in pattern.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(format!("`{pattern}` must be a relative path inside the codebase"));
        }
        Pattern::new(segment).map_err(|e| format!("`{pattern}`: {e}"))?;
    }
    Ok(())
}

fn is_glob(segment: &str) -> bool {
    segment.contains(['*', '?', '['])
}

/// The path (relative to the working copy) that `pattern` names: each glob segment is
/// the first entry of its directory, in directory order, that matches it and, where
/// more segments follow, is a directory (symbolic links inside the working copy
/// followed, as Python's `os.path.isdir` does; one that leaves it is refused).
pub fn resolve(root: &Folder, pattern: &str) -> Result<PathBuf, String> {
    resolve_to(root, pattern, false)
}

/// As [`resolve`]; with `folder`, the last segment too must name a folder.
fn resolve_to(root: &Folder, pattern: &str, folder: bool) -> Result<PathBuf, String> {
    let segments: Vec<&str> = pattern.split('/').collect();
    let mut at = PathBuf::new();
    for (i, segment) in segments.iter().enumerate() {
        if !is_glob(segment) {
            at.push(segment);
            continue;
        }
        let last = i + 1 == segments.len() && !folder;
        let glob = Pattern::new(segment).map_err(|e| e.to_string())?;
        let found = listing(root, &at)?
            .into_iter()
            .find(|e| glob.matches(&e.name_lossy()) && (last || e.kind == Kind::Folder))
            .ok_or_else(|| {
                let what = if last { "entry" } else { "folder" };
                format!("no {what} matching `{segment}` in {}", shown(root, &at))
            })?;
        at = found.rel;
    }
    Ok(at)
}

/// Every entry matching the last segment of `pattern` in the folder its other segments
/// name (resolved as [`resolve`] does), in `order`, relative to the working copy.
pub fn entries(root: &Folder, pattern: &str, order: EntryOrder) -> Result<Vec<PathBuf>, String> {
    let (parent, last) = pattern.rsplit_once('/').map_or((None, pattern), |(p, l)| (Some(p), l));
    let dir = match parent {
        Some(p) => resolve_to(root, p, true)?,
        None => PathBuf::new(),
    };
    let glob = Pattern::new(last).map_err(|e| e.to_string())?;
    let mut found: Vec<(String, PathBuf)> = listing(root, &dir)?
        .into_iter()
        .map(|e| (e.name_lossy(), e.rel))
        .filter(|(name, _)| glob.matches(name))
        .collect();
    match order {
        // A stable sort keeps directory order among equal numbers, as Python's does.
        EntryOrder::TrailingNumber => found.sort_by(|a, b| by_trailing_number(&a.0, &b.0)),
        EntryOrder::Name => found.sort_by(|a, b| a.0.cmp(&b.0)),
    }
    Ok(found.into_iter().map(|(_, path)| path).collect())
}

/// Compares the whole numbers two names end with, of any length.
fn by_trailing_number(a: &str, b: &str) -> Ordering {
    let number = |s: &str| {
        let digits = &s[s.trim_end_matches(|c: char| c.is_ascii_digit()).len()..];
        let significant = digits.trim_start_matches('0');
        (significant.len(), significant.to_owned())
    };
    number(a).cmp(&number(b))
}

/// A directory's entries in the order the filesystem gives them.
fn listing(root: &Folder, dir: &Path) -> Result<Vec<Entry>, String> {
    let entries = root.entries(dir).and_then(|entries| {
        entries.iter().try_for_each(|e| e.check(root))?;
        Ok(entries)
    });
    entries.map_err(|e| format!("cannot list {}: {e}", shown(root, dir)))
}

/// A path as the check's log shows it: relative to the working copy.
pub fn shown(root: &Folder, rel: &Path) -> String {
    root.shown(rel).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_numbers_order_like_integers() {
        let mut names =
            vec!["layer10", "layer2", "layerx", "layer02", "layer1", "layer999999999999999999999"];
        names.sort_by(|a, b| by_trailing_number(a, b));
        assert_eq!(names, ["layerx", "layer1", "layer2", "layer02", "layer10", "layer999999999999999999999"]);
    }

    #[test]
    fn globs_pick_the_first_match_in_directory_order_and_folders_where_more_follows() {
        use std::fs;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("codebase");
        fs::create_dir_all(dir.join("out/run/layer3")).unwrap();
        fs::create_dir_all(dir.join("out/run/layer1")).unwrap();
        fs::write(dir.join("out/afile"), "").unwrap();
        fs::write(dir.join("out/run/layer1.txt"), "").unwrap();
        fs::write(dir.join("out/run/layer1/m.txt"), "").unwrap();
        let root = Folder::open_relative(&dir, "working copy").unwrap();
        // `afile` matches `*` but is not a folder, so `run` is the only candidate.
        assert_eq!(resolve(&root, "out/*/layer1/m.txt").unwrap(), Path::new("out/run/layer1/m.txt"));
        // `a*` names the folder whose entries are listed: `afile` is no candidate.
        let found = entries(&root, "out/a*/layer*", EntryOrder::TrailingNumber);
        assert!(found.unwrap_err().contains("no folder matching `a*` in out"));
        let found = entries(&root, "out/*/layer*", EntryOrder::TrailingNumber).unwrap();
        assert_eq!(
            found.iter().map(|p| p.strip_prefix("out/run").unwrap().to_str().unwrap()).collect::<Vec<_>>(),
            // layer1.txt ends with no number, so it counts as 0.
            ["layer1.txt", "layer1", "layer3"]
        );
        assert!(resolve(&root, "missing/*").unwrap_err().contains("cannot list missing"));
        assert!(resolve(&root, "out/run/z*").unwrap_err().contains("no entry matching `z*` in out/run"));
        for bad in ["/abs", "a/../b", "", "a//b", "./a", "a/[z"] {
            assert!(validate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_link_out_of_the_working_copy_is_never_followed() {
        use std::fs;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("codebase");
        fs::create_dir_all(dir.join("out")).unwrap();
        fs::create_dir_all(tmp.path().join("host/layer1")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("host"), dir.join("out/run")).unwrap();
        std::os::unix::fs::symlink("out", dir.join("inside")).unwrap();
        let root = Folder::open_relative(&dir, "working copy").unwrap();
        let e = entries(&root, "out/*/layer*", EntryOrder::TrailingNumber).unwrap_err();
        assert!(e.starts_with("cannot list out: `out/run` is a symbolic link to the absolute path"), "{e}");
        assert!(resolve(&root, "inside/*").unwrap_err().contains("symbolic link"));
    }
}
