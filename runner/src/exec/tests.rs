//! The executors' own tests: container templates, and a container engine run.

use super::*;

#[test]
fn container_templates_must_place_the_command_and_the_codebase() {
    assert!(Executor::container("docker run --rm IMAGE").unwrap_err().to_string().contains("{command}"));
    assert!(
        Executor::container("docker run --rm IMAGE {command}").unwrap_err().to_string().contains("{workdir}")
    );
    let e = Executor::container("docker run --rm --name {name} -v {workdir}:/work -w /work img {command}")
        .unwrap();
    let job = Job {
        workdir: Path::new("/tmp/run 1"),
        command: &["python3".to_owned(), "run.py".to_owned()],
        stdout: Path::new("/dev/null"),
        stderr: Path::new("/dev/null"),
        timeout: Duration::from_secs(1),
        name: "rexbench-x",
        inputs: &[],
        sandbox: None,
        limits: None,
    };
    // `--rm` taken out: the runner reads how the container ended, then removes it.
    assert_eq!(
        e.words(&job),
        [
            "docker",
            "run",
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
    // Confined, the card's memory and processes come right after `run`.
    let limits = benchmark::task::Limits { memory_mib: 512, processes: 64, ..Default::default() };
    let job = Job { limits: Some(&limits), ..job };
    let words = e.words(&job);
    assert_eq!(words[..5], ["docker", "run", "--memory=512m", "--memory-swap=512m", "--pids-limit=64"]);
    assert!(!words.contains(&"--rm".to_owned()));
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
        inputs: &[],
        sandbox: None,
        limits: None,
    };
    let exit = e.run(&job, &AtomicBool::new(false)).unwrap();
    assert_eq!(exit.0, Exit::Finished { success: true, description: "exit status 0".into() });
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "here");
}
