//! Path patterns: where in a run's working copy a check reads.
//!
//! A pattern is a relative path whose segments may be shell globs (`*`, `?`, `[…]`).
//! The official RExBench evaluators pick "the first subdirectory" as Python's
//! `os.listdir` lists them, which is the order the filesystem returns them in (not
//! sorted), so a glob segment here names the first matching entry in that same order:
//! `std::fs::read_dir` and `os.listdir` both read the directory with `readdir`.

use std::cmp::Ordering;
use std::fs;
use std::path::{Path, PathBuf};

use glob::Pattern;
use serde::Deserialize;

/// How the entries a series enumerates are ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
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

/// The path `pattern` names under `root`: each glob segment is the first entry of its
/// directory, in directory order, that matches it and, where more segments follow, is
/// a directory (symbolic links followed, as Python's `os.path.isdir` does).
pub fn resolve(root: &Path, pattern: &str) -> Result<PathBuf, String> {
    resolve_to(root, pattern, false)
}

/// As [`resolve`]; with `folder`, the last segment too must name a folder.
fn resolve_to(root: &Path, pattern: &str, folder: bool) -> Result<PathBuf, String> {
    let segments: Vec<&str> = pattern.split('/').collect();
    let mut at = root.to_owned();
    for (i, segment) in segments.iter().enumerate() {
        if !is_glob(segment) {
            at.push(segment);
            continue;
        }
        let last = i + 1 == segments.len() && !folder;
        let glob = Pattern::new(segment).map_err(|e| e.to_string())?;
        let found = listing(&at, root)?
            .into_iter()
            .find(|(name, path)| glob.matches(name) && (last || path.is_dir()))
            .ok_or_else(|| {
                let what = if last { "entry" } else { "folder" };
                format!("no {what} matching `{segment}` in {}", shown(&at, root))
            })?;
        at = found.1;
    }
    Ok(at)
}

/// Every entry matching the last segment of `pattern` in the folder its other segments
/// name (resolved as [`resolve`] does), in `order`.
pub fn entries(root: &Path, pattern: &str, order: EntryOrder) -> Result<Vec<PathBuf>, String> {
    let (parent, last) = pattern.rsplit_once('/').map_or((None, pattern), |(p, l)| (Some(p), l));
    let dir = match parent {
        Some(p) => resolve_to(root, p, true)?,
        None => root.to_owned(),
    };
    let glob = Pattern::new(last).map_err(|e| e.to_string())?;
    let mut found: Vec<(String, PathBuf)> =
        listing(&dir, root)?.into_iter().filter(|(name, _)| glob.matches(name)).collect();
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
fn listing(dir: &Path, root: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let read = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", shown(dir, root)))?;
    let mut out = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", shown(dir, root)))?;
        out.push((entry.file_name().to_string_lossy().into_owned(), entry.path()));
    }
    Ok(out)
}

/// A path as the check's log shows it: relative to the working copy.
pub fn shown(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
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
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("out/run/layer3")).unwrap();
        fs::create_dir_all(root.join("out/run/layer1")).unwrap();
        fs::write(root.join("out/afile"), "").unwrap();
        fs::write(root.join("out/run/layer1.txt"), "").unwrap();
        fs::write(root.join("out/run/layer1/m.txt"), "").unwrap();
        // `afile` matches `*` but is not a folder, so `run` is the only candidate.
        assert_eq!(resolve(root, "out/*/layer1/m.txt").unwrap(), root.join("out/run/layer1/m.txt"));
        // `a*` names the folder whose entries are listed: `afile` is no candidate.
        let found = entries(root, "out/a*/layer*", EntryOrder::TrailingNumber);
        assert!(found.unwrap_err().contains("no folder matching `a*` in out"));
        let found = entries(root, "out/*/layer*", EntryOrder::TrailingNumber).unwrap();
        assert_eq!(
            found
                .iter()
                .map(|p| p.strip_prefix(root.join("out/run")).unwrap().to_str().unwrap())
                .collect::<Vec<_>>(),
            // layer1.txt ends with no number, so it counts as 0.
            ["layer1.txt", "layer1", "layer3"]
        );
        assert!(resolve(root, "missing/*").unwrap_err().contains("cannot list missing"));
        assert!(resolve(root, "out/run/z*").unwrap_err().contains("no entry matching `z*` in out/run"));
        for bad in ["/abs", "a/../b", "", "a//b", "./a", "a/[z"] {
            assert!(validate(bad).is_err(), "{bad}");
        }
    }
}
