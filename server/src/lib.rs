//! The RExBench leaderboard server: the Leptos pages, the JSON API, the ingest endpoint,
//! artifacts, static assets and health checks, behind one axum router.

mod admin;
mod answers;
mod api;
mod assets;
pub mod backup;
pub mod cache;
pub mod catalog;
pub mod cli;
mod config;
mod credentials;
mod demo;
mod error;
mod extract;
pub mod guard;
mod headers;
mod ingest;
mod integrity;
pub mod islands;
mod metrics;
mod openapi;
mod outputs;
mod pages;
mod reproductions;
mod router;
mod serve;
pub mod session;
mod state;
pub mod synth;

pub use config::{Config, ConfigError, Settings};
pub use demo::seed_demo;
pub use router::build_app;
pub use serve::serve;
pub use state::{AppState, know_benchmark, open_state};
