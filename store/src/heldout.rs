//! Held-out variants (bundle spec §4l): the maintainers register each variant of a task
//! by its digest (the change log says when), before the submissions it may be chosen
//! for. At ingest the sampling key chooses, for each sampled success, one of the
//! variants its task had then; a reproduction re-runs it there too.

use crate::model::RegisteredVariant;
use crate::{Store, StoreError, db, now};

/// The check a sampled success gets when its held-out re-run is not a success (spec §4a, §4l).
pub const NOT_GENERALISED: &str = "not-generalised";

impl Store {
    /// Registers a variant of `task` by its digest, saying why in `note`. False if it was
    /// registered already (nothing changes).
    pub async fn register_variant(&self, task: &str, digest: &str, note: &str) -> Result<bool, StoreError> {
        if bundle::Digest::from_hex(digest).is_none() {
            return Err(StoreError::Refused {
                code: "invalid_variant",
                message: format!("a held-out variant's digest is 64 lowercase hex digits, not {digest:?}"),
            });
        }
        if !bundle::is_slug(task) {
            return Err(StoreError::Refused {
                code: "invalid_variant",
                message: format!("{task:?} is not a task id"),
            });
        }
        check_note(note)?;
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let at = now();
        let inserted = db::query(
            "INSERT INTO heldout_variants (task, digest, registered_at, note) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (task, digest) DO NOTHING",
        )
        .bind(task)
        .bind(digest)
        .bind(&at)
        .bind(note)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            > 0;
        if inserted {
            db::query(
                "INSERT INTO changes (at, kind, detail, task) VALUES ($1, 'heldout_variant', $2, NULL)",
            )
            .bind(&at)
            .bind(format!(
                "the maintainers registered a held-out variant of task {task}: {digest} ({note}); sampled \
                     successes of submissions from now on may be re-run on it"
            ))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(inserted)
    }

    /// Retires a variant of `task`: from now on it is chosen for no new submission (the
    /// change log says when and why), as when a variant may have leaked. False if it was
    /// retired already; refused if it was never registered.
    pub async fn retire_variant(&self, task: &str, digest: &str, note: &str) -> Result<bool, StoreError> {
        check_note(note)?;
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let at = now();
        let known: Option<(Option<String>,)> =
            db::query_as("SELECT retired_at FROM heldout_variants WHERE task = $1 AND digest = $2")
                .bind(task)
                .bind(digest)
                .fetch_optional(&mut *tx)
                .await?;
        match known {
            None => {
                return Err(StoreError::Refused {
                    code: "unknown_variant",
                    message: format!("no registered held-out variant {digest} of task {task}"),
                });
            }
            Some((Some(_),)) => return Ok(false),
            Some((None,)) => {}
        }
        db::query("UPDATE heldout_variants SET retired_at = $1 WHERE task = $2 AND digest = $3")
            .bind(&at)
            .bind(task)
            .bind(digest)
            .execute(&mut *tx)
            .await?;
        db::query("INSERT INTO changes (at, kind, detail, task) VALUES ($1, 'heldout_variant', $2, NULL)")
            .bind(&at)
            .bind(format!(
                "the maintainers retired the held-out variant {digest} of task {task} ({note}): it is chosen for no \
                 submission from now on"
            ))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Every registered variant, oldest first.
    pub async fn registered_variants(&self) -> Result<Vec<RegisteredVariant>, StoreError> {
        let rows: Vec<(String, String, String, String, Option<String>)> = db::query_as(
            "SELECT task, digest, registered_at, note, retired_at FROM heldout_variants \
             ORDER BY registered_at, task, digest",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(task, digest, registered_at, note, retired_at)| RegisteredVariant {
                task,
                digest,
                registered_at,
                note,
                retired_at,
            })
            .collect())
    }
}

/// A registration's or a retirement's words for the change log: 1 to 200 characters.
fn check_note(note: &str) -> Result<(), StoreError> {
    if note.trim().is_empty() || note.chars().count() > 200 {
        return Err(StoreError::Refused {
            code: "invalid_variant",
            message: format!("a variant's note is 1 to 200 characters, not {note:?}"),
        });
    }
    Ok(())
}
