//! `gigagas import`: turn external test fixtures into dumps. Logic lives in gigagas-import.

use anyhow::{Result, bail};
use gigagas_import::{OutputLayout, import};
use std::path::PathBuf;

/// Arguments of `gigagas import`.
#[derive(clap::Args)]
pub struct ImportArgs {
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
    /// The first difference is printed and that test's dump is not written.
    ///
    /// One test from a file (a one-test file or `--test NAME`): OUT is the dump file.
    /// A file with many tests or a directory (searched recursively for .json): OUT is a
    /// directory receiving one `<test name>.gigagas` per test, with a pass/skip/FAIL line
    /// per test and the totals. Unsupported fixtures (pre-merge networks, blocks expected
    /// to be invalid, side chains) are skipped with the reason.
    ///
    /// Example: gigagas import blockchain-test ../shared/ethereum-tests -o dumps/ethereum-tests
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
}

/// Run `gigagas import`.
pub fn run(args: ImportArgs) -> Result<()> {
    match args.source {
        ImportSource::BlockchainTest { input, test, output } => {
            let (layout, summary) = import(&input, test.as_deref(), &output, |report| println!("{report}"))?;
            if layout == OutputLayout::Directory {
                println!("{summary}");
                if summary.failed > 0 {
                    bail!("{} of {} tests failed to import (see the FAIL lines above)", summary.failed, summary.total());
                }
            }
            Ok(())
        }
    }
}
