//! The two databases the leaderboard runs on, chosen by the URL given at start-up.

use std::fmt;
use std::path::PathBuf;

/// Where data goes when nothing is configured: an embedded SQLite file.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/rexbench.db";

#[derive(Clone, PartialEq, Eq)]
pub enum Backend {
    /// An embedded SQLite database file.
    Sqlite { path: PathBuf },
    /// A PostgreSQL server; the URL is kept whole for the driver.
    Postgres { url: String },
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BackendError {
    #[error("database URL `{0}` names no supported database: use sqlite://PATH or postgres://…")]
    Unsupported(String),
    #[error("database URL `{0}` has no path to the SQLite file")]
    NoPath(String),
    #[error(
        "database URL `{0}` names PostgreSQL, which this build leaves out (Cargo feature `postgres`, on in \
         the default build; `scripts/demo` leaves it out): use sqlite://PATH, or build with --features postgres"
    )]
    NotBuilt(String),
}

impl Backend {
    pub fn from_url(url: &str) -> Result<Backend, BackendError> {
        Backend::from_url_in(url, cfg!(feature = "postgres"))
    }

    /// The backend `url` names, in a build that has PostgreSQL or not.
    fn from_url_in(url: &str, postgres_built: bool) -> Result<Backend, BackendError> {
        if let Some(rest) = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")) {
            let path = rest.split('?').next().unwrap_or("");
            if path.is_empty() {
                return Err(BackendError::NoPath(url.to_owned()));
            }
            return Ok(Backend::Sqlite { path: PathBuf::from(path) });
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            if !postgres_built {
                return Err(BackendError::NotBuilt(redact(url)));
            }
            return Ok(Backend::Postgres { url: url.to_owned() });
        }
        Err(BackendError::Unsupported(redact(url)))
    }
}

/// Shows a backend without the password a PostgreSQL URL may carry.
impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backend::Sqlite { path } => write!(f, "SQLite at {}", path.display()),
            Backend::Postgres { url } => write!(f, "PostgreSQL at {}", redact(url)),
        }
    }
}

/// `scheme://user:secret@host/db` → `scheme://user:***@host/db`.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            let hidden = if userinfo.contains(':') { format!("{user}:***") } else { user.to_owned() };
            format!("{scheme}://{hidden}@{host}{tail}")
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls() {
        assert_eq!(
            Backend::from_url(DEFAULT_DATABASE_URL),
            Ok(Backend::Sqlite { path: "data/rexbench.db".into() })
        );
        assert_eq!(
            Backend::from_url("sqlite:///var/lib/x.db?mode=rwc"),
            Ok(Backend::Sqlite { path: "/var/lib/x.db".into() })
        );
        assert_eq!(Backend::from_url("sqlite://"), Err(BackendError::NoPath("sqlite://".into())));
    }

    #[test]
    fn a_build_without_postgres_says_which_feature_a_postgres_url_needs() {
        let e = Backend::from_url_in("postgres://rex:hunter2@db/rexbench", false).unwrap_err();
        assert!(matches!(e, BackendError::NotBuilt(_)));
        let said = e.to_string();
        assert!(said.contains("Cargo feature `postgres`") && !said.contains("hunter2"), "{said}");
        assert!(Backend::from_url_in("sqlite://x.db", false).is_ok());
        assert!(Backend::from_url_in("postgres://db/rexbench", true).is_ok());
    }

    #[test]
    fn postgres_urls_never_show_their_password() {
        let b = Backend::from_url("postgres://rex:hunter2@db.internal:5432/rexbench").unwrap();
        assert_eq!(b.to_string(), "PostgreSQL at postgres://rex:***@db.internal:5432/rexbench");
        assert_eq!(format!("{b:?}"), b.to_string());
        assert!(matches!(Backend::from_url("postgresql://localhost/x"), Ok(Backend::Postgres { .. })));
    }

    #[test]
    fn other_schemes_are_refused_clearly() {
        let err = Backend::from_url("mysql://root:pw@localhost/x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "database URL `mysql://root:***@localhost/x` names no supported database: use sqlite://PATH or postgres://…"
        );
    }
}
