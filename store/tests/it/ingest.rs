//! Ingest: whole or nothing, idempotent, superseding, owned.

use std::time::Duration;

use bundle::SecretKey;
use store::{Hint, Ingested, Integrity, LeaderboardFilter, Outcome, Review, StoreError, Tier};

use crate::harness::{
    blob_bytes, bundle, bundle_ending, bundle_with, count_blobs, count_files, on_each_backend, submit,
};

#[tokio::test]
async fn a_bundle_is_stored_once_with_its_runs_artifacts_and_aggregates() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        let bytes = bundle(&key, "openhands-claude-4-sonnet", "2026-11-20T12:00:00Z", 5, 2);
        let first = submit(&store, &bytes).await.unwrap();
        let Ingested::Stored { bundle_id, superseded, .. } = first else { panic!("{first:?}") };
        assert!(superseded.is_empty());
        // Five patches and one log shared by all runs: six blobs.
        assert_eq!(count_blobs(store.blobs()).await, 6);
        assert_eq!(count_files(store.blobs().staging_dir()), 0, "nothing left staged");

        let again = submit(&store, &bytes).await.unwrap();
        assert_eq!(
            again,
            Ingested::AlreadyStored {
                bundle_id: bundle_id.clone(),
                agent_id: "openhands-claude-4-sonnet".into()
            }
        );

        // Another agent's bundle with the same patches and log adds rows, not blobs.
        let twin = bundle(&key, "openhands-claude-4-opus", "2026-11-20T12:00:00Z", 5, 2);
        assert!(matches!(submit(&store, &twin).await.unwrap(), Ingested::Stored { .. }));
        assert_eq!(count_blobs(store.blobs()).await, 6);
        let board = store.leaderboard(&LeaderboardFilter::default()).await.unwrap();
        assert_eq!(board.len(), 2);
        let board: Vec<_> = board.into_iter().filter(|r| r.agent_id == "openhands-claude-4-sonnet").collect();
        let none = &board[0].by_hint[&Hint::None];
        assert_eq!((none.runs, none.counted, none.successes, none.executed), (5, 5, 2, 5));
        assert_eq!(none.final_success, Some(0.4));
        assert_eq!(none.file_recall, Some(0.5));
        assert_eq!(board[0].tier, Tier::Submitter);

        let runs = store.runs_of(&bundle_id, Some("cogs"), Some(Hint::None)).await.unwrap();
        assert_eq!(runs.len(), 5);
        let run = store.run(runs[0].id).await.unwrap().unwrap();
        assert_eq!(run.outcome, Outcome::Success);
        assert_eq!(run.metrics["acc"], 0.25);
        assert_eq!(run.files_changed, Some(vec!["x.py".to_owned()]));
        assert_eq!(run.artifacts.iter().map(|a| a.role.as_str()).collect::<Vec<_>>(), ["agent_log", "patch"]);
        let log = &run.artifacts[0];
        let blob = blob_bytes(store.blobs(), &bundle::Digest::from_hex(&log.digest).unwrap()).await.unwrap();
        assert_eq!(blob, b"shared log\n");
        assert_eq!(store.artifact(&log.digest).await.unwrap(), Some((11, "text/plain".to_owned())));

        let changes = store.changes(10, None).await.unwrap();
        let kinds: Vec<&str> = changes.iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["accepted", "accepted", "sampling", "key"],
            "the key's registration is a change too"
        );
        // A submitter's bundle is sampled for reproduction with the first sampling key,
        // whose commitment the change log records (spec §4e).
        let epoch = &store.sampling_epochs().await.unwrap()[0];
        assert!(changes.iter().any(|c| c.kind == "sampling" && c.detail.contains(&epoch.commitment)));
        assert!(store.run(999_999).await.unwrap().is_none());
        assert!(store.agent("nobody").await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn the_bundle_that_arrives_last_stands_whatever_its_created_at_says() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        let old = bundle(&key, "aider-o1", "2026-01-01T00:00:00Z", 5, 1);
        let new = bundle(&key, "aider-o1", "2026-06-01T00:00:00Z", 5, 4);
        let Ingested::Stored { bundle_id: old_id, .. } = submit(&store, &old).await.unwrap() else {
            panic!()
        };
        let Ingested::Stored { bundle_id: new_id, superseded, .. } = submit(&store, &new).await.unwrap()
        else {
            panic!()
        };
        assert_eq!(superseded, vec![old_id.clone()]);
        let board = store.leaderboard(&LeaderboardFilter::default()).await.unwrap();
        assert_eq!(board.len(), 1);
        assert_eq!(board[0].bundle_id, new_id);
        assert_eq!(board[0].by_hint[&Hint::None].successes, 4);
        let kinds: Vec<String> = store.changes(10, None).await.unwrap().into_iter().map(|c| c.kind).collect();
        assert_eq!(kinds, ["accepted", "superseded", "accepted", "sampling", "key"]);

        // A bundle dated earlier but arriving later supersedes the current one: its
        // `created_at` is the submitter's claim, and could otherwise order the bundles
        // as they like (spec §6a).
        let dated_earlier = bundle(&key, "aider-o1", "2025-12-01T00:00:00Z", 5, 5);
        let Ingested::Stored { bundle_id: late_id, superseded, .. } =
            submit(&store, &dated_earlier).await.unwrap()
        else {
            panic!()
        };
        assert_eq!(superseded, vec![new_id.clone()]);
        assert_eq!(store.leaderboard(&LeaderboardFilter::default()).await.unwrap()[0].bundle_id, late_id);
        let agent = store.agent("aider-o1").await.unwrap().unwrap();
        assert_eq!(agent.submissions.len(), 3);
        assert_eq!(agent.current.len(), 1);
        assert_eq!(agent.newest_current().unwrap().1["cogs"][&Hint::None].successes, 5);
    })
    .await;
}

#[tokio::test]
async fn agents_belong_to_the_key_that_first_submitted_them() {
    on_each_backend(|store| async move {
        let (a, b, m) = (SecretKey::generate(), SecretKey::generate(), SecretKey::generate());
        store.add_key(&a.public_key(), "Team A", Tier::Submitter).await.unwrap();
        store.add_key(&b.public_key(), "Team B", Tier::Submitter).await.unwrap();
        store.add_key(&m.public_key(), "Maintainers", Tier::Maintainer).await.unwrap();
        submit(&store, &bundle(&a, "agent-a", "2026-01-01T00:00:00Z", 5, 1)).await.unwrap();
        let err = submit(&store, &bundle(&b, "agent-a", "2026-02-01T00:00:00Z", 5, 5)).await.unwrap_err();
        assert!(matches!(&err, StoreError::AgentOwnedByOther { agent, .. } if agent == "agent-a"), "{err}");
        // A maintainer may submit for any agent; it is then shown as verified.
        submit(&store, &bundle(&m, "agent-a", "2026-03-01T00:00:00Z", 5, 3)).await.unwrap();
        let board = store.leaderboard(&LeaderboardFilter::default()).await.unwrap();
        assert_eq!((board[0].tier.as_str(), board[0].by_hint[&Hint::None].successes), ("maintainer", 3));
        let only_verified = LeaderboardFilter { tier: Some(Tier::Maintainer), ..Default::default() };
        assert_eq!(store.leaderboard(&only_verified).await.unwrap().len(), 1);
        let self_reported = LeaderboardFilter { tier: Some(Tier::Submitter), ..Default::default() };
        assert!(store.leaderboard(&self_reported).await.unwrap().is_empty());
    })
    .await;
}

#[tokio::test]
async fn an_agent_is_described_by_its_newest_bundle_and_keeps_its_owner() {
    on_each_backend(|store| async move {
        let (a, b, m) = (SecretKey::generate(), SecretKey::generate(), SecretKey::generate());
        store.add_key(&a.public_key(), "Team A", Tier::Submitter).await.unwrap();
        store.add_key(&b.public_key(), "Team B", Tier::Submitter).await.unwrap();
        store.add_key(&m.public_key(), "Maintainers", Tier::Maintainer).await.unwrap();
        submit(&store, &bundle(&a, "agent-a", "2026-01-01T00:00:00Z", 2, 1)).await.unwrap();
        let first_seen = store.agent("agent-a").await.unwrap().unwrap().first_seen_at;
        let renamed = bundle_with(&m, "agent-a", "2026-02-01T00:00:00Z", 2, 1, |m| {
            m.agent.framework = "SWE-agent".into();
            m.agent.display_name = Some("Agent A, re-run".into());
        });
        submit(&store, &renamed).await.unwrap();
        let agent = store.agent("agent-a").await.unwrap().unwrap();
        assert_eq!((agent.framework.as_str(), agent.display_name.as_str()), ("SWE-agent", "Agent A, re-run"));
        assert_eq!(agent.first_seen_at, first_seen);
        // The maintainer's bundle did not take the agent over: its owner may still submit,
        // another submitter still may not.
        submit(&store, &bundle(&a, "agent-a", "2026-03-01T00:00:00Z", 2, 2)).await.unwrap();
        let err = submit(&store, &bundle(&b, "agent-a", "2026-04-01T00:00:00Z", 2, 2)).await.unwrap_err();
        assert!(matches!(&err, StoreError::AgentOwnedByOther { agent, .. } if agent == "agent-a"), "{err}");
    })
    .await;
}

#[tokio::test]
async fn a_key_revoked_while_a_bundle_was_read_is_refused_and_nothing_is_stored() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        let rec = store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        let keys: Vec<_> = store.trusted_keys().await.unwrap().into_iter().map(|(k, _)| k).collect();
        let bytes = bundle(&key, "agent-a", "2026-01-01T00:00:00Z", 3, 1);
        let mut staging = store.blobs().stage();
        let verified = bundle::Verifier::new(keys, bundle::REXBENCH_TASKS)
            .verify_into(bytes.as_slice(), &mut staging)
            .unwrap();
        store.revoke_key(&rec.keyid).await.unwrap();
        assert!(matches!(
            store.ingest(&verified, staging, &Default::default()).await,
            Err(StoreError::RevokedKey(..))
        ));
        assert!(store.leaderboard(&LeaderboardFilter::default()).await.unwrap().is_empty());
        let kinds: Vec<String> = store.changes(10, None).await.unwrap().into_iter().map(|c| c.kind).collect();
        assert_eq!(kinds, ["key", "key"], "the key's registration and revocation, nothing of the bundle");
        assert_eq!(count_files(store.blobs().staging_dir()), 0, "staged blobs are removed");
        assert_eq!(count_blobs(store.blobs()).await, 0, "no blob was placed");
        assert_eq!(store.collect_garbage(Duration::ZERO).await.unwrap(), 0);
    })
    .await;
}

#[tokio::test]
async fn garbage_is_blobs_without_rows() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        submit(&store, &bundle(&key, "agent-a", "2026-01-01T00:00:00Z", 2, 1)).await.unwrap();
        let orphan = store.blobs().put(b"left by a crash").await.unwrap();
        assert_eq!(
            store.collect_garbage(Duration::from_secs(3600)).await.unwrap(),
            0,
            "too young to collect"
        );
        assert_eq!(store.collect_garbage(Duration::ZERO).await.unwrap(), 1);
        assert!(!store.blobs().contains(&orphan).await.unwrap());
        let run = store
            .runs_of(
                &store.leaderboard(&LeaderboardFilter::default()).await.unwrap()[0].bundle_id,
                None,
                None,
            )
            .await
            .unwrap()[0]
            .id;
        for a in store.run(run).await.unwrap().unwrap().artifacts {
            assert!(store.blobs().contains(&bundle::Digest::from_hex(&a.digest).unwrap()).await.unwrap());
        }
    })
    .await;
}

#[tokio::test]
async fn failures_are_counted_by_outcome_and_error_type() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        submit(&store, &bundle(&key, "agent-a", "2026-01-01T00:00:00Z", 5, 2)).await.unwrap();
        // Superseded results no longer count.
        submit(&store, &bundle(&key, "agent-b", "2025-01-01T00:00:00Z", 5, 0)).await.unwrap();
        submit(&store, &bundle(&key, "agent-b", "2026-01-01T00:00:00Z", 5, 4)).await.unwrap();

        let by_agent = store.failures_by_agent(None).await.unwrap();
        let counts: Vec<_> = by_agent
            .iter()
            .map(|f| (f.agent_id.as_str(), f.outcome.as_str(), f.error_type.clone(), f.runs))
            .collect();
        assert_eq!(counts, [("agent-a", "wrong_result", None, 3), ("agent-b", "wrong_result", None, 1)]);

        let patterns = store.failure_patterns(None).await.unwrap();
        assert_eq!(patterns.len(), 1);
        assert_eq!((patterns[0].task.as_str(), patterns[0].agents, patterns[0].runs), ("cogs", 2, 4));
        assert_eq!(store.failure_patterns(Some("cogs")).await.unwrap(), patterns);
        assert!(store.failure_patterns(Some("othello")).await.unwrap().is_empty());

        assert_eq!(store.failures_by_agent(Some("agent-b")).await.unwrap(), by_agent[1..]);
        let current: Vec<String> = store
            .leaderboard(&LeaderboardFilter::default())
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.bundle_id)
            .collect();
        let runs = store.task_runs("cogs", &current).await.unwrap();
        assert_eq!(runs.len(), 10, "the current submissions' runs only");
        assert_eq!(runs.iter().filter(|r| r.outcome == Outcome::Success).count(), 6);
        assert_eq!(store.task_runs("cogs", &current[..1]).await.unwrap().len(), 5);
        assert!(store.task_runs("othello", &current).await.unwrap().is_empty());
        assert!(store.task_runs("cogs", &[]).await.unwrap().is_empty());
    })
    .await;
}

#[tokio::test]
async fn statistics_follow_the_data() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        let Ingested::Stored { bundle_id: a, .. } =
            submit(&store, &bundle(&key, "agent-a", "2026-01-01T00:00:00Z", 5, 5)).await.unwrap()
        else {
            panic!()
        };
        let first = store.board_stats(Integrity::Reported, None).await.unwrap();
        assert_eq!(first.by_bundle.len(), 1);
        let sa = &first.by_bundle[&a];
        // 5 of 5 on the one task: no uncertainty.
        assert_eq!(sa.final_success.none.map(|i| (i.estimate, i.low, i.high)), Some((1.0, 1.0, 1.0)));
        assert!(
            std::sync::Arc::ptr_eq(&first, &store.board_stats(Integrity::Reported, None).await.unwrap()),
            "cached while nothing changes"
        );

        let Ingested::Stored { bundle_id: b, .. } =
            submit(&store, &bundle(&key, "agent-b", "2026-01-01T00:00:00Z", 5, 0)).await.unwrap()
        else {
            panic!()
        };
        let second = store.board_stats(Integrity::Reported, None).await.unwrap();
        assert_eq!(second.by_bundle.len(), 2, "an ingest invalidates the cache");
        assert_eq!(
            (second.by_bundle[&a].rank.unwrap().to_string(), second.by_bundle[&b].rank.unwrap().to_string()),
            ("1".to_owned(), "2".to_owned())
        );
        assert_eq!((second.by_bundle[&a].group, second.by_bundle[&b].group), (Some(1), Some(2)));

        let c = store.compare_bundles(&a, &b).await.unwrap();
        assert_eq!(c.shared_tasks, 1);
        let d = c.difference.none.unwrap();
        assert_eq!((d.estimate, d.low, d.high), (-1.0, -1.0, -1.0));
        assert!(c.difference.hints.is_none(), "neither ran with hints");
    })
    .await;
}

/// The totals kept over current submissions follow supersession: the bundle that
/// arrives last replaces the current one's counts, whatever its `created_at` says.
#[tokio::test]
async fn totals_over_current_submissions_follow_supersession() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        submit(&store, &bundle(&key, "agent-a", "2026-01-01T00:00:00Z", 5, 2)).await.unwrap();
        submit(&store, &bundle(&key, "agent-b", "2026-01-01T00:00:00Z", 5, 4)).await.unwrap();
        submit(&store, &bundle(&key, "agent-c", "2026-01-01T00:00:00Z", 5, 1)).await.unwrap();
        let before = store.tasks().await.unwrap();
        assert_eq!((before[0].agents, before[0].by_hint[&Hint::None].successes), (3, 7));
        // agent-a's later results replace its earlier ones, and so do agent-b's, though
        // they say they were made earlier.
        submit(&store, &bundle(&key, "agent-a", "2026-02-01T00:00:00Z", 5, 5)).await.unwrap();
        submit(&store, &bundle(&key, "agent-b", "2025-01-01T00:00:00Z", 5, 3)).await.unwrap();

        let tasks = store.tasks().await.unwrap();
        assert_eq!(tasks.len(), 1);
        let rates = tasks[0].by_hint[&Hint::None];
        assert_eq!((tasks[0].agents, rates.runs, rates.counted, rates.successes), (3, 15, 15, 9));
        assert_eq!(rates.final_success, Some(9.0 / 15.0));
        assert!((rates.file_recall.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!((rates.duration_runs, rates.total_duration_s), (15, Some(22.5)));

        let patterns = store.failure_patterns(None).await.unwrap();
        assert_eq!(patterns.len(), 1);
        assert_eq!(
            (patterns[0].agents, patterns[0].runs),
            (2, 6),
            "agent-b's 2 and agent-c's 4 wrong results"
        );

        let overview = store.failure_overview(50).await.unwrap();
        assert_eq!(overview.agents, 2, "agent-a has no failed run now");
        let counts: Vec<_> =
            overview.by_agent.iter().map(|f| (f.agent_id.as_str(), f.outcome.as_str(), f.runs)).collect();
        assert_eq!(counts, [("agent-b", "wrong_result", 2), ("agent-c", "wrong_result", 4)]);
        assert!(overview.error_types.is_empty(), "these runs carry no error type");
        let top = store.failure_overview(1).await.unwrap();
        assert_eq!((top.agents, top.by_agent.len(), top.by_agent[0].agent_id.as_str()), (2, 1, "agent-c"));
    })
    .await;
}

/// The failure explorer's counts kept at ingest equal what the current runs say, after
/// supersession both ways: per error type its runs, its agents and the five agents with
/// most (ties by name), and the agents with most failed runs.
#[tokio::test]
async fn the_failure_counts_kept_at_ingest_equal_the_current_runs() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        let (ok, wrong, failed) = (Outcome::Success, Outcome::WrongResult, Outcome::ExecutionFailed);
        let (module, syntax) = (Some("ModuleNotFoundError"), Some("SyntaxError"));
        let named =
            |name: &'static str| move |m: &mut bundle::Manifest| m.agent.display_name = Some(name.to_owned());
        let submissions: [(&str, &str, &str, Vec<(Outcome, Option<&str>)>); 9] = [
            (
                "agent-a",
                "Zed",
                "2026-01-01T00:00:00Z",
                vec![(failed, module), (failed, module), (failed, module)],
            ),
            // agent-b's first bundle is superseded by the one that arrives after it.
            (
                "agent-b",
                "Bee",
                "2026-03-01T00:00:00Z",
                vec![(failed, syntax), (failed, syntax), (failed, syntax)],
            ),
            ("agent-b", "Bee", "2026-01-01T00:00:00Z", vec![(failed, module), (wrong, None), (ok, None)]),
            ("agent-c", "Cee", "2026-01-01T00:00:00Z", vec![(failed, module), (failed, syntax)]),
            ("agent-d", "Dee", "2026-01-01T00:00:00Z", vec![(failed, module), (wrong, syntax)]),
            ("agent-e", "Eee", "2026-01-01T00:00:00Z", vec![(failed, module), (ok, None)]),
            ("agent-f", "Aye", "2026-01-01T00:00:00Z", vec![(failed, module), (wrong, None), (wrong, None)]),
            ("agent-g", "Gee", "2026-01-01T00:00:00Z", vec![(ok, None)]),
            // agent-a's later results replace its three errors with one.
            ("agent-a", "Zed", "2026-02-01T00:00:00Z", vec![(failed, module), (ok, None)]),
        ];
        for (agent, name, at, endings) in &submissions {
            submit(&store, &bundle_ending(&key, agent, at, endings, named(name))).await.unwrap();
        }

        // What the current runs say, counted here from the runs themselves.
        let mut failed_runs: std::collections::BTreeMap<String, i64> = Default::default();
        let mut by_type: std::collections::BTreeMap<
            String,
            std::collections::BTreeMap<(String, String), i64>,
        > = Default::default();
        for row in store.leaderboard(&LeaderboardFilter::default()).await.unwrap() {
            for run in store.runs_of(&row.bundle_id, None, None).await.unwrap() {
                if run.outcome == Outcome::Success {
                    continue;
                }
                *failed_runs.entry(row.agent_id.clone()).or_default() += 1;
                if let Some(e) = &run.error_type {
                    let agent = (row.display_name.clone(), row.agent_id.clone());
                    *by_type.entry(e.clone()).or_default().entry(agent).or_default() += 1;
                }
            }
        }
        let overview = store.failure_overview(3).await.unwrap();
        assert_eq!(overview.agents, failed_runs.len() as i64);
        assert_eq!(overview.agents, 6, "agent-g never failed");
        let mut most: Vec<(&String, &i64)> = failed_runs.iter().collect();
        most.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let top: std::collections::BTreeSet<&str> =
            overview.by_agent.iter().map(|f| f.agent_id.as_str()).collect();
        assert_eq!(top, most.iter().take(3).map(|(a, _)| a.as_str()).collect());
        let expected: Vec<(String, i64, i64, Vec<(String, i64)>)> = by_type
            .iter()
            .map(|(e, agents)| {
                let mut ranked: Vec<(&(String, String), &i64)> = agents.iter().collect();
                ranked.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
                let leaders = ranked.iter().take(5).map(|((name, _), n)| (name.clone(), **n)).collect();
                (e.clone(), agents.values().sum(), agents.len() as i64, leaders)
            })
            .collect();
        let got: Vec<_> = overview
            .error_types
            .iter()
            .map(|t| (t.error_type.clone(), t.runs, t.agents, t.most.clone()))
            .collect();
        assert_eq!(got, expected);
        assert_eq!(
            got[0].3.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["Aye", "Bee", "Cee", "Dee", "Eee"],
            "six agents tie on one ModuleNotFoundError each; the first five by name lead"
        );
        assert_eq!((got[1].0.as_str(), got[1].1, got[1].2), ("SyntaxError", 2, 2));
    })
    .await;
}

/// A bundle's findings are stored with their run, in order, as the submitter's, and
/// read back with the run exactly as signed.
#[tokio::test]
async fn findings_are_stored_with_their_run_as_the_submitter_s() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        let signed = vec![
            bundle::Finding {
                check: "result-line-literal".into(),
                message: "line 3 prints the result line".into(),
                artifact: Some("patch".into()),
                line: Some(3),
                text_digest: None,
            },
            bundle::Finding {
                check: "implausibly-fast".into(),
                message: "2 s".into(),
                artifact: None,
                line: None,
                text_digest: None,
            },
        ];
        let findings = signed.clone();
        let bytes = bundle_with(&key, "agent-a", "2026-01-01T00:00:00Z", 2, 1, move |m| {
            m.runs[0].findings = findings;
        });
        let Ingested::Stored { bundle_id, .. } = submit(&store, &bytes).await.unwrap() else { panic!() };
        let runs = store.runs_of(&bundle_id, None, None).await.unwrap();
        let flagged = store.run(runs[0].id).await.unwrap().unwrap();
        let read: Vec<_> = flagged
            .findings
            .iter()
            .map(|f| {
                assert_eq!(f.found_by, store::FoundBy::Submitter);
                bundle::Finding {
                    check: f.check.clone(),
                    message: f.message.clone(),
                    artifact: f.artifact.clone(),
                    line: f.line.map(|l| l as u64),
                    text_digest: None,
                }
            })
            .collect();
        assert_eq!(read, signed);
        assert!(store.run(runs[1].id).await.unwrap().unwrap().findings.is_empty());
    })
    .await;
}

/// A finding of `check` on the patch's first line.
fn finding(check: &str) -> bundle::Finding {
    bundle::Finding {
        check: check.into(),
        message: format!("{check} saw it"),
        artifact: Some("patch".into()),
        line: Some(1),
        text_digest: None,
    }
}

/// Ingests `bytes` with the server's own findings `server`; its bundle id.
async fn ingest_found(store: &store::Store, bytes: &[u8], server: &store::ServerFindings) -> String {
    let keys: Vec<_> = store.trusted_keys().await.unwrap().into_iter().map(|(k, _)| k).collect();
    let verifier = bundle::Verifier::new(keys, bundle::REXBENCH_TASKS);
    let mut staging = store.blobs().stage();
    let verified = verifier.verify_into(bytes, &mut staging).unwrap();
    let checks = store::ServerChecks::from(server.clone());
    let Ingested::Stored { bundle_id, .. } = store.ingest(&verified, staging, &checks).await.unwrap() else {
        panic!("stored")
    };
    bundle_id
}

/// Flagged successes (the submitter's findings and the server's) are counted at ingest;
/// the strict view counts them as failures; a review that dismisses a run's last finding
/// unflags it, one that confirms it again flags it, and each is in the change log.
#[tokio::test]
async fn reviews_move_the_flagged_counts_the_strict_view_reads() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        let signed = finding("result-line-literal");
        // Four successes of five: the first flagged by the submitter, the second by
        // the server, the fifth run (a wrong result) by both.
        let bytes = bundle_with(&key, "agent-a", "2026-01-01T00:00:00Z", 5, 4, move |m| {
            m.runs[0].findings = vec![signed.clone()];
            m.runs[4].findings = vec![signed];
        });
        let server: store::ServerFindings =
            [(1, vec![finding("implausibly-fast")]), (4, vec![finding("protected-path-changed")])].into();
        let bundle_id = ingest_found(&store, &bytes, &server).await;
        let rates = |integrity| {
            let store = &store;
            async move {
                let filter = LeaderboardFilter { integrity, ..Default::default() };
                let rows = store.leaderboard(&filter).await.unwrap();
                rows[0].by_hint[&Hint::None]
            }
        };
        let reported = rates(Integrity::Reported).await;
        assert_eq!((reported.successes, reported.flagged, reported.final_success), (4, 2, Some(0.8)));
        let strict = rates(Integrity::Strict).await;
        assert_eq!((strict.successes, strict.flagged, strict.final_success), (2, 2, Some(0.4)));
        let task = || async { store.tasks().await.unwrap()[0].by_hint[&Hint::None].flagged };
        assert_eq!(task().await, 2, "the task's totals count them too");

        let pending = store.findings(store::FindingsFilter::Pending, 100).await.unwrap();
        assert_eq!(pending.len(), 2, "the wrong result's findings wait for no one: {pending:?}");
        let all = store.findings(store::FindingsFilter::All, 100).await.unwrap();
        assert_eq!(all.len(), 4);
        let overview = store.integrity_overview().await.unwrap();
        assert_eq!((overview.flagged, overview.confirmed), (2, 0));
        assert_eq!(
            overview.by_check,
            vec![("implausibly-fast".to_owned(), 1), ("result-line-literal".to_owned(), 1)]
        );
        assert_eq!(
            overview.agents,
            vec![("agent-a".to_owned(), "OpenHands + Claude 4 Sonnet".to_owned(), 2)]
        );

        let runs = store.runs_of(&bundle_id, None, None).await.unwrap();
        let first: store::FindingId = format!("{}-submitter-0", runs[0].id).parse().unwrap();
        let dismissed =
            store.review_finding(&first, Review::Dismissed, "prints a computed value").await.unwrap();
        assert_eq!(dismissed.finding.review.as_ref().unwrap().verdict, Review::Dismissed);
        assert!(!dismissed.finding.flags());
        let strict = rates(Integrity::Strict).await;
        assert_eq!((strict.successes, strict.flagged), (3, 1), "the first success is unflagged");
        assert_eq!(task().await, 1);
        // Reviewing it again, or another finding, moves the counts only when the run's
        // flag changes.
        store.review_finding(&first, Review::Dismissed, "still fine").await.unwrap();
        assert_eq!(rates(Integrity::Strict).await.flagged, 1);
        let second: store::FindingId = format!("{}-server-0", runs[1].id).parse().unwrap();
        store.review_finding(&second, Review::Confirmed, "two seconds for a five-hour run").await.unwrap();
        assert_eq!(rates(Integrity::Strict).await.flagged, 1);
        store.review_finding(&first, Review::Confirmed, "on a second look, it is literal").await.unwrap();
        assert_eq!(
            (rates(Integrity::Strict).await.successes, rates(Integrity::Reported).await.flagged),
            (2, 2)
        );
        let overview = store.integrity_overview().await.unwrap();
        assert_eq!((overview.flagged, overview.confirmed), (2, 2));

        let unknown: store::FindingId = format!("{}-server-5", runs[0].id).parse().unwrap();
        assert!(matches!(
            store.review_finding(&unknown, Review::Dismissed, "x").await,
            Err(StoreError::UnknownFinding(_))
        ));
        let changes = store.changes(10, None).await.unwrap();
        let reviews: Vec<_> = changes.iter().filter(|c| c.kind == "reviewed").collect();
        assert_eq!(reviews.len(), 4, "{changes:?}");
        assert!(reviews.iter().any(|c| c.detail.contains("its success is no longer flagged")), "{reviews:?}");
        assert!(changes.iter().any(
            |c| c.kind == "accepted" && c.detail.contains("2 of its successes carry integrity findings")
        ));
    })
    .await;
}

/// The flagged successes by check are kept at ingest and moved by reviews: they equal,
/// step by step, a recount from the findings themselves, including when a run stays
/// flagged by one check while another's finding about it is dismissed, and they count
/// only current submissions.
#[tokio::test]
async fn the_flagged_counts_by_check_follow_reviews_and_supersession() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        let (x, y) = ("result-line-literal", "implausibly-fast");
        // Runs 0 and 1 succeed; run 0 is flagged by both checks, run 1 by y; run 3, a
        // wrong result, by x (which flags no success).
        let bytes = bundle_with(&key, "agent-a", "2026-01-01T00:00:00Z", 4, 2, move |m| {
            m.runs[0].findings = vec![finding(x)];
            m.runs[3].findings = vec![finding(x)];
        });
        let server: store::ServerFindings = [(0, vec![finding(y)]), (1, vec![finding(y)])].into();
        let bundle_id = ingest_found(&store, &bytes, &server).await;
        // The overview's counts, and the same recounted from every finding.
        let both = || async {
            let overview = store.integrity_overview().await.unwrap();
            let mut runs: std::collections::BTreeMap<String, std::collections::BTreeSet<i64>> =
                Default::default();
            let mut flagged = std::collections::BTreeSet::new();
            for f in store.findings(store::FindingsFilter::All, 1000).await.unwrap() {
                if f.current && f.outcome == Outcome::Success && f.finding.flags() {
                    runs.entry(f.finding.check.clone()).or_default().insert(f.run_id);
                    flagged.insert(f.run_id);
                }
            }
            let mut recount: Vec<(String, i64)> =
                runs.into_iter().map(|(c, r)| (c, r.len() as i64)).collect();
            recount.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            assert_eq!(overview.by_check, recount, "kept by check = recounted");
            assert_eq!(overview.flagged, flagged.len() as i64, "kept flagged = recounted");
            (overview.flagged, overview.by_check)
        };
        let counts =
            |pairs: &[(&str, i64)]| pairs.iter().map(|(c, n)| (c.to_string(), *n)).collect::<Vec<_>>();
        assert_eq!(both().await, (2, counts(&[(y, 2), (x, 1)])));

        let runs = store.runs_of(&bundle_id, None, None).await.unwrap();
        let id =
            |run: usize, by: &str| format!("{}-{by}-0", runs[run].id).parse::<store::FindingId>().unwrap();
        // Run 0 stays flagged by x; y no longer counts it.
        store.review_finding(&id(0, "server"), Review::Dismissed, "a quick task").await.unwrap();
        assert_eq!(both().await, (2, counts(&[(y, 1), (x, 1)])), "ties by name");
        // Its last finding dismissed, run 0 is flagged by nothing.
        store.review_finding(&id(0, "submitter"), Review::Dismissed, "computed").await.unwrap();
        assert_eq!(both().await, (1, counts(&[(y, 1)])));
        // Confirmed again, y flags it once more; a second confirmation moves nothing.
        store.review_finding(&id(0, "server"), Review::Confirmed, "too quick after all").await.unwrap();
        store.review_finding(&id(0, "server"), Review::Confirmed, "still").await.unwrap();
        assert_eq!(both().await, (2, counts(&[(y, 2)])));
        // The wrong result's finding flags no success, reviewed or not.
        store.review_finding(&id(3, "submitter"), Review::Dismissed, "not a success").await.unwrap();
        assert_eq!(both().await, (2, counts(&[(y, 2)])));

        // A newer submission without findings: the old one's flags no longer count.
        submit(&store, &bundle_with(&key, "agent-a", "2026-02-01T00:00:00Z", 4, 2, |_| {})).await.unwrap();
        assert_eq!(both().await, (0, counts(&[])));
    })
    .await;
}

/// The values the leaderboard is ordered by are exactly the rates it shows.
#[tokio::test]
async fn ordering_keys_equal_the_rates_shown() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team A", Tier::Submitter).await.unwrap();
        for (agent, ok) in [("agent-a", 1), ("agent-b", 3), ("agent-c", 0)] {
            let edit = |m: &mut bundle::Manifest| m.agent.model = format!("Model {agent}");
            submit(&store, &bundle_with(&key, agent, "2026-01-01T00:00:00Z", 7, ok, edit)).await.unwrap();
        }
        let filter = LeaderboardFilter::default();
        let rows = store.leaderboard(&filter).await.unwrap();
        let rate = |bundle: &str, f: fn(&store::Rates) -> Option<f64>| {
            rows.iter().find(|r| r.bundle_id == bundle).and_then(|r| r.by_hint.get(&Hint::None)).and_then(f)
        };
        use store::RateKey;
        type Shown = fn(&store::Rates) -> Option<f64>;
        let checks: [(RateKey, Shown); 5] = [
            (RateKey::Final(Hint::None), |r| r.final_success),
            (RateKey::Execution(Hint::None), |r| r.execution_success),
            (RateKey::Recall(Hint::None), |r| r.file_recall),
            (RateKey::Cost(Hint::None), |r| r.mean_cost_usd),
            (RateKey::CostPerSuccess(Hint::None), |r| r.cost_per_success_usd),
        ];
        for (k, f) in checks {
            let keys = store.leaderboard_keys(&filter, Some(k)).await.unwrap();
            assert_eq!(keys.len(), 3);
            for key in &keys {
                assert_eq!(key.value, rate(&key.bundle_id, f), "{k:?} of {}", key.display_name);
            }
        }
        let keys = store.leaderboard_keys(&filter, Some(RateKey::Uplift)).await.unwrap();
        assert!(keys.iter().all(|k| k.value.is_none()), "no runs with hints: no change to show");
        let narrowed = LeaderboardFilter { model: Some("Model agent-b".into()), ..Default::default() };
        let keys = store.leaderboard_keys(&narrowed, None).await.unwrap();
        assert_eq!((keys.len(), keys[0].value), (1, None));
        let rows =
            store.leaderboard_rows(&[keys[0].bundle_id.clone()], Integrity::Reported, None).await.unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].by_hint[&Hint::None].successes, 3);
    })
    .await;
}

/// Absent numbers, then present ones, in statements of the same text: PostgreSQL must
/// take both. (sqlx's `Any` sends an absent `f64` typed as a 4-byte float; a prepared
/// statement kept from it then refused the 8-byte floats of the next bundle: "incorrect
/// binary data format in bind parameter 7".)
#[tokio::test]
async fn absent_numbers_then_present_ones_are_stored() {
    on_each_backend(|store| async move {
        let key = SecretKey::generate();
        store.add_key(&key.public_key(), "Team", Tier::Maintainer).await.unwrap();
        let absent = bundle_with(&key, "agent-absent", "2026-01-01T00:00:00Z", 5, 2, |m| {
            for run in &mut m.runs {
                (run.file_recall, run.duration_s, run.cost_usd) = (None, None, None);
            }
        });
        let present = bundle_with(&key, "agent-present", "2026-01-01T00:00:00Z", 5, 2, |m| {
            for run in &mut m.runs {
                run.cost_usd = Some(0.75);
            }
        });
        for bytes in [&absent, &present, &absent] {
            assert!(matches!(
                submit(&store, bytes).await.unwrap(),
                store::Ingested::Stored { .. } | store::Ingested::AlreadyStored { .. }
            ));
        }
        let runs = store
            .runs_of(
                &store.agent("agent-present").await.unwrap().unwrap().submissions[0].bundle_id,
                None,
                None,
            )
            .await
            .unwrap();
        for run in runs {
            let r = store.run(run.id).await.unwrap().unwrap();
            assert_eq!((r.file_recall, r.duration_s, r.cost_usd), (Some(0.5), Some(1.5), Some(0.75)));
        }
    })
    .await;
}
