//! The change log as a view: how much of it one page or answer holds.

/// Changes a page shows, and an API answer gives when its `limit` is not said.
pub const PER_PAGE: i64 = 50;
/// The most changes one API answer gives.
pub const MAX_PER_ANSWER: i64 = 500;

use serde::{Deserialize, Serialize};
use store::Change;

use crate::query::{BadQuery, Params, Strictness, Window, lenient};

/// The API's `/api/v1/changes` query, as the OpenAPI document states it; the page reads
/// `before` the same way ([`ChangesQuery::read`]).
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct ChangesParams {
    /// At most this many (1 to 500, default 50).
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    pub limit: Option<i64>,
    /// Only changes before this sequence number (for paging; numbers start at 1).
    #[cfg_attr(feature = "openapi", param(minimum = 1))]
    pub before: Option<i64>,
}

/// Which changes a page or an answer holds: the newest [`Window::size`] before
/// [`Window::before`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangesQuery {
    pub window: Window,
}

impl ChangesQuery {
    /// From query parameters: strictly a `limit` or `before` out of range is refused;
    /// leniently it is dropped (the first page, [`PER_PAGE`] changes).
    pub fn read(get: impl Fn(&str) -> Option<String>, reading: Strictness) -> Result<ChangesQuery, BadQuery> {
        let p = Params::new(&get, reading);
        Ok(ChangesQuery { window: Window::newest(&p, PER_PAGE as usize, Some(MAX_PER_ANSWER))? })
    }

    /// The page's reading: [`PER_PAGE`] changes (a page's size is fixed), before
    /// `?before=` when it is a number.
    pub fn from_page(get: impl Fn(&str) -> Option<String>) -> ChangesQuery {
        let p = Params::new(&get, Strictness::Lenient);
        ChangesQuery::page_before(lenient(Window::newest(&p, PER_PAGE as usize, None)).before)
    }

    /// A page's changes: [`PER_PAGE`] of them, before `before` (all the page's server
    /// function is sent of [`ChangesQuery::from_page`], and all it needs to rebuild it).
    pub fn page_before(before: Option<i64>) -> ChangesQuery {
        ChangesQuery { window: Window { page: 1, size: PER_PAGE as usize, before } }
    }
}

impl ChangesParams {
    pub fn view(&self) -> Result<ChangesQuery, BadQuery> {
        let get = |name: &str| match name {
            "limit" => self.limit.map(|n| n.to_string()),
            "before" => self.before.map(|n| n.to_string()),
            _ => None,
        };
        ChangesQuery::read(get, Strictness::Strict)
    }
}

// The API's change log (`/api/v1/changes`).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChangesAnswer {
    /// Newest first.
    pub changes: Vec<Change>,
}

/// The changes a query holds, newest first: the page's and the API's.
#[cfg(feature = "db")]
pub async fn list(store: &store::Store, query: ChangesQuery) -> Result<Vec<Change>, crate::ViewError> {
    Ok(store.changes(query.window.limit(), query.window.before).await?)
}
