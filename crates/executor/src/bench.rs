//! Benchmark points: warm-up, measured samples of at least a minimum time, verification
//! after every pass, summary.
//!
//! A *pass* replays the whole dump once: one timed window (scheduling and execution),
//! followed by its verification outside the window. A *sample* is one or more passes
//! whose timed windows together last at least [`Repetition::min_sample_ns`]: a dump that
//! replays in a few milliseconds is replayed several times per sample, and the sample's
//! figures are per pass (its windows' sums divided by the passes). A *repeat* is one
//! measured sample; the summary takes the median repeat.

use crate::{
    ItemKind,
    replay::Replay,
    run::{RunConfig, RunTimings},
    stats::{Metrics, Summary},
    verify::Divergence,
    work::TimedWork,
};

/// The minimum timed length of a measured sample that the command line and sweep configs
/// default to, milliseconds.
pub const DEFAULT_MIN_SAMPLE_MS: u64 = 100;

/// Upper bound on the passes of one sample, so a degenerate dump (no work at all) still
/// ends.
pub const MAX_PASSES_PER_SAMPLE: u32 = 1_000_000;

/// How many runs a point gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Repetition {
    /// Warm-up passes first: one pass each, verified, not in the summary.
    pub warmup: usize,
    /// Measured samples that enter the summary.
    pub repeats: usize,
    /// Verify every pass (off only to measure verification's cost).
    pub verify: bool,
    /// Minimum summed timed length of the passes of one measured sample, nanoseconds
    /// (0: one pass per sample).
    #[serde(default)]
    pub min_sample_ns: u64,
}

/// The measured samples of one grid point.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    /// Per-pass figures: median, range, every sample.
    pub summary: Summary,
    /// Passes in each measured sample, in run order (at least 1 each).
    pub passes_per_sample: Vec<u32>,
}

/// The timings of the passes of one sample, summed.
struct PassSum {
    passes: u32,
    timings: RunTimings,
}

impl PassSum {
    fn add(sum: Option<Self>, pass: RunTimings) -> Self {
        let Some(mut sum) = sum else {
            return Self {
                passes: 1,
                timings: pass,
            };
        };
        let t = &mut sum.timings;
        t.wall_ns += pass.wall_ns;
        for (a, b) in t.batch_wall_ns.iter_mut().zip(&pass.batch_wall_ns) {
            *a += b;
        }
        for (a, b) in t.item_ns.iter_mut().zip(&pass.item_ns) {
            *a += b;
        }
        for (a, b) in t.worker_busy_ns.iter_mut().zip(&pass.worker_busy_ns) {
            *a += b;
        }
        sum.passes += 1;
        sum
    }

    /// The mean pass: every time divided by the number of passes.
    fn mean(mut self) -> (u32, RunTimings) {
        let n = u64::from(self.passes.max(1));
        let div = |v: &mut u64| *v = (*v + n / 2) / n;
        let t = &mut self.timings;
        div(&mut t.wall_ns);
        t.batch_wall_ns.iter_mut().for_each(div);
        t.item_ns.iter_mut().for_each(div);
        t.worker_busy_ns.iter_mut().for_each(div);
        (self.passes, self.timings)
    }
}

impl Replay {
    fn tx_times<'a>(&'a self, item_ns: &'a [u64]) -> impl Iterator<Item = u64> + 'a {
        self.items
            .iter()
            .zip(item_ns)
            .filter(|(w, _)| matches!(w.kind, ItemKind::Tx(_)))
            .map(|(_, ns)| *ns)
    }

    /// The repetition loop shared by both modes: `rep.warmup` single passes, then
    /// `rep.repeats` samples of passes until their timed windows sum to
    /// `rep.min_sample_ns`. `pass` runs and verifies one pass; `after_sample` is called
    /// after every warm-up pass and every sample (for progress bars).
    fn bench_samples(
        &self,
        threads: usize,
        rep: Repetition,
        mut pass: impl FnMut() -> Result<RunTimings, Divergence>,
        mut after_sample: impl FnMut(),
    ) -> Result<Sampled, Divergence> {
        for _ in 0..rep.warmup {
            pass()?;
            after_sample();
        }
        let repeats = rep.repeats.max(1);
        let mut metrics = Vec::with_capacity(repeats);
        let mut tx_ns = Vec::new();
        let mut busy = Vec::with_capacity(repeats);
        let mut passes_per_sample = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            let mut sum: Option<PassSum> = None;
            loop {
                let timings = pass()?;
                tx_ns.extend(self.tx_times(&timings.item_ns));
                let s = PassSum::add(sum, timings);
                let done =
                    s.timings.wall_ns >= rep.min_sample_ns || s.passes >= MAX_PASSES_PER_SAMPLE;
                sum = Some(s);
                if done {
                    break;
                }
            }
            let (passes, mean) = sum.expect("a sample has at least one pass").mean();
            metrics.push(Metrics::of(self, &mean, threads));
            busy.push(mean.worker_busy_ns);
            passes_per_sample.push(passes);
            after_sample();
        }
        Ok(Sampled {
            summary: Summary::with_workers(metrics, tx_ns, &busy),
            passes_per_sample,
        })
    }

    /// Run one grid point: warm-up passes, then measured samples (see the module docs);
    /// every pass is verified outside its timed window. `after_sample` is called after
    /// every warm-up pass and measured sample (for progress bars).
    pub fn bench_parallel(
        &self,
        config: &RunConfig,
        rep: Repetition,
        after_sample: impl FnMut(),
    ) -> Result<Sampled, Divergence> {
        let pass = || {
            let (timings, outputs) = self.run_parallel(config);
            if rep.verify {
                self.verify_all(&outputs)?;
                if config.receipts {
                    self.check_receipts_built(&outputs)?;
                }
            }
            Ok(timings)
        };
        self.bench_samples(config.threads, rep, pass, after_sample)
    }

    /// The sequential baseline (one revm `State`, no access list), with the same timed
    /// work as the replay ([`crate::work`]), sampled like [`Replay::bench_parallel`] and
    /// verified against the receipts.
    pub fn bench_sequential(
        &self,
        work: TimedWork,
        rep: Repetition,
        after_sample: impl FnMut(),
    ) -> Result<Sampled, Divergence> {
        let pass = || {
            let (timings, results) = self.run_sequential(work);
            let results = results.map_err(Divergence::from)?;
            if rep.verify {
                self.verify_sequential(&results)?;
            }
            Ok(timings)
        };
        self.bench_samples(1, rep, pass, after_sample)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(wall_ns: u64, item_ns: Vec<u64>, busy: Vec<u64>) -> RunTimings {
        RunTimings {
            wall_ns,
            batch_wall_ns: vec![wall_ns],
            batches: std::iter::once(0..item_ns.len()).collect(),
            item_ns,
            worker_busy_ns: busy,
        }
    }

    #[test]
    fn a_sample_is_the_mean_pass() {
        let mut sum = PassSum::add(None, pass(100, vec![10, 60], vec![70, 0]));
        sum = PassSum::add(Some(sum), pass(300, vec![30, 200], vec![150, 80]));
        sum = PassSum::add(Some(sum), pass(200, vec![20, 100], vec![120, 0]));
        assert_eq!(
            sum.timings.wall_ns, 600,
            "the sample's timed length is the sum"
        );
        let (passes, mean) = sum.mean();
        assert_eq!(passes, 3);
        assert_eq!(mean.wall_ns, 200);
        assert_eq!(mean.batch_wall_ns, [200]);
        assert_eq!(mean.item_ns, [20, 120]);
        assert_eq!(mean.worker_busy_ns, [113, 27]);
        assert_eq!(mean.batches.len(), 1);
        assert_eq!(mean.batches[0], 0..2);
    }

    #[test]
    fn one_pass_is_itself() {
        let (passes, mean) = PassSum::add(None, pass(7, vec![3], vec![5])).mean();
        assert_eq!((passes, mean.wall_ns, mean.item_ns[0]), (1, 7, 3));
    }
}
