//! Schedulers: the order in which workers take a batch's items, and the chunks they
//! claim it in.
//!
//! Execution is list scheduling: workers share one cursor over the ordered list, and
//! each free worker takes the next chunk of it ([`chunk_bounds`]: heavy items alone, the
//! rest in chunks that shrink towards the end, so a claim is rare while the tail stays
//! balanced). A scheduler chooses the order and what the cut weighs each item by
//! ([`Scheduler::estimate`]).

use crate::{Claims, RunConfig, SchedulerKind};
use serde::{Deserialize, Serialize};
use std::{num::NonZeroUsize, ops::Range};

/// What a work item executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ItemKind {
    /// Pre-block system calls (EIP-2935, EIP-4788) at block access index 0.
    PreBlock,
    /// Transaction `i` of the block, at block access index `i + 1`.
    Tx(u32),
    /// Post-block changes (EIP-7002/7251 requests, withdrawals) at index `n + 1`.
    PostBlock,
}

/// The one wording of a block's stages (the chain crate's `BlockStage` prints through it).
impl std::fmt::Display for ItemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ItemKind::PreBlock => f.write_str("pre-block system calls"),
            ItemKind::Tx(i) => write!(f, "tx {i}"),
            ItemKind::PostBlock => f.write_str("post-block changes"),
        }
    }
}

/// One independently executable unit: 40 bytes, so a batch's items stay in few cache lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkItem {
    /// Index of its block in the replay.
    pub block: u32,
    /// What to run.
    pub kind: ItemKind,
    /// Gas used according to the receipt (0 for system work).
    pub gas_used: u64,
    /// Gas limit of the transaction (0 for system work).
    pub gas_limit: u64,
    /// Its execution time measured in a profiling pass, nanoseconds (0 until one is
    /// recorded): what the oracle scheduler orders by.
    pub measured_ns: u64,
}

impl WorkItem {
    /// The block access index this item runs at, in a block of `transactions`
    /// transactions.
    pub fn bal_index(&self, transactions: usize) -> u64 {
        match self.kind {
            ItemKind::PreBlock => 0,
            ItemKind::Tx(i) => i as u64 + 1,
            ItemKind::PostBlock => transactions as u64 + 1,
        }
    }
}

/// A dump's work items, block after block, each block's items contiguous: what a
/// scheduler orders and what the model projects. The replay holds one; the model reads one
/// from a profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkItems {
    items: Vec<WorkItem>,
    /// `items[block_items[b]..block_items[b + 1]]` are block `b`'s items.
    block_items: Vec<u32>,
}

/// Work items that do not form blocks ([`WorkItems::new`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "work items: block offsets must start at 0, not decrease and end at the {items} items, \
     and every item must name the block whose range holds it (item {item})"
)]
pub struct BadWorkItems {
    /// The items.
    pub items: usize,
    /// The first item out of place (or the item count, when the offsets are wrong).
    pub item: usize,
}

impl WorkItems {
    /// `items` with block `b`'s at `items[block_items[b]..block_items[b + 1]]`. Fails when
    /// the offsets do not cut `items` or an item names another block than its range's.
    pub fn new(items: Vec<WorkItem>, block_items: Vec<u32>) -> Result<Self, BadWorkItems> {
        let n = items.len();
        let cut = block_items.first().is_none_or(|&f| f == 0)
            && block_items.last().is_none_or(|&l| l as usize == n)
            && block_items.windows(2).all(|w| w[0] <= w[1])
            && (n == 0 || block_items.len() >= 2);
        if !cut {
            return Err(BadWorkItems { items: n, item: n });
        }
        for (b, range) in block_items.windows(2).enumerate() {
            let (start, end) = (range[0] as usize, range[1] as usize);
            if let Some(k) = items[start..end].iter().position(|w| w.block as usize != b) {
                return Err(BadWorkItems {
                    items: n,
                    item: start + k,
                });
            }
        }
        Ok(Self { items, block_items })
    }

    /// Every item, block after block.
    pub fn items(&self) -> &[WorkItem] {
        &self.items
    }

    /// Every item, to record measured times on.
    pub fn items_mut(&mut self) -> &mut [WorkItem] {
        &mut self.items
    }

    /// Blocks.
    pub fn block_count(&self) -> usize {
        self.block_items.len().saturating_sub(1)
    }

    /// The range of [`WorkItems::items`] that are block `b`'s items. Panics if `b` is not
    /// a block index.
    pub fn block_items(&self, b: usize) -> Range<usize> {
        self.block_items[b] as usize..self.block_items[b + 1] as usize
    }

    /// Item ranges of mega-blocks of `batch` consecutive blocks (0 counts as 1).
    pub fn batches(&self, batch: usize) -> Vec<Range<usize>> {
        let batch = batch.max(1);
        let blocks = self.block_count();
        (0..blocks)
            .step_by(batch)
            .map(|first| {
                let last = (first + batch).min(blocks);
                self.block_items(first).start..self.block_items(last - 1).end
            })
            .collect()
    }
}

/// A batch's order as the workers claim it: the scheduler's order of its items, cut into
/// chunks ([`chunk_bounds`]).
#[derive(Debug, Default)]
pub struct BatchOrder {
    /// Item positions (relative to the batch start) in the scheduler's order.
    order: Vec<u32>,
    /// Chunk `c` is `order[bounds[c]..bounds[c + 1]]`.
    bounds: Vec<u32>,
}

impl BatchOrder {
    /// `items` (one batch's) in `scheduler`'s order, cut into chunks for `config`'s
    /// threads and claims.
    pub fn new(items: &[WorkItem], scheduler: &dyn Scheduler, config: &RunConfig) -> Self {
        let mut order = Vec::with_capacity(items.len());
        scheduler.order(items, config.threads, &mut order);
        let mut bounds = Vec::new();
        let estimate = scheduler.estimate(items);
        chunk_bounds(
            items,
            &order,
            config.threads,
            estimate,
            config.claims,
            &mut bounds,
        );
        Self { order, bounds }
    }

    /// Chunk `c`, or `None` past the last.
    #[inline]
    pub fn chunk(&self, c: usize) -> Option<&[u32]> {
        let (&start, &end) = (self.bounds.get(c)?, self.bounds.get(c + 1)?);
        Some(&self.order[start as usize..end as usize])
    }
}

/// Orders the items of one batch: a built-in scheduler, or one's own, run through
/// [`SchedulerKind::own`].
pub trait Scheduler: Send + Sync {
    /// Its name in point names, tables, CSV and results: a built-in one's is its
    /// [`SchedulerKind::name`]; one's own is lowercase letters, digits and `-`.
    fn name(&self) -> &str;

    /// Write into `order` the positions (0-based, relative to `items`) in the order
    /// `workers` workers should take them.
    fn order(&self, items: &[WorkItem], workers: NonZeroUsize, order: &mut Vec<u32>);

    /// What the chunk cut weighs these items by: the best estimate of each item's time
    /// this scheduler has. Gas used (from the receipts) unless the scheduler knows better.
    fn estimate(&self, items: &[WorkItem]) -> Estimate {
        let _ = items;
        Estimate::GasUsed
    }
}

/// Ordered list scheduling: block order.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ols;

/// Largest gas used first (longest-processing-time rule), from the receipts.
#[derive(Debug, Clone, Copy, Default)]
pub struct GasUsed;

/// Largest gas limit first: what a builder knows before execution.
#[derive(Debug, Clone, Copy, Default)]
pub struct GasLimit;

/// The heavy items first, longest first, then the rest largest first by band, in block
/// order within each band ([`heavy_first`], by gas used): the balance of largest-first,
/// with far fewer moves from one block's data to another's.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeavyFirst;

/// The oracle: [`HeavyFirst`] by measured execution time ([`WorkItem::measured_ns`], from
/// a profiling pass of the same replay) instead of
/// gas. No scheduler can know these times before execution; the gap between it and the
/// others shows how much a better estimate of a transaction's time could still win.
/// Items without a measured time fall back to gas used.
#[derive(Debug, Clone, Copy, Default)]
pub struct Oracle;

impl Scheduler for Ols {
    fn name(&self) -> &str {
        SchedulerKind::Ols.name()
    }

    fn order(&self, items: &[WorkItem], _: NonZeroUsize, order: &mut Vec<u32>) {
        order.clear();
        order.extend(0..items.len() as u32);
    }
}

fn by_key_desc(items: &[WorkItem], order: &mut Vec<u32>, key: impl Fn(&WorkItem) -> u64) {
    order.clear();
    order.extend(0..items.len() as u32);
    // Stable: equal keys keep block order.
    order.sort_by_key(|&i| std::cmp::Reverse(key(&items[i as usize])));
}

impl Scheduler for GasUsed {
    fn name(&self) -> &str {
        SchedulerKind::GasUsed.name()
    }

    fn order(&self, items: &[WorkItem], _: NonZeroUsize, order: &mut Vec<u32>) {
        by_key_desc(items, order, |w| w.gas_used)
    }
}

impl Scheduler for GasLimit {
    fn name(&self) -> &str {
        SchedulerKind::GasLimit.name()
    }

    fn order(&self, items: &[WorkItem], _: NonZeroUsize, order: &mut Vec<u32>) {
        by_key_desc(items, order, |w| w.gas_limit)
    }
}

/// Heavy items first, longest first, then the rest largest first by band, in block order
/// within each band: the order of [`HeavyFirst`] and the [`Oracle`], each item weighed by
/// `estimate`.
///
/// An item is heavy when it weighs more than 1/[`LEAD_SHARE`] of one worker's expected
/// work in the batch (its weight ÷ `workers`). Run first, the heavy items start while
/// every worker is free, as with largest-first (ties keep block order). The rest are
/// ordered by their weight's band, largest band first (a band spans a factor of two:
/// [`band`]), and keep block order within a band: the balance of largest-first, within
/// a factor of two of each item's weight, while a worker runs a band's items of one block
/// one after another. A strict largest-first order over a mega-block moves to another
/// block at almost every item, and every item pays for reaching the data of its block
/// (its state, its access list) that is no longer in the cache.
pub fn heavy_first(
    items: &[WorkItem],
    workers: NonZeroUsize,
    estimate: Estimate,
    order: &mut Vec<u32>,
) {
    let total: u64 = items.iter().map(|w| estimate.of(w)).sum();
    let heavy = total / (LEAD_SHARE * workers.get() as u64);
    let weight = |i: u32| estimate.of(&items[i as usize]);
    order.clear();
    order.extend(0..items.len() as u32);
    // Stable: equal keys keep block order.
    order.sort_by_key(|&i| {
        let w = weight(i);
        let key = if w > heavy { w } else { 0 };
        std::cmp::Reverse((key, band(w)))
    });
}

/// The band of a weight: its binary order of magnitude (`floor(log2(weight))`), so that
/// the weights in one band are within a factor of two of each other.
#[inline]
pub fn band(weight: u64) -> u32 {
    weight.checked_ilog2().unwrap_or(0)
}

impl Scheduler for HeavyFirst {
    fn name(&self) -> &str {
        SchedulerKind::HeavyFirst.name()
    }

    fn order(&self, items: &[WorkItem], workers: NonZeroUsize, order: &mut Vec<u32>) {
        heavy_first(items, workers, Estimate::GasUsed, order)
    }
}

impl Scheduler for Oracle {
    fn name(&self) -> &str {
        SchedulerKind::Oracle.name()
    }

    fn order(&self, items: &[WorkItem], workers: NonZeroUsize, order: &mut Vec<u32>) {
        heavy_first(items, workers, self.estimate(items), order)
    }

    fn estimate(&self, items: &[WorkItem]) -> Estimate {
        if items.iter().any(|w| w.measured_ns > 0) {
            Estimate::MeasuredTime
        } else {
            Estimate::GasUsed
        }
    }
}

/// What the chunk cut weighs an item by: an estimate of its execution time, in units that
/// only need to be the same across one batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimate {
    /// Gas used, from the receipts, at least [`MIN_ITEM_GAS`] (system items have none of
    /// their own and still take time).
    GasUsed,
    /// The measured time of a profiling pass ([`WorkItem::measured_ns`]), at least 1 ns:
    /// the oracle's.
    MeasuredTime,
}

impl Estimate {
    /// The weight of `item`: its estimated time.
    #[inline]
    pub fn of(self, item: &WorkItem) -> u64 {
        match self {
            Estimate::GasUsed => item.gas_used.max(MIN_ITEM_GAS),
            Estimate::MeasuredTime => item.measured_ns.max(1),
        }
    }

    /// What `item` counts for against a chunk's budget: its weight, or [`TIME_SPREAD`] times
    /// it where the weight is gas that executed code (more than the intrinsic
    /// [`MIN_ITEM_GAS`]), whose time per gas varies from transaction to transaction. A plain
    /// transfer's or a system item's time is as its gas says, and so is a measured time.
    #[inline]
    pub fn counted(self, item: &WorkItem) -> u64 {
        let weight = self.of(item);
        match self {
            Estimate::GasUsed if item.gas_used > MIN_ITEM_GAS => weight * TIME_SPREAD,
            _ => weight,
        }
    }
}

/// How finely workers claim a batch's order: a chunk takes at most 1/(`CHUNK_SHARE` ×
/// workers) of the estimated work left in the order ([`chunk_bounds`]).
pub const CHUNK_SHARE: u64 = 4;

/// How much more than its gas a transaction that executes code counts for against a
/// chunk's budget ([`Estimate::counted`]): with [`CHUNK_SHARE`], a chunk of such
/// transactions holds at most 1/32 of one worker's share of the work left.
pub const TIME_SPREAD: u64 = 8;

/// An item whose estimate exceeds 1/`HEAVY_SHARE` of one worker's expected work in the
/// batch (the batch's estimated work ÷ workers) is claimed alone ([`chunk_bounds`]).
pub const HEAVY_SHARE: u64 = 64;

/// An item that weighs more than 1/`LEAD_SHARE` of one worker's expected work in the
/// batch is run before the rest by [`heavy_first`].
pub const LEAD_SHARE: u64 = 32;

/// The least gas an item counts for when chunks are cut by gas: the intrinsic cost of any
/// transaction. An item that used no more runs no code.
pub const MIN_ITEM_GAS: u64 = 21_000;

/// Cut a batch's `order` into the chunks workers claim, one claim (one write to the shared
/// cursor) per chunk instead of one per item, with every item weighed by `estimate` (an
/// estimate of its time: gas used, or the oracle's measured time). Three rules:
///
/// - **Heavy items alone.** An item that weighs more than 1/[`HEAVY_SHARE`] of one
///   worker's expected work (the batch's weight ÷ `workers`) is a chunk of its own, and no
///   chunk takes one in with other items. Largest-first orders put the heaviest items
///   first, where a chunk cut by what is left is largest: without this rule one chunk could
///   hold several of them, and one worker would run them back to back while the others
///   finish and wait.
/// - **The rest in shrinking chunks** (guided self-scheduling): a chunk starting at
///   position `k` takes items while what they count for ([`Estimate::counted`]) sums to at
///   most 1/([`CHUNK_SHARE`] × `workers`) of the weight left from `k` on, and at least one
///   item, so chunks shrink towards the end of the order and the last ones are single
///   items: the batch's tail stays balanced as in plain list scheduling, while a batch of
///   `n` equal items makes about `CHUNK_SHARE × workers × ln n` claims instead of `n`.
/// - **Room for the estimate's error.** Time per gas differs by more than 10× between
///   transactions (before EIP-150 state access was underpriced), and an order by gas puts
///   transactions of equal gas (the same call, sent many times) side by side, so a chunk's
///   error does not average out. A transaction that executes code counts [`TIME_SPREAD`]
///   times its gas against the budget: a chunk of them is at most 1/32 of a worker's share
///   of what is left, so it ends before the others run out of work even when every item in
///   it is much slower per gas than the rest. Plain transfers (21,000 gas) keep the coarser
///   cut: their time is what their gas says.
///
/// The shares are checked with the simulator: `crates/bench/tests/claims.rs` holds the
/// chunked schedule within 2 % of one item per claim for every named scheduler at 16 and
/// 64 workers, on the committed dumps' recorded one-thread profiles, and
/// `gigagas simulate` projects both up to 192 workers.
///
/// [`Claims::OneItem`] cuts every item into a chunk of its own (the reference the simulator
/// and `--one-item-claims` compare against); one worker takes everything in one chunk.
/// The cut depends only on the order and the estimates, so it is made once per batch (with
/// the order, inside the timed window) and the simulator replays the same chunks.
///
/// Writes the chunk boundaries into `bounds`: chunk `c` is `order[bounds[c]..bounds[c + 1]]`
/// (`bounds` starts at 0 and ends at `order.len()`).
pub fn chunk_bounds(
    items: &[WorkItem],
    order: &[u32],
    workers: NonZeroUsize,
    estimate: Estimate,
    claims: Claims,
    bounds: &mut Vec<u32>,
) {
    bounds.clear();
    bounds.push(0);
    if workers.get() == 1 {
        // One worker takes everything in order: one chunk.
        if !order.is_empty() {
            bounds.push(order.len() as u32);
        }
        return;
    }
    if claims == Claims::OneItem {
        bounds.extend(1..=order.len() as u32);
        return;
    }
    let item = |pos: u32| &items[pos as usize];
    let mut left: u64 = order.iter().map(|&p| estimate.of(item(p))).sum();
    let workers = workers.get() as u64;
    let heavy = left / (workers * HEAVY_SHARE);
    let parts = CHUNK_SHARE * workers;
    let mut k = 0;
    while k < order.len() {
        let first = item(order[k]);
        let mut taken = estimate.of(first);
        let mut end = k + 1;
        if taken <= heavy {
            let budget = left / parts;
            let mut counted = estimate.counted(first);
            while end < order.len() {
                let next = item(order[end]);
                let (weight, count) = (estimate.of(next), estimate.counted(next));
                if weight > heavy || counted + count > budget {
                    break;
                }
                taken += weight;
                counted += count;
                end += 1;
            }
        }
        left -= taken;
        bounds.push(end as u32);
        k = end;
    }
}

/// A unit on a pass's state-root queue, as the queue ranks it ([`root_rank`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootUnit {
    /// Advancing a segment: finishing its current block (the account trie) and preparing
    /// the next.
    Advance,
    /// One account's storage trie, or one unit of lower subtries of a split storage trie,
    /// applying `writes` slot writes.
    Storage {
        /// Its slot writes: what the queue knows of its size before it runs.
        writes: u64,
    },
    /// One unit of lower subtries of a block's account trie, updating `leaves` account
    /// leaves (queued once the block's storage roots are known).
    Accounts {
        /// Its account leaves: its size.
        leaves: u64,
    },
}

/// The state-root queue's one rule, the executor's and the model's: advances first (each
/// segment's chain of blocks is the root's critical path), then the unit that updates the
/// most leaves (slot writes of a storage task, account leaves of an account unit), then the
/// one queued first (`seq` counts up as units are queued). A larger rank is taken first.
pub fn root_rank(unit: RootUnit, seq: u64) -> (u64, std::cmp::Reverse<u64>) {
    let key = match unit {
        RootUnit::Advance => u64::MAX,
        RootUnit::Storage { writes: leaves } | RootUnit::Accounts { leaves } => {
            leaves.min(u64::MAX - 1)
        }
    };
    (key, std::cmp::Reverse(seq))
}

/// The ordering of a scheduler named in a grid point ([`SchedulerKind::ordering`]): a
/// built-in one's, or one's own. Panics for a scheduler of one's own read back from a
/// file, which carries its name and not its order.
pub fn scheduler(kind: SchedulerKind) -> &'static dyn Scheduler {
    kind.ordering().unwrap_or_else(|| {
        panic!("scheduler `{kind}` was read from a file: its name is known, not its order")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(i: u32, used: u64, limit: u64) -> WorkItem {
        WorkItem {
            block: 0,
            kind: ItemKind::Tx(i),
            gas_used: used,
            gas_limit: limit,
            measured_ns: 0,
        }
    }

    #[test]
    fn orders() {
        let items = [
            item(0, 10, 300),
            item(1, 30, 100),
            item(2, 20, 200),
            item(3, 30, 50),
        ];
        let mut o = Vec::new();
        let w = NonZeroUsize::new(2).unwrap();
        Ols.order(&items, w, &mut o);
        assert_eq!(o, [0, 1, 2, 3]);
        GasUsed.order(&items, w, &mut o);
        assert_eq!(o, [1, 3, 2, 0]);
        GasLimit.order(&items, w, &mut o);
        assert_eq!(o, [0, 2, 1, 3]);
        // Heavy-first weighs items by their estimate, at least the intrinsic 21,000 gas:
        // here all weigh the same, over 1/64 of the batch, so all are heavy and tie.
        HeavyFirst.order(&items, w, &mut o);
        assert_eq!(o, [0, 1, 2, 3]);
        Oracle.order(&items, w, &mut o);
        assert_eq!(o, [0, 1, 2, 3], "without measured times: as heavy-first");
        let mut timed = items;
        for (w, ns) in timed.iter_mut().zip([5, 1, 9, 2]) {
            w.measured_ns = ns;
        }
        Oracle.order(&timed, w, &mut o);
        assert_eq!(o, [2, 0, 3, 1], "longest measured first");
    }

    /// A mega-block of four blocks: three heavy transactions among many small ones.
    fn mega_block() -> Vec<WorkItem> {
        let mut items = Vec::new();
        for block in 0..4u32 {
            for i in 0..50u32 {
                let used = match (block, i) {
                    (1, 7) => 3_000_000,
                    (3, 2) => 5_000_000,
                    (0, 40) => 3_000_000,
                    _ => 21_000 + u64::from((i * 7 + block) % 5) * 10_000,
                };
                items.push(WorkItem {
                    block,
                    ..item(i, used, used)
                });
            }
        }
        items
    }

    #[test]
    fn heavy_first_runs_the_heavy_items_first_and_each_band_of_the_rest_in_block_order() {
        let items = mega_block();
        let workers = NonZeroUsize::new(4).unwrap();
        let mut order = Vec::new();
        HeavyFirst.order(&items, workers, &mut order);
        // The heavy ones (more than 1/(32 × 4) of the batch's gas), largest first; ties
        // (blocks 0 and 1, equal gas) in block order.
        assert_eq!(order[..3], [150 + 2, 40, 50 + 7]);
        // The rest by band (41,000 to 61,000 gas, then 21,000 and 31,000), each band in
        // block order.
        let rest = &order[3..];
        assert_eq!(rest.len(), items.len() - 3);
        let bands: Vec<u32> = rest
            .iter()
            .map(|&i| band(items[i as usize].gas_used))
            .collect();
        let split = bands.iter().take_while(|&&b| b == 15).count();
        assert!(
            split > 0 && bands[split..].iter().all(|&b| b == 14),
            "{bands:?}"
        );
        for part in [&rest[..split], &rest[split..]] {
            assert!(
                part.windows(2).all(|w| w[0] < w[1]),
                "a band in block order"
            );
        }
        // Deterministic: the same items give the same order.
        let mut again = Vec::new();
        HeavyFirst.order(&items, workers, &mut again);
        assert_eq!(order, again);
        // More workers make a smaller share heavy: at 192 every item here is over it, and
        // the order is largest first.
        let (mut wide, mut largest) = (Vec::new(), Vec::new());
        HeavyFirst.order(&items, NonZeroUsize::new(192).unwrap(), &mut wide);
        GasUsed.order(&items, workers, &mut largest);
        assert_eq!(wide, largest);
    }

    #[test]
    fn the_oracle_is_heavy_first_by_measured_time() {
        let mut items = mega_block();
        // Measured times that disagree with gas: item 10 of block 2 is the slowest.
        for (k, w) in items.iter_mut().enumerate() {
            w.measured_ns = if k == 110 {
                900_000
            } else {
                1_000 + (k as u64 % 3)
            };
        }
        let mut order = Vec::new();
        Oracle.order(&items, NonZeroUsize::new(4).unwrap(), &mut order);
        assert_eq!(order[0], 110);
        assert!(
            order[1..].windows(2).all(|w| w[0] < w[1]),
            "the rest in block order"
        );
    }

    fn chunks(items: &[WorkItem], order: &[u32], workers: usize) -> Vec<u32> {
        let mut bounds = Vec::new();
        chunk_bounds(
            items,
            order,
            NonZeroUsize::new(workers).unwrap(),
            Estimate::GasUsed,
            Claims::Chunked,
            &mut bounds,
        );
        bounds
    }

    #[test]
    fn equal_items_are_claimed_in_shrinking_chunks() {
        let items: Vec<WorkItem> = (0..1000).map(|i| item(i, 21_000, 21_000)).collect();
        let order: Vec<u32> = (0..1000).collect();
        let bounds = chunks(&items, &order, 2);
        assert_eq!(bounds.first(), Some(&0));
        assert_eq!(bounds.last(), Some(&1000));
        let sizes: Vec<u32> = bounds.windows(2).map(|w| w[1] - w[0]).collect();
        // An eighth of what is left each time: 125 of 1000, then 109 of 875, ...
        assert_eq!(&sizes[..3], &[125, 109, 95]);
        assert!(sizes.windows(2).all(|w| w[1] <= w[0]), "{sizes:?}");
        // ... down to single items for the last eight.
        assert!(
            sizes[sizes.len() - 8..].iter().all(|&s| s == 1),
            "{sizes:?}"
        );
        assert!(sizes.len() < 60, "{} claims for 1000 items", sizes.len());
        // One worker: one chunk; no items: no chunk.
        assert_eq!(chunks(&items, &order, 1), [0, 1000]);
        assert_eq!(chunks(&items, &[], 4), [0]);
    }

    #[test]
    fn a_large_item_is_a_chunk_of_its_own() {
        // Largest first: the 3M-gas item alone exceeds an eighth of the rest, so it is
        // claimed alone, and the small ones behind it are cut by what is left.
        let mut items = vec![item(0, 3_000_000, 3_000_000)];
        items.extend((1..101).map(|i| item(i, 21_000, 21_000)));
        let order: Vec<u32> = (0..101).collect();
        let bounds = chunks(&items, &order, 2);
        assert_eq!(&bounds[..2], &[0, 1]);
        // 100 transfers left: an eighth of them.
        assert_eq!(bounds[2], 1 + 12);
        // A system item without gas of its own weighs as a transfer.
        let system = [item(0, 0, 0), item(1, 0, 0)];
        assert_eq!(chunks(&system, &[0, 1], 2), [0, 1, 2]);
    }

    #[test]
    fn heavy_items_are_never_bundled() {
        // 16 workers; 40 items of 1 Mgas first (largest first), then 20,000 transfers:
        // 460 Mgas in all, one worker's share 28.75 Mgas, an item above 1/64 of it (449
        // kgas) is heavy. Cut by what is left alone (1/64 of 460 Mgas, 7.2 Mgas), the first
        // chunk would hold seven heavy items.
        let mut items: Vec<WorkItem> = (0..40).map(|i| item(i, 1_000_000, 1_200_000)).collect();
        items.extend((40..20_040).map(|i| item(i, 21_000, 21_000)));
        let order: Vec<u32> = (0..items.len() as u32).collect();
        let bounds = chunks(&items, &order, 16);
        let sizes: Vec<u32> = bounds.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(sizes[..40].iter().all(|&s| s == 1), "{:?}", &sizes[..41]);
        // The transfers behind them still go in chunks: far fewer claims than items.
        assert!(sizes[40] > 100, "{:?}", &sizes[40..45]);
        assert!(sizes.len() < 1_000, "{} claims", sizes.len());
        // A heavy item deep in block order is alone too, and splits the chunk it falls in.
        let mut ols = items.clone();
        ols.swap(0, 10_000);
        let bounds = chunks(&ols, &order, 16);
        let alone = bounds.windows(2).any(|w| w == [10_000, 10_001]);
        assert!(alone, "the heavy item at 10,000 is a chunk of its own");
    }

    #[test]
    fn estimates_and_one_item_claims() {
        // The oracle weighs by measured time where there is one: here the transfer-sized
        // item took as long as the rest together, so it is heavy and alone.
        let mut items: Vec<WorkItem> = (0..200).map(|i| item(i, 21_000, 21_000)).collect();
        for w in &mut items {
            w.measured_ns = 1_000;
        }
        items[50].measured_ns = 200_000;
        let order: Vec<u32> = (0..200).collect();
        assert_eq!(Oracle.estimate(&items), Estimate::MeasuredTime);
        assert_eq!(GasUsed.estimate(&items), Estimate::GasUsed);
        let mut bounds = Vec::new();
        chunk_bounds(
            &items,
            &order,
            NonZeroUsize::new(2).unwrap(),
            Estimate::MeasuredTime,
            Claims::Chunked,
            &mut bounds,
        );
        assert!(bounds.windows(2).any(|w| w == [50, 51]), "{bounds:?}");
        chunk_bounds(
            &items,
            &order,
            NonZeroUsize::new(2).unwrap(),
            Estimate::GasUsed,
            Claims::Chunked,
            &mut bounds,
        );
        assert!(!bounds.windows(2).any(|w| w == [50, 51]), "{bounds:?}");
        // Gas that executed code counts eight times against a chunk's budget: 1000 calls of
        // 50 kgas on 2 workers, a first chunk of 1/8 of 50 Mgas takes 6.25 Mgas / 400 kgas,
        // 15 calls (1000 transfers: 125).
        let calls: Vec<WorkItem> = (0..1000).map(|i| item(i, 50_000, 60_000)).collect();
        let all: Vec<u32> = (0..1000).collect();
        chunk_bounds(
            &calls,
            &all,
            NonZeroUsize::new(2).unwrap(),
            Estimate::GasUsed,
            Claims::Chunked,
            &mut bounds,
        );
        assert_eq!(&bounds[..2], &[0, 15]);
        assert_eq!(Estimate::GasUsed.counted(&calls[0]), 8 * 50_000);
        assert_eq!(Estimate::GasUsed.counted(&items[0]), 21_000);
        assert_eq!(Estimate::MeasuredTime.counted(&items[50]), 200_000);
        // One item per claim: every item a chunk; on one worker still one chunk.
        for (workers, expected) in [(2, (0..=200).collect::<Vec<u32>>()), (1, vec![0, 200])] {
            let (gas, one) = (Estimate::GasUsed, Claims::OneItem);
            let n = NonZeroUsize::new(workers).unwrap();
            chunk_bounds(&items, &order, n, gas, one, &mut bounds);
            assert_eq!(bounds, expected, "{workers} workers");
        }
    }
}
