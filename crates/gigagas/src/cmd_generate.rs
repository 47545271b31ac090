//! `gigagas generate`: a dump from a synthetic workload (logic in `gigagas-workload`).

use crate::{
    cli::{Command, parse_fork},
    terminal::{progress_bar, written},
};
use alloy_hardforks::EthereumHardfork;
use anyhow::Result;
use gigagas_workload::{GeneratorConfig, Profile};
use std::{path::PathBuf, time::Instant};

/// Arguments of `gigagas generate`.
#[derive(clap::Args)]
pub(crate) struct GenerateArgs {
    /// Workload profile: mainnet-like, transfers, erc20, amm, heavy-tail, adversarial.
    #[arg(long, default_value = "mainnet-like")]
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
}

impl Command for GenerateArgs {
    fn execute(self) -> Result<()> {
        let config = GeneratorConfig {
            profile: self.profile,
            blocks: self.blocks,
            gas_per_block: self.gas_per_block,
            seed: self.seed,
            fork: self.fork,
            users: self.users,
        };
        let bar = progress_bar(self.blocks, "generating");
        let start = Instant::now();
        let dump = gigagas_workload::generate(&config, |done, _| bar.set_position(done))?;
        bar.finish_and_clear();
        let info = gigagas_dump::write_dump(&dump, &self.output)?;
        eprintln!("{}", written(&self.output, &dump, &info, start));
        Ok(())
    }
}
