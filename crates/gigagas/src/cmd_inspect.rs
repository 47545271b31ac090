//! `gigagas inspect`: a dump's summary, its access lists' sizes per design and its
//! witnesses' per block (logic in `gigagas-dump` and `gigagas-trie`).

use crate::args::{Command, dump_or_default};
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
        crate::args::refuse_non_regular(&path, false)?;
        // Streams the blocks: memory is the file plus its pre-state and one block, not the
        // decoded dump. Each design's list size and each block's witness as
        // producers write it and root-only are computed on the way.
        let mut witnesses = gigagas_trie::WitnessSizer::default();
        let inspection = gigagas_dump::inspect_dump_with(&path, |b| {
            witnesses.block(b.meta, b.segment_index, b.segment, b.block)
        })?;
        println!(
            "file              {} ({:.2} MB, checksum {})",
            path.display(),
            inspection.info.size as f64 / 1e6,
            inspection.info.checksum_hex()
        );
        println!("{}", inspection.summary);
        print!("{}", inspection.designs?);
        // Beside them, what a stateless client must receive with the block.
        print!("{}", witnesses.finish()?);
        Ok(())
    }
}
