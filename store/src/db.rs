//! The connection: one pool over SQLite or PostgreSQL through sqlx's `Any` driver, so
//! the queries are written once. They use `?` placeholders; for PostgreSQL they are
//! renumbered `$1, $2, …` before they are sent.

use std::borrow::Cow;
use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

use crate::backend::Backend;
use crate::error::StoreError;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

pub(crate) async fn connect(backend: &Backend, max_connections: u32) -> Result<AnyPool, StoreError> {
    sqlx::any::install_default_drivers();
    let url = match backend {
        Backend::Sqlite { path } => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(StoreError::io(format!("creating {}", dir.display())))?;
            }
            format!("sqlite://{}?mode=rwc", path.display())
        }
        Backend::Postgres { url } => url.clone(),
    };
    let options = AnyConnectOptions::from_str(&url)?;
    let sqlite = matches!(backend, Backend::Sqlite { .. });
    let pool = AnyPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(10))
        .after_connect(move |conn, _| {
            Box::pin(async move {
                if sqlite {
                    // WAL: readers never wait for the writer. A writer waits its turn.
                    conn.execute("PRAGMA journal_mode = WAL").await?;
                    conn.execute("PRAGMA busy_timeout = 10000").await?;
                    conn.execute("PRAGMA foreign_keys = ON").await?;
                    conn.execute("PRAGMA synchronous = FULL").await?;
                }
                Ok(())
            })
        })
        .connect_with(options)
        .await?;
    Ok(pool)
}

pub(crate) async fn migrate(pool: &AnyPool, backend: &Backend) -> Result<(), StoreError> {
    match backend {
        Backend::Postgres { .. } => POSTGRES_MIGRATIONS.run(pool).await?,
        Backend::Sqlite { .. } => {
            // SQLite changes a constraint only by rebuilding the table, which needs foreign
            // keys off, and that switch is ignored inside the transaction each migration
            // runs in. So the migrations run on one connection with them off, and every
            // reference is checked before it goes back to the pool with them on.
            let mut conn = pool.acquire().await?;
            conn.execute("PRAGMA foreign_keys = OFF").await?;
            let migrated = SQLITE_MIGRATIONS.run(&mut *conn).await;
            let broken = sqlx::query("PRAGMA foreign_key_check").fetch_all(&mut *conn).await;
            conn.execute("PRAGMA foreign_keys = ON").await?;
            migrated?;
            let broken = broken?.len();
            if broken > 0 {
                return Err(StoreError::BrokenReferences(broken));
            }
        }
    }
    Ok(())
}

/// `?` placeholders as the backend wants them.
pub(crate) fn sql<'a>(backend: &Backend, query: &'a str) -> Cow<'a, str> {
    match backend {
        Backend::Sqlite { .. } => Cow::Borrowed(query),
        Backend::Postgres { .. } => {
            let mut out = String::with_capacity(query.len() + 16);
            let mut n = 0;
            let mut in_string = false;
            for c in query.chars() {
                match c {
                    '\'' => {
                        in_string = !in_string;
                        out.push(c);
                    }
                    '?' if !in_string => {
                        n += 1;
                        out.push('$');
                        out.push_str(&n.to_string());
                    }
                    _ => out.push(c),
                }
            }
            Cow::Owned(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        let pg = Backend::Postgres { url: "postgres://x".into() };
        assert_eq!(
            sql(&pg, "SELECT a FROM t WHERE b = ? AND c = '?' AND d = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = '?' AND d = $2"
        );
        let lite = Backend::Sqlite { path: "x".into() };
        assert_eq!(sql(&lite, "WHERE b = ?"), "WHERE b = ?");
    }
}
