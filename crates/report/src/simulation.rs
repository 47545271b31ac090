//! The schedule simulator's results, as recorded in results.json: projections of a
//! dump's one-thread item profile onto virtual workers, and their validation against
//! measured runs. The bench crate's `simulate` module computes them.

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
    #[serde(default = "one_f64")]
    pub item_slowdown: f64,
}

fn one_f64() -> f64 {
    1.0
}

/// Predicted against measured wall time at one grid point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    /// Threads (real and virtual).
    pub threads: usize,
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
    #[serde(default)]
    pub measured_work_s: f64,
    /// `measured_work_s / profile work`: how much slower (> 1) each item ran in the measured
    /// run than in the profile, from concurrency (caches, memory) or from the machine
    /// itself drifting (other load, frequency).
    #[serde(default)]
    pub item_time_ratio: f64,
    /// Error of the scheduling model alone: the prediction scaled by
    /// [`Validation::item_time_ratio`], against the measured wall time.
    #[serde(default)]
    pub scheduling_error: f64,
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
    #[serde(default)]
    pub profile_run_work_s: Vec<f64>,
    /// How much longer each item takes above one thread than in the one-thread profile,
    /// as applied to every projection above one thread.
    #[serde(default = "one_f64")]
    pub item_slowdown: f64,
    /// Where [`SimulationReport::item_slowdown`] comes from (measured, configured, none).
    #[serde(default)]
    pub item_slowdown_source: String,
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
}
