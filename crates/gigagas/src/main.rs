//! `gigagas`: the command-line shell over the gigagas crates.

mod cli;
mod cmd_dump;
mod cmd_import;
mod cmd_run;
mod cmd_sweep;

fn main() -> std::process::ExitCode {
    cli::main()
}

// Dev-dependencies used only by the integration tests in `tests/`.
#[cfg(test)]
use tempfile as _;
