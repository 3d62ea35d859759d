//! A run's Slurm job, `rexbench slurm-job DIR`, as it runs on a compute node. Its
//! folder (`.slurm/jobs/<task>-<hint>-<attempt>-<try>/`, on the shared filesystem) holds
//! what the runner wrote for it (`job.json`, `patch.diff`, `job.sh`) and receives what
//! it does: the patched codebase, the logs and, last, `status.json`.

use std::fs::{self, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use benchmark::check::ResultFiles;
use benchmark::confined::{Folder, Refused, Why};

use crate::Error;
use crate::exec::Executor;
use crate::experiment::{Experiment, Ran};
use crate::sandbox::Confinement;

/// What the runner tells a job to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// The task's base codebase, on the shared filesystem.
    pub codebase: PathBuf,
    pub command: Vec<String>,
    pub timeout_s: f64,
    /// The container template's words, when the command runs in a container.
    pub container: Option<Vec<String>>,
    /// The job's name, also the container's.
    pub name: String,
    /// Where the task's check reads result files.
    #[serde(default)]
    pub results: ResultFiles,
    /// The task's inputs (its `integrity.toml`), for the provenance record.
    #[serde(default)]
    pub inputs: Vec<String>,
    /// The sandbox the node's runner makes for the experiment (a job folder that says
    /// nothing of it gets the default one: sandboxed).
    #[serde(default = "sandboxed")]
    pub confinement: Confinement,
}

fn sandboxed() -> Confinement {
    Confinement::Sandboxed(crate::sandbox::Settings::default())
}

pub const SPEC: &str = "job.json";
pub const PATCH: &str = "patch.diff";
pub const STATUS: &str = "status.json";
/// A status is a few hundred bytes; anything much larger is not one.
const STATUS_LIMIT: u64 = 64 * 1024;
/// Created when the job starts its experiment: a try runs its experiment once at most,
/// even if Slurm started the job twice.
pub const CLAIM: &str = "claim";
pub const WORKDIR: &str = "codebase";

/// Runs the experiment a job folder describes and writes its status. `cancel` is set by
/// SIGTERM, which Slurm sends when the job is cancelled or reaches its time limit.
pub fn run(dir: &Path, cancel: &AtomicBool) -> Result<Ran, Error> {
    let spec_path = dir.join(SPEC);
    let spec: Spec = serde_json::from_slice(&fs::read(&spec_path).map_err(|e| at(&spec_path, e))?)
        .map_err(|e| Error::Invalid { path: spec_path.clone(), detail: e.to_string() })?;
    match OpenOptions::new().write(true).create_new(true).open(dir.join(CLAIM)) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            return Err(Error::Invalid {
                path: dir.to_owned(),
                detail: "this try's experiment was already started once; it is not run again".into(),
            });
        }
        Err(e) => return Err(at(&dir.join(CLAIM), e)),
    }
    let executor = match spec.container {
        Some(template) => Executor::Container { template },
        None => Executor::Local,
    };
    let experiment = Experiment {
        codebase: &spec.codebase,
        patch: &dir.join(PATCH),
        command: &spec.command,
        timeout: Duration::from_secs_f64(spec.timeout_s),
        executor: &executor,
        name: &spec.name,
        results: &spec.results,
        inputs: &spec.inputs,
        confinement: &spec.confinement,
    };
    // A cancelled job has Slurm's KillWait (seconds) to write its status before it is
    // killed, and the experiment's clean-up may take longer on a loaded node: once
    // cancelled, the status (always `Cancelled` then) is written within 2 s whatever
    // the experiment is still doing, and written again, the same, when it returns.
    let returned = AtomicBool::new(false);
    let mut ran = std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut cancelled_at = None;
            while !returned.load(Ordering::SeqCst) {
                if cancel.load(Ordering::Relaxed) {
                    let at = *cancelled_at.get_or_insert_with(std::time::Instant::now);
                    if at.elapsed() >= Duration::from_secs(2) {
                        let status = serde_json::to_vec(&Ran::Cancelled).expect("serializes");
                        let _ = crate::run::write_atomically(&dir.join(STATUS), &status);
                        return;
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let ran = experiment.run(&dir.join(WORKDIR), dir, cancel);
        returned.store(true, Ordering::SeqCst);
        ran
    })
    .map_err(|e| at(dir, e))?;
    // Slurm signals every process of a cancelled job at once: the experiment may die of
    // it before this process has heard of its own signal. Such a death is not a result.
    // The wait is long enough for a loaded node (half a second was not, with both cores
    // busy) and costs a death by a signal that is not a cancellation five seconds.
    if let Ran::Finished { success: false, description, .. } = &ran
        && description.starts_with("killed by signal")
    {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !cancel.load(std::sync::atomic::Ordering::Relaxed) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        ran = Ran::Cancelled;
    }
    // Whole or not at all: the runner reads it while the job may still be writing.
    crate::run::write_atomically(&dir.join(STATUS), &serde_json::to_vec(&ran).expect("serializes"))?;
    Ok(ran)
}

fn at(path: &Path, source: io::Error) -> Error {
    Error::Io { path: path.to_owned(), source }
}

/// The status at a job's folder: `None` while there is none. One that does not parse, or
/// is not a small regular file there, is an error the run is lost to. The runner trusts
/// it only once Slurm says the job has ended, when the job's own write is the last.
pub fn status(dir: &Path) -> Option<Result<Ran, Error>> {
    // The experiment runs in this folder's `codebase/` with the job's rights: what is at
    // `status.json` may be its doing. It is read as any hostile file is, a link not
    // followed out, a FIFO not waited on, at most `STATUS_LIMIT` bytes.
    let folder = Folder::open(dir, "job folder").ok()?;
    let bytes = match folder.read_limited(Path::new(STATUS), STATUS_LIMIT) {
        Ok(bytes) => bytes,
        Err(Refused { why: Why::Missing, .. }) => return None,
        Err(refused) => return Some(Err(refused.into())),
    };
    Some(
        serde_json::from_slice(&bytes)
            .map_err(|e| Error::Invalid { path: dir.join(STATUS), detail: e.to_string() }),
    )
}

/// The batch script: the runner's own binary, from the shared copy, on the job folder.
pub fn script(exe: &Path, dir: &Path, label: &str, n: u32) -> String {
    format!(
        "#!/bin/sh\n# rexbench evaluate: run {label}, try {n}\nexec {} slurm-job {}\n",
        shell_quote(&exe.to_string_lossy()),
        shell_quote(&dir.to_string_lossy())
    )
}

fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_batch_script_quotes_its_paths() {
        let s = script(Path::new("/shared/it's/rexbench"), Path::new("/shared/r s/j"), "t/none/1", 2);
        assert_eq!(
            s,
            "#!/bin/sh\n# rexbench evaluate: run t/none/1, try 2\nexec '/shared/it'\\''s/rexbench' slurm-job '/shared/r s/j'\n"
        );
    }

    #[test]
    fn a_job_runs_its_experiment_once_and_writes_its_status() {
        let tmp = tempfile::tempdir().unwrap();
        let codebase = tmp.path().join("base");
        fs::create_dir_all(&codebase).unwrap();
        fs::write(codebase.join("f.txt"), "one\n").unwrap();
        let dir = tmp.path().join("job");
        fs::create_dir_all(&dir).unwrap();
        let spec = Spec {
            codebase: codebase.clone(),
            command: vec!["cat".into(), "f.txt".into()],
            timeout_s: 10.0,
            container: None,
            name: "n".into(),
            results: ResultFiles::default(),
            inputs: Vec::new(),
            confinement: sandboxed(),
        };
        fs::write(dir.join(SPEC), serde_json::to_vec(&spec).unwrap()).unwrap();
        fs::write(dir.join(PATCH), "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one\n+two\n").unwrap();
        assert!(status(&dir).is_none());
        let ran = run(&dir, &AtomicBool::new(false)).unwrap();
        assert!(matches!(ran, Ran::Finished { success: true, .. }), "{ran:?}");
        assert_eq!(status(&dir).unwrap().unwrap(), ran);
        assert_eq!(fs::read_to_string(dir.join("stdout.txt")).unwrap(), "two\n");
        let again = run(&dir, &AtomicBool::new(false)).unwrap_err().to_string();
        assert!(again.contains("already started once"), "{again}");
    }

    #[test]
    fn a_status_that_is_a_fifo_a_link_out_or_huge_is_refused_without_waiting() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("job");
        fs::create_dir_all(&dir).unwrap();
        let refused = |why: &str| {
            let got = status(&dir).expect("something is there").unwrap_err().to_string();
            assert!(got.contains(why), "{got}");
        };
        nix::unistd::mkfifo(&dir.join(STATUS), nix::sys::stat::Mode::S_IRWXU).unwrap();
        refused("FIFO");
        fs::remove_file(dir.join(STATUS)).unwrap();
        let outside = tmp.path().join("elsewhere.json");
        fs::write(&outside, serde_json::to_vec(&Ran::Cancelled).unwrap()).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join(STATUS)).unwrap();
        refused("symbolic link");
        fs::remove_file(dir.join(STATUS)).unwrap();
        fs::write(dir.join(STATUS), vec![b' '; STATUS_LIMIT as usize + 1]).unwrap();
        refused("bytes");
        fs::write(dir.join(STATUS), serde_json::to_vec(&Ran::Cancelled).unwrap()).unwrap();
        assert_eq!(status(&dir).unwrap().unwrap(), Ran::Cancelled);
    }
}
