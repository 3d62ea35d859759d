//! Persistence for the RExBench leaderboard. Today: which database a URL names.
//! The schema, ingest and queries build on this.

mod backend;

pub use backend::{Backend, BackendError, DEFAULT_DATABASE_URL};
