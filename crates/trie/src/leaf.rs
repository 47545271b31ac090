//! Account leaves: decoded from the account trie, and set where their new value depends on
//! the leaf they replace.

use crate::{
    error::{RootError, TrieId, TriePath},
    sparse::SparseTrie,
};
use alloy_primitives::{B256, U256};
use alloy_rlp::Decodable;
use alloy_trie::{EMPTY_ROOT_HASH, Nibbles, TrieAccount};

/// Decodes the account leaf `leaf` found at `key`.
pub(crate) fn decode_account(key: Nibbles, leaf: &[u8]) -> Result<TrieAccount, RootError> {
    TrieAccount::decode(&mut &leaf[..]).map_err(|e| RootError::BadLeaf {
        trie: TrieId::Account,
        path: TriePath(key),
        reason: e.to_string(),
    })
}

/// An account's leaf after a block, whose fields are known and whose storage root is the
/// leaf's own where the block leaves its storage as it was: the leaf before the block is
/// read where it is set ([`Self::apply`]), in whichever unit updates its path, rather than
/// when the block is prepared.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AccountLeaf {
    pub(crate) nonce: u64,
    pub(crate) balance: U256,
    pub(crate) code_hash: B256,
    /// The storage root after the block, `None` where it is the one the leaf holds.
    pub(crate) storage_root: Option<B256>,
}

impl AccountLeaf {
    /// Reads the leaf at `key` in `trie` and sets the account's leaf there where it
    /// differs (an absent leaf counts as an empty storage).
    pub(crate) fn apply(self, key: Nibbles, trie: &mut SparseTrie) -> Result<(), RootError> {
        let pre = match trie.get(key)? {
            Some(leaf) => Some(decode_account(key, &leaf)?),
            None => None,
        };
        let storage_root = self
            .storage_root
            .unwrap_or_else(|| pre.as_ref().map_or(EMPTY_ROOT_HASH, |p| p.storage_root));
        let post = TrieAccount::new(self.nonce, self.balance, storage_root, self.code_hash);
        if pre.as_ref() != Some(&post) {
            trie.insert(key, alloy_rlp::encode(post))?;
        }
        Ok(())
    }
}
