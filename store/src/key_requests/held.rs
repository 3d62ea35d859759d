//! A pending key's bundles: verified as any, kept whole (a blob), and on no public
//! answer until the key's request is approved; the keys that verify them.

use sqlx::Row;

use super::{COLUMNS, RequestLimits, record, refused};
use crate::error::StoreError;
use crate::model::{HeldBundle, KeyRequestRecord};
use crate::{Store, db};

impl Store {
    /// The keys of pending requests, as the registry holds them (to verify their
    /// bundles, which are held).
    pub async fn pending_keys(&self) -> Result<Vec<(bundle::PublicKey, String)>, StoreError> {
        let rows: Vec<(String, String)> =
            db::query_as("SELECT keyid, public_key FROM keys WHERE pending = 1 AND revoked_at IS NULL")
                .fetch_all(&self.pool)
                .await?;
        rows.into_iter()
            .map(|(keyid, pem)| {
                bundle::PublicKey::from_pem(&pem)
                    .map(|k| (k, keyid.clone()))
                    .map_err(|_| StoreError::BadKey(keyid))
            })
            .collect()
    }

    /// Whether any request is pending (an upload is kept whole only then).
    pub async fn any_pending_request(&self) -> Result<bool, StoreError> {
        Ok(db::query("SELECT 1 FROM key_requests WHERE status = 'pending' LIMIT 1")
            .fetch_optional(&self.pool)
            .await?
            .is_some())
    }

    /// Holds a pending key's bundle, stored whole as the blob `blob`. False if it was
    /// held before. Refused once the key holds its most.
    pub async fn hold_bundle(
        &self,
        keyid: &str,
        held: &HeldBundle,
        blob: &str,
        limits: RequestLimits,
    ) -> Result<(KeyRequestRecord, bool), StoreError> {
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let row =
            db::query(&format!("SELECT {COLUMNS} FROM key_requests WHERE keyid = $1 AND status = 'pending'"))
                .bind(keyid)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or_else(|| StoreError::UnknownKey(keyid.to_owned()))?;
        let request = record(&row)?;
        let before = db::query("SELECT 1 FROM held_bundles WHERE request_id = $1 AND bundle_id = $2")
            .bind(request.id)
            .bind(&held.bundle_id)
            .fetch_optional(&mut *tx)
            .await?;
        if before.is_some() {
            return Ok((request, false));
        }
        let owner: Option<(String,)> = db::query_as("SELECT owner_keyid FROM agents WHERE id = $1")
            .bind(&held.agent_id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some((owner,)) = owner
            && owner != keyid
        {
            return Err(StoreError::AgentOwnedByOther { agent: held.agent_id.clone(), owner });
        }
        let (count,): (i64,) = db::query_as("SELECT COUNT(*) FROM held_bundles WHERE request_id = $1")
            .bind(request.id)
            .fetch_one(&mut *tx)
            .await?;
        if count >= limits.held_per_key {
            return Err(refused(
                "too_many_held_bundles",
                format!(
                    "key {keyid} is pending (request {}) and holds {count} bundles already, the most a pending key \
                     may (REXBENCH_HELD_BUNDLES): wait for the maintainers' decision",
                    request.id
                ),
            ));
        }
        db::query(
            "INSERT INTO held_bundles (request_id, bundle_id, blob, bytes, agent_id, runs, successes, received_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(request.id)
        .bind(&held.bundle_id)
        .bind(blob)
        .bind(held.bytes)
        .bind(&held.agent_id)
        .bind(held.runs)
        .bind(held.successes)
        .bind(&held.received_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok((request, true))
    }

    /// The bundles a request's key submitted while it waited, oldest first, each with
    /// the blob that holds it.
    pub async fn held_bundles(&self, request_id: i64) -> Result<Vec<(HeldBundle, String)>, StoreError> {
        let rows = db::query(
            "SELECT bundle_id, blob, bytes, agent_id, runs, successes, received_at FROM held_bundles \
             WHERE request_id = $1 ORDER BY received_at, bundle_id",
        )
        .bind(request_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    HeldBundle {
                        bundle_id: r.try_get("bundle_id")?,
                        agent_id: r.try_get("agent_id")?,
                        runs: r.try_get("runs")?,
                        successes: r.try_get("successes")?,
                        bytes: r.try_get("bytes")?,
                        received_at: r.try_get("received_at")?,
                    },
                    r.try_get("blob")?,
                ))
            })
            .collect()
    }

    /// Removes the blobs among `blobs` that nothing refers to any more (no held bundle,
    /// no artifact): a declined request's bundles, a bundle recorded at approval (its
    /// artifacts were stored on their own), or one refused after it was kept. At once, not
    /// at the next collection: they are whole bundles, private outputs and all.
    pub async fn drop_unheld_blobs(&self, blobs: &[String]) -> Result<(), StoreError> {
        let _one_writer = self.write_lock.lock().await;
        for blob in blobs {
            let held = db::query(
                "SELECT 1 FROM held_bundles WHERE blob = $1 UNION SELECT 1 FROM artifacts WHERE digest = $1",
            )
            .bind(blob)
            .fetch_optional(&self.pool)
            .await?;
            if held.is_none()
                && let Some(digest) = bundle::Digest::from_hex(blob)
            {
                self.blobs()
                    .remove(&digest)
                    .await
                    .map_err(StoreError::io("removing a held bundle's blob"))?;
            }
        }
        Ok(())
    }

    /// Lets a held bundle go (recorded on the board, or refused there at approval).
    pub async fn release_held(&self, request_id: i64, bundle_id: &str) -> Result<(), StoreError> {
        db::query("DELETE FROM held_bundles WHERE request_id = $1 AND bundle_id = $2")
            .bind(request_id)
            .bind(bundle_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
