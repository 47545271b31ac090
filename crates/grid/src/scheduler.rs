//! The schedulers by name.

use std::fmt;

/// The schedulers by name, for the command line, configs and result rows. The executor
/// maps each to its ordering (`gigagas_executor::scheduler`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    /// Ordered list scheduling: block order.
    Ols,
    /// Largest gas used first (longest-processing-time rule), from the receipts.
    GasUsed,
    /// Largest gas limit first: what a builder knows before execution.
    GasLimit,
    /// The heavy transactions first (by gas used, each more than a small share of one
    /// worker's work), longest first, then the rest in block order: the balance of
    /// largest-first, and the locality of block order for the many small ones.
    HeavyFirst,
    /// The oracle, a reference and never a default: heavy-first by execution time, the
    /// times measured in a 1-thread profiling pass of the same dump before the measured
    /// rounds. No real scheduler knows them; it shows what a better gas proxy could win.
    Oracle,
}

impl SchedulerKind {
    /// The schedulers `all` and the defaults run; [`SchedulerKind::HeavyFirst`] and the
    /// [`SchedulerKind::Oracle`] are asked for by name.
    pub const ALL: [SchedulerKind; 3] = [
        SchedulerKind::Ols,
        SchedulerKind::GasUsed,
        SchedulerKind::GasLimit,
    ];

    /// Every scheduler a name can ask for: [`SchedulerKind::ALL`],
    /// [`SchedulerKind::HeavyFirst`] and the [`SchedulerKind::Oracle`]. The one list of
    /// names: parsing and its error message read it.
    pub const NAMED: [SchedulerKind; 5] = [
        SchedulerKind::Ols,
        SchedulerKind::GasUsed,
        SchedulerKind::GasLimit,
        SchedulerKind::HeavyFirst,
        SchedulerKind::Oracle,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Ols => "ols",
            SchedulerKind::GasUsed => "gas-used",
            SchedulerKind::GasLimit => "gas-limit",
            SchedulerKind::HeavyFirst => "heavy-first",
            SchedulerKind::Oracle => "oracle",
        }
    }
}

/// How workers claim a batch's order from the shared cursor.
///
/// [`Claims::Chunked`] is what every pass does: the order cut into chunks that shrink
/// towards the batch's end, heavy items alone (`gigagas_executor::chunk_bounds`), one claim
/// per chunk. [`Claims::OneItem`] is the reference it is checked against: plain list
/// scheduling, one claim per item, which balances best and pays a write to the shared cursor
/// for every item. The simulator projects both; `gigagas run --one-item-claims` (hidden)
/// measures the reference on a machine with many cores.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Claims {
    /// Chunks of the order, heavy items alone: what a pass does unless told otherwise.
    #[default]
    Chunked,
    /// One item per claim: the reference.
    OneItem,
}

impl Claims {
    /// Whether this is the default, [`Claims::Chunked`] (results store only the other).
    pub fn is_chunked(&self) -> bool {
        matches!(self, Claims::Chunked)
    }

    /// The name results, tables and the simulator use: `chunked` or `one-item`.
    pub fn name(self) -> &'static str {
        match self {
            Claims::Chunked => "chunked",
            Claims::OneItem => "one-item",
        }
    }
}

impl fmt::Display for Claims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

crate::state::named_choice!(SchedulerKind, "scheduler", NAMED);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_all() {
        for k in SchedulerKind::NAMED {
            assert_eq!(k.name().parse::<SchedulerKind>().unwrap(), k);
            assert_eq!(k.to_string(), k.name());
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::Value::String(k.name().into())
            );
        }
        assert!(
            !SchedulerKind::ALL.contains(&SchedulerKind::Oracle)
                && SchedulerKind::ALL
                    .iter()
                    .all(|k| SchedulerKind::NAMED.contains(k)),
            "never a default"
        );
        let err = "fifo".parse::<SchedulerKind>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown scheduler `fifo` (expected ols, gas-used, gas-limit, heavy-first or oracle)"
        );
    }
}
