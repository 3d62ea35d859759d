//! Configuration from the environment, with defaults that work on a fresh checkout.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use store::{Backend, BackendError, BlobLocation, DEFAULT_DATABASE_URL};

#[derive(Debug, Clone)]
pub struct Config {
    /// `REXBENCH_ADDR`, default 127.0.0.1:3000.
    pub addr: SocketAddr,
    /// `DATABASE_URL`, default an SQLite file under `./data`.
    pub backend: Backend,
    /// `REXBENCH_BLOBS`, default `./data/blobs`: where artifact bytes are kept, a
    /// directory or `s3://bucket/prefix`; with S3, `REXBENCH_STAGING` (default
    /// `./data/staging`) is the local directory bundles are staged in while verified.
    pub blobs: BlobLocation,
    /// `REXBENCH_TASKS`: a directory of task cards to use instead of the ones built into
    /// the binary.
    pub tasks_dir: Option<PathBuf>,
    /// Size limits for submitted bundles (spec §7 defaults).
    pub limits: bundle::Limits,
    /// `REXBENCH_ADMIN_TOKEN`: the bearer token for the admin endpoints; unset, they are off.
    pub admin_token: Option<String>,
    /// `REXBENCH_RENDER_CACHE=off` renders every request afresh (for measuring).
    pub render_cache: bool,
    /// What one client may make the server do: `REXBENCH_SUBMISSIONS_PER_HOUR` (per
    /// client address, default 60), `REXBENCH_KEY_SUBMISSIONS_PER_HOUR` (per signing
    /// key, default 120), `REXBENCH_CONCURRENT_INGESTS` (default 4),
    /// `REXBENCH_BODY_IDLE_SECS` (default 20), `REXBENCH_BODY_SECS` (default 600),
    /// `REXBENCH_HEADER_SECS` (default 10), `REXBENCH_TRUST_FORWARDED=1` (behind a
    /// proxy that sets `X-Forwarded-For`).
    pub guard: crate::guard::Limits,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("REXBENCH_ADDR `{0}` is not an address like 127.0.0.1:3000")]
    Addr(String),
    #[error("DATABASE_URL")]
    Database(#[from] BackendError),
    #[error("{0} `{1}` is not a whole number")]
    Number(&'static str, String),
}

impl Config {
    pub fn from_env() -> Result<Config, ConfigError> {
        Config::from_lookup(|name| std::env::var(name).ok())
    }

    fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let addr = get("REXBENCH_ADDR").unwrap_or_else(|| "127.0.0.1:3000".to_owned());
        let addr = addr.parse().map_err(|_| ConfigError::Addr(addr))?;
        let url = get("DATABASE_URL").unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
        let number = |name: &'static str, default: u64| -> Result<u64, ConfigError> {
            get(name).map_or(Ok(default), |v| v.trim().parse().map_err(|_| ConfigError::Number(name, v)))
        };
        let d = crate::guard::Limits::default();
        let guard = crate::guard::Limits {
            per_address_hourly: number("REXBENCH_SUBMISSIONS_PER_HOUR", d.per_address_hourly.into())?
                .try_into()
                .unwrap_or(u32::MAX),
            per_key_hourly: number("REXBENCH_KEY_SUBMISSIONS_PER_HOUR", d.per_key_hourly.into())?
                .try_into()
                .unwrap_or(u32::MAX),
            concurrent_ingests: number("REXBENCH_CONCURRENT_INGESTS", d.concurrent_ingests as u64)? as usize,
            body_idle: Duration::from_secs(number("REXBENCH_BODY_IDLE_SECS", d.body_idle.as_secs())?),
            body_total: Duration::from_secs(number("REXBENCH_BODY_SECS", d.body_total.as_secs())?),
            headers: Duration::from_secs(number("REXBENCH_HEADER_SECS", d.headers.as_secs())?),
            trust_forwarded: get("REXBENCH_TRUST_FORWARDED").is_some_and(|v| v == "1" || v == "true"),
        };
        Ok(Config {
            guard,
            addr,
            backend: Backend::from_url(&url)?,
            blobs: BlobLocation::parse(
                &get("REXBENCH_BLOBS").unwrap_or_else(|| "data/blobs".to_owned()),
                &PathBuf::from(get("REXBENCH_STAGING").unwrap_or_else(|| "data/staging".to_owned())),
            ),
            tasks_dir: get("REXBENCH_TASKS").filter(|d| !d.is_empty()).map(PathBuf::from),
            limits: bundle::Limits::default(),
            admin_token: get("REXBENCH_ADMIN_TOKEN").filter(|t| !t.is_empty()),
            render_cache: get("REXBENCH_RENDER_CACHE").is_none_or(|v| v != "off"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let c = Config::from_lookup(|_| None).unwrap();
        assert_eq!(c.addr.to_string(), "127.0.0.1:3000");
        assert_eq!(c.backend, Backend::Sqlite { path: "data/rexbench.db".into() });
        assert_eq!(c.blobs, BlobLocation::Dir("data/blobs".into()));
        assert_eq!(c.tasks_dir, None, "the built-in cards");
        let c = Config::from_lookup(|k| (k == "REXBENCH_BLOBS").then(|| "s3://results/blobs".to_owned()))
            .unwrap();
        assert_eq!(
            c.blobs,
            BlobLocation::S3 { url: "s3://results/blobs".into(), staging: "data/staging".into() }
        );
        let c = Config::from_lookup(|k| (k == "REXBENCH_ADDR").then(|| "0.0.0.0:8080".to_owned())).unwrap();
        assert_eq!(c.addr.port(), 8080);
        let err =
            Config::from_lookup(|k| (k == "REXBENCH_ADDR").then(|| "localhost".to_owned())).unwrap_err();
        assert_eq!(err.to_string(), "REXBENCH_ADDR `localhost` is not an address like 127.0.0.1:3000");
        assert_eq!(c.guard, crate::guard::Limits::default());
        let c = Config::from_lookup(|k| (k == "REXBENCH_BODY_IDLE_SECS").then(|| "3".to_owned())).unwrap();
        assert_eq!(c.guard.body_idle, Duration::from_secs(3));
        let err = Config::from_lookup(|k| (k == "REXBENCH_CONCURRENT_INGESTS").then(|| "many".to_owned()))
            .unwrap_err();
        assert_eq!(err.to_string(), "REXBENCH_CONCURRENT_INGESTS `many` is not a whole number");
        let err = Config::from_lookup(|k| (k == "DATABASE_URL").then(|| "redis://x".to_owned())).unwrap_err();
        let said = format!("{:#}", anyhow::Error::from(err));
        assert!(said.starts_with("DATABASE_URL: database URL `redis://x`"), "{said}");
    }
}
