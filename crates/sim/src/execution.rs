//! The execution model: how fast would a dump's items run on N workers?
//!
//! 1. **Profile** (the bench crate, outside this crate): run the dump on one thread, batch
//!    1, `ols`, a few times, verifying each run, and keep each item's median execution time
//!    ([`ItemProfile`]).
//! 2. **Project**: for each batch (mega-block) take the scheduler's order and its chunks
//!    (the same `scheduler(..).order(..)` and [`chunk_bounds`] the executor uses, from
//!    [`gigagas_grid::schedule`]; the
//!    oracle orders and cuts by the profile's own item times) and list-schedule the
//!    profiled times onto N virtual workers: each chunk in order goes to the worker that
//!    becomes free first. A batch's makespan is its last finish; batches run one after
//!    another, so the projected wall time is the sum of the makespans ([`project`]). Every
//!    projection is also scheduled one item per claim, the reference the chunk cut is
//!    checked against at worker counts this machine does not have.
//! 3. **Validate**: compare projected with measured wall time at thread counts the
//!    machine has, with validation runs interleaved with the profiling runs (the bench
//!    crate measures them; [`Measure`], [`Validation`]). Each validation also records how much slower the items themselves
//!    ran than in the profile (concurrency effects or machine drift) and the error of the
//!    scheduling model once that is factored out.
//!
//! 4. **Order**: an order that moves between the blocks of a mega-block makes its items
//!    slower than block order does (their blocks' data is no longer in the cache). Each
//!    order's penalty is measured in the one-thread validation runs, against ols at the
//!    same batch, and multiplies that order's item times ([`order_penalties`]).
//!
//! See [`ASSUMPTIONS`] for what the model leaves out.

use crate::report::{ItemCost, Projection, SimulationReport, SlowdownCurve, Validation};
use gigagas_grid::{
    Claims, RunConfig, SchedulerKind, SimulateConfig,
    schedule::{ItemKind, WorkItem, WorkItems, chunk_bounds, scheduler},
};
use serde::{Deserialize, Serialize};
use std::{cmp::Reverse, collections::BinaryHeap, num::NonZeroUsize};

/// What the model projects: a dump's work items and the gas they use.
#[derive(Debug, Clone, Copy)]
pub struct Workload<'a> {
    /// Its items, block after block.
    pub items: &'a WorkItems,
    /// Gas used by all its blocks (from the headers).
    pub total_gas: u64,
}

/// The dump a simulation names in its report.
#[derive(Debug, Clone, Copy)]
pub struct DumpId<'a> {
    /// The dump's name.
    pub name: &'a str,
    /// The dump's checksum.
    pub checksum: &'a str,
}

/// What the model assumes; printed and stored beside every projection.
pub const ASSUMPTIONS: [&str; 6] = [
    "per-item times are the medians of one-thread runs (batch 1, ols); above one thread the items take \
     longer in all by what the validation runs measured at that thread count (interpolated between \
     counts, held beyond the largest), split into a share that scales with each item's length and a \
     fixed cost per item, the share fitted to the validation runs (ItemCost); or, configured, one \
     factor on every item time: memory-bandwidth, cache, frequency and in-process sharing effects \
     enter only through it",
    "workers are identical and never idle while an item is ready: no scheduling, synchronisation or \
     thread wake-up overhead",
    "a batch (mega-block) starts when the previous one has finished; items within a batch are independent \
     (every item runs on its own access-list view)",
    "list scheduling in the scheduler's order, in the chunks a pass claims (and, beside it, one item per \
     claim): each chunk goes to the worker that becomes free first and runs its items back to back; the \
     oracle orders and cuts by the profile's item times",
    "scheduling (sorting) time inside the timed window is not modelled",
    "an order's penalty (its items' extra time on one thread against block order at the same batch, \
     measured in the one-thread validation runs) multiplies its item times at every thread count: \
     each worker is assumed to meet the order's moves between blocks as one thread does",
];

/// The simulator's validation asked for a point that was not measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("simulate: no measurement for {config}")]
pub struct NotMeasured {
    /// The point.
    pub config: RunConfig,
}

/// Per-item execution times of a dump, from one-thread runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemProfile {
    /// Median time of each item over the profiling runs, ns (indexed like the workload's items).
    pub item_ns: Vec<u64>,
    /// Profiling runs.
    pub runs: usize,
    /// Sum of the item times of each profiling run, ns.
    pub run_work_ns: Vec<u64>,
}

/// The median repeat of one measured grid point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredPoint {
    /// The point.
    pub config: RunConfig,
    /// Wall time of the median repeat, seconds.
    pub wall_s: f64,
    /// Sum of the item times of that repeat, seconds.
    pub work_s: f64,
}

/// The median repeats of measured grid points. Implements [`Measure`] (a point that was
/// not measured is an error).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured(pub Vec<MeasuredPoint>);

impl Measure for Measured {
    fn measured(&mut self, config: &RunConfig) -> Result<MeasuredPoint, NotMeasured> {
        self.0
            .iter()
            .find(|m| m.config == *config)
            .copied()
            .ok_or(NotMeasured { config: *config })
    }
}

/// Greedy list scheduling of `times` (taken in `order`, claimed in the chunks `bounds` cuts
/// it into, as the executor's workers claim them: [`chunk_bounds`]) onto
/// `workers` identical workers: each chunk goes to the worker that becomes free first and
/// runs its items back to back. Returns the makespan.
pub fn list_schedule(times: &[u64], order: &[u32], bounds: &[u32], workers: NonZeroUsize) -> u64 {
    let mut free: BinaryHeap<Reverse<u64>> = (0..workers.get()).map(|_| Reverse(0)).collect();
    let mut makespan = 0;
    for chunk in bounds.windows(2) {
        let Reverse(start) = free.pop().expect("at least one worker");
        let end = start
            + order[chunk[0] as usize..chunk[1] as usize]
                .iter()
                .map(|&i| times[i as usize])
                .sum::<u64>();
        makespan = makespan.max(end);
        free.push(Reverse(end));
    }
    makespan
}

/// How a pass of `threads` workers orders and cuts a batch: the scheduler's order and the
/// chunks the workers claim ([`chunk_bounds`]), the oracle ordering and cutting by the
/// profiled times (at least 1 ns each, so every item counts as measured).
#[derive(Debug, Clone, Copy)]
pub struct BatchCut {
    /// The pass's workers.
    pub threads: NonZeroUsize,
    /// Its scheduler.
    pub scheduler: SchedulerKind,
}

impl BatchCut {
    /// The order of the items of `range` (`item_ns` indexed like `work`'s items) into
    /// `order`, as positions in the batch, ordered once; then for each `(claims, bounds)` of
    /// `cuts` the chunks a pass claiming as `claims` says takes, into its `bounds`.
    pub fn cut<const N: usize>(
        &self,
        work: &WorkItems,
        item_ns: &[u64],
        range: std::ops::Range<usize>,
        order: &mut Vec<u32>,
        cuts: [(Claims, &mut Vec<u32>); N],
    ) {
        let timed: Vec<WorkItem>;
        let mut items = &work.items()[range.clone()];
        if self.scheduler == SchedulerKind::Oracle {
            timed = items
                .iter()
                .zip(&item_ns[range])
                .map(|(w, &ns)| WorkItem {
                    measured_ns: ns.max(1),
                    ..*w
                })
                .collect();
            items = &timed;
        }
        let ordering = scheduler(self.scheduler);
        ordering.order(items, self.threads, order);
        let estimate = ordering.estimate(items);
        for (claims, bounds) in cuts {
            chunk_bounds(items, order, self.threads, estimate, claims, bounds);
        }
    }
}

/// Project one grid point from a profile.
pub fn project(
    work: Workload<'_>,
    profile: &ItemProfile,
    threads: NonZeroUsize,
    batch: usize,
    scheduler: SchedulerKind,
) -> Projection {
    project_slowed(work, profile, threads, batch, scheduler, 1.0)
}

/// [`project`] with every item time multiplied by `item_slowdown` when `threads > 1`.
pub fn project_slowed(
    work: Workload<'_>,
    profile: &ItemProfile,
    threads: NonZeroUsize,
    batch: usize,
    scheduler: SchedulerKind,
    item_slowdown: f64,
) -> Projection {
    let slowdown = if threads.get() > 1 {
        item_slowdown
    } else {
        1.0
    };
    project_with(work, profile, threads, batch, scheduler, slowdown, 0.0)
}

/// [`project`] with every item taking `factor` times its profiled time plus `added_ns`:
/// the model of items slowed by concurrency (a factor, and a fixed cost per item that grows
/// with the threads: [`ItemCost::at`]).
///
/// Every batch is scheduled twice: in the chunks a pass claims
/// ([`chunk_bounds`], [`Projection::makespan_s`]) and one item per claim
/// ([`Projection::one_item_makespan_s`]), so the chunk cut is checked at every projected
/// worker count. The oracle orders and cuts by the profile's own item times, as a pass
/// does by its profiling pass's.
pub fn project_with(
    work: Workload<'_>,
    profile: &ItemProfile,
    threads: NonZeroUsize,
    batch: usize,
    scheduler: SchedulerKind,
    factor: f64,
    added_ns: f64,
) -> Projection {
    // A factor alone scales every makespan, longest item and bound alike: schedule the
    // profiled times and scale after. An added cost changes the schedule: schedule the
    // items' modelled times.
    let (scale, cost) = if added_ns == 0.0 {
        (factor, None)
    } else {
        (1.0, Some((factor, added_ns)))
    };
    let (mut order, mut bounds, mut singles) = (Vec::new(), Vec::new(), Vec::new());
    let mut modelled = Vec::new();
    let (mut makespan, mut one_item, mut longest, mut bound) = (0u64, 0u64, 0u64, 0f64);
    for range in work.items.batches(batch) {
        let cut = BatchCut { threads, scheduler };
        let item_ns = &profile.item_ns;
        cut.cut(
            work.items,
            item_ns,
            range.clone(),
            &mut order,
            [
                (Claims::Chunked, &mut bounds),
                (Claims::OneItem, &mut singles),
            ],
        );
        let times = match cost {
            None => &profile.item_ns[range],
            Some((factor, added_ns)) => {
                modelled.clear();
                modelled.extend(
                    profile.item_ns[range]
                        .iter()
                        .map(|&ns| (ns as f64 * factor + added_ns).round() as u64),
                );
                &modelled[..]
            }
        };
        makespan += list_schedule(times, &order, &bounds, threads);
        one_item += list_schedule(times, &order, &singles, threads);
        let max = times.iter().copied().max().unwrap_or(0);
        longest += max;
        bound += (max as f64).max(times.iter().sum::<u64>() as f64 / threads.get() as f64);
    }
    let makespan_ns = makespan as f64 * scale;
    Projection {
        threads: threads.get(),
        batch,
        scheduler,
        makespan_s: makespan_ns / 1e9,
        ggas_per_s: work.total_gas as f64 / makespan_ns.max(1.0),
        longest_tx_s: longest as f64 * scale / 1e9,
        longest_share: longest as f64 / makespan.max(1) as f64,
        bound_s: bound * scale / 1e9,
        item_slowdown: factor,
        item_cost_ns: added_ns,
        one_item_makespan_s: Some(one_item as f64 * scale / 1e9),
        order_penalty: 1.0,
    }
}

/// Where validation gets measured wall times from.
pub trait Measure {
    /// The median repeat of a grid point.
    fn measured(&mut self, config: &RunConfig) -> Result<MeasuredPoint, NotMeasured>;
}

/// Simulate `dump`'s `work` (its items and their profile) as `plan` says: project every `threads ×
/// batch × schedulers` and validate at every `validate_threads` (each with every batch
/// and scheduler: [`SimulateConfig::validation_points`]) against `measure`. Counts of 0
/// in `plan` are skipped (a checked plan has none).
pub fn simulate(
    dump: DumpId<'_>,
    work: Workload<'_>,
    profile: &ItemProfile,
    plan: &SimulateConfig,
    measure: &mut dyn Measure,
) -> Result<SimulationReport, NotMeasured> {
    let profile_work_s = profile.item_ns.iter().sum::<u64>() as f64 / 1e9;
    let mut validations = validate(work, profile, plan, measure)?;
    let curve = SlowdownCurve::from_validations(&validations);
    let penalties = order_penalties(&validations);
    let penalty = |b: usize, s: SchedulerKind| {
        penalties
            .iter()
            .find(|&&(pb, ps, _)| pb == b && ps == s)
            .map_or(1.0, |&(_, _, p)| p)
    };
    let items = work.items.items().len();
    // The model of concurrency: a configured factor on every item, or the measured extra
    // item time per thread count, split by the share fitted to the validation runs.
    let cost = match plan.item_slowdown {
        Some(_) => None,
        None => Some(fit_item_cost(work, profile, &curve, &validations)),
    };
    if let Some(cost) = &cost {
        for v in &mut validations {
            let (factor, added) = cost.at_run_scale(v.threads.get());
            let (t, b, s) = (v.threads, v.batch, v.scheduler);
            let p = penalty(b, s);
            let modelled = project_with(work, profile, t, b, s, factor * p, added * p);
            v.modelled_s = Some(modelled.makespan_s);
        }
    }
    let largest_validated = curve.measured().last().map(|&(t, _)| t);
    let item_cost_ns: Vec<(usize, f64)> = cost
        .iter()
        .flat_map(|cost| {
            curve
                .measured()
                .iter()
                .filter(|&&(t, _)| t > 1)
                .map(|&(t, _)| (t, cost.at(t).1))
        })
        .collect();
    let (item_slowdown, item_slowdown_source) = slowdown_source(
        plan.item_slowdown,
        cost.as_ref(),
        &curve,
        largest_validated,
        items,
    );
    let mut projections = Vec::new();
    let nonzero = |counts: &[usize]| -> Vec<NonZeroUsize> {
        counts
            .iter()
            .filter_map(|&c| NonZeroUsize::new(c))
            .collect()
    };
    for b in nonzero(&plan.batch) {
        for &s in &plan.schedulers {
            let penalty = penalty(b.get(), s);
            for t in nonzero(&plan.threads) {
                let (factor, added) = match (plan.item_slowdown, &cost) {
                    (Some(f), _) if t.get() > 1 => (f, 0.0),
                    (None, Some(cost)) => cost.at(t.get()),
                    _ => (1.0, 0.0),
                };
                let (f, a) = (factor * penalty, added * penalty);
                let mut projection = project_with(work, profile, t, b.get(), s, f, a);
                projection.item_slowdown = factor;
                projection.item_cost_ns = added;
                projection.order_penalty = penalty;
                projections.push(projection);
            }
        }
    }
    Ok(SimulationReport {
        dump: dump.name.to_string(),
        dump_checksum: dump.checksum.to_string(),
        total_gas: work.total_gas,
        profile_runs: profile.runs,
        profile_work_s,
        profile_run_work_s: profile
            .run_work_ns
            .iter()
            .map(|&ns| ns as f64 / 1e9)
            .collect(),
        item_slowdown,
        item_slowdown_source,
        item_cost_ns,
        item_cost_scaled_share: cost.as_ref().map_or(1.0, ItemCost::scaled),
        projections,
        validations,
        assumptions: ASSUMPTIONS.iter().map(|s| s.to_string()).collect(),
    })
}

/// The factor a report states every projection above one thread takes, and where it comes
/// from: `configured`, or `cost` at the largest validated count (`curve`'s, over `items`
/// items), or none.
fn slowdown_source(
    configured: Option<f64>,
    cost: Option<&ItemCost>,
    curve: &SlowdownCurve,
    largest_validated: Option<usize>,
    items: usize,
) -> (f64, String) {
    match (configured, cost, largest_validated) {
        (Some(f), _, _) => (f, "configured (simulate.item_slowdown)".to_string()),
        (None, Some(cost), Some(t)) if t > 1 => (
            cost.at(t).0,
            format!(
                "measured: a run's items took longer than the profile's by the median \
                 item-time ratio ({}); above one thread's, {:.0} % of that extra time scales \
                 with each item's length (the factor shown, at {t} threads) and the rest is a \
                 fixed cost per item over the {items} items, the share fitted to the \
                 validation runs; projections take both at their thread count, interpolated \
                 between validated counts and held beyond {t} threads",
                curve.describe(),
                cost.scaled() * 100.0
            ),
        ),
        (None, _, _) => (1.0, "none: no validation above one thread".to_string()),
    }
}

/// Each of `plan`'s validation points projected (no slowdown) beside its measurement:
/// the error, the items' time ratio to the profile and the scheduling model's own error.
fn validate(
    work: Workload<'_>,
    profile: &ItemProfile,
    plan: &SimulateConfig,
    measure: &mut dyn Measure,
) -> Result<Vec<Validation>, NotMeasured> {
    let profile_work_s = profile.item_ns.iter().sum::<u64>() as f64 / 1e9;
    let mut validations = Vec::new();
    for config in plan.validation_points() {
        let (t, b, s) = (config.threads, config.batch, config.scheduler);
        let predicted_s = project(work, profile, t, b, s).makespan_s;
        let m = measure.measured(&config)?;
        let measured = m.wall_s.max(f64::MIN_POSITIVE);
        let item_time_ratio = m.work_s / profile_work_s.max(f64::MIN_POSITIVE);
        validations.push(Validation {
            threads: t,
            batch: b,
            scheduler: s,
            predicted_s,
            measured_s: m.wall_s,
            error: predicted_s / measured - 1.0,
            measured_work_s: m.work_s,
            item_time_ratio,
            scheduling_error: predicted_s * item_time_ratio / measured - 1.0,
            modelled_s: None,
        });
    }
    Ok(validations)
}

/// Each order's penalty, `(batch, scheduler, penalty)`: how much longer the one-thread
/// validation run of `scheduler` at `batch` took in summed item time than ols's at the
/// same batch. An order that moves between the blocks of a mega-block makes its items
/// reach data that is no longer in the cache; the profile (batch 1, ols) does not pay
/// that. Only where both one-thread runs were measured.
pub fn order_penalties(validations: &[Validation]) -> Vec<(usize, SchedulerKind, f64)> {
    let one_thread = || validations.iter().filter(|v| v.threads.get() == 1);
    one_thread()
        .filter_map(|v| {
            let ols = one_thread()
                .find(|o| o.batch == v.batch && o.scheduler == SchedulerKind::Ols)?
                .measured_work_s;
            (ols > 0.0).then(|| (v.batch, v.scheduler, v.measured_work_s / ols))
        })
        .collect()
}

/// The share of concurrency's extra item time that scales with item length: of 0, 0.05,
/// …, 1, the one whose modelled times ([`ItemCost::at_run_scale`], scheduled again) come
/// closest to the validation runs' measured times (least squared relative error over the
/// validations above one thread; 1, a factor alone, when there are none).
pub fn fit_item_cost(
    work: Workload<'_>,
    profile: &ItemProfile,
    curve: &SlowdownCurve,
    validations: &[Validation],
) -> ItemCost {
    let profile_work_s = profile.item_ns.iter().sum::<u64>() as f64 / 1e9;
    let items = work.items.items().len();
    let above: Vec<&Validation> = validations.iter().filter(|v| v.threads.get() > 1).collect();
    let model = |scaled: f64| ItemCost::new(curve.clone(), scaled, profile_work_s, items);
    if above.is_empty() {
        return model(1.0);
    }
    let squared_error = |cost: &ItemCost| -> f64 {
        above
            .iter()
            .map(|v| {
                let (factor, added) = cost.at_run_scale(v.threads.get());
                let modelled = project_with(
                    work,
                    profile,
                    v.threads,
                    v.batch,
                    v.scheduler,
                    factor,
                    added,
                );
                (modelled.makespan_s / v.measured_s.max(f64::MIN_POSITIVE) - 1.0).powi(2)
            })
            .sum()
    };
    (0..=20)
        .map(|k| model(k as f64 / 20.0))
        .map(|cost| (squared_error(&cost), cost))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, cost)| cost)
        .expect("21 candidates")
}

/// Share of the profiled work spent in transactions (the rest is system calls and
/// withdrawals).
pub fn tx_share(work: Workload<'_>, profile: &ItemProfile) -> f64 {
    let total: u64 = profile.item_ns.iter().sum();
    let tx: u64 = work
        .items
        .items()
        .iter()
        .zip(&profile.item_ns)
        .filter(|(w, _)| matches!(w.kind, ItemKind::Tx(_)))
        .map(|(_, ns)| ns)
        .sum();
    tx as f64 / total.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(workers: usize) -> NonZeroUsize {
        NonZeroUsize::new(workers).unwrap()
    }

    /// Every item a chunk of its own: plain list scheduling.
    fn singles(n: usize) -> Vec<u32> {
        (0..=n as u32).collect()
    }

    #[test]
    fn list_scheduling_is_greedy() {
        let times = [5, 3, 3, 2, 2, 1];
        let order: Vec<u32> = (0..6).collect();
        let b = singles(6);
        assert_eq!(list_schedule(&times, &order, &b, w(1)), 16);
        // w0: 5 (0..5), 2 (5..7), 1 (7..8); w1: 3 (0..3), 3 (3..6), 2 (6..8).
        assert_eq!(list_schedule(&times, &order, &b, w(2)), 8);
        assert_eq!(list_schedule(&times, &order, &b, w(6)), 5);
        assert_eq!(list_schedule(&times, &order, &b, w(100)), 5);
        assert_eq!(list_schedule(&times, &[], &[0], w(4)), 0);
    }

    #[test]
    fn largest_first_beats_a_big_item_last() {
        // One big item last: block order leaves it for the end, largest-first starts it first.
        let times = [1, 1, 1, 1, 4];
        let ols: Vec<u32> = (0..5).collect();
        let lpt = [4, 0, 1, 2, 3];
        assert_eq!(list_schedule(&times, &ols, &singles(5), w(2)), 6);
        assert_eq!(list_schedule(&times, &lpt, &singles(5), w(2)), 4);
    }

    #[test]
    fn a_chunk_runs_on_one_worker() {
        // Chunks [0, 1, 2], [3], [4], [5]: w0 runs 1+1+1 (0..3), w1 runs 2 (0..2), then 2
        // (2..4), then w0 takes the last 2 (3..5).
        let times = [1, 1, 1, 2, 2, 2];
        let order: Vec<u32> = (0..6).collect();
        assert_eq!(list_schedule(&times, &order, &[0, 3, 4, 5, 6], w(2)), 5);
        assert_eq!(list_schedule(&times, &order, &singles(6), w(2)), 5);
        // One chunk of everything: one worker does it all.
        assert_eq!(list_schedule(&times, &order, &[0, 6], w(2)), 9);
    }

    fn validation(
        threads: usize,
        batch: usize,
        scheduler: SchedulerKind,
        work_s: f64,
    ) -> Validation {
        Validation {
            threads: NonZeroUsize::new(threads).unwrap(),
            batch,
            scheduler,
            predicted_s: 1.0,
            measured_s: 1.0,
            error: 0.0,
            measured_work_s: work_s,
            item_time_ratio: 1.0,
            scheduling_error: 0.0,
            modelled_s: None,
        }
    }

    #[test]
    fn an_orders_penalty_is_its_one_thread_work_against_ols_at_the_same_batch() {
        use SchedulerKind::{GasUsed, HeavyFirst, Ols};
        let validations = [
            validation(1, 42, Ols, 0.100),
            validation(1, 42, GasUsed, 0.107),
            validation(1, 42, HeavyFirst, 0.101),
            validation(1, 1, Ols, 0.120),
            validation(1, 1, GasUsed, 0.120),
            // Above one thread: not a penalty (the items' slowdown is modelled apart).
            validation(2, 42, GasUsed, 0.300),
            // No ols run at batch 7: no penalty.
            validation(1, 7, GasUsed, 0.200),
        ];
        let mut penalties = order_penalties(&validations);
        penalties.sort_by_key(|a| (a.0, a.1));
        let rounded: Vec<_> = penalties
            .iter()
            .map(|&(b, s, p)| (b, s, (p * 1000.0).round() as u64))
            .collect();
        assert_eq!(
            rounded,
            [
                (1, Ols, 1000),
                (1, GasUsed, 1000),
                (42, Ols, 1000),
                (42, GasUsed, 1070),
                (42, HeavyFirst, 1010),
            ]
        );
    }
}
