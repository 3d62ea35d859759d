//! The `runner` binary, run as a user would run it.

mod bundle_commands;
mod evaluate;
mod harbor;
mod hostile;
mod limits;
mod provenance;
mod published;
mod sandbox;
mod slurm;
mod submit;
mod tasks;
mod verdicts;

use std::path::Path;
use std::process::{Command, Output};

pub fn runner(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rexbench")).args(args).current_dir(dir).output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The repository root (where `tasks/` is).
pub fn repo() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap()
}
