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

/// The reader a live session of `kind` names, or why it is refused.
pub(crate) async fn session_reader(
    app: &AppState,
    secret: &str,
    kind: SessionKind,
) -> Result<Reader, ApiError> {
    let Some(session) = app.store.session(&hashed(secret)).await?.filter(|s| s.kind == kind) else {
        return Err(ApiError::unauthorized(
            "invalid_credentials",
            "no session goes by this token: sign in again (`rexbench login`)",
        ));
    };
    Lapses::of(&session, unix_now()).refusal()?;
    Ok(reader(&session))
}

/// Whether a session (a token, a browser's cookie, or a sign-in link's ticket being
/// redeemed) still holds at a moment: the one liveness rule. A session holds until it
/// is ended or expires, or its key is revoked; one made from another (a browser's, from
/// `rexbench login`'s token) ends with it. `store::Store::open_sessions` lists the
/// sessions it holds for. Each of its callers reports the first reason that applies, in
/// its own order and words: a request's refusal ([`Lapses::refusal`]) and a sign-in
/// link's problem ([`Lapses::link_problem`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lapses<'a> {
    /// When the key the session signed in with was revoked.
    key_revoked_at: Option<&'a str>,
    ended: bool,
    expired: bool,
    parent_ended: bool,
    parent_expired: bool,
}

impl<'a> Lapses<'a> {
    /// What, of the rule, `session` breaks at `now`.
    pub(crate) fn of(session: &'a Session, now: i64) -> Lapses<'a> {
        let parent = session.parent.as_ref();
        Lapses {
            key_revoked_at: session.key_revoked_at.as_deref(),
            ended: session.ended_at.is_some(),
            expired: session.expires_at <= now,
            parent_ended: parent.is_some_and(|p| p.ended_at.is_some()),
            parent_expired: parent.is_some_and(|p| p.expires_at <= now),
        }
    }

    /// A request's refusal of a session that ended, expired or whose key was revoked.
    pub(crate) fn refusal(&self) -> Result<(), ApiError> {
        if let Some(at) = self.key_revoked_at {
            return Err(ApiError::unauthorized(
                "key_revoked",
                format!("the key this session signed in with was revoked at {at}"),
            ));
        }
        if self.ended {
            return Err(ApiError::unauthorized(
                "session_ended",
                "this session was signed out: sign in again",
            ));
        }
        if self.expired {
            return Err(ApiError::unauthorized("session_expired", "this session expired: sign in again"));
        }
        if self.parent_ended {
            return Err(ApiError::unauthorized(
                "session_ended",
                "the session this one was opened from was signed out or revoked: sign in again",
            ));
        }
        if self.parent_expired {
            return Err(ApiError::unauthorized(
                "session_expired",
                "the session this one was opened from expired: sign in again",
            ));
        }
        Ok(())
    }

    /// Why a sign-in link's ticket opens no browser session, as `/signin?problem=…`
    /// names it: `used`, `expired`, `revoked` or `parent-ended`; none if it holds.
    pub(crate) fn link_problem(&self) -> Option<&'static str> {
        if self.ended {
            Some("used")
        } else if self.expired {
            Some("expired")
        } else if self.key_revoked_at.is_some() {
            Some("revoked")
        } else if self.parent_ended || self.parent_expired {
            Some("parent-ended")
        } else {
            None
        }
    }
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

#[cfg(test)]
mod tests {
    use store::Parent;

    use super::*;

    fn session(ended_at: Option<i64>, expires_at: i64, revoked: bool, parent: Option<Parent>) -> Session {
        Session {
            kind: SessionKind::Ticket,
            keyid: Some("k".into()),
            maintainer: false,
            owner: Some("o".into()),
            tier: Some(Tier::Submitter),
            created_at: 0,
            expires_at,
            ended_at,
            key_revoked_at: revoked.then(|| "2026-01-01".into()),
            parent,
        }
    }

    fn refused(s: &Session) -> Option<String> {
        Lapses::of(s, 100).refusal().err().map(|e| format!("{}: {}", e.code, e.message))
    }

    #[test]
    fn a_live_session_holds_for_a_request_and_a_link() {
        let s = session(
            None,
            101,
            false,
            Some(Parent { token_hash: "p".into(), expires_at: 101, ended_at: None }),
        );
        assert_eq!((refused(&s), Lapses::of(&s, 100).link_problem()), (None, None));
    }

    #[test]
    fn a_request_names_the_revocation_first_a_link_its_use() {
        let s = session(Some(50), 90, true, None);
        assert_eq!(
            refused(&s).as_deref(),
            Some("key_revoked: the key this session signed in with was revoked at 2026-01-01")
        );
        assert_eq!(Lapses::of(&s, 100).link_problem(), Some("used"));
    }

    #[test]
    fn a_session_ends_with_the_one_it_was_made_from() {
        let ended = session(
            None,
            200,
            false,
            Some(Parent { token_hash: "p".into(), expires_at: 200, ended_at: Some(1) }),
        );
        let expired = session(
            None,
            200,
            false,
            Some(Parent { token_hash: "p".into(), expires_at: 100, ended_at: None }),
        );
        assert_eq!(
            refused(&ended).as_deref(),
            Some(
                "session_ended: the session this one was opened from was signed out or revoked: sign in again"
            )
        );
        assert_eq!(
            refused(&expired).as_deref(),
            Some("session_expired: the session this one was opened from expired: sign in again")
        );
        for s in [&ended, &expired] {
            assert_eq!(Lapses::of(s, 100).link_problem(), Some("parent-ended"));
        }
    }
}
