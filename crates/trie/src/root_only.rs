//! Root-only witnesses: of a witness, just the nodes the state roots need.
//!
//! Producers write a witness that proves every account and slot a block accesses
//! (`debug_executionWitness`, `eth_getProof` per touched account, the generator's
//! [`crate::witness_for_blocks`]). A root needs less: the paths of the accounts and slots
//! whose value the block changes (the net change over the block), and the siblings that
//! deletions collapse onto ([`StateTrie::prepare_block`]). [`root_only_witness`] applies a
//! segment's blocks to its witness, recording every node the updates open, and keeps those
//! (with the root node): each block's root from it is the same, and removing any one of
//! its nodes makes a root "not computable". [`root_only_dump`] does so for every segment
//! of a dump; [`witness_sizes`] gives, per block, both witnesses' sizes at the block's
//! parent state, what a stateless client must receive with the block.

use crate::{
    error::RootError,
    sparse::{NodeStore, Seen},
    state::{PreValues, RootRules, StateTrie},
};
use alloy_eip7928::BlockAccessList;
use alloy_primitives::{B256, keccak256};
use gigagas_dump::{ChainConfigError, Dump, PreState, Segment, Witness};
use std::{collections::HashSet, sync::Arc};

/// Why a dump's root-only witness or witness sizes could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RootOnlyError {
    /// The chain config does not say which fork a block is in.
    #[error("the dump's chain config: {0}")]
    Chain(#[from] ChainConfigError),
    /// The witness does not give a block's root.
    #[error("block {block}: {source}")]
    Root {
        /// The block's number.
        block: u64,
        /// Why its root is not computable.
        #[source]
        source: RootError,
    },
}

/// A block whose root a witness does not give: its position among the blocks applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the segment's block {index} (counted from 0): {source}")]
pub struct UnrootedBlock {
    /// The block's position among those applied, from 0.
    pub index: usize,
    /// Why its root is not computable.
    pub source: RootError,
}

/// Of `witness` (at a segment's parent state root, whose pre-state is `pre`), just the
/// nodes the roots of `blocks` (the segment's access lists in order, each with its rules)
/// need, and the root node: the nodes that applying the blocks opens, each block on the
/// trie the one before left. Fails where `witness` does not give a block's root.
pub fn root_only_witness<'a>(
    witness: &Witness,
    pre: &PreState,
    blocks: impl IntoIterator<Item = (&'a BlockAccessList, RootRules)>,
) -> Result<Witness, UnrootedBlock> {
    let at = |index| move |source| UnrootedBlock { index, source };
    let seen: Seen = Arc::default();
    let mut trie = StateTrie::from_witness(witness)
        .map_err(at(0))?
        .with_pre_values(PreValues::of_pre_state(pre));
    trie.record(seen.clone());
    for (i, (bal, rules)) in blocks.into_iter().enumerate() {
        trie.apply_block(bal, rules).map_err(at(i))?;
    }
    let mut keep = take(&seen);
    keep.insert(witness.parent_state_root);
    let nodes = witness
        .nodes
        .iter()
        .filter(|n| keep.contains(&keccak256(n)))
        .cloned()
        .collect();
    Ok(Witness::new(witness.parent_state_root, nodes))
}

/// Each block's rules under the dump's chain config.
fn rules(dump: &Dump, segment: &Segment) -> Result<Vec<RootRules>, ChainConfigError> {
    segment
        .blocks
        .iter()
        .map(|b| {
            Ok(RootRules {
                delete_empty_accounts: dump.meta.chain.deletes_empty_accounts_at(b.number())?,
            })
        })
        .collect()
}

/// What [`root_only_dump`] kept: the witnesses' nodes and bytes before and after.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Segments with a witness.
    pub segments: usize,
    /// Their nodes before.
    pub nodes_before: usize,
    /// Their nodes' bytes before.
    pub bytes_before: usize,
    /// Their nodes after.
    pub nodes_after: usize,
    /// Their nodes' bytes after.
    pub bytes_after: usize,
}

impl std::fmt::Display for Pruned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let share = |after: usize, before: usize| {
            if before == 0 {
                100.0
            } else {
                100.0 * after as f64 / before as f64
            }
        };
        write!(
            f,
            "root-only witness of {} segment(s): {} of {} nodes ({:.0} %), {} of {} bytes ({:.0} %)",
            self.segments,
            self.nodes_after,
            self.nodes_before,
            share(self.nodes_after, self.nodes_before),
            self.bytes_after,
            self.bytes_before,
            share(self.bytes_after, self.bytes_before),
        )
    }
}

/// Replaces every segment's witness with its [`root_only_witness`]; segments without one
/// are left alone. Fails where a witness does not give a block's root (the dump is then
/// partly pruned: drop it).
pub fn root_only_dump(dump: &mut Dump) -> Result<Pruned, RootOnlyError> {
    let mut pruned = Pruned::default();
    let all_rules: Vec<Vec<RootRules>> = dump
        .segments
        .iter()
        .map(|s| rules(dump, s))
        .collect::<Result<_, _>>()?;
    for (segment, rules) in dump.segments.iter_mut().zip(all_rules) {
        let Some(witness) = &segment.witness else {
            continue;
        };
        let blocks = segment.blocks.iter().map(|b| &b.access_list).zip(rules);
        let kept = root_only_witness(witness, &segment.pre_state, blocks).map_err(|e| {
            RootOnlyError::Root {
                block: segment.blocks[e.index].number(),
                source: e.source,
            }
        })?;
        pruned.segments += 1;
        pruned.nodes_before += witness.nodes.len();
        pruned.bytes_before += witness.node_bytes();
        pruned.nodes_after += kept.nodes.len();
        pruned.bytes_after += kept.node_bytes();
        segment.witness = Some(kept);
    }
    Ok(pruned)
}

/// Every block's root (number, root) that the dump's witnesses give, for the blocks of
/// segments with one, each segment's blocks in turn on a trie over its witness that knows
/// its pre-state: what a root-only witness must give as the full one does.
pub fn witness_roots(dump: &Dump) -> Result<Vec<(u64, B256)>, RootOnlyError> {
    let mut roots = Vec::new();
    for segment in &dump.segments {
        let Some(witness) = &segment.witness else {
            continue;
        };
        let at = |i: usize| {
            move |source| RootOnlyError::Root {
                block: segment.blocks.get(i).map_or(0, |b| b.number()),
                source,
            }
        };
        let mut trie = StateTrie::from_witness(witness)
            .map_err(at(0))?
            .with_pre_values(PreValues::of_pre_state(&segment.pre_state));
        for (i, (block, rules)) in segment.blocks.iter().zip(rules(dump, segment)?).enumerate() {
            let root = trie.apply_block(&block.access_list, rules).map_err(at(i))?;
            roots.push((block.number(), root));
        }
    }
    Ok(roots)
}

/// Trie nodes and their bytes (RLP).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeCount {
    /// Nodes.
    pub nodes: usize,
    /// Their RLP's bytes.
    pub bytes: usize,
}

/// One block's witnesses at its parent state: what a stateless client must receive with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockWitnessSize {
    /// The block's number.
    pub block: u64,
    /// As producers write it: the nodes on the path of every account and slot the block's
    /// list names (read or written), and those the root needs beyond them (deletions'
    /// siblings). `None` when the dump's witness lacks some (a root-only witness).
    pub accessed: Option<NodeCount>,
    /// Root-only: the nodes the block's root needs. `None` when the witness does not give
    /// the root (nor any later block's of the segment).
    pub root_only: Option<NodeCount>,
}

/// Every block's [`BlockWitnessSize`] ([`witness_sizes`]); blocks of segments without a
/// witness are left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WitnessSizes {
    /// One entry per block of a segment with a witness, in block order.
    pub blocks: Vec<BlockWitnessSize>,
}

/// Each block's witnesses at its parent state, as producers write them and root-only
/// ([`BlockWitnessSize`]): [`WitnessSizer`] over every block of `dump`.
pub fn witness_sizes(dump: &Dump) -> Result<WitnessSizes, RootOnlyError> {
    let mut sizer = WitnessSizer::default();
    for (i, segment) in dump.segments.iter().enumerate() {
        for block in &segment.blocks {
            sizer.block(&dump.meta, i, segment, block);
        }
    }
    sizer.finish()
}

/// [`witness_sizes`] block by block, for a caller that streams a dump's blocks past
/// (`gigagas_dump::inspect_dump_with`). A segment's blocks are applied in turn to a trie
/// over its witness: block k's nodes are those of the state block k − 1 left (the
/// witness's, and the nodes the earlier blocks' updates made), so each block is counted as
/// if it came alone with its own witness. Memory is one segment's trie at a time, and a
/// few numbers per block.
#[derive(Debug, Default)]
pub struct WitnessSizer {
    /// The segment being walked and its trie (`None` for one without a witness).
    current: Option<(usize, Option<SegmentTrie>)>,
    sizes: WitnessSizes,
    /// The first error; later blocks are then ignored.
    error: Option<RootOnlyError>,
}

/// A segment's trie as [`WitnessSizer`] walks it.
#[derive(Debug)]
struct SegmentTrie {
    /// The nodes of the state at the next block's parent: the witness's, plus those each
    /// block made.
    store: Arc<NodeStore>,
    trie: StateTrie,
    /// A block's root failed: the trie is part-updated, later blocks get no sizes.
    failed: bool,
}

impl WitnessSizer {
    /// Block `block` of segment `segment_index` (`segment`, of a dump whose metadata is
    /// `meta`), after every earlier block of the dump in order.
    pub fn block(
        &mut self,
        meta: &gigagas_dump::DumpMeta,
        segment_index: usize,
        segment: &Segment,
        block: &gigagas_dump::DumpBlock,
    ) {
        if self.error.is_none() {
            self.error = self.measure(meta, segment_index, segment, block).err();
        }
    }

    /// [`Self::block`], its error returned.
    fn measure(
        &mut self,
        meta: &gigagas_dump::DumpMeta,
        segment_index: usize,
        segment: &Segment,
        block: &gigagas_dump::DumpBlock,
    ) -> Result<(), RootOnlyError> {
        if self.current.as_ref().map(|(i, _)| *i) != Some(segment_index) {
            let opened = segment
                .witness
                .as_ref()
                .map(|witness| {
                    let store = Arc::new(NodeStore::new(&witness.nodes));
                    StateTrie::over(witness.parent_state_root, store.clone())
                        .map(|trie| SegmentTrie {
                            store,
                            trie: trie.with_pre_values(PreValues::of_pre_state(&segment.pre_state)),
                            failed: false,
                        })
                        .map_err(|source| RootOnlyError::Root {
                            block: block.number(),
                            source,
                        })
                })
                .transpose()?;
            self.current = Some((segment_index, opened));
        }
        let Some((_, Some(walk))) = self.current.as_mut() else {
            return Ok(());
        };
        let rules = RootRules {
            delete_empty_accounts: meta.chain.deletes_empty_accounts_at(block.number())?,
        };
        let bal = &block.access_list;
        let mut size = BlockWitnessSize {
            block: block.number(),
            accessed: None,
            root_only: None,
        };
        if walk.failed {
            self.sizes.blocks.push(size);
            return Ok(());
        }
        let (store, trie) = (&mut walk.store, &mut walk.trie);
        let parent = trie.root();
        // Root-only: a fresh trie at the parent, knowing what `trie` knows.
        let seen: Seen = Arc::default();
        let root_only = StateTrie::over(parent, store.clone()).and_then(|fresh| {
            let mut fresh = fresh.with_pre_values(trie.pre_values().clone());
            fresh.record(seen.clone());
            fresh.apply_block(bal, rules)
        });
        size.root_only = root_only.is_ok().then(|| count(store, &take(&seen)));
        // As producers write it: every named account's and slot's path walked, then the
        // block applied knowing nothing apart from the trie.
        let seen: Seen = Arc::default();
        let accessed = StateTrie::over(parent, store.clone()).and_then(|mut fresh| {
            fresh.record(seen.clone());
            for changes in bal {
                fresh.account(changes.address)?;
                let slots = changes.storage_changes.iter().map(|s| s.slot);
                for slot in slots.chain(changes.storage_reads.iter().copied()) {
                    fresh.storage(changes.address, slot)?;
                }
            }
            fresh.apply_block(bal, rules)
        });
        size.accessed = accessed.is_ok().then(|| count(store, &take(&seen)));
        // The block itself, then the nodes it made.
        match trie.apply_block(bal, rules) {
            Ok(_) => {
                let made = trie.new_nodes(store);
                Arc::make_mut(store).extend_hashed(made);
            }
            Err(_) => walk.failed = true,
        }
        self.sizes.blocks.push(size);
        Ok(())
    }

    /// Every block's sizes, or the first error.
    pub fn finish(self) -> Result<WitnessSizes, RootOnlyError> {
        self.error.map_or(Ok(self.sizes), Err)
    }
}

/// The hashes `seen` recorded.
fn take(seen: &Seen) -> HashSet<B256> {
    std::mem::take(&mut *seen.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The nodes of `hashes` in `store`, and their bytes.
fn count(store: &NodeStore, hashes: &HashSet<B256>) -> NodeCount {
    let bytes = hashes
        .iter()
        .filter_map(|h| store.get(h))
        .map(|n| n.len())
        .sum();
    NodeCount {
        nodes: hashes.len(),
        bytes,
    }
}

/// A summary of one witness kind over blocks: mean, median and largest, in KB and nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Summary {
    mean_kb: f64,
    mean_nodes: f64,
    p50_kb: f64,
    max_kb: f64,
    blocks: usize,
}

impl Summary {
    fn of(counts: impl Iterator<Item = NodeCount>) -> Self {
        let mut counts: Vec<NodeCount> = counts.collect();
        if counts.is_empty() {
            return Self::default();
        }
        counts.sort_by_key(|c| c.bytes);
        let n = counts.len() as f64;
        Self {
            mean_kb: counts.iter().map(|c| c.bytes as f64).sum::<f64>() / n / 1e3,
            mean_nodes: counts.iter().map(|c| c.nodes as f64).sum::<f64>() / n,
            p50_kb: counts[counts.len() / 2].bytes as f64 / 1e3,
            max_kb: counts[counts.len() - 1].bytes as f64 / 1e3,
            blocks: counts.len(),
        }
    }
}

/// The lines `gigagas inspect` prints beside the access lists' sizes per design, in its
/// `key  value` layout: per block, the witness as producers write it and root-only (mean
/// KB and nodes, median and largest KB), e.g.
/// `witness accessed  mean 42.1 KB (160 nodes), p50 41.0 KB, max 80.2 KB per block (RLP)`.
impl std::fmt::Display for WitnessSizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.blocks.is_empty() {
            return Ok(());
        }
        let accessed = Summary::of(self.blocks.iter().filter_map(|b| b.accessed));
        let root_only = Summary::of(self.blocks.iter().filter_map(|b| b.root_only));
        let line = |f: &mut std::fmt::Formatter<'_>, key: &str, s: &Summary| {
            write!(
                f,
                "{key:<18}mean {:.1} KB ({:.0} nodes), p50 {:.1} KB, max {:.1} KB",
                s.mean_kb, s.mean_nodes, s.p50_kb, s.max_kb
            )
        };
        let all = self.blocks.len();
        if accessed.blocks == 0 {
            writeln!(
                f,
                "witness accessed  not in this dump (its witness lacks paths the blocks only read: root-only?)"
            )?;
        } else {
            line(f, "witness accessed", &accessed)?;
            write!(f, " per block (RLP, every accessed path)")?;
            if accessed.blocks < all {
                write!(f, "; {} of {all} blocks lack some", all - accessed.blocks)?;
            }
            writeln!(f)?;
        }
        if root_only.blocks == 0 {
            return writeln!(f, "witness root-only none: no block's root is computable");
        }
        line(f, "witness root-only", &root_only)?;
        if accessed.blocks == all && accessed.mean_kb > 0.0 {
            write!(
                f,
                " ({:.0} % of accessed)",
                100.0 * root_only.mean_kb / accessed.mean_kb
            )?;
        }
        if root_only.blocks < all {
            write!(
                f,
                "; {} of {all} blocks' roots not computable",
                all - root_only.blocks
            )?;
        }
        writeln!(f)
    }
}
