//! The container image: `scripts/image` builds it (on a Debian base made here, as no
//! registry can be reached), podman runs it, and the demo's leaderboard comes out of it,
//! served by a user that is not root and reported healthy by its own health check.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::repo;

/// The test's own podman storage and state (`scripts/image`'s `REXBENCH_PODMAN_STORE`):
/// kept beside the build, so that the base image is made once, and apart from the
/// machine's, whose state (another tool's podman, another driver) is not the test's.
fn store() -> std::path::PathBuf {
    repo().join("target/podman")
}

fn podman(args: &[&str]) -> (bool, String) {
    let store = store();
    let out = Command::new("podman")
        .arg("--storage-driver=vfs")
        .arg("--root")
        .arg(store.join("storage"))
        .arg("--runroot")
        .arg(store.join("run"))
        .args(args)
        .env("CONTAINERS_CONF", repo().join("deploy/containers.conf"))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("podman: {e}; scripts/setup installs it"));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), said)
}

/// Removes the container when the test ends, however it ends.
struct Container(String);

impl Drop for Container {
    fn drop(&mut self) {
        podman(&["rm", "--force", &self.0]);
    }
}

#[test]
fn the_image_builds_runs_as_a_user_and_serves_the_demo() {
    // The debug build the tests run is what goes in: a release build here would double
    // the test command's time. `scripts/image` alone builds a release one.
    let built = Command::new("bash")
        .arg(repo().join("scripts/image"))
        .env("REXBENCH_IMAGE_BASE", "local")
        .env("REXBENCH_IMAGE_PROFILE", "debug")
        .env("REXBENCH_PODMAN_STORE", store())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&built.stdout).into_owned();
    assert!(built.status.success(), "scripts/image: {said}{}", String::from_utf8_lossy(&built.stderr));
    assert!(said.starts_with("rexbench-server:0.1.0 ("), "{said}");
    eprintln!("{said}");

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let name = format!("rexbench-image-test-{port}");
    let addr = format!("REXBENCH_ADDR=127.0.0.1:{port}");
    let (ok, said) = podman(&[
        "run",
        "--detach",
        "--name",
        &name,
        "--network",
        "host",
        "--env",
        &addr,
        "rexbench-server:latest",
        "serve",
        "--demo",
    ]);
    assert!(ok, "podman run: {said}");
    let _container = Container(name.clone());

    let url = format!("http://127.0.0.1:{port}/api/v1/leaderboard");
    let started = Instant::now();
    let board = loop {
        if let Ok(mut answer) = ureq::get(&url).call() {
            break answer.body_mut().read_to_string().unwrap();
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{}", podman(&["logs", &name]).1);
        std::thread::sleep(Duration::from_millis(200));
    };
    let board: serde_json::Value = serde_json::from_str(&board).unwrap();
    let rows = board["rows"].as_array().unwrap();
    assert!(
        rows.iter().any(|r| r["agent_id"] == "openhands-claude-4.5-opus"),
        "the paper's agents are there"
    );
    assert!(rows.len() >= 16);

    let (ok, uid) = podman(&["exec", &name, "id", "-u"]);
    assert!(ok && uid.trim() == "10001", "the server runs as uid 10001, not root: {uid}");
    let (ok, said) = podman(&["healthcheck", "run", &name]);
    assert!(ok, "the image's health check: {said}");
    let (ok, said) = podman(&["inspect", "--format", "{{.Config.Healthcheck.Test}}", &name]);
    assert!(ok && said.contains("rexbench-server health"), "{said}");
}
