//! Signing in and out: a challenge for a registered key, the signed challenge that
//! opens a token and a one-time browser link, who the credentials name, and the
//! browser's own forms (`POST /login/{ticket}`, `POST /signout`). Who a session makes
//! the reader, and whether it holds, is `crate::auth`'s.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum_extra::extract::cookie::{Cookie, CookieJar, SameSite};
use base64::Engine as _;
use rand_core::{OsRng, RngCore};
use serde::{Deserialize, Serialize};
use store::{ChallengeUse, Session, SessionKind, Tier};
use utoipa::ToSchema;
use views::access::Reader;

use crate::api::extract::ApiJson;
use crate::api::responses::{ErrorAnswer, JsonBodyRefusals, ReaderRefusals};
use crate::auth::sessions::{
    BROWSER_TTL, CHALLENGE_TTL, Lapses, MAINTAINER_TTL, TICKET_TTL, TOKEN_PREFIX, TOKEN_TTL, hashed, secret,
    signed_message, unix_now,
};
use crate::auth::{ClientParts, Reading, over_tls, same_site};
use crate::credentials::{COOKIE, bearer};
use crate::error::ApiError;
use crate::metrics::Refusal;
use crate::state::Shared;

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
        JsonBodyRefusals,
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
    let key = app.store.key(&request.keyid).await.map_err(registry_error)?;
    if let Some(at) = key.revoked_at {
        app.metrics.refused(Refusal::InvalidCredentials);
        return Err(ApiError::unauthorized("key_revoked", format!("key {} was revoked at {at}", key.keyid)));
    }
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    let challenge = hex(&bytes);
    let now = unix_now();
    app.store.add_challenge(&challenge, &key.keyid, now, now + CHALLENGE_TTL).await?;
    let message = String::from_utf8(signed_message(&challenge, &key.keyid)).expect("text");
    Ok((StatusCode::CREATED, Json(ChallengeAnswer { challenge, message, expires_at: now + CHALLENGE_TTL })))
}

/// A key the registry does not hold is a 404 `unknown_key` to sign-in; any other
/// failure is the store's.
fn registry_error(e: store::StoreError) -> ApiError {
    match e {
        store::StoreError::UnknownKey(k) => {
            ApiError::absent("unknown_key", format!("no key {k} in the registry"))
        }
        other => other.into(),
    }
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
        JsonBodyRefusals,
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
        e @ store::StoreError::UnknownKey(_) => fail(registry_error(e)),
        other => other.into(),
    })?;
    if let Some(at) = &key.revoked_at {
        return Err(fail(ApiError::unauthorized(
            "key_revoked",
            format!("key {} was revoked at {at}", key.keyid),
        )));
    }
    let public = bundle::PublicKey::from_pem(&key.public_key)
        .map_err(|e| ApiError::internal(format!("key {} in the registry: {e}", key.keyid)))?;
    let signature: [u8; 64] = base64::engine::general_purpose::STANDARD
        .decode(request.signature.trim())
        .ok()
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| {
            fail(ApiError::unauthorized("bad_signature", "`signature` is not 64 bytes of standard base64"))
        })?;
    if !public.verify(&signed_message(&request.challenge, &key.keyid), &signature) {
        return Err(fail(ApiError::unauthorized(
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
        return Err(fail(ApiError::unauthorized("bad_challenge", why)));
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

/// Who the request's credentials name.
#[utoipa::path(
    get,
    path = "/api/v1/login",
    tag = "sign-in",
    security((), ("session_token" = []), ("admin_token" = [])),
    responses(
        (status = 200, body = WhoAnswer),
        ReaderRefusals,
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
        return Err(ApiError::unauthorized(
            "invalid_credentials",
            "sign out with the session's token: Authorization: Bearer rxs_…",
        ));
    };
    if app.store.end_session(&hashed(token), unix_now()).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::unauthorized("invalid_credentials", "no open session goes by this token"))
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
        return ApiError::forbidden(
            "cross_site",
            "sign in with the button on this site's own sign-in page (open the link itself)",
        )
        .into_response();
    }
    let now = unix_now();
    let problem = match app.store.redeem_ticket(&hashed(&ticket), now).await {
        Err(e) => return ApiError::from(e).into_response(),
        Ok(None) => "unknown",
        Ok(Some(s)) => match Lapses::of(&s, now).link_problem() {
            Some(problem) => problem,
            None => return open_browser_session(&app, &parts, &s, now).await,
        },
    };
    app.metrics.refused(Refusal::InvalidCredentials);
    Redirect::to(&format!("/signin?problem={problem}")).into_response()
}

/// A live ticket's browser session: its cookie, and on to `/signin`.
async fn open_browser_session(app: &Shared, parts: &ClientParts, s: &Session, now: i64) -> Response {
    let secret = secret();
    // A maintainer's session is short; any session ends no later than the one
    // it was made from.
    let own = if s.maintainer || s.tier == Some(Tier::Maintainer) { MAINTAINER_TTL } else { BROWSER_TTL };
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
    (CookieJar::new().add(cookie), Redirect::to("/signin")).into_response()
}

/// `POST /signout`: the browser's session ends, its cookie is cleared. Only from this
/// site's own page.
pub async fn sign_out(State(app): State<Shared>, parts: ClientParts) -> Response {
    if !same_site(&parts.headers) {
        return ApiError::forbidden("cross_site", "sign out from this site's own page").into_response();
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
