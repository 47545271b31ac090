//! A sparse Merkle-Patricia trie over blinded proof nodes.
//!
//! A node is either open (decoded: leaf, extension, branch) or blinded (only its hash is
//! known). Blinded nodes are opened on demand from a [`NodeStore`] of witness nodes; a
//! blinded node the store lacks is a [`RootError::MissingNode`] at its path. Open nodes cache
//! their RLP reference until an update on their path clears it, so re-hashing after an
//! update costs the updated paths only.
//!
//! Keys are fixed-length (64 nibbles, a keccak256 hash), so no branch holds a value.

use crate::error::{RootError, TrieId, TriePath};
use alloy_primitives::{B256, Bytes, keccak256, map::HashMap};
use alloy_rlp::{Decodable, EMPTY_STRING_CODE};
use alloy_trie::{
    EMPTY_ROOT_HASH, Nibbles, TrieMask,
    nodes::{BranchNodeRef, ExtensionNodeRef, LeafNodeRef, RlpNode, TrieNode},
};
use rayon::prelude::*;
use std::{
    collections::HashSet,
    mem,
    sync::{Arc, Mutex},
};

/// The hashes of the witness nodes a trie opened, shared by a state's tries (storage tasks
/// run on any thread): what a root needed, for [`crate::root_only_witness`].
pub(crate) type Seen = Arc<Mutex<HashSet<B256>>>;

/// Witness nodes by hash (keccak256 of their RLP), shared by every trie of a state.
#[derive(Debug, Default, Clone)]
pub(crate) struct NodeStore {
    nodes: HashMap<B256, Bytes>,
}

impl NodeStore {
    /// The store of `nodes`.
    pub(crate) fn new(nodes: &[Bytes]) -> Self {
        // Hashing every node is most of opening a witness: on rayon's pool when large.
        let hashed = |n: &Bytes| (keccak256(n), n.clone());
        let nodes = if nodes.len() >= 1024 {
            nodes.par_iter().map(hashed).collect()
        } else {
            nodes.iter().map(hashed).collect()
        };
        Self { nodes }
    }

    /// The store of nodes already keyed by their hash (read from a store that keys them
    /// so): nothing is hashed again.
    pub(crate) fn from_hashed(nodes: Vec<(B256, Bytes)>) -> Self {
        Self {
            nodes: nodes.into_iter().collect(),
        }
    }

    /// Adds `nodes`.
    pub(crate) fn extend(&mut self, nodes: &[Bytes]) {
        self.nodes
            .extend(nodes.iter().map(|n| (keccak256(n), n.clone())));
    }

    /// Whether a node hashes to `hash`.
    pub(crate) fn contains(&self, hash: &B256) -> bool {
        self.nodes.contains_key(hash)
    }

    /// The node that hashes to `hash`.
    pub(crate) fn get(&self, hash: &B256) -> Option<&Bytes> {
        self.nodes.get(hash)
    }

    /// Adds nodes already keyed by their hash.
    pub(crate) fn extend_hashed(&mut self, nodes: impl IntoIterator<Item = (B256, Bytes)>) {
        self.nodes.extend(nodes);
    }
}

/// One node of a sparse trie.
#[derive(Debug, Clone)]
enum Node {
    /// No node (the empty trie, or an empty branch slot).
    Empty,
    /// A node known by its hash only.
    Blinded(B256),
    /// A leaf: the rest of the key and the value.
    Leaf {
        key: Nibbles,
        value: Vec<u8>,
        rlp: Option<RlpNode>,
    },
    /// An extension: a shared key part and the branch below it.
    Extension {
        key: Nibbles,
        child: Box<Node>,
        rlp: Option<RlpNode>,
    },
    /// A branch: 16 children, by nibble.
    Branch {
        children: Box<[Node; 16]>,
        rlp: Option<RlpNode>,
    },
}

fn leaf(key: Nibbles, value: Vec<u8>) -> Node {
    Node::Leaf {
        key,
        value,
        rlp: None,
    }
}

fn extension(key: Nibbles, child: Node) -> Node {
    if key.is_empty() {
        child
    } else {
        Node::Extension {
            key,
            child: Box::new(child),
            rlp: None,
        }
    }
}

fn empty_children() -> Box<[Node; 16]> {
    Box::new(std::array::from_fn(|_| Node::Empty))
}

/// Where `rest` (a leaf of `value`) parts from `old_key` after `c` shared nibbles: an
/// extension over those nibbles to a branch holding `below` (what stood under `old_key`'s
/// nibbles past `c`) and the new leaf.
fn fork(c: usize, old_key: Nibbles, below: Node, rest: Nibbles, value: Vec<u8>) -> Node {
    let mut children = empty_children();
    children[old_key.get_unchecked(c) as usize] = below;
    children[rest.get_unchecked(c) as usize] = leaf(rest.slice(c + 1..), value);
    let rlp = None;
    extension(rest.slice(..c), Node::Branch { children, rlp })
}

fn nibble(n: u8) -> Nibbles {
    Nibbles::from_nibbles_unchecked([n])
}

/// A sparse trie: its root node, which trie it is (for errors) and the witness nodes it
/// opens blinded nodes from.
#[derive(Debug, Clone)]
pub(crate) struct SparseTrie {
    root: Node,
    id: TrieId,
    store: Arc<NodeStore>,
    /// Where the hashes of the nodes opened from `store` are recorded, if anywhere.
    seen: Option<Seen>,
    /// Paths whose node a removal took away since the last root (a removed leaf, a node
    /// merged into its parent): what [`Self::root_collecting`] reports as deleted.
    removed: Vec<Nibbles>,
    /// Where `root` lies in its whole trie: empty for a whole trie, a path for a lower
    /// subtrie taken out of one ([`Self::detach`]). Keys stay full keys.
    prefix: Nibbles,
}

/// A trie's nodes changed by its updates since its last root, by path: the new node's RLP,
/// or `None` where no node is kept any more (removed, or now under 32 bytes and so inside
/// its parent).
pub type NodeChanges = Vec<(Nibbles, Option<Bytes>)>;

impl SparseTrie {
    /// The trie whose root hash is `root` (the empty trie for [`EMPTY_ROOT_HASH`]), blinded.
    pub(crate) fn blinded(id: TrieId, root: B256, store: Arc<NodeStore>) -> Self {
        let root = if root == EMPTY_ROOT_HASH {
            Node::Empty
        } else {
            Node::Blinded(root)
        };
        Self {
            root,
            id,
            store,
            seen: None,
            removed: Vec::new(),
            prefix: Nibbles::new(),
        }
    }

    /// The open trie of `leaves` (sorted by key, each key once, all of one length), built
    /// bottom-up in one pass (no walk from the root per leaf); nothing hashed yet.
    pub(crate) fn from_sorted(
        id: TrieId,
        store: Arc<NodeStore>,
        mut leaves: Vec<(Nibbles, Vec<u8>)>,
    ) -> Self {
        Self {
            root: build(&mut leaves, 0),
            id,
            store,
            seen: None,
            removed: Vec::new(),
            prefix: Nibbles::new(),
        }
    }

    /// Records the hash of every node opened from the store from now on in `seen`.
    pub(crate) fn record(&mut self, seen: Option<Seen>) {
        self.seen = seen;
    }

    /// Opens blinded nodes from `store` from now on.
    pub(crate) fn set_store(&mut self, store: Arc<NodeStore>) {
        self.store = store;
    }

    /// The value at `key`, `None` when the trie proves it absent.
    pub(crate) fn get(&mut self, key: Nibbles) -> Result<Option<Vec<u8>>, RootError> {
        let ctx = Ctx {
            id: self.id,
            store: &self.store,
            seen: self.seen.as_ref(),
        };
        get(
            &mut self.root,
            self.prefix,
            key.slice(self.prefix.len()..),
            &ctx,
        )
    }

    /// Sets the value at `key` (inserting or replacing the leaf).
    pub(crate) fn insert(&mut self, key: Nibbles, value: Vec<u8>) -> Result<(), RootError> {
        let ctx = Ctx {
            id: self.id,
            store: &self.store,
            seen: self.seen.as_ref(),
        };
        insert(
            &mut self.root,
            self.prefix,
            key.slice(self.prefix.len()..),
            value,
            &ctx,
        )
    }

    /// Removes the leaf at `key`, if any, collapsing a branch left with one child into its
    /// parent (which opens that child: the sibling a proof of `key` alone does not hold).
    pub(crate) fn remove(&mut self, key: Nibbles) -> Result<(), RootError> {
        let ctx = Ctx {
            id: self.id,
            store: &self.store,
            seen: self.seen.as_ref(),
        };
        let rest = key.slice(self.prefix.len()..);
        remove(&mut self.root, self.prefix, rest, &ctx, &mut self.removed).map(|_| ())
    }

    /// The root hash, hashing the nodes updated since the last call.
    pub(crate) fn root(&mut self) -> B256 {
        self.removed.clear();
        if matches!(self.root, Node::Empty) {
            return EMPTY_ROOT_HASH;
        }
        let mut buf = Vec::with_capacity(600);
        let rlp = rlp_node(&mut self.root, &mut buf);
        rlp.as_hash().unwrap_or_else(|| keccak256(rlp.as_slice()))
    }

    /// [`Self::root`], adding to `out` the nodes its updates changed since the last root,
    /// by path, as a store keyed by path keeps them: every node hashed anew (the root node
    /// always, others when 32 bytes or more; a shorter one lies inside its parent and its
    /// path is cleared), and every path a removal left without a node.
    pub(crate) fn root_collecting(&mut self, out: &mut NodeChanges) -> B256 {
        let start = out.len();
        let root = if matches!(self.root, Node::Empty) {
            out.push((self.prefix, None));
            EMPTY_ROOT_HASH
        } else {
            let mut buf = Vec::with_capacity(600);
            let rlp = rlp_node_collecting(&mut self.root, self.prefix, &mut buf, out);
            rlp.as_hash().unwrap_or_else(|| keccak256(rlp.as_slice()))
        };
        let mut removed = mem::take(&mut self.removed);
        removed.sort_unstable();
        removed.dedup();
        let mut updated: Vec<Nibbles> = out[start..].iter().map(|(p, _)| *p).collect();
        updated.sort_unstable();
        for path in removed {
            if updated.binary_search(&path).is_err() {
                out.push((path, None));
            }
        }
        root
    }
}

impl SparseTrie {
    /// Takes out the lower subtrie at `path` (below the root of this whole trie, every
    /// node above it a branch), to be updated on its own and put back ([`Self::attach`]):
    /// a trie of its own whose keys are still full keys. `None` where a node above `path`
    /// is no branch, or is blinded and not in the store (not read yet). The branches above
    /// lose their cached references; the slot stays empty until the subtrie is back.
    pub(crate) fn detach(&mut self, path: Nibbles) -> Result<Option<SparseTrie>, RootError> {
        let ctx = Ctx {
            id: self.id,
            store: &self.store,
            seen: self.seen.as_ref(),
        };
        let mut node = &mut self.root;
        let mut at = self.prefix;
        for i in 0..path.len() {
            if matches!(node, Node::Blinded(hash) if !self.store.contains(hash)) {
                return Ok(None);
            }
            open(node, at, &ctx)?;
            if !matches!(node, Node::Branch { .. }) {
                return Ok(None);
            }
            let Node::Branch { children, rlp } = node else {
                unreachable!("checked above");
            };
            *rlp = None;
            let n = path.get_unchecked(i);
            at.push(n);
            node = &mut children[n as usize];
        }
        Ok(Some(SparseTrie {
            root: mem::replace(node, Node::Empty),
            id: self.id,
            store: self.store.clone(),
            seen: self.seen.clone(),
            removed: Vec::new(),
            prefix: path,
        }))
    }

    /// Puts back a subtrie [`Self::detach`] took out (updated and hashed since, or not):
    /// the branches above it may be left with fewer than two children, which
    /// [`Self::settle`] mends.
    pub(crate) fn attach(&mut self, part: SparseTrie) {
        let mut node = &mut self.root;
        for i in 0..part.prefix.len() {
            let Node::Branch { children, .. } = node else {
                unreachable!("a subtrie is put back where it was taken out");
            };
            node = &mut children[part.prefix.get_unchecked(i) as usize];
        }
        *node = part.root;
        self.removed.extend(part.removed);
    }

    /// Mends the branches above `depth` that the subtries put back ([`Self::attach`])
    /// left with one child (collapsed into it) or none (removed), bottom-up, as a removal
    /// does: the trie is then the one the same updates give applied to it whole.
    pub(crate) fn settle(&mut self, depth: usize) -> Result<(), RootError> {
        let ctx = Ctx {
            id: self.id,
            store: &self.store,
            seen: self.seen.as_ref(),
        };
        settle(&mut self.root, self.prefix, depth, &ctx, &mut self.removed)
    }

    /// Where this trie lies in its whole trie (empty for a whole trie).
    pub(crate) fn prefix(&self) -> Nibbles {
        self.prefix
    }
}

/// [`SparseTrie::settle`] below `node` at `path`: only branches whose reference an update
/// cleared are visited.
fn settle(
    node: &mut Node,
    path: Nibbles,
    depth: usize,
    ctx: &Ctx<'_>,
    removed: &mut Vec<Nibbles>,
) -> Result<(), RootError> {
    let Node::Branch {
        children,
        rlp: None,
    } = node
    else {
        return Ok(());
    };
    if path.len() + 1 < depth {
        for (i, child) in children.iter_mut().enumerate() {
            let mut p = path;
            p.push(i as u8);
            settle(child, p, depth, ctx, removed)?;
        }
    }
    if children.iter().all(|c| matches!(c, Node::Empty)) {
        *node = Node::Empty;
        removed.push(path);
    } else if let Some(j) = lone_child(children) {
        collapse(node, path, j, ctx, removed)?;
    }
    Ok(())
}

impl SparseTrie {
    /// Every open node whose hash `store` lacks (the nodes updates made, hashed by the
    /// last [`Self::root`]), keyed by hash: with `store`, the nodes of the trie as it is
    /// now. The root node counts even when it is under 32 bytes (a storage root is always
    /// a hash).
    pub(crate) fn new_nodes(&self, store: &NodeStore, out: &mut Vec<(B256, Bytes)>) {
        match &self.root {
            Node::Empty | Node::Blinded(_) => {}
            root => {
                let reference = cached(root);
                if reference.as_hash().is_none() {
                    let hash = keccak256(reference.as_slice());
                    if !store.contains(&hash) {
                        out.push((hash, Bytes::copy_from_slice(reference.as_slice())));
                    }
                }
                new_nodes(root, store, out);
            }
        }
    }
}

impl SparseTrie {
    /// The nodes on the paths of `targets` (full keys, or shorter paths: sorted, each
    /// once), as a proof builder retains them: every node whose path is a prefix of a
    /// target, each once, those referenced by hash only (a node under 32 bytes lies inside
    /// its parent). Blinded nodes on the way are opened from the store; a trie whose root
    /// was computed since its last update has every other node's reference cached.
    pub(crate) fn proofs(
        &mut self,
        targets: &[Nibbles],
        out: &mut Vec<Bytes>,
    ) -> Result<(), RootError> {
        if targets.is_empty() {
            return Ok(());
        }
        let ctx = Ctx {
            id: self.id,
            store: &self.store,
            seen: self.seen.as_ref(),
        };
        proofs(&mut self.root, self.prefix, targets, &ctx, out)
    }
}

impl SparseTrie {
    /// Which trie this is.
    pub(crate) fn id(&self) -> TrieId {
        self.id
    }

    /// One round of reading the nodes on the paths of `targets` (full keys, sorted, each
    /// once; `true` where the key may be removed): walks every target's path from the
    /// root, opening each blinded node whose RLP `walk` holds (read in an earlier round),
    /// and asks in `walk` for the first blinded node it cannot open on each path. Where a
    /// removal may leave a branch with one child, that branch's other blinded children are
    /// asked for too (the sibling a removal collapses into its parent).
    pub(crate) fn reveal_round(
        &mut self,
        targets: &[(Nibbles, bool)],
        walk: &mut RevealWalk<'_>,
    ) -> Result<(), RootError> {
        if targets.is_empty() {
            return Ok(());
        }
        reveal(&mut self.root, self.prefix, targets, walk)
    }
}

/// One round of [`SparseTrie::reveal_round`]: the nodes read so far, and what the round
/// asks for.
pub(crate) struct RevealWalk<'a> {
    /// Nodes read, by the hash their parent references them by.
    pub(crate) fetched: &'a HashMap<B256, Bytes>,
    /// Hashes the source does not hold (never asked for again).
    pub(crate) unavailable: &'a HashSet<B256>,
    /// The blinded nodes to read: path and the hash their parent references them by.
    pub(crate) want: Vec<(Nibbles, B256)>,
    /// Open nodes met on the targets' paths (counted when `count_held`).
    pub(crate) held: u64,
    /// Whether to count `held` (the first round: nodes held before any read).
    pub(crate) count_held: bool,
}

impl RevealWalk<'_> {
    /// Opens `node` if it is blinded and read; `false` (and asked for, once) if it is
    /// blinded and not read.
    fn open(&mut self, node: &mut Node, path: Nibbles) -> Result<bool, RootError> {
        let Node::Blinded(hash) = *node else {
            return Ok(true);
        };
        match self.fetched.get(&hash) {
            Some(rlp) => {
                *node = decode(rlp, RlpNode::word_rlp(&hash)).map_err(|e| RootError::BadNode {
                    hash,
                    reason: e.to_string(),
                })?;
                Ok(true)
            }
            None => {
                if !self.unavailable.contains(&hash) {
                    self.want.push((path, hash));
                }
                Ok(false)
            }
        }
    }
}

/// [`SparseTrie::reveal_round`] below `node` at `path`, a prefix of every target.
fn reveal(
    node: &mut Node,
    path: Nibbles,
    targets: &[(Nibbles, bool)],
    walk: &mut RevealWalk<'_>,
) -> Result<(), RootError> {
    if walk.count_held && !matches!(node, Node::Empty | Node::Blinded(_)) {
        walk.held += 1;
    }
    if !walk.open(node, path)? {
        return Ok(());
    }
    match node {
        Node::Extension { key, child, .. } => {
            let below = path.join(key);
            // Sorted: the targets under the extension are one run.
            let start = targets.partition_point(|(t, _)| t.slice(..below.len()) < below);
            let end = targets.partition_point(|(t, _)| t.slice(..below.len()) <= below);
            if start < end {
                reveal(child, below, &targets[start..end], walk)?;
            }
        }
        Node::Branch { children, .. } => {
            let depth = path.len();
            let mut runs: [(usize, usize, bool); 16] = [(0, 0, false); 16];
            let mut rest = targets;
            let mut offset = 0;
            while let Some((first, _)) = rest.first() {
                if first.len() <= depth {
                    break;
                }
                let n = first.get_unchecked(depth);
                let end = rest.partition_point(|(t, _)| t.get_unchecked(depth) <= n);
                let removes = rest[..end].iter().any(|(_, r)| *r);
                runs[n as usize] = (offset, offset + end, removes);
                offset += end;
                rest = &rest[end..];
            }
            let removing = runs.iter().filter(|r| r.2).count();
            if removing > 0 {
                let occupied = children
                    .iter()
                    .filter(|c| !matches!(c, Node::Empty))
                    .count();
                if occupied <= removing + 1 {
                    // The branch may end with one child: open the others, which it may
                    // collapse into.
                    for (i, child) in children.iter_mut().enumerate() {
                        if runs[i].0 == runs[i].1 {
                            let mut p = path;
                            p.push(i as u8);
                            walk.open(child, p)?;
                        }
                    }
                }
            }
            for (i, (start, end, _)) in runs.into_iter().enumerate() {
                if start < end {
                    let mut p = path;
                    p.push(i as u8);
                    reveal(&mut children[i], p, &targets[start..end], walk)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// [`SparseTrie::proofs`] below `node` at `path`, a prefix of every target.
fn proofs(
    node: &mut Node,
    path: Nibbles,
    targets: &[Nibbles],
    ctx: &Ctx<'_>,
    out: &mut Vec<Bytes>,
) -> Result<(), RootError> {
    open(node, path, ctx)?;
    if matches!(node, Node::Empty) {
        return Ok(());
    }
    if cached(node).as_hash().is_some()
        && let Some(rlp) = encode(node)
    {
        out.push(rlp);
    }
    match node {
        Node::Extension { key, child, .. } => {
            let below = path.join(key);
            let targets: Vec<Nibbles> = targets
                .iter()
                .filter(|t| t.starts_with(&below))
                .copied()
                .collect();
            if !targets.is_empty() {
                proofs(child, below, &targets, ctx, out)?;
            }
        }
        Node::Branch { children, .. } => {
            let depth = path.len();
            let mut by_nibble: [Vec<Nibbles>; 16] = Default::default();
            for t in targets.iter().filter(|t| t.len() > depth) {
                by_nibble[t.get_unchecked(depth) as usize].push(*t);
            }
            for (i, targets) in by_nibble.iter().enumerate() {
                if !targets.is_empty() {
                    let mut p = path;
                    p.push(i as u8);
                    proofs(&mut children[i], p, targets, ctx, out)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// An open node's cached reference ([`SparseTrie::root`] has run since its last update).
fn cached(node: &Node) -> RlpNode {
    match node {
        Node::Empty => RlpNode::from_rlp(&[EMPTY_STRING_CODE]),
        Node::Blinded(hash) => RlpNode::word_rlp(hash),
        Node::Leaf { rlp, .. } | Node::Extension { rlp, .. } | Node::Branch { rlp, .. } => rlp
            .clone()
            .expect("a node's reference is cached once the trie's root is computed"),
    }
}

/// The RLP of an open node whose children's references are cached; `None` for an empty
/// or blinded node.
fn encode(node: &Node) -> Option<Bytes> {
    let mut buf = Vec::new();
    match node {
        Node::Leaf { key, value, .. } => {
            LeafNodeRef::new(key, value).rlp(&mut buf);
        }
        Node::Extension { key, child, .. } => {
            ExtensionNodeRef::new(key, &cached(child)).rlp(&mut buf);
        }
        Node::Branch { children, .. } => {
            let mut stack = Vec::with_capacity(16);
            let mut mask = TrieMask::default();
            for (i, c) in children.iter().enumerate() {
                if !matches!(c, Node::Empty) {
                    stack.push(cached(c));
                    mask.set_bit(i as u8);
                }
            }
            BranchNodeRef::new(&stack, mask).rlp(&mut buf);
        }
        Node::Empty | Node::Blinded(_) => return None,
    }
    Some(Bytes::from(buf))
}

/// [`SparseTrie::new_nodes`] below `node`.
fn new_nodes(node: &Node, store: &NodeStore, out: &mut Vec<(B256, Bytes)>) {
    if let Some(hash) = cached(node).as_hash()
        && !store.contains(&hash)
        && let Some(rlp) = encode(node)
    {
        out.push((hash, rlp));
    }
    match node {
        Node::Extension { child, .. } => new_nodes(child, store, out),
        Node::Branch { children, .. } => {
            for c in children.iter() {
                new_nodes(c, store, out);
            }
        }
        _ => {}
    }
}

/// The node of `leaves` (sorted, distinct keys of one length) below `depth` nibbles, which
/// they all share.
fn build(leaves: &mut [(Nibbles, Vec<u8>)], depth: usize) -> Node {
    match leaves {
        [] => Node::Empty,
        [(key, value)] => leaf(key.slice(depth..), mem::take(value)),
        [(first, _), .., (last, _)] => {
            // Sorted: what the first and last share, all share.
            let shared = first
                .slice(depth..)
                .common_prefix_length(&last.slice(depth..));
            let prefix = first.slice(depth..depth + shared);
            let depth = depth + shared;
            let mut children = empty_children();
            let mut rest = leaves;
            while let Some((key, _)) = rest.first() {
                let n = key.get_unchecked(depth);
                let end = rest.partition_point(|(k, _)| k.get_unchecked(depth) <= n);
                let (these, after) = rest.split_at_mut(end);
                children[n as usize] = build(these, depth + 1);
                rest = after;
            }
            extension(
                prefix,
                Node::Branch {
                    children,
                    rlp: None,
                },
            )
        }
    }
}

/// What opening a node needs.
struct Ctx<'a> {
    id: TrieId,
    store: &'a NodeStore,
    seen: Option<&'a Seen>,
}

impl Ctx<'_> {
    fn missing(&self, path: Nibbles) -> RootError {
        RootError::MissingNode {
            trie: self.id,
            path: TriePath(path),
        }
    }
}

/// Opens `node` if it is blinded; `path` is its path from the root.
fn open(node: &mut Node, path: Nibbles, ctx: &Ctx<'_>) -> Result<(), RootError> {
    let Node::Blinded(hash) = *node else {
        return Ok(());
    };
    let rlp = ctx.store.get(&hash).ok_or_else(|| ctx.missing(path))?;
    if let Some(seen) = ctx.seen {
        seen.lock().unwrap_or_else(|e| e.into_inner()).insert(hash);
    }
    *node = decode(rlp, RlpNode::word_rlp(&hash)).map_err(|e| RootError::BadNode {
        hash,
        reason: e.to_string(),
    })?;
    Ok(())
}

/// The open node of `rlp` (whose reference in its parent is `reference`); children
/// referenced by hash stay blinded, children embedded in it are opened too.
fn decode(mut rlp: &[u8], reference: RlpNode) -> alloy_rlp::Result<Node> {
    let node = TrieNode::decode(&mut rlp)?;
    if !rlp.is_empty() {
        return Err(alloy_rlp::Error::Custom("trailing bytes after the node"));
    }
    let child = |r: &RlpNode| -> alloy_rlp::Result<Node> {
        match r.as_hash() {
            Some(hash) => Ok(Node::Blinded(hash)),
            None => decode(r.as_slice(), r.clone()),
        }
    };
    Ok(match node {
        TrieNode::EmptyRoot => Node::Empty,
        TrieNode::Leaf(l) => Node::Leaf {
            key: l.key,
            value: l.value,
            rlp: Some(reference),
        },
        TrieNode::Extension(e) => Node::Extension {
            key: e.key,
            child: Box::new(child(&e.child)?),
            rlp: Some(reference),
        },
        TrieNode::Branch(b) => {
            let mut children = empty_children();
            let mut stack = b.stack.iter();
            for i in 0..16u8 {
                if b.state_mask.is_bit_set(i) {
                    let r = stack
                        .next()
                        .ok_or(alloy_rlp::Error::Custom("branch mask and children differ"))?;
                    children[i as usize] = child(r)?;
                }
            }
            Node::Branch {
                children,
                rlp: Some(reference),
            }
        }
    })
}

fn get(
    node: &mut Node,
    path: Nibbles,
    rest: Nibbles,
    ctx: &Ctx<'_>,
) -> Result<Option<Vec<u8>>, RootError> {
    open(node, path, ctx)?;
    match node {
        Node::Empty => Ok(None),
        Node::Leaf { key, value, .. } => Ok((*key == rest).then(|| value.clone())),
        Node::Extension { key, child, .. } => {
            if rest.starts_with(key) {
                get(child, path.join(key), rest.slice(key.len()..), ctx)
            } else {
                Ok(None)
            }
        }
        Node::Branch { children, .. } => {
            let Some(i) = rest.first() else {
                return Ok(None);
            };
            let mut p = path;
            p.push(i);
            get(&mut children[i as usize], p, rest.slice(1..), ctx)
        }
        Node::Blinded(_) => unreachable!("opened above"),
    }
}

fn insert(
    node: &mut Node,
    path: Nibbles,
    rest: Nibbles,
    value: Vec<u8>,
    ctx: &Ctx<'_>,
) -> Result<(), RootError> {
    open(node, path, ctx)?;
    match node {
        Node::Empty => *node = leaf(rest, value),
        Node::Leaf {
            key,
            value: old,
            rlp,
        } => {
            if *key == rest {
                *old = value;
                *rlp = None;
                return Ok(());
            }
            // Keys have one length, so two different keys differ before either ends.
            let c = key.common_prefix_length(&rest);
            let below = leaf(key.slice(c + 1..), mem::take(old));
            *node = fork(c, *key, below, rest, value);
        }
        Node::Extension { key, child, rlp } => {
            let c = key.common_prefix_length(&rest);
            if c == key.len() {
                *rlp = None;
                return insert(child, path.join(key), rest.slice(c..), value, ctx);
            }
            let below = extension(
                key.slice(c + 1..),
                mem::replace(child.as_mut(), Node::Empty),
            );
            *node = fork(c, *key, below, rest, value);
        }
        Node::Branch { children, rlp } => {
            *rlp = None;
            let i = rest.get_unchecked(0);
            let mut p = path;
            p.push(i);
            return insert(&mut children[i as usize], p, rest.slice(1..), value, ctx);
        }
        Node::Blinded(_) => unreachable!("opened above"),
    }
    Ok(())
}

/// Removes `rest` below `node`; whether a leaf was removed.
fn remove(
    node: &mut Node,
    path: Nibbles,
    rest: Nibbles,
    ctx: &Ctx<'_>,
    removed: &mut Vec<Nibbles>,
) -> Result<bool, RootError> {
    open(node, path, ctx)?;
    match node {
        Node::Empty => Ok(false),
        Node::Leaf { key, .. } => {
            if *key == rest {
                *node = Node::Empty;
                removed.push(path);
                Ok(true)
            } else {
                Ok(false)
            }
        }
        Node::Extension { key, child, .. } => {
            if !rest.starts_with(key) {
                return Ok(false);
            }
            let key = *key;
            let below = path.join(&key);
            if !remove(child, below, rest.slice(key.len()..), ctx, removed)? {
                return Ok(false);
            }
            // The child was a branch; it is now a branch, or collapsed into a leaf or an
            // extension, which merge into this extension.
            let child = mem::replace(child.as_mut(), Node::Empty);
            // A child merged into this node leaves its path empty.
            if matches!(child, Node::Empty) {
                removed.push(path);
            } else if matches!(child, Node::Leaf { .. } | Node::Extension { .. }) {
                removed.push(below);
            }
            *node = match child {
                Node::Empty => Node::Empty,
                Node::Leaf { key: k, value, .. } => leaf(key.join(&k), value),
                Node::Extension { key: k, child, .. } => Node::Extension {
                    key: key.join(&k),
                    child,
                    rlp: None,
                },
                other => extension(key, other),
            };
            Ok(true)
        }
        Node::Branch { children, rlp } => {
            let i = rest.get_unchecked(0);
            let mut p = path;
            p.push(i);
            if !remove(&mut children[i as usize], p, rest.slice(1..), ctx, removed)? {
                return Ok(false);
            }
            *rlp = None;
            if let Some(j) = lone_child(children) {
                collapse(node, path, j, ctx, removed)?;
            }
            Ok(true)
        }
        Node::Blinded(_) => unreachable!("opened above"),
    }
}

/// The one non-empty child of a branch's `children`, if exactly one is.
fn lone_child(children: &[Node; 16]) -> Option<u8> {
    let mut left = (0..16u8).filter(|&j| !matches!(children[j as usize], Node::Empty));
    match (left.next(), left.next()) {
        (Some(j), None) => Some(j),
        _ => None,
    }
}

/// Collapses the branch `node` at `path`, left with child `j` alone, into that child
/// (opened: the sibling a proof of the removed key alone does not hold), recording in
/// `removed` the child's path when its node merges into the branch's.
fn collapse(
    node: &mut Node,
    path: Nibbles,
    j: u8,
    ctx: &Ctx<'_>,
    removed: &mut Vec<Nibbles>,
) -> Result<(), RootError> {
    let Node::Branch { children, .. } = node else {
        unreachable!("only a branch collapses");
    };
    let mut p = path;
    p.push(j);
    open(&mut children[j as usize], p, ctx)?;
    let only = mem::replace(&mut children[j as usize], Node::Empty);
    if matches!(only, Node::Leaf { .. } | Node::Extension { .. }) {
        removed.push(p);
    }
    *node = match only {
        Node::Leaf { key, value, .. } => leaf(nibble(j).join(&key), value),
        Node::Extension { key, child, .. } => Node::Extension {
            key: nibble(j).join(&key),
            child,
            rlp: None,
        },
        branch => extension(nibble(j), branch),
    };
    Ok(())
}

/// The node's reference in its parent (its RLP when shorter than 32 bytes, else the RLP of
/// its hash), computed for the nodes updated since the last call and cached.
fn rlp_node(node: &mut Node, buf: &mut Vec<u8>) -> RlpNode {
    match node {
        Node::Empty => RlpNode::from_rlp(&[EMPTY_STRING_CODE]),
        Node::Blinded(hash) => RlpNode::word_rlp(hash),
        Node::Leaf { key, value, rlp } => {
            if let Some(r) = rlp {
                return r.clone();
            }
            buf.clear();
            let r = LeafNodeRef::new(key, value).rlp(buf);
            *rlp = Some(r.clone());
            r
        }
        Node::Extension { key, child, rlp } => {
            if let Some(r) = rlp {
                return r.clone();
            }
            let c = rlp_node(child, buf);
            buf.clear();
            let r = ExtensionNodeRef::new(key, &c).rlp(buf);
            *rlp = Some(r.clone());
            r
        }
        Node::Branch { children, rlp } => {
            if let Some(r) = rlp {
                return r.clone();
            }
            let mut stack = Vec::with_capacity(16);
            let mut mask = TrieMask::default();
            for (i, c) in children.iter_mut().enumerate() {
                if !matches!(c, Node::Empty) {
                    stack.push(rlp_node(c, buf));
                    mask.set_bit(i as u8);
                }
            }
            buf.clear();
            let r = BranchNodeRef::new(&stack, mask).rlp(buf);
            *rlp = Some(r.clone());
            r
        }
    }
}

/// [`rlp_node`] of `node` at `path`, adding to `out` each node it hashes anew (see
/// [`SparseTrie::root_collecting`]).
fn rlp_node_collecting(
    node: &mut Node,
    path: Nibbles,
    buf: &mut Vec<u8>,
    out: &mut NodeChanges,
) -> RlpNode {
    let r = match node {
        Node::Empty | Node::Blinded(_) => return rlp_node(node, buf),
        Node::Leaf { rlp: Some(r), .. }
        | Node::Extension { rlp: Some(r), .. }
        | Node::Branch { rlp: Some(r), .. } => return r.clone(),
        Node::Leaf { .. } => rlp_node(node, buf),
        Node::Extension { key, child, rlp } => {
            let c = rlp_node_collecting(child, path.join(key), buf, out);
            buf.clear();
            let r = ExtensionNodeRef::new(key, &c).rlp(buf);
            *rlp = Some(r.clone());
            r
        }
        Node::Branch { children, rlp } => {
            let mut stack = Vec::with_capacity(16);
            let mut mask = TrieMask::default();
            for (i, c) in children.iter_mut().enumerate() {
                if !matches!(c, Node::Empty) {
                    let mut p = path;
                    p.push(i as u8);
                    stack.push(rlp_node_collecting(c, p, buf, out));
                    mask.set_bit(i as u8);
                }
            }
            buf.clear();
            let r = BranchNodeRef::new(&stack, mask).rlp(buf);
            *rlp = Some(r.clone());
            r
        }
    };
    // The node's own RLP: what a reference by hash points to. Under 32 bytes it lies
    // inside its parent (the root is handled by the caller).
    if r.as_hash().is_some() {
        out.push((path, Some(Bytes::copy_from_slice(buf))));
    } else if path.is_empty() {
        out.push((path, Some(Bytes::copy_from_slice(r.as_slice()))));
    } else {
        out.push((path, None));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_trie::HashBuilder;
    use std::collections::BTreeMap;

    fn key(i: u64) -> Nibbles {
        Nibbles::unpack(keccak256(i.to_be_bytes()))
    }

    fn reference_root(map: &BTreeMap<Nibbles, Vec<u8>>) -> B256 {
        let mut hb = HashBuilder::default();
        for (k, v) in map {
            hb.add_leaf(*k, v);
        }
        hb.root()
    }

    /// Inserts and removals on an open trie (no witness) match the hash builder's root.
    #[test]
    fn open_trie_matches_hash_builder() {
        let store = Arc::new(NodeStore::default());
        let mut trie = SparseTrie::blinded(TrieId::Account, EMPTY_ROOT_HASH, store);
        let mut map = BTreeMap::new();
        for i in 0..300u64 {
            // Short values give embedded (under 32 bytes) leaves too.
            let value = if i % 3 == 0 {
                vec![(i % 200) as u8 + 1]
            } else {
                vec![7; 40]
            };
            trie.insert(key(i), value.clone()).unwrap();
            map.insert(key(i), value);
            if i % 17 == 0 {
                assert_eq!(trie.root(), reference_root(&map));
            }
        }
        for i in (0..300u64).filter(|i| i % 2 == 1 || i % 7 == 0) {
            trie.remove(key(i)).unwrap();
            map.remove(&key(i));
            if i % 13 == 0 {
                assert_eq!(trie.root(), reference_root(&map));
            }
        }
        assert_eq!(trie.root(), reference_root(&map));
        for i in 0..300u64 {
            assert_eq!(trie.get(key(i)).unwrap(), map.get(&key(i)).cloned());
        }
        for i in 0..300u64 {
            trie.remove(key(i)).unwrap();
        }
        assert_eq!(trie.root(), EMPTY_ROOT_HASH);
    }

    /// A trie built bottom-up from sorted leaves has the hash builder's root, and updates
    /// on it keep matching.
    #[test]
    fn built_trie_matches_hash_builder() {
        let store = Arc::new(NodeStore::default());
        for n in [0u64, 1, 2, 17, 300] {
            let mut map: BTreeMap<Nibbles, Vec<u8>> = (0..n)
                .map(|i| {
                    (
                        key(i),
                        if i % 3 == 0 {
                            vec![(i % 200) as u8 + 1]
                        } else {
                            vec![7; 40]
                        },
                    )
                })
                .collect();
            let leaves = map.iter().map(|(k, v)| (*k, v.clone())).collect();
            let mut trie = SparseTrie::from_sorted(TrieId::Account, store.clone(), leaves);
            let expected = if n == 0 {
                EMPTY_ROOT_HASH
            } else {
                reference_root(&map)
            };
            assert_eq!(trie.root(), expected, "{n} leaves");
            for i in (0..n).step_by(3) {
                trie.remove(key(i)).unwrap();
                map.remove(&key(i));
            }
            trie.insert(key(1_000), vec![9; 33]).unwrap();
            map.insert(key(1_000), vec![9; 33]);
            assert_eq!(trie.root(), reference_root(&map), "{n} leaves, updated");
        }
    }

    /// Every node of a fully open trie, by path, as a store keyed by path keeps it: the
    /// root, and every other node of 32 bytes or more.
    fn nodes_by_path(node: &Node, path: Nibbles, out: &mut BTreeMap<Nibbles, Bytes>) {
        let mut buf = Vec::new();
        let encoded = |node: &Node, buf: &mut Vec<u8>| {
            match node {
                Node::Leaf { key, value, .. } => LeafNodeRef::new(key, value).rlp(buf),
                Node::Extension { key, child, .. } => {
                    ExtensionNodeRef::new(key, &cached(child)).rlp(buf)
                }
                Node::Branch { children, .. } => {
                    let mut mask = TrieMask::default();
                    let mut stack = Vec::new();
                    for (i, c) in children.iter().enumerate() {
                        if !matches!(c, Node::Empty) {
                            mask.set_bit(i as u8);
                            stack.push(cached(c));
                        }
                    }
                    BranchNodeRef::new(&stack, mask).rlp(buf)
                }
                Node::Empty | Node::Blinded(_) => unreachable!("returned above"),
            };
            Bytes::copy_from_slice(buf)
        };
        match node {
            Node::Empty | Node::Blinded(_) => return,
            Node::Extension { key, child, .. } => nodes_by_path(child, path.join(key), out),
            Node::Branch { children, .. } => {
                for (i, c) in children.iter().enumerate() {
                    let mut p = path;
                    p.push(i as u8);
                    nodes_by_path(c, p, out);
                }
            }
            Node::Leaf { .. } => {}
        }
        let rlp = encoded(node, &mut buf);
        if rlp.len() >= 32 || path.is_empty() {
            out.insert(path, rlp);
        }
    }

    /// The changes `root_collecting` reports, applied to the trie's nodes by path before
    /// them, give its nodes by path after them: inserts, splits, removals and collapses
    /// alike, block after block.
    #[test]
    fn collected_changes_keep_nodes_by_path() {
        let store = Arc::new(NodeStore::default());
        let mut trie = SparseTrie::blinded(TrieId::Account, EMPTY_ROOT_HASH, store);
        let mut by_path = BTreeMap::new();
        let value = |i: u64| {
            if i.is_multiple_of(3) {
                vec![(i % 200) as u8 + 1]
            } else {
                vec![7; 40]
            }
        };
        for block in 0..12u64 {
            for i in (block * 40)..(block * 40 + 60) {
                if (i + block).is_multiple_of(4) {
                    trie.remove(key(i / 2)).unwrap();
                } else {
                    trie.insert(key(i), value(i + block)).unwrap();
                }
            }
            if block == 11 {
                for i in 0..600 {
                    trie.remove(key(i)).unwrap();
                }
            }
            let mut changes = NodeChanges::new();
            trie.root_collecting(&mut changes);
            for (path, node) in changes {
                match node {
                    Some(node) => by_path.insert(path, node),
                    None => by_path.remove(&path),
                };
            }
            let mut expected = BTreeMap::new();
            nodes_by_path(&trie.root, Nibbles::new(), &mut expected);
            assert_eq!(by_path, expected, "block {block}");
        }
        assert!(by_path.is_empty());
    }
}
