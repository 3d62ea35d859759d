//! `rexbench-server` subcommands.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use crate::Config;

#[derive(Debug, Parser)]
#[command(name = "rexbench-server", version, about = "The RExBench leaderboard server.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the leaderboard (REXBENCH_ADDR, default 127.0.0.1:3000).
    Serve,
}

pub async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let cli = Cli::parse();
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rexbench-server: {e}");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Command::Serve => match crate::serve(config).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("rexbench-server: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
