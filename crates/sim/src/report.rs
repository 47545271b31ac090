//! The schedule simulator's results, as recorded in results.json: projections of a
//! dump's one-thread item profile onto virtual workers, and their validation against
//! measured runs. [`crate::execution`] computes them.

use gigagas_grid::SchedulerKind;
use serde::{Deserialize, Serialize};

/// One projected grid point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    /// Virtual workers.
    pub threads: usize,
    /// Blocks per mega-block.
    pub batch: usize,
    /// Scheduler whose order was list-scheduled.
    pub scheduler: SchedulerKind,
    /// Projected wall time: sum of the batches' makespans, seconds.
    pub makespan_s: f64,
    /// Projected throughput, Ggas/s.
    pub ggas_per_s: f64,
    /// Sum over batches of the slowest item, seconds.
    pub longest_tx_s: f64,
    /// `longest_tx_s / makespan_s`.
    pub longest_share: f64,
    /// Critical-path bound: sum over batches of max(slowest item, work / threads), seconds.
    pub bound_s: f64,
    /// Factor every profiled item time was multiplied by (1 at one thread; above one
    /// thread the report's [`SimulationReport::item_slowdown`]).
    pub item_slowdown: f64,
    /// Nanoseconds added to every item time after the factor: the fixed cost per item that
    /// concurrency adds at this thread count ([`ItemCost`]; 0 at one thread, and in results
    /// written before the simulator modelled it).
    pub item_cost_ns: f64,
    /// Projected wall time with one item per claim (plain list scheduling, the reference
    /// the chunk cut is checked against), seconds; [`Projection::makespan_s`] is with the
    /// chunks a pass claims. `None` in results written before the simulator projected it.
    #[serde(default)]
    pub one_item_makespan_s: Option<f64>,
    /// How much longer the items ran on one thread in this projection's order than in
    /// block order, at the same batch size (the one-thread validation runs' summed item
    /// times, the scheduler's against ols's): what an order that moves between blocks
    /// pays for reaching their data again. Every item time of the projection is
    /// multiplied by it; 1 for ols, without one-thread validation runs of both orders, and
    /// in results written before the simulator modelled it.
    #[serde(default = "no_penalty")]
    pub order_penalty: f64,
}

fn no_penalty() -> f64 {
    1.0
}

impl Projection {
    /// How much longer the chunked schedule runs than one item per claim:
    /// `makespan_s / one_item_makespan_s - 1` (0.02: chunks cost 2 %), when recorded.
    pub fn chunk_cost(&self) -> Option<f64> {
        self.one_item_makespan_s
            .map(|one| self.makespan_s / one.max(f64::MIN_POSITIVE) - 1.0)
    }
}

/// Predicted against measured wall time at one grid point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    /// Threads (real and virtual).
    pub threads: std::num::NonZeroUsize,
    /// Blocks per mega-block.
    pub batch: usize,
    /// Scheduler.
    pub scheduler: SchedulerKind,
    /// Projected wall time, seconds.
    pub predicted_s: f64,
    /// Measured median wall time, seconds.
    pub measured_s: f64,
    /// `predicted / measured - 1` (negative: the model is optimistic).
    pub error: f64,
    /// Sum of the item times in the measured median repeat, seconds.
    pub measured_work_s: f64,
    /// `measured_work_s / profile work`: how much slower (> 1) each item ran in the measured
    /// run than in the profile, from concurrency (caches, memory) or from the machine
    /// itself drifting (other load, frequency).
    pub item_time_ratio: f64,
    /// Error of the scheduling model alone: the prediction scaled by
    /// [`Validation::item_time_ratio`], against the measured wall time.
    pub scheduling_error: f64,
    /// The model's wall time with concurrency's cost ([`ItemCost::at_run_scale`]): every
    /// item's modelled time, list-scheduled again
    /// (absent in results written before the simulator modelled it: tables then scale the
    /// projection by [`SlowdownCurve::ratio_at`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modelled_s: Option<f64>,
}

impl Validation {
    /// The model's wall time at this point: the one the simulator recorded
    /// ([`Validation::modelled_s`]), or, in older results, `curve`'s
    /// ([`SlowdownCurve::modelled_s`]; `curve` is the report's
    /// [`SimulationReport::slowdown_curve`]).
    pub fn modelled_wall_s(&self, curve: &SlowdownCurve) -> f64 {
        self.modelled_s.unwrap_or_else(|| curve.modelled_s(self))
    }

    /// `modelled / measured - 1` ([`Validation::modelled_wall_s`]).
    pub fn modelled_error(&self, curve: &SlowdownCurve) -> f64 {
        self.modelled_wall_s(curve) / self.measured_s.max(f64::MIN_POSITIVE) - 1.0
    }
}

/// A simulation of one dump: the profile's summary, projections, validations and the
/// model's assumptions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimulationReport {
    /// Dump name.
    pub dump: String,
    /// Dump checksum.
    pub dump_checksum: String,
    /// Gas used by all blocks.
    pub total_gas: u64,
    /// One-thread runs the per-item medians come from.
    pub profile_runs: usize,
    /// Sum of the per-item medians (the projected one-thread wall time), seconds.
    pub profile_work_s: f64,
    /// Sum of the item times of each profiling run, seconds.
    pub profile_run_work_s: Vec<f64>,
    /// How much longer each item takes above one thread than in the one-thread profile,
    /// as applied to every projection above one thread.
    pub item_slowdown: f64,
    /// Where [`SimulationReport::item_slowdown`] and [`SimulationReport::item_cost_ns`]
    /// come from (measured, configured, none).
    pub item_slowdown_source: String,
    /// The fixed cost added to every item at each validated thread count above one,
    /// `(threads, ns)` ascending, on the profile's scale ([`ItemCost::at`]); empty when a
    /// factor was configured, nothing above one thread was validated, or in results
    /// written before the simulator modelled it.
    pub item_cost_ns: Vec<(usize, f64)>,
    /// The share of concurrency's extra item time that scales with an item's length
    /// ([`ItemCost::scaled`]), fitted to the validation runs (1 when a factor was
    /// configured or in results written before the simulator fitted it).
    pub item_cost_scaled_share: f64,
    /// Projections, in (batch, scheduler, threads) order.
    pub projections: Vec<Projection>,
    /// Predicted against measured wall time.
    pub validations: Vec<Validation>,
    /// What the model assumes (the bench crate's `simulate::ASSUMPTIONS`).
    pub assumptions: Vec<String>,
}

impl SimulationReport {
    /// Largest absolute validation error, if any validation ran.
    pub fn max_abs_error(&self) -> Option<f64> {
        self.validations
            .iter()
            .map(|v| v.error.abs())
            .max_by(f64::total_cmp)
    }

    /// The per-item slowdown by thread count that this report's validations measured.
    pub fn slowdown_curve(&self) -> SlowdownCurve {
        SlowdownCurve::from_validations(&self.validations)
    }
}

/// How much longer items take as threads are added: the per-item slowdown as a function of
/// the thread count, from the validation runs.
///
/// On a 16-core machine items ran 1.1–1.2× longer at 4 threads and 1.4–1.9× at 16 than in
/// the one-thread profile, so one factor for every thread count above one leaves the
/// projection 20–50 % off at the counts it was not measured at. The curve keeps one factor
/// per validated thread count: the median item-time ratio (measured work / profiled work)
/// of the validations at that count, over every batch size and scheduler. Between
/// validated counts it is interpolated linearly; below the smallest it runs to 1 at one
/// thread; beyond the largest it is held at the largest's (an assumption: growth beyond the
/// measured range is not extrapolated, so projections there are optimistic if it goes on).
#[derive(Debug, Clone, PartialEq)]
pub struct SlowdownCurve {
    /// `(threads, median item-time ratio)` at each validated thread count, ascending.
    measured: Vec<(usize, f64)>,
}

impl SlowdownCurve {
    /// The curve through the validations' median item-time ratio per thread count
    /// (validations without a recorded ratio, from older results, are left out).
    pub fn from_validations(validations: &[Validation]) -> Self {
        let mut threads: Vec<usize> = validations.iter().map(|v| v.threads.get()).collect();
        threads.sort_unstable();
        threads.dedup();
        let measured = threads
            .into_iter()
            .filter_map(|t| {
                let mut r: Vec<f64> = validations
                    .iter()
                    .filter(|v| v.threads.get() == t && v.item_time_ratio > 0.0)
                    .map(|v| v.item_time_ratio)
                    .collect();
                r.sort_by(f64::total_cmp);
                (!r.is_empty()).then(|| (t, r[r.len() / 2]))
            })
            .collect();
        Self { measured }
    }

    /// The validated thread counts and their median item-time ratios, ascending.
    pub fn measured(&self) -> &[(usize, f64)] {
        &self.measured
    }

    /// The item-time ratio (run / profile) expected at `threads`: the measured one at a
    /// validated count, interpolated between them, held beyond the largest; below the
    /// smallest, on the line to 1 at one thread (when one thread itself was not validated).
    /// 1 when nothing was validated.
    pub fn ratio_at(&self, threads: usize) -> f64 {
        let Some(&(first_t, first_r)) = self.measured.first() else {
            return 1.0;
        };
        let (mut lo_t, mut lo_r) = if first_t > 1 {
            (1, 1.0)
        } else {
            (first_t, first_r)
        };
        if threads <= lo_t {
            return lo_r;
        }
        for &(t, r) in &self.measured {
            if threads <= t {
                let w = (threads - lo_t) as f64 / (t - lo_t).max(1) as f64;
                return lo_r + w * (r - lo_r);
            }
            (lo_t, lo_r) = (t, r);
        }
        lo_r
    }

    /// The modelled wall time of a validation that did not record one (results written
    /// before the simulator modelled concurrency): its projection times the curve's ratio
    /// at its thread count (the same factor for every batch size and scheduler).
    pub fn modelled_s(&self, v: &Validation) -> f64 {
        v.predicted_s * self.ratio_at(v.threads.get())
    }

    /// How much longer in all the items of a run at `threads` take than on one thread, as a
    /// fraction: the ratio at `threads` over the ratio at one thread, minus one (never
    /// negative). The ratio at one thread holds the drift between profile and validation
    /// runs, not concurrency.
    pub fn extra_at(&self, threads: usize) -> f64 {
        if threads <= 1 {
            return 0.0;
        }
        (self.ratio_at(threads) / self.ratio_at(1) - 1.0).max(0.0)
    }
    /// One line for tables: `1 thread 1.15×, 4 threads 1.32×, …`.
    pub fn describe(&self) -> String {
        self.measured
            .iter()
            .map(|&(t, r)| format!("{t} thread{} {r:.3}×", if t == 1 { "" } else { "s" }))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What concurrency adds to each item's time, as the simulator models it. At `threads`
/// threads a run's items take [`SlowdownCurve::extra_at`] longer in all than on one thread;
/// a share `scaled` of that extra time grows with each item's length (caches, memory
/// bandwidth, frequency: what separate processes on the same machine also see), and the
/// rest is the same fixed cost for every item (what sharing inside the process costs per
/// item, however long the item). On 16 cores a factor alone (`scaled` = 1) over-charged the
/// long transactions on the critical path by up to 36 %: short ones slowed by about 4×,
/// long ones by 1.2–1.3×.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemCost {
    curve: SlowdownCurve,
    scaled: f64,
    profile_work_ns: f64,
    items: usize,
}

impl ItemCost {
    /// The model over `curve`, with `scaled` of the extra time proportional to item length
    /// (clamped to 0..=1), for a profile of `items` items taking `profile_work_s` in all.
    pub fn new(curve: SlowdownCurve, scaled: f64, profile_work_s: f64, items: usize) -> Self {
        Self {
            curve,
            scaled: scaled.clamp(0.0, 1.0),
            profile_work_ns: profile_work_s * 1e9,
            items,
        }
    }

    /// The share of the extra time that scales with an item's length.
    pub fn scaled(&self) -> f64 {
        self.scaled
    }

    /// `(factor, added_ns)` at `threads` on the profile's scale: an item profiled at `x` ns
    /// is modelled to take `x * factor + added_ns`. `(1, 0)` at one thread.
    pub fn at(&self, threads: usize) -> (f64, f64) {
        let extra = self.curve.extra_at(threads);
        let added = if self.items == 0 {
            0.0
        } else {
            (1.0 - self.scaled) * extra * self.profile_work_ns / self.items as f64
        };
        (1.0 + self.scaled * extra, added)
    }

    /// [`ItemCost::at`] on a validation run's scale: both terms times the ratio at one
    /// thread (how much slower the validation runs were than the profile, whatever the
    /// threads).
    pub fn at_run_scale(&self, threads: usize) -> (f64, f64) {
        let (factor, added) = self.at(threads);
        let one = self.curve.ratio_at(1);
        (factor * one, added * one)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validation(threads: usize, predicted_s: f64, measured_s: f64, ratio: f64) -> Validation {
        Validation {
            threads: std::num::NonZeroUsize::new(threads).unwrap(),
            batch: 1,
            scheduler: SchedulerKind::Ols,
            predicted_s,
            measured_s,
            error: predicted_s / measured_s - 1.0,
            measured_work_s: 0.0,
            item_time_ratio: ratio,
            scheduling_error: predicted_s * ratio / measured_s - 1.0,
            modelled_s: None,
        }
    }

    #[test]
    fn the_curve_takes_the_median_per_thread_count_and_interpolates_between() {
        let curve = SlowdownCurve::from_validations(&[
            validation(1, 1.0, 1.1, 1.1),
            validation(4, 0.3, 0.4, 1.2),
            validation(4, 0.3, 0.4, 1.4),
            validation(4, 0.3, 0.4, 1.3),
            validation(8, 0.2, 0.3, 1.6),
        ]);
        assert_eq!(curve.measured(), &[(1, 1.1), (4, 1.3), (8, 1.6)]);
        assert_eq!(curve.ratio_at(1), 1.1);
        assert!((curve.ratio_at(2) - (1.1 + 0.2 / 3.0)).abs() < 1e-12);
        assert!((curve.ratio_at(6) - 1.45).abs() < 1e-12);
        // Held beyond the largest validated count.
        assert_eq!(curve.ratio_at(64), 1.6);
        // The extra time is relative to one thread.
        assert_eq!(curve.extra_at(1), 0.0);
        assert!((curve.extra_at(8) - (1.6 / 1.1 - 1.0)).abs() < 1e-12);
        assert_eq!(
            curve.describe(),
            "1 thread 1.100×, 4 threads 1.300×, 8 threads 1.600×"
        );
    }

    #[test]
    fn without_one_thread_the_curve_starts_at_one() {
        let curve = SlowdownCurve::from_validations(&[
            validation(4, 0.3, 0.4, 1.3),
            validation(16, 0.1, 0.2, 1.9),
        ]);
        assert_eq!(curve.ratio_at(1), 1.0);
        assert!((curve.ratio_at(2) - 1.1).abs() < 1e-12);
        assert!((curve.ratio_at(10) - 1.6).abs() < 1e-12);
        assert!((curve.extra_at(16) - 0.9).abs() < 1e-12);
    }

    #[test]
    fn the_modelled_error_scales_the_projection_by_the_ratio_at_its_thread_count() {
        let v = [
            validation(1, 1.0, 1.2, 1.2),
            validation(4, 0.3, 0.5, 1.5),
            validation(4, 0.3, 0.4, 1.3),
        ];
        let curve = SlowdownCurve::from_validations(&v);
        // Median at 4 threads is 1.5 (upper median of two).
        assert!((curve.modelled_s(&v[2]) - 0.45).abs() < 1e-12);
        assert!((v[2].modelled_error(&curve) - 0.125).abs() < 1e-12);
        assert!(v[0].modelled_error(&curve).abs() < 1e-12);
        // A time the simulator recorded wins over the curve's.
        let recorded = Validation {
            modelled_s: Some(0.6),
            ..v[2]
        };
        assert_eq!(recorded.modelled_wall_s(&curve), 0.6);
        assert!((recorded.modelled_error(&curve) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn the_item_cost_splits_the_extra_time_into_a_factor_and_a_fixed_cost() {
        let curve = SlowdownCurve::from_validations(&[
            validation(1, 1.0, 1.1, 1.1),
            validation(4, 0.3, 0.4, 1.32),
        ]);
        // 20 % more at 4 threads than at 1.
        assert!((curve.extra_at(4) - 0.2).abs() < 1e-12);
        assert_eq!(curve.extra_at(1), 0.0);
        // A 2 s profile of 1000 items: 0.4 s extra, a quarter of it scaled.
        let cost = ItemCost::new(curve.clone(), 0.25, 2.0, 1000);
        let (factor, added) = cost.at(4);
        assert!((factor - 1.05).abs() < 1e-12);
        assert!((added - 300_000.0).abs() < 1e-6);
        // The extra time adds up: 2 s × 0.05 + 1000 × 0.3 ms = 0.4 s.
        assert!((2.0 * (factor - 1.0) + 1000.0 * added / 1e9 - 0.4).abs() < 1e-9);
        assert_eq!(cost.at(1), (1.0, 0.0));
        let (f, a) = cost.at_run_scale(4);
        assert!((f - 1.05 * 1.1).abs() < 1e-12 && (a - 330_000.0).abs() < 1e-6);
        // All scaled: a factor alone; none: a fixed cost alone.
        assert_eq!(ItemCost::new(curve.clone(), 1.0, 2.0, 1000).at(4).1, 0.0);
        assert_eq!(ItemCost::new(curve, 0.0, 2.0, 1000).at(4).0, 1.0);
        // Never negative, when items ran faster above one thread than on one.
        let faster = SlowdownCurve::from_validations(&[
            validation(1, 1.0, 1.1, 1.2),
            validation(2, 0.5, 0.5, 1.0),
        ]);
        assert_eq!(faster.extra_at(2), 0.0);
    }

    #[test]
    fn no_validations_no_slowdown() {
        let curve = SlowdownCurve::from_validations(&[]);
        assert_eq!(curve.ratio_at(16), 1.0);
        assert_eq!(curve.extra_at(16), 0.0);
        assert_eq!(curve.describe(), "");
    }
}
