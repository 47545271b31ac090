//! The batch loop: one timed window over a set-up [`Pass`], batch after batch, on the
//! calling thread and the pass's workers (none on one thread, where the calling thread is
//! the only worker). The coordinator's duties (opening and closing the window, reading the
//! next batch's state, queueing the root units, handing each batch's outputs to the sink)
//! are steps of the same loop whatever the thread count.

use crate::{
    barrier::{Spin, SpinBarrier},
    exec::{ExecError, ItemExecutor, ItemOutput},
    pass::{Bases, BatchBase, BatchViews, Pass, PassBlocks},
    replay::{Blocks, Replay},
    root::RootPass,
    run::RunTimings,
    source::{OnDemand, StateSource},
};
use crossbeam_utils::CachePadded;
use gigagas_grid::RunConfig;
use std::{
    sync::{
        Mutex, OnceLock,
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
pub(crate) type BatchSink<'s> = dyn FnMut(
        std::ops::Range<usize>,
        &mut Vec<Result<ItemOutput, ExecError>>,
        &Blocks<'_>,
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
/// then lends `threads - 1` (none on one thread). One [`SpinBarrier`] of those workers and
/// the coordinator:
/// 1. *ready*: every worker has taken its job (one per worker, each on a thread of its
///    own: a job blocks its thread at the barrier, so no thread takes two, and the pool's
///    other threads sleep on); the coordinator starts the clock after it and computes
///    every batch's
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
struct Shared<'r, 'b, 's, S> {
    replay: &'r Replay,
    /// The blocks of the batch that runs (and, pipelined, of the next), decoded between
    /// batches.
    blocks: &'r PassBlocks<'b>,
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
    /// The worker count, the helping coordinator's included.
    threads: usize,
    /// The threads that read beside the coordinator.
    readers: Option<&'r rayon::ThreadPool>,
}

impl<'s, S: StateSource> Shared<'_, '_, 's, S> {
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
        // The batch's bases (when built per batch) and blocks stay borrowed until it is
        // handed over; the EVMs over them live as long (one per block either way).
        let bases = self.bases.for_batch();
        let blocks = self.blocks.current();
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
                busy += self.execute_timed(
                    &mut executor,
                    &mut on_demand,
                    &bases,
                    &blocks,
                    index,
                    id,
                    done,
                );
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
        drop(blocks);
        self.handed
            .lock()
            .expect("no worker panics holding the lock")
            .append(done);
        busy
    }

    /// Drop the outputs worker `id` made, handed back to it after the sink (none when the
    /// calling thread is the only worker: the sink's leftovers are its own).
    fn drop_returned(&self, id: u32) {
        if let Some(slot) = self.returned.get(id as usize) {
            drop(std::mem::take(
                &mut *slot.lock().expect("no worker panics holding its outputs"),
            ));
        }
    }

    /// Read batch `b`'s state into the pass's bases (with a state source; nothing
    /// otherwise), `blocks` its blocks, recording the time it took; returns that time.
    fn prefetch(&self, b: usize, blocks: &Blocks<'_>) -> Result<u64, crate::Divergence> {
        let Bases::Read { io, .. } = self.bases else {
            return Ok(0);
        };
        let Some(range) = self.blocks_of(b) else {
            return Ok(0);
        };
        // The batch's blank tables, prepared between batches (taken by its one read).
        let Some(mut prepared) = io
            .prepared
            .lock()
            .expect("no reader panics holding the lock")[b]
            .take()
        else {
            return Ok(0);
        };
        let tables = std::mem::take(&mut prepared.tables);
        let start = Instant::now();
        let mut guards = io.pass.lock_all();
        let mut readers: Vec<&mut S> = guards.iter_mut().map(|g| &mut ***g).collect();
        let fetched = self
            .replay
            .read_tables(
                io.design,
                io.inputs(&prepared),
                blocks,
                tables,
                &mut readers,
                self.readers,
            )
            .map_err(|e| {
                crate::Divergence::from(ExecError {
                    block: self.replay.header(range.start).number,
                    item: self.replay.items[self.batches[b].start].kind,
                    failure: crate::ExecFailure::Read(e),
                })
            });
        drop(readers);
        drop(guards);
        let fetched = fetched?;
        // Handed to the workers before the next *go* (a pipelined read runs while they
        // hold this batch's).
        io.pending
            .lock()
            .expect("no reader panics holding the lock")
            .extend(fetched.bases);
        let ns = start.elapsed().as_nanos() as u64;
        // The batch's own layout (when laid out for it) is dropped between batches, not in
        // the window.
        io.spent
            .lock()
            .expect("no reader panics holding the lock")
            .push(prepared);
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

    /// The blocks batch `b`'s items belong to (`None` past the last batch or for an empty
    /// one).
    fn blocks_of(&self, b: usize) -> Option<std::ops::Range<usize>> {
        let range = self.batches.get(b).filter(|r| !r.is_empty())?;
        let items = &self.replay.items;
        Some(items[range.start].block as usize..items[range.end - 1].block as usize + 1)
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
        if let Bases::Read { io, .. } = self.bases {
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
        timings.root.read_ns = root.read_tries(&mut readers, self.readers)?;
        Ok(())
    }

    /// Queue batch `b`'s roots (with the root phase on) for `workers` workers.
    fn begin_root(&self, b: usize, workers: usize) {
        if let (Some(root), Some(blocks)) = (self.root, self.blocks_of(b)) {
            root.begin_batch(blocks, workers);
        }
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
    #[allow(clippy::too_many_arguments)]
    fn execute_timed<'r>(
        &self,
        executor: &mut ItemExecutor<'r>,
        on_demand: &mut ItemExecutor<'r, OnDemand<'r, 's, S>>,
        bases: &'r BatchBase<'_, 's, S>,
        blocks: &'r Blocks<'_>,
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
        let block = blocks.get(b);
        let output = match bases {
            BatchBase::OnDemand(views) => {
                let view: &'r OnDemand<'r, 's, S> = views.get(b);
                replay.execute_item_over(on_demand, block, item, self.config.work, view)
            }
            BatchBase::Read { bases, views } => {
                let base = bases[b]
                    .as_ref()
                    .expect("a batch's bases are read before its go");
                match views {
                    // What was not read before the batch is read on demand.
                    Some(views) => replay.execute_item_on_table(
                        on_demand,
                        block,
                        item,
                        self.config.work,
                        views.get(b),
                        base,
                    ),
                    None => replay.execute_item_on(executor, block, item, self.config.work, base),
                }
            }
            BatchBase::Resident(bases) => {
                replay.execute_item_on(executor, block, item, self.config.work, &bases[b])
            }
            BatchBase::Built(batch) => {
                replay.execute_item_on(executor, block, item, self.config.work, batch.get(b))
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
        let result = sink(range.clone(), &mut outputs, &self.blocks.current());
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
}

impl<'r, 'b, 's, S: StateSource> Shared<'r, 'b, 's, S> {
    /// Between batches, before batch `b` (outside the window): its blocks (decoded, when
    /// the replay keeps none; pipelined, the next batch's too), its bases in memory, the
    /// bases of the blocks before it dropped, its read prepared (unless pipelined, where
    /// the batch before prepared it), its views, its roots' lists, and, pipelined, the
    /// next batch's read.
    fn prepare(&self, pass: &'r Pass<'_, 's, S>, b: usize) -> Result<(), crate::Divergence> {
        let Some(range) = self.blocks_of(b) else {
            return Ok(());
        };
        let unreadable = |e| self.replay.unreadable(range.start, e);
        let io = match self.bases {
            Bases::Read { io, .. } => Some(io),
            _ => None,
        };
        let pipelined = io.is_some_and(|io| io.pipelined);
        let next = self.blocks_of(b + 1).filter(|_| pipelined);
        self.blocks
            .advance(range.clone(), next)
            .map_err(|(at, e)| self.replay.unreadable(at, e))?;
        let blocks = self.blocks.current();
        pass.build_bases(&blocks).map_err(unreadable)?;
        if let Some(io) = io {
            io.retire(range.start);
            if !io.pipelined || b == 0 {
                pass.prepare_read(b, &blocks).map_err(unreadable)?;
            }
        }
        if let Some(views) = self.bases.views() {
            // The batch before's views (and what they carried) dropped first.
            let mut slot = views.write().expect("no thread panics holding the views");
            *slot = BatchViews::default();
            *slot = pass.views(&blocks).map_err(unreadable)?;
        }
        if let Some(root) = self.root {
            root.stage(&blocks);
        }
        if pipelined && let Some(next) = self.blocks_of(b + 1) {
            pass.prepare_read(b + 1, &self.blocks.next())
                .map_err(|e| self.replay.unreadable(next.start, e))?;
        }
        Ok(())
    }

    /// The coordinator's side of the protocol: the timed window (ordering and every
    /// batch's wall time), and the sink between batches.
    ///
    /// With `helper`, the coordinator is also the worker of that id: it takes chunks like
    /// the others between *go* and *handed*, and waits at the barriers as they do.
    /// Returns its busy time as a worker (0 without `helper`).
    fn coordinate(
        &self,
        pass: &'r Pass<'_, 's, S>,
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
        if let Some(root) = self.root {
            root.open(epoch);
        }
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
                self.threads,
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
            if let Err(e) = self.prepare(pass, b) {
                // Everyone leaves after the next *go*.
                result = Err(e);
                self.stop.store(true, Ordering::Relaxed);
            }
            window.open();
            let start = Instant::now();
            timings
                .batch_start_ns
                .push(start.duration_since(epoch).as_nanos() as u64);
            // The batch's state, read now unless the previous batch's pipelined read did.
            if (!pipelined || b == 0) && !self.stop.load(Ordering::Relaxed) {
                match self.prefetch(b, &self.blocks.current()) {
                    Ok(ns) => self.exposed(ns),
                    Err(e) => {
                        result = Err(e);
                        self.stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            if let Bases::Read { io, .. } = self.bases {
                // The bases read (now, or pipelined during the batch before) handed over.
                io.install();
            }
            self.begin_root(b, self.threads);
            self.barrier.wait(Spin::NONE); // 2. go
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            // Pipelined: the coordinator reads the next batch's state while this one runs.
            let mut read_end = None;
            if pipelined && b + 1 < self.batches.len() {
                match self.prefetch(b + 1, &self.blocks.next()) {
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

/// Run a set-up pass: its timed window, each batch's outputs handed to `sink` between
/// batches. The calling thread coordinates (and works, unless it reads pipelined); the
/// pass's pool lends the other workers, one job each.
pub(crate) fn run<S: StateSource>(
    pass: &Pass<'_, '_, S>,
    sink: &mut BatchSink<'_>,
) -> (RunTimings, Result<(), crate::Divergence>) {
    // Each batch's views of the sources, built between batches.
    let views = std::sync::RwLock::new(crate::pass::BatchViews::default());
    let bases = pass.bases(&views);
    let threads = pass.config.threads.get();
    let pool_threads = pass.pool_workers();
    let cursors: Vec<CachePadded<AtomicUsize>> = pass
        .batches
        .iter()
        .map(|_| CachePadded::new(AtomicUsize::new(0)))
        .collect();
    let (orders, epoch, handed) = (OnceLock::new(), OnceLock::new(), Mutex::new(Vec::new()));
    // The pool's workers and the coordinator.
    let barrier = SpinBarrier::new(std::num::NonZeroUsize::MIN.saturating_add(pool_threads));
    // One slot per worker, the helping coordinator's included (none when the calling
    // thread is the only worker: it made and drops everything itself).
    let returned: Vec<Returned> = (0..if pool_threads > 0 { threads } else { 0 })
        .map(|_| Mutex::new(Vec::new()))
        .collect();
    let (stop, next_id) = (AtomicBool::new(false), AtomicUsize::new(0));
    let shared = Shared {
        replay: pass.replay,
        blocks: &pass.blocks,
        config: pass.config,
        batches: &pass.batches,
        cursors: &cursors,
        orders: &orders,
        barrier: &barrier,
        worker_spin: if threads <= cores() {
            Spin(WORKER_SPIN)
        } else {
            Spin::NONE
        },
        handed: &handed,
        returned: &returned,
        stop: &stop,
        epoch: &epoch,
        bases,
        root: pass.root.as_ref(),
        threads,
        readers: pass.readers.as_deref(),
    };
    let scheduler = crate::schedule::scheduler(pass.config.scheduler);
    let helper = pass.helps.then_some(pool_threads as u32);
    let busy: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let (mut timings, result, own) = match &pass.workers {
        None => shared.coordinate(pass, scheduler, sink, helper),
        // One job per worker, injected into the pool (which may be larger than the pass:
        // its other threads are not woken).
        Some(pool) => pool.in_place_scope(|scope| {
            let (shared, busy, next_id) = (&shared, &busy, &next_id);
            for _ in 0..pool_threads {
                scope.spawn(move |_| {
                    let id = next_id.fetch_add(1, Ordering::Relaxed);
                    let ns = shared.worker(id as u32);
                    busy[id].store(ns, Ordering::Relaxed);
                });
            }
            shared.coordinate(pass, scheduler, sink, helper)
        }),
    };
    if pass.helps {
        busy[pool_threads].store(own, Ordering::Relaxed);
    }
    timings.worker_busy_ns = busy.into_iter().map(AtomicU64::into_inner).collect();
    (timings, result)
}
