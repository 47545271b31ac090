//! Reth's own primitives (`reth-primitives-traits`, from reth-core) and the dump's types.
//!
//! A block from reth is a block here: [`DumpBlock::from_recovered_block`] takes reth's
//! [`RecoveredBlock`] (header, body, senders) as it comes out of a reth node or its
//! database, and [`DumpBlock::to_recovered_block`] hands a dump's block to reth's APIs. An
//! [`AccountState`] converts to and from reth's [`Account`] (code hash `None` = no code),
//! and a [`PreSlot`] gives reth's [`StorageEntry`]. The dump keeps its own compact types
//! (fixed-size records with the address inside, absent accounts recorded as absent) for
//! the file format; these conversions are the seam.
//!
//! Behind the `reth` feature, off by default: nothing in gigagas reads blocks from reth, so
//! the dump crate (which every other crate builds on) does not pull reth's primitives in
//! unless asked.

use crate::{AccountState, DumpBlock, PreSlot, ReceiptSummary};
use alloy_consensus::{BlockBody, Header, TxEnvelope, transaction::Recovered};
use alloy_eip7928::BlockAccessList;
use alloy_eips::eip4895::Withdrawals;
use alloy_primitives::{B256, KECCAK256_EMPTY};
pub use reth_primitives_traits::{Account, RecoveredBlock, StorageEntry};

/// The Ethereum block type reth uses: alloy's block of transaction envelopes.
pub type EthBlock = alloy_consensus::Block<TxEnvelope>;

impl DumpBlock {
    /// This block as reth's [`RecoveredBlock`]: header, body (transactions, ommers,
    /// withdrawals when the header commits to them) and each transaction's sender.
    pub fn to_recovered_block(&self) -> RecoveredBlock<EthBlock> {
        let body = BlockBody {
            transactions: self
                .transactions
                .iter()
                .map(|t| t.inner().clone())
                .collect(),
            ommers: self.ommers.clone(),
            withdrawals: self
                .header
                .withdrawals_root
                .map(|_| Withdrawals::new(self.withdrawals.clone())),
        };
        let senders = self.transactions.iter().map(|t| t.signer()).collect();
        RecoveredBlock::new_unhashed(
            EthBlock {
                header: self.header.clone(),
                body,
            },
            senders,
        )
    }

    /// A block from reth with the receipt summaries of its transactions (one each, in
    /// order) and its block access list (reth's block body does not carry one). Ommers
    /// named only by hash do not occur in a full block: none are recorded.
    pub fn from_recovered_block(
        block: RecoveredBlock<EthBlock>,
        receipts: Vec<ReceiptSummary>,
        access_list: BlockAccessList,
    ) -> Self {
        let senders = block.senders().to_vec();
        let EthBlock { header, body } = block.into_block();
        let header: Header = header;
        Self {
            header,
            transactions: body
                .transactions
                .into_iter()
                .zip(senders)
                .map(|(tx, sender)| Recovered::new_unchecked(tx, sender))
                .collect(),
            withdrawals: body.withdrawals.map(|w| w.into_inner()).unwrap_or_default(),
            receipts,
            ommers: body.ommers,
            headerless_ommers: 0,
            access_list,
        }
    }
}

impl From<Account> for AccountState {
    fn from(account: Account) -> Self {
        Self {
            balance: account.balance,
            nonce: account.nonce,
            code_hash: account.bytecode_hash.unwrap_or(KECCAK256_EMPTY),
        }
    }
}

impl From<AccountState> for Account {
    fn from(state: AccountState) -> Self {
        Self {
            nonce: state.nonce,
            balance: state.balance,
            bytecode_hash: (state.code_hash != KECCAK256_EMPTY).then_some(state.code_hash),
        }
    }
}

impl PreSlot {
    /// The slot as reth stores it under its account: key and value.
    pub fn storage_entry(&self) -> StorageEntry {
        StorageEntry {
            key: B256::from(self.slot),
            value: self.value,
        }
    }
}
