//! Who is reading, from what a request carries: nothing (anyone), the admin token (a
//! maintainer), a session token (`Authorization: Bearer rxs_…`, from `rexbench login`)
//! or a browser's session cookie (from a one-time sign-in link).
//!
//! Signing in needs no password: a submitter's registered key signs a challenge the
//! server issued (`POST /api/v1/login/challenge`, then `POST /api/v1/login`), which
//! opens a short-lived token for the CLI and a one-time link that opens a browser
//! session. Maintainers get a link from `rexbench-server sign-in-link`. Sessions live
//! in the database, so every server process knows them, and end at sign-out, on expiry,
//! and at once when their key is revoked. The store keeps a secret's SHA-256 only.
//! Secrets come from the operating system's generator (`rand_core`'s `OsRng`); the
//! signature is Ed25519 (`ed25519-dalek`, through the bundle crate); cookies are
//! written by the `cookie` crate (through `axum-extra`). A cookie is `HttpOnly`,
//! `SameSite=Strict` (no other site's page or form sends it) and `Secure` when the
//! server is reached over TLS; the one form a session can send (sign-out) also checks
//! that it comes from this site (`Sec-Fetch-Site`, else `Origin`).

use axum::Json;
use axum::extract::{FromRef, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum_extra::extract::cookie::{Cookie, CookieJar, SameSite};
use base64::Engine as _;
use rand_core::{OsRng, RngCore};
use serde::{Deserialize, Serialize};
use store::{ChallengeUse, Session, SessionKind, Tier};
use utoipa::ToSchema;
use views::access::Reader;

use crate::answers::ErrorAnswer;
use crate::credentials::{COOKIE, bearer};
use crate::error::ApiError;
use crate::extract::{ApiJson, is_admin_token};
use crate::metrics::Refusal;
use crate::state::{AppState, Shared};

/// Session tokens begin so, to tell them from the admin token at a glance.
const TOKEN_PREFIX: &str = "rxs_";
/// How long a challenge may be answered, a token and a browser session last, and a
/// sign-in link may be opened, in seconds.
const CHALLENGE_TTL: i64 = 5 * 60;
const TOKEN_TTL: i64 = 60 * 60;
const TICKET_TTL: i64 = 10 * 60;
const BROWSER_TTL: i64 = 12 * 60 * 60;
/// How long a maintainer's browser session lasts at most (a maintainer's key signs in
/// for no longer than a token lives; a link made on the server, for this).
pub const MAINTAINER_TTL: i64 = 60 * 60;
/// What a key signs to sign in: this, the challenge and the key id, one a line.
pub const DOMAIN: &str = "rexbench-login/v1";

fn unix_now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// A new secret: 32 bytes from the operating system, URL-safe base64.
fn secret() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// What the store names a secret by.
fn hashed(secret: &str) -> String {
    bundle::Digest::of(secret.as_bytes()).to_hex()
}

/// The bytes a key signs to answer `challenge`.
pub fn signed_message(challenge: &str, keyid: &str) -> Vec<u8> {
    format!("{DOMAIN}\n{challenge}\n{keyid}\n").into_bytes()
}

fn refused(code: &str, message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, code, message)
}

/// What a request's credentials prove: its reader, or why they are refused.
pub async fn reader_of(app: &AppState, headers: &HeaderMap) -> Result<Reader, ApiError> {
    if headers.contains_key(header::AUTHORIZATION) {
        let given = bearer(headers).unwrap_or("");
        if is_admin_token(app, given) {
            return Ok(Reader::Maintainer { who: "admin token".into(), keyid: None });
        }
        if given.starts_with(TOKEN_PREFIX) {
            return session_reader(app, given, SessionKind::Token).await;
        }
        return Err(refused(
            "invalid_credentials",
            "the Authorization header names no valid credentials: send none to read as anyone, the admin token, \
             or a token from `rexbench login` (Bearer …)",
        ));
    }
    match crate::credentials::cookie(headers) {
        Some(secret) => session_reader(app, &secret, SessionKind::Browser).await,
        None => Ok(Reader::Public),
    }
}

/// The reader a live session of `kind` names, or why it is refused.
async fn session_reader(app: &AppState, secret: &str, kind: SessionKind) -> Result<Reader, ApiError> {
    let Some(session) = app.store.session(&hashed(secret)).await?.filter(|s| s.kind == kind) else {
        return Err(refused(
            "invalid_credentials",
            "no session goes by this token: sign in again (`rexbench login`)",
        ));
    };
    live(&session, unix_now())?;
    Ok(reader(&session))
}

/// Refuses a session that ended, expired or whose key was revoked.
fn live(session: &Session, now: i64) -> Result<(), ApiError> {
    if let Some(at) = &session.key_revoked_at {
        return Err(refused(
            "key_revoked",
            format!("the key this session signed in with was revoked at {at}"),
        ));
    }
    if session.ended_at.is_some() {
        return Err(refused("session_ended", "this session was signed out: sign in again"));
    }
    if session.expires_at <= now {
        return Err(refused("session_expired", "this session expired: sign in again"));
    }
    // A session made from another (a browser's, from `rexbench login`'s token) ends with it.
    if let Some(parent) = &session.parent {
        if parent.ended_at.is_some() {
            return Err(refused(
                "session_ended",
                "the session this one was opened from was signed out or revoked: sign in again",
            ));
        }
        if parent.expires_at <= now {
            return Err(refused(
                "session_expired",
                "the session this one was opened from expired: sign in again",
            ));
        }
    }
    Ok(())
}

fn reader(session: &Session) -> Reader {
    let owner = session.owner.clone().unwrap_or_default();
    match (&session.keyid, session.maintainer || session.tier == Some(Tier::Maintainer)) {
        (None, _) => Reader::Maintainer { who: "sign-in link".into(), keyid: None },
        (Some(keyid), true) => {
            Reader::Maintainer { who: format!("key {keyid} ({owner})"), keyid: Some(keyid.clone()) }
        }
        (Some(keyid), false) => Reader::Submitter { keyid: keyid.clone(), owner },
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

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChallengeRequest {
    /// The registered key's id (the SHA-256 of its raw public key, in hex).
    keyid: String,
}

/// A challenge for a key to sign.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChallengeAnswer {
    pub challenge: String,
    /// What to sign with Ed25519: `rexbench-login/v1`, the challenge and the key id,
    /// each followed by a newline.
    pub message: String,
    /// Unix seconds.
    pub expires_at: i64,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    keyid: String,
    challenge: String,
    /// The Ed25519 signature of the challenge's message, in standard base64.
    signature: String,
}

/// A session opened by a signed challenge.
#[derive(Debug, Serialize, ToSchema)]
pub struct LoginAnswer {
    /// For `Authorization: Bearer …`, until `expires_at`.
    pub token: String,
    /// Unix seconds.
    pub expires_at: i64,
    /// Opens a browser session, once, within ten minutes (a path on this server).
    pub browser_link: String,
    /// `submitter` or `maintainer`: whose private outputs the session reads.
    pub reads_as: String,
    pub keyid: String,
    pub owner: String,
}

/// The signed-in reader, as the API sees them.
#[derive(Debug, Serialize, ToSchema)]
pub struct WhoAnswer {
    /// `anyone`, `submitter` or `maintainer`.
    pub reads_as: String,
    /// Who, in words, as the access log names them.
    pub who: String,
    pub keyid: Option<String>,
}

/// Step one of signing in: a challenge for a registered key to sign.
#[utoipa::path(
    post,
    path = "/api/v1/login/challenge",
    tag = "sign-in",
    request_body = ChallengeRequest,
    responses(
        (status = 201, body = ChallengeAnswer),
        (status = 400, description = "A body that is not JSON", body = ErrorAnswer),
        (status = 401, description = "The key was revoked (`key_revoked`)", body = ErrorAnswer),
        (status = 404, description = "No such key in the registry (`unknown_key`)", body = ErrorAnswer),
        (status = 415, description = "Not sent as application/json", body = ErrorAnswer),
        (status = 422, description = "A body that is not a challenge request", body = ErrorAnswer),
        (status = 429, description = "Too many sign-in attempts from this address (`rate_limited`, with Retry-After)", body = ErrorAnswer),
    )
)]
pub async fn challenge(
    State(app): State<Shared>,
    parts: ClientParts,
    ApiJson(request): ApiJson<ChallengeRequest>,
) -> Result<(StatusCode, Json<ChallengeAnswer>), ApiError> {
    app.guard.admit_sign_in(parts.client)?;
    let key = app.store.key(&request.keyid).await.map_err(|e| match e {
        store::StoreError::UnknownKey(k) => {
            ApiError::new(StatusCode::NOT_FOUND, "unknown_key", format!("no key {k} in the registry"))
        }
        other => other.into(),
    })?;
    if let Some(at) = key.revoked_at {
        app.metrics.refused(Refusal::InvalidCredentials);
        return Err(refused("key_revoked", format!("key {} was revoked at {at}", key.keyid)));
    }
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    let challenge = hex(&bytes);
    let now = unix_now();
    app.store.add_challenge(&challenge, &key.keyid, now, now + CHALLENGE_TTL).await?;
    let message = String::from_utf8(signed_message(&challenge, &key.keyid)).expect("text");
    Ok((StatusCode::CREATED, Json(ChallengeAnswer { challenge, message, expires_at: now + CHALLENGE_TTL })))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Step two: the signed challenge opens a session: a token for the API and the CLI,
/// and a one-time link for a browser.
#[utoipa::path(
    post,
    path = "/api/v1/login",
    tag = "sign-in",
    request_body = LoginRequest,
    responses(
        (status = 201, body = LoginAnswer),
        (status = 400, description = "A body that is not JSON", body = ErrorAnswer),
        (status = 401, description = "The signature does not verify (`bad_signature`); the challenge is unknown, another key's, expired or answered before (`bad_challenge`); or the key was revoked (`key_revoked`)", body = ErrorAnswer),
        (status = 404, description = "No such key in the registry (`unknown_key`)", body = ErrorAnswer),
        (status = 415, description = "Not sent as application/json", body = ErrorAnswer),
        (status = 422, description = "A body that is not a sign-in request", body = ErrorAnswer),
        (status = 429, description = "Too many sign-in attempts from this address (`rate_limited`, with Retry-After)", body = ErrorAnswer),
    )
)]
pub async fn login(
    State(app): State<Shared>,
    parts: ClientParts,
    ApiJson(request): ApiJson<LoginRequest>,
) -> Result<(StatusCode, Json<LoginAnswer>), ApiError> {
    app.guard.admit_sign_in(parts.client)?;
    let fail = |e: ApiError| {
        app.metrics.refused(Refusal::InvalidCredentials);
        e
    };
    let key = app.store.key(&request.keyid).await.map_err(|e| match e {
        store::StoreError::UnknownKey(k) => {
            fail(ApiError::new(StatusCode::NOT_FOUND, "unknown_key", format!("no key {k} in the registry")))
        }
        other => other.into(),
    })?;
    if let Some(at) = &key.revoked_at {
        return Err(fail(refused("key_revoked", format!("key {} was revoked at {at}", key.keyid))));
    }
    let public = bundle::PublicKey::from_pem(&key.public_key)
        .map_err(|e| ApiError::internal(format!("key {} in the registry: {e}", key.keyid)))?;
    let signature: [u8; 64] = base64::engine::general_purpose::STANDARD
        .decode(request.signature.trim())
        .ok()
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| fail(refused("bad_signature", "`signature` is not 64 bytes of standard base64")))?;
    if !public.verify(&signed_message(&request.challenge, &key.keyid), &signature) {
        return Err(fail(refused(
            "bad_signature",
            format!("the signature does not verify with key {} over the challenge's message", key.keyid),
        )));
    }
    let now = unix_now();
    let why = match app.store.use_challenge(&request.challenge, &key.keyid, now).await? {
        ChallengeUse::Accepted => None,
        ChallengeUse::Unknown => Some("this server issued no such challenge"),
        ChallengeUse::OtherKey => Some("the challenge was issued to another key"),
        ChallengeUse::Expired => Some("the challenge expired: ask for another"),
        ChallengeUse::Used => Some("the challenge was answered before: ask for another"),
    };
    if let Some(why) = why {
        return Err(fail(refused("bad_challenge", why)));
    }
    let maintainer = key.tier == Tier::Maintainer;
    let token = format!("{TOKEN_PREFIX}{}", secret());
    let token_hash = hashed(&token);
    app.store
        .add_session(
            &token_hash,
            SessionKind::Token,
            Some(&key.keyid),
            maintainer,
            now,
            now + TOKEN_TTL,
            None,
        )
        .await?;
    // The link's browser session is made from this token: it ends when the token does.
    let ticket = secret();
    app.store
        .add_session(
            &hashed(&ticket),
            SessionKind::Ticket,
            Some(&key.keyid),
            maintainer,
            now,
            now + TICKET_TTL,
            Some(&token_hash),
        )
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(LoginAnswer {
            token,
            expires_at: now + TOKEN_TTL,
            browser_link: format!("/login/{ticket}"),
            reads_as: if maintainer { "maintainer" } else { "submitter" }.into(),
            keyid: key.keyid,
            owner: key.owner,
        }),
    ))
}

/// How long a sign-in link made on the server may be opened by default, in minutes.
pub const LINK_MINUTES: i64 = TICKET_TTL / 60;

/// A one-time sign-in link (`rexbench-server sign-in-link`) that may be opened within
/// `minutes`: as the key `keyid` (a maintainer key reads all), or, without one, as a
/// maintainer. Its path.
pub async fn link(
    app: &AppState,
    keyid: Option<&str>,
    maintainer: bool,
    minutes: i64,
) -> Result<String, store::StoreError> {
    let now = unix_now();
    let ticket = secret();
    app.store
        .add_session(
            &hashed(&ticket),
            SessionKind::Ticket,
            keyid,
            maintainer || keyid.is_none(),
            now,
            now + minutes * 60,
            None,
        )
        .await?;
    Ok(format!("/login/{ticket}"))
}

/// Who the request's credentials name.
#[utoipa::path(
    get,
    path = "/api/v1/login",
    tag = "sign-in",
    security((), ("session_token" = []), ("admin_token" = [])),
    responses(
        (status = 200, body = WhoAnswer),
        (status = 401, description = "Credentials that are not valid (`invalid_credentials`, `session_expired`, `session_ended`, `key_revoked`)", body = ErrorAnswer),
        (status = 429, description = "Too many refused credentials from this address (`rate_limited`, with Retry-After)", body = ErrorAnswer),
    )
)]
pub async fn whoami(Reading(reader): Reading) -> Json<WhoAnswer> {
    let reads_as = match &reader {
        Reader::Public => "anyone",
        Reader::Maintainer { .. } => "maintainer",
        Reader::Submitter { .. } => "submitter",
    };
    Json(WhoAnswer { reads_as: reads_as.into(), who: reader.who(), keyid: reader.keyid().map(str::to_owned) })
}

/// Ends the session whose token the request carries.
#[utoipa::path(
    post,
    path = "/api/v1/logout",
    tag = "sign-in",
    security(("session_token" = [])),
    responses(
        (status = 204, description = "The session is ended"),
        (status = 401, description = "No session token, or one that is not valid", body = ErrorAnswer),
    )
)]
pub async fn logout(State(app): State<Shared>, parts: ClientParts) -> Result<StatusCode, ApiError> {
    let token = bearer(&parts.headers).filter(|t| t.starts_with(TOKEN_PREFIX));
    let Some(token) = token else {
        return Err(refused(
            "invalid_credentials",
            "sign out with the session's token: Authorization: Bearer rxs_…",
        ));
    };
    if app.store.end_session(&hashed(token), unix_now()).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(refused("invalid_credentials", "no open session goes by this token"))
    }
}

/// `POST /login/{ticket}`: the button on a sign-in link's page (`GET /login/{ticket}`,
/// which signs nobody in, so that a link previewer or another site's link spends
/// nothing) opens a browser session (a cookie) and goes to `/signin`. Only from this
/// site's own page; only a ticket, once. A link that was used, expired or never issued
/// goes to `/signin`, which says so.
pub async fn redeem(
    State(app): State<Shared>,
    axum::extract::Path(ticket): axum::extract::Path<String>,
    parts: ClientParts,
) -> Response {
    if let Err(limited) = app.guard.admit_sign_in(parts.client) {
        return limited.into_response();
    }
    if !same_site(&parts.headers) {
        app.metrics.refused(Refusal::InvalidCredentials);
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "cross_site",
            "sign in with the button on this site's own sign-in page (open the link itself)",
        )
        .into_response();
    }
    let now = unix_now();
    let problem = match app.store.redeem_ticket(&hashed(&ticket), now).await {
        Err(e) => return ApiError::from(e).into_response(),
        Ok(None) => "unknown",
        Ok(Some(s)) if s.ended_at.is_some() => "used",
        Ok(Some(s)) if s.expires_at <= now => "expired",
        Ok(Some(s)) if s.key_revoked_at.is_some() => "revoked",
        Ok(Some(s)) if s.parent.as_ref().is_some_and(|p| p.ended_at.is_some() || p.expires_at <= now) => {
            "parent-ended"
        }
        Ok(Some(s)) => {
            let secret = secret();
            // A maintainer's session is short; any session ends no later than the one
            // it was made from.
            let own =
                if s.maintainer || s.tier == Some(Tier::Maintainer) { MAINTAINER_TTL } else { BROWSER_TTL };
            let expires = s.parent.as_ref().map_or(now + own, |p| p.expires_at.min(now + own));
            let parent = s.parent.as_ref().map(|p| p.token_hash.as_str());
            if let Err(e) = app
                .store
                .add_session(
                    &hashed(&secret),
                    SessionKind::Browser,
                    s.keyid.as_deref(),
                    s.maintainer,
                    now,
                    expires,
                    parent,
                )
                .await
            {
                return ApiError::from(e).into_response();
            }
            let cookie = Cookie::build((COOKIE, secret))
                .path("/")
                .http_only(true)
                .same_site(SameSite::Strict)
                .secure(over_tls(&parts.headers))
                .max_age(time::Duration::seconds(expires - now))
                .build();
            return (CookieJar::new().add(cookie), Redirect::to("/signin")).into_response();
        }
    };
    app.metrics.refused(Refusal::InvalidCredentials);
    Redirect::to(&format!("/signin?problem={problem}")).into_response()
}

/// `POST /signout`: the browser's session ends, its cookie is cleared. Only from this
/// site's own page.
pub async fn sign_out(State(app): State<Shared>, parts: ClientParts) -> Response {
    if !same_site(&parts.headers) {
        return ApiError::new(StatusCode::FORBIDDEN, "cross_site", "sign out from this site's own page")
            .into_response();
    }
    let jar = CookieJar::from_headers(&parts.headers);
    if let Some(cookie) = jar.get(COOKIE)
        && let Err(e) = app.store.end_session(&hashed(cookie.value()), unix_now()).await
    {
        return ApiError::from(e).into_response();
    }
    let gone = Cookie::build((COOKIE, "")).path("/").http_only(true).same_site(SameSite::Strict).build();
    (jar.remove(gone), Redirect::to("/signin?problem=signed-out")).into_response()
}

/// Whether a form was sent from this site: `Sec-Fetch-Site: same-origin` where the
/// browser says it, else an `Origin` naming this host.
fn same_site(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return site == "same-origin";
    }
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    match (origin, host) {
        (Some(origin), Some(host)) => origin.split_once("://").is_some_and(|(_, rest)| rest == host),
        _ => false,
    }
}

/// Whether the request reached the server over TLS (directly, or through a proxy that
/// says so).
fn over_tls(headers: &HeaderMap) -> bool {
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
