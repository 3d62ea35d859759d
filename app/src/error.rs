//! The one error type of the pages and their server functions.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
pub enum AppError {
    /// What the address names does not exist: a 404 page.
    #[error("{0}")]
    NotFound(String),
    /// The reader may not see this page (the desk, for anyone but a maintainer): a 403.
    #[error("{0}")]
    Forbidden(String),
    /// The store failed; the details are logged, never shown.
    #[error("the results could not be read just now")]
    Internal,
    /// The server function machinery failed (bad arguments, transport).
    #[error("{0}")]
    ServerFn(String),
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        AppError::ServerFn(value.to_string())
    }
}

#[cfg(feature = "ssr")]
impl From<store::StoreError> for AppError {
    fn from(e: store::StoreError) -> Self {
        tracing::error!(
            error = format!("{:#}", anyhow::Error::from(e)),
            "store error while rendering a page"
        );
        AppError::Internal
    }
}

/// What a view could not answer, in a page's words; the store's and the blobs' failures
/// are logged here, once, and shown only as "could not be read just now".
#[cfg(feature = "ssr")]
impl From<views::ViewError> for AppError {
    fn from(e: views::ViewError) -> Self {
        use views::{Missing, ViewError};
        match e {
            ViewError::NotFound(Missing::Agent(id)) => {
                AppError::NotFound(format!("There is no agent `{id}`."))
            }
            ViewError::NotFound(Missing::Task(id)) => AppError::NotFound(format!("There is no task `{id}`.")),
            ViewError::NotFound(Missing::Run(id)) => AppError::NotFound(format!("There is no run `{id}`.")),
            ViewError::NotFound(Missing::Submission(id)) => {
                AppError::NotFound(format!("There is no submission `{id}`."))
            }
            ViewError::NotFound(Missing::ParitySide { side, named }) => AppError::NotFound(format!(
                "Side {} names no submission and no agent with current results: `{named}`.",
                side.to_uppercase()
            )),
            ViewError::Store(e) => e.into(),
            ViewError::Artifact { digest, cause } => {
                tracing::error!(digest, error = %cause, "cannot read a stored artifact for a page");
                AppError::Internal
            }
        }
    }
}
