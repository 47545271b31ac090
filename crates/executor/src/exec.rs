//! Executing one work item on its [`BalView`], and the sequential baseline.

use crate::{
    prestate::StateError,
    replay::{ItemKind, Replay, ReplayBlock, WorkItem},
    source::SegmentNodes,
    view::{BalView, Pre},
    work::tx_receipt,
};
use alloy_consensus::{ReceiptEnvelope, crypto::RecoveryError, transaction::Recovered};
use alloy_evm::{
    Evm, EvmFactory, FromRecoveredTx,
    block::{BlockExecutionError, BlockExecutor},
    eth::{
        EthBlockExecutor, EthEvm, EthEvmFactory, EthTxResult, receipt_builder::AlloyReceiptBuilder,
    },
    precompiles::PrecompilesMap,
};
use alloy_primitives::Address;
use gigagas_chain::{execution_ctx, pay_headerless_ommer_share};
use gigagas_grid::TimedWork;
use revm::{
    DatabaseCommit,
    context::{TxEnv, result::EVMError},
    database::State,
    database::bal::EvmDatabaseError,
    inspector::NoOpInspector,
    state::{
        EvmState,
        bal::{Bal, BlockAccessIndex},
    },
};
use std::sync::Arc;

/// What executing an item produced.
// Not boxed: a boxed receipt would be one more allocation per transaction inside the
// replay's timed window that the sequential loop (a Vec of receipts) does not make; a
// pass holds one batch's outputs at a time.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum ItemOutput {
    /// A transaction: its gas, status and state changes.
    Tx {
        /// Gas used (after refunds), as the receipt records it.
        gas_used: u64,
        /// Whether it succeeded.
        success: bool,
        /// Number of logs it emitted.
        logs: u64,
        /// Every account it loaded, with changes.
        state: EvmState,
        /// Its receipt with logs bloom, when the timed work includes receipts
        /// ([`TimedWork::receipts`]); the cumulative gas is the dump's.
        receipt: Option<ReceiptEnvelope>,
    },
    /// System work: the writes it made, at its block access index.
    System {
        /// Writes recorded by revm's BAL builder.
        writes: Bal,
    },
}

/// An execution that did not complete: where, and why ([`ExecFailure`]).
#[derive(Debug, Clone, thiserror::Error)]
#[error("block {block}, {item}: {failure}")]
pub struct ExecError {
    /// Block number.
    pub block: u64,
    /// Which item.
    pub item: ItemKind,
    /// What went wrong.
    #[source]
    pub failure: ExecFailure,
}

/// Why an item did not execute. Sources that cannot be cloned are shared (`Arc`), so an
/// error can be reported by verification while the run's outputs keep theirs.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExecFailure {
    /// The transaction's signature does not recover to a sender.
    #[error("sender recovery: {0}")]
    SenderRecovery(#[source] Arc<RecoveryError>),
    /// The signature recovers to another sender than the dump stores.
    #[error("sender recovery: the signature gives {recovered}, the dump says {stored}")]
    SenderMismatch {
        /// The sender the signature gives.
        recovered: Address,
        /// The sender the dump stores.
        stored: Address,
    },
    /// revm refused or could not run the transaction on its access-list view (invalid
    /// transaction, or a read of state the dump does not hold).
    #[error(transparent)]
    Transaction(EVMError<StateError>),
    /// alloy-evm's block executor failed: a system call, a sequential transaction, the
    /// post-block changes.
    #[error(transparent)]
    Block(Arc<BlockExecutionError>),
    /// Paying the share of ommers known only by hash read state the dump does not hold.
    #[error(transparent)]
    State(EvmDatabaseError<StateError>),
    /// The root phase is on and cannot start (no witness, or one that does not open).
    #[error("the state root: {0}")]
    NoRoot(crate::replay::RootSetupError),
}

impl ExecFailure {
    fn block(e: BlockExecutionError) -> Self {
        Self::Block(Arc::new(e))
    }
}

/// The EVM a worker runs transactions on.
type TxEvm<'a, P> = EthEvm<BalView<'a, P>, NoOpInspector, PrecompilesMap>;

/// How many EVMs (one per distinct EVM configuration: fork, chain) a worker keeps.
const KEPT_EVMS: usize = 32;

/// One worker's reusable EVMs: built once and kept across transactions, the way a client
/// keeps one EVM for a block, so a transaction pays neither for allocating frame stacks,
/// interpreter stacks, memory and journal, nor for cloning the block env. Between two
/// transactions only the database (the next transaction's [`BalView`]) is swapped in, and
/// the block env when the block changes; revm's `transact` leaves the journal empty.
///
/// One EVM is kept per configuration (a block's fork and chain): a batch whose order
/// moves between blocks of different forks, as the cost orders do on a mega-block of
/// blocks from many forks, switches to the EVM it already has instead of building one for
/// every transaction. After a failed transaction the EVMs are dropped and rebuilt, so
/// nothing carries over.
///
/// `P` is where the views read the state at the start of a block: a block base in memory
/// (the default) or a source read on demand.
pub struct ItemExecutor<'a, P: Pre = crate::PreStateDb> {
    /// The EVMs, each with the block its env belongs to.
    evms: Vec<(&'a ReplayBlock, TxEvm<'a, P>)>,
}

impl<P: Pre> Default for ItemExecutor<'_, P> {
    fn default() -> Self {
        Self { evms: Vec::new() }
    }
}

impl<P: Pre> std::fmt::Debug for ItemExecutor<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let blocks: Vec<u64> = self.evms.iter().map(|(b, _)| b.header.number).collect();
        f.debug_struct("ItemExecutor")
            .field("blocks", &blocks)
            .finish()
    }
}

impl<'a, P: Pre> ItemExecutor<'a, P> {
    /// An executor with no EVM yet (built on first use).
    pub fn new() -> Self {
        Self::default()
    }

    /// The EVM set up for `block` over `view`: the one last set up for `block`, else one
    /// of the same configuration given `block`'s env, else a new one.
    fn evm(&mut self, block: &'a ReplayBlock, view: BalView<'a, P>) -> &mut TxEvm<'a, P> {
        let kept = match self.evms.iter().position(|(b, _)| std::ptr::eq(*b, block)) {
            Some(i) => i,
            None => {
                match (self.evms.iter()).position(|(_, evm)| evm.ctx().cfg == block.env.cfg_env) {
                    Some(i) => {
                        let (current, evm) = &mut self.evms[i];
                        evm.ctx_mut().block.clone_from(&block.env.block_env);
                        *current = block;
                        i
                    }
                    None => {
                        if self.evms.len() == KEPT_EVMS {
                            self.evms.clear();
                        }
                        let evm = EthEvmFactory::default().create_evm(view, block.env.clone());
                        self.evms.push((block, evm));
                        return &mut self.evms.last_mut().expect("pushed above").1;
                    }
                }
            }
        };
        let evm = &mut self.evms[kept].1;
        evm.ctx_mut().journaled_state.database = view;
        evm
    }
}

impl Replay {
    /// The sender of `tx`: recovered from its signature when `work` says so (the timed
    /// step both paths share), else the dump's.
    fn sender(
        &self,
        block: &ReplayBlock,
        tx: &Recovered<alloy_consensus::TxEnvelope>,
        work: TimedWork,
    ) -> Result<Address, ExecFailure> {
        if work.recover_senders {
            let recovered = self
                .spec
                .recover_sender(block.header.number, tx.inner())
                .map_err(|e| ExecFailure::SenderRecovery(Arc::new(e)))?;
            // A dump whose stored sender disagrees with the signature is inconsistent:
            // recovering must not make it verify.
            if recovered != tx.signer() {
                return Err(ExecFailure::SenderMismatch {
                    recovered,
                    stored: tx.signer(),
                });
            }
            Ok(recovered)
        } else {
            Ok(tx.signer())
        }
    }

    /// Execute one work item on its own view of state, with the optional steps of `work`,
    /// on a worker's reusable EVM: `pre` is the block's state at its start — a base in
    /// memory (built from the dump's pre-state by a [`crate::BaseCursor`], or read from a
    /// [`crate::StateSource`]: its joined table read first) or a source read on demand.
    pub fn execute_item<'a, P: Pre>(
        &'a self,
        executor: &mut ItemExecutor<'a, P>,
        block: &'a ReplayBlock,
        item: &WorkItem,
        work: TimedWork,
        pre: &'a P,
    ) -> Result<ItemOutput, ExecError> {
        let index = item.bal_index(block.transactions.len());
        let err = |failure| ExecError {
            block: block.header.number,
            item: item.kind,
            failure,
        };
        let view = BalView::new(pre, &block.bal, index);
        match item.kind {
            ItemKind::Tx(i) => {
                let tx = &block.transactions[i as usize];
                let sender = self.sender(block, tx, work).map_err(err)?;
                let tx_env = TxEnv::from_recovered_tx(tx.inner(), sender);
                let out = match executor.evm(block, view).transact(tx_env) {
                    Ok(out) => out,
                    Err(e) => {
                        executor.evms.clear();
                        return Err(err(ExecFailure::Transaction(e)));
                    }
                };
                let success = out.result.is_success();
                let gas_used = out.result.gas().tx_gas_used();
                let logs = out.result.logs().len() as u64;
                let receipt = work.receipts.then(|| {
                    let cumulative = block.receipts[i as usize].cumulative_gas_used;
                    tx_receipt(tx.tx_type(), success, cumulative, out.result.into_logs())
                });
                Ok(ItemOutput::Tx {
                    gas_used,
                    success,
                    logs,
                    state: out.state,
                    receipt,
                })
            }
            ItemKind::PreBlock | ItemKind::PostBlock => {
                let mut state = State::builder()
                    .with_database(view)
                    .with_bal_builder()
                    .build();
                state.set_bal_index(BlockAccessIndex::new(index));
                {
                    let evm = EthEvmFactory::default().create_evm(&mut state, block.env.clone());
                    let input = block.input();
                    let mut ex = EthBlockExecutor::new(
                        evm,
                        execution_ctx(&input),
                        &self.spec,
                        AlloyReceiptBuilder::default(),
                    );
                    if item.kind == ItemKind::PreBlock {
                        ex.apply_pre_execution_changes()
                            .map_err(|e| err(ExecFailure::block(e)))?;
                    } else {
                        let (mut evm, _) = ex.finish().map_err(|e| err(ExecFailure::block(e)))?;
                        pay_headerless_ommer_share(
                            evm.db_mut(),
                            &self.spec,
                            &block.header,
                            block.headerless_ommers,
                        )
                        .map_err(|e| err(ExecFailure::State(e)))?;
                    }
                }
                let writes = state.take_built_bal().unwrap_or_default();
                Ok(ItemOutput::System { writes })
            }
        }
    }

    /// The sequential baseline, as a client executes: one revm `State` per segment over its
    /// pre-state (in memory, or read from `source` on demand: the first time the `State`
    /// needs each account, slot or code), no access list, blocks and transactions one after
    /// another, system calls, rewards and withdrawals included — and per transaction
    /// exactly the replay's timed work ([`crate::work`]): execute, commit the state changes,
    /// and only with `work`'s options recover the sender and build the receipt
    /// ([`tx_receipt`]). Calls `on_tx` after each transaction (timing happens inside; the
    /// callback should be cheap) and `after_block(segment, block)` after each block's
    /// transactions, on the loop's thread inside its window (the client loop's root is
    /// computed there); `clock` is paused around each decoding of blocks the replay does
    /// not keep.
    pub(crate) fn execute_sequential<S: crate::StateSource + ?Sized>(
        &self,
        work: TimedWork,
        mut source: Option<&mut S>,
        clock: &mut SequentialClock,
        after_block: &mut (
                 impl FnMut(usize, usize, &ReplayBlock, Option<&mut SegmentNodes<'_>>) + ?Sized
             ),
        on_tx: &mut (impl FnMut(SequentialTx) + ?Sized),
    ) -> Result<(), SequentialStop> {
        for (s, segment) in self.segments.iter().enumerate() {
            match source.as_deref_mut() {
                None => {
                    let mut state = State::builder().with_database_ref(&segment.pre).build();
                    let mut after = |b, block: &_, _: &mut _| after_block(s, b, block, None);
                    self.execute_sequential_segment(&mut state, s, work, clock, &mut after, on_tx)
                }
                Some(source) => {
                    let db = crate::SourceDb::new(source, s, &segment.pre);
                    let mut state = State::builder().with_database(db).build();
                    // The root reads the segment's trie nodes from the loop's source.
                    let mut after = |b, block: &_, db: &mut crate::SourceDb<'_, S>| {
                        let mut nodes = SegmentNodes {
                            source: &mut |trie, paths, out| {
                                db.source.trie_nodes(s, trie, paths, out)
                            },
                            ns: 0,
                        };
                        after_block(s, b, block, Some(&mut nodes));
                    };
                    self.execute_sequential_segment(&mut state, s, work, clock, &mut after, on_tx)
                }
            }?;
        }
        Ok(())
    }

    /// Segment `s`'s blocks on `state` (its pre-state, in memory or read from a source),
    /// one after another, `after_block(b, block, database)` after each; blocks the replay
    /// does not keep read again a few at a time with `clock` paused.
    fn execute_sequential_segment<DB: revm::Database<Error = StateError> + std::fmt::Debug>(
        &self,
        state: &mut State<DB>,
        s: usize,
        work: TimedWork,
        clock: &mut SequentialClock,
        after_block: &mut impl FnMut(usize, &ReplayBlock, &mut DB),
        on_tx: &mut (impl FnMut(SequentialTx) + ?Sized),
    ) -> Result<(), SequentialStop> {
        for chunk in self.chunks(self.segments[s].blocks.clone()) {
            let blocks = if self.keeps_blocks() {
                self.blocks(chunk)
            } else {
                clock.pause();
                let blocks = self.blocks(chunk);
                clock.resume();
                blocks
            }
            .map_err(SequentialStop::Blocks)?;
            for (b, block) in blocks.iter() {
                self.execute_sequential_block(state, b, block, work, on_tx)?;
                after_block(b, block, &mut state.database);
            }
            if !self.keeps_blocks() {
                // Dropped outside the window too.
                clock.pause();
                drop(blocks);
                clock.resume();
            }
        }
        Ok(())
    }

    fn execute_sequential_block<DB: revm::Database<Error = StateError> + std::fmt::Debug>(
        &self,
        state: &mut State<DB>,
        b: usize,
        block: &ReplayBlock,
        work: TimedWork,
        on_tx: &mut (impl FnMut(SequentialTx) + ?Sized),
    ) -> Result<(), ExecError> {
        let err = |item, failure| ExecError {
            block: block.header.number,
            item,
            failure,
        };
        let input = block.input();
        let evm = EthEvmFactory::default().create_evm(&mut *state, block.env.clone());
        let mut ex = EthBlockExecutor::new(
            evm,
            execution_ctx(&input),
            &self.spec,
            AlloyReceiptBuilder::default(),
        );
        ex.apply_pre_execution_changes()
            .map_err(|e| err(ItemKind::PreBlock, ExecFailure::block(e)))?;
        for (i, tx) in block.transactions.iter().enumerate() {
            let item = ItemKind::Tx(i as u32);
            let start = std::time::Instant::now();
            let sender = self.sender(block, tx, work).map_err(|m| err(item, m))?;
            let tx_env = TxEnv::from_recovered_tx(tx.inner(), sender);
            let EthTxResult {
                result: out,
                blob_gas_used,
                tx_type,
            } = ex
                .execute_transaction_without_commit((tx_env, tx))
                .map_err(|e| err(item, ExecFailure::block(e)))?;
            // What alloy-evm's `commit_transaction` does, without the receipt it always
            // builds: the block's gas counters, then the state changes into `State`.
            let gas = out.result.gas();
            let gas_used = gas.tx_gas_used();
            ex.block_regular_gas_used += gas.block_regular_gas_used();
            ex.block_state_gas_used += gas.block_state_gas_used();
            ex.cumulative_tx_gas_used += gas_used;
            ex.blob_gas_used = ex.blob_gas_used.saturating_add(blob_gas_used);
            ex.evm_mut().db_mut().commit(out.state);
            let success = out.result.is_success();
            let logs = out.result.logs().len() as u64;
            let receipt = work.receipts.then(|| {
                tx_receipt(
                    tx_type,
                    success,
                    ex.cumulative_tx_gas_used,
                    out.result.into_logs(),
                )
            });
            on_tx(SequentialTx {
                block: b,
                tx: i,
                result: TxResult {
                    gas_used,
                    success,
                    logs,
                },
                receipt,
                nanos: start.elapsed().as_nanos() as u64,
            });
        }
        let (mut evm, _) = ex
            .finish()
            .map_err(|e| err(ItemKind::PostBlock, ExecFailure::block(e)))?;
        pay_headerless_ommer_share(
            evm.db_mut(),
            &self.spec,
            &block.header,
            block.headerless_ommers,
        )
        .map_err(|e| err(ItemKind::PostBlock, ExecFailure::State(e)))?;
        Ok(())
    }
}

/// The sequential loop's window: stopped while the loop reads blocks again (between
/// blocks), the time stopped taken off its wall time.
pub(crate) struct SequentialClock {
    pub(crate) window: crate::window::Window,
    pub(crate) paused_at: Option<std::time::Instant>,
    pub(crate) paused_ns: u64,
}

impl SequentialClock {
    /// Stop the clock.
    fn pause(&mut self) {
        self.window.close();
        self.paused_at = Some(std::time::Instant::now());
    }

    /// Start it again.
    fn resume(&mut self) {
        if let Some(at) = self.paused_at.take() {
            self.paused_ns += at.elapsed().as_nanos() as u64;
        }
        self.window.open();
    }
}

/// Why the sequential loop stopped.
#[derive(Debug)]
pub(crate) enum SequentialStop {
    /// A block or transaction failed to execute.
    Exec(ExecError),
    /// The dump's blocks could not be read again.
    Blocks(crate::replay::BlockReadError),
}

impl From<ExecError> for SequentialStop {
    fn from(e: ExecError) -> Self {
        Self::Exec(e)
    }
}

/// What the sequential loop reports after each transaction.
#[derive(Debug)]
pub struct SequentialTx {
    /// Index into [`Replay::blocks`].
    pub block: usize,
    /// Index of the transaction in its block.
    pub tx: usize,
    /// Its gas, status and log count.
    pub result: TxResult,
    /// Its receipt, when the timed work includes receipts.
    pub receipt: Option<ReceiptEnvelope>,
    /// Time it took (sender, execution, commit, receipt), nanoseconds.
    pub nanos: u64,
}

/// What a sequential pass hands to verification.
#[derive(Debug, Default)]
pub struct SequentialOutputs {
    /// Every transaction's result, block after block.
    pub txs: Vec<TxResult>,
    /// Every transaction's receipt, block after block (empty without
    /// [`TimedWork::receipts`]).
    pub receipts: Vec<ReceiptEnvelope>,
    /// With the root phase on, each block's state root (or why it could not be computed),
    /// `None` for blocks of segments without a witness; empty with the phase off.
    pub roots: Vec<Option<Result<alloy_primitives::B256, gigagas_trie::RootError>>>,
}

/// What verification compares with a transaction's receipt summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxResult {
    /// Gas used (after refunds).
    pub gas_used: u64,
    /// Whether it succeeded.
    pub success: bool,
    /// Number of logs it emitted.
    pub logs: u64,
}
