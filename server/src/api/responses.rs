//! The refusals many operations share (each an [`ErrorAnswer`]),
//! as response sets their `#[utoipa::path]` names once instead of repeating each line:
//! [`ReaderRefusals`] for what a reader's credentials can earn, [`AdminRefusals`] for an
//! admin operation's token, [`JsonBodyRefusals`] for a JSON body, [`PathRefusals`] for a
//! path segment. Each description is the one sentence the document gives it.

use std::collections::BTreeMap;

use utoipa::IntoResponses;
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder};

pub use crate::error::ErrorAnswer;

/// An [`ErrorAnswer`] under `status`, described.
fn error(status: u16, description: &str) -> (String, RefOr<Response>) {
    let content = ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorAnswer"))).build();
    let response =
        ResponseBuilder::new().description(description).content("application/json", content).build();
    (status.to_string(), RefOr::T(response))
}

fn set(responses: &[(u16, &str)]) -> BTreeMap<String, RefOr<Response>> {
    responses.iter().map(|(status, description)| error(*status, description)).collect()
}

pub const TOO_MANY_REFUSED: &str =
    "Too many refused credentials from this address (`rate_limited`, with Retry-After)";

/// What a reader's credentials can earn: 401 when they do not hold, 429 past the
/// address's allowance of refusals.
pub struct ReaderRefusals;

impl IntoResponses for ReaderRefusals {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        set(&[
            (
                401,
                "Credentials that are not valid (`invalid_credentials`, `session_expired`, `session_ended`, `key_revoked`)",
            ),
            (429, TOO_MANY_REFUSED),
        ])
    }
}

/// An admin operation's token: 401 without a valid one, 429 past the allowance of
/// refusals. (404, admin over HTTP off, is each operation's own: some 404 more.)
pub struct AdminRefusals;

impl IntoResponses for AdminRefusals {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        set(&[(401, "No valid admin token"), (429, TOO_MANY_REFUSED)])
    }
}

/// The 404 of an admin operation that finds nothing else missing.
pub struct AdminOff;

impl IntoResponses for AdminOff {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        set(&[(404, "Admin over HTTP is off")])
    }
}

/// A JSON body: 415 when not sent as JSON. (Its 400 and 422 say what each operation's
/// body is, so they are the operation's own.)
pub struct JsonBodyRefusals;

impl IntoResponses for JsonBodyRefusals {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        set(&[(415, "Not sent as application/json")])
    }
}

/// A path whose segment is not UTF-8.
pub struct PathRefusals;

impl IntoResponses for PathRefusals {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        set(&[(400, "A path that is not UTF-8")])
    }
}
