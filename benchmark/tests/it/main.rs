//! The benchmark crate's tests against the repository's own task cards.

mod files_touched;
mod integrity;
mod marks;
