//! Benchmark points: warm-up, repeats, verification after every run, summary.

use crate::{
    ItemKind,
    replay::Replay,
    run::RunConfig,
    stats::{Metrics, Summary},
    verify::Divergence,
};

/// How many runs a point gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Repetition {
    /// Untimed-for-the-summary runs first (still verified).
    pub warmup: usize,
    /// Runs that enter the summary.
    pub repeats: usize,
    /// Verify every run (off only to measure verification's cost).
    pub verify: bool,
}

impl Replay {
    fn tx_times<'a>(&'a self, item_ns: &'a [u64]) -> impl Iterator<Item = u64> + 'a {
        self.items
            .iter()
            .zip(item_ns)
            .filter(|(w, _)| matches!(w.kind, ItemKind::Tx(_)))
            .map(|(_, ns)| *ns)
    }

    /// Run one grid point `warmup + repeats` times; verify each run outside its timed
    /// window. `after_run` is called after every run (for progress bars).
    pub fn bench_parallel(
        &self,
        config: &RunConfig,
        rep: Repetition,
        mut after_run: impl FnMut(),
    ) -> Result<Summary, Divergence> {
        let mut metrics = Vec::with_capacity(rep.repeats);
        let mut tx_ns = Vec::new();
        let mut busy = Vec::new();
        for run in 0..rep.warmup + rep.repeats.max(1) {
            let (timings, outputs) = self.run_parallel(config);
            if rep.verify {
                self.verify_all(&outputs)?;
            }
            drop(outputs);
            if run >= rep.warmup {
                metrics.push(Metrics::of(self, &timings, config.threads));
                tx_ns.extend(self.tx_times(&timings.item_ns));
                busy.push(timings.worker_busy_ns);
            }
            after_run();
        }
        Ok(Summary::with_workers(metrics, tx_ns, &busy))
    }

    /// The sequential baseline (one revm `State`, no access list), repeated like
    /// [`Replay::bench_parallel`] and verified against the receipts.
    pub fn bench_sequential(
        &self,
        recover_senders: bool,
        rep: Repetition,
        mut after_run: impl FnMut(),
    ) -> Result<Summary, Divergence> {
        let mut metrics = Vec::with_capacity(rep.repeats);
        let mut tx_ns = Vec::new();
        let mut busy = Vec::new();
        for run in 0..rep.warmup + rep.repeats.max(1) {
            let (timings, results) = self.run_sequential(recover_senders);
            let results = results.map_err(Divergence::from)?;
            if rep.verify {
                self.verify_sequential(&results)?;
            }
            if run >= rep.warmup {
                metrics.push(Metrics::of(self, &timings, 1));
                tx_ns.extend(self.tx_times(&timings.item_ns));
                busy.push(timings.worker_busy_ns);
            }
            after_run();
        }
        Ok(Summary::with_workers(metrics, tx_ns, &busy))
    }
}
