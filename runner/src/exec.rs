//! Executors: run a task's experiment with a wall-clock limit, and leave nothing behind.

use std::fs::File;
use std::io;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How a command is run.
#[derive(Debug, Clone)]
pub enum Executor {
    /// A child process in its own process group; at the timeout (or on Ctrl-C) the
    /// whole group is killed, and any process the run left behind is killed with it.
    Local,
    /// A container engine, from a command template: `{workdir}` is the patched
    /// codebase, `{name}` a unique container name, `{command}` the task's command
    /// (expanded to its words). On timeout the engine is told to kill `{name}`.
    Container { template: Vec<String> },
}

/// One experiment to run.
#[derive(Debug)]
pub struct Job<'a> {
    pub workdir: &'a Path,
    pub command: &'a [String],
    pub stdout: &'a Path,
    pub stderr: &'a Path,
    pub timeout: Duration,
    /// A unique name for this run (container name).
    pub name: &'a str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// The command ended by itself.
    Finished {
        success: bool,
        description: String,
    },
    TimedOut,
    /// Stopped because the user interrupted the evaluation.
    Cancelled,
}

impl Executor {
    pub fn run(&self, job: &Job<'_>, cancel: &AtomicBool) -> io::Result<Exit> {
        let argv = self.argv(job);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .current_dir(job.workdir)
            .stdin(Stdio::null())
            .stdout(File::create(job.stdout)?)
            .stderr(File::create(job.stderr)?);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        // Orphans of the run become our children, so that we can reap them at the end.
        #[cfg(target_os = "linux")]
        let _ = nix::sys::prctl::set_child_subreaper(true);
        let mut child =
            cmd.spawn().map_err(|e| io::Error::new(e.kind(), format!("cannot start {:?}: {e}", argv[0])))?;
        let started = Instant::now();
        let mut nap = Duration::from_millis(1);
        let exit = loop {
            if let Some(status) = child.try_wait()? {
                break Exit::Finished { success: status.success(), description: describe(status) };
            }
            if cancel.load(Ordering::Relaxed) {
                break Exit::Cancelled;
            }
            if started.elapsed() >= job.timeout {
                break Exit::TimedOut;
            }
            std::thread::sleep(nap.min(job.timeout.saturating_sub(started.elapsed())));
            nap = (nap * 2).min(Duration::from_millis(25));
        };
        // Whatever happened, nothing the run started may outlive it.
        kill_group(&mut child);
        if let (Executor::Container { template }, Exit::TimedOut | Exit::Cancelled) = (self, &exit) {
            let _ = Command::new(&template[0])
                .args(["kill", job.name])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        Ok(exit)
    }

    fn argv(&self, job: &Job<'_>) -> Vec<String> {
        match self {
            Executor::Local => job.command.to_vec(),
            Executor::Container { template } => template
                .iter()
                .flat_map(|word| match word.as_str() {
                    "{command}" => job.command.to_vec(),
                    _ => vec![
                        word.replace("{workdir}", &job.workdir.to_string_lossy()).replace("{name}", job.name),
                    ],
                })
                .collect(),
        }
    }

    /// Parses `--container 'docker run --rm --name {name} -v {workdir}:/work -w /work IMAGE {command}'`:
    /// words separated by spaces (no quoting).
    pub fn container(template: &str) -> Result<Executor, crate::Error> {
        let words: Vec<String> = template.split_whitespace().map(str::to_owned).collect();
        if !words.iter().any(|w| w == "{command}") {
            return Err(crate::Error::Setup(
                "the container template needs a `{command}` word where the task's command goes".into(),
            ));
        }
        if !words.iter().any(|w| w.contains("{workdir}")) {
            return Err(crate::Error::Setup(
                "the container template needs `{workdir}` (the patched codebase to mount)".into(),
            ));
        }
        Ok(Executor::Container { template: words })
    }
}

/// Kills the run's whole process group and waits until every member is gone.
#[cfg(unix)]
fn kill_group(child: &mut Child) {
    use nix::sys::signal::{Signal, killpg};
    use nix::sys::wait::waitpid;
    use nix::unistd::Pid;
    let group = Pid::from_raw(child.id() as i32);
    let _ = killpg(group, Signal::SIGKILL);
    let _ = child.wait();
    // Killed grandchildren are reparented to us (a subreaper on Linux) as their parents
    // die, level by level: reap them until the group is empty, for at most 2 s.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        while waitpid(Pid::from_raw(-group.as_raw()), None).is_ok() {}
        if killpg(group, None).is_err() || Instant::now() >= deadline {
            break;
        }
        let _ = killpg(group, Signal::SIGKILL);
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[cfg(not(unix))]
fn kill_group(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return format!("killed by signal {signal}");
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_templates_must_place_the_command_and_the_codebase() {
        assert!(Executor::container("docker run --rm IMAGE").unwrap_err().to_string().contains("{command}"));
        assert!(
            Executor::container("docker run --rm IMAGE {command}")
                .unwrap_err()
                .to_string()
                .contains("{workdir}")
        );
        let e =
            Executor::container("docker run --rm --name {name} -v {workdir}:/work -w /work img {command}")
                .unwrap();
        let job = Job {
            workdir: Path::new("/tmp/run 1"),
            command: &["python3".to_owned(), "run.py".to_owned()],
            stdout: Path::new("/dev/null"),
            stderr: Path::new("/dev/null"),
            timeout: Duration::from_secs(1),
            name: "rexbench-x",
        };
        assert_eq!(
            e.argv(&job),
            [
                "docker",
                "run",
                "--rm",
                "--name",
                "rexbench-x",
                "-v",
                "/tmp/run 1:/work",
                "-w",
                "/work",
                "img",
                "python3",
                "run.py"
            ]
        );
    }

    #[test]
    fn a_container_engine_runs_the_command_in_the_codebase() {
        // `env -C DIR` stands in for an engine: it runs the command inside the codebase.
        let tmp = tempfile::tempdir().unwrap();
        let (out, err) = (tmp.path().join("out"), tmp.path().join("err"));
        std::fs::write(tmp.path().join("marker"), "here").unwrap();
        let e = Executor::container("env -C {workdir} {command}").unwrap();
        let command = ["cat".to_owned(), "marker".to_owned()];
        let job = Job {
            workdir: tmp.path(),
            command: &command,
            stdout: &out,
            stderr: &err,
            timeout: Duration::from_secs(10),
            name: "n",
        };
        let exit = e.run(&job, &AtomicBool::new(false)).unwrap();
        assert_eq!(exit, Exit::Finished { success: true, description: "exit status 0".into() });
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "here");
    }
}
