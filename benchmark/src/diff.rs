//! A unified diff read as `git diff` and `diff -u` write it: per file, its old and new
//! path and the lines it adds, each with its line number in the patch (from 1), so that
//! a finding can point at the line a reader sees. Hunks are read by their counts, so a
//! line that adds text beginning with `++ ` is still content, not a header.

pub use bundle::DiffLine;

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The path before the change; `None` for a file the patch creates.
    pub old: Option<String>,
    /// The path after; `None` for a file the patch deletes.
    pub new: Option<String>,
    /// Git's `copy from`: `old` is the copy's source, which the patch leaves as it was.
    pub copy: bool,
    /// The old and new path as `git apply` and `patch -p1` find the file: a `---`/`+++`
    /// header's path without its first component, whatever it is (`a/`, `x/`, `orig/`);
    /// `None` for `/dev/null`. The identity names files by them.
    pub applied: [Option<String>; 2],
    /// The patch line of the file's `+++` header.
    pub header_line: usize,
    pub added: Vec<Added>,
    /// How many lines the patch removes from the file.
    pub removed: usize,
    /// Each line it removes: its line number in the patch and its text, without the
    /// leading `-`.
    pub removed_text: Vec<(usize, String)>,
    /// A `GIT binary patch`'s payload lines (its `literal`/`delta` lines and their data).
    pub payload: Vec<String>,
    /// Git says the file's bytes differ without lines (`Binary files … differ`, or a
    /// `GIT binary patch`).
    pub binary: bool,
}

/// A line the patch adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    /// Its line number in the patch, from 1.
    pub line: usize,
    /// The line's text, without the leading `+`.
    pub text: String,
}

impl FileDiff {
    /// The path the change is about: the new one, or the old one of a deleted file.
    pub fn path(&self) -> &str {
        self.new.as_deref().or(self.old.as_deref()).unwrap_or_default()
    }

    /// Whether the patch creates the file.
    pub fn is_new(&self) -> bool {
        self.old.is_none() && self.new.is_some()
    }
}

/// The repository-relative paths a patch changes, each once, in order of appearance:
/// a file's path, both paths of a rename (the old one is gone, the new one is there),
/// the new path of a copy, and files git names only in its `diff --git` header (binary
/// and mode-only changes). File recall is computed from it.
pub fn files_touched(patch: &str) -> Vec<String> {
    let mut touched: Vec<String> = Vec::new();
    for file in parse(patch) {
        let old = file.old.filter(|_| !file.copy);
        for path in [old, file.new].into_iter().flatten() {
            if !touched.contains(&path) {
                touched.push(path);
            }
        }
    }
    touched
}

/// A patch's identity (bundle spec §5b): a digest of what it changes, not of how it is
/// written. Per file, in order of path as the patch tools find it (a header's path
/// without its first component, whatever that is): its old and new path, whether it is
/// binary (and a binary patch's payload), and the lines it removes and adds, each with
/// every whitespace character taken out (a line left empty dropped), as two sorted
/// lists, a line both removed and added cancelled out where anything else remains. The
/// preamble and any text between files, the hunks' headers, order and context lines, the
/// headers' prefixes, line endings, whitespace-only changes and lines removed and added
/// back weigh nothing: a patch behind a junk first line, re-indented, split into other
/// hunks or written as the whole file's rewrite is the same patch. `None` for text that
/// changes no file.
pub fn identity(patch: &str) -> Option<String> {
    let mut files = parse(patch);
    if files.is_empty() {
        return None;
    }
    let key = |f: &FileDiff| {
        let [old, new] = f.applied.clone();
        (new.clone().or(old.clone()).unwrap_or_default(), old, new)
    };
    files.sort_by_key(key);
    // One file's sections, wherever the patch puts them, are one change (in their order:
    // the sort is stable).
    let mut merged: Vec<FileDiff> = Vec::with_capacity(files.len());
    for file in files {
        match merged.last_mut() {
            Some(last) if last.applied == file.applied => {
                last.copy |= file.copy;
                last.binary |= file.binary;
                last.removed_text.extend(file.removed_text);
                last.added.extend(file.added);
                last.payload.extend(file.payload);
            }
            _ => merged.push(file),
        }
    }
    let files = merged;
    let squeeze = |text: &str| -> String { text.chars().filter(|c| !c.is_whitespace()).collect() };
    let mut canonical = String::from("rexbench patch identity v2\n");
    for file in &files {
        let name = |p: &Option<String>| p.clone().unwrap_or_else(|| "/dev/null".to_owned());
        let [old, new] = &file.applied;
        canonical.push_str(&format!(
            "file\t{}\t{}\t{}\t{}\n",
            name(old),
            name(new),
            if file.copy { "copy" } else { "change" },
            if file.binary { "binary" } else { "text" }
        ));
        let lines = |texts: Vec<&String>| -> Vec<String> {
            texts.into_iter().map(|t| squeeze(t)).filter(|t| !t.is_empty()).collect()
        };
        let removed = lines(file.removed_text.iter().map(|(_, t)| t).collect());
        let added = lines(file.added.iter().map(|a| &a.text).collect());
        let (kept_removed, kept_added) = cancel(&removed, &added);
        // A change that only moves lines is its lines, not nothing.
        let (removed, added) = if kept_removed.is_empty() && kept_added.is_empty() {
            (removed, added)
        } else {
            (kept_removed, kept_added)
        };
        for (sign, text) in removed.iter().map(|t| ('-', t)).chain(added.iter().map(|t| ('+', t))) {
            canonical.push(sign);
            canonical.push_str(text);
            canonical.push('\n');
        }
        for text in &file.payload {
            let text = squeeze(text);
            if !text.is_empty() {
                canonical.push('=');
                canonical.push_str(&text);
                canonical.push('\n');
            }
        }
    }
    Some(bundle::Digest::of(canonical.as_bytes()).to_hex())
}

/// The lines removed and the lines added, each in its order, less the lines both share:
/// a line removed and added back, however often, is cancelled that many times (its
/// first occurrences on each side).
fn cancel(removed: &[String], added: &[String]) -> (Vec<String>, Vec<String>) {
    use std::collections::BTreeMap;
    fn count(lines: &[String]) -> BTreeMap<&str, usize> {
        let mut n: BTreeMap<&str, usize> = BTreeMap::new();
        for l in lines {
            *n.entry(l.as_str()).or_default() += 1;
        }
        n
    }
    let (r, a) = (count(removed), count(added));
    let shared: BTreeMap<&str, usize> =
        r.iter().filter_map(|(l, &n)| a.get(l).map(|&m| (*l, n.min(m)))).collect();
    let keep = |lines: &[String]| -> Vec<String> {
        let mut left = shared.clone();
        lines
            .iter()
            .filter(|l| match left.get_mut(l.as_str()) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            })
            .cloned()
            .collect()
    };
    (keep(removed), keep(added))
}

/// The files `patch` changes, in order of appearance.
pub fn parse(patch: &str) -> Vec<FileDiff> {
    read(patch).0
}

/// What each line of `patch` is, in order (one per line, as `str::lines` splits it):
/// read by the hunks' counts, as [`parse`] reads them, so that a page draws an added
/// line `++ x` as an added line and not as a file's header.
pub fn line_kinds(patch: &str) -> Vec<DiffLine> {
    read(patch).1
}

/// Git's extended headers that name a path as it is, with no `a/`/`b/` prefix to strip.
const GIT_PATH_HEADERS: [&str; 6] =
    ["copy from ", "copy to ", "rename from ", "rename to ", "rename old ", "rename new "];

/// The first line of `patch` that names a path outside the tree it is applied to, with
/// that line's number (from 1) and the path: an absolute path or one with a `..`
/// component in a file's header (`diff --git`, `---`, `+++`, and git's `copy from`,
/// `rename from` and their kin, which `git apply` outside a repository follows as they
/// are, so that a `copy from /etc/shadow` would copy the machine's file into the working
/// copy). `/dev/null` is no path. A quoted path (`"…"`, git's C-style quoting) is read
/// unquoted. Content lines never begin with a header's word, and `---`/`+++` lines are
/// headers only where the hunks' counts say so, so no honest patch is caught by its text.
pub fn outside_path(patch: &str) -> Option<(usize, String)> {
    let kinds = line_kinds(patch);
    for ((index, raw), kind) in patch.lines().enumerate().zip(kinds) {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let paths: Vec<String> =
            if let Some(rest) = GIT_PATH_HEADERS.iter().find_map(|h| line.strip_prefix(h)) {
                vec![unquote(rest.trim_end())]
            } else if !matches!(kind, DiffLine::FileStart | DiffLine::FileHeader) {
                continue;
            } else if let Some(rest) = line.strip_prefix("diff --git ") {
                // Each word that could be a path: a quoted or unquoted `a/…` and `b/…`.
                rest.split(' ').map(unquote).collect()
            } else if let Some(rest) = line.strip_prefix("--- ").or_else(|| line.strip_prefix("+++ ")) {
                vec![unquote(rest.split('\t').next().unwrap_or(rest).trim_end())]
            } else {
                continue;
            };
        if let Some(path) = paths.into_iter().find(|p| escapes(p)) {
            return Some((index + 1, path));
        }
    }
    None
}

/// Whether `path` (as a header gives it) reaches outside the tree: absolute (but
/// `/dev/null`), or with a `..` component.
fn escapes(path: &str) -> bool {
    (path.starts_with('/') && path != "/dev/null") || path.split('/').any(|c| c == "..")
}

/// A path as git quotes one (`"a/\303\251 x"`: C escapes, octal bytes), unquoted; an
/// unquoted one as it is.
fn unquote(text: &str) -> String {
    let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
        return text.to_owned();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(d @ b'0'..=b'7') => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&o @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(o - b'0');
                            chars.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(value as u8);
            }
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The files, and each line's kind.
fn read(patch: &str) -> (Vec<FileDiff>, Vec<DiffLine>) {
    let mut kinds: Vec<DiffLine> = Vec::new();
    let mut files: Vec<FileDiff> = Vec::new();
    let mut old_header: Option<(Option<String>, Option<String>)> = None;
    // Lines still to come in the current hunk: (old side, new side).
    let mut left = (0usize, 0usize);
    // The last file came from a `diff --git` line, its `---`/`+++` headers not yet read.
    let mut from_git = false;
    // Within a `GIT binary patch`'s payload, until the next file.
    let mut in_payload = false;
    for (index, raw) in patch.lines().enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let number = index + 1;
        if left.0 > 0 || left.1 > 0 {
            kinds.push(match line.as_bytes().first() {
                Some(b'+') => DiffLine::Added,
                Some(b'-') => DiffLine::Removed,
                _ => DiffLine::Context,
            });
            match line.as_bytes().first() {
                Some(b'+') => {
                    left.1 = left.1.saturating_sub(1);
                    if let Some(file) = files.last_mut() {
                        file.added.push(Added { line: number, text: line[1..].to_owned() });
                    }
                }
                Some(b'-') => {
                    left.0 = left.0.saturating_sub(1);
                    if let Some(file) = files.last_mut() {
                        file.removed += 1;
                        file.removed_text.push((number, line[1..].to_owned()));
                    }
                }
                // "\ No newline at end of file" belongs to the line before it.
                Some(b'\\') => {}
                // Context; an empty line is context whose leading space was lost.
                _ => left = (left.0.saturating_sub(1), left.1.saturating_sub(1)),
            }
            continue;
        }
        // Outside a hunk: a header, a hunk's start, or text.
        let in_git_header = from_git;
        let after_old_header = old_header.is_some();
        kinds.push(if line.starts_with("diff --git ") {
            DiffLine::FileStart
        } else if line.starts_with("@@ ") {
            DiffLine::Hunk
        } else if line.starts_with("--- ") {
            if in_git_header { DiffLine::FileHeader } else { DiffLine::FileStart }
        } else if line.starts_with("+++ ") {
            if in_git_header || after_old_header { DiffLine::FileHeader } else { DiffLine::FileStart }
        } else if in_git_header {
            DiffLine::FileHeader
        } else if line.starts_with('\\') {
            // "\ No newline at end of file", after a hunk's last line.
            DiffLine::Context
        } else {
            DiffLine::Text
        });
        if in_payload && !line.starts_with("diff --git ") {
            if let Some(file) = files.last_mut() {
                file.payload.push(line.to_owned());
            }
            continue;
        }
        in_payload = false;
        if let Some(paths) = line.strip_prefix("diff --git ") {
            // Git names the file here, and only here for a binary or mode-only change.
            let (old, new) = git_paths(paths);
            files.push(FileDiff {
                applied: [old.clone(), new.clone()],
                old,
                new,
                copy: false,
                header_line: number,
                added: Vec::new(),
                removed: 0,
                removed_text: Vec::new(),
                payload: Vec::new(),
                binary: false,
            });
            from_git = true;
            old_header = None;
        } else if from_git && line.starts_with("new file mode") {
            files.last_mut().expect("pushed").old = None;
        } else if from_git && line.starts_with("deleted file mode") {
            files.last_mut().expect("pushed").new = None;
        } else if from_git && line.starts_with("copy from ") {
            files.last_mut().expect("pushed").copy = true;
        } else if from_git && (line.starts_with("Binary files ") || line == "GIT binary patch") {
            files.last_mut().expect("pushed").binary = true;
            in_payload = line == "GIT binary patch";
        } else if let Some(path) = line.strip_prefix("--- ") {
            old_header = Some((header_path(path), p1(path)));
        } else if let Some(path) = line.strip_prefix("+++ ") {
            let (old, old_applied) = old_header.take().unwrap_or((None, None));
            let file = FileDiff {
                old,
                new: header_path(path),
                applied: [old_applied, p1(path)],
                copy: false,
                header_line: number,
                added: Vec::new(),
                removed: 0,
                removed_text: Vec::new(),
                payload: Vec::new(),
                binary: false,
            };
            match files.last_mut() {
                Some(last) if from_git => {
                    *last = FileDiff {
                        copy: last.copy,
                        binary: last.binary,
                        payload: std::mem::take(&mut last.payload),
                        ..file
                    }
                }
                _ => files.push(file),
            }
            from_git = false;
        } else if let Some(counts) = line.strip_prefix("@@ ") {
            left = hunk_counts(counts).unwrap_or((0, 0));
            from_git = false;
        }
    }
    (files, kinds)
}

/// A header's path without its `a/` or `b/` prefix and timestamp; `None` for
/// `/dev/null`.
fn header_path(text: &str) -> Option<String> {
    let path = text.split('\t').next().unwrap_or(text).trim_end();
    let path = path.strip_prefix("a/").or_else(|| path.strip_prefix("b/")).unwrap_or(path);
    (path != "/dev/null" && !path.is_empty()).then(|| path.to_owned())
}

/// A header's path as `-p1` reads it: its first component taken off (a path of one
/// component as it is); `None` for `/dev/null`.
fn p1(text: &str) -> Option<String> {
    let path = text.split('\t').next().unwrap_or(text).trim_end();
    if path == "/dev/null" || path.is_empty() {
        return None;
    }
    Some(path.split_once('/').map_or(path, |(_, rest)| rest).to_owned())
}

/// The two paths of a `diff --git a/X b/Y` line. A path may hold spaces, so where both
/// are the same (not a rename) the line is cut in its middle.
fn git_paths(text: &str) -> (Option<String>, Option<String>) {
    let text = text.trim_end();
    let half = text.len().saturating_sub(1) / 2;
    if let (Some(a), Some(b)) = (text.get(..half), text.get(half + 1..))
        && a.starts_with("a/")
        && b.starts_with("b/")
        && a[2..] == b[2..]
    {
        return (header_path(a), header_path(b));
    }
    match text.split_once(" b/") {
        Some((a, b)) => (header_path(a), header_path(&format!("b/{b}"))),
        None => (header_path(text), header_path(text)),
    }
}

/// The line counts of a hunk header's `-a,b +c,d @@` (a count left out is 1).
fn hunk_counts(text: &str) -> Option<(usize, usize)> {
    let mut parts = text.split_whitespace();
    let count = |range: &str| -> Option<usize> {
        match range.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => Some(1),
        }
    };
    let old = count(parts.next()?.strip_prefix('-')?)?;
    let new = count(parts.next()?.strip_prefix('+')?)?;
    Some((old, new))
}

#[cfg(test)]
mod tests;
