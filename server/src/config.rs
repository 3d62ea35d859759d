//! Configuration from the environment (or the flag of the same meaning), with defaults
//! that work on a fresh checkout. `rexbench-server --help` lists every setting with its
//! variable; a value that does not read stops the server with the variable's name.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use store::{Backend, BackendError, BlobLocation, DEFAULT_DATABASE_URL};

/// The settings as given: each from its environment variable, or the flag of the same
/// meaning (which wins), or its default. A variable set to nothing is as good as unset
/// where a setting may be absent (the task cards, the admin token, the two switches).
#[derive(Debug, Clone, clap::Args)]
pub struct Settings {
    /// Where to listen.
    #[arg(long, global = true, env = "REXBENCH_ADDR", value_name = "REXBENCH_ADDR", default_value = "127.0.0.1:3000", value_parser = address)]
    addr: SocketAddr,
    /// The database: sqlite://PATH or postgres://…
    // Read as text and checked after: clap would print a refused value whole, and a
    // PostgreSQL URL may hold a password.
    #[arg(long = "database-url", global = true, env = "DATABASE_URL", value_name = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
    database: String,
    /// Where artifact bytes are kept: a folder, or s3://bucket/prefix (with AWS_* for the
    /// endpoint and credentials).
    #[arg(
        long,
        global = true,
        env = "REXBENCH_BLOBS",
        value_name = "REXBENCH_BLOBS",
        default_value = "data/blobs"
    )]
    blobs: String,
    /// With S3 blobs, the local folder bundles are staged in while they are verified.
    #[arg(
        long,
        global = true,
        env = "REXBENCH_STAGING",
        value_name = "REXBENCH_STAGING",
        default_value = "data/staging"
    )]
    staging: PathBuf,
    /// A folder of task cards to use instead of the ones built into the binary.
    #[arg(long, global = true, env = "REXBENCH_TASKS", value_name = "REXBENCH_TASKS", num_args = 0..=1, default_missing_value = "")]
    tasks: Option<String>,
    /// The bearer token of the admin endpoints; without it, admin over HTTP is off.
    #[arg(long, global = true, env = "REXBENCH_ADMIN_TOKEN", value_name = "REXBENCH_ADMIN_TOKEN", num_args = 0..=1, default_missing_value = "", hide_env_values = true)]
    admin_token: Option<String>,
    /// `off` renders every request afresh (for measuring).
    #[arg(long, global = true, env = "REXBENCH_RENDER_CACHE", value_name = "REXBENCH_RENDER_CACHE", default_value = "on", num_args = 0..=1, default_missing_value = "on", action = clap::ArgAction::Set, value_parser = on_unless_off)]
    render_cache: bool,
    /// `off` leaves the board's reads to the first request that needs them, rather than
    /// making them at the start and after each change (for measuring that request).
    #[arg(long, global = true, env = "REXBENCH_WARM", value_name = "REXBENCH_WARM", default_value = "on", num_args = 0..=1, default_missing_value = "on", action = clap::ArgAction::Set, value_parser = on_unless_off)]
    warm: bool,
    /// Submissions an hour from one client address.
    #[arg(long, global = true, env = "REXBENCH_SUBMISSIONS_PER_HOUR", value_name = "REXBENCH_SUBMISSIONS_PER_HOUR", default_value = "60", value_parser = whole::<u32>)]
    submissions_per_hour: u32,
    /// Submissions an hour signed by one key.
    #[arg(long, global = true, env = "REXBENCH_KEY_SUBMISSIONS_PER_HOUR", value_name = "REXBENCH_KEY_SUBMISSIONS_PER_HOUR", default_value = "120", value_parser = whole::<u32>)]
    key_submissions_per_hour: u32,
    /// Uploads one client address may have under way at once.
    #[arg(long, global = true, env = "REXBENCH_CONCURRENT_UPLOADS_PER_ADDRESS", value_name = "REXBENCH_CONCURRENT_UPLOADS_PER_ADDRESS", default_value = "2", value_parser = whole::<usize>)]
    concurrent_uploads_per_address: usize,
    /// Bundles ingested at once (each from when its envelope has been read).
    #[arg(long, global = true, env = "REXBENCH_CONCURRENT_INGESTS", value_name = "REXBENCH_CONCURRENT_INGESTS", default_value = "4", value_parser = whole::<usize>)]
    concurrent_ingests: usize,
    /// Seconds a request body may send nothing before it is cut off.
    #[arg(long, global = true, env = "REXBENCH_BODY_IDLE_SECS", value_name = "REXBENCH_BODY_IDLE_SECS", default_value = "20", value_parser = whole::<u64>)]
    body_idle_secs: u64,
    /// Seconds a request body may take in all.
    #[arg(long, global = true, env = "REXBENCH_BODY_SECS", value_name = "REXBENCH_BODY_SECS", default_value = "600", value_parser = whole::<u64>)]
    body_secs: u64,
    /// The slowest a request body may arrive, in bytes a second over each window after
    /// the first (0: no minimum).
    #[arg(long, global = true, env = "REXBENCH_BODY_MIN_BYTES_PER_SEC", value_name = "REXBENCH_BODY_MIN_BYTES_PER_SEC", default_value = "16384", value_parser = whole::<u64>)]
    body_min_bytes_per_sec: u64,
    /// Seconds of the window a request body's rate is averaged over (the first is its grace).
    #[arg(long, global = true, env = "REXBENCH_BODY_RATE_WINDOW_SECS", value_name = "REXBENCH_BODY_RATE_WINDOW_SECS", default_value = "10", value_parser = whole::<u64>)]
    body_rate_window_secs: u64,
    /// Seconds the request headers may take.
    #[arg(long, global = true, env = "REXBENCH_HEADER_SECS", value_name = "REXBENCH_HEADER_SECS", default_value = "10", value_parser = whole::<u64>)]
    header_secs: u64,
    /// Re-runs of a sampled run that may end `infra_error` before it counts as not
    /// reproduced (at least 1).
    #[arg(long, global = true, env = "REXBENCH_REPRODUCTION_TRIES", value_name = "REXBENCH_REPRODUCTION_TRIES", default_value = "3", value_parser = tries)]
    reproduction_tries: u32,
    /// The share of a condition's successes, were they fake, that a submission's sample
    /// catches (above 0, at most 1; spec §4e).
    #[arg(long, global = true, env = "REXBENCH_SAMPLE_SHARE", value_name = "REXBENCH_SAMPLE_SHARE", default_value = "0.2", value_parser = share)]
    sample_share: f64,
    /// The probability with which it catches one (above 0, below 1).
    #[arg(long, global = true, env = "REXBENCH_SAMPLE_PROBABILITY", value_name = "REXBENCH_SAMPLE_PROBABILITY", default_value = "0.9", value_parser = probability)]
    sample_probability: f64,
    /// The most successes of one submission the maintainers re-run (at least 1).
    #[arg(long, global = true, env = "REXBENCH_SAMPLE_CAP", value_name = "REXBENCH_SAMPLE_CAP", default_value = "30", value_parser = cap)]
    sample_cap: u32,
    /// `1` or `true` behind a reverse proxy that sets X-Forwarded-For: the client's
    /// address is its last entry.
    #[arg(long, global = true, env = "REXBENCH_TRUST_FORWARDED", value_name = "REXBENCH_TRUST_FORWARDED", default_value = "false", num_args = 0..=1, default_missing_value = "false", action = clap::ArgAction::Set, value_parser = yes)]
    trust_forwarded: bool,
    /// The site's address as its readers reach it (`https://rexbench.example.org`): the
    /// Atom feed's ids and links are made with it [default: http://REXBENCH_ADDR].
    #[arg(long, global = true, env = "REXBENCH_PUBLIC_URL", value_name = "REXBENCH_PUBLIC_URL", value_parser = public_url)]
    public_url: Option<String>,
    /// Key requests one client address may file in 24 hours (at least 1).
    #[arg(long, global = true, env = "REXBENCH_KEY_REQUESTS_PER_DAY", value_name = "REXBENCH_KEY_REQUESTS_PER_DAY", default_value = "3", value_parser = at_least_one)]
    key_requests_per_day: i64,
    /// Key requests that may wait for the maintainers at once (at least 1).
    #[arg(long, global = true, env = "REXBENCH_PENDING_KEY_REQUESTS", value_name = "REXBENCH_PENDING_KEY_REQUESTS", default_value = "100", value_parser = at_least_one)]
    pending_key_requests: i64,
    /// Bundles a pending key may have held at once (at least 1).
    #[arg(long, global = true, env = "REXBENCH_HELD_BUNDLES", value_name = "REXBENCH_HELD_BUNDLES", default_value = "10", value_parser = at_least_one)]
    held_bundles: i64,
}

fn public_url(s: &str) -> Result<String, String> {
    let t = s.trim().trim_end_matches('/');
    let rest = t.strip_prefix("https://").or_else(|| t.strip_prefix("http://"));
    match rest {
        Some(r) if !r.is_empty() && !r.contains(char::is_whitespace) && !r.contains(['<', '>', '"']) => {
            Ok(t.to_owned())
        }
        _ => Err(format!("`{s}` is not an http:// or https:// address like https://rexbench.example.org")),
    }
}

fn at_least_one(s: &str) -> Result<i64, String> {
    match whole::<i64>(s)? {
        n if n >= 1 => Ok(n),
        n => Err(format!("{n}: give 1 or more")),
    }
}

fn address(s: &str) -> Result<SocketAddr, String> {
    s.parse().map_err(|_| format!("`{s}` is not an address like 127.0.0.1:3000"))
}

fn whole<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.trim().parse().map_err(|_| format!("`{s}` is not a whole number"))
}

fn tries(s: &str) -> Result<u32, String> {
    match whole::<u32>(s)? {
        0 => {
            Err("0 tries would count every sampled run as not reproduced before it is re-run: give 1 or more"
                .into())
        }
        n => Ok(n),
    }
}

fn fraction(s: &str) -> Result<f64, String> {
    s.trim().parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| format!("`{s}` is not a number"))
}

fn share(s: &str) -> Result<f64, String> {
    match fraction(s)? {
        x if x > 0.0 && x <= 1.0 => Ok(x),
        x => Err(format!(
            "{x} is no share of fakes to catch: give a number above 0 and at most 1, such as 0.2"
        )),
    }
}

fn probability(s: &str) -> Result<f64, String> {
    match fraction(s)? {
        x if x > 0.0 && x < 1.0 => Ok(x),
        x => Err(format!(
            "{x} is no probability of catching one: give a number above 0 and below 1, such as 0.9"
        )),
    }
}

fn cap(s: &str) -> Result<u32, String> {
    match whole::<u32>(s)? {
        0 => Err("a cap of 0 would re-run no success: give 1 or more".into()),
        n => Ok(n),
    }
}

fn on_unless_off(s: &str) -> Result<bool, String> {
    Ok(s != "off")
}

fn yes(s: &str) -> Result<bool, String> {
    Ok(s == "1" || s == "true")
}

/// The settings, resolved.
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
    /// `REXBENCH_WARM=off` leaves the board's reads (the leaderboard's rows and
    /// statistics) to the first request that needs them (for measuring it); on, they are
    /// made at the start and after each change ([`crate::warm`]).
    pub warm: bool,
    /// What one client may make the server do (`REXBENCH_SUBMISSIONS_PER_HOUR`,
    /// `REXBENCH_KEY_SUBMISSIONS_PER_HOUR`, `REXBENCH_CONCURRENT_UPLOADS_PER_ADDRESS`,
    /// `REXBENCH_CONCURRENT_INGESTS`, `REXBENCH_BODY_IDLE_SECS`, `REXBENCH_BODY_SECS`,
    /// `REXBENCH_BODY_MIN_BYTES_PER_SEC`, `REXBENCH_BODY_RATE_WINDOW_SECS`,
    /// `REXBENCH_HEADER_SECS`, `REXBENCH_TRUST_FORWARDED`, and the key requests'
    /// `REXBENCH_KEY_REQUESTS_PER_DAY`, `REXBENCH_PENDING_KEY_REQUESTS`, `REXBENCH_HELD_BUNDLES`).
    pub guard: crate::guard::Limits,
    /// `REXBENCH_REPRODUCTION_TRIES`, default 3: re-runs of a sampled run that may end
    /// `infra_error` before it counts as not reproduced (spec §4d).
    pub reproduction_tries: u32,
    /// `REXBENCH_SAMPLE_SHARE`, `REXBENCH_SAMPLE_PROBABILITY` and `REXBENCH_SAMPLE_CAP`
    /// (0.2, 0.9 and 30): how many successes a submission's sample takes (spec §4e).
    pub sample_rule: bundle::sample::Rule,
    /// `REXBENCH_PUBLIC_URL`, default `http://REXBENCH_ADDR` (a wildcard address as
    /// 127.0.0.1): where readers reach the site, for the feed's absolute ids and links.
    pub public_url: String,
}

/// A setting that parses but does not hold.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("DATABASE_URL")]
    Database(#[from] BackendError),
}

impl TryFrom<Settings> for Config {
    type Error = ConfigError;

    fn try_from(s: Settings) -> Result<Config, ConfigError> {
        let public_url = s.public_url.clone().unwrap_or_else(|| {
            let mut addr = s.addr;
            if addr.ip().is_unspecified() {
                addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
            }
            format!("http://{addr}")
        });
        Ok(Config {
            public_url,
            addr: s.addr,
            backend: Backend::from_url(&s.database)?,
            blobs: BlobLocation::parse(&s.blobs, &s.staging),
            tasks_dir: s.tasks.filter(|d| !d.is_empty()).map(PathBuf::from),
            limits: bundle::Limits::default(),
            admin_token: s.admin_token.filter(|t| !t.is_empty()),
            render_cache: s.render_cache,
            warm: s.warm,
            guard: crate::guard::Limits {
                per_address_hourly: s.submissions_per_hour,
                per_key_hourly: s.key_submissions_per_hour,
                per_address_concurrent: s.concurrent_uploads_per_address,
                concurrent_ingests: s.concurrent_ingests,
                body_idle: Duration::from_secs(s.body_idle_secs),
                body_total: Duration::from_secs(s.body_secs),
                body_min_rate: s.body_min_bytes_per_sec,
                body_rate_window: Duration::from_secs(s.body_rate_window_secs),
                headers: Duration::from_secs(s.header_secs),
                trust_forwarded: s.trust_forwarded,
                key_requests: store::RequestLimits {
                    per_address_per_day: s.key_requests_per_day,
                    pending: s.pending_key_requests,
                    held_per_key: s.held_bundles,
                },
            },
            reproduction_tries: s.reproduction_tries,
            sample_rule: bundle::sample::Rule {
                share: s.sample_share,
                probability: s.sample_probability,
                cap: s.sample_cap,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    #[derive(Debug, Parser)]
    struct Only {
        #[command(flatten)]
        settings: Settings,
    }

    /// The settings from these flags alone: each setting's variable is taken out of
    /// the picture by giving its flag.
    fn parse(flags: &[&str]) -> Result<Config, String> {
        let only = Only::try_parse_from(std::iter::once("rexbench-server").chain(flags.iter().copied()))
            .map_err(|e| e.to_string())?;
        Config::try_from(only.settings).map_err(|e| format!("{:#}", anyhow::Error::from(e)))
    }

    #[test]
    fn each_setting_reads_its_variable_and_defaults_as_the_guard_does() {
        let command = Only::command();
        let args: Vec<&clap::Arg> = command.get_arguments().filter(|a| a.get_id() != "help").collect();
        let env = |id: &str| {
            let arg = args.iter().find(|a| a.get_id() == id).unwrap_or_else(|| panic!("no setting {id}"));
            let default = arg.get_default_values().first().map(|v| v.to_string_lossy().into_owned());
            (arg.get_env().map(|e| e.to_string_lossy().into_owned()), default)
        };
        assert_eq!(env("addr"), (Some("REXBENCH_ADDR".into()), Some("127.0.0.1:3000".into())));
        assert_eq!(env("database"), (Some("DATABASE_URL".into()), Some("sqlite://data/rexbench.db".into())));
        assert_eq!(env("blobs"), (Some("REXBENCH_BLOBS".into()), Some("data/blobs".into())));
        assert_eq!(env("staging"), (Some("REXBENCH_STAGING".into()), Some("data/staging".into())));
        assert_eq!(env("tasks"), (Some("REXBENCH_TASKS".into()), None));
        assert_eq!(env("admin_token"), (Some("REXBENCH_ADMIN_TOKEN".into()), None));
        // The guard's defaults are the ones it documents.
        let d = crate::guard::Limits::default();
        for (id, var, value) in [
            ("submissions_per_hour", "REXBENCH_SUBMISSIONS_PER_HOUR", d.per_address_hourly.to_string()),
            ("key_submissions_per_hour", "REXBENCH_KEY_SUBMISSIONS_PER_HOUR", d.per_key_hourly.to_string()),
            (
                "concurrent_uploads_per_address",
                "REXBENCH_CONCURRENT_UPLOADS_PER_ADDRESS",
                d.per_address_concurrent.to_string(),
            ),
            ("concurrent_ingests", "REXBENCH_CONCURRENT_INGESTS", d.concurrent_ingests.to_string()),
            ("body_idle_secs", "REXBENCH_BODY_IDLE_SECS", d.body_idle.as_secs().to_string()),
            ("body_secs", "REXBENCH_BODY_SECS", d.body_total.as_secs().to_string()),
            ("body_min_bytes_per_sec", "REXBENCH_BODY_MIN_BYTES_PER_SEC", d.body_min_rate.to_string()),
            (
                "body_rate_window_secs",
                "REXBENCH_BODY_RATE_WINDOW_SECS",
                d.body_rate_window.as_secs().to_string(),
            ),
            ("header_secs", "REXBENCH_HEADER_SECS", d.headers.as_secs().to_string()),
        ] {
            assert_eq!(env(id), (Some(var.into()), Some(value)), "{id}");
        }
        assert_eq!(env("trust_forwarded").0.as_deref(), Some("REXBENCH_TRUST_FORWARDED"));
        assert_eq!(env("render_cache").0.as_deref(), Some("REXBENCH_RENDER_CACHE"));
        assert_eq!(env("warm").0.as_deref(), Some("REXBENCH_WARM"));
        assert_eq!(
            env("reproduction_tries"),
            (Some("REXBENCH_REPRODUCTION_TRIES".into()), Some(store::REPRODUCTION_TRIES.to_string()))
        );
        let rule = bundle::sample::Rule::DEFAULT;
        for (id, var, value) in [
            ("sample_share", "REXBENCH_SAMPLE_SHARE", rule.share.to_string()),
            ("sample_probability", "REXBENCH_SAMPLE_PROBABILITY", rule.probability.to_string()),
            ("sample_cap", "REXBENCH_SAMPLE_CAP", rule.cap.to_string()),
        ] {
            assert_eq!(env(id), (Some(var.into()), Some(value)), "{id}");
        }
        assert_eq!(env("public_url").0.as_deref(), Some("REXBENCH_PUBLIC_URL"));
        let requests = store::RequestLimits::default();
        for (id, var, value) in [
            (
                "key_requests_per_day",
                "REXBENCH_KEY_REQUESTS_PER_DAY",
                requests.per_address_per_day.to_string(),
            ),
            ("pending_key_requests", "REXBENCH_PENDING_KEY_REQUESTS", requests.pending.to_string()),
            ("held_bundles", "REXBENCH_HELD_BUNDLES", requests.held_per_key.to_string()),
        ] {
            assert_eq!(env(id), (Some(var.into()), Some(value)), "{id}");
        }
        assert_eq!(args.len(), 26, "every setting is checked above");
    }

    #[test]
    fn values_read_and_refusals_name_the_setting() {
        let c =
            parse(&["--addr", "0.0.0.0:8080", "--blobs", "s3://results/blobs", "--staging", "st"]).unwrap();
        assert_eq!(c.addr.port(), 8080);
        assert_eq!(c.blobs, BlobLocation::S3 { url: "s3://results/blobs".into(), staging: "st".into() });
        let c = parse(&[
            "--body-idle-secs",
            "3",
            "--render-cache",
            "off",
            "--trust-forwarded",
            "1",
            "--warm",
            "off",
        ])
        .unwrap();
        assert_eq!(c.guard.body_idle, Duration::from_secs(3));
        assert!(!c.render_cache && c.guard.trust_forwarded && !c.warm);
        let c = parse(&[
            "--concurrent-uploads-per-address",
            "5",
            "--body-min-bytes-per-sec",
            "0",
            "--body-rate-window-secs",
            "3",
        ])
        .unwrap();
        let g = c.guard;
        assert_eq!(
            (g.per_address_concurrent, g.body_min_rate, g.body_rate_window),
            (5, 0, Duration::from_secs(3))
        );
        let c = parse(&["--render-cache", "yes", "--trust-forwarded", "no"]).unwrap();
        assert!(c.render_cache && !c.guard.trust_forwarded && c.warm);
        assert_eq!(c.tasks_dir, None, "the built-in cards");
        assert_eq!(parse(&["--tasks", "cards"]).unwrap().tasks_dir, Some(PathBuf::from("cards")));
        // Given as nothing (as a variable set to nothing is), an optional setting is unset.
        let c = parse(&["--tasks", "--admin-token", "--render-cache", "--trust-forwarded"]).unwrap();
        assert_eq!(
            (c.tasks_dir, c.admin_token, c.render_cache, c.guard.trust_forwarded),
            (None, None, true, false)
        );
        let said = |flags: &[&str]| parse(flags).unwrap_err();
        let e = said(&["--addr", "localhost"]);
        assert!(
            e.contains("REXBENCH_ADDR") && e.contains("`localhost` is not an address like 127.0.0.1:3000"),
            "{e}"
        );
        let e = said(&["--concurrent-ingests", "many"]);
        assert!(
            e.contains("REXBENCH_CONCURRENT_INGESTS") && e.contains("`many` is not a whole number"),
            "{e}"
        );
        assert_eq!(parse(&["--reproduction-tries", "5"]).unwrap().reproduction_tries, 5);
        let c =
            parse(&["--sample-share", "0.1", "--sample-probability", "0.95", "--sample-cap", "12"]).unwrap();
        assert_eq!(c.sample_rule, bundle::sample::Rule { share: 0.1, probability: 0.95, cap: 12 });
        assert_eq!(parse(&[]).unwrap().sample_rule, bundle::sample::Rule::DEFAULT);
        for (flag, value, var, words) in [
            ("--sample-share", "0", "REXBENCH_SAMPLE_SHARE", "above 0 and at most 1"),
            ("--sample-share", "1.5", "REXBENCH_SAMPLE_SHARE", "above 0 and at most 1"),
            ("--sample-share", "a fifth", "REXBENCH_SAMPLE_SHARE", "is not a number"),
            ("--sample-probability", "1", "REXBENCH_SAMPLE_PROBABILITY", "above 0 and below 1"),
            ("--sample-probability", "NaN", "REXBENCH_SAMPLE_PROBABILITY", "is not a number"),
            ("--sample-cap", "0", "REXBENCH_SAMPLE_CAP", "give 1 or more"),
        ] {
            let e = said(&[flag, value]);
            assert!(e.contains(var) && e.contains(words), "{flag} {value}: {e}");
        }
        let e = said(&["--reproduction-tries", "0"]);
        assert!(e.contains("REXBENCH_REPRODUCTION_TRIES") && e.contains("give 1 or more"), "{e}");
        let e = said(&["--database-url", "redis://x"]);
        assert!(e.starts_with("DATABASE_URL: database URL `redis://x` names no supported database"), "{e}");
        // A password in a URL that does not hold is never repeated.
        let e = said(&["--database-url", "mysql://root:hunter2@db/x"]);
        assert!(!e.contains("hunter2"), "{e}");
    }
}
