//! `rexbench-server` subcommands: serve, and the admin commands that work on the
//! database directly.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use crate::Config;

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
    /// Manage the keys that may submit.
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
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
        #[arg(long, default_value_t = crate::session::LINK_MINUTES, value_parser = clap::value_parser!(i64).range(1..=1440))]
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
        _ => {}
    }
    let state = crate::open_state(&config).await?;
    match command {
        Command::Serve { demo } => {
            if demo {
                match crate::seed_demo(&state).await? {
                    Some(s) => {
                        tracing::info!(published = s.published, evaluated = s.evaluated, "demo data loaded")
                    }
                    None => tracing::info!("the database holds submissions already: no demo data added"),
                }
                // The demo's csvstats outputs are private: how to read them as their submitter.
                if let Some(key) = state
                    .store
                    .keys()
                    .await?
                    .into_iter()
                    .find(|k| k.owner == crate::demo::SUBMITTER && k.revoked_at.is_none())
                {
                    let minutes = crate::session::LINK_MINUTES;
                    let link = crate::session::link(&state, Some(&key.keyid), false, minutes).await?;
                    println!(
                        "The demo's csvstats outputs are private, as RExBench's are. To read them as their submitter \
                         ({}), open within ten minutes, once:\n  {}{link}\nFor another link: rexbench-server \
                         sign-in-link --as {}",
                        key.owner,
                        base_url(&config),
                        key.keyid
                    );
                }
            }
            // The sampling key's commitment is public before any bundle is sampled.
            state.store.begin_sampling().await?;
            crate::serve(config, state).await?;
        }
        Command::Migrate => println!("migrated {}", config.backend),
        Command::Reproductions { all } => {
            let runs = state.store.reproduction_queue(!all).await?;
            let (done, hours, gpu_hours) = state.store.reproduction_hours().await?;
            if runs.is_empty() {
                println!(
                    "{}",
                    if all { "no run has been sampled" } else { "no sampled run waits for a re-run" }
                );
            }
            for r in &runs {
                let status = match (r.reproduced, r.held) {
                    (Some(o), Some(true)) => format!("reproduced: {o}, held"),
                    (Some(o), _) => format!("reproduced: {o}, DIFFERENT"),
                    (None, _) => "waiting".to_owned(),
                };
                println!(
                    "run {:>6}  {}/{}/{}  {} (submitted {}, {})  bundle {}{}  epoch {}  {status}",
                    r.run_id,
                    r.task,
                    r.hint,
                    r.attempt,
                    r.agent_id,
                    r.outcome,
                    r.duration_s.map_or_else(|| "no duration".to_owned(), |d| format!("{d:.0} s")),
                    r.bundle_id,
                    if r.superseded { " (superseded)" } else { "" },
                    r.epoch
                );
            }
            println!("{done} runs reproduced so far: {hours:.2} hours, {gpu_hours:.2} of them GPU hours");
        }
        Command::Sampling { reveal } => {
            if reveal {
                let (old, new) = state.store.reveal_sampling_key().await?;
                println!(
                    "revealed epoch {}'s key {} (commitment {}); epoch {} begins, commitment {}",
                    old.epoch,
                    old.key.unwrap_or_default(),
                    old.commitment,
                    new.epoch,
                    new.commitment
                );
                crate::ingest::refresh_pages(&state).await;
            } else {
                state.store.begin_sampling().await?;
                for e in state.store.sampling_epochs().await? {
                    println!(
                        "epoch {}  since {}  commitment {}  {}",
                        e.epoch,
                        e.committed_at,
                        e.commitment,
                        match (&e.key, &e.revealed_at) {
                            (Some(k), Some(at)) => format!("key {k} (revealed {at})"),
                            _ => "key secret (current)".to_owned(),
                        }
                    );
                }
            }
        }
        Command::Backup { .. } | Command::Restore { .. } | Command::Health => unreachable!("handled above"),
        Command::Keys { command: KeysCommand::Add { public_key, owner, tier } } => {
            let pem =
                std::fs::read_to_string(&public_key).with_context(|| public_key.display().to_string())?;
            let key = bundle::PublicKey::from_pem(&pem).with_context(|| public_key.display().to_string())?;
            let rec = state.store.add_key(&key, &owner, tier).await?;
            println!("added {} ({}, {})", rec.keyid, rec.owner, rec.tier);
        }
        Command::Keys { command: KeysCommand::List } => {
            for k in state.store.keys().await? {
                let status =
                    k.revoked_at.map(|at| format!("revoked {at}")).unwrap_or_else(|| "active".into());
                println!("{}  {:<10}  {:<24}  added {}  {status}", k.keyid, k.tier, k.owner, k.added_at);
            }
        }
        Command::Keys { command: KeysCommand::Revoke { keyid } } => {
            let k = state.store.revoke_key(&keyid).await?;
            println!("revoked {} ({}) at {}", k.keyid, k.owner, k.revoked_at.unwrap_or_default());
        }
        Command::Findings { command: FindingsCommand::List { all, limit } } => {
            let filter = if all { store::FindingsFilter::All } else { store::FindingsFilter::Pending };
            for f in state.store.findings(filter, limit.clamp(1, 100_000)).await? {
                let review = f
                    .finding
                    .review
                    .map_or_else(|| "not reviewed".to_owned(), |r| format!("{}: {}", r.verdict, r.note));
                println!(
                    "{}  run {} ({} on {}, {}, attempt {}: {})  {}  {}  [{}]",
                    f.finding.id,
                    f.run_id,
                    f.agent_name,
                    f.task,
                    f.hint,
                    f.attempt,
                    f.outcome,
                    f.finding.check,
                    f.finding.message,
                    review
                );
            }
        }
        Command::Findings { command: FindingsCommand::Confirm { id, note } } => {
            review(&state, id, store::Review::Confirmed, &note).await?;
        }
        Command::Findings { command: FindingsCommand::Dismiss { id, note } } => {
            review(&state, id, store::Review::Dismissed, &note).await?;
        }
        Command::Outputs { command: OutputsCommand::List } => {
            for t in crate::outputs::list(&state).await.map_err(anyhow::Error::new)? {
                let changed = if t.card == t.outputs { "" } else { "  (changed by a maintainer)" };
                println!("{:<28}  {:<7}  card: {}{changed}", t.task, t.outputs, t.card);
            }
        }
        Command::Outputs { command: OutputsCommand::Publish { task, reason } } => {
            set_outputs(&state, &task, store::Outputs::Public, &reason).await?;
        }
        Command::Outputs { command: OutputsCommand::Unpublish { task, reason } } => {
            set_outputs(&state, &task, store::Outputs::Private, &reason).await?;
        }
        Command::SignInLink { keyid, base, valid_for } => {
            let base = base.unwrap_or_else(|| base_url(&config));
            let link = match keyid {
                None => crate::session::link(&state, None, true, valid_for).await?,
                Some(keyid) => {
                    let key = state.store.key(&keyid).await?;
                    anyhow::ensure!(key.revoked_at.is_none(), "key {keyid} was revoked");
                    let maintainer = key.tier == store::Tier::Maintainer;
                    crate::session::link(&state, Some(&key.keyid), maintainer, valid_for).await?
                }
            };
            println!("{}{link}", base.trim_end_matches('/'));
        }
        Command::Sessions { command: SessionsCommand::List } => {
            let now = time::OffsetDateTime::now_utc().unix_timestamp();
            let open = state.store.open_sessions(now).await?;
            for o in &open {
                let who = match (&o.keyid, &o.owner) {
                    (Some(k), Some(owner)) => format!("key {k} ({owner})"),
                    (Some(k), None) => format!("key {k}"),
                    (None, _) => "a maintainer's sign-in link".to_owned(),
                };
                let reads = if o.maintainer { "maintainer" } else { "submitter" };
                println!(
                    "{}  {:<7} {:<10} ends in {:>5} min  {who}",
                    o.id,
                    o.kind.as_str(),
                    reads,
                    (o.expires_at - now + 59) / 60
                );
            }
            println!("{} open session(s)", open.len());
        }
        Command::Sessions { command: SessionsCommand::Revoke { ids, all, maintainers } } => {
            let which = if all {
                store::Revoke::All
            } else if maintainers {
                store::Revoke::Maintainers
            } else {
                store::Revoke::Ids(ids)
            };
            let now = time::OffsetDateTime::now_utc().unix_timestamp();
            let ended = state.store.revoke_sessions(&which, now).await?;
            println!("ended {ended} session(s), and every session made from them");
        }
        Command::AccessLog { limit } => {
            for e in state.store.access_log(limit.clamp(1, 100_000), None).await? {
                let what = match (e.run_id, &e.digest) {
                    (Some(run), _) => format!("run {run}"),
                    (None, Some(d)) => format!("artifact {d}"),
                    (None, None) => "–".to_owned(),
                };
                println!("{}  {:<5} {:<8} {what:<74} {}", e.seq, e.via, e.at, e.reader);
            }
        }
        Command::Synth { agents, seed } => {
            let stored = crate::synth::synth(&state, agents, seed).await?;
            println!("stored {stored} synthetic bundles");
        }
        Command::Import { bundles } => {
            let mut failed = 0;
            for path in bundles {
                match crate::demo::ingest_file(&state, &path).await {
                    Ok(r) => {
                        println!("{}: {}", path.display(), serde_json::to_string(&r).expect("serializes"))
                    }
                    Err(e) => {
                        eprintln!("{e:#}");
                        failed += 1;
                    }
                }
            }
            if failed > 0 {
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
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

async fn set_outputs(
    state: &crate::AppState,
    task: &str,
    outputs: store::Outputs,
    reason: &str,
) -> anyhow::Result<()> {
    let done = crate::outputs::set(state, task, outputs, reason).await.map_err(anyhow::Error::new)?;
    match done.change_seq {
        Some(seq) => println!("the outputs of task {task}'s runs are {outputs} now (change {seq})"),
        None => println!("the outputs of task {task}'s runs were {outputs} already: nothing changed"),
    }
    Ok(())
}

async fn review(
    state: &crate::AppState,
    id: store::FindingId,
    verdict: store::Review,
    note: &str,
) -> anyhow::Result<()> {
    let note = note.trim();
    anyhow::ensure!(
        !note.is_empty() && note.chars().count() <= 1000,
        "--note must be 1 to 1000 characters, not all blank"
    );
    let f = state.store.review_finding(&id, verdict, note).await?;
    println!("{verdict} {} ({}) about run {} of {}", f.finding.id, f.finding.check, f.run_id, f.agent_name);
    Ok(())
}
