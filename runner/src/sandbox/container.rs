//! `--container`: the engine is the sandbox, and a template must give the guarantees
//! bubblewrap gives the local executor (runner/README.md, "The sandbox"). A template is
//! read as its engine reads it (long and short options, `--flag=value`, `-vVALUE`), and
//! every option must be one the runner knows to keep the sandbox: an allow-list, so that
//! a flag nobody thought of (`--cap-add`, `--security-opt seccomp=unconfined`, a volume
//! in an attached form) is refused rather than let through. The working copy is given to
//! the container's user.

use std::path::{Path, PathBuf};

use super::{Settings, check_settings, chown_tree};

/// The engines the runner knows, by the families whose options it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    /// docker and podman, `run`.
    Oci,
    /// apptainer and singularity, `exec`.
    Apptainer,
}

/// An option the runner allows: its long name, its one-letter alias, whether it takes a
/// value.
struct Known {
    long: &'static str,
    short: Option<char>,
    value: bool,
}

const fn known(long: &'static str, short: Option<char>, value: bool) -> Known {
    Known { long, short, value }
}

/// docker's and podman's global options the runner allows (before `run`): where the
/// engine keeps its own storage and state (podman's `--root` and `--runroot`), none of
/// which the container sees.
const OCI_GLOBAL: &[Known] = &[
    known("--storage-driver", None, true),
    known("--log-level", None, true),
    known("--root", None, true),
    known("--runroot", None, true),
];

/// docker's and podman's `run` options the runner allows; each value is checked below.
const OCI_RUN: &[Known] = &[
    known("--rm", None, false),
    known("--name", None, true),
    known("--user", Some('u'), true),
    known("--network", None, true),
    known("--net", None, true),
    known("--read-only", None, false),
    known("--cap-drop", None, true),
    known("--security-opt", None, true),
    known("--volume", Some('v'), true),
    known("--workdir", Some('w'), true),
    known("--env", Some('e'), true),
    known("--ulimit", None, true),
    known("--pids-limit", None, true),
    known("--memory", Some('m'), true),
    known("--memory-swap", None, true),
    known("--cpus", None, true),
    known("--shm-size", None, true),
    known("--gpus", None, true),
    known("--device", None, true),
    known("--tmpfs", None, true),
    known("--init", None, false),
    known("--stop-timeout", None, true),
    known("--timeout", None, true),
    known("--quiet", Some('q'), false),
    known("--pull", None, true),
    known("--rootfs", None, false),
];

/// apptainer's and singularity's global options the runner allows (before `exec`).
const APPTAINER_GLOBAL: &[Known] = &[known("--quiet", Some('q'), false), known("--silent", Some('s'), false)];

/// apptainer's and singularity's `exec` options the runner allows.
const APPTAINER_EXEC: &[Known] = &[
    known("--containall", Some('C'), false),
    known("--no-home", None, false),
    known("--net", Some('n'), false),
    known("--network", None, true),
    known("--nv", None, false),
    known("--rocm", None, false),
    known("--bind", Some('B'), true),
    known("--pwd", None, true),
    known("--cleanenv", Some('e'), false),
    known("--env", None, true),
    known("--writable-tmpfs", None, false),
];

/// A template read as its engine reads it.
#[derive(Debug)]
pub(super) struct Parsed {
    pub(super) family: Family,
    /// Each option, by its long name, with its value.
    options: Vec<(&'static str, Option<String>)>,
    /// Where the subcommand (`run`, `exec`) is among the words.
    pub(super) sub_at: usize,
    /// The image (a path, with `--rootfs`), and the words after it.
    image: String,
    rest: Vec<String>,
}

impl Parsed {
    fn all(&self, long: &str) -> impl Iterator<Item = Option<&str>> {
        self.options.iter().filter(move |(l, _)| *l == long).map(|(_, v)| v.as_deref())
    }

    fn has(&self, long: &str) -> bool {
        self.all(long).next().is_some()
    }
}

/// Reads `words` as the engine its first word names would; refuses an engine, a
/// subcommand or an option the runner does not know.
pub(super) fn parse(words: &[String]) -> Result<Parsed, String> {
    let program =
        words.first().map(|w| Path::new(w).file_name().unwrap_or_default().to_string_lossy().into_owned());
    let program = program.unwrap_or_default();
    let (family, global, sub, allowed): (Family, &[Known], &str, &[Known]) = match program.as_str() {
        "docker" | "podman" => (Family::Oci, OCI_GLOBAL, "run", OCI_RUN),
        "apptainer" | "singularity" => (Family::Apptainer, APPTAINER_GLOBAL, "exec", APPTAINER_EXEC),
        other => {
            return Err(format!(
                "the container engine `{other}`: the runner knows which flags sandbox docker, podman, apptainer \
                 and singularity only; use one of them, or --unsandboxed for your own agent on your own machine"
            ));
        }
    };
    let mut options = Vec::new();
    let mut i = 1;
    let mut in_sub = false;
    let mut sub_at = 0;
    loop {
        let Some(word) = words.get(i) else {
            return Err(format!("the container template names no image after `{program} {sub}`"));
        };
        let table = if in_sub { allowed } else { global };
        if !word.starts_with('-') || word == "-" {
            if !in_sub {
                if word != sub {
                    return Err(format!(
                        "the container template runs `{program} {word}`, not `{program} {sub}`"
                    ));
                }
                in_sub = true;
                sub_at = i;
                i += 1;
                continue;
            }
            let image = word.clone();
            let rest = words[i + 1..].to_vec();
            return Ok(Parsed { family, options, sub_at, image, rest });
        }
        let (found, value, used) = read_option(word, words.get(i + 1), table).map_err(|what| {
            let names: Vec<&str> = table.iter().map(|k| k.long).collect();
            format!(
                "the container template has {what}, which the runner does not know to keep the sandbox (it takes {} \
                 {}: {})",
                if in_sub { "after" } else { "before" },
                sub,
                names.join(", ")
            )
        })?;
        options.push((found.long, value));
        i += used;
    }
}

/// One option at `word` (and `next`, where its value is the next word): what it is, its
/// value, and how many words it took.
fn read_option<'a>(
    word: &str,
    next: Option<&String>,
    table: &'a [Known],
) -> Result<(&'a Known, Option<String>, usize), String> {
    let unknown = || format!("`{word}`");
    if let Some(long) = word.strip_prefix("--") {
        let (name, attached) = match long.split_once('=') {
            Some((n, v)) => (format!("--{n}"), Some(v.to_owned())),
            None => (word.to_owned(), None),
        };
        let k = table.iter().find(|k| k.long == name).ok_or_else(unknown)?;
        return match (k.value, attached) {
            (true, Some(v)) => Ok((k, Some(v), 1)),
            (true, None) => {
                next.map(|v| (k, Some(v.clone()), 2)).ok_or_else(|| format!("`{word}` without its value"))
            }
            // `--read-only=true` reads as the flag; any other value is refused.
            (false, Some(v)) if v == "true" => Ok((k, None, 1)),
            (false, Some(_)) => Err(unknown()),
            (false, None) => Ok((k, None, 1)),
        };
    }
    let mut chars = word[1..].chars();
    let letter = chars.next().ok_or_else(unknown)?;
    let k = table.iter().find(|k| k.short == Some(letter)).ok_or_else(unknown)?;
    let attached: String = chars.collect();
    match (k.value, attached.is_empty()) {
        (true, false) => Ok((k, Some(attached), 1)),
        (true, true) => {
            next.map(|v| (k, Some(v.clone()), 2)).ok_or_else(|| format!("`{word}` without its value"))
        }
        (false, true) => Ok((k, None, 1)),
        // Letters run together (`-it`): each would have to be read on its own.
        (false, false) => Err(unknown()),
    }
}

/// The numeric `--user UID:GID` of a podman or docker template: the working copy is
/// given to that user before the experiment, so that it may write it.
fn container_user(words: &[String]) -> Option<(u32, u32)> {
    let parsed = parse(words).ok()?;
    let user = parsed.all("--user").last()??.to_owned();
    let (uid, gid) = user.split_once(':').unwrap_or((&user, &user));
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

/// Checks a template against the sandbox's guarantees (runner/README.md, "The
/// sandbox", has the table): every option one the runner knows, each required one
/// there once, each value one that keeps the sandbox; `private` are the folders no
/// mount may overlap (the gold, the results, the outputs).
///
/// - docker and podman `run`: `--user UID:GID` (once, not root), `--network none`,
///   `--read-only`, `--cap-drop ALL`, `--security-opt no-new-privileges` (no other
///   security option), volumes `{workdir}:DEST` or read-only host folders that hold
///   nothing private, devices under `/dev` only, variables by name, never `REXBENCH_…`;
///   with `--rootfs`, a root folder that holds nothing private;
/// - apptainer and singularity `exec`: `--containall`, `--no-home`, `--net` with
///   `--network none`, binds as volumes are.
pub fn lint_container(words: &[String], private: &[&Path]) -> Result<(), String> {
    let p = parse(words)?;
    let mut missing: Vec<&str> = Vec::new();
    let mut undoing: Vec<String> = Vec::new();
    let once = |long: &str| p.all(long).count();
    match p.family {
        Family::Oci => {
            let users: Vec<&str> = p.all("--user").flatten().collect();
            match users.as_slice() {
                [] => missing.push("--user (an unprivileged uid:gid)"),
                [user] => {
                    let uid = user.split(':').next().unwrap_or("");
                    if uid == "0" || uid == "root" || uid.parse::<u32>().is_err() {
                        undoing.push(format!("--user {user} (root, or not a number)"));
                    }
                }
                _ => undoing.push("--user more than once (the engine takes the last)".into()),
            }
            let networks: Vec<&str> = p.all("--network").chain(p.all("--net")).flatten().collect();
            if networks.is_empty() {
                missing.push("--network none");
            } else if networks.iter().any(|n| !n.eq_ignore_ascii_case("none")) {
                undoing.push(format!("--network {}", networks.join(", ")));
            }
            if !p.has("--read-only") {
                missing.push("--read-only");
            }
            let drops: Vec<&str> = p.all("--cap-drop").flatten().collect();
            if !drops.iter().any(|d| d.eq_ignore_ascii_case("all")) {
                missing.push("--cap-drop ALL");
            }
            let opts: Vec<&str> = p.all("--security-opt").flatten().collect();
            if !opts.iter().any(|o| matches!(*o, "no-new-privileges" | "no-new-privileges=true")) {
                missing.push("--security-opt no-new-privileges");
            }
            for o in opts.iter().filter(|o| !matches!(**o, "no-new-privileges" | "no-new-privileges=true")) {
                undoing.push(format!("--security-opt {o}"));
            }
            for v in p.all("--volume").flatten() {
                check_mount(v, private, &mut undoing);
            }
            for d in p.all("--device").flatten() {
                let path = d.split(':').next().unwrap_or("");
                let device = Settings { devices: vec![PathBuf::from(path)], ..Settings::default() };
                // A CDI name (`nvidia.com/gpu=all`) names a device the engine knows.
                let cdi = !path.starts_with('/') && path.contains('=');
                if !cdi && let Err(e) = check_settings(&device, private) {
                    undoing.push(e.replace("--sandbox-dev", "--device"));
                }
            }
            // The card's limits are the runner's to set (`for_run`): a template's own would
            // come after them and win.
            for own in ["--memory", "--memory-swap", "--pids-limit"] {
                if p.has(own) {
                    undoing.push(format!(
                        "{own} (the runner sets memory and processes from the task card's [evaluation.limits])"
                    ));
                }
            }
            if p.has("--rootfs") {
                let root = Settings { readonly: vec![PathBuf::from(&p.image)], ..Settings::default() };
                if let Err(e) = check_settings(&root, private) {
                    undoing.push(e.replace("--sandbox-ro", "--rootfs"));
                }
            }
        }
        Family::Apptainer => {
            if once("--containall") == 0 {
                missing.push("--containall");
            }
            if once("--no-home") == 0 {
                missing.push("--no-home");
            }
            let networks: Vec<&str> = p.all("--network").flatten().collect();
            if once("--net") == 0 || networks.is_empty() {
                missing.push("--net --network none");
            } else if networks.iter().any(|n| !n.eq_ignore_ascii_case("none")) {
                undoing.push(format!("--network {}", networks.join(", ")));
            }
            for binds in p.all("--bind").flatten() {
                for b in binds.split(',') {
                    check_mount(b, private, &mut undoing);
                }
            }
        }
    }
    for e in p.all("--env").flatten() {
        let name = e.split_once('=').map_or(e, |(n, _)| n);
        if !benchmark::task::passable_variable(name) {
            undoing.push(format!("--env {name} (a runner variable, REXBENCH_…, or a pattern of names)"));
        }
    }
    if p.rest != ["{command}"] {
        undoing.push(format!("`{}` after the image, where `{{command}}` alone goes", p.rest.join(" ")));
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

/// A volume or bind: `{workdir}:DEST` (the working copy), or a host folder mounted
/// read-only that holds nothing private.
fn check_mount(mount: &str, private: &[&Path], undoing: &mut Vec<String>) {
    let mut parts = mount.split(':');
    let source = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    if source == "{workdir}" {
        return;
    }
    if source.contains('{') {
        undoing.push(format!("a mount of `{mount}`: the working copy is mounted as `{{workdir}}` alone"));
        return;
    }
    let read_only = rest.get(1).is_some_and(|o| o.split(',').any(|o| o == "ro"));
    if !read_only {
        undoing.push(format!("a writable mount other than {{workdir}}: {mount}"));
        return;
    }
    let readonly = Settings { readonly: vec![PathBuf::from(source)], ..Settings::default() };
    if let Err(e) = check_settings(&readonly, private) {
        undoing.push(e.replace("--sandbox-ro", "the mount"));
    }
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
        lint_container(&words(&PODMAN.replace("podman run", "podman --storage-driver=vfs run")), &[])
            .unwrap();
        let apptainer = "apptainer exec --containall --no-home --net --network none --nv --bind {workdir}:/work \
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
        let e = lint_container(&words(&PODMAN.replace("65534:65534", "0:0")), &[]).unwrap_err();
        assert!(e.contains("root"), "{e}");
        let e = lint_container(&words("env -C {workdir} {command}"), &[]).unwrap_err();
        assert!(e.contains("`env`"), "{e}");
    }

    /// Every way a submitter-minded maintainer's template could undo the sandbox (those
    /// a hostile test found among them) is refused, naming what undoes it.
    #[test]
    fn a_template_that_undoes_the_sandbox_in_any_form_is_refused() {
        let gold = tempfile::tempdir().unwrap();
        std::fs::create_dir(gold.path().join("csvstats")).unwrap();
        let g = gold.path().display().to_string();
        for (add, named) in [
            ("--privileged", "`--privileged`"),
            ("--pid host", "`--pid`"),
            ("--pid=host", "`--pid=host`"),
            ("--cap-add SYS_ADMIN", "`--cap-add`"),
            ("--security-opt seccomp=unconfined", "seccomp=unconfined"),
            ("--security-opt apparmor=unconfined", "apparmor=unconfined"),
            ("-v /srv/gold:/gold", "writable mount"),
            ("-v/tmp:/y", "writable mount"),
            ("--volume=/tmp:/y", "writable mount"),
            (&format!("-v {g}/csvstats:/g{{workdir}}"), "writable mount"),
            (&format!("-v {g}/csvstats:/g{{workdir}}:ro"), "overlaps"),
            ("-v {workdir}/../../tmp:/z", "`{workdir}` alone"),
            (&format!("-v {g}:/g:ro"), "overlaps"),
            ("--user 0:0", "more than once"),
            ("-u0", "more than once"),
            ("-e REX*", "pattern"),
            ("-eREXBENCH_ADMIN_TOKEN", "REXBENCH_"),
            ("--env=REXBENCH_ADMIN_TOKEN=x", "REXBENCH_"),
            ("--env-host", "`--env-host`"),
            ("--env-file /etc/x", "`--env-file`"),
            ("--network host", "--network"),
            ("--device /dev/../etc", "/dev"),
            ("-it", "`-it`"),
            ("--entrypoint sh", "`--entrypoint`"),
        ] {
            let t = PODMAN.replace("IMAGE", &format!("{add} IMAGE"));
            let e = lint_container(&words(&t), &[gold.path()]).unwrap_err();
            assert!(e.contains(named), "{add}: {e}");
        }
        // The host's root, or the gold, as the container's root folder.
        for root in ["/", g.as_str()] {
            let t = PODMAN.replace("IMAGE", &format!("--rootfs {root}"));
            let e = lint_container(&words(&t), &[gold.path()]).unwrap_err();
            assert!(e.contains("--rootfs"), "{root}: {e}");
        }
        // More words after the image than the task's command.
        let e = lint_container(&words(&PODMAN.replace("{command}", "sh -c x {command}")), &[]).unwrap_err();
        assert!(e.contains("after the image"), "{e}");
        // Another subcommand.
        let e = lint_container(&words(&PODMAN.replace("podman run", "podman exec")), &[]).unwrap_err();
        assert!(e.contains("not `podman run`"), "{e}");
        // apptainer: a writable bind beside the working copy, in one --bind.
        let t = "apptainer exec --containall --no-home --net --network none --bind {workdir}:/work,/tmp:/t img.sif {command}";
        assert!(lint_container(&words(t), &[]).unwrap_err().contains("writable mount"));
    }
}
