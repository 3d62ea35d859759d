//! Synthetic results at any scale, for benchmarks: `rexbench-server synth --agents N`
//! makes N agents × 12 tasks × 3 hint conditions × 5 runs, each run with a patch of a
//! few KB of its own and a log drawn from a pool of realistic sizes (logs repeat across
//! runs, as content addressing then stores them once), the first attempt of each task
//! and condition with an agent trajectory from a pool too, signs them with a maintainer key
//! it registers, and ingests them through the same path as the API: each checked as the
//! API checks it, several recorded in one transaction (`--together`; the same rows as one
//! by one, which `--together 1` does). The same seed always gives the same results.

use anyhow::Context as _;
use futures::StreamExt as _;

use bundle::{BundleBuilder, Hint, Manifest, Outcome, SecretKey};
use rand_pcg::Pcg64Mcg;
use rand_pcg::rand_core::Rng;
use serde_json::json;
use store::Tier;

use crate::AppState;

const FRAMEWORKS: [&str; 5] = ["OpenHands", "aider", "SWE-agent", "Codex CLI", "Claude Code"];
const MODELS: [&str; 8] = [
    "Claude 4.5 Opus",
    "Claude 4 Sonnet",
    "OpenAI GPT-5",
    "OpenAI o4-mini",
    "DeepSeek-R1",
    "Gemini 2.5 Pro",
    "Qwen3 Coder",
    "Llama 4 Maverick",
];
const ERRORS: [(Outcome, Option<&str>); 6] = [
    (Outcome::WrongResult, None),
    (Outcome::ExecutionFailed, Some("ValueError")),
    (Outcome::ExecutionFailed, Some("FileNotFoundError")),
    (Outcome::ExecutionFailed, Some("cannot access")),
    (Outcome::Timeout, Some("Execution Timeout")),
    (Outcome::PatchFailed, Some("patch failed")),
];
/// Distinct logs: 64, of 4 KB to 128 KB.
const LOGS: usize = 64;
/// Distinct trajectories: 16, of 8 to 128 steps.
const TRAJECTORIES: usize = 16;

struct Random(Pcg64Mcg);

impl Random {
    fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n as u64) as usize
    }
}

/// An agent's trajectory (Harbor's ATIF) of `8 << (i % 5)` steps: reading, editing and
/// running, with observations a few KB long and an error near the end.
fn trajectory(i: usize) -> Vec<u8> {
    let steps: Vec<serde_json::Value> = (1..=8usize << (i % 5))
        .map(|n| {
            let observation = if n % 7 == 6 {
                "Traceback (most recent call last):\n  File \"train.py\", line 42\nValueError: shapes do not match".to_owned()
            } else {
                format!("[epoch {n}] loss {:.4}\n", 1.0 / n as f64).repeat(40)
            };
            json!({
                "step_id": n, "source": "agent", "message": format!("Step {n}: running the experiment again."),
                "tool_calls": [{"tool_call_id": format!("call_{n}"), "function_name": "bash",
                                "arguments": {"command": format!("python train.py --seed {n}")}}],
                "observation": {"results": [{"source_call_id": format!("call_{n}"), "content": observation}]},
                "metrics": {"prompt_tokens": 1000 + 40 * n, "completion_tokens": 80, "cost_usd": 0.004},
            })
        })
        .collect();
    serde_json::to_vec(&json!({
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "synthetic", "version": "1", "model_name": "synthetic-model"},
        "steps": steps,
    }))
    .expect("JSON values serialise")
}

fn log(i: usize) -> Vec<u8> {
    let lines = 64 << (i % 6);
    let mut out = String::with_capacity(lines * 64);
    for l in 0..lines {
        out.push_str(&format!("[epoch {l:>5}] step {i}: loss {:.4} acc {:.4}\n", 1.0 / (l + 1) as f64, 0.5));
    }
    if i.is_multiple_of(3) {
        out.push_str("Traceback (most recent call last):\n  File \"train.py\", line 42\nValueError: shapes do not match\n");
    }
    out.into_bytes()
}

/// Makes and ingests `agents` agents' results, recording `together` bundles in each
/// transaction (1: each on its own, exactly as the API would; the rows are the same
/// either way); returns how many bundles were stored.
pub async fn synth(app: &AppState, agents: usize, seed: u64, together: usize) -> anyhow::Result<usize> {
    let together = together.max(1);
    let cards = app.tasks.cards()?;
    let benchmark = cards.values().filter(|c| bundle::REXBENCH_TASKS.contains(&c.id.as_str()));
    let digest = benchmark::taskset::task_set_digest(benchmark)?.to_hex();
    let key = std::sync::Arc::new(SecretKey::generate());
    app.store.add_key(&key.public_key(), "Synthetic data (maintainer key)", Tier::Maintainer).await?;
    let logs: std::sync::Arc<Vec<Vec<u8>>> = std::sync::Arc::new((0..LOGS).map(log).collect());
    let trajectories: std::sync::Arc<Vec<Vec<u8>>> =
        std::sync::Arc::new((0..TRAJECTORIES).map(trajectory).collect());
    let started = std::time::Instant::now();
    // The next bundles are made and checked (verified, staged, the server's findings
    // made) on other cores while one is recorded: the two halves run side by side in
    // this task, joined by a channel as deep as there are cores. They are recorded in
    // order, so the same seed still gives the same rows.
    let ahead = std::thread::available_parallelism().map_or(2, |n| n.get());
    let (send, mut receive) = tokio::sync::mpsc::channel(ahead + together);
    let make = async move {
        let mut made = futures::stream::iter(0..agents)
            .map(|a| {
                let (key, digest, logs, trajectories) =
                    (key.clone(), digest.clone(), logs.clone(), trajectories.clone());
                async move {
                    let bytes = tokio::task::spawn_blocking(move || {
                        agent_bundle(a, seed, &digest, &logs, &trajectories, &key)
                    })
                    .await??;
                    crate::ingest::check(app, std::io::Cursor::new(bytes)).await.map_err(anyhow::Error::from)
                }
            })
            .buffered(ahead);
        while let Some(checked) = made.next().await {
            let failed = checked.is_err();
            if send.send(checked).await.is_err() || failed {
                break;
            }
        }
        anyhow::Ok(())
    };
    let record = async {
        let (mut stored, mut waited, mut recording, mut done) = (0, 0.0, 0.0, 0);
        while done < agents {
            let at = std::time::Instant::now();
            let mut group = Vec::with_capacity(together);
            while group.len() < together.min(agents - done) {
                let Some(checked) = receive.recv().await else { break };
                group.push(checked.with_context(|| format!("synthetic agent {}", done + group.len()))?);
            }
            anyhow::ensure!(!group.is_empty(), "the synthetic bundles ended after {done} of {agents}");
            waited += at.elapsed().as_secs_f64();
            let at = std::time::Instant::now();
            let first = done;
            done += group.len();
            let results = crate::ingest::record_together(app, group)
                .await
                .with_context(|| format!("synthetic agents {first} to {}", done - 1))?;
            recording += at.elapsed().as_secs_f64();
            stored += results.iter().filter(|r| matches!(r, store::Ingested::Stored { .. })).count();
            if done / 100 > first / 100 || done == agents {
                tracing::info!(
                    agents = done,
                    seconds = started.elapsed().as_secs_f64(),
                    waited_for_bundles = waited,
                    recording,
                    "synthetic results ingested"
                );
            }
        }
        anyhow::Ok(stored)
    };
    // Where recording fails (a check's error included), the making stops with it.
    let ((), stored) = tokio::try_join!(make, record)?;
    Ok(stored)
}

/// The tasks of RExBench whose check is on their card.
const PUBLIC_CHECKS: [&str; 2] = ["cogs", "othello"];

fn agent_bundle(
    a: usize,
    seed: u64,
    digest: &str,
    logs: &[Vec<u8>],
    trajectories: &[Vec<u8>],
    key: &SecretKey,
) -> anyhow::Result<Vec<u8>> {
    let mut rng = Random(Pcg64Mcg::new(u128::from(seed) << 64 | a as u128 | 1));
    let framework = FRAMEWORKS[a % FRAMEWORKS.len()];
    let model = MODELS[(a / FRAMEWORKS.len()) % MODELS.len()];
    let manifest: Manifest = serde_json::from_value(json!({
        "schema": "rexbench.manifest/v1",
        "created_at": "2026-11-01T00:00:00Z",
        "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": digest},
        "runner": {"name": "rexbench-runner", "version": env!("CARGO_PKG_VERSION")},
        "provenance": {"kind": "evaluated"},
        "agent": {
            "id": format!("synthetic-{a:05}"),
            "framework": framework,
            "model": model,
            "display_name": format!("{framework} + {model} (synthetic {a})"),
        },
        "runs": [],
    }))?;
    let skill = rng.unit() * 0.6;
    let mut b = BundleBuilder::new(manifest).fast();
    for (t, task) in bundle::REXBENCH_TASKS.iter().enumerate() {
        let ease = 0.3 + 0.7 * ((t * 7 + 3) % 12) as f64 / 11.0;
        for (h, hint) in Hint::ALL.iter().enumerate() {
            for attempt in 1..=5u32 {
                let p = (skill * ease + 0.08 * h as f64).min(0.95);
                let (outcome, error_type) =
                    if rng.unit() < p { (Outcome::Success, None) } else { ERRORS[rng.below(ERRORS.len())] };
                let patch = format!(
                    "diff --git a/src/{task}.py b/src/{task}.py\n--- a/src/{task}.py\n+++ b/src/{task}.py\n@@ -1,3 +1,3 @@\n {}\n-old = {a}\n+new = {attempt}{h}\n",
                    "context line\n ".repeat(40 + rng.below(80)).trim_end()
                );
                let patch = b.add_bytes(patch.into_bytes(), "text/x-diff");
                let log = b.add_bytes(logs[rng.below(logs.len())].clone(), "text/plain");
                let mut artifacts: std::collections::BTreeMap<String, String> =
                    [("patch".to_owned(), patch.to_hex()), ("stdout".to_owned(), log.to_hex())].into();
                // A success carries the agent's own record, each its own (spec §5a).
                if outcome == Outcome::Success {
                    let record = format!("synthetic-{a:05}: {task}, {hint}, attempt {attempt}: done\n");
                    let record = b.add_bytes(record.into_bytes(), "text/plain");
                    artifacts.insert("agent_log".to_owned(), record.to_hex());
                }
                let mut traced = None;
                if attempt == 1 {
                    let bytes = &trajectories[rng.below(trajectories.len())];
                    traced = benchmark::cost::atif_tokens(bytes);
                    let t = b.add_bytes(bytes.clone(), "application/json");
                    artifacts.insert("x-trajectory".to_owned(), t.to_hex());
                }
                // Drawn in the order they always were.
                let file_recall = (rng.unit() * 4.0).round() / 4.0;
                let duration_s = 60.0 + rng.unit() * 3600.0;
                let cost_usd = (rng.unit() * 500.0).round() / 100.0;
                // Tokens as the trajectory counts them where there is one, else in
                // proportion to the stated cost (no draw of their own): most stated costs
                // are then off their price, as a board would see of made-up numbers.
                b.manifest_mut().runs.push(bundle::Run {
                    task: (*task).into(),
                    hint: *hint,
                    attempt,
                    outcome,
                    error_type: error_type.map(str::to_owned),
                    file_recall: Some(file_recall),
                    files_changed: Some(vec![format!("src/{task}.py")]),
                    duration_s: Some(duration_s),
                    cost_usd: Some(cost_usd),
                    tokens: traced.or(Some(bundle::Tokens {
                        input: (cost_usd * 150_000.0) as u64,
                        output: (cost_usd * 10_000.0) as u64,
                        cache_read: 0,
                        cache_write: 0,
                    })),
                    task_folder: None,
                    // Drawn for every run (so the rest of the draws are as they were), and
                    // stated for the two tasks whose check is public: the others' would be
                    // their gold, sealed into an artifact of their own (spec §4j), which a
                    // synthetic board at 10,000 agents does without.
                    metrics: Some(("accuracy".to_owned(), (rng.unit() * 1000.0).round() / 1000.0))
                        .filter(|_| PUBLIC_CHECKS.contains(task))
                        .into_iter()
                        .collect(),
                    metrics_digest: None,
                    artifacts,
                    findings: Vec::new(),
                    regraded: None,
                });
            }
        }
    }
    let mut out = Vec::new();
    b.write(&[key], &mut out)?;
    Ok(out)
}
