//! What a backup needs from the database: a consistent copy of an SQLite file taken
//! while it serves, whether a database is blank (a restore goes only into one), and the
//! blobs the rows refer to. PostgreSQL's copy is `pg_dump`'s, outside the store.

use std::path::Path;

use sqlx::Row;

use crate::db::query;
use crate::{Backend, Store, StoreError};

impl Store {
    /// Writes a consistent copy of the SQLite database to `dest` (which must not exist)
    /// while the database is in use: one read transaction, so ingests committing
    /// meanwhile are in it whole or not at all, and they are not held up.
    pub async fn snapshot_sqlite(&self, dest: &Path) -> Result<(), StoreError> {
        let Backend::Sqlite { .. } = self.backend() else {
            return Err(StoreError::io("a file snapshot")(std::io::Error::other(
                "only an SQLite database is copied as a file; PostgreSQL is copied by pg_dump",
            )));
        };
        query("VACUUM INTO $1").bind(dest.display().to_string()).execute(&self.pool).await?;
        Ok(())
    }

    /// Whether the database holds no table at all: never migrated, nothing to lose.
    pub async fn is_blank(&self) -> Result<bool, StoreError> {
        let sql = match self.backend() {
            Backend::Sqlite { .. } => "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
            Backend::Postgres { .. } => {
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()"
            }
        };
        let tables: i64 = query(sql).fetch_one(&self.pool).await?.try_get(0)?;
        Ok(tables == 0)
    }

    /// The newest migration applied: what a backup's schema is.
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        let row = query("SELECT MAX(version) FROM _sqlx_migrations").fetch_one(&self.pool).await?;
        Ok(row.try_get::<Option<i64>, _>(0)?.unwrap_or(0))
    }

    /// The digest of every artifact the database refers to, in order.
    pub async fn artifact_digests(&self) -> Result<Vec<String>, StoreError> {
        let rows = query("SELECT digest FROM artifacts ORDER BY digest").fetch_all(&self.pool).await?;
        rows.iter().map(|r| r.try_get(0).map_err(StoreError::from)).collect()
    }

    /// Closes every connection (before the database file is replaced).
    pub async fn close(self) {
        self.pool.close().await;
    }
}
