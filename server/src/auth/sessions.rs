//! Sessions: their secrets, how long each kind lives, and whether one still holds.
//! Secrets come from the operating system's generator (`rand_core`'s `OsRng`); the
//! store keeps a secret's SHA-256 only.

use base64::Engine as _;
use rand_core::{OsRng, RngCore};
use store::{Session, SessionKind, Tier};
use views::access::Reader;

use crate::error::ApiError;
use crate::state::AppState;

/// Session tokens begin so, to tell them from the admin token at a glance.
pub(crate) const TOKEN_PREFIX: &str = "rxs_";
/// How long a challenge may be answered, a token and a browser session last, and a
/// sign-in link may be opened, in seconds.
pub(crate) const CHALLENGE_TTL: i64 = 5 * 60;
pub(crate) const TOKEN_TTL: i64 = 60 * 60;
pub(crate) const TICKET_TTL: i64 = 10 * 60;
pub(crate) const BROWSER_TTL: i64 = 12 * 60 * 60;
/// How long a maintainer's browser session lasts at most (a maintainer's key signs in
/// for no longer than a token lives; a link made on the server, for this).
pub const MAINTAINER_TTL: i64 = 60 * 60;
/// What a key signs to sign in: this, the challenge and the key id, one a line.
pub const DOMAIN: &str = "rexbench-login/v1";

pub(crate) fn unix_now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// A new secret: 32 bytes from the operating system, URL-safe base64.
pub(crate) fn secret() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// What the store names a secret by.
pub(crate) fn hashed(secret: &str) -> String {
    bundle::Digest::of(secret.as_bytes()).to_hex()
}

/// The bytes a key signs to answer `challenge`.
pub fn signed_message(challenge: &str, keyid: &str) -> Vec<u8> {
    format!("{DOMAIN}\n{challenge}\n{keyid}\n").into_bytes()
}

pub(crate) fn refused(code: &str, message: impl Into<String>) -> ApiError {
    ApiError::unauthorized(code, message)
}

/// The reader a live session of `kind` names, or why it is refused.
pub(crate) async fn session_reader(
    app: &AppState,
    secret: &str,
    kind: SessionKind,
) -> Result<Reader, ApiError> {
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
