//! The benchmark grid's vocabulary, shared by the crate that runs a point
//! (`gigagas-executor`), the crate that measures points (`gigagas-bench`) and the crate
//! that names them in results (`gigagas-report`).
//!
//! Plain data with serde and one `Display` each; no EVM, so the report crate can read and
//! render results without compiling revm.
//!
//! - [`Point`]: one point of a grid, the sequential baseline ([`Point::Sequential`]) or the
//!   BAL replay with a [`RunConfig`] ([`Point::Bal`]). Its `Display` is the one name of a
//!   point everywhere (tables, compare, progress, traces, timelines): `sequential`,
//!   `BAL 2t b50 ols`, with ` +senders` / ` +receipts` when those are inside the timed work.
//!   Its serde form is the flat fields results files store for a row or a total (`mode`,
//!   `threads`, `batch`, `scheduler`, the [`TimedWork`] fields), read strictly. A
//!   [`RunConfig`] holds its [`TimedWork`] whole, so the replay and the baseline carry the
//!   same optional steps.
//! - [`SchedulerKind`]: the schedulers by name (`ols`, `gas-used`, `gas-limit`,
//!   `heavy-first`, `oracle`, and one's own: [`SchedulerKind::own`]); [`schedule`]: what
//!   each does: the order workers take a batch's [`WorkItem`]s in and the chunks they claim
//!   it in, the one rule the executor runs and the model projects.
//! - [`TimedWork`]: the optional steps of the timed work, the same on both sides of a ratio,
//!   including where the pre-state is read from ([`StateRead`]: memory, or a store on disk
//!   warm or cold, read on demand, prefetched or pipelined, with the access list carrying
//!   all pre-values, the keys or the writes only: [`BalDesign`]).
//! - [`Repetition`]: warm-up passes, measured samples and their minimum length.
//! - [`SweepConfig`]: a sweep config file's contents (`bench-configs/*.toml`) as data, what
//!   results record as the plan that was run.
//!
//! Words: a *batch* is a mega-block, consecutive blocks replayed as one parallel unit, and
//! [`RunConfig::batch`] is its size in blocks. A *pass* replays a dump once, a *sample* is one
//! or more passes timed together, a *repeat* is one measured sample.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

mod config;
mod point;
pub mod schedule;
mod scheduler;
mod state;
mod work;

pub use config::{Dimension, DumpEntry, SimulateConfig, SweepConfig, TableLayout};
pub use point::{Point, Repetition, RunConfig};
pub use schedule::{ItemKind, WorkItem, WorkItems};
pub use scheduler::{BadSchedulerName, Claims, OwnScheduler, SchedulerKind};
pub use state::{BadStateRead, BalDesign, CacheState, IoMode, StateRead, StoreRead, UnknownName};
pub use work::{Backlog, Persist, StateRootPhase, TIMED_WORK, TimedWork};

/// The minimum timed length of a measured sample that the command line and sweep configs
/// default to, milliseconds.
pub const DEFAULT_MIN_SAMPLE_MS: u64 = 100;

/// Upper bound on the passes of one sample, so a degenerate dump (no work at all) still
/// ends.
pub const MAX_PASSES_PER_SAMPLE: u32 = 1_000_000;

/// Measured samples per point where none are given (`--repeats`, the config key `repeats`):
/// ten interleaved rounds give a ratio's 95 % interval from the 2nd to the 9th smallest.
pub const DEFAULT_REPEATS: usize = 10;

/// Warm-up passes per point where none are given (`--warmup`, the config key `warmup`).
pub const DEFAULT_WARMUP: usize = 1;

/// Readers of a prefetch from a state store where none are given: enough requests in
/// flight for an NVMe disk's queue, few enough for a small machine.
pub const DEFAULT_IO_THREADS: usize = 8;

/// Readers of a read beside execution where none are given: one per core that the pass's
/// `workers` leave free on a machine of `cores`, at least one. A prefetch reads while no
/// worker runs, so its readers have every core ([`DEFAULT_IO_THREADS`]); readers beside
/// execution run while the workers do, and each one past the free cores takes its CPU time
/// from a worker.
pub fn beside_readers(
    workers: std::num::NonZeroUsize,
    cores: std::num::NonZeroUsize,
) -> std::num::NonZeroUsize {
    std::num::NonZeroUsize::new(cores.get().saturating_sub(workers.get()))
        .unwrap_or(std::num::NonZeroUsize::MIN)
}

/// The seed interleaved rounds default to (recorded with every result).
pub const DEFAULT_ROUND_SEED: u64 = 0x0067_6967_6167_6173; // "gigagas"

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroUsize;

    /// A read beside execution gets the cores the workers leave, and one reader where they
    /// leave none.
    #[test]
    fn beside_readers_take_the_cores_the_workers_leave() {
        let n = |v| NonZeroUsize::new(v).unwrap();
        assert_eq!(beside_readers(n(1), n(2)), n(1));
        assert_eq!(beside_readers(n(2), n(2)), n(1));
        assert_eq!(beside_readers(n(4), n(2)), n(1));
        assert_eq!(beside_readers(n(4), n(16)), n(12));
    }
}
