//! The runners, one timed and verified pass each: [`Parallel`] (the BAL replay, set up as
//! a [`Pass`] and run by the batch loop) and [`Sequential`] (the client loop).

use crate::{
    batch::BatchSink,
    exec::{ExecError, ItemOutput, SequentialOutputs, SequentialTx},
    pass::{IoTimings, Pass, PassIo, SetupError},
    replay::Replay,
    source::{NoSource, StateSource},
};
use gigagas_grid::{RunConfig, StateRootPhase, TimedWork};
use std::time::Instant;

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
    /// One pass: set up ([`Pass::setup`]), its timed window ([`crate::batch`]), each
    /// batch's outputs handed to `sink`; with the state-root phase on and `check_roots`,
    /// every computed root checked against its header after the window.
    fn run_with_sink<S: StateSource>(
        &self,
        config: &RunConfig,
        io: Option<PassIo<'_, S>>,
        check_roots: bool,
        sink: &mut BatchSink<'_>,
    ) -> (RunTimings, Result<(), crate::Divergence>) {
        let pass = match Pass::setup(self, config, io) {
            Ok(pass) => pass,
            Err(SetupError::NoRoot(e)) => return (RunTimings::default(), Err(self.no_root(e))),
            // The machine's failure, as a thread spawn's was before pools.
            Err(SetupError::Threads(e)) => panic!("{e}"),
        };
        let (mut timings, mut result) = crate::batch::run(&pass, sink);
        (timings.io, timings.read_spans) = pass.io_timings();
        timings.batches = pass.batches.clone();
        if let Some(root) = &pass.root {
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
