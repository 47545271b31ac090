//! `gigagas prune-witness`: a dump whose witnesses keep only the nodes the state roots
//! need (logic in `gigagas-trie`).

use crate::{args::Command, terminal::written};
use anyhow::{Context, Result, bail};
use std::{path::PathBuf, time::Instant};

/// Arguments of `gigagas prune-witness`.
#[derive(clap::Args)]
pub(crate) struct PruneWitnessArgs {
    /// The dump whose witnesses to prune (written by `gigagas generate`, an importer or
    /// `gigagas dump --rpc`).
    dump: PathBuf,
    /// Output file (not the input).
    #[arg(short, long)]
    output: PathBuf,
}

impl Command for PruneWitnessArgs {
    fn execute(self) -> Result<()> {
        crate::args::refuse_non_regular(&self.dump, false)?;
        gigagas_report::output::check_not_inputs(
            std::slice::from_ref(&self.dump),
            &[("-o", self.output.clone())],
        )?;
        let start = Instant::now();
        let (mut dump, _) = gigagas_dump::read_dump(&self.dump)?;
        if dump.segments.iter().all(|s| s.witness.is_none()) {
            bail!(
                "{}: no segment has a witness to prune (`gigagas inspect` shows which do)",
                self.dump.display()
            );
        }
        let pruned = gigagas_trie::root_only_dump(&mut dump)
            .with_context(|| format!("{}", self.dump.display()))?;
        dump.meta
            .provenance
            .insert("witness".to_string(), "root-only".to_string());
        let info = gigagas_dump::write_dump(&dump, &self.output)?;
        eprintln!("{pruned}");
        eprintln!("{}", written(&self.output, &dump, &info, start));
        Ok(())
    }
}
