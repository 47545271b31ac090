//! [`BalView`]: one transaction's view of state.

use crate::prestate::{BlockTable, PreStateDb, SlotRead, StateError};
use alloy_primitives::{Address, B256, U256};
use revm::{
    Database, DatabaseRef,
    bytecode::Bytecode,
    state::{
        AccountId, AccountInfo,
        bal::{Bal, BalError, BlockAccessIndex},
    },
};

/// The state a transaction at block access index `index` sees: the pre-state overlaid
/// with the block access list's writes at lower indices. A read of anything the access
/// list does not name is an error, never a silent zero.
///
/// When `pre` is the block's base ([`PreStateDb::block_base`] of `bal`), reads go through
/// the table joining both, one lookup per slot; otherwise through `bal`, then `pre`.
#[derive(Debug, Clone, Copy)]
pub struct BalView<'a> {
    pre: &'a PreStateDb,
    bal: &'a Bal,
    table: Option<&'a BlockTable>,
    index: BlockAccessIndex,
}

impl<'a> BalView<'a> {
    /// The view at `index` (0 = pre-block system calls, i + 1 = transaction i, n + 1 =
    /// post-block changes); `pre` is the state at the start of the block.
    pub fn new(pre: &'a PreStateDb, bal: &'a Bal, index: u64) -> Self {
        Self {
            pre,
            bal,
            table: pre.table(bal.accounts.len()),
            index: BlockAccessIndex::new(index),
        }
    }

    /// Slot `slot` of the account at index `id` of the access list, `address`.
    #[inline]
    fn slot_at(&self, address: Address, id: usize, slot: U256) -> Result<U256, StateError> {
        match self.table {
            Some(table) => match table.slot(id as u32, slot, self.index) {
                SlotRead::Found(Some(v)) => Ok(v),
                SlotRead::Found(None) => Err(StateError::MissingSlot { address, slot }),
                SlotRead::NotInBal => Err(StateError::SlotNotInBal { address, slot }),
            },
            None => match self.bal.accounts.get_index(id) {
                Some((_, account)) => self.slot(address, account, slot),
                None => Err(StateError::AccountNotInBal(address)),
            },
        }
    }

    fn slot(
        &self,
        address: Address,
        account: &revm::state::bal::AccountBal,
        slot: U256,
    ) -> Result<U256, StateError> {
        match account.storage.get_bal_writes(&address, slot) {
            Ok(writes) => match writes.get(self.index) {
                Some(v) => Ok(v),
                None => self.pre.storage_ref(address, slot),
            },
            Err(BalError::SlotNotFound { .. }) => Err(StateError::SlotNotInBal { address, slot }),
            Err(_) => Err(StateError::AccountNotInBal(address)),
        }
    }
}

impl Database for BalView<'_> {
    type Error = StateError;

    #[inline]
    fn basic(&mut self, address: Address) -> Result<Option<AccountInfo>, StateError> {
        let Some((id, _, account)) = self.bal.accounts.get_full(&address) else {
            return Err(StateError::AccountNotInBal(address));
        };
        let pre = match self.table {
            Some(table) => {
                let (a, pre) = &table.accounts[id];
                debug_assert_eq!(
                    *a, address,
                    "a block base is viewed with its own access list"
                );
                pre.clone().ok_or(StateError::MissingAccount(address))?
            }
            None => self.pre.basic_ref(address)?,
        };
        let existed = pre.is_some();
        let mut info = pre.unwrap_or_default();
        let changed = account.populate_account_info(self.index, &mut info);
        if !changed && !existed {
            return Ok(None);
        }
        info.account_id = AccountId::new(id);
        Ok(Some(info))
    }

    fn code_by_hash(&mut self, code_hash: B256) -> Result<Bytecode, StateError> {
        self.pre.code_by_hash_ref(code_hash)
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
