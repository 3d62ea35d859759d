//! The RExBench offline evaluation runner: evaluates agent outputs against the tasks,
//! packs the results into signed result bundles, and verifies and inspects bundles.

pub mod check;
pub mod cli;
pub mod evaluate;
pub mod exec;
pub mod harbor;
pub mod keyfile;
pub mod outputs;
pub mod pack;
pub mod patch;
pub mod published;
pub mod results;
pub mod submit;
pub mod summary;
pub mod task;
pub mod taskset;
