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

/// What the demo added.
#[derive(Debug)]
pub struct Seeded {
    pub published: usize,
    pub evaluated: usize,
}

/// Seeds the demo data unless the database already holds submissions (`Ok(None)`).
pub async fn seed_demo(app: &AppState) -> anyhow::Result<Option<Seeded>> {
    if !app.store.changes(1, None).await?.is_empty() {
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

    // The example tasks as the runner evaluated them (`tasks/examples/results`, which a
    // runner test re-evaluates and compares), signed as a submitter would; and an agent
    // that took a shortcut on one run, which the runner flagged.
    let evaluated = [
        ("example-agent", "ExampleFramework", app.tasks.example_results()),
        ("shortcut-agent", "ShortcutFramework", app.tasks.shortcut_results()),
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
    Ok(Some(Seeded { published: imported.len() + parity.len(), evaluated: evaluated.len() }))
}

/// Verifies and ingests a bundle file, as `POST /api/v1/submissions` would.
pub async fn ingest_file(app: &AppState, path: &Path) -> anyhow::Result<store::Ingested> {
    let file = File::open(path).with_context(|| path.display().to_string())?;
    ingest(app, BufReader::new(file)).await.with_context(|| path.display().to_string())
}
