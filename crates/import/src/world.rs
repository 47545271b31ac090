//! A complete in-memory world state: the fixture's `pre`, the database the blocks run on,
//! and the state after each block (the pre-state overlaid with revm's bundle).

pub use crate::error::{FixtureAccountError, PreStateError, WorldError};
use crate::fixture::FixtureAccount;
use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use alloy_trie::{
    EMPTY_ROOT_HASH, TrieAccount,
    root::{state_root_unhashed, storage_root_unhashed},
};
use revm::{
    DatabaseRef, bytecode::Bytecode, database::BundleState, primitives::KECCAK_EMPTY,
    state::AccountInfo,
};
use std::collections::{BTreeMap, HashMap};

/// One account of a world state: the trie crate's account of a whole state (balance,
/// nonce, code hash, non-zero storage), so a world's accounts are a
/// [`gigagas_trie::FullState`] as they are.
pub type WorldAccount = gigagas_trie::FullAccount;

/// Accounts (with storage), bytecode by hash, and the hashes of blocks before the chain.
#[derive(Debug, Clone, Default)]
pub struct World {
    /// Accounts by address.
    pub accounts: BTreeMap<Address, WorldAccount>,
    /// Bytecode by hash.
    pub codes: HashMap<B256, Bytecode>,
    /// Block hashes known before execution (the genesis).
    pub block_hashes: HashMap<u64, B256>,
}

/// A fixture account as the world holds it, with its code (none when empty).
pub fn account_from_fixture(
    acc: &FixtureAccount,
) -> Result<(WorldAccount, Option<Bytecode>), FixtureAccountError> {
    let nonce: u64 = acc
        .nonce
        .try_into()
        .map_err(|_| FixtureAccountError::NonceTooLarge(acc.nonce))?;
    let (code_hash, code) = if acc.code.is_empty() {
        (KECCAK_EMPTY, None)
    } else {
        let code = Bytecode::new_raw(acc.code.clone());
        (keccak256(&acc.code), Some(code))
    };
    let storage = acc
        .storage
        .iter()
        .filter(|(_, v)| !v.is_zero())
        .map(|(k, v)| (*k, *v))
        .collect();
    Ok((
        WorldAccount {
            balance: acc.balance,
            nonce,
            code_hash,
            storage,
        },
        code,
    ))
}

impl World {
    /// Build from a fixture's `pre` map.
    pub fn from_fixture(pre: &BTreeMap<Address, FixtureAccount>) -> Result<Self, PreStateError> {
        let mut world = World::default();
        for (address, acc) in pre {
            let (account, code) = account_from_fixture(acc).map_err(|source| PreStateError {
                address: *address,
                source,
            })?;
            if let Some(code) = code {
                world.codes.insert(account.code_hash, code);
            }
            world.accounts.insert(*address, account);
        }
        Ok(world)
    }

    /// The bytes of the code with this hash (empty for `KECCAK_EMPTY`).
    pub fn code_bytes(&self, hash: &B256) -> Option<Bytes> {
        if *hash == KECCAK_EMPTY {
            return Some(Bytes::new());
        }
        self.codes.get(hash).map(|c| c.original_bytes())
    }

    /// This world with a bundle of changes applied (revm's bundle relative to this world):
    /// destroyed accounts lose their storage, deleted accounts disappear, present values
    /// of changed slots are written (zero = removed). New bytecode is added to the codes.
    pub fn overlay(&self, bundle: &BundleState) -> World {
        let mut out = self.clone();
        for (hash, code) in &bundle.contracts {
            out.codes.entry(*hash).or_insert_with(|| code.clone());
        }
        for (address, account) in &bundle.state {
            let Some(info) = &account.info else {
                out.accounts.remove(address);
                continue;
            };
            if let Some(code) = &info.code
                && info.code_hash != KECCAK_EMPTY
            {
                out.codes
                    .entry(info.code_hash)
                    .or_insert_with(|| code.clone());
            }
            let entry = out.accounts.entry(*address).or_default();
            if account.was_destroyed() {
                entry.storage.clear();
            }
            entry.balance = info.balance;
            entry.nonce = info.nonce;
            entry.code_hash = info.code_hash;
            for (slot, value) in &account.storage {
                if value.present_value.is_zero() {
                    entry.storage.remove(slot);
                } else {
                    entry.storage.insert(*slot, value.present_value);
                }
            }
        }
        out
    }

    /// The Merkle-Patricia state root of all accounts.
    pub fn state_root(&self) -> B256 {
        state_root_unhashed(self.accounts.iter().map(|(address, a)| {
            let storage_root = if a.storage.is_empty() {
                EMPTY_ROOT_HASH
            } else {
                storage_root_unhashed(a.storage.iter().map(|(k, v)| (B256::from(*k), *v)))
            };
            (
                *address,
                TrieAccount::new(a.nonce, a.balance, storage_root, a.code_hash),
            )
        }))
    }
}

impl DatabaseRef for World {
    type Error = WorldError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, WorldError> {
        Ok(self.accounts.get(&address).map(|a| AccountInfo {
            balance: a.balance,
            nonce: a.nonce,
            code_hash: a.code_hash,
            code: if a.code_hash == KECCAK_EMPTY {
                Some(Bytecode::default())
            } else {
                self.codes.get(&a.code_hash).cloned()
            },
            ..Default::default()
        }))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, WorldError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        self.codes
            .get(&code_hash)
            .cloned()
            .ok_or(WorldError::MissingCode(code_hash))
    }

    fn storage_ref(&self, address: Address, slot: U256) -> Result<U256, WorldError> {
        Ok(self
            .accounts
            .get(&address)
            .and_then(|a| a.storage.get(&slot).copied())
            .unwrap_or_default())
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, WorldError> {
        self.block_hashes
            .get(&number)
            .copied()
            .ok_or(WorldError::MissingBlockHash(number))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_world_has_the_empty_root() {
        assert_eq!(World::default().state_root(), EMPTY_ROOT_HASH);
    }
}
