//! Databases made by earlier versions upgrade in place, keeping every row.

use std::path::Path;

use sqlx::{AnyConnection, Connection, Executor};
use store::{Backend, Store};

fn url(backend: &Backend) -> String {
    match backend {
        Backend::Sqlite { path } => format!("sqlite://{}?mode=rwc", path.display()),
        Backend::Postgres { url } => url.clone(),
    }
}

/// Applies the migrations up to `version` as an earlier release would have.
async fn migrate_to(backend: &Backend, version: i64, conn: &mut AnyConnection) {
    let dialect = if matches!(backend, Backend::Sqlite { .. }) { "sqlite" } else { "postgres" };
    let all = Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations").join(dialect);
    let earlier = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&all).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name[..4].parse::<i64>().unwrap() <= version {
            std::fs::copy(&path, earlier.path().join(name)).unwrap();
        }
    }
    sqlx::migrate::Migrator::new(earlier.path()).await.unwrap().run(conn).await.unwrap();
}

#[tokio::test]
async fn a_database_from_before_imported_results_upgrades_in_place() {
    store::testing::for_each_backend(|backend, blobs| async move {
        sqlx::any::install_default_drivers();
        let sqlite = matches!(backend, Backend::Sqlite { .. });
        let blob = if sqlite { "x'00'" } else { "'\\x00'::bytea" };
        // Before version 8, each submission kept its envelope in its row.
        let row = |id: &str, provenance: &str, superseded: &str| {
            format!(
                "INSERT INTO submissions VALUES ('{id}', 'a', 'k', 'submitter', '{provenance}', NULL, 'RExBench', '1.0', \
                 'd', 'rexbench-runner', '0.1.0', 't', 't', {superseded}, 1, 0, {blob})"
            )
        };
        let row_now = |id: &str, provenance: &str| {
            // The columns since: … sample_rule, sample_catches, sample_share, refuted, unverified
            // (0026), regrades_flipped (0027).
            row(id, provenance, "NULL").replace(
                &format!(", {blob})"),
                ", 'rexbench', NULL, 1, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, NULL, 0, 0, 0)",
            )
        };
        let mut conn = AnyConnection::connect(&url(&backend)).await.unwrap();
        migrate_to(&backend, 4, &mut conn).await;
        conn.execute("INSERT INTO keys VALUES ('k', 'pem', 'Team', 'submitter', 't', NULL)").await.unwrap();
        conn.execute("INSERT INTO agents VALUES ('a', 'k', 'OpenHands', NULL, 'M', NULL, 'A', NULL, 't')").await.unwrap();
        conn.execute(row("new", "evaluated", "NULL").as_str()).await.unwrap();
        conn.execute(row("old", "published", "'new'").as_str()).await.unwrap();
        conn.execute("INSERT INTO runs (bundle_id, task, hint, attempt, outcome, metrics) VALUES ('new', 'cogs', 'none', 1, 'success', '{}')")
            .await
            .unwrap();
        assert!(conn.execute(row("x", "imported", "NULL").as_str()).await.is_err(), "version 4 refuses `imported`");
        conn.close().await.unwrap();

        let store = Store::open(&backend, &blobs).await.unwrap();
        assert_eq!(store.keys().await.unwrap().len(), 1);
        drop(store);

        let mut conn = AnyConnection::connect(&url(&backend)).await.unwrap();
        if sqlite {
            conn.execute("PRAGMA foreign_keys = ON").await.unwrap();
        }
        let kept: Vec<(String, String, Option<String>)> =
            sqlx::query_as("SELECT bundle_id, provenance, superseded_by FROM submissions ORDER BY bundle_id")
                .fetch_all(&mut conn)
                .await
                .unwrap();
        assert_eq!(
            kept,
            [("new".into(), "evaluated".into(), None), ("old".into(), "published".into(), Some("new".into()))]
        );
        // Each old row's harness is read as the manifest would say it.
        let harness: Vec<(String, String)> =
            sqlx::query_as("SELECT bundle_id, harness FROM submissions ORDER BY bundle_id").fetch_all(&mut conn).await.unwrap();
        assert_eq!(harness, [("new".into(), "rexbench".into()), ("old".into(), "rexbench-original".into())]);
        conn.execute(row_now("imp", "imported").as_str()).await.unwrap();
        assert!(conn.execute(row_now("y", "guessed").as_str()).await.is_err(), "the check still holds");
        let orphan = "INSERT INTO runs (bundle_id, task, hint, attempt, outcome, metrics) VALUES ('gone', 'cogs', 'none', 1, 'success', '{}')";
        assert!(conn.execute(orphan).await.is_err(), "runs still refer to submissions");
        let runs: (i64,) = sqlx::query_as("SELECT count(*) FROM runs").fetch_one(&mut conn).await.unwrap();
        assert_eq!(runs.0, 1);
    })
    .await;
}

/// Version 6 keeps cost and duration sums; a database from before has them computed
/// from its runs, so older submissions show their cost as new ones do.
#[tokio::test]
async fn costs_of_runs_stored_before_are_summed_on_upgrade() {
    store::testing::for_each_backend(|backend, blobs| async move {
        sqlx::any::install_default_drivers();
        let sqlite = matches!(backend, Backend::Sqlite { .. });
        let blob = if sqlite { "x'00'" } else { "'\\x00'::bytea" };
        let mut conn = AnyConnection::connect(&url(&backend)).await.unwrap();
        migrate_to(&backend, 5, &mut conn).await;
        conn.execute("INSERT INTO keys VALUES ('k', 'pem', 'Team', 'submitter', 't', NULL)").await.unwrap();
        conn.execute("INSERT INTO agents VALUES ('a', 'k', 'OpenHands', NULL, 'M', NULL, 'A', NULL, 't')").await.unwrap();
        conn.execute(
            format!(
                "INSERT INTO submissions VALUES ('b', 'a', 'k', 'submitter', 'evaluated', NULL, 'RExBench', '1.0', \
                 'd', 'rexbench-runner', '0.1.0', 't', 't', NULL, 3, 0, {blob})"
            )
            .as_str(),
        )
        .await
        .unwrap();
        for (attempt, outcome, cost, duration) in
            [(1, "success", "0.5", "10.0"), (2, "wrong_result", "1.5", "NULL"), (3, "infra_error", "NULL", "30.0")]
        {
            conn.execute(
                format!(
                    "INSERT INTO runs (bundle_id, task, hint, attempt, outcome, cost_usd, duration_s, metrics) \
                     VALUES ('b', 'cogs', 'none', {attempt}, '{outcome}', {cost}, {duration}, '{{}}')"
                )
                .as_str(),
            )
            .await
            .unwrap();
        }
        conn.execute("INSERT INTO aggregates VALUES ('b', 'cogs', 'none', 3, 2, 1, 2, 0, 0)").await.unwrap();
        conn.execute("INSERT INTO totals VALUES ('b', 'none', 3, 2, 1, 2, 0, 0)").await.unwrap();
        conn.close().await.unwrap();

        let store = Store::open(&backend, &blobs).await.unwrap();
        let agent = store.agent("a").await.unwrap().unwrap();
        let rates = agent.current["b"][&store::TaskId::new("cogs")][&store::Hint::None];
        assert_eq!((rates.cost_runs, rates.total_cost_usd, rates.mean_cost_usd), (2, Some(2.0), Some(1.0)));
        assert_eq!((rates.duration_runs, rates.mean_duration_s), (2, Some(20.0)));
        let board = store.leaderboard(&Default::default()).await.unwrap();
        let total = board[0].by_hint[&store::Hint::None];
        assert_eq!((total.cost_runs, total.total_cost_usd, total.total_duration_s), (2, Some(2.0), Some(40.0)));
        assert_eq!(total.final_success, Some(0.5), "the other counts are kept");
    })
    .await;
}

/// Version 8 moves the envelopes out of `submissions` and keeps the failure explorer's
/// counts over current submissions: a database from before keeps every envelope byte
/// for byte and has those counts made from its current submissions only.
#[tokio::test]
async fn envelopes_move_out_and_failure_counts_are_made_on_upgrade() {
    store::testing::for_each_backend(|backend, blobs| async move {
        sqlx::any::install_default_drivers();
        let sqlite = matches!(backend, Backend::Sqlite { .. });
        let blob = |hex: &str| if sqlite { format!("x'{hex}'") } else { format!("'\\x{hex}'::bytea") };
        let mut conn = AnyConnection::connect(&url(&backend)).await.unwrap();
        migrate_to(&backend, 7, &mut conn).await;
        conn.execute("INSERT INTO keys VALUES ('k', 'pem', 'Team', 'submitter', 't', NULL)").await.unwrap();
        conn.execute("INSERT INTO agents VALUES ('a', 'k', 'OpenHands', NULL, 'M', NULL, 'A', NULL, 't')").await.unwrap();
        for (id, superseded, envelope) in [("new", "NULL", "00ff01"), ("old", "'new'", "02")] {
            conn.execute(
                format!(
                    "INSERT INTO submissions VALUES ('{id}', 'a', 'k', 'submitter', 'evaluated', NULL, 'RExBench', '1.0', \
                     'd', 'rexbench-runner', '0.1.0', 't', 't', {superseded}, 3, 0, {})",
                    blob(envelope)
                )
                .as_str(),
            )
            .await
            .unwrap();
        }
        for (id, outcome, error, runs) in [
            ("new", "success", "", 1),
            ("new", "execution_failed", "SyntaxError", 2),
            ("old", "execution_failed", "KeyError", 3),
        ] {
            conn.execute(
                format!("INSERT INTO failure_totals VALUES ('{id}', '{outcome}', '{error}', {runs})").as_str(),
            )
            .await
            .unwrap();
        }
        conn.close().await.unwrap();

        let store = Store::open(&backend, &blobs).await.unwrap();
        assert_eq!(store.envelope("new").await.unwrap(), Some(vec![0x00, 0xff, 0x01]));
        assert_eq!(store.envelope("old").await.unwrap(), Some(vec![0x02]));
        let overview = store.failure_overview(10).await.unwrap();
        assert_eq!(overview.agents, 1);
        let types: Vec<_> = overview.error_types.iter().map(|t| (t.error_type.as_str(), t.runs, t.agents)).collect();
        assert_eq!(types, [("SyntaxError", 2, 1)], "the superseded submission's KeyError is not current");
        assert_eq!(overview.error_types[0].most, [("A".to_owned(), 2)]);
        drop(store);

        let mut conn = AnyConnection::connect(&url(&backend)).await.unwrap();
        let with_envelope = "SELECT envelope FROM submissions";
        assert!(sqlx::query(with_envelope).fetch_all(&mut conn).await.is_err(), "the column is gone");
    })
    .await;
}

/// Findings stored before reviews existed flag their successes once upgraded, in the
/// counts the strict view reads; the change log keeps its entries and takes reviews.
#[tokio::test]
async fn findings_stored_before_flag_their_successes_on_upgrade() {
    store::testing::for_each_backend(|backend, blobs| async move {
        sqlx::any::install_default_drivers();
        let sqlite = matches!(backend, Backend::Sqlite { .. });
        let blob = if sqlite { "x'00'" } else { "'\\x00'::bytea" };
        let mut conn = AnyConnection::connect(&url(&backend)).await.unwrap();
        migrate_to(&backend, 9, &mut conn).await;
        let sums = "runs, counted, successes, executed, recall_sum, recall_runs, cost_sum, cost_runs, \
                    duration_sum, duration_runs";
        for sql in [
            "INSERT INTO keys VALUES ('k', 'pem', 'Team', 'submitter', 't', NULL)".to_owned(),
            "INSERT INTO agents VALUES ('a', 'k', 'OpenHands', NULL, 'M', NULL, 'A', NULL, 't')".to_owned(),
            "INSERT INTO submissions VALUES ('b', 'a', 'k', 'submitter', 'evaluated', NULL, 'RExBench', '1.0', \
             'd', 'rexbench-runner', '0.1.0', 't', 't', NULL, 3, 0)"
                .to_owned(),
            format!("INSERT INTO envelopes (bundle_id, envelope) VALUES ('b', {blob})"),
            "INSERT INTO runs (id, bundle_id, task, hint, attempt, outcome, metrics) VALUES \
             (1, 'b', 'cogs', 'none', 1, 'success', '{}'), (2, 'b', 'cogs', 'none', 2, 'success', '{}'), \
             (3, 'b', 'cogs', 'none', 3, 'wrong_result', '{}')"
                .to_owned(),
            "INSERT INTO findings (run_id, found_by, position, check_name, message) VALUES \
             (1, 'submitter', 0, 'result-line-literal', 'm'), (1, 'server', 0, 'implausibly-fast', 'm'), \
             (3, 'submitter', 0, 'result-line-literal', 'm')"
                .to_owned(),
            format!("INSERT INTO aggregates (bundle_id, task, hint, {sums}) VALUES ('b', 'cogs', 'none', 3, 3, 2, 3, 0, 0, 0, 0, 0, 0)"),
            format!("INSERT INTO totals (bundle_id, hint, {sums}) VALUES ('b', 'none', 3, 3, 2, 3, 0, 0, 0, 0, 0, 0)"),
            format!("INSERT INTO task_totals (task, hint, bundles, {sums}) VALUES ('cogs', 'none', 1, 3, 3, 2, 3, 0, 0, 0, 0, 0, 0)"),
            "INSERT INTO changes (at, kind, bundle_id, agent_id, detail) VALUES ('t', 'accepted', 'b', 'a', 'first')"
                .to_owned(),
        ] {
            conn.execute(sql.as_str()).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        conn.close().await.unwrap();

        let store = Store::open(&backend, &blobs).await.unwrap();
        let strict = store::LeaderboardFilter { integrity: store::Integrity::Strict, ..Default::default() };
        let rates = store.leaderboard(&strict).await.unwrap()[0].by_hint[&store::Hint::None];
        assert_eq!((rates.successes, rates.flagged), (1, 1), "one success of two is flagged");
        assert_eq!(store.tasks().await.unwrap()[0].by_hint[&store::Hint::None].flagged, 1);
        let id: store::FindingId = "1-server-0".parse().unwrap();
        store.review_finding(&id, store::Review::Dismissed, "ran for hours").await.unwrap();
        let changes = store.changes(10, None).await.unwrap();
        assert_eq!(changes.len(), 2);
        assert_eq!((changes[1].seq, changes[1].detail.as_str()), (1, "first"), "{changes:?}");
        assert_eq!(changes[0].kind, "reviewed");
        let rates = store.leaderboard(&strict).await.unwrap()[0].by_hint[&store::Hint::None];
        assert_eq!(rates.flagged, 1, "the submitter's finding still flags run 1");
    })
    .await;
}

/// Version 16 counts coverage in valid attempts and holds each cell to the attempts
/// asked (spec §4f): a database from before has its coverage recounted from the runs
/// its results counted, a task whose runs all ended `infra_error` no longer covered, and
/// each cell of an evaluated submission held to RExBench's 5 (published ones exempt).
#[tokio::test]
async fn coverage_is_recounted_in_valid_attempts_on_upgrade() {
    store::testing::for_each_backend(|backend, blobs| async move {
        sqlx::any::install_default_drivers();
        let mut conn = AnyConnection::connect(&url(&backend)).await.unwrap();
        migrate_to(&backend, 15, &mut conn).await;
        conn.execute("INSERT INTO keys VALUES ('k', 'pem', 'Team', 'submitter', 't', NULL)").await.unwrap();
        conn.execute("INSERT INTO agents VALUES ('a', 'k', 'OpenHands', NULL, 'M', NULL, 'A', NULL, 't')").await.unwrap();
        conn.execute("INSERT INTO agents VALUES ('p', 'k', 'OpenHands', NULL, 'M', NULL, 'P', NULL, 't')").await.unwrap();
        for (id, agent, provenance) in [("ev", "a", "evaluated"), ("pub", "p", "published")] {
            conn.execute(
                format!(
                    "INSERT INTO submissions (bundle_id, agent_id, keyid, tier, provenance, provenance_source, \
                     benchmark_name, benchmark_version, task_set_digest, runner_name, runner_version, created_at, \
                     received_at, run_count, artifact_bytes) VALUES ('{id}', '{agent}', 'k', 'submitter', '{provenance}', \
                     'a source', 'RExBench', '1.0', 'd', 'rexbench-runner', '0.1.0', 't', 't', 10, 0)"
                )
                .as_str(),
            )
            .await
            .unwrap();
            // cogs: 5 runs, 2 of them infra_error; othello: 5 runs, all infra_error.
            for (task, counted) in [("cogs", 3), ("othello", 0)] {
                conn.execute(
                    format!(
                        "INSERT INTO aggregates (bundle_id, task, hint, runs, counted, successes, executed, recall_sum, \
                         recall_runs) VALUES ('{id}', '{task}', 'none', 5, {counted}, 0, {counted}, 0, 0)"
                    )
                    .as_str(),
                )
                .await
                .unwrap();
            }
            conn.execute(
                format!(
                    "INSERT INTO totals (bundle_id, hint, runs, counted, successes, executed, recall_sum, recall_runs, \
                     tasks, fewest_runs, most_runs) VALUES ('{id}', 'none', 10, 3, 0, 3, 0, 0, 2, 5, 5)"
                )
                .as_str(),
            )
            .await
            .unwrap();
        }
        conn.close().await.unwrap();

        let store = Store::open(&backend, &blobs).await.unwrap();
        let board = store.leaderboard(&Default::default()).await.unwrap();
        let coverage = |id: &str| board.iter().find(|r| r.bundle_id == id).unwrap().coverage[&store::Hint::None];
        let ev = coverage("ev");
        assert_eq!((ev.tasks, ev.fewest_attempts, ev.most_attempts, ev.short_tasks), (1, 3, 3, 2));
        let published = coverage("pub");
        assert_eq!((published.tasks, published.short_tasks), (1, 0));
        let row = board.iter().find(|r| r.bundle_id == "ev").unwrap();
        assert_eq!(row.by_hint[&store::Hint::None].infra_errors, 7);
        assert!(!row.has_every_attempt());
        // The attempts the cards ask, once the server knows them, recount the cells.
        let asked = [(store::TaskId::new("cogs"), 3), (store::TaskId::new("othello"), 5)].into_iter().collect();
        let changed = store.know_attempts(&asked).await.unwrap();
        assert_eq!(changed.len(), 2, "no rule was kept before");
        let board = store.leaderboard(&Default::default()).await.unwrap();
        let ev = board.iter().find(|r| r.bundle_id == "ev").unwrap().coverage[&store::Hint::None];
        assert_eq!(ev.short_tasks, 1, "othello only: cogs has the 3 it asks");
        assert!(store.know_attempts(&asked).await.unwrap().is_empty(), "nothing changed since");
    })
    .await;
}

/// SQLite migrates with foreign keys off (a table is rebuilt to change a constraint), so
/// every reference is checked once a migration ran, and a broken one stops every start
/// until it is repaired. A passed check is recorded, so that a start with nothing to
/// migrate does not read every reference again (16 s at 10,000 agents).
#[tokio::test]
async fn a_reference_broken_before_a_migration_stops_every_start_until_it_is_repaired() {
    store::testing::on_sqlite(|backend, blobs| async move {
        sqlx::any::install_default_drivers();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations/sqlite");
        let versions: Vec<i64> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy()[..4].parse::<i64>().unwrap())
            .collect();
        let last = *versions.iter().max().unwrap();
        let mut conn = AnyConnection::connect(&url(&backend)).await.unwrap();
        migrate_to(&backend, last - 1, &mut conn).await;
        conn.execute("PRAGMA foreign_keys = OFF").await.unwrap();
        conn.execute(
            "INSERT INTO agents VALUES ('a', 'no-such-key', 'OpenHands', NULL, 'M', NULL, 'A', NULL, 't')",
        )
        .await
        .unwrap();
        conn.close().await.unwrap();
        for start in ["the start that migrates", "the next start"] {
            let refused = Store::open(&backend, &blobs).await.expect_err(start);
            assert!(matches!(refused, store::StoreError::BrokenReferences(1)), "{start}: {refused}");
        }

        let mut conn = AnyConnection::connect(&url(&backend)).await.unwrap();
        conn.execute("DELETE FROM agents WHERE id = 'a'").await.unwrap();
        conn.close().await.unwrap();
        let store = Store::open(&backend, &blobs).await.expect("repaired, it starts");
        drop(store);
        let mut conn = AnyConnection::connect(&url(&backend)).await.unwrap();
        let row = sqlx::query("PRAGMA user_version").fetch_one(&mut conn).await.unwrap();
        let recorded: i64 = sqlx::Row::try_get(&row, 0).unwrap();
        assert_eq!(
            recorded,
            versions.len() as i64,
            "the passed check is recorded with the migrations it saw"
        );
    })
    .await;
}
