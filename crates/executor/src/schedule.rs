//! Schedulers: the order in which workers take a batch's items.
//!
//! Execution is list scheduling: workers share one cursor over the ordered list, and
//! each free worker takes the next item. A scheduler only chooses the order.

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
}
