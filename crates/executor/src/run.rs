//! Timed runs: the worker pool, mega-blocks and the sequential baseline.

use crate::root::RootPass;
use crate::{
    barrier::{Spin, SpinBarrier},
    exec::{ExecError, ItemExecutor, ItemOutput, SequentialOutputs, SequentialTx},
    replay::Replay,
    schedule::scheduler,
};
use crate::{
    prestate::PreStateDb,
    source::{NoSource, OnDemand, OnDemandPass, StateSource},
};
use crossbeam_utils::CachePadded;
use gigagas_grid::{BalDesign, IoMode, RunConfig, StateRootPhase, TimedWork};
use std::{
    sync::{
        Mutex, OnceLock, RwLock, RwLockReadGuard,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

/// How long a worker busy-waits at the barrier before it sleeps (when every worker has a
/// core of its own): longer than the verification of a typical batch between two batches,
/// so the next batch's release reaches a worker that is still awake.
const WORKER_SPIN: Duration = Duration::from_millis(20);

/// The cores this process may use, read once: std reads the cgroup quota files on every
/// call, and a sample may run thousands of passes.
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Timings of one run (what the timed window saw).
#[derive(Debug, Clone, Default)]
pub struct RunTimings {
    /// Wall time of the timed window, nanoseconds (scheduling + execution).
    pub wall_ns: u64,
    /// Wall time of each batch, nanoseconds: from its start to the end of its last item.
    pub batch_wall_ns: Vec<u64>,
    /// Execution time of each item (indexed like [`Replay::items`]), nanoseconds.
    pub item_ns: Vec<u64>,
    /// When each item started, nanoseconds after the timed window opened, on the wall clock
    /// (the pauses between batches included; for a trace of the pass).
    pub item_start_ns: Vec<u64>,
    /// The worker that ran each item (parallel runs).
    pub item_worker: Vec<u32>,
    /// When each batch started, nanoseconds after the timed window opened, on the wall
    /// clock.
    pub batch_start_ns: Vec<u64>,
    /// Busy time of each worker, nanoseconds.
    pub worker_busy_ns: Vec<u64>,
    /// Item ranges of the batches.
    pub batches: Vec<std::ops::Range<usize>>,
    /// With a state source: what reading the state took (zero otherwise).
    pub io: IoTimings,
    /// With a prefetching state source: each read of a batch's state as (start, length),
    /// nanoseconds, the start after the timed window opened on the wall clock (for a trace
    /// of the pass).
    pub read_spans: Vec<(u64, u64)>,
    /// CPU time and page faults of the whole process while the window was open (the
    /// verification between batches excluded; [`crate::window`]).
    pub cpu: crate::window::CpuUsage,
    /// With the state-root phase on: what it took (zero otherwise).
    pub root: crate::root::RootTimings,
}

/// What reading a pass's state from a [`StateSource`] took, nanoseconds of wall time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoTimings {
    /// Reading what the batches' access lists call for before each batch runs, all readers
    /// together (straight into the tables the replay reads: no join follows), plus, on
    /// demand (no list, or a list of the writes only), the summed time inside the reads
    /// made while transactions waited.
    pub read_ns: u64,
    /// Decoding the blocks' `full` lists into their tables (0 for the other designs).
    pub build_ns: u64,
    /// The part of reading and decoding that the timed window waited for: all of it when
    /// each batch is read before it runs, only what was not hidden behind the previous
    /// batch's execution when pipelined; every read on demand.
    pub exposed_ns: u64,
}

/// How a pass reads its state when it is not the dump's in memory. What the access list
/// carries when the pass reads with one (`Prefetch`, `Pipelined`) is the design of the
/// runner's config ([`gigagas_grid::StateRead::design`]; `keys` where it names none).
pub struct PassIo<'s, S> {
    /// The readers: one per I/O thread (prefetching), or a pool the workers share (on
    /// demand, and the reads a list of the writes only leaves to be made on demand).
    pub readers: &'s mut [S],
    /// `Prefetch`: each batch's keys read right before it runs; `Pipelined`: batch `k + 1`
    /// read while batch `k` executes; `OnDemand`: each value read the first time the pass
    /// needs it.
    pub mode: IoMode,
}

impl<S> std::fmt::Debug for PassIo<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassIo")
            .field("readers", &self.readers.len())
            .field("mode", &self.mode)
            .finish()
    }
}

/// A pass's state read from a source before each batch: each block's base once read, the
/// blank bases a read fills, and the readers.
struct IoState<'r, 's, S> {
    bases: Vec<OnceLock<PreStateDb>>,
    /// Each block's base before it is read ([`Replay::blank_base`], cloned before the
    /// window opens), taken by the read that fills it.
    blanks: Mutex<Vec<Option<PreStateDb>>>,
    /// The readers (and, with `writes`, what was read on demand).
    pass: &'r OnDemandPass<'s, S>,
    /// What the access list carries.
    design: BalDesign,
    /// With `writes`: each block's view of the readers, for what was not read before.
    views: Option<&'r [OnDemand<'r, 's, S>]>,
    pipelined: bool,
    timings: Mutex<IoTimings>,
    spans: Mutex<Vec<(u64, u64)>>,
}

/// Where a pass's items find the state at the start of their block, chosen once per pass
/// ([`Replay::run_with_sink`]) from its [`PassIo`] and the replay.
enum Bases<'r, 's, S> {
    /// In memory: every block's base, prepared with the replay
    /// ([`Replay::resident_bases`]).
    Resident(&'r [PreStateDb]),
    /// In memory, when the replay keeps no bases: the current batch's, built into `slot`
    /// by the coordinator's `cursor` before the batch's *go* (outside the timed window).
    PerBatch {
        slot: &'r RwLock<BatchBases>,
        cursor: &'r Mutex<crate::BaseCursor<'r>>,
    },
    /// Read from state sources: each batch's blocks before it runs, or pipelined behind
    /// the batch before it.
    Read(&'r IoState<'r, 's, S>),
    /// Read from state sources on demand: the pass's cache, and each block's view of it.
    OnDemand {
        pass: &'r OnDemandPass<'s, S>,
        views: &'r [OnDemand<'r, 's, S>],
    },
}

impl<S> Clone for Bases<'_, '_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Bases<'_, '_, S> {}

impl<'r, 's, S> Bases<'r, 's, S> {
    /// The pass's readers, when its state is read from sources.
    fn pass(self) -> Option<&'r OnDemandPass<'s, S>> {
        match self {
            Self::Read(io) => Some(io.pass),
            Self::OnDemand { pass, .. } => Some(pass),
            Self::Resident(_) | Self::PerBatch { .. } => None,
        }
    }

    /// Whether each batch's state is read while the batch before it runs.
    fn pipelined(self) -> bool {
        matches!(self, Self::Read(io) if io.pipelined)
    }

    /// The bases one batch's items read, the per-batch slot locked for reading until
    /// the batch is handed over.
    fn for_batch(self) -> BatchBase<'r, 's, S> {
        match self {
            Self::Resident(bases) => BatchBase::Resident(bases),
            Self::PerBatch { slot, .. } => BatchBase::Built(
                slot.read()
                    .expect("no thread panics holding the batch's bases"),
            ),
            Self::Read(io) => BatchBase::Read(io),
            Self::OnDemand { views, .. } => BatchBase::OnDemand(views),
        }
    }
}

/// [`Bases`] while one batch runs: what its items read their block's state from.
enum BatchBase<'r, 's, S> {
    /// Every block's base, kept by the replay.
    Resident(&'r [PreStateDb]),
    /// The batch's bases, built for it.
    Built(RwLockReadGuard<'r, BatchBases>),
    /// The bases read from the sources before the batch's *go*.
    Read(&'r IoState<'r, 's, S>),
    /// Each block's view of the sources, read on demand.
    OnDemand(&'r [OnDemand<'r, 's, S>]),
}

/// The bases of one batch's blocks, built by the coordinator before the batch's *go*
/// when the replay does not keep every block's ([`Replay::resident_bases`]), and dropped
/// when the next batch's are built.
#[derive(Debug, Default)]
struct BatchBases {
    /// The batch's first block.
    first: usize,
    /// Its blocks' bases, in order.
    bases: Vec<PreStateDb>,
}

impl BatchBases {
    fn get(&self, b: usize) -> &PreStateDb {
        &self.bases[b - self.first]
    }
}

/// Outputs of every item of a run, for verification.
pub type RunOutputs = Vec<Result<ItemOutput, ExecError>>;

/// A batch's wall time: from its start (`start_ns` after the epoch) to the end of the last
/// of its items in `done`, on the workers' own clock readings.
fn batch_wall_ns(start_ns: u64, done: &[Done]) -> u64 {
    let end_ns = done
        .iter()
        .map(|d| d.start_ns + d.ns)
        .max()
        .unwrap_or(start_ns);
    end_ns.saturating_sub(start_ns)
}

/// A batch's order as the workers claim it: the scheduler's order of its items, cut into
/// chunks ([`crate::chunk_bounds`]).
#[derive(Debug)]
struct BatchOrder {
    /// Item positions (relative to the batch start) in the scheduler's order.
    order: Vec<u32>,
    /// Chunk `c` is `order[bounds[c]..bounds[c + 1]]`.
    bounds: Vec<u32>,
}

impl BatchOrder {
    /// Chunk `c`, or `None` past the last.
    fn chunk(&self, c: usize) -> Option<&[u32]> {
        let (&start, &end) = (self.bounds.get(c)?, self.bounds.get(c + 1)?);
        Some(&self.order[start as usize..end as usize])
    }
}

/// One item a worker ran: its index, execution time and output.
struct Done {
    index: u32,
    worker: u32,
    start_ns: u64,
    ns: u64,
    output: Result<ItemOutput, ExecError>,
}

/// What happens to each batch's outputs once the batch has ended, outside the timed
/// window: collected for the caller ([`Parallel::outputs`], which drains them) or verified
/// ([`Runner::run`], which leaves them), so a pass holds one batch's outputs at most.
/// `outputs[k]` is item `range.start + k`'s. What the sink leaves is dropped by the
/// workers that made it (see [`Shared`]).
type BatchSink<'s> = dyn FnMut(
        std::ops::Range<usize>,
        &mut Vec<Result<ItemOutput, ExecError>>,
    ) -> Result<(), crate::Divergence>
    + 's;

/// The outputs a worker made, handed back to it to drop.
type Returned = Mutex<Vec<Result<ItemOutput, ExecError>>>;

/// The state the coordinator and the workers of one run share.
///
/// # Barrier protocol
///
/// The calling thread coordinates and, unless it reads the next batch's state during each
/// batch (pipelined I/O), is also the last of the `threads` workers (the *helper*): the pool
/// then holds `threads - 1`. One [`SpinBarrier`] of the pool's workers and the coordinator:
/// 1. *ready*: every worker has built its [`ItemExecutor`]; the coordinator starts the
///    clock after it (spawning is outside the timed window) and computes every batch's
///    order (inside the window: a scheduler's cost is part of what is measured);
/// 2. then per batch `b`: *go* — the coordinator takes the batch's start time and every
///    worker takes chunks of the batch's order ([`crate::chunk_bounds`]) from the shared
///    cursor until it runs past the last, then hands its outputs over; *handed* — every
///    worker has done so: the batch's wall time runs from its start to the end of its last
///    item (so no wake-up is in it; a mega-block is one batch, so blocks within it overlap,
///    while batches never do), and the coordinator passes the outputs to the
///    [`BatchSink`] while the clock is stopped; *returned* — the coordinator has handed each
///    worker the outputs it made, which the worker drops; *dropped* — every worker has
///    (so each worker's allocations are freed by the thread that made them: freed by the
///    coordinator they would return to the workers' heaps through the allocator's
///    cross-thread free lists, inside the next window, on cache lines last written by
///    another core). A divergence sets `stop`, and everyone leaves after the next *go*.
///
/// Workers busy-wait at the barrier for up to [`WORKER_SPIN`] when each has a core of its
/// own, so a release reaches them without a kernel wake-up inside the timed window; a
/// helping coordinator waits as they do from *go* to *dropped*, and otherwise sleeps (its
/// wait spans the batch, where a core is a worker's).
struct Shared<'r, 's, S> {
    replay: &'r Replay,
    config: &'r RunConfig,
    /// Item ranges of the batches.
    batches: &'r [std::ops::Range<usize>],
    /// Per batch, the next chunk of its order to hand out (a cache line each, so a claim
    /// moves no line but the cursor's).
    cursors: &'r [CachePadded<AtomicUsize>],
    /// Per batch, the scheduler's order and the chunks workers claim it in.
    orders: &'r OnceLock<Vec<BatchOrder>>,
    barrier: &'r SpinBarrier,
    /// How long the workers busy-wait at the barrier.
    worker_spin: Spin,
    /// Outputs of the current batch, handed over by each worker when it ran past the order.
    handed: &'r Mutex<Vec<Done>>,
    /// Per worker, the outputs it made, handed back after the sink to be dropped.
    returned: &'r [Returned],
    /// Set by the coordinator when a batch diverged: the run ends at the next *go*.
    stop: &'r AtomicBool,
    /// Where the items read the state at the start of their block.
    bases: Bases<'r, 's, S>,
    /// When the timed window opened (set before the first *go*): items' and batches'
    /// start times are offsets from it on the wall clock (the pauses between batches, where
    /// outputs are verified, included).
    epoch: &'r OnceLock<Instant>,
    /// The state-root phase, when on.
    root: Option<&'r RootPass<'r>>,
}

impl<'s, S: StateSource> Shared<'_, 's, S> {
    /// One worker: list scheduling over the shared cursors, following the barrier
    /// protocol above. Returns its busy time.
    fn worker(&self, id: u32) -> u64 {
        // Room for the largest batch, so recording an item never reallocates in the
        // timed window (handing over keeps the capacity).
        let mut done = Vec::with_capacity(self.largest_batch());
        let mut busy = 0u64;
        self.barrier.wait(self.worker_spin); // 1. ready
        for b in 0..self.batches.len() {
            self.barrier.wait(self.worker_spin); // 2. go
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            busy += self.work_batch(b, id, &mut done);
            self.barrier.wait(self.worker_spin); // handed
            self.barrier.wait(self.worker_spin); // returned
            self.drop_returned(id);
            self.barrier.wait(self.worker_spin); // dropped
        }
        busy
    }

    /// A worker's share of batch `b`: chunks of its order from the shared cursor until
    /// none is left (with the root phase, its units too), then its outputs handed over.
    /// Returns the busy time.
    fn work_batch(&self, b: usize, id: u32, done: &mut Vec<Done>) -> u64 {
        let range = &self.batches[b];
        let mut busy = 0;
        let batch = &self
            .orders
            .get()
            .expect("orders are published before the first go")[b];
        // The batch's bases (when built per batch) stay borrowed until it is handed
        // over; the EVMs over them live as long (one per block either way).
        let bases = self.bases.for_batch();
        let mut executor = ItemExecutor::new();
        let mut on_demand = ItemExecutor::new();
        let overlapped = self.root.filter(|r| r.overlapped());
        loop {
            let c = self.cursors[b].fetch_add(1, Ordering::Relaxed);
            let Some(chunk) = batch.chunk(c) else { break };
            for &pos in chunk {
                if let Some(root) = overlapped {
                    busy += root.help_while_ready(id);
                }
                let index = range.start + pos as usize;
                busy += self.execute_timed(&mut executor, &mut on_demand, &bases, index, id, done);
            }
        }
        if let Some(root) = self.root {
            root.executed();
            busy += root.help_until_done(id);
        }
        // Released before the hand-over, so the coordinator can build the next batch's.
        drop(executor);
        drop(on_demand);
        drop(bases);
        self.handed
            .lock()
            .expect("no worker panics holding the lock")
            .append(done);
        busy
    }

    /// Drop the outputs worker `id` made, handed back to it after the sink.
    fn drop_returned(&self, id: u32) {
        drop(std::mem::take(
            &mut *self.returned[id as usize]
                .lock()
                .expect("no worker panics holding its outputs"),
        ));
    }

    /// Read batch `b`'s state into the pass's bases (with a state source; nothing
    /// otherwise), recording the time it took; returns that time.
    fn prefetch(&self, b: usize) -> Result<u64, crate::Divergence> {
        let Bases::Read(io) = self.bases else {
            return Ok(0);
        };
        let Some(range) = self.batches.get(b).filter(|r| !r.is_empty()) else {
            return Ok(0);
        };
        let items = &self.replay.items;
        let blocks = items[range.start].block as usize..items[range.end - 1].block as usize + 1;
        let start = Instant::now();
        // The blank bases of the batch's blocks (a block split over two batches is read
        // once: the first read takes its blank).
        let tables: Vec<(usize, PreStateDb)> = {
            let mut blanks = io.blanks.lock().expect("no reader panics holding the lock");
            blocks
                .clone()
                .filter_map(|b| blanks[b].take().map(|blank| (b, blank)))
                .collect()
        };
        let mut guards = io.pass.lock_all();
        let mut readers: Vec<&mut S> = guards.iter_mut().map(|g| &mut ***g).collect();
        let fetched = self
            .replay
            .read_tables(io.design, tables, &mut readers)
            .map_err(|e| {
                crate::Divergence::from(ExecError {
                    block: self.replay.blocks[blocks.start].header.number,
                    item: items[range.start].kind,
                    failure: crate::ExecFailure::Read(e),
                })
            });
        drop(readers);
        drop(guards);
        let fetched = fetched?;
        for (b, base) in fetched.bases {
            let _ = io.bases[b].set(base);
        }
        let ns = start.elapsed().as_nanos() as u64;
        if let Some(epoch) = self.epoch.get() {
            let at = start.saturating_duration_since(*epoch).as_nanos() as u64;
            io.spans
                .lock()
                .expect("no reader panics holding the lock")
                .push((at, ns));
        }
        let mut t = io
            .timings
            .lock()
            .expect("no reader panics holding the lock");
        t.read_ns += fetched.read_ns;
        t.build_ns += fetched.build_ns;
        Ok(ns)
    }

    /// Build batch `b`'s bases into the batch slot (in memory without resident bases;
    /// nothing otherwise). Outside the timed window: the replay's prepared state, which a
    /// dump that fits keeps from the start.
    fn build_bases(&self, b: usize) {
        let Bases::PerBatch { slot, cursor } = self.bases else {
            return;
        };
        let Some(range) = self.batches.get(b).filter(|r| !r.is_empty()) else {
            return;
        };
        let items = &self.replay.items;
        let blocks = items[range.start].block as usize..items[range.end - 1].block as usize + 1;
        let mut slot = slot
            .write()
            .expect("no thread panics holding the batch's bases");
        slot.bases.clear();
        slot.first = blocks.start;
        let mut cursor = cursor.lock().expect("no thread panics holding the cursor");
        slot.bases.extend(blocks.map(|b| cursor.base(b)));
    }

    /// A batch that started at `start` and ran `ns`, while the next batch's read ended at
    /// `read_end`: a read that outlasts the batch holds up the next one, so the batch's time
    /// runs until it ends and the excess is charged as exposed.
    fn until_read(&self, start: Instant, read_end: Instant, ns: u64) -> u64 {
        let read = read_end.duration_since(start).as_nanos() as u64;
        if read > ns {
            self.exposed(read - ns);
            read
        } else {
            ns
        }
    }

    /// Charge `ns` of reading to the timed window (it was not hidden).
    fn exposed(&self, ns: u64) {
        if let Bases::Read(io) = self.bases {
            io.timings
                .lock()
                .expect("no reader panics holding the lock")
                .exposed_ns += ns;
        }
    }

    /// On a store run with the root phase on: the tries' nodes read from the sources, inside
    /// the window before the first batch (recorded in `timings.root.read_ns`).
    fn read_tries(&self, timings: &mut RunTimings) -> Result<(), crate::Divergence> {
        let (Some(root), Some(pass)) = (self.root, self.bases.pass()) else {
            return Ok(());
        };
        let mut guards = pass.lock_all();
        let mut readers: Vec<&mut S> = guards.iter_mut().map(|g| &mut ***g).collect();
        timings.root.read_ns = root.read_tries(&mut readers)?;
        Ok(())
    }

    /// Queue batch `b`'s roots (with the root phase on) for `workers` workers.
    fn begin_root(&self, b: usize, workers: usize) {
        let (Some(root), Some(range)) = (self.root, self.batches.get(b)) else {
            return;
        };
        if range.is_empty() {
            return;
        }
        let items = &self.replay.items;
        root.begin_batch(
            items[range.start].block as usize..items[range.end - 1].block as usize + 1,
            workers,
        );
    }

    /// A batch's wall time with its root work: its transactions ran `exec_ns` from
    /// `start_ns`; with the root phase on, the batch ends when the later of the two does,
    /// and `timings.root` adds the batch's figures.
    fn with_root(&self, timings: &mut RunTimings, start_ns: u64, exec_ns: u64) -> u64 {
        let Some(root) = self.root else {
            return exec_ns;
        };
        let end = crate::root::add_batch(
            &mut timings.root,
            start_ns,
            start_ns + exec_ns,
            root.batch_span(),
        );
        end - start_ns
    }

    /// Items in the largest batch.
    fn largest_batch(&self) -> usize {
        self.batches.iter().map(|r| r.len()).max().unwrap_or(0)
    }

    /// Execute item `index` on `executor`, record its output and time; returns the time.
    #[inline]
    fn execute_timed<'r>(
        &self,
        executor: &mut ItemExecutor<'r>,
        on_demand: &mut ItemExecutor<'r, OnDemand<'r, 's, S>>,
        bases: &'r BatchBase<'_, 's, S>,
        index: usize,
        worker: u32,
        done: &mut Vec<Done>,
    ) -> u64
    where
        Self: 'r,
    {
        let replay: &'r Replay = self.replay;
        let item = &replay.items[index];
        let start = Instant::now();
        let b = item.block as usize;
        let output = match bases {
            BatchBase::OnDemand(views) => {
                let view: &'r OnDemand<'r, 's, S> = &views[b];
                replay.execute_item_over(on_demand, item, self.config.work, view)
            }
            BatchBase::Read(io) => {
                let base = io.bases[b]
                    .get()
                    .expect("a batch's bases are read before its go");
                match io.views {
                    // What was not read before the batch is read on demand.
                    Some(views) => replay.execute_item_on_table(
                        on_demand,
                        item,
                        self.config.work,
                        &views[b],
                        base,
                    ),
                    None => replay.execute_item_on(executor, item, self.config.work, base),
                }
            }
            BatchBase::Resident(bases) => {
                replay.execute_item_on(executor, item, self.config.work, &bases[b])
            }
            BatchBase::Built(batch) => {
                replay.execute_item_on(executor, item, self.config.work, batch.get(b))
            }
        };
        let ns = start.elapsed().as_nanos() as u64;
        let epoch = *self.epoch.get().expect("the window opened before any item");
        done.push(Done {
            index: index as u32,
            worker,
            start_ns: start.duration_since(epoch).as_nanos() as u64,
            ns,
            output,
        });
        ns
    }

    /// Hand a batch's outputs to the sink (clock stopped), recording their times.
    fn sink_batch(
        &self,
        range: &std::ops::Range<usize>,
        done: &mut Vec<Done>,
        timings: &mut RunTimings,
        sink: &mut BatchSink<'_>,
    ) -> Result<(), crate::Divergence> {
        let mut outputs: Vec<Option<Result<ItemOutput, ExecError>>> =
            (0..range.len()).map(|_| None).collect();
        for d in done.drain(..) {
            timings.item_ns[d.index as usize] = d.ns;
            timings.item_start_ns[d.index as usize] = d.start_ns;
            timings.item_worker[d.index as usize] = d.worker;
            outputs[d.index as usize - range.start] = Some(d.output);
        }
        let mut outputs = outputs
            .into_iter()
            .map(|o| o.expect("every item of the batch ran exactly once"))
            .collect();
        let result = sink(range.clone(), &mut outputs);
        if self.returned.is_empty() || outputs.is_empty() {
            return result;
        }
        // What the sink left goes back to the workers that made it, to be dropped there.
        let mut by_worker: Vec<Vec<Result<ItemOutput, ExecError>>> =
            self.returned.iter().map(|_| Vec::new()).collect();
        let last = by_worker.len() - 1;
        for (k, output) in outputs.into_iter().enumerate() {
            let worker = timings.item_worker[range.start + k] as usize;
            by_worker[worker.min(last)].push(output);
        }
        for (slot, outputs) in self.returned.iter().zip(by_worker) {
            *slot.lock().expect("no worker panics holding its outputs") = outputs;
        }
        result
    }

    /// One thread: the calling thread is the only worker, so there is nobody to spawn or
    /// wait for (a pass of a tiny dump would otherwise cost more in thread start-up than
    /// in execution). The timed window, the scheduler's order inside it, each batch's
    /// wall time and the sink between batches are as in the protocol above.
    fn single(
        &self,
        scheduler: &dyn crate::Scheduler,
        sink: &mut BatchSink<'_>,
    ) -> (RunTimings, Result<(), crate::Divergence>) {
        let replay = self.replay;
        let mut done = Vec::with_capacity(self.largest_batch());
        let mut busy = 0u64;
        let mut order = Vec::new();
        let mut timings = self.empty_timings();
        let mut result = Ok(());
        let mut window = crate::window::Window::new();
        window.open();
        let epoch = *self.epoch.get_or_init(Instant::now);
        let pipelined = self.bases.pipelined();
        if let Err(e) = self.read_tries(&mut timings) {
            timings.cpu = window.finish();
            return (timings, Err(e));
        }
        timings.wall_ns += timings.root.read_ns;
        for (b, range) in self.batches.iter().enumerate() {
            window.close();
            self.build_bases(b);
            window.open();
            let bases = self.bases.for_batch();
            let mut executor = ItemExecutor::new();
            let mut on_demand = ItemExecutor::new();
            // The scheduler's ordering is in the window, before the batch's own time.
            let ordering = Instant::now();
            scheduler.order(&replay.items[range.clone()], &mut order);
            let start = Instant::now();
            timings.wall_ns += start.duration_since(ordering).as_nanos() as u64;
            let start_ns = start.duration_since(epoch).as_nanos() as u64;
            timings.batch_start_ns.push(start_ns);
            // The batch's state, read now unless the previous batch's pipelined read did.
            if !pipelined || b == 0 {
                match self.prefetch(b) {
                    Ok(ns) => self.exposed(ns),
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            self.begin_root(b, 1);
            let mut next_read = None;
            let mut run_batch = || {
                for &pos in &order {
                    if let Some(root) = self.root.filter(|r| r.overlapped()) {
                        busy += root.help_while_ready(0);
                    }
                    busy += self.execute_timed(
                        &mut executor,
                        &mut on_demand,
                        &bases,
                        range.start + pos as usize,
                        0,
                        &mut done,
                    );
                }
                if let Some(root) = self.root {
                    root.executed();
                    busy += root.help_until_done(0);
                }
            };
            if pipelined && b + 1 < self.batches.len() {
                // The next batch's state is read on a second thread while this one runs.
                std::thread::scope(|scope| {
                    let reading = scope.spawn(|| (self.prefetch(b + 1), Instant::now()));
                    run_batch();
                    next_read = Some(reading.join().expect("the reading thread panicked"));
                });
            } else {
                run_batch();
            }
            let mut ns = self.with_root(&mut timings, start_ns, batch_wall_ns(start_ns, &done));
            if let Some((_, end)) = &next_read {
                ns = self.until_read(start, *end, ns);
            }
            timings.batch_wall_ns.push(ns);
            timings.wall_ns += ns;
            window.close();
            result = self.sink_batch(range, &mut done, &mut timings, sink);
            if let Some((Err(e), _)) = next_read
                && result.is_ok()
            {
                result = Err(e);
            }
            if result.is_err() {
                break;
            }
        }
        timings.worker_busy_ns = vec![busy];
        timings.cpu = window.finish();
        (timings, result)
    }

    /// Timings with room for every item and batch.
    fn empty_timings(&self) -> RunTimings {
        let n = self.replay.items.len();
        RunTimings {
            item_ns: vec![0; n],
            item_start_ns: vec![0; n],
            item_worker: vec![0; n],
            batch_wall_ns: Vec::with_capacity(self.batches.len()),
            batch_start_ns: Vec::with_capacity(self.batches.len()),
            ..Default::default()
        }
    }

    /// The coordinator's side of the protocol: the timed window (ordering and every
    /// batch's wall time), and the sink between batches.
    ///
    /// With `helper`, the coordinator is also the worker of that id: it takes chunks like
    /// the others between *go* and *handed*, and waits at the barriers as they do.
    /// Returns its busy time as a worker (0 without `helper`).
    fn coordinate(
        &self,
        scheduler: &dyn crate::Scheduler,
        sink: &mut BatchSink<'_>,
        helper: Option<u32>,
    ) -> (RunTimings, Result<(), crate::Divergence>, u64) {
        let mut timings = self.empty_timings();
        // The helper's own record of the items it ran (room for the largest batch, as a
        // worker's).
        let (mut own, mut busy) = (Vec::new(), 0);
        if helper.is_some() {
            own.reserve(self.largest_batch());
        }
        // Between *go* and *dropped* a helping coordinator waits like a worker.
        let spin = if helper.is_some() {
            self.worker_spin
        } else {
            Spin::NONE
        };
        self.barrier.wait(Spin::NONE); // 1. all workers ready: the timed window starts now
        let mut window = crate::window::Window::new();
        window.open();
        let start = Instant::now();
        let epoch = *self.epoch.get_or_init(|| start);
        let mut result = Ok(());
        if let Err(e) = self.read_tries(&mut timings) {
            result = Err(e);
            self.stop.store(true, Ordering::Relaxed);
        }
        let mut all_orders = Vec::with_capacity(self.batches.len());
        for range in self.batches {
            let items = &self.replay.items[range.clone()];
            let mut order = Vec::with_capacity(range.len());
            scheduler.order(items, &mut order);
            let mut bounds = Vec::new();
            crate::chunk_bounds(
                items,
                &order,
                self.returned.len(),
                scheduler.estimate(items),
                self.config.claims,
                &mut bounds,
            );
            all_orders.push(BatchOrder { order, bounds });
        }
        self.orders.set(all_orders).expect("orders are set once");
        timings.wall_ns = start.elapsed().as_nanos() as u64;
        let pipelined = self.bases.pipelined();
        let mut pending = None;
        for (b, range) in self.batches.iter().enumerate() {
            window.close();
            self.build_bases(b);
            window.open();
            let start = Instant::now();
            timings
                .batch_start_ns
                .push(start.duration_since(epoch).as_nanos() as u64);
            // The batch's state, read now unless the previous batch's pipelined read did.
            if (!pipelined || b == 0) && !self.stop.load(Ordering::Relaxed) {
                match self.prefetch(b) {
                    Ok(ns) => self.exposed(ns),
                    Err(e) => {
                        result = Err(e);
                        self.stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            self.begin_root(b, self.returned.len());
            self.barrier.wait(Spin::NONE); // 2. go
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            // Pipelined: the coordinator reads the next batch's state while this one runs.
            let mut read_end = None;
            if pipelined && b + 1 < self.batches.len() {
                match self.prefetch(b + 1) {
                    Ok(_) => read_end = Some(Instant::now()),
                    Err(e) => pending = Some(e),
                }
            }
            if let Some(id) = helper {
                busy += self.work_batch(b, id, &mut own);
            }
            self.barrier.wait(spin); // handed
            let mut done = std::mem::take(
                &mut *self
                    .handed
                    .lock()
                    .expect("no worker panics holding the lock"),
            );
            let start_ns = start.duration_since(epoch).as_nanos() as u64;
            let mut ns = self.with_root(&mut timings, start_ns, batch_wall_ns(start_ns, &done));
            if let Some(end) = read_end {
                ns = self.until_read(start, end, ns);
            }
            timings.batch_wall_ns.push(ns);
            timings.wall_ns += ns;
            window.close();
            result = self.sink_batch(range, &mut done, &mut timings, sink);
            self.barrier.wait(spin); // returned
            if let Some(id) = helper {
                self.drop_returned(id);
            }
            self.barrier.wait(spin); // dropped
            if let Some(e) = pending.take()
                && result.is_ok()
            {
                result = Err(e);
            }
            if result.is_err() {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
        timings.cpu = window.finish();
        (timings, result, busy)
    }
}

/// One pass over a [`Replay`]: its timed window, then (with `verify`) the verification of
/// everything the window produced, against the receipts and the access lists. The seam
/// between the executor and whoever measures it: a benchmark repeats a runner's passes
/// and reads their [`RunTimings`]; the replay is the data every runner reads, as revm's
/// `Context` is for its `Handler`s.
///
/// The runners: [`Parallel`] (the BAL replay: every item on its own view, on a worker
/// pool, per block or in mega-blocks, its state in memory or read from state sources) and
/// [`Sequential`] (the client loop: one `State`, no access list, its state in memory or
/// read on demand).
pub trait Runner {
    /// Run one pass: time it, then verify it unless `verify` is off (a run that produced
    /// something wrong is an error, never timings).
    fn run(&mut self, replay: &Replay, verify: bool) -> Result<RunTimings, crate::Divergence>;
}

/// The BAL replay as a [`Runner`]: `config`'s threads, batch and scheduler, the state from
/// the replay's memory or, [`Parallel::reading`], from state sources inside the timed
/// window.
///
/// Workers take items from one shared cursor over the scheduler's order (list
/// scheduling, in chunks that shrink towards the batch's end: [`crate::chunk_bounds`]); each batch ends when its last item ends, and is verified when it ends
/// (outside the timed window: the workers wait while the coordinator checks) and then
/// dropped, so memory grows with the batch, not the dump. The protocol between the workers
/// and the clock is described on the module's private `Shared`; one thread runs on the
/// calling thread.
///
/// `S` is the readers' type when the state is read from sources (a concrete reader is
/// called without a boxed trait call per read); [`NoSource`] in memory.
pub struct Parallel<'c, 's, S = NoSource> {
    config: &'c RunConfig,
    io: Option<PassIo<'s, S>>,
}

impl<S> std::fmt::Debug for Parallel<'_, '_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parallel")
            .field("config", &self.config)
            .field("io", &self.io)
            .finish()
    }
}

impl<'c> Parallel<'c, 'static, NoSource> {
    /// The replay with its state in memory.
    pub fn new(config: &'c RunConfig) -> Self {
        Self { config, io: None }
    }
}

impl<'c, 's, S: StateSource> Parallel<'c, 's, S> {
    /// The replay reading its state through `io` inside the timed window: before each
    /// batch runs, pipelined behind the batch before it, or on demand ([`PassIo`]), the
    /// access list carrying what `config`'s design says
    /// ([`gigagas_grid::StateRead::design`], `keys` where none is named);
    /// [`RunTimings::io`] says what the reads took.
    pub fn reading(config: &'c RunConfig, io: PassIo<'s, S>) -> Self {
        Self {
            config,
            io: Some(io),
        }
    }

    /// One pass that keeps every item's output instead of verifying it (for tests and
    /// tools that compare runs; a benchmark pass is [`Runner::run`], which holds one
    /// batch's outputs at a time).
    pub fn outputs(&mut self, replay: &Replay) -> (RunTimings, RunOutputs) {
        let mut outputs: RunOutputs = Vec::with_capacity(replay.items.len());
        let config = self.config;
        let io = self.io_now();
        let (timings, result) = replay.run_with_sink(config, io, false, &mut |_, batch| {
            outputs.append(batch);
            Ok(())
        });
        result.expect("collecting outputs cannot diverge (with the root phase on, the dump must have a witness: Replay::root_inputs)");
        (timings, outputs)
    }

    /// The sources for one pass, reborrowed so that the runner can run again.
    fn io_now(&mut self) -> Option<PassIo<'_, S>> {
        self.io.as_mut().map(|io| PassIo {
            readers: &mut *io.readers,
            mode: io.mode,
        })
    }
}

impl<S: StateSource> Runner for Parallel<'_, '_, S> {
    fn run(&mut self, replay: &Replay, verify: bool) -> Result<RunTimings, crate::Divergence> {
        let config = self.config;
        let io = self.io_now();
        let (timings, result) = replay.run_with_sink(config, io, verify, &mut |range, batch| {
            if verify {
                replay.verify_items(range, &*batch, config.work.receipts)
            } else {
                Ok(())
            }
        });
        result.map(|()| timings)
    }
}

/// The sequential baseline as a [`Runner`]: one revm `State` per segment, transactions in
/// block order, no access list, timed the same way as the replay (one batch per block, one
/// worker) with the same timed work ([`crate::work`]). Its state is the dump's in memory,
/// or, [`Sequential::on`], read from a source on demand inside the timed window (each
/// account, slot and code the first time its `State` needs it: the client loop without
/// an access list). `S` is the source's type ([`NoSource`] in memory; `dyn StateSource`
/// works too, one dynamic call per read).
pub struct Sequential<'s, S: StateSource + ?Sized = NoSource> {
    work: TimedWork,
    source: Option<&'s mut S>,
}

impl<S: StateSource + ?Sized> std::fmt::Debug for Sequential<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequential")
            .field("work", &self.work)
            .field("source", &self.source.is_some())
            .finish()
    }
}

impl Sequential<'static, NoSource> {
    /// The client loop with its state in memory.
    pub fn new(work: TimedWork) -> Self {
        Self { work, source: None }
    }
}

impl<'s, S: StateSource + ?Sized> Sequential<'s, S> {
    /// The client loop reading its state from `source` on demand.
    pub fn on(work: TimedWork, source: &'s mut S) -> Self {
        Self {
            work,
            source: Some(source),
        }
    }

    /// One pass that returns every transaction's result (and receipt, with
    /// `work.receipts`) instead of verifying them; [`Replay::verify_sequential`] checks
    /// them.
    pub fn outputs(
        &mut self,
        replay: &Replay,
    ) -> (RunTimings, Result<SequentialOutputs, ExecError>) {
        let work = self.work;
        // The tries are opened before the window (once per replay); a dump without a
        // witness cannot compute roots: an error at the first block, as the replay's.
        let mut roots = match work.state_root {
            StateRootPhase::Off => None,
            _ => match replay.root_inputs() {
                Ok(inputs) => Some(crate::root::SequentialRoots::new(replay, inputs)),
                Err(e) => {
                    let block = replay.blocks.first().map_or(0, |b| b.header.number);
                    return (
                        RunTimings::default(),
                        Err(ExecError {
                            block,
                            item: crate::ItemKind::PreBlock,
                            failure: crate::ExecFailure::NoRoot(e),
                        }),
                    );
                }
            },
        };
        let (mut timings, outputs) = match self.source.as_deref_mut() {
            None => replay.sequential_timed(work, |replay, on_tx| {
                replay.execute_sequential_rooted(work, roots.as_mut(), on_tx)
            }),
            Some(source) => replay.sequential_timed(work, |replay, on_tx| {
                // A store run reads the tries' nodes from the store, inside the window.
                if let Some(roots) = roots.as_mut() {
                    roots.read_from(replay, &mut *source)?;
                }
                replay.execute_sequential_on_rooted(work, source, roots.as_mut(), on_tx)
            }),
        };
        let outputs = outputs.map(|mut o| {
            if let Some(roots) = roots {
                // The loop's root time, for the rows (execution is the rest of the window).
                timings.root.root_ns = roots.root_ns;
                timings.root.read_ns = roots.read_ns;
                timings.root.root_busy_ns = roots.root_ns;
                timings.root.exec_ns = timings.wall_ns.saturating_sub(roots.root_ns);
                timings.root.blocks = roots
                    .roots
                    .iter()
                    .filter(|r| matches!(r, Some(Ok(_))))
                    .count();
                o.roots = roots.roots;
            }
            o
        });
        (timings, outputs)
    }
}

impl<S: StateSource + ?Sized> Runner for Sequential<'_, S> {
    fn run(&mut self, replay: &Replay, verify: bool) -> Result<RunTimings, crate::Divergence> {
        let (timings, outputs) = self.outputs(replay);
        let outputs = outputs.map_err(crate::Divergence::from)?;
        if verify {
            replay.verify_sequential(&outputs)?;
        }
        Ok(timings)
    }
}

impl Replay {
    /// One pass: the timed window, each batch's outputs handed to `sink`; with the
    /// state-root phase on and `check_roots`, every computed root checked against its
    /// header after the window.
    fn run_with_sink<S: StateSource>(
        &self,
        config: &RunConfig,
        io: Option<PassIo<'_, S>>,
        check_roots: bool,
        sink: &mut BatchSink<'_>,
    ) -> (RunTimings, Result<(), crate::Divergence>) {
        let epoch = OnceLock::new();
        // The tries are opened on the first pass that computes roots, here: never inside
        // a timed window. Each pass works on its own copy.
        let root_pass = match config.work.state_root {
            StateRootPhase::Off => None,
            phase => match self.root_inputs() {
                Ok(inputs) => Some(RootPass::new(self, inputs, phase, &epoch)),
                Err(e) => return (RunTimings::default(), Err(self.no_root(e))),
            },
        };
        if io.is_some() && !self.blocks.is_empty() {
            // Built on a source's first pass, here: never inside a timed window.
            let _ = self.carried(0);
        }
        // The pass's bases, chosen once; what they borrow lives in this frame.
        let (slot, cursor, pass, views, io_state);
        let bases = match io {
            None => match self.resident_bases() {
                Some(bases) => Bases::Resident(bases),
                None => {
                    slot = RwLock::new(BatchBases::default());
                    cursor = Mutex::new(crate::BaseCursor::new(self));
                    Bases::PerBatch {
                        slot: &slot,
                        cursor: &cursor,
                    }
                }
            },
            Some(PassIo {
                readers,
                mode: IoMode::OnDemand,
            }) => {
                pass = OnDemandPass::new(readers);
                views = (0..self.blocks.len())
                    .map(|b| OnDemand::new(&pass, self, b))
                    .collect::<Vec<_>>();
                Bases::OnDemand {
                    pass: &pass,
                    views: &views,
                }
            }
            Some(PassIo { readers, mode }) => {
                let design = config.work.state.design().unwrap_or_default();
                // Laid out (and, for `full`, encoded) on a source's first pass, here:
                // never inside a timed window. Each pass fills its own copy.
                if design == BalDesign::Full {
                    self.full_lists();
                }
                let blanks = (0..self.blocks.len()).map(|b| Some(self.blank_base(b)));
                pass = OnDemandPass::new(readers);
                views = if design == BalDesign::Writes {
                    (0..self.blocks.len())
                        .map(|b| OnDemand::new(&pass, self, b))
                        .collect::<Vec<_>>()
                } else {
                    Vec::new()
                };
                io_state = IoState {
                    bases: (0..self.blocks.len()).map(|_| OnceLock::new()).collect(),
                    blanks: Mutex::new(blanks.collect()),
                    pass: &pass,
                    design,
                    views: (design == BalDesign::Writes).then_some(&views[..]),
                    pipelined: mode == IoMode::Pipelined,
                    timings: Mutex::new(IoTimings::default()),
                    spans: Mutex::new(Vec::new()),
                };
                Bases::Read(&io_state)
            }
        };
        let threads = config.threads.get();
        let batches = self.batches(config.batch);
        let cursors: Vec<CachePadded<AtomicUsize>> = batches
            .iter()
            .map(|_| CachePadded::new(AtomicUsize::new(0)))
            .collect();
        let orders = OnceLock::new();
        // The calling thread coordinates, and works as the last worker unless it reads the
        // next batch's state during each batch (pipelined): one thread fewer for the kernel
        // to place, so no worker waits behind the coordinator for a core at a batch's start.
        let helps = threads > 1 && !bases.pipelined();
        let pool_threads = threads - usize::from(helps);
        let barrier = SpinBarrier::new(pool_threads + 1);
        let worker_spin = if threads <= cores() {
            Spin(WORKER_SPIN)
        } else {
            Spin::NONE
        };
        let handed = Mutex::new(Vec::new());
        // One slot per worker, the helping coordinator's included (none on one thread: the
        // calling thread made and drops everything itself).
        let returned: Vec<Returned> = (0..if threads > 1 { threads } else { 0 })
            .map(|_| Mutex::new(Vec::new()))
            .collect();
        let stop = AtomicBool::new(false);
        let scheduler = scheduler(config.scheduler);
        let shared = Shared {
            replay: self,
            config,
            batches: &batches,
            cursors: &cursors,
            orders: &orders,
            barrier: &barrier,
            worker_spin,
            handed: &handed,
            returned: &returned,
            stop: &stop,
            epoch: &epoch,
            bases,
            root: root_pass.as_ref(),
        };

        let (mut timings, result) = if threads == 1 {
            shared.single(scheduler, sink)
        } else {
            // The workers are the threads of a pool kept across passes (`crate::pool`):
            // one broadcast job each, while the coordinator runs on the calling thread (as
            // the last worker when it helps). A pool that cannot start is the machine's
            // failure, as a spawn's was before.
            let pool_size = std::num::NonZeroUsize::new(pool_threads).expect("two threads or more");
            let pool = crate::pool::workers(pool_size).unwrap_or_else(|e| panic!("{e}"));
            let busy: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
            let helper = helps.then_some(pool_threads as u32);
            let (mut timings, result, own) = pool.in_place_scope(|scope| {
                let (shared, busy) = (&shared, &busy);
                scope.spawn_broadcast(move |_, ctx| {
                    let ns = shared.worker(ctx.index() as u32);
                    busy[ctx.index()].store(ns, Ordering::Relaxed);
                });
                shared.coordinate(scheduler, sink, helper)
            });
            if helps {
                busy[pool_threads].store(own, Ordering::Relaxed);
            }
            timings.worker_busy_ns = busy.into_iter().map(AtomicU64::into_inner).collect();
            (timings, result)
        };
        match bases {
            Bases::Read(io) => {
                timings.io = *io
                    .timings
                    .lock()
                    .expect("no reader panics holding the lock");
                // With `writes`, what was read on demand, while a transaction waited.
                let on_demand = io.pass.read_ns();
                timings.io.read_ns += on_demand;
                timings.io.exposed_ns += on_demand;
                timings.read_spans = std::mem::take(
                    &mut *io.spans.lock().expect("no reader panics holding the lock"),
                );
            }
            Bases::OnDemand { pass, .. } => {
                // Every read is made while a transaction waits for it.
                let read_ns = pass.read_ns();
                timings.io = IoTimings {
                    read_ns,
                    build_ns: 0,
                    exposed_ns: read_ns,
                };
            }
            Bases::Resident(_) | Bases::PerBatch { .. } => {}
        }
        timings.batches = batches;
        let mut result = result;
        if let Some(root) = &root_pass {
            root.take(&mut timings.root);
            if check_roots && result.is_ok() {
                result = root.check();
            }
        }
        (timings, result)
    }

    /// The divergence of a pass whose root phase cannot start, at the first block.
    pub(crate) fn no_root(&self, e: crate::root::RootSetupError) -> crate::Divergence {
        crate::Divergence {
            block: self.blocks.first().map_or(0, |b| b.header.number),
            item: crate::ItemKind::PreBlock,
            address: None,
            mismatch: Box::new(crate::Mismatch::NoRoot(e)),
        }
    }

    /// Time the sequential loop `run` (the in-memory or the on-demand one).
    fn sequential_timed(
        &self,
        work: TimedWork,
        run: impl FnOnce(&Self, &mut dyn FnMut(SequentialTx)) -> Result<(), ExecError>,
    ) -> (RunTimings, Result<SequentialOutputs, ExecError>) {
        let mut item_ns = vec![0u64; self.items.len()];
        let mut txs = Vec::with_capacity(self.transaction_count());
        let mut receipts = Vec::with_capacity(if work.receipts { txs.capacity() } else { 0 });
        let mut window = crate::window::Window::new();
        window.open();
        let start = Instant::now();
        let r = run(self, &mut |done: SequentialTx| {
            item_ns[self.block_items(done.block).start + 1 + done.tx] = done.nanos;
            txs.push(done.result);
            receipts.extend(done.receipt);
        });
        let wall_ns = start.elapsed().as_nanos() as u64;
        let cpu = window.finish();
        let batches = self.batches(1);
        let timings = RunTimings {
            wall_ns,
            batch_wall_ns: Vec::new(),
            worker_busy_ns: vec![wall_ns],
            item_ns,
            batches,
            cpu,
            ..Default::default()
        };
        (
            timings,
            r.map(|()| SequentialOutputs {
                txs,
                receipts,
                roots: Vec::new(),
            }),
        )
    }
}
