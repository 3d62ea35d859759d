//! What each view of the leaderboard means, answered once beneath both the JSON API
//! (`server::api`) and the pages (`app::data`'s server functions): the leaderboard, an
//! agent, a task, a run, the parity and the failure views. A rule about what a view
//! counts, ranks or shows lives here, never in a handler or a page, so the API and the
//! pages cannot disagree.
//!
//! The types compile without the database (the islands read `board` in the browser);
//! the answers come with the `db` feature and read the store and the [`catalog`].

pub mod access;
pub mod admin;
pub mod board;
pub mod catalog;
pub mod cost;
pub mod format;
pub mod paper;
pub mod query;
pub mod trajectory;

#[cfg(feature = "db")]
mod error;
#[cfg(feature = "db")]
pub use error::{Missing, ViewError};

pub mod agent;
pub mod changes;
pub mod compare;
pub mod desk;
pub mod failures;
pub mod key_requests;
pub mod keys;
pub mod leaderboard;
#[cfg(feature = "db")]
pub mod markdown;
pub mod parity;
pub mod reproductions;
pub mod run;
pub mod submitter;
pub mod task;

/// Task id → name, for the tasks a view mentions.
pub type TaskNames = std::collections::BTreeMap<store::TaskId, String>;

#[cfg(feature = "db")]
fn names(catalog: &catalog::Catalog) -> TaskNames {
    catalog.tasks.iter().map(|t| (t.id.clone(), t.name.clone())).collect()
}
