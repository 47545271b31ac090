//! A witness's nodes by trie and path: how a store that reads nodes by path
//! ([`crate::NodeReader`]) keeps them.

use alloy_primitives::{B256, Bytes, keccak256, map::HashMap};
use alloy_rlp::Decodable;
use alloy_trie::{
    EMPTY_ROOT_HASH, Nibbles, TrieAccount,
    nodes::{RlpNode, TrieNode},
};
use gigagas_dump::Witness;

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

/// Every node of `witness` reachable from its parent root, by trie and path: the account
/// trie's, then, under each account leaf the witness holds, its storage trie's. A node
/// under 32 bytes lies inside its parent and is not listed; a node on several paths (alike
/// subtries, or storage tries of equal content) is listed at each. Nodes no path reaches
/// are left out. Sorted by owner, then path.
pub fn nodes_by_path(witness: &Witness) -> Vec<PathNode> {
    let by_hash: HashMap<B256, &Bytes> = witness.nodes.iter().map(|n| (keccak256(n), n)).collect();
    let mut out = Vec::new();
    let mut storages = Vec::new();
    walk(
        &by_hash,
        witness.parent_state_root,
        None,
        Nibbles::new(),
        &mut out,
        &mut storages,
    );
    storages.sort_unstable();
    storages.dedup();
    for (owner, root) in storages {
        walk(
            &by_hash,
            root,
            Some(owner),
            Nibbles::new(),
            &mut out,
            &mut Vec::new(),
        );
    }
    out.sort_unstable_by_key(|a| (a.owner, a.path));
    out
}

/// The node hashing to `hash` at `path` of `owner`'s trie and every node below it that
/// the witness holds; account leaves' storage roots into `storages`.
fn walk(
    by_hash: &HashMap<B256, &Bytes>,
    hash: B256,
    owner: Option<B256>,
    path: Nibbles,
    out: &mut Vec<PathNode>,
    storages: &mut Vec<(B256, B256)>,
) {
    if hash == EMPTY_ROOT_HASH {
        return;
    }
    let Some(rlp) = by_hash.get(&hash) else {
        return;
    };
    out.push(PathNode {
        owner,
        path,
        rlp: (*rlp).clone(),
    });
    if let Ok(node) = TrieNode::decode(&mut rlp.as_ref()) {
        below(by_hash, node, owner, path, out, storages);
    }
}

/// The children of the open `node` at `path`: those referenced by hash walked, those
/// embedded opened in place.
fn below(
    by_hash: &HashMap<B256, &Bytes>,
    node: TrieNode,
    owner: Option<B256>,
    path: Nibbles,
    out: &mut Vec<PathNode>,
    storages: &mut Vec<(B256, B256)>,
) {
    let mut child =
        |reference: &RlpNode, at: Nibbles, out: &mut Vec<PathNode>| match reference.as_hash() {
            Some(hash) => walk(by_hash, hash, owner, at, out, storages),
            None => {
                if let Ok(node) = TrieNode::decode(&mut reference.as_slice()) {
                    below(by_hash, node, owner, at, out, storages);
                }
            }
        };
    match node {
        TrieNode::Branch(branch) => {
            let mut stack = branch.stack.iter();
            for i in 0..16u8 {
                if branch.state_mask.is_bit_set(i)
                    && let Some(r) = stack.next()
                {
                    let mut at = path;
                    at.push(i);
                    child(r, at, out);
                }
            }
        }
        TrieNode::Extension(extension) => {
            child(&extension.child, path.join(&extension.key), out);
        }
        TrieNode::Leaf(leaf) if owner.is_none() => {
            let key = path.join(&leaf.key);
            if key.len() == 64
                && let Ok(account) = TrieAccount::decode(&mut leaf.value.as_slice())
                && account.storage_root != EMPTY_ROOT_HASH
            {
                storages.push((B256::from_slice(&key.pack()), account.storage_root));
            }
        }
        TrieNode::Leaf(_) | TrieNode::EmptyRoot => {}
    }
}
