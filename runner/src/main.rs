use std::process::ExitCode;

fn main() -> ExitCode {
    runner::cli::main()
}
