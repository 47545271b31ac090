//! [`BalView`]: one transaction's view of state.

use crate::prestate::{BlockTable, PreStateDb, SlotRead, StateError};
use alloy_primitives::{Address, B256, U256};
use revm::{
    Database, DatabaseRef,
    bytecode::Bytecode,
    database::bal::BalState,
    primitives::KECCAK_EMPTY,
    state::{
        AccountId, AccountInfo,
        bal::{Bal, BalError, BlockAccessIndex},
    },
};
use std::sync::Arc;

/// What a view can read the state at the start of a block from: a block base in memory, or a
/// source read on demand.
pub trait Pre: revm::DatabaseRef<Error = StateError> + std::fmt::Debug {
    /// The block base whose joined table ([`PreStateDb::block_base`]) a view reads
    /// first, when there is one; what it holds no value for is read from `self`.
    fn base(&self) -> Option<&PreStateDb> {
        None
    }
}

impl Pre for PreStateDb {
    fn base(&self) -> Option<&PreStateDb> {
        Some(self)
    }
}

/// The state a transaction at block access index `index` sees: the pre-state overlaid
/// with the block access list's writes at lower indices. A read of anything the access
/// list does not name is an error, never a silent zero.
///
/// When `pre` is the block's base ([`PreStateDb::block_base`] of `bal`, as every replay's
/// view is), a slot read goes through the table joining both: one hash lookup by (account
/// index, slot) gives the slot's writes and its value at the start of the block. revm's
/// own BAL read (`BalState::storage_by_account_id`) looks up the account's storage map,
/// then, when no write lies below the index, the pre-state's hash map: two or three
/// lookups per read, on the path every `SLOAD` takes. Over any other `pre` (no table),
/// reads fall back to revm's `BalState`, then `pre`.
///
/// `P` is where values at the start of the block come from: a block base in memory (the
/// default), or a source read on demand ([`crate::source::OnDemand`]), which takes the
/// fallback path.
#[derive(Debug)]
pub struct BalView<'a, P = PreStateDb> {
    pre: &'a P,
    bal: &'a Bal,
    /// The same list, shared, for revm's `BalState` in the fallback.
    shared: &'a Arc<Bal>,
    table: Option<&'a BlockTable>,
    index: BlockAccessIndex,
}

impl<P> Clone for BalView<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for BalView<'_, P> {}

impl<'a, P: Pre> BalView<'a, P> {
    /// The view at `index` (0 = pre-block system calls, i + 1 = transaction i, n + 1 =
    /// post-block changes) over `pre`, the state at the start of the block: its base's
    /// joined table first when it has one ([`Pre::base`]), then `pre`.
    pub fn new(pre: &'a P, bal: &'a Arc<Bal>, index: u64) -> Self {
        Self {
            pre,
            bal,
            shared: bal,
            table: pre.base().and_then(|base| base.table(bal.accounts.len())),
            index: BlockAccessIndex::new(index),
        }
    }
}

impl<'a, P: DatabaseRef<Error = StateError>> BalView<'a, P> {
    /// Slot `slot` of the account at index `id` of the access list, `address`.
    #[inline]
    fn slot_at(&self, address: Address, id: usize, slot: U256) -> Result<U256, StateError> {
        match self.table {
            Some(table) => match table.slot(id as u32, slot, self.index) {
                SlotRead::Found(Some(v)) => Ok(v),
                // No value in the table: missing from a base in memory (`pre`, the base,
                // has none either: the error), or left to be read on demand.
                SlotRead::Found(None) => self.pre.storage_ref(address, slot),
                SlotRead::NotInBal => Err(StateError::SlotNotInBal { address, slot }),
            },
            None => {
                // revm's read, without fallback to the database for what the list does
                // not name (the default); built per read, off the replay's path, so the
                // shared list is not reference-counted by every transaction.
                let bal = BalState {
                    bal: Some(Arc::clone(self.shared)),
                    bal_index: self.index,
                    ..BalState::default()
                };
                let id = AccountId::new(id).ok_or(StateError::AccountNotInBal(address))?;
                match bal.storage_by_account_id(id, slot) {
                    Ok(Some(v)) => Ok(v),
                    Ok(None) => self.pre.storage_ref(address, slot),
                    Err(BalError::SlotNotFound { .. }) => {
                        Err(StateError::SlotNotInBal { address, slot })
                    }
                    Err(_) => Err(StateError::AccountNotInBal(address)),
                }
            }
        }
    }
}

impl<P: DatabaseRef<Error = StateError>> Database for BalView<'_, P> {
    type Error = StateError;

    #[inline]
    fn basic(&mut self, address: Address) -> Result<Option<AccountInfo>, StateError> {
        let Some((id, _, account)) = self.bal.accounts.get_full(&address) else {
            return Err(StateError::AccountNotInBal(address));
        };
        // The account at the start of the block, its code the calling thread's own copy
        // (`crate::local_code`): the shared `Arc`s are not cloned on this path.
        let row = self.table.map(|table| &table.accounts[id]);
        if let Some((a, _)) = row {
            debug_assert_eq!(
                *a, address,
                "a block base is viewed with its own access list"
            );
        }
        let pre = match row {
            Some((_, Some(pre))) => pre.as_ref().map(|pre| AccountInfo {
                balance: pre.balance,
                nonce: pre.nonce,
                code_hash: pre.code_hash,
                account_id: None,
                code: crate::local_code::local(pre.code_hash, pre.code.as_ref()),
            }),
            // No table, or no value in it: missing from a base in memory (`pre`, the base,
            // has none either: the error), or left to be read on demand.
            Some((_, None)) | None => self.pre.basic_ref(address)?.map(|mut pre| {
                pre.code = crate::local_code::local(pre.code_hash, pre.code.as_ref());
                pre
            }),
        };
        let existed = pre.is_some();
        let mut info = pre.unwrap_or_else(|| AccountInfo {
            balance: U256::ZERO,
            nonce: 0,
            code_hash: KECCAK_EMPTY,
            account_id: None,
            code: crate::local_code::local(KECCAK_EMPTY, None),
        });
        let code_hash = info.code_hash;
        let changed = account.populate_account_info(self.index, &mut info);
        if !changed && !existed {
            return Ok(None);
        }
        if info.code_hash != code_hash {
            // Code deployed earlier in the block: the list's value, made this thread's.
            info.code = crate::local_code::local(info.code_hash, info.code.as_ref());
        }
        info.account_id = AccountId::new(id);
        Ok(Some(info))
    }

    fn code_by_hash(&mut self, code_hash: B256) -> Result<Bytecode, StateError> {
        let code = self.pre.code_by_hash_ref(code_hash)?;
        Ok(crate::local_code::local(code_hash, Some(&code)).unwrap_or(code))
    }

    #[inline]
    fn storage(&mut self, address: Address, slot: U256) -> Result<U256, StateError> {
        let Some(id) = self.bal.accounts.get_index_of(&address) else {
            return Err(StateError::AccountNotInBal(address));
        };
        self.slot_at(address, id, slot)
    }

    #[inline]
    fn storage_by_account_id(
        &mut self,
        address: Address,
        id: AccountId,
        slot: U256,
    ) -> Result<U256, StateError> {
        let named = match self.table {
            Some(table) => table.accounts.get(id.get()).map(|(a, _)| a),
            None => self.bal.accounts.get_index(id.get()).map(|(a, _)| a),
        };
        if named == Some(&address) {
            self.slot_at(address, id.get(), slot)
        } else {
            self.storage(address, slot)
        }
    }

    fn block_hash(&mut self, number: u64) -> Result<B256, StateError> {
        self.pre.block_hash_ref(number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_utils::prepare;
    use alloy_hardforks::EthereumHardfork;
    use gigagas_workload::{GeneratorConfig, Profile};

    /// The joined table and the fallback (revm's `BalState`, then the pre-state) read the
    /// same value for every slot the first block's access list names, at every index, and
    /// refuse a slot it does not name alike.
    #[test]
    fn the_joined_table_reads_like_revms_bal_state() {
        let dump = gigagas_workload::generate(
            &GeneratorConfig {
                profile: Profile::Erc20,
                blocks: 1,
                gas_per_block: 2_000_000,
                seed: 3,
                fork: EthereumHardfork::Prague,
                users: 20,
            },
            |_, _| {},
        )
        .expect("generation succeeds");
        let replay = prepare(dump).unwrap();
        let blocks = replay.blocks(0..1).unwrap();
        let block = blocks.get(0);
        let base = &replay
            .resident_bases()
            .expect("a small dump keeps its bases")[0];
        // The segment's pre-state is the first block's starting state, without the table.
        let pre = &replay.segments()[0].pre;
        let mut compared = 0;
        for index in 0..block.transactions.len() as u64 + 2 {
            let mut joined = BalView::new(base, &block.bal, index);
            let mut fallback = BalView::new(pre, &block.bal, index);
            assert!(joined.table.is_some() && fallback.table.is_none());
            for (address, account) in block.bal.accounts.iter() {
                for slot in account.storage.storage.keys() {
                    assert_eq!(
                        joined.storage(*address, *slot),
                        fallback.storage(*address, *slot),
                        "{address} slot {slot} at index {index}"
                    );
                    compared += 1;
                }
                let unnamed = U256::MAX;
                assert_eq!(
                    joined.storage(*address, unnamed),
                    Err(StateError::SlotNotInBal {
                        address: *address,
                        slot: unnamed
                    })
                );
                assert_eq!(
                    fallback.storage(*address, unnamed),
                    joined.storage(*address, unnamed)
                );
            }
        }
        assert!(compared > 0, "the block's access list names slots");
    }
}
