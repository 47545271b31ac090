//! The gigagas dump: everything needed to replay a range of blocks without a node.
//!
//! A [`Dump`] holds the blocks (with recovered senders), their receipts, one EIP-7928
//! block access list per block, the 256 block hashes before the first block (for
//! `BLOCKHASH`), and the pre-state at the parent of the first block for every account and
//! slot the access lists touch — including accounts that do not exist, recorded as absent,
//! so a replay can tell "empty" from "missing from the dump".
//!
//! On disk a dump is one file (see [`format`]): a fixed header with magic bytes, format
//! version and an xxh3 checksum of the content, followed by zstd-compressed sections.
//! Files are written to a temporary name and renamed into place, so an interrupted write
//! never leaves a file that looks whole.

#![warn(missing_docs)]

mod chain;
mod error;
pub mod format;
mod summary;

pub use chain::{ChainConfig, ForkActivation};
pub use error::DumpError;
pub use format::{DumpFileInfo, FORMAT_VERSION, MAGIC, decode_dump, encode_dump, read_dump, write_dump};
pub use summary::DumpSummary;

use alloy_consensus::{Header, TxEnvelope, transaction::Recovered};
use alloy_eip7928::BlockAccessList;
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Address, B256, Bytes, U256};
use std::collections::BTreeMap;

/// A complete, self-contained replay input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dump {
    /// Name, provenance and chain rules.
    pub meta: DumpMeta,
    /// The blocks, in ascending order with no gaps.
    pub blocks: Vec<DumpBlock>,
    /// One EIP-7928 block access list per block, in the same order as [`Dump::blocks`].
    pub access_lists: Vec<BlockAccessList>,
    /// Hashes of the (up to) 256 blocks before the first block, ascending by number.
    pub block_hashes: Vec<(u64, B256)>,
    /// State at the parent of the first block, restricted to what the access lists touch.
    pub pre_state: PreState,
}

/// Descriptive data about a dump: where it came from and which chain rules apply.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DumpMeta {
    /// Short name, e.g. `mainnet-like`.
    pub name: String,
    /// Free-form provenance, e.g. `source = generate`, `profile = mainnet-like`, `seed = 1`.
    /// Sorted, so the encoding is deterministic.
    pub provenance: BTreeMap<String, String>,
    /// Chain id and fork activations.
    pub chain: ChainConfig,
}

/// One block with its transactions (senders recovered), withdrawals and receipts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpBlock {
    /// The consensus header.
    pub header: Header,
    /// Transactions in block order, each with its sender.
    pub transactions: Vec<Recovered<TxEnvelope>>,
    /// Withdrawals (empty before Shanghai; present iff the header has a withdrawals root).
    pub withdrawals: Vec<Withdrawal>,
    /// One receipt summary per transaction.
    pub receipts: Vec<ReceiptSummary>,
}

impl DumpBlock {
    /// Block number.
    pub fn number(&self) -> u64 {
        self.header.number
    }

    /// Withdrawals as the block body carries them: `None` before Shanghai.
    pub fn withdrawals_opt(&self) -> Option<&[Withdrawal]> {
        self.header.withdrawals_root.map(|_| self.withdrawals.as_slice())
    }
}

/// What a replay needs from a receipt to verify a transaction.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, alloy_rlp::RlpEncodable, alloy_rlp::RlpDecodable,
)]
pub struct ReceiptSummary {
    /// `true` if the transaction succeeded.
    pub success: bool,
    /// Gas used by this transaction alone.
    pub gas_used: u64,
    /// Cumulative gas used in the block up to and including this transaction.
    pub cumulative_gas_used: u64,
    /// Number of logs emitted.
    pub logs: u64,
}

/// Account fields at the parent of the first block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountState {
    /// Balance in wei.
    pub balance: U256,
    /// Nonce.
    pub nonce: u64,
    /// Keccak of the code (`KECCAK_EMPTY` for none).
    pub code_hash: B256,
}

/// One account of the pre-state; `state == None` records that the account does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreAccount {
    /// Address.
    pub address: Address,
    /// Fields, or `None` if the account is absent from the state.
    pub state: Option<AccountState>,
}

/// One storage slot of the pre-state (a slot that was never written is recorded as zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreSlot {
    /// Account address.
    pub address: Address,
    /// Slot key.
    pub slot: U256,
    /// Value at the parent of the first block.
    pub value: U256,
}

/// State at the parent of the first block for everything the access lists touch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreState {
    /// Accounts sorted by address.
    pub accounts: Vec<PreAccount>,
    /// Slots sorted by (address, slot).
    pub storage: Vec<PreSlot>,
    /// Bytecode once per code hash, sorted by hash.
    pub codes: Vec<(B256, Bytes)>,
}

impl PreState {
    /// Sort every table into its canonical order (needed for deterministic encoding).
    pub fn canonicalize(&mut self) {
        self.accounts.sort_unstable_by_key(|a| a.address);
        self.accounts.dedup_by_key(|a| a.address);
        self.storage.sort_unstable_by_key(|s| (s.address, s.slot));
        self.storage.dedup_by_key(|s| (s.address, s.slot));
        self.codes.sort_unstable_by_key(|c| c.0);
        self.codes.dedup_by_key(|c| c.0);
    }

    /// Total bytes of bytecode.
    pub fn code_bytes(&self) -> usize {
        self.codes.iter().map(|(_, c)| c.len()).sum()
    }
}

impl Dump {
    /// Number of transactions in all blocks.
    pub fn transaction_count(&self) -> usize {
        self.blocks.iter().map(|b| b.transactions.len()).sum()
    }

    /// Total gas used by all blocks (from the headers).
    pub fn total_gas(&self) -> u64 {
        self.blocks.iter().map(|b| b.header.gas_used).sum()
    }

    /// Check the invariants a replay relies on; [`decode_dump`] calls this.
    pub fn validate(&self) -> Result<(), String> {
        if self.access_lists.len() != self.blocks.len() {
            return Err(format!(
                "{} block access lists for {} blocks",
                self.access_lists.len(),
                self.blocks.len()
            ));
        }
        for pair in self.blocks.windows(2) {
            if pair[1].header.number != pair[0].header.number + 1 {
                return Err(format!(
                    "block {} follows block {}: blocks must be consecutive",
                    pair[1].header.number, pair[0].header.number
                ));
            }
        }
        for block in &self.blocks {
            if block.receipts.len() != block.transactions.len() {
                return Err(format!(
                    "block {}: {} receipts for {} transactions",
                    block.number(),
                    block.receipts.len(),
                    block.transactions.len()
                ));
            }
            let mut cumulative = 0u64;
            for (i, r) in block.receipts.iter().enumerate() {
                cumulative = cumulative.saturating_add(r.gas_used);
                if r.cumulative_gas_used != cumulative {
                    return Err(format!(
                        "block {} tx {i}: cumulative gas {} but the gas used so far adds up to {cumulative}",
                        block.number(),
                        r.cumulative_gas_used
                    ));
                }
            }
            if block.header.withdrawals_root.is_none() && !block.withdrawals.is_empty() {
                return Err(format!(
                    "block {} has withdrawals but no withdrawals root",
                    block.number()
                ));
            }
        }
        for pair in self.block_hashes.windows(2) {
            if pair[1].0 <= pair[0].0 {
                return Err("block hashes are not in ascending order".into());
            }
        }
        Ok(())
    }

    /// A summary for `gigagas inspect`.
    pub fn summary(&self) -> DumpSummary {
        DumpSummary::of(self)
    }
}
