//! The diff reader, a patch's identity and the paths its headers name.

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
fn a_header_that_names_a_path_outside_the_tree_is_found_and_an_honest_patch_is_not() {
    let copy =
        |from: &str| format!("diff --git a/x b/x\nsimilarity index 100%\ncopy from {from}\ncopy to x\n");
    assert_eq!(outside_path(&copy("/etc/shadow")), Some((3, "/etc/shadow".into())));
    assert_eq!(outside_path(&copy("../../root/.token")), Some((3, "../../root/.token".into())));
    // Quoted, with octal escapes for the dots and the slash.
    assert_eq!(outside_path(&copy("\"\\056\\056\\057etc\\057passwd\"")), Some((3, "../etc/passwd".into())));
    assert_eq!(outside_path(&copy("src/base.yaml")), None);
    let rename = "diff --git a/a b/b\nrename from a\nrename to ../b\n";
    assert_eq!(outside_path(rename), Some((3, "../b".into())));
    assert_eq!(outside_path("--- a/../x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"), Some((1, "a/../x".into())));
    assert_eq!(
        outside_path("--- /etc/passwd\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"),
        Some((1, "/etc/passwd".into()))
    );
    assert_eq!(outside_path("diff --git a/../x b/x\n"), Some((1, "a/../x".into())));
    // A new file from /dev/null, a removed line that reads like a header, and a
    // path with `..` inside a name are honest.
    let honest = "diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@\n+x\n\
                  --- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n--- /etc/passwd\n-- ../up\n+-- done\n+-- a..b\n\
                  --- a/v..1/f\n+++ b/v..1/f\n@@ -1 +1 @@\n-a\n+b\n";
    assert_eq!(outside_path(honest), None);
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
    let rename =
        "diff --git a/src/a.py b/src/b.py\nsimilarity index 100%\nrename from src/a.py\nrename to src/b.py\n";
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
/// CRLF line endings, re-indented, with its files in another order, other header
/// prefixes, its lines interleaved otherwise, a no-op hunk or as a whole file's
/// rewrite, a patch is the same patch; a changed line, path or order of added lines
/// is another.
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
    // A review's rewrites (issue 75): other header prefixes (`-p1` strips any), the
    // added lines before the removed ones, a line removed and added back in a hunk of
    // its own, and the whole file rewritten.
    let prefixes = base.replace("--- a/", "--- x/").replace("+++ b/", "+++ y/");
    let plus_first = base.replace("-x = 1\n+x = 2\n+print(x)\n", "+x = 2\n-x = 1\n+print(x)\n");
    let noop = format!(
        "{base}diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -9 +9 @@\n-keep = 0\n+keep = 0\n"
    );
    let rewrite = base.replace(
        "@@ -1,2 +1,3 @@\n ctx\n-x = 1\n+x = 2\n+print(x)\n",
        "@@ -1,2 +1,3 @@\n-ctx\n-x = 1\n+ctx\n+x = 2\n+print(x)\n",
    );
    for same in [junk.as_str(), &headers, &crlf, &spaced, &reordered, &prefixes, &plus_first, &noop, &rewrite]
    {
        assert_eq!(identity(same).as_deref(), Some(id.as_str()), "{same:?}");
    }
    let other_line = base.replace("+x = 2", "+x = 3");
    let other_path = base.replace("run.sh", "run2.sh");
    let other_order = base.replace("+x = 2\n+print(x)", "+print(x)\n+x = 2");
    let removal_kept = base.replace("-x = 1\n", " x = 1\n").replace("@@ -1,2 +1,3 @@", "@@ -1,2 +1,4 @@");
    // A change that only moves a line is not the empty change.
    let moved = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n-a\n b\n+a\n";
    let moved_other = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n-c\n b\n+c\n";
    assert_ne!(identity(moved), identity(moved_other));
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
