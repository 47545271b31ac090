//! Trie nodes read by path as each block needs them, as a client reads its trie tables.
//!
//! A [`crate::StateTrie::unread`] holds no node: before a block's root,
//! [`crate::StateTrie::read_account_nodes`] reads the account-trie nodes on the paths of the accounts the block changes, and
//! [`crate::StorageTask::read_nodes`] the storage-trie nodes on the paths of its slots,
//! from a [`NodeReader`] that looks nodes up by trie and path (reth's `AccountsTrie` and
//! `StoragesTrie` are keyed so). Reads are batched by depth: each *round* walks every
//! target path from the root through the nodes already open and asks for the first node
//! it cannot open on each, all in one [`NodeReader::read_nodes`] call; the next round
//! walks on through them. A path `d` nodes deep takes `d` rounds at most, and a node
//! shared by many paths is read once. Where a removal may leave a branch with one child,
//! the branch's other children are read too (the sibling the branch collapses into).
//!
//! Nodes read stay open in the trie for the blocks after (a client's trie cache): a later
//! block's paths run through them without a read. [`NodeReads`] counts both.

use crate::{
    error::{RootError, TrieId},
    sparse::{RevealWalk, SparseTrie},
};
use alloy_primitives::{B256, Bytes, map::HashMap};
use alloy_trie::Nibbles;
use std::collections::HashSet;

/// Looks trie nodes up by path: what a state root reads from a store whose trie tables
/// are keyed by path.
pub trait NodeReader {
    /// Why a read failed (the store's own error).
    type Error: std::fmt::Display;

    /// Appends to `out`, for each path of `paths` (from the root of `trie`, sorted), the
    /// RLP of the node at that path, or `None` where the source holds none.
    fn read_nodes(
        &mut self,
        trie: TrieId,
        paths: &[Nibbles],
        out: &mut Vec<Option<Bytes>>,
    ) -> Result<(), Self::Error>;
}

/// What reading a block's (or a storage task's) nodes did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeReads {
    /// Nodes read from the source (cache misses).
    pub read: u64,
    /// Paths asked for that the source holds no node at (a sibling a removal might have
    /// needed and the witness does not hold: it was not needed).
    pub absent: u64,
    /// Nodes on the paths that were already open: read by an earlier block of the pass
    /// (cache hits), or made by its updates.
    pub held: u64,
    /// Batched reads ([`NodeReader::read_nodes`] calls).
    pub rounds: u64,
}

impl std::ops::AddAssign for NodeReads {
    fn add_assign(&mut self, other: Self) {
        self.read += other.read;
        self.absent += other.absent;
        self.held += other.held;
        self.rounds += other.rounds;
    }
}

/// Reading nodes failed: the source's error, or a node that does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadNodesError<E: std::fmt::Display> {
    /// The source failed.
    #[error("reading trie nodes: {0}")]
    Read(E),
    /// A node read is not a trie node, or the root cannot be computed.
    #[error(transparent)]
    Root(#[from] RootError),
}

impl<E: std::fmt::Display> From<ReadNodesError<E>> for RootError {
    /// The root is not computable: a read failure as [`RootError::NodeRead`].
    fn from(e: ReadNodesError<E>) -> Self {
        match e {
            ReadNodesError::Read(e) => RootError::NodeRead {
                reason: e.to_string(),
            },
            ReadNodesError::Root(e) => e,
        }
    }
}

/// Reads the nodes on `targets`' paths (full keys; `true` where the key may be removed)
/// into `trie`, round by round.
pub(crate) fn read_paths<R: NodeReader + ?Sized>(
    trie: &mut SparseTrie,
    targets: &mut Vec<(Nibbles, bool)>,
    reader: &mut R,
) -> Result<NodeReads, ReadNodesError<R::Error>> {
    let mut reads = NodeReads::default();
    if targets.is_empty() {
        return Ok(reads);
    }
    targets.sort_unstable_by_key(|a| a.0);
    targets.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        kept.1 |= same && later.1;
        same
    });
    let mut fetched: HashMap<B256, Bytes> = HashMap::default();
    let mut unavailable = HashSet::new();
    let mut out = Vec::new();
    let mut paths = Vec::new();
    loop {
        let mut walk = RevealWalk {
            fetched: &fetched,
            unavailable: &unavailable,
            want: Vec::new(),
            held: 0,
            count_held: reads.rounds == 0,
        };
        trie.reveal_round(targets, &mut walk)?;
        if reads.rounds == 0 {
            reads.held = walk.held;
        }
        let mut want = walk.want;
        if want.is_empty() {
            return Ok(reads);
        }
        want.sort_unstable_by_key(|a| a.0);
        want.dedup_by(|a, b| a.0 == b.0);
        reads.rounds += 1;
        paths.clear();
        paths.extend(want.iter().map(|(path, _)| *path));
        out.clear();
        reader
            .read_nodes(trie.id(), &paths, &mut out)
            .map_err(ReadNodesError::Read)?;
        // A node is kept under the hash its parent references: a store is trusted as for
        // its values (a wrong node gives a root the header check refuses), and every
        // round opens what the last one read, so the rounds end.
        for (i, (_, hash)) in want.into_iter().enumerate() {
            match out.get_mut(i).and_then(Option::take) {
                Some(node) => {
                    reads.read += 1;
                    fetched.insert(hash, node);
                }
                None => {
                    reads.absent += 1;
                    unavailable.insert(hash);
                }
            }
        }
    }
}
