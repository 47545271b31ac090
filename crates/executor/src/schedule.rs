//! Schedulers: the order in which workers take a batch's items.
//!
//! Execution is list scheduling: workers share one cursor over the ordered list, and
//! each free worker takes the next chunk of it ([`chunk_bounds`]: chunks that shrink
//! towards the end, so a claim is rare while the tail stays balanced). A scheduler only
//! chooses the order.

use crate::replay::WorkItem;
use gigagas_grid::SchedulerKind;

/// Orders the items of one batch.
pub trait Scheduler: Send + Sync {
    /// Write into `order` the positions (0-based, relative to `items`) in the order
    /// workers should take them.
    fn order(&self, items: &[WorkItem], order: &mut Vec<u32>);
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

/// The oracle: longest measured execution time first ([`WorkItem::measured_ns`], from a
/// profiling pass of the same replay, [`crate::Replay::set_measured_times`]). No
/// scheduler can know these times before execution; the gap between it and gas used shows
/// how much a better estimate of a transaction's time could still win. Items without a
/// measured time fall back to gas used.
#[derive(Debug, Clone, Copy, Default)]
pub struct Oracle;

impl Scheduler for Ols {
    fn order(&self, items: &[WorkItem], order: &mut Vec<u32>) {
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
    fn order(&self, items: &[WorkItem], order: &mut Vec<u32>) {
        by_key_desc(items, order, |w| w.gas_used)
    }
}

impl Scheduler for GasLimit {
    fn order(&self, items: &[WorkItem], order: &mut Vec<u32>) {
        by_key_desc(items, order, |w| w.gas_limit)
    }
}

impl Scheduler for Oracle {
    fn order(&self, items: &[WorkItem], order: &mut Vec<u32>) {
        if items.iter().any(|w| w.measured_ns > 0) {
            by_key_desc(items, order, |w| w.measured_ns)
        } else {
            by_key_desc(items, order, |w| w.gas_used)
        }
    }
}

/// How finely workers claim a batch's order: each claim takes at most 1/(`CHUNK_SHARE` ×
/// workers) of the gas limit left in the order ([`chunk_bounds`]).
pub const CHUNK_SHARE: u64 = 4;

/// The least weight an item counts for when chunks are cut: the intrinsic cost of any
/// transaction, so system items (no gas limit of their own) still take their share.
const MIN_ITEM_WEIGHT: u64 = 21_000;

/// Cut a batch's `order` into the chunks workers claim, one claim (one write to the shared
/// cursor) per chunk instead of one per item: guided self-scheduling weighted by gas limit
/// (what a builder knows before execution). A chunk starting at position `k` takes items
/// while their gas limits sum to at most 1/(`CHUNK_SHARE` × `workers`) of the gas limit
/// left from `k` on, and at least one item, so chunks shrink towards the end of the order
/// and the last ones are single items: the batch's tail stays balanced as in plain list
/// scheduling, while a batch of `n` equal items makes about `CHUNK_SHARE × workers × ln n`
/// claims instead of `n`. The cut depends only on the order, so it is made once per batch
/// (with the order, inside the timed window) and the simulator replays the same chunks.
///
/// Writes the chunk boundaries into `bounds`: chunk `c` is `order[bounds[c]..bounds[c + 1]]`
/// (`bounds` starts at 0 and ends at `order.len()`).
pub fn chunk_bounds(items: &[WorkItem], order: &[u32], workers: usize, bounds: &mut Vec<u32>) {
    bounds.clear();
    bounds.push(0);
    if workers <= 1 {
        // One worker takes everything in order: one chunk.
        if !order.is_empty() {
            bounds.push(order.len() as u32);
        }
        return;
    }
    let weight = |pos: u32| items[pos as usize].gas_limit.max(MIN_ITEM_WEIGHT);
    let mut left: u64 = order.iter().map(|&p| weight(p)).sum();
    let parts = CHUNK_SHARE * workers as u64;
    let mut k = 0;
    while k < order.len() {
        let budget = left / parts;
        let mut taken = weight(order[k]);
        let mut end = k + 1;
        while end < order.len() && taken + weight(order[end]) <= budget {
            taken += weight(order[end]);
            end += 1;
        }
        left -= taken;
        bounds.push(end as u32);
        k = end;
    }
}

/// The ordering of a scheduler named in a grid point.
pub fn scheduler(kind: SchedulerKind) -> &'static dyn Scheduler {
    match kind {
        SchedulerKind::Ols => &Ols,
        SchedulerKind::GasUsed => &GasUsed,
        SchedulerKind::GasLimit => &GasLimit,
        SchedulerKind::Oracle => &Oracle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::ItemKind;

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
        Ols.order(&items, &mut o);
        assert_eq!(o, [0, 1, 2, 3]);
        GasUsed.order(&items, &mut o);
        assert_eq!(o, [1, 3, 2, 0]);
        GasLimit.order(&items, &mut o);
        assert_eq!(o, [0, 2, 1, 3]);
        Oracle.order(&items, &mut o);
        assert_eq!(o, [1, 3, 2, 0], "without measured times: gas used");
        let mut timed = items;
        for (w, ns) in timed.iter_mut().zip([5, 1, 9, 2]) {
            w.measured_ns = ns;
        }
        Oracle.order(&timed, &mut o);
        assert_eq!(o, [2, 0, 3, 1], "longest measured first");
    }

    fn chunks(items: &[WorkItem], order: &[u32], workers: usize) -> Vec<u32> {
        let mut bounds = Vec::new();
        chunk_bounds(items, order, workers, &mut bounds);
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
        // Largest first: the 30M-gas item alone exceeds an eighth of the rest, so it is
        // claimed alone, and the small ones behind it are cut by what is left.
        let mut items = vec![item(0, 0, 30_000_000)];
        items.extend((1..101).map(|i| item(i, 21_000, 21_000)));
        let order: Vec<u32> = (0..101).collect();
        let bounds = chunks(&items, &order, 2);
        assert_eq!(&bounds[..2], &[0, 1]);
        // 100 transfers left: an eighth of them.
        assert_eq!(bounds[2], 1 + 12);
        // A system item without a gas limit weighs as a transfer.
        let system = [item(0, 0, 0), item(1, 0, 0)];
        assert_eq!(chunks(&system, &[0, 1], 2), [0, 1, 2]);
    }
}
