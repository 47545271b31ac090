//! [`Replay`]: a dump loaded for execution, and the [`WorkItem`]s a run schedules.

use crate::{
    expected::{ExpectedWrites, WriteIndexError},
    prestate::{Carried, PreStateDb},
};
use alloy_consensus::{Header, Transaction, TxEnvelope, transaction::Recovered};
use alloy_eips::eip4895::Withdrawal;
use alloy_evm::EvmEnv;
use gigagas_chain::{BlockInput, BlockStage, ChainSpec};
use gigagas_dump::{Dump, ReceiptSummary};
use revm::state::bal::Bal;
use std::sync::Arc;

/// Why a dump cannot be prepared for replay.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The chain config names an unknown fork or a bad activation.
    #[error(transparent)]
    Chain(#[from] gigagas_dump::ChainConfigError),
    /// A block access list does not convert into revm's form (malformed code change).
    #[error("block {block}: invalid block access list: {source}")]
    Bal {
        /// Block number.
        block: u64,
        /// revm's conversion error.
        source: revm::bytecode::BytecodeDecodeError,
    },
    /// A block access list writes at an index the block does not have.
    #[error("block {block}: invalid block access list: {source}")]
    WriteIndex {
        /// Block number.
        block: u64,
        /// The write and the block's last index.
        source: WriteIndexError,
    },
    /// The dump calls the point-evaluation precompile, and the setup-free verifier is not
    /// installed: the first pass to run it would load c-kzg's trusted setup (seconds of one
    /// core) inside its timed window.
    #[error(
        "the dump calls the KZG point-evaluation precompile but the setup-free verifier is not \
         installed: call gigagas_chain::install_kzg_verifier() at start-up, before any \
         precompile runs"
    )]
    KzgVerifierNotInstalled,
}

/// One block, ready to execute.
#[derive(Debug)]
pub struct ReplayBlock {
    /// The header.
    pub(crate) header: Header,
    /// Fork rules and block env.
    pub(crate) env: EvmEnv,
    /// The block access list in revm's form (shared: revm's `BalState` reads it from an
    /// `Arc`).
    pub(crate) bal: Arc<Bal>,
    /// Transactions with their senders.
    pub(crate) transactions: Vec<Recovered<TxEnvelope>>,
    /// Receipt summaries (what verification compares against).
    pub(crate) receipts: Vec<ReceiptSummary>,
    /// Withdrawals, `None` before Shanghai.
    pub(crate) withdrawals: Option<Vec<Withdrawal>>,
    /// Ommer headers (pre-Merge rewards).
    pub(crate) ommers: Vec<Header>,
    /// Ommers known only by hash (the miner's share is paid).
    pub(crate) headerless_ommers: u32,
}

/// What a work item executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// Pre-block system calls (EIP-2935, EIP-4788) at block access index 0.
    PreBlock,
    /// Transaction `i` of the block, at block access index `i + 1`.
    Tx(u32),
    /// Post-block changes (EIP-7002/7251 requests, withdrawals) at index `n + 1`.
    PostBlock,
}

impl From<ItemKind> for BlockStage {
    fn from(kind: ItemKind) -> Self {
        match kind {
            ItemKind::PreBlock => BlockStage::PreBlock,
            ItemKind::Tx(i) => BlockStage::Tx(i as usize),
            ItemKind::PostBlock => BlockStage::PostBlock,
        }
    }
}

/// Worded like the recording path's stages (one wording for both).
impl std::fmt::Display for ItemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        BlockStage::from(*self).fmt(f)
    }
}

impl ReplayBlock {
    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Fork rules and block env.
    pub fn env(&self) -> &EvmEnv {
        &self.env
    }

    /// The block access list in revm's form.
    pub fn bal(&self) -> &Bal {
        &self.bal
    }

    /// Transactions with their senders.
    pub fn transactions(&self) -> &[Recovered<TxEnvelope>] {
        &self.transactions
    }

    /// Receipt summaries (what verification compares against).
    pub fn receipts(&self) -> &[ReceiptSummary] {
        &self.receipts
    }

    /// The block as the recording path takes it.
    pub fn input(&self) -> BlockInput<'_> {
        BlockInput {
            header: &self.header,
            transactions: &self.transactions,
            withdrawals: self.withdrawals.as_deref(),
            ommers: &self.ommers,
            headerless_ommers: self.headerless_ommers,
        }
    }
}

/// One segment of a dump: consecutive blocks replayed from their own pre-state.
#[derive(Debug)]
pub struct ReplaySegment {
    /// The segment's pre-state (what the sequential baseline starts from).
    pub(crate) pre: PreStateDb,
    /// Its range of [`Replay::blocks`].
    pub(crate) blocks: std::ops::Range<usize>,
}

impl ReplaySegment {
    /// The segment's pre-state (what the sequential baseline starts from).
    pub fn pre(&self) -> &PreStateDb {
        &self.pre
    }

    /// Its range of [`Replay::blocks`].
    pub fn blocks(&self) -> std::ops::Range<usize> {
        self.blocks.clone()
    }
}

/// Why a replay cannot compute state roots.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RootSetupError {
    /// No segment of the dump carries a witness (dumps of format 1 or 2, snapshots
    /// without `witness.json`, `gigagas dump --no-witness`).
    #[error(
        "the state-root phase needs a witness and no segment of the dump has one \
         (regenerate or re-dump it: `gigagas generate`, `gigagas dump` and \
         `gigagas import blockchain-test` write one)"
    )]
    NoWitness,
    /// A segment's witness does not open (no node hashes to its parent root).
    #[error("segment {segment}: the witness does not open: {source}")]
    Witness {
        /// The segment's index.
        segment: usize,
        /// The trie's error.
        source: gigagas_trie::RootError,
    },
    /// A store run: the state source lacks a node of a segment's witness (a store built
    /// before witnesses, or from a dump without one).
    #[error(
        "segment {segment}: the state source has no witness node {hash} (rebuild the store \
         from a dump with a witness: gigagas state build)"
    )]
    SourceLacksNode {
        /// The segment's index.
        segment: usize,
        /// The node's hash.
        hash: alloy_primitives::B256,
    },
}

/// One independently executable unit: 40 bytes, so a batch's items stay in few cache lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkItem {
    /// Index into [`Replay::blocks`].
    pub block: u32,
    /// What to run.
    pub kind: ItemKind,
    /// Gas used according to the receipt (0 for system work).
    pub gas_used: u64,
    /// Gas limit of the transaction (0 for system work).
    pub gas_limit: u64,
    /// Its execution time measured in a profiling pass, nanoseconds (0 until
    /// [`Replay::set_measured_times`]): what the oracle scheduler orders by.
    pub measured_ns: u64,
}

impl WorkItem {
    /// The block access index this item runs at.
    pub fn bal_index(&self, block: &ReplayBlock) -> u64 {
        match self.kind {
            ItemKind::PreBlock => 0,
            ItemKind::Tx(i) => i as u64 + 1,
            ItemKind::PostBlock => block.transactions.len() as u64 + 1,
        }
    }
}

/// A dump prepared for replay: pre-state store, per-block envs and BALs, work items.
///
/// Built by [`Replay::new`] from a [`Dump`] it takes by value (its blocks move in), and
/// read-only afterwards: the work items index the blocks, and each block's items are
/// contiguous ([`Replay::block_items`]).
#[derive(Debug)]
pub struct Replay {
    pub(crate) spec: ChainSpec,
    pub(crate) segments: Vec<ReplaySegment>,
    pub(crate) blocks: Vec<ReplayBlock>,
    pub(crate) items: Vec<WorkItem>,
    /// `items[block_items[b]..block_items[b + 1]]` are block `b`'s items: read through
    /// [`Replay::block_items`].
    block_items: Vec<u32>,
    /// Every block's base, built once, when all of them fit in
    /// [`RESIDENT_BASES_BYTES`]; `None`: each pass builds a batch's bases before it runs
    /// and drops them after ([`BaseCursor`]).
    resident_bases: Option<Vec<PreStateDb>>,
    /// Per segment, its witness (the state-root phase starts from it), if the dump has one.
    pub(crate) witnesses: Vec<Option<gigagas_dump::Witness>>,
    /// Per block of a segment with a witness, its access list as the dump holds it (what
    /// the root phase applies); `None` for the others, whose lists are dropped once
    /// converted.
    root_lists: Vec<Option<alloy_eip7928::BlockAccessList>>,
    /// Tells this replay from any other in the process: what a [`crate::pass::PassCache`]
    /// is bound to, so that a cache built for one replay never serves another.
    id: u64,
}

/// The most memory (estimated) that every block's base may take for them to be built once
/// and kept across passes: 1 GiB. Beyond it, memory follows the batch: a pass builds each
/// batch's bases before the batch runs (outside the timed window) and drops them after.
/// The 42 mainnet blocks take about 20 MB; 2000 blocks of 30 Mgas ERC-20 transfers about
/// 1.3 GB.
pub const RESIDENT_BASES_BYTES: u64 = 1 << 30;

/// Estimated heap bytes of a block base per access-list account and per slot (measured
/// with heaptrack on a 2000-block ERC-20 dump: 1.35 GB for 1.76 M accounts and 3.5 M
/// slots).
const BASE_BYTES_PER_ACCOUNT: u64 = 300;
const BASE_BYTES_PER_SLOT: u64 = 235;

/// A segment's state moved block by block for one pass (what [`BaseCursor`] and
/// [`CarriedCursor`] walk): its pre-state's tables copied once per segment, each block's
/// access list applied in turn. Asking for an earlier block starts its segment over.
#[derive(Debug)]
struct SegmentWalk<'r> {
    replay: &'r Replay,
    /// The segment `running` belongs to and the next block it has not applied.
    at: Option<(usize, usize)>,
    running: PreStateDb,
}

impl<'r> SegmentWalk<'r> {
    fn new(replay: &'r Replay) -> Self {
        Self {
            replay,
            at: None,
            running: PreStateDb::default(),
        }
    }

    /// Moves to the start of block `b`, telling `step` when its segment starts over and
    /// each earlier block's list before it is applied.
    fn seek(&mut self, b: usize, mut step: impl FnMut(Walked<'_>)) {
        let segment = self.replay.segment_of(b);
        let next = match self.at {
            Some((s, next)) if s == segment && next <= b => next,
            _ => {
                let seg = &self.replay.segments[segment];
                self.running = seg.pre.clone();
                step(Walked::Restarted);
                seg.blocks.start
            }
        };
        for earlier in next..b {
            let bal = &self.replay.blocks[earlier].bal;
            step(Walked::Applying(bal));
            self.running.apply_block(bal);
        }
        self.at = Some((segment, b));
    }

    /// Applies block `b` (where [`SegmentWalk::seek`] left it).
    fn pass(&mut self, b: usize) {
        self.running.apply_block(&self.replay.blocks[b].bal);
        self.at = self.at.map(|(s, _)| (s, b + 1));
    }
}

/// What [`SegmentWalk::seek`] does on its way.
enum Walked<'a> {
    /// It started the segment over from its pre-state.
    Restarted,
    /// It applies this earlier block's list.
    Applying(&'a Bal),
}

/// Builds block bases in block order for one pass: the state at the start of each block,
/// advanced block by block from its segment's pre-state (only the pre-state's tables are
/// copied, once per segment per pass). Asking for an earlier block starts its segment
/// over.
#[derive(Debug)]
pub struct BaseCursor<'r> {
    walk: SegmentWalk<'r>,
}

impl<'r> BaseCursor<'r> {
    /// A cursor at the start of the replay.
    pub fn new(replay: &'r Replay) -> Self {
        Self {
            walk: SegmentWalk::new(replay),
        }
    }

    /// Block `b`'s base: the state at its start for what its access list names, joined
    /// with the list ([`PreStateDb::block_base`]).
    pub fn base(&mut self, b: usize) -> PreStateDb {
        self.walk.seek(b, |_| {});
        let base = self
            .walk
            .running
            .block_base(&self.walk.replay.blocks[b].bal);
        self.walk.pass(b);
        base
    }
}

/// Builds blocks' [`Carried`] values in block order for one pass, as [`BaseCursor`] builds
/// their bases: each segment's state advanced block by block, with the keys its blocks
/// wrote so far. Asking for an earlier block starts its segment over.
#[derive(Debug)]
pub struct CarriedCursor<'r> {
    walk: SegmentWalk<'r>,
    written_accounts: rustc_hash::FxHashSet<alloy_primitives::Address>,
    written_slots: rustc_hash::FxHashSet<(alloy_primitives::Address, alloy_primitives::U256)>,
}

impl<'r> CarriedCursor<'r> {
    /// A cursor at the start of the replay.
    pub fn new(replay: &'r Replay) -> Self {
        Self {
            walk: SegmentWalk::new(replay),
            written_accounts: Default::default(),
            written_slots: Default::default(),
        }
    }

    /// What earlier blocks of block `b`'s segment wrote of what its access list names, at
    /// its start.
    pub fn carried(&mut self, b: usize) -> Carried {
        let (accounts, slots) = (&mut self.written_accounts, &mut self.written_slots);
        self.walk.seek(b, |step| match step {
            Walked::Restarted => {
                accounts.clear();
                slots.clear();
            }
            Walked::Applying(bal) => record_writes(bal, accounts, slots),
        });
        let bal = &self.walk.replay.blocks[b].bal;
        let carried = self
            .walk
            .running
            .carried(bal, &self.written_accounts, &self.written_slots);
        record_writes(bal, &mut self.written_accounts, &mut self.written_slots);
        self.walk.pass(b);
        carried
    }
}

/// Adds the accounts whose balance, nonce or code `bal` writes, and the slots it writes.
fn record_writes(
    bal: &Bal,
    accounts: &mut rustc_hash::FxHashSet<alloy_primitives::Address>,
    slots: &mut rustc_hash::FxHashSet<(alloy_primitives::Address, alloy_primitives::U256)>,
) {
    for (address, account) in bal.accounts.iter() {
        let info = &account.account_info;
        if !(info.balance.writes.is_empty()
            && info.nonce.writes.is_empty()
            && info.code.writes.is_empty())
        {
            accounts.insert(*address);
        }
        for (slot, writes) in &account.storage.storage {
            if !writes.writes.is_empty() {
                slots.insert((*address, *slot));
            }
        }
    }
}

impl Replay {
    /// Prepare a dump: build the pre-state store, convert the access lists, build envs.
    /// The dump's blocks move into the replay instead of being copied, so a loaded dump is
    /// held once.
    ///
    /// The point-evaluation precompile must run on the setup-free verifier, which the
    /// caller installs for the whole process before any precompile runs
    /// ([`gigagas_chain::install_kzg_verifier`]: gigagas's `main` at start-up, tests through
    /// `test_utils`); this installs nothing. A dump whose access lists name the precompile
    /// is refused without it ([`PrepareError::KzgVerifierNotInstalled`]), so no timed pass
    /// ever loads c-kzg's trusted setup.
    pub fn new(dump: Dump) -> Result<Self, PrepareError> {
        Self::with_resident_bases_limit(dump, RESIDENT_BASES_BYTES)
    }

    /// [`Replay::new`] keeping every block's base only if they take (estimated) at most
    /// `limit` bytes; `0` never keeps them, so each pass builds every batch's.
    pub fn with_resident_bases_limit(dump: Dump, limit: u64) -> Result<Self, PrepareError> {
        let spec = ChainSpec::from_config(&dump.meta.chain).map_err(PrepareError::Chain)?;
        if !gigagas_chain::kzg_verifier_installed() && calls_point_evaluation(&dump, &spec) {
            return Err(PrepareError::KzgVerifierNotInstalled);
        }
        let block_count = dump.block_count();
        let mut segments = Vec::with_capacity(dump.segments.len());
        let mut items = Vec::with_capacity(dump.transaction_count() + 2 * block_count);
        let mut block_items = Vec::with_capacity(block_count + 1);
        // The dump's blocks, moved out of their segments (each without its access list),
        // and per block its converted access list.
        let mut dump_blocks = Vec::with_capacity(block_count);
        let mut prepared = Vec::with_capacity(block_count);
        let mut base_bytes = 0u64;
        let mut witnesses = Vec::with_capacity(dump.segments.len());
        let mut root_lists = Vec::with_capacity(block_count);
        for mut segment in dump.segments {
            let witness = segment.witness.take();
            // The segment's pre-state first: it reads the segment whole (code deployed by
            // its blocks, their hashes). Then each access list is taken out of its block,
            // converted and dropped in turn, so the dump's decoded lists and their
            // converted form are never all held at once.
            let pre = PreStateDb::from_segment(&segment);
            let start = dump_blocks.len();
            for mut block in segment.blocks {
                let b = dump_blocks.len();
                let alloy_bal = std::mem::take(&mut block.access_list);
                let bal =
                    Bal::clone_from_alloy(&alloy_bal).map_err(|source| PrepareError::Bal {
                        block: block.number(),
                        source,
                    })?;
                root_lists.push(witness.is_some().then_some(alloy_bal));
                // Grouped by index only when a batch is verified (and dropped after), so
                // what verification needs does not grow with the dump; checked here.
                ExpectedWrites::check_indices(&bal, block.transactions.len() as u64 + 2).map_err(
                    |source| PrepareError::WriteIndex {
                        block: block.number(),
                        source,
                    },
                )?;
                base_bytes += bal.accounts.len() as u64 * BASE_BYTES_PER_ACCOUNT
                    + bal
                        .accounts
                        .values()
                        .map(|a| a.storage.storage.len() as u64)
                        .sum::<u64>()
                        * BASE_BYTES_PER_SLOT;
                block_items.push(items.len() as u32);
                let b = b as u32;
                items.push(WorkItem {
                    block: b,
                    kind: ItemKind::PreBlock,
                    gas_used: 0,
                    gas_limit: 0,
                    measured_ns: 0,
                });
                for (i, (tx, r)) in block.transactions.iter().zip(&block.receipts).enumerate() {
                    items.push(WorkItem {
                        block: b,
                        kind: ItemKind::Tx(i as u32),
                        gas_used: r.gas_used,
                        gas_limit: tx.inner().gas_limit(),
                        measured_ns: 0,
                    });
                }
                items.push(WorkItem {
                    block: b,
                    kind: ItemKind::PostBlock,
                    gas_used: 0,
                    gas_limit: 0,
                    measured_ns: 0,
                });
                prepared.push(bal);
                dump_blocks.push(block);
            }
            segments.push(ReplaySegment {
                pre,
                blocks: start..dump_blocks.len(),
            });
            witnesses.push(witness);
        }
        block_items.push(items.len() as u32);
        let blocks = dump_blocks
            .into_iter()
            .zip(prepared)
            .map(|(block, bal)| ReplayBlock {
                env: spec.evm_env(&block.header),
                withdrawals: block.withdrawals_opt().map(|w| w.to_vec()),
                header: block.header,
                bal: Arc::new(bal),
                transactions: block.transactions,
                receipts: block.receipts,
                ommers: block.ommers,
                headerless_ommers: block.headerless_ommers,
            })
            .collect();
        let mut replay = Self {
            spec,
            segments,
            blocks,
            items,
            block_items,
            resident_bases: None,
            witnesses,
            root_lists,
            id: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            },
        };
        if base_bytes <= limit && limit > 0 {
            let mut cursor = BaseCursor::new(&replay);
            let bases = (0..replay.blocks.len()).map(|b| cursor.base(b)).collect();
            replay.resident_bases = Some(bases);
        }
        Ok(replay)
    }

    /// Every block's base, when they are kept across passes ([`RESIDENT_BASES_BYTES`]);
    /// `None` when a pass builds each batch's ([`BaseCursor`]).
    pub fn resident_bases(&self) -> Option<&[PreStateDb]> {
        self.resident_bases.as_deref()
    }

    /// This replay's identity in the process (see [`crate::pass::PassCache`]).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Every block's [`Carried`] (what earlier blocks of its segment wrote of what its
    /// access list names, at its start), walking each segment once: what a pass reading
    /// its state from a source takes from memory instead of reading. A pass whose replay
    /// keeps no bases builds each batch's instead ([`CarriedCursor`]).
    pub fn carried_values(&self) -> Vec<Carried> {
        let mut cursor = CarriedCursor::new(self);
        (0..self.blocks.len()).map(|b| cursor.carried(b)).collect()
    }

    /// Block `b`'s access list as the dump holds it, for a block of a segment with a
    /// witness.
    pub(crate) fn root_list(&self, b: usize) -> Option<&alloy_eip7928::BlockAccessList> {
        self.root_lists[b].as_ref()
    }

    /// Blocks of segments with a witness (whose root a pass can compute), and all blocks.
    pub fn witness_coverage(&self) -> (usize, usize) {
        let covered = self
            .segments
            .iter()
            .zip(&self.witnesses)
            .filter(|(_, w)| w.is_some())
            .map(|(s, _)| s.blocks.len())
            .sum();
        (covered, self.blocks.len())
    }

    /// The index of the segment block `b` belongs to.
    pub fn segment_of(&self, b: usize) -> usize {
        self.segments.partition_point(|s| s.blocks.end <= b)
    }

    /// Chain rules of the dump.
    pub fn spec(&self) -> &ChainSpec {
        &self.spec
    }

    /// The dump's segments: independent runs of blocks, each from its own pre-state.
    pub fn segments(&self) -> &[ReplaySegment] {
        &self.segments
    }

    /// Blocks in order.
    pub fn blocks(&self) -> &[ReplayBlock] {
        &self.blocks
    }

    /// Record each item's execution time measured in a profiling pass (`ns[i]` is item
    /// `i`'s, indexed like [`Replay::items`]), for the oracle scheduler
    /// ([`crate::schedule::Oracle`]). Returns `false`, changing nothing, when `ns` does not
    /// have one time per item.
    pub fn set_measured_times(&mut self, ns: &[u64]) -> bool {
        if ns.len() != self.items.len() {
            return false;
        }
        for (item, ns) in self.items.iter_mut().zip(ns) {
            item.measured_ns = *ns;
        }
        true
    }

    /// Whether [`Replay::set_measured_times`] has recorded times.
    pub fn has_measured_times(&self) -> bool {
        self.items.iter().any(|w| w.measured_ns > 0)
    }

    /// All work items, block after block; [`WorkItem::block`] indexes [`Replay::blocks`].
    pub fn items(&self) -> &[WorkItem] {
        &self.items
    }

    /// The range of [`Replay::items`] that are block `b`'s items (pre-block, each
    /// transaction, post-block). Panics if `b` is not a block index.
    pub fn block_items(&self, b: usize) -> std::ops::Range<usize> {
        self.block_items[b] as usize..self.block_items[b + 1] as usize
    }

    /// Total gas used by all blocks (from the headers).
    pub fn total_gas(&self) -> u64 {
        self.blocks.iter().map(|b| b.header.gas_used).sum()
    }

    /// Number of transactions.
    pub fn transaction_count(&self) -> usize {
        self.blocks.iter().map(|b| b.transactions.len()).sum()
    }

    /// Item ranges of mega-blocks of `batch` consecutive blocks.
    pub fn batches(&self, batch: usize) -> Vec<std::ops::Range<usize>> {
        let batch = batch.max(1);
        (0..self.blocks.len())
            .step_by(batch)
            .map(|first| {
                let last = (first + batch).min(self.blocks.len());
                self.block_items(first).start..self.block_items(last - 1).end
            })
            .collect()
    }
}

/// Whether the access list of any block from Cancun on (where the EIP-4844
/// point-evaluation precompile exists) names its address 0x0a: revm's access-list builder
/// records every account a transaction loads, precompiles included, so a dump whose lists
/// do not name it never runs it.
pub fn calls_point_evaluation(dump: &Dump, spec: &ChainSpec) -> bool {
    use alloy_hardforks::EthereumHardforks;
    let address = revm::precompile::u64_to_address(0x0a);
    dump.blocks().any(|block| {
        spec.is_cancun_active_at_timestamp(block.header.timestamp)
            && block.access_list.iter().any(|a| a.address == address)
    })
}
