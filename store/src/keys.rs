//! The key registry (spec §5): who may submit, and with which trust tier.

use bundle::PublicKey;
use vocab::Tier;

use crate::error::StoreError;
use crate::model::KeyRecord;
use crate::{Store, db, now};

pub(crate) const COLUMNS: &str = "keyid, owner, tier, added_at, revoked_at, public_key";

impl Store {
    /// Registers a key, and says so in the change log (which moves every server's
    /// cached `/keys`).
    pub async fn add_key(&self, key: &PublicKey, owner: &str, tier: Tier) -> Result<KeyRecord, StoreError> {
        let keyid = key.keyid().to_hex();
        let at = now();
        let mut tx = self.pool.begin().await?;
        let pending: Option<(i64,)> = db::query_as("SELECT pending FROM keys WHERE keyid = $1")
            .bind(&keyid)
            .fetch_optional(&mut *tx)
            .await?;
        if pending == Some((1,)) {
            return Err(StoreError::Refused {
                code: "key_requested",
                message: format!(
                    "key {keyid} has a pending key request: approve it (the desk, or POST \
                     /api/v1/admin/key-requests/{{id}}/approve), which records the bundles it holds"
                ),
            });
        }
        let inserted = db::query(
            "INSERT INTO keys (keyid, public_key, owner, tier, added_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (keyid) DO NOTHING",
        )
        .bind(&keyid)
        .bind(key.to_pem())
        .bind(owner)
        .bind(tier.as_str())
        .bind(&at)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            return Err(StoreError::KeyExists(keyid));
        }
        key_change(&mut tx, &at, &format!("key {keyid} registered for {owner}, tier {}", tier.as_str()))
            .await?;
        tx.commit().await?;
        self.key(&keyid).await
    }

    pub async fn key(&self, keyid: &str) -> Result<KeyRecord, StoreError> {
        db::query_as(&format!("SELECT {COLUMNS} FROM keys WHERE keyid = $1"))
            .bind(keyid)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::UnknownKey(keyid.to_owned()))
    }

    pub async fn keys(&self) -> Result<Vec<KeyRecord>, StoreError> {
        Ok(db::query_as(&format!("SELECT {COLUMNS} FROM keys WHERE pending = 0 ORDER BY added_at, keyid"))
            .fetch_all(&self.pool)
            .await?)
    }

    /// Revokes a key from now on: it verifies nothing afterwards, and every session it
    /// opened ends. Revoking twice keeps the first time (and logs one change).
    pub async fn revoke_key(&self, keyid: &str) -> Result<KeyRecord, StoreError> {
        let key = self.key(keyid).await?;
        if key.revoked_at.is_none() {
            let at = now();
            let mut tx = self.pool.begin().await?;
            let done = db::query("UPDATE keys SET revoked_at = $1 WHERE keyid = $2 AND revoked_at IS NULL")
                .bind(&at)
                .bind(keyid)
                .execute(&mut *tx)
                .await?;
            if done.rows_affected() == 1 {
                let detail = format!(
                    "key {keyid} ({}, tier {}) revoked: it verifies nothing from now on; what it signed before stays",
                    key.owner,
                    key.tier.as_str()
                );
                key_change(&mut tx, &at, &detail).await?;
            }
            tx.commit().await?;
        }
        self.key(keyid).await
    }

    /// The keys that may sign today, parsed.
    pub async fn trusted_keys(&self) -> Result<Vec<(PublicKey, KeyRecord)>, StoreError> {
        let mut out = Vec::new();
        for key in self.keys().await? {
            if key.revoked_at.is_none() {
                let public = PublicKey::from_pem(&key.public_key)
                    .map_err(|_| StoreError::BadKey(key.keyid.clone()))?;
                out.push((public, key));
            }
        }
        Ok(out)
    }
}

/// A change-log entry about the key registry.
async fn key_change(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    at: &str,
    detail: &str,
) -> Result<(), StoreError> {
    db::query("INSERT INTO changes (at, kind, detail) VALUES ($1, 'key', $2)")
        .bind(at)
        .bind(detail)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
