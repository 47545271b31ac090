//! `gigagas`: the command-line shell over the gigagas crates.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
