//! Faults with real processes and real resources: a client that trickles its
//! headers, a blob store out of space (a small tmpfs), and PostgreSQL restarted while
//! the server is under load.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bundle::SecretKey;
use store::{Backend, Store, Tier};

use crate::process::{Server, assert_consistent, bundle_file};

fn sqlite(dir: &Path) -> Backend {
    Backend::Sqlite { path: dir.join("db.sqlite") }
}

#[test]
fn a_client_that_trickles_its_headers_is_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let server =
        Server::start_with(&sqlite(dir.path()), &dir.path().join("blobs"), &[("REXBENCH_HEADER_SECS", "1")]);
    let address = server.url.trim_start_matches("http://").to_owned();
    let mut slow = TcpStream::connect(&address).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let started = Instant::now();
    // A header line every 300 ms, never the blank line that ends them.
    let trickle = std::thread::spawn({
        let mut writer = slow.try_clone().unwrap();
        move || {
            let _ = writer.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n");
            for i in 0..30 {
                std::thread::sleep(Duration::from_millis(300));
                if writer.write_all(format!("X-Slow-{i}: y\r\n").as_bytes()).is_err() {
                    return;
                }
            }
        }
    });
    let mut answer = Vec::new();
    let _ = slow.read_to_end(&mut answer);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "the connection stayed open {took:?}");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 408"), "{answer}");
    trickle.join().unwrap();
    // Everyone else is served as ever.
    assert_eq!(ureq::get(&format!("{}/healthz", server.url)).call().unwrap().status(), 200);
    server.kill();
}

/// A tmpfs of `size` mounted at a new directory, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: PathBuf, size: &str) -> Tmpfs {
        std::fs::create_dir_all(&at).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&at)
            .status()
            .expect("mount(8) runs");
        assert!(status.success(), "mounting a tmpfs needs root (CI runs the tests as root)");
        Tmpfs(at)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_blob_store_is_a_507_and_nothing_partial() {
    let dir = tempfile::tempdir().unwrap();
    let backend = sqlite(dir.path());
    let blobs = Tmpfs::mount(dir.path().join("blobs"), "256k");
    let files = tempfile::tempdir().unwrap();
    let key = SecretKey::generate();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt.block_on(Store::open(&backend, &blobs.0)).unwrap();
    rt.block_on(store.add_key(&key.public_key(), "Team", Tier::Submitter)).unwrap();
    rt.block_on(crate::harness::know_test_set(&store));
    let server = Server::start(&backend, &blobs.0);
    let small = bundle_file(&key, "small", 12, files.path());
    assert!(matches!(
        runner::submit::submit(&small, &server.url).unwrap(),
        runner::submit::Verdict::Accepted { .. }
    ));
    let files_before = store::testing::count_files(&blobs.0);
    let changes_before = rt.block_on(store.changes(100, None)).unwrap().len();

    // 180 runs of 2.6 KB of logs each: 470 KB, more than the store has left.
    let large = bundle_file(&key, "large", 180, files.path());
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut answer = agent
        .post(&format!("{}/api/v1/submissions", server.url))
        .content_type("application/gzip")
        .send(std::fs::read(&large).unwrap())
        .unwrap();
    assert_eq!(answer.status().as_u16(), 507);
    let body: serde_json::Value = serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "storage_full", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("nothing was stored"), "{body}");

    // Nothing of it kept: no rows, no blob, no staged file; the server carries on.
    assert_eq!(rt.block_on(store.changes(100, None)).unwrap().len(), changes_before);
    assert!(rt.block_on(store.agent("large")).unwrap().is_none());
    assert_eq!(store::testing::count_files(&blobs.0), files_before);
    assert_eq!(ureq::get(&format!("{}/readyz", server.url)).call().unwrap().status(), 200);
    let acknowledged: BTreeSet<String> = rt
        .block_on(store.agent("small"))
        .unwrap()
        .unwrap()
        .submissions
        .into_iter()
        .map(|s| s.bundle_id)
        .collect();
    rt.block_on(assert_consistent(&store, &acknowledged));
    server.kill();
}

/// A PostgreSQL cluster of the test's own, so that restarting it disturbs no other test.
struct Cluster {
    data: tempfile::TempDir,
    port: u16,
    as_postgres: bool,
}

impl Cluster {
    fn bin(tool: &str) -> PathBuf {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL's server programs are installed (apt-get install postgresql)")
            .map(|e| e.unwrap().path().join("bin"))
            .collect();
        versions.sort();
        versions.pop().expect("a PostgreSQL version").join(tool)
    }

    /// `tool` with `args`, as the postgres user when we are root (PostgreSQL refuses
    /// to run as root).
    fn run(&self, tool: &str, args: &[&str]) {
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(Cluster::bin(tool));
            c
        } else {
            Command::new(Cluster::bin(tool))
        };
        let output = command.args(args).output().unwrap();
        assert!(output.status.success(), "{tool}: {}", String::from_utf8_lossy(&output.stderr));
    }

    fn start_new() -> Cluster {
        let data = tempfile::tempdir().unwrap();
        let as_postgres = nix::unistd::Uid::effective().is_root();
        if as_postgres {
            let postgres = nix::unistd::User::from_name("postgres").unwrap().expect("a postgres user");
            nix::unistd::chown(data.path(), Some(postgres.uid), Some(postgres.gid)).unwrap();
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let cluster = Cluster { data, port, as_postgres };
        let pgdata = cluster.pgdata();
        cluster.run("initdb", &["-D", &pgdata, "-U", "postgres", "--auth=trust", "--no-sync"]);
        cluster.pg_ctl("start");
        cluster
    }

    fn pgdata(&self) -> String {
        self.data.path().join("pg").display().to_string()
    }

    fn pg_ctl(&self, action: &str) {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c fsync=off",
            self.port,
            self.data.path().display()
        );
        let log = self.data.path().join("log").display().to_string();
        self.run("pg_ctl", &["-D", &self.pgdata(), "-o", &options, "-l", &log, "-m", "fast", "-w", action]);
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(|| self.pg_ctl("stop"));
    }
}

#[test]
fn postgres_restarted_under_load_and_the_server_recovers_by_itself() {
    let cluster = Cluster::start_new();
    let backend = Backend::Postgres { url: cluster.url() };
    let blobs = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let key = SecretKey::generate();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt.block_on(Store::open(&backend, blobs.path())).unwrap();
    rt.block_on(store.add_key(&key.public_key(), "load", Tier::Submitter)).unwrap();
    rt.block_on(crate::harness::know_test_set(&store));
    drop(store);
    let server = Server::start(&backend, blobs.path());

    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = Arc::new(Mutex::new(BTreeSet::new()));
    let (served, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut threads = Vec::new();
    for r in 0..8 {
        let (url, stop, served, failed) = (server.url.clone(), stop.clone(), served.clone(), failed.clone());
        threads.push(std::thread::spawn(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
            let paths = ["/api/v1/leaderboard", "/", "/api/v1/changes", "/tasks/cogs"];
            while !stop.load(Ordering::Relaxed) {
                // Past the render cache, so that every read reaches the database.
                let path = format!("{}?n={}", paths[r % paths.len()], served.load(Ordering::Relaxed));
                match agent.get(&format!("{url}{path}")).call() {
                    Ok(a) if a.status().is_success() => served.fetch_add(1, Ordering::Relaxed),
                    _ => failed.fetch_add(1, Ordering::Relaxed),
                };
            }
        }));
    }
    for s in 0..2 {
        let (url, stop, acknowledged, key, dir) = (
            server.url.clone(),
            stop.clone(),
            acknowledged.clone(),
            SecretKey::from_pem(&key.to_pem()).unwrap(),
            files.path().to_owned(),
        );
        threads.push(std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let file = bundle_file(&key, &format!("load-{s}-{n:04}"), 36, &dir);
                n += 1;
                if let Ok(runner::submit::Verdict::Accepted { body, .. }) =
                    runner::submit::submit(&file, &url)
                {
                    acknowledged.lock().unwrap().insert(body["bundle_id"].as_str().unwrap().to_owned());
                }
            }
        }));
    }
    std::thread::sleep(Duration::from_secs(2));
    let before = served.load(Ordering::Relaxed);
    assert!(before > 0, "nothing was served before the restart");
    cluster.pg_ctl("restart");
    let restarted = Instant::now();

    // Without being touched, the server answers from the database again.
    let deadline = restarted + Duration::from_secs(20);
    let ready = loop {
        let status = ureq::get(&format!("{}/readyz?after", server.url)).call().map(|a| a.status().as_u16());
        if status.ok() == Some(200) && served.load(Ordering::Relaxed) > before + 20 {
            break restarted.elapsed();
        }
        assert!(Instant::now() < deadline, "the server did not recover within 20 s");
        std::thread::sleep(Duration::from_millis(100));
    };
    let acknowledged_before = acknowledged.lock().unwrap().len();
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() > acknowledged_before, "no bundle was stored after the restart");
    let store = rt.block_on(Store::open(&backend, blobs.path())).unwrap();
    rt.block_on(assert_consistent(&store, &acknowledged));
    eprintln!(
        "recovered {ready:?} after the restart; {} reads served, {} failed while PostgreSQL was down; {} bundles stored",
        served.load(Ordering::Relaxed),
        failed.load(Ordering::Relaxed),
        acknowledged.len()
    );
    server.kill();
}
