//! A trie's update in parallel units: lower subtries at a fixed depth, each updated and
//! hashed apart, then the upper trie above them.
//!
//! Under a [`SplitRule`] of depth `d`, a trie whose block changes at least two units' worth
//! of leaves is cut at paths of `d` nibbles: every lower subtrie that the block changes is
//! taken out of the trie ([`SparseTrie::detach`]) with its updates, and consecutive lower
//! subtries (in path order) are gathered into [`Lower`] units of at least
//! [`SplitRule::min_leaves`] updated leaves each. A unit runs on any thread: it applies its
//! subtries' inserts, then their removals, and hashes them. The upper trie then takes the
//! subtries back ([`join`]), mends the branches above them that removals left with one child
//! or none, and hashes the paths shorter than `d` nibbles, whose other nodes are unchanged.
//!
//! Every lower subtrie that changes is detached, the small ones gathered rather than left in
//! the upper trie: the upper trie then holds no update of its own, so what runs after the
//! units (on the root's chain) is at most `16^d` cached references to join and the branches
//! above them to hash. A trie is split only where every node above the cut is an open
//! branch, or one the witness holds (a fresh trie whose upper nodes are still to be read, or
//! a small trie whose leaves lie above the cut, stays whole).
//!
//! The root is the same either way: a Merkle-Patricia trie is one shape for one set of keys,
//! so it does not matter in which order the updates land; removals within a lower subtrie
//! follow its inserts, as in the whole trie, so the nodes they need are the same.

use crate::{
    error::RootError,
    leaf::{AccountLeaf, LeafValue},
    reads::{NodeReader, NodeReads, ReadNodesError, read_paths},
    sparse::{NodeChanges, SparseTrie},
};
use alloy_primitives::B256;
use alloy_trie::Nibbles;

/// Where a trie's update is cut into units, and how small a unit may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitRule {
    /// The lower subtries lie at paths of this many nibbles (1 to 3); the upper trie is
    /// every shorter path.
    pub depth: usize,
    /// The fewest updated leaves a unit holds: lower subtries with fewer are gathered with
    /// the next ones (in path order). A trie with fewer than twice this many updated leaves
    /// is not split.
    pub min_leaves: usize,
}

impl SplitRule {
    /// Nothing split: each trie is updated as one unit.
    pub const WHOLE: Self = Self {
        depth: 0,
        min_leaves: usize::MAX,
    };

    /// The rule a pass's root uses: up to 256 lower subtries (2 nibbles, reth's cut), a unit
    /// of 64 updated leaves at least (reth's threshold). Chosen with the `split_timing`
    /// example on generated 300M blocks at mainnet depth: on 2 threads no other rule tried
    /// (a cut at 1 or 3 nibbles, units of 16, 32 or 256 leaves) was clearly faster; on one
    /// thread it does the whole tries' work within noise (a unit's claim and set-up are
    /// small beside 64 leaves re-hashed at mainnet depth); and its 256 subtries leave units
    /// enough to share among many more threads, where a cut at 1 nibble leaves 16.
    pub const DEFAULT: Self = Self {
        depth: 2,
        min_leaves: 64,
    };

    /// Whether a trie with `leaves` updated leaves is split.
    pub(crate) fn splits(&self, leaves: usize) -> bool {
        (1..=3).contains(&self.depth) && leaves / 2 >= self.min_leaves
    }
}

impl Default for SplitRule {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Updates of a trie, by full key: values to set, account leaves to set from the leaves
/// they replace, then keys to remove.
#[derive(Debug, Default)]
pub(crate) struct Updates {
    /// Values set, each encoded where it is applied.
    pub(crate) inserts: Vec<(Nibbles, LeafValue)>,
    /// Account leaves read and set where they are applied ([`AccountLeaf::apply`]).
    pub(crate) accounts: Vec<(Nibbles, AccountLeaf)>,
    pub(crate) removals: Vec<Nibbles>,
}

impl Updates {
    /// The number of leaves updated.
    pub(crate) fn len(&self) -> usize {
        self.inserts.len() + self.accounts.len() + self.removals.len()
    }

    /// Moves every update of `other` into these.
    fn append(&mut self, mut other: Updates) {
        self.inserts.append(&mut other.inserts);
        self.accounts.append(&mut other.accounts);
        self.removals.append(&mut other.removals);
    }

    /// Applies the inserts and account leaves, then the removals (an insert can keep a
    /// branch that a removal would otherwise collapse, and so need no sibling node), to
    /// `trie`; with `collect`,
    /// every missing node is collected rather than the first returned (never empty on
    /// error).
    pub(crate) fn apply(self, trie: &mut SparseTrie, collect: bool) -> Result<(), Vec<RootError>> {
        let mut errors = Vec::new();
        let mut keep = |result: Result<(), RootError>| match result {
            Err(e @ RootError::MissingNode { .. }) if collect => {
                errors.push(e);
                Ok(())
            }
            other => other.map_err(|e| vec![e]),
        };
        for (key, value) in self.inserts {
            keep(trie.insert(key, value.encode()))?;
        }
        for (key, leaf) in self.accounts {
            keep(leaf.apply(key, trie))?;
        }
        for key in self.removals {
            keep(trie.remove(key))?;
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// One unit of a split trie: lower subtries taken out of it, each with its updates, to be
/// updated and hashed on any thread ([`Self::run`]) and joined back ([`join`]).
#[derive(Debug)]
pub(crate) struct Lower {
    parts: Vec<(SparseTrie, Updates)>,
}

impl Lower {
    /// The leaves its subtries update: its size.
    pub(crate) fn leaves(&self) -> usize {
        self.parts.iter().map(|(_, u)| u.len()).sum()
    }

    /// The path of its first subtrie: units in path order hold their subtries in path
    /// order.
    pub(crate) fn first_path(&self) -> Nibbles {
        self.parts
            .first()
            .map(|(t, _)| t.prefix())
            .unwrap_or_default()
    }

    /// Reads, from `reader`, the nodes on its updated keys' paths below each subtrie's root
    /// (the removals' siblings included), for a trie whose nodes are read as blocks need
    /// them.
    pub(crate) fn read_nodes<R: NodeReader + ?Sized>(
        &mut self,
        reader: &mut R,
    ) -> Result<NodeReads, ReadNodesError<R::Error>> {
        let mut reads = NodeReads::default();
        for (trie, updates) in &mut self.parts {
            let mut targets = updates
                .inserts
                .iter()
                .map(|(k, _)| (*k, false))
                .chain(updates.accounts.iter().map(|(k, _)| (*k, false)))
                .chain(updates.removals.iter().map(|k| (*k, true)))
                .collect();
            reads += read_paths(trie, &mut targets, reader)?;
        }
        Ok(reads)
    }

    /// Applies each subtrie's updates and hashes it (adding, into `nodes`, the nodes it
    /// changed, by path, when given).
    pub(crate) fn run(&mut self, mut nodes: Option<&mut NodeChanges>) -> Result<(), RootError> {
        for (trie, updates) in &mut self.parts {
            std::mem::take(updates)
                .apply(trie, false)
                .map_err(|mut e| e.swap_remove(0))?;
            let _: B256 = match nodes.as_deref_mut() {
                None => trie.root(),
                Some(nodes) => trie.root_collecting(nodes),
            };
        }
        Ok(())
    }
}

/// The index of `key`'s lower subtrie at `depth` nibbles.
fn subtrie_of(key: &Nibbles, depth: usize) -> usize {
    (0..depth).fold(0, |at, i| at * 16 + key.get_unchecked(i) as usize)
}

/// The path of lower subtrie `index` at `depth` nibbles.
fn path_of(index: usize, depth: usize) -> Nibbles {
    let nibbles: Vec<u8> = (0..depth)
        .rev()
        .map(|i| ((index >> (4 * i)) & 0xf) as u8)
        .collect();
    Nibbles::from_nibbles_unchecked(nibbles)
}

/// Splits `updates` of `trie` under `rule`: `Ok(units)`, every changed lower subtrie taken
/// out of `trie` into one of them, or `Err(updates)` where the trie stays whole (too few
/// updates, or a node above the cut that is no branch or not at hand; `trie` is then as it
/// was, but for cached references above the cut).
pub(crate) fn split(
    trie: &mut SparseTrie,
    rule: SplitRule,
    updates: Updates,
) -> Result<Result<Vec<Lower>, Updates>, RootError> {
    if !rule.splits(updates.len()) {
        return Ok(Err(updates));
    }
    let depth = rule.depth;
    let mut by_subtrie: Vec<Updates> = (0..1 << (4 * depth)).map(|_| Updates::default()).collect();
    for (key, value) in updates.inserts {
        by_subtrie[subtrie_of(&key, depth)]
            .inserts
            .push((key, value));
    }
    for (key, leaf) in updates.accounts {
        by_subtrie[subtrie_of(&key, depth)]
            .accounts
            .push((key, leaf));
    }
    for key in updates.removals {
        by_subtrie[subtrie_of(&key, depth)].removals.push(key);
    }
    let mut dirty = by_subtrie
        .into_iter()
        .enumerate()
        .filter(|(_, u)| u.len() > 0);
    let mut units = Vec::new();
    let mut unit = Lower { parts: Vec::new() };
    while let Some((index, updates)) = dirty.next() {
        let Some(part) = trie.detach(path_of(index, depth))? else {
            // Undo: the trie stays whole, with every update.
            let mut all = updates;
            let taken = units.into_iter().chain(std::iter::once(unit));
            for (part, updates) in taken.flat_map(|lower| lower.parts) {
                trie.attach(part);
                all.append(updates);
            }
            for (_, updates) in dirty {
                all.append(updates);
            }
            return Ok(Err(all));
        };
        unit.parts.push((part, updates));
        if unit.leaves() >= rule.min_leaves {
            units.push(std::mem::replace(&mut unit, Lower { parts: Vec::new() }));
        }
    }
    if !unit.parts.is_empty() {
        match units.last_mut() {
            Some(last) => last.parts.append(&mut unit.parts),
            None => units.push(unit),
        }
    }
    Ok(Ok(units))
}

/// Puts the subtries of `units` (run) back into `trie` and mends the branches above the
/// cut at `depth` ([`SparseTrie::settle`]); hashing `trie` then gives its root.
pub(crate) fn join(
    trie: &mut SparseTrie,
    units: Vec<Lower>,
    depth: usize,
) -> Result<(), RootError> {
    for unit in units {
        for (part, _) in unit.parts {
            trie.attach(part);
        }
    }
    trie.settle(depth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{error::TrieId, sparse::NodeStore};
    use alloy_primitives::{U256, keccak256};
    use alloy_trie::{EMPTY_ROOT_HASH, HashBuilder};
    use std::{collections::BTreeMap, sync::Arc};

    fn key(i: u64) -> Nibbles {
        Nibbles::unpack(keccak256(i.to_be_bytes()))
    }

    /// The root of `map` by alloy-trie's hash builder.
    fn reference(map: &BTreeMap<Nibbles, Vec<u8>>) -> B256 {
        let mut hb = HashBuilder::default();
        for (k, v) in map {
            hb.add_leaf(*k, v);
        }
        hb.root()
    }

    /// Updates that empty whole lower subtries (so the branches above collapse or go), and
    /// ones that fill empty ones, split at one and two nibbles: the root is the hash
    /// builder's, and the trie goes on matching it block after block.
    #[test]
    fn split_updates_that_empty_and_fill_subtries_give_the_whole_root() {
        for (depth, keep) in [(1, [3u8, 9]), (2, [0, 5]), (1, [7, 7])] {
            let rule = SplitRule {
                depth,
                min_leaves: 1,
            };
            let store = Arc::new(NodeStore::default());
            let mut trie = SparseTrie::blinded(TrieId::Account, EMPTY_ROOT_HASH, store);
            let mut map = BTreeMap::new();
            let mut split_blocks = Vec::new();
            for block in 0..4u64 {
                let mut updates = Updates::default();
                for i in (block * 150)..(block * 150 + 300) {
                    let k = key(i);
                    let first = k.get_unchecked(0);
                    // Block 2 empties every subtrie but those under `keep`; the others
                    // fill them again.
                    if block == 2 && !keep.contains(&first) {
                        if map.remove(&k).is_some() {
                            updates.removals.push(k);
                        }
                    } else if block != 2 {
                        let value = U256::from(1 + i % 200) << (8 * (i % 30) as usize);
                        map.insert(k, alloy_rlp::encode(value));
                        updates.inserts.push((k, LeafValue::Slot(value)));
                    }
                }
                if block == 2 {
                    // What is left outside `keep` goes too.
                    let gone: Vec<Nibbles> = map
                        .keys()
                        .filter(|k| !keep.contains(&k.get_unchecked(0)))
                        .copied()
                        .collect();
                    for k in gone {
                        map.remove(&k);
                        updates.removals.push(k);
                    }
                }
                match split(&mut trie, rule, updates).unwrap() {
                    Ok(mut units) => {
                        assert!(units.len() > 1, "depth {depth} block {block}");
                        split_blocks.push(block);
                        for unit in &mut units {
                            unit.run(None).unwrap();
                        }
                        join(&mut trie, units, depth).unwrap();
                    }
                    Err(updates) => updates.apply(&mut trie, false).unwrap(),
                }
                assert_eq!(trie.root(), reference(&map), "depth {depth} block {block}");
            }
            // The first block lands on an empty trie (no branch to cut); the last on one
            // collapsed to a single subtrie when `keep` names one, or, at two nibbles, on
            // branches above the cut that hold no child where it inserts.
            let expected: &[u64] = if keep[0] == keep[1] || depth == 2 {
                &[1, 2]
            } else {
                &[1, 2, 3]
            };
            assert_eq!(split_blocks, expected, "depth {depth}");
        }
    }
}
