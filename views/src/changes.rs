//! The change log as a view: how much of it one page or answer holds.

/// Changes a page shows, and an API answer gives when its `limit` is not said.
pub const PER_PAGE: i64 = 50;
/// The most changes one API answer gives.
pub const MAX_PER_ANSWER: i64 = 500;
