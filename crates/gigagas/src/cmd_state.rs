//! `gigagas state build`: a dump's pre-state written to a state store on disk (logic in
//! `gigagas-state`).

use crate::{args::Command, terminal::progress_bar};
use anyhow::{Context, Result, bail};
use gigagas_state::{BuildOptions, BuildStage, MAINNET_PLAIN_STATE_BYTES, build_store};
use std::path::PathBuf;

/// Arguments of `gigagas state`.
#[derive(clap::Args)]
pub(crate) struct StateArgs {
    #[command(subcommand)]
    command: StateCommand,
}

#[derive(clap::Subcommand)]
enum StateCommand {
    /// Write a dump's pre-state to a state store on disk, for `gigagas run --state DIR`.
    ///
    /// The store is an embedded MDBX environment (the engine reth keeps its state in) in
    /// reth's flat layout: accounts by address (nonce, balance, code hash), storage by
    /// address then slot (dup-sorted), bytecodes by hash, and the trie nodes of each
    /// segment's witness by hash (what `--state-root` reads on a store run); each segment of
    /// the dump sees only its own values. It records the dump's checksum: a run refuses a store built from
    /// another dump. Built in a temporary folder beside DIR and renamed into place, so DIR
    /// is a whole store or absent.
    ///
    /// Without --pad-to, the store holds only what the dump's blocks read (tens of MB),
    /// which the OS pulls into its page cache whole: cold reads then mean little. --pad-to
    /// adds synthetic accounts and slots to the same tables up to a size, so the tables'
    /// depth and the reads that miss the cache are those of a node's database. For scale:
    /// mainnet's flat state (reth's PlainAccountState + PlainStorageState + Bytecodes) is
    /// about 126 GB; pad to well above this machine's memory for cold runs that miss like a
    /// node's.
    ///
    /// Example: gigagas state build dumps/mainnet.gigagas -o /tmp/mainnet-state --pad-to 8GiB
    Build(BuildArgs),
}

/// Arguments of `gigagas state build`.
#[derive(clap::Args)]
struct BuildArgs {
    /// The dump whose pre-state to store (default: dumps/mainnet.gigagas).
    dump: Option<PathBuf>,
    /// The store's folder (created; an earlier store there is replaced).
    #[arg(short, long)]
    out: PathBuf,
    /// Pad the store with synthetic accounts and slots to at least this size: bytes, or
    /// with a unit (500MB, 8GiB, 1.5TB).
    #[arg(long, value_parser = parse_size)]
    pad_to: Option<u64>,
}

/// A size: bytes, or a number with a unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a size (e.g. 8GiB, 500MB or a byte count)"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{s}` (expected B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)"
            ));
        }
    };
    let bytes = number * scale;
    if !bytes.is_finite() || bytes < 1.0 || bytes > 4.0 * MAINNET_PLAIN_STATE_BYTES as f64 {
        return Err(format!(
            "`{s}` is outside 1 byte ..= {} GB (four times mainnet's flat state)",
            4 * MAINNET_PLAIN_STATE_BYTES / 1_000_000_000
        ));
    }
    Ok(bytes as u64)
}

impl Command for StateArgs {
    fn execute(self) -> Result<()> {
        let StateCommand::Build(args) = self.command;
        let path = crate::args::dump_or_default(args.dump)?;
        if !path.exists() {
            bail!("{}: no such file", path.display());
        }
        crate::args::refuse_non_regular(&path, false)?;
        let (dump, info) = gigagas_dump::read_dump(&path)?;
        if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("{}: cannot create the folder", parent.display()))?;
        }
        let bar = progress_bar(1, "building");
        let summary = build_store(
            &dump,
            &info,
            &args.out,
            &BuildOptions {
                pad_to: args.pad_to,
            },
            &mut |p| {
                bar.set_length(p.total.max(1));
                bar.set_position(p.done);
                bar.set_message(match p.stage {
                    BuildStage::State => "pre-state",
                    BuildStage::Padding => "padding",
                    BuildStage::Sync => "syncing",
                });
            },
        )
        .with_context(|| format!("building the state store {}", args.out.display()))?;
        bar.finish_and_clear();
        println!(
            "{}: {:.1} MB ({:.1} MB used) from {} (checksum {}) in {:.1} s",
            summary.path.display(),
            summary.file_bytes as f64 / 1e6,
            summary.used_bytes as f64 / 1e6,
            path.display(),
            info.checksum_hex(),
            summary.elapsed.as_secs_f64()
        );
        let meta = &summary.meta;
        println!(
            "  trie nodes: {} of the witness, {} of the padded tries' virtual subtries (for {} padded accounts, {} slots)",
            meta.trie_nodes, meta.pad_trie_nodes, meta.pad_accounts, meta.pad_slots
        );
        for t in &summary.tables {
            println!(
                "  {:<16} {:>12} entries, B-tree depth {}, {} branch + {} leaf + {} overflow pages",
                t.name, t.entries, t.depth, t.branch_pages, t.leaf_pages, t.overflow_pages
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_take_decimal_and_binary_units() {
        assert_eq!(parse_size("8GiB"), Ok(8 << 30));
        assert_eq!(parse_size("500MB"), Ok(500_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1.5 GB"), Ok(1_500_000_000));
        assert!(
            parse_size("8 parsecs")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(parse_size("0").is_err());
        assert!(parse_size("1000TB").unwrap_err().contains("outside"));
    }
}
