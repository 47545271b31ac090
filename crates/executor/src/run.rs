//! The runners, one timed and verified pass each: [`Parallel`] (the BAL replay, set up as
//! a pass (module [`crate::pass`]) and run by the batch loop) and [`Sequential`] (the client loop).

use crate::{
    batch::BatchSink,
    exec::{
        ExecError, ItemOutput, SequentialClock, SequentialOutputs, SequentialStop, SequentialTx,
    },
    pass::{Pass, PassCache, PassError, RunTimings, SetupError},
    replay::{Replay, ReplayBlock},
    source::{BlockSink, NoSource, StateSource},
};
use gigagas_grid::{RunConfig, StateRootPhase, StoreRead, TimedWork};
use std::time::Instant;

/// Outputs of every item of a run, for verification.
pub type RunOutputs = Vec<Result<ItemOutput, ExecError>>;

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
    fn run(&mut self, replay: &Replay, verify: bool) -> Result<RunTimings, PassError>;
}

/// The BAL replay as a [`Runner`]: `config`'s threads, batch and scheduler, the state from
/// the replay's memory or, [`Parallel::reading`], from state sources inside the timed
/// window.
///
/// Workers take items from one shared cursor over the scheduler's order (list
/// scheduling, in chunks that shrink towards the batch's end: [`crate::chunk_bounds`]);
/// each batch ends when its last item ends, and is verified when it ends (outside the
/// timed window: the workers wait while the coordinator checks) and then dropped, so
/// memory grows with the batch, not the dump. One loop runs every thread count (the batch
/// module's `Crew` describes its protocol): the calling thread coordinates and works,
/// and a pass of `n` threads borrows `n - 1` workers of a pool kept across passes (`n`
/// when it reads pipelined: the calling thread then reads the next batch).
///
/// `S` is the readers' type when the state is read from sources (a concrete reader is
/// called without a boxed trait call per read); [`NoSource`] in memory.
pub struct Parallel<'c, 's, S = NoSource> {
    config: &'c RunConfig,
    /// How the store is read and the readers, for a pass over a store.
    store: Option<(StoreRead, &'s mut [S])>,
    /// What passes over the replay share ([`Parallel::cached`]); `None`: the pass builds
    /// what it needs and drops it after.
    cache: Option<&'c PassCache>,
    /// Where each block is committed after its root ([`Parallel::persisting`]).
    sink: Option<&'c dyn BlockSink>,
}

impl<S> std::fmt::Debug for Parallel<'_, '_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parallel")
            .field("config", &self.config)
            .field(
                "store",
                &self.store.as_ref().map(|(read, r)| (read, r.len())),
            )
            .finish()
    }
}

impl<'c> Parallel<'c, 'static, NoSource> {
    /// The replay with its state in memory.
    pub fn new(config: &'c RunConfig) -> Self {
        Self {
            config,
            store: None,
            cache: None,
            sink: None,
        }
    }
}

impl<'c, 's, S: StateSource> Parallel<'c, 's, S> {
    /// The replay reading its state from `readers` inside the timed window, as `read`
    /// says: before each batch runs, pipelined behind the batch before it (one reader per
    /// I/O thread, the access list carrying the design `read` names), or on demand (the
    /// workers share the readers); [`RunTimings::io`] says what the reads took. A pass in
    /// memory is [`Parallel::new`]: the state a pass reads comes from its constructor,
    /// whatever `config`'s state names (which labels the figures).
    pub fn reading(config: &'c RunConfig, read: StoreRead, readers: &'s mut [S]) -> Self {
        Self {
            config,
            store: Some((read, readers)),
            cache: None,
            sink: None,
        }
    }

    /// The runner's passes take what passes over the replay share (the tries, the tables a
    /// store pass fills, the `full` lists) from `cache`, filling it on first use, instead
    /// of building them for each pass: for a benchmark that repeats passes over one
    /// replay. The cache must serve that replay ([`SetupError::ForeignCache`]).
    pub fn cached(mut self, cache: &'c PassCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Commits each block to `sink` once its root is computed (`--persist`), on the worker
    /// that finished the root, before the segment's next block is prepared. Needs the
    /// state-root phase on (without it nothing is committed).
    pub fn persisting(mut self, sink: &'c dyn BlockSink) -> Self {
        self.sink = Some(sink);
        self
    }

    /// One pass that keeps every item's output instead of verifying it (for tests and
    /// tools that compare runs; a benchmark pass is [`Runner::run`], which holds one
    /// batch's outputs at a time). Only a pass that cannot be set up fails: collecting
    /// cannot diverge.
    pub fn outputs(&mut self, replay: &Replay) -> Result<(RunTimings, RunOutputs), PassError> {
        let mut outputs: RunOutputs = Vec::with_capacity(replay.items().len());
        let store = self.store.as_mut().map(|(read, r)| (*read, &mut **r));
        let timings = replay.run_with_sink(
            self.config,
            self.cache,
            store,
            self.sink,
            false,
            &mut |_, batch, _| {
                outputs.append(batch);
                Ok(())
            },
        )?;
        Ok((timings, outputs))
    }
}

impl<S: StateSource> Runner for Parallel<'_, '_, S> {
    fn run(&mut self, replay: &Replay, verify: bool) -> Result<RunTimings, PassError> {
        let config = self.config;
        let store = self.store.as_mut().map(|(read, r)| (*read, &mut **r));
        replay.run_with_sink(
            config,
            self.cache,
            store,
            self.sink,
            verify,
            &mut |range, batch, blocks| {
                if verify {
                    replay.verify_items(range, &*batch, config.work.receipts, blocks)
                } else {
                    Ok(())
                }
            },
        )
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
    /// Where the root phase's tries come from ([`Sequential::cached`]).
    cache: Option<&'s PassCache>,
    /// Where each block is committed after its root ([`Sequential::persisting`]).
    sink: Option<&'s dyn BlockSink>,
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
        Self {
            work,
            source: None,
            cache: None,
            sink: None,
        }
    }
}

impl<'s, S: StateSource + ?Sized> Sequential<'s, S> {
    /// The client loop reading its state from `source` on demand.
    pub fn on(work: TimedWork, source: &'s mut S) -> Self {
        Self {
            work,
            source: Some(source),
            cache: None,
            sink: None,
        }
    }

    /// The loop's tries (with the root phase on) taken from `cache`, opened on first use,
    /// instead of opened for each pass ([`Parallel::cached`]).
    pub fn cached(mut self, cache: &'s PassCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Commits each block to `sink` after its root (`--persist`), on the loop's thread.
    /// Needs the state-root phase on (without it nothing is committed).
    pub fn persisting(mut self, sink: &'s dyn BlockSink) -> Self {
        self.sink = Some(sink);
        self
    }

    /// One pass that returns every transaction's result (and receipt, with
    /// `work.receipts`) instead of verifying them; [`Replay::verify_sequential`] checks
    /// them. The outer error is a pass that could not run (set up, or read its blocks);
    /// the inner one an execution that failed.
    pub fn outputs(
        &mut self,
        replay: &Replay,
    ) -> Result<(RunTimings, Result<SequentialOutputs, ExecError>), PassError> {
        let work = self.work;
        // The tries are opened before the window (once per cache); a dump that cannot
        // compute roots is refused here, as the replay's set-up refuses it.
        let mut local = None;
        let cache = PassCache::or_local(self.cache, &mut local);
        let mut roots = match work.state_root {
            StateRootPhase::Off => None,
            _ => {
                cache.bind(replay)?;
                let inputs = cache.root_inputs(replay).map_err(SetupError::from)?;
                // A store run reads each block's trie nodes from the store, as it needs them.
                let read_nodes = self.source.is_some();
                Some(crate::root::SequentialRoots::new(
                    replay, inputs, read_nodes, self.sink,
                ))
            }
        };
        let source = self.source.as_deref_mut();
        let (mut timings, outputs) = replay.sequential_timed(work, |replay, clock, on_tx| {
            // Each block's root after its transactions, on the loop's thread.
            let mut root_of =
                |s, b, block: &ReplayBlock, nodes: Option<&mut crate::source::SegmentNodes<'_>>| {
                    if let Some(roots) = roots.as_mut() {
                        roots.block(replay, s, b, block, nodes);
                    }
                };
            replay.execute_sequential(work, source, clock, &mut root_of, on_tx)
        });
        let mut outputs = match outputs {
            Err(SequentialStop::Blocks(e)) => return Err(PassError::Blocks(e)),
            Err(SequentialStop::Exec(e)) => return Ok((timings, Err(e))),
            Ok(o) => o,
        };
        if let Some(roots) = roots {
            // The loop's root time, for the rows (execution is the rest of the window).
            timings.root.root_ns = roots.root_ns;
            timings.root.read_ns = roots.read_ns;
            timings.root.reads = roots.reads;
            timings.root.root_busy_ns = roots.root_ns;
            let persist_ns: u64 = roots.persisted.iter().map(|p| p.ns).sum();
            timings.root.exec_ns = timings.wall_ns.saturating_sub(roots.root_ns + persist_ns);
            timings.root.persisted = roots.persisted;
            let computed = roots.roots.iter().filter(|r| matches!(r, Some(Ok(_))));
            timings.root.blocks = computed.count();
            outputs.roots = roots.roots;
        }
        Ok((timings, Ok(outputs)))
    }
}

impl<S: StateSource + ?Sized> Runner for Sequential<'_, S> {
    fn run(&mut self, replay: &Replay, verify: bool) -> Result<RunTimings, PassError> {
        let (timings, outputs) = self.outputs(replay)?;
        let outputs = outputs.map_err(crate::Divergence::from)?;
        if verify {
            replay.verify_sequential(&outputs)?;
        }
        Ok(timings)
    }
}

impl Replay {
    /// One pass: set up ([`Pass::setup`]), its timed window ([`crate::batch`]), each
    /// batch's outputs handed to `sink`; with the state-root phase on and `check_roots`,
    /// every computed root checked against its header after the window.
    fn run_with_sink<S: StateSource>(
        &self,
        config: &RunConfig,
        cache: Option<&PassCache>,
        store: Option<(StoreRead, &mut [S])>,
        blocks: Option<&dyn BlockSink>,
        check_roots: bool,
        sink: &mut BatchSink<'_>,
    ) -> Result<RunTimings, PassError> {
        let mut local = None;
        let cache = PassCache::or_local(cache, &mut local);
        let pass = Pass::setup(self, cache, config, store, blocks)?;
        let (mut timings, result) = crate::batch::run(&pass, sink, check_roots);
        // Every read on demand was made while a transaction waited for it.
        let on_demand = pass.on_demand_ns();
        timings.io.read_ns += on_demand;
        timings.io.exposed_ns += on_demand;
        timings.batches = pass.batches.clone();
        result?;
        Ok(timings)
    }

    /// Time the sequential loop `run` (the in-memory or the on-demand one).
    fn sequential_timed(
        &self,
        work: TimedWork,
        run: impl FnOnce(
            &Self,
            &mut SequentialClock,
            &mut dyn FnMut(SequentialTx),
        ) -> Result<(), SequentialStop>,
    ) -> (RunTimings, Result<SequentialOutputs, SequentialStop>) {
        let mut item_ns = vec![0u64; self.items().len()];
        let mut txs = Vec::with_capacity(self.transaction_count());
        let mut receipts = Vec::with_capacity(if work.receipts { txs.capacity() } else { 0 });
        let mut clock = SequentialClock {
            window: crate::window::Window::new(),
            paused_at: None,
            paused_ns: 0,
        };
        clock.window.open();
        let start = Instant::now();
        let r = run(self, &mut clock, &mut |done: SequentialTx| {
            item_ns[self.block_items(done.block).start + 1 + done.tx] = done.nanos;
            txs.push(done.result);
            receipts.extend(done.receipt);
        });
        let wall_ns = (start.elapsed().as_nanos() as u64).saturating_sub(clock.paused_ns);
        let cpu = clock.window.finish();
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
