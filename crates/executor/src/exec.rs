//! Executing one work item on its [`BalView`], and the sequential baseline.

use crate::{
    replay::{ItemKind, Replay, ReplayBlock, WorkItem},
    view::BalView,
};
use alloy_evm::{
    Evm, EvmFactory, FromRecoveredTx,
    block::BlockExecutor,
    eth::{EthBlockExecutor, EthEvm, EthEvmFactory, receipt_builder::AlloyReceiptBuilder},
    precompiles::PrecompilesMap,
};
use gigagas_record::{execution_ctx, pay_headerless_ommer_share};
use revm::{
    context::TxEnv,
    database::State,
    inspector::NoOpInspector,
    state::{
        EvmState,
        bal::{Bal, BlockAccessIndex},
    },
};

/// What executing an item produced.
#[derive(Debug)]
pub enum ItemOutput {
    /// A transaction: its gas, status and state changes.
    Tx {
        /// Gas used (after refunds), as the receipt records it.
        gas_used: u64,
        /// Whether it succeeded.
        success: bool,
        /// Every account it loaded, with changes.
        state: EvmState,
    },
    /// System work: the writes it made, at its block access index.
    System {
        /// Writes recorded by revm's BAL builder.
        writes: Bal,
    },
}

/// An execution that did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("block {block}, {item}: {message}")]
pub struct ExecError {
    /// Block number.
    pub block: u64,
    /// Which item.
    pub item: ItemKind,
    /// What went wrong.
    pub message: String,
}

/// The EVM a worker runs transactions on.
type TxEvm<'a> = EthEvm<BalView<'a>, NoOpInspector, PrecompilesMap>;

/// One worker's reusable EVM: built once and kept across transactions, the way a client
/// keeps one EVM for a block, so a transaction pays neither for allocating frame stacks,
/// interpreter stacks, memory and journal, nor for cloning the block env. Between two
/// transactions only the database (the next transaction's [`BalView`]) is swapped in, and
/// the block env when the block changes; revm's `transact` leaves the journal empty.
/// After a failed transaction the EVM is dropped and rebuilt, so nothing carries over.
#[derive(Default)]
pub struct ItemExecutor<'a> {
    /// The EVM and the block its env belongs to.
    evm: Option<(&'a ReplayBlock, TxEvm<'a>)>,
}

impl std::fmt::Debug for ItemExecutor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemExecutor")
            .field("block", &self.evm.as_ref().map(|(b, _)| b.header.number))
            .finish()
    }
}

impl<'a> ItemExecutor<'a> {
    /// An executor with no EVM yet (built on first use).
    pub fn new() -> Self {
        Self::default()
    }

    /// The EVM set up for `block` over `view`.
    fn evm(&mut self, block: &'a ReplayBlock, view: BalView<'a>) -> &mut TxEvm<'a> {
        match &mut self.evm {
            Some((current, evm)) if std::ptr::eq(*current, block) => {
                evm.ctx_mut().journaled_state.database = view
            }
            Some((current, evm)) if evm.ctx().cfg == block.env.cfg_env => {
                let ctx = evm.ctx_mut();
                ctx.block.clone_from(&block.env.block_env);
                ctx.journaled_state.database = view;
                *current = block;
            }
            slot => {
                *slot = Some((
                    block,
                    EthEvmFactory::default().create_evm(view, block.env.clone()),
                ))
            }
        }
        &mut self.evm.as_mut().expect("set above").1
    }
}

impl Replay {
    /// Execute one work item on its own view of state. `recover_senders` recovers the
    /// sender from the signature instead of taking it from the dump.
    pub fn execute_item(
        &self,
        item: &WorkItem,
        recover_senders: bool,
    ) -> Result<ItemOutput, ExecError> {
        self.execute_item_with(&mut ItemExecutor::new(), item, recover_senders)
    }

    /// [`Replay::execute_item`] on a worker's reusable EVM.
    pub fn execute_item_with<'a>(
        &'a self,
        executor: &mut ItemExecutor<'a>,
        item: &WorkItem,
        recover_senders: bool,
    ) -> Result<ItemOutput, ExecError> {
        let block = &self.blocks[item.block as usize];
        let index = item.bal_index(block);
        let err = |message: String| ExecError {
            block: block.header.number,
            item: item.kind,
            message,
        };
        let view = BalView::new(&block.base, &block.bal, index);
        match item.kind {
            ItemKind::Tx(i) => {
                let tx = &block.transactions[i as usize];
                let sender = if recover_senders {
                    self.spec
                        .recover_sender(block.header.number, tx.inner())
                        .map_err(|e| err(format!("sender recovery: {e}")))?
                } else {
                    tx.signer()
                };
                let tx_env = TxEnv::from_recovered_tx(tx.inner(), sender);
                let out = match executor.evm(block, view).transact(tx_env) {
                    Ok(out) => out,
                    Err(e) => {
                        executor.evm = None;
                        return Err(err(e.to_string()));
                    }
                };
                Ok(ItemOutput::Tx {
                    gas_used: out.result.gas().tx_gas_used(),
                    success: out.result.is_success(),
                    state: out.state,
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
                            .map_err(|e| err(e.to_string()))?;
                    } else {
                        let (mut evm, _) = ex.finish().map_err(|e| err(e.to_string()))?;
                        pay_headerless_ommer_share(
                            evm.db_mut(),
                            &self.spec,
                            &block.header,
                            block.headerless_ommers,
                        )
                        .map_err(|e| err(e.to_string()))?;
                    }
                }
                let writes = state.take_built_bal().unwrap_or_default();
                Ok(ItemOutput::System { writes })
            }
        }
    }

    /// The sequential baseline, as a client executes today: one revm `State` over the
    /// pre-state (no access list), blocks and transactions one after another, system
    /// calls and withdrawals included. Calls `on_tx(block, tx, gas_used, success, nanos)`
    /// after each transaction (timing happens inside; the callback should be cheap).
    pub fn execute_sequential(
        &self,
        recover_senders: bool,
        mut on_tx: impl FnMut(usize, usize, u64, bool, u64),
    ) -> Result<(), ExecError> {
        for segment in &self.segments {
            // Each segment starts from its own pre-state.
            let mut state = State::builder().with_database_ref(&segment.pre).build();
            for b in segment.blocks.clone() {
                self.execute_sequential_block(&mut state, b, recover_senders, &mut on_tx)?;
            }
        }
        Ok(())
    }

    fn execute_sequential_block(
        &self,
        state: &mut State<revm::database::WrapDatabaseRef<&crate::prestate::PreStateDb>>,
        b: usize,
        recover_senders: bool,
        on_tx: &mut impl FnMut(usize, usize, u64, bool, u64),
    ) -> Result<(), ExecError> {
        let block = &self.blocks[b];
        {
            let err = |item, message: String| ExecError {
                block: block.header.number,
                item,
                message,
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
                .map_err(|e| err(ItemKind::PreBlock, e.to_string()))?;
            for (i, tx) in block.transactions.iter().enumerate() {
                let item = ItemKind::Tx(i as u32);
                let start = std::time::Instant::now();
                let sender = if recover_senders {
                    self.spec
                        .recover_sender(block.header.number, tx.inner())
                        .map_err(|e| err(item, format!("sender recovery: {e}")))?
                } else {
                    tx.signer()
                };
                let mut success = false;
                let gas = ex
                    .execute_transaction_with_result_closure(
                        (TxEnv::from_recovered_tx(tx.inner(), sender), tx),
                        |r| {
                            success =
                                revm::context::result::ExecutionResult::is_success(&r.result.result)
                        },
                    )
                    .map_err(|e| err(item, e.to_string()))?;
                on_tx(
                    b,
                    i,
                    gas.tx_gas_used(),
                    success,
                    start.elapsed().as_nanos() as u64,
                );
            }
            let (mut evm, _) = ex
                .finish()
                .map_err(|e| err(ItemKind::PostBlock, e.to_string()))?;
            pay_headerless_ommer_share(
                evm.db_mut(),
                &self.spec,
                &block.header,
                block.headerless_ommers,
            )
            .map_err(|e| err(ItemKind::PostBlock, e.to_string()))?;
        }
        Ok(())
    }
}
