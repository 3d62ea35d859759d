//! Key requests (the community's way in): a key not yet registered asks to be, with proof
//! of possession; the request's key goes into the registry as *pending* (it may sign in
//! and submit, but verifies nothing on the board and no public answer lists it); the
//! maintainers approve it, choosing its tier, or decline it with a reason, which removes
//! its key and the bundles it held. The change log records the request, the approval and
//! the decline. Who may read which of a request's fields is `views::key_requests`'s.

use sqlx::Row;
use sqlx::any::AnyRow;
use vocab::{RequestStatus, Tier};

use crate::error::StoreError;
use crate::model::{DeskCounts, KeyRequestRecord};
use crate::reads::name;
use crate::{ChallengeUse, Store, db, now};

mod held;

pub(super) const COLUMNS: &str =
    "id, keyid, public_key, owner, url, contact, note, status, tier, reason, requested_at, decided_at";

/// What a request states, checked by the server before it is filed.
#[derive(Debug, Clone)]
pub struct NewKeyRequest<'a> {
    pub keyid: &'a str,
    pub public_key: &'a str,
    pub owner: &'a str,
    /// The owner as a reader sees it, letters and digits alone (`bundle::owner_key`): no
    /// two owners may read alike.
    pub owner_seen: &'a str,
    pub url: Option<&'a str>,
    pub contact: &'a str,
    pub note: Option<&'a str>,
    /// The requesting address, for its allowance (never shown).
    pub address: &'a str,
    pub now_unix: i64,
}

/// How many requests the board takes: per address and day, and pending at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLimits {
    pub per_address_per_day: i64,
    pub pending: i64,
    /// Bundles a pending key may have held at once.
    pub held_per_key: i64,
}

impl Default for RequestLimits {
    fn default() -> RequestLimits {
        RequestLimits { per_address_per_day: 3, pending: 100, held_per_key: 10 }
    }
}

pub(super) fn record(row: &AnyRow) -> Result<KeyRequestRecord, StoreError> {
    let tier: Option<String> = row.try_get("tier")?;
    Ok(KeyRequestRecord {
        id: row.try_get("id")?,
        keyid: row.try_get("keyid")?,
        public_key: row.try_get("public_key")?,
        owner: row.try_get("owner")?,
        url: row.try_get("url")?,
        contact: row.try_get("contact")?,
        note: row.try_get("note")?,
        status: name(row, "status")?,
        tier: match tier {
            Some(_) => Some(name(row, "tier")?),
            None => None,
        },
        reason: row.try_get("reason")?,
        requested_at: row.try_get("requested_at")?,
        decided_at: row.try_get("decided_at")?,
    })
}

pub(super) fn refused(code: &'static str, message: String) -> StoreError {
    StoreError::Refused { code, message }
}

impl Store {
    /// A challenge for a key that is not registered yet, to sign before requesting.
    pub async fn add_request_challenge(
        &self,
        challenge: &str,
        keyid: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        // One writer at a time: requests filed at once wait, rather than find SQLite locked.
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        db::query("DELETE FROM key_request_challenges WHERE expires_at < $1")
            .bind(now)
            .execute(&mut *tx)
            .await?;
        db::query("INSERT INTO key_request_challenges (challenge, keyid, expires_at) VALUES ($1, $2, $3)")
            .bind(challenge)
            .bind(keyid)
            .bind(expires_at)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Uses a request challenge answered by `keyid` at `now`, once.
    pub async fn use_request_challenge(
        &self,
        challenge: &str,
        keyid: &str,
        now: i64,
    ) -> Result<ChallengeUse, StoreError> {
        let row =
            db::query("SELECT keyid, expires_at, used_at FROM key_request_challenges WHERE challenge = $1")
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
        let _one_writer = self.write_lock.lock().await;
        let done = db::query(
            "UPDATE key_request_challenges SET used_at = $1 WHERE challenge = $2 AND used_at IS NULL",
        )
        .bind(now)
        .bind(challenge)
        .execute(&self.pool)
        .await?;
        Ok(if done.rows_affected() == 1 { ChallengeUse::Accepted } else { ChallengeUse::Used })
    }

    /// Files a request, its key pending in the registry, held to `limits`; refused (with
    /// its code) for a key registered or requested before, an owner another reads alike,
    /// an address past its allowance, or a full queue. Nothing is written when refused.
    pub async fn request_key(
        &self,
        new: &NewKeyRequest<'_>,
        limits: RequestLimits,
    ) -> Result<KeyRequestRecord, StoreError> {
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let registered = db::query("SELECT pending FROM keys WHERE keyid = $1")
            .bind(new.keyid)
            .fetch_optional(&mut *tx)
            .await?;
        let requested = db::query("SELECT id, status FROM key_requests WHERE keyid = $1")
            .bind(new.keyid)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(row) = requested {
            let id: i64 = row.try_get("id")?;
            let status: String = row.try_get("status")?;
            return Err(refused(
                "key_requested",
                format!(
                    "key {} was requested before (request {id}, {status}): one request per key",
                    new.keyid
                ),
            ));
        }
        if registered.is_some() {
            return Err(refused("key_registered", format!("key {} is registered already", new.keyid)));
        }
        let day_ago = new.now_unix - 24 * 60 * 60;
        let (from_address,): (i64,) =
            db::query_as("SELECT COUNT(*) FROM key_requests WHERE address = $1 AND requested_unix > $2")
                .bind(new.address)
                .bind(day_ago)
                .fetch_one(&mut *tx)
                .await?;
        if from_address >= limits.per_address_per_day {
            return Err(refused(
                "too_many_key_requests",
                format!(
                    "this address filed {from_address} key requests in the last 24 hours, the most it may \
                     (REXBENCH_KEY_REQUESTS_PER_DAY): try again tomorrow"
                ),
            ));
        }
        let (pending,): (i64,) = db::query_as("SELECT COUNT(*) FROM key_requests WHERE status = 'pending'")
            .fetch_one(&mut *tx)
            .await?;
        if pending >= limits.pending {
            return Err(refused(
                "key_requests_full",
                format!(
                    "{pending} key requests wait for the maintainers already, the most the board holds \
                     (REXBENCH_PENDING_KEY_REQUESTS): try again once they have decided some"
                ),
            ));
        }
        // An owner may not read as another's: registered keys' owners, and requests that
        // are pending or approved (a declined one's name is free again).
        let owners: Vec<(String,)> =
            db::query_as("SELECT owner FROM keys WHERE pending = 0").fetch_all(&mut *tx).await?;
        let taken = owners.iter().find(|(o,)| bundle::owner_key(o) == new.owner_seen).map(|(o,)| o.clone());
        let taken = match taken {
            Some(o) => Some(o),
            None => db::query_as::<(String,)>(
                "SELECT owner FROM key_requests WHERE owner_seen = $1 AND status <> 'declined'",
            )
            .bind(new.owner_seen)
            .fetch_optional(&mut *tx)
            .await?
            .map(|(o,)| o),
        };
        if let Some(other) = taken {
            return Err(refused(
                "owner_taken",
                format!(
                    "owner {:?} reads as {other:?}, whose key is registered or requested: choose a name of your own \
                     (a team with a key already asks the maintainers for another)",
                    new.owner
                ),
            ));
        }
        let at = now();
        let (id,): (i64,) = db::query_as(
            "INSERT INTO key_requests (keyid, public_key, owner, owner_seen, url, contact, note, address, status, \
             requested_at, requested_unix) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10) RETURNING id",
        )
        .bind(new.keyid)
        .bind(new.public_key)
        .bind(new.owner)
        .bind(new.owner_seen)
        .bind(new.url)
        .bind(new.contact)
        .bind(new.note)
        .bind(new.address)
        .bind(&at)
        .bind(new.now_unix)
        .fetch_one(&mut *tx)
        .await?;
        db::query(
            "INSERT INTO keys (keyid, public_key, owner, tier, added_at, pending) VALUES ($1, $2, $3, 'submitter', $4, 1)",
        )
        .bind(new.keyid)
        .bind(new.public_key)
        .bind(new.owner)
        .bind(&at)
        .execute(&mut *tx)
        .await?;
        let detail = format!("key request {id} filed for {}: pending the maintainers' review", new.owner);
        change(&mut tx, &at, &detail).await?;
        tx.commit().await?;
        self.key_request(id).await
    }

    /// A request by its id.
    pub async fn key_request(&self, id: i64) -> Result<KeyRequestRecord, StoreError> {
        let row = db::query(&format!("SELECT {COLUMNS} FROM key_requests WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::UnknownRequest(id.to_string()))?;
        record(&row)
    }

    /// The request of a key, if it made one.
    pub async fn key_request_of(&self, keyid: &str) -> Result<Option<KeyRequestRecord>, StoreError> {
        db::query(&format!("SELECT {COLUMNS} FROM key_requests WHERE keyid = $1"))
            .bind(keyid)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(record)
            .transpose()
    }

    /// Requests, newest first: the pending ones only, or all; `limit` of them from
    /// `offset`, with how many there are.
    pub async fn key_requests(
        &self,
        pending_only: bool,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<KeyRequestRecord>, i64), StoreError> {
        let only = if pending_only { " WHERE status = 'pending'" } else { "" };
        let (total,): (i64,) =
            db::query_as(&format!("SELECT COUNT(*) FROM key_requests{only}")).fetch_one(&self.pool).await?;
        let rows = db::query(&format!(
            "SELECT {COLUMNS} FROM key_requests{only} ORDER BY id DESC LIMIT $1 OFFSET $2"
        ))
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?;
        Ok((rows.iter().map(record).collect::<Result<_, _>>()?, total))
    }

    /// Approves a pending request: its key joins the registry with `tier` (the sessions
    /// it opened while pending end: it signs in again with its tier). Its held bundles
    /// are then the server's to record, as any submission.
    pub async fn approve_key_request(&self, id: i64, tier: Tier) -> Result<KeyRequestRecord, StoreError> {
        let request = self.decidable(id).await?;
        let at = now();
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let done = db::query(
            "UPDATE key_requests SET status = 'approved', tier = $1, decided_at = $2 WHERE id = $3 AND status = 'pending'",
        )
        .bind(tier.as_str())
        .bind(&at)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() != 1 {
            return Err(decided(id));
        }
        db::query("UPDATE keys SET pending = 0, tier = $1, added_at = $2 WHERE keyid = $3")
            .bind(tier.as_str())
            .bind(&at)
            .bind(&request.keyid)
            .execute(&mut *tx)
            .await?;
        end_sessions(&mut tx, &request.keyid).await?;
        let detail = format!(
            "key request {id} approved: key {} registered for {}, tier {}",
            request.keyid,
            request.owner,
            tier.as_str()
        );
        change(&mut tx, &at, &detail).await?;
        tx.commit().await?;
        self.key_request(id).await
    }

    /// Declines a pending request with the maintainers' `reason`: its key leaves the
    /// registry (its sessions end), its held bundles are removed, and the change log says
    /// how many. The blobs go with the next garbage collection.
    pub async fn decline_key_request(
        &self,
        id: i64,
        reason: &str,
    ) -> Result<(KeyRequestRecord, i64), StoreError> {
        let request = self.decidable(id).await?;
        let blobs: Vec<String> = self.held_bundles(id).await?.into_iter().map(|(_, blob)| blob).collect();
        let at = now();
        let one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let done = db::query(
            "UPDATE key_requests SET status = 'declined', reason = $1, decided_at = $2 WHERE id = $3 AND status = 'pending'",
        )
        .bind(reason)
        .bind(&at)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() != 1 {
            return Err(decided(id));
        }
        let removed =
            db::query("DELETE FROM held_bundles WHERE request_id = $1").bind(id).execute(&mut *tx).await?;
        let removed = removed.rows_affected() as i64;
        db::query("DELETE FROM sessions WHERE keyid = $1").bind(&request.keyid).execute(&mut *tx).await?;
        db::query("DELETE FROM login_challenges WHERE keyid = $1")
            .bind(&request.keyid)
            .execute(&mut *tx)
            .await?;
        db::query("DELETE FROM keys WHERE keyid = $1 AND pending = 1")
            .bind(&request.keyid)
            .execute(&mut *tx)
            .await?;
        let detail = format!(
            "key request {id} for {} declined: {reason}; its {removed} held bundle{} removed",
            request.owner,
            if removed == 1 { "" } else { "s" }
        );
        change(&mut tx, &at, &detail).await?;
        tx.commit().await?;
        drop(one_writer);
        self.drop_unheld_blobs(&blobs).await?;
        Ok((self.key_request(id).await?, removed))
    }

    /// A request that is still pending, or why it cannot be decided.
    async fn decidable(&self, id: i64) -> Result<KeyRequestRecord, StoreError> {
        let request = self.key_request(id).await?;
        if request.status != RequestStatus::Pending {
            return Err(decided(id));
        }
        Ok(request)
    }

    /// What waits on the maintainers' desk: pending requests, findings to review.
    pub async fn desk_counts(&self) -> Result<DeskCounts, StoreError> {
        let (requests,): (i64,) = db::query_as("SELECT COUNT(*) FROM key_requests WHERE status = 'pending'")
            .fetch_one(&self.pool)
            .await?;
        Ok(DeskCounts { requests, findings: self.pending_findings().await? })
    }
}

fn decided(id: i64) -> StoreError {
    refused("request_decided", format!("key request {id} was decided already: it is not pending"))
}

/// Ends every session a key opened (and those made from them).
async fn end_sessions(tx: &mut sqlx::Transaction<'_, sqlx::Any>, keyid: &str) -> Result<(), StoreError> {
    db::query("UPDATE sessions SET ended_at = $1 WHERE keyid = $2 AND ended_at IS NULL")
        .bind(time::OffsetDateTime::now_utc().unix_timestamp())
        .bind(keyid)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// A change-log entry about a key request.
async fn change(tx: &mut sqlx::Transaction<'_, sqlx::Any>, at: &str, detail: &str) -> Result<(), StoreError> {
    db::query("INSERT INTO changes (at, kind, detail) VALUES ($1, 'key', $2)")
        .bind(at)
        .bind(detail)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
