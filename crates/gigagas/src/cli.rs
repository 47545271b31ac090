//! Command-line parsing and dispatch. Logic lives in the library crates.

use alloy_hardforks::EthereumHardfork;
use anyhow::{Result, bail};
use clap::{Parser, Subcommand};
use gigagas_workload::{GeneratorConfig, Profile};
use indicatif::{ProgressBar, ProgressStyle};
use std::{path::PathBuf, process::ExitCode, time::Instant};

/// Where the embedded default dump lives in a checkout.
pub const DEFAULT_DUMP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../dumps/mainnet-like.gigagas");

#[derive(Parser)]
#[command(
    name = "gigagas",
    version,
    about = "How fast can Ethereum blocks execute when a block access list (EIP-7928) tells every \
             transaction its inputs up front?",
    long_about = "gigagas replays blocks from a self-contained dump on revm. Every transaction runs on \
                  its own view of state (the pre-state overlaid with the block access list's writes \
                  from earlier transactions), so all transactions run in parallel with no speculation \
                  and no re-execution. Every replay is verified against the receipts and the access \
                  lists; a wrong execution never produces a number.\n\n\
                  Start with:  gigagas run            (the default benchmark on the embedded dump)\n\
                  then:        gigagas inspect DUMP   (what is in a dump)\n\
                  and:         gigagas generate -h    (make your own workloads)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Make a dump by executing a synthetic workload from a fresh genesis.
    ///
    /// Deterministic: the same profile, seed, block count, gas and fork give a
    /// byte-identical file. The embedded default dump is
    /// `gigagas generate --profile mainnet-like --blocks 100 --seed 1 -o dumps/mainnet-like.gigagas`.
    Generate {
        /// Workload profile: mainnet-like, transfers, erc20, amm, heavy-tail, adversarial.
        #[arg(long, default_value = "mainnet-like", value_parser = parse_profile)]
        profile: Profile,
        /// Number of blocks.
        #[arg(long, default_value_t = 100)]
        blocks: u64,
        /// Gas target per block.
        #[arg(long, default_value_t = 25_000_000)]
        gas_per_block: u64,
        /// Seed of the random choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Fork rules: cancun, prague or osaka.
        #[arg(long, default_value = "prague", value_parser = parse_fork)]
        fork: EthereumHardfork,
        /// Number of funded accounts that send transactions.
        #[arg(long, default_value_t = 4_000)]
        users: usize,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Print a summary of a dump: blocks, transactions, gas, pre-state and BAL sizes.
    Inspect {
        /// The dump file (default: the embedded mainnet-like dump).
        dump: Option<PathBuf>,
    },
}

fn parse_profile(s: &str) -> Result<Profile, String> {
    s.parse()
}

fn parse_fork(s: &str) -> Result<EthereumHardfork, String> {
    match s.to_ascii_lowercase().as_str() {
        "cancun" => Ok(EthereumHardfork::Cancun),
        "prague" => Ok(EthereumHardfork::Prague),
        "osaka" => Ok(EthereumHardfork::Osaka),
        _ => Err(format!("unsupported fork `{s}` (expected cancun, prague or osaka)")),
    }
}

/// Entry point: run the command, print one error line on failure.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{what} {{bar:40}} {{pos}}/{{len}} [{{elapsed_precise}} < {{eta_precise}}] {{msg}}"
        ))
        .expect("valid template"),
    );
    bar
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Generate { profile, blocks, gas_per_block, seed, fork, users, output } => {
            let config = GeneratorConfig { profile, blocks, gas_per_block, seed, fork, users };
            let bar = progress(blocks, "generating");
            let start = Instant::now();
            let dump = gigagas_workload::generate(&config, |done, _| bar.set_position(done))?;
            bar.finish_and_clear();
            let info = gigagas_dump::write_dump(&dump, &output)?;
            eprintln!(
                "wrote {} ({} blocks, {} txs, {:.3} Ggas, {:.1} MB, checksum {}) in {:.1} s",
                output.display(),
                dump.blocks.len(),
                dump.transaction_count(),
                dump.total_gas() as f64 / 1e9,
                info.size as f64 / 1e6,
                info.checksum_hex(),
                start.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Command::Inspect { dump } => {
            let path = dump.unwrap_or_else(|| PathBuf::from(DEFAULT_DUMP));
            if !path.exists() {
                bail!("{}: no such file", path.display());
            }
            let (dump, info) = gigagas_dump::read_dump(&path)?;
            println!("file              {} ({:.2} MB, checksum {})", path.display(), info.size as f64 / 1e6, info.checksum_hex());
            println!("{}", dump.summary());
            Ok(())
        }
    }
}
