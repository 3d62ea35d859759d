use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    server::cli::main().await
}
