//! A caught lie costs the whole submission (issue 75): a submitter with a key of their
//! own sends nine successes (every run of the example tasks); the maintainers, who re-run
//! three per submission, refute one. Every
//! other success not itself re-run and held is unverified (a failure in the strict view,
//! flagged in both), queued for re-run at once, and the submitter's next submission is
//! sampled by the enlarged rule and marked; a re-run that holds lifts one success, and
//! only the dismissal of the last refutation standing lifts the rest.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use bundle::SecretKey;
use serde_json::{Value, json};
use store::testing::for_each_backend;
use store::{LeaderboardRow, Tier};

use crate::harness::{get, get_as_maintainer, post_bundle, repo, send, state};
use crate::reproductions::{blob, generalised, reproduction, signed};

/// The example results with every run a success: each task's one success without hints
/// copied to every attempt of every condition (csvstats asks one, wordfreq two), each
/// with its own log: nine successes, three per condition.
fn nine_successes(dir: &Path) -> PathBuf {
    let results = dir.join("results");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(repo().join("tasks/examples/results"))
        .arg(&results)
        .status()
        .unwrap();
    assert!(copied.success());
    for (task, attempts) in [("csvstats", 1), ("wordfreq", 2)] {
        let one = dir.join(format!("{task}-success"));
        std::fs::rename(results.join(format!("runs/{task}/none/1")), &one).unwrap();
        std::fs::remove_dir_all(results.join(format!("runs/{task}"))).unwrap();
        for hint in ["none", "hints", "detailed"] {
            for a in 1..=attempts {
                let to = results.join(format!("runs/{task}/{hint}/{a}"));
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                let copied = std::process::Command::new("cp").arg("-r").arg(&one).arg(&to).status().unwrap();
                assert!(copied.success());
                std::fs::write(
                    to.join("agent_log.txt"),
                    format!("{task}, {hint} {a}: fixed the parser, then ran it.\n"),
                )
                .unwrap();
                // Each with a patch of its own (the same patch twice in one task is a
                // copied attempt, bundle spec §5b, which the tests below look at apart).
                let mut patch = std::fs::read_to_string(to.join("patch.diff")).unwrap();
                patch.push_str(&format!(
                    "diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n--- /dev/null\n+++ b/notes.txt\n\
                     @@ -0,0 +1 @@\n+{task} {hint} {a}\n"
                ));
                std::fs::write(to.join("patch.diff"), patch).unwrap();
            }
        }
    }
    results
}

fn packed(results: &Path, id: &str, key: &SecretKey, dir: &Path) -> Vec<u8> {
    let agent = bundle::Agent {
        id: id.into(),
        framework: "LyingFramework".into(),
        framework_version: None,
        model: "Example Model".into(),
        model_id: None,
        display_name: None,
        url: None,
    };
    let out = dir.join(format!("{id}.tar.gz"));
    let at = benchmark::pack::timestamp(time::OffsetDateTime::now_utc());
    benchmark::pack::pack(results, agent, &[key], &at, &out).unwrap();
    std::fs::read(&out).unwrap()
}

/// `agent`'s row in the strict view (flagged successes counted as failures).
async fn strict_row(store: &store::Store, agent: &str) -> LeaderboardRow {
    let filter = store::LeaderboardFilter { integrity: store::Integrity::Strict, ..Default::default() };
    let rows = store.leaderboard(&filter).await.unwrap();
    rows.into_iter().find(|r| r.agent_id == agent).unwrap_or_else(|| panic!("no strict row of {agent}"))
}

async fn row(store: &store::Store, agent: &str) -> LeaderboardRow {
    let rows = store.leaderboard(&store::LeaderboardFilter::default()).await.unwrap();
    rows.into_iter().find(|r| r.agent_id == agent).unwrap_or_else(|| panic!("no row of {agent}"))
}

async fn review(app: &Router, finding: &str, verdict: &str, note: &str) {
    let request = Request::post(format!("/api/v1/admin/findings/{finding}/review"))
        .header(header::AUTHORIZATION, "Bearer s3cret-token")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"verdict": verdict, "note": note}).to_string()))
        .unwrap();
    let answer = send(app, request).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", String::from_utf8_lossy(&answer.body));
}

/// The successes of `agent`'s current submission a standing `unverified` flags.
async fn unverified(store: &store::Store, bundle: &str) -> BTreeSet<i64> {
    let mut ids = BTreeSet::new();
    for r in store.runs_of(bundle, None, None).await.unwrap() {
        let detail = store.run(r.id).await.unwrap().unwrap();
        if detail.findings.iter().any(|f| f.check == store::UNVERIFIED && f.review.is_none()) {
            ids.insert(r.id);
        }
    }
    ids
}

#[tokio::test]
async fn a_caught_lie_makes_the_rest_of_the_submission_unverified_until_re_run_or_dismissed() {
    for_each_backend(|backend, blobs| async move {
        let dir = tempfile::tempdir().unwrap();
        let state = state(&backend, &blobs).await;
        // The maintainers declare they re-run three successes per submission.
        let rule = bundle::sample::Rule { cap: 3, ..bundle::sample::Rule::DEFAULT };
        state.store.set_sample_rule(rule).unwrap();
        let (submitter, maintainer) = (SecretKey::generate(), SecretKey::generate());
        state.store.add_key(&submitter.public_key(), "Team Liar", Tier::Submitter).await.unwrap();
        state.store.add_key(&maintainer.public_key(), "Maintainers (test)", Tier::Maintainer).await.unwrap();
        let store = state.store.clone();
        let app = server::build_app(state);
        let results = nine_successes(dir.path());
        let posted = post_bundle(&app, packed(&results, "liar", &submitter, dir.path())).await;
        assert_eq!(posted.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&posted.body));
        let of = posted.json()["bundle_id"].as_str().unwrap().to_owned();

        // Three successes per condition: each would need all three to catch a fifth of
        // fakes, and the cap of three gives one to each; the sample says what that catches.
        let queue = store.reproduction_queue(true).await.unwrap();
        let sampled: Vec<&store::QueuedRun> =
            queue.iter().filter(|q| q.bundle_id == of && q.outcome == bundle::Outcome::Success).collect();
        assert_eq!(sampled.len(), 3, "{queue:?}");
        let conditions: BTreeSet<store::Hint> = sampled.iter().map(|q| q.hint).collect();
        assert_eq!(conditions.len(), 3, "one per condition: {sampled:?}");
        let sample = get(&app, &format!("/api/v1/submissions/{of}/sample")).await.json();
        assert_eq!(sample["sizing"], json!({"share": 0.2, "probability": 0.9, "cap": 3}), "{sample}");
        let promised = bundle::sample::catches(3, 1, 0.2);
        assert!((sample["counts"]["catches"].as_f64().unwrap() - promised).abs() < 1e-12, "{sample}");
        let page = String::from_utf8_lossy(&get(&app, "/agents/liar").await.body).into_owned();
        assert!(page.contains("this sample catches a 20% share of fakes with 33.3% probability"), "{page}");
        let before = row(&store, "liar").await;
        assert_eq!(before.taint, store::Taint::default());
        let successes: i64 = before.by_hint.values().map(|r| r.successes).sum();
        assert_eq!(successes, 9);

        // The maintainers re-run one sampled success: it does not reproduce.
        let refuted = sampled[0];
        let task = refuted.task.to_string();
        let patch = blob(&store, refuted.patch.as_deref().unwrap()).await;
        let rerun =
            [(task.as_str(), refuted.hint.as_str(), refuted.attempt as u32, &patch[..], "wrong_result")];
        let mut b = reproduction(&of, "liar", &refuted.task_set_digest, &rerun);
        generalised(&mut b, &queue, refuted.run_id);
        let stored = post_bundle(&app, signed(b, &maintainer)).await;
        assert_eq!(stored.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&stored.body));

        // Every other success (none re-run yet) is unverified. In the strict view no
        // success stands, and the row says why in both views.
        let all: BTreeSet<i64> = store.runs_of(&of, None, None).await.unwrap().iter().map(|r| r.id).collect();
        let refuted_task: BTreeSet<i64> = [refuted.run_id].into();
        let unverified_task: BTreeSet<i64> = all.difference(&refuted_task).copied().collect();
        assert_eq!(refuted_task.len() + unverified_task.len(), 9);
        assert_eq!(unverified(&store, &of).await, unverified_task);
        let tainted = row(&store, "liar").await;
        let (n_refuted, n_unverified) = (refuted_task.len() as i64, unverified_task.len() as i64);
        assert_eq!(
            (tainted.taint.refuted, tainted.taint.unverified),
            (n_refuted, n_unverified),
            "{:?}",
            tainted.taint
        );
        assert_eq!(tainted.by_hint.values().map(|r| r.flagged).sum::<i64>(), 9, "every success flagged");
        let strict = strict_row(&store, "liar").await;
        assert!(strict.by_hint.values().all(|r| r.successes == 0), "{:?}", strict.by_hint);
        assert_eq!(n_refuted, 1);
        let words = format!("a sampled run did not reproduce: {n_unverified} successes unverified");
        for integrity in ["reported", "strict"] {
            let page = get(&app, &format!("/?set={}&integrity={integrity}", refuted.task_set_digest)).await;
            let page = String::from_utf8_lossy(&page.body).into_owned();
            assert!(page.contains(&words), "{integrity}: {words}: {page}");
        }

        // Escalation: every unverified success not sampled already is queued at once, and
        // anyone can see why (it follows from the public refutation).
        let sampled_other: BTreeSet<i64> =
            sampled.iter().filter(|q| q.run_id != refuted.run_id).map(|q| q.run_id).collect();
        let queue = store.reproduction_queue(true).await.unwrap();
        let waiting: BTreeSet<i64> = queue.iter().filter(|q| q.bundle_id == of).map(|q| q.run_id).collect();
        assert!(unverified_task.is_subset(&waiting), "{waiting:?}");
        let sample = get(&app, &format!("/api/v1/submissions/{of}/sample")).await.json();
        let escalated: Vec<&Value> = sample["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["escalated_by"] == refuted.run_id)
            .collect();
        assert_eq!(escalated.len(), unverified_task.len() - sampled_other.len(), "{sample}");
        assert!(!escalated.is_empty(), "{sample}");
        assert_eq!(sample["counts"]["sampled"], json!(queue_len_of(&store, &of).await), "{sample}");
        let changes = String::from_utf8_lossy(&get(&app, "/api/v1/changes").await.body).into_owned();
        assert!(
            changes.contains(&format!("a caught lie costs the submission: {n_unverified} other success(es)")),
            "{changes}"
        );

        // The submitter's next submission is sampled by the enlarged rule, and marked.
        let again = post_bundle(&app, packed(&results, "liar-again", &submitter, dir.path())).await;
        assert_eq!(again.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&again.body));
        let again_id = again.json()["bundle_id"].as_str().unwrap().to_owned();
        let sample = get(&app, &format!("/api/v1/submissions/{again_id}/sample")).await.json();
        assert_eq!(sample["sizing"], json!({"share": 0.1, "probability": 0.9, "cap": 6}), "{sample}");
        assert_eq!(row(&store, "liar-again").await.taint.submitter_refuted.as_deref(), Some("liar"));
        // It sends the same patches: the refutation is carried to it, and so is its cost,
        // its other successes unverified (a resubmission is no way out).
        let carried = row(&store, "liar-again").await.taint;
        assert!(carried.refuted >= 1 && carried.unverified >= 1, "{carried:?}");
        assert_eq!(carried.unverified as usize, unverified(&store, &again_id).await.len());
        let changes = String::from_utf8_lossy(&get(&app, "/api/v1/changes").await.body).into_owned();
        assert!(changes.contains(&format!("it carries a refutation from {of}")), "{changes}");
        let page = String::from_utf8_lossy(&get(&app, "/agents/liar-again").await.body).into_owned();
        assert!(page.contains("a submission of this submitter"), "{page}");

        // A re-run of one unverified success that holds lifts it alone.
        let one = *unverified_task.iter().next().unwrap();
        let run = store.run(one).await.unwrap().unwrap();
        let digest = run.artifacts.iter().find(|a| a.role == "patch").unwrap().digest.clone();
        let patch = blob(&store, &digest).await;
        let rerun = [(run.task.as_str(), run.hint.as_str(), run.attempt as u32, &patch[..], "success")];
        let mut b = reproduction(&of, "liar", &refuted.task_set_digest, &rerun);
        generalised(&mut b, &store.reproduction_queue(true).await.unwrap(), one);
        let held = post_bundle(&app, signed(b, &maintainer)).await;
        assert_eq!(held.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&held.body));
        let left = unverified(&store, &of).await;
        assert_eq!(left.len(), unverified_task.len() - 1, "{left:?}");
        assert!(!left.contains(&one));
        let run = store.run(one).await.unwrap().unwrap();
        let lifted = run.findings.iter().find(|f| f.check == store::UNVERIFIED).unwrap();
        assert!(
            lifted.review.as_ref().is_some_and(|r| r.note.contains("re-run by the maintainers and held"))
        );
        let others: Vec<&store::RunFinding> = run.findings.iter().filter(|f| f.review.is_none()).collect();
        assert_eq!(
            row(&store, "liar").await.by_hint.values().map(|r| r.flagged).sum::<i64>(),
            8,
            "{others:?}"
        );

        // Dismissing the refutation lifts every unverified success, with the note, and
        // the submitter's mark.
        let mut refutations = Vec::new();
        for id in &refuted_task {
            for f in store.run(*id).await.unwrap().unwrap().findings {
                if f.check == store::NOT_REPRODUCED && f.review.is_none() {
                    refutations.push(f.id.clone());
                }
            }
        }
        assert!(refutations.len() >= refuted_task.len(), "{refutations:?}");
        let (last, rest) = refutations.split_last().unwrap();
        for id in rest {
            review(&app, id, "dismissed", "the harness's fault, not the agent's").await;
        }
        // While one stands, a success whose own refutation was dismissed is no more
        // verified than the rest: it is unverified now.
        let dismissed: BTreeSet<i64> =
            rest.iter().map(|id| id.split('-').next().unwrap().parse().unwrap()).collect();
        let expected: BTreeSet<i64> = left.union(&dismissed).copied().collect();
        assert_eq!(unverified(&store, &of).await, expected, "one refutation still stands");
        review(&app, last, "dismissed", "the harness's fault, not the agent's").await;
        assert!(unverified(&store, &of).await.is_empty());
        // The copies carried to the resubmission are findings of their own, each for a
        // maintainer to review: until they are, the submitter's mark stays.
        let liar = row(&store, "liar").await;
        assert_eq!(liar.taint.submitter_refuted.as_deref(), Some("liar-again"), "{:?}", liar.taint);
        for r in store.runs_of(&again_id, None, None).await.unwrap() {
            for f in store.run(r.id).await.unwrap().unwrap().findings {
                if f.check == store::NOT_REPRODUCED && f.review.is_none() {
                    review(&app, &f.id, "dismissed", "the harness's fault, not the agent's").await;
                }
            }
        }
        assert!(unverified(&store, &again_id).await.is_empty());
        let cleared = row(&store, "liar").await;
        assert_eq!(cleared.taint, store::Taint::default(), "{:?}", cleared.taint);
        assert_eq!(cleared.by_hint.values().map(|r| r.flagged).sum::<i64>(), 0);
        assert_eq!(row(&store, "liar-again").await.taint, store::Taint::default());
        let run = store.run(*left.iter().next().unwrap()).await.unwrap().unwrap();
        let lifted = run.findings.iter().find(|f| f.check == store::UNVERIFIED).unwrap();
        assert!(
            lifted.review.as_ref().is_some_and(|r| r.note.contains("the harness's fault")),
            "{:?}",
            lifted.review
        );
        let changes =
            String::from_utf8_lossy(&get_as_maintainer(&app, "/api/v1/changes").await.body).into_owned();
        assert!(changes.contains("no refutation of the submission stands"), "{changes}");
    })
    .await;
}

/// How many of `bundle`'s runs are in its sample.
async fn queue_len_of(store: &store::Store, bundle: &str) -> usize {
    let pending = store.reproduction_queue(true).await.unwrap();
    let done = store.reproduction_queue(false).await.unwrap();
    let mut ids: BTreeSet<i64> = BTreeSet::new();
    ids.extend(pending.iter().chain(&done).filter(|q| q.bundle_id == bundle).map(|q| q.run_id));
    ids.len()
}

/// Rewrites each run's patch of `results` as `first(task, hint, attempt)` then `patch`
/// (the task's original, or the run's own), and its log with `log`'s words: a copy that
/// `git apply` takes for the same change, with a record of its own.
fn rewrite(results: &Path, original: bool, first: impl Fn(&str, &str, u32) -> String, log: &str) {
    for (task, attempts) in [("csvstats", 1), ("wordfreq", 2)] {
        let example = repo().join(format!("tasks/examples/results/runs/{task}/none/1/patch.diff"));
        for hint in ["none", "hints", "detailed"] {
            for a in 1..=attempts {
                let run = results.join(format!("runs/{task}/{hint}/{a}"));
                let patch =
                    std::fs::read_to_string(if original { example.clone() } else { run.join("patch.diff") })
                        .unwrap();
                std::fs::write(run.join("patch.diff"), format!("{}\n{patch}", first(task, hint, a))).unwrap();
                std::fs::write(run.join("agent_log.txt"), format!("{log}: {task}, {hint} {a}.\n")).unwrap();
            }
        }
    }
}

/// Issue 75, attack 4: one success copied into every attempt, each copy behind its own
/// first line (`attempt N`, which `git apply` skips) and with its own log. The copies
/// are one patch (bundle spec §5b): each success carries the server's `copied-attempt`
/// finding, so none stands in the strict view, while the honest example row keeps its
/// figures.
#[tokio::test]
async fn copies_of_one_patch_written_differently_are_copied_attempts() {
    for_each_backend(|backend, blobs| async move {
        let dir = tempfile::tempdir().unwrap();
        let state = state(&backend, &blobs).await;
        let submitter = SecretKey::generate();
        state.store.add_key(&submitter.public_key(), "Team Copier", Tier::Submitter).await.unwrap();
        let store = state.store.clone();
        let app = server::build_app(state);
        let results = nine_successes(dir.path());
        rewrite(&results, true, |_, hint, a| format!("attempt {a} ({hint})"), "worked on it");
        let posted = post_bundle(&app, packed(&results, "copier", &submitter, dir.path())).await;
        assert_eq!(posted.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&posted.body));
        let of = posted.json()["bundle_id"].as_str().unwrap().to_owned();
        let runs = store.runs_of(&of, None, None).await.unwrap();
        assert_eq!(runs.len(), 9);
        for r in &runs {
            let detail = store.run(r.id).await.unwrap().unwrap();
            let copied = detail
                .findings
                .iter()
                .find(|f| f.check == "copied-attempt" && f.found_by == store::FoundBy::Server);
            let copied =
                copied.unwrap_or_else(|| panic!("run {} is not flagged copied: {:?}", r.id, detail.findings));
            assert!(copied.message.contains("changes the same lines"), "{}", copied.message);
        }
        let copier = row(&store, "copier").await;
        assert_eq!(copier.by_hint.values().map(|r| r.flagged).sum::<i64>(), 9);
        let strict = strict_row(&store, "copier").await;
        assert!(strict.by_hint.values().all(|r| r.successes == 0), "{:?}", strict.by_hint);
        let same = store.same_patches(&of).await.unwrap();
        assert!(same.values().all(|(most, of)| most == of), "{same:?}");

        // Each attempt with a patch of its own is no copy.
        std::fs::create_dir_all(dir.path().join("honest")).unwrap();
        let honest = nine_successes(&dir.path().join("honest"));
        let posted = post_bundle(&app, packed(&honest, "distinct", &submitter, dir.path())).await;
        assert_eq!(posted.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&posted.body));
        assert_eq!(row(&store, "distinct").await.by_hint.values().map(|r| r.flagged).sum::<i64>(), 0);
    })
    .await;
}

/// Issue 75, attack 3: a refutation reaches back. Agent `early` stores nine successes,
/// each with its own patch; a second key's agent `later` sends the same patches, each
/// behind a junk first line, with records of its own. When the maintainers' re-run of a
/// sampled success of `later` does not reproduce, `early`'s success with the same patch
/// (the same changes, however written) gets the finding too, and `early`'s submission
/// is tainted: in the strict view none of its successes stands, and its change log says
/// why.
#[tokio::test]
async fn a_refutation_reaches_back_to_the_same_patch_stored_earlier_under_another_key() {
    for_each_backend(|backend, blobs| async move {
        let dir = tempfile::tempdir().unwrap();
        let state = state(&backend, &blobs).await;
        let (first, second, maintainer) =
            (SecretKey::generate(), SecretKey::generate(), SecretKey::generate());
        state.store.add_key(&first.public_key(), "Team Early", Tier::Submitter).await.unwrap();
        state.store.add_key(&second.public_key(), "Team Later", Tier::Submitter).await.unwrap();
        state.store.add_key(&maintainer.public_key(), "Maintainers (test)", Tier::Maintainer).await.unwrap();
        let store = state.store.clone();
        let app = server::build_app(state);
        let early_dir = dir.path().join("early");
        std::fs::create_dir_all(&early_dir).unwrap();
        let results = nine_successes(&early_dir);
        let posted = post_bundle(&app, packed(&results, "early", &first, dir.path())).await;
        assert_eq!(posted.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&posted.body));
        let early = posted.json()["bundle_id"].as_str().unwrap().to_owned();
        rewrite(&results, false, |_, _, _| "From: a colleague".to_owned(), "another record");
        let posted = post_bundle(&app, packed(&results, "later", &second, dir.path())).await;
        assert_eq!(posted.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&posted.body));
        let later = posted.json()["bundle_id"].as_str().unwrap().to_owned();
        assert_eq!(row(&store, "early").await.by_hint.values().map(|r| r.flagged).sum::<i64>(), 0);

        let queue = store.reproduction_queue(true).await.unwrap();
        let refuted = queue
            .iter()
            .find(|q| q.bundle_id == later && q.outcome == bundle::Outcome::Success)
            .expect("a sampled success");
        let patch = blob(&store, refuted.patch.as_deref().unwrap()).await;
        let rerun = [(
            refuted.task.as_str(),
            refuted.hint.as_str(),
            refuted.attempt as u32,
            &patch[..],
            "wrong_result",
        )];
        let mut b = reproduction(&later, "later", &refuted.task_set_digest, &rerun);
        generalised(&mut b, &queue, refuted.run_id);
        let stored = post_bundle(&app, signed(b, &maintainer)).await;
        assert_eq!(stored.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&stored.body));

        // `early`'s twin of the refuted run: same task, hint and attempt (the same patch).
        let detail = twin(&store, &early, refuted).await;
        let reached = detail.findings.iter().find(|f| f.check == store::NOT_REPRODUCED);
        let reached = reached.unwrap_or_else(|| panic!("not reached: {:?}", detail.findings));
        assert!(
            reached.message.contains("written otherwise") && reached.message.contains(&later),
            "{}",
            reached.message
        );
        let tainted = row(&store, "early").await;
        assert_eq!((tainted.taint.refuted, tainted.taint.unverified), (1, 8), "{:?}", tainted.taint);
        let strict = strict_row(&store, "early").await;
        assert!(strict.by_hint.values().all(|r| r.successes == 0), "{:?}", strict.by_hint);
        let changes = get(&app, "/api/v1/changes").await.json();
        let said = changes["changes"].as_array().or_else(|| changes.as_array()).unwrap().iter().any(|c| {
            c["bundle_id"] == early.as_str() && c["detail"].as_str().unwrap().contains("refuted a patch")
        });
        assert!(said, "{changes}");

        // A review's (issue 75): a third key sends the refuted patches again after the
        // refutation, rewritten (other header prefixes, as `-p1` applies them alike).
        // Its twin run carries the refutation at ingest, and the submission is tainted
        // in turn, as `early` was.
        let third = SecretKey::generate();
        store.add_key(&third.public_key(), "Team Third", Tier::Submitter).await.unwrap();
        rewrite(&results, false, |_, _, _| "Subject: again".to_owned(), "a third record");
        for entry in walk_patches(&results) {
            let text = std::fs::read_to_string(&entry).unwrap();
            std::fs::write(&entry, text.replace("--- a/", "--- x/").replace("+++ b/", "+++ y/")).unwrap();
        }
        let posted = post_bundle(&app, packed(&results, "third", &third, dir.path())).await;
        assert_eq!(posted.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&posted.body));
        let third_id = posted.json()["bundle_id"].as_str().unwrap().to_owned();
        let detail = twin(&store, &third_id, refuted).await;
        assert!(
            detail.findings.iter().any(|f| f.check == store::NOT_REPRODUCED),
            "a rewritten copy escaped the refutation: {:?}",
            detail.findings
        );
    })
    .await;
}

/// The run of `bundle` with the task, hint and attempt of the queued run `of`.
async fn twin(store: &store::Store, bundle: &str, of: &store::QueuedRun) -> store::RunDetail {
    let run = store
        .runs_of(bundle, Some(of.task.as_str()), None)
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.hint == of.hint && r.attempt == of.attempt)
        .unwrap();
    store.run(run.id).await.unwrap().unwrap()
}

/// Every `patch.diff` under `results`.
fn walk_patches(results: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![results.to_owned()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.file_name().is_some_and(|n| n == "patch.diff") {
                out.push(path);
            }
        }
    }
    out
}
