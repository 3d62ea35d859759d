//! Executors: run a task's experiment with a wall-clock limit, and leave nothing behind.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::sandbox::engine;
use crate::trace::{Recording, Tracer};

mod kill;
use kill::{CLEAN_UP, Sig, kill_group, kill_traced, signal};

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
    /// The task's inputs, which the provenance record keeps whatever else it must cut.
    pub inputs: &'a [String],
    /// The sandbox the command runs in (the local executor; a container is its own).
    pub sandbox: Option<&'a crate::sandbox::Sandbox>,
    /// What the run may use, where it is confined (a sandbox, or a container); `None`
    /// for one's own agent run unsandboxed, which has the runner's environment and
    /// limits.
    pub limits: Option<&'a benchmark::task::Limits>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// The command ended by itself.
    Finished {
        success: bool,
        description: String,
    },
    TimedOut,
    /// Stopped because it went over one of its limits (`crate::sandbox::limits`).
    Limited(crate::sandbox::limits::Breach),
    /// Stopped because the user interrupted the evaluation.
    Cancelled,
}

/// How an experiment was watched: traced (the model of what it did), or not, and why.
#[derive(Debug)]
pub enum Watch {
    Traced {
        model: Box<crate::trace::Model>,
        tracer: Tracer,
        /// How tracing fell short of the whole experiment, if it did.
        interrupted: Option<String>,
    },
    Untraced(String),
}

impl Executor {
    /// Runs the job beneath the process keeper (`crate::keep`), traced where this
    /// executor and machine allow: whatever happens, nothing it started outlives it.
    pub fn run(&self, job: &Job<'_>, cancel: &AtomicBool) -> io::Result<(Exit, Watch)> {
        let keeper = crate::keep::program();
        let tracer = match (self, &keeper) {
            (Executor::Container { .. }, _) => {
                Err("the container executor: the tracer on this machine cannot see inside the container"
                    .to_owned())
            }
            (Executor::Local, None) => {
                Err("no process keeper: the runner's library runs without its binary".to_owned())
            }
            (Executor::Local, Some(_)) => Tracer::find(),
        };
        let mut unset = String::from("the trace could not be set up");
        let mut recording = match &tracer {
            Ok(_) => match Recording::start(job.workdir, job.inputs) {
                Ok(r) => {
                    if job.sandbox.is_some() {
                        r.model.lock().expect("not poisoned").wrapper = crate::sandbox::WRAPPER_PROCESSES;
                    }
                    Some(r)
                }
                Err(e) => {
                    unset = format!("the trace could not be set up: {e}");
                    None
                }
            },
            Err(_) => None,
        };
        let report_dir = tempfile::Builder::new().prefix("rexbench-keep-").tempdir()?;
        let report = report_dir.path().join("report.json");
        let mut argv: Vec<OsString> = self.argv(job);
        if let (Some(recording), Ok(tracer)) = (&recording, &tracer) {
            argv = recording.argv(tracer, &argv);
        }
        // The run's own control group, where the runner may make one: the kernel's hold on
        // its memory and processes (`crate::sandbox::cgroup`).
        let group = match (self, job.sandbox, job.limits, &keeper) {
            (Executor::Local, Some(_), Some(limits), Some(_)) => {
                crate::sandbox::cgroup::Group::make(job.name, limits)
            }
            _ => None,
        };
        if let Some(keeper) = &keeper {
            let groups = group.as_ref().map(|g| g.procs()).unwrap_or_default();
            argv = crate::keep::argv(keeper, &report, &groups, &argv);
        }
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).current_dir(job.workdir).stdin(Stdio::null());
        // Every process between the runner and a confined experiment starts from a
        // cleared environment: none of the runner's variables (a token, a key's
        // passphrase) is in their `/proc/PID/environ`, which a process of their user
        // could read. The experiment's own are the sandbox's (`--setenv`) or the
        // container's (`--env`).
        if job.limits.is_some() {
            cmd.env_clear();
            for (name, value) in self.environment() {
                cmd.env(name, value);
            }
        }
        let logs = match job.limits {
            // Cut while written, at the card's size: nothing downstream refuses a log.
            Some(limits) => {
                cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
                Some(limits.log_mib << 20)
            }
            None => {
                cmd.stdout(File::create(job.stdout)?).stderr(File::create(job.stderr)?);
                None
            }
        };
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        // Orphans of the run become our children, so that we can reap them at the end.
        #[cfg(target_os = "linux")]
        let _ = nix::sys::prctl::set_child_subreaper(true);
        let shown = if keeper.is_some() {
            self.argv(job)[0].to_string_lossy().into_owned()
        } else {
            argv[0].to_string_lossy().into_owned()
        };
        let mut child =
            cmd.spawn().map_err(|e| io::Error::new(e.kind(), format!("cannot start {shown:?}: {e}")))?;
        let copying = match logs {
            Some(limit) => {
                let (out, err) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
                vec![
                    crate::logs::keep(out, File::create(job.stdout)?, limit),
                    crate::logs::keep(err, File::create(job.stderr)?, limit),
                ]
            }
            None => Vec::new(),
        };
        let mut guard = job.limits.map(|limits| {
            crate::sandbox::limits::Watch::new(
                child.id(),
                job.workdir,
                limits,
                match self {
                    Executor::Local => true,
                    Executor::Container { template } => engine::runner_sees_processes(template),
                },
            )
        });
        let started = Instant::now();
        let mut nap = Duration::from_millis(1);
        let mut swept = false;
        // The command ended, but the clean-up after it did not: its end is the trace's.
        let mut forced = false;
        let exit = loop {
            if let Some(status) = child.try_wait()? {
                break Exit::Finished { success: status.success(), description: describe(status) };
            }
            if cancel.load(Ordering::Relaxed) {
                break Exit::Cancelled;
            }
            // The limit is the task's command's: once it has ended in time, what remains is
            // the keeper's clean-up, which is not the experiment's time (but is bounded).
            let limit = if swept { job.timeout + CLEAN_UP } else { job.timeout };
            if started.elapsed() >= limit {
                let root = recording
                    .as_ref()
                    .filter(|_| swept)
                    .and_then(|r| r.model.lock().expect("not poisoned").first_exit().map(str::to_owned));
                forced = root.is_some();
                break match root {
                    Some(exit) => Exit::Finished {
                        success: exit == "exit 0",
                        description: exit.replace("exit ", "exit status "),
                    },
                    None => Exit::TimedOut,
                };
            }
            // The task's command has ended: what it left running is killed now, while
            // the tracer still watches (it records how each ended).
            if let Some(recording) = &recording
                && !swept
            {
                let mut model = recording.model.lock().expect("not poisoned");
                // The first process: in the sandbox, bubblewrap, which outlives the
                // command until its namespace is empty (sweeping when the command alone
                // has ended would kill bubblewrap before it says how the command ended).
                if model.first_exit().is_some() {
                    model.sweep_from = Some(model.last);
                    swept = true;
                    signal(&child, Sig::Usr1);
                }
            }
            if let Some(breach) = guard.as_mut().and_then(|w| w.check()) {
                break Exit::Limited(breach);
            }
            if let Some(breach) = group.as_ref().and_then(|g| g.out_of_memory()) {
                break Exit::Limited(breach);
            }
            std::thread::sleep(nap.min(limit.saturating_sub(started.elapsed())));
            nap = (nap * 2).min(Duration::from_millis(25));
        };
        if child.try_wait()?.is_none() {
            if let Some(recording) = &recording {
                let mut model = recording.model.lock().expect("not poisoned");
                let last = model.last;
                model.sweep_from.get_or_insert(last);
            }
            if keeper.is_some() {
                // The keeper kills everything, its command included, and then ends: at
                // once when the evaluation is stopped (nothing of the run is kept).
                signal(&child, if exit == Exit::Cancelled { Sig::Int } else { Sig::Term });
                let deadline = Instant::now() + Duration::from_secs(8);
                while child.try_wait()?.is_none() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
        // The keeper ended without its report: something in the run killed it. With it,
        // the report says how the command ended.
        let said = crate::trace::read_small(&report, 1 << 20)
            .and_then(|bytes| serde_json::from_slice::<crate::keep::Report>(&bytes).ok());
        let keeper_killed = keeper.is_some() && said.is_none() && matches!(exit, Exit::Finished { .. });
        let exit = match (exit, &said) {
            (Exit::Finished { .. }, Some(said)) if !forced => match said.command.strip_prefix("exit ") {
                Some(code) => {
                    Exit::Finished { success: code == "0", description: format!("exit status {code}") }
                }
                None => Exit::Finished { success: false, description: format!("killed by {}", said.command) },
            },
            (exit, _) => exit,
        };
        if keeper_killed && let Some(recording) = &recording {
            kill_traced(recording);
        }
        // Whatever happened, nothing the run started may outlive it.
        kill_group(&mut child);
        // A failure the kernel caused at a limit of the run's group (a fork refused) was
        // stopped by that limit.
        // A process of the run killed for memory at any time (between two looks too) put
        // the run over its limit, whatever the command then did.
        let exit = match (exit, group) {
            (Exit::Finished { success, description }, Some(group)) => {
                let breach = if success { group.out_of_memory() } else { group.breach() };
                group.end();
                match breach {
                    Some(breach) => Exit::Limited(breach),
                    None => Exit::Finished { success, description },
                }
            }
            (exit, group) => {
                if let Some(group) = group {
                    group.end();
                }
                exit
            }
        };
        // A failure that left its working copy at its disk limit was stopped by it (a file
        // refused at the size limit, or written between two looks).
        let exit = match (exit, guard.as_mut()) {
            (Exit::Finished { success: false, description }, Some(w)) => match w.at_the_end() {
                Some(breach) => Exit::Limited(breach),
                None => Exit::Finished { success: false, description },
            },
            (exit, _) => exit,
        };
        crate::logs::finish(copying);
        if let (Executor::Container { template }, Exit::TimedOut | Exit::Cancelled | Exit::Limited(_)) =
            (self, &exit)
        {
            engine::kill(template, job.name);
        }
        let watch = match (recording.as_mut(), tracer) {
            (Some(recording), Ok(tracer)) => {
                // A cancelled run keeps nothing: its trace is not waited for.
                let wait = if exit == Exit::Cancelled { Duration::ZERO } else { Duration::from_secs(5) };
                recording.finish(wait);
                let model = std::mem::replace(
                    &mut *recording.model.lock().expect("not poisoned"),
                    crate::trace::Model::new("", &[]),
                );
                let interrupted = if keeper_killed {
                    Some("the runner's process keeper was killed from inside the run".to_owned())
                } else if matches!(exit, Exit::Finished { .. }) && model.root_exit().is_none() {
                    Some("the tracer ended before the task's command did".to_owned())
                } else {
                    None
                };
                Watch::Traced { model: Box::new(model), tracer, interrupted }
            }
            (_, Err(why)) => Watch::Untraced(why),
            (None, Ok(_)) => Watch::Untraced(unset),
        };
        let _ = recording.take();
        // A failure after the kernel refused it a process was stopped by that limit (a
        // fork bomb may fail within one look of the guard).
        let mut exit = match (exit, &watch, job.limits) {
            (Exit::Finished { success: false, .. }, Watch::Traced { model, .. }, Some(limits))
                if model.refused_forks > 0 =>
            {
                Exit::Limited(crate::sandbox::limits::Breach {
                    resource: crate::sandbox::limits::Resource::Processes,
                    used: limits.processes,
                    limit: limits.processes,
                })
            }
            (exit, _, _) => exit,
        };
        // Podman and Docker exit 125 for their own failures (an image that is not there, an
        // option they refuse), and a command may exit 125 too: the engine's record of the
        // container tells them apart. A container that was never started is the
        // maintainers' setup failing, not the agent's patch (under `reproduce`, a try,
        // spec §4d); one the kernel stopped at its memory limit ran out of memory.
        if let Executor::Container { template } = self {
            let ended = engine::ended(template, job.name);
            engine::remove(template, job.name);
            if let Exit::Finished { success: false, description } = &exit {
                match ended {
                    Some(engine::Ended { oom: true, .. }) => {
                        let memory = job.limits.map_or(0, |l| l.memory_mib << 20);
                        exit = Exit::Limited(crate::sandbox::limits::Breach {
                            resource: crate::sandbox::limits::Resource::Memory,
                            used: memory,
                            limit: memory,
                        });
                    }
                    None if description == "exit status 125" => {
                        return Err(io::Error::other(format!(
                            "the container engine `{}` failed before the task's command ran (exit status 125, \
                             its own error): see stderr.txt",
                            template[0]
                        )));
                    }
                    _ => {}
                }
            }
        }
        Ok((exit, watch))
    }

    /// The command line of the job: the task's command in the sandbox, or in the
    /// container.
    fn argv(&self, job: &Job<'_>) -> Vec<OsString> {
        match (self, job.sandbox) {
            (Executor::Local, Some(sandbox)) => {
                let command: Vec<OsString> = job.command.iter().map(OsString::from).collect();
                sandbox.argv(job.workdir, &command)
            }
            _ => self.words(job).into_iter().map(OsString::from).collect(),
        }
    }

    /// The environment a confined run's first process starts with: the sandbox's `PATH`
    /// alone under the local executor (the sandbox sets the experiment's own); for a container
    /// engine, what the engines need to find their storage and socket, and the variables
    /// its template passes by name (`--env NAME`).
    fn environment(&self) -> Vec<(String, std::ffi::OsString)> {
        // The local executor's programs are named by their paths: its `PATH` is the
        // sandbox's, not the runner's (which would show the runner's home).
        if let Executor::Local = self {
            return vec![("PATH".into(), crate::sandbox::PATH.into())];
        }
        self.variables().into_iter().filter_map(|n| std::env::var_os(&n).map(|v| (n, v))).collect()
    }

    /// The names of [`Executor::environment`]'s variables.
    pub(crate) fn variables(&self) -> Vec<String> {
        let mut names: Vec<String> = vec!["PATH".into()];
        if let Executor::Container { template } = self {
            names.extend(ENGINE_ENV.iter().map(|n| (*n).to_owned()));
            let mut words = template.iter();
            while let Some(w) = words.next() {
                let named = match w.as_str() {
                    "-e" | "--env" => words.next().cloned(),
                    other => other.strip_prefix("--env=").map(str::to_owned),
                };
                if let Some(name) = named.filter(|n| benchmark::task::passable_variable(n)) {
                    names.push(name);
                }
            }
        }
        names
    }

    fn words(&self, job: &Job<'_>) -> Vec<String> {
        match self {
            Executor::Local => job.command.to_vec(),
            Executor::Container { template } => engine::for_run(template, job.limits)
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

/// What a container engine reads from its environment to find its storage, its socket
/// and its user's runtime folder; nothing else of the runner's reaches it.
const ENGINE_ENV: &[&str] = &[
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TMPDIR",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "DBUS_SESSION_BUS_ADDRESS",
    "CONTAINER_HOST",
    "CONTAINERS_CONF",
    "CONTAINERS_STORAGE_CONF",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "APPTAINER_CACHEDIR",
    "APPTAINER_TMPDIR",
];

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
mod tests;
