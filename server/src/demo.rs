//! `serve --demo`: on an empty database, the data that makes a first start show a real
//! leaderboard — the paper's published results, and the example tasks evaluated for
//! real by the runner, with their patches and logs.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use bundle::SecretKey;
use store::Tier;

use crate::ingest::ingest;
use crate::state::AppState;

/// What the demo added.
#[derive(Debug)]
pub struct Seeded {
    pub published: usize,
    pub evaluated: usize,
}

/// Seeds the demo data unless the database already holds submissions (`Ok(None)`).
pub async fn seed_demo(app: &AppState, tasks_dir: &Path) -> Result<Option<Seeded>, String> {
    if !app.store.changes(1, None).await.map_err(|e| e.to_string())?.is_empty() {
        return Ok(None);
    }
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let maintainers = SecretKey::generate();
    let submitter = SecretKey::generate();
    let store = &app.store;
    store
        .add_key(&maintainers.public_key(), "RExBench maintainers (demo key)", Tier::Maintainer)
        .await
        .map_err(|e| e.to_string())?;
    store
        .add_key(&submitter.public_key(), "Example team (demo key)", Tier::Submitter)
        .await
        .map_err(|e| e.to_string())?;

    // The paper's per-task results, as the maintainers would import them.
    let cards = runner::task::load_all(tasks_dir).map_err(|e| e.to_string())?;
    let benchmark = cards.values().filter(|c| bundle::REXBENCH_TASKS.contains(&c.id.as_str()));
    let digest = runner::taskset::task_set_digest(benchmark).map_err(|e| e.to_string())?;
    let published = work.path().join("published");
    let imported = runner::published::import(digest, &[&maintainers], "2026-04-21T00:00:00Z", &published)?;
    for bundle in &imported {
        ingest_file(app, &bundle.path).await?;
    }

    // The example tasks, evaluated for real, as a submitter would.
    let results = work.path().join("results");
    let opts = runner::evaluate::Options {
        tasks_dir: tasks_dir.to_owned(),
        outputs: tasks_dir.join("examples/outputs"),
        out: results.clone(),
        gold: Some(tasks_dir.join("examples/gold")),
        codebases: None,
        jobs: 2,
        executor: runner::exec::Executor::Local,
    };
    tokio::task::spawn_blocking(move || runner::evaluate::evaluate(&opts))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("evaluating the example tasks: {e}"))?;
    let agent = bundle::Agent {
        id: "example-agent".into(),
        framework: "ExampleFramework".into(),
        framework_version: Some("0.1".into()),
        model: "Example Model".into(),
        model_id: None,
        display_name: Some("ExampleFramework + Example Model".into()),
        url: Some("https://github.com/rexbench/leaderboard/tree/main/tasks/examples".into()),
    };
    let path = work.path().join("example-agent.rexb.tar.gz");
    runner::pack::pack(
        &results,
        agent,
        &[&submitter],
        &runner::pack::timestamp(time::OffsetDateTime::now_utc()),
        &path,
    )
    .map_err(|e| e.to_string())?;
    ingest_file(app, &path).await?;
    Ok(Some(Seeded { published: imported.len(), evaluated: 1 }))
}

/// Verifies and ingests a bundle file, as `POST /api/v1/submissions` would.
pub async fn ingest_file(app: &AppState, path: &Path) -> Result<store::Ingested, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    ingest(app, BufReader::new(file))
        .await
        .map_err(|e| format!("{}: {}: {}", path.display(), e.code, e.message))
}
