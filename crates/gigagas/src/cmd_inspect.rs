//! `gigagas inspect`: a dump's summary, its access lists' sizes per design and its
//! witnesses' per block (logic in `gigagas-dump` and `gigagas-trie`).

use crate::cli::{Command, dump_or_default};
use anyhow::{Result, bail};
use std::path::PathBuf;

/// Arguments of `gigagas inspect`.
#[derive(clap::Args)]
pub(crate) struct InspectArgs {
    /// The dump file (default: dumps/mainnet.gigagas, 42 real mainnet blocks).
    dump: Option<PathBuf>,
}

impl Command for InspectArgs {
    fn execute(self) -> Result<()> {
        let path = dump_or_default(self.dump)?;
        if !path.exists() {
            bail!("{}: no such file", path.display());
        }
        crate::cli::refuse_non_regular(&path, false)?;
        // Streams the blocks: memory is the file plus its pre-state, not the decoded dump.
        let (summary, info) = gigagas_dump::inspect_dump(&path)?;
        println!(
            "file              {} ({:.2} MB, checksum {})",
            path.display(),
            info.size as f64 / 1e6,
            info.checksum_hex()
        );
        println!("{summary}");
        // Each access-list design's size per block (issue 37). The `full` design needs
        // every block's state at its start, so this reads the whole dump.
        let (dump, _) = gigagas_dump::read_dump(&path)?;
        print!("{}", gigagas_dump::design_sizes(&dump)?);
        // Beside them, each block's witness as producers write it and root-only (issue 45):
        // what a stateless client must receive with the block.
        print!("{}", gigagas_trie::witness_sizes(&dump)?);
        Ok(())
    }
}
