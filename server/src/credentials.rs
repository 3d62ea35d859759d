//! What a request carries to say who it is, read from its headers alone: a bearer
//! token, or the browser's session cookie. Who that makes the reader is
//! `crate::auth`'s to decide; whether an answer may be cached is the render cache's.

use axum::http::{HeaderMap, header};
use axum_extra::extract::cookie::CookieJar;

/// The browser session's cookie.
pub const COOKIE: &str = "rexbench_session";

/// The token of an `Authorization: Bearer …` header, if the request carries one.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::AUTHORIZATION)?.to_str().ok()?.strip_prefix("Bearer ")
}

/// The browser's session secret, if the request carries the cookie.
pub fn cookie(headers: &HeaderMap) -> Option<String> {
    CookieJar::from_headers(headers).get(COOKIE).map(|c| c.value().to_owned())
}

/// Whether a request carries credentials of any kind: its answer is for its reader
/// alone, never cached or shared.
pub fn credentialed(headers: &HeaderMap) -> bool {
    headers.contains_key(header::AUTHORIZATION) || cookie(headers).is_some()
}
