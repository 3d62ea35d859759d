//! The RExBench offline evaluation runner: packs evaluation results into signed
//! result bundles, and verifies and inspects bundles.

pub mod cli;
pub mod keyfile;
pub mod pack;
pub mod summary;
