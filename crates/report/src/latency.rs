//! Per-block latency: how a point's blocks are spread in wall time and in GGas/s, the way
//! client benchmarks report block latency (mean, P50, P90, P99), from the batches a row
//! keeps ([`ResultRow::sample_batches`], or the median sample's alone in older results).
//!
//! - The values are every batch of every recorded sample, pooled: a block at batch 1, a
//!   mega-block otherwise (one line per batch: the blocks inside a mega-block run as one
//!   unit and have no time of their own, [`Unit`]).
//! - The mean and the P50 come with a 95 % percentile-bootstrap interval over the samples:
//!   [`RESAMPLES`] times, the samples are drawn again with replacement and their batches
//!   pooled; the seed is fixed ([`SEED`]), so a folder re-renders to the same figures.
//!   One sample (or only the median one recorded) gives no interval.
//! - The tail is taken only where there are blocks enough to show one: P90 from
//!   [`P90_MIN_BLOCKS`] batches per sample, P99 from [`P99_MIN_BLOCKS`]; with fewer, only
//!   the slowest batch is given, marked so ([`Distribution::tail`]).
//! - Percentiles are nearest-rank (a value that was measured), taken toward the slow end:
//!   the wall time's P90 is the time 90 % of the batches took at most; GGas/s's P90 the
//!   throughput 90 % of them reached at least.

use crate::results::{BatchFigures, ResultRow};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Batches per sample from which a P90 is given (fewer: the slowest only).
pub const P90_MIN_BLOCKS: usize = 20;

/// Batches per sample from which a P99 is given (fewer: the P90 and the slowest only).
pub const P99_MIN_BLOCKS: usize = 100;

/// Bootstrap resamples of the samples, per figure.
pub const RESAMPLES: usize = 2_000;

/// Seed of the bootstrap's draws: the same results always give the same intervals.
pub const SEED: u64 = 0x6c61_7465_6e63_7921; // "latency!"

/// Coverage of the bootstrap interval: from the 2.5th to the 97.5th percentile of the
/// resampled figures.
pub const COVERAGE: f64 = 0.95;

/// What one value of a point's distribution stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// One block (batch 1).
    Block,
    /// One mega-block: the batch's blocks ran as one parallel unit, so the line is the
    /// batch's, not a block's.
    MegaBlock {
        /// Blocks in the largest batch.
        blocks: u32,
    },
}

impl Unit {
    /// `block`, or `mega-block` (as `blocks.csv` and `latency.csv` write it).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Block => "block",
            Unit::MegaBlock { .. } => "mega-block",
        }
    }

    /// `block`, or `mega-block of 10 blocks` (as `table.md` says it).
    pub fn describe(self) -> String {
        match self {
            Unit::Block => "block".into(),
            Unit::MegaBlock { blocks } => format!("mega-block of {blocks} blocks"),
        }
    }
}

/// A 95 % interval: its low and high ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Low end.
    pub lo: f64,
    /// High end.
    pub hi: f64,
}

/// The tail of a distribution, as far as its number of batches shows one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tail {
    /// Fewer than [`P90_MIN_BLOCKS`] batches per sample: the slowest only.
    SlowestOnly,
    /// At least [`P90_MIN_BLOCKS`]: the P90, and from [`P99_MIN_BLOCKS`] the P99.
    Percentiles {
        /// The 90th percentile toward the slow end.
        p90: f64,
        /// The 99th percentile toward the slow end, from [`P99_MIN_BLOCKS`] batches.
        p99: Option<f64>,
    },
}

/// One figure's distribution over a point's batches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution {
    /// Mean over every batch of every sample.
    pub mean: f64,
    /// Its bootstrap interval over the samples (`None` with one sample).
    pub mean_bounds: Option<Bounds>,
    /// The median (nearest rank).
    pub p50: f64,
    /// Its bootstrap interval over the samples (`None` with one sample).
    pub p50_bounds: Option<Bounds>,
    /// P90 and P99 where there are batches enough.
    pub tail: Tail,
    /// The slowest batch: the longest wall time, the lowest GGas/s.
    pub slowest: f64,
}

impl Distribution {
    /// The P90, where there are batches enough.
    pub fn p90(&self) -> Option<f64> {
        match self.tail {
            Tail::Percentiles { p90, .. } => Some(p90),
            Tail::SlowestOnly => None,
        }
    }

    /// The P99, where there are batches enough.
    pub fn p99(&self) -> Option<f64> {
        match self.tail {
            Tail::Percentiles { p99, .. } => p99,
            Tail::SlowestOnly => None,
        }
    }
}

/// The per-block latency of one row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockLatency {
    /// What each value stands for.
    pub unit: Unit,
    /// Batches (blocks or mega-blocks) per sample: what the tail's thresholds count.
    pub batches: usize,
    /// Samples the values come from.
    pub samples: usize,
    /// Whether every measured sample's batches were recorded; false for results that kept
    /// the median sample's alone (no interval then).
    pub every_sample: bool,
    /// Wall time of a batch, end to end, seconds.
    pub wall_s: Distribution,
    /// The batch's gas over its wall time, GGas/s.
    pub ggas_per_s: Distribution,
}

/// The per-block latency of a row that kept its batches; `None` for the others.
pub fn block_latency(row: &ResultRow) -> Option<BlockLatency> {
    let (samples, every_sample): (Vec<&[BatchFigures]>, bool) = if row.sample_batches.is_empty() {
        if row.per_batch.is_empty() {
            return None;
        }
        (vec![row.per_batch.as_slice()], false)
    } else {
        (row.sample_batches.iter().map(Vec::as_slice).collect(), true)
    };
    let samples: Vec<&[BatchFigures]> = samples.into_iter().filter(|s| !s.is_empty()).collect();
    let batches = samples.iter().map(|s| s.len()).min()?;
    let most_blocks = samples
        .iter()
        .flat_map(|s| s.iter().map(|b| b.blocks))
        .max()
        .unwrap_or(1);
    let unit = if most_blocks > 1 {
        Unit::MegaBlock {
            blocks: most_blocks,
        }
    } else {
        Unit::Block
    };
    let wall: Vec<Vec<f64>> = samples
        .iter()
        .map(|s| s.iter().map(|b| b.wall_s).collect())
        .collect();
    let ggas: Vec<Vec<f64>> = samples
        .iter()
        .map(|s| {
            s.iter()
                .filter(|b| b.wall_s > 0.0)
                .map(|b| b.gas as f64 / 1e9 / b.wall_s)
                .collect()
        })
        .collect();
    Some(BlockLatency {
        unit,
        batches,
        samples: samples.len(),
        every_sample,
        wall_s: distribution(&wall, batches, Slow::High)?,
        ggas_per_s: distribution(&ggas, batches, Slow::Low)?,
    })
}

/// Which end of a figure is the slow one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slow {
    /// Larger is slower (a wall time).
    High,
    /// Smaller is slower (a throughput).
    Low,
}

/// `values` ordered from fast to slow.
fn fast_to_slow(values: &mut [f64], slow: Slow) {
    match slow {
        Slow::High => values.sort_by(f64::total_cmp),
        Slow::Low => values.sort_by(|a, b| b.total_cmp(a)),
    }
}

/// The nearest-rank `q` quantile of values ordered from fast to slow: the smallest value
/// at or beyond which a share `1 - q` of them lies on the slow side.
pub fn nearest_rank(ordered: &[f64], q: f64) -> f64 {
    let n = ordered.len();
    // The epsilon keeps a product such as 0.9 × 20 from rounding up past its rank.
    let k = ((q * n as f64 - 1e-9).ceil() as usize).clamp(1, n);
    ordered[k - 1]
}

/// The distribution of `samples` (each sample's values, one per batch) whose samples have
/// `batches` batches each: pooled mean, P50 and tail, and the bootstrap intervals over the
/// samples. `None` without a value (or with one that is not finite).
pub fn distribution(samples: &[Vec<f64>], batches: usize, slow: Slow) -> Option<Distribution> {
    let mut pooled: Vec<f64> = samples.iter().flatten().copied().collect();
    if pooled.is_empty() || pooled.iter().any(|v| !v.is_finite()) {
        return None;
    }
    fast_to_slow(&mut pooled, slow);
    let mean = pooled.iter().sum::<f64>() / pooled.len() as f64;
    let tail = if batches >= P90_MIN_BLOCKS {
        Tail::Percentiles {
            p90: nearest_rank(&pooled, 0.90),
            p99: (batches >= P99_MIN_BLOCKS).then(|| nearest_rank(&pooled, 0.99)),
        }
    } else {
        Tail::SlowestOnly
    };
    let (mean_bounds, p50_bounds) = bootstrap(samples, slow);
    Some(Distribution {
        mean,
        mean_bounds,
        p50: nearest_rank(&pooled, 0.5),
        p50_bounds,
        tail,
        slowest: pooled[pooled.len() - 1],
    })
}

/// The percentile-bootstrap intervals of the pooled mean and P50 over the samples:
/// [`RESAMPLES`] draws of as many samples with replacement (seeded with [`SEED`]), each
/// draw's batches pooled. `(None, None)` with fewer than two samples.
fn bootstrap(samples: &[Vec<f64>], slow: Slow) -> (Option<Bounds>, Option<Bounds>) {
    let samples: Vec<&Vec<f64>> = samples.iter().filter(|s| !s.is_empty()).collect();
    if samples.len() < 2 {
        return (None, None);
    }
    let sums: Vec<f64> = samples.iter().map(|s| s.iter().sum()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut means = Vec::with_capacity(RESAMPLES);
    let mut medians = Vec::with_capacity(RESAMPLES);
    let mut pooled: Vec<f64> = Vec::new();
    for _ in 0..RESAMPLES {
        pooled.clear();
        let mut sum = 0.0;
        for _ in 0..samples.len() {
            let k = rng.random_range(0..samples.len());
            sum += sums[k];
            pooled.extend_from_slice(samples[k]);
        }
        means.push(sum / pooled.len() as f64);
        let n = pooled.len();
        let k = ((0.5 * n as f64).ceil() as usize).clamp(1, n) - 1;
        let order = |a: &f64, b: &f64| match slow {
            Slow::High => a.total_cmp(b),
            Slow::Low => b.total_cmp(a),
        };
        let (_, median, _) = pooled.select_nth_unstable_by(k, order);
        medians.push(*median);
    }
    let bounds = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let tail = (1.0 - COVERAGE) / 2.0;
        let last = v.len() - 1;
        let at = |q: f64| v[((q * v.len() as f64).floor() as usize).min(last)];
        Bounds {
            lo: at(tail),
            hi: at(1.0 - tail),
        }
    };
    (Some(bounds(&mut means)), Some(bounds(&mut medians)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::sample;

    fn batch(first_block: u32, blocks: u32, gas: u64, wall_s: f64) -> BatchFigures {
        BatchFigures {
            first_block,
            blocks,
            gas,
            read_s: 0.0,
            read_exposed_s: Some(0.0),
            exec_s: wall_s,
            root_s: 0.0,
            root_busy_s: 0.0,
            root_read_s: 0.0,
            root_faults: None,
            persist_s: 0.0,
            persist_bytes: 0,
            persist_pages: 0,
            commit_blocks: 0,
            commit_s: 0.0,
            wall_s,
            updated_accounts: 0,
            updated_slots: 0,
        }
    }

    /// `n` blocks of 30 Mgas, block `k` taking `1 + k` ms (times `scale`).
    fn blocks(n: u32, scale: f64) -> Vec<BatchFigures> {
        (0..n)
            .map(|k| batch(k, 1, 30_000_000, (1.0 + f64::from(k)) * 1e-3 * scale))
            .collect()
    }

    /// Below 20 blocks the tail is the slowest block alone; from 20 a P90, from 100 a P99,
    /// each a measured value at its nearest rank.
    #[test]
    fn the_tail_needs_20_blocks_for_p90_and_100_for_p99() {
        let mut row = sample("CPU").rows[1].clone();
        for (n, p90, p99) in [
            (19u32, None, None),
            (20, Some(18e-3), None),
            (99, Some(90e-3), None),
            (100, Some(90e-3), Some(99e-3)),
        ] {
            row.sample_batches = vec![blocks(n, 1.0)];
            let l = block_latency(&row).unwrap();
            assert_eq!(l.batches, n as usize);
            assert_eq!(l.unit, Unit::Block);
            let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => (a - b).abs() < 1e-12,
                (a, b) => a.is_none() && b.is_none(),
            };
            assert!(
                close(l.wall_s.p90(), p90),
                "{n} blocks: {:?}",
                l.wall_s.tail
            );
            assert!(
                close(l.wall_s.p99(), p99),
                "{n} blocks: {:?}",
                l.wall_s.tail
            );
            assert_eq!(l.wall_s.slowest, f64::from(n) * 1e-3);
            assert_eq!(
                matches!(l.wall_s.tail, Tail::SlowestOnly),
                n < P90_MIN_BLOCKS as u32
            );
            // The throughput's tail is its slow end: the lowest GGas/s.
            let slowest_ggas = 0.03 / (f64::from(n) * 1e-3);
            assert!((l.ggas_per_s.slowest - slowest_ggas).abs() < 1e-9);
            if let Some(p90) = l.ggas_per_s.p90() {
                assert!((p90 - 0.03 / p90_wall(n)).abs() < 1e-9, "{n}: {p90}");
            }
        }
        fn p90_wall(n: u32) -> f64 {
            nearest_rank(
                &(1..=n).map(|k| f64::from(k) * 1e-3).collect::<Vec<_>>(),
                0.9,
            )
        }
    }

    /// The mean and P50 come with an interval over the samples: it holds the pooled
    /// figure, lies within the samples' own figures, and is the same on every run (seeded).
    /// One sample gives none.
    #[test]
    fn the_bootstrap_interval_is_over_samples_and_deterministic() {
        let mut row = sample("CPU").rows[1].clone();
        row.sample_batches = vec![blocks(10, 1.0), blocks(10, 1.2), blocks(10, 0.9)];
        let l = block_latency(&row).unwrap();
        assert!(l.every_sample && l.samples == 3);
        let mean = l.wall_s.mean;
        assert!((mean - 5.5e-3 * (1.0 + 1.2 + 0.9) / 3.0).abs() < 1e-12);
        let b = l.wall_s.mean_bounds.unwrap();
        // Each resample's mean lies between the fastest and the slowest sample's.
        assert!(b.lo <= mean && mean <= b.hi, "{b:?}");
        assert!(
            b.lo >= 5.5e-3 * 0.9 - 1e-12 && b.hi <= 5.5e-3 * 1.2 + 1e-12,
            "{b:?}"
        );
        assert!(b.hi > b.lo);
        let p = l.wall_s.p50_bounds.unwrap();
        assert!(p.lo <= l.wall_s.p50 && l.wall_s.p50 <= p.hi, "{p:?}");
        assert_eq!(
            block_latency(&row),
            Some(l),
            "seeded: the same figures again"
        );
        // The median sample alone (older results): no interval, and said so.
        row.sample_batches.clear();
        row.per_batch = blocks(10, 1.0);
        let old = block_latency(&row).unwrap();
        assert!(!old.every_sample && old.samples == 1);
        assert_eq!(old.wall_s.mean_bounds, None);
        assert_eq!(old.wall_s.p50_bounds, None);
        row.per_batch.clear();
        assert_eq!(block_latency(&row), None);
    }

    /// A mega-block point's values are its batches, and say so.
    #[test]
    fn mega_blocks_are_one_value_per_batch() {
        let mut row = sample("CPU").rows[2].clone();
        row.sample_batches = vec![
            vec![batch(0, 10, 300_000_000, 0.3)],
            vec![batch(0, 10, 300_000_000, 0.25)],
        ];
        let l = block_latency(&row).unwrap();
        assert_eq!(l.unit, Unit::MegaBlock { blocks: 10 });
        assert_eq!(l.unit.describe(), "mega-block of 10 blocks");
        assert_eq!(l.batches, 1);
        assert_eq!(l.wall_s.slowest, 0.3);
        assert!((l.ggas_per_s.slowest - 1.0).abs() < 1e-12);
        assert!((l.ggas_per_s.mean - (1.0 + 1.2) / 2.0).abs() < 1e-12);
    }
}
