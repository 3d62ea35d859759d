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

/// Entries the Atom feed holds: the newest changes.
pub const FEED_ENTRIES: i64 = 50;

/// The change log as an Atom feed (RFC 4287): one entry a change, newest first, each
/// with its kind, agent, summary and a link to what it is about; `base` is the site's
/// public address (`REXBENCH_PUBLIC_URL`), which every id and link is made absolute
/// with. Everything written is escaped by the XML writer (a detail can come from a
/// bundle).
#[cfg(feature = "db")]
pub fn atom(changes: &[Change], base: &str) -> String {
    use quick_xml::Writer;
    use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

    let base = base.trim_end_matches('/');
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 1);
    let text = |w: &mut Writer<Vec<u8>>, name: &str, value: &str| {
        w.write_event(Event::Start(BytesStart::new(name))).expect("to memory");
        w.write_event(Event::Text(BytesText::new(value))).expect("to memory");
        w.write_event(Event::End(BytesEnd::new(name))).expect("to memory");
    };
    let link = |w: &mut Writer<Vec<u8>>, rel: &str, href: &str, kind: Option<&str>| {
        let mut l = BytesStart::new("link");
        l.push_attribute(("rel", rel));
        l.push_attribute(("href", href));
        if let Some(kind) = kind {
            l.push_attribute(("type", kind));
        }
        w.write_event(Event::Empty(l)).expect("to memory");
    };
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("utf-8"), None))).expect("to memory");
    let mut feed = BytesStart::new("feed");
    feed.push_attribute(("xmlns", "http://www.w3.org/2005/Atom"));
    w.write_event(Event::Start(feed)).expect("to memory");
    text(&mut w, "id", &format!("{base}/changes.atom"));
    text(&mut w, "title", "RExBench leaderboard: changes");
    text(
        &mut w,
        "subtitle",
        "Every submission stored or superseded, every review, reproduction and registry change.",
    );
    let updated = changes.first().map_or("1970-01-01T00:00:00Z", |c| c.at.as_str());
    text(&mut w, "updated", updated);
    w.write_event(Event::Start(BytesStart::new("author"))).expect("to memory");
    text(&mut w, "name", "RExBench leaderboard");
    w.write_event(Event::End(BytesEnd::new("author"))).expect("to memory");
    link(&mut w, "self", &format!("{base}/changes.atom"), Some("application/atom+xml"));
    link(&mut w, "alternate", &format!("{base}/changes"), Some("text/html"));
    for c in changes {
        w.write_event(Event::Start(BytesStart::new("entry"))).expect("to memory");
        text(&mut w, "id", &format!("{base}/changes#change-{}", c.seq));
        let about = c.agent_id.as_deref().or(c.task.as_deref());
        let title = match about {
            Some(about) => format!("{}: {about}", c.kind.replace('_', " ")),
            None => {
                let detail: String = c.detail.chars().take(80).collect();
                let more = if c.detail.chars().count() > 80 { "…" } else { "" };
                format!("{}: {detail}{more}", c.kind.replace('_', " "))
            }
        };
        text(&mut w, "title", &title);
        text(&mut w, "updated", &c.at);
        let mut category = BytesStart::new("category");
        category.push_attribute(("term", c.kind.as_str()));
        w.write_event(Event::Empty(category)).expect("to memory");
        let href = match (&c.agent_id, &c.task) {
            (Some(agent), _) => format!("{base}/agents/{}", crate::format::segment(agent)),
            (None, Some(task)) => format!("{base}/tasks/{}", crate::format::segment(task)),
            (None, None) => format!("{base}/changes?before={}", c.seq + 1),
        };
        link(&mut w, "alternate", &href, Some("text/html"));
        text(&mut w, "summary", &c.detail);
        w.write_event(Event::End(BytesEnd::new("entry"))).expect("to memory");
    }
    w.write_event(Event::End(BytesEnd::new("feed"))).expect("to memory");
    let mut out = String::from_utf8(w.into_inner()).expect("the writer writes UTF-8");
    out.push('\n');
    out
}
