//! Tries padded to the depth of a larger state: the account trie to that of `N` accounts,
//! a contract's storage trie to that of `N` slots.
//!
//! A synthetic state of a few thousand accounts gives an account trie four levels deep;
//! mainnet's few hundred million accounts give one about eight deep, with full branches
//! (16 children) at the top six or seven levels of every path. Storage tries are the same
//! shape at their own size: a generated token holds a few thousand slots (a trie three or
//! four levels deep), whereas mainnet's largest contracts hold tens to hundreds of millions
//! (XEN Crypto, the largest, 127,623,837 slots in January 2026, its storage trie full at
//! depths 0 to 5 and 99.95 % full at depth 6: go-ethereum's `geth inspect-contract`,
//! <https://github.com/ethereum/go-ethereum/pull/33721>).
//!
//! A [`Padding`] of size `N` makes one trie that deep: beside the real leaves it holds a
//! *virtual* trie of one leaf under every key prefix of [`Padding::levels`] = ⌊log16 N⌋
//! nibbles, so every branch above that depth is full. [`Padding::accounts`] pads the
//! account trie (its virtual leaves are accounts), [`Padding::storage`] a storage trie (its
//! virtual leaves are slots); [`StatePadding`] says which of a state's tries are padded.
//!
//! The virtual leaves are all alike: under the prefix `Q` the key is `Q` followed by the
//! same remainder and the leaf holds the same value. So every untouched subtrie at one
//! depth is the same and has one hash, which takes `levels + 1` hashes to compute, not
//! 16^levels; its nodes are the [`Padding::nodes`]. The whole is still a real
//! Merkle-Patricia trie of real and virtual leaves: a real key inserted under a prefix no
//! real key had before opens the virtual nodes on its path (they are known), and a deletion
//! collapses onto a virtual leaf like any other. Nothing about the real leaves needs to be
//! known in advance, and a witness of the padded trie is a set of nodes like any other (the
//! virtual branch of one depth, or the virtual leaf, appears in it once, whatever the
//! number of paths it lies on, and whatever the number of storage tries padded alike).
//!
//! A touched real key's path then runs through `levels` full branches whose untouched
//! children are hashes, then a branch of two (the real leaf and the virtual one that
//! shares its prefix; an extension before it one time in sixteen), then the leaf:
//! `levels + 2` nodes. At mainnet's account count (300 million: 7 levels) that is a leaf at
//! depth 8 under 7 full branches; at the size of mainnet's largest storage tries
//! ([`MAINNET_LARGE_STORAGE`], 128 million slots: 6 levels) a leaf at depth 7 under 6
//! full branches, as in XEN's trie above (most of its leaves at depths 7 and 8).
//!
//! The identical sibling hashes change no cost that the root or the witness's size
//! measures (a branch of 16 hashes is hashed and counted the same, whatever the hashes); a
//! compressed dump file is smaller than one with distinct hashes would be.

use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use alloy_trie::{
    EMPTY_ROOT_HASH, KECCAK_EMPTY, Nibbles, TrieAccount,
    nodes::{BranchNodeRef, LeafNodeRef, RlpNode},
};
use std::collections::BTreeMap;

/// Mainnet's account count, round: the default state size to pad to (300 million accounts,
/// 7 levels of full branches).
pub const MAINNET_ACCOUNTS: u64 = 300_000_000;

/// The slot count of mainnet's largest storage tries, round: the default size to pad a
/// contract's storage trie to (128 million slots, 6 levels of full branches). XEN Crypto,
/// the largest, held 127,623,837 slots in January 2026, its trie full at depths 0 to 5
/// (go-ethereum's `geth inspect-contract`,
/// <https://github.com/ethereum/go-ethereum/pull/33721>); any count from 16^6 (16.8 million)
/// to 16^7 (268 million), the large tokens' range, gives the same 6 levels.
pub const MAINNET_LARGE_STORAGE: u64 = 128_000_000;

/// Which trie a [`Padding`] pads: what its virtual leaves hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PaddedTrie {
    /// The account trie: every virtual leaf is an account (nonce 1, 1 ether, no code or
    /// storage).
    Accounts,
    /// A storage trie: every virtual leaf is a slot holding 10^18 (a token balance).
    Storage,
}

/// The virtual leaves that pad a trie to the depth of one of [`Self::size`] leaves
/// (accounts or slots, [`Self::trie`]): one under every key prefix of [`Self::levels`]
/// nibbles, all alike (the same key remainder and leaf), so every untouched subtrie of one
/// depth has one hash and the padded trie, real and virtual leaves together, is a real
/// Merkle-Patricia trie that inserts and deletions keep consistent ([`Self::nodes`] are its
/// untouched nodes). A touched key's path runs through [`Self::levels`] full branches, a
/// branch of two (it and the virtual leaf sharing its prefix), then its leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Padding {
    trie: PaddedTrie,
    size: u64,
    levels: usize,
    seed: u64,
}

/// A [`Padding`] that cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PaddingError {
    /// The state size is under 16 accounts: no level of full branches.
    #[error("a padded state needs at least 16 accounts (one level of full branches), not {0}")]
    TooSmall(u64),
    /// The storage size is under 16 slots: no level of full branches.
    #[error("a padded storage trie needs at least 16 slots (one level of full branches), not {0}")]
    TooFewSlots(u64),
}

impl Padding {
    /// The padding of the account trie of a state of `state_size` accounts:
    /// ⌊log16 `state_size`⌋ levels of full branches. `seed` picks the virtual accounts' key
    /// remainder (the same seed gives the same trie). At least 16 accounts.
    pub fn accounts(state_size: u64, seed: u64) -> Result<Self, PaddingError> {
        Self::of(PaddedTrie::Accounts, state_size, seed).ok_or(PaddingError::TooSmall(state_size))
    }

    /// The padding of a storage trie of `slots` slots: ⌊log16 `slots`⌋ levels of full
    /// branches. `seed` picks the virtual slots' key remainder (the same seed gives the same
    /// trie, so storage tries padded to one size with one seed share their virtual nodes).
    /// At least 16 slots.
    pub fn storage(slots: u64, seed: u64) -> Result<Self, PaddingError> {
        Self::of(PaddedTrie::Storage, slots, seed).ok_or(PaddingError::TooFewSlots(slots))
    }

    fn of(trie: PaddedTrie, size: u64, seed: u64) -> Option<Self> {
        let levels = levels(size);
        (levels > 0).then_some(Self {
            trie,
            size,
            levels,
            seed,
        })
    }

    /// The trie it pads.
    pub fn trie(&self) -> PaddedTrie {
        self.trie
    }

    /// The size it pads to, in leaves: accounts or slots ([`Self::trie`]).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The levels of full branches: ⌊log16 [`Self::size`]⌋ (7 at mainnet's account count,
    /// 6 at [`MAINNET_LARGE_STORAGE`]).
    pub fn levels(&self) -> usize {
        self.levels
    }

    /// The seed of the virtual leaves' key remainder.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The virtual trie alone: its root is the root of [`Self::nodes`], the first.
    pub fn root(&self) -> B256 {
        keccak256(&self.nodes()[0])
    }

    /// The nodes of the virtual trie, root first: the full branch of each depth above
    /// [`Self::levels`] (16 references to the one below), then the leaf at depth
    /// `levels`. Every untouched subtrie of the padded trie is one of them.
    pub fn nodes(&self) -> Vec<Bytes> {
        let tag: &[u8] = match self.trie {
            PaddedTrie::Accounts => b"gigagas-padding",
            PaddedTrie::Storage => b"gigagas-storage-padding",
        };
        let remainder = Nibbles::unpack(keccak256([tag, &self.seed.to_be_bytes()].concat()));
        let ether = U256::from(10u64).pow(U256::from(18));
        let value = match self.trie {
            PaddedTrie::Accounts => {
                alloy_rlp::encode(TrieAccount::new(1, ether, EMPTY_ROOT_HASH, KECCAK_EMPTY))
            }
            PaddedTrie::Storage => alloy_rlp::encode(ether),
        };
        let mut buf = Vec::new();
        LeafNodeRef::new(&remainder.slice(self.levels..), &value).rlp(&mut buf);
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

/// Which tries of a state are padded: the account trie (a [`PaddedTrie::Accounts`]
/// padding) and any contracts' storage tries (a [`PaddedTrie::Storage`] padding each).
/// The default pads nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatePadding {
    accounts: Option<Padding>,
    storage: BTreeMap<Address, Padding>,
}

impl StatePadding {
    /// Pads the account trie with `padding`, an account trie's ([`Padding::accounts`]).
    pub fn with_accounts(mut self, padding: Padding) -> Self {
        debug_assert_eq!(padding.trie(), PaddedTrie::Accounts);
        self.accounts = Some(padding);
        self
    }

    /// Pads the storage trie of `address` with `padding`, a storage trie's
    /// ([`Padding::storage`]); a second padding of one address replaces the first. An
    /// address the state does not hold is left alone.
    pub fn with_storage(mut self, address: Address, padding: Padding) -> Self {
        debug_assert_eq!(padding.trie(), PaddedTrie::Storage);
        self.storage.insert(address, padding);
        self
    }

    /// The account trie's padding, if any.
    pub fn accounts(&self) -> Option<&Padding> {
        self.accounts.as_ref()
    }

    /// The padded storage tries, by address.
    pub fn storage(&self) -> &BTreeMap<Address, Padding> {
        &self.storage
    }

    /// The storage padding of `address`, if any.
    pub fn storage_of(&self, address: &Address) -> Option<&Padding> {
        self.storage.get(address)
    }

    /// Whether nothing is padded.
    pub fn is_empty(&self) -> bool {
        self.accounts.is_none() && self.storage.is_empty()
    }

    /// Every padding's virtual nodes (a node shared by two paddings once).
    pub fn nodes(&self) -> Vec<Bytes> {
        let mut nodes: Vec<Bytes> = self
            .accounts
            .iter()
            .chain(self.storage.values())
            .flat_map(Padding::nodes)
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
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
        assert_eq!(Padding::accounts(15, 1), Err(PaddingError::TooSmall(15)));
        assert_eq!(Padding::accounts(MAINNET_ACCOUNTS, 1).unwrap().levels(), 7);
        assert_eq!(Padding::storage(15, 1), Err(PaddingError::TooFewSlots(15)));
        assert_eq!(
            Padding::storage(MAINNET_LARGE_STORAGE, 1).unwrap().levels(),
            6
        );
    }

    /// The virtual trie's root is that of one leaf (account or slot) under every prefix of
    /// `levels` nibbles, each with the same remainder and value.
    #[test]
    fn the_virtual_root_is_a_real_trie_root() {
        for padding in [
            Padding::accounts(4_096, 5).unwrap(),
            Padding::storage(4_096, 5).unwrap(),
        ] {
            virtual_root_is_the_hash_builders(&padding);
        }
        let accounts = Padding::accounts(4_096, 5).unwrap();
        assert_ne!(Padding::storage(4_096, 5).unwrap().root(), accounts.root());
        assert_ne!(Padding::accounts(4_096, 6).unwrap().root(), accounts.root());
    }

    /// Two storage paddings of one size and seed share their nodes; a state padding's nodes
    /// hold each once.
    #[test]
    fn state_padding_nodes_are_every_paddings_once() {
        let a = Address::repeat_byte(1);
        let b = Address::repeat_byte(2);
        let slots = Padding::storage(256, 1).unwrap();
        let padding = StatePadding::default()
            .with_accounts(Padding::accounts(16, 1).unwrap())
            .with_storage(a, slots)
            .with_storage(b, slots);
        assert_eq!(padding.nodes().len(), 2 + 3);
        assert_eq!(padding.storage_of(&b), Some(&slots));
        assert!(!padding.is_empty() && StatePadding::default().is_empty());
    }

    fn virtual_root_is_the_hash_builders(padding: &Padding) {
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
    }
}
