//! `gigagas import`: turn external test fixtures into dumps. Logic lives in gigagas-import.

use crate::args::Command;
use anyhow::{Result, bail};
use gigagas_dump::write_dump;
use gigagas_import::{OutputLayout, import, import_snapshots};
use std::{
    path::{Path, PathBuf},
    sync::Mutex,
};

/// Arguments of `gigagas import`.
#[derive(clap::Args)]
pub(crate) struct ImportArgs {
    #[command(subcommand)]
    source: ImportSource,
}

#[derive(clap::Subcommand)]
enum ImportSource {
    /// Turn Ethereum BlockchainTests fixtures (ethereum/tests, execution-spec-tests) into dumps.
    ///
    /// Every test's blocks are decoded from their RLP and executed like a client (revm
    /// State over the fixture's `pre`, the block access list builder on), then checked
    /// against the fixture: each header's gas used, blob gas, receipts root, bloom and state
    /// root, the `postState` account by account (or `postStateHash`) and `lastblockhash`.
    /// The first difference is printed and that test's dump is not written. A block the
    /// fixture expects rejected (expectException) must be refused on the chain's tip by
    /// one of the checks (decoding, header against parent and body, the access list's
    /// format, a transaction, the header after execution, the access list); the line names
    /// that check, and the dump holds the valid blocks only (none written when there are
    /// none).
    ///
    /// One test from a file (a one-test file or `--test NAME`): OUT is the dump file.
    /// A file with many tests or a directory (searched recursively for .json): OUT is a
    /// directory receiving one `<test name>.gigagas` per test, with a pass/skip/FAIL line
    /// per test and the totals. Unsupported fixtures (pre-merge networks, side chains,
    /// Amsterdam rules revm implements differently) are skipped with the reason.
    ///
    /// Example (a checkout of ethereum/tests or an execution-spec-tests release):
    ///   gigagas import blockchain-test path/to/fixtures -o dumps/ethereum-tests
    BlockchainTest {
        /// A fixture file or a directory of them.
        input: PathBuf,
        /// Import only the test with this name.
        #[arg(long)]
        test: Option<String>,
        /// Output dump file (one test) or directory (many tests).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Turn offline mainnet block snapshots into one dump of independent blocks.
    ///
    /// DIR is one block folder or a folder of them, each with `block.json`
    /// (eth_getBlockByNumber with full transactions), `pre_state.json` (every existing
    /// account and slot the block touches, at its parent) and, where the block runs
    /// BLOCKHASH, `block_hashes.json`. Each block is
    /// executed over its pre-state under mainnet's rules for its era (rewards, DAO, every
    /// fork) with the access-list builder on, and checked: every sender recovers from its
    /// signature, the header's gas used and logs bloom match, and from Byzantium on the
    /// receipts root (before Byzantium receipts carry intermediate state roots, which a
    /// pre-state of touched accounts cannot produce). Ommers are named only by hash in
    /// block.json: the miner's share per ommer is paid, the ommer beneficiaries' rewards are
    /// not recorded (receipts and gas do not depend on them).
    ///
    /// A block folder may also hold `witness.json`, shaped like debug_executionWitness's
    /// answer (`state`: the trie nodes as 0x-prefixed hex RLP; `codes`, `keys` ignored): it
    /// becomes the segment's witness, what a state-root phase starts from. Its root, the
    /// parent's state root, is taken from `headers` (the one that hashes to the block's
    /// parentHash) where present, else as the one node no other node references (refused
    /// when that is not exactly one node). A block without one has no witness (its line
    /// says so, and runs skip its root phase).
    ///
    /// One `ok`/`FAIL` line per block. Blocks that check out become one segment each of
    /// the output dump; a block that does not is named with the field (expected vs got) and
    /// left out, and the command exits non-zero.
    ///
    /// Example (how the shipped mainnet dump was made, from a folder of block folders):
    ///   gigagas import snapshot path/to/mainnet-blocks -o dumps/mainnet.gigagas
    Snapshot {
        /// A block folder, or a folder of block folders.
        input: PathBuf,
        /// Output dump file [default: <DIR name>.gigagas in the current folder].
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Name recorded in the dump.
        #[arg(long, default_value = "mainnet")]
        name: String,
    },
}

impl Command for ImportArgs {
    fn execute(self) -> Result<()> {
        match self.source {
            ImportSource::BlockchainTest {
                input,
                test,
                output,
            } => {
                // Before any work: the output (a dump file, or a folder of them) is neither a
                // fixture file nor inside the fixture folder.
                gigagas_report::output::check_not_inputs(
                    std::slice::from_ref(&input),
                    &[("-o", output.clone())],
                )?;
                let mut empty: Vec<PathBuf> = Vec::new();
                let (layout, summary) = import(&input, test.as_deref(), &output, |report| {
                    println!("{report}");
                    empty.extend(report.dump_without_transactions().map(Path::to_path_buf));
                })?;
                if layout == OutputLayout::Directory {
                    println!("{summary}");
                    if !empty.is_empty() {
                        println!(
                            "{} dump(s) hold no transactions (nothing to measure; a suite run lists them as skipped): {}",
                            empty.len(),
                            empty
                                .iter()
                                .map(|p| {
                                    gigagas_report::table::escape_name(&p.display().to_string())
                                        .into_owned()
                                })
                                .collect::<Vec<_>>()
                                .join(", ")
                        );
                    }
                    if summary.failed > 0 {
                        bail!(
                            "{} of {} tests failed to import (see the FAIL lines above)",
                            summary.failed,
                            summary.total()
                        );
                    }
                }
                Ok(())
            }
            ImportSource::Snapshot {
                input,
                output,
                name,
            } => snapshot(&input, output, &name),
        }
    }
}

fn snapshot(input: &Path, output: Option<PathBuf>, name: &str) -> Result<()> {
    let output = output.unwrap_or_else(|| {
        let base = input
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_owned()));
        PathBuf::from(format!(
            "{}.gigagas",
            base.map(|n| n.to_string_lossy().into_owned())
                .unwrap_or("snapshot".into())
        ))
    });
    // Before any work: the dump is not written over, or into, the snapshot folder.
    gigagas_report::output::check_not_inputs(&[input.to_path_buf()], &[("-o", output.clone())])?;
    let start = std::time::Instant::now();
    let print = Mutex::new(());
    let result = import_snapshots(input, name, |r| {
        let _line = print.lock();
        match &r.outcome {
            Ok(b) => {
                let notes = b.notes();
                println!(
                    "ok    {:>9} {:<16} {:>5} txs {:>8.2} Mgas{}",
                    b.number,
                    b.fork,
                    b.transactions,
                    b.gas_used as f64 / 1e6,
                    if notes.is_empty() {
                        String::new()
                    } else {
                        format!("  ({notes})")
                    }
                );
            }
            Err(e) => println!("FAIL  {e}"),
        }
    })?;
    let failed = result.failed();
    let total = result.reports.len();
    if let Some(dump) = &result.dump {
        let info = write_dump(dump, &output)?;
        println!(
            "{total} blocks: {} imported, {failed} failed; {}",
            total - failed,
            crate::terminal::written(&output, dump, &info, start)
        );
    } else {
        println!("{total} blocks: 0 imported, {failed} failed; nothing written");
    }
    if failed > 0 {
        bail!(
            "{failed} of {total} blocks did not check out (see the FAIL lines above); they are not in the dump"
        );
    }
    Ok(())
}
