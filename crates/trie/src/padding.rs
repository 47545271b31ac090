//! An account trie padded to the depth of a larger state.
//!
//! A synthetic state of a few thousand accounts gives an account trie four levels deep;
//! mainnet's few hundred million accounts give one about eight deep, with full branches
//! (16 children) at the top six or seven levels of every path. A [`Padding`] of state size
//! `N` makes the account trie that deep: beside the real accounts it holds a *virtual*
//! state of one account under every key prefix of [`Padding::levels`] = ⌊log16 N⌋ nibbles,
//! so every branch above that depth is full.
//!
//! The virtual accounts are all alike: under the prefix `Q` the key is `Q` followed by the
//! same remainder and the leaf holds the same account. So every untouched subtrie at one
//! depth is the same and has one hash, which takes `levels + 1` hashes to compute, not
//! 16^levels; its nodes are the [`Padding::nodes`]. The whole is still a real
//! Merkle-Patricia trie of real and virtual accounts: a real account inserted under a
//! prefix no real account had before opens the virtual nodes on its path (they are
//! known), and a deletion collapses onto a virtual leaf like any other. Nothing about the
//! real accounts needs to be known in advance, and a witness of the padded trie is a set of
//! nodes like any other (the virtual branch of one depth, or the virtual leaf, appears in
//! it once, whatever the number of paths it lies on).
//!
//! A touched real account's path then runs through `levels` full branches whose untouched
//! children are hashes, then a branch of two (the real leaf and the virtual one that
//! shares its prefix; an extension before it one time in sixteen), then the leaf:
//! `levels + 2` nodes. At mainnet's account count (300 million: 7 levels) that is a leaf at
//! depth 8 under 7 full branches.
//!
//! The identical sibling hashes change no cost that the root or the witness's size
//! measures (a branch of 16 hashes is hashed and counted the same, whatever the hashes); a
//! compressed dump file is smaller than one with distinct hashes would be.

use alloy_primitives::{B256, Bytes, U256, keccak256};
use alloy_trie::{
    EMPTY_ROOT_HASH, KECCAK_EMPTY, Nibbles, TrieAccount,
    nodes::{BranchNodeRef, LeafNodeRef, RlpNode},
};

/// Mainnet's account count, round: the default state size to pad to (300 million accounts,
/// 7 levels of full branches).
pub const MAINNET_ACCOUNTS: u64 = 300_000_000;

/// The virtual accounts that pad an account trie to the depth of a state of
/// [`Self::state_size`] accounts: one under every key prefix of [`Self::levels`] nibbles,
/// all alike (the same key remainder and leaf), so every untouched subtrie of one depth has
/// one hash and the padded trie, real and virtual accounts together, is a real
/// Merkle-Patricia trie that inserts and deletions keep consistent ([`Self::nodes`] are its
/// untouched nodes). A touched account's path runs through [`Self::levels`] full branches,
/// a branch of two (it and the virtual leaf sharing its prefix), then its leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Padding {
    state_size: u64,
    levels: usize,
    seed: u64,
}

/// A [`Padding`] that cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PaddingError {
    /// The state size is under 16 accounts: no level of full branches.
    #[error("a padded state needs at least 16 accounts (one level of full branches), not {0}")]
    TooSmall(u64),
}

impl Padding {
    /// The padding of a state of `state_size` accounts: ⌊log16 `state_size`⌋ levels of full
    /// branches. `seed` picks the virtual accounts' key remainder (the same seed gives the
    /// same trie). At least 16 accounts.
    pub fn new(state_size: u64, seed: u64) -> Result<Self, PaddingError> {
        let levels = levels(state_size);
        if levels == 0 {
            return Err(PaddingError::TooSmall(state_size));
        }
        Ok(Self {
            state_size,
            levels,
            seed,
        })
    }

    /// The state size it pads to, in accounts.
    pub fn state_size(&self) -> u64 {
        self.state_size
    }

    /// The levels of full branches: ⌊log16 [`Self::state_size`]⌋ (7 at mainnet's count).
    pub fn levels(&self) -> usize {
        self.levels
    }

    /// The seed of the virtual accounts' key remainder.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The virtual account trie alone: its root is the root of [`Self::nodes`], the first.
    pub fn root(&self) -> B256 {
        keccak256(&self.nodes()[0])
    }

    /// The nodes of the virtual state, root first: the full branch of each depth above
    /// [`Self::levels`] (16 references to the one below), then the leaf at depth
    /// `levels`. Every untouched subtrie of the padded trie is one of them.
    pub fn nodes(&self) -> Vec<Bytes> {
        let remainder = Nibbles::unpack(keccak256(
            [b"gigagas-padding".as_slice(), &self.seed.to_be_bytes()].concat(),
        ));
        let account = TrieAccount::new(
            1,
            U256::from(10u64).pow(U256::from(18)),
            EMPTY_ROOT_HASH,
            KECCAK_EMPTY,
        );
        let mut buf = Vec::new();
        LeafNodeRef::new(&remainder.slice(self.levels..), &alloy_rlp::encode(account))
            .rlp(&mut buf);
        let mut nodes = vec![Bytes::from(buf)];
        for _ in 0..self.levels {
            let child = RlpNode::word_rlp(&keccak256(&nodes[0]));
            let stack = vec![child; 16];
            let mut buf = Vec::new();
            BranchNodeRef::new(&stack, alloy_trie::TrieMask::new(0xffff)).rlp(&mut buf);
            nodes.insert(0, Bytes::from(buf));
        }
        nodes
    }
}

/// ⌊log16 `n`⌋ (0 for `n` < 16).
fn levels(n: u64) -> usize {
    (u64::BITS - 1).saturating_sub(n.leading_zeros()) as usize / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_rlp::Decodable;
    use alloy_trie::HashBuilder;

    #[test]
    fn levels_are_log16_of_the_state_size() {
        assert_eq!(levels(0), 0);
        assert_eq!(levels(15), 0);
        assert_eq!(levels(16), 1);
        assert_eq!(levels(255), 1);
        assert_eq!(levels(256), 2);
        assert_eq!(levels(MAINNET_ACCOUNTS), 7);
        assert_eq!(levels(u64::MAX), 15);
        assert_eq!(Padding::new(15, 1), Err(PaddingError::TooSmall(15)));
        assert_eq!(Padding::new(MAINNET_ACCOUNTS, 1).unwrap().levels(), 7);
    }

    /// The virtual trie's root is that of one account under every prefix of `levels`
    /// nibbles, each with the same remainder and value.
    #[test]
    fn the_virtual_root_is_a_real_trie_root() {
        let padding = Padding::new(4_096, 5).unwrap();
        assert_eq!(padding.levels(), 3);
        let nodes = padding.nodes();
        assert_eq!(nodes.len(), 4);
        let leaf = alloy_trie::nodes::TrieNode::decode(&mut &nodes[3][..]).unwrap();
        let alloy_trie::nodes::TrieNode::Leaf(leaf) = leaf else {
            panic!("not a leaf");
        };
        let mut hb = HashBuilder::default();
        for prefix in 0..4_096u64 {
            let q = Nibbles::from_nibbles(
                [prefix >> 8, (prefix >> 4) & 15, prefix & 15].map(|n| n as u8),
            );
            hb.add_leaf(q.join(&leaf.key), &leaf.value);
        }
        assert_eq!(hb.root(), padding.root());
        assert_ne!(Padding::new(4_096, 6).unwrap().root(), padding.root());
    }
}
