//! `gigagas`: the command-line shell over the gigagas crates.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]
// The commands' doc comments are clap's `--help` text, written for a terminal (`<name>`
// placeholders, bare URLs), not as rustdoc markup.
#![allow(rustdoc::invalid_html_tags, rustdoc::bare_urls)]

mod allocator;
mod args;
mod cli;
mod cmd_compare;
mod cmd_dump;
mod cmd_generate;
mod cmd_import;
mod cmd_inspect;
mod cmd_prune_witness;
mod cmd_report;
mod cmd_run;
mod cmd_simulate;
mod cmd_state;
mod cmd_sweep;
mod terminal;

fn main() -> std::process::ExitCode {
    allocator::keep_freed_pages();
    // The setup-free point-evaluation verifier, for the whole process, before any dump is
    // loaded or any precompile runs: every command records and replays on it, and
    // `Replay::new` refuses a dump that calls the precompile without it (else a timed pass
    // would load c-kzg's trusted setup). Nothing can have fixed revm's provider yet.
    let installed = gigagas_chain::install_kzg_verifier();
    assert!(
        installed,
        "the KZG verifier installs before any precompile runs"
    );
    cli::main()
}
