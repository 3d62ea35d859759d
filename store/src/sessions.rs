//! Signing in to read private outputs: the challenges a registered key signs, the
//! sessions they open, and the log of every read of private content. The store keeps
//! only what is needed to check a secret (its SHA-256), never the secret; making them
//! and deciding who may read what is the server's and `views::access`'s.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::any::AnyRow;
use vocab::Tier;

use crate::db;
use crate::error::StoreError;
use crate::reads::name;
use crate::{Store, now};

/// What a session's secret is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKind {
    /// A bearer token for the API and the CLI.
    Token,
    /// A one-time sign-in link's secret, turned into a browser session once.
    Ticket,
    /// A browser's cookie.
    Browser,
}

impl SessionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Token => "token",
            SessionKind::Ticket => "ticket",
            SessionKind::Browser => "browser",
        }
    }

    fn parse(s: &str) -> Result<SessionKind, StoreError> {
        match s {
            "token" => Ok(SessionKind::Token),
            "ticket" => Ok(SessionKind::Ticket),
            "browser" => Ok(SessionKind::Browser),
            other => Err(sqlx::Error::Decode(format!("session kind `{other}`").into()).into()),
        }
    }
}

/// A stored session, with its key as the registry has it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub kind: SessionKind,
    /// The key that signed in; none for a maintainer's sign-in link.
    pub keyid: Option<String>,
    /// Opened as a maintainer's (the admin command's link).
    pub maintainer: bool,
    pub owner: Option<String>,
    pub tier: Option<Tier>,
    pub created_at: i64,
    pub expires_at: i64,
    pub ended_at: Option<i64>,
    /// The key's revocation, which ends every session it opened at once.
    pub key_revoked_at: Option<String>,
    /// The session this one was made from (a sign-in link's ticket from a token, a
    /// browser's cookie from that token), as it is now: it ends with it.
    pub parent: Option<Parent>,
}

/// The session another was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parent {
    pub token_hash: String,
    pub expires_at: i64,
    pub ended_at: Option<i64>,
}

/// An open session, as `rexbench-server sessions list` shows it (never its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenSession {
    /// The first 12 hex digits of its secret's SHA-256: enough to name it.
    pub id: String,
    pub kind: SessionKind,
    pub keyid: Option<String>,
    pub owner: Option<String>,
    pub maintainer: bool,
    pub created_at: i64,
    pub expires_at: i64,
}

/// Which open sessions to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revoke {
    /// Every one.
    All,
    /// Every session that reads as a maintainer.
    Maintainers,
    /// Those whose id (`OpenSession::id`, or a longer prefix of the hash) is one of these.
    Ids(Vec<String>),
}

/// What became of a challenge answered with a signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChallengeUse {
    /// Unused, unexpired, issued for this key: now used.
    Accepted,
    /// No such challenge was issued.
    Unknown,
    /// Issued for another key.
    OtherKey,
    Expired,
    /// Answered before: a replay.
    Used,
}

/// One read of private content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(sqlx::FromRow)]
pub struct AccessEntry {
    pub seq: i64,
    pub at: String,
    /// Who read, in words: `admin token`, `sign-in link`, `key <keyid> (<owner>)`.
    pub reader: String,
    pub keyid: Option<String>,
    /// How: a run's `page`, its `api` answer, an `artifact`'s bytes, or a `desk` action.
    pub via: String,
    pub run_id: Option<i64>,
    pub digest: Option<String>,
    /// What a maintainer did on the desk (`approve key request 3`), for a `desk` entry.
    pub action: Option<String>,
}

fn session(row: &AnyRow) -> Result<Session, StoreError> {
    let tier: Option<String> = row.try_get("tier")?;
    Ok(Session {
        kind: SessionKind::parse(&row.try_get::<String, _>("kind")?)?,
        keyid: row.try_get("keyid")?,
        maintainer: row.try_get::<i64, _>("maintainer")? == 1,
        owner: row.try_get("owner")?,
        tier: match tier {
            Some(_) => Some(name(row, "tier")?),
            None => None,
        },
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        ended_at: row.try_get("ended_at")?,
        key_revoked_at: row.try_get("revoked_at")?,
        parent: match row.try_get::<Option<String>, _>("parent")? {
            None => None,
            Some(token_hash) => Some(Parent {
                token_hash,
                expires_at: row.try_get::<Option<i64>, _>("parent_expires_at")?.unwrap_or(0),
                ended_at: row.try_get("parent_ended_at")?,
            }),
        },
    })
}

const SESSION: &str = "SELECT s.kind, s.keyid, s.maintainer, s.created_at, s.expires_at, s.ended_at, s.parent, \
     p.expires_at AS parent_expires_at, p.ended_at AS parent_ended_at, \
     k.owner, k.tier, k.revoked_at FROM sessions s LEFT JOIN keys k ON k.keyid = s.keyid \
     LEFT JOIN sessions p ON p.token_hash = s.parent WHERE s.token_hash = $1";

impl Store {
    /// Records a challenge issued to `keyid`, valid until `expires_at`; forgets those
    /// that expired before `now`.
    pub async fn add_challenge(
        &self,
        challenge: &str,
        keyid: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        db::query("DELETE FROM login_challenges WHERE expires_at < $1").bind(now).execute(&mut *tx).await?;
        db::query("INSERT INTO login_challenges (challenge, keyid, expires_at) VALUES ($1, $2, $3)")
            .bind(challenge)
            .bind(keyid)
            .bind(expires_at)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Uses a challenge answered by `keyid` at `now`, once: of several processes
    /// answering it at once, one is accepted.
    pub async fn use_challenge(
        &self,
        challenge: &str,
        keyid: &str,
        now: i64,
    ) -> Result<ChallengeUse, StoreError> {
        let row = db::query("SELECT keyid, expires_at, used_at FROM login_challenges WHERE challenge = $1")
            .bind(challenge)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(ChallengeUse::Unknown) };
        if row.try_get::<String, _>("keyid")? != keyid {
            return Ok(ChallengeUse::OtherKey);
        }
        if row.try_get::<Option<i64>, _>("used_at")?.is_some() {
            return Ok(ChallengeUse::Used);
        }
        if row.try_get::<i64, _>("expires_at")? <= now {
            return Ok(ChallengeUse::Expired);
        }
        let done =
            db::query("UPDATE login_challenges SET used_at = $1 WHERE challenge = $2 AND used_at IS NULL")
                .bind(now)
                .bind(challenge)
                .execute(&self.pool)
                .await?;
        Ok(if done.rows_affected() == 1 { ChallengeUse::Accepted } else { ChallengeUse::Used })
    }

    /// Opens a session named by the SHA-256 of its secret; `parent`, the session it is
    /// made from (it ends with it).
    #[allow(clippy::too_many_arguments)]
    pub async fn add_session(
        &self,
        token_hash: &str,
        kind: SessionKind,
        keyid: Option<&str>,
        maintainer: bool,
        now: i64,
        expires_at: i64,
        parent: Option<&str>,
    ) -> Result<(), StoreError> {
        db::query(
            "INSERT INTO sessions (token_hash, kind, keyid, maintainer, created_at, expires_at, parent) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(token_hash)
        .bind(kind.as_str())
        .bind(keyid)
        .bind(i64::from(maintainer))
        .bind(now)
        .bind(expires_at)
        .bind(parent)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The sessions that still work at `now`: not ended or expired, their key not
    /// revoked, and the session each was opened from neither (the liveness rule
    /// `server::auth::sessions` holds a request to); newest first.
    pub async fn open_sessions(&self, now: i64) -> Result<Vec<OpenSession>, StoreError> {
        let rows = db::query(
            "SELECT s.token_hash, s.kind, s.keyid, k.owner, s.maintainer, k.tier, s.created_at, s.expires_at \
             FROM sessions s LEFT JOIN keys k ON k.keyid = s.keyid \
             LEFT JOIN sessions p ON p.token_hash = s.parent \
             WHERE s.ended_at IS NULL AND s.expires_at > $1 AND k.revoked_at IS NULL \
             AND (s.parent IS NULL OR (p.ended_at IS NULL AND p.expires_at > $1)) \
             ORDER BY s.created_at DESC, s.token_hash",
        )
        .bind(now)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let hash: String = r.try_get("token_hash")?;
                let tier: Option<String> = r.try_get("tier")?;
                Ok(OpenSession {
                    id: hash[..12].to_owned(),
                    kind: SessionKind::parse(&r.try_get::<String, _>("kind")?)?,
                    keyid: r.try_get("keyid")?,
                    owner: r.try_get("owner")?,
                    maintainer: r.try_get::<i64, _>("maintainer")? == 1
                        || tier.as_deref() == Some("maintainer"),
                    created_at: r.try_get("created_at")?,
                    expires_at: r.try_get("expires_at")?,
                })
            })
            .collect()
    }

    /// Ends the open sessions `which` names at `now` (and so every session made from
    /// them); how many. An id that names no open session, or more than one, is an error,
    /// and nothing is ended.
    pub async fn revoke_sessions(&self, which: &Revoke, now: i64) -> Result<u64, StoreError> {
        let mut tx = self.pool.begin().await?;
        let open = "ended_at IS NULL AND expires_at > $2";
        let ended = match which {
            Revoke::All => db::query(&format!("UPDATE sessions SET ended_at = $1 WHERE {open}"))
                .bind(now)
                .bind(now)
                .execute(&mut *tx)
                .await?
                .rows_affected(),
            Revoke::Maintainers => db::query(&format!(
                "UPDATE sessions SET ended_at = $1 WHERE {open} AND (maintainer = 1 OR keyid IN \
                     (SELECT keyid FROM keys WHERE tier = 'maintainer'))"
            ))
            .bind(now)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected(),
            Revoke::Ids(ids) => {
                let mut n = 0;
                for id in ids {
                    let valid = id.len() >= 8 && id.bytes().all(|b| b.is_ascii_hexdigit());
                    let matching: Vec<(String,)> = if valid {
                        db::query_as(&format!(
                            "SELECT token_hash FROM sessions WHERE {open} AND token_hash LIKE $1"
                        ))
                        .bind(format!("{}%", id.to_ascii_lowercase()))
                        .bind(now)
                        .fetch_all(&mut *tx)
                        .await?
                    } else {
                        Vec::new()
                    };
                    let [(hash,)] = matching.as_slice() else {
                        return Err(StoreError::UnknownSession(format!(
                            "{id} names {} open sessions (give at least 8 hex digits of an id `sessions list` shows)",
                            matching.len()
                        )));
                    };
                    n += db::query("UPDATE sessions SET ended_at = $1 WHERE token_hash = $2")
                        .bind(now)
                        .bind(hash)
                        .execute(&mut *tx)
                        .await?
                        .rows_affected();
                }
                n
            }
        };
        tx.commit().await?;
        Ok(ended)
    }

    /// The session a secret's SHA-256 names, whatever state it is in.
    pub async fn session(&self, token_hash: &str) -> Result<Option<Session>, StoreError> {
        let row = db::query(SESSION).bind(token_hash).fetch_optional(&self.pool).await?;
        row.as_ref().map(session).transpose()
    }

    /// Uses a one-time ticket at `now`: the ticket if it was live (and is ended now),
    /// else what it was, for the reason it is refused. Of two redemptions at once, one
    /// gets it live.
    pub async fn redeem_ticket(&self, ticket_hash: &str, now: i64) -> Result<Option<Session>, StoreError> {
        let done = db::query(
            "UPDATE sessions SET ended_at = $1 \
             WHERE token_hash = $2 AND kind = 'ticket' AND ended_at IS NULL AND expires_at > $1",
        )
        .bind(now)
        .bind(ticket_hash)
        .execute(&self.pool)
        .await?;
        // Only a ticket is redeemed: any other secret (a token, a cookie) is no link.
        let mut found = self.session(ticket_hash).await?.filter(|s| s.kind == SessionKind::Ticket);
        if done.rows_affected() == 1
            && let Some(s) = found.as_mut()
        {
            // As it was when it was redeemed.
            s.ended_at = None;
        }
        Ok(found)
    }

    /// Ends a session (sign-out); whether it was open.
    pub async fn end_session(&self, token_hash: &str, now: i64) -> Result<bool, StoreError> {
        let done = db::query("UPDATE sessions SET ended_at = $1 WHERE token_hash = $2 AND ended_at IS NULL")
            .bind(now)
            .bind(token_hash)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The bundles whose signature the registry credits to `keyid`: a submitter's own.
    pub async fn bundles_signed_by(&self, keyid: &str) -> Result<BTreeSet<String>, StoreError> {
        let rows: Vec<(String,)> = db::query_as("SELECT bundle_id FROM submissions WHERE keyid = $1")
            .bind(keyid)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(|(b,)| b).collect())
    }

    /// Records a read of private content.
    pub async fn log_access(
        &self,
        reader: &str,
        keyid: Option<&str>,
        via: &str,
        run_id: Option<i64>,
        digest: Option<&str>,
    ) -> Result<(), StoreError> {
        db::query(
            "INSERT INTO access_log (at, reader, keyid, via, run_id, digest) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(now())
        .bind(reader)
        .bind(keyid)
        .bind(via)
        .bind(run_id)
        .bind(digest)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Records an action a maintainer took on the desk.
    pub async fn log_desk_action(
        &self,
        reader: &str,
        keyid: Option<&str>,
        action: &str,
    ) -> Result<(), StoreError> {
        db::query("INSERT INTO access_log (at, reader, keyid, via, action) VALUES ($1, $2, $3, 'desk', $4)")
            .bind(now())
            .bind(reader)
            .bind(keyid)
            .bind(action)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Reads of private content, newest first, before `before` (a sequence number).
    pub async fn access_log(&self, limit: i64, before: Option<i64>) -> Result<Vec<AccessEntry>, StoreError> {
        Ok(db::query_as(
            "SELECT seq, at, reader, keyid, via, run_id, digest, action FROM access_log WHERE seq < $1 \
             ORDER BY seq DESC LIMIT $2",
        )
        .bind(before.unwrap_or(i64::MAX))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }
}
