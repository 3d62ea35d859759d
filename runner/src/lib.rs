//! The RExBench offline evaluation runner: evaluates agent outputs against the tasks,
//! packs the results into signed result bundles, and verifies and inspects bundles.

pub mod audit;
pub mod cli;
mod error;
pub mod error_class;
pub mod evaluate;
pub mod exec;
pub mod experiment;
pub mod harbor;
pub mod hardware;
pub mod keep;
pub mod keyfile;
pub mod login;
pub mod logs;
pub mod outputs;
pub mod patch;
pub mod register;
pub mod reproduce;
mod run;
pub mod sandbox;
pub mod slurm;
pub mod submit;
pub mod summary;
pub mod trace;

// The benchmark's definition, where the server shares it; here under the names the
// runner has always used.
pub use benchmark::{check, pack, parity, published, results, task, taskset};
pub use error::Error;
