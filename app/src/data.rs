//! The server functions the pages read through. Each is thin: the page's arguments →
//! the view that answers it (`views`, beneath the API too) → the page's data, with
//! [`AppError`] for what went wrong.

use leptos::prelude::*;
use store::{Change, Hint, KeyRecord};

use crate::error::AppError;
use views::board::BoardQuery;

pub use views::TaskNames;
pub use views::agent::{AgentData, Coverage, ErrorColumn, ErrorCountRow, PublishedFacts};
pub use views::compare::CompareData;
pub use views::leaderboard::{LeaderboardData, TaskSet};
pub use views::parity::ParityData;
pub use views::run::{ArtifactText, ExperimentOutline, FileLines, Outline, ProcessNode, RunData};
pub use views::task::{HINTED_ONLY_SHOWN, TASK_AGENTS_PER_PAGE, TaskData, TasksData};

/// What the server gives the pages: the store and the task cards.
#[cfg(feature = "ssr")]
#[derive(Debug, Clone)]
pub struct PageContext {
    /// Who the page is for: what it shows of private outputs follows from it alone
    /// (`views::access`).
    pub reader: views::access::Reader,
    pub store: std::sync::Arc<store::Store>,
    pub catalog: std::sync::Arc<views::catalog::Catalog>,
    /// Where the stylesheet is served (a name with its digest in it).
    pub stylesheet: String,
    /// Where the islands' WebAssembly is served (`pkg/<digest>`); none without it.
    pub pkg: Option<String>,
    /// The change log's newest sequence number as the page is rendered.
    pub generation: i64,
    /// The size limits submitted bundles are held to.
    pub limits: bundle::Limits,
}

#[cfg(feature = "ssr")]
fn context() -> Result<PageContext, AppError> {
    use_context::<PageContext>().ok_or_else(|| {
        tracing::error!("a page was rendered without its PageContext");
        AppError::Internal
    })
}

#[server(prefix = "/sfn", endpoint = "leaderboard")]
pub async fn load_leaderboard(query: BoardQuery) -> Result<LeaderboardData, AppError> {
    let ctx = context()?;
    Ok(views::leaderboard::page(&ctx.store, &ctx.catalog, &query).await?)
}

#[server(prefix = "/sfn", endpoint = "agent")]
pub async fn load_agent(id: String, task: Option<String>, hint: Option<Hint>) -> Result<AgentData, AppError> {
    let ctx = context()?;
    Ok(views::agent::page(&ctx.store, &ctx.catalog, &ctx.reader, &id, task.as_deref(), hint).await?)
}

#[server(prefix = "/sfn", endpoint = "run")]
pub async fn load_run(id: String) -> Result<RunData, AppError> {
    let ctx = context()?;
    Ok(views::run::page(&ctx.store, &ctx.catalog, &ctx.reader, &id).await?)
}

#[server(prefix = "/sfn", endpoint = "tasks")]
pub async fn load_tasks() -> Result<TasksData, AppError> {
    let ctx = context()?;
    Ok(views::task::list(&ctx.store, &ctx.catalog).await?)
}

#[server(prefix = "/sfn", endpoint = "task")]
pub async fn load_task(id: String, page: usize) -> Result<TaskData, AppError> {
    let ctx = context()?;
    Ok(views::task::page(&ctx.store, &ctx.catalog, &id, page).await?)
}

#[server(prefix = "/sfn", endpoint = "compare")]
pub async fn load_compare(a: Option<String>, b: Option<String>) -> Result<CompareData, AppError> {
    let ctx = context()?;
    let query = views::compare::CompareQuery { a, b };
    Ok(views::compare::page(&ctx.store, &ctx.catalog, &ctx.reader, &query).await?)
}

#[server(prefix = "/sfn", endpoint = "parity")]
pub async fn load_parity(a: Option<String>, b: Option<String>, hint: Hint) -> Result<ParityData, AppError> {
    let ctx = context()?;
    Ok(views::parity::page(&ctx.store, &ctx.catalog, a.as_deref(), b.as_deref(), hint).await?)
}

#[server(prefix = "/sfn", endpoint = "failures")]
pub async fn load_failures() -> Result<views::failures::FailuresAnswer, AppError> {
    let ctx = context()?;
    Ok(views::failures::answer(&ctx.store, &ctx.catalog, &ctx.reader).await?)
}

#[server(prefix = "/sfn", endpoint = "changes")]
pub async fn load_changes(before: Option<i64>) -> Result<Vec<Change>, AppError> {
    let ctx = context()?;
    Ok(views::changes::list(&ctx.store, views::changes::ChangesQuery::page_before(before)).await?)
}

pub const CHANGES_PER_PAGE: i64 = views::changes::PER_PAGE;

#[server(prefix = "/sfn", endpoint = "keys")]
pub async fn load_keys() -> Result<Vec<KeyRecord>, AppError> {
    Ok(views::keys::list(&context()?.store).await?)
}

/// Who the sign-in page is for: `anyone`, `submitter` or `maintainer`, and who in words.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SignedIn {
    pub reads_as: String,
    pub who: Option<String>,
}

#[server(prefix = "/sfn", endpoint = "signin")]
pub async fn load_signed_in() -> Result<SignedIn, AppError> {
    use views::access::Reader;
    let ctx = context()?;
    let reads_as = match &ctx.reader {
        Reader::Public => "anyone",
        Reader::Maintainer { .. } => "maintainer",
        Reader::Submitter { .. } => "submitter",
    };
    Ok(SignedIn { reads_as: reads_as.into(), who: (!ctx.reader.is_public()).then(|| ctx.reader.who()) })
}

#[server(prefix = "/sfn", endpoint = "method")]
pub async fn load_method() -> Result<String, AppError> {
    Ok(views::markdown::to_html(include_str!("../../docs/method.md")))
}

#[server(prefix = "/sfn", endpoint = "guide")]
pub async fn load_guide() -> Result<String, AppError> {
    Ok(views::markdown::to_html(include_str!("../../docs/submitting.md")))
}

/// What the browser's check needs to judge as this server does: what
/// [`load_submit_setup`] answers and the `SubmitForm` island is given.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SubmitSetup {
    /// Keys whose signatures are accepted (SubjectPublicKeyInfo PEM).
    pub trusted: Vec<String>,
    /// Keys no longer trusted: key id and when it was revoked.
    pub revoked: Vec<(String, String)>,
    /// The task ids results may name.
    pub tasks: Vec<String>,
    /// Those whose check is private: a run of one states no metrics in the manifest.
    pub private_checks: Vec<String>,
    /// What a bundle's claims are held to (bundle spec §5a): the task sets this server
    /// takes, each task's attempts and its public bounds.
    pub claims: bundle::Claims,
    /// This server's size limits.
    pub limits: bundle::Limits,
    /// The verifier worker's script, versioned with the rest of the WebAssembly.
    pub worker: String,
}

/// What the browser's check of a bundle on `/submit` needs to judge as the server does.
#[server(prefix = "/sfn", endpoint = "submit_setup")]
pub async fn load_submit_setup() -> Result<SubmitSetup, AppError> {
    let ctx = context()?;
    let keys = views::keys::list(&ctx.store).await?;
    let (trusted, revoked): (Vec<_>, Vec<_>) = keys.into_iter().partition(|k| k.revoked_at.is_none());
    Ok(SubmitSetup {
        trusted: trusted.into_iter().map(|k| k.public_key).collect(),
        revoked: revoked.into_iter().filter_map(|k| Some((k.keyid, k.revoked_at?))).collect(),
        tasks: ctx.catalog.tasks.iter().map(|t| t.id.to_string()).collect(),
        private_checks: ctx
            .catalog
            .tasks
            .iter()
            .filter(|t| t.check_private)
            .map(|t| t.id.to_string())
            .collect(),
        claims: views::catalog::claims(&ctx.store, &ctx.catalog).await?,
        limits: ctx.limits,
        worker: ctx.pkg.map(|p| format!("/{p}/verify-worker.js")).unwrap_or_default(),
    })
}
