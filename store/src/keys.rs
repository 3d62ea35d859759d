//! The key registry (spec §5): who may submit, and with which trust tier.

use std::fmt;
use std::str::FromStr;

use bundle::PublicKey;
use serde::Serialize;
use sqlx::Row;

use crate::error::StoreError;
use crate::{Store, now};

/// What a key's bundles are shown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The benchmark's maintainers evaluated the runs: shown as verified.
    Maintainer,
    /// A submitter evaluated its own agent with the public runner: shown as self-reported.
    Submitter,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Maintainer => "maintainer",
            Tier::Submitter => "submitter",
        }
    }

    /// The badge a page shows.
    pub fn label(self) -> &'static str {
        match self {
            Tier::Maintainer => "verified",
            Tier::Submitter => "self-reported",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Tier {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "maintainer" => Ok(Tier::Maintainer),
            "submitter" => Ok(Tier::Submitter),
            other => Err(format!("unknown tier `{other}`: maintainer or submitter")),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyRecord {
    pub keyid: String,
    pub owner: String,
    pub tier: Tier,
    pub added_at: String,
    pub revoked_at: Option<String>,
    pub public_key: String,
}

pub(crate) fn record(row: &sqlx::any::AnyRow) -> Result<KeyRecord, StoreError> {
    let tier: String = row.try_get("tier")?;
    let keyid: String = row.try_get("keyid")?;
    Ok(KeyRecord {
        tier: tier.parse().map_err(|_| StoreError::BadKey(keyid.clone()))?,
        keyid,
        owner: row.try_get("owner")?,
        added_at: row.try_get("added_at")?,
        revoked_at: row.try_get("revoked_at")?,
        public_key: row.try_get("public_key")?,
    })
}

pub(crate) const COLUMNS: &str = "keyid, owner, tier, added_at, revoked_at, public_key";

impl Store {
    pub async fn add_key(&self, key: &PublicKey, owner: &str, tier: Tier) -> Result<KeyRecord, StoreError> {
        let keyid = key.keyid().to_hex();
        let inserted = sqlx::query(&self.sql(
            "INSERT INTO keys (keyid, public_key, owner, tier, added_at) VALUES (?, ?, ?, ?, ?) \
             ON CONFLICT (keyid) DO NOTHING",
        ))
        .bind(&keyid)
        .bind(key.to_pem())
        .bind(owner)
        .bind(tier.as_str())
        .bind(now())
        .execute(&self.pool)
        .await?;
        if inserted.rows_affected() == 0 {
            return Err(StoreError::KeyExists(keyid));
        }
        self.key(&keyid).await
    }

    pub async fn key(&self, keyid: &str) -> Result<KeyRecord, StoreError> {
        let row = sqlx::query(&self.sql(&format!("SELECT {COLUMNS} FROM keys WHERE keyid = ?")))
            .bind(keyid)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::UnknownKey(keyid.to_owned()))?;
        record(&row)
    }

    pub async fn keys(&self) -> Result<Vec<KeyRecord>, StoreError> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM keys ORDER BY added_at, keyid"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(record).collect()
    }

    /// Revokes a key from now on: it verifies nothing afterwards. Revoking twice keeps
    /// the first time.
    pub async fn revoke_key(&self, keyid: &str) -> Result<KeyRecord, StoreError> {
        let key = self.key(keyid).await?;
        if key.revoked_at.is_none() {
            sqlx::query(&self.sql("UPDATE keys SET revoked_at = ? WHERE keyid = ? AND revoked_at IS NULL"))
                .bind(now())
                .bind(keyid)
                .execute(&self.pool)
                .await?;
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
