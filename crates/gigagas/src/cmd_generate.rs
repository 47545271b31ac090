//! `gigagas generate`: a dump from a synthetic workload (logic in `gigagas-workload`).

use crate::{
    args::Command,
    terminal::{progress_bar, written},
};
use alloy_hardforks::EthereumHardfork;
use anyhow::Result;
use gigagas_workload::{GeneratorConfig, Profile, TrieSizes, WorkloadContract};
use std::{path::PathBuf, time::Instant};

/// Arguments of `gigagas generate`.
///
/// The dump carries a witness unless --no-witness: every block's header gets the real state
/// root of the generator's whole state after it (else the empty trie's root), and the
/// segment gets the trie nodes that prove every account and slot the blocks touch at the
/// genesis root, deletions' siblings included: what a state-root phase starts from. For
/// the default mainnet-like dump that is about 15 % more file (6.6 MB instead of 5.8 MB:
/// 14,188 nodes, 1.4 MB before compression); the tries are kept and each block's root
/// hashes only the paths it changed (100 erc20 blocks of 30M gas from 50,000 users: about
/// 1.25× the time of --no-witness). --state-size pads the account trie to mainnet's depth,
/// --storage-size the large contracts' storage tries.
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
    #[arg(long, default_value = "prague", value_parser = gigagas_chain::parse_fork)]
    fork: EthereumHardfork,
    /// Number of funded accounts that send transactions.
    #[arg(long, default_value_t = 4_000)]
    users: usize,
    /// Output file.
    #[arg(short, long)]
    output: PathBuf,
    /// No witness, and every header's state root left the empty trie's (the dumps of
    /// builds before witnesses, byte for byte; a run with --state-root refuses it).
    #[arg(long, conflicts_with_all = ["state_size", "storage_size"])]
    no_witness: bool,
    /// Pad the account trie to the depth of a state of this many accounts: ⌊log16 N⌋
    /// levels of full branches above every touched path, their untouched children hashes
    /// of virtual subtries (7 levels at mainnet's 300,000,000, the value when the flag is
    /// given alone; at least 16). The headers' roots and the witness are the padded
    /// trie's. Off without the flag: the trie holds the generated accounts only.
    #[arg(long, value_name = "ACCOUNTS", num_args = 0..=1)]
    #[arg(default_missing_value = "300000000")]
    state_size: Option<u64>,
    /// Pad contracts' storage tries to the depth of one of this many slots: ⌊log16 N⌋
    /// levels of full branches above every touched slot's path, their untouched children
    /// hashes of virtual subtries, as --state-size does for the account trie. `SLOTS` pads
    /// the contracts whose storage grows with their users (token-a, token-b, nft);
    /// `CONTRACT=SLOTS` one contract (token-a, token-b, pair, nft, compute or
    /// precompiles); repeat the flag for several, a later size of a contract replacing an
    /// earlier one. Given alone: those three at 128,000,000 slots, 6 levels, the size of
    /// mainnet's largest storage tries (XEN Crypto's held 127.6 million slots in 2026, its
    /// trie full at the top six levels; 16.8 to 268 million slots all give 6). At least 16
    /// slots. The headers' roots and the witness are the padded tries'. Off without the
    /// flag: each storage trie holds the generated slots only.
    #[arg(long, value_name = "[CONTRACT=]SLOTS", num_args = 0..=1)]
    #[arg(default_missing_value = "128000000", value_parser = parse_storage_size)]
    storage_size: Vec<StorageSize>,
}

/// One `--storage-size`: the contracts it names (all of [`WorkloadContract::LARGE`] when
/// none) and their slot count.
#[derive(Debug, Clone)]
struct StorageSize {
    contract: Option<WorkloadContract>,
    slots: u64,
}

/// Parses `[CONTRACT=]SLOTS` (the slot count a plain integer, `_` allowed between digits).
fn parse_storage_size(s: &str) -> Result<StorageSize, String> {
    let (contract, slots) = match s.split_once('=') {
        Some((contract, slots)) => (Some(contract.parse::<WorkloadContract>()?), slots),
        None => (None, s),
    };
    let slots = slots
        .replace('_', "")
        .parse::<u64>()
        .map_err(|_| format!("`{slots}` is not a slot count (expected [CONTRACT=]SLOTS)"))?;
    Ok(StorageSize { contract, slots })
}

/// The trie sizes of `--state-size` and every `--storage-size`, in order.
fn trie_sizes(state_size: Option<u64>, storage: &[StorageSize]) -> TrieSizes {
    let mut sizes = TrieSizes {
        accounts: state_size,
        ..TrieSizes::default()
    };
    for size in storage {
        let contracts = match &size.contract {
            Some(c) => std::slice::from_ref(c),
            None => &WorkloadContract::LARGE[..],
        };
        sizes = sizes.with_storage(contracts, size.slots);
    }
    sizes
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
        let progress = |done, _| bar.set_position(done);
        let sizes = trie_sizes(self.state_size, &self.storage_size);
        let dump = if self.no_witness {
            gigagas_workload::generate(&config, progress)?
        } else if sizes.is_empty() {
            gigagas_workload::generate_with_witness(&config, progress)?
        } else {
            gigagas_workload::generate_with_padded_witness(&config, &sizes, progress)?
        };
        bar.finish_and_clear();
        let info = gigagas_dump::write_dump(&dump, &self.output)?;
        eprintln!("{}", written(&self.output, &dump, &info, start));
        Ok(())
    }
}
