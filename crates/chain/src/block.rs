//! What executing a block takes besides the state, the same for every stage: the block's
//! parts ([`BlockInput`]), alloy-evm's execution context for them ([`execution_ctx`]), the
//! reward alloy-evm cannot pay ([`pay_headerless_ommer_share`]), and where in a block an
//! execution failed ([`BlockStage`]).

use crate::spec::ChainSpec;
use alloy_consensus::{Header, TxEnvelope, transaction::Recovered};
use alloy_eips::eip4895::Withdrawal;
use alloy_evm::eth::EthBlockExecutionCtx;
use gigagas_dump::DumpBlock;
use revm::{Database, DatabaseCommit, database::DatabaseCommitExt};
use std::borrow::Cow;

/// What executing a block needs besides the state.
#[derive(Debug, Clone, Copy)]
pub struct BlockInput<'a> {
    /// The header (fork, block env, beneficiary).
    pub header: &'a Header,
    /// Transactions with their senders, in block order.
    pub transactions: &'a [Recovered<TxEnvelope>],
    /// Withdrawals, `None` before Shanghai.
    pub withdrawals: Option<&'a [Withdrawal]>,
    /// Ommer headers (rewards before the Merge).
    pub ommers: &'a [Header],
    /// Ommers known only by hash: the miner's share is paid, their beneficiaries' is not.
    pub headerless_ommers: u32,
}

impl<'a> BlockInput<'a> {
    /// The input of a block as a dump stores it.
    pub fn of(block: &'a DumpBlock) -> Self {
        Self {
            header: &block.header,
            transactions: &block.transactions,
            withdrawals: block.withdrawals_opt(),
            ommers: &block.ommers,
            headerless_ommers: block.headerless_ommers,
        }
    }
}

/// alloy-evm's block execution context for a block.
pub fn execution_ctx<'a>(input: &BlockInput<'a>) -> EthBlockExecutionCtx<'a> {
    let h = input.header;
    EthBlockExecutionCtx {
        parent_hash: h.parent_hash,
        parent_beacon_block_root: h.parent_beacon_block_root,
        ommers: input.ommers,
        withdrawals: input.withdrawals.map(Cow::Borrowed),
        extra_data: h.extra_data.clone(),
        tx_count_hint: Some(input.transactions.len()),
        slot_number: h.slot_number,
    }
}

/// Pay the miner 1/32 of the base block reward for each ommer known only by hash (alloy-evm
/// pays the shares of the ommers it has headers for). Nothing after the Merge.
pub fn pay_headerless_ommer_share<DB: Database + DatabaseCommit>(
    db: &mut DB,
    spec: &ChainSpec,
    header: &Header,
    headerless_ommers: u32,
) -> Result<(), DB::Error> {
    if headerless_ommers == 0 {
        return Ok(());
    }
    let Some(base) = alloy_evm::block::calc::base_block_reward(spec, header.number) else {
        return Ok(());
    };
    db.increment_balances([(header.beneficiary, (base >> 5) * headerless_ommers as u128)])
}

/// Where in a block execution failed: the three kinds of step alloy-evm's block executor
/// takes, which recording and replay both report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockStage {
    /// Pre-block system calls (EIP-2935, EIP-4788).
    PreBlock,
    /// Transaction `i` (0-based).
    Tx(usize),
    /// Post-block changes: requests, rewards, withdrawals.
    PostBlock,
}

/// Worded as a replay's work items ([`gigagas_grid::ItemKind`]: one wording for both).
impl std::fmt::Display for BlockStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match *self {
            BlockStage::PreBlock => gigagas_grid::ItemKind::PreBlock,
            BlockStage::Tx(i) => gigagas_grid::ItemKind::Tx(i as u32),
            BlockStage::PostBlock => gigagas_grid::ItemKind::PostBlock,
        };
        kind.fmt(f)
    }
}
