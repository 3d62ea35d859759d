//! A podman or docker container run by the runner, beyond its template
//! (`super::container` checks that): the card's limits on memory and processes set on
//! it, and the engine asked how the container ended (the command's own exit status, or
//! the engine's failure before it; killed for memory) before the runner removes it.

use super::container::{Family, parse};

/// The words the runner runs a podman or docker template as: the card's limits on
/// memory (swap included) and processes set right after `run`, and no `--rm`: the
/// runner reads how the container ended ([`ended`]) and then removes it itself
/// ([`remove`]). Another engine's template is run as it is, its processes watched by
/// the runner ([`runner_sees_processes`]).
pub fn for_run(template: &[String], limits: Option<&benchmark::task::Limits>) -> Vec<String> {
    let Ok(p) = parse(template) else { return template.to_vec() };
    if p.family != Family::Oci {
        return template.to_vec();
    }
    let mut words: Vec<String> = template[..=p.sub_at].to_vec();
    if let Some(l) = limits {
        words.push(format!("--memory={}m", l.memory_mib));
        words.push(format!("--memory-swap={}m", l.memory_mib));
        words.push(format!("--pids-limit={}", l.processes));
    }
    words.extend(template[p.sub_at + 1..].iter().filter(|w| *w != "--rm").cloned());
    words
}

/// Whether the engine's containers are the runner's own descendants (apptainer and
/// singularity start them in the runner's process tree), so that the runner's watch
/// holds them to the card's memory and processes; podman's and docker's are held by the
/// engine's own limits ([`for_run`]).
pub fn runner_sees_processes(template: &[String]) -> bool {
    parse(template).is_ok_and(|p| p.family == Family::Apptainer)
}

/// How a podman or docker container ended, as its engine recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// The command's own exit status.
    pub code: i64,
    /// Whether the kernel stopped it at its memory limit.
    pub oom: bool,
}

/// The engine's words before its subcommand (`podman --root DIR`), for podman and docker.
fn engine(template: &[String]) -> Option<&[String]> {
    let p = parse(template).ok().filter(|p| p.family == Family::Oci)?;
    Some(&template[..p.sub_at])
}

/// How the container `name` ended, if it was made and its command started: `None` when
/// the engine failed before (no image, an option it refused), whatever it exited with.
pub fn ended(template: &[String], name: &str) -> Option<Ended> {
    let engine = engine(template)?;
    let format = "{{.State.ExitCode}} {{.State.OOMKilled}} {{.State.StartedAt}}";
    let words: Vec<String> = engine[1..]
        .iter()
        .cloned()
        .chain(["inspect".into(), "--format".into(), format.into(), name.into()])
        .collect();
    let said = bounded(&engine[0], &words)?;
    let mut parts = said.trim().splitn(3, ' ');
    let code: i64 = parts.next()?.parse().ok()?;
    let oom = parts.next()? == "true";
    // A container made but never started has the zero time.
    let started = parts.next()?;
    (!started.starts_with("0001-01-01")).then_some(Ended { code, oom })
}

/// Removes the container `name` (podman, docker), whatever state it is in.
pub fn remove(template: &[String], name: &str) {
    if let Some(engine) = engine(template) {
        let words: Vec<String> =
            engine[1..].iter().cloned().chain(["rm".into(), "--force".into(), name.into()]).collect();
        let _ = bounded(&engine[0], &words);
    }
}

/// Kills the container `name` (at a timeout, a limit or a cancellation).
pub fn kill(template: &[String], name: &str) {
    if let Some(engine) = engine(template) {
        let words: Vec<String> = engine[1..].iter().cloned().chain(["kill".into(), name.into()]).collect();
        let _ = bounded(&engine[0], &words);
    }
}

/// Runs one of the engine's own commands (nothing of the experiment's), for at most a
/// minute; what it printed, where it succeeded.
fn bounded(program: &str, args: &[String]) -> Option<String> {
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut out = String::new();
                use std::io::Read;
                child.stdout.take()?.take(1 << 16).read_to_string(&mut out).ok()?;
                return status.success().then_some(out);
            }
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}
