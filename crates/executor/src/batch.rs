//! The batch loop: one timed window over a set-up [`Pass`], batch after batch, on the
//! calling thread (the coordinator) and the pass's workers (none on one thread, where the
//! calling thread is the only worker). Each batch is one owned value ([`Batch`]), staged
//! between batches, handed to the workers at the barrier and taken back the same way;
//! outputs come back in each worker's own slot. Besides the claim cursor, the barrier is
//! the only synchronisation a batch needs (the protocol is on [`Crew`]).

use crate::{
    barrier::{Baton, Spin, SpinBarrier},
    exec::{ExecError, ItemExecutor, ItemOutput},
    pass::{Batch, BlockState, Cursors, Pass, PassError, ReadFailure},
    replay::Blocks,
    root::{RootOut, RootRecord},
    source::StateSource,
    verify::Divergence,
    window::Window,
};
use crossbeam_utils::CachePadded;
use gigagas_grid::schedule::{BatchOrder, scheduler};
use std::{
    ops::Range,
    panic::AssertUnwindSafe,
    sync::{
        OnceLock,
        atomic::{AtomicBool, AtomicUsize, Ordering},
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

/// What happens to each batch's outputs once the batch has ended, outside the timed
/// window: collected for the caller ([`crate::Parallel::outputs`], which drains them) or
/// verified ([`crate::Runner::run`], which leaves them), so a pass holds one batch's
/// outputs at most. `outputs[k]` is item `range.start + k`'s. What the sink leaves is
/// dropped by the workers that made it.
pub(crate) type BatchSink<'s> = dyn FnMut(
        Range<usize>,
        &mut Vec<Result<ItemOutput, ExecError>>,
        &Blocks<'_>,
    ) -> Result<(), Divergence>
    + 's;

/// One item a worker ran: its index, when it started, how long it took, its output.
struct Done {
    index: u32,
    start: Instant,
    ns: u64,
    output: Result<ItemOutput, ExecError>,
}

/// What one worker hands over after each batch, and is handed back to drop.
#[derive(Default)]
struct WorkerSlot {
    /// The items it ran in the batch, in the order it ran them.
    done: Vec<Done>,
    /// Its root units' results and spans in the batch.
    roots: RootOut,
    /// The outputs it made that the sink left, to drop on its own thread.
    returned: Vec<Result<ItemOutput, ExecError>>,
    /// Its busy time over the pass.
    busy_ns: u64,
    /// Read beside execution: how long it waited in the batch for its items' blocks to be
    /// read.
    wait_ns: u64,
    /// Why it stopped, when it panicked.
    panic: Option<String>,
}

/// The coordinator and the workers of one pass, and what they share.
///
/// # Barrier protocol
///
/// The calling thread coordinates and, unless it reads the next batch's state during each
/// batch (pipelined), is also the last of the `threads` workers (the *helper*): the pool
/// then lends `threads - 1` (none on one thread), one job each, each on a thread of its
/// own. One [`SpinBarrier`] of those workers and the coordinator, and one [`Baton`] for the
/// batch and one per worker for its slot:
/// 1. *ready*: every worker has taken its job; the coordinator starts the clock after it
///    and computes every batch's order (inside the window: a scheduler's cost is part of
///    what is measured);
/// 2. then per batch: *go* — the coordinator has staged the batch (outside the window),
///    read its state when the pass reads before each batch, reset the claim cursor and put
///    the batch in its baton. From *go* every thread reads the batch, and each worker owns
///    its slot: it takes chunks of the batch's order from the cursor until it runs past the
///    last (and, with the root phase, runs root units), recording its items in its slot;
///    *handed* — every worker has dropped its borrows of the batch: the coordinator owns
///    the batch and every slot again. It takes the outputs, the batch's wall time (from its
///    start to the end of its last item or root unit: no wake-up is in it), closes the
///    window, hands the outputs to the [`BatchSink`], and puts what the sink left in the
///    slot of the worker that made it; *returned* — each worker owns its slot and drops
///    what it was handed (so each worker's allocations are freed by the thread that made
///    them, not in the next window through the allocator's cross-thread lists);
///    *dropped* — the coordinator owns the slots again, drops the batch and stages the
///    next.
///
/// A divergence or a failed read sets `stop`, and everyone leaves after the next *go*. A
/// thread that panics breaks the barrier: every wait returns at once, every thread
/// leaves without touching a baton, and the pass ends with the panic's message.
///
/// Workers busy-wait at the barrier for up to [`WORKER_SPIN`] when each has a core of its
/// own, so a release reaches them without a kernel wake-up inside the timed window; a
/// helping coordinator waits as they do from *go* to *dropped*, and otherwise sleeps (its
/// wait spans the batch, where a core is a worker's).
struct Crew<'c, 'r, 's, S> {
    pass: &'c Pass<'r, 's, S>,
    barrier: SpinBarrier,
    /// How long the workers busy-wait at the barrier.
    worker_spin: Spin,
    /// The next chunk of the running batch's order to hand out (its own cache line, so a
    /// claim moves no line but the cursor's).
    cursor: CachePadded<AtomicUsize>,
    /// Set by the coordinator: the pass ends at the next *go*.
    stop: AtomicBool,
    /// The running batch.
    batch: Baton<Option<Batch<'r, 'c, 's, S>>>,
    /// One per worker, the helping coordinator's last.
    slots: Vec<CachePadded<Baton<WorkerSlot>>>,
    /// Whether the roots computed are checked against the headers after the window.
    check_roots: bool,
}

/// What the coordinator keeps across a pass: its own, never shared.
struct Coordinator<'c, 'r, 's, S> {
    /// The cursors batches are staged with.
    cursors: Cursors<'r>,
    /// Pipelined: the next batch, staged before this one ran and read while it runs.
    next: Option<Batch<'r, 'c, 's, S>>,
    timings: crate::RunTimings,
    /// Each batch's scheduler order, taken by the batch when it is staged.
    orders: Vec<BatchOrder>,
    /// The roots computed so far and their spans.
    roots: RootRecord,
    /// When the timed window opened.
    epoch: Instant,
}

impl<'c, 'r, 's, S: StateSource> Crew<'c, 'r, 's, S> {
    /// The worker count, the helping coordinator's included.
    fn threads(&self) -> usize {
        self.pass.config.threads.get()
    }

    /// One pool worker: the protocol's worker side, over every batch.
    fn worker(&self, id: usize) {
        let spin = self.worker_spin;
        self.reserve(id);
        if !self.wait(spin) {
            return; // ready
        }
        // SAFETY (every baton access below): the protocol on `Crew` — the worker owns
        // its slot from *go* to *handed* and from *returned* to *dropped*, and reads the
        // batch from *go* to *handed*; a broken barrier ends the loop before any access.
        for _ in &self.pass.batches {
            if !self.wait(spin) || self.stop.load(Ordering::Relaxed) {
                return; // go
            }
            let (batch, slot) = unsafe { (self.batch.get(), self.slots[id].get_mut()) };
            let batch = batch.as_ref().expect("a batch is put before its go");
            slot.busy_ns += self.work(batch, slot);
            if !self.wait(spin) || !self.wait(spin) {
                return; // handed, returned
            }
            drop(std::mem::take(unsafe {
                &mut self.slots[id].get_mut().returned
            }));
            if !self.wait(spin) {
                return; // dropped
            }
        }
    }

    /// Before *ready*, on worker `id`'s own thread: room in its slot for the largest batch,
    /// so recording an item never reallocates inside the window.
    fn reserve(&self, id: usize) {
        let largest = self.pass.batches.iter().map(|r| r.len()).max();
        // SAFETY: before *ready* each worker owns its slot (the coordinator first touches
        // one after *handed*).
        unsafe { self.slots[id].get_mut() }
            .done
            .reserve(largest.unwrap_or(0));
    }

    /// Wait at the barrier; `false` when it is broken (a thread panicked: leave).
    fn wait(&self, spin: Spin) -> bool {
        self.barrier.wait(spin);
        !self.barrier.is_broken()
    }

    /// A worker's share of `batch`: chunks of its order from the cursor until none is
    /// left (with the root phase, its units too), recorded in `slot`. Returns the busy
    /// time.
    fn work(&self, batch: &Batch<'r, 'c, 's, S>, slot: &mut WorkerSlot) -> u64 {
        let mut busy = 0;
        let replay = self.pass.replay;
        let work = self.pass.config.work;
        let root = self.pass.root.as_ref();
        let overlapped = root.filter(|r| r.overlapped());
        // On a store pass, the root units read their trie nodes from the pass's readers.
        let nodes = self.pass.store().map(|store| &store.sources);
        // One EVM per block the worker meets, over the batch's states.
        let mut executor: ItemExecutor<'_, BlockState<'r, 'c, 's, S>> = ItemExecutor::new();
        loop {
            let c = self.cursor.fetch_add(1, Ordering::Relaxed);
            let Some(chunk) = batch.order.chunk(c) else {
                break;
            };
            for &pos in chunk {
                if let Some(root) = overlapped {
                    busy += root.help_while_ready(&batch.blocks, &mut slot.roots, nodes);
                }
                let index = batch.items.start + pos as usize;
                let item = &replay.items()[index];
                let b = item.block as usize;
                if let Some(progress) = &batch.beside {
                    // The item's accounts, slots and code are in once its block is read.
                    slot.wait_ns += progress.wait(b - batch.blocks.range().start);
                }
                let start = Instant::now();
                let output = replay.execute_item(
                    &mut executor,
                    batch.blocks.get(b),
                    item,
                    work,
                    batch.state(b),
                );
                let ns = start.elapsed().as_nanos() as u64;
                busy += ns;
                slot.done.push(Done {
                    index: index as u32,
                    start,
                    ns,
                    output,
                });
            }
        }
        if let Some(root) = root {
            root.executed();
            let abandoned = || self.barrier.is_broken();
            busy += root.help_until_done(&batch.blocks, &mut slot.roots, nodes, abandoned);
        }
        busy
    }

    /// Between batches, before batch `k` (outside the window): the batch staged (taken
    /// from the pipelined read when it staged it), and, pipelined, the next one staged
    /// for its read during this one.
    fn prepare(
        &'c self,
        k: usize,
        own: &mut Coordinator<'c, 'r, 's, S>,
    ) -> Result<Batch<'r, 'c, 's, S>, PassError> {
        let mut batch = match own.next.take() {
            Some(batch) if batch.index == k => batch,
            _ => self
                .pass
                .stage(k, &mut own.cursors)
                .map_err(PassError::Blocks)?,
        };
        if self.pass.pipelined() && k + 1 < self.pass.batches.len() {
            own.next = Some(
                self.pass
                    .stage(k + 1, &mut own.cursors)
                    .map_err(PassError::Blocks)?,
            );
        }
        batch.order = std::mem::take(&mut own.orders[k]);
        Ok(batch)
    }

    /// Read `batch`'s state from the store (when the pass reads before each batch and it
    /// is still unread), recording it; returns the time it took.
    fn read(
        &self,
        batch: &mut Batch<'r, 'c, 's, S>,
        own: &mut Coordinator<'c, 'r, 's, S>,
    ) -> Result<u64, PassError> {
        if !batch.unread {
            return Ok(0);
        }
        let start = Instant::now();
        let read = self.pass.read(batch).map_err(|source| {
            PassError::Read(ReadFailure {
                block: self.pass.replay.header(batch.blocks.range().start).number,
                item: self.pass.replay.items()[batch.items.start].kind,
                source,
            })
        })?;
        let ns = start.elapsed().as_nanos() as u64;
        let t = &mut own.timings;
        t.io.read_ns += read.read_ns;
        t.io.build_ns += read.build_ns;
        t.read_spans.push((
            start.saturating_duration_since(own.epoch).as_nanos() as u64,
            ns,
        ));
        t.read_faults.push(read.major_faults);
        Ok(ns)
    }

    /// The coordinator's side of the protocol: the timed window (ordering and every
    /// batch's wall time), reading, and the sink between batches. With `helper`, the
    /// coordinator is also the last worker.
    fn coordinate(
        &'c self,
        sink: &mut BatchSink<'_>,
        helper: bool,
    ) -> (crate::RunTimings, Result<(), PassError>) {
        let pass = self.pass;
        let mut own = Coordinator {
            cursors: pass.cursors(),
            next: None,
            timings: crate::RunTimings::sized(pass.replay.items().len(), pass.batches.len()),
            orders: Vec::new(),
            roots: RootRecord::new(pass.replay.block_count()),
            epoch: Instant::now(),
        };
        // Between *go* and *dropped* a helping coordinator waits like a worker.
        let spin = if helper { self.worker_spin } else { Spin::NONE };
        if helper {
            self.reserve(self.slots.len() - 1);
        }
        if !self.wait(Spin::NONE) {
            return (own.timings, Err(PassError::Panicked(String::new()))); // ready
        }
        let mut window = Window::new();
        window.open();
        own.epoch = Instant::now();
        let mut result = Ok(());
        let scheduler = scheduler(pass.config.scheduler);
        own.orders = pass
            .batches
            .iter()
            .map(|items| {
                BatchOrder::new(&pass.replay.items()[items.clone()], scheduler, pass.config)
            })
            .collect();
        own.timings.wall_ns = own.epoch.elapsed().as_nanos() as u64;
        for k in 0..pass.batches.len() {
            window.close();
            // After a failure nothing more is staged: the next *go* only lets everyone leave.
            let staged = result.is_ok().then(|| self.prepare(k, &mut own));
            window.open();
            let start = Instant::now();
            own.timings
                .batch_start_ns
                .push(start.duration_since(own.epoch).as_nanos() as u64);
            match staged {
                Some(Ok(mut batch)) => {
                    // The batch's state, read now unless the previous batch's pipelined read
                    // did.
                    match self.read(&mut batch, &mut own) {
                        Ok(ns) => {
                            own.timings.io.exposed_ns += ns;
                            own.timings.batch_read_exposed_ns.push(ns);
                        }
                        Err(e) => result = Err(e),
                    }
                    if result.is_ok() && pass.beside() {
                        result = self.start_beside(&mut batch, &own);
                    }
                    if let (Some(root), Ok(())) = (&pass.root, &result) {
                        root.begin_batch(batch.blocks.range(), self.threads());
                    }
                    self.cursor.store(0, Ordering::Relaxed);
                    // SAFETY: the coordinator owns the batch's baton until *go*.
                    unsafe { *self.batch.get_mut() = Some(batch) };
                }
                Some(Err(e)) => result = Err(e),
                None => {}
            }
            self.stop.store(result.is_err(), Ordering::Relaxed);
            if !self.wait(Spin::NONE) || result.is_err() {
                break; // go
            }
            result = self.run_batch(start, helper, spin, sink, &mut own, &mut window);
            if self.barrier.is_broken() {
                break;
            }
        }
        own.timings.cpu = window.finish();
        let stopped = self.barrier.is_broken();
        let mut timings = own.timings;
        if let Some(root) = &pass.root {
            own.roots.finish(&mut timings.root);
            if result.is_ok() && !stopped && self.check_roots {
                result = root.check(&own.roots).map_err(PassError::from);
            }
        }
        (timings, result)
    }

    /// The running batch from its *go* (at `start`) to its *dropped*: the pipelined read of the
    /// next batch, the helper's share, then the hand-over, the sink and the drop.
    fn run_batch(
        &'c self,
        start: Instant,
        helper: bool,
        spin: Spin,
        sink: &mut BatchSink<'_>,
        own: &mut Coordinator<'c, 'r, 's, S>,
        window: &mut Window,
    ) -> Result<(), PassError> {
        // Pipelined: the coordinator reads the next batch's state while this one runs.
        let mut read_end = None;
        let mut pending = Ok(());
        if let Some(mut next) = own.next.take() {
            pending = self
                .read(&mut next, own)
                .map(|_| read_end = Some(Instant::now()));
            own.next = Some(next);
        }
        let helper_id = self.slots.len() - 1;
        let help = || {
            if helper {
                // SAFETY: the batch is read by everyone and the helper's slot is its own
                // from *go* to *handed*.
                let (batch, slot) = unsafe { (self.batch.get(), self.slots[helper_id].get_mut()) };
                let batch = batch.as_ref().expect("put before its go");
                slot.busy_ns += self.work(batch, slot);
            }
        };
        // SAFETY: from *go* to *handed* every thread reads the batch.
        let running = unsafe { self.batch.get() }.as_ref();
        match (
            running.and_then(|b| Some((b, b.beside.as_ref()?))),
            &self.pass.readers,
        ) {
            (Some((batch, progress)), Some(readers)) => {
                let faults = self.read_beside(batch, progress, readers, help);
                read_end = Some(own.epoch + Duration::from_nanos(progress.done_ns()));
                own.timings.read_faults.push(faults);
            }
            _ => help(),
        }
        if !self.wait(spin) {
            return Err(PassError::Panicked(String::new())); // handed
        }
        // SAFETY: from *handed* to *returned* the coordinator owns the batch and the slots.
        let batch = unsafe { self.batch.get_mut() }
            .take()
            .expect("put before its go");
        let mut slots: Vec<&mut WorkerSlot> =
            self.slots.iter().map(|s| unsafe { s.get_mut() }).collect();
        self.batch_time(&mut slots, own, start, read_end);
        window.close();
        let failed = self.finish_beside(&batch, own, start);
        let mut outputs = self.collect(&batch, &mut slots, own);
        let result = sink(batch.items.clone(), &mut outputs, &batch.blocks);
        self.hand_back(&batch.items, outputs, &own.timings, &mut slots);
        drop(slots);
        if !self.wait(spin) {
            return Err(PassError::Panicked(String::new())); // returned
        }
        if helper && self.pass.workers.is_some() {
            // SAFETY: the helper owns its slot from *returned* to *dropped*.
            drop(std::mem::take(unsafe {
                &mut self.slots[helper_id].get_mut().returned
            }));
        }
        if !self.wait(spin) {
            return Err(PassError::Panicked(String::new())); // dropped
        }
        drop(batch);
        // A failed read beside execution left its block's items without values: the read's
        // failure is what the pass reports.
        failed.map_or(Ok(()), Err)?;
        result.map_err(PassError::from).and(pending)
    }

    /// At *go* (inside the window), a batch read beside execution: the order its blocks
    /// are read in, from its schedule, nothing read yet. A pass without readers cannot
    /// read it.
    fn start_beside(
        &self,
        batch: &mut Batch<'r, 'c, 's, S>,
        own: &Coordinator<'c, 'r, 's, S>,
    ) -> Result<(), PassError> {
        let replay = self.pass.replay;
        let range = batch.blocks.range();
        if self.pass.readers.is_none() {
            return Err(PassError::Read(ReadFailure {
                block: replay.header(range.start).number,
                item: replay.items()[batch.items.start].kind,
                source: crate::prestate::StateError::NoReader,
            }));
        }
        let first_item = batch.items.start;
        let order = crate::beside::read_order(&batch.order, range.len(), range.start, |pos| {
            replay.items()[first_item + pos as usize].block as usize
        });
        batch.beside = Some(crate::beside::Progress::new(order, own.epoch));
        Ok(())
    }

    /// Read `batch` beside its execution: one job per reader on the pass's reader threads,
    /// `help` (the helping coordinator's share of the items) on the calling thread
    /// meanwhile. Returns the device reads the readers made (their threads' major faults).
    fn read_beside(
        &self,
        batch: &Batch<'r, 'c, 's, S>,
        progress: &crate::beside::Progress,
        readers: &rayon::ThreadPool,
        help: impl FnOnce(),
    ) -> u64 {
        let count = self.pass.store().map_or(0, |s| s.sources.reader_count());
        let mut faults = vec![0u64; count];
        let mut panicked = vec![None; count];
        readers.in_place_scope(|scope| {
            for (reader, (faults, panicked)) in faults.iter_mut().zip(&mut panicked).enumerate() {
                scope.spawn(move |_| {
                    let before = crate::window::thread_major_faults();
                    let read = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        self.reader_job(batch, progress, reader)
                    }));
                    if let Err(panic) = read {
                        // No block is waited for any more; the pass ends with the panic.
                        progress.abandon();
                        *panicked = Some(panic_message(&*panic));
                    }
                    progress.reader_done();
                    *faults = crate::window::thread_major_faults().saturating_sub(before);
                });
            }
            help();
        });
        if let Some(message) = panicked.into_iter().flatten().next() {
            panic!("a reader panicked: {message}");
        }
        faults.iter().sum()
    }

    /// Reader `reader`'s share of a read beside execution: the next block of the read order
    /// until none is left, each read into the batch's tables and published; then, on a pass
    /// that computes roots, the trie paths of what each block changes, claimed the same way.
    fn reader_job(
        &self,
        batch: &Batch<'r, 'c, 's, S>,
        progress: &crate::beside::Progress,
        reader: usize,
    ) {
        let Some(store) = self.pass.store() else {
            return;
        };
        // The codes this reader read for the batch (one read per code, however many blocks).
        let mut codes = rustc_hash::FxHashMap::default();
        while let Some(i) = progress.claim() {
            let mut source = store.sources.lock(reader);
            // SAFETY: block `i` was claimed just now, by this reader alone, and is
            // published only below.
            let read = unsafe { self.pass.read_claimed(batch, i, &mut source, &mut codes) };
            drop(source);
            progress.publish(i, read.err());
        }
        if self.pass.root.is_none() {
            return;
        }
        while let Some(i) = progress.claim_paths() {
            let b = batch.blocks.range().start + i;
            let mut source = store.sources.lock(reader);
            let read = self
                .pass
                .replay
                .read_block_paths((b, batch.blocks.get(b)), &mut **source);
            if let Err(e) = read {
                progress.fail(i, e);
            }
        }
    }

    /// After a batch read beside execution (outside the window): its read's span, when each
    /// block was read, and its first failed read.
    fn finish_beside(
        &self,
        batch: &Batch<'r, 'c, 's, S>,
        own: &mut Coordinator<'c, 'r, 's, S>,
        start: Instant,
    ) -> Option<PassError> {
        let progress = batch.beside.as_ref()?;
        let t = &mut own.timings;
        let start_ns = start.duration_since(own.epoch).as_nanos() as u64;
        let first = batch.blocks.range().start;
        let end = progress.done_ns().max(start_ns);
        t.block_ready_ns.resize(self.pass.replay.block_count(), 0);
        for (i, ready) in progress.ready_ns().enumerate() {
            t.block_ready_ns[first + i] = ready;
        }
        t.io.read_ns += end - start_ns;
        t.read_spans.push((start_ns, end - start_ns));
        let (i, source) = progress.take_failure()?;
        let replay = self.pass.replay;
        Some(PassError::Read(ReadFailure {
            block: replay.header(first + i).number,
            item: replay.items()[batch.items.start].kind,
            source,
        }))
    }

    /// Inside the window, right after *handed*: the batch's wall time (from `start` to the
    /// end of its last item, or of its last root unit; pipelined, no sooner than the next
    /// batch's read ended at `read_end`, the excess charged as exposed), recorded.
    fn batch_time(
        &self,
        slots: &mut [&mut WorkerSlot],
        own: &mut Coordinator<'c, 'r, 's, S>,
        start: Instant,
        read_end: Option<Instant>,
    ) {
        let end = slots
            .iter()
            .flat_map(|slot| &slot.done)
            .map(|d| d.start + Duration::from_nanos(d.ns))
            .fold(start, Instant::max);
        let t = &mut own.timings;
        let start_ns = start.duration_since(own.epoch).as_nanos() as u64;
        let exec_ns = end.duration_since(start).as_nanos() as u64;
        let mut ns = match &self.pass.root {
            Some(_) => {
                let span = RootRecord::batch_span(slots.iter().map(|s| &s.roots), own.epoch);
                crate::root::add_batch(&mut t.root, start_ns, start_ns + exec_ns, span) - start_ns
            }
            None => exec_ns,
        };
        // Read beside execution: what the read exposed is the longest any worker waited
        // for its items' blocks (its first item's wait and every later stall).
        let waited = slots
            .iter_mut()
            .map(|s| std::mem::take(&mut s.wait_ns))
            .max()
            .unwrap_or(0);
        let mut exposed = waited.min(ns);
        if let Some(read_end) = read_end {
            // Pipelined or beside: a read that outlasts the batch holds up the next one, so
            // the batch runs until it ends and the excess is charged as exposed.
            let read = read_end.saturating_duration_since(start).as_nanos() as u64;
            if read > ns {
                exposed += read - ns;
                ns = read;
            }
        }
        t.io.exposed_ns += exposed;
        match t.batch_read_exposed_ns.len() == t.batch_wall_ns.len() + 1 {
            true => *t.batch_read_exposed_ns.last_mut().expect("one per batch") += exposed,
            false => t.batch_read_exposed_ns.push(exposed),
        }
        t.batch_wall_ns.push(ns);
        t.wall_ns += ns;
    }

    /// The batch's outputs taken from the workers' slots, in item order, their times
    /// recorded (with the root phase, its units' results and spans too). Outside the window.
    fn collect(
        &self,
        batch: &Batch<'r, 'c, 's, S>,
        slots: &mut [&mut WorkerSlot],
        own: &mut Coordinator<'c, 'r, 's, S>,
    ) -> Vec<Result<ItemOutput, ExecError>> {
        let range = &batch.items;
        let t = &mut own.timings;
        let mut outputs: Vec<Option<Result<ItemOutput, ExecError>>> =
            (0..range.len()).map(|_| None).collect();
        for (worker, slot) in slots.iter_mut().enumerate() {
            for d in slot.done.drain(..) {
                let i = d.index as usize;
                t.item_ns[i] = d.ns;
                t.item_start_ns[i] = d.start.duration_since(own.epoch).as_nanos() as u64;
                t.item_worker[i] = worker as u32;
                outputs[i - range.start] = Some(d.output);
            }
            own.roots.add(worker as u32, &mut slot.roots, own.epoch);
        }
        outputs
            .into_iter()
            .map(|o| o.expect("every item of the batch ran exactly once"))
            .collect()
    }

    /// What the sink left, back to the workers that made it, to be dropped there (by the
    /// coordinator itself when it is the only worker).
    fn hand_back(
        &self,
        range: &Range<usize>,
        outputs: Vec<Result<ItemOutput, ExecError>>,
        timings: &crate::RunTimings,
        slots: &mut [&mut WorkerSlot],
    ) {
        if self.pass.workers.is_none() {
            return;
        }
        for (k, output) in outputs.into_iter().enumerate() {
            let worker = timings.item_worker[range.start + k] as usize;
            slots[worker].returned.push(output);
        }
    }
}

/// The message a panic carried.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with no message".into())
}

/// Run a set-up pass: its timed window, each batch's outputs handed to `sink` between
/// batches. The calling thread coordinates (and works, unless it reads pipelined); the
/// pass's pool lends the other workers, one job each. A thread that panics ends the pass
/// with [`PassError::Panicked`].
pub(crate) fn run<S: StateSource>(
    pass: &Pass<'_, '_, S>,
    sink: &mut BatchSink<'_>,
    check_roots: bool,
) -> (crate::RunTimings, Result<(), PassError>) {
    let threads = pass.config.threads.get();
    let pool_threads = pass.pool_workers();
    let crew = Crew {
        pass,
        // The pool's workers and the coordinator.
        barrier: SpinBarrier::new(std::num::NonZeroUsize::MIN.saturating_add(pool_threads)),
        worker_spin: if threads <= cores() {
            Spin(WORKER_SPIN)
        } else {
            Spin::NONE
        },
        cursor: CachePadded::new(AtomicUsize::new(0)),
        stop: AtomicBool::new(false),
        batch: Baton::new(None),
        slots: (0..threads)
            .map(|_| CachePadded::new(Baton::new(WorkerSlot::default())))
            .collect(),
        check_roots,
    };
    let crew = &crew;
    // A thread that panics breaks the barrier, so no one waits for it; a worker leaves
    // its message in its slot, which it owns whenever it can panic (and which no other
    // thread touches after the break until the scope has ended).
    let coordinate = |sink: &mut BatchSink<'_>| {
        std::panic::catch_unwind(AssertUnwindSafe(|| crew.coordinate(sink, pass.helps)))
            .unwrap_or_else(|panic| {
                crew.barrier.break_all();
                let stop = PassError::Panicked(panic_message(&*panic));
                (crate::RunTimings::default(), Err(stop))
            })
    };
    let (mut timings, mut result) = match &pass.workers {
        None => coordinate(sink),
        // One job per worker, injected into the pool (which may be larger than the pass:
        // its other threads are not woken).
        Some(pool) => pool.in_place_scope(|scope| {
            for id in 0..pool_threads {
                scope.spawn(move |_| {
                    let worked = std::panic::catch_unwind(AssertUnwindSafe(|| crew.worker(id)));
                    if let Err(panic) = worked {
                        crew.barrier.break_all();
                        // SAFETY: see above.
                        unsafe { crew.slots[id].get_mut() }.panic = Some(panic_message(&*panic));
                    }
                });
            }
            coordinate(sink)
        }),
    };
    // Every thread has left: the slots are the caller's.
    timings.worker_busy_ns = crew
        .slots
        .iter()
        // SAFETY: the scope has ended; no other thread reaches the slots.
        .map(|slot| unsafe { slot.get_mut() })
        .map(|slot| {
            if let Some(message) = slot.panic.take() {
                result = Err(PassError::Panicked(message));
            }
            slot.busy_ns
        })
        .collect();
    (timings, result)
}
