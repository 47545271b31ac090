//! What a block's access list says each item writes, grouped by block access index: the
//! reference [`crate::Replay::verify_all`] compares every execution with. Built for a
//! block when its batch is verified and dropped after, so verification holds one batch's
//! worth (grouped by index, every access list entry is copied into its own map: held for
//! every block of a 2000-block dump up front, this was 4 GB, the largest part of a run's
//! heap).

use alloy_primitives::{Address, B256, U256};
use revm::state::bal::{AccountBal, Bal, BlockAccessIndex};
use std::collections::BTreeMap;

/// An access list write at a block access index the block does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{address} has a write at block access index {index}, past the block's last index {last}")]
pub struct WriteIndexError {
    /// The account written.
    pub address: Address,
    /// The index the access list names.
    pub index: u64,
    /// The block's last index (transactions + 1: the post-block changes).
    pub last: u64,
}

/// The writes one account receives at one block access index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountWrites {
    /// New balance.
    pub balance: Option<U256>,
    /// New nonce.
    pub nonce: Option<u64>,
    /// New code hash.
    pub code: Option<B256>,
    /// New storage values by slot.
    pub storage: BTreeMap<U256, U256>,
}

impl AccountWrites {
    /// `true` if nothing is written.
    pub fn is_empty(&self) -> bool {
        self.balance.is_none()
            && self.nonce.is_none()
            && self.code.is_none()
            && self.storage.is_empty()
    }
}

/// Writes grouped by block access index: `by_index[i]` is what index `i` writes.
#[derive(Debug, Clone, Default)]
pub struct ExpectedWrites {
    by_index: Vec<BTreeMap<Address, AccountWrites>>,
}

fn exact<T: PartialEq + Clone>(
    writes: &[(BlockAccessIndex, T)],
    index: BlockAccessIndex,
) -> Option<T> {
    writes
        .iter()
        .find(|(i, _)| *i == index)
        .map(|(_, v)| v.clone())
}

pub(crate) fn account_writes_at(account: &AccountBal, index: BlockAccessIndex) -> AccountWrites {
    AccountWrites {
        balance: exact(&account.account_info.balance.writes, index),
        nonce: exact(&account.account_info.nonce.writes, index),
        code: exact(&account.account_info.code.writes, index).map(|(h, _)| h),
        storage: account
            .storage
            .storage
            .iter()
            .filter_map(|(slot, w)| exact(&w.writes, index).map(|v| (*slot, v)))
            .collect(),
    }
}

impl ExpectedWrites {
    /// Group a block's access list by index; `indices` is `transactions + 2`. A write at an
    /// index past the block's last one (`indices - 1`, the post-block changes) is an error:
    /// it cannot belong to the block, and a crafted index must not size an allocation.
    pub fn from_bal(bal: &Bal, indices: u64) -> Result<Self, WriteIndexError> {
        let mut by_index = vec![BTreeMap::new(); indices as usize];
        for (address, account) in bal.accounts.iter() {
            let mut seen: Vec<BlockAccessIndex> = Vec::new();
            seen.extend(account.account_info.balance.writes.iter().map(|(i, _)| *i));
            seen.extend(account.account_info.nonce.writes.iter().map(|(i, _)| *i));
            seen.extend(account.account_info.code.writes.iter().map(|(i, _)| *i));
            for w in account.storage.storage.values() {
                seen.extend(w.writes.iter().map(|(i, _)| *i));
            }
            seen.sort_unstable();
            seen.dedup();
            for index in seen {
                let Some(at) = by_index.get_mut(index.get() as usize) else {
                    return Err(WriteIndexError {
                        address: *address,
                        index: index.get(),
                        last: indices.saturating_sub(1),
                    });
                };
                at.insert(*address, account_writes_at(account, index));
            }
        }
        Ok(Self { by_index })
    }

    /// Check that every write of `bal` is at an index below `indices` (what
    /// [`ExpectedWrites::from_bal`] would refuse), without grouping anything.
    pub fn check_indices(bal: &Bal, indices: u64) -> Result<(), WriteIndexError> {
        for (address, account) in bal.accounts.iter() {
            let info = &account.account_info;
            let last = [
                info.balance.writes.iter().map(|(i, _)| *i).max(),
                info.nonce.writes.iter().map(|(i, _)| *i).max(),
                info.code.writes.iter().map(|(i, _)| *i).max(),
            ]
            .into_iter()
            .flatten()
            .chain(
                account
                    .storage
                    .storage
                    .values()
                    .filter_map(|w| w.writes.iter().map(|(i, _)| *i).max()),
            )
            .max();
            if let Some(index) = last.filter(|i| i.get() >= indices) {
                return Err(WriteIndexError {
                    address: *address,
                    index: index.get(),
                    last: indices.saturating_sub(1),
                });
            }
        }
        Ok(())
    }

    /// The expected writes at `index`.
    pub fn at(&self, index: u64) -> Option<&BTreeMap<Address, AccountWrites>> {
        self.by_index.get(index as usize)
    }
}
