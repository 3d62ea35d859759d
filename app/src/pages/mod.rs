//! One page per file.

mod home;
mod not_found;

pub(crate) use home::HomePage;
pub(crate) use not_found::NotFound;
