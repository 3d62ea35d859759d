//! Persistence for the RExBench leaderboard: one [`Store`] over SQLite (embedded, the
//! default) or PostgreSQL, chosen by the database URL; the blob store for artifacts;
//! ingest in one transaction; the queries the pages and the API need.
//!
//! Without the `db` feature only [`model`] is built: the data types, for code that
//! names them but never touches a database (a browser build of the app).

pub mod model;
/// Intervals, rank ranges and paired comparisons (the crate `rexbench-stats`).
pub use stats;

pub use model::*;
/// The vocabulary the model is written in.
pub use vocab::{
    BENCHMARK_ATTEMPTS, CostMark, DiffLine, FINDINGS_ROLE, FoundBy, Harness, Hint, Integrity, Outcome,
    Outputs, ProvenanceKind, RequestStatus, Review, TaskId, Tier, Tokens, is_slug,
};

#[cfg(feature = "db")]
mod analysis;
#[cfg(feature = "db")]
mod attempts;
#[cfg(feature = "db")]
mod backend;
#[cfg(feature = "db")]
mod backup;
#[cfg(feature = "db")]
mod blobs;
#[cfg(feature = "db")]
mod cells;
#[cfg(feature = "db")]
mod db;
#[cfg(feature = "db")]
mod error;
#[cfg(feature = "db")]
mod findings;
/// The counts a success's flag moves (the strict view's), shared by reviews and reproductions.
#[cfg(feature = "db")]
mod flags;
#[cfg(feature = "db")]
mod heldout;
#[cfg(feature = "db")]
mod identities;
#[cfg(feature = "db")]
mod ingest;
#[cfg(feature = "db")]
mod key_requests;
#[cfg(feature = "db")]
mod keys;
#[cfg(feature = "db")]
mod memo;
#[cfg(feature = "db")]
mod outputs;
#[cfg(feature = "db")]
mod reads;
#[cfg(feature = "db")]
mod reproductions;
#[cfg(feature = "db")]
mod sessions;
#[cfg(feature = "db")]
mod steps;
#[cfg(feature = "db")]
mod store;
#[cfg(feature = "db")]
mod task_sets;
#[cfg(feature = "testing")]
pub mod testing;

#[cfg(feature = "db")]
pub use backend::{Backend, BackendError, DEFAULT_DATABASE_URL};
#[cfg(feature = "db")]
pub use blobs::{BlobLocation, BlobStream, Blobs, S3_RETRY_WINDOW, S3_TRIES, Staging};
/// Artifacts are named by their digest.
#[cfg(feature = "db")]
pub use bundle::Digest;
#[cfg(feature = "db")]
pub use error::StoreError;
#[cfg(feature = "db")]
pub use findings::FindingsFilter;
#[cfg(feature = "db")]
pub use heldout::NOT_GENERALISED;
#[cfg(feature = "db")]
pub use identities::NO_IDENTITY;
#[cfg(feature = "db")]
pub use ingest::{ServerChecks, ServerFindings};
#[cfg(feature = "db")]
pub use key_requests::{NewKeyRequest, RequestLimits};
#[cfg(feature = "db")]
pub use outputs::OutputsChange;
#[cfg(feature = "db")]
pub use reproductions::{NOT_REPRODUCED, PublicSampled, UNVERIFIED, is_reproduction};
#[cfg(feature = "db")]
pub use sessions::{AccessEntry, ChallengeUse, OpenSession, Parent, Revoke, Session, SessionKind};
#[cfg(feature = "db")]
pub use steps::Ingested;
#[cfg(feature = "db")]
pub(crate) use store::now;
#[cfg(feature = "db")]
pub use store::{REPRODUCTION_TRIES, Store};
#[cfg(feature = "db")]
pub use task_sets::RegisteredTaskSet;
