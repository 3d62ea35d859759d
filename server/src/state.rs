//! What every handler shares: the store, the task catalog, the limits, the caches and
//! the counters.

use std::sync::Arc;

use anyhow::Context as _;

use benchmark::builtin::TaskDir;
use store::Store;
use views::catalog::Catalog;

use crate::cache::RenderCache;
use crate::config::Config;
use crate::guard::Guard;
use crate::metrics::Metrics;

/// What every handler shares.
#[derive(Debug)]
pub struct AppState {
    pub store: Arc<Store>,
    pub limits: bundle::Limits,
    /// The task cards (built in, or `REXBENCH_TASKS`).
    pub tasks: Arc<TaskDir>,
    /// The task cards' public facts.
    pub catalog: Arc<Catalog>,
    /// The whole cards, for the integrity checks at ingest.
    pub cards: Arc<crate::catalog::Cards>,
    /// `REXBENCH_ADMIN_TOKEN`: enables the admin endpoints.
    pub admin_token: Option<String>,
    pub metrics: Arc<Metrics>,
    pub cache: Arc<RenderCache>,
    /// Rate limits, body timeouts and the cap on ingests at once.
    pub guard: Guard,
    /// The islands' WebAssembly, if the server was built with it.
    pub pkg: Option<Arc<crate::islands::Pkg>>,
    /// Where readers reach the site (`REXBENCH_PUBLIC_URL`): the feed's ids and links.
    pub public_url: String,
}

pub type Shared = Arc<AppState>;

/// Tells the store which tasks make up the benchmark's task set (by the digest of its
/// cards): results are complete, and ranked, only if they cover them all; which
/// published results tell only whether each run succeeded (Harbor's parity experiment);
/// and how many attempts each card asks (spec §4f), recounting the rows a changed rule
/// touches.
pub async fn know_benchmark(store: &store::Store, cards: &crate::catalog::Cards) -> anyhow::Result<()> {
    for agent in benchmark::parity::agent_ids() {
        store.know_success_only(agent);
    }
    let attempts = cards.values().map(|c| (store::TaskId::new(c.id.clone()), c.attempts)).collect();
    let changed = store.know_attempts(&attempts).await.context("the attempts the task cards ask")?;
    if !changed.is_empty() {
        tracing::info!(
            tasks = changed.len(),
            "held the results of tasks whose cards changed their attempts to them"
        );
    }
    let benchmark: Vec<&benchmark::task::TaskCard> =
        cards.values().filter(|c| bundle::REXBENCH_TASKS.contains(&c.id.as_str())).collect();
    if benchmark.is_empty() {
        return Ok(());
    }
    let digest =
        benchmark::taskset::task_set_digest(benchmark.iter().copied()).context("the task-set digest")?;
    store.know_task_set(
        &digest.to_hex(),
        benchmark.iter().map(|c| store::TaskId::new(c.id.clone())).collect(),
    );
    Ok(())
}

/// Opens the store (migrating it), and reads the task cards.
pub async fn open_state(config: &Config) -> anyhow::Result<AppState> {
    let blobs = store::Blobs::open(&config.blobs).with_context(|| format!("blob store {}", config.blobs))?;
    let tasks = TaskDir::open(config.tasks_dir.as_deref()).context("REXBENCH_TASKS")?;
    let (catalog, cards) = crate::catalog::load(&tasks)?;
    tracing::info!(tasks = catalog.tasks.len(), "using {}", tasks.origin());
    // A wrong bucket, key or endpoint shows now, not at the first submission.
    blobs.check().await.with_context(|| format!("blob store {} cannot be reached", config.blobs))?;
    let store = store::Store::open_with(&config.backend, blobs).await?;
    store.set_reproduction_tries(config.reproduction_tries);
    store.set_sample_rule(config.sample_rule).map_err(|problem| {
        anyhow::anyhow!("REXBENCH_SAMPLE_SHARE, REXBENCH_SAMPLE_PROBABILITY, REXBENCH_SAMPLE_CAP: {problem}")
    })?;
    // Each rule in force is public from when it began, so that a submission's can be checked.
    store.record_sample_rule().await?;
    know_benchmark(&store, &cards).await?;
    Ok(AppState {
        store: Arc::new(store),
        limits: config.limits,
        tasks: Arc::new(tasks),
        catalog: Arc::new(catalog),
        cards: Arc::new(cards),
        admin_token: config.admin_token.clone(),
        public_url: config.public_url.clone(),
        metrics: Default::default(),
        cache: Arc::new(RenderCache::new(config.render_cache)),
        guard: Guard::new(config.guard),
        pkg: crate::islands::Pkg::embedded().map(Arc::new).or_else(|| {
            tracing::warn!(
                "interactivity is off: this server was built without its WebAssembly \
                 (run scripts/wasm, then build the server again); every page works without it"
            );
            None
        }),
    })
}
