//! `--container`: the engine is the sandbox, and a template must carry the flags that
//! give the guarantees bubblewrap gives the local executor (runner/README.md, "The
//! sandbox"); the working copy is given to the container's user.

use std::path::{Path, PathBuf};

use super::{Settings, check_settings, chown_tree};

/// The numeric `--user UID:GID` of a container template (podman, docker): the working
/// copy is given to that user before the experiment, so that it may write it.
fn container_user(words: &[String]) -> Option<(u32, u32)> {
    let user = words
        .windows(2)
        .find(|w| w[0] == "--user" || w[0] == "-u")
        .map(|w| w[1].as_str())
        .or_else(|| words.iter().find_map(|w| w.strip_prefix("--user=")))?;
    let (uid, gid) = user.split_once(':').unwrap_or((user, user));
    Some((uid.parse().ok()?, gid.parse().ok()?))
}

/// Gives the working copy to a container's user (where the runner is root and the
/// template names one by number).
pub fn give_to_container(words: &[String], workdir: &Path) -> std::io::Result<()> {
    match container_user(words) {
        Some((uid, gid)) if nix::unistd::geteuid().is_root() => chown_tree(workdir, uid, gid),
        _ => Ok(()),
    }
}

/// The flags a container template must carry to give the sandbox's guarantees, by
/// engine; a template that lacks one, or carries a flag that undoes one, is refused.
///
/// - docker and podman `run`: `--user` (not root), `--network none`, `--read-only`,
///   `--cap-drop ALL`, `--security-opt no-new-privileges`; no `--privileged`, no
///   `--pid`/`--ipc`/`--uts`/`--userns host`, no `--env-host`, `--env-file` or
///   `--volumes-from`, no volume but `{workdir}` that is not `:ro`;
/// - apptainer and singularity `exec`: `--containall`, `--no-home`, `--net --network
///   none`; no bind but `{workdir}` that is not `:ro`.
pub fn lint_container(words: &[String], private: &[&Path]) -> Result<(), String> {
    let engine = words.first().map(|w| Path::new(w).file_name().unwrap_or_default().to_string_lossy());
    let engine = engine.as_deref().unwrap_or("");
    let has = |flag: &str, value: &str| {
        words.windows(2).any(|w| w[0] == flag && w[1].eq_ignore_ascii_case(value))
            || words.iter().any(|w| w.eq_ignore_ascii_case(&format!("{flag}={value}")))
    };
    let named = |flag: &str| words.iter().any(|w| w == flag || w.starts_with(&format!("{flag}=")));
    let mut missing: Vec<&str> = Vec::new();
    let mut undoing: Vec<String> = Vec::new();
    let volume_flags: &[&str] = match engine {
        "docker" | "podman" => {
            if !has("--network", "none") && !has("--net", "none") {
                missing.push("--network none");
            }
            if !named("--read-only") {
                missing.push("--read-only");
            }
            if !has("--cap-drop", "all") {
                missing.push("--cap-drop ALL");
            }
            if !has("--security-opt", "no-new-privileges") {
                missing.push("--security-opt no-new-privileges");
            }
            let user = words
                .windows(2)
                .find(|w| w[0] == "--user" || w[0] == "-u")
                .map(|w| w[1].clone())
                .or_else(|| words.iter().find_map(|w| w.strip_prefix("--user=").map(str::to_owned)));
            match user {
                None => missing.push("--user (an unprivileged uid:gid)"),
                Some(u) if u.split(':').next().is_some_and(|n| n == "0" || n == "root") => {
                    undoing.push(format!("--user {u} (root)"));
                }
                Some(_) => {}
            }
            for flag in ["--privileged", "--env-host", "--env-file", "--volumes-from"] {
                if named(flag) {
                    undoing.push(flag.to_owned());
                }
            }
            for flag in ["--pid", "--ipc", "--uts", "--userns", "--cgroupns"] {
                if has(flag, "host") {
                    undoing.push(format!("{flag} host"));
                }
            }
            &["-v", "--volume", "--mount"]
        }
        "apptainer" | "singularity" => {
            if !named("--containall") {
                missing.push("--containall");
            }
            if !named("--no-home") {
                missing.push("--no-home");
            }
            if !(named("--net") && has("--network", "none")) {
                missing.push("--net --network none");
            }
            &["-B", "--bind", "--mount"]
        }
        other => {
            return Err(format!(
                "the container engine `{other}`: the runner knows which flags sandbox docker, podman, apptainer \
                 and singularity only; use one of them, or --unsandboxed for your own agent on your own machine"
            ));
        }
    };
    for (i, w) in words.iter().enumerate() {
        let value = volume_flags.iter().find_map(|f| {
            if w == f {
                words.get(i + 1).cloned()
            } else {
                w.strip_prefix(&format!("{f}=")).map(str::to_owned)
            }
        });
        let Some(value) = value else { continue };
        if value.contains("{workdir}") {
            continue;
        }
        let source = value.split(':').next().unwrap_or("");
        let read_only = value.ends_with(":ro") || value.contains(",ro") || value.contains("readonly");
        if !read_only {
            undoing.push(format!("a writable volume other than {{workdir}}: {value}"));
            continue;
        }
        let readonly = Settings { readonly: vec![PathBuf::from(source)], ..Settings::default() };
        if let Err(e) = check_settings(&readonly, private) {
            undoing.push(e.replace("--sandbox-ro", "the volume"));
        }
    }
    if words
        .iter()
        .any(|w| w.starts_with("REXBENCH_") || w.contains(" REXBENCH_") || w.contains("=REXBENCH_"))
        || words.windows(2).any(|w| (w[0] == "-e" || w[0] == "--env") && w[1].starts_with("REXBENCH_"))
    {
        undoing.push("a runner variable (REXBENCH_…) passed in".into());
    }
    if missing.is_empty() && undoing.is_empty() {
        return Ok(());
    }
    let mut said = String::from("the container template does not sandbox the experiment:");
    if !missing.is_empty() {
        said.push_str(&format!(" it lacks {}", missing.join(", ")));
    }
    if !undoing.is_empty() {
        if !missing.is_empty() {
            said.push(';');
        }
        said.push_str(&format!(" it has {}", undoing.join(", ")));
    }
    said.push_str(
        " (the runner's README, \"The sandbox\"; --unsandboxed for your own agent on your own machine)",
    );
    Err(said)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(t: &str) -> Vec<String> {
        t.split_whitespace().map(str::to_owned).collect()
    }

    const PODMAN: &str = "podman run --rm --name {name} --user 65534:65534 --network none --read-only \
                          --cap-drop ALL --security-opt no-new-privileges -v {workdir}:{workdir} -w {workdir} \
                          IMAGE {command}";

    #[test]
    fn a_container_template_must_carry_every_flag_of_the_sandbox() {
        lint_container(&words(PODMAN), &[]).unwrap();
        let apptainer = "apptainer exec --containall --no-home --net --network none --bind {workdir}:/work \
                         --pwd /work img.sif {command}";
        lint_container(&words(apptainer), &[]).unwrap();
        for (drop, named) in [
            ("--network none", "--network none"),
            ("--read-only", "--read-only"),
            ("--cap-drop ALL", "--cap-drop ALL"),
            ("--security-opt no-new-privileges", "no-new-privileges"),
            ("--user 65534:65534", "--user"),
        ] {
            let e = lint_container(&words(&PODMAN.replace(drop, "")), &[]).unwrap_err();
            assert!(e.contains(named), "{drop}: {e}");
        }
        for (add, named) in [
            ("--privileged", "--privileged"),
            ("--pid host", "--pid host"),
            ("--pid=host", "--pid host"),
            ("-v /srv/gold:/gold", "writable volume"),
            ("-e REXBENCH_ADMIN_TOKEN", "REXBENCH_"),
            ("--env-host", "--env-host"),
        ] {
            let e =
                lint_container(&words(&PODMAN.replace("IMAGE", &format!("{add} IMAGE"))), &[]).unwrap_err();
            assert!(e.contains(named), "{add}: {e}");
        }
        let e = lint_container(&words(&PODMAN.replace("65534:65534", "0:0")), &[]).unwrap_err();
        assert!(e.contains("root"), "{e}");
        let gold = tempfile::tempdir().unwrap();
        let ro = format!("-v {}:/g:ro IMAGE", gold.path().display());
        let e = lint_container(&words(&PODMAN.replace("IMAGE", &ro)), &[gold.path()]).unwrap_err();
        assert!(e.contains("overlaps"), "{e}");
        let e = lint_container(&words("env -C {workdir} {command}"), &[]).unwrap_err();
        assert!(e.contains("`env`"), "{e}");
    }
}
