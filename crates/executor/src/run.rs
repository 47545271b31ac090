//! The runners, one timed and verified pass each: [`Parallel`] (the BAL replay, set up as
//! a pass (module [`crate::pass`]) and run by the batch loop) and [`Sequential`] (the client loop).

use crate::{
    batch::BatchSink,
    exec::{ExecError, ItemOutput, SequentialOutputs, SequentialTx},
    pass::{IoTimings, Pass, PassCache, SetupError},
    replay::{Replay, ReplayBlock},
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
    fn run(&mut self, replay: &Replay, verify: bool) -> Result<RunTimings, PassError>;
}

/// Why a pass gave no timings: it could not be set up, or what it produced diverged.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The pass could not be set up (before any window): no witness for the root phase,
    /// threads that did not start, readers that do not match the config's state.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The pass ran and diverged from the receipts, the access lists or the headers.
    #[error(transparent)]
    Divergence(Box<crate::Divergence>),
}

impl From<crate::Divergence> for PassError {
    fn from(d: crate::Divergence) -> Self {
        Self::Divergence(Box::new(d))
    }
}

impl PassError {
    /// The divergence, when the pass ran and diverged.
    pub fn divergence(&self) -> Option<&crate::Divergence> {
        match self {
            Self::Divergence(d) => Some(d),
            Self::Setup(_) => None,
        }
    }
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
/// module's `Shared` describes its protocol): the calling thread coordinates and works,
/// and a pass of `n` threads borrows `n - 1` workers of a pool kept across passes (`n`
/// when it reads pipelined: the calling thread then reads the next batch).
///
/// `S` is the readers' type when the state is read from sources (a concrete reader is
/// called without a boxed trait call per read); [`NoSource`] in memory.
pub struct Parallel<'c, 's, S = NoSource> {
    config: &'c RunConfig,
    readers: Option<&'s mut [S]>,
    /// What passes over the replay share ([`Parallel::cached`]); `None`: the pass builds
    /// what it needs and drops it after.
    cache: Option<&'c PassCache>,
}

impl<S> std::fmt::Debug for Parallel<'_, '_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parallel")
            .field("config", &self.config)
            .field("readers", &self.readers.as_ref().map(|r| r.len()))
            .finish()
    }
}

impl<'c> Parallel<'c, 'static, NoSource> {
    /// The replay with its state in memory.
    pub fn new(config: &'c RunConfig) -> Self {
        Self {
            config,
            readers: None,
            cache: None,
        }
    }
}

impl<'c, 's, S: StateSource> Parallel<'c, 's, S> {
    /// The replay reading its state from `readers` inside the timed window, as `config`'s
    /// state says ([`gigagas_grid::StoreRead`]): before each batch runs, pipelined behind
    /// the batch before it (one reader per I/O thread, the access list carrying the
    /// config's design), or on demand (the workers share the readers);
    /// [`RunTimings::io`] says what the reads took.
    pub fn reading(config: &'c RunConfig, readers: &'s mut [S]) -> Self {
        Self {
            config,
            readers: Some(readers),
            cache: None,
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

    /// One pass that keeps every item's output instead of verifying it (for tests and
    /// tools that compare runs; a benchmark pass is [`Runner::run`], which holds one
    /// batch's outputs at a time). Only a pass that cannot be set up fails: collecting
    /// cannot diverge.
    pub fn outputs(&mut self, replay: &Replay) -> Result<(RunTimings, RunOutputs), PassError> {
        let mut outputs: RunOutputs = Vec::with_capacity(replay.items.len());
        let config = self.config;
        let readers = self.readers.as_deref_mut();
        let timings =
            replay.run_with_sink(config, self.cache, readers, false, &mut |_, batch, _| {
                outputs.append(batch);
                Ok(())
            })?;
        Ok((timings, outputs))
    }
}

impl<S: StateSource> Runner for Parallel<'_, '_, S> {
    fn run(&mut self, replay: &Replay, verify: bool) -> Result<RunTimings, PassError> {
        let config = self.config;
        let readers = self.readers.as_deref_mut();
        replay.run_with_sink(
            config,
            self.cache,
            readers,
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
        }
    }

    /// The loop's tries (with the root phase on) taken from `cache`, opened on first use,
    /// instead of opened for each pass ([`Parallel::cached`]).
    pub fn cached(mut self, cache: &'s PassCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// One pass that returns every transaction's result (and receipt, with
    /// `work.receipts`) instead of verifying them; [`Replay::verify_sequential`] checks
    /// them.
    pub fn outputs(
        &mut self,
        replay: &Replay,
    ) -> Result<(RunTimings, Result<SequentialOutputs, ExecError>), SetupError> {
        let work = self.work;
        // The tries are opened before the window (once per cache); a dump that cannot
        // compute roots is refused here, as the replay's set-up refuses it.
        let local;
        let cache = match self.cache {
            Some(cache) => cache,
            None => {
                local = PassCache::new();
                &local
            }
        };
        let mut roots = match work.state_root {
            StateRootPhase::Off => None,
            _ => {
                cache.bind(replay)?;
                Some(crate::root::SequentialRoots::new(
                    replay,
                    cache.root_inputs(replay)?,
                ))
            }
        };
        // Each block's root after its transactions, on the loop's thread.
        let root_of =
            |roots: &mut Option<crate::root::SequentialRoots<'_>>, s, b, block: &ReplayBlock| {
                if let Some(roots) = roots.as_mut() {
                    roots.block(replay, s, b, block);
                }
            };
        let (mut timings, outputs) = match self.source.as_deref_mut() {
            None => replay.sequential_timed(work, |replay, clock, on_tx| {
                replay.execute_sequential_then(
                    work,
                    clock,
                    &mut |s, b, block| root_of(&mut roots, s, b, block),
                    on_tx,
                )
            }),
            Some(source) => replay.sequential_timed(work, |replay, clock, on_tx| {
                // A store run reads the tries' nodes from the store, inside the window.
                if let Some(roots) = roots.as_mut() {
                    roots.read_from(replay, &mut *source)?;
                }
                replay.execute_sequential_on_then(
                    work,
                    source,
                    clock,
                    &mut |s, b, block| root_of(&mut roots, s, b, block),
                    on_tx,
                )
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
        Ok((timings, outputs))
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
        readers: Option<&mut [S]>,
        check_roots: bool,
        sink: &mut BatchSink<'_>,
    ) -> Result<RunTimings, PassError> {
        let local;
        let cache = match cache {
            Some(cache) => cache,
            None => {
                local = PassCache::new();
                &local
            }
        };
        let pass = Pass::setup(self, cache, config, readers)?;
        let (mut timings, mut result) = crate::batch::run(&pass, sink);
        (timings.io, timings.read_spans) = pass.io_timings();
        timings.batches = pass.batches.clone();
        if let Some(root) = &pass.root {
            root.take(&mut timings.root);
            if check_roots && result.is_ok() {
                result = root.check();
            }
        }
        result?;
        Ok(timings)
    }

    /// Time the sequential loop `run` (the in-memory or the on-demand one).
    fn sequential_timed(
        &self,
        work: TimedWork,
        run: impl FnOnce(
            &Self,
            &mut dyn crate::exec::Pause,
            &mut dyn FnMut(SequentialTx),
        ) -> Result<(), ExecError>,
    ) -> (RunTimings, Result<SequentialOutputs, ExecError>) {
        let mut item_ns = vec![0u64; self.items.len()];
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

/// The sequential loop's window: stopped while the loop decodes packed blocks, the time
/// stopped taken off its wall time.
struct SequentialClock {
    window: crate::window::Window,
    paused_at: Option<Instant>,
    paused_ns: u64,
}

impl crate::exec::Pause for SequentialClock {
    fn pause(&mut self) {
        self.window.close();
        self.paused_at = Some(Instant::now());
    }

    fn resume(&mut self) {
        if let Some(at) = self.paused_at.take() {
            self.paused_ns += at.elapsed().as_nanos() as u64;
        }
        self.window.open();
    }
}
