//! The trie tables at a client's size: the nodes of the padded tries' virtual subtries that a
//! padded build adds to [`TRIE_NODES`](crate::layout::TRIE_NODES) beside the witness's.
//!
//! A witness of a padded trie ([`gigagas_trie::Padding`]) holds one node for all the alike
//! untouched subtries of a depth, so the node at any path under them is known
//! ([`KnownNodes::node_at`]). A padded store adds, for its padding's accounts and slots, as
//! many of those nodes as a client's tries hold for that many keys ([`RandomTrie`]: about
//! 1.36 nodes a key, leaves included), each at its true path in its segment's trie: the
//! witness's nodes then lie among nodes they do not need, on a table of a client's size,
//! and every node a root reads is the node a client reads there (no root can change).
//!
//! The padding's accounts are shared out evenly over the segments' padded account tries,
//! its slots over their padded storage tries. The virtual tries are full down to their
//! levels, so a client's inner nodes at a depth at or past the levels are placed at the
//! deepest level of branches, its leaves at the virtual leaves' depth; each depth's nodes are
//! spread evenly over its paths (each at a pseudo-random point of its own stride).

use crate::{PAGE_SIZE, layout::mix};
use alloy_primitives::{B256, Bytes};
use gigagas_dump::Dump;
use gigagas_trie::{KnownNodes, PathNode, RandomTrie, storage_roots};
use std::{cmp::Reverse, collections::BinaryHeap};

/// The fewest levels of full branches that make a trie one to fill: a small trie the witness
/// holds whole, under a full root, gives one.
const MIN_LEVELS: usize = 2;

/// Bytes a table entry costs besides its key and value: MDBX's node header (8 bytes) and its
/// slot in the page's index (2).
const ENTRY_OVERHEAD: u64 = 10;

/// One padded trie of one segment: where it is, how deep its virtual subtries go, and the
/// size of its virtual node at each depth.
#[derive(Debug, Clone)]
struct Padded {
    segment: u32,
    /// `None` for the account trie, else the storage trie's hashed address.
    owner: Option<B256>,
    root: B256,
    /// Levels of full branches: its virtual leaves lie at this depth.
    levels: usize,
    /// Bytes of its node at each depth `0..=levels` along one virtual path.
    sizes: Vec<u64>,
}

/// Every segment's padded tries, with the nodes each segment's witness knows.
#[derive(Debug, Default)]
pub(crate) struct VirtualTries {
    known: Vec<KnownNodes>,
    tries: Vec<Padded>,
    /// The witness nodes' table entries: their count by entry size (key, node and
    /// [`ENTRY_OVERHEAD`]).
    witness: Vec<(u64, u64)>,
}

/// How many virtual nodes to add at each depth of each padded trie ([`VirtualTries::plan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Per padded trie, in [`VirtualTries`]' order, the nodes at each depth.
    counts: Vec<Vec<u64>>,
}

impl VirtualTries {
    /// The padded tries of `dump`'s segments: each segment's account trie and every storage
    /// trie whose root an account leaf of `witness_nodes` (the segment's witness nodes by
    /// path, [`gigagas_trie::nodes_by_path`]) names, where the witness holds at least
    /// [`MIN_LEVELS`] levels of full branches.
    pub(crate) fn of(dump: &Dump, witness_nodes: &[Vec<PathNode>]) -> Self {
        let mut tries = Vec::new();
        let mut known = Vec::with_capacity(dump.segments.len());
        let witness = witness_nodes
            .iter()
            .flatten()
            .map(|n| {
                let key = 5 + if n.owner.is_some() { 32 } else { 0 } + n.path.len();
                (1, (key + n.rlp.len()) as u64 + ENTRY_OVERHEAD)
            })
            .collect();
        for (segment, s) in dump.segments.iter().enumerate() {
            let Some(witness) = &s.witness else {
                known.push(KnownNodes::default());
                continue;
            };
            let nodes = KnownNodes::new(witness);
            let mut roots = vec![(None, witness.parent_state_root)];
            let storage = storage_roots(&witness_nodes[segment]);
            roots.extend(storage.into_iter().map(|(owner, root)| (Some(owner), root)));
            for (owner, root) in roots {
                let levels = nodes.padded_levels(root);
                if levels < MIN_LEVELS {
                    continue;
                }
                let probe: Vec<u8> = (0..levels).map(|d| (d % 16) as u8).collect();
                let sizes = (0..=levels)
                    .map(|d| {
                        nodes
                            .node_at(root, &probe[..d])
                            .map_or(0, |n| n.len() as u64)
                    })
                    .collect();
                tries.push(Padded {
                    segment: segment as u32,
                    owner,
                    root,
                    levels,
                    sizes,
                });
            }
            known.push(nodes);
        }
        Self {
            known,
            tries,
            witness,
        }
    }

    /// The nodes to add for a padding of `accounts` accounts and `slots` slots: a client's
    /// trie of `accounts / a` keys in each of the `a` padded account tries, of `slots / s`
    /// keys in each of the `s` padded storage tries, placed by depth as the module says and
    /// capped at each depth's paths.
    pub(crate) fn plan(&self, accounts: u64, slots: u64) -> Plan {
        let account_tries = self.tries.iter().filter(|t| t.owner.is_none()).count() as u64;
        let storage_tries = self.tries.len() as u64 - account_tries;
        let counts = self
            .tries
            .iter()
            .map(|t| {
                let keys = match t.owner {
                    None => accounts / account_tries.max(1),
                    Some(_) => slots / storage_tries.max(1),
                };
                depth_counts(keys, t.levels)
            })
            .collect();
        Plan { counts }
    }

    /// The bytes of used pages the trie table takes with the witness's nodes and `plan`'s:
    /// every entry's bytes in pages of 4076 (20 bytes of page header). Pages end with a few
    /// bytes no entry fits in, so it errs low, and a store padded to a size ends past it
    /// rather than short of it.
    pub(crate) fn bytes(&self, plan: &Plan) -> u64 {
        let planned = self.tries.iter().zip(&plan.counts).flat_map(|(t, counts)| {
            let key = 5 + if t.owner.is_some() { 32 } else { 0 };
            (0..counts.len())
                .map(move |d| (counts[d], t.sizes[d] + key + d as u64 + ENTRY_OVERHEAD))
        });
        let bytes: u64 = planned
            .chain(self.witness.iter().copied())
            .map(|(count, entry)| count * entry)
            .sum();
        let page = PAGE_SIZE as u64;
        bytes * page / (page - 20)
    }

    /// The planned nodes of segment `segment`'s padded tries, in the order of their keys in
    /// the table (the account trie, then the storage tries by owner; paths in order within
    /// each), as (owner, path, node). A planned path the witness does not know a node at
    /// (inside a touched subtrie) is left out.
    pub(crate) fn nodes<'a>(
        &'a self,
        plan: &'a Plan,
        segment: u32,
    ) -> impl Iterator<Item = (Option<B256>, Vec<u8>, &'a Bytes)> + 'a {
        let mut tries: Vec<usize> = (0..self.tries.len())
            .filter(|&i| self.tries[i].segment == segment)
            .collect();
        tries.sort_by_key(|&i| self.tries[i].owner);
        tries.into_iter().flat_map(move |i| {
            let t = &self.tries[i];
            let known = &self.known[segment as usize];
            let owner = t.owner.map_or(0, |o| {
                u64::from_be_bytes(o.0[..8].try_into().expect("eight bytes"))
            });
            let seed = mix(u64::from(segment)) ^ mix(owner);
            Paths::new(&plan.counts[i], seed)
                .filter_map(move |path| known.node_at(t.root, &path).map(|n| (t.owner, path, n)))
        })
    }
}

/// A client's nodes for `keys` keys placed on a virtual trie of `levels` levels: its inner
/// nodes at their depth, those at `levels` or deeper at `levels - 1`, its leaves at
/// `levels`; each depth capped at its 16^depth paths.
fn depth_counts(keys: u64, levels: usize) -> Vec<u64> {
    let mut counts = vec![0f64; levels + 1];
    if keys == 0 {
        return vec![0; levels + 1];
    }
    for (depth, n) in RandomTrie::of(keys).inner_by_depth().iter().enumerate() {
        counts[depth.min(levels - 1)] += n;
    }
    counts[levels] += keys as f64;
    counts
        .iter()
        .enumerate()
        .map(|(d, c)| (c.round() as u64).min(16u64.saturating_pow(d as u32)))
        .collect()
}

/// The paths of one trie's plan in path order (a path before the paths below it): at each
/// depth `d`, `counts[d]` paths spread evenly over its 16^d, path `i` at a pseudo-random
/// point of the `i`-th of `counts[d]` equal strides.
struct Paths {
    counts: Vec<u64>,
    seed: u64,
    /// The next path of each depth not yet handed out, smallest first.
    heap: BinaryHeap<Reverse<(Vec<u8>, usize, u64)>>,
}

impl Paths {
    fn new(counts: &[u64], seed: u64) -> Self {
        let mut paths = Self {
            counts: counts.to_vec(),
            seed,
            heap: BinaryHeap::new(),
        };
        for depth in 0..counts.len() {
            paths.push(depth, 0);
        }
        paths
    }

    /// Queue path `i` of depth `depth`, if the depth has that many.
    fn push(&mut self, depth: usize, i: u64) {
        let n = self.counts[depth];
        if i >= n {
            return;
        }
        let all = 1u128 << (4 * depth);
        let (lo, hi) = (
            u128::from(i) * all / u128::from(n),
            u128::from(i + 1) * all / u128::from(n),
        );
        let at = lo + u128::from(mix(self.seed ^ (depth as u64) << 56 ^ i)) % (hi - lo).max(1);
        let path = (0..depth)
            .map(|d| ((at >> (4 * (depth - 1 - d))) & 15) as u8)
            .collect();
        self.heap.push(Reverse((path, depth, i)));
    }
}

impl Iterator for Paths {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        let Reverse((path, depth, i)) = self.heap.pop()?;
        self.push(depth, i + 1);
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_come_in_order_each_once_as_many_as_planned() {
        let counts = [1, 16, 100, 3_000];
        let paths: Vec<Vec<u8>> = Paths::new(&counts, 7).collect();
        assert_eq!(paths.len(), 1 + 16 + 100 + 3_000);
        assert!(paths.windows(2).all(|w| w[0] < w[1]), "in order, no repeat");
        for (depth, n) in counts.iter().enumerate() {
            assert_eq!(paths.iter().filter(|p| p.len() == depth).count() as u64, *n);
        }
        // Spread: every nibble leads some paths of depth 3.
        for nibble in 0..16u8 {
            assert!(paths.iter().any(|p| p.len() == 3 && p[0] == nibble));
        }
    }

    #[test]
    fn depth_counts_hold_a_clients_nodes_capped_at_each_depths_paths() {
        let counts = depth_counts(1_000_000, 7);
        let formula = RandomTrie::of(1_000_000).nodes();
        let total: u64 = counts.iter().sum();
        assert!(
            (total as f64 - formula).abs() <= 8.0,
            "{total} against {formula}"
        );
        assert_eq!(counts[..5], [1, 16, 256, 4_096, 65_536]);
        assert_eq!(counts[7], 1_000_000);
        // Two levels: the leaves capped at 256.
        assert_eq!(depth_counts(1_000, 2), vec![1, 16, 256]);
        assert_eq!(depth_counts(0, 3), vec![0; 4]);
    }
}
