//! The whole-block simulator's model: a store pass (read, execution, state root) recorded
//! on one thread, projected onto N workers by the whole-block model ([`crate::phases`]), and
//! set beside measured passes at the thread counts the machine has.
//!
//! 1. **Record** ([`PhaseRecord`], filled by the bench crate from a one-thread pass of the
//!    same store point: I/O mode, design, root phase, warm or cold page cache): each batch's
//!    read (its span: the prefetch before the batch, or the pipelined read beside the batch
//!    before it, and its device reads: its readers' major page faults), each item's time and
//!    each root unit as the executor's spans cut them (an advance that finishes a block and
//!    prepares the next is charged to the next block's preparation, a batch's last advance
//!    to its block's finish; the nodes a unit reads are inside its time). Of several passes
//!    the median one by wall time is kept whole ([`PhaseRecord::median`]). On-demand reads
//!    happen inside items and are not recorded: an on-demand point is refused
//!    ([`PointError::OnDemand`]).
//! 2. **Project** ([`PhaseRecord::profile`], [`project_point`]): the record's items cut as
//!    a pass of N workers cuts them ([`BatchCut`]), items and root units slowed as the
//!    execution simulator's memory validation measured ([`Slowdown`]), scheduled by
//!    [`project_phases`].
//! 3. **Validate** ([`whole_block_report`]): each phase's median over measured passes at
//!    the validated thread counts, set beside its projection ([`PhaseTimes`]). The slowdown
//!    is fitted on the memory points only (the execution simulator's [`ItemCost`]), never on
//!    a store point.
//!
//! A device curve ([`DeviceCurve`]: probed on the store's data file, or given) caps each
//! read at its device reads ÷ the curve's rate at the store's readers, the readers every
//! store pass reads on. On a warm store a read makes next to no device reads and the curve
//! caps nothing.
//!
//! Above the largest validated count a projection is a band ([`Band`]): the slowdown
//! curve held flat, and the item-time ratio a 16-core machine measured
//! ([`SIXTEEN_CORE_ITEM_TIME_RATIO`]).

use crate::{
    execution::BatchCut,
    phases::{
        BatchProfile, BlockRoot, DeviceCurve, PhaseConfig, PhaseProfile, PhaseProfileError,
        PhaseProjection, ReadMode, ReadProfile, project_phases,
    },
    report::{ItemCost, SimulationReport},
};
use gigagas_grid::{
    Backlog, Claims, Persist, RunConfig, SchedulerKind, StateRootPhase, StoreRead, TimedWork,
    WorkItems,
};
use serde::{Deserialize, Serialize};
use std::num::NonZeroUsize;

/// How much longer items took in all at 16 threads than at one on the 16-core machine of
/// `shared/measurements/16c-cf0977f` (`mainnet.json`: Σ item time of the median repeat,
/// batch 42, ols: 0.2148 s at 16 threads over 0.1905 s at 1). The upper edge of a band.
pub const SIXTEEN_CORE_ITEM_TIME_RATIO: f64 = 1.128;

/// A store point the model cannot project.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PointError {
    /// On-demand reads happen inside the items; the model has no phase for them.
    #[error(
        "--io on-demand: the whole-block simulator models prefetch, pipelined and beside reads \
         only (on-demand reads happen inside the items and are not recorded)"
    )]
    OnDemand,
    /// A point that reads no store.
    #[error("the whole-block simulator needs a store point")]
    NotAStore,
    /// A recorded profile the model cannot run.
    #[error(transparent)]
    Profile(#[from] PhaseProfileError),
}

/// The model's read mode of a store point; on demand and memory are refused.
pub fn read_mode(work: &TimedWork) -> Result<ReadMode, PointError> {
    match work.state.read() {
        None => Err(PointError::NotAStore),
        Some(StoreRead::OnDemand) => Err(PointError::OnDemand),
        Some(StoreRead::Prefetch(_)) => Ok(ReadMode::Prefetch),
        Some(StoreRead::Beside(_)) => Ok(ReadMode::Beside),
        Some(StoreRead::Pipelined(_)) => Ok(ReadMode::Pipelined),
    }
}

/// One-thread times of a store pass's phases.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseRecord {
    /// Blocks per batch of the pass.
    pub batch: usize,
    /// The pass's timed window, nanoseconds.
    pub wall_ns: u64,
    /// Each item's time, nanoseconds (indexed like the workload's items).
    pub item_ns: Vec<u64>,
    /// Each batch's read, nanoseconds of wall time.
    pub read_ns: Vec<u64>,
    /// Each batch's device reads: its readers' major page faults while reading
    /// (the executor's `RunTimings::read_faults`); near 0 on a warm store.
    pub read_faults: Vec<u64>,
    /// Each batch's root work, its blocks in order (empty with the root phase off).
    pub roots: Vec<Vec<BlockRoot>>,
    /// Reads beside execution: each block's part of its batch's read, nanoseconds: one
    /// reader's time on it (from when a reader took it to its ready time) on a core of its
    /// own, indexed like the workload's blocks (the batch's `read_ns` scaled alike);
    /// empty for other reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub block_read_ns: Vec<u64>,
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

    /// The root units' time in all (advances, account stages, storage tasks and account
    /// units), nanoseconds.
    pub fn root_work_ns(&self) -> u64 {
        self.roots
            .iter()
            .flatten()
            .map(|b| {
                b.prepare_ns
                    + b.stage_ns
                    + b.finish_ns
                    + b.storage_ns.iter().sum::<u64>()
                    + b.account_ns.iter().sum::<u64>()
            })
            .sum()
    }

    /// Root units recorded, by kind ([`RootUnitCounts`]).
    pub fn root_units(&self) -> RootUnitCounts {
        let mut counts = RootUnitCounts::default();
        for b in self.roots.iter().flatten() {
            counts.advances += usize::from(b.prepare_ns > 0) + usize::from(b.finish_ns > 0);
            counts.stages += usize::from(b.stage_ns > 0);
            counts.storage += b.storage_ns.len();
            counts.accounts += b.account_ns.len();
        }
        counts
    }

    /// Reads beside execution: the items of `range` by block (from the batch's first) and
    /// those blocks' parts of the read; both empty for other reads.
    fn beside(&self, work: &WorkItems, range: std::ops::Range<usize>) -> (Vec<u32>, Vec<u64>) {
        let items = &work.items()[range];
        let (Some(first), Some(last)) = (items.first(), items.last()) else {
            return (Vec::new(), Vec::new());
        };
        let blocks = first.block as usize..last.block as usize + 1;
        match self.block_read_ns.get(blocks) {
            Some(parts) if !parts.is_empty() => (
                items.iter().map(|i| i.block - first.block).collect(),
                parts.to_vec(),
            ),
            _ => (Vec::new(), Vec::new()),
        }
    }

    /// The profile of a pass of `cut.threads` workers: the items ordered and cut as that
    /// pass does, items and root units slowed by `slowdown`; reads as recorded, each with
    /// its device reads (what a device curve caps).
    pub fn profile(&self, work: &WorkItems, cut: BatchCut, slowdown: Slowdown) -> PhaseProfile {
        let batches = work
            .batches(self.batch)
            .into_iter()
            .enumerate()
            .map(|(k, range)| {
                let (mut order, mut bounds) = (Vec::new(), Vec::new());
                cut.cut(
                    work,
                    &self.item_ns,
                    range.clone(),
                    &mut order,
                    [(Claims::Chunked, &mut bounds)],
                );
                let (item_block, block_read_ns) = self.beside(work, range.clone());
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
                        storage_writes: b.storage_writes.clone(),
                        finish_ns: slowdown.unit(b.finish_ns),
                        stage_ns: slowdown.unit(b.stage_ns),
                        persist_ns: b.persist_ns,
                        commit_ns: b.commit_ns,
                        account_ns: b.account_ns.iter().map(|&ns| slowdown.unit(ns)).collect(),
                        account_leaves: b.account_leaves.clone(),
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
                    item_block,
                    block_read_ns,
                }
            })
            .collect();
        PhaseProfile {
            batches,
            unit_ns: crate::phases::ROOT_UNIT_NS,
        }
    }
}

/// A record's root units by kind ([`PhaseRecord::root_units`]): what the executor's root
/// queue ran for its blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RootUnitCounts {
    /// Advances with a time: a block's preparation, and the finish a batch ends with.
    pub advances: usize,
    /// Account stages with a time (blocks whose account trie was cut into units).
    pub stages: usize,
    /// Storage tasks: whole storage tries and units of split ones.
    pub storage: usize,
    /// Account units: lower subtries of an account trie.
    pub accounts: usize,
}

/// How much longer work takes beside other threads: an item profiled at `x` takes
/// `x × factor + added_ns`, a root unit `x × factor` (the execution simulator's
/// `ItemCost`, fitted on memory points).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
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
    /// With persistence: the blocks' waits on it summed (`block`: their synced commits;
    /// `background`: their stalls on the writer).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub persist_wait_ns: f64,
    /// `background`: draining the writer after the last block (inside `wall_ns`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub drain_ns: f64,
    /// Reads beside execution: per batch, its first item's wait for its block (part of
    /// `exposed_read_ns`; the rest are later stalls); measured from the batch's start to
    /// its first item's on a pass without root units (0 with them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub first_read_wait_ns: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl From<&PhaseProjection> for PhaseTimes {
    fn from(p: &PhaseProjection) -> Self {
        Self {
            wall_ns: p.makespan_ns,
            read_ns: p.read_ns,
            exposed_read_ns: p.exposed_read_ns,
            exec_ns: p.exec_ns,
            root_ns: p.root_ns,
            persist_wait_ns: p.persist_wait_ns,
            drain_ns: p.drain_ns,
            first_read_wait_ns: p.first_read_wait_ns,
        }
    }
}

impl PhaseTimes {
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
            persist_wait_ns: med(|p| p.persist_wait_ns),
            drain_ns: med(|p| p.drain_ns),
            first_read_wait_ns: med(|p| p.first_read_wait_ns),
        }
    }
}

/// A store point of the whole-block simulator: its timed work (store read and root
/// phase), batch and scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WholeBlockPoint {
    /// What the pass does: a store read (prefetch, pipelined or beside) and the root phase.
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
        let persist = match self.work.persist {
            Persist::None => String::new(),
            p => format!(", persist {}", p.name()),
        };
        format!(
            "{io}{design}, root {}{persist}",
            self.work.state_root.name()
        )
    }

    /// The model's configuration of this point at `workers` workers on `cores` cores.
    pub fn phase_config(
        &self,
        workers: NonZeroUsize,
        cores: NonZeroUsize,
    ) -> Result<PhaseConfig, PointError> {
        Ok(
            PhaseConfig::new(read_mode(&self.work)?, self.work.state_root, workers)
                .with_cores(cores)
                .with_persist(self.work.persist, self.work.backlog),
        )
    }
}

/// A point's one-thread record and its measured passes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointMeasurement {
    /// The median of the profiling passes.
    pub record: PhaseRecord,
    /// Profiling passes.
    pub profile_runs: usize,
    /// Per validated thread count, the median of each phase over its measured passes.
    pub measured: Vec<(NonZeroUsize, PhaseTimes)>,
}

/// Project `point` from `record` at `workers` workers on `cores` cores with `slowdown`,
/// each read capped by `device` (a curve for the model's one reader: [`DeviceCurve::held_at`]
/// the pass's readers; `None`: no cap).
pub fn project_point(
    work: &WorkItems,
    point: &WholeBlockPoint,
    record: &PhaseRecord,
    workers: NonZeroUsize,
    cores: NonZeroUsize,
    slowdown: Slowdown,
    device: Option<&DeviceCurve>,
) -> Result<PhaseTimes, PointError> {
    let on = Machine {
        workers,
        cores,
        readers: NonZeroUsize::MIN,
    };
    project_on(work, point, record, on, slowdown, device)
}

/// A projection's machine: workers on cores, and the readers a read beside execution
/// reads on.
#[derive(Debug, Clone, Copy)]
struct Machine {
    workers: NonZeroUsize,
    cores: NonZeroUsize,
    readers: NonZeroUsize,
}

/// [`project_point`] on `on`, each read capped by `device` read at the model's readers.
fn project_on(
    work: &WorkItems,
    point: &WholeBlockPoint,
    record: &PhaseRecord,
    on: Machine,
    slowdown: Slowdown,
    device: Option<&DeviceCurve>,
) -> Result<PhaseTimes, PointError> {
    let cut = BatchCut {
        threads: on.workers,
        scheduler: point.scheduler,
    };
    let profile = record.profile(work, cut, slowdown);
    let config = point
        .phase_config(on.workers, on.cores)?
        .with_readers(on.readers);
    Ok(PhaseTimes::from(&project_phases(
        &profile, &config, device,
    )?))
}

/// The store's readers every store pass reads on, and the device curve that caps their
/// reads.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreReaders {
    /// The readers (the store's `--io-threads`).
    pub count: NonZeroUsize,
    /// The curve that caps each read (`None`: no cap).
    pub curve: Option<DeviceCurve>,
}

/// A projection: one figure per phase where the slowdown is validated, a band above.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Band {
    /// The slowdown curve held flat (the memory points' fit, or none without validation).
    pub flat: PhaseTimes,
    /// Above the largest validated count, the band's other edge: items and root units at
    /// the 16-core item-time ratio ([`SIXTEEN_CORE_ITEM_TIME_RATIO`]), no fixed cost.
    pub sixteen_core: Option<PhaseTimes>,
}

/// One row of the validation: a point at a thread count, projected and measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointProjection {
    /// The point's label.
    pub point: String,
    /// Per worker count (on as many cores), the projection.
    pub bands: Vec<(NonZeroUsize, Band)>,
}

/// The whole-block simulation of a dump's store points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// The whole-block report of `measured` store points (each point with its one-thread
/// record and its measured passes): each measured count projected beside its medians, and
/// each of `threads` projected (each on as many cores) as a band above
/// `largest_validated`. Measured counts are projected on `cores` cores (the machine's);
/// `cost` is the slowdown fitted on memory points (`None`: none); `readers` the store's
/// readers and the curve that caps each read. A prefetched or pipelined read is projected
/// as one reader's, capped by the curve held at the store's readers; a read beside
/// execution on the store's readers, each a block at a time, capped by the curve itself.
pub fn whole_block_report(
    work: &WorkItems,
    measured: &[(WholeBlockPoint, PointMeasurement)],
    threads: &[NonZeroUsize],
    largest_validated: usize,
    cores: NonZeroUsize,
    cost: Option<&ItemCost>,
    readers: StoreReaders,
) -> Result<WholeBlockReport, PointError> {
    let held = readers.curve.as_ref().map(|c| c.held_at(readers.count));
    let mut validations = Vec::new();
    let mut projections = Vec::new();
    for (point, m) in measured {
        let (on, device) = match read_mode(&point.work)? {
            ReadMode::Beside => (readers.count, readers.curve.as_ref()),
            _ => (NonZeroUsize::MIN, held.as_ref()),
        };
        let machine = |workers, cores| Machine {
            workers,
            cores,
            readers: on,
        };
        for &(t, measured) in &m.measured {
            let slowdown = Slowdown::of(cost, t.get());
            let projected =
                project_on(work, point, &m.record, machine(t, cores), slowdown, device)?;
            validations.push(PhaseValidation {
                point: point.label(),
                threads: t.get(),
                projected,
                measured,
            });
        }
        let mut bands = Vec::new();
        for &t in threads {
            let flat = Slowdown::of(cost, t.get());
            let at = |s| project_on(work, point, &m.record, machine(t, t), s, device);
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
        device: readers.curve.map(|c| (c, readers.count)),
    })
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
        out.push_str(&self.waits_markdown());
        out
    }

    /// The waits the main tables do not show, where any point has one: each block's
    /// persistence summed and the writer's drain (projected / measured at the validated
    /// counts, projected above), and with reads beside execution the first items' waits;
    /// nothing for a report without.
    fn waits_markdown(&self) -> String {
        let any = |t: &PhaseTimes| {
            t.persist_wait_ns > 0.0 || t.drain_ns > 0.0 || t.first_read_wait_ns > 0.0
        };
        let bands = self.projections.iter().flat_map(|p| &p.bands);
        if !bands.clone().any(|(_, b)| any(&b.flat))
            && !self.validations.iter().any(|v| any(&v.measured))
        {
            return String::new();
        }
        let mut out = String::from(
            "\n**Whole block: waits** (ms, summed over the pass; persist wait: the blocks' \
             chains on persistence; drain: the background writer after the last block, inside \
             end to end; first read wait: each batch's first item on its block's read, inside \
             the exposed read; projected / measured)\n\n\
             | point | workers | persist wait | drain | first read wait |\n\
             |---|---:|---:|---:|---:|\n",
        );
        for v in &self.validations {
            let (p, m) = (&v.projected, &v.measured);
            out.push_str(&format!(
                "| {} | {} (measured) | {} / {} | {} / {} | {} / {} |\n",
                v.point,
                v.threads,
                ms(p.persist_wait_ns),
                ms(m.persist_wait_ns),
                ms(p.drain_ns),
                ms(m.drain_ns),
                ms(p.first_read_wait_ns),
                ms(m.first_read_wait_ns),
            ));
        }
        for p in &self.projections {
            for (t, band) in &p.bands {
                let f = &band.flat;
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    p.point,
                    t,
                    ms(f.persist_wait_ns),
                    ms(f.drain_ns),
                    ms(f.first_read_wait_ns),
                ));
            }
        }
        out
    }
}

/// How the store points of a list commit their blocks: each of `modes` (persistence
/// needs a root: a point with the root phase off takes `none` alone), a background writer
/// with `backlog`.
#[derive(Debug, Clone, Copy)]
pub struct PersistChoice<'a> {
    /// The modes.
    pub modes: &'a [Persist],
    /// The background writer's limits.
    pub backlog: Backlog,
}

impl PersistChoice<'_> {
    /// No persistence.
    pub const NONE: PersistChoice<'static> = PersistChoice {
        modes: &[Persist::None],
        backlog: Backlog::RETH,
    };
}

/// The store points of `reads` × `phases` × `persist`'s modes (a point without a root
/// once, without persistence), for a point list.
pub fn points(
    reads: &[StoreRead],
    phases: &[StateRootPhase],
    persist: PersistChoice<'_>,
    cache: gigagas_grid::CacheState,
    batch: usize,
    scheduler: SchedulerKind,
) -> Result<Vec<WholeBlockPoint>, PointError> {
    let mut out = Vec::new();
    for &read in reads {
        if read == StoreRead::OnDemand {
            return Err(PointError::OnDemand);
        }
        for &state_root in phases {
            let modes = match state_root {
                StateRootPhase::Off => &[Persist::None][..],
                _ => persist.modes,
            };
            for &mode in modes {
                out.push(WholeBlockPoint {
                    work: TimedWork {
                        state: gigagas_grid::StateRead::store(read, cache),
                        state_root,
                        persist: mode,
                        backlog: persist.backlog,
                        ..TimedWork::default()
                    },
                    batch,
                    scheduler,
                });
            }
        }
    }
    Ok(out)
}

/// The slowdown the execution simulator fitted on memory points (`report`'s curve and
/// share over `items` items): the only free term of the whole-block model. `None` without
/// a validation above one thread.
pub fn memory_cost(report: &SimulationReport, items: usize) -> Option<ItemCost> {
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
