//! Schedulers: the order in which workers take a batch's items.
//!
//! Execution is list scheduling: workers share one cursor over the ordered list, and
//! each free worker takes the next item. A scheduler only chooses the order.

use crate::replay::WorkItem;
use std::{fmt, str::FromStr};

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

/// The schedulers by name, for the command line and result rows.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    /// [`Ols`].
    Ols,
    /// [`GasUsed`].
    GasUsed,
    /// [`GasLimit`].
    GasLimit,
}

impl SchedulerKind {
    /// All schedulers.
    pub const ALL: [SchedulerKind; 3] = [
        SchedulerKind::Ols,
        SchedulerKind::GasUsed,
        SchedulerKind::GasLimit,
    ];

    /// The scheduler itself.
    pub fn scheduler(self) -> &'static dyn Scheduler {
        match self {
            SchedulerKind::Ols => &Ols,
            SchedulerKind::GasUsed => &GasUsed,
            SchedulerKind::GasLimit => &GasLimit,
        }
    }

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Ols => "ols",
            SchedulerKind::GasUsed => "gas-used",
            SchedulerKind::GasLimit => "gas-limit",
        }
    }
}

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scheduler name that is none of [`SchedulerKind::ALL`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scheduler `{name}` (expected ols, gas-used or gas-limit)")]
pub struct UnknownScheduler {
    /// The name given.
    pub name: String,
}

impl FromStr for SchedulerKind {
    type Err = UnknownScheduler;
    fn from_str(s: &str) -> Result<Self, UnknownScheduler> {
        SchedulerKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownScheduler {
                name: s.to_string(),
            })
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
    }
}
