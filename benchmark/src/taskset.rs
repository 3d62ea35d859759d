//! The task-set digest (spec §3, `benchmark.task_set_digest`): one SHA-256 over
//! everything in a set of task folders that can change how a run is evaluated.
//!
//! For each task of the set, in id order, every file under its folder except its
//! `README.md` (which only describes the task), its `integrity.toml` (which only says
//! what makes a success doubtful, never how a run is judged) and its `harbor.toml` (the
//! Harbor digests that say which task folder a Harbor trial must have run) contributes a line
//! `<sha256 of the file> <task id>/<path inside the folder>\n`, paths sorted bytewise
//! with `/` separators; the digest is the SHA-256 of `rexbench-task-set/v1\n` followed by
//! those lines. The card (`task.toml`: command, timeout, public checks), checker scripts
//! and, for the example tasks, the base codebases are thereby covered. Private gold files
//! are not: a change of gold results must come with a new benchmark version.
//!
//! The card's `outputs = "public" | "private"` and `attempts = N` lines are left out of
//! what is hashed: one says who may read a run's outputs, the other how many attempts a
//! result needs to rank, never how a run is judged; so a task whose outputs are
//! published later, or whose rule of attempts is stated, keeps its digest (and its
//! results keep ranking together).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bundle::{Digest, Hasher};

use crate::task::TaskCard;

/// The benchmark's name for the task set `cards` make, as results name it.
pub const BENCHMARK_NAME: &str = "RExBench";
/// The examples' task set's name.
pub const EXAMPLES_NAME: &str = "RExBench examples";
/// The version both sets carry.
pub const VERSION: &str = "1.0";

/// The task sets `cards` make, as results name them: the benchmark's tasks, and the
/// examples (each set's digest covers all of its cards, so results on a subset rank with
/// the rest). A set without cards is left out.
pub fn sets(cards: &std::collections::BTreeMap<String, TaskCard>) -> io::Result<Vec<bundle::TaskSet>> {
    let mut out = Vec::new();
    for (examples, name) in [(false, BENCHMARK_NAME), (true, EXAMPLES_NAME)] {
        let set: Vec<&TaskCard> = cards.values().filter(|c| c.is_example() == examples).collect();
        if set.is_empty() {
            continue;
        }
        out.push(bundle::TaskSet {
            digest: task_set_digest(set)?.to_hex(),
            name: name.to_owned(),
            version: VERSION.to_owned(),
        });
    }
    Ok(out)
}

/// What a board whose cards are `cards` holds a bundle's claims to (bundle spec §5a):
/// their task sets and each task's rule. A board adds the sets its maintainers register.
pub fn claims(cards: &std::collections::BTreeMap<String, TaskCard>) -> io::Result<bundle::Claims> {
    Ok(bundle::Claims {
        task_sets: sets(cards)?.into_iter().collect(),
        tasks: cards.iter().map(|(id, card)| (id.clone(), card.rule())).collect(),
    })
}

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
            if rel == "README.md" || rel == crate::task::INTEGRITY_FILE || rel == crate::task::HARBOR_FILE {
                continue;
            }
            let (digest, _) = if rel == "task.toml" {
                Digest::of_reader(judged_card(&fs::read(&path)?).as_slice())?
            } else {
                Digest::of_reader(fs::File::open(&path)?)?
            };
            writeln!(hasher, "{digest} {}/{rel}", card.id)?;
        }
    }
    Ok(hasher.finish())
}

/// A card's bytes as the digest sees them: without the lines of its top table that set
/// `outputs` and `attempts` (the only top-level keys of those names a card may have).
fn judged_card(bytes: &[u8]) -> Vec<u8> {
    let mut top = true;
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let trimmed = text.trim_start();
        top &= !trimmed.starts_with('[');
        let sets =
            |key: &str| trimmed.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with('='));
        if !(top && (sets("outputs") || sets("attempts"))) {
            out.extend_from_slice(line);
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::judged_card;

    #[test]
    fn only_the_top_table_s_outputs_line_is_left_out() {
        let card = b"id = \"t\"\noutputs = \"private\"\n  outputs   =\"public\"\r\noutputsx = 1\n[evaluation]\noutputs = 1\n";
        assert_eq!(judged_card(card), b"id = \"t\"\noutputsx = 1\n[evaluation]\noutputs = 1\n");
        assert_eq!(judged_card(b"# outputs = \"public\"\n"), b"# outputs = \"public\"\n");
        assert_eq!(judged_card(b"outputs = \"public\""), b"", "a last line without its newline");
        let card = b"id = \"t\"\nattempts = 2\nattemptsx = 1\n[evaluation]\nattempts = 3\n";
        assert_eq!(judged_card(card), b"id = \"t\"\nattemptsx = 1\n[evaluation]\nattempts = 3\n");
    }
}
