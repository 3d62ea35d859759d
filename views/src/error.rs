//! The one error type of the views: what was asked for does not exist, or the store
//! failed. The API and the pages each say it in their own words (`ApiError`,
//! `AppError`).

/// What a view was asked for and could not find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    Agent(String),
    Task(String),
    Run(String),
    Submission(String),
    /// A side of a parity view (`a` or `b`) that names no submission and no agent with
    /// current results.
    ParitySide {
        side: &'static str,
        named: String,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("not found: {0:?}")]
    NotFound(Missing),
    #[error("the store failed")]
    Store(#[from] store::StoreError),
    /// A stored artifact's bytes could not be read for a page.
    #[error("cannot read stored artifact {digest}")]
    Artifact {
        digest: String,
        #[source]
        cause: std::io::Error,
    },
}
