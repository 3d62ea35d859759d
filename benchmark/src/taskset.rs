//! The task-set digest (spec §3, `benchmark.task_set_digest`): one SHA-256 over
//! everything in a set of task folders that can change how a run is evaluated.
//!
//! For each task of the set, in id order, every file under its folder except its
//! `README.md` (which only describes the task) and its `integrity.toml` (which only
//! says what makes a success doubtful, never how a run is judged) contributes a line
//! `<sha256 of the file> <task id>/<path inside the folder>\n`, paths sorted bytewise
//! with `/` separators; the digest is the SHA-256 of `rexbench-task-set/v1\n` followed by
//! those lines. The card (`task.toml`: command, timeout, public checks), checker scripts
//! and, for the example tasks, the base codebases are thereby covered. Private gold files
//! are not: a change of gold results must come with a new benchmark version.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bundle::{Digest, Hasher};

use crate::task::TaskCard;

pub fn task_set_digest<'a>(cards: impl IntoIterator<Item = &'a TaskCard>) -> io::Result<Digest> {
    let mut cards: Vec<&TaskCard> = cards.into_iter().collect();
    cards.sort_by(|a, b| a.id.cmp(&b.id));
    let mut hasher = Hasher::default();
    hasher.write_all(b"rexbench-task-set/v1\n")?;
    for card in cards {
        let mut files = Vec::new();
        walk(&card.dir, &card.dir, &mut files)?;
        files.sort();
        for (rel, path) in files {
            if rel == "README.md" || rel == crate::task::INTEGRITY_FILE {
                continue;
            }
            let (digest, _) = Digest::of_reader(fs::File::open(&path)?)?;
            writeln!(hasher, "{digest} {}/{rel}", card.id)?;
        }
    }
    Ok(hasher.finish())
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(root, &path, out)?;
        } else {
            let rel = path.strip_prefix(root).expect("below root").to_string_lossy().replace('\\', "/");
            out.push((rel, path));
        }
    }
    Ok(())
}
