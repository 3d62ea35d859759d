//! Held-out variants (spec §4l): inputs the submitter never saw, kept in the
//! maintainers' gold folder only, on which a sampled success is re-run to see whether it
//! generalises.
//!
//! `GOLD/<task>/heldout/<name>/` holds `gold.toml` (the check on this variant, in the
//! task's gold format) and `files/`: files that take the place of the codebase's at the
//! same relative paths (another data file, another seed in a config) before the patch is
//! applied and the experiment runs. A variant is named publicly by its digest only: the
//! SHA-256 of `rexbench-heldout/v1\n` followed by a line `<sha256 of the file> <path>\n`
//! for every file under its folder, paths relative to it, sorted bytewise, `/`
//! separators. Nothing else of it (its files, its expected values, the logs of runs on
//! it) leaves the maintainers' machines.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Component, Path, PathBuf};

use bundle::{Digest, Hasher};

use crate::check::CheckSpec;
use crate::task::{Gold, TaskError};

/// The folder of a task's gold that holds its variants.
pub const DIR: &str = "heldout";

/// The files a variant puts in place of the codebase's.
pub const FILES: &str = "files";

/// What a variant's digest is over, first.
pub const DOMAIN: &str = "rexbench-heldout/v1\n";

/// One held-out variant of a task.
#[derive(Debug, Clone)]
pub struct Variant {
    pub task: String,
    /// Its folder's name (the maintainers' own; never told).
    pub name: String,
    pub dir: PathBuf,
    /// Its public name.
    pub digest: Digest,
    /// The check on this variant.
    pub check: CheckSpec,
    /// The files it replaces, relative to the codebase, sorted.
    pub files: Vec<String>,
}

impl Variant {
    /// Copies `codebase` to `to` with this variant's files in place of the codebase's.
    pub fn codebase(&self, codebase: &Path, to: &Path) -> io::Result<()> {
        crate::tree::copy_tree(codebase, to)?;
        for rel in &self.files {
            let dst = to.join(rel);
            if let Some(parent) = dst.parent() {
                fs::create_dir_all(parent)?;
            }
            // A link in the codebase at this path is replaced, never written through.
            if fs::symlink_metadata(&dst).is_ok() {
                fs::remove_file(&dst)?;
            }
            fs::copy(self.dir.join(FILES).join(rel), &dst)?;
        }
        Ok(())
    }
}

/// The variants of `task` in the gold folder `gold`, by name; none where it has no
/// `heldout/` folder.
pub fn variants(gold: &Path, task: &str) -> Result<Vec<Variant>, TaskError> {
    let root = gold.join(task).join(DIR);
    if !root.is_dir() {
        return Ok(Vec::new());
    }
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| TaskError::Io { path, source }
    };
    let mut names: Vec<String> = fs::read_dir(&root)
        .map_err(io(&root))?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()
        .map_err(io(&root))?;
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let dir = root.join(&name);
        let invalid = |detail: String| TaskError::Invalid { path: dir.clone(), detail };
        if !fs::symlink_metadata(&dir).map_err(io(&dir))?.is_dir() {
            return Err(invalid("a held-out variant is a folder (gold.toml and files/)".into()));
        }
        let toml_path = dir.join("gold.toml");
        let text = fs::read_to_string(&toml_path).map_err(io(&toml_path))?;
        let gold: Gold = toml::from_str(&text)
            .map_err(|e| TaskError::Invalid { path: toml_path.clone(), detail: e.to_string() })?;
        let check = gold.check.ok_or_else(|| TaskError::Invalid {
            path: toml_path.clone(),
            detail: "a held-out variant's gold.toml gives its check ([check]): its expected values differ from the task's"
                .into(),
        })?;
        check.validate().map_err(|detail| TaskError::Invalid { path: toml_path.clone(), detail })?;
        let mut all = Vec::new();
        walk(&dir, &dir, &mut all).map_err(|e| invalid(e.to_string()))?;
        all.sort();
        let files: Vec<String> = all
            .iter()
            .filter_map(|(rel, _)| rel.strip_prefix(&format!("{FILES}/")).map(str::to_owned))
            .collect();
        if files.is_empty() {
            return Err(invalid(format!(
                "{FILES}/ holds no file: a variant replaces at least one of the codebase's"
            )));
        }
        if let Some(bad) = files.iter().find(|f| !is_plain_relative(f)) {
            return Err(invalid(format!("{FILES}/{bad} is not a plain relative path")));
        }
        let mut hasher = Hasher::default();
        hasher.write_all(DOMAIN.as_bytes()).map_err(io(&dir))?;
        for (rel, path) in &all {
            let (digest, _) = Digest::of_reader(fs::File::open(path).map_err(io(path))?).map_err(io(path))?;
            writeln!(hasher, "{digest} {rel}").map_err(io(&dir))?;
        }
        out.push(Variant { task: task.to_owned(), name, digest: hasher.finish(), check, files, dir });
    }
    Ok(out)
}

/// Every task's variants in the gold folder `gold`, by task then name.
pub fn all(gold: &Path) -> Result<Vec<Variant>, TaskError> {
    let mut tasks: Vec<String> = match fs::read_dir(gold) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter(|e| e.path().join(DIR).is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(source) => return Err(TaskError::Io { path: gold.to_owned(), source }),
    };
    tasks.sort();
    let mut out = Vec::new();
    for task in tasks {
        out.extend(variants(gold, &task)?);
    }
    Ok(out)
}

/// The variant of `task` whose digest is `digest`.
pub fn find(gold: &Path, task: &str, digest: &str) -> Result<Option<Variant>, TaskError> {
    Ok(variants(gold, task)?.into_iter().find(|v| v.digest.to_hex() == digest))
}

fn is_plain_relative(rel: &str) -> bool {
    Path::new(rel).components().all(|c| matches!(c, Component::Normal(_)))
}

/// The regular files under `dir`; a link or anything else is refused (the folder is
/// hashed as it is, never through a link).
fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let ty = entry.file_type()?;
        let rel = path.strip_prefix(root).expect("below root").to_string_lossy().replace('\\', "/");
        if ty.is_dir() {
            walk(root, &path, out)?;
        } else if ty.is_file() {
            out.push((rel, path));
        } else {
            return Err(io::Error::other(format!("{rel} is not a regular file or folder")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variants_digest_is_over_its_files_and_it_replaces_the_codebases() {
        let tmp = tempfile::tempdir().unwrap();
        let v = tmp.path().join("gold/t/heldout/a");
        fs::create_dir_all(v.join("files/sub")).unwrap();
        fs::write(v.join("gold.toml"), "[[check.metrics]]\nname = \"m\"\nregex = 'M: (\\S+)'\nequals = 2\n")
            .unwrap();
        fs::write(v.join("files/sub/data.csv"), "x\n2\n").unwrap();
        let found = variants(&tmp.path().join("gold"), "t").unwrap();
        assert_eq!(found.len(), 1);
        let mut expect = Hasher::default();
        expect.write_all(DOMAIN.as_bytes()).unwrap();
        for rel in ["files/sub/data.csv", "gold.toml"] {
            let (d, _) = Digest::of_reader(fs::File::open(v.join(rel)).unwrap()).unwrap();
            writeln!(expect, "{d} {rel}").unwrap();
        }
        assert_eq!(found[0].digest, expect.finish());
        assert_eq!(found[0].files, ["sub/data.csv"]);
        let base = tmp.path().join("base");
        fs::create_dir_all(base.join("sub")).unwrap();
        fs::write(base.join("sub/data.csv"), "x\n1\n").unwrap();
        fs::write(base.join("run.sh"), "echo\n").unwrap();
        let to = tmp.path().join("merged");
        found[0].codebase(&base, &to).unwrap();
        assert_eq!(fs::read_to_string(to.join("sub/data.csv")).unwrap(), "x\n2\n");
        assert_eq!(fs::read_to_string(to.join("run.sh")).unwrap(), "echo\n");
        // A changed byte is another variant.
        fs::write(v.join("files/sub/data.csv"), "x\n3\n").unwrap();
        assert_ne!(variants(&tmp.path().join("gold"), "t").unwrap()[0].digest, found[0].digest);
        // A link in the folder is refused, not followed.
        std::os::unix::fs::symlink("/etc/passwd", v.join("files/link")).unwrap();
        let err = variants(&tmp.path().join("gold"), "t").unwrap_err().to_string();
        assert!(err.contains("files/link is not a regular file"), "{err}");
    }

    #[test]
    fn a_variant_without_its_own_check_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let v = tmp.path().join("t/heldout/a");
        fs::create_dir_all(v.join("files")).unwrap();
        fs::write(v.join("gold.toml"), "files = [\"run.sh\"]\n").unwrap();
        fs::write(v.join("files/data.csv"), "x\n").unwrap();
        let err = variants(tmp.path(), "t").unwrap_err().to_string();
        assert!(err.contains("gives its check"), "{err}");
    }
}
