//! The connection: one pool over SQLite or PostgreSQL through sqlx's `Any` driver, and
//! the one way statements are run ([`query`]), written once for both.

use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyArguments, AnyConnectOptions, AnyPoolOptions, AnyRow};
use sqlx::query::{Query, QueryAs};
use sqlx::{Any, AnyPool, Executor};

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
        // No prepared statement is kept. sqlx's `Any` sends an absent `f64` typed as a
        // 4-byte float, and a statement kept from such a call refuses the 8-byte float of
        // the next call of the same text ("incorrect binary data format"): a bundle with
        // file recall after one without failed. Prepared afresh, each call's own types hold.
        Backend::Postgres { url } => {
            let joint = if url.contains('?') { '&' } else { '?' };
            format!("{url}{joint}statement-cache-capacity=0")
        }
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
                    // Pages are read through a shared mapping of the file rather than a
                    // read(2) each into every connection's own small cache: a pool of 16
                    // connections otherwise re-reads the same pages on each, and a task
                    // page's reads spent more time in the kernel than in SQLite.
                    conn.execute("PRAGMA mmap_size = 1073741824").await?;
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
            // The check reads every reference in the database (16 s at 10,000 agents), so
            // it runs once per set of migrations: a passed check records how many were
            // applied in SQLite's `user_version`, and a start that finds that number
            // unchanged skips it (with foreign keys on, no other write can break a
            // reference). A failed check records nothing: every start checks again.
            let mut conn = pool.acquire().await?;
            conn.execute("PRAGMA foreign_keys = OFF").await?;
            let migrated = SQLITE_MIGRATIONS.run(&mut *conn).await;
            let (applied, checked) = (applied(&mut conn).await, checked(&mut conn).await);
            let broken = if applied.is_some() && applied == checked {
                Ok(0)
            } else {
                match query("PRAGMA foreign_key_check").fetch_all(&mut *conn).await {
                    Ok(rows) if rows.is_empty() => match applied {
                        Some(n) => {
                            conn.execute(format!("PRAGMA user_version = {n}").as_str()).await.map(|_| 0)
                        }
                        None => Ok(0),
                    },
                    rows => rows.map(|rows| rows.len()),
                }
            };
            conn.execute("PRAGMA foreign_keys = ON").await?;
            migrated?;
            let broken = broken?;
            if broken > 0 {
                return Err(StoreError::BrokenReferences(broken));
            }
        }
    }
    Ok(())
}

/// How many migrations the database records as applied; none before its first.
async fn applied(conn: &mut sqlx::pool::PoolConnection<Any>) -> Option<i64> {
    let row = query("SELECT COUNT(*) FROM _sqlx_migrations").fetch_one(&mut **conn).await.ok()?;
    sqlx::Row::try_get::<i64, _>(&row, 0).ok()
}

/// How many migrations the last passed reference check saw applied (SQLite's
/// `user_version`, 0 until one passed).
async fn checked(conn: &mut sqlx::pool::PoolConnection<Any>) -> Option<i64> {
    let row = query("PRAGMA user_version").fetch_one(&mut **conn).await.ok()?;
    sqlx::Row::try_get::<i64, _>(&row, 0).ok()
}

/// A statement as [`query`] makes it, for helpers that bind a part of it.
pub(crate) type Statement<'q> = Query<'q, Any, AnyArguments<'q>>;

/// Every statement the store runs starts here. The text is the same for both databases:
/// placeholders are numbered (`$1`, `$2`, …), which PostgreSQL takes as they are and
/// sqlx's SQLite driver binds by their number, so nothing is rewritten per backend and
/// no caller can forget to. A `?` placeholder would run on SQLite and fail on
/// PostgreSQL; tests catch one here, on either backend.
pub(crate) fn query(sql: &str) -> Statement<'_> {
    debug_assert!(!has_question_mark(sql), "`?` placeholder in {sql:?}; number them: $1, $2, …");
    sqlx::query(sql)
}

/// [`query`], each row mapped to a `T`.
pub(crate) fn query_as<T>(sql: &str) -> QueryAs<'_, Any, T, AnyArguments<'_>>
where
    T: for<'r> sqlx::FromRow<'r, AnyRow>,
{
    debug_assert!(!has_question_mark(sql), "`?` placeholder in {sql:?}; number them: $1, $2, …");
    sqlx::query_as(sql)
}

/// Placeholders for statements whose length depends on the data (filters, `IN` lists,
/// multi-row inserts): `$n` numbered on from the ones before.
#[derive(Debug, Default)]
pub(crate) struct Placeholders {
    used: usize,
}

impl Placeholders {
    /// Placeholders after `used` already written into the statement by hand.
    pub(crate) fn after(used: usize) -> Placeholders {
        Placeholders { used }
    }

    /// The next one: `$n`.
    pub(crate) fn next(&mut self) -> String {
        self.used += 1;
        format!("${}", self.used)
    }

    /// `count` of them, comma-separated: `$n, $n+1, …`.
    pub(crate) fn list(&mut self, count: usize) -> String {
        (0..count).map(|_| self.next()).collect::<Vec<_>>().join(", ")
    }

    /// `rows` parenthesised rows of `width`: `($1, $2), ($3, $4)`.
    pub(crate) fn rows(&mut self, width: usize, rows: usize) -> String {
        (0..rows).map(|_| format!("({})", self.list(width))).collect::<Vec<_>>().join(", ")
    }
}

/// Whether `sql` has a `?` outside a quoted string.
fn has_question_mark(sql: &str) -> bool {
    let mut quoted = false;
    sql.chars().any(|c| {
        quoted ^= c == '\'';
        c == '?' && !quoted
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_number_on() {
        let mut p = Placeholders::after(1);
        assert_eq!(p.next(), "$2");
        assert_eq!(p.list(2), "$3, $4");
        assert_eq!(p.rows(2, 2), "($5, $6), ($7, $8)");
    }

    #[test]
    fn question_marks_are_found_outside_strings_only() {
        assert!(has_question_mark("SELECT a FROM t WHERE b = ?"));
        assert!(!has_question_mark("SELECT a FROM t WHERE b = $1 AND c = '?'"));
    }

    /// The one way to run SQL holds only if nothing else calls sqlx's query functions.
    #[test]
    fn every_statement_goes_through_query() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut folders = vec![src.clone()];
        let mut read = 0;
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                    continue;
                }
                let name = path.strip_prefix(&src).unwrap().display().to_string();
                // The test helpers create and drop whole databases, outside any store.
                if name == "db.rs" || name == "testing.rs" {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(!text.contains("sqlx::query"), "{name} runs SQL around db::query");
                read += 1;
            }
        }
        assert!(read > 20, "every source file, in every folder ({read})");
    }
}
