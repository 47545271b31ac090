//! Why a root is not computable.

use alloy_primitives::{Address, B256};
use alloy_trie::Nibbles;
use std::fmt;

/// Which trie a node belongs to: the account trie, or one account's storage trie.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TrieId {
    /// The account trie (keys `keccak256(address)`).
    Account,
    /// The storage trie of this account (keys `keccak256(slot)`).
    Storage(Address),
}

impl TrieId {
    /// How a store keyed by trie and path names this trie: `None` for the account trie,
    /// keccak256 of the address for a storage trie (its account's key in the account trie,
    /// as reth's `StoragesTrie` keys it).
    pub fn owner(&self) -> Option<B256> {
        match self {
            Self::Account => None,
            Self::Storage(address) => Some(alloy_primitives::keccak256(address)),
        }
    }
}

impl fmt::Display for TrieId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Account => f.write_str("the account trie"),
            Self::Storage(address) => write!(f, "the storage trie of {address}"),
        }
    }
}

/// A path from a trie's root, in nibbles: displayed as `0x` and one hex digit per nibble
/// (`0x` alone is the root).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TriePath(pub Nibbles);

impl fmt::Display for TriePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("0x")?;
        for nibble in self.0.iter() {
            write!(f, "{nibble:x}")?;
        }
        Ok(())
    }
}

/// Why a state root could not be computed. Every variant's message is one line starting
/// "root not computable"; no variant ever comes with a root.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RootError {
    /// The update needs a node the witness does not hold: the node at `path` in `trie` (a
    /// node on a touched key's path, or the sibling a deletion collapses into its parent).
    #[error("root not computable: missing node under {path} in {trie}")]
    MissingNode {
        /// The trie the node belongs to.
        trie: TrieId,
        /// The node's path from that trie's root.
        path: TriePath,
    },
    /// No witness node hashes to the parent state root (and it is not the empty trie's).
    #[error("root not computable: no witness node hashes to the parent state root {root}")]
    MissingRoot {
        /// The parent state root.
        root: B256,
    },
    /// A witness node is not a well-formed trie node.
    #[error("root not computable: witness node {hash} is not a trie node: {reason}")]
    BadNode {
        /// The node's hash (keccak256 of its RLP).
        hash: B256,
        /// What decoding found.
        reason: String,
    },
    /// A leaf's value does not decode (an account for the account trie, an RLP integer of
    /// at most 32 bytes for a storage trie).
    #[error("root not computable: the leaf at {path} in {trie} does not decode: {reason}")]
    BadLeaf {
        /// The trie the leaf belongs to.
        trie: TrieId,
        /// The leaf's full key.
        path: TriePath,
        /// What decoding found.
        reason: String,
    },
    /// Reading the trie's nodes from a state source failed (on a run that reads them as
    /// each block needs them).
    #[error("root not computable: reading trie nodes failed: {reason}")]
    NodeRead {
        /// The source's error.
        reason: String,
    },
    /// The block's root was computed, but writing the block into the store after it
    /// (`--persist`) failed, so the pass cannot go on as a client would.
    #[error("root not computable: writing the block into the store failed: {reason}")]
    Persist {
        /// The store's error.
        reason: String,
    },
}

impl RootError {
    /// The missing node's trie and path, for [`RootError::MissingNode`].
    pub fn missing_node(&self) -> Option<(TrieId, Nibbles)> {
        match self {
            Self::MissingNode { trie, path } => Some((*trie, path.0)),
            _ => None,
        }
    }
}
