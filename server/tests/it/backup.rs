//! `rexbench-server backup` while the server serves and takes submissions, and
//! `rexbench-server restore` into a new database: what is restored is whole, and a
//! server on it answers every page and API request as the original does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bundle::SecretKey;
use store::testing::{drop_postgres, fresh_postgres, on_postgres, on_sqlite};
use store::{Backend, LeaderboardFilter, Store, Tier};

use crate::process::{Server, assert_consistent, bundle_file, database_url, fetch_as};

/// `rexbench-server ARGS` on `backend` and `blobs`: its exit code, standard output and error.
pub(crate) fn admin(args: &[&str], backend: &Backend, blobs: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rexbench-server"))
        .args(args)
        .env("DATABASE_URL", database_url(backend))
        .env("REXBENCH_BLOBS", blobs)
        .env("REXBENCH_TASKS", crate::harness::repo().join("tasks"))
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), said)
}

/// A new, empty database of the same kind as `like`.
async fn blank_like(like: &Backend, dir: &Path, name: &str) -> (Backend, Option<String>) {
    match like {
        Backend::Sqlite { .. } => (Backend::Sqlite { path: dir.join(format!("{name}.sqlite")) }, None),
        Backend::Postgres { .. } => {
            let (backend, db) = fresh_postgres(&std::env::var("TEST_DATABASE_URL").unwrap()).await;
            (backend, Some(db))
        }
    }
}

async fn bundle_ids(store: &Store) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for row in store.leaderboard(&LeaderboardFilter::default()).await.unwrap() {
        for s in store.agent(&row.agent_id).await.unwrap().unwrap().submissions {
            ids.insert(s.bundle_id);
        }
    }
    ids
}

/// Every page and API answer worth comparing: the lists, each agent, task and run (a
/// run's page and artifacts for every seventh run), the exports and the change log.
async fn every_path(store: &Store) -> Vec<String> {
    let mut paths: Vec<String> = [
        "/",
        "/?tasks=public",
        "/?sort=every-none",
        "/tasks",
        "/failures",
        "/changes",
        "/about",
        "/keys",
        "/submit",
        "/compare",
        "/api/v1/leaderboard",
        "/api/v1/tasks",
        "/api/v1/changes",
        "/api/v1/keys",
        "/leaderboard.csv",
    ]
    .map(str::to_owned)
    .into();
    for task in bundle::REXBENCH_TASKS {
        paths.push(format!("/tasks/{task}"));
        paths.push(format!("/api/v1/tasks/{task}"));
    }
    let mut runs = 0;
    for row in store.leaderboard(&LeaderboardFilter::default()).await.unwrap() {
        paths.push(format!("/agents/{}", row.agent_id));
        paths.push(format!("/api/v1/agents/{}", row.agent_id));
        paths.push(format!("/api/v1/submissions/{}/envelope", row.bundle_id));
        for run in store.runs_of(&row.bundle_id, None, None).await.unwrap() {
            paths.push(format!("/api/v1/runs/{}", run.id));
            runs += 1;
            if runs % 7 == 0 {
                paths.push(format!("/runs/{}", run.id));
                for a in store.run(run.id).await.unwrap().unwrap().artifacts {
                    paths.push(format!("/artifacts/{}", a.digest));
                }
            }
        }
    }
    paths
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backup_under_write_load_restores_whole_and_serves_the_same_answers_on_sqlite() {
    on_sqlite(a_backup_under_write_load_restores_whole_and_serves_the_same_answers).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backup_under_write_load_restores_whole_and_serves_the_same_answers_on_postgres() {
    on_postgres(a_backup_under_write_load_restores_whole_and_serves_the_same_answers).await;
}

async fn a_backup_under_write_load_restores_whole_and_serves_the_same_answers(
    backend: Backend,
    blobs: PathBuf,
) {
    let dir = tempfile::tempdir().unwrap();
    let key = SecretKey::generate();
    let store = Store::open(&backend, &blobs).await.unwrap();
    store.add_key(&key.public_key(), "Team", Tier::Submitter).await.unwrap();
    crate::harness::know_test_set(&store).await;
    // A maintainer's token: the private outputs are compared too.
    let token = [("REXBENCH_ADMIN_TOKEN", "s3cret-token")];
    let original = Server::start_args(&["serve", "--demo"], &backend, &blobs, &token);

    // Submissions keep coming while the backup is taken.
    let (stop, acknowledged) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(BTreeSet::new())));
    let writer = {
        let (url, stop, acknowledged, files) =
            (original.url.clone(), stop.clone(), acknowledged.clone(), dir.path().join("bundles"));
        std::fs::create_dir_all(&files).unwrap();
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let file = bundle_file(&key, &format!("load-{n:03}"), 36, &files);
                n += 1;
                if let Ok(runner::submit::Verdict::Accepted { body, .. }) =
                    runner::submit::submit(&file, &url)
                {
                    acknowledged.lock().unwrap().insert(body["bundle_id"].as_str().unwrap().to_owned());
                }
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while acknowledged.lock().unwrap().len() < 3 {
        assert!(Instant::now() < deadline, "the writer stored nothing");
        std::thread::sleep(Duration::from_millis(10));
    }
    let before = bundle_ids(&store).await;
    let under_load = dir.path().join("under-load");
    let (code, said) = admin(&["backup", under_load.to_str().unwrap()], &backend, &blobs);
    assert_eq!(code, 0, "{said}");
    assert!(said.starts_with("backed up "), "{said}");
    // Two more after the backup, and enough in all (28 bundles of 36 runs) that the
    // pages compared below are many, however fast this machine took the backup.
    let grew = acknowledged.lock().unwrap().len();
    while acknowledged.lock().unwrap().len() < (grew + 2).max(28) {
        assert!(Instant::now() < deadline + Duration::from_secs(30), "the writer stopped");
        std::thread::sleep(Duration::from_millis(10));
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let after = bundle_ids(&store).await;

    // Restored, it holds what was there when the backup began, maybe some of what
    // came during it, nothing after, and all of it whole.
    let (restored_db, made) = blank_like(&backend, dir.path(), "restored").await;
    let restored_blobs = dir.path().join("restored-blobs");
    let (code, said) = admin(&["restore", under_load.to_str().unwrap()], &restored_db, &restored_blobs);
    assert_eq!(code, 0, "{said}");
    let restored = Store::open(&restored_db, &restored_blobs).await.unwrap();
    let held = bundle_ids(&restored).await;
    assert!(held.is_superset(&before), "the backup lost bundles stored before it began");
    assert!(held.is_subset(&after) && held.len() < after.len(), "{} of {}", held.len(), after.len());
    assert_consistent(&restored, &held).await;
    // A second restore into the same database is refused, and changes nothing.
    let (code, said) = admin(&["restore", under_load.to_str().unwrap()], &restored_db, &restored_blobs);
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("is not empty: a restore goes only into a new database"), "{said}");
    assert_eq!(bundle_ids(&restored).await, held);
    // And a backup into a directory that holds something.
    let (code, said) = admin(&["backup", under_load.to_str().unwrap()], &backend, &blobs);
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("exists and is not an empty directory"), "{said}");
    drop(restored);
    if let Some(db) = made {
        drop_postgres(&std::env::var("TEST_DATABASE_URL").unwrap(), &db).await;
    }

    // Quiet now: a backup restored serves every page and answer byte for byte.
    let quiet = dir.path().join("quiet");
    assert_eq!(admin(&["backup", quiet.to_str().unwrap()], &backend, &blobs).0, 0);
    let (copy_db, made) = blank_like(&backend, dir.path(), "copy").await;
    let copy_blobs = dir.path().join("copy-blobs");
    let (code, said) = admin(&["restore", quiet.to_str().unwrap()], &copy_db, &copy_blobs);
    assert_eq!(code, 0, "{said}");
    let copy = Server::start_args(&["serve"], &copy_db, &copy_blobs, &token);
    let paths = every_path(&store).await;
    assert!(paths.len() > 1000, "{} paths", paths.len());
    for path in &paths {
        let (a, b) = (
            fetch_as(&format!("{}{path}", original.url), "s3cret-token"),
            fetch_as(&format!("{}{path}", copy.url), "s3cret-token"),
        );
        assert_eq!(a.0, 200, "{path}");
        if a != b {
            let at = a.1.iter().zip(&b.1).position(|(x, y)| x != y).unwrap_or(a.1.len().min(b.1.len()));
            let around = |body: &[u8]| {
                String::from_utf8_lossy(&body[at.saturating_sub(150)..(at + 150).min(body.len())])
                    .into_owned()
            };
            panic!(
                "{path} differs after the restore ({} then {}): …{}… against …{}…",
                a.0,
                b.0,
                around(&a.1),
                around(&b.1)
            );
        }
    }
    drop(copy);
    if let Some(db) = made {
        drop_postgres(&std::env::var("TEST_DATABASE_URL").unwrap(), &db).await;
    }
}
