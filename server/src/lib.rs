//! The RExBench leaderboard server: the Leptos pages, the JSON API, the ingest endpoint,
//! artifacts, static assets and health checks, behind one axum router.

mod api;
mod assets;
pub mod auth;
pub mod backup;
pub mod cache;
pub mod catalog;
pub mod cli;
mod config;
mod credentials;
mod demo;
mod desk;
mod error;
pub mod guard;
mod headers;
mod ingest;
mod integrity;
pub mod islands;
mod metrics;
mod openapi;
mod pages;
mod router;
mod serve;
mod state;
pub mod synth;
mod warm;

pub use config::{Config, ConfigError, Settings};
pub use demo::seed_demo;
pub use router::build_app;
pub use serve::serve;
pub use state::{AppState, know_benchmark, open_state};
