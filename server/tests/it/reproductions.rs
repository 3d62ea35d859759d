//! Reproductions (spec §4d, §4e), end to end: the demo's self-reported submissions get
//! their samples at ingest; `rexbench reproduce` (the real client) re-runs them against
//! a real server on 127.0.0.1 and submits signed reproductions; the board shows k of n,
//! the tampered example shows "different" and a `not-reproduced` finding; after the
//! key's reveal, the sample is recomputed from public data alone by an independent
//! implementation of the rule (Python's hmac), and `rexbench audit` checks it all.
//! Every reproduction that does not fit the submission it names is refused whole.

use std::collections::BTreeSet;

use axum::Router;
use axum::http::StatusCode;
use bundle::{BundleBuilder, Manifest, SecretKey, Tier};
use serde_json::{Value, json};
use store::testing::for_each_backend;

use crate::harness::{get, get_as_maintainer, post_bundle, python, repo, state};

/// `rexbench reproduce` against `url`, signing with `key`, the example tasks' cards
/// built in and their private gold from the repository.
fn reproduce(url: &str, key: &std::path::Path, out: &std::path::Path) -> Vec<runner::reproduce::Report> {
    let tasks = benchmark::builtin::TaskDir::builtin().unwrap();
    reproduce_with(url, key, out, tasks.path())
}

/// The same, with the task cards in `tasks`.
fn reproduce_with(
    url: &str,
    key: &std::path::Path,
    out: &std::path::Path,
    tasks: &std::path::Path,
) -> Vec<runner::reproduce::Report> {
    runner::reproduce::reproduce(&options(url, key, out, tasks)).unwrap()
}

/// `reproduce`'s options for the whole queue at `url`, signing with `key`, the cards in
/// `tasks` and their private gold from the repository, on this machine in the sandbox.
fn options(
    url: &str,
    key: &std::path::Path,
    out: &std::path::Path,
    tasks: &std::path::Path,
) -> runner::reproduce::Options {
    runner::reproduce::Options {
        server: url.to_owned(),
        token: "s3cret-token".into(),
        key: key.to_owned(),
        out: out.to_owned(),
        bundle: None,
        dry_run: false,
        evaluate: runner::evaluate::Options {
            tasks_dir: tasks.to_owned(),
            outputs: Default::default(),
            out: Default::default(),
            gold: Some(repo().join("tasks/examples/gold")),
            codebases: None,
            jobs: 1,
            executor: runner::exec::Executor::Local,
            confinement: runner::sandbox::Confinement::Sandboxed(Default::default()),
            slurm: None,
            builtin_tasks: true,
            heldout: None,
        },
        bundle_limit: bundle::Limits::default().compressed,
    }
}

/// The demo on a fresh store, with a maintainer key whose secret is in `<work>/maintainer.pem`.
async fn demo_with_maintainer(
    backend: &store::Backend,
    blobs: &std::path::Path,
) -> (tempfile::TempDir, std::path::PathBuf, std::sync::Arc<store::Store>, Router) {
    let state = state(backend, blobs).await;
    crate::harness::seed_demo(&state).await;
    let work = tempfile::tempdir().unwrap();
    let maintainer = SecretKey::generate();
    let key = work.path().join("maintainer.pem");
    std::fs::write(&key, maintainer.to_pem()).unwrap();
    state.store.add_key(&maintainer.public_key(), "Maintainers (test)", Tier::Maintainer).await.unwrap();
    let store = state.store.clone();
    (work, key, store, server::build_app(state))
}

pub(crate) async fn served(app: Router) -> (String, tokio::task::JoinHandle<Result<(), std::io::Error>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    (url, tokio::spawn(axum::serve(listener, app).into_future()))
}

fn text(body: &[u8]) -> String {
    String::from_utf8(body.to_vec()).unwrap()
}

/// The rule of spec §4e, written again in Python from the spec's words: the runs of a
/// manifest it samples under `key` by `sizing` (the submission's `sizing`: share,
/// probability, cap), as `task/hint/attempt`.
pub(crate) fn recompute_in_python(
    key: &str,
    bundle_id: &str,
    manifest: &Value,
    sizing: &Value,
) -> BTreeSet<String> {
    const RULE: &str = r#"
import hashlib, hmac, json, math, sys
key, bundle_id = bytes.fromhex(sys.argv[1]), sys.argv[2]
given = json.load(sys.stdin)
manifest, rule = given["manifest"], given["sizing"]
hints = ["none", "hints", "detailed"]
slots = {}
for run in manifest["runs"]:
    if run["outcome"] != "infra_error" and "patch" not in run.get("artifacts", {}):
        continue
    message = "rexbench.sample/v1\n%s\n%s\n%s\n%d" % (bundle_id, run["task"], run["hint"], run["attempt"])
    mac = hmac.new(key, message.encode(), hashlib.sha256).digest()
    kind = {"success": "success", "infra_error": "infra_error"}.get(run["outcome"], "failure")
    slots.setdefault((run["hint"], kind), []).append((mac, "%s/%s/%d" % (run["task"], run["hint"], run["attempt"])))
def miss(n, f, k):
    p = 1.0
    for i in range(min(k, n)):
        if n - f - i <= 0:
            return 0.0
        p *= (n - f - i) / (n - i)
    return p
def fakes(n):
    return 0 if n == 0 else min(n, max(1, math.ceil(rule["share"] * n - 1e-9)))
def catches(n, k):
    return 1.0 - miss(n, fakes(n), k)
def needed(n):
    return next((k for k in range(1, n + 1) if catches(n, k) >= rule["probability"]), n)
successes = [len(slots.get((h, "success"), [])) for h in hints]
want = [needed(n) for n in successes]
size = want
if sum(want) > rule["cap"]:
    size = [0, 0, 0]
    for _ in range(rule["cap"]):
        short = [h for h in range(3) if size[h] < want[h]]
        if not short:
            break
        h = min(short, key=lambda h: (catches(successes[h], size[h]), h))
        size[h] += 1
chosen = []
for (hint, kind), runs in slots.items():
    take = size[hints.index(hint)] if kind == "success" else 1
    chosen += [label for _, label in sorted(runs)[:take]]
print(json.dumps(sorted(chosen)))
"#;
    use std::io::Write as _;
    let mut child = std::process::Command::new(python())
        .args(["-c", RULE, key, bundle_id])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let given = json!({"manifest": manifest, "sizing": sizing});
    child.stdin.take().unwrap().write_all(given.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn the_demo_sample_is_rerun_and_the_board_shows_what_held() {
    for_each_backend(|backend, blobs| async move {
        let (work, key, store, app) = demo_with_maintainer(&backend, &blobs).await;

        // Each self-reported demo submission has its sample: the successes that catch a
        // fifth of fakes (its one success per condition, here) and one other outcome per
        // condition at most; nobody but the maintainers knows which yet.
        let queue = get_as_maintainer(&app, "/api/v1/admin/reproductions").await.json();
        let queued: Vec<&Value> = queue["runs"].as_array().unwrap().iter().collect();
        let agents: BTreeSet<&str> = queued.iter().map(|r| r["agent_id"].as_str().unwrap()).collect();
        assert_eq!(agents, BTreeSet::from(["example-agent", "shortcut-agent", "tampered-agent"]), "{queue}");
        assert_eq!(get(&app, "/api/v1/admin/reproductions").await.status, StatusCode::UNAUTHORIZED);
        let tampered = store.agent("tampered-agent").await.unwrap().unwrap().submissions[0].clone();
        let sample = get(&app, &format!("/api/v1/submissions/{}/sample", tampered.bundle_id)).await.json();
        assert_eq!(
            sample["counts"],
            json!({"sampled": 2, "reproduced": 0, "differed": 0, "heldout": 0, "generalised": 0, "catches": 1.0, "share": 0.2}),
            "{sample}"
        );
        assert_eq!(sample["runs"], json!([]), "the sample is secret until re-run or revealed");
        // The paper's numbers and Harbor's parity runs (a maintainer's) are not sampled.
        let published =
            store.agent("openhands-claude-4.5-opus").await.unwrap().unwrap().submissions[0].clone();
        assert_eq!(published.sample.sampled, 0);

        let (url, server) = served(app.clone()).await;
        // Cards other than the submissions' would give verdicts that do not compare:
        // nothing is re-run, and each submission says why.
        let altered = work.path().join("altered");
        let builtin = benchmark::builtin::TaskDir::builtin().unwrap();
        let copied =
            std::process::Command::new("cp").arg("-r").arg(builtin.path()).arg(&altered).status().unwrap();
        assert!(copied.success());
        std::fs::write(
            altered.join("examples/wordfreq/extra.txt"),
            "a file the submissions' cards did not have",
        )
        .unwrap();
        let (url2, key2, out) = (url.clone(), key.clone(), work.path().join("elsewhere"));
        let refused =
            tokio::task::spawn_blocking(move || reproduce_with(&url2, &key2, &out, &altered)).await.unwrap();
        assert_eq!(refused.len(), 3);
        for r in &refused {
            let why = r.skipped.as_deref().unwrap_or_default();
            assert!(why.contains("was evaluated against the task set"), "{r:?}");
            assert!(r.verdict.is_none());
        }
        assert_eq!(
            store.reproduction_queue(true).await.unwrap().len(),
            queued.len(),
            "nothing was submitted"
        );
        let (url2, key2, out) = (url.clone(), key.clone(), work.path().join("repro"));
        let reports = tokio::task::spawn_blocking(move || reproduce(&url2, &key2, &out)).await.unwrap();
        let of = |agent: &str| reports.iter().find(|r| r.agent_id == agent).unwrap();
        for r in &reports {
            assert!(r.skipped.is_none(), "{r:?}");
            assert!(
                matches!(r.verdict, Some(runner::submit::Verdict::Accepted { status: 201, .. })),
                "{r:?}"
            );
        }
        assert_eq!(of("example-agent").differed(), 0, "{:?}", of("example-agent"));
        assert_eq!(
            of("shortcut-agent").differed(),
            0,
            "the shortcut reproduces: its findings say why to doubt it"
        );
        // Each sampled success re-run on a held-out variant of its task (spec §4l): the
        // example's honest success generalises, the tampered ones do not, and the
        // shortcut's does only where the key chose its honest success, not the one that
        // prints its result line.
        let heldout = |agent: &str| of(agent).heldout.iter().map(|(_, _, o)| *o).collect::<Vec<_>>();
        let honest = heldout("example-agent");
        assert!(!honest.is_empty() && honest.iter().all(|o| *o == bundle::Outcome::Success), "{honest:?}");
        assert!(
            heldout("tampered-agent").iter().all(|o| *o != bundle::Outcome::Success),
            "{:?}",
            of("tampered-agent")
        );
        assert_eq!(heldout("tampered-agent").len(), 2);
        let shortcut_generalised = heldout("shortcut-agent") == [bundle::Outcome::Success];
        let t = of("tampered-agent");
        assert_eq!((t.runs.len(), t.differed()), (2, 2), "{t:?}");
        assert!(t.runs.iter().all(|(_, submitted, rerun)| {
            *submitted == bundle::Outcome::Success && *rerun == bundle::Outcome::WrongResult
        }));

        // The board: k of n per submission, a badge and a filter, the run's verdict with
        // the re-run's own evidence, and a finding.
        let agent = get(&app, "/api/v1/agents/tampered-agent").await.json();
        assert_eq!(
            agent["submissions"][0]["sample"],
            json!({"sampled": 2, "reproduced": 2, "differed": 2, "heldout": 2, "generalised": 0, "catches": 1.0, "share": 0.2})
        );
        let reran = agent["reproduced"].as_array().unwrap();
        assert_eq!(reran.len(), 2);
        let run_id = reran[0]["run_id"].as_i64().unwrap();
        let run = get(&app, &format!("/api/v1/runs/{run_id}")).await.json();
        assert_eq!(run["reproduction"]["outcome"], "wrong_result", "{run}");
        assert_eq!(run["reproduction"]["held"], false);
        if run["task"] == "csvstats" {
            // A private check's re-run: beside its verdict, the maintainers' (spec §4j).
            assert_eq!(run["reproduction"]["outputs_withheld"], true, "{run}");
            assert_eq!(run["reproduction"]["artifacts"], json!([]), "{run}");
        } else {
            assert!(run["reproduction"]["artifacts"].as_array().unwrap().iter().any(|a| a["role"] == "patch"));
        }
        let findings: Vec<&Value> = run["findings"].as_array().unwrap().iter().collect();
        assert!(
            findings.iter().any(|f| f["check"] == "not-reproduced" && f["found_by"] == "server"),
            "{run}"
        );
        let page = text(&get(&app, &format!("/runs/{run_id}")).await.body);
        assert!(page.contains("different: success → wrong result"), "{page}");
        assert!(page.contains("id=\"reproduction\""));
        let board = text(&get(&app, "/?tasks=all&set=").await.body);
        let examples = text(&get(&app, &format!("/?set={}", tampered.task_set_digest)).await.body);
        assert!(examples.contains("reproduced 2 of 2 sampled; 2 different"), "{board}");
        let n = of("example-agent").runs.len();
        assert!(examples.contains(&format!("reproduced {n} of {n} sampled")), "{examples}");
        let held =
            text(&get(&app, &format!("/?set={}&reproduced=held", tampered.task_set_digest)).await.body);
        assert!(
            held.contains("/agents/example-agent\"") && !held.contains("/agents/tampered-agent\""),
            "{held}"
        );
        let api = get(&app, "/api/v1/leaderboard?reproduced=held").await.json();
        let rows: BTreeSet<&str> =
            api["rows"].as_array().unwrap().iter().map(|r| r["agent_id"].as_str().unwrap()).collect();
        let mut held_rows = BTreeSet::from(["example-agent"]);
        if shortcut_generalised {
            held_rows.insert("shortcut-agent");
        }
        assert_eq!(rows, held_rows);
        assert_eq!(get(&app, "/api/v1/leaderboard?reproduced=maybe").await.status, StatusCode::BAD_REQUEST);
        // A tampered success is now flagged: the strict view counts it as a failure.
        let strict = get(&app, "/api/v1/leaderboard?integrity=strict").await.json();
        let row =
            strict["rows"].as_array().unwrap().iter().find(|r| r["agent_id"] == "tampered-agent").unwrap();
        let flagged: i64 =
            row["by_hint"].as_object().unwrap().values().map(|r| r["flagged"].as_i64().unwrap()).sum();
        assert_eq!(flagged, 2, "{row}");
        let changes = get(&app, "/api/v1/changes").await.json();
        assert!(
            changes["changes"].as_array().unwrap().iter().any(|c| c["kind"] == "reproduced"
                && c["agent_id"] == "tampered-agent"
                && c["detail"].as_str().unwrap().contains("2 did not reproduce")),
            "{changes}"
        );
        // What it cost, for the maintainers.
        let queue = get_as_maintainer(&app, "/api/v1/admin/reproductions?status=all").await.json();
        assert_eq!(queue["hours"]["runs"], json!(queued.len()), "{queue}");
        assert!(queue["hours"]["hours"].as_f64().unwrap() > 0.0);
        // A page at a time: the pages, in order, are the whole list; one past the last holds none.
        let total = queue["total"].as_u64().unwrap() as usize;
        assert_eq!(total, queue["runs"].as_array().unwrap().len(), "{queue}");
        assert!(total >= 2, "{queue}");
        let mut paged = Vec::new();
        for page in 1..=total + 1 {
            let one = get_as_maintainer(&app, &format!("/api/v1/admin/reproductions?status=all&per_page=1&page={page}"))
                .await
                .json();
            assert_eq!((one["page"].as_u64(), one["per_page"].as_u64()), (Some(page as u64), Some(1)), "{one}");
            assert_eq!(one["total"].as_u64(), Some(total as u64), "{one}");
            paged.extend(one["runs"].as_array().unwrap().iter().cloned());
        }
        assert_eq!(json!(paged), queue["runs"], "pages 1 to {total} are the list, page {} is empty", total + 1);
        let pending = get_as_maintainer(&app, "/api/v1/admin/reproductions").await.json();
        assert_eq!(pending["runs"], json!([]));
        // Run again, nothing waits.
        let (url2, key2, out) = (url.clone(), key.clone(), work.path().join("repro"));
        let again = tokio::task::spawn_blocking(move || reproduce(&url2, &key2, &out)).await.unwrap();
        assert!(again.is_empty(), "{again:?}");

        // The key's reveal: the sample recomputed from public data alone.
        store.reveal_sampling_key().await.unwrap();
        let sampling = get(&app, "/api/v1/sampling").await.json();
        let epoch = sampling["epochs"].as_array().unwrap().iter().find(|e| e["epoch"] == 1).unwrap().clone();
        let key_hex = epoch["key"].as_str().expect("revealed").to_owned();
        let commitment = bundle::sample::commitment(&hex_bytes(&key_hex));
        assert_eq!(epoch["commitment"], json!(commitment));
        assert!(sampling["epochs"][0]["key"].is_null(), "the next epoch's key stays secret: {sampling}");
        for agent in ["example-agent", "shortcut-agent", "tampered-agent"] {
            let detail = get(&app, &format!("/api/v1/agents/{agent}")).await.json();
            let bundle_id = detail["submissions"][0]["bundle_id"].as_str().unwrap().to_owned();
            let envelope = get(&app, &format!("/api/v1/submissions/{bundle_id}/envelope")).await.json();
            let payload = base64_decode(envelope["payload"].as_str().unwrap());
            let manifest: Value = serde_json::from_slice(&payload).unwrap();
            let sample = get(&app, &format!("/api/v1/submissions/{bundle_id}/sample")).await.json();
            let mine = recompute_in_python(&key_hex, &bundle_id, &manifest, &sample["sizing"]);
            assert_eq!(sample["revealed"], true);
            let shown: BTreeSet<String> = sample["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    format!(
                        "{}/{}/{}",
                        r["task"].as_str().unwrap(),
                        r["hint"].as_str().unwrap(),
                        r["attempt"]
                    )
                })
                .collect();
            assert_eq!(mine, shown, "{agent}");
            assert!(!mine.is_empty());
            let (url2, agent) = (url.clone(), agent.to_owned());
            let audit =
                tokio::task::spawn_blocking(move || runner::audit::audit(&url2, &agent, &[], None).unwrap())
                    .await
                    .unwrap();
            assert!(audit.passed(), "{audit}");
            assert!(audit.checks.iter().any(|c| c.what.contains("are the rule's, recomputed")), "{audit}");
        }
        // A sample the server changed behind its key's back is caught (by a new server:
        // nothing cached).
        server.abort();
        crate::evidence::tamper(
            &backend,
            &format!(
                "UPDATE submissions SET sampled = 3 WHERE bundle_id = '{}'",
                of("example-agent").bundle_id
            ),
        )
        .await;
        let (url, server) = served(server::build_app(crate::harness::state(&backend, &blobs).await)).await;
        let audit = tokio::task::spawn_blocking(move || {
            runner::audit::audit(&url, "example-agent", &[], None).unwrap()
        })
        .await
        .unwrap();
        assert!(!audit.passed(), "{audit}");
        assert!(audit.checks.iter().any(|c| !c.ok && c.what.contains("the rule picks")), "{audit}");
        server.abort();
    })
    .await;
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

pub(crate) fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

/// A reproduction of `runs` (task, hint, attempt, patch bytes, outcome) of `of`.
pub(crate) fn reproduction(
    of: &str,
    agent: &str,
    digest: &str,
    runs: &[(&str, &str, u32, &[u8], &str)],
) -> BundleBuilder {
    let manifest: Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1", "created_at": "2026-11-25T00:00:00Z",
        "benchmark": {"name": "RExBench examples", "version": "1.0", "task_set_digest": digest},
        "runner": {"name": "rexbench-runner", "version": "0.1.0"}, "provenance": {"kind": "evaluated"},
        "agent": {"id": agent, "framework": "ExampleFramework", "model": "Example Model"},
        "runs": [],
        "reproduction": {"of": of, "executor": "local",
            "hardware": {"cpus": 2, "memory_bytes": 1_u64 << 34, "gpus": 0, "description": "a test machine"}},
    }))
    .unwrap();
    let mut b = BundleBuilder::new(manifest);
    for (task, hint, attempt, patch, outcome) in runs {
        let digest = b.add_bytes(patch.to_vec(), "text/x-diff").to_hex();
        let run: bundle::Run = serde_json::from_value(json!({
            "task": task, "hint": hint, "attempt": attempt, "outcome": outcome, "duration_s": 1.0,
            "artifacts": {"patch": digest},
        }))
        .unwrap();
        b.manifest_mut().runs.push(run);
    }
    b
}

/// Where the sample chose a held-out variant for run `run_id` (spec §4l), a held-out
/// re-run on it that generalised, as the reproduction must carry.
pub(crate) fn generalised(b: &mut BundleBuilder, queue: &[store::QueuedRun], run_id: i64) {
    let Some(variant) = queue.iter().find(|q| q.run_id == run_id).and_then(|q| q.heldout_variant.clone())
    else {
        return;
    };
    let m = b.manifest_mut();
    let run = &m.runs[0];
    let heldout = bundle::HeldOut {
        task: run.task.to_string(),
        hint: run.hint,
        attempt: run.attempt,
        variant,
        generalised: true,
    };
    m.reproduction.as_mut().unwrap().heldout.push(heldout);
}

pub(crate) async fn blob(store: &store::Store, hex: &str) -> Vec<u8> {
    use futures::StreamExt as _;
    let mut stream = store.blobs().read(&store::Digest::from_hex(hex).unwrap()).await.unwrap();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        bytes.extend_from_slice(&chunk.unwrap());
    }
    bytes
}

pub(crate) fn signed(b: BundleBuilder, key: &SecretKey) -> Vec<u8> {
    let mut out = Vec::new();
    b.write(&[key], &mut out).unwrap();
    out
}

#[tokio::test]
async fn a_reproduction_that_does_not_fit_its_submission_is_refused_whole() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        crate::harness::seed_demo(&state).await;
        let maintainer = SecretKey::generate();
        let submitter = SecretKey::generate();
        state.store.add_key(&maintainer.public_key(), "Maintainers (test)", Tier::Maintainer).await.unwrap();
        state.store.add_key(&submitter.public_key(), "Someone", Tier::Submitter).await.unwrap();
        // Another task set the board knows, so that a reproduction naming it is held to
        // the submission it names (spec §4d) rather than refused as unknown (§5a).
        let other = bundle::TaskSet {
            digest: "ef".repeat(32),
            name: "RExBench examples".into(),
            version: "1.0".into(),
        };
        state.store.register_task_set(&other, "another release of the examples").await.unwrap();
        let store = state.store.clone();
        let app = server::build_app(state);
        let queue = store.reproduction_queue(true).await.unwrap();
        let first = queue.iter().find(|r| r.agent_id == "example-agent").unwrap().clone();
        let digest = first.task_set_digest.clone();
        let patch = blob(&store, first.patch.as_deref().unwrap()).await;
        let (task, hint, attempt) = (first.task.to_string(), first.hint.to_string(), first.attempt as u32);
        let of = first.bundle_id.clone();
        // A run of the same submission that is not in its sample.
        let sampled: BTreeSet<(String, String, i64)> = queue
            .iter()
            .filter(|r| r.bundle_id == of)
            .map(|r| (r.task.to_string(), r.hint.to_string(), r.attempt))
            .collect();
        let unsampled = store
            .runs_of(&of, None, None)
            .await
            .unwrap()
            .into_iter()
            .find(|r| !sampled.contains(&(r.task.to_string(), r.hint.to_string(), r.attempt)))
            .unwrap();

        let refused = [
            (
                signed(
                    reproduction(
                        &of,
                        "example-agent",
                        &digest,
                        &[(&task, &hint, attempt, &patch, "success")],
                    ),
                    &submitter,
                ),
                StatusCode::FORBIDDEN,
                "reproduction_not_maintainer",
            ),
            (
                signed(
                    reproduction(
                        &"ab".repeat(32),
                        "example-agent",
                        &digest,
                        &[(&task, &hint, attempt, &patch, "success")],
                    ),
                    &maintainer,
                ),
                StatusCode::UNPROCESSABLE_ENTITY,
                "reproduction_unknown_submission",
            ),
            (
                signed(
                    reproduction(
                        &of,
                        "tampered-agent",
                        &digest,
                        &[(&task, &hint, attempt, &patch, "success")],
                    ),
                    &maintainer,
                ),
                StatusCode::UNPROCESSABLE_ENTITY,
                "reproduction_mismatch",
            ),
            (
                signed(
                    reproduction(
                        &of,
                        "example-agent",
                        &"ef".repeat(32),
                        &[(&task, &hint, attempt, &patch, "success")],
                    ),
                    &maintainer,
                ),
                StatusCode::UNPROCESSABLE_ENTITY,
                "reproduction_mismatch",
            ),
            (
                signed(
                    reproduction(
                        &of,
                        "example-agent",
                        &digest,
                        &[(&task, &hint, attempt, b"--- a/x\n+++ b/x\n", "success")],
                    ),
                    &maintainer,
                ),
                StatusCode::UNPROCESSABLE_ENTITY,
                "reproduction_patch_mismatch",
            ),
            (
                signed(
                    reproduction(
                        &of,
                        "example-agent",
                        &digest,
                        &[
                            (&task, &hint, attempt, &patch, "success"),
                            (
                                unsampled.task.as_str(),
                                unsampled.hint.as_str(),
                                unsampled.attempt as u32,
                                &patch,
                                "success",
                            ),
                        ],
                    ),
                    &maintainer,
                ),
                StatusCode::UNPROCESSABLE_ENTITY,
                "reproduction_not_sampled",
            ),
        ];
        for (bytes, status, code) in refused {
            let answer = post_bundle(&app, bytes).await;
            assert_eq!((answer.status, answer.code()), (status, code.to_owned()), "{}", text(&answer.body));
            assert!(answer.json()["error"]["message"].as_str().unwrap().len() > 20);
        }
        // Nothing of them was stored: the run still waits, the counts are untouched.
        assert_eq!(store.reproduction_queue(true).await.unwrap().len(), queue.len());
        assert_eq!(store.submission(&of).await.unwrap().unwrap().sample.reproduced, 0);

        let mut good = reproduction(
            &of,
            "example-agent",
            &digest,
            &[(&task, &hint, attempt, &patch, first.outcome.as_str())],
        );
        // Where the sample chose a held-out variant for it (a success), its re-run there.
        generalised(&mut good, &queue, first.run_id);
        let good = signed(good, &maintainer);
        let stored = post_bundle(&app, good.clone()).await;
        assert_eq!(stored.status, StatusCode::CREATED, "{}", text(&stored.body));
        let id = stored.json()["bundle_id"].as_str().unwrap().to_owned();
        assert_eq!(
            post_bundle(&app, good).await.status,
            StatusCode::OK,
            "the same reproduction again changes nothing"
        );
        // Its envelope is served as a submission's is; where it re-ran a task whose check is
        // private (csvstats), to the maintainers only (spec §4j).
        let envelope = format!("/api/v1/submissions/{id}/envelope");
        let public = get(&app, &envelope).await;
        if task == "csvstats" {
            assert_eq!(
                (public.status, public.code().as_str()),
                (StatusCode::UNAUTHORIZED, "envelope_withheld")
            );
        } else {
            assert_eq!(public.status, StatusCode::OK, "{}", text(&public.body));
        }
        assert_eq!(get_as_maintainer(&app, &envelope).await.status, StatusCode::OK);
        let other =
            if first.outcome == bundle::Outcome::WrongResult { "execution_failed" } else { "wrong_result" };
        let again = signed(
            reproduction(&of, "example-agent", &digest, &[(&task, &hint, attempt, &patch, other)]),
            &maintainer,
        );
        let answer = post_bundle(&app, again).await;
        assert_eq!(
            (answer.status, answer.code()),
            (StatusCode::CONFLICT, "run_already_reproduced".to_owned())
        );
        let submission = store.submission(&of).await.unwrap().unwrap();
        assert_eq!((submission.sample.reproduced, submission.sample.differed), (1, 0));
        // A reproduction is not a submission: the agent's row and history are as they were.
        let agent = store.agent("example-agent").await.unwrap().unwrap();
        assert_eq!(agent.submissions.len(), 1);
        assert!(agent.submissions.iter().all(|s| s.bundle_id != id));
    })
    .await;
}

/// A success whose findings a maintainer dismissed is no longer flagged; when its re-run
/// fails, the `not-reproduced` finding flags it again, and the kept counts (the strict
/// view's) follow. A success still flagged is not counted twice.
#[tokio::test]
async fn a_success_that_did_not_reproduce_is_flagged_once() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        crate::harness::seed_demo(&state).await;
        let maintainer = SecretKey::generate();
        state.store.add_key(&maintainer.public_key(), "Maintainers (test)", Tier::Maintainer).await.unwrap();
        let store = state.store.clone();
        let app = server::build_app(state);
        let flagged = |store: std::sync::Arc<store::Store>, bundle: String| async move {
            let rows = store.leaderboard(&store::LeaderboardFilter::default()).await.unwrap();
            let row = rows.into_iter().find(|r| r.bundle_id == bundle).unwrap();
            row.by_hint.values().map(|r| r.flagged).sum::<i64>()
        };
        // What a caught lie costs the rest of a submission (`lies.rs`): its successes made
        // unverified, each flagged once too.
        let unverified = |store: std::sync::Arc<store::Store>, bundle: String| async move {
            let rows = store.leaderboard(&store::LeaderboardFilter::default()).await.unwrap();
            rows.into_iter().find(|r| r.bundle_id == bundle).unwrap().taint.unverified
        };
        let queue = store.reproduction_queue(true).await.unwrap();
        let success = |agent: &str| {
            queue
                .iter()
                .find(|q| q.agent_id == agent && q.outcome == bundle::Outcome::Success)
                .unwrap()
                .clone()
        };
        // The shortcut agent's success that printed its result line carries findings; it
        // is put in the sample (whichever success the key chose), and a maintainer
        // dismisses its findings: it is no longer flagged.
        let mut shortcut = success("shortcut-agent");
        let mut run = None;
        for r in store.runs_of(&shortcut.bundle_id, None, None).await.unwrap() {
            let detail = store.run(r.id).await.unwrap().unwrap();
            if detail.outcome == bundle::Outcome::Success && !detail.findings.is_empty() {
                run = Some(detail);
            }
        }
        let run = run.expect("the shortcut's flagged success");
        crate::evidence::tamper(
            &backend,
            &format!(
                "INSERT INTO samples (run_id, bundle_id, epoch, sampled_at) SELECT {id}, '{b}', 1, 't' \
                 WHERE NOT EXISTS (SELECT 1 FROM samples WHERE run_id = {id})",
                id = run.id,
                b = shortcut.bundle_id
            ),
        )
        .await;
        shortcut.run_id = run.id;
        shortcut.task = run.task.clone();
        shortcut.hint = run.hint;
        shortcut.attempt = run.attempt;
        shortcut.patch = run.artifacts.iter().find(|a| a.role == "patch").map(|a| a.digest.clone());
        let before = flagged(store.clone(), shortcut.bundle_id.clone()).await;
        for f in &run.findings {
            let id: store::FindingId = f.id.parse().unwrap();
            store.review_finding(&id, store::Review::Dismissed, "a test's review").await.unwrap();
        }
        let dismissed = flagged(store.clone(), shortcut.bundle_id.clone()).await;
        assert_eq!(dismissed, before - 1);
        // Its re-run fails: flagged again, once.
        let patch = blob(&store, shortcut.patch.as_deref().unwrap()).await;
        let (task, hint) = (shortcut.task.to_string(), shortcut.hint.to_string());
        let rerun = [(task.as_str(), hint.as_str(), shortcut.attempt as u32, &patch[..], "wrong_result")];
        let mut b = reproduction(&shortcut.bundle_id, "shortcut-agent", &shortcut.task_set_digest, &rerun);
        generalised(&mut b, &queue, shortcut.run_id);
        assert_eq!(post_bundle(&app, signed(b, &maintainer)).await.status, StatusCode::CREATED);
        let costs = unverified(store.clone(), shortcut.bundle_id.clone()).await;
        assert_eq!(flagged(store.clone(), shortcut.bundle_id.clone()).await, before + costs);
        let run = store.run(shortcut.run_id).await.unwrap().unwrap();
        assert!(run.findings.iter().any(|f| f.check == "not-reproduced" && f.review.is_none()));

        // A success flagged already (by a finding no one dismissed) is not counted twice;
        // one not flagged before is counted once.
        let tampered = success("tampered-agent");
        let was = !store.run(tampered.run_id).await.unwrap().unwrap().findings.is_empty();
        let before = flagged(store.clone(), tampered.bundle_id.clone()).await;
        let patch = blob(&store, tampered.patch.as_deref().unwrap()).await;
        let (task, hint) = (tampered.task.to_string(), tampered.hint.to_string());
        let rerun = [(task.as_str(), hint.as_str(), tampered.attempt as u32, &patch[..], "wrong_result")];
        let mut b = reproduction(&tampered.bundle_id, "tampered-agent", &tampered.task_set_digest, &rerun);
        generalised(&mut b, &queue, tampered.run_id);
        assert_eq!(post_bundle(&app, signed(b, &maintainer)).await.status, StatusCode::CREATED);
        let costs = unverified(store.clone(), tampered.bundle_id.clone()).await;
        assert_eq!(
            flagged(store.clone(), tampered.bundle_id.clone()).await,
            before + i64::from(!was) + costs
        );
    })
    .await;
}

/// Spec §4d: a re-run the maintainers' runner cannot complete is submitted as a try, the
/// run waits for the next, and at the server's number of tries it counts as not
/// reproduced: the real `reproduce`, with a container engine that does not exist (each
/// re-run ends `infra_error`), against a real server on 127.0.0.1.
#[tokio::test]
async fn a_run_that_cannot_be_rerun_counts_as_not_reproduced_after_its_tries() {
    for_each_backend(|backend, blobs| async move {
        let (work, key, store, app) = demo_with_maintainer(&backend, &blobs).await;
        assert_eq!(get(&app, "/api/v1/sampling").await.json()["tries"], json!(3));
        let (url, server) = served(app.clone()).await;
        let of = store.agent("example-agent").await.unwrap().unwrap().submissions[0].bundle_id.clone();
        let sampled: Vec<store::QueuedRun> =
            store.reproduction_queue(true).await.unwrap().into_iter().filter(|r| r.bundle_id == of).collect();
        let success = sampled.iter().find(|r| r.outcome == bundle::Outcome::Success).unwrap().clone();
        let flagged = |store: std::sync::Arc<store::Store>, bundle: String| async move {
            let rows = store.leaderboard(&store::LeaderboardFilter::default()).await.unwrap();
            let row = rows.into_iter().find(|r| r.bundle_id == bundle).unwrap();
            row.by_hint.values().map(|r| r.flagged).sum::<i64>()
        };
        let before = flagged(store.clone(), of.clone()).await;
        let broken = |url: String, key: std::path::PathBuf, out: std::path::PathBuf, of: String| {
            let tasks = benchmark::builtin::TaskDir::builtin().unwrap();
            let mut opts = options(&url, &key, &out, tasks.path());
            opts.bundle = Some(of);
            opts.evaluate.executor = runner::exec::Executor::Container {
                template: vec!["/nonexistent/engine".into(), "run".into(), "{command}".into()],
            };
            runner::reproduce::reproduce(&opts).unwrap()
        };
        let out = work.path().join("repro");
        let mut first_try = None;
        let mut tries_of: Option<BTreeSet<String>> = None;
        for tried in 1..=3_i64 {
            let (u, k, o, b) = (url.clone(), key.clone(), out.clone(), of.clone());
            let reports = tokio::task::spawn_blocking(move || broken(u, k, o, b)).await.unwrap();
            assert_eq!(reports.len(), 1);
            let r = &reports[0];
            assert!(
                matches!(r.verdict, Some(runner::submit::Verdict::Accepted { status: 201, .. })),
                "try {tried}: {r:?}"
            );
            // Every run whose patch applies reaches the engine, and ends infra_error; one
            // whose patch does not apply is judged without it, in the first try.
            assert!(r.runs.iter().all(|(_, _, o)| !o.got_past_applying()), "{r:?}");
            let tried_now: BTreeSet<String> = r.inconclusive.iter().map(|(l, _)| l.clone()).collect();
            let expected = tries_of.get_or_insert_with(|| tried_now.clone());
            assert_eq!(&tried_now, expected, "try {tried}: the same runs are tried again");
            assert!(r.inconclusive.iter().all(|(_, before)| i64::from(*before) == tried - 1), "{r:?}");
            let label = format!("{}/{}/{}", success.task, success.hint, success.attempt);
            assert!(tried_now.contains(&label), "the sampled success is among them: {r:?}");
            // Each try's evidence is kept apart, and the next try starts afresh.
            let kept = r.bundle.as_ref().unwrap();
            assert!(kept.is_file() && kept.starts_with(out.join(&of).join("submitted")), "{kept:?}");
            assert!(!out.join(&of).join("results").exists());
            first_try.get_or_insert_with(|| kept.clone());
            let queue = store.reproduction_queue(true).await.unwrap();
            let waiting: Vec<_> = queue.iter().filter(|q| q.bundle_id == of).collect();
            let submission = store.submission(&of).await.unwrap().unwrap();
            let k = tries_of.as_ref().unwrap().len();
            let n = sampled.len() as i64;
            if tried < 3 {
                assert_eq!(waiting.len(), k, "try {tried}: the runs wait for another try");
                assert!(waiting.iter().all(|q| q.tries == tried), "{waiting:?}");
                assert_eq!((submission.sample.reproduced, submission.sample.differed), (n - k as i64, 0));
                assert_eq!(flagged(store.clone(), of.clone()).await, before);
                let admin =
                    get_as_maintainer(&app, "/api/v1/admin/reproductions?status=pending").await.json();
                assert!(
                    admin["runs"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|q| q["bundle_id"] == of && q["tries"] == tried),
                    "{admin}"
                );
            } else {
                assert!(waiting.is_empty(), "{waiting:?}");
                assert_eq!((submission.sample.reproduced, submission.sample.differed), (n, k as i64));
            }
        }
        // The success that could not be re-run is flagged as not reproduced, saying why.
        let run = store.run(success.run_id).await.unwrap().unwrap();
        let finding = run.findings.iter().find(|f| f.check == "not-reproduced").expect("a finding");
        assert!(
            finding.message.contains("could not complete a re-run of this run's patch in 3 tries"),
            "{finding:?}"
        );
        // So is every sampled success: none of them could be re-run.
        let successes = sampled.iter().filter(|r| r.outcome == bundle::Outcome::Success).count() as i64;
        assert_eq!(flagged(store.clone(), of.clone()).await, before + successes);
        let page = get_as_maintainer(&app, &format!("/runs/{}", success.run_id)).await;
        assert!(text(&page.body).contains("in 3 tries"));
        // A try's evidence (the runner's note of why it could not complete) is the
        // maintainers' to read, by the run it tried.
        let note = first_try
            .unwrap()
            .parent()
            .unwrap()
            .join(format!("results/runs/{}/{}/{}/x-runner.txt", success.task, success.hint, success.attempt));
        let note = std::fs::read(&note).unwrap();
        assert!(text(&note).contains("/nonexistent/engine") || !note.is_empty());
        let digest = bundle::Digest::of(&note).to_hex();
        let answer = get_as_maintainer(&app, &format!("/artifacts/{digest}")).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", text(&answer.body));
        assert_eq!(answer.body, note);
        // Made private, the task's tries are no one's but the maintainers' (and the
        // submitter's): the public is refused the try's evidence.
        let set = axum::http::Request::put(format!("/api/v1/admin/tasks/{}/outputs", success.task))
            .header(axum::http::header::AUTHORIZATION, "Bearer s3cret-token")
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .body(axum::body::Body::from(
                json!({"outputs": "private", "reason": "a private task"}).to_string(),
            ))
            .unwrap();
        let set = crate::harness::send(&app, set).await;
        assert_eq!(set.status, StatusCode::OK, "{}", text(&set.body));
        let refused = get(&app, &format!("/artifacts/{digest}")).await;
        assert_eq!(
            (refused.status, refused.code().as_str()),
            (StatusCode::UNAUTHORIZED, "outputs_private"),
            "{}",
            text(&refused.body)
        );
        assert_eq!(get_as_maintainer(&app, &format!("/artifacts/{digest}")).await.status, StatusCode::OK);
        server.abort();
    })
    .await;
}
