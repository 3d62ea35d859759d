//! The interactive parts of the pages, as Leptos islands: each enhances a page that
//! works without JavaScript, and only the islands are built for the browser (the
//! `web` crate). What an island does in the browser runs in its effects and event
//! handlers, which the server never calls; what it renders is rendered on both sides
//! alike, so that it hydrates.

mod board;
mod dom;
mod log;
mod notice;
mod submit;

pub use board::LiveBoard;
pub use log::{LogTools, PatchTools};
pub use notice::NewResults;
pub use submit::SubmitForm;
