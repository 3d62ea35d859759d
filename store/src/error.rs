//! The store's errors.

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database")]
    Database(#[from] sqlx::Error),
    #[error("database migration")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("database migration left {0} rows referring to rows that do not exist")]
    BrokenReferences(usize),
    #[error("{context}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the blob store is full")]
    StorageFull(#[source] std::io::Error),
    /// The object store refused or did not answer in time (down, slow, wrong
    /// credentials, no bucket): the operator must act, a client may try again.
    #[error("the object store did not take or give the blobs")]
    BlobStore(#[source] std::io::Error),
    #[error("{task} stopped before it finished")]
    Background {
        task: &'static str,
        #[source]
        source: tokio::task::JoinError,
    },
    #[error("no key {0} in the registry")]
    UnknownKey(String),
    #[error("no key request {0}")]
    UnknownRequest(String),
    #[error("no such open session: {0}")]
    UnknownSession(String),
    #[error("key {0} is already registered")]
    KeyExists(String),
    #[error("key {0} was revoked at {1}")]
    RevokedKey(String, String),
    #[error(
        "agent `{agent}` belongs to another key ({owner}); a submitter key may only submit its own agents"
    )]
    AgentOwnedByOther { agent: String, owner: String },
    #[error("no finding {0}")]
    UnknownFinding(String),
    #[error("the registry holds an unreadable key {0}")]
    BadKey(String),
    /// A stored row the store cannot read back (the database was changed by hand).
    #[error("the database holds an unreadable {0}")]
    Unreadable(String),
    /// A bundle the board does not take for what it claims against the board's records
    /// (a reproduction, spec §4d, or a submission, spec §5a), and why, with the API's code.
    #[error("{message}")]
    Refused { code: &'static str, message: String },
}

impl StoreError {
    /// An I/O error, with what was being done.
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> StoreError {
        let context = context.into();
        move |source| StoreError::Io { context, source }
    }
}
