//! `serve --demo`: on an empty database, the data that makes a first start show a real
//! leaderboard — the paper's published results, Harbor's parity experiment, and the example tasks as the runner
//! evaluated them, with their patches and logs.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use anyhow::Context as _;

use bundle::SecretKey;
use store::Tier;

use crate::ingest::ingest;
use crate::state::AppState;

/// The demo submitter's key's owner, as the registry names it.
pub const SUBMITTER: &str = "Example team (demo key)";
/// The owner of the demo's pending key request.
pub const NEWCOMER: &str = "Newcomer lab (demo request)";

/// What the demo added.
#[derive(Debug)]
pub struct Seeded {
    pub published: usize,
    pub evaluated: usize,
}

/// Seeds the demo data unless the database already holds submissions (`Ok(None)`).
pub async fn seed_demo(app: &AppState) -> anyhow::Result<Option<Seeded>> {
    if app.store.holds_submissions().await? {
        return Ok(None);
    }
    let work = tempfile::tempdir()?;
    let maintainers = SecretKey::generate();
    let submitter = SecretKey::generate();
    let store = &app.store;
    store.add_key(&maintainers.public_key(), "RExBench maintainers (demo key)", Tier::Maintainer).await?;
    store.add_key(&submitter.public_key(), SUBMITTER, Tier::Submitter).await?;

    // The paper's per-task results, as the maintainers would import them.
    let cards = app.tasks.cards()?;
    let benchmark = cards.values().filter(|c| bundle::REXBENCH_TASKS.contains(&c.id.as_str()));
    let digest = benchmark::taskset::task_set_digest(benchmark)?;
    let published = work.path().join("published");
    let imported = benchmark::published::import(digest, &[&maintainers], "2026-04-21T00:00:00Z", &published)?;
    // Harbor's parity experiment: the same agent under RExBench's harness and Harbor's.
    let parity = benchmark::parity::import(digest, &[&maintainers], "2026-04-21T00:00:00Z", &published)?;
    for bundle in imported.iter().chain(&parity) {
        ingest_file(app, &bundle.path).await?;
    }

    // The example tasks' held-out variants (spec §4l), registered before the submissions
    // they may be chosen for: their gold is in the repository, as no real task's is.
    for v in benchmark::heldout::all(&app.tasks.path().join("examples/gold"))? {
        let note =
            "a variant of the example task, public as its gold is (tasks/examples/gold): a demonstration";
        store.register_variant(&v.task, &v.digest.to_hex(), note).await?;
    }

    // The example tasks as the runner evaluated them (`tasks/examples/results`, which a
    // runner test re-evaluates and compares), signed as a submitter would; and an agent
    // that took a shortcut on one run, which the runner flagged.
    // And one whose bundle claims two successes its patches never earned: the
    // reproduction of its sample shows it.
    let tampered = tamper(&app.tasks.example_results(), &work.path().join("tampered"))?;
    let evaluated = [
        ("example-agent", "ExampleFramework", app.tasks.example_results()),
        ("shortcut-agent", "ShortcutFramework", app.tasks.shortcut_results()),
        ("tampered-agent", "TamperedFramework", tampered),
    ];
    for (id, framework, results) in &evaluated {
        let agent = bundle::Agent {
            id: (*id).into(),
            framework: (*framework).into(),
            framework_version: Some("0.1".into()),
            model: "Example Model".into(),
            model_id: None,
            display_name: Some(format!("{framework} + Example Model")),
            url: Some("https://github.com/rexbench/leaderboard/tree/main/tasks/examples".into()),
        };
        let path = work.path().join(format!("{id}.rexb.tar.gz"));
        benchmark::pack::pack(
            results,
            agent,
            &[&submitter],
            &benchmark::pack::timestamp(time::OffsetDateTime::now_utc()),
            &path,
        )
        .with_context(|| format!("packing {}", results.display()))?;
        ingest_file(app, &path).await?;
    }

    // A newcomer's key request (`rexbench register`), pending, and the bundle its key
    // submitted meanwhile, held: what the maintainers' desk shows, and what only the key's
    // holder and the maintainers may read.
    let newcomer = SecretKey::generate();
    let (pem, keyid) = (newcomer.public_key().to_pem(), newcomer.public_key().keyid().to_hex());
    let request = store::NewKeyRequest {
        keyid: &keyid,
        public_key: &pem,
        owner: NEWCOMER,
        owner_seen: &bundle::owner_key(NEWCOMER),
        url: Some("https://example.org/newcomer-lab"),
        contact: "newcomer@lab.example.org",
        note: Some("Our first submission: the example tasks, run on our own machine."),
        address: "127.0.0.1",
        now_unix: time::OffsetDateTime::now_utc().unix_timestamp(),
    };
    store.request_key(&request, app.guard.key_requests()).await?;
    let agent = bundle::Agent {
        id: "newcomer-agent".into(),
        framework: "NewcomerFramework".into(),
        framework_version: Some("0.1".into()),
        model: "Example Model".into(),
        model_id: None,
        display_name: Some("NewcomerFramework + Example Model".into()),
        url: None,
    };
    let path = work.path().join("newcomer-agent.rexb.tar.gz");
    let stamp = benchmark::pack::timestamp(time::OffsetDateTime::now_utc());
    benchmark::pack::pack(&app.tasks.example_results(), agent, &[&newcomer], &stamp, &path)
        .context("packing the newcomer's results")?;
    let file = File::open(&path).with_context(|| path.display().to_string())?;
    let loopback = std::net::IpAddr::from(std::net::Ipv4Addr::LOCALHOST);
    match crate::ingest::ingest_measured(app, Some(loopback), async { Ok(BufReader::new(file)) }).await {
        Ok(crate::ingest::Received::Held(_)) => {}
        Ok(other) => anyhow::bail!("the newcomer's bundle was recorded, not held: {other:?}"),
        Err(e) => anyhow::bail!("the newcomer's bundle: {}: {}", e.code, e.message),
    }
    Ok(Some(Seeded { published: imported.len() + parity.len(), evaluated: evaluated.len() }))
}

/// The runs of the example results whose outcome the tampered agent's bundle changes
/// to a success: each ended `wrong_result` when the runner ran its patch.
pub const TAMPERED: [(&str, &str, &str); 2] = [("wordfreq", "none", "2"), ("csvstats", "hints", "1")];

/// A results folder in `out` holding only the [`TAMPERED`] runs of `results`, each
/// claiming a success: a submitter's edit of `run.json` after the evaluation, its metrics
/// left out (they would refute it, spec §5a) and an agent's log made up where the run
/// had none (a success carries one). Each is its task and condition's only run, so it
/// is attempt 1 there (a bundle's attempts are numbered without a gap, spec §4f). Only
/// the maintainers' re-run of the sample can tell.
fn tamper(results: &Path, out: &Path) -> anyhow::Result<std::path::PathBuf> {
    std::fs::create_dir_all(out)?;
    std::fs::copy(results.join("evaluation.json"), out.join("evaluation.json"))?;
    for (task, hint, attempt) in TAMPERED {
        let from = results.join("runs").join(task).join(hint).join(attempt);
        let to = out.join("runs").join(task).join(hint).join("1");
        std::fs::create_dir_all(&to)?;
        for entry in std::fs::read_dir(&from).with_context(|| from.display().to_string())? {
            let entry = entry?;
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
        let run = to.join("run.json");
        let mut record: serde_json::Value = serde_json::from_slice(&std::fs::read(&run)?)?;
        record["outcome"] = serde_json::json!("success");
        if let Some(fields) = record.as_object_mut() {
            fields.remove("metrics");
        }
        std::fs::write(&run, serde_json::to_vec_pretty(&record)?)?;
        let log = to.join("agent_log.txt");
        if !log.exists() {
            std::fs::write(&log, format!("Implemented the extension of {task} ({hint}).\n"))?;
        }
    }
    Ok(out.to_owned())
}

/// Verifies and ingests a bundle file, as `POST /api/v1/submissions` would.
pub async fn ingest_file(app: &AppState, path: &Path) -> anyhow::Result<store::Ingested> {
    let file = File::open(path).with_context(|| path.display().to_string())?;
    ingest(app, BufReader::new(file)).await.with_context(|| path.display().to_string())
}
