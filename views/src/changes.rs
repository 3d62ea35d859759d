//! The change log as a view: how much of it one page or answer holds.

/// Changes a page shows, and an API answer gives when its `limit` is not said.
pub const PER_PAGE: i64 = 50;
/// The most changes one API answer gives.
pub const MAX_PER_ANSWER: i64 = 500;

use serde::Deserialize;

use crate::query::{BadQuery, Params, Reading, lenient};

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

/// Which changes a page or an answer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangesQuery {
    /// How many, newest first.
    pub limit: i64,
    /// Only those before this sequence number.
    pub before: Option<i64>,
}

impl ChangesQuery {
    /// From query parameters: strictly a `limit` or `before` out of range is refused;
    /// leniently it is dropped (the first page, [`PER_PAGE`] changes).
    pub fn read(get: impl Fn(&str) -> Option<String>, reading: Reading) -> Result<ChangesQuery, BadQuery> {
        let p = Params::new(&get, reading);
        let limit = p.number("limit", 1..=MAX_PER_ANSWER, &format!("from 1 to {MAX_PER_ANSWER}"))?;
        let before = p.number("before", 1..=i64::MAX, "1 or more")?;
        Ok(ChangesQuery { limit: limit.unwrap_or(PER_PAGE), before })
    }

    /// The page's reading: [`PER_PAGE`] changes, before `?before=` when it is a number.
    pub fn from_page(get: impl Fn(&str) -> Option<String>) -> ChangesQuery {
        let page = lenient(ChangesQuery::read(get, Reading::Lenient));
        ChangesQuery { limit: PER_PAGE, ..page }
    }
}

impl ChangesParams {
    pub fn view(&self) -> Result<ChangesQuery, BadQuery> {
        let get = |name: &str| match name {
            "limit" => self.limit.map(|n| n.to_string()),
            "before" => self.before.map(|n| n.to_string()),
            _ => None,
        };
        ChangesQuery::read(get, Reading::Strict)
    }
}
