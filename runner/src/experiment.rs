//! One run's experiment, up to the point where it must be judged: a fresh copy of the
//! codebase, the patch applied, the task's command run under its limit. The local
//! executor calls this in the runner's own process; a Slurm job calls it on a compute
//! node (`rexbench slurm-job`) and writes what it returns as the job's status, so that a
//! run comes to the same outcome whichever executor ran it.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use benchmark::check::ResultFiles;
use serde::{Deserialize, Serialize};

use crate::exec::{Executor, Exit, Job, Watch};
use crate::sandbox::{Confinement, Sandbox};
use bundle::ProvenanceRecord;

/// What became of an experiment. Logs are in the folder it was given: `stdout.txt`,
/// `stderr.txt`, and `x-apply.txt` when the patch did not apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Ran {
    /// The codebase could not be copied into the scratch folder.
    CopyFailed {
        message: String,
    },
    /// Neither `git apply` nor `patch -p1` applied the patch.
    PatchFailed,
    /// The command could not be started.
    ExecutorFailed {
        message: String,
        duration_s: f64,
    },
    TimedOut {
        duration_s: f64,
    },
    /// Stopped because it went over one of its limits (`crate::sandbox::limits`).
    Limited {
        breach: crate::sandbox::limits::Breach,
        duration_s: f64,
    },
    Finished {
        success: bool,
        description: String,
        duration_s: f64,
        /// The result files as they were when the command started (the patch applied),
        /// by path, with the SHA-256 of each.
        #[serde(default)]
        before: BTreeMap<String, String>,
    },
    /// Stopped from outside (Ctrl-C, or a Slurm job cancelled): nothing to judge.
    Cancelled,
}

/// The experiment's command and limit, and how to run it.
#[derive(Debug)]
pub struct Experiment<'a> {
    pub codebase: &'a Path,
    pub patch: &'a Path,
    pub command: &'a [String],
    pub timeout: Duration,
    pub executor: &'a Executor,
    /// A unique name for the run (container name).
    pub name: &'a str,
    /// Where the task's check reads result files: seen just before the command starts.
    pub results: &'a ResultFiles,
    /// The task's inputs (its `integrity.toml`): what the provenance record keeps first.
    pub inputs: &'a [String],
    /// Whether the local executor runs the command in a sandbox (`crate::sandbox`), and
    /// with what; a container is its own.
    pub confinement: &'a Confinement,
}

impl Experiment<'_> {
    /// Copies the codebase to `workdir`, applies the patch, and runs the command there,
    /// its output and the patch tools' messages going to `logs`.
    pub fn run(&self, workdir: &Path, logs: &Path, cancel: &AtomicBool) -> io::Result<Ran> {
        if let Err(e) = benchmark::tree::copy_tree(self.codebase, workdir) {
            return Ok(Ran::CopyFailed { message: format!("copying {}: {e}", self.codebase.display()) });
        }
        if !apply_patch(self.patch, workdir, logs)? {
            return Ok(Ran::PatchFailed);
        }
        let before = self.results.snapshot(workdir);
        let sandbox = match (self.executor, self.confinement) {
            (Executor::Local, Confinement::Sandboxed(settings)) => {
                let made = Sandbox::new(settings).and_then(|s| {
                    s.prepare(workdir).map_err(|e| format!("the working copy cannot be given to it: {e}"))?;
                    Ok(s)
                });
                match made {
                    Ok(s) => Some(s),
                    Err(why) => {
                        return Ok(Ran::ExecutorFailed {
                            message: format!("no sandbox could be made for the experiment: {why}"),
                            duration_s: 0.0,
                        });
                    }
                }
            }
            (Executor::Container { template }, Confinement::Sandboxed(_)) => {
                if let Err(e) = crate::sandbox::give_to_container(template, workdir) {
                    return Ok(Ran::ExecutorFailed {
                        message: format!("the working copy cannot be given to the container's user: {e}"),
                        duration_s: 0.0,
                    });
                }
                None
            }
            _ => None,
        };
        let (stdout, stderr) = (logs.join("stdout.txt"), logs.join("stderr.txt"));
        let job = Job {
            workdir,
            command: self.command,
            stdout: &stdout,
            stderr: &stderr,
            timeout: self.timeout,
            name: self.name,
            inputs: self.inputs,
            sandbox: sandbox.as_ref(),
            limits: match self.confinement {
                Confinement::Sandboxed(settings) => Some(&settings.limits),
                Confinement::Unsandboxed => None,
            },
        };
        let started = Instant::now();
        let exit = self.executor.run(&job, cancel);
        let duration_s = round_ms(started.elapsed().as_secs_f64());
        let (exit, watch) = match exit {
            Err(e) => return Ok(Ran::ExecutorFailed { message: e.to_string(), duration_s }),
            Ok(done) => done,
        };
        if exit != Exit::Cancelled {
            // The result files the check will read: those there now.
            let results: Vec<String> = self.results.snapshot(workdir).into_keys().collect();
            let mut record = match watch {
                Watch::Traced { model, tracer, interrupted } => crate::trace::record(
                    &model,
                    &tracer,
                    interrupted,
                    self.inputs,
                    results,
                    (duration_s * 1000.0) as u64,
                ),
                Watch::Untraced(why) => ProvenanceRecord::untraced(why, (duration_s * 1000.0) as u64),
            };
            if let Exit::Limited(breach) = &exit {
                record.limit = Some(breach.describe());
            }
            fs::write(logs.join(PROVENANCE_FILE), record.to_bytes())?;
        }
        Ok(match exit {
            Exit::Cancelled => Ran::Cancelled,
            Exit::TimedOut => Ran::TimedOut { duration_s },
            Exit::Limited(breach) => Ran::Limited { breach, duration_s },
            Exit::Finished { success, description } => {
                Ran::Finished { success, description, duration_s, before }
            }
        })
    }
}

/// The run's provenance record, as the experiment leaves it in its logs folder (the
/// run's `x-provenance` artifact).
pub const PROVENANCE_FILE: &str = "x-provenance.json";

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

/// `git apply`, falling back to `patch -p1`. Their messages go to x-apply.txt.
///
/// Both run on the host, with the runner's rights: a patch that names a path outside the
/// working copy in a file's header is not handed to them (`git apply` outside a
/// repository follows a `copy from /etc/shadow` as it is, and would copy the machine's
/// file into the working copy for the experiment to print). It does not apply.
fn apply_patch(patch: &Path, workdir: &Path, logs: &Path) -> io::Result<bool> {
    let patch =
        patch.canonicalize().map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", patch.display())))?;
    // No larger than a bundle may carry one: a longer patch could not be packed anyway.
    let mut text = Vec::new();
    io::Read::read_to_end(
        &mut io::Read::take(fs::File::open(&patch)?, bundle::Limits::default().artifact),
        &mut text,
    )?;
    if let Some((line, path)) = benchmark::diff::outside_path(&String::from_utf8_lossy(&text)) {
        let why = format!(
            "rexbench: not applied: line {line} of the patch names `{path}`, a path outside the codebase \
             (absolute, or through `..`); a patch changes files of its codebase only\n"
        );
        fs::write(logs.join("x-apply.txt"), why)?;
        return Ok(false);
    }
    let ceiling = workdir.parent().unwrap_or(workdir);
    let attempts: [(&str, Vec<&std::ffi::OsStr>); 2] = [
        ("git", vec!["apply".as_ref(), "--whitespace=nowarn".as_ref(), patch.as_os_str()]),
        (
            "patch",
            vec!["-p1".as_ref(), "--batch".as_ref(), "--forward".as_ref(), "-i".as_ref(), patch.as_os_str()],
        ),
    ];
    let mut log = String::new();
    for (program, args) in attempts {
        // Outside any repository, so that `git apply` patches relative to the codebase.
        let out = Command::new(program)
            .args(&args)
            .current_dir(workdir)
            .env("GIT_CEILING_DIRECTORIES", ceiling)
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(o) if o.status.success() => return Ok(true),
            Ok(o) => {
                log.push_str(&format!("{program}: {}\n", o.status));
                log.push_str(&String::from_utf8_lossy(&o.stdout));
                log.push_str(&String::from_utf8_lossy(&o.stderr));
            }
            Err(e) => log.push_str(&format!("{program}: cannot run: {e}\n")),
        }
    }
    fs::write(logs.join("x-apply.txt"), log)?;
    Ok(false)
}
