//! The bundle crate's integration tests: one binary, one module per concern.

mod common;
mod conformance;
mod fuzz;
mod limits;
mod mutations;
mod openssl;
mod round_trip;
mod rules;
