//! Key requests as a view: what a request states publicly (its owner, URL and status,
//! the maintainers' reason when declined) and what only its key's holder and the
//! maintainers read (its contact, its note, the bundles it holds while pending); the
//! rules a request's fields are held to; and the maintainers' list, a page at a time.
//! The request page, the desk, and the API's answers read it here.

use serde::{Deserialize, Serialize};
use store::{HeldBundle, KeyRequestRecord, RequestStatus, Tier};

use crate::access::Reader;
use crate::query::{BadQuery, Params, Strictness, Window};

/// A key request, as its reader may see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KeyRequestView {
    pub id: i64,
    pub keyid: String,
    /// Who asks, as results will show them once approved.
    pub owner: String,
    pub url: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "pending"))]
    pub status: RequestStatus,
    /// The tier the maintainers chose, once approved.
    pub tier: Option<Tier>,
    /// The maintainers' reason, once declined.
    pub reason: Option<String>,
    pub requested_at: String,
    pub decided_at: Option<String>,
    /// For the key's holder and the maintainers only; absent for anyone else.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private: Option<RequestPrivate>,
}

/// What only a request's key holder and the maintainers read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RequestPrivate {
    pub contact: String,
    pub note: Option<String>,
    /// The bundles the key submitted while pending, oldest first: on no public answer
    /// until the key is approved.
    pub held: Vec<HeldBundle>,
}

/// One request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KeyRequestAnswer {
    pub request: KeyRequestView,
    /// Where a browser sees it.
    pub page: String,
}

/// The maintainers' list of requests, a page at a time.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KeyRequestsAnswer {
    pub requests: Vec<KeyRequestView>,
    pub page: usize,
    pub per_page: usize,
    pub total: usize,
}

/// Rows a page of requests, and the most one API answer gives.
pub const PER_PAGE: usize = 50;
pub const MAX_PER_PAGE: i64 = 500;

/// Which requests to list: pending (the default) or all, and which page.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct RequestsParams {
    /// `pending` (the default): requests no maintainer has decided; `all`: every one.
    #[cfg_attr(feature = "openapi", param(schema_with = crate::query::schema::pending_or_all))]
    pub status: Option<String>,
    /// The page, from 1 (the default); a page past the last holds no requests.
    #[cfg_attr(feature = "openapi", param(minimum = 1))]
    pub page: Option<i64>,
    /// Requests in each page: 1 to 500, default 50.
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    pub per_page: Option<i64>,
}

/// The requests asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestsQuery {
    pub pending_only: bool,
    pub window: Window,
}

impl RequestsParams {
    /// Read strictly (the API's).
    pub fn view(&self) -> Result<RequestsQuery, BadQuery> {
        let status = crate::admin::Status::read(self.status.as_deref())?;
        let get = |name: &str| match name {
            "page" => self.page.map(|n| n.to_string()),
            "per_page" => self.per_page.map(|n| n.to_string()),
            _ => None,
        };
        let window = Window::pages(&Params::new(get, Strictness::Strict), PER_PAGE, Some(MAX_PER_PAGE))?;
        Ok(RequestsQuery { pending_only: status == crate::admin::Status::Pending, window })
    }
}

/// The request's page on this site.
pub fn page_of(id: i64) -> String {
    format!("/keys/request?id={id}")
}

/// A request as `reader` may see it: its private part for its key's holder and the
/// maintainers alone (`Reader::holds_or_maintains`).
pub fn view(record: KeyRequestRecord, held: Vec<HeldBundle>, reader: &Reader) -> KeyRequestView {
    let private = reader.holds_or_maintains(&record.keyid).then(|| RequestPrivate {
        contact: record.contact.clone(),
        note: record.note.clone(),
        held,
    });
    KeyRequestView {
        id: record.id,
        keyid: record.keyid,
        owner: record.owner,
        url: record.url,
        status: record.status,
        tier: record.tier,
        reason: record.reason,
        requested_at: record.requested_at,
        decided_at: record.decided_at,
        private,
    }
}

/// A field of a request that breaks its rule: the API's code and a sentence naming it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadField {
    pub code: &'static str,
    pub message: String,
}

fn bad(code: &'static str, message: impl Into<String>) -> BadField {
    BadField { code, message: message.into() }
}

/// A line of text a request states: `min` to `max` characters, not all blank, no control
/// characters (a line break in a note is one).
fn text(field: &str, value: &str, max: usize, lines: bool, code: &'static str) -> Result<(), BadField> {
    let n = value.chars().count();
    if value.trim().is_empty() || n > max {
        return Err(bad(code, format!("`{field}` must be 1 to {max} characters, not all blank ({n} given)")));
    }
    if let Some(c) = value.chars().find(|c| c.is_control() && !(lines && (*c == '\n' || *c == '\t'))) {
        return Err(bad(code, format!("`{field}` holds the control character U+{:04X}", c as u32)));
    }
    Ok(())
}

/// Punctuation an owner's name may hold beside letters, digits and single spaces.
const OWNER_PUNCTUATION: &str = "-_.,'&()+/@:#!?";
/// Letters no reader sees (Hangul fillers): refused like the invisible characters.
const INVISIBLE_LETTERS: &[char] = &['\u{115F}', '\u{1160}', '\u{3164}', '\u{FFA0}'];
/// Words an owner may not take beside the badges': the board's and its keepers' names.
const RESERVED_OWNER_WORDS: &[&str] = &[
    "published",
    "admin",
    "administrator",
    "administrators",
    "rexbench",
    "moderator",
    "staff",
    "leaderboard",
];

/// The owner's rule: a name of 1 to 200 characters, letters and digits of any script with
/// single spaces and a little ASCII punctuation (no invisible, combining, direction or
/// control character: each could make it read as another), that reads as none of the
/// board's badge words or glyphs nor its reserved words (look-alike letters included,
/// and letters spaced apart: `V e r i f i e d`). Whether another owner reads the same is
/// the store's to say, against the registry (`bundle::owner_key`).
pub fn check_owner(owner: &str) -> Result<(), BadField> {
    text("owner", owner, 200, false, "invalid_owner")?;
    if let Some(found) = bundle::imitates_badge(owner) {
        return Err(bad(
            "owner_imitates_badge",
            format!("owner {owner:?} reads as the board's badge {found:?}: choose a name that does not"),
        ));
    }
    if let Some(c) = owner.chars().find(|c| {
        !(c.is_alphanumeric() || *c == ' ' || OWNER_PUNCTUATION.contains(*c)) || INVISIBLE_LETTERS.contains(c)
    }) {
        return Err(bad(
            "invalid_owner",
            format!(
                "`owner` holds U+{:04X}: a name is letters and digits, single spaces and {OWNER_PUNCTUATION}",
                c as u32
            ),
        ));
    }
    if owner.trim() != owner || owner.contains("  ") {
        return Err(bad("invalid_owner", "`owner` begins or ends with a space, or holds two in a row"));
    }
    if !owner.chars().any(char::is_alphanumeric) {
        return Err(bad("invalid_owner", "`owner` holds no letter or digit"));
    }
    // Letters spaced apart read as one word: `V e r i f i e d` is `Verified`.
    let mut words: Vec<String> = Vec::new();
    let mut spaced = String::new();
    for word in owner.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        if word.chars().count() == 1 {
            spaced.push_str(word);
            continue;
        }
        if !spaced.is_empty() {
            words.push(std::mem::take(&mut spaced));
        }
        words.push(word.to_owned());
    }
    if !spaced.is_empty() {
        words.push(spaced);
    }
    let read = words.join(" ");
    let reserved = words.iter().find(|w| {
        let seen = bundle::owner_key(w);
        RESERVED_OWNER_WORDS.iter().any(|r| bundle::owner_key(r) == seen)
    });
    if let Some(found) =
        bundle::imitates_badge(owner).or_else(|| bundle::imitates_badge(&read)).or(reserved.cloned())
    {
        return Err(bad(
            "owner_imitates_badge",
            format!("owner {owner:?} reads as the board's word {found:?}: choose a name that does not"),
        ));
    }
    Ok(())
}

/// A contact: an e-mail address (`name@host`) or an `https://` address, up to 200
/// characters.
pub fn check_contact(contact: &str) -> Result<(), BadField> {
    text("contact", contact, 200, false, "invalid_contact")?;
    let c = contact.trim();
    let mail = c.split_once('@').is_some_and(|(user, host)| {
        !user.is_empty()
            && user.chars().all(|ch| ch.is_ascii_alphanumeric() || "._%+-".contains(ch))
            && host.contains('.')
            && !host.starts_with('.')
            && !host.ends_with('.')
            && host.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '.' || ch == '-')
    });
    if !(mail || (c.starts_with("https://") && web(c))) {
        return Err(bad(
            "invalid_contact",
            format!("`contact` {c:?} is neither an e-mail address (name@host) nor an https:// address"),
        ));
    }
    Ok(())
}

/// A web address as a request may give one: `https://` or `http://`, a host, no spaces.
fn web(value: &str) -> bool {
    let rest = value.strip_prefix("https://").or_else(|| value.strip_prefix("http://"));
    rest.is_some_and(|r| {
        let host = r.split(['/', '?', '#']).next().unwrap_or("");
        !host.is_empty() && !r.contains(char::is_whitespace) && !r.contains(['<', '>', '"', '\\'])
    })
}

/// The team's page, if given: an `https://` or `http://` address up to 300 characters.
pub fn check_url(url: &str) -> Result<(), BadField> {
    text("url", url, 300, false, "invalid_url")?;
    if !web(url) {
        return Err(bad("invalid_url", format!("`url` {url:?} is not an https:// or http:// address")));
    }
    Ok(())
}

/// A note for the maintainers: up to 2000 characters, lines allowed.
pub fn check_note(note: &str) -> Result<(), BadField> {
    text("note", note, 2000, true, "invalid_note")
}

/// The maintainers' reason for declining: 1 to 1000 characters.
pub fn check_reason(reason: &str) -> Result<(), BadField> {
    text("reason", reason, 1000, true, "invalid_reason")
}

#[cfg(feature = "db")]
mod answers {
    use super::*;

    /// One request, for `reader`.
    pub async fn request(
        store: &store::Store,
        id: i64,
        reader: &Reader,
    ) -> Result<KeyRequestAnswer, crate::ViewError> {
        let record = store.key_request(id).await?;
        let held = if reader.holds_or_maintains(&record.keyid) {
            store.held_bundles(id).await?.into_iter().map(|(h, _)| h).collect()
        } else {
            Vec::new()
        };
        Ok(KeyRequestAnswer { page: page_of(id), request: view(record, held, reader) })
    }

    /// The maintainers' list, a page of it.
    pub async fn requests(
        store: &store::Store,
        query: RequestsQuery,
        reader: &Reader,
    ) -> Result<KeyRequestsAnswer, crate::ViewError> {
        let (skip, take) = query.window.cut();
        let (records, total) = store
            .key_requests(query.pending_only, take as i64, i64::try_from(skip).unwrap_or(i64::MAX))
            .await?;
        let mut requests = Vec::with_capacity(records.len());
        for record in records {
            let held = store.held_bundles(record.id).await?.into_iter().map(|(h, _)| h).collect();
            requests.push(view(record, held, reader));
        }
        Ok(KeyRequestsAnswer {
            requests,
            page: query.window.page,
            per_page: query.window.size,
            total: usize::try_from(total).unwrap_or(0),
        })
    }
}

#[cfg(feature = "db")]
pub use answers::{request, requests};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requests_fields_are_held_to_their_rules() {
        assert!(check_owner("Lab of Agents").is_ok());
        assert_eq!(check_owner(" ").unwrap_err().code, "invalid_owner");
        assert_eq!(check_owner(&"x".repeat(201)).unwrap_err().code, "invalid_owner");
        assert_eq!(check_owner("Team\u{7}").unwrap_err().code, "invalid_owner");
        assert_eq!(check_owner("Verified Team").unwrap_err().code, "owner_imitates_badge");
        // Cyrillic е and і read as Latin e and i.
        assert_eq!(check_owner("V\u{0435}r\u{0456}fied").unwrap_err().code, "owner_imitates_badge");
        assert_eq!(check_owner("✔ Lab").unwrap_err().code, "owner_imitates_badge");
        // What a submitter's review found: direction overrides, invisible, combining and
        // blank characters, doubled spaces, letters spaced apart, the board's own names.
        for (owner, code) in [
            ("\u{202E}deifireV", "invalid_owner"),
            ("\u{200B}\u{200B}", "invalid_owner"),
            ("\u{2800}\u{2800}", "invalid_owner"),
            ("\u{0301}\u{0301}", "invalid_owner"),
            ("Example\u{180E}team", "invalid_owner"),
            ("Lab\u{0334}\u{0334}", "invalid_owner"),
            ("\u{3164}", "invalid_owner"),
            ("Example  team", "invalid_owner"),
            (" Lab", "invalid_owner"),
            ("...", "invalid_owner"),
            ("V e r i f i e d", "owner_imitates_badge"),
            ("M a i n t a i n e r Lab", "owner_imitates_badge"),
            ("Published", "owner_imitates_badge"),
            ("RExBench", "owner_imitates_badge"),
            ("Admin", "owner_imitates_badge"),
        ] {
            assert_eq!(check_owner(owner).map_err(|e| e.code), Err(code), "{owner:?}");
        }
        assert!(check_owner("Équipe Müller & Søn (Zürich)").is_ok());
        assert!(check_owner("A B Lab").is_ok());
        assert_eq!(bundle::owner_key("Team  A"), bundle::owner_key("team-a"));
        assert!(check_contact("team@lab.org").is_ok());
        assert!(check_contact("https://lab.org/contact").is_ok());
        assert_eq!(check_contact("call us").unwrap_err().code, "invalid_contact");
        assert_eq!(check_contact("a@b").unwrap_err().code, "invalid_contact");
        for contact in ["http://a.org", "mailto:a@b.org", "<script>alert(1)</script>@x.org"] {
            assert_eq!(check_contact(contact).unwrap_err().code, "invalid_contact", "{contact}");
        }
        assert!(check_url("https://lab.org").is_ok());
        assert_eq!(check_url("javascript:alert(1)").unwrap_err().code, "invalid_url");
        assert_eq!(check_url("https://lab.org/\"onclick").unwrap_err().code, "invalid_url");
        assert!(check_note("line one\nline two").is_ok());
        assert_eq!(check_note(&"n".repeat(2001)).unwrap_err().code, "invalid_note");
        assert_eq!(check_reason("").unwrap_err().code, "invalid_reason");
    }

    #[test]
    fn a_requests_private_part_is_its_holders_and_the_maintainers() {
        let record = KeyRequestRecord {
            id: 7,
            keyid: "k1".into(),
            public_key: "pem".into(),
            owner: "Lab".into(),
            url: None,
            contact: "team@lab.org".into(),
            note: Some("hello".into()),
            status: RequestStatus::Pending,
            tier: None,
            reason: None,
            requested_at: "2026-12-04T00:00:00Z".into(),
            decided_at: None,
        };
        let own = Reader::Submitter { keyid: "k1".into(), owner: "Lab".into() };
        let other = Reader::Submitter { keyid: "k2".into(), owner: "Other".into() };
        let maintainer = Reader::Maintainer { who: "admin token".into(), keyid: None };
        assert!(view(record.clone(), vec![], &Reader::Public).private.is_none());
        assert!(view(record.clone(), vec![], &other).private.is_none());
        assert_eq!(view(record.clone(), vec![], &own).private.unwrap().contact, "team@lab.org");
        assert!(view(record, vec![], &maintainer).private.is_some());
    }
}
