//! The writes the store's transactions share: who vouches for a bundle, its artifacts'
//! rows, an entry of the change log, and multi-row inserts. A submission's ingest
//! (`ingest.rs`) and a reproduction's (`reproductions.rs`) are each one transaction of
//! these steps and their own.

use bundle::{SignatureStatus, VerifiedBundle};
use serde::Serialize;
use sqlx::{Any, Transaction};
use vocab::Tier;

use crate::db::{self, Placeholders};
use crate::error::StoreError;
use crate::keys::COLUMNS;
use crate::model::KeyRecord;

/// What an ingest did: a submission's (`Store::ingest`) or a reproduction's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Ingested {
    /// Stored now; `superseded` lists the bundles it replaced on the leaderboard.
    Stored { bundle_id: String, agent_id: String, superseded: Vec<String> },
    /// The same bundle was stored before; nothing changed.
    AlreadyStored { bundle_id: String, agent_id: String },
}

pub(crate) type Tx<'c> = Transaction<'c, Any>;

/// The registry's record of the key that vouches for `bundle`: a maintainer key if one
/// signed, else the first trusted signer. Read inside the transaction, so a key revoked
/// while the bundle was being read is refused.
pub(crate) async fn signer(tx: &mut Tx<'_>, bundle: &VerifiedBundle) -> Result<KeyRecord, StoreError> {
    let mut best: Option<KeyRecord> = None;
    for (keyid, status) in &bundle.signatures {
        if *status != SignatureStatus::Verified {
            continue;
        }
        let record: KeyRecord =
            db::query_as(&format!("SELECT {COLUMNS} FROM keys WHERE keyid = $1 AND pending = 0"))
                .bind(keyid)
                .fetch_optional(&mut **tx)
                .await?
                .ok_or_else(|| StoreError::UnknownKey(keyid.clone()))?;
        if let Some(at) = &record.revoked_at {
            return Err(StoreError::RevokedKey(keyid.clone(), at.clone()));
        }
        if best.as_ref().is_none_or(|b| b.tier != Tier::Maintainer && record.tier == Tier::Maintainer) {
            best = Some(record);
        }
    }
    best.ok_or_else(|| StoreError::UnknownKey("(no verified signature)".into()))
}

/// The artifacts' records; one another bundle already stored is kept as it is.
pub(crate) async fn write_artifacts(
    tx: &mut Tx<'_>,
    bundle: &VerifiedBundle,
    received_at: &str,
) -> Result<(), StoreError> {
    let artifacts: Vec<_> = bundle.manifest.artifacts.iter().collect();
    for chunk in batches(&artifacts, 4) {
        let sql = insert_rows(
            "INSERT INTO artifacts (digest, size, media_type, stored_at)",
            4,
            chunk.len(),
            " ON CONFLICT (digest) DO NOTHING",
        );
        let mut q = db::query(&sql);
        for (digest, info) in chunk {
            q = q.bind(*digest).bind(info.size as i64).bind(&info.media_type).bind(received_at);
        }
        q.execute(&mut **tx).await?;
    }
    Ok(())
}

/// An entry of the change log (which also invalidates cached statistics).
pub(crate) async fn write_change(
    tx: &mut Tx<'_>,
    at: &str,
    kind: &str,
    bundle_id: &str,
    agent_id: &str,
    detail: &str,
) -> Result<(), StoreError> {
    db::query("INSERT INTO changes (at, kind, bundle_id, agent_id, detail) VALUES ($1, $2, $3, $4, $5)")
        .bind(at)
        .bind(kind)
        .bind(bundle_id)
        .bind(agent_id)
        .bind(detail)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// `head VALUES ($1, …), ($k, …)… tail`: `rows` rows of `width` placeholders.
pub(crate) fn insert_rows(head: &str, width: usize, rows: usize, tail: &str) -> String {
    format!("{head} VALUES {}{tail}", Placeholders::default().rows(width, rows))
}

/// Values bound in one multi-row insert: a round trip per few dozen rows instead of one
/// per row. Not more: SQLite finds each `$N` parameter's name by walking the statement's
/// list of them, so binding costs the square of their number, and a 180-run bundle's
/// runs in one statement (2,160 values) spent a tenth of a synthetic ingest there.
pub(crate) const BATCH_VALUES: usize = 256;

/// `items` in the batches of one multi-row insert of `width` columns each.
pub(crate) fn batches<T>(items: &[T], width: usize) -> std::slice::Chunks<'_, T> {
    items.chunks((BATCH_VALUES / width).max(1))
}
