//! The `gigagas inspect` summary.

use crate::Dump;
use std::fmt;

/// Key figures of a dump.
#[derive(Debug, Clone, PartialEq)]
pub struct DumpSummary {
    /// Dump name.
    pub name: String,
    /// First and last block number.
    pub range: Option<(u64, u64)>,
    /// Number of blocks.
    pub blocks: usize,
    /// Number of transactions.
    pub transactions: usize,
    /// The most transactions one block holds (0 for a dump of empty blocks).
    pub most_transactions: usize,
    /// Total gas used.
    pub total_gas: u64,
    /// Gas used per block: min, median, max.
    pub gas_per_block: (u64, u64, u64),
    /// Share of a block's gas taken by its largest transaction: min, median, max (0..=1).
    pub largest_tx_share: (f64, f64, f64),
    /// Pre-state accounts (present, absent).
    pub accounts: (usize, usize),
    /// Pre-state storage slots.
    pub slots: usize,
    /// Distinct bytecodes and their total size in bytes.
    pub codes: (usize, usize),
    /// Access-list entries: accounts, storage slots (reads and writes), individual writes.
    pub bal_entries: (usize, usize, usize),
    /// Block hashes before the segments' first blocks.
    pub block_hashes: usize,
    /// State witnesses: segments that have one, and their nodes and node bytes together.
    /// Segments without one have no state-root phase.
    pub witnesses: WitnessFigures,
    /// One line per segment (a dump of one block range has one).
    pub segments: Vec<SegmentSummary>,
    /// Blocks with ommers known only by hash: (block number, how many).
    pub headerless_ommers: Vec<(u64, u32)>,
    /// Fork of the first block.
    pub fork: String,
    /// Provenance lines.
    pub provenance: Vec<(String, String)>,
}

/// Key figures of one segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentSummary {
    /// First and last block number.
    pub range: (u64, u64),
    /// Transactions.
    pub transactions: usize,
    /// Gas used.
    pub gas: u64,
    /// Fork of the first block.
    pub fork: String,
    /// Pre-state accounts (present and absent) and slots.
    pub accounts: usize,
    /// Pre-state storage slots.
    pub slots: usize,
    /// The segment's witness: its nodes and their bytes; `None` without one (no state-root
    /// phase for the segment's blocks).
    pub witness: Option<(usize, usize)>,
}

/// What the witnesses of a dump's segments hold, together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WitnessFigures {
    /// Segments with a witness.
    pub segments: usize,
    /// Trie nodes in those witnesses.
    pub nodes: usize,
    /// Bytes of those nodes' RLP (uncompressed).
    pub bytes: usize,
}

fn min_med_max<T: Copy + PartialOrd>(mut v: Vec<T>, zero: T) -> (T, T, T) {
    if v.is_empty() {
        return (zero, zero, zero);
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

/// What the summary needs of one block: its figures, not the block (so a summary can be
/// built while the blocks stream past: [`crate::format::inspect_dump`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockFigures {
    number: u64,
    timestamp: u64,
    gas_used: u64,
    transactions: usize,
    largest_tx_gas: u64,
    headerless_ommers: u32,
    /// Access-list accounts, slots (reads and writes) and individual writes.
    bal: (usize, usize, usize),
}

impl BlockFigures {
    /// The figures of `block` and its access list.
    pub(crate) fn of(block: &crate::DumpBlock) -> Self {
        let mut bal = (0, 0, 0);
        for a in &block.access_list {
            bal.0 += 1;
            bal.1 += a.storage_changes.len() + a.storage_reads.len();
            bal.2 += a
                .storage_changes
                .iter()
                .map(|s| s.changes.len())
                .sum::<usize>()
                + a.balance_changes.len()
                + a.nonce_changes.len()
                + a.code_changes.len();
        }
        Self {
            number: block.number(),
            timestamp: block.header.timestamp,
            gas_used: block.header.gas_used,
            transactions: block.transactions.len(),
            largest_tx_gas: block.receipts.iter().map(|r| r.gas_used).max().unwrap_or(0),
            headerless_ommers: block.headerless_ommers,
            bal,
        }
    }
}

impl DumpSummary {
    /// Compute the summary of a dump.
    pub fn of(dump: &Dump) -> Self {
        let figures: Vec<BlockFigures> = dump.blocks().map(BlockFigures::of).collect();
        let sizes: Vec<usize> = dump.segments.iter().map(|s| s.blocks.len()).collect();
        Self::from_figures(&dump.meta, &dump.segments, &sizes, &figures)
    }

    /// The summary from the dump's metadata, segments (their block hashes and pre-states:
    /// their blocks are not looked at), each segment's block count and every block's
    /// figures, in order (`sizes[i]` of them for segment `i`).
    pub(crate) fn from_figures(
        meta: &crate::DumpMeta,
        dump_segments: &[crate::Segment],
        sizes: &[usize],
        figures: &[BlockFigures],
    ) -> Self {
        let gas: Vec<u64> = figures.iter().map(|b| b.gas_used).collect();
        let shares: Vec<f64> = figures
            .iter()
            .filter(|b| b.gas_used > 0)
            .map(|b| b.largest_tx_gas as f64 / b.gas_used as f64)
            .collect();
        let bal = figures.iter().fold((0, 0, 0), |acc, b| {
            (acc.0 + b.bal.0, acc.1 + b.bal.1, acc.2 + b.bal.2)
        });
        let pre = dump_segments.iter().map(|s| &s.pre_state);
        let all_accounts: usize = pre.clone().map(|p| p.accounts.len()).sum();
        let present: usize = pre
            .clone()
            .map(|p| p.accounts.iter().filter(|a| a.state.is_some()).count())
            .sum();
        let mut start = 0;
        let segments = dump_segments
            .iter()
            .zip(sizes)
            .filter_map(|(s, &size)| {
                let blocks = figures.get(start..start + size)?;
                start += size;
                let (first, last) = (blocks.first()?, blocks.last()?);
                Some(SegmentSummary {
                    range: (first.number, last.number),
                    transactions: blocks.iter().map(|b| b.transactions).sum(),
                    gas: blocks.iter().map(|b| b.gas_used).sum(),
                    fork: meta.chain.fork_at(first.number, first.timestamp),
                    accounts: s.pre_state.accounts.len(),
                    slots: s.pre_state.storage.len(),
                    witness: s.witness.as_ref().map(|w| (w.nodes.len(), w.node_bytes())),
                })
            })
            .collect();
        let first = figures.first();
        Self {
            name: meta.name.clone(),
            range: first.zip(figures.last()).map(|(a, b)| (a.number, b.number)),
            blocks: figures.len(),
            transactions: figures.iter().map(|b| b.transactions).sum(),
            most_transactions: figures.iter().map(|b| b.transactions).max().unwrap_or(0),
            total_gas: figures.iter().map(|b| b.gas_used).sum(),
            gas_per_block: min_med_max(gas, 0),
            largest_tx_share: min_med_max(shares, 0.0),
            accounts: (present, all_accounts - present),
            slots: pre.clone().map(|p| p.storage.len()).sum(),
            codes: (
                pre.clone().map(|p| p.codes.len()).sum(),
                pre.map(|p| p.code_bytes()).sum(),
            ),
            bal_entries: bal,
            block_hashes: dump_segments.iter().map(|s| s.block_hashes.len()).sum(),
            witnesses: dump_segments
                .iter()
                .filter_map(|s| s.witness.as_ref())
                .fold(WitnessFigures::default(), |acc, w| WitnessFigures {
                    segments: acc.segments + 1,
                    nodes: acc.nodes + w.nodes.len(),
                    bytes: acc.bytes + w.node_bytes(),
                }),
            segments,
            headerless_ommers: figures
                .iter()
                .filter(|b| b.headerless_ommers > 0)
                .map(|b| (b.number, b.headerless_ommers))
                .collect(),
            fork: first
                .map(|b| meta.chain.fork_at(b.number, b.timestamp))
                .unwrap_or_default(),
            provenance: meta
                .provenance
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }
}

fn mgas(g: u64) -> String {
    format!("{:.2} Mgas", g as f64 / 1e6)
}

impl fmt::Display for DumpSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "name              {}", self.name)?;
        for (k, v) in &self.provenance {
            writeln!(f, "  {k:<16}{v}")?;
        }
        match self.range {
            Some((a, b)) => writeln!(
                f,
                "blocks            {} ({a}..={b}), fork {}",
                self.blocks, self.fork
            )?,
            None => writeln!(f, "blocks            0")?,
        }
        writeln!(f, "transactions      {}", self.transactions)?;
        writeln!(
            f,
            "total gas         {} ({:.3} Ggas)",
            self.total_gas,
            self.total_gas as f64 / 1e9
        )?;
        let (lo, med, hi) = self.gas_per_block;
        writeln!(
            f,
            "gas per block     min {}  median {}  max {}",
            mgas(lo),
            mgas(med),
            mgas(hi)
        )?;
        let (lo, med, hi) = self.largest_tx_share;
        writeln!(
            f,
            "largest tx share  min {:.1}%  median {:.1}%  max {:.1}%  (of its block's gas)",
            lo * 100.0,
            med * 100.0,
            hi * 100.0
        )?;
        writeln!(
            f,
            "pre-state         {} accounts ({} absent), {} slots, {} codes ({} bytes)",
            self.accounts.0 + self.accounts.1,
            self.accounts.1,
            self.slots,
            self.codes.0,
            self.codes.1
        )?;
        writeln!(
            f,
            "BAL entries       {} accounts, {} slots, {} writes",
            self.bal_entries.0, self.bal_entries.1, self.bal_entries.2
        )?;
        writeln!(f, "block hashes      {}", self.block_hashes)?;
        self.write_witnesses(f)?;
        for (number, n) in &self.headerless_ommers {
            write!(
                f,
                "\nommers            block {number}: {n} known only by hash (miner's 1/32 share per ommer paid; \
                 the ommer beneficiaries' rewards are not, receipts and gas do not depend on them)"
            )?;
        }
        self.write_segments(f)
    }
}

impl DumpSummary {
    /// The witnesses line: how many segments have one, and what they hold.
    fn write_witnesses(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.witnesses;
        let all = self.segments.len();
        match w.segments {
            0 => write!(
                f,
                "witnesses         none: the state-root phase is skipped for this dump"
            )?,
            n => {
                write!(
                    f,
                    "witnesses         {n} of {all} segments, {} trie nodes ({} bytes)",
                    w.nodes, w.bytes
                )?;
                if n < all {
                    write!(
                        f,
                        "; the state-root phase is skipped for the {} without",
                        all - n
                    )?;
                }
            }
        }
        Ok(())
    }

    /// One line per segment, where there are several.
    fn write_segments(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.segments.len() > 1 {
            write!(
                f,
                "\nsegments          {} (independent pre-states)",
                self.segments.len()
            )?;
            for (i, s) in self.segments.iter().enumerate() {
                let blocks = if s.range.0 == s.range.1 {
                    format!("block {}", s.range.0)
                } else {
                    format!("blocks {}..={}", s.range.0, s.range.1)
                };
                let witness = match s.witness {
                    Some((nodes, bytes)) => format!("witness {nodes} nodes ({bytes} bytes)"),
                    None => "no witness".to_string(),
                };
                write!(
                    f,
                    "\n  {i:>4}  {blocks:<24} {:<16} {:>5} txs {:>10}  {:>6} accounts {:>7} slots  {witness}",
                    s.fork,
                    s.transactions,
                    mgas(s.gas),
                    s.accounts,
                    s.slots
                )?;
            }
        }
        Ok(())
    }
}
