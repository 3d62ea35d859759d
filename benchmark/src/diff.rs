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
/// written. Per file, in order of path: its old and new path, whether it is binary (and
/// a binary patch's payload), and the text of each line it removes and adds, in the
/// patch's order, with every whitespace character taken out and lines left empty by
/// that dropped. The
/// preamble and any text between files, the hunks' headers and their context lines,
/// line endings and whitespace-only changes weigh nothing: a patch behind a junk first
/// line, or re-indented, is the same patch. `None` for text that changes no file.
pub fn identity(patch: &str) -> Option<String> {
    let mut files = parse(patch);
    if files.is_empty() {
        return None;
    }
    files.sort_by(|a, b| (a.path(), &a.old, &a.new).cmp(&(b.path(), &b.old, &b.new)));
    let squeeze = |text: &str| -> String { text.chars().filter(|c| !c.is_whitespace()).collect() };
    let mut canonical = String::from("rexbench patch identity v1\n");
    for file in &files {
        let name = |p: &Option<String>| p.clone().unwrap_or_else(|| "/dev/null".to_owned());
        canonical.push_str(&format!(
            "file\t{}\t{}\t{}\t{}\n",
            name(&file.old),
            name(&file.new),
            if file.copy { "copy" } else { "change" },
            if file.binary { "binary" } else { "text" }
        ));
        let mut lines: Vec<(usize, char, &String)> = file
            .removed_text
            .iter()
            .map(|(n, t)| (*n, '-', t))
            .chain(file.added.iter().map(|a| (a.line, '+', &a.text)))
            .collect();
        lines.sort_by_key(|(n, _, _)| *n);
        let payload = file.payload.iter().map(|t| (0, '=', t));
        for (_, sign, text) in lines.into_iter().chain(payload) {
            let text = squeeze(text);
            if !text.is_empty() {
                canonical.push(sign);
                canonical.push_str(&text);
                canonical.push('\n');
            }
        }
    }
    Some(bundle::Digest::of(canonical.as_bytes()).to_hex())
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

/// The files, and each line's kind.
fn read(patch: &str) -> (Vec<FileDiff>, Vec<DiffLine>) {
    let mut kinds: Vec<DiffLine> = Vec::new();
    let mut files: Vec<FileDiff> = Vec::new();
    let mut old_header: Option<Option<String>> = None;
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
            old_header = Some(header_path(path));
        } else if let Some(path) = line.strip_prefix("+++ ") {
            let file = FileDiff {
                old: old_header.take().unwrap_or(None),
                new: header_path(path),
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
mod tests {
    use super::*;

    #[test]
    fn files_added_lines_and_their_numbers() {
        let patch = "diff --git a/run.sh b/run.sh\n--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,3 @@\n keep\n-old\n+new\n\
                     +++ looks like a header\n\\ No newline at end of file\n\
                     diff --git a/data/x.csv b/data/x.csv\nnew file mode 100644\n--- /dev/null\n+++ b/data/x.csv\t2026-01-01\n\
                     @@ -0,0 +1 @@\n+a,b\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        let files = parse(patch);
        assert_eq!(files.len(), 3);
        assert_eq!((files[0].path(), files[0].header_line, files[0].is_new()), ("run.sh", 3, false));
        let added: Vec<(usize, &str)> = files[0].added.iter().map(|a| (a.line, a.text.as_str())).collect();
        assert_eq!(added, [(7, "new"), (8, "++ looks like a header")]);
        assert_eq!((files[1].path(), files[1].is_new(), files[1].added[0].line), ("data/x.csv", true, 15));
        assert_eq!((files[2].path(), files[2].new.as_deref(), files[2].added.len()), ("gone.py", None, 0));
        // Lines removed, as a public run page counts them beside those added.
        let counts: Vec<(usize, usize, bool)> =
            files.iter().map(|f| (f.added.len(), f.removed, f.binary)).collect();
        assert_eq!(counts, [(2, 1, false), (1, 0, false), (0, 1, false)]);
    }

    #[test]
    fn files_touched_each_once_in_order() {
        let patch = "diff --git a/src/train.py b/src/train.py\nindex 1..2 100644\n--- a/src/train.py\n+++ b/src/train.py\n@@ -1 +1 @@\n-a\n+b\n\
                     diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n\
                     --- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n\
                     --- a/src/train.py\t2024-01-01\n+++ b/src/train.py\t2024-01-02\n";
        assert_eq!(files_touched(patch), ["src/train.py", "new.py", "old.py"]);
        assert_eq!(files_touched(""), Vec::<String>::new());
    }

    /// Each line's kind follows the hunks' counts: an added `++ x` is added, a removed
    /// `-- x` removed, and a file starts at `diff --git` or at a `---` without one.
    #[test]
    fn line_kinds_follow_the_hunks_counts() {
        use DiffLine::*;
        let patch = "a note before the diff\n\
                     diff --git a/notes.md b/notes.md\nindex 1..2 100644\n--- a/notes.md\n+++ b/notes.md\n\
                     @@ -1,3 +1,3 @@\n--- a/x\n+++ b/results.txt\n keep\n-old\n+new\n\\ No newline at end of file\n\
                     --- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(
            line_kinds(patch),
            [
                Text, FileStart, FileHeader, FileHeader, FileHeader, Hunk, Removed, Added, Context, Removed,
                Added, Context, FileStart, FileHeader, Hunk, Removed, Added
            ]
        );
        assert_eq!(line_kinds(patch).len(), patch.lines().count());
        assert_eq!(line_kinds(""), []);
    }

    /// The header reader this replaced took an added line that begins with `++ ` (and a
    /// removed one with `-- `) for a file header.
    #[test]
    fn an_added_line_that_looks_like_a_header_touches_no_file() {
        let patch = "--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,2 @@\n--- a/x\n+++ b/results.txt\n keep\n";
        assert_eq!(files_touched(patch), ["notes.md"]);
    }

    /// Git names a binary or mode-only change in its `diff --git` header alone, which
    /// the header reader this replaced never read.
    #[test]
    fn binary_and_mode_only_changes_touch_their_files() {
        let patch = "diff --git a/ckpts/model.ckpt b/ckpts/model.ckpt\nindex 1..2 100644\n\
                     Binary files a/ckpts/model.ckpt and b/ckpts/model.ckpt differ\n\
                     diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n";
        assert_eq!(files_touched(patch), ["ckpts/model.ckpt", "run.sh"]);
    }

    /// A rename removes one path and adds another: both are touched (the header reader
    /// this replaced named only the old path of a rename without content changes).
    #[test]
    fn a_rename_touches_both_paths_and_a_copy_its_new_one() {
        let rename = "diff --git a/src/a.py b/src/b.py\nsimilarity index 100%\nrename from src/a.py\nrename to src/b.py\n";
        assert_eq!(files_touched(rename), ["src/a.py", "src/b.py"]);
        let edited = "diff --git a/a.py b/b.py\nsimilarity index 90%\nrename from a.py\nrename to b.py\n\
                      --- a/a.py\n+++ b/b.py\n@@ -1 +1 @@\n-x\n+y\n";
        assert_eq!(files_touched(edited), ["a.py", "b.py"]);
        let copy = "diff --git a/cfg/base.yaml b/cfg/run.yaml\nsimilarity index 100%\ncopy from cfg/base.yaml\ncopy to cfg/run.yaml\n";
        assert_eq!(files_touched(copy), ["cfg/run.yaml"]);
        let copy_edited = "diff --git a/base.yaml b/run.yaml\nsimilarity index 80%\ncopy from base.yaml\ncopy to run.yaml\n\
                           --- a/base.yaml\n+++ b/run.yaml\n@@ -1 +1 @@\n-x\n+y\n";
        assert_eq!(files_touched(copy_edited), ["run.yaml"]);
    }

    #[test]
    fn binary_and_mode_changes_are_named_by_git_s_header() {
        let patch = "diff --git a/ckpts/model.ckpt b/ckpts/model.ckpt\nindex 1..2 100644\n\
                     Binary files a/ckpts/model.ckpt and b/ckpts/model.ckpt differ\n\
                     diff --git a/my data/x y.bin b/my data/x y.bin\nnew file mode 100644\nindex 0..1\n\
                     Binary files /dev/null and b/my data/x y.bin differ\n\
                     diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n";
        let files = parse(patch);
        let seen: Vec<(Option<&str>, Option<&str>, usize)> =
            files.iter().map(|f| (f.old.as_deref(), f.new.as_deref(), f.header_line)).collect();
        assert_eq!(
            seen,
            [
                (Some("ckpts/model.ckpt"), Some("ckpts/model.ckpt"), 1),
                (None, Some("my data/x y.bin"), 4),
                (Some("old.txt"), None, 8),
            ]
        );
        let binary: Vec<bool> = files.iter().map(|f| f.binary).collect();
        assert_eq!(binary, [true, true, false]);
        let literal = "diff --git a/w.bin b/w.bin\nindex 1..2\nGIT binary patch\nliteral 3\nKcmZ?d00001\n\n";
        assert!(parse(literal)[0].binary);
    }

    /// Issue 75's copies: behind a junk first line, with other hunk headers and context,
    /// CRLF line endings, re-indented, or with its files in another order, a patch is
    /// the same patch; a changed line, path or order of lines is another.
    #[test]
    fn a_patch_is_what_it_changes_not_how_it_is_written() {
        let base = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n ctx\n-x = 1\n+x = 2\n+print(x)\n\
                    diff --git a/run.sh b/run.sh\n--- a/run.sh\n+++ b/run.sh\n@@ -4 +4 @@\n-a\n+b\n";
        let id = identity(base).expect("a patch");
        let junk = format!("attempt 3\n{base}");
        let headers = base.replace("@@ -1,2 +1,3 @@\n ctx\n", "@@ -10,2 +10,3 @@ def f():\n other\n");
        let crlf = base.replace('\n', "\r\n");
        let spaced = base.replace("+x = 2", "+x=2   ").replace("+print(x)", "+\tprint( x )\n+   ");
        let (first, second) = base.split_at(base.find("diff --git a/run.sh").unwrap());
        let reordered = format!("{second}{first}");
        for same in [junk.as_str(), &headers, &crlf, &spaced, &reordered] {
            assert_eq!(identity(same).as_deref(), Some(id.as_str()), "{same:?}");
        }
        let other_line = base.replace("+x = 2", "+x = 3");
        let other_path = base.replace("run.sh", "run2.sh");
        let other_order = base.replace("+x = 2\n+print(x)", "+print(x)\n+x = 2");
        let removal_kept = base.replace("-x = 1\n", " x = 1\n").replace("@@ -1,2 +1,3 @@", "@@ -1,2 +1,4 @@");
        for other in [other_line, other_path, other_order, removal_kept] {
            assert_ne!(identity(&other).as_deref(), Some(id.as_str()), "{other:?}");
        }
        // Two binary changes of one file differ by their payloads.
        let binary = |data: &str| {
            format!(
                "diff --git a/w.bin b/w.bin\nindex 1..2\nGIT binary patch\nliteral 4\n{data}\n\nliteral 0\nHcmV?d00001\n\n"
            )
        };
        assert_ne!(identity(&binary("Lc${NkU|")), identity(&binary("Mc${NkU|")));
        assert_eq!(identity(&binary("Lc${NkU|")), identity(&format!("note\n{}", binary("Lc${NkU|"))));
        assert_eq!(identity(""), None);
        assert_eq!(identity("no diff here\n"), None);
    }
}
