//! `gigagas dump`: make a dump from a JSON-RPC node (logic in `gigagas-rpc`).

use crate::args::Command;
use alloy_hardforks::EthereumHardfork;
use anyhow::Result;
use gigagas_rpc::{ClientConfig, DumpEvent, DumpOptions, witness::WitnessSource};
use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

/// Make a dump from a JSON-RPC node (standard JSON-RPC only, no database access).
///
/// Fetches blocks FROM..=TO from a node over standard JSON-RPC (no database access),
/// re-executes them on revm over state read from the node at block FROM-1, verifies every
/// transaction's gas and status and every block's gas, receipts root and requests hash
/// against the node, and writes the dump with its pre-state and one block access list per
/// block. A range that does not verify is not written.
///
/// The dump carries a witness (the trie nodes proving the pre-state at FROM-1's state root,
/// what a state-root phase starts from) unless --no-witness: from debug_executionWitness for
/// a one-block range where the node serves it, else eth_getProof at FROM-1 for every touched
/// account with its touched slots. A node that serves neither gives a dump without one (a
/// line says why; runs then skip the root phase).
///
/// Example (a local anvil): gigagas dump --rpc http://127.0.0.1:8545 --from 1 --to 20 -o dumps/anvil.gigagas
#[derive(clap::Args, Debug)]
pub(crate) struct DumpArgs {
    /// JSON-RPC URL of the node (http:// or https://). The node must serve state at FROM-1
    /// (an archive node for old ranges).
    #[arg(long)]
    pub rpc: String,
    /// First block (at least 1).
    #[arg(long)]
    pub from: u64,
    /// Last block (inclusive).
    #[arg(long)]
    pub to: u64,
    /// Output file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Fork rules (this fork and all before it active from genesis) instead of detecting
    /// them from the chain id, eth_config or the header fields.
    #[arg(long, value_parser = gigagas_chain::parse_fork)]
    pub fork: Option<EthereumHardfork>,
    /// JSON-RPC requests in flight at once.
    #[arg(long, default_value = "4")]
    pub concurrency: std::num::NonZeroUsize,
    /// Calls per JSON-RPC request (a JSON-RPC batch; not the mega-block `--batch` of
    /// `gigagas run`).
    #[arg(long = "rpc-batch", visible_alias = "batch-size")]
    #[arg(default_value_t = 100)]
    pub rpc_batch: usize,
    /// Continue an interrupted dump from `<OUTPUT>.partial/` (the result is the same file
    /// an uninterrupted dump writes).
    #[arg(long)]
    pub resume: bool,
    /// Time-out of one HTTP request, seconds.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Retries of a failed request (exponential back-off from 250 ms, at most 8 s apart).
    #[arg(long, default_value_t = 5)]
    pub retries: u32,
    /// Do not ask the node for prestateTracer traces to prefetch state (fetch on demand only).
    #[arg(long)]
    pub no_trace_prefetch: bool,
    /// Name stored in the dump (default rpc-<chain id>-<from>-<to>).
    #[arg(long)]
    pub name: Option<String>,
    /// Do not fetch the witness (the trie nodes proving the pre-state; no state-root phase
    /// for this dump).
    #[arg(long)]
    pub no_witness: bool,
    /// Stop after this many blocks, keeping the progress for --resume (for testing).
    #[arg(long, hide = true)]
    pub stop_after: Option<u64>,
}

impl Command for DumpArgs {
    fn execute(self) -> Result<()> {
        let start = Instant::now();
        let opts = DumpOptions {
            fork: self.fork,
            concurrency: self.concurrency,
            batch_size: self.rpc_batch,
            client: ClientConfig {
                timeout: Duration::from_secs(self.timeout.max(1)),
                retries: self.retries,
                ..ClientConfig::default()
            },
            resume: self.resume,
            stop_after: self.stop_after,
            trace_prefetch: !self.no_trace_prefetch,
            name: self.name.clone(),
            witness: !self.no_witness,
            ..DumpOptions::new(self.rpc.clone(), self.from, self.to)
        };
        let bar = crate::terminal::progress_bar(self.to.saturating_sub(self.from) + 1, "dumping");
        let mut on_progress = |p: DumpEvent| match p {
            DumpEvent::Start {
                total,
                resumed_blocks,
                resumed_state,
                chain_id,
                fork,
            } => {
                bar.set_length(total);
                let resumed = if resumed_blocks + resumed_state > 0 {
                    format!(
                        "; resuming with {resumed_blocks} blocks and {resumed_state} state values fetched before"
                    )
                } else {
                    String::new()
                };
                bar.suspend(|| eprintln!("chain {chain_id}, {fork}{resumed}"));
                bar.reset_eta();
            }
            DumpEvent::Block {
                done,
                number,
                txs,
                state_calls,
                on_demand,
                ..
            } => {
                bar.set_position(done);
                bar.set_message(format!(
                    "block {number} ({txs} txs), {state_calls} state calls ({on_demand} on demand)"
                ));
            }
            DumpEvent::Finishing => bar.set_message("completing the pre-state, then the witness"),
            DumpEvent::Witness { source, nodes } => bar.suspend(|| match source {
                WitnessSource::Off => {}
                WitnessSource::Unavailable(why) => {
                    eprintln!(
                        "no witness: {why} (the dump has none; runs skip the state-root phase)"
                    )
                }
                source => eprintln!("witness: {nodes} trie nodes from {source}"),
            }),
        };
        let partial = gigagas_rpc::partial_dir_for(&self.output);
        if partial.exists() && !self.resume {
            eprintln!(
                "{} holds an earlier, unfinished dump: starting over (--resume continues it)",
                partial.display()
            );
        }
        let result = gigagas_rpc::dump_to_file(&opts, &self.output, &mut on_progress);
        bar.finish_and_clear();
        let (dump, info) = result?;
        eprintln!(
            "wrote {} ({} blocks, {} txs, {:.3} Ggas, {} accounts and {} slots of pre-state, {:.1} MB, checksum {}) in {:.1} s; \
             verified against the node: every transaction's gas and status, every block's gas and receipts root",
            self.output.display(),
            dump.block_count(),
            dump.transaction_count(),
            dump.total_gas() as f64 / 1e9,
            dump.segments[0].pre_state.accounts.len(),
            dump.segments[0].pre_state.storage.len(),
            info.size as f64 / 1e6,
            info.checksum_hex(),
            start.elapsed().as_secs_f64()
        );
        Ok(())
    }
}
