//! The whole-block simulator's measuring side: a store point (read, execution, state
//! root) recorded from one-thread passes ([`record_phases`]) and measured at the thread
//! counts the machine has, interleaved ([`profile_and_measure_point`]), then projected and
//! set beside the measurements by the model (`gigagas_sim::whole_block`).
//!
//! A record holds each batch's read (its span: the prefetch before the batch, or the
//! pipelined read beside the batch before it, and its device reads: its readers' major page
//! faults), each item's time and each root unit as the executor's spans cut them (an
//! advance that finishes a block and prepares the next is charged to the next block's
//! preparation, a batch's last advance to its block's finish; the nodes a unit reads are
//! inside its time). A measured pass's phases are counted as the model counts them
//! ([`measured_times`]). The device curve is probed on the store's data file
//! ([`probe_device_curve`]).

use crate::{bench::bench_pass, error::PassError, io::StoreContext, progress::run_units};
use gigagas_executor::{BlockPersist, PassCache, Replay, RootStepKind, RunTimings};
use gigagas_grid::{Point, Repetition, RunConfig};
use gigagas_sim::{
    DeviceCurve, ItemCost, PhaseRecord, PhaseTimes, PointError, PointMeasurement, ReadMode,
    WholeBlockPoint, WholeBlockReport,
    phases::{BlockRoot, CurveError},
    whole_block::read_mode,
};
use std::{cmp::Reverse, collections::BinaryHeap, num::NonZeroUsize, path::PathBuf};

/// Why the whole-block simulator cannot run.
#[derive(Debug, thiserror::Error)]
pub enum WholeBlockError {
    /// A point or a record the model cannot project.
    #[error(transparent)]
    Model(#[from] PointError),
    /// A pass failed.
    #[error(transparent)]
    Pass(#[from] Box<PassError>),
    /// The device curve could not be probed.
    #[error("probing the device curve: {0}")]
    Probe(crate::error::IoError),
    /// The probed curve is not a curve (a reader count measured no read).
    #[error("probing the device curve: {0}")]
    Curve(#[from] CurveError),
    /// A store flag that cannot make a point.
    #[error(transparent)]
    Flag(#[from] crate::plan::FlagError),
    /// The device curve file cannot be read.
    #[error(transparent)]
    CurveFile(#[from] gigagas_sim::CurveFileError),
    /// The state store could not be opened or probed.
    #[error("{}: {message}", store.display())]
    Store {
        /// The store.
        store: PathBuf,
        /// What went wrong.
        message: String,
    },
}

impl From<PassError> for WholeBlockError {
    fn from(e: PassError) -> Self {
        Self::Pass(Box::new(e))
    }
}

/// Record the phases of a one-thread pass over `replay` in batches of `batch` blocks (a
/// read beside execution on one reader, it and the worker each on a core of its own:
/// [`record_phases_on`]).
pub fn record_phases(replay: &Replay, timings: &RunTimings, batch: usize) -> PhaseRecord {
    let two = NonZeroUsize::new(2).expect("not zero");
    record_phases_on(replay, timings, batch, NonZeroUsize::MIN, two)
}

/// [`record_phases`] of a pass on `cores` cores whose reads beside execution ran on
/// `readers` readers: each such read is recorded as one reader's time on a core of its
/// own (its wall time at the speed its readers and the one worker had on the cores).
pub fn record_phases_on(
    replay: &Replay,
    timings: &RunTimings,
    batch: usize,
    readers: NonZeroUsize,
    cores: NonZeroUsize,
) -> PhaseRecord {
    let batches = replay.batches(batch).len();
    let mut read_ns: Vec<u64> = timings.read_spans.iter().map(|&(_, ns)| ns).collect();
    read_ns.resize(batches, 0);
    let mut read_faults = timings.read_faults.clone();
    read_faults.resize(batches, 0);
    let mut roots: Vec<Vec<BlockRoot>> = vec![Vec::new(); batches];
    let mut spans = timings.root.spans.clone();
    spans.sort_by_key(|s| (s.start_ns, s.worker));
    // Per block: its entry in its batch's roots, and whether its preparation was seen.
    let mut at: Vec<Option<(usize, bool)>> = vec![None; replay.block_count()];
    let mut batch_of = vec![0; replay.block_count()];
    let segment_of = |b: usize| {
        replay
            .segments()
            .iter()
            .position(|s| s.blocks().contains(&b))
            .unwrap_or(0) as u32
    };
    for span in &spans {
        let b = span.block as usize;
        let k = (b / batch.max(1)).min(batches.saturating_sub(1));
        batch_of[b] = k;
        let (index, prepared) = *at[b].get_or_insert_with(|| {
            roots[k].push(BlockRoot {
                segment: segment_of(b),
                ..BlockRoot::default()
            });
            (roots[k].len() - 1, false)
        });
        let root = &mut roots[k][index];
        match span.kind {
            RootStepKind::Storage => {
                root.storage_ns.push(span.ns);
                root.storage_writes.push(span.writes);
            }
            RootStepKind::AccountSubtries => {
                // The account-trie span before a block's first account unit was its
                // account stage, not its finish.
                if root.account_ns.is_empty() {
                    root.stage_ns += std::mem::take(&mut root.finish_ns);
                }
                root.account_ns.push(span.ns);
                root.account_leaves.push(span.writes);
            }
            RootStepKind::Accounts if !prepared => {
                root.prepare_ns += span.ns;
                at[b] = Some((index, true));
            }
            RootStepKind::Accounts => root.finish_ns += span.ns,
        }
    }
    add_persisted(&timings.root.persisted, &mut roots, &at, &batch_of);
    for batch_roots in &mut roots {
        // Block order within each segment, as the chains run.
        batch_roots.sort_by_key(|r| r.segment);
    }
    let block_read_ns = block_read_ns(replay, timings, batch, (readers, cores), &mut read_ns);
    PhaseRecord {
        batch,
        wall_ns: timings.wall_ns,
        item_ns: timings.item_ns.clone(),
        read_ns,
        read_faults,
        roots,
        block_read_ns,
    }
}

/// Reads beside execution: each block's part of its batch's read, one reader's time on
/// it: from when a reader took it to its ready time. The readers take the blocks as they
/// became ready: each from the read's start or the end of the block its reader read before
/// (with one reader, the block read before it). Each part and each batch's `read_ns` are
/// scaled to a core of its own: by min(1, cores / (1 + M)) for the one worker and the M
/// readers that had a block. Empty (and `read_ns` as it was) for other reads.
fn block_read_ns(
    replay: &Replay,
    timings: &RunTimings,
    batch: usize,
    (readers, cores): (NonZeroUsize, NonZeroUsize),
    read_ns: &mut [u64],
) -> Vec<u64> {
    let ready = &timings.block_ready_ns;
    if ready.len() != replay.block_count() {
        return Vec::new();
    }
    let mut parts = vec![0; ready.len()];
    let blocks_per = batch.max(1);
    for (k, &(start, _)) in timings.read_spans.iter().enumerate() {
        let blocks = (k * blocks_per).min(ready.len())..((k + 1) * blocks_per).min(ready.len());
        let reading = readers.get().min(blocks.len()).max(1);
        let speed = (cores.get() as f64 / (1 + reading) as f64).min(1.0);
        let scale = |ns: u64| (ns as f64 * speed).round() as u64;
        if let Some(ns) = read_ns.get_mut(k) {
            *ns = scale(*ns);
        }
        let mut by_ready: Vec<usize> = blocks.collect();
        by_ready.sort_by_key(|&b| ready[b]);
        // When each reader is free, the earliest first.
        let mut free: BinaryHeap<Reverse<u64>> =
            (0..readers.get()).map(|_| Reverse(start)).collect();
        for b in by_ready {
            let Reverse(took) = free.pop().expect("at least one reader");
            parts[b] = scale(ready[b].saturating_sub(took));
            free.push(Reverse(ready[b].max(took)));
        }
    }
    parts
}

/// Each persisted block's wait into its entry of `roots` (`at`: its batch's entry, by
/// block; `batch_of`: its batch) and its share of the commit it was written in: a commit's
/// time over its blocks, the blocks that reached the writer since the commit before.
fn add_persisted(
    persisted: &[BlockPersist],
    roots: &mut [Vec<BlockRoot>],
    at: &[Option<(usize, bool)>],
    batch_of: &[usize],
) {
    let mut group: Vec<usize> = Vec::new();
    for p in persisted {
        if let Some(Some((index, _))) = at.get(p.block) {
            roots[batch_of[p.block]][*index].persist_ns = p.ns;
        }
        group.push(p.block);
        if p.commit_blocks == 0 {
            continue;
        }
        let share = p.commit_ns / group.len() as u64;
        for b in group.drain(..) {
            if let Some(Some((index, _))) = at.get(b) {
                roots[batch_of[b]][*index].commit_ns = share;
            }
        }
    }
}

/// A measured pass's phases, counted as the model counts them (`read`: how it read).
pub fn measured_times(timings: &RunTimings, read: ReadMode) -> PhaseTimes {
    let before = |k: usize| match read {
        ReadMode::Prefetch => timings.read_spans.get(k).map_or(0, |s| s.1),
        ReadMode::Pipelined if k == 0 => timings.read_spans.first().map_or(0, |s| s.1),
        // Beside execution the read runs inside the batch's span.
        _ => 0,
    };
    let exec_ns: u64 = timings
        .batches
        .iter()
        .zip(&timings.batch_start_ns)
        .enumerate()
        .map(|(k, (items, &start))| {
            let end = items
                .clone()
                .map(|i| timings.item_start_ns[i] + timings.item_ns[i])
                .max()
                .unwrap_or(start);
            end.saturating_sub(start).saturating_sub(before(k))
        })
        .sum();
    PhaseTimes {
        wall_ns: timings.wall_ns as f64,
        read_ns: timings.read_spans.iter().map(|s| s.1).sum::<u64>() as f64,
        exposed_read_ns: timings.io.exposed_ns as f64,
        exec_ns: exec_ns as f64,
        root_ns: timings.root.root_ns as f64,
        persist_wait_ns: timings.root.persisted.iter().map(|p| p.ns).sum::<u64>() as f64,
        drain_ns: timings.root.drain_ns as f64,
        first_read_wait_ns: first_read_waits(timings, read) as f64,
    }
}

/// Reads beside execution: per batch, from its start to its first item's start (what the
/// first item waited for its block), summed; 0 for other reads, and on a pass with root
/// units (a worker may run them before its first item: the gap is not a wait).
fn first_read_waits(timings: &RunTimings, read: ReadMode) -> u64 {
    if read != ReadMode::Beside || !timings.root.spans.is_empty() {
        return 0;
    }
    timings
        .batches
        .iter()
        .zip(&timings.batch_start_ns)
        .filter_map(|(items, &start)| {
            let first = items.clone().map(|i| timings.item_start_ns[i]).min()?;
            Some(first.saturating_sub(start))
        })
        .sum()
}

/// Profile `point` on one thread (`plan.profile_runs` passes) and measure it at each of
/// `plan.validate`, **interleaved** as the execution simulator does
/// ([`crate::simulate::profile_and_measure`]): `plan.rep.warmup` rounds of everything, then
/// rounds of one profiling pass and one pass of every validated count. `after_run` is
/// called after every pass.
pub fn profile_and_measure_point(
    replay: &Replay,
    pass_cache: &PassCache,
    store: &mut StoreContext,
    point: &WholeBlockPoint,
    plan: &WholeBlockPlan,
    mut after_run: impl FnMut(&RunConfig),
) -> Result<PointMeasurement, WholeBlockError> {
    let (profile_runs, validate, rep) = (plan.profile_runs, &plan.validate[..], plan.rep);
    let read = read_mode(&point.work)?;
    let readers = store.io_threads();
    let profile_config = point.config(NonZeroUsize::MIN);
    let mut run = |config: &RunConfig| -> Result<RunTimings, WholeBlockError> {
        let (timings, _) = bench_pass(
            replay,
            pass_cache,
            &Point::Bal(*config),
            rep.verify,
            Some(&mut *store),
        )?;
        after_run(config);
        Ok(timings)
    };
    for _ in 0..rep.warmup {
        run(&profile_config)?;
        for &t in validate {
            run(&point.config(t))?;
        }
    }
    let repeats = rep.repeats.max(1);
    let mut records = Vec::new();
    let mut passes: Vec<Vec<PhaseTimes>> = vec![Vec::new(); validate.len()];
    for round in 0..profile_runs.get().max(repeats) {
        if round < profile_runs.get() {
            let timings = run(&profile_config)?;
            records.push(record_phases_on(
                replay,
                &timings,
                point.batch,
                readers,
                plan.cores,
            ));
        }
        if round < repeats {
            for (&t, into) in validate.iter().zip(&mut passes) {
                let timings = run(&point.config(t))?;
                into.push(measured_times(&timings, read));
            }
        }
    }
    Ok(PointMeasurement {
        record: PhaseRecord::median(&records).expect("at least one profiling pass"),
        profile_runs: records.len(),
        measured: validate
            .iter()
            .zip(passes)
            .map(|(&t, p)| (t, PhaseTimes::median(&p)))
            .collect(),
    })
}

/// What [`simulate_whole_block`] runs.
#[derive(Debug, Clone)]
pub struct WholeBlockPlan {
    /// The store points.
    pub points: Vec<WholeBlockPoint>,
    /// Worker counts to project (each on as many cores).
    pub threads: Vec<NonZeroUsize>,
    /// Thread counts to measure; empty: no validation.
    pub validate: Vec<NonZeroUsize>,
    /// One-thread profiling passes per point.
    pub profile_runs: NonZeroUsize,
    /// Warm-up and measured passes of each validated count.
    pub rep: Repetition,
    /// The machine's cores (what a measured pass runs on).
    pub cores: NonZeroUsize,
    /// The device curve that caps each read (`None`: no cap), read at the store's readers
    /// (every store pass reads on them: [`DeviceCurve::held_at`]).
    pub device: Option<DeviceCurve>,
}

impl WholeBlockPlan {
    /// Work units of [`simulate_whole_block`] on `cores` cores (for a progress bar's total).
    pub fn units(&self, cores: NonZeroUsize) -> u64 {
        let per_point = (self.rep.warmup + self.profile_runs.get()) as u64 * 1000
            + self
                .validate
                .iter()
                .map(|&t| run_units(t, cores) * (self.rep.warmup + self.rep.repeats) as u64)
                .sum::<u64>();
        per_point * self.points.len() as u64
    }
}

/// Profile and (with `plan.validate`) measure every store point of `plan`, then project
/// and validate them with the model ([`gigagas_sim::whole_block_report`]); the slowdown is
/// `cost`, fitted on memory points (`None`: none). `after_run` is called after every pass.
pub fn simulate_whole_block(
    replay: &Replay,
    store: &mut StoreContext,
    plan: &WholeBlockPlan,
    cost: Option<&ItemCost>,
    mut after_run: impl FnMut(&RunConfig),
) -> Result<WholeBlockReport, WholeBlockError> {
    let pass_cache = PassCache::new();
    let readers = store.io_threads();
    let largest_validated = plan.validate.iter().map(|t| t.get()).max().unwrap_or(1);
    let mut measured = Vec::new();
    for point in &plan.points {
        let m = profile_and_measure_point(replay, &pass_cache, store, point, plan, &mut after_run)?;
        measured.push((*point, m));
    }
    Ok(gigagas_sim::whole_block_report(
        replay.work_items(),
        &measured,
        &plan.threads,
        largest_validated,
        plan.cores,
        cost,
        gigagas_sim::StoreReaders {
            count: readers,
            curve: plan.device.clone(),
        },
    )?)
}

/// The device curve of `store`'s data file ([`gigagas_state::probe_read_curve`], cold, for
/// `duration` at each of 1, 2, 4, … up to the store's readers), outside any timed window.
pub fn probe_device_curve(
    store: &mut StoreContext,
    duration: std::time::Duration,
) -> Result<DeviceCurve, WholeBlockError> {
    let file = store.data_file().map_err(WholeBlockError::Probe)?;
    let points = gigagas_state::probe_read_curve(&file, duration, store.io_threads().get())
        .map_err(|e| WholeBlockError::Probe(e.into()))?;
    Ok(DeviceCurve::new(points)?)
}
