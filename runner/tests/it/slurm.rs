//! `rexbench evaluate --executor slurm` against a real single-node Slurm cluster
//! (scripts/slurm), started for each test and stopped after it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::evaluate::{artifact_names, copy, processes_running_under, records};
use crate::{repo, stderr, stdout};

/// A cluster of this machine alone. Tests take turns: clusters share Slurm's ports.
struct Cluster {
    dir: tempfile::TempDir,
    _turn: fs::File,
}

impl Cluster {
    fn start() -> Cluster {
        let turn = fs::File::create(std::env::temp_dir().join("rexbench-slurm-tests.lock")).unwrap();
        turn.lock().unwrap();
        let dir = tempfile::Builder::new().prefix("rexbench-slurm-").tempdir().unwrap();
        let out = Command::new("bash")
            .arg(repo().join("scripts/slurm"))
            .arg("start")
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "the Slurm cluster did not start: {}{}", stdout(&out), stderr(&out));
        Cluster { dir, _turn: turn }
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", self.dir.path().join("slurm.conf"));
        cmd
    }

    fn evaluate(&self, outputs: &Path, results: &Path, more: &[&str]) -> Command {
        let mut cmd = self.command(env!("CARGO_BIN_EXE_rexbench"));
        cmd.args(["evaluate", outputs.to_str().unwrap(), "--out", results.to_str().unwrap()])
            .args(["--gold", "tasks/examples/gold", "--executor", "slurm"])
            .args(more)
            .current_dir(repo());
        cmd
    }

    /// Every job Slurm finished, as its completion log has them: (name, state).
    fn completed(&self) -> Vec<(String, String)> {
        let log = fs::read_to_string(self.dir.path().join("jobcomp.txt")).unwrap_or_default();
        log.lines()
            .map(|line| {
                let field = |key: &str| {
                    line.split(' ').find_map(|w| w.strip_prefix(key)).unwrap_or_default().to_owned()
                };
                (field("Name="), field("JobState="))
            })
            .collect()
    }

    /// The jobs Slurm lists (ended ones too): name → (id, state).
    fn queue(&self) -> BTreeMap<String, (String, String)> {
        let out = self
            .command("squeue")
            .args(["--noheader", "--states=all", "--format=%j|%i|%T"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
            .lines()
            .map(|l| {
                let p: Vec<&str> = l.splitn(3, '|').collect();
                (p[0].to_owned(), (p[1].to_owned(), p[2].to_owned()))
            })
            .collect()
    }

    /// Names of the jobs that are waiting or running.
    fn active(&self) -> Vec<String> {
        let ended =
            ["COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"];
        self.queue().into_iter().filter(|(_, (_, s))| !ended.contains(&s.as_str())).map(|(n, _)| n).collect()
    }

    /// Waits until `ready` holds of the queue.
    fn wait_for(&self, what: &str, ready: impl Fn(&BTreeMap<String, (String, String)>) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !ready(&self.queue()) {
            assert!(Instant::now() < deadline, "waited 120 s for {what}: {:?}", self.queue());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ =
            Command::new("bash").arg(repo().join("scripts/slurm")).arg("stop").arg(self.dir.path()).status();
    }
}

/// The example outputs plus copies of three of their runs: 40 runs.
fn forty_runs(dir: &Path) -> PathBuf {
    let src = repo().join("tasks/examples/outputs");
    let dst = dir.join("outputs");
    copy(&src, &dst);
    for n in 3..=12 {
        copy(&src.join("wordfreq/none/1"), &dst.join(format!("wordfreq/none/{n}")));
        copy(&src.join("wordfreq/none/2"), &dst.join(format!("wordfreq/hints/{n}")));
    }
    for n in 3..=13 {
        copy(&src.join("wordfreq/hints/1"), &dst.join(format!("wordfreq/detailed/{n}")));
    }
    dst
}

/// The example task cards with a run's time limit of `timeout_s` instead of their 10 s:
/// more room, where a test times forty runs, or a shorter wait for hanging runs, where
/// every run hangs or either outcome is right.
fn cards_with_timeout(dir: &Path, timeout_s: u32) -> PathBuf {
    let cards = dir.join("tasks");
    for task in ["wordfreq", "csvstats"] {
        let to = cards.join("examples").join(task);
        copy(&repo().join("tasks/examples").join(task), &to);
        let card = fs::read_to_string(to.join("task.toml")).unwrap();
        assert!(card.contains("\ntimeout_s = 10\n"), "{task}'s card changed: {card}");
        fs::write(
            to.join("task.toml"),
            card.replace("\ntimeout_s = 10\n", &format!("\ntimeout_s = {timeout_s}\n")),
        )
        .unwrap();
    }
    cards
}

/// Runs that take a while: `hangs` that run into their limit, and `succeed` quick
/// successes.
fn slow_runs(dir: &Path, hangs: u32, succeed: u32) -> PathBuf {
    let src = repo().join("tasks/examples/outputs/wordfreq");
    let dst = dir.join("outputs");
    for n in 1..=hangs {
        copy(&src.join("hints/2"), &dst.join(format!("wordfreq/hints/{n}")));
    }
    for n in 1..=succeed {
        copy(&src.join("none/1"), &dst.join(format!("wordfreq/none/{n}")));
    }
    dst
}

fn without_durations(runs: BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    runs.into_iter()
        .map(|(k, mut v)| {
            v.as_object_mut().unwrap().remove("duration_s");
            (k, v)
        })
        .collect()
}

fn outcomes(results: &Path) -> BTreeMap<String, Value> {
    records(results).into_iter().map(|(k, v)| (k, v["outcome"].clone())).collect()
}

fn finish(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

fn spawn(mut cmd: Command) -> Child {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

/// The run a job name is for: its name without the try.
fn run_of(name: &str) -> &str {
    name.rsplit_once('-').unwrap().0
}

#[test]
fn forty_runs_through_slurm_give_the_results_of_the_local_executor() {
    // Room for a quick run on a loaded machine; the hanging run waits it out.
    const LIMIT: u32 = 15;
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let outputs = forty_runs(tmp.path());
    let cards = cards_with_timeout(tmp.path(), LIMIT);
    let cards = ["--tasks", cards.to_str().unwrap()];

    let local = tmp.path().join("local");
    let out = crate::evaluate::evaluate_with(&outputs, &local, "2", &cards);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("evaluated 40 runs"), "{}", stdout(&out));

    let slurm = tmp.path().join("slurm");
    let out = cluster.evaluate(&outputs, &slurm, &cards).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).starts_with("evaluated 40 runs"), "{}", stdout(&out));
    assert!(stderr(&out).contains("queued"), "progress says what Slurm holds: {}", stderr(&out));

    // Outcomes, error types, metrics, file recall, cost: the same, and the same evidence.
    let (here, there) = (records(&local), records(&slurm));
    assert_eq!(here.len(), 40);
    let (here, there_same) = (without_durations(here), without_durations(there.clone()));
    let differ: Vec<String> = here
        .keys()
        .chain(there_same.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|k| here.get(*k) != there_same.get(*k))
        .map(|k| format!("{k}: local {:?}, Slurm {:?}", here.get(k), there_same.get(k)))
        .collect();
    assert!(differ.is_empty(), "runs the executors judged differently:\n{}", differ.join("\n"));
    assert_eq!(artifact_names(&local), artifact_names(&slurm));
    let hung = there["wordfreq/hints/2"]["duration_s"].as_f64().unwrap();
    let limit = f64::from(LIMIT);
    assert!(
        (limit..limit + 7.0).contains(&hung),
        "the hanging run was stopped at {hung} s, its limit is {limit} s"
    );
    assert_eq!(
        processes_running_under(&["sleep", "4242"], tmp.path()),
        Vec::<u32>::new(),
        "a child of the timed-out run survived"
    );

    // Every run but the empty patch was one job, run once; the bundle packs as usual.
    let done = cluster.completed();
    assert_eq!(done.len(), 39, "{done:?}");
    assert!(done.iter().all(|(_, state)| state == "COMPLETED"), "{done:?}");
    let names: std::collections::BTreeSet<&str> = done.iter().map(|(n, _)| run_of(n)).collect();
    assert_eq!(names.len(), 39);
    let left: Vec<String> = fs::read_dir(slurm.join(".slurm"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "only the journal and the lock stay: {left:?}");
    assert!(cluster.active().is_empty());
}

/// Spec §4l under Slurm: held-out runs are jobs like the others, on the variant's
/// codebase, with the local executor's outcomes.
#[test]
fn held_out_runs_through_slurm_give_the_results_of_the_local_executor() {
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let outputs = crate::evaluate::honest_and_stored(tmp.path());
    let digest = crate::evaluate::variant_of("wordfreq");
    let heldout = ["--heldout", digest.as_str()];
    let local = tmp.path().join("local");
    let out = crate::evaluate::evaluate_with(&outputs, &local, "2", &heldout);
    assert!(out.status.success(), "{}", stderr(&out));
    let slurm = tmp.path().join("slurm");
    let out = cluster.evaluate(&outputs, &slurm, &heldout).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let (here, there) = (without_durations(records(&local)), without_durations(records(&slurm)));
    assert_eq!(here, there);
    assert_eq!(here["wordfreq/none/2"]["outcome"], "wrong_result", "{here:?}");
    assert_eq!(here["wordfreq/none/1"]["outcome"], "success", "{here:?}");
    assert_eq!(cluster.completed().len(), 2);
}

#[test]
fn a_runner_killed_while_jobs_queue_and_run_resumes_and_runs_each_once() {
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let outputs = slow_runs(tmp.path(), 4, 6);
    let results = tmp.path().join("results");
    let journal = results.join(".slurm/journal.jsonl");
    // The quick runs must succeed even on a loaded machine.
    let cards = cards_with_timeout(tmp.path(), 8);
    let cards = ["--tasks", cards.to_str().unwrap()];

    // Killed while it submits...
    let child = spawn(cluster.evaluate(&outputs, &results, &cards));
    let deadline = Instant::now() + Duration::from_secs(60);
    while fs::read_to_string(&journal).map_or(0, |j| j.lines().count()) < 3 {
        assert!(Instant::now() < deadline, "nothing submitted");
        std::thread::sleep(Duration::from_millis(5));
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    let out = finish(child);
    assert_eq!(out.status.code(), None, "killed: {}", stderr(&out));

    // ...and again while its jobs are queued and running.
    let child = spawn(cluster.evaluate(&outputs, &results, &cards));
    cluster.wait_for("a job running and one queued", |q| {
        q.values().any(|(_, s)| s == "RUNNING") && q.values().any(|(_, s)| s == "PENDING")
    });
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    finish(child);
    assert!(!cluster.active().is_empty(), "the jobs outlive their runner");

    let out = cluster.evaluate(&outputs, &results, &cards).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let got = outcomes(&results);
    assert_eq!(got.len(), 10);
    for (run, outcome) in &got {
        let want = if run.starts_with("wordfreq/hints/") { json!("timeout") } else { json!("success") };
        assert_eq!(outcome, &want, "{run}");
    }

    // Each run was one job, executed once: nothing submitted twice, nothing lost.
    let done = cluster.completed();
    let mut per_run: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, state) in &done {
        per_run.entry(run_of(name)).or_default().push(state);
    }
    assert_eq!(per_run.len(), 10, "{done:?}");
    for (run, states) in &per_run {
        assert_eq!(states, &["COMPLETED"], "{run} ran as {states:?}");
    }
    assert!(!fs::read_to_string(&journal).unwrap().contains("\"lost\""));
    assert!(cluster.active().is_empty());
}

#[test]
fn ctrl_c_cancels_every_job_and_the_same_command_resumes() {
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let outputs = slow_runs(tmp.path(), 4, 4);
    let results = tmp.path().join("results");
    // Hangs of 3 s; a quick success may time out on a busy machine, and either is right.
    let cards = cards_with_timeout(tmp.path(), 3);
    let cards = ["--tasks", cards.to_str().unwrap()];

    let child = spawn(cluster.evaluate(&outputs, &results, &cards));
    cluster.wait_for("a job running and one queued", |q| {
        q.values().any(|(_, s)| s == "RUNNING") && q.values().any(|(_, s)| s == "PENDING")
    });
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let out = finish(child);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("cancelling "), "{}", stderr(&out));
    assert!(stderr(&out).contains("run the same command again to resume"), "{}", stderr(&out));
    assert_eq!(cluster.active(), Vec::<String>::new(), "Ctrl-C left jobs in the queue");
    let before = if results.join("runs").exists() { records(&results).len() } else { 0 };
    assert!(before < 8, "{before} runs finished before Ctrl-C");

    // What Slurm was running is not for this machine to run instead.
    let out = crate::evaluate::evaluate_with(&outputs, &results, "2", &cards);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("holds an evaluation on Slurm that is not finished")
            && stderr(&out).contains("resume it with --executor slurm"),
        "{}",
        stderr(&out)
    );
    assert_eq!(if results.join("runs").exists() { records(&results).len() } else { 0 }, before);

    let out =
        cluster.evaluate(&outputs, &results, &[&cards[..], &["--resubmit", "0"]].concat()).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let got = outcomes(&results);
    assert_eq!(got.len(), 8);
    // Cancelled tries are not held against a run, even with no resubmission allowed.
    assert!(got.values().all(|o| o == "timeout" || o == "success"), "{got:?}");
}

#[test]
fn a_job_cancelled_behind_the_runners_back_runs_again_and_one_past_its_limit_is_timeout() {
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let outputs = slow_runs(tmp.path(), 1, 1);
    // The quick run must succeed even on a loaded machine.
    let cards = cards_with_timeout(tmp.path(), 8);
    let cards = ["--tasks", cards.to_str().unwrap()];

    // scancel: the job stops its experiment and says so; the run is submitted again.
    let results = tmp.path().join("results");
    let child = spawn(cluster.evaluate(&outputs, &results, &cards));
    let hang = |q: &BTreeMap<String, (String, String)>| {
        q.iter()
            .find(|(n, (_, s))| n.contains("-wordfreq-hints-1-1") && s == "RUNNING")
            .map(|(_, (id, _))| id.clone())
    };
    cluster.wait_for("the hanging run's job to run", |q| hang(q).is_some());
    let id = hang(&cluster.queue()).unwrap();
    // The job claims its try once it listens for Slurm's signal: a job cancelled before
    // then ends without a status, which is the next case.
    let claim = results.join(".slurm/jobs/wordfreq-hints-1-1/claim");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !claim.exists() {
        assert!(Instant::now() < deadline, "the job never started its experiment: {}", claim.display());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(cluster.command("scancel").arg(&id).status().unwrap().success());
    let out = finish(child);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains(&format!("job {id} was stopped by a signal")), "{}", stderr(&out));
    assert!(stderr(&out).contains("submitting it again (try 2 of 3)"), "{}", stderr(&out));
    let run = &records(&results)["wordfreq/hints/1"];
    assert_eq!(run["outcome"], json!("timeout"));
    assert_eq!(run["error_type"], json!("Execution Timeout"));
    let states: Vec<(String, String)> =
        cluster.completed().into_iter().filter(|(n, _)| n.contains("-wordfreq-hints-1-")).collect();
    assert_eq!(states.len(), 2, "{states:?}");
    assert!(states[0].0.ends_with("-1") && states[0].1 == "CANCELLED", "{states:?}");
    assert!(states[1].0.ends_with("-2") && states[1].1 == "COMPLETED", "{states:?}");

    // Killed outright, the job writes nothing; with no resubmission allowed the run is
    // an infrastructure error, and says why.
    let results = tmp.path().join("again");
    let child = spawn(cluster.evaluate(&outputs, &results, &[&cards[..], &["--resubmit", "0"]].concat()));
    let running = |q: &BTreeMap<String, (String, String)>| {
        q.iter()
            .find(|(n, (_, s))| {
                n.contains("-wordfreq-hints-1-1") && s == "RUNNING" && !states.iter().any(|(d, _)| d == *n)
            })
            .map(|(_, (id, _))| id.clone())
    };
    cluster.wait_for("the hanging run's job to run", |q| running(q).is_some());
    let id = running(&cluster.queue()).unwrap();
    assert!(cluster.command("scancel").args(["--signal=KILL", "--full", &id]).status().unwrap().success());
    let out = finish(child);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("giving up after 1 tries"), "{}", stderr(&out));
    let run = &records(&results)["wordfreq/hints/1"];
    assert_eq!(run["outcome"], json!("infra_error"));
    assert_eq!(run["error_type"], json!("Slurm job lost"));
    let story = fs::read_to_string(results.join("runs/wordfreq/hints/1/x-runner.txt")).unwrap();
    assert!(story.contains(&format!("job {id} ")) && story.contains("without writing its status"), "{story}");
    assert_eq!(records(&results)["wordfreq/none/1"]["outcome"], json!("success"));
}

#[test]
fn bad_slurm_configuration_stops_before_anything_is_submitted() {
    let tmp = tempfile::tempdir().unwrap();
    let outputs = repo().join("tasks/examples/outputs");
    let results = tmp.path().join("results");
    let refused = |out: &Output, says: &str| {
        assert_eq!(out.status.code(), Some(2), "{}{}", stdout(out), stderr(out));
        assert!(stderr(out).contains(says), "{}", stderr(out));
        assert!(!results.exists(), "a refused evaluation wrote {}", results.display());
    };

    // No Slurm on PATH.
    let empty = tmp.path().join("bin");
    fs::create_dir_all(&empty).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rexbench"));
    cmd.args(["evaluate", outputs.to_str().unwrap(), "--out", results.to_str().unwrap()])
        .args(["--gold", "tasks/examples/gold", "--executor", "slurm"])
        .env("PATH", &empty)
        .current_dir(repo());
    refused(
        &cmd.output().unwrap(),
        "rexbench: --executor slurm: `sbatch` is not on PATH: run rexbench where Slurm's client commands work",
    );

    // Slurm's options without Slurm.
    let out = crate::runner(
        &["evaluate", outputs.to_str().unwrap(), "--out", results.to_str().unwrap(), "--partition", "gpu"],
        &repo(),
    );
    refused(&out, "rexbench: --partition is for --executor slurm");
    let out = crate::runner(
        &[
            "evaluate",
            outputs.to_str().unwrap(),
            "--out",
            results.to_str().unwrap(),
            "--executor",
            "slurm",
            "--jobs",
            "2",
        ],
        &repo(),
    );
    refused(
        &out,
        "rexbench: --jobs is for --executor local; under Slurm, --max-jobs limits the runs queued or running at once",
    );

    let cluster = Cluster::start();
    let out = cluster.evaluate(&outputs, &results, &["--partition", "nope"]).output().unwrap();
    refused(
        &out,
        "rexbench: --executor slurm: Slurm refuses these jobs (sbatch --test-only --partition=nope --time=6 --wrap=true): ",
    );
    assert!(stderr(&out).contains("Invalid partition name specified"), "{}", stderr(&out));

    let out = cluster.evaluate(&outputs, &results, &["--sbatch-arg=--gres=gpu:1"]).output().unwrap();
    refused(&out, "Invalid generic resource (gres) specification");

    let out = cluster.evaluate(&outputs, &results, &["--max-jobs", "0"]).output().unwrap();
    refused(&out, "--max-jobs must be at least 1");

    assert!(cluster.queue().is_empty(), "a job was submitted: {:?}", cluster.queue());
    assert!(cluster.completed().is_empty());
}

#[test]
fn a_container_template_runs_inside_the_job() {
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let outputs = slow_runs(tmp.path(), 0, 2);
    let results = tmp.path().join("results");
    // A stand-in for a container engine: it notes the container's name, then runs the
    // command in the codebase it was given.
    let engine = tmp.path().join("engine");
    let seen = tmp.path().join("containers.txt");
    fs::write(
        &engine,
        format!("#!/bin/sh\necho \"$2\" >> '{}'\ncd \"$1\" && shift 2 && exec \"$@\"\n", seen.display()),
    )
    .unwrap();
    fs::set_permissions(&engine, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let template = format!("{} {{workdir}} {{name}} {{command}}", engine.display());
    // A stand-in engine is no sandbox the runner knows: it runs only unsandboxed.
    let out = cluster.evaluate(&outputs, &results, &["--container", &template]).output().unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("the container engine `engine`"), "{}", stderr(&out));
    let args = ["--container", &template, "--unsandboxed"];
    let out = cluster.evaluate(&outputs, &results, &args).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let got = records(&results);
    assert_eq!(got.len(), 2);
    for run in got.values() {
        assert_eq!(run["outcome"], json!("success"));
        assert_eq!(run["metrics"], json!({"accuracy": 1.0}));
    }
    let mut names: Vec<String> =
        fs::read_to_string(&seen).unwrap().lines().map(|n| run_of(n).to_owned()).collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].ends_with("-wordfreq-none-1") && names[1].ends_with("-wordfreq-none-2"), "{names:?}");
}

#[test]
fn max_jobs_holds_the_runs_in_slurm_at_once_and_one_runner_works_in_a_directory() {
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let outputs = slow_runs(tmp.path(), 3, 0);
    let cards = cards_with_timeout(tmp.path(), 3);

    // One at a time: each run's job (3 s, to its limit) starts only once the one before it
    // has ended. Slurm logs times to the second, hence the second's slack; two CPUs would
    // run the first two together, 3 s apart from that.
    let results = tmp.path().join("results");
    let args = ["--max-jobs", "1", "--tasks", cards.to_str().unwrap()];
    let out = cluster.evaluate(&outputs, &results, &args).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let log = fs::read_to_string(cluster.dir.path().join("jobcomp.txt")).unwrap();
    let format =
        time::format_description::parse_borrowed::<2>("[year]-[month]-[day]T[hour]:[minute]:[second]")
            .unwrap();
    let mut jobs: Vec<(time::PrimitiveDateTime, time::PrimitiveDateTime)> = log
        .lines()
        .map(|line| {
            let at = |key: &str| {
                let text = line.split(' ').find_map(|w| w.strip_prefix(key)).unwrap();
                time::PrimitiveDateTime::parse(text, &format).unwrap()
            };
            (at("StartTime="), at("EndTime="))
        })
        .collect();
    jobs.sort();
    assert_eq!(jobs.len(), 3, "{log}");
    for pair in jobs.windows(2) {
        assert!(pair[1].0 + time::Duration::SECOND >= pair[0].1, "two jobs ran at once: {log}");
    }

    // A results directory whose lock another runner holds is not worked in.
    let held = tmp.path().join("held");
    fs::create_dir_all(held.join(".slurm")).unwrap();
    let lock = fs::File::create(held.join(".slurm/lock")).unwrap();
    lock.lock().unwrap();
    let out = cluster.evaluate(&outputs, &held, &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("another rexbench evaluate is working in"), "{}", stderr(&out));
    assert!(!held.join("runs").exists());
    assert_eq!(cluster.completed().len(), 3, "a job was submitted");
}

/// What an experiment leaves in its working copy is read there only, under Slurm as
/// under the local executor (the job's working copy is on the shared filesystem).
#[test]
fn a_job_s_links_out_and_fifos_are_refused_by_the_check() {
    use crate::hostile::{agent_patch, assert_secret_nowhere, host_secret, reading_task};
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let secret = host_secret(tmp.path());
    let tasks = reading_task(tmp.path());
    let outputs = tmp.path().join("outputs");
    for (attempt, script) in [
        (1, format!("ln -s {} result.txt", secret.display())),
        (2, "mkfifo result.txt".to_owned()),
        (3, "echo 'ACC: 1.0' > real.txt && ln -s real.txt result.txt".to_owned()),
    ] {
        let dir = outputs.join(format!("leaky/none/{attempt}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("patch.diff"), agent_patch(&script)).unwrap();
    }
    let results = tmp.path().join("results");
    let out = cluster.evaluate(&outputs, &results, &["--tasks", tasks.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let got = records(&results);
    let log =
        |a: u32| fs::read_to_string(results.join(format!("runs/leaky/none/{a}/checker_log.txt"))).unwrap();
    assert_eq!(got["leaky/none/1"]["outcome"], json!("wrong_result"));
    assert!(log(1).contains("`result.txt` is a symbolic link to the absolute path"), "{}", log(1));
    assert_eq!(got["leaky/none/2"]["outcome"], json!("wrong_result"));
    assert!(log(2).contains("`result.txt` is a FIFO (named pipe), not a regular file"), "{}", log(2));
    assert_eq!(got["leaky/none/3"]["outcome"], json!("success"), "{}", log(3));
    assert_secret_nowhere(tmp.path());
}

#[test]
fn a_status_the_experiment_writes_beside_its_job_is_not_taken_for_the_jobs() {
    use crate::hostile::{agent_patch, reading_task};
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let tasks = reading_task(tmp.path());
    let outputs = tmp.path().join("outputs");
    // The experiment runs in the job folder's `codebase/`, beside the status its job
    // writes when it ends: each tries to write one there first (its sandbox lets it
    // write its working copy alone), then ends otherwise.
    for (attempt, script) in [
        (1, r#"printf '{"state":"cancelled"}' > ../status.json; sleep 2; echo 'ACC: 0.5' > result.txt"#),
        (
            2,
            r#"printf '{"state":"timed_out","duration_s":1.0}' > ../status.json; sleep 2; echo 'ACC: 1.0' > result.txt"#,
        ),
        (3, "mkfifo ../status.json; sleep 2; exit 3"),
    ] {
        let dir = outputs.join(format!("leaky/none/{attempt}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("patch.diff"), agent_patch(script)).unwrap();
    }
    let results = tmp.path().join("results");
    let args = ["--tasks", tasks.to_str().unwrap(), "--resubmit", "0"];
    let mut child = spawn(cluster.evaluate(&outputs, &results, &args));
    // A FIFO once held the runner for good: it must finish.
    crate::hostile::wait_within(&mut child, Duration::from_secs(180), &["evaluate", "--executor", "slurm"]);
    let out = finish(child);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(!stderr(&out).contains("giving up"), "a job was taken for lost: {}", stderr(&out));
    let got = records(&results);
    assert_eq!(got["leaky/none/1"]["outcome"], json!("wrong_result"), "{:?}", got["leaky/none/1"]);
    assert_eq!(got["leaky/none/2"]["outcome"], json!("success"), "{:?}", got["leaky/none/2"]);
    assert_eq!(got["leaky/none/3"]["outcome"], json!("execution_failed"), "{:?}", got["leaky/none/3"]);
    assert!(cluster.active().is_empty());
}

#[test]
fn a_hostile_patch_sees_nothing_of_the_machine_in_a_slurm_job() {
    use crate::sandbox::{ENV_MARKER, assert_confined, hostile};
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let h = hostile(tmp.path());
    let results = tmp.path().join("results");
    // The variable reaches the job (sbatch passes the runner's environment on) as a
    // maintainer's token would; the node's runner keeps it from the experiment.
    let mut cmd = cluster.evaluate(&h.outputs, &results, &["--tasks", h.tasks.to_str().unwrap()]);
    let out = cmd
        .env("SANDBOX_TEST_MARKER", ENV_MARKER)
        .env("REXBENCH_ADMIN_TOKEN", crate::sandbox::TOKEN_CANARY)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert_confined(&h, &results, tmp.path(), "65534");
    crate::sandbox::assert_canary_nowhere(tmp.path());
}

#[test]
fn an_unprivileged_submitter_s_slurm_job_gives_the_experiment_nothing_of_its_environment() {
    use crate::sandbox::{
        ENV_MARKER, TOKEN_CANARY, as_user, assert_canary_nowhere, assert_confined, hand_over, hostile,
        unprivileged,
    };
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let h = hostile(tmp.path());
    let uid = unprivileged();
    let exe = hand_over(tmp.path(), uid);
    let results = tmp.path().join("results");
    // sbatch would pass the runner's whole environment on: the token's canary among it.
    let out = as_user(cluster.command("setpriv"), uid, &exe)
        .args(["evaluate", h.outputs.to_str().unwrap(), "--out", results.to_str().unwrap()])
        .args(["--tasks", h.tasks.to_str().unwrap(), "--executor", "slurm"])
        .current_dir(tmp.path())
        .env("HOME", tmp.path())
        .env("TMPDIR", tmp.path())
        .env("SANDBOX_TEST_MARKER", ENV_MARKER)
        .env("REXBENCH_ADMIN_TOKEN", TOKEN_CANARY)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert_confined(&h, &results, tmp.path(), &uid.to_string());
    assert_canary_nowhere(tmp.path());
}
