//! `rexbench-server` subcommands: serve, and the admin commands that work on the
//! database directly.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use crate::Config;

mod commands;

#[derive(Debug, Parser)]
#[command(name = "rexbench-server", version, about = "The RExBench leaderboard server.")]
struct Cli {
    #[command(flatten)]
    settings: crate::config::Settings,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the leaderboard (REXBENCH_ADDR, default 127.0.0.1:3000).
    Serve {
        /// On an empty database, first load the demo data: the paper's published
        /// results and the example tasks evaluated by the runner.
        #[arg(long)]
        demo: bool,
    },
    /// Apply the database migrations. `serve` applies them too, at start-up.
    Migrate,
    /// Copy the database and every blob into DEST, a new directory, while the server
    /// serves (SQLite's own consistent copy, or pg_dump's).
    Backup { dest: PathBuf },
    /// Put a backup back: its blobs into the blob store, then its database into
    /// DATABASE_URL, which must hold no table yet.
    Restore { src: PathBuf },
    /// Exit 0 if the server at REXBENCH_ADDR answers /readyz (the container's health check).
    Health,
    /// Print the site's pages as the router routes them, one path a line (`{id}` where a
    /// page takes a value), for the crawl of `scripts/same-answers` and the browser tests,
    /// which cover every one.
    Pages,
    /// Manage the keys that may submit.
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// The task sets bundles may name beside those the cards give: list them, or register
    /// one (the change log records each registration).
    TaskSets {
        #[command(subcommand)]
        command: TaskSetsCommand,
    },
    /// The held-out variants sampled successes are re-run on (spec §4l): list them, or
    /// register one by its digest (`rexbench variants --gold DIR` prints them).
    Variants {
        #[command(subcommand)]
        command: VariantsCommand,
    },
    /// Review integrity findings: list them, confirm or dismiss one.
    Findings {
        #[command(subcommand)]
        command: FindingsCommand,
    },
    /// Who may read each task's runs' outputs: list, publish them, or make them private
    /// again (the change log records each change).
    Outputs {
        #[command(subcommand)]
        command: OutputsCommand,
    },
    /// Print a one-time link that signs a browser in (for ten minutes' use; its page's
    /// button signs in for twelve hours, a maintainer for one): as a maintainer, who reads
    /// every private output, or as the key `--as` names (its submitter's outputs; a
    /// maintainer key's: all).
    SignInLink {
        /// A registered key's id.
        #[arg(long = "as")]
        keyid: Option<String>,
        /// The server's address as a browser reaches it [default: http://REXBENCH_ADDR].
        #[arg(long)]
        base: Option<String>,
        /// How long the link may be opened, in minutes (1 to 1440).
        #[arg(long, default_value_t = crate::auth::LINK_MINUTES, value_parser = clap::value_parser!(i64).range(1..=1440))]
        valid_for: i64,
    },
    /// The reproduction queue: the sampled runs of self-reported submissions that the
    /// maintainers have not re-run yet (every sampled run with --all), and what the
    /// reproductions so far took.
    Reproductions {
        #[arg(long)]
        all: bool,
    },
    /// The sampling epochs: each key's commitment, and the key once revealed; --reveal
    /// ends the current epoch (its key is published) and begins the next.
    Sampling {
        #[arg(long)]
        reveal: bool,
    },
    /// The open sign-in sessions (tokens, links, browsers), or end them at once.
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// Every read of private content, newest first: who, which run or artifact, when.
    AccessLog {
        #[arg(long, default_value_t = 100)]
        limit: i64,
    },
    /// Verify and ingest bundle files, as the API would.
    Import {
        #[arg(required = true)]
        bundles: Vec<PathBuf>,
    },
    /// Make and ingest synthetic results (for benchmarks): AGENTS agents × 12 tasks ×
    /// 3 hint conditions × 5 runs, with patches and logs, signed by a new maintainer key.
    Synth {
        #[arg(long, default_value_t = 1000)]
        agents: usize,
        /// The same seed gives the same results.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Bundles recorded in one transaction: one commit and one flush of the blobs
        /// for all of them. 1 records each on its own, as the API does; the rows are the
        /// same.
        #[arg(long, default_value_t = 16)]
        together: usize,
        /// A bulk load: no ingest is flushed to disk on its own, everything once at the
        /// end (a crash meanwhile may lose the load: run it again). The rows are the same.
        #[arg(long)]
        bulk: bool,
    },
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Register a public key (SubjectPublicKeyInfo PEM).
    Add {
        #[arg(long)]
        public_key: PathBuf,
        #[arg(long)]
        owner: String,
        /// maintainer (shown as verified) or submitter (self-reported).
        #[arg(long)]
        tier: store::Tier,
    },
    List,
    /// Revoke a key: from now on it verifies nothing.
    Revoke {
        keyid: String,
    },
}

#[derive(Debug, Subcommand)]
enum TaskSetsCommand {
    /// Every task set a bundle may name: the cards' own, then those registered.
    List,
    /// Register a task set: results that name its digest, benchmark name and version are
    /// taken from now on (they rank apart from every other set's).
    Add {
        /// Its digest (64 hex digits), as results name it in `benchmark.task_set_digest`.
        #[arg(long)]
        digest: String,
        /// The benchmark's name results give it (e.g. "RExBench").
        #[arg(long)]
        name: String,
        #[arg(long)]
        version: String,
        /// Why: what the set is (the change log shows it).
        #[arg(long)]
        note: String,
    },
}

#[derive(Debug, Subcommand)]
enum VariantsCommand {
    /// Every registered variant: its task, digest, when and why.
    List,
    /// Register a held-out variant of a task: sampled successes of submissions that
    /// arrive from now on may be re-run on it (the change log says when).
    Add {
        #[arg(long)]
        task: String,
        /// Its digest (64 hex digits), as `rexbench variants --gold DIR` prints it.
        #[arg(long)]
        digest: String,
        /// Why, in words the change log shows (never the variant's contents).
        #[arg(long)]
        note: String,
    },
    /// Retire a variant: it is chosen for no submission from now on (one whose contents
    /// may have leaked, or that has served long enough); the change log says when.
    Retire {
        #[arg(long)]
        task: String,
        #[arg(long)]
        digest: String,
        #[arg(long)]
        note: String,
    },
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// Every open session: its id (never its secret), kind, who, and when it ends.
    List,
    /// End sessions now, and every session made from them: those whose ids are given,
    /// every maintainer's (--maintainers), or every one (--all).
    Revoke {
        /// Ids as `sessions list` shows them (at least 8 hex digits).
        #[arg(required_unless_present_any = ["all", "maintainers"], conflicts_with_all = ["all", "maintainers"])]
        ids: Vec<String>,
        #[arg(long, conflicts_with = "maintainers")]
        all: bool,
        #[arg(long)]
        maintainers: bool,
    },
}

#[derive(Debug, Subcommand)]
enum FindingsCommand {
    /// Findings about current successes that no maintainer has reviewed (all with --all).
    List {
        #[arg(long)]
        all: bool,
        #[arg(long, default_value_t = 100)]
        limit: i64,
    },
    /// The evidence holds: the success is not earned (the strict view counts it as a failure).
    Confirm {
        /// The finding's id, as runs list it (`1234-server-0`).
        id: store::FindingId,
        /// Why, as the run page and the change log show it.
        #[arg(long)]
        note: String,
    },
    /// The evidence does not hold: the finding no longer flags its run.
    Dismiss {
        id: store::FindingId,
        #[arg(long)]
        note: String,
    },
}

#[derive(Debug, Subcommand)]
enum OutputsCommand {
    /// Each task's outputs: as its card says, and as they are now.
    List,
    /// Anyone may read the task's runs' patches, logs and trajectories.
    Publish {
        task: String,
        /// Why, as the change log shows it.
        #[arg(long)]
        reason: String,
    },
    /// Only the bundles' submitters and the maintainers may read them.
    Unpublish {
        task: String,
        #[arg(long)]
        reason: String,
    },
}

pub async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match run(cli.command, cli.settings).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rexbench-server: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(command: Command, settings: crate::Settings) -> anyhow::Result<ExitCode> {
    let config = Config::try_from(settings)?;
    // These work on the data as it is, without opening (and migrating) it first.
    match &command {
        Command::Backup { dest } => {
            let m = crate::backup::backup(&config, dest).await?;
            println!(
                "backed up {} (schema {}) and {} blobs ({} bytes) into {}",
                config.backend,
                m.schema_version,
                m.blobs,
                m.blob_bytes,
                dest.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        Command::Restore { src } => {
            let m = crate::backup::restore(&config, src).await?;
            println!(
                "restored {} blobs and the database of {} into {} and {}",
                m.blobs, m.created_at, config.backend, config.blobs
            );
            return Ok(ExitCode::SUCCESS);
        }
        Command::Health => return Ok(health(&config)),
        Command::Pages => {
            for path in crate::router::page_paths() {
                println!("{path}");
            }
            return Ok(ExitCode::SUCCESS);
        }
        _ => {}
    }
    let state = crate::open_state(&config).await?;
    match command {
        Command::Serve { demo } => commands::serve(config, state, demo).await,
        Command::Migrate => {
            println!("migrated {}", config.backend);
            Ok(ExitCode::SUCCESS)
        }
        Command::Reproductions { all } => commands::reproductions(&state, all).await,
        Command::Sampling { reveal } => commands::sampling(&state, reveal).await,
        Command::Backup { .. } | Command::Restore { .. } | Command::Health | Command::Pages => {
            unreachable!("handled above")
        }
        Command::Keys { command } => commands::keys(&state, command).await,
        Command::TaskSets { command } => commands::task_sets(&state, command).await,
        Command::Variants { command } => commands::variants(&state, command).await,
        Command::Findings { command } => commands::findings(&state, command).await,
        Command::Outputs { command } => commands::outputs(&state, command).await,
        Command::SignInLink { keyid, base, valid_for } => {
            commands::sign_in_link(&state, keyid, base.unwrap_or_else(|| base_url(&config)), valid_for).await
        }
        Command::Sessions { command } => commands::sessions(&state, command).await,
        Command::AccessLog { limit } => commands::access_log(&state, limit).await,
        Command::Synth { agents, seed, together, bulk } => {
            if bulk {
                state.store.bulk_load();
            }
            let stored = crate::synth::synth(&state, agents, seed, together).await?;
            if bulk {
                state.store.flush().await?;
            }
            println!("stored {stored} synthetic bundles");
            Ok(ExitCode::SUCCESS)
        }
        Command::Import { bundles } => commands::import(&state, bundles).await,
    }
}

/// Where a browser on this machine reaches the server: `http://REXBENCH_ADDR`, with a
/// wildcard address as 127.0.0.1.
fn base_url(config: &Config) -> String {
    let mut addr = config.addr;
    if addr.ip().is_unspecified() {
        addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    format!("http://{addr}")
}

/// Asks the server on REXBENCH_ADDR (on this machine, whatever address it listens on)
/// whether it is ready.
fn health(config: &Config) -> ExitCode {
    let mut addr = config.addr;
    if addr.ip().is_unspecified() {
        addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(5)))
        .http_status_as_error(false)
        .build()
        .into();
    match agent.get(&format!("http://{addr}/readyz")).call() {
        Ok(answer) if answer.status() == 200 => ExitCode::SUCCESS,
        Ok(answer) => {
            eprintln!("rexbench-server: http://{addr}/readyz answered {}", answer.status());
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("rexbench-server: http://{addr}/readyz: {e}");
            ExitCode::from(1)
        }
    }
}
