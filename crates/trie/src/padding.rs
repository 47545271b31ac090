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

use crate::PathNode;
use alloy_primitives::{Address, B256, Bytes, U256, keccak256, map::HashMap};
use alloy_rlp::Decodable;
use alloy_trie::{
    EMPTY_ROOT_HASH, KECCAK_EMPTY, Nibbles, TrieAccount,
    nodes::{BranchNodeRef, LeafNodeRef, RlpNode, TrieNode},
};
use gigagas_dump::Witness;
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

/// The expected shape of a Merkle-Patricia trie of [`Self::leaves`] leaves under uniformly
/// random keys (hashed addresses or hashed slots): how many nodes a client's trie table holds
/// for that many accounts or slots, leaves included (as a path-keyed table keeps them).
///
/// Poissonised: the keys under a prefix of `d` nibbles are Poisson with mean λ = N/16^d, its
/// 16 children independent with mean λ/16. The prefix holds a branch when at least two
/// children hold keys, `1 + 15e^{−λ} − 16e^{−15λ/16}`; an extension starts at a branch's child
/// slot that holds two keys or more which do not part at its first nibble,
/// `(1 − e^{−λ} − λe^{−λ} − branch(λ)) · (1 − e^{−15λ})` (a sibling holds a key, so the parent
/// branches). Summed over the 16^d prefixes of each depth, the branches come to
/// N·15·ln(16/15)/ln 16 ≈ 0.349·N on average (between 0.32 and 0.38 as log16 N moves between
/// integers), the extensions to about 0.013·N, so a trie holds about 1.36 nodes per leaf
/// (a full 16-ary tree would hold 16/15: a random trie's lowest branches hold two to four
/// children, not sixteen).
#[derive(Debug, Clone, PartialEq)]
pub struct RandomTrie {
    leaves: u64,
    inner: Vec<f64>,
}

impl RandomTrie {
    /// The expected shape of a trie of `leaves` leaves.
    pub fn of(leaves: u64) -> Self {
        let n = leaves as f64;
        let mut inner = Vec::new();
        for depth in 0..=64 {
            let lambda = n / 16f64.powi(depth);
            if lambda < 1e-7 {
                break;
            }
            let prefixes = 16f64.powi(depth);
            let branch = 1.0 + 15.0 * (-lambda).exp() - 16.0 * (-15.0 * lambda / 16.0).exp();
            let branch = branch.max(0.0);
            let two_or_more = -(-lambda).exp_m1() - lambda * (-lambda).exp();
            let extension = if depth == 0 {
                0.0
            } else {
                (two_or_more - branch).max(0.0) * -(-15.0 * lambda).exp_m1()
            };
            inner.push(prefixes * (branch + extension));
        }
        Self { leaves, inner }
    }

    /// The leaves it was made for.
    pub fn leaves(&self) -> u64 {
        self.leaves
    }

    /// The expected inner nodes (branches and extensions) whose path is `depth` nibbles
    /// long, depth 0 (the root) first.
    pub fn inner_by_depth(&self) -> &[f64] {
        &self.inner
    }

    /// The expected nodes in all: the leaves and every inner node.
    pub fn nodes(&self) -> f64 {
        self.leaves as f64 + self.inner.iter().sum::<f64>()
    }
}

/// A witness's nodes by hash, each decoded once: the node at any path of a trie wherever the
/// witness holds every node on the way there, including paths no block reads (the untouched
/// subtries of a [`Padding`], one node for all alike subtries of a depth, lie under millions
/// of paths).
#[derive(Debug, Clone, Default)]
pub struct KnownNodes {
    by_hash: HashMap<B256, (Bytes, TrieNode)>,
}

impl KnownNodes {
    /// The nodes of `witness` (one that does not decode is left out: no path leads through
    /// it).
    pub fn new(witness: &Witness) -> Self {
        let by_hash = witness
            .nodes
            .iter()
            .filter_map(|rlp| {
                let node = TrieNode::decode(&mut rlp.as_ref()).ok()?;
                Some((keccak256(rlp), (rlp.clone(), node)))
            })
            .collect();
        Self { by_hash }
    }

    /// The node at `path` (nibbles, one per byte) of the trie whose root hashes to `root`:
    /// `None` where no node starts there (inside an extension's or a leaf's key, under an
    /// empty slot) or where a node on the way is not in the witness or lies inside its
    /// parent (under 32 bytes).
    pub fn node_at(&self, root: B256, path: &[u8]) -> Option<&Bytes> {
        let mut hash = root;
        let mut depth = 0;
        loop {
            let (rlp, node) = self.by_hash.get(&hash)?;
            if depth == path.len() {
                return Some(rlp);
            }
            let child = match node {
                TrieNode::Branch(branch) => {
                    let nibble = path[depth];
                    if nibble > 15 || !branch.state_mask.is_bit_set(nibble) {
                        return None;
                    }
                    let below = branch.state_mask.get() & ((1u16 << nibble) - 1);
                    depth += 1;
                    branch.stack.get(below.count_ones() as usize)?
                }
                TrieNode::Extension(extension) => {
                    let key = &extension.key;
                    let rest = &path[depth..];
                    if rest.len() < key.len()
                        || (0..key.len()).any(|i| key.get_unchecked(i) != rest[i])
                    {
                        return None;
                    }
                    depth += key.len();
                    &extension.child
                }
                TrieNode::Leaf(_) | TrieNode::EmptyRoot => return None,
            };
            hash = child.as_hash()?;
        }
    }

    /// The levels of full branches under `root` whose children the witness all holds,
    /// counted down one path (nibble `depth % 16` at each depth) to a leaf the witness holds
    /// too: a trie padded by a [`Padding`] gives its [`Padding::levels`] (its virtual leaf
    /// lies under them), any other trie 0 (its untouched subtries are hashes the witness does
    /// not open, however full its top).
    pub fn padded_levels(&self, root: B256) -> usize {
        let mut hash = root;
        let mut depth = 0;
        loop {
            match self.by_hash.get(&hash) {
                Some((_, TrieNode::Leaf(_))) => return depth,
                Some((_, TrieNode::Branch(branch)))
                    if branch.state_mask.get() == 0xffff
                        && branch.stack.iter().all(|c| {
                            c.as_hash().is_some_and(|h| self.by_hash.contains_key(&h))
                        }) =>
                {
                    let Some(next) = branch.stack[depth % 16].as_hash() else {
                        return 0;
                    };
                    hash = next;
                    depth += 1;
                }
                _ => return 0,
            }
        }
    }
}

/// The storage tries that the account leaves among `nodes` name (a witness's nodes by path,
/// [`crate::nodes_by_path`]): (hashed address, storage root) of every account with storage,
/// sorted by hashed address.
pub fn storage_roots(nodes: &[PathNode]) -> Vec<(B256, B256)> {
    let mut roots: Vec<(B256, B256)> = nodes
        .iter()
        .filter(|n| n.owner.is_none())
        .filter_map(|n| {
            let TrieNode::Leaf(leaf) = TrieNode::decode(&mut n.rlp.as_ref()).ok()? else {
                return None;
            };
            let key = n.path.join(&leaf.key);
            let account = TrieAccount::decode(&mut leaf.value.as_slice()).ok()?;
            (key.len() == 64 && account.storage_root != EMPTY_ROOT_HASH)
                .then(|| (B256::from_slice(&key.pack()), account.storage_root))
        })
        .collect();
    roots.sort_unstable();
    roots.dedup();
    roots
}

/// ⌊log16 `n`⌋ (0 for `n` < 16).
fn levels(n: u64) -> usize {
    (u64::BITS - 1).saturating_sub(n.leading_zeros()) as usize / 4
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// The shape's node count is that of real tries of random keys (branches, extensions and
    /// leaves counted from the sorted keys' common prefixes), within 2 %, and about 1.36 per
    /// leaf.
    #[test]
    fn a_random_tries_node_count_is_the_formulas() {
        for (n, seed) in [(3_000u64, 1u64), (40_000, 2)] {
            let mut keys: Vec<B256> = (0..n)
                .map(|i| keccak256([seed.to_be_bytes(), i.to_be_bytes()].concat()))
                .collect();
            keys.sort_unstable();
            let common =
                |a: &B256, b: &B256| Nibbles::unpack(a).common_prefix_length(&Nibbles::unpack(b));
            // A branch at every distinct common prefix of neighbours; an extension above each
            // branch whose nearest branch above is more than one nibble up.
            let mut branches: Vec<Nibbles> = keys
                .windows(2)
                .map(|w| Nibbles::unpack(w[0]).slice(..common(&w[0], &w[1])))
                .collect();
            branches.sort_unstable();
            branches.dedup();
            let set: std::collections::HashSet<Nibbles> = branches.iter().copied().collect();
            let extensions = branches
                .iter()
                .filter(|b| {
                    let above = (0..b.len()).rev().find(|&d| set.contains(&b.slice(..d)));
                    !b.is_empty() && above.is_none_or(|d| d + 1 < b.len())
                })
                .count();
            let counted = (n as usize + branches.len() + extensions) as f64;
            let shape = RandomTrie::of(n);
            let ratio = counted / shape.nodes();
            assert!(
                (0.98..1.02).contains(&ratio),
                "{n}: {counted} counted, {} by formula",
                shape.nodes()
            );
            assert!((1.3..1.42).contains(&(shape.nodes() / n as f64)), "{n}");
        }
        assert_eq!(RandomTrie::of(0).nodes(), 0.0);
    }

    /// A padded trie's witness gives its virtual node at every path of a depth the padding
    /// covers, none below its leaves, and its levels.
    #[test]
    fn known_nodes_open_a_padded_trie_at_any_path() {
        let padding = Padding::accounts(4_096, 9).unwrap();
        let nodes = padding.nodes();
        let known = KnownNodes::new(&Witness::new(padding.root(), nodes.clone()));
        assert_eq!(known.padded_levels(padding.root()), 3);
        for path in [&[][..], &[7], &[15, 0], &[3, 9, 12]] {
            assert_eq!(
                known.node_at(padding.root(), path),
                Some(&nodes[path.len()])
            );
        }
        assert_eq!(known.node_at(padding.root(), &[1, 2, 3, 4]), None);
        assert_eq!(known.node_at(B256::ZERO, &[]), None);
        let unpadded = KnownNodes::new(&Witness::new(padding.root(), vec![nodes[0].clone()]));
        assert_eq!(unpadded.padded_levels(padding.root()), 0);
        assert_eq!(unpadded.node_at(padding.root(), &[1]), None);
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
