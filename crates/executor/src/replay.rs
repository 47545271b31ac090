//! [`Replay`]: a dump loaded for execution, and the [`WorkItem`]s a run schedules.

use crate::{
    expected::{ExpectedWrites, WriteIndexError},
    prestate::{Carried, PreStateDb},
};
use alloy_consensus::{Header, Transaction, TxEnvelope, transaction::Recovered};
use alloy_eips::eip4895::Withdrawal;
use alloy_evm::EvmEnv;
use gigagas_chain::{BlockInput, ChainSpec};
use gigagas_dump::{Dump, DumpBlock, ReceiptSummary};
pub use gigagas_grid::{ItemKind, WorkItem, WorkItems};
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
    /// Building every block's base walks the blocks again, and they could not be read.
    #[error(transparent)]
    Blocks(#[from] BlockReadError),
}

/// One block, ready to execute.
#[derive(Debug, Clone)]
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
    /// For a block of a segment with a witness, its access list as the dump holds it (what
    /// the root phase applies); `None` for the others, whose lists are dropped once
    /// converted.
    pub(crate) root_list: Option<Arc<alloy_eip7928::BlockAccessList>>,
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

    /// `block` (its access list taken out as `list`) ready to execute: the list converted
    /// into revm's form and checked, the env built; `list` kept for the root phase when
    /// `witnessed`.
    fn prepare(
        spec: &ChainSpec,
        block: DumpBlock,
        list: alloy_eip7928::BlockAccessList,
        witnessed: bool,
    ) -> Result<Self, PrepareError> {
        let number = block.number();
        let bal = Bal::clone_from_alloy(&list).map_err(|source| PrepareError::Bal {
            block: number,
            source,
        })?;
        // Grouped by index only when a batch is verified (and dropped after), so what
        // verification needs does not grow with the dump; checked here.
        ExpectedWrites::check_indices(&bal, block.transactions.len() as u64 + 2).map_err(
            |source| PrepareError::WriteIndex {
                block: number,
                source,
            },
        )?;
        Ok(Self {
            env: spec.evm_env(&block.header),
            withdrawals: block.withdrawals_opt().map(|w| w.to_vec()),
            header: block.header,
            bal: Arc::new(bal),
            transactions: block.transactions,
            receipts: block.receipts,
            ommers: block.ommers,
            headerless_ommers: block.headerless_ommers,
            root_list: witnessed.then(|| Arc::new(list)),
        })
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
}

/// A dump prepared for replay: pre-state store, per-block envs and BALs, work items.
///
/// Built by [`Replay::new`] from a [`Dump`] it takes by value (its blocks move in), or
/// streamed from a file by [`Replay::load`], and read-only afterwards: the work items index
/// the blocks, and each block's items are contiguous ([`Replay::block_items`]).
///
/// What every pass reads of every block (its header, its items) is always held. What a
/// batch reads (transactions, receipts, access lists: [`ReplayBlock`]) is held decoded,
/// unless the replay was loaded from a file ([`Replay::load`]) whose blocks' estimate
/// exceeds [`ResidentLimits::blocks`]: it then holds none, and a pass reads each batch's
/// again from the file between batches, outside its timed window ([`Replay::blocks`]). A
/// replay prepared from a decoded [`Dump`] keeps its blocks decoded whatever their size:
/// the caller held them decoded already.
#[derive(Debug)]
pub struct Replay {
    pub(crate) spec: ChainSpec,
    pub(crate) segments: Vec<ReplaySegment>,
    /// Every block's header and fork.
    heads: Vec<BlockHead>,
    /// Every block's transactions, receipts and access lists: decoded, or left in the file.
    bodies: Bodies,
    /// The work items, block after block: read through [`Replay::items`] and
    /// [`Replay::block_items`].
    work: WorkItems,
    /// Every block's base, built once, when all of them fit in
    /// [`ResidentLimits::bases`]; `None`: each pass builds a batch's bases before it runs
    /// and drops them after ([`BaseCursor`]).
    resident_bases: Option<Vec<PreStateDb>>,
    /// Per segment, its witness (the state-root phase starts from it), if the dump has one.
    pub(crate) witnesses: Vec<Option<gigagas_dump::Witness>>,
    /// Tells this replay from any other in the process: what a [`crate::pass::PassCache`]
    /// is bound to, so that a cache built for one replay never serves another.
    id: u64,
}

/// What the replay keeps of every block for every pass.
#[derive(Debug)]
struct BlockHead {
    header: Header,
    /// The block's fork.
    spec: revm::primitives::hardfork::SpecId,
}

/// Every block's body: decoded, or left in the dump's file.
#[derive(Debug)]
enum Bodies {
    /// Decoded, kept across passes.
    Kept(Vec<ReplayBlock>),
    /// Read again from the file it was loaded from ([`Replay::load`] over the limit),
    /// decoded a batch at a time in order.
    Streamed(std::sync::Mutex<gigagas_dump::BlockReader>),
}

/// Why a replay that does not keep its blocks could not decode some of them again: its
/// dump file could not be read (or changed since it was loaded).
#[derive(Debug, Clone, thiserror::Error)]
pub enum BlockReadError {
    /// Reading the file.
    #[error("reading the dump's blocks again: {0}")]
    Read(Arc<gigagas_dump::DumpError>),
    /// A block read again does not prepare as it did at load.
    #[error("preparing a block read again: {0}")]
    Prepare(Arc<PrepareError>),
}

/// Consecutive blocks decoded for a pass (a batch's, or a run of blocks a set-up walks):
/// borrowed from the replay when it keeps every block decoded, else read again from the
/// file when asked for ([`Replay::blocks`]) and dropped with this value.
#[derive(Debug)]
pub struct Blocks<'r> {
    first: usize,
    held: std::borrow::Cow<'r, [ReplayBlock]>,
}

impl Blocks<'_> {
    /// Block `b` (an index of [`Replay::blocks`]' range: panics outside it).
    #[inline]
    pub fn get(&self, b: usize) -> &ReplayBlock {
        &self.held[b - self.first]
    }

    /// The block indices these are.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.held.len()
    }

    /// Each block with its index, in order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &ReplayBlock)> {
        (self.first..).zip(self.held.iter())
    }
}

/// How much a replay holds in memory for all its blocks at once (estimated bytes): over a
/// limit, what it covers follows the batch instead — built or decoded for each batch
/// between batches, outside the timed window, and dropped after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResidentLimits {
    /// Every block's base ([`RESIDENT_BASES_BYTES`] by default; `0`: never kept).
    pub bases: u64,
    /// Every block decoded: transactions, receipts, access lists in revm's form
    /// ([`RESIDENT_BLOCKS_BYTES`] by default; `0`: never kept, each batch's read again).
    pub blocks: u64,
}

impl Default for ResidentLimits {
    fn default() -> Self {
        Self {
            bases: RESIDENT_BASES_BYTES,
            blocks: RESIDENT_BLOCKS_BYTES,
        }
    }
}

/// The most memory (estimated) every block decoded may take for a replay loaded from a file
/// to keep them decoded across passes: 1 GiB, the bases' budget. Beyond it no block is held
/// and each pass reads a batch's blocks again from the file between batches.
pub const RESIDENT_BLOCKS_BYTES: u64 = 1 << 30;

/// How many blocks a walk over every block (the sequential loop, a set-up's walk) reads
/// again at once, when the replay does not keep them.
const DECODED_CHUNK: usize = 16;

/// Estimated heap bytes of a decoded block per byte of its RLP (block and access list), as
/// measured with heaptrack on a 2,000-block generated dump (CHANGELOG.md, *Memory on a
/// 2000-block dump*).
const DECODED_BYTES_PER_RLP_BYTE: u64 = 4;

/// The most memory (estimated) that every block's base may take for them to be built once
/// and kept across passes: 1 GiB. Beyond it, memory follows the batch: a pass builds each
/// batch's bases before the batch runs (outside the timed window) and drops them after.
pub const RESIDENT_BASES_BYTES: u64 = 1 << 30;

/// Estimated heap bytes of a block base per access-list account and per slot (measured
/// with heaptrack on a 2,000-block generated dump: CHANGELOG.md, *Memory on a 2000-block
/// dump*).
const BASE_BYTES_PER_ACCOUNT: u64 = 300;
const BASE_BYTES_PER_SLOT: u64 = 235;

/// Builds block bases in block order for one pass: the state at the start of each block,
/// advanced block by block from its segment's pre-state (only the pre-state's tables are
/// copied, once per segment per pass; each block's access list applied in turn). Asking
/// for an earlier block starts its segment over. [`CarriedCursor`] walks the same way.
#[derive(Debug)]
pub struct BaseCursor<'r> {
    replay: &'r Replay,
    /// The segment `running` belongs to and the next block it has not applied.
    at: Option<(usize, usize)>,
    running: PreStateDb,
}

impl<'r> BaseCursor<'r> {
    /// A cursor at the start of the replay.
    pub fn new(replay: &'r Replay) -> Self {
        Self {
            replay,
            at: None,
            running: PreStateDb::default(),
        }
    }

    /// Block `b`'s base (`block` is block `b`): the state at its start for what its access
    /// list names, joined with the list ([`PreStateDb::block_base`]). Fails only when an
    /// earlier block must be read again (a walk that starts over) and cannot be.
    pub fn base(&mut self, b: usize, block: &ReplayBlock) -> Result<PreStateDb, BlockReadError> {
        self.seek(b, |_| {})?;
        let base = self.running.block_base(&block.bal);
        self.pass(b, block);
        Ok(base)
    }

    /// Moves to the start of block `b`, telling `step` when its segment starts over and
    /// each earlier block's list before it is applied.
    fn seek(&mut self, b: usize, mut step: impl FnMut(Walked<'_>)) -> Result<(), BlockReadError> {
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
        if next < b {
            // Only when a walk starts over (read again here, when the replay keeps none).
            self.replay.each_block(next..b, |_, block| {
                step(Walked::Applying(&block.bal));
                self.running.apply_block(&block.bal);
            })?;
        }
        self.at = Some((segment, b));
        Ok(())
    }

    /// Applies block `b`, `block` (where [`BaseCursor::seek`] left it).
    fn pass(&mut self, b: usize, block: &ReplayBlock) {
        self.running.apply_block(&block.bal);
        self.at = self.at.map(|(s, _)| (s, b + 1));
    }
}

/// What [`BaseCursor::seek`] does on its way.
enum Walked<'a> {
    /// It started the segment over from its pre-state.
    Restarted,
    /// It applies this earlier block's list.
    Applying(&'a Bal),
}

/// Builds blocks' [`Carried`] values in block order for one pass, as [`BaseCursor`] builds
/// their bases: each segment's state advanced block by block, with the keys its blocks
/// wrote so far. Asking for an earlier block starts its segment over.
#[derive(Debug)]
pub struct CarriedCursor<'r> {
    walk: BaseCursor<'r>,
    written_accounts: rustc_hash::FxHashSet<alloy_primitives::Address>,
    written_slots: rustc_hash::FxHashSet<(alloy_primitives::Address, alloy_primitives::U256)>,
}

impl<'r> CarriedCursor<'r> {
    /// A cursor at the start of the replay.
    pub fn new(replay: &'r Replay) -> Self {
        Self {
            walk: BaseCursor::new(replay),
            written_accounts: Default::default(),
            written_slots: Default::default(),
        }
    }

    /// What earlier blocks of block `b`'s segment wrote of what its access list names, at
    /// its start (`block` is block `b`).
    pub fn carried(&mut self, b: usize, block: &ReplayBlock) -> Result<Carried, BlockReadError> {
        let (accounts, slots) = (&mut self.written_accounts, &mut self.written_slots);
        self.walk.seek(b, |step| match step {
            Walked::Restarted => {
                accounts.clear();
                slots.clear();
            }
            Walked::Applying(bal) => record_writes(bal, accounts, slots),
        })?;
        let bal = &block.bal;
        let carried = self
            .walk
            .running
            .carried(bal, &self.written_accounts, &self.written_slots);
        record_writes(bal, &mut self.written_accounts, &mut self.written_slots);
        self.walk.pass(b, block);
        Ok(carried)
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

/// Why a dump file cannot be loaded for replay.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file cannot be read or is not a valid dump.
    #[error(transparent)]
    Read(#[from] gigagas_dump::DumpError),
    /// The dump cannot be prepared for replay.
    #[error(transparent)]
    Prepare(#[from] PrepareError),
}

/// What a loaded dump's file and content are, beside its replay.
#[derive(Debug, Clone)]
pub struct LoadedDump {
    /// The file's size and checksum.
    pub info: gigagas_dump::DumpFileInfo,
    /// The dump's figures (blocks, transactions, gas, segments).
    pub summary: gigagas_dump::DumpSummary,
    /// The dump's name, from its metadata.
    pub name: String,
}

/// Builds a [`Replay`] block by block, as a dump's blocks stream past (from a file) or move
/// out of a decoded [`Dump`]: each block converted, checked and turned into work items,
/// then kept decoded, or (a file over the limit) dropped to be read again.
struct Builder {
    spec: ChainSpec,
    limits: ResidentLimits,
    heads: Vec<BlockHead>,
    items: Vec<WorkItem>,
    block_items: Vec<u32>,
    /// Every block decoded, when they are kept; `None` when they are read again.
    kept: Option<Vec<ReplayBlock>>,
    /// Estimated bytes of every block's base.
    base_bytes: u64,
    /// Per segment (in order), what its blocks add to its pre-state, and its blocks.
    added: Vec<(crate::prestate::SegmentBlocks, std::ops::Range<usize>)>,
    /// Whether a block from Cancun on names the point-evaluation precompile.
    calls_point_evaluation: bool,
}

impl Builder {
    /// A builder that keeps every block decoded when `keeps` (decided up front from the
    /// dump's size, so that no block is held when they are to be read again).
    fn new(spec: ChainSpec, limits: ResidentLimits, keeps: bool) -> Self {
        Self {
            spec,
            limits,
            heads: Vec::new(),
            items: Vec::new(),
            block_items: Vec::new(),
            kept: keeps.then(Vec::new),
            base_bytes: 0,
            added: Vec::new(),
            calls_point_evaluation: false,
        }
    }

    /// Adds `streamed`, the next block of a file, to `builder`, made at the first block:
    /// every block kept or none, decided from the file's announced size of its blocks'
    /// items (what the decoded estimate scales).
    fn streamed(
        builder: &mut Option<Self>,
        limits: ResidentLimits,
        streamed: gigagas_dump::StreamedBlock<'_>,
    ) -> Result<(), PrepareError> {
        let builder = match builder {
            Some(builder) => builder,
            None => {
                let spec = ChainSpec::from_config(&streamed.meta.chain)?;
                let keeps = streamed.items_len * DECODED_BYTES_PER_RLP_BYTE <= limits.blocks;
                builder.insert(Self::new(spec, limits, keeps))
            }
        };
        let witnessed = streamed.segment.witness.is_some();
        builder.block(streamed.segment_index, witnessed, streamed.block.clone())
    }

    /// Adds `block`, the next block, of segment `segment` (whose root the dump's witness
    /// covers with `witnessed`).
    fn block(
        &mut self,
        segment: usize,
        witnessed: bool,
        mut block: DumpBlock,
    ) -> Result<(), PrepareError> {
        let b = self.heads.len();
        if self.added.len() <= segment {
            self.added.push((Default::default(), b..b));
        }
        let added = &mut self.added[segment];
        added.0.add(&block);
        added.1.end = b + 1;
        self.calls_point_evaluation |= block_calls_point_evaluation(&block, &self.spec);
        let alloy_bal = std::mem::take(&mut block.access_list);
        let replay_block = ReplayBlock::prepare(&self.spec, block, alloy_bal, witnessed)?;
        let bal = &replay_block.bal;
        self.base_bytes += bal.accounts.len() as u64 * BASE_BYTES_PER_ACCOUNT
            + bal
                .accounts
                .values()
                .map(|a| a.storage.storage.len() as u64)
                .sum::<u64>()
                * BASE_BYTES_PER_SLOT;
        self.block_items.push(self.items.len() as u32);
        let block_index = b as u32;
        let system = |kind| WorkItem {
            block: block_index,
            kind,
            gas_used: 0,
            gas_limit: 0,
            measured_ns: 0,
        };
        self.items.push(system(ItemKind::PreBlock));
        for (i, (tx, r)) in replay_block
            .transactions
            .iter()
            .zip(&replay_block.receipts)
            .enumerate()
        {
            self.items.push(WorkItem {
                block: block_index,
                kind: ItemKind::Tx(i as u32),
                gas_used: r.gas_used,
                gas_limit: tx.inner().gas_limit(),
                measured_ns: 0,
            });
        }
        self.items.push(system(ItemKind::PostBlock));
        self.heads.push(BlockHead {
            header: replay_block.header.clone(),
            spec: replay_block.env.cfg_env.spec,
        });
        if let Some(kept) = &mut self.kept {
            kept.push(replay_block);
        }
        Ok(())
    }

    /// The replay of the blocks added, over `segments` (their tables and witnesses; their
    /// `blocks` are not read); blocks not kept are read again from the file through
    /// `reader`.
    fn finish(
        mut self,
        segments: Vec<gigagas_dump::Segment>,
        reader: Option<gigagas_dump::BlockReader>,
    ) -> Result<Replay, PrepareError> {
        if !gigagas_chain::kzg_verifier_installed() && self.calls_point_evaluation {
            return Err(PrepareError::KzgVerifierNotInstalled);
        }
        self.block_items.push(self.items.len() as u32);
        let mut added = self.added.into_iter();
        let (replay_segments, witnesses) = segments
            .into_iter()
            .map(|mut segment| {
                let (blocks_added, blocks) = added.next().unwrap_or_default();
                let pre = PreStateDb::from_tables(&segment, blocks_added);
                (ReplaySegment { pre, blocks }, segment.witness.take())
            })
            .unzip();
        self.items.shrink_to_fit();
        let bodies = match (self.kept, reader) {
            (Some(kept), _) => Bodies::Kept(kept),
            (None, Some(reader)) => Bodies::Streamed(std::sync::Mutex::new(reader)),
            (None, None) => unreachable!("a replay from a decoded dump keeps its blocks"),
        };
        let mut replay = Replay {
            spec: self.spec,
            segments: replay_segments,
            heads: self.heads,
            bodies,
            work: WorkItems::new(self.items, self.block_items)
                .expect("the builder cuts the items into their blocks"),
            resident_bases: None,
            witnesses,
            id: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            },
        };
        if self.base_bytes <= self.limits.bases && self.limits.bases > 0 {
            let mut cursor = BaseCursor::new(&replay);
            let bases =
                replay.collect_blocks(0..replay.block_count(), |b, block| cursor.base(b, block))?;
            drop(cursor);
            replay.resident_bases = Some(bases);
        }
        Ok(replay)
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
    /// `limit` bytes; `0` never keeps them, so each pass builds every batch's. The blocks,
    /// decoded already, are kept whatever their size (only [`Replay::load`] leaves them in
    /// the file).
    pub fn with_resident_bases_limit(dump: Dump, limit: u64) -> Result<Self, PrepareError> {
        let spec = ChainSpec::from_config(&dump.meta.chain).map_err(PrepareError::Chain)?;
        let limits = ResidentLimits {
            bases: limit,
            ..ResidentLimits::default()
        };
        let mut builder = Builder::new(spec, limits, true);
        let mut segments = Vec::with_capacity(dump.segments.len());
        for (s, mut segment) in dump.segments.into_iter().enumerate() {
            let witnessed = segment.witness.is_some();
            for block in std::mem::take(&mut segment.blocks) {
                builder.block(s, witnessed, block)?;
            }
            segments.push(segment);
        }
        builder.finish(segments, None)
    }

    /// Load a dump file for replay, streaming it: each block is decoded, checked and
    /// turned into work items as it streams past, then kept decoded when every block's
    /// fits [`ResidentLimits::blocks`]; else no block is held, and each pass reads a
    /// batch's blocks again from the file (through the handle opened here, outside its
    /// timed window: [`gigagas_dump::BlockReader`]). Never holds the whole dump decoded,
    /// nor the file's bytes.
    pub fn load(
        path: &std::path::Path,
        limits: ResidentLimits,
    ) -> Result<(Self, LoadedDump), LoadError> {
        let mut builder: Option<Builder> = None;
        let mut failed: Option<PrepareError> = None;
        let streamed = gigagas_dump::stream_dump_blocks(path, |streamed| {
            if failed.is_none() {
                failed = Builder::streamed(&mut builder, limits, streamed).err();
            }
        })?;
        if let Some(e) = failed {
            return Err(e.into());
        }
        let builder = match builder {
            Some(builder) => builder,
            None => Builder::new(
                ChainSpec::from_config(&streamed.meta.chain).map_err(PrepareError::Chain)?,
                limits,
                true,
            ),
        };
        let replay = builder.finish(streamed.segments, Some(streamed.reader))?;
        Ok((
            replay,
            LoadedDump {
                info: streamed.info,
                summary: streamed.summary,
                name: streamed.meta.name,
            },
        ))
    }

    /// Blocks `range` decoded: borrowed when the replay keeps every block decoded, else
    /// read again from the dump's file (never call it inside a timed window: a pass asks for
    /// each batch's between batches). Fails only when the file cannot be read again.
    pub fn blocks(&self, range: std::ops::Range<usize>) -> Result<Blocks<'_>, BlockReadError> {
        let first = range.start;
        let held = match &self.bodies {
            Bodies::Kept(blocks) => std::borrow::Cow::Borrowed(&blocks[range]),
            Bodies::Streamed(reader) => {
                let mut reader = reader
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let blocks = range.map(|b| {
                    let mut block = reader
                        .block(b)
                        .map_err(|e| BlockReadError::Read(Arc::new(e)))?;
                    // Prepared as at load.
                    let list = std::mem::take(&mut block.access_list);
                    let witnessed = self.witnesses[self.segment_of(b)].is_some();
                    ReplayBlock::prepare(&self.spec, block, list, witnessed)
                        .map_err(|e| BlockReadError::Prepare(Arc::new(e)))
                });
                std::borrow::Cow::Owned(blocks.collect::<Result<_, _>>()?)
            }
        };
        Ok(Blocks { first, held })
    }

    /// Calls `f` with each block of `range` in order, reading a few at a time again when
    /// the replay does not keep them (outside any timed window).
    pub fn each_block(
        &self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(usize, &ReplayBlock),
    ) -> Result<(), BlockReadError> {
        self.collect_blocks(range, |b, block| {
            f(b, block);
            Ok(())
        })
        .map(drop)
    }

    /// `f` of each block of `range`, in order, collected: the blocks read as
    /// [`Replay::each_block`] reads them; the first error of a read or of `f` ends the walk.
    pub(crate) fn collect_blocks<T>(
        &self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(usize, &ReplayBlock) -> Result<T, BlockReadError>,
    ) -> Result<Vec<T>, BlockReadError> {
        let mut out = Vec::with_capacity(range.len());
        for chunk in self.chunks(range) {
            let blocks = self.blocks(chunk)?;
            for (b, block) in blocks.iter() {
                out.push(f(b, block)?);
            }
        }
        Ok(out)
    }

    /// `range` cut into the runs of blocks a walk over it decodes at once: one run when the
    /// replay keeps every block decoded, else [`DECODED_CHUNK`] blocks at a time.
    pub(crate) fn chunks(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl Iterator<Item = std::ops::Range<usize>> {
        let step = match self.bodies {
            Bodies::Kept(_) => range.len().max(1),
            Bodies::Streamed(_) => DECODED_CHUNK,
        };
        let end = range.end;
        range
            .step_by(step)
            .map(move |first| first..(first + step).min(end))
    }

    /// Whether every block is kept decoded across passes; else each pass reads a batch's
    /// blocks again from the file between batches ([`Replay::load`]).
    pub fn keeps_blocks(&self) -> bool {
        matches!(self.bodies, Bodies::Kept(_))
    }

    /// Number of blocks.
    pub fn block_count(&self) -> usize {
        self.heads.len()
    }

    /// Block `b`'s header.
    pub fn header(&self, b: usize) -> &Header {
        &self.heads[b].header
    }

    /// Every block's header, in order.
    pub fn headers(&self) -> impl ExactSizeIterator<Item = &Header> + Clone {
        self.heads.iter().map(|h| &h.header)
    }

    /// Block `b`'s fork.
    pub fn spec_id(&self, b: usize) -> revm::primitives::hardfork::SpecId {
        self.heads[b].spec
    }

    /// The block access index `item` runs at ([`WorkItem::bal_index`], from the block's
    /// item count).
    pub fn bal_index(&self, item: &WorkItem) -> u64 {
        item.bal_index(self.tx_count(item.block as usize))
    }

    /// Block `b`'s transaction count.
    pub fn tx_count(&self, b: usize) -> usize {
        self.block_items(b).len() - 2
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
    pub fn carried_values(&self) -> Result<Vec<Carried>, BlockReadError> {
        let mut cursor = CarriedCursor::new(self);
        self.collect_blocks(0..self.block_count(), |b, block| cursor.carried(b, block))
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
        (covered, self.block_count())
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

    /// Record each item's execution time measured in a profiling pass (`ns[i]` is item
    /// `i`'s, indexed like [`Replay::items`]), for the oracle scheduler
    /// ([`crate::Oracle`]). Returns `false`, changing nothing, when `ns` does not
    /// have one time per item.
    pub fn set_measured_times(&mut self, ns: &[u64]) -> bool {
        if ns.len() != self.work.items().len() {
            return false;
        }
        for (item, ns) in self.work.items_mut().iter_mut().zip(ns) {
            item.measured_ns = *ns;
        }
        true
    }

    /// Whether [`Replay::set_measured_times`] has recorded times.
    pub fn has_measured_times(&self) -> bool {
        self.work.items().iter().any(|w| w.measured_ns > 0)
    }

    /// All work items, block after block; [`WorkItem::block`] indexes [`Replay::blocks`].
    pub fn items(&self) -> &[WorkItem] {
        self.work.items()
    }

    /// The work items with their blocks: what the schedulers order and the model
    /// projects.
    pub fn work_items(&self) -> &WorkItems {
        &self.work
    }

    /// The range of [`Replay::items`] that are block `b`'s items (pre-block, each
    /// transaction, post-block). Panics if `b` is not a block index.
    pub fn block_items(&self, b: usize) -> std::ops::Range<usize> {
        self.work.block_items(b)
    }

    /// Total gas used by all blocks (from the headers).
    pub fn total_gas(&self) -> u64 {
        self.headers().map(|h| h.gas_used).sum()
    }

    /// Number of transactions.
    pub fn transaction_count(&self) -> usize {
        self.work.items().len() - 2 * self.block_count()
    }

    /// Item ranges of mega-blocks of `batch` consecutive blocks.
    pub fn batches(&self, batch: usize) -> Vec<std::ops::Range<usize>> {
        self.work.batches(batch)
    }
}

/// Whether the access list of any block from Cancun on (where the EIP-4844
/// point-evaluation precompile exists) names its address 0x0a: revm's access-list builder
/// records every account a transaction loads, precompiles included, so a dump whose lists
/// do not name it never runs it.
pub fn calls_point_evaluation(dump: &Dump, spec: &ChainSpec) -> bool {
    dump.blocks()
        .any(|block| block_calls_point_evaluation(block, spec))
}

/// [`calls_point_evaluation`] for one block.
fn block_calls_point_evaluation(block: &DumpBlock, spec: &ChainSpec) -> bool {
    use alloy_hardforks::EthereumHardforks;
    let address = revm::precompile::u64_to_address(0x0a);
    spec.is_cancun_active_at_timestamp(block.header.timestamp)
        && block.access_list.iter().any(|a| a.address == address)
}
