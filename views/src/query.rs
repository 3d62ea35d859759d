//! What a URL asks of a view, read in one place for both readers: strictly for the API
//! (a value that names nothing is refused, naming its parameter) and leniently for the
//! pages (it is dropped, so a stale or hand-edited link still shows the view). Each
//! view's query type (`board::BoardQuery`, `changes::ChangesQuery`,
//! `parity::ParityQuery`) reads its parameters through [`Params`], so the two readings
//! cannot drift apart.

use std::fmt;
use std::str::FromStr;

/// How a query's values that name nothing are met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// The API's: refused with [`BadQuery`].
    Strict,
    /// The pages': dropped, the view's default standing in.
    Lenient,
}

/// A query parameter the API refuses, with the sentence that says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadQuery {
    pub parameter: &'static str,
    pub message: String,
}

impl BadQuery {
    /// "query parameter `tier`: …".
    pub fn new(parameter: &'static str, detail: impl fmt::Display) -> BadQuery {
        BadQuery { parameter, message: format!("query parameter `{parameter}`: {detail}") }
    }

    /// "query parameter `limit` must be from 1 to 500, not 0".
    pub fn out_of_range(parameter: &'static str, bound: impl fmt::Display, value: i64) -> BadQuery {
        BadQuery { parameter, message: format!("query parameter `{parameter}` must be {bound}, not {value}") }
    }
}

impl fmt::Display for BadQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BadQuery {}

/// A query string as a view reads it: `get` gives a parameter's value (an empty value is
/// no value: the page's forms send "any" as empty), under one [`Strictness`].
pub struct Params<G> {
    get: G,
    pub reading: Strictness,
}

impl<G> std::fmt::Debug for Params<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Params").field("reading", &self.reading).finish_non_exhaustive()
    }
}

impl<G: Fn(&str) -> Option<String>> Params<G> {
    pub fn new(get: G, reading: Strictness) -> Params<G> {
        Params { get, reading }
    }

    /// The parameter's value, if it has a non-empty one.
    pub fn text(&self, name: &str) -> Option<String> {
        (self.get)(name).filter(|v| !v.is_empty())
    }

    /// The value, kept only if `valid` holds; else refused with `why` (strict) or dropped.
    pub fn checked(
        &self,
        name: &'static str,
        valid: impl Fn(&str) -> bool,
        why: impl Fn(&str) -> String,
    ) -> Result<Option<String>, BadQuery> {
        match self.text(name) {
            Some(v) if !valid(&v) => self.refuse(|| BadQuery::new(name, why(&v))),
            other => Ok(other),
        }
    }

    /// A name of a vocabulary (`tier=maintainer`): its own error sentence when strict.
    pub fn name<T: FromStr>(&self, name: &'static str) -> Result<Option<T>, BadQuery>
    where
        T::Err: fmt::Display,
    {
        match self.text(name).map(|v| v.parse::<T>()) {
            None => Ok(None),
            Some(Ok(t)) => Ok(Some(t)),
            Some(Err(e)) => self.refuse(|| BadQuery::new(name, e)),
        }
    }

    /// One of a few words (`tasks=public`) that `parse` knows, `why` saying which it
    /// expected when strict.
    pub fn word<T>(
        &self,
        name: &'static str,
        parse: impl Fn(&str) -> Option<T>,
        why: impl Fn(&str) -> String,
    ) -> Result<Option<T>, BadQuery> {
        match self.text(name) {
            None => Ok(None),
            Some(v) => match parse(&v) {
                Some(t) => Ok(Some(t)),
                None => self.refuse(|| BadQuery::new(name, why(&v))),
            },
        }
    }

    /// A whole number within `range` (`bound` says it in words); what is not a number is
    /// the API extractor's to refuse, and dropped here.
    pub fn number(
        &self,
        name: &'static str,
        range: std::ops::RangeInclusive<i64>,
        bound: &str,
    ) -> Result<Option<i64>, BadQuery> {
        match self.text(name).and_then(|v| v.parse::<i64>().ok()) {
            Some(n) if !range.contains(&n) => self.refuse(|| BadQuery::out_of_range(name, bound, n)),
            other => Ok(other),
        }
    }

    /// The value dropped, or (strictly) refused with the sentence `bad` makes. The
    /// browser reads leniently only (its islands order and filter rows the server
    /// gave), so the strict reading and its sentences are not compiled into its
    /// WebAssembly: there a strict reading drops as a lenient one does.
    fn refuse<T>(&self, bad: impl FnOnce() -> BadQuery) -> Result<Option<T>, BadQuery> {
        if cfg!(not(target_arch = "wasm32")) && self.reading == Strictness::Strict {
            return Err(bad());
        }
        Ok(None)
    }
}

/// Rows in each page of an API answer cut into pages, unless `per_page` says.
pub const API_PER_PAGE: usize = 100;
/// The most rows in one page of an API answer.
pub const API_MOST_PER_PAGE: i64 = 500;

/// Which part of a long list one page or API answer holds: the one pagination of every
/// list. Ranked lists (the board, a task's agents) are read by numbered pages
/// ([`Window::pages`]: `page`, and `per_page` where the reader may choose); logs read
/// newest first (the changes, the findings, the reads of private outputs) by a sequence
/// number to read before ([`Window::newest`]: `limit` and `before`), as rows are added
/// at their head between two requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The page, from 1 (always 1 for a log: `before` moves it on).
    pub page: usize,
    /// Rows a page.
    pub size: usize,
    /// Only rows before this sequence number (logs only).
    pub before: Option<i64>,
}

impl Window {
    /// A numbered page: `page` (1 or more; 1 if not said) and, where the reader may
    /// choose (`most` is given), `per_page` (1 to `most`), else `size` rows.
    pub fn pages<G: Fn(&str) -> Option<String>>(
        p: &Params<G>,
        size: usize,
        most: Option<i64>,
    ) -> Result<Window, BadQuery> {
        let page = p.number("page", 1..=i64::MAX, "1 or more")?;
        let per_page = match most {
            Some(most) => p.number("per_page", 1..=most, &format!("from 1 to {most}"))?,
            None => None,
        };
        Ok(Window { page: whole(page, 1), size: whole(per_page, size), before: None })
    }

    /// The newest rows of a log: `limit` of them (1 to `most`, `size` if not said; a
    /// page's size is fixed, `most` not given), `before` a sequence number (1 or more).
    pub fn newest<G: Fn(&str) -> Option<String>>(
        p: &Params<G>,
        size: usize,
        most: Option<i64>,
    ) -> Result<Window, BadQuery> {
        let limit = match most {
            Some(most) => p.number("limit", 1..=most, &format!("from 1 to {most}"))?,
            None => None,
        };
        let before = p.number("before", 1..=i64::MAX, "1 or more")?;
        Ok(Window { page: 1, size: whole(limit, size), before })
    }

    /// Of the rows in order, how many to skip and how many to take.
    pub fn cut(self) -> (usize, usize) {
        (self.page.saturating_sub(1).saturating_mul(self.size), self.size)
    }

    /// Which of `total` rows in order the window shows, by the one rule past the end:
    /// a page past the last shows none (the API answers an empty page, a page says so
    /// and links the last), and every list, API or page, is cut here.
    pub fn of(self, total: usize) -> Cut {
        let (skip, take) = self.cut();
        let skip = skip.min(total);
        Cut {
            page: self.page.max(1),
            pages: total.div_ceil(self.size.max(1)).max(1),
            skip,
            take: take.min(total - skip),
        }
    }

    /// Rows a page, as the store's reads take it.
    pub fn limit(self) -> i64 {
        i64::try_from(self.size).unwrap_or(i64::MAX)
    }
}

/// A window laid over a list: the page asked for, how many pages the list makes, and the
/// rows to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub page: usize,
    pub pages: usize,
    pub skip: usize,
    pub take: usize,
}

impl Cut {
    /// The rows shown, as positions in the list.
    pub fn range(self) -> std::ops::Range<usize> {
        self.skip..self.skip + self.take
    }

    /// The rows shown of `items`.
    pub fn rows<T>(self, items: &[T]) -> &[T] {
        &items[self.range()]
    }
}

/// A number read, or `default`.
fn whole(n: Option<i64>, default: usize) -> usize {
    n.map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// Which page of an answer cut into pages (the API's leaderboard, a task's agents), as
/// the OpenAPI document states it.
#[derive(Debug, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct PageParams {
    /// The page, from 1 (the default); a page past the last is empty.
    #[cfg_attr(feature = "openapi", param(minimum = 1))]
    pub page: Option<i64>,
    /// Rows in each page: 1 to 500, default 100.
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    pub per_page: Option<i64>,
}

impl PageParams {
    /// The page and its rows, read strictly: out of range, the parameter is named.
    pub fn window(&self) -> Result<Window, BadQuery> {
        let get = |name: &str| match name {
            "page" => self.page.map(|n| n.to_string()),
            "per_page" => self.per_page.map(|n| n.to_string()),
            _ => None,
        };
        Window::pages(&Params::new(get, Strictness::Strict), API_PER_PAGE, Some(API_MOST_PER_PAGE))
    }
}

/// The OpenAPI schemas of parameters that take a vocabulary's names, or the empty
/// string for "any" (as the pages' forms send it).
#[cfg(feature = "openapi")]
pub mod schema {
    use utoipa::openapi::schema::{Object, ObjectBuilder, Type};

    /// One of `names`, or the empty string.
    pub fn name_or_any<'a>(names: impl IntoIterator<Item = &'a str>) -> Object {
        let values: Vec<&str> = std::iter::once("").chain(names).collect();
        ObjectBuilder::new().schema_type(Type::String).enum_values(Some(values)).build()
    }

    pub fn tier_or_any() -> Object {
        name_or_any(store::Tier::ALL.iter().map(|t| t.as_str()))
    }

    pub fn provenance_or_any() -> Object {
        name_or_any(store::ProvenanceKind::ALL.iter().map(|k| k.as_str()))
    }

    pub fn integrity_or_default() -> Object {
        name_or_any(store::Integrity::ALL.iter().map(|i| i.as_str()))
    }

    /// `pending` or `all`: the maintainers' lists' `status`.
    pub fn pending_or_all() -> Object {
        ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["pending", "all"])).build()
    }

    pub fn hint_or_none() -> Object {
        name_or_any(store::Hint::ALL.iter().map(|h| h.as_str()))
    }
}

/// A lenient reading's answer: it refuses nothing.
pub(crate) fn lenient<T>(read: Result<T, BadQuery>) -> T {
    match read {
        Ok(t) => t,
        // The browser's build says nothing here: no sentence (nor a panic's place) is
        // compiled into it.
        Err(_) if cfg!(target_arch = "wasm32") => std::process::abort(),
        Err(bad) => unreachable!("a lenient reading refused {bad}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_read_strictly_with_its_defaults() {
        let pages = |page, per_page| PageParams { page, per_page }.window().map(|w| (w.page, w.size));
        assert_eq!(pages(None, None).unwrap(), (1, API_PER_PAGE));
        assert_eq!(pages(Some(2), Some(10)).unwrap(), (2, 10));
        assert_eq!(pages(Some(3), Some(API_MOST_PER_PAGE)).unwrap(), (3, 500));
        assert_eq!(pages(Some(0), None).unwrap_err().parameter, "page");
        assert_eq!(pages(None, Some(0)).unwrap_err().parameter, "per_page");
        assert_eq!(pages(None, Some(501)).unwrap_err().parameter, "per_page");
        assert_eq!(Window { page: 3, size: 10, before: None }.cut(), (20, 10));
        // The one rule past the end: a page past the last shows nothing and says so.
        let w = |page| Window { page, size: 10, before: None };
        assert_eq!(w(3).of(25), Cut { page: 3, pages: 3, skip: 20, take: 5 });
        assert_eq!(w(4).of(25), Cut { page: 4, pages: 3, skip: 25, take: 0 });
        assert_eq!(w(1).of(0), Cut { page: 1, pages: 1, skip: 0, take: 0 });
        assert_eq!(w(usize::MAX).of(7).rows(&[0; 7]), &[] as &[i32]);
        assert_eq!(
            Window { page: usize::MAX, size: 500, before: None }.cut(),
            (usize::MAX, 500),
            "no overflow"
        );
    }

    #[test]
    fn a_log_is_read_newest_first_before_a_number() {
        let get = |k: &str| match k {
            "limit" => Some("20".to_owned()),
            "before" => Some("7".to_owned()),
            "page" => Some("x".to_owned()),
            _ => None,
        };
        let strict = Params::new(&get, Strictness::Strict);
        assert_eq!(
            Window::newest(&strict, 50, Some(500)).unwrap(),
            Window { page: 1, size: 20, before: Some(7) }
        );
        assert_eq!(Window::newest(&strict, 50, None).unwrap().size, 50, "a page's size is fixed");
        assert_eq!(Window::pages(&strict, 50, None).unwrap(), Window { page: 1, size: 50, before: None });
        let bad = |k: &str| (k == "before").then(|| "0".to_owned());
        let e = Window::newest(&Params::new(&bad, Strictness::Strict), 50, Some(500)).unwrap_err();
        assert_eq!(e.message, "query parameter `before` must be 1 or more, not 0");
        assert_eq!(Window::newest(&Params::new(&bad, Strictness::Lenient), 50, None).unwrap().before, None);
    }

    #[test]
    fn strict_refuses_what_lenient_drops() {
        let get = |k: &str| match k {
            "tier" => Some("gold".to_owned()),
            "limit" => Some("0".to_owned()),
            "empty" => Some(String::new()),
            _ => None,
        };
        let strict = Params::new(&get, Strictness::Strict);
        let lenient = Params::new(&get, Strictness::Lenient);
        let e = strict.name::<store::Tier>("tier").unwrap_err();
        assert_eq!(e.parameter, "tier");
        assert!(e.message.starts_with("query parameter `tier`: "), "{e}");
        assert_eq!(lenient.name::<store::Tier>("tier").unwrap(), None);
        assert_eq!(
            strict.number("limit", 1..=500, "from 1 to 500").unwrap_err().message,
            "query parameter `limit` must be from 1 to 500, not 0"
        );
        assert_eq!(lenient.number("limit", 1..=500, "from 1 to 500").unwrap(), None);
        assert_eq!(strict.text("empty"), None, "an empty value is no value");
    }
}
