//! Patch identities (bundle spec §5b) of patches stored before the server computed them
//! at ingest: which patch blobs have none yet, and recording what the server computes
//! from their bytes. A patch that changes no file is recorded as [`NO_IDENTITY`], so that
//! it is asked for once.

use crate::db;
use crate::error::StoreError;
use crate::{Digest, Store};

/// What a patch that changes no file (no diff the reader knows) is recorded as: no
/// identity equals it.
pub const NO_IDENTITY: &str = "-";

impl Store {
    /// Up to `limit` patch blobs, by digest, no identity is recorded for.
    pub async fn patches_without_identity(&self, limit: usize) -> Result<Vec<Digest>, StoreError> {
        let rows: Vec<(String,)> = db::query_as(
            "SELECT DISTINCT p.digest FROM run_artifacts p LEFT JOIN patch_identities i ON i.digest = p.digest \
             WHERE p.role = 'patch' AND i.digest IS NULL ORDER BY p.digest LIMIT $1",
        )
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().filter_map(|(d,)| Digest::from_hex(d)).collect())
    }

    /// Records each patch's identity (`None`: it changes no file), in one transaction.
    pub async fn record_identities(&self, identities: &[(Digest, Option<String>)]) -> Result<(), StoreError> {
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        for (digest, identity) in identities {
            insert(&mut tx, &digest.to_hex(), identity.as_deref().unwrap_or(NO_IDENTITY)).await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

/// Records `digest`'s identity, unless it has one already.
pub(crate) async fn insert(
    tx: &mut crate::steps::Tx<'_>,
    digest: &str,
    identity: &str,
) -> Result<(), StoreError> {
    db::query(
        "INSERT INTO patch_identities (digest, identity) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING",
    )
    .bind(digest)
    .bind(identity)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
