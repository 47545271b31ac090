//! The whole-block simulator: a store pass (read, execution, state root) profiled on one
//! thread, projected onto N workers by the whole-block model ([`crate::phases`]), and
//! checked against measured passes at the thread counts the machine has.
//!
//! 1. **Record** ([`record_phases`]): from a one-thread pass of the same store point
//!    (I/O mode, design, root phase, warm or cold page cache), each batch's read (its span:
//!    the prefetch before the batch, or the pipelined read beside the batch before it, and
//!    its device reads: its readers' major page faults), each item's time and each
//!    root unit as the executor's spans cut them (an advance that finishes a block and
//!    prepares the next is charged to the next block's preparation, a batch's last advance
//!    to its block's finish; the nodes a unit reads are inside its time). Of several passes
//!    the median one by wall time is kept whole ([`PhaseRecord::median`]). On-demand reads happen inside items and are not
//!    recorded: an on-demand point is refused ([`WholeBlockError::OnDemand`]).
//! 2. **Project** ([`PhaseRecord::profile`], [`project_point`]): the record's items cut as
//!    a pass of N workers cuts them ([`BatchCut`]), items and root units slowed as the
//!    execution simulator's memory validation measured ([`Slowdown`]), scheduled by
//!    [`project_phases`].
//! 3. **Validate** ([`simulate_whole_block`]): the profiling passes interleaved with
//!    measured passes at the validated thread counts, each phase's median compared with
//!    its projection ([`PhaseTimes`]). The slowdown is fitted on the memory points only
//!    (the execution simulator's `ItemCost`), never on a store point.
//!
//! A device curve ([`DeviceCurve`]: probed on the store's data file with
//! [`probe_device_curve`], or given) caps each read at its device reads ÷ the curve's rate
//! at the store's readers, the readers every store pass reads on. On a warm store a read
//! makes next to no device reads and the curve caps nothing.
//!
//! Above the largest validated count a projection is a band ([`Band`]): the slowdown
//! curve held flat, and the item-time ratio a 16-core machine measured
//! ([`SIXTEEN_CORE_ITEM_TIME_RATIO`]).

use crate::{
    bench::bench_pass,
    error::PassError,
    io::StoreContext,
    phases::{
        BatchProfile, BlockRoot, CurveError, DeviceCurve, PhaseConfig, PhaseProfile,
        PhaseProfileError, PhaseProjection, ReadMode, ReadProfile, project_phases,
    },
    simulate::BatchCut,
};
use gigagas_executor::{PassCache, Replay, RootStepKind, RunTimings};
use gigagas_grid::{
    Claims, Point, Repetition, RunConfig, SchedulerKind, StateRootPhase, StoreRead, TimedWork,
};
use gigagas_report::simulation::ItemCost;
use std::num::NonZeroUsize;

/// How much longer items took in all at 16 threads than at one on the 16-core machine of
/// `shared/measurements/16c-cf0977f` (`mainnet.json`: Σ item time of the median repeat,
/// batch 42, ols: 0.2148 s at 16 threads over 0.1905 s at 1). The upper edge of a band.
pub const SIXTEEN_CORE_ITEM_TIME_RATIO: f64 = 1.128;

/// Why the whole-block simulator cannot run.
#[derive(Debug, thiserror::Error)]
pub enum WholeBlockError {
    /// On-demand reads happen inside the items; the model has no phase for them.
    #[error(
        "--io on-demand: the whole-block simulator models prefetch and pipelined reads only \
         (on-demand reads happen inside the items and are not recorded)"
    )]
    OnDemand,
    /// A point that reads no store.
    #[error("the whole-block simulator needs a store point")]
    NotAStore,
    /// A pass failed.
    #[error(transparent)]
    Pass(#[from] Box<PassError>),
    /// A recorded profile the model cannot run.
    #[error(transparent)]
    Profile(#[from] PhaseProfileError),
    /// The device curve could not be probed.
    #[error("probing the device curve: {0}")]
    Probe(crate::error::IoError),
    /// The probed curve is not a curve (a reader count measured no read).
    #[error("probing the device curve: {0}")]
    Curve(#[from] CurveError),
}

impl From<PassError> for WholeBlockError {
    fn from(e: PassError) -> Self {
        Self::Pass(Box::new(e))
    }
}

/// The model's read mode of a store point; on demand and memory are refused.
pub fn read_mode(work: &TimedWork) -> Result<ReadMode, WholeBlockError> {
    match work.state.read() {
        None => Err(WholeBlockError::NotAStore),
        Some(StoreRead::OnDemand) => Err(WholeBlockError::OnDemand),
        Some(StoreRead::Prefetch(_)) => Ok(ReadMode::Prefetch),
        Some(StoreRead::Pipelined(_)) => Ok(ReadMode::Pipelined),
    }
}

/// One-thread times of a store pass's phases.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseRecord {
    /// Blocks per batch of the pass.
    pub batch: usize,
    /// The pass's timed window, nanoseconds.
    pub wall_ns: u64,
    /// Each item's time, nanoseconds (indexed like the replay's items).
    pub item_ns: Vec<u64>,
    /// Each batch's read, nanoseconds of wall time.
    pub read_ns: Vec<u64>,
    /// Each batch's device reads: its readers' major page faults while reading
    /// ([`RunTimings::read_faults`]); near 0 on a warm store.
    pub read_faults: Vec<u64>,
    /// Each batch's root work, its blocks in order (empty with the root phase off).
    pub roots: Vec<Vec<BlockRoot>>,
}

/// Record the phases of a one-thread pass over `replay` in batches of `batch` blocks.
pub fn record_phases(replay: &Replay, timings: &RunTimings, batch: usize) -> PhaseRecord {
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
        let (index, prepared) = *at[b].get_or_insert_with(|| {
            roots[k].push(BlockRoot {
                segment: segment_of(b),
                ..BlockRoot::default()
            });
            (roots[k].len() - 1, false)
        });
        let root = &mut roots[k][index];
        match span.kind {
            RootStepKind::Storage => root.storage_ns.push(span.ns),
            RootStepKind::Accounts if !prepared => {
                root.prepare_ns += span.ns;
                at[b] = Some((index, true));
            }
            RootStepKind::Accounts => root.finish_ns += span.ns,
        }
    }
    for batch_roots in &mut roots {
        // Block order within each segment, as the chains run.
        batch_roots.sort_by_key(|r| r.segment);
    }
    PhaseRecord {
        batch,
        wall_ns: timings.wall_ns,
        item_ns: timings.item_ns.clone(),
        read_ns,
        read_faults,
        roots,
    }
}

impl PhaseRecord {
    /// The record of the median pass of `records` (of one point) by wall time: its items,
    /// reads and root units together. A median per item would be biased low on a busy
    /// machine: each item's median drops the bursts that every whole pass pays somewhere.
    /// `None` for no record.
    pub fn median(records: &[PhaseRecord]) -> Option<PhaseRecord> {
        let mut by_wall: Vec<&PhaseRecord> = records.iter().collect();
        by_wall.sort_by_key(|r| r.wall_ns);
        by_wall.get(by_wall.len() / 2).map(|r| (*r).clone())
    }

    /// The root units' time in all, nanoseconds.
    pub fn root_work_ns(&self) -> u64 {
        self.roots
            .iter()
            .flatten()
            .map(|b| b.prepare_ns + b.finish_ns + b.storage_ns.iter().sum::<u64>())
            .sum()
    }

    /// Root units recorded: (advances with a time, storage tasks).
    pub fn root_units(&self) -> (usize, usize) {
        let blocks = self.roots.iter().flatten();
        blocks.fold((0, 0), |(a, s), b| {
            let advances = usize::from(b.prepare_ns > 0) + usize::from(b.finish_ns > 0);
            (a + advances, s + b.storage_ns.len())
        })
    }

    /// The profile of a pass of `cut.threads` workers: the items ordered and cut as that
    /// pass does, items and root units slowed by `slowdown`; reads as recorded, each with
    /// its device reads (what a device curve caps).
    pub fn profile(&self, replay: &Replay, cut: BatchCut, slowdown: Slowdown) -> PhaseProfile {
        let batches = replay
            .batches(self.batch)
            .into_iter()
            .enumerate()
            .map(|(k, range)| {
                let (mut order, mut bounds) = (Vec::new(), Vec::new());
                cut.cut(
                    replay,
                    &self.item_ns,
                    range.clone(),
                    &mut order,
                    [(Claims::Chunked, &mut bounds)],
                );
                let item_ns = self.item_ns[range]
                    .iter()
                    .map(|&ns| slowdown.item(ns))
                    .collect();
                let roots = self.roots[k]
                    .iter()
                    .map(|b| BlockRoot {
                        segment: b.segment,
                        prepare_ns: slowdown.unit(b.prepare_ns),
                        storage_ns: b.storage_ns.iter().map(|&ns| slowdown.unit(ns)).collect(),
                        finish_ns: slowdown.unit(b.finish_ns),
                    })
                    .collect();
                BatchProfile {
                    read: ReadProfile {
                        ns: self.read_ns[k],
                        reads: self.read_faults.get(k).copied().unwrap_or(0),
                    },
                    item_ns,
                    order,
                    bounds,
                    roots,
                }
            })
            .collect();
        PhaseProfile { batches }
    }
}

/// How much longer work takes beside other threads: an item profiled at `x` takes
/// `x × factor + added_ns`, a root unit `x × factor` (the execution simulator's
/// `ItemCost`, fitted on memory points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slowdown {
    /// The factor on every item and root unit.
    pub factor: f64,
    /// The fixed cost added to every item, nanoseconds.
    pub added_ns: f64,
}

impl Slowdown {
    /// No slowdown.
    pub const NONE: Self = Self {
        factor: 1.0,
        added_ns: 0.0,
    };

    /// `cost` at `threads` (profile scale); none at one thread.
    pub fn of(cost: Option<&ItemCost>, threads: usize) -> Self {
        match cost {
            Some(cost) if threads > 1 => {
                let (factor, added_ns) = cost.at(threads);
                Self { factor, added_ns }
            }
            _ => Self::NONE,
        }
    }

    fn item(&self, ns: u64) -> u64 {
        (ns as f64 * self.factor + self.added_ns).round() as u64
    }

    fn unit(&self, ns: u64) -> u64 {
        (ns as f64 * self.factor).round() as u64
    }
}

/// A pass's phases, nanoseconds of wall time summed over its batches: measured, or
/// projected.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseTimes {
    /// End to end: the timed window.
    pub wall_ns: f64,
    /// Reading, each read from its start to its end (hidden or not).
    pub read_ns: f64,
    /// The part of reading the pass waited for.
    pub exposed_read_ns: f64,
    /// Per batch, from its start (after a read before it) to the end of its last item.
    pub exec_ns: f64,
    /// Per batch, from the start of its first root unit to the end of its last.
    pub root_ns: f64,
}

impl From<&PhaseProjection> for PhaseTimes {
    fn from(p: &PhaseProjection) -> Self {
        Self {
            wall_ns: p.makespan_ns,
            read_ns: p.read_ns,
            exposed_read_ns: p.exposed_read_ns,
            exec_ns: p.exec_ns,
            root_ns: p.root_ns,
        }
    }
}

impl PhaseTimes {
    /// A measured pass's phases, counted as the model counts them (`read`: how it read).
    pub fn measured(timings: &RunTimings, read: ReadMode) -> Self {
        let before = |k: usize| match read {
            ReadMode::Prefetch => timings.read_spans.get(k).map_or(0, |s| s.1),
            ReadMode::Pipelined if k == 0 => timings.read_spans.first().map_or(0, |s| s.1),
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
        Self {
            wall_ns: timings.wall_ns as f64,
            read_ns: timings.read_spans.iter().map(|s| s.1).sum::<u64>() as f64,
            exposed_read_ns: timings.io.exposed_ns as f64,
            exec_ns: exec_ns as f64,
            root_ns: timings.root.root_ns as f64,
        }
    }

    /// The median of each phase over `passes` (each phase on its own).
    pub fn median(passes: &[PhaseTimes]) -> Self {
        let med = |get: fn(&PhaseTimes) -> f64| {
            let mut v: Vec<f64> = passes.iter().map(get).collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied().unwrap_or(0.0)
        };
        Self {
            wall_ns: med(|p| p.wall_ns),
            read_ns: med(|p| p.read_ns),
            exposed_read_ns: med(|p| p.exposed_read_ns),
            exec_ns: med(|p| p.exec_ns),
            root_ns: med(|p| p.root_ns),
        }
    }
}

/// A store point of the whole-block simulator: its timed work (store read and root
/// phase), batch and scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WholeBlockPoint {
    /// What the pass does: a store read (prefetch or pipelined) and the root phase.
    pub work: TimedWork,
    /// Blocks per batch.
    pub batch: usize,
    /// The scheduler.
    pub scheduler: SchedulerKind,
}

impl WholeBlockPoint {
    /// The pass at `threads` threads.
    pub fn config(&self, threads: NonZeroUsize) -> RunConfig {
        RunConfig {
            work: self.work,
            ..RunConfig::new(threads, self.batch, self.scheduler)
        }
    }

    /// `prefetch keys, root after`.
    pub fn label(&self) -> String {
        let read = self.work.state.read();
        let io = read.map_or("memory", |r| r.io().name());
        let design = read
            .and_then(StoreRead::design)
            .map_or(String::new(), |d| format!(" {}", d.name()));
        format!("{io}{design}, root {}", self.work.state_root.name())
    }

    /// The model's configuration of this point at `workers` workers on `cores` cores.
    pub fn phase_config(
        &self,
        workers: NonZeroUsize,
        cores: NonZeroUsize,
    ) -> Result<PhaseConfig, WholeBlockError> {
        Ok(
            PhaseConfig::new(read_mode(&self.work)?, self.work.state_root, workers)
                .with_cores(cores),
        )
    }
}

/// A point's one-thread record and its measured passes.
#[derive(Debug, Clone)]
pub struct PointMeasurement {
    /// The median of the profiling passes.
    pub record: PhaseRecord,
    /// Profiling passes.
    pub profile_runs: usize,
    /// Per validated thread count, the median of each phase over its measured passes.
    pub measured: Vec<(NonZeroUsize, PhaseTimes)>,
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
            records.push(record_phases(replay, &timings, point.batch));
        }
        if round < repeats {
            for (&t, into) in validate.iter().zip(&mut passes) {
                let timings = run(&point.config(t))?;
                into.push(PhaseTimes::measured(&timings, read));
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

/// Project `point` from `record` at `workers` workers on `cores` cores with `slowdown`,
/// each read capped by `device` (a curve for the model's one reader: [`DeviceCurve::held_at`]
/// the pass's readers; `None`: no cap).
pub fn project_point(
    replay: &Replay,
    point: &WholeBlockPoint,
    record: &PhaseRecord,
    workers: NonZeroUsize,
    cores: NonZeroUsize,
    slowdown: Slowdown,
    device: Option<&DeviceCurve>,
) -> Result<PhaseTimes, WholeBlockError> {
    let cut = BatchCut {
        threads: workers,
        scheduler: point.scheduler,
    };
    let profile = record.profile(replay, cut, slowdown);
    let config = point.phase_config(workers, cores)?;
    Ok(PhaseTimes::from(&project_phases(
        &profile, &config, device,
    )?))
}

/// A projection: one figure per phase where the slowdown is validated, a band above.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// The slowdown curve held flat (the memory points' fit, or none without validation).
    pub flat: PhaseTimes,
    /// Above the largest validated count, the band's other edge: items and root units at
    /// the 16-core item-time ratio ([`SIXTEEN_CORE_ITEM_TIME_RATIO`]), no fixed cost.
    pub sixteen_core: Option<PhaseTimes>,
}

/// One row of the validation: a point at a thread count, projected and measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseValidation {
    /// The point's label ([`WholeBlockPoint::label`]).
    pub point: String,
    /// The measured threads.
    pub threads: usize,
    /// Projected from the one-thread record (the memory points' slowdown, the machine's
    /// cores).
    pub projected: PhaseTimes,
    /// The medians of the measured passes.
    pub measured: PhaseTimes,
}

impl PhaseValidation {
    /// Errors (projected / measured − 1) of end to end, read, execution and root; `None`
    /// for a phase measured as nothing.
    pub fn errors(&self) -> [Option<f64>; 4] {
        let e = |p: f64, m: f64| (m > 0.0).then(|| p / m - 1.0);
        let (p, m) = (&self.projected, &self.measured);
        [
            e(p.wall_ns, m.wall_ns),
            e(p.read_ns, m.read_ns),
            e(p.exec_ns, m.exec_ns),
            e(p.root_ns, m.root_ns),
        ]
    }
}

/// One point's projections.
#[derive(Debug, Clone, PartialEq)]
pub struct PointProjection {
    /// The point's label.
    pub point: String,
    /// Per worker count (on as many cores), the projection.
    pub bands: Vec<(NonZeroUsize, Band)>,
}

/// The whole-block simulation of a dump's store points.
#[derive(Debug, Clone, PartialEq)]
pub struct WholeBlockReport {
    /// The largest validated thread count (1 without validation).
    pub largest_validated: usize,
    /// How items and root units are slowed (one line).
    pub slowdown: String,
    /// Projected against measured.
    pub validations: Vec<PhaseValidation>,
    /// The projections.
    pub projections: Vec<PointProjection>,
    /// The device curve the reads were capped by (`None`: no cap), and the store's readers
    /// it was read at.
    pub device: Option<(DeviceCurve, NonZeroUsize)>,
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

/// Profile, project and (with `plan.validate`) validate every store point of `plan`; the
/// slowdown is `cost`, fitted on memory points (`None`: none). `after_run` is called after
/// every pass.
pub fn simulate_whole_block(
    replay: &Replay,
    store: &mut StoreContext,
    plan: &WholeBlockPlan,
    cost: Option<&ItemCost>,
    mut after_run: impl FnMut(&RunConfig),
) -> Result<WholeBlockReport, WholeBlockError> {
    let pass_cache = PassCache::new();
    let readers = store.io_threads();
    let device = plan.device.as_ref().map(|c| c.held_at(readers));
    let device = device.as_ref();
    let largest_validated = plan.validate.iter().map(|t| t.get()).max().unwrap_or(1);
    let mut validations = Vec::new();
    let mut projections = Vec::new();
    for point in &plan.points {
        let m = profile_and_measure_point(replay, &pass_cache, store, point, plan, &mut after_run)?;
        for &(t, measured) in &m.measured {
            let slowdown = Slowdown::of(cost, t.get());
            let projected =
                project_point(replay, point, &m.record, t, plan.cores, slowdown, device)?;
            validations.push(PhaseValidation {
                point: point.label(),
                threads: t.get(),
                projected,
                measured,
            });
        }
        let mut bands = Vec::new();
        for &t in &plan.threads {
            let flat = Slowdown::of(cost, t.get());
            let at = |s| project_point(replay, point, &m.record, t, t, s, device);
            let flat_times = at(flat)?;
            let sixteen_core = if t.get() > largest_validated {
                Some(at(Slowdown {
                    factor: SIXTEEN_CORE_ITEM_TIME_RATIO,
                    added_ns: 0.0,
                })?)
            } else {
                None
            };
            bands.push((
                t,
                Band {
                    flat: flat_times,
                    sixteen_core,
                },
            ));
        }
        projections.push(PointProjection {
            point: point.label(),
            bands,
        });
    }
    let slowdown = match cost {
        Some(cost) => format!(
            "items and root units slowed as the memory points measured ({:.0} % of the extra \
             time scaled by length, the rest a fixed cost per item; held flat beyond \
             {largest_validated} threads); above {largest_validated} threads a band from \
             that to the 16-core item-time ratio {SIXTEEN_CORE_ITEM_TIME_RATIO}×",
            cost.scaled() * 100.0
        ),
        None => format!(
            "no slowdown (no memory validation); above {largest_validated} thread{} a band \
             from that to the 16-core item-time ratio {SIXTEEN_CORE_ITEM_TIME_RATIO}×",
            if largest_validated == 1 { "" } else { "s" }
        ),
    };
    Ok(WholeBlockReport {
        largest_validated,
        slowdown,
        validations,
        projections,
        device: plan.device.clone().map(|c| (c, readers)),
    })
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

/// Milliseconds, one decimal.
fn ms(ns: f64) -> String {
    format!("{:.1}", ns / 1e6)
}

impl WholeBlockReport {
    /// The report as markdown: the validation table (projected / measured ms and the error
    /// per phase; `*` marks an error beyond the targets, 10 % end to end and 20 % a phase),
    /// then the projections per point (above the largest validated count a band `low–high`
    /// between its two edges, [`Band`]).
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        if let Some((curve, readers)) = &self.device {
            out.push_str(&format!(
                "\n**Device curve** (random 4 KiB reads per second by readers; each batch's read \
                 capped at its device reads ÷ the rate at the store's {readers} readers): {}\n",
                curve.summary()
            ));
        }
        if !self.validations.is_empty() {
            out.push_str(
                "\n**Whole block: projected against measured** (ms, medians; error; `*` beyond \
                 the target: 10 % end to end, 20 % a phase)\n\n\
                 | point | threads | end to end | read | execution | root |\n\
                 |---|---:|---:|---:|---:|---:|\n",
            );
            for v in &self.validations {
                let errors = v.errors();
                let cell = |i: usize, p: f64, m: f64| {
                    let target = if i == 0 { 0.10 } else { 0.20 };
                    match errors[i] {
                        None if p == 0.0 => "–".to_string(),
                        None => format!("{} / 0", ms(p)),
                        Some(e) => format!(
                            "{} / {} ({:+.0} %{})",
                            ms(p),
                            ms(m),
                            e * 100.0,
                            if e.abs() > target { "*" } else { "" }
                        ),
                    }
                };
                let (p, m) = (&v.projected, &v.measured);
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} |\n",
                    v.point,
                    v.threads,
                    cell(0, p.wall_ns, m.wall_ns),
                    cell(1, p.read_ns, m.read_ns),
                    cell(2, p.exec_ns, m.exec_ns),
                    cell(3, p.root_ns, m.root_ns),
                ));
            }
        }
        out.push_str(&format!(
            "\n**Whole block: projected** (ms, N workers on N cores; {})\n\n\
             | point | workers | end to end | read (exposed) | execution | root |\n\
             |---|---:|---:|---:|---:|---:|\n",
            self.slowdown
        ));
        for p in &self.projections {
            for (t, band) in &p.bands {
                let cell = |get: fn(&PhaseTimes) -> f64| match &band.sixteen_core {
                    Some(other) => {
                        let (a, b) = (get(&band.flat), get(other));
                        format!("{}–{}", ms(a.min(b)), ms(a.max(b)))
                    }
                    None => ms(get(&band.flat)),
                };
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} |\n",
                    p.point,
                    t,
                    cell(|x| x.wall_ns),
                    cell(|x| x.exposed_read_ns),
                    cell(|x| x.exec_ns),
                    cell(|x| x.root_ns),
                ));
            }
        }
        out
    }
}

/// The root phases a store point can take, for a point list: `phases` as given.
pub fn points(
    reads: &[StoreRead],
    phases: &[StateRootPhase],
    cache: gigagas_grid::CacheState,
    batch: usize,
    scheduler: SchedulerKind,
) -> Result<Vec<WholeBlockPoint>, WholeBlockError> {
    let mut out = Vec::new();
    for &read in reads {
        if read == StoreRead::OnDemand {
            return Err(WholeBlockError::OnDemand);
        }
        for &state_root in phases {
            out.push(WholeBlockPoint {
                work: TimedWork {
                    state: gigagas_grid::StateRead::store(read, cache),
                    state_root,
                    ..TimedWork::default()
                },
                batch,
                scheduler,
            });
        }
    }
    Ok(out)
}

/// The slowdown the execution simulator fitted on memory points (`report`'s curve and
/// share over `items` items): the only free term of the whole-block model. `None` without
/// a validation above one thread.
pub fn memory_cost(report: &gigagas_report::SimulationReport, items: usize) -> Option<ItemCost> {
    let curve = report.slowdown_curve();
    curve.measured().iter().any(|&(t, _)| t > 1).then(|| {
        ItemCost::new(
            curve,
            report.item_cost_scaled_share,
            report.profile_work_s,
            items,
        )
    })
}
