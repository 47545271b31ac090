//! A witness's nodes by trie and path: how a store that reads nodes by path
//! ([`crate::NodeReader`]) keeps them.

use alloy_eip7928::BlockAccessList;
use alloy_primitives::{B256, Bytes, keccak256, map::HashMap};
use alloy_rlp::Decodable;
use alloy_trie::{
    EMPTY_ROOT_HASH, Nibbles, TrieAccount,
    nodes::{RlpNode, TrieNode},
};
use gigagas_dump::Witness;
use std::collections::BTreeMap;

/// One node of a witness, where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathNode {
    /// `None` for the account trie; for a storage trie, keccak256 of its account's address
    /// (the account's key in the account trie, as reth's `StoragesTrie` keys it).
    pub owner: Option<B256>,
    /// The node's path from its trie's root.
    pub path: Nibbles,
    /// The node's RLP (its hash is keccak256 of it).
    pub rlp: Bytes,
}

/// The nodes of `witness` that the roots of blocks with access lists `lists` can read, by trie
/// and path: every node the witness holds on the path of an account the lists name, and on
/// the path of a slot they write in its account's storage trie; and where a branch on those
/// paths has one child besides them, that child (the sibling a removal collapses the branch
/// into). Sorted by owner, then path.
///
/// Guided by the keys, not every path the witness's nodes could be reached by: a witness of a
/// padded trie holds one node for all alike subtries of a depth, reachable by millions of
/// paths, of which the blocks read a few. A node under 32 bytes lies inside its parent and is
/// not listed; a node on several of the paths (alike storage tries) is listed at each.
pub fn nodes_by_path<'a>(
    witness: &Witness,
    lists: impl IntoIterator<Item = &'a BlockAccessList>,
) -> Vec<PathNode> {
    let mut accounts: Vec<Nibbles> = Vec::new();
    let mut slots: BTreeMap<B256, Vec<Nibbles>> = BTreeMap::new();
    for changes in lists.into_iter().flatten() {
        let owner = keccak256(changes.address);
        accounts.push(Nibbles::unpack(owner));
        let written = changes.storage_changes.iter().map(|s| s.slot);
        let keys = slots.entry(owner).or_default();
        keys.extend(written.map(|slot| Nibbles::unpack(keccak256(B256::from(slot)))));
    }
    accounts.sort_unstable();
    accounts.dedup();
    let by_hash: HashMap<B256, &Bytes> = witness.nodes.iter().map(|n| (keccak256(n), n)).collect();
    let mut walk = Walk {
        by_hash: &by_hash,
        out: Vec::new(),
        storages: Vec::new(),
    };
    walk.hashed(witness.parent_state_root, None, Nibbles::new(), &accounts);
    let storages = std::mem::take(&mut walk.storages);
    for (owner, root) in storages {
        if let Some(keys) = slots.get_mut(&owner) {
            keys.sort_unstable();
            keys.dedup();
            walk.hashed(root, Some(owner), Nibbles::new(), keys);
        }
    }
    let mut out = walk.out;
    out.sort_unstable_by_key(|a| (a.owner, a.path));
    out.dedup_by(|a, b| (a.owner, a.path) == (b.owner, b.path));
    out
}

/// The walk of [`nodes_by_path`]: what it keeps, and the storage tries it meets.
struct Walk<'w> {
    by_hash: &'w HashMap<B256, &'w Bytes>,
    out: Vec<PathNode>,
    /// (hashed address, storage root) of the account leaves on the targets' paths.
    storages: Vec<(B256, B256)>,
}

impl Walk<'_> {
    /// The node hashing to `hash` at `path` of `owner`'s trie, and below it what `targets`
    /// (sorted full keys under `path`) lead to.
    fn hashed(&mut self, hash: B256, owner: Option<B256>, path: Nibbles, targets: &[Nibbles]) {
        if hash == EMPTY_ROOT_HASH {
            return;
        }
        let Some(rlp) = self.by_hash.get(&hash).copied() else {
            return;
        };
        self.out.push(PathNode {
            owner,
            path,
            rlp: rlp.clone(),
        });
        if let Ok(node) = TrieNode::decode(&mut rlp.as_ref()) {
            self.open(node, owner, path, targets);
        }
    }

    /// A child reference at `path`: walked on when hashed, opened in place when embedded.
    fn child(&mut self, r: &RlpNode, owner: Option<B256>, path: Nibbles, targets: &[Nibbles]) {
        match r.as_hash() {
            Some(hash) => self.hashed(hash, owner, path, targets),
            None => {
                if let Ok(node) = TrieNode::decode(&mut r.as_slice()) {
                    self.open(node, owner, path, targets);
                }
            }
        }
    }

    /// Below the open `node` at `path`.
    fn open(&mut self, node: TrieNode, owner: Option<B256>, path: Nibbles, targets: &[Nibbles]) {
        match node {
            TrieNode::Branch(branch) => {
                let depth = path.len();
                let mut children = Vec::with_capacity(16);
                let mut stack = branch.stack.iter();
                for i in 0..16u8 {
                    if branch.state_mask.is_bit_set(i)
                        && let Some(r) = stack.next()
                    {
                        children.push((i, r));
                    }
                }
                let under = |i: u8| {
                    let start = targets.partition_point(|t| t.get_unchecked(depth) < i);
                    let end = targets.partition_point(|t| t.get_unchecked(depth) <= i);
                    start..end
                };
                let others = children
                    .iter()
                    .filter(|(i, _)| under(*i).is_empty())
                    .count();
                for (i, r) in &children {
                    let mut at = path;
                    at.push(*i);
                    let run = under(*i);
                    if !run.is_empty() {
                        self.child(r, owner, at, &targets[run]);
                    } else if others == 1 {
                        // The one child besides the targets': a removal may collapse the
                        // branch into it. Kept alone, not walked.
                        self.child(r, owner, at, &[]);
                    }
                }
            }
            TrieNode::Extension(extension) => {
                let below = path.join(&extension.key);
                let start = targets.partition_point(|t| t.slice(..below.len()) < below);
                let end = targets.partition_point(|t| t.slice(..below.len()) <= below);
                if start < end {
                    self.child(&extension.child, owner, below, &targets[start..end]);
                }
            }
            TrieNode::Leaf(leaf) if owner.is_none() => {
                let key = path.join(&leaf.key);
                if key.len() == 64
                    && targets.contains(&key)
                    && let Ok(account) = TrieAccount::decode(&mut leaf.value.as_slice())
                    && account.storage_root != EMPTY_ROOT_HASH
                {
                    self.storages
                        .push((B256::from_slice(&key.pack()), account.storage_root));
                }
            }
            TrieNode::Leaf(_) | TrieNode::EmptyRoot => {}
        }
    }
}
