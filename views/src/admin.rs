//! What the maintainers' lists read of their query: the findings to review and the log of
//! reads of private outputs (the queue of sampled runs is `reproductions`'s). Read strictly
//! (only the API lists them), through [`Params`] and the one [`Window`] like every other
//! list.

use serde::{Deserialize, Serialize};

use crate::query::{BadQuery, Params, Strictness, Window};

/// Rows an admin list gives when its `limit` is not said.
pub const PER_ANSWER: usize = 100;
/// The most rows one admin answer gives.
pub const MAX_PER_ANSWER: i64 = 1000;

/// Which of a list's rows: those still waiting for a maintainer (the default), or all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Status {
    #[default]
    Pending,
    All,
}

impl Status {
    /// The `status` given, if any. Only the API reads it, strictly: an empty value is
    /// refused too (the document's enumeration holds no empty string).
    pub(crate) fn read(given: Option<&str>) -> Result<Status, BadQuery> {
        match given {
            None | Some("pending") => Ok(Status::Pending),
            Some("all") => Ok(Status::All),
            Some(other) => Err(BadQuery::new("status", format!("`{other}` is not pending or all"))),
        }
    }
}

/// Which findings to list.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct FindingsParams {
    /// `pending` (the default): findings about current successes that no maintainer has
    /// reviewed; `all`: every finding.
    #[cfg_attr(feature = "openapi", param(schema_with = crate::query::schema::pending_or_all))]
    pub status: Option<String>,
    /// At most this many, newest runs first (1 to 1000; 100 if absent).
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 1000))]
    pub limit: Option<i64>,
}

/// The findings a maintainer asked for: which, and how many, newest runs first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FindingsQuery {
    pub status: Status,
    pub window: Window,
}

impl FindingsParams {
    pub fn view(&self) -> Result<FindingsQuery, BadQuery> {
        let status = Status::read(self.status.as_deref())?;
        let get = |name: &str| (name == "limit").then_some(self.limit).flatten().map(|n| n.to_string());
        let window = Window::newest(&Params::new(get, Strictness::Strict), PER_ANSWER, Some(MAX_PER_ANSWER))?;
        Ok(FindingsQuery { status, window })
    }
}

/// Which reads of private content to list.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct AccessLogParams {
    /// At most this many (1 to 1000, default 100).
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 1000))]
    pub limit: Option<i64>,
    /// Only reads before this sequence number (for paging).
    #[cfg_attr(feature = "openapi", param(minimum = 1))]
    pub before: Option<i64>,
}

impl AccessLogParams {
    /// The newest reads, `before` a sequence number where it is said.
    pub fn view(&self) -> Result<Window, BadQuery> {
        let get = |name: &str| match name {
            "limit" => self.limit.map(|n| n.to_string()),
            "before" => self.before.map(|n| n.to_string()),
            _ => None,
        };
        Window::newest(&Params::new(get, Strictness::Strict), PER_ANSWER, Some(MAX_PER_ANSWER))
    }
}

// Findings to review, with the runs they are about.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FindingsAnswer {
    pub findings: Vec<store::FindingRecord>,
}

/// Reads of private content, newest first.
#[cfg(feature = "db")]
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AccessLogAnswer {
    pub reads: Vec<store::AccessEntry>,
}

/// The findings a maintainer asked for.
#[cfg(feature = "db")]
pub async fn findings(
    store: &store::Store,
    query: FindingsQuery,
) -> Result<FindingsAnswer, crate::ViewError> {
    let filter = match query.status {
        Status::Pending => store::FindingsFilter::Pending,
        Status::All => store::FindingsFilter::All,
    };
    Ok(FindingsAnswer { findings: store.findings(filter, query.window.limit()).await? })
}

/// The reads of private content a maintainer asked for, newest first.
#[cfg(feature = "db")]
pub async fn access_log(store: &store::Store, window: Window) -> Result<AccessLogAnswer, crate::ViewError> {
    Ok(AccessLogAnswer { reads: store.access_log(window.limit(), window.before).await? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_lists_read_their_status_and_window_strictly() {
        let findings =
            |status: Option<&str>, limit| FindingsParams { status: status.map(str::to_owned), limit }.view();
        let q = findings(None, None).unwrap();
        assert_eq!((q.status, q.window.size), (Status::Pending, PER_ANSWER));
        assert_eq!(findings(Some("all"), Some(1000)).unwrap().window.size, 1000);
        let e = findings(Some("maybe"), None).unwrap_err();
        assert_eq!(e.message, "query parameter `status`: `maybe` is not pending or all");
        assert_eq!(findings(None, Some(1001)).unwrap_err().parameter, "limit");
        assert_eq!(findings(None, Some(0)).unwrap_err().parameter, "limit");
        let log = AccessLogParams { limit: None, before: Some(9) }.view().unwrap();
        assert_eq!((log.size, log.before), (PER_ANSWER, Some(9)));
        assert_eq!(AccessLogParams { limit: None, before: Some(0) }.view().unwrap_err().parameter, "before");
    }
}
