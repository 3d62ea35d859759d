//! Who may do what, from what a request carries: nothing (anyone), the admin token (a
//! maintainer), a session token (`Authorization: Bearer rxs_…`, from `rexbench login`)
//! or a browser's session cookie (from a one-time sign-in link). The extractors a
//! handler names say what it needs: [`Reading`] (any reader, credentials checked),
//! [`Admin`] (the admin token) and [`ClientParts`] (sign-in's own handlers, which
//! guard themselves); pages read [`page_reader`].
//!
//! Signing in needs no password: a submitter's registered key signs a challenge the
//! server issued (`POST /api/v1/login/challenge`, then `POST /api/v1/login`), which
//! opens a short-lived token for the CLI and a one-time link that opens a browser
//! session. Maintainers get a link from `rexbench-server sign-in-link`. Sessions live
//! in the database, so every server process knows them, and end at sign-out, on expiry,
//! and at once when their key is revoked ([`sessions`]). The signature is Ed25519
//! (`ed25519-dalek`, through the bundle crate); cookies are written by the `cookie`
//! crate (through `axum-extra`). A cookie is `HttpOnly`, `SameSite=Strict` (no other
//! site's page or form sends it) and `Secure` when the server is reached over TLS; the
//! forms a session can send also check that they come from this site
//! (`Sec-Fetch-Site`, else `Origin`).

pub mod sessions;

use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use store::SessionKind;
use subtle::ConstantTimeEq;
use views::access::Reader;

use crate::credentials;
use crate::error::ApiError;
use crate::metrics::Refusal;
use crate::state::{AppState, Shared};
pub use sessions::{DOMAIN, LINK_MINUTES, MAINTAINER_TTL, link, signed_message};
use sessions::{TOKEN_PREFIX, session_reader};

/// What a request's credentials prove: its reader, or why they are refused.
pub async fn reader_of(app: &AppState, headers: &HeaderMap) -> Result<Reader, ApiError> {
    if headers.contains_key(header::AUTHORIZATION) {
        let given = credentials::bearer(headers).unwrap_or("");
        if is_admin_token(app, given) {
            return Ok(Reader::Maintainer { who: "admin token".into(), keyid: None });
        }
        if given.starts_with(TOKEN_PREFIX) {
            return session_reader(app, given, SessionKind::Token).await;
        }
        return Err(ApiError::unauthorized(
            "invalid_credentials",
            "the Authorization header names no valid credentials: send none to read as anyone, the admin token, \
             or a token from `rexbench login` (Bearer …)",
        ));
    }
    match credentials::cookie(headers) {
        Some(secret) => session_reader(app, &secret, SessionKind::Browser).await,
        None => Ok(Reader::Public),
    }
}

/// The API's reader (`views::access::Reader`). Credentials that are given and wrong are
/// refused (401), never read as none: a client that meant to sign in learns at once that
/// it did not. Each refusal is counted and held to the sign-in allowance of its address.
#[derive(Debug, Clone)]
pub struct Reading(pub Reader);

impl<S: Send + Sync> FromRequestParts<S> for Reading
where
    Shared: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let app = Shared::from_ref(state);
        // An address locked out sends no credential that is looked at, the right one
        // included; reading as anyone, without credentials, is no attempt.
        if credentials::credentialed(&parts.headers) {
            app.guard.locked_out(app.guard.client(&parts.headers, &parts.extensions))?;
        }
        match reader_of(&app, &parts.headers).await {
            Ok(reader) => Ok(Reading(reader)),
            Err(e) => Err(count_refusal(&app, parts, e)),
        }
    }
}

/// Counts a refused credential and holds the address to its allowance: past it, the
/// answer is 429 instead.
fn count_refusal(app: &AppState, parts: &Parts, e: ApiError) -> ApiError {
    app.metrics.refused(Refusal::InvalidCredentials);
    let client = app.guard.client(&parts.headers, &parts.extensions);
    match app.guard.admit_sign_in(client) {
        Ok(()) => e,
        Err(limited) => limited,
    }
}

/// The reader a page is rendered for: as the API's, except that a page cannot answer in
/// the API's JSON, so credentials that do not hold read as none (a page for anyone).
pub async fn page_reader(app: &AppState, headers: &HeaderMap) -> Reader {
    reader_of(app, headers).await.unwrap_or(Reader::Public)
}

/// An admin: the request carries `Authorization: Bearer <REXBENCH_ADMIN_TOKEN>`,
/// compared in constant time. Without a token configured, admin over HTTP is off (404).
#[derive(Debug)]
pub struct Admin;

impl<S: Send + Sync> FromRequestParts<S> for Admin
where
    Shared: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let app = Shared::from_ref(state);
        if app.admin_token.is_none() {
            return Err(ApiError::absent(
                "admin_disabled",
                "admin over HTTP is off: no REXBENCH_ADMIN_TOKEN is configured",
            ));
        }
        let client = app.guard.client(&parts.headers, &parts.extensions);
        if !parts.headers.contains_key(header::AUTHORIZATION) {
            // No credential sent, none refused: nothing is spent of the allowance.
            return Err(ApiError::unauthorized(
                "admin_unauthorized",
                "a valid admin token is needed (Authorization: Bearer …)",
            ));
        }
        // During a lockout the right token is refused too: the limit slows guessing.
        app.guard.locked_out(client)?;
        if is_admin_token(&app, credentials::bearer(&parts.headers).unwrap_or("")) {
            Ok(Admin)
        } else {
            // Counted and held to the address's sign-in allowance like every refused
            // credential: guessing the token is as slow as guessing a session.
            app.metrics.refused(Refusal::InvalidCredentials);
            app.guard.admit_sign_in(client)?;
            Err(ApiError::unauthorized(
                "admin_unauthorized",
                "a valid admin token is needed (Authorization: Bearer …)",
            ))
        }
    }
}

/// Whether `given` is the admin token (compared in constant time); never without one set.
pub(crate) fn is_admin_token(app: &AppState, given: &str) -> bool {
    app.admin_token.as_ref().is_some_and(|expected| bool::from(given.as_bytes().ct_eq(expected.as_bytes())))
}

/// The token a browser session's forms carry, made from its cookie's secret (which no
/// other site can read): the SHA-256 of a domain and the secret. A form that does not
/// carry its session's token is refused, whatever its origin says.
pub fn form_token(headers: &HeaderMap) -> Option<String> {
    let secret = credentials::cookie(headers)?;
    Some(bundle::Digest::of(format!("rexbench-form/v1\n{secret}").as_bytes()).to_hex())
}

/// Whether `given` is the token of the request's browser session (in constant time).
pub(crate) fn form_token_holds(headers: &HeaderMap, given: &str) -> bool {
    form_token(headers).is_some_and(|t| bool::from(t.as_bytes().ct_eq(given.as_bytes())))
}

/// Whether a form was sent from this site: `Sec-Fetch-Site: same-origin` where the
/// browser says it, else an `Origin` naming this scheme, host and port (an `http://`
/// page of the same host is another origin than the `https://` site).
pub(crate) fn same_site(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return site == "same-origin";
    }
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let scheme = if over_tls(headers) { "https" } else { "http" };
    match (origin, host) {
        (Some(origin), Some(host)) => {
            origin.split_once("://").is_some_and(|(s, rest)| s.eq_ignore_ascii_case(scheme) && rest == host)
        }
        _ => false,
    }
}

/// Whether the request reached the server over TLS (directly, or through a proxy that
/// says so).
pub(crate) fn over_tls(headers: &HeaderMap) -> bool {
    headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()) == Some("https")
}

/// A request's headers and the client's address, for the handlers that guard sign-in.
#[derive(Debug)]
pub struct ClientParts {
    pub headers: HeaderMap,
    pub client: std::net::IpAddr,
}

impl<S: Send + Sync> FromRequestParts<S> for ClientParts
where
    Shared: FromRef<S>,
{
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let app = Shared::from_ref(state);
        Ok(ClientParts {
            client: app.guard.client(&parts.headers, &parts.extensions),
            headers: parts.headers.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    #[test]
    fn the_same_site_check_compares_scheme_host_and_port() {
        let tls = ("x-forwarded-proto", "https");
        assert!(same_site(&headers(&[("host", "board.org"), ("origin", "https://board.org"), tls])));
        assert!(!same_site(&headers(&[("host", "board.org"), ("origin", "http://board.org"), tls])));
        assert!(same_site(&headers(&[("host", "127.0.0.1:3000"), ("origin", "http://127.0.0.1:3000")])));
        assert!(!same_site(&headers(&[("host", "127.0.0.1:3000"), ("origin", "https://127.0.0.1:3000")])));
        assert!(!same_site(&headers(&[("host", "127.0.0.1:3000"), ("origin", "http://127.0.0.1:3001")])));
        assert!(!same_site(&headers(&[("host", "board.org"), ("origin", "https://evil.org"), tls])));
        assert!(!same_site(&headers(&[("host", "board.org"), ("sec-fetch-site", "same-site")])));
        assert!(same_site(&headers(&[("host", "board.org"), ("sec-fetch-site", "same-origin")])));
    }
}
