//! The change log.

use crate::Store;
use crate::db;
use crate::error::StoreError;
use crate::model::*;

impl Store {
    /// The change log, newest first: at most `limit` events before `before` (a seq).
    pub async fn changes(&self, limit: i64, before: Option<i64>) -> Result<Vec<Change>, StoreError> {
        Ok(db::query_as(
            "SELECT seq, at, kind, bundle_id, agent_id, task, detail FROM changes WHERE seq < $1 ORDER BY seq DESC LIMIT $2",
        )
        .bind(before.unwrap_or(i64::MAX))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }
}
