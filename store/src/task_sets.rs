//! The task sets a maintainer registered (bundle spec §5a): a bundle names a task set the
//! server's cards give or one of these, or it is refused. Each registration is in the
//! change log.

use crate::{Store, StoreError, db, now};

/// A registered task set, with when and why.
#[derive(Debug, Clone, PartialEq)]
pub struct RegisteredTaskSet {
    pub set: bundle::TaskSet,
    pub registered_at: String,
    pub note: String,
}

impl Store {
    /// Registers `set`, saying why in `note` (the change log keeps it). False if it was
    /// registered already (nothing changes).
    pub async fn register_task_set(&self, set: &bundle::TaskSet, note: &str) -> Result<bool, StoreError> {
        if bundle::Digest::from_hex(&set.digest).is_none() {
            return Err(StoreError::Refused {
                code: "invalid_task_set_digest",
                message: format!("a task set's digest is 64 lowercase hex digits, not {:?}", set.digest),
            });
        }
        for (field, value) in [("name", &set.name), ("version", &set.version), ("note", &note.to_owned())] {
            if value.trim().is_empty() || value.chars().count() > 200 {
                return Err(StoreError::Refused {
                    code: "invalid_task_set",
                    message: format!("a task set's {field} is 1 to 200 characters, not {value:?}"),
                });
            }
        }
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let at = now();
        let inserted = db::query(
            "INSERT INTO task_sets (digest, name, version, registered_at, note) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (digest, name, version) DO NOTHING",
        )
        .bind(&set.digest)
        .bind(&set.name)
        .bind(&set.version)
        .bind(&at)
        .bind(note)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            > 0;
        if inserted {
            db::query("INSERT INTO changes (at, kind, detail) VALUES ($1, 'task_set', $2)")
                .bind(&at)
                .bind(format!("the maintainers registered the task set {set}: {note}"))
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(inserted)
    }

    /// Every registered task set, oldest first.
    pub async fn registered_task_sets(&self) -> Result<Vec<RegisteredTaskSet>, StoreError> {
        let rows: Vec<(String, String, String, String, String)> = db::query_as(
            "SELECT digest, name, version, registered_at, note FROM task_sets ORDER BY registered_at, digest",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(digest, name, version, registered_at, note)| RegisteredTaskSet {
                set: bundle::TaskSet { digest, name, version },
                registered_at,
                note,
            })
            .collect())
    }
}
