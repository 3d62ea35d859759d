//! The server: pages and API driven in-process through the router, and over real
//! sockets where that matters. API tests run on SQLite and on PostgreSQL.

mod abuse;
mod api;
mod backup;
mod claims;
mod contract;
mod cost;
mod counting;
mod coverage;
mod evidence;
mod faults;
mod harness;
mod heldout;
mod image;
mod integrity;
mod lies;
mod pages;
mod paper;
mod privacy;
mod process;
mod register;
mod reproductions;
mod s3;
mod schemathesis;
mod secrecy;
mod several;
mod signin;
mod submit;
mod views;
