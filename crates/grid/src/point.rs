//! One point of a benchmark grid and how often it runs.

use crate::{SchedulerKind, StateRead, TimedWork};
use std::fmt;

/// The BAL replay's settings at one grid point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct RunConfig {
    /// Worker threads.
    pub threads: usize,
    /// Blocks per mega-block.
    pub batch: usize,
    /// Order in which workers take items.
    pub scheduler: SchedulerKind,
    /// Recover each sender from its signature inside the timed work.
    pub recover_senders: bool,
    /// Build each transaction's receipt with its logs bloom inside the timed work (and
    /// check the receipts root after the pass).
    #[serde(default)]
    pub receipts: bool,
    /// Where the pre-state is read from (memory unless a store is named).
    #[serde(default)]
    pub state: StateRead,
}

impl RunConfig {
    /// `threads` workers over mega-blocks of `batch` blocks in `scheduler`'s order, with no
    /// optional timed work.
    pub fn new(threads: usize, batch: usize, scheduler: SchedulerKind) -> Self {
        Self {
            threads,
            batch,
            scheduler,
            recover_senders: false,
            receipts: false,
            state: StateRead::Memory,
        }
    }

    /// The same settings with these optional steps of the timed work.
    pub fn with_work(self, work: TimedWork) -> Self {
        Self {
            recover_senders: work.recover_senders,
            receipts: work.receipts,
            state: work.state,
            ..self
        }
    }

    /// The optional steps of this point's timed work.
    pub fn work(&self) -> TimedWork {
        TimedWork {
            recover_senders: self.recover_senders,
            receipts: self.receipts,
            state: self.state,
        }
    }
}

/// The replay point's name: the same as its [`Point`]'s.
impl fmt::Display for RunConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Point::Bal(*self).fmt(f)
    }
}

/// One point of a benchmark grid: the sequential baseline, or the BAL replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Point {
    /// The sequential client loop (one revm `State`, no access list) with this timed work.
    Sequential(TimedWork),
    /// The BAL replay with these settings.
    Bal(RunConfig),
}

impl Point {
    /// Worker threads (1 for the sequential loop).
    pub fn threads(&self) -> usize {
        match self {
            Self::Sequential(_) => 1,
            Self::Bal(c) => c.threads,
        }
    }

    /// Blocks per mega-block (1 for the sequential loop, which runs block by block).
    pub fn batch(&self) -> usize {
        match self {
            Self::Sequential(_) => 1,
            Self::Bal(c) => c.batch,
        }
    }

    /// The scheduler (`None` for the sequential loop).
    pub fn scheduler(&self) -> Option<SchedulerKind> {
        match self {
            Self::Sequential(_) => None,
            Self::Bal(c) => Some(c.scheduler),
        }
    }

    /// The optional steps of the timed work.
    pub fn work(&self) -> TimedWork {
        match self {
            Self::Sequential(w) => *w,
            Self::Bal(c) => c.work(),
        }
    }

    /// Whether this is the sequential baseline.
    pub fn is_sequential(&self) -> bool {
        matches!(self, Self::Sequential(_))
    }
}

/// The one name of a point: `sequential`, `BAL 2t b50 ols`, followed by ` +senders` and
/// ` +receipts` when those steps are inside the timed work, and `[cold store, prefetch]`
/// when the pre-state is read from a store.
impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sequential(_) => f.write_str("sequential")?,
            Self::Bal(c) => write!(f, "BAL {}t b{} {}", c.threads, c.batch, c.scheduler)?,
        }
        let work = self.work();
        if work.recover_senders {
            f.write_str(" +senders")?;
        }
        if work.receipts {
            f.write_str(" +receipts")?;
        }
        if let StateRead::Store { io, cache } = work.state {
            write!(f, " [{cache} store, {io}]")?;
        }
        Ok(())
    }
}

/// How many runs a point gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Repetition {
    /// Warm-up passes first: one pass each, verified, not in the summary.
    pub warmup: usize,
    /// Measured samples that enter the summary.
    pub repeats: usize,
    /// Verify every pass (off only to measure verification's cost).
    pub verify: bool,
    /// Minimum summed timed length of the passes of one measured sample, nanoseconds
    /// (0: one pass per sample).
    #[serde(default)]
    pub min_sample_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_has_one_name() {
        let c = RunConfig::new(2, 50, SchedulerKind::Ols);
        assert_eq!(Point::Bal(c).to_string(), "BAL 2t b50 ols");
        assert_eq!(
            c.to_string(),
            "BAL 2t b50 ols",
            "RunConfig names itself as its point"
        );
        let work = TimedWork {
            recover_senders: true,
            receipts: true,
            state: StateRead::Memory,
        };
        assert_eq!(
            Point::Bal(RunConfig::new(16, 1, SchedulerKind::GasUsed).with_work(work)).to_string(),
            "BAL 16t b1 gas-used +senders +receipts"
        );
        assert_eq!(
            Point::Sequential(TimedWork::default()).to_string(),
            "sequential"
        );
        assert_eq!(
            Point::Sequential(work).to_string(),
            "sequential +senders +receipts"
        );
        assert_eq!(Point::Sequential(work).threads(), 1);
        let store = TimedWork {
            state: StateRead::Store {
                io: crate::IoMode::Prefetch,
                cache: crate::CacheState::Cold,
            },
            ..TimedWork::default()
        };
        assert_eq!(
            Point::Bal(RunConfig::new(2, 42, SchedulerKind::Ols).with_work(store)).to_string(),
            "BAL 2t b42 ols [cold store, prefetch]"
        );
        assert_eq!(Point::Sequential(work).scheduler(), None);
    }
}
