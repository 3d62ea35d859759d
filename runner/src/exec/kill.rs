//! Ending a run: the signals the runner sends its keeper, and the kills that leave
//! nothing of a run behind.

use std::process::Child;
use std::time::{Duration, Instant};

use crate::trace::Recording;

/// How long the keeper may take, once the task's command has ended, to kill what it
/// left and end.
pub(super) const CLEAN_UP: Duration = Duration::from_secs(10);

#[derive(Clone, Copy)]
pub(super) enum Sig {
    Usr1,
    Term,
    Int,
}

/// Sends a signal to the keeper (the run's first process).
pub(super) fn signal(child: &Child, sig: Sig) {
    use nix::sys::signal::{Signal, kill};
    let sig = match sig {
        Sig::Usr1 => Signal::SIGUSR1,
        Sig::Term => Signal::SIGTERM,
        Sig::Int => Signal::SIGINT,
    };
    let _ = kill(nix::unistd::Pid::from_raw(child.id() as i32), sig);
}

/// The keeper is gone but the tracer is not: every process the trace shows alive is
/// still traced (none can leave the tracer), so kill each, checking that it is still a
/// traced process, until the tracer has seen them all end (at most 5 s).
pub(super) fn kill_traced(recording: &Recording) {
    use nix::sys::signal::{Signal, kill};
    let deadline = Instant::now() + Duration::from_secs(5);
    while !recording.ended() && Instant::now() < deadline {
        let alive = recording.model.lock().expect("not poisoned").alive();
        for pid in alive {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let traced =
                status.lines().find_map(|l| l.strip_prefix("TracerPid:")).is_some_and(|t| t.trim() != "0");
            if traced {
                let _ = kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kills the run's whole process group and waits until every member is gone.
#[cfg(unix)]
pub(super) fn kill_group(child: &mut Child) {
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
pub(super) fn kill_group(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}
