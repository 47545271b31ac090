//! A whole state as producers hold it ([`FullState`]), and its root with alloy-trie's hash
//! builder: the reference for [`FullTries`](crate::FullTries), which keeps the tries open and
//! gives the witness of blocks to come.

use alloy_primitives::{Address, B256, U256, keccak256, map::HashMap};
use alloy_trie::{EMPTY_ROOT_HASH, HashBuilder, KECCAK_EMPTY, Nibbles, TrieAccount};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// A whole state: every account by address.
pub type FullState = BTreeMap<Address, FullAccount>;

/// One account of a [`FullState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullAccount {
    /// The nonce.
    pub nonce: u64,
    /// The balance.
    pub balance: U256,
    /// keccak256 of the code ([`KECCAK_EMPTY`] for none).
    pub code_hash: B256,
    /// The storage; zero values are ignored (a zero slot is no slot).
    pub storage: BTreeMap<U256, U256>,
}

impl Default for FullAccount {
    fn default() -> Self {
        Self {
            nonce: 0,
            balance: U256::ZERO,
            code_hash: KECCAK_EMPTY,
            storage: BTreeMap::new(),
        }
    }
}

/// The state root of `state` (the full account trie, every storage trie built) with
/// alloy-trie's hash builder: the whole state hashed at once, a reference for
/// [`FullTries`](crate::FullTries), which keeps the tries and hashes only what changes.
pub fn full_state_root(state: &FullState) -> B256 {
    let storage_roots = storage_roots(state);
    account_root(state, &storage_roots)
}

/// Every account's storage root.
fn storage_roots(state: &FullState) -> HashMap<Address, B256> {
    state
        .par_iter()
        .map(|(address, account)| (*address, storage_root(&account.storage)))
        .collect()
}

/// The root of `storage`'s trie.
fn storage_root(storage: &BTreeMap<U256, U256>) -> B256 {
    let mut leaves: Vec<(Nibbles, Vec<u8>)> = storage
        .iter()
        .filter(|(_, v)| !v.is_zero())
        .map(|(k, v)| {
            let key = Nibbles::unpack(keccak256(B256::from(*k)));
            (key, alloy_rlp::encode(v))
        })
        .collect();
    leaves.sort_unstable_by_key(|l| l.0);
    build(leaves)
}

/// The account trie's root.
fn account_root(state: &FullState, storage_roots: &HashMap<Address, B256>) -> B256 {
    let mut leaves: Vec<(Nibbles, Vec<u8>)> = state
        .par_iter()
        .map(|(address, a)| {
            let storage_root = storage_roots
                .get(address)
                .copied()
                .unwrap_or(EMPTY_ROOT_HASH);
            let account = TrieAccount::new(a.nonce, a.balance, storage_root, a.code_hash);
            (
                Nibbles::unpack(keccak256(address)),
                alloy_rlp::encode(account),
            )
        })
        .collect();
    leaves.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
    build(leaves)
}

/// The hash builder's root over sorted `leaves`.
fn build(leaves: Vec<(Nibbles, Vec<u8>)>) -> B256 {
    if leaves.is_empty() {
        return EMPTY_ROOT_HASH;
    }
    let mut hb = HashBuilder::default();
    for (key, value) in &leaves {
        hb.add_leaf(*key, value);
    }
    hb.root()
}
