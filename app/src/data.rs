//! What the pages' server functions share: the server's [`PageContext`] and the data
//! types the pages and islands both name. Each server function sits beside the page
//! that reads it (`pages/<page>.rs`), thin: the page's arguments → the view that answers
//! it (`views`, beneath the API too) → the page's data, with [`AppError`] for what went
//! wrong.

#[cfg(feature = "ssr")]
use leptos::prelude::*;

#[cfg(feature = "ssr")]
use crate::error::AppError;

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
    /// The token a browser session's forms carry (the desk's refuse one without it);
    /// none without a session.
    pub form_token: Option<String>,
    /// For a maintainer: what waits on the desk, for the header.
    pub desk: Option<store::DeskCounts>,
}

#[cfg(feature = "ssr")]
pub(crate) fn context() -> Result<PageContext, AppError> {
    use_context::<PageContext>().ok_or_else(|| {
        tracing::error!("a page was rendered without its PageContext");
        AppError::Internal
    })
}

/// What the browser's check needs to judge as this server does: what
/// `pages::submit::load_submit_setup` answers and the `SubmitForm` island is given.
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
