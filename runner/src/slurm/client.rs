//! Slurm's own client commands, as a user runs them: `sbatch --parsable`, `squeue`,
//! `scancel`. No accounting database (`sacct`) is needed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::Error;

/// The three commands, found on PATH.
#[derive(Debug, Clone)]
pub struct Client {
    sbatch: PathBuf,
    squeue: PathBuf,
    scancel: PathBuf,
}

/// A job as `squeue` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub id: String,
    pub state: String,
}

impl Listed {
    /// Waiting for resources (or to be started again).
    pub fn queued(&self) -> bool {
        self.state == "PENDING" || self.state.starts_with("REQUEUE") || self.state == "RESV_DEL_HOLD"
    }

    /// Over: the job's processes are gone, whatever it wrote.
    pub fn ended(&self) -> bool {
        matches!(
            self.state.as_str(),
            "BOOT_FAIL"
                | "CANCELLED"
                | "COMPLETED"
                | "DEADLINE"
                | "FAILED"
                | "NODE_FAIL"
                | "OUT_OF_MEMORY"
                | "PREEMPTED"
                | "REVOKED"
                | "SPECIAL_EXIT"
                | "TIMEOUT"
        )
    }
}

impl Client {
    pub fn find() -> Result<Client, Error> {
        let find = |name: &str| {
            which(name).ok_or_else(|| {
                Error::Slurm(format!(
                    "`{name}` is not on PATH: run rexbench where Slurm's client commands work (a login node), \
                     or put them on PATH"
                ))
            })
        };
        Ok(Client { sbatch: find("sbatch")?, squeue: find("squeue")?, scancel: find("scancel")? })
    }

    /// `sbatch --test-only`: whether Slurm would accept a job with these options, without
    /// submitting one.
    pub fn test(&self, args: &[String]) -> Result<(), Error> {
        let out = run(Command::new(&self.sbatch)
            .arg("--test-only")
            .args(args)
            .args(["--output=/dev/null", "--wrap=true"]))?;
        if out.status.success() {
            return Ok(());
        }
        Err(Error::Slurm(format!(
            "Slurm refuses these jobs (sbatch --test-only {} --wrap=true): {}",
            args.join(" "),
            said(&out)
        )))
    }

    /// Submits a batch script; the job's id.
    pub fn submit(&self, args: &[String], script: &Path) -> Result<String, Error> {
        let out = run(Command::new(&self.sbatch).arg("--parsable").args(args).arg(script))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let id = text.trim().split(';').next().unwrap_or_default();
        if !out.status.success() || id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Error::Slurm(format!("sbatch: {}", said(&out))));
        }
        Ok(id.to_owned())
    }

    /// This user's jobs, ended ones included while Slurm still lists them, by name.
    pub fn queue(&self) -> Result<HashMap<String, Listed>, Error> {
        let out = run(Command::new(&self.squeue).args([
            "--me",
            "--noheader",
            "--states=all",
            "--format=%i|%T|%j",
        ]))?;
        if !out.status.success() {
            return Err(Error::Slurm(format!("squeue: {}", said(&out))));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut jobs = HashMap::new();
        for line in text.lines() {
            let mut parts = line.splitn(3, '|');
            if let (Some(id), Some(state), Some(name)) = (parts.next(), parts.next(), parts.next()) {
                // A state may carry a reason after a space ("CANCELLED by 0").
                let state = state.split_whitespace().next().unwrap_or_default().to_owned();
                jobs.insert(name.to_owned(), Listed { id: id.to_owned(), state });
            }
        }
        Ok(jobs)
    }

    pub fn cancel(&self, ids: &[String]) -> Result<(), Error> {
        for chunk in ids.chunks(200) {
            let out = run(Command::new(&self.scancel).args(chunk))?;
            if !out.status.success() {
                return Err(Error::Slurm(format!("scancel: {}", said(&out))));
            }
        }
        Ok(())
    }
}

fn run(cmd: &mut Command) -> Result<Output, Error> {
    cmd.stdin(Stdio::null())
        .output()
        .map_err(|source| Error::Run { program: cmd.get_program().to_string_lossy().into_owned(), source })
}

/// What a command said on stderr (or its status, if nothing).
fn said(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    if lines.is_empty() { out.status.to_string() } else { lines.join("; ") }
}

/// The first executable file called `name` in PATH's folders.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    p.is_file()
}
