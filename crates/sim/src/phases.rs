//! The whole-block model: how long would reading a block's state, executing it and computing
//! its state root take on N workers, C cores and R readers?
//!
//! [`crate::execution`] projects execution alone. This module projects a pass end to end from
//! a [`PhaseProfile`] of one-thread times, as pure functions of the profile and a
//! [`PhaseConfig`] ([`project_phases`]); it does not know where the profile came from.
//!
//! Per batch (mega-block), in the order a pass runs them:
//!
//! 1. **Read** ([`ReadMode`]): the batch's state is read on R readers before the batch
//!    (`Prefetch`, exposed in full), or beside the batch before it (`Pipelined`: the
//!    coordinator reads the next batch's state while this one runs; a read that outlasts the
//!    batch holds up the next one, the excess exposed), or not at all (`None`: state in
//!    memory, or read on demand inside the items, whose profiled times then include the
//!    reads), or beside the batch itself (`Beside`: each reader a block at a time in the
//!    schedule's order, an item waiting only for its own block; what is exposed is the
//!    first item's wait and each later stall). A read takes the longer of its one-reader
//!    time spread over the readers and its device reads at the [`DeviceCurve`]'s rate for R
//!    readers ([`read_ns`]): the curve caps the read.
//! 2. **Execute**: the items are list-scheduled in the scheduler's order, in the chunks a
//!    pass claims: a free worker claims the next chunk and runs its items back to back (as
//!    [`crate::execution::list_schedule`]).
//! 3. **Root** (`StateRootPhase`): the batch's root units, as the executor's root pass hands
//!    them out: per segment a chain of *advances* (finish the segment's current block, the
//!    account trie; prepare the next, queueing its storage tasks), per block its *storage
//!    tasks*, then its *account units* (the account trie's lower subtries, queued when its
//!    last storage task ends). The queue hands out advances first, then the task with the
//!    most leaves, then the earliest queued (the executor's own rule,
//!    [`gigagas_grid::schedule::root_rank`]); the worker that completes a block's last task
//!    runs the next advance at once. Every task pays [`PhaseProfile::unit_ns`] on top of
//!    its profiled time (its claim and hand-over, [`ROOT_UNIT_NS`]).
//!    `After`: the units are handed out once every worker has run out of the batch's items;
//!    `Overlapped`: from the batch's start, a worker running every ready unit before its
//!    next item.
//!
//! With `--persist background` each finished block goes to a projected writer
//! ([`crate::persist::Writer`]) that may stall its chain; `block` needs nothing more (the
//! commit is inside the profiled unit that finished the block).
//!
//! With the root phase on, a store run reads each block's trie nodes inside its root units
//! (the account trie's in the advance that prepares the block, each storage trie's in its
//! task): the profile's unit times include those reads.
//!
//! Items and root units are scheduled in *work time* (the profile's one-thread times); a
//! batch's work time then becomes wall time at the speed its threads get from the cores
//! ([`PhaseConfig::cores`]): N workers and, while a pipelined read or a read beside
//! execution runs beside the batch, its reading threads share C cores evenly. See
//! [`PHASE_ASSUMPTIONS`] for what the model leaves out. [`crate::whole_block`] turns a
//! one-thread record of a pass into a profile and validates projections against measured
//! passes.

use crate::persist::Writer;
use gigagas_grid::{
    Backlog, Persist, StateRootPhase,
    schedule::{RootUnit, root_rank},
};
use serde::{Deserialize, Serialize};
use std::{
    cmp::Reverse,
    collections::{BTreeMap, BinaryHeap},
    num::NonZeroUsize,
};

/// What the whole-block model assumes; to be printed and stored beside every projection.
pub const PHASE_ASSUMPTIONS: [&str; 10] = [
    "item, root-unit and read times are one-thread profile times; beyond the core rule below, \
     nothing here slows a thread that runs beside others (the whole-block simulator slows items \
     and root units first, by the execution simulator's item cost fitted on memory points)",
    "cores are shared evenly among runnable threads: N workers each run at min(1, C/N) of a \
     core; a read alone on R readers at min(1, C/R); while a pipelined read runs beside a batch, \
     each of the N + R threads (the reading coordinator and R - 1 reader threads, the workers) \
     at min(1, C/(N + R)), and at their own speed again once either side has ended; an idle \
     worker takes no core, a read waiting on the device still counts as runnable",
    "a read on R readers takes max(its one-reader time / R at the readers' speed, its device \
     reads / the device curve's rate at R readers): its CPU part scales with the readers, the \
     device caps it; the curve is interpolated linearly between measured reader counts (from \
     no reads at no readers below the first) and held beyond the last; without a curve there \
     is no cap; nothing else uses the device",
    "prefetch: each batch's read before it, all of it exposed; pipelined: the first batch's \
     read before it, each next batch's read beside the batch, which ends no sooner than that \
     read (the excess exposed); none: no read phase",
    "root units as the executor hands them out: per segment a chain (a block's storage tasks \
     become ready when its preparation ends; its account units when its last storage task \
     ends; the worker that completes its last task finishes it and prepares the segment's \
     next block at once; a block without tasks is finished as soon as prepared); the \
     executor's queue rule: advances first, then the task with the most leaves (slot writes, \
     account leaves), then the earliest queued; after: once every worker has run out of the \
     batch's items; overlapped: from the batch's start, before each item; a batch's first \
     block of each segment is prepared by an advance from the queue",
    "on a store run the trie nodes a block needs are read inside its root units and are part \
     of their profiled times: the device curve does not cap them",
    "workers are identical and never idle while work is ready; equal times go to the \
     lowest-numbered worker; each root task pays the profile's fixed unit cost (claim and \
     hand-over), nothing else pays a claim, queue, barrier or wake-up overhead, nor time for the \
     scheduler's ordering; nothing between batches (verification) is timed",
    "the profile is recorded from one-thread passes of the same store point (warm, or each \
     pass cold); a read's recorded time is its wall time on the pass's readers, projected as \
     one reader's, and its device reads are its readers' major page faults",
    "reads beside execution: each of R readers takes the next block in the order the schedule \
     first reaches them and reads it alone, its profiled part of the read (its device reads \
     capped at the curve's rate for the reading readers, shared among them); a block is ready \
     when its read ends, and an item starts no sooner than its block is ready; the read after \
     the last block's part (trie paths) follows it; until the first block is ready the M = \
     min(R, blocks) reading readers run at min(1, C/M), then readers and workers each at \
     min(1, C/(N + M)) until the read ends (a waiting worker counts as runnable); the exposed \
     read is the longest any worker waited plus what the read outlasts the batch by",
    "persistence: block, each block's synced commit inside the unit that finished it, as \
     profiled; background, a writer on a core of its own with the store writer's rules \
     (threshold, buffer, backpressure), each group commit the sum of its blocks' shares of \
     their profiled commits, a block handed over when its finish ends (the upper account trie \
     of a block with account units is profiled in the next block's preparation, so its hand \
     comes that much early), the pass's time including the drain",
];

/// One read of state from a store: what one reader took, and the device reads it made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadProfile {
    /// Wall time of the read on one reader, nanoseconds (its CPU work and its waits on the
    /// device together).
    pub ns: u64,
    /// Random reads the device served for it (in the device curve's unit: one
    /// 4 KiB read each, the state store's probe block); 0 puts no device cap on the read.
    pub reads: u64,
}

/// One block's state-root work, as the executor's root pass splits it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockRoot {
    /// The segment the block belongs to: each segment's blocks form a chain (each block's
    /// root is computed on the trie the block before it left); segments are independent.
    pub segment: u32,
    /// Preparing the block (splitting its access list into storage tasks), nanoseconds.
    pub prepare_ns: u64,
    /// One storage task per account whose storage the block changes, nanoseconds each.
    pub storage_ns: Vec<u64>,
    /// Each storage task's slot writes, what the root queue ranks it by
    /// ([`gigagas_grid::schedule::root_rank`]); empty (every task ranked alike, in queue
    /// order) in a profile that does not know them.
    #[serde(default)]
    pub storage_writes: Vec<u64>,
    /// Finishing the block: the account trie and the root, nanoseconds (with account
    /// units, the upper account trie after them; without, the account stage too). A
    /// profile that only knows an advance's whole time may put it all here.
    pub finish_ns: u64,
    /// With account units: the account stage before them (the storage roots joined, the
    /// account trie cut into units), run by the worker that completes the block's last
    /// storage task, nanoseconds; its units are queued when it ends. 0 in a profile that
    /// counts it in `finish_ns`.
    #[serde(default)]
    pub stage_ns: u64,
    /// Its account trie's units (lower subtries), nanoseconds each; empty where the account
    /// trie is updated whole. Queued once its storage tasks are done; `finish_ns` runs once
    /// they are.
    #[serde(default)]
    pub account_ns: Vec<u64>,
    /// Each account unit's account leaves, what the root queue ranks it by.
    #[serde(default)]
    pub account_leaves: Vec<u64>,
    /// Its chain's wait on persistence as profiled, nanoseconds, inside the unit that
    /// finished it (`--persist block`: its synced commit; `background`: its hand-over).
    #[serde(default)]
    pub persist_ns: u64,
    /// `--persist background`: its share of the group commit it was written in (the
    /// commit's time over its blocks), what the projected writer takes for it.
    #[serde(default)]
    pub commit_ns: u64,
}

/// The fixed cost of one root task beyond its profiled time, nanoseconds: claiming it from
/// the queue (its lock and heap), and handing its result to its lane (the lane's lock),
/// measured by the executor's `root_unit_cost` test at 1 and 2 workers, the larger of the
/// two rounded up to cover a split trie's set-up per unit too (its subtries taken out and
/// joined back, outside the units' spans). Every storage task and account unit of a profile
/// made from a record
/// pays it ([`PhaseProfile::unit_ns`]), so that a projection of hundreds of units a block
/// does not assume them free.
pub const ROOT_UNIT_NS: u64 = 1_000;

/// One batch (mega-block) of a [`PhaseProfile`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchProfile {
    /// Reading the batch's state (ignored under [`ReadMode::None`]).
    pub read: ReadProfile,
    /// One-thread time of each of the batch's items, nanoseconds, indexed like the batch's
    /// items.
    pub item_ns: Vec<u64>,
    /// The scheduler's order: every index of `item_ns` once.
    pub order: Vec<u32>,
    /// The chunks a pass claims, as positions in `order` (`chunk_bounds`): from 0,
    /// non-decreasing, ending at `order.len()` (or none for a batch of no items). The executor cuts by the worker count, so a
    /// chunked profile holds for the worker count it was cut for.
    pub bounds: Vec<u32>,
    /// The root work of the batch's blocks that get a root, in block order.
    pub roots: Vec<BlockRoot>,
    /// Reads beside execution: each item's block, from the batch's first (indexed like
    /// `item_ns`); empty: every item in one block.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub item_block: Vec<u32>,
    /// Reads beside execution: each block's part of the batch's read as profiled
    /// (nanoseconds, from the batch's first block), what its readiness is projected by;
    /// empty: the whole read before any item.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub block_read_ns: Vec<u64>,
}

impl BatchProfile {
    /// A batch of `item_ns` run in index order, one item per claim, with no read and no
    /// root work.
    pub fn one_item_claims(item_ns: Vec<u64>) -> Self {
        let n = item_ns.len() as u32;
        Self {
            read: ReadProfile::default(),
            item_ns,
            order: (0..n).collect(),
            bounds: (0..=n).collect(),
            roots: Vec::new(),
            item_block: Vec::new(),
            block_read_ns: Vec::new(),
        }
    }
}

/// One-thread times of a pass's phases: per batch its read, its items and its root units
/// (on a store run, each unit's trie-node reads included).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseProfile {
    /// The batches, in the order a pass runs them.
    pub batches: Vec<BatchProfile>,
    /// The fixed cost of one root task (a storage task, an account unit) beyond its
    /// profiled time, nanoseconds: claiming it and handing its result over
    /// ([`ROOT_UNIT_NS`] in a profile made from a record; 0 in one that predates it).
    #[serde(default)]
    pub unit_ns: u64,
}

/// How a pass reads its state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReadMode {
    /// No read phase: state in memory, or read on demand inside the items (whose profiled
    /// times include those reads).
    #[default]
    None,
    /// Each batch's state read on the readers before the batch runs.
    Prefetch,
    /// Each batch's state read by the coordinator (and its reader threads) while the
    /// batch before it runs; the first batch's before it.
    Pipelined,
    /// Each batch's state read by readers of their own while the batch runs, each reader a
    /// block at a time in the order the schedule first reaches them; an item starts once
    /// its block is read ([`BatchProfile::block_read_ns`]); the workers share the cores
    /// with the readers while the read runs.
    Beside,
}

/// The machine and pass a projection is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseConfig {
    /// How state is read.
    pub read: ReadMode,
    /// When root units run.
    pub root: StateRootPhase,
    /// Workers running items and root units (a pass's threads).
    pub workers: NonZeroUsize,
    /// Cores the workers and readers share: N workers run at min(1, C/N) of a core each,
    /// and while a pipelined read runs beside a batch, the N workers and R readers at
    /// min(1, C/(N + R)) each (the reading coordinator competes with the workers).
    pub cores: NonZeroUsize,
    /// Threads reading a batch's state (the coordinator among them); reads beside
    /// execution: readers of their own, each reading one block at a time.
    pub readers: NonZeroUsize,
    /// How finished blocks are committed: `none` and `block` change nothing in the
    /// schedule (a block's synced commit is inside the unit that finished it);
    /// `background` hands each finished block to a projected writer ([`Writer`]).
    pub persist: Persist,
    /// The background writer's limits.
    pub backlog: Backlog,
}

impl PhaseConfig {
    /// `workers` workers on as many cores, one reader.
    pub fn new(read: ReadMode, root: StateRootPhase, workers: NonZeroUsize) -> Self {
        Self {
            read,
            root,
            workers,
            cores: workers,
            readers: NonZeroUsize::MIN,
            persist: Persist::None,
            backlog: Backlog::RETH,
        }
    }

    /// The same committing blocks as `persist` says, a background writer with `backlog`.
    pub fn with_persist(self, persist: Persist, backlog: Backlog) -> Self {
        Self {
            persist,
            backlog,
            ..self
        }
    }

    /// The same on `cores` cores.
    pub fn with_cores(self, cores: NonZeroUsize) -> Self {
        Self { cores, ..self }
    }

    /// The same with `readers` readers.
    pub fn with_readers(self, readers: NonZeroUsize) -> Self {
        Self { readers, ..self }
    }

    /// The speed of each of `threads` runnable threads on the cores, 1 for a core each.
    fn speed(&self, threads: usize) -> f64 {
        (self.cores.get() as f64 / threads.max(1) as f64).min(1.0)
    }
}

/// A device curve that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CurveError {
    /// No measured point.
    #[error("device curve: no measured point")]
    Empty,
    /// A point at zero readers.
    #[error("device curve: a point at 0 readers")]
    ZeroReaders,
    /// Reader counts must increase from point to point.
    #[error("device curve: {readers} readers does not follow a smaller count")]
    NotIncreasing {
        /// The point's reader count.
        readers: usize,
    },
    /// A rate that is not a positive finite number.
    #[error("device curve: {rate} reads/s at {readers} readers is not a positive rate")]
    BadRate {
        /// The point's reader count.
        readers: usize,
        /// Its rate.
        rate: f64,
    },
}

/// The device's random-read rate by reader count (measured with
/// the state store's read probe, or given): what caps a read phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceCurve {
    points: Vec<(usize, f64)>,
}

impl DeviceCurve {
    /// A curve through `points`, `(readers, reads per second)` with reader counts
    /// increasing. Fails on none, a zero reader count, counts out of order or a rate that
    /// is not positive and finite.
    pub fn new(points: Vec<(usize, f64)>) -> Result<Self, CurveError> {
        if points.is_empty() {
            return Err(CurveError::Empty);
        }
        let mut last = 0;
        for &(readers, rate) in &points {
            if readers == 0 {
                return Err(CurveError::ZeroReaders);
            }
            if readers <= last {
                return Err(CurveError::NotIncreasing { readers });
            }
            if !(rate.is_finite() && rate > 0.0) {
                return Err(CurveError::BadRate { readers, rate });
            }
            last = readers;
        }
        Ok(Self { points })
    }

    /// The measured points.
    pub fn points(&self) -> &[(usize, f64)] {
        &self.points
    }

    /// Reads per second at `readers`: linear between the measured points, from no reads
    /// at no readers below the first, the last point's rate beyond the last.
    pub fn reads_per_s(&self, readers: NonZeroUsize) -> f64 {
        let r = readers.get();
        let mut below = (0usize, 0.0f64);
        for &(at, rate) in &self.points {
            if r == at {
                return rate;
            }
            if r < at {
                let share = (r - below.0) as f64 / (at - below.0) as f64;
                return below.1 + (rate - below.1) * share;
            }
            below = (at, rate);
        }
        below.1
    }
}

/// The header line of a device curve file ([`DeviceCurve::read_csv`]).
pub const CURVE_CSV_HEADER: &str = "readers,reads_per_s";

/// A device curve file that cannot be read ([`DeviceCurve::read_csv`]): each error names
/// the file, the line (from 1) and what was expected there, on one line.
#[derive(Debug, thiserror::Error)]
pub enum CurveFileError {
    /// The file could not be read.
    #[error("{}: cannot read the device curve: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No line at all.
    #[error("{}: empty: expected the header `{CURVE_CSV_HEADER}` on line 1, then one row per reader count", path.display())]
    Empty {
        /// The file.
        path: std::path::PathBuf,
    },
    /// The first line is not the header.
    #[error("{}: line 1: expected the header `{CURVE_CSV_HEADER}`, found `{found}`", path.display())]
    Header {
        /// The file.
        path: std::path::PathBuf,
        /// The first line.
        found: String,
    },
    /// A row that is not a reader count and a rate.
    #[error(
        "{}: line {line}: expected `readers,reads_per_s` (a whole number of readers, reads per second), found `{found}`",
        path.display()
    )]
    Row {
        /// The file.
        path: std::path::PathBuf,
        /// The line.
        line: usize,
        /// The line's text.
        found: String,
    },
    /// A reader count given twice.
    #[error(
        "{}: line {line}: expected each reader count once, found {readers} readers again (first on line {first})",
        path.display()
    )]
    Duplicate {
        /// The file.
        path: std::path::PathBuf,
        /// The line.
        line: usize,
        /// The reader count.
        readers: usize,
        /// The line that gave it first.
        first: usize,
    },
    /// A row the curve refuses (zero readers, counts out of order, a rate that is not
    /// positive), or a file with a header and no row (`line` 1: [`CurveError::Empty`]).
    #[error("{}: line {line}: {source}", path.display())]
    Curve {
        /// The file.
        path: std::path::PathBuf,
        /// The line.
        line: usize,
        /// What the curve refuses.
        source: CurveError,
    },
}

impl DeviceCurve {
    /// The curve in the CSV file at `path`: the header `readers,reads_per_s`, then one row
    /// per reader count, counts increasing (blank rows and spaces around fields are
    /// ignored). Refuses, naming the line: a missing header, a row that is not a whole
    /// reader count and a number, a reader count given twice, and what [`DeviceCurve::new`]
    /// refuses.
    pub fn read_csv(path: &std::path::Path) -> Result<Self, CurveFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| CurveFileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse_csv(&text, path)
    }

    /// [`DeviceCurve::read_csv`] of `text`, the contents of `path`.
    pub fn parse_csv(text: &str, path: &std::path::Path) -> Result<Self, CurveFileError> {
        let path = || path.to_path_buf();
        if text.trim().is_empty() {
            return Err(CurveFileError::Empty { path: path() });
        }
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
        let header = lines.next().map_or("", |(_, l)| l);
        let lines = lines.filter(|(_, l)| !l.is_empty());
        let fields: Vec<&str> = header.split(',').map(str::trim).collect();
        if fields != ["readers", "reads_per_s"] {
            return Err(CurveFileError::Header {
                path: path(),
                found: header.to_string(),
            });
        }
        let mut points = Vec::new();
        let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
        // The curve of the rows so far: each row is checked as it is added, so that an
        // error names its line.
        let mut curve = None;
        for (line, row) in lines {
            let bad = || CurveFileError::Row {
                path: path(),
                line,
                found: row.to_string(),
            };
            let (readers, rate) = row.split_once(',').ok_or_else(bad)?;
            let readers: usize = readers.trim().parse().map_err(|_| bad())?;
            let rate: f64 = rate.trim().parse().map_err(|_| bad())?;
            if let Some(&first) = seen.get(&readers) {
                return Err(CurveFileError::Duplicate {
                    path: path(),
                    line,
                    readers,
                    first,
                });
            }
            seen.insert(readers, line);
            points.push((readers, rate));
            curve = Some(
                Self::new(points.clone()).map_err(|source| CurveFileError::Curve {
                    path: path(),
                    line,
                    source,
                })?,
            );
        }
        // A header and no row.
        curve.ok_or_else(|| CurveFileError::Curve {
            path: path(),
            line: 1,
            source: CurveError::Empty,
        })
    }

    /// The curve as CSV: the header, then one row per point (what
    /// [`DeviceCurve::read_csv`] reads back).
    pub fn to_csv(&self) -> String {
        let mut out = format!("{CURVE_CSV_HEADER}\n");
        for &(readers, rate) in &self.points {
            out.push_str(&format!("{readers},{rate}\n"));
        }
        out
    }

    /// The curve held flat at its rate for `readers`: what caps a read a model projects as
    /// one reader's while the pass really reads on `readers` (the whole-block simulator's
    /// store passes read on the store's readers at every worker count).
    pub fn held_at(&self, readers: NonZeroUsize) -> Self {
        Self {
            points: vec![(1, self.reads_per_s(readers))],
        }
    }

    /// One line: `1: 12000, 2: 21000 reads/s` (reader count: rate).
    pub fn summary(&self) -> String {
        let points: Vec<String> = self
            .points
            .iter()
            .map(|&(readers, rate)| format!("{readers}: {rate:.0}"))
            .collect();
        format!("{} reads/s", points.join(", "))
    }
}

/// A profile the model cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PhaseProfileError {
    /// The order does not name every item exactly once.
    #[error("batch {batch}: the order does not name each of its {items} items once")]
    NotAPermutation {
        /// The batch (index into the profile's batches).
        batch: usize,
        /// Its items.
        items: usize,
    },
    /// The chunk bounds do not cut the order.
    #[error("batch {batch}: chunk bounds must run from 0 up to the order's length {len}")]
    BadBounds {
        /// The batch.
        batch: usize,
        /// The order's length.
        len: usize,
    },
}

/// A projection of a pass, nanoseconds of wall time summed over its batches (the phase
/// figures as the executor's run timings count them).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PhaseProjection {
    /// End to end: every exposed read and every batch.
    pub makespan_ns: f64,
    /// Reading, each read from its start to its end (hidden or not).
    pub read_ns: f64,
    /// The part of reading the pass waited for.
    pub exposed_read_ns: f64,
    /// Per batch, from its start to the end of its last item.
    pub exec_ns: f64,
    /// Per batch, from the start of its first root unit to the end of its last.
    pub root_ns: f64,
    /// Root units' own time, all workers together.
    pub root_busy_ns: f64,
    /// Per batch, how long execution and the root phase ran at once.
    pub overlap_ns: f64,
    /// Each batch's wall time, from its start to its end (a pipelined read beside it
    /// included; the exposed read before it not).
    pub batch_ns: Vec<f64>,
    /// Each block's wait on persistence, in the order finished (`block`: its commit as
    /// profiled; `background`: its stall on the writer; empty without persistence).
    pub persist_waits: Vec<f64>,
    /// Their sum.
    pub persist_wait_ns: f64,
    /// `background`: draining the writer after the last batch (inside `makespan_ns`).
    pub drain_ns: f64,
    /// Reads beside execution: per batch, how long its first item waited for its block
    /// (part of `exposed_read_ns`, with the later stalls).
    pub first_read_wait_ns: f64,
}

/// How long `read` takes on `readers` readers at `speed` of a core each, with `device`'s
/// cap: max(one-reader time / readers / speed, reads / rate at `readers`), nanoseconds.
pub fn read_ns(
    read: ReadProfile,
    readers: NonZeroUsize,
    speed: f64,
    device: Option<&DeviceCurve>,
) -> f64 {
    let cpu = read.ns as f64 / readers.get() as f64 / speed;
    cpu.max(device_floor_ns(read, readers, device))
}

/// The device's part of a read: its reads at the curve's rate for `readers`, nanoseconds.
fn device_floor_ns(read: ReadProfile, readers: NonZeroUsize, device: Option<&DeviceCurve>) -> f64 {
    match device {
        Some(curve) if read.reads > 0 => read.reads as f64 / curve.reads_per_s(readers) * 1e9,
        _ => 0.0,
    }
}

/// Projects `profile` on `config` (with `device` capping the reads): the pass's makespan
/// and its phase totals. Fails when a batch's order or chunk bounds do not fit its items.
pub fn project_phases(
    profile: &PhaseProfile,
    config: &PhaseConfig,
    device: Option<&DeviceCurve>,
) -> Result<PhaseProjection, PhaseProfileError> {
    for (b, batch) in profile.batches.iter().enumerate() {
        check_batch(b, batch)?;
    }
    let (n, r) = (config.workers.get(), config.readers);
    let workers_alone = config.speed(n);
    let readers_alone = config.speed(r.get());
    let shared = config.speed(n + r.get());
    let mut p = PhaseProjection::default();
    let expose = |p: &mut PhaseProjection, ns: f64| {
        p.read_ns += ns;
        p.exposed_read_ns += ns;
        p.makespan_ns += ns;
    };
    let mut writer = (config.persist == Persist::Background).then(|| Writer::new(config.backlog));
    for (k, batch) in profile.batches.iter().enumerate() {
        let beside = match config.read {
            ReadMode::None | ReadMode::Beside => None,
            ReadMode::Prefetch => {
                expose(&mut p, read_ns(batch.read, r, readers_alone, device));
                None
            }
            ReadMode::Pipelined => {
                if k == 0 {
                    expose(&mut p, read_ns(batch.read, r, readers_alone, device));
                }
                profile.batches.get(k + 1).map(|next| next.read)
            }
        };
        let hand = writer.as_mut().map(|writer| Handover {
            writer,
            base: p.makespan_ns,
            speed: workers_alone,
        });
        // Reads beside execution: on the readers, beside the workers.
        let own_read =
            (config.read == ReadMode::Beside).then(|| BesideRead::project(batch, config, device));
        let ready = own_read
            .as_ref()
            .map_or_else(Vec::new, BesideRead::ready_work);
        let run = run_batch(
            batch,
            profile.unit_ns,
            config.workers,
            config.root,
            hand,
            &ready,
        );
        let (clock, read_end) = match (beside, &own_read) {
            (None, None) => (Clock::uniform(workers_alone), None),
            (None, Some(own)) => (own.clock(workers_alone), Some(own.end)),
            (Some(read), _) => {
                let cpu = read.ns as f64 / r.get() as f64;
                let floor = device_floor_ns(read, r, device);
                let speeds = Speeds {
                    workers: workers_alone,
                    readers: readers_alone,
                    shared,
                };
                let (clock, end) = Clock::beside_read(run.end, cpu, floor, speeds);
                (clock, Some(end))
            }
        };
        let mut wall = clock.wall(run.end);
        if own_read.is_some() {
            p.first_read_wait_ns += clock.wall(run.first_wait.unwrap_or(0));
            p.exposed_read_ns += clock.wall(run.read_wait);
        }
        if let Some(end) = read_end {
            p.read_ns += end;
            if end > wall {
                p.exposed_read_ns += end - wall;
                wall = end;
            }
        }
        let exec_end = clock.wall(run.exec_end);
        p.exec_ns += exec_end;
        if let Some((first, last)) = run.root_span {
            let (first, last) = (clock.wall(first), clock.wall(last));
            p.root_ns += last - first;
            p.overlap_ns += (exec_end.min(last) - first).max(0.0);
        }
        p.root_busy_ns += run
            .root_units
            .iter()
            .map(|&(s, e)| clock.wall(e) - clock.wall(s))
            .sum::<f64>();
        p.makespan_ns += wall;
        p.batch_ns.push(wall);
    }
    add_persistence(&mut p, profile, config, writer);
    Ok(p)
}

/// Adds the pass's persistence to `p`: each block's wait (`block`: its commit as
/// profiled, already inside its finishing unit; `background`: the writer's stalls, already
/// in the schedule) and, `background`, the writer's drain after the last batch.
fn add_persistence(
    p: &mut PhaseProjection,
    profile: &PhaseProfile,
    config: &PhaseConfig,
    writer: Option<Writer>,
) {
    if config.root == StateRootPhase::Off {
        return;
    }
    match (config.persist, writer) {
        (Persist::Block, _) => {
            let roots = profile.batches.iter().flat_map(|b| &b.roots);
            p.persist_waits = roots.map(|b| b.persist_ns as f64).collect();
        }
        (Persist::Background, Some(mut writer)) => {
            p.drain_ns = writer.drain(p.makespan_ns);
            p.makespan_ns += p.drain_ns;
            p.persist_waits = writer.waits().to_vec();
        }
        _ => {}
    }
    p.persist_wait_ns = p.persist_waits.iter().fold(0.0, |a, b| a + b);
}

/// The background writer as one batch's schedule sees it: the batch starts at `base` wall
/// nanoseconds into the pass, its work time runs at `speed`.
#[derive(Debug)]
struct Handover<'w> {
    writer: &'w mut Writer,
    base: f64,
    speed: f64,
}

impl Handover<'_> {
    /// A block finished at work time `t`, committed as `block` says: when its chain goes
    /// on, in work time.
    fn hand(&mut self, t: u64, block: &BlockRoot) -> u64 {
        let wall = self.base + t as f64 / self.speed;
        let on = self.writer.hand(wall, block.commit_ns as f64);
        t.saturating_add(((on - wall) * self.speed).round() as u64)
    }
}

/// Item `i`'s block in `batch`, from its first.
fn block_of(batch: &BatchProfile, i: u32) -> usize {
    batch.item_block.get(i as usize).copied().unwrap_or(0) as usize
}

/// Reads beside execution: `batch`'s blocks (from its first) in the order the schedule
/// first reaches them; blocks none of its items is in follow in block order.
fn read_order(batch: &BatchProfile) -> Vec<usize> {
    let named = batch.item_block.iter().max().map_or(1, |&b| b as usize + 1);
    let blocks = named.max(batch.block_read_ns.len());
    let mut seen = vec![false; blocks];
    let mut order: Vec<usize> = Vec::with_capacity(blocks);
    for &i in &batch.order {
        let b = block_of(batch, i);
        if !std::mem::replace(&mut seen[b], true) {
            order.push(b);
        }
    }
    order.extend((0..blocks).filter(|&b| !seen[b]));
    order
}

/// `jobs` in order on `readers` readers, each taken by the reader free first and ending at
/// `read(start, job)`: each job's end, and the last.
fn on_readers(jobs: &[f64], readers: usize, read: impl Fn(f64, f64) -> f64) -> (Vec<f64>, f64) {
    let mut free = vec![0.0f64; readers];
    let mut ends = Vec::with_capacity(jobs.len());
    for &x in jobs {
        let lane = (0..readers)
            .min_by(|&a, &b| free[a].total_cmp(&free[b]))
            .expect("at least one reader");
        free[lane] = read(free[lane], x);
        ends.push(free[lane]);
    }
    (ends, free.iter().copied().fold(0.0, f64::max))
}

/// Reads beside execution: one batch's read on its readers, in wall time from the batch's
/// start ([`BesideRead::project`]).
#[derive(Debug, Clone, PartialEq)]
struct BesideRead {
    /// When each block (from the batch's first) is read.
    ready: Vec<f64>,
    /// When the last reader is done: every block's state, then the trie paths after them.
    end: f64,
    /// Each worker's speed while the read runs (the readers on the same cores).
    shared: f64,
}

impl BesideRead {
    /// `batch`'s read on `config`'s readers, as the executor's readers make it: each reader
    /// takes the next block of the read order ([`read_order`]) when it is free and reads it
    /// alone, its profiled part of the read ([`BatchProfile::block_read_ns`]); a block is
    /// ready when its read ends. Readers with no block to take read nothing. Until the first
    /// block is ready every worker waits for one, so the readers run at their own speed on
    /// the cores; from then on the workers and the reading readers share the cores. A
    /// block's read takes no less than its device reads at the curve's rate for the reading
    /// readers, shared among them (each block's reads are the batch's in proportion to its
    /// part). The profiled read after the last block (the trie paths read ahead: the read's
    /// span past its parts on the same readers) follows the last block. Without parts the
    /// whole read comes before every block.
    fn project(batch: &BatchProfile, config: &PhaseConfig, device: Option<&DeviceCurve>) -> Self {
        let order = read_order(batch);
        let part = |b: usize| batch.block_read_ns.get(b).copied().unwrap_or(0) as f64;
        let parts: f64 = order.iter().map(|&b| part(b)).sum();
        let whole = parts == 0.0;
        // The reads each reader makes: one job per block, or the whole read as one.
        let jobs: Vec<f64> = match whole {
            true => vec![batch.read.ns as f64],
            false => order.iter().map(|&b| part(b)).collect(),
        };
        let readers = config.readers.get().min(jobs.len()).max(1);
        let alone = config.speed(readers);
        let shared = config.speed(config.workers.get() + readers);
        // Device nanoseconds per profiled nanosecond of reading, on one of `readers`.
        let device_per_ns = match device {
            Some(curve) if batch.read.reads > 0 && batch.read.ns > 0 => {
                let rate = curve.reads_per_s(NonZeroUsize::new(readers).expect("at least one"));
                batch.read.reads as f64 / batch.read.ns as f64 * readers as f64 / rate * 1e9
            }
            _ => 0.0,
        };
        // The first block ready: the readers alone on the cores until then.
        let first = jobs[..readers]
            .iter()
            .map(|&x| (x / alone).max(x * device_per_ns))
            .fold(f64::INFINITY, f64::min);
        let read = |start: f64, x: f64| {
            let cpu_end = if start + x / alone <= first {
                start + x / alone
            } else {
                let before = (first - start).max(0.0);
                start + before + (x - before * alone) / shared
            };
            cpu_end.max(start + x * device_per_ns)
        };
        let (ends, last) = on_readers(&jobs, readers, read);
        // The profile's read after its last block: its span past the blocks' parts on the
        // same readers.
        let tail = if whole {
            0.0
        } else {
            let (_, profiled) = on_readers(&jobs, readers, |start, x| start + x);
            (batch.read.ns as f64 - profiled).max(0.0)
        };
        let end = read(last, tail);
        let blocks = order.len();
        let mut ready = vec![last; blocks];
        if !whole {
            for (&b, &at) in order.iter().zip(&ends) {
                ready[b] = at;
            }
        }
        Self { ready, end, shared }
    }

    /// The workers' clock: at the shared speed until the read ends, then at `alone`.
    fn clock(&self, alone: f64) -> Clock {
        Clock {
            knee: self.end * self.shared,
            first: 1.0 / self.shared,
            rest: 1.0 / alone,
        }
    }

    /// Each block's ready time in the workers' work time (the clock's, before its knee).
    fn ready_work(&self) -> Vec<u64> {
        self.ready
            .iter()
            .map(|&t| (t * self.shared).round() as u64)
            .collect()
    }
}

/// `batch`'s order names each item once and its bounds cut the order.
fn check_batch(b: usize, batch: &BatchProfile) -> Result<(), PhaseProfileError> {
    let items = batch.item_ns.len();
    let mut seen = vec![false; items];
    let once = batch.order.len() == items
        && batch.order.iter().all(|&i| {
            seen.get_mut(i as usize)
                .is_some_and(|s| !std::mem::replace(s, true))
        });
    if !once {
        return Err(PhaseProfileError::NotAPermutation { batch: b, items });
    }
    let len = batch.order.len();
    let cut = (len == 0 && batch.bounds.is_empty())
        || (batch.bounds.first() == Some(&0)
            && batch.bounds.last() == Some(&(len as u32))
            && batch.bounds.windows(2).all(|w| w[0] <= w[1]));
    if !cut {
        return Err(PhaseProfileError::BadBounds { batch: b, len });
    }
    Ok(())
}

/// The speeds threads run at, 1 for a core each.
#[derive(Debug, Clone, Copy)]
struct Speeds {
    /// Each worker, with no read beside the batch.
    workers: f64,
    /// Each reader, with no batch beside the read.
    readers: f64,
    /// Each worker and reader while both run.
    shared: f64,
}

/// A batch's wall clock from its work time: work time up to `knee` at `first` wall
/// nanoseconds per nanosecond of work, then at `rest`.
#[derive(Debug, Clone, Copy)]
struct Clock {
    knee: f64,
    first: f64,
    rest: f64,
}

impl Clock {
    /// One speed throughout.
    fn uniform(speed: f64) -> Self {
        Self {
            knee: f64::INFINITY,
            first: 1.0 / speed,
            rest: 1.0 / speed,
        }
    }

    /// A batch of `work` nanoseconds of work time beside a read of `cpu` nanoseconds of
    /// reading at full speed and no shorter than `floor`: both at the shared speed while
    /// both run, then each alone. Returns the clock and the read's end (wall, from the
    /// batch's start).
    fn beside_read(work: u64, cpu: f64, floor: f64, s: Speeds) -> (Self, f64) {
        let work = work as f64;
        let read_shared = floor.max(cpu / s.shared);
        if s.shared * read_shared < work {
            // The read ends first: the batch's work after it runs at the workers' speed.
            let clock = Self {
                knee: s.shared * read_shared,
                first: 1.0 / s.shared,
                rest: 1.0 / s.workers,
            };
            (clock, read_shared)
        } else {
            // The batch ends first: the rest of the read runs alone.
            let end = work / s.shared;
            let left = (cpu - s.shared * end).max(0.0);
            let read_end = floor.max(end + left / s.readers);
            (Self::uniform(s.shared), read_end)
        }
    }

    /// The wall time at `work` nanoseconds of work time.
    fn wall(&self, work: u64) -> f64 {
        let work = work as f64;
        if work <= self.knee {
            work * self.first
        } else {
            self.knee * self.first + (work - self.knee) * self.rest
        }
    }
}

/// One batch scheduled in work time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct BatchRun {
    /// The end of its last item.
    exec_end: u64,
    /// Its first root unit's start and last root unit's end.
    root_span: Option<(u64, u64)>,
    /// Each root unit (an advance or a storage task) as (start, end).
    root_units: Vec<(u64, u64)>,
    /// The end of its last item or root unit.
    end: u64,
    /// Reads beside execution: the longest any worker waited for its items' blocks.
    read_wait: u64,
    /// Reads beside execution: how long the batch's first item to start waited.
    first_wait: Option<u64>,
}

/// A unit on the root queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// The first advance of a lane in the batch: prepare its first block.
    Advance(usize),
    /// A storage task of lane `.0`'s current block, `.1` nanoseconds, `.2` slot writes.
    Storage(usize, u64, u64),
    /// An account unit of lane `.0`'s current block, `.1` nanoseconds, `.2` account leaves.
    Accounts(usize, u64, u64),
}

/// A ready unit's queue rank: the executor's rule ([`root_rank`]).
fn rank(unit: Unit, seq: u64) -> (u64, Reverse<u64>) {
    match unit {
        Unit::Advance(_) => root_rank(RootUnit::Advance, seq),
        Unit::Storage(_, _, writes) => root_rank(RootUnit::Storage { writes }, seq),
        Unit::Accounts(_, _, leaves) => root_rank(RootUnit::Accounts { leaves }, seq),
    }
}

/// One segment's chain of blocks within a batch.
#[derive(Debug)]
struct Lane<'p> {
    blocks: Vec<&'p BlockRoot>,
    /// The block prepared and not yet finished (or the next to prepare).
    current: usize,
    /// The current block's tasks of its current stage (storage, then account) not yet
    /// taken.
    untaken: usize,
    /// Whether the current block's account units are queued (its storage tasks done).
    accounts_queued: bool,
    /// The latest end of its taken tasks, and the worker that ran that task.
    last: Option<(u64, usize)>,
}

/// What a worker is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Free at its `free` time.
    Active,
    /// Out of items, waiting for the root phase to open (`After`).
    Waiting,
    /// Nothing left for it in the batch.
    Done,
}

#[derive(Debug, Clone)]
struct Worker {
    free: u64,
    /// Positions in the order of its claimed chunk not yet run.
    chunk: std::ops::Range<usize>,
    executing: bool,
    state: State,
    /// Time it waited for its items' blocks to be read.
    wait: u64,
}

impl Worker {
    /// A worker at the batch's start.
    const START: Self = Self {
        free: 0,
        chunk: 0..0,
        executing: true,
        state: State::Active,
        wait: 0,
    };
}

/// The root queue: units not yet ready (by ready time) and ready ones (by rank); and
/// where the blocks its units finish go (a background writer, if any).
#[derive(Debug, Default)]
struct Queue<'w> {
    pending: BinaryHeap<Reverse<(u64, u64, UnitKey)>>,
    ready: BinaryHeap<((u64, Reverse<u64>), UnitKey)>,
    seq: u64,
    hand: Option<Handover<'w>>,
}

/// A [`Unit`] as a heap key: its kind (2 an advance, 1 a storage task, 0 an account
/// unit), lane, nanoseconds and size.
type UnitKey = (u8, usize, u64, u64);

fn key(unit: Unit) -> UnitKey {
    match unit {
        Unit::Advance(lane) => (2, lane, 0, 0),
        Unit::Storage(lane, ns, writes) => (1, lane, ns, writes),
        Unit::Accounts(lane, ns, leaves) => (0, lane, ns, leaves),
    }
}

fn unit(key: UnitKey) -> Unit {
    match key {
        (2, lane, ..) => Unit::Advance(lane),
        (1, lane, ns, writes) => Unit::Storage(lane, ns, writes),
        (_, lane, ns, leaves) => Unit::Accounts(lane, ns, leaves),
    }
}

impl Queue<'_> {
    /// A block finished at `t`: when its chain goes on (later only past a background
    /// writer's backpressure).
    fn finished(&mut self, t: u64, block: &BlockRoot) -> u64 {
        match &mut self.hand {
            Some(hand) => hand.hand(t, block),
            None => t,
        }
    }

    fn push(&mut self, ready_at: u64, unit: Unit) {
        self.seq += 1;
        self.pending.push(Reverse((ready_at, self.seq, key(unit))));
    }

    /// The best unit ready at `t`.
    fn pop(&mut self, t: u64) -> Option<Unit> {
        while let Some(&Reverse((at, seq, k))) = self.pending.peek() {
            if at > t {
                break;
            }
            self.pending.pop();
            self.ready.push((rank(unit(k), seq), k));
        }
        self.ready.pop().map(|(_, k)| unit(k))
    }

    /// When the next unit not yet ready becomes ready.
    fn next_ready(&self) -> Option<u64> {
        self.pending.peek().map(|Reverse((at, ..))| *at)
    }
}

/// `batch`'s root work as one lane per segment, each with its blocks in order.
fn lanes_of(batch: &BatchProfile) -> Vec<Lane<'_>> {
    let mut lanes: Vec<Lane<'_>> = Vec::new();
    let mut by_segment: BTreeMap<u32, usize> = BTreeMap::new();
    for block in &batch.roots {
        let lane = *by_segment.entry(block.segment).or_insert_with(|| {
            lanes.push(Lane {
                blocks: Vec::new(),
                current: 0,
                untaken: 0,
                accounts_queued: false,
                last: None,
            });
            lanes.len() - 1
        });
        lanes[lane].blocks.push(block);
    }
    lanes
}

/// One batch's items and root units on `workers` workers, in work time from the batch's
/// start: a free worker (the lowest-numbered of those free at once) runs, when the root
/// phase lets it, the best ready root unit, else its chunk's next item, else the next chunk.
fn run_batch(
    batch: &BatchProfile,
    unit_ns: u64,
    workers: NonZeroUsize,
    phase: StateRootPhase,
    hand: Option<Handover<'_>>,
    ready: &[u64],
) -> BatchRun {
    let mut lanes = if phase == StateRootPhase::Off {
        Vec::new()
    } else {
        lanes_of(batch)
    };
    let mut run = BatchRun::default();
    let mut queue = Queue {
        hand,
        ..Queue::default()
    };
    let mut ws = vec![Worker::START; workers.get()];
    let mut executing = ws.len();
    let mut next_chunk = 0;
    let chunks = batch.bounds.len().saturating_sub(1);
    let lane_count = lanes.len();
    let open = |queue: &mut Queue<'_>, t: u64| {
        for l in 0..lane_count {
            queue.push(t, Unit::Advance(l));
        }
    };
    if phase == StateRootPhase::Overlapped {
        open(&mut queue, 0);
    }
    let mut root_open = phase == StateRootPhase::Overlapped;
    while let Some(w) = (0..ws.len())
        .filter(|&w| ws[w].state == State::Active)
        .min_by_key(|&w| (ws[w].free, w))
    {
        let t = ws[w].free;
        if root_open && let Some(u) = queue.pop(t) {
            let end = match u {
                Unit::Advance(l) => advance(&mut lanes[l], l, false, t, &mut queue),
                Unit::Storage(_, ns, _) | Unit::Accounts(_, ns, _) => {
                    t.saturating_add(ns).saturating_add(unit_ns)
                }
            };
            ws[w].free = end;
            run.root_units.push((t, end));
            if let Unit::Storage(l, ..) | Unit::Accounts(l, ..) = u {
                task_done(&mut lanes[l], l, end, w, &mut ws, &mut queue, &mut run);
            }
            continue;
        }
        if ws[w].chunk.is_empty() && next_chunk < chunks {
            let (from, to) = (batch.bounds[next_chunk], batch.bounds[next_chunk + 1]);
            ws[w].chunk = from as usize..to as usize;
            next_chunk += 1;
        }
        if let Some(pos) = ws[w].chunk.next() {
            let item = batch.order[pos];
            // Reads beside execution: the item waits for its block.
            let at = ready.get(block_of(batch, item)).map_or(t, |&r| r.max(t));
            ws[w].wait += at - t;
            run.first_wait.get_or_insert(at - t);
            let end = at.saturating_add(batch.item_ns[item as usize]);
            ws[w].free = end;
            run.exec_end = run.exec_end.max(end);
            continue;
        }
        if ws[w].executing {
            ws[w].executing = false;
            executing -= 1;
            if phase == StateRootPhase::After && executing == 0 {
                root_open = true;
                open(&mut queue, t);
                for other in ws.iter_mut().filter(|o| o.state == State::Waiting) {
                    other.state = State::Active;
                    other.free = t;
                }
                continue;
            }
        }
        ws[w].state = if !root_open && phase == StateRootPhase::After {
            State::Waiting
        } else if let (true, Some(at)) = (root_open, queue.next_ready()) {
            ws[w].free = at;
            State::Active
        } else {
            State::Done
        };
    }
    run.read_wait = ws.iter().map(|w| w.wait).max().unwrap_or(0);
    run.root_span = span_of(&run.root_units);
    run.end = run.exec_end.max(run.root_span.map_or(0, |(_, last)| last));
    run
}

/// Lane `l`'s task taken by worker `w` ends at `end`: the worker that completes the
/// block's last storage task queues its account units, if any (ready then), and the one
/// that completes its last task of all advances the lane at once (it is still on that
/// task: it ends last).
fn task_done(
    lane: &mut Lane<'_>,
    l: usize,
    end: u64,
    w: usize,
    ws: &mut [Worker],
    queue: &mut Queue<'_>,
    run: &mut BatchRun,
) {
    lane.untaken -= 1;
    if lane.last.is_none_or(|(latest, _)| end >= latest) {
        lane.last = Some((end, w));
    }
    if lane.untaken > 0 {
        return;
    }
    let (latest, c) = lane.last.take().expect("a task was taken");
    debug_assert_eq!(ws[c].free, latest, "the completer is on its task");
    let block = lane.blocks[lane.current];
    if !lane.accounts_queued
        && let Some(staged) = queue_accounts(lane, l, block, latest, queue)
    {
        if staged > latest {
            ws[c].free = staged;
            run.root_units.push((latest, staged));
        }
        return;
    }
    let done = advance(lane, l, true, latest, queue);
    ws[c].free = done;
    run.root_units.push((latest, done));
}

/// From `t`, runs `block`'s account stage and queues its account units on lane `l`,
/// ready when the stage ends; returns that end, `None` where it has no account units.
fn queue_accounts(
    lane: &mut Lane<'_>,
    l: usize,
    block: &BlockRoot,
    t: u64,
    queue: &mut Queue<'_>,
) -> Option<u64> {
    if block.account_ns.is_empty() {
        return None;
    }
    let staged = t.saturating_add(block.stage_ns);
    lane.accounts_queued = true;
    lane.untaken = block.account_ns.len();
    for (k, &ns) in block.account_ns.iter().enumerate() {
        let leaves = block.account_leaves.get(k).copied().unwrap_or(0);
        queue.push(staged, Unit::Accounts(l, ns, leaves));
    }
    Some(staged)
}

/// The first start and the last end of `units`, `None` for none.
fn span_of(units: &[(u64, u64)]) -> Option<(u64, u64)> {
    units
        .iter()
        .fold(None, |span: Option<(u64, u64)>, &(s, e)| match span {
            None => Some((s, e)),
            Some((a, b)) => Some((a.min(s), b.max(e))),
        })
}

/// Lane `l` from work time `t` on one worker: finishes its current block when `finish`,
/// then prepares blocks until one has storage tasks (queued, ready when its preparation
/// ends) or the lane's blocks are done, a block without tasks finished as soon as
/// prepared. Returns when it ends.
fn advance(lane: &mut Lane<'_>, l: usize, finish: bool, mut t: u64, queue: &mut Queue<'_>) -> u64 {
    if finish {
        let block = lane.blocks[lane.current];
        // A block without account units runs its stage as part of its finish.
        let stage = if lane.accounts_queued {
            0
        } else {
            block.stage_ns
        };
        t = t.saturating_add(stage).saturating_add(block.finish_ns);
        t = queue.finished(t, block);
        lane.current += 1;
    }
    lane.accounts_queued = false;
    while let Some(&block) = lane.blocks.get(lane.current) {
        t = t.saturating_add(block.prepare_ns);
        if block.storage_ns.is_empty() {
            if let Some(staged) = queue_accounts(lane, l, block, t, queue) {
                t = staged;
                break;
            }
            t = t
                .saturating_add(block.stage_ns)
                .saturating_add(block.finish_ns);
            t = queue.finished(t, block);
            lane.current += 1;
            continue;
        }
        lane.untaken = block.storage_ns.len();
        for (k, &ns) in block.storage_ns.iter().enumerate() {
            let writes = block.storage_writes.get(k).copied().unwrap_or(0);
            queue.push(t, Unit::Storage(l, ns, writes));
        }
        break;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use StateRootPhase::{After, Off, Overlapped};

    fn n(x: usize) -> NonZeroUsize {
        NonZeroUsize::new(x).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    #[track_caller]
    fn assert_close(a: f64, b: f64) {
        assert!(close(a, b), "{a} != {b}");
    }

    fn batch(item_ns: Vec<u64>, read_ns: u64) -> BatchProfile {
        BatchProfile {
            read: ReadProfile {
                ns: read_ns,
                reads: 0,
            },
            ..BatchProfile::one_item_claims(item_ns)
        }
    }

    /// Two batches: items 6, 4, 3, 3 (read 10) and 8, 2 (read 12), no root work.
    ///
    /// Execution alone in work time: at 1 worker 16 and 10; at 2, batch 0 runs w0 6 (0–6),
    /// w1 4 (0–4), w1 3 (4–7), w0 3 (6–9): 9, and batch 1 w0 8, w1 2: 8; at 16, the longest
    /// item: 6 and 8.
    fn reads_profile() -> PhaseProfile {
        PhaseProfile {
            unit_ns: 0,
            batches: vec![batch(vec![6, 4, 3, 3], 10), batch(vec![8, 2], 12)],
        }
    }

    fn project(profile: &PhaseProfile, config: PhaseConfig) -> PhaseProjection {
        project_phases(profile, &config, None).unwrap()
    }

    fn makespan(profile: &PhaseProfile, read: ReadMode, root: StateRootPhase, w: usize) -> f64 {
        project(profile, PhaseConfig::new(read, root, n(w))).makespan_ns
    }

    #[test]
    fn reads_before_beside_or_none_at_1_2_and_16_workers() {
        let p = reads_profile();
        let none = |w| makespan(&p, ReadMode::None, Off, w);
        // Execution alone: 16 + 10, 9 + 8, 6 + 8.
        assert_close(none(1), 26.0);
        assert_close(none(2), 17.0);
        assert_close(none(16), 14.0);
        let prefetch = |w| makespan(&p, ReadMode::Prefetch, Off, w);
        // Each read before its batch, alone on one reader (a core of its own): 10 + 12 = 22
        // more.
        assert_close(prefetch(1), 48.0);
        assert_close(prefetch(2), 39.0);
        assert_close(prefetch(16), 36.0);
        let pipelined = |w| project(&p, PhaseConfig::new(ReadMode::Pipelined, Off, n(w)));
        // 1 worker, 1 core: read 0 alone (10). Batch 0 (16) beside read 1 (12), each at 1/2
        // of the core: the read ends at 24, when batch 0 has done 12; its last 4 alone:
        // 28. Batch 1 alone: 10. 10 + 28 + 10 = 48, as prefetch: one core hides nothing.
        let one = pipelined(1);
        assert_close(one.makespan_ns, 48.0);
        assert_close(one.read_ns, 10.0 + 24.0);
        assert_close(one.exposed_read_ns, 10.0);
        assert_close(one.exec_ns, 28.0 + 10.0);
        // 2 workers, 2 cores: beside read 1, the three threads run at 2/3. Batch 0 (9) ends
        // at 9 / (2/3) = 13.5, when the read has done 9 of its 12; its last 3 alone: 16.5,
        // 3 exposed. 10 + 16.5 + 8 = 34.5.
        let two = pipelined(2);
        assert_close(two.makespan_ns, 34.5);
        assert_close(two.read_ns, 10.0 + 16.5);
        assert_close(two.exposed_read_ns, 10.0 + 3.0);
        assert_close(two.exec_ns, 13.5 + 8.0);
        assert_eq!(two.batch_ns.len(), 2);
        assert_close(two.batch_ns[0], 16.5);
        // 16 workers, 16 cores: 17 threads at 16/17. Batch 0 (6) ends at 6.375, the read has
        // done 6; its last 6 alone: 12.375. 10 + 12.375 + 8 = 30.375.
        let sixteen = pipelined(16);
        assert_close(sixteen.makespan_ns, 30.375);
        assert_close(sixteen.exposed_read_ns, 10.0 + 6.0);
    }

    /// One batch, items 6, 4, 3, 3 and one segment of two blocks: A (prepare 1, storage
    /// tasks 5 and 2, finish 2) and B (prepare 1, a storage task of 3, finish 1). The chain:
    /// advance (prepare A) 1; tasks 5, 2; the worker completing A's last finishes A and
    /// prepares B, 3; task 3; finish B, 1. Root work 15 in all, 9 of it a chain behind the
    /// longest task.
    fn roots_profile() -> PhaseProfile {
        // Each task's writes as its time: the queue takes the longest first.
        let block = |prepare_ns, storage_ns: Vec<u64>, finish_ns| BlockRoot {
            account_ns: Vec::new(),
            account_leaves: Vec::new(),
            stage_ns: 0,
            persist_ns: 0,
            commit_ns: 0,
            segment: 0,
            prepare_ns,
            storage_writes: storage_ns.clone(),
            storage_ns,
            finish_ns,
        };
        PhaseProfile {
            unit_ns: 0,
            batches: vec![BatchProfile {
                roots: vec![block(1, vec![5, 2], 2), block(1, vec![3], 1)],
                ..batch(vec![6, 4, 3, 3], 10)
            }],
        }
    }

    #[test]
    fn roots_after_or_overlapped_at_1_2_and_16_workers() {
        let p = roots_profile();
        let after = |w| project(&p, PhaseConfig::new(ReadMode::None, After, n(w)));
        // 1 worker: items 16, then the root's 15 one unit after another: 31.
        let one = after(1);
        assert_close(one.makespan_ns, 31.0);
        assert_close(one.exec_ns, 16.0);
        assert_close(one.root_ns, 15.0);
        assert_close(one.root_busy_ns, 15.0);
        assert_close(one.overlap_ns, 0.0);
        // 2 workers: items end at 9 (w0) and 7 (w1). From 9: w0 prepares A, 9–10; w0 task 5,
        // 10–15; w1 task 2, 10–12; w0 completes A's last (15): finish A, prepare B, 15–18;
        // w0 task 3, 18–21; finish B, 21–22.
        let two = after(2);
        assert_close(two.makespan_ns, 22.0);
        assert_close(two.exec_ns, 9.0);
        assert_close(two.root_ns, 13.0);
        assert_close(two.root_busy_ns, 15.0);
        // 16 workers: items end at 6. Prepare A 6–7; tasks 7–12 and 7–9; finish A and
        // prepare B 12–15; task 3 15–18; finish B 18–19.
        assert_close(after(16).makespan_ns, 19.0);

        let overlapped = |w| project(&p, PhaseConfig::new(ReadMode::None, Overlapped, n(w)));
        // 1 worker: every ready unit before the first item: the root 0–15, the items 15–31.
        let one = overlapped(1);
        assert_close(one.makespan_ns, 31.0);
        assert_close(one.exec_ns, 31.0);
        assert_close(one.root_ns, 15.0);
        assert_close(one.overlap_ns, 15.0);
        // 2 workers: w0 prepares A 0–1; w1 item 6, 0–6; w0 task 5, 1–6; at 6 w0 task 2, 6–8,
        // completes A: finish A, prepare B 8–11; w1 (nothing ready: B's task at 11) item 4,
        // 6–10, item 3, 10–13; w0 task 3, 11–14, finish B 14–15; w1 item 3, 13–16.
        let two = overlapped(2);
        assert_close(two.makespan_ns, 16.0);
        assert_close(two.exec_ns, 16.0);
        assert_close(two.root_ns, 15.0);
        assert_close(two.overlap_ns, 15.0);
        // 16 workers: w0 prepares A 0–1; w1..w4 the items (the longest 0–6); w0 task 5, 1–6;
        // w5 task 2, 1–3; w0 completes A at 6: finish A, prepare B 6–9; task 3 9–12; finish
        // B 12–13.
        let sixteen = overlapped(16);
        assert_close(sixteen.makespan_ns, 13.0);
        assert_close(sixteen.exec_ns, 6.0);
        assert_close(sixteen.root_ns, 13.0);
        assert_close(sixteen.overlap_ns, 6.0);
    }

    #[test]
    fn a_pipelined_pass_with_overlapped_roots() {
        let mut p = roots_profile();
        p.batches.push(BatchProfile {
            roots: vec![BlockRoot {
                account_ns: Vec::new(),
                account_leaves: Vec::new(),
                stage_ns: 0,
                persist_ns: 0,
                commit_ns: 0,
                segment: 0,
                prepare_ns: 1,
                storage_ns: vec![],
                storage_writes: vec![],
                finish_ns: 3,
            }],
            ..batch(vec![8, 2], 12)
        });
        let two = project(&p, PhaseConfig::new(ReadMode::Pipelined, Overlapped, n(2)));
        // Batch 0's read 10, alone, exposed. Batch 0 is 16 of work (above: root 0–15, items
        // to 16) beside read 1 (12) at 2/3: the read ends at 18, when 12 of the batch is
        // done; its last 4 alone: 22. Batch 1: w0 prepares and finishes C 0–4, then item 2,
        // 4–6; w1 item 8, 0–8: 8. 10 + 22 + 8 = 40.
        assert_close(two.makespan_ns, 40.0);
        assert_close(two.read_ns, 10.0 + 18.0);
        assert_close(two.exposed_read_ns, 10.0);
        // Exec 16 of work is 22 of wall, and 8; root 15 of work is 18 + 3 = 21, and 4.
        assert_close(two.exec_ns, 22.0 + 8.0);
        assert_close(two.root_ns, 21.0 + 4.0);
        assert_close(two.overlap_ns, 21.0 + 4.0);
        // Read on demand (no read phase), on 1 worker after the items: batch 0 is 16 + 15 =
        // 31 (above) and batch 1 10 + 4 = 14: 45.
        let on_demand = project(&p, PhaseConfig::new(ReadMode::None, After, n(1)));
        assert_close(on_demand.exposed_read_ns, 0.0);
        assert_close(on_demand.makespan_ns, 45.0);
        // With the root phase off, the reads alone are exposed.
        let off = project(&p, PhaseConfig::new(ReadMode::Prefetch, Off, n(1)));
        assert_close(off.exposed_read_ns, 10.0 + 12.0);
    }

    /// One block: prepare 1, a storage task of 4, the account stage 2, account units
    /// `units` and finish 1; or, `serial`, the account trie as one unit (stage, units and
    /// finish in the finish).
    fn accounts_profile(units: Vec<u64>, serial: bool) -> PhaseProfile {
        let trie: u64 = 2 + units.iter().sum::<u64>() + 1;
        let block = BlockRoot {
            segment: 0,
            prepare_ns: 1,
            storage_ns: vec![4],
            storage_writes: vec![4],
            stage_ns: if serial { 0 } else { 2 },
            account_leaves: if serial { vec![] } else { units.clone() },
            account_ns: if serial { vec![] } else { units },
            finish_ns: if serial { trie } else { 1 },
            persist_ns: 0,
            commit_ns: 0,
        };
        PhaseProfile {
            unit_ns: 0,
            batches: vec![BatchProfile {
                roots: vec![block],
                ..BatchProfile::default()
            }],
        }
    }

    #[test]
    fn account_units_run_after_the_stage_and_shorten_the_root_on_many_workers() {
        let split = accounts_profile(vec![8, 8, 8, 8], false);
        let serial = accounts_profile(vec![8, 8, 8, 8], true);
        let root = |p: &PhaseProfile, w| {
            project(p, PhaseConfig::new(ReadMode::None, After, n(w))).makespan_ns
        };
        // One worker: the same 40 of work either way.
        assert_close(root(&split, 1), 40.0);
        assert_close(root(&serial, 1), 40.0);
        // 16 workers: prepare 1, task 4, stage 2, the units side by side 8, finish 1: 16,
        // against the serial 1 + 4 + 35 = 40.
        assert_close(root(&split, 16), 16.0);
        assert_close(root(&serial, 16), 40.0);
        // 2 workers: the units two at a time: 1 + 4 + 2 + 16 + 1 = 24.
        assert_close(root(&split, 2), 24.0);
        // Every unit pays the unit cost: 5 tasks at 10 each on one worker.
        let mut costly = split.clone();
        costly.unit_ns = 10;
        assert_close(root(&costly, 1), 90.0);
        // A block whose stage is counted in its finish (stage 0) projects the same chain.
        let mut merged = split;
        merged.batches[0].roots[0].stage_ns = 0;
        merged.batches[0].roots[0].finish_ns = 3;
        assert_close(root(&merged, 16), 16.0);
    }

    /// `blocks` one-block batches, each an item of `item` and a root of prepare 1 and
    /// finish 1, committed as `persist` (profiled commit 5 a block, a share of 3 on the
    /// background writer).
    fn persist_profile(blocks: usize, item: u64) -> PhaseProfile {
        let block = BlockRoot {
            prepare_ns: 1,
            finish_ns: 1,
            persist_ns: 5,
            commit_ns: 3,
            ..BlockRoot::default()
        };
        PhaseProfile {
            unit_ns: 0,
            batches: (0..blocks)
                .map(|_| BatchProfile {
                    roots: vec![block.clone()],
                    ..BatchProfile::one_item_claims(vec![item])
                })
                .collect(),
        }
    }

    #[test]
    fn persistence_per_block_and_by_a_background_writer() {
        let at = |p: &PhaseProfile, persist| {
            let config =
                PhaseConfig::new(ReadMode::None, After, n(1)).with_persist(persist, Backlog::RETH);
            project(p, config)
        };
        // Per block: the commit is inside the finish as profiled; each block waits 5.
        let p = persist_profile(30, 10);
        let block = at(&p, Persist::Block);
        assert_close(block.makespan_ns, 30.0 * 12.0);
        assert_eq!(block.persist_waits, vec![5.0; 30]);
        assert_close(block.drain_ns, 0.0);
        // Background, a writer that keeps up (3 a block, a block every 12): nobody waits,
        // every block is written, the drain is the tail.
        let bg = at(&p, Persist::Background);
        assert_eq!(bg.persist_waits, vec![0.0; 30]);
        assert!(
            bg.drain_ns > 0.0 && bg.drain_ns <= 8.0 * 3.0,
            "{}",
            bg.drain_ns
        );
        assert_close(bg.makespan_ns, 30.0 * 12.0 + bg.drain_ns);
        // A short pass (fewer blocks than the threshold): no commit before the end, one
        // drain of all of them.
        let short = at(&persist_profile(5, 10), Persist::Background);
        assert_close(short.drain_ns, 5.0 * 3.0);
        // A writer slower than the chain (blocks every 2, 3 each to write): past the
        // backpressure blocks wait, and the pass runs at the writer's pace.
        let slow = at(&persist_profile(60, 0), Persist::Background);
        let stall = Backlog::RETH.stall_gap() as usize;
        assert!(slow.persist_waits[..stall].iter().all(|&w| w == 0.0));
        assert!(slow.persist_wait_ns > 0.0);
        assert!(slow.makespan_ns >= 60.0 * 3.0, "{}", slow.makespan_ns);
        // Off: no root, nothing persisted.
        let off = project(
            &p,
            PhaseConfig::new(ReadMode::None, Off, n(1))
                .with_persist(Persist::Background, Backlog::RETH),
        );
        assert!(off.persist_waits.is_empty() && off.drain_ns == 0.0);
    }

    #[test]
    fn reads_beside_execution_expose_only_the_waits_for_each_items_block() {
        // Two blocks of two items of 5 each (items 0, 1 in block 0; 2, 3 in block 1), a
        // read of 10 whose parts are 4 and 6, on 2 workers and 3 cores (the reader has a
        // core of its own). Block 0 is read at 4, block 1 at 10: both workers wait 4 for
        // their first item (4–9), then 1 for block 1 (10–15): 15, 5 exposed, against the
        // prefetch's 10 + 10.
        let profile = |parts: Vec<u64>| PhaseProfile {
            unit_ns: 0,
            batches: vec![BatchProfile {
                item_block: vec![0, 0, 1, 1],
                block_read_ns: parts,
                ..batch(vec![5, 5, 5, 5], 10)
            }],
        };
        let at =
            |p: &PhaseProfile, read| project(p, PhaseConfig::new(read, Off, n(2)).with_cores(n(3)));
        let beside = at(&profile(vec![4, 6]), ReadMode::Beside);
        assert_close(beside.makespan_ns, 15.0);
        assert_close(beside.exposed_read_ns, 5.0);
        assert_close(beside.first_read_wait_ns, 4.0);
        assert_close(beside.read_ns, 10.0);
        assert_close(beside.exec_ns, 15.0);
        assert_close(
            at(&profile(vec![4, 6]), ReadMode::Prefetch).makespan_ns,
            20.0,
        );
        // The schedule's order sets the read's: block 1's items first, so block 1 is read
        // first (ready at 6) and block 0 at 10: 6–11, then 11–16.
        let mut reversed = profile(vec![4, 6]);
        reversed.batches[0].order = vec![2, 3, 0, 1];
        let r = at(&reversed, ReadMode::Beside);
        assert_close(r.first_read_wait_ns, 6.0);
        assert_close(r.makespan_ns, 16.0);
        // Without parts the whole read comes before the first item, as a prefetch.
        let whole = at(&profile(vec![]), ReadMode::Beside);
        assert_close(whole.makespan_ns, 20.0);
        assert_close(whole.exposed_read_ns, 10.0);
        // A slow second block (parts 4 and 40, a read of 44): block 1 is read at 44, its
        // items run 44–49; each worker waited 4 + 35.
        let mut slow = profile(vec![4, 40]);
        slow.batches[0].read.ns = 44;
        let s = at(&slow, ReadMode::Beside);
        assert_close(s.makespan_ns, 49.0);
        assert_close(s.exposed_read_ns, 4.0 + 35.0);
    }

    /// One item per block, item `i` in block `i`, each block's part of the read as given
    /// (the read their sum), run in block order.
    fn one_item_blocks(item_ns: Vec<u64>, parts: Vec<u64>) -> PhaseProfile {
        let blocks = item_ns.len() as u32;
        PhaseProfile {
            unit_ns: 0,
            batches: vec![
                BatchProfile {
                    item_block: (0..blocks).collect(),
                    ..batch(item_ns, parts.iter().sum())
                }
                .with_parts(parts),
            ],
        }
    }

    impl BatchProfile {
        fn with_parts(self, block_read_ns: Vec<u64>) -> Self {
            Self {
                block_read_ns,
                ..self
            }
        }
    }

    #[test]
    fn a_block_read_after_its_item_would_start_delays_it_by_exactly_the_difference() {
        // One worker and one reader on two cores (no sharing). Items of 3 (block 0) and 4
        // (block 1); block 0 read in 2, block 1 in `part` after it. Block 1 read by 5, when
        // its item would start: no delay, 2 + 3 + 4 = 9. Read by 12: its item starts 7 later.
        let at = |part| {
            let config = PhaseConfig::new(ReadMode::Beside, Off, n(1)).with_cores(n(2));
            project(&one_item_blocks(vec![3, 4], vec![2, part]), config)
        };
        let (in_time, late) = (at(3), at(10));
        assert_close(in_time.makespan_ns, 9.0);
        assert_close(in_time.exposed_read_ns, 2.0);
        assert_close(late.makespan_ns - in_time.makespan_ns, 12.0 - 5.0);
        assert_close(late.exposed_read_ns, 2.0 + 7.0);
        assert_close(late.first_read_wait_ns, 2.0);
        // On one core the worker and the reader share it once block 0 is in (each at 1/2):
        // block 1 is read at 2 + 10 / (1/2) = 22; item 0 runs 2–8 at 1/2; item 1 waits
        // 22 - 8 = 14, then runs alone 22–26.
        let config = PhaseConfig::new(ReadMode::Beside, Off, n(1));
        let shared = project(&one_item_blocks(vec![3, 4], vec![2, 10]), config);
        assert_close(shared.makespan_ns, 26.0);
        assert_close(shared.exposed_read_ns, 2.0 + 14.0);
        assert_close(shared.read_ns, 22.0);
    }

    #[test]
    fn reads_in_schedule_order_on_enough_readers_expose_only_the_first_blocks_read() {
        // Four blocks of one item of 2 each, each block read in 4, on 4 workers and 16
        // cores. One reader reads them one after another (4, 8, 12, 16): the last worker
        // waits 16. Four readers read them at once: every block is in at 4, only the first
        // block's read is exposed (the profiled span, 4 on four readers, leaves no tail).
        let mut p = one_item_blocks(vec![2; 4], vec![4; 4]);
        p.batches[0].read.ns = 4;
        let at = |p: &PhaseProfile, readers| {
            let config = PhaseConfig::new(ReadMode::Beside, Off, n(4))
                .with_cores(n(16))
                .with_readers(n(readers));
            project(p, config)
        };
        let one = at(&p, 1);
        assert_close(one.exposed_read_ns, 16.0);
        assert_close(one.makespan_ns, 18.0);
        let four = at(&p, 4);
        assert_close(four.first_read_wait_ns, 4.0);
        assert_close(four.exposed_read_ns, 4.0);
        assert_close(four.makespan_ns, 6.0);
        // A span of 10: 6 past the blocks (trie paths) after the last block, 4–10, which
        // outlasts the batch's items by 4.
        p.batches[0].read.ns = 10;
        let tail = at(&p, 4);
        assert_close(tail.read_ns, 10.0);
        assert_close(tail.exposed_read_ns, 4.0 + 4.0);
        assert_close(tail.makespan_ns, 10.0);
        // The order sets which block is first: block 3's item first, so block 3 is read
        // first, and on enough readers its read alone is exposed (7 of reads 1, 1, 1, 7).
        let mut reversed = one_item_blocks(vec![2; 4], vec![1, 1, 1, 7]);
        reversed.batches[0].order = vec![3, 2, 1, 0];
        let config = PhaseConfig::new(ReadMode::Beside, Off, n(1))
            .with_cores(n(16))
            .with_readers(n(4));
        let r = project(&reversed, config);
        assert_close(r.first_read_wait_ns, 7.0);
        assert_close(r.exposed_read_ns, 7.0);
        assert_close(r.makespan_ns, 7.0 + 4.0 * 2.0);
    }

    #[test]
    fn segments_are_independent_chains() {
        // Two segments of one block each (prepare 1, a task of 4, finish 1) on 2 workers,
        // after no items: each worker prepares one (0–1), runs its task (1–5), finishes
        // (5–6): 6, not the 12 of one chain.
        let block = |segment| BlockRoot {
            account_ns: Vec::new(),
            account_leaves: Vec::new(),
            stage_ns: 0,
            persist_ns: 0,
            commit_ns: 0,
            segment,
            prepare_ns: 1,
            storage_ns: vec![4],
            storage_writes: vec![4],
            finish_ns: 1,
        };
        let p = PhaseProfile {
            unit_ns: 0,
            batches: vec![BatchProfile {
                roots: vec![block(0), block(1)],
                ..BatchProfile::default()
            }],
        };
        assert_close(makespan(&p, ReadMode::None, After, 2), 6.0);
        assert_close(makespan(&p, ReadMode::None, Overlapped, 1), 12.0);
        // Root off: nothing runs.
        assert_close(makespan(&p, ReadMode::None, Off, 2), 0.0);
    }

    #[test]
    fn fewer_cores_than_workers_and_readers_slow_a_pipelined_pass() {
        let p = reads_profile();
        let at = |read, cores| {
            let config = PhaseConfig::new(read, Off, n(2)).with_cores(n(cores));
            project(&p, config).makespan_ns
        };
        // 2 workers on 2 cores: 34.5 (above).
        assert_close(at(ReadMode::Pipelined, 2), 34.5);
        // 3 cores: no sharing. Batch 0 (9) beside read 1 (12): 12. 10 + 12 + 8 = 30.
        assert_close(at(ReadMode::Pipelined, 3), 30.0);
        // 1 core: the workers alone at 1/2, beside the read at 1/3. Batch 0 ends at 27, the
        // read has done 9; its last 3 alone: 30. Batch 1: 8 / (1/2) = 16. 10 + 30 + 16 = 56.
        assert_close(at(ReadMode::Pipelined, 1), 56.0);
        // Prefetch on 1 core: reads 22, items (9 + 8) / (1/2) = 34: 56, the same work on
        // one core.
        assert_close(at(ReadMode::Prefetch, 1), 56.0);
    }

    #[test]
    fn a_device_curve_caps_the_read() {
        let curve = DeviceCurve::new(vec![(1, 1000.0), (2, 1500.0), (4, 2000.0)]).unwrap();
        assert_close(curve.reads_per_s(n(3)), 1750.0);
        assert_close(curve.reads_per_s(n(8)), 2000.0);
        let below = DeviceCurve::new(vec![(2, 1000.0)]).unwrap();
        assert_close(below.reads_per_s(n(1)), 500.0);
        // A batch of no items whose read is 1 ms on one reader and 10 device reads.
        let read = |ns| PhaseProfile {
            unit_ns: 0,
            batches: vec![BatchProfile {
                read: ReadProfile { ns, reads: 10 },
                ..BatchProfile::default()
            }],
        };
        let at = |ns, readers, device| {
            let config = PhaseConfig::new(ReadMode::Prefetch, Off, n(1))
                .with_cores(n(8))
                .with_readers(n(readers));
            project_phases(&read(ns), &config, device).unwrap()
        };
        // 1 reader: 10 reads at 1000/s is 10 ms, above the 1 ms of CPU.
        assert_close(at(1_000_000, 1, Some(&curve)).makespan_ns, 1e7);
        // 2 readers: 10 / 1500 s; 3: 10 / 1750 s; 4 and 8: 10 / 2000 s.
        assert_close(at(1_000_000, 2, Some(&curve)).read_ns, 1e10 / 1500.0);
        assert_close(at(1_000_000, 3, Some(&curve)).read_ns, 1e10 / 1750.0);
        assert_close(at(1_000_000, 4, Some(&curve)).read_ns, 5e6);
        assert_close(at(1_000_000, 8, Some(&curve)).read_ns, 5e6);
        // Without the curve the readers divide the read: 1 ms / 4.
        assert_close(at(1_000_000, 4, None).read_ns, 250_000.0);
        // A read that is mostly CPU is not capped: 100 ms on one reader.
        assert_close(at(100_000_000, 1, Some(&curve)).read_ns, 1e8);

        // Pipelined, 2 workers on 3 cores (no sharing): read 1 is 12 of CPU but 30 reads
        // at 10⁹/s, 30. Batch 0 (9) ends first; the read ends at 30, 21 exposed.
        // 10 + 30 + 8 = 48.
        let mut p = reads_profile();
        p.batches[1].read.reads = 30;
        let fast = DeviceCurve::new(vec![(1, 1e9)]).unwrap();
        let config = PhaseConfig::new(ReadMode::Pipelined, Off, n(2)).with_cores(n(3));
        let capped = project_phases(&p, &config, Some(&fast)).unwrap();
        assert_close(capped.makespan_ns, 48.0);
        assert_close(capped.exposed_read_ns, 10.0 + 21.0);
    }

    #[test]
    fn execution_alone_is_the_simulators_list_schedule() {
        // Pseudo-random items in chunks of 1 to 4, at 1 to 9 workers.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for round in 0..40 {
            let items = 1 + next(60) as usize;
            let item_ns: Vec<u64> = (0..items).map(|_| 1 + next(1000)).collect();
            let order: Vec<u32> = (0..items as u32).rev().collect();
            let mut bounds = vec![0u32];
            while (*bounds.last().unwrap() as usize) < items {
                let to = (*bounds.last().unwrap() as usize + 1 + next(4) as usize).min(items);
                bounds.push(to as u32);
            }
            let workers = n(1 + round % 9);
            let expected = crate::execution::list_schedule(&item_ns, &order, &bounds, workers);
            let p = PhaseProfile {
                unit_ns: 0,
                batches: vec![BatchProfile {
                    order: order.clone(),
                    bounds: bounds.clone(),
                    ..BatchProfile::one_item_claims(item_ns)
                }],
            };
            let got = makespan(&p, ReadMode::None, Off, workers.get());
            assert_close(got, expected as f64);
        }
    }

    #[test]
    fn every_unit_runs_once_within_the_bounds() {
        // Pseudo-random batches with roots over 1 to 3 segments: all the work runs (root
        // busy time is the root work), and the makespan is no less than the work over the
        // workers nor than any segment's chain, and no more than all of it on one worker.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for round in 0..60 {
            let items: Vec<u64> = (0..next(30)).map(|_| next(500)).collect();
            let mut roots = Vec::new();
            for _ in 0..next(6) {
                let storage_ns: Vec<u64> = (0..next(5)).map(|_| next(200)).collect();
                roots.push(BlockRoot {
                    account_ns: Vec::new(),
                    account_leaves: Vec::new(),
                    stage_ns: 0,
                    persist_ns: 0,
                    commit_ns: 0,
                    segment: next(3) as u32,
                    prepare_ns: next(20),
                    storage_writes: storage_ns.iter().map(|&ns| ns / 10).collect(),
                    storage_ns,
                    finish_ns: next(50),
                });
            }
            let root_work: u64 = roots
                .iter()
                .map(|b| b.prepare_ns + b.finish_ns + b.storage_ns.iter().sum::<u64>())
                .sum();
            let chain = (0..3)
                .map(|s| {
                    roots
                        .iter()
                        .filter(|b| b.segment == s)
                        .map(|b| {
                            b.prepare_ns + b.finish_ns + b.storage_ns.iter().max().unwrap_or(&0)
                        })
                        .sum::<u64>()
                })
                .max()
                .unwrap_or(0);
            let work = items.iter().sum::<u64>() + root_work;
            let p = PhaseProfile {
                unit_ns: 0,
                batches: vec![BatchProfile {
                    roots,
                    ..BatchProfile::one_item_claims(items)
                }],
            };
            let w = 1 + round % 7;
            for phase in [After, Overlapped] {
                let got = project(&p, PhaseConfig::new(ReadMode::None, phase, n(w)));
                assert_close(got.root_busy_ns, root_work as f64);
                assert!(got.makespan_ns + 1e-9 >= work as f64 / w as f64);
                assert!(got.makespan_ns + 1e-9 >= chain as f64);
                assert!(got.makespan_ns <= work as f64 + 1e-9);
                assert!(got.root_ns <= got.makespan_ns + 1e-9);
            }
        }
    }

    #[test]
    fn bad_curves_and_profiles_are_refused() {
        assert_eq!(DeviceCurve::new(vec![]), Err(CurveError::Empty));
        assert_eq!(
            DeviceCurve::new(vec![(0, 1.0)]),
            Err(CurveError::ZeroReaders)
        );
        assert_eq!(
            DeviceCurve::new(vec![(2, 1.0), (2, 2.0)]),
            Err(CurveError::NotIncreasing { readers: 2 })
        );
        assert!(matches!(
            DeviceCurve::new(vec![(1, f64::NAN)]),
            Err(CurveError::BadRate { readers: 1, .. })
        ));
        let config = PhaseConfig::new(ReadMode::None, Off, n(2));
        let with = |order: Vec<u32>, bounds: Vec<u32>| PhaseProfile {
            unit_ns: 0,
            batches: vec![BatchProfile {
                order,
                bounds,
                ..BatchProfile::one_item_claims(vec![1, 2, 3])
            }],
        };
        let refused = |p: PhaseProfile| project_phases(&p, &config, None).unwrap_err();
        let twice = PhaseProfileError::NotAPermutation { batch: 0, items: 3 };
        assert_eq!(refused(with(vec![0, 0, 1], vec![0, 3])), twice);
        assert_eq!(refused(with(vec![0, 1, 7], vec![0, 3])), twice);
        assert_eq!(refused(with(vec![0, 1], vec![0, 2])), twice);
        let cut = PhaseProfileError::BadBounds { batch: 0, len: 3 };
        assert_eq!(refused(with(vec![2, 1, 0], vec![0, 2])), cut);
        assert_eq!(refused(with(vec![2, 1, 0], vec![0, 2, 1, 3])), cut);
        assert_eq!(refused(with(vec![2, 1, 0], vec![])), cut);
        assert!(project_phases(&with(vec![2, 1, 0], vec![0, 1, 3]), &config, None).is_ok());
    }

    /// A device curve file: the header then rows is read (spaces and blank rows ignored)
    /// and written back the same; each bad file is refused with its own error, naming the
    /// file and the line, on one line.
    #[test]
    fn a_device_curve_file_is_read_or_refused_by_line() {
        let path = std::path::Path::new("curve.csv");
        let good = "readers,reads_per_s\n1,12000\n 2 , 21000.25\n\n4,30000\n";
        let curve = DeviceCurve::parse_csv(good, path).unwrap();
        assert_eq!(curve.points(), [(1, 12000.0), (2, 21000.25), (4, 30000.0)]);
        assert_eq!(
            DeviceCurve::parse_csv(&curve.to_csv(), path).unwrap(),
            curve
        );
        assert_eq!(curve.summary(), "1: 12000, 2: 21000, 4: 30000 reads/s");

        let err = |text: &str| DeviceCurve::parse_csv(text, path).unwrap_err();
        let one_line = |e: &CurveFileError| {
            let text = e.to_string();
            assert!(!text.contains('\n'), "{text}");
            assert!(text.starts_with("curve.csv: "), "{text}");
            text
        };
        // Empty (or only blank lines).
        for text in ["", "\n  \n"] {
            let e = err(text);
            assert!(matches!(e, CurveFileError::Empty { .. }), "{e:?}");
            assert!(one_line(&e).contains("readers,reads_per_s"));
        }
        // No header: the first line is a row.
        let e = err("1,12000\n2,21000\n");
        assert!(
            matches!(&e, CurveFileError::Header { found, .. } if found == "1,12000"),
            "{e:?}"
        );
        assert!(one_line(&e).contains("line 1: expected the header"));
        // A header and no row.
        let e = err("readers,reads_per_s\n");
        assert!(
            matches!(
                e,
                CurveFileError::Curve {
                    line: 1,
                    source: CurveError::Empty,
                    ..
                }
            ),
            "{e:?}"
        );
        // Not numbers, or not two fields.
        for (text, line) in [
            ("readers,reads_per_s\n1,12000\ntwo,21000\n", 3),
            ("readers,reads_per_s\n1,fast\n", 2),
            ("readers,reads_per_s\n1.5,12000\n", 2),
            ("readers,reads_per_s\n1\n", 2),
            ("readers,reads_per_s\n1,2,3\n", 2),
        ] {
            let e = err(text);
            assert!(
                matches!(e, CurveFileError::Row { line: l, .. } if l == line),
                "{text:?}: {e:?}"
            );
            assert!(one_line(&e).contains(&format!("line {line}: expected `readers,reads_per_s`")));
        }
        // Zero readers.
        let e = err("readers,reads_per_s\n0,5000\n1,12000\n");
        assert!(
            matches!(
                e,
                CurveFileError::Curve {
                    line: 2,
                    source: CurveError::ZeroReaders,
                    ..
                }
            ),
            "{e:?}"
        );
        // A reader count twice.
        let e = err("readers,reads_per_s\n1,12000\n2,21000\n1,13000\n");
        assert!(
            matches!(
                e,
                CurveFileError::Duplicate {
                    line: 4,
                    readers: 1,
                    first: 2,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(one_line(&e).contains("line 4: expected each reader count once"));
        // Out of order, and a rate that is not positive: the curve's own errors, by line.
        let e = err("readers,reads_per_s\n2,21000\n1,12000\n");
        assert!(
            matches!(
                e,
                CurveFileError::Curve {
                    line: 3,
                    source: CurveError::NotIncreasing { readers: 1 },
                    ..
                }
            ),
            "{e:?}"
        );
        let e = err("readers,reads_per_s\n1,-3\n");
        assert!(
            matches!(
                e,
                CurveFileError::Curve {
                    line: 2,
                    source: CurveError::BadRate { .. },
                    ..
                }
            ),
            "{e:?}"
        );
        // A file that is not there.
        let missing = std::path::Path::new("/nonexistent/curve.csv");
        let e = DeviceCurve::read_csv(missing).unwrap_err();
        assert!(matches!(e, CurveFileError::Io { .. }), "{e:?}");
        assert!(e.to_string().starts_with("/nonexistent/curve.csv: "));
    }
}
