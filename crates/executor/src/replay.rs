//! [`Replay`]: a dump loaded for execution, and the [`WorkItem`]s a run schedules.

use crate::{
    expected::{ExpectedWrites, WriteIndexError},
    prestate::PreStateDb,
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
    pub header: Header,
    /// Fork rules and block env.
    pub env: EvmEnv,
    /// The block access list in revm's form (shared: revm's `BalState` reads it from an
    /// `Arc`).
    pub bal: Arc<Bal>,
    /// Transactions with their senders.
    pub transactions: Vec<Recovered<TxEnvelope>>,
    /// Receipt summaries (what verification compares against).
    pub receipts: Vec<ReceiptSummary>,
    /// Withdrawals, `None` before Shanghai.
    pub withdrawals: Option<Vec<Withdrawal>>,
    /// Ommer headers (pre-Merge rewards).
    pub ommers: Vec<Header>,
    /// Ommers known only by hash (the miner's share is paid).
    pub headerless_ommers: u32,
    /// State at the start of the block, for what the access list names.
    pub base: PreStateDb,
    /// The access list's writes grouped by block access index (for verification).
    pub expected: ExpectedWrites,
    /// The values at the start of the block of what its access list names and earlier
    /// blocks of its segment wrote: what a pass reading its state from a
    /// [`StateSource`](crate::StateSource) takes from memory instead (a client keeps its
    /// own recent writes). Empty for a segment's first block.
    pub carried: Carried,
}

/// Values at the start of a block that earlier blocks of its segment wrote
/// ([`ReplayBlock::carried`]).
#[derive(Debug, Default, Clone)]
pub struct Carried {
    accounts: rustc_hash::FxHashMap<alloy_primitives::Address, Option<revm::state::AccountInfo>>,
    slots: rustc_hash::FxHashMap<
        (alloy_primitives::Address, alloy_primitives::U256),
        alloy_primitives::U256,
    >,
}

impl Carried {
    pub(crate) fn insert_account(
        &mut self,
        address: alloy_primitives::Address,
        info: Option<revm::state::AccountInfo>,
    ) {
        self.accounts.insert(address, info);
    }

    pub(crate) fn insert_slot(
        &mut self,
        address: alloy_primitives::Address,
        slot: alloy_primitives::U256,
        value: alloy_primitives::U256,
    ) {
        self.slots.insert((address, slot), value);
    }
}

impl ReplayBlock {
    /// The account's value at the start of the block if an earlier block of the segment
    /// wrote it (`Some(None)`: it does not exist).
    pub fn carried_account(
        &self,
        address: &alloy_primitives::Address,
    ) -> Option<&Option<revm::state::AccountInfo>> {
        self.carried.accounts.get(address)
    }

    /// The slot's value at the start of the block if an earlier block of the segment
    /// wrote it.
    pub fn carried_slot(
        &self,
        address: &alloy_primitives::Address,
        slot: &alloy_primitives::U256,
    ) -> Option<alloy_primitives::U256> {
        self.carried.slots.get(&(*address, *slot)).copied()
    }

    /// Every carried account.
    pub fn carried_accounts(
        &self,
    ) -> impl Iterator<
        Item = (
            &alloy_primitives::Address,
            &Option<revm::state::AccountInfo>,
        ),
    > {
        self.carried.accounts.iter()
    }

    /// Every carried slot.
    pub fn carried_slots(
        &self,
    ) -> impl Iterator<
        Item = (
            &(alloy_primitives::Address, alloy_primitives::U256),
            &alloy_primitives::U256,
        ),
    > {
        self.carried.slots.iter()
    }
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
    pub pre: PreStateDb,
    /// Its range of [`Replay::blocks`].
    pub blocks: std::ops::Range<usize>,
}

/// One independently executable unit: 32 bytes, so a batch's items stay in few cache lines.
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
        let spec = ChainSpec::from_config(&dump.meta.chain).map_err(PrepareError::Chain)?;
        if !gigagas_chain::kzg_verifier_installed() && calls_point_evaluation(&dump, &spec) {
            return Err(PrepareError::KzgVerifierNotInstalled);
        }
        let mut segments = Vec::with_capacity(dump.segments.len());
        let mut items = Vec::with_capacity(dump.transaction_count() + 2 * dump.blocks.len());
        let mut block_items = Vec::with_capacity(dump.blocks.len() + 1);
        // Per block: the base state and access list; the pre-state is read from the dump
        // before its blocks move out.
        let mut prepared = Vec::with_capacity(dump.blocks.len());
        for (segment, range) in dump.segment_ranges() {
            let pre = PreStateDb::from_segment(&dump, segment, range.clone());
            // Advanced block by block; shares the analysed bytecode with `pre`.
            let mut running = pre.clone();
            // What earlier blocks of the segment wrote, for each block's `carried`.
            let mut written_accounts = rustc_hash::FxHashSet::default();
            let mut written_slots = rustc_hash::FxHashSet::default();
            for b in range.clone() {
                let (block, alloy_bal) = (&dump.blocks[b], &dump.access_lists[b]);
                let bal = Bal::clone_from_alloy(alloy_bal).map_err(|source| PrepareError::Bal {
                    block: block.number(),
                    source,
                })?;
                let expected = ExpectedWrites::from_bal(&bal, block.transactions.len() as u64 + 2)
                    .map_err(|source| PrepareError::WriteIndex {
                        block: block.number(),
                        source,
                    })?;
                let base = running.block_base(&bal);
                let carried = base.carried(&bal, &written_accounts, &written_slots);
                for (address, account) in bal.accounts.iter() {
                    let info = &account.account_info;
                    if !(info.balance.writes.is_empty()
                        && info.nonce.writes.is_empty()
                        && info.code.writes.is_empty())
                    {
                        written_accounts.insert(*address);
                    }
                    for (slot, writes) in &account.storage.storage {
                        if !writes.writes.is_empty() {
                            written_slots.insert((*address, *slot));
                        }
                    }
                }
                running.apply_block(&bal);
                block_items.push(items.len() as u32);
                let b = b as u32;
                items.push(WorkItem {
                    block: b,
                    kind: ItemKind::PreBlock,
                    gas_used: 0,
                    gas_limit: 0,
                });
                for (i, (tx, r)) in block.transactions.iter().zip(&block.receipts).enumerate() {
                    items.push(WorkItem {
                        block: b,
                        kind: ItemKind::Tx(i as u32),
                        gas_used: r.gas_used,
                        gas_limit: tx.inner().gas_limit(),
                    });
                }
                items.push(WorkItem {
                    block: b,
                    kind: ItemKind::PostBlock,
                    gas_used: 0,
                    gas_limit: 0,
                });
                prepared.push((bal, base, expected, carried));
            }
            segments.push(ReplaySegment { pre, blocks: range });
        }
        block_items.push(items.len() as u32);
        let blocks = dump
            .blocks
            .into_iter()
            .zip(prepared)
            .map(|(block, (bal, base, expected, carried))| ReplayBlock {
                env: spec.evm_env(&block.header),
                withdrawals: block.withdrawals_opt().map(|w| w.to_vec()),
                header: block.header,
                bal: Arc::new(bal),
                base,
                transactions: block.transactions,
                receipts: block.receipts,
                ommers: block.ommers,
                headerless_ommers: block.headerless_ommers,
                expected,
                carried,
            })
            .collect();
        Ok(Self {
            spec,
            segments,
            blocks,
            items,
            block_items,
        })
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
    dump.blocks
        .iter()
        .zip(&dump.access_lists)
        .any(|(block, list)| {
            spec.is_cancun_active_at_timestamp(block.header.timestamp)
                && list.iter().any(|a| a.address == address)
        })
}
