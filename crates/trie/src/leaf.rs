//! Leaves: new values encoded where they are set, and account leaves decoded from the
//! account trie and set where their new value depends on the leaf they replace.

use crate::{
    error::{RootError, TrieId, TriePath},
    sparse::SparseTrie,
};
use alloy_primitives::{B256, U256};
use alloy_rlp::Decodable;
use alloy_trie::{EMPTY_ROOT_HASH, KECCAK_EMPTY, Nibbles, TrieAccount};

/// A leaf's new value, RLP-encoded where it is set ([`Self::encode`]): in the unit that
/// updates its path, on any thread, rather than where the block's updates are gathered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LeafValue {
    /// A storage slot's non-zero value.
    Slot(U256),
    /// An account's fields and storage root.
    Account(TrieAccount),
}

impl LeafValue {
    /// The leaf's RLP, as the trie stores it.
    pub(crate) fn encode(&self) -> Vec<u8> {
        match self {
            Self::Slot(value) => alloy_rlp::encode(value),
            Self::Account(account) => alloy_rlp::encode(account),
        }
    }
}

/// Decodes the account leaf `leaf` found at `key`.
pub(crate) fn decode_account(key: Nibbles, leaf: &[u8]) -> Result<TrieAccount, RootError> {
    TrieAccount::decode(&mut &leaf[..]).map_err(|e| RootError::BadLeaf {
        trie: TrieId::Account,
        path: TriePath(key),
        reason: e.to_string(),
    })
}

/// An account's leaf after a block: the fields the block sets, and the storage root where
/// the block changes its storage; every other field is the leaf's own. The leaf before the
/// block is read where it is set ([`Self::apply`]), in whichever unit updates its path,
/// rather than when the block is prepared. Its fields come from the leaf rather than from
/// the values known before the block, which a dump may give incompletely (a pre-state
/// producer that did not load an account's code gives no code hash).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AccountLeaf {
    /// The block's last nonce, `None` where the block leaves it.
    pub(crate) nonce: Option<u64>,
    /// The block's last balance, `None` where the block leaves it.
    pub(crate) balance: Option<U256>,
    /// The hash of the block's last code, `None` where the block leaves it.
    pub(crate) code_hash: Option<B256>,
    /// The storage root after the block, `None` where it is the one the leaf holds.
    pub(crate) storage_root: Option<B256>,
}

impl AccountLeaf {
    /// Reads the leaf at `key` in `trie` and sets the account's leaf there where it
    /// differs (an absent leaf counts as an empty account with an empty storage).
    pub(crate) fn apply(self, key: Nibbles, trie: &mut SparseTrie) -> Result<(), RootError> {
        let pre = match trie.get(key)? {
            Some(leaf) => Some(decode_account(key, &leaf)?),
            None => None,
        };
        let post = TrieAccount::new(
            self.nonce.unwrap_or(pre.as_ref().map_or(0, |p| p.nonce)),
            self.balance
                .unwrap_or(pre.as_ref().map_or(U256::ZERO, |p| p.balance)),
            self.storage_root
                .unwrap_or(pre.as_ref().map_or(EMPTY_ROOT_HASH, |p| p.storage_root)),
            self.code_hash
                .unwrap_or(pre.as_ref().map_or(KECCAK_EMPTY, |p| p.code_hash)),
        );
        if pre.as_ref() != Some(&post) {
            trie.insert(key, alloy_rlp::encode(post))?;
        }
        Ok(())
    }
}
