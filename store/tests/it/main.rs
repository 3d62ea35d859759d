//! The store, on SQLite always and on PostgreSQL when `TEST_DATABASE_URL` is set (CI
//! sets it; with `CI=true` and no PostgreSQL the tests fail rather than skip it).

mod harness;
mod ingest;
mod keys;
mod migrations;
mod schema;
