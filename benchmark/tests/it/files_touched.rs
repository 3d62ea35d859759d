//! The files a patch touches, read by `benchmark::diff` (hunk by hunk), against what the
//! runner's own header reader said before it was replaced (`files-touched-before.json`,
//! recorded from it over every patch below): every patch in `tasks/`, the Harbor
//! fixtures, the integrity suite and the hostile suite's patch. Each difference is one
//! the hand-made reader got wrong, and the unit test in `benchmark/src/diff.rs` named for
//! it shows the case alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use benchmark::diff::files_touched;

/// Patches whose file list changed, with the unit test that explains why.
const EXPLAINED: &[(&str, &str)] = &[
    // A binary checkpoint replaced: git names it in `diff --git` and `Binary files …`
    // only, which the old reader never read, so the file touched went uncounted.
    (
        "benchmark/tests/integrity-suite.toml#othello: the pretrained model replaced",
        "diff::tests::binary_and_mode_only_changes_touch_their_files",
    ),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn patch_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            patch_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "diff" || e == "patch") {
            out.push(path);
        }
    }
}

/// Every patch, by the key the record names it with.
fn patches() -> BTreeMap<String, String> {
    let root = repo();
    let mut files = Vec::new();
    for dir in ["tasks", "runner/tests/fixtures"] {
        patch_files(&root.join(dir), &mut files);
    }
    let mut out: BTreeMap<String, String> = files
        .into_iter()
        .map(|p| {
            let key = p.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
            (key, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    #[derive(serde::Deserialize)]
    struct Suite {
        case: Vec<Case>,
    }
    #[derive(serde::Deserialize)]
    struct Case {
        task: String,
        name: String,
        patch: String,
    }
    let suite = std::fs::read_to_string(root.join("benchmark/tests/integrity-suite.toml")).unwrap();
    for case in toml::from_str::<Suite>(&suite).unwrap().case {
        out.insert(format!("benchmark/tests/integrity-suite.toml#{}: {}", case.task, case.name), case.patch);
    }
    // The shape of `agent_patch` in runner/tests/it/hostile.rs, with one of its scripts.
    out.insert(
        "runner/tests/it/hostile.rs#agent_patch".into(),
        "diff --git a/agent.sh b/agent.sh\nnew file mode 100644\n--- /dev/null\n+++ b/agent.sh\n@@ -0,0 +1 @@\n+mkfifo wait && cat wait\n".into(),
    );
    out
}

#[test]
fn files_touched_equals_the_old_reader_but_where_it_was_wrong() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/files-touched-before.json");
    let before: BTreeMap<String, Vec<String>> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let patches = patches();
    assert!(before.len() >= 58, "the record holds every patch: {}", before.len());
    let mut changed = BTreeMap::new();
    for (key, old) in &before {
        let patch = patches.get(key).unwrap_or_else(|| panic!("`{key}` is in the record but no longer here"));
        let now = files_touched(patch);
        if &now != old {
            changed.insert(key.as_str(), (old.clone(), now));
        }
    }
    let explained: BTreeMap<&str, &str> = EXPLAINED.iter().copied().collect();
    let unexplained: Vec<String> = changed
        .iter()
        .filter(|(key, _)| !explained.contains_key(*key))
        .map(|(key, (old, now))| format!("`{key}`: {old:?} before, {now:?} now"))
        .collect();
    assert!(unexplained.is_empty(), "no test explains:\n{}", unexplained.join("\n"));
    for key in explained.keys() {
        assert!(changed.contains_key(key), "`{key}` is listed as changed but reads as before");
    }
}
