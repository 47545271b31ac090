//! Figures derived from run timings: throughput, longest-transaction latency, the
//! critical-path bound, utilisation, and medians over repeats.

use crate::{replay::Replay, run::RunTimings};
use hdrhistogram::Histogram;

/// Figures of one timed run.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Metrics {
    /// Wall time of the timed window, seconds.
    pub wall_s: f64,
    /// Gas used by all blocks divided by wall time, in Ggas/s.
    pub ggas_per_s: f64,
    /// Longest-transaction latency: sum over batches of the slowest item, seconds.
    pub longest_tx_s: f64,
    /// Critical-path lower bound: sum over batches of max(slowest item, batch work /
    /// threads), seconds. No schedule on this many threads can beat it.
    pub bound_s: f64,
    /// `bound_s / wall_s`: 1.0 means the run is as fast as the bound allows.
    pub efficiency: f64,
    /// Sum of all items' execution times, seconds.
    pub work_s: f64,
    /// Mean worker utilisation: busy time / (threads × wall).
    pub utilisation: f64,
}

impl Metrics {
    /// Derive the figures of a run on `threads` workers.
    pub fn of(replay: &Replay, timings: &RunTimings, threads: usize) -> Self {
        let threads = threads.max(1) as f64;
        let mut longest = 0u64;
        let mut bound = 0f64;
        for range in &timings.batches {
            let items = &timings.item_ns[range.clone()];
            let max = items.iter().copied().max().unwrap_or(0);
            let sum: u64 = items.iter().sum();
            longest += max;
            bound += (max as f64).max(sum as f64 / threads);
        }
        let wall_s = timings.wall_ns as f64 / 1e9;
        let work: u64 = timings.item_ns.iter().sum();
        let busy: u64 = timings.worker_busy_ns.iter().sum();
        Self {
            wall_s,
            ggas_per_s: replay.total_gas() as f64 / timings.wall_ns.max(1) as f64,
            longest_tx_s: longest as f64 / 1e9,
            bound_s: bound / 1e9,
            efficiency: bound / timings.wall_ns.max(1) as f64,
            work_s: work as f64 / 1e9,
            utilisation: busy as f64 / (timings.wall_ns.max(1) as f64 * threads),
        }
    }
}

/// Median, minimum and maximum of the repeats of one grid point.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// The repeat with the median wall time.
    pub median: Metrics,
    /// Fastest repeat's throughput, Ggas/s.
    pub max_ggas_per_s: f64,
    /// Slowest repeat's throughput, Ggas/s.
    pub min_ggas_per_s: f64,
    /// Every repeat, in run order.
    pub repeats: Vec<Metrics>,
    /// Per-transaction execution time over all repeats: p50, p99, max (microseconds).
    pub tx_us_p50_p99_max: (f64, f64, f64),
    /// Busy time of each worker in the median repeat, seconds (utilisation = busy / wall).
    #[serde(default)]
    pub worker_busy_s: Vec<f64>,
}

impl Summary {
    /// Summarise the repeats of one grid point; `tx_ns` are the transaction times.
    pub fn of(repeats: Vec<Metrics>, tx_ns: impl IntoIterator<Item = u64>) -> Self {
        Self::with_workers(repeats, tx_ns, &[])
    }

    /// Like [`Summary::of`], with `worker_busy_ns[r]` the per-worker busy times of repeat
    /// `r` (the median repeat's are kept).
    pub fn with_workers(
        repeats: Vec<Metrics>,
        tx_ns: impl IntoIterator<Item = u64>,
        worker_busy_ns: &[Vec<u64>],
    ) -> Self {
        assert!(!repeats.is_empty(), "a summary needs at least one repeat");
        let mut by_wall: Vec<usize> = (0..repeats.len()).collect();
        by_wall.sort_by(|&a, &b| repeats[a].wall_s.total_cmp(&repeats[b].wall_s));
        let median_index = by_wall[by_wall.len() / 2];
        let median = repeats[median_index];
        let sorted: Vec<Metrics> = by_wall.iter().map(|&i| repeats[i]).collect();
        let worker_busy_s = worker_busy_ns
            .get(median_index)
            .map(|w| w.iter().map(|ns| *ns as f64 / 1e9).collect())
            .unwrap_or_default();
        let mut hist =
            Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds");
        for ns in tx_ns {
            hist.saturating_record(ns.max(1));
        }
        let us = |ns: u64| ns as f64 / 1e3;
        Self {
            median,
            max_ggas_per_s: sorted[0].ggas_per_s,
            min_ggas_per_s: sorted[sorted.len() - 1].ggas_per_s,
            repeats,
            tx_us_p50_p99_max: (
                us(hist.value_at_quantile(0.5)),
                us(hist.value_at_quantile(0.99)),
                us(hist.max()),
            ),
            worker_busy_s,
        }
    }
}
