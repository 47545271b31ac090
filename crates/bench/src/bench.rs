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
    error::{IoError, PassError},
    io::StoreContext,
};
use gigagas_executor::{ItemKind, Parallel, PassCache, Replay, RunTimings, Runner, Sequential};
use gigagas_grid::{MAX_PASSES_PER_SAMPLE, Point, Repetition};
use gigagas_report::{
    results::{BatchFigures, IoFigures},
    stats::{CpuFigures, Metrics, RootFigures, Summary, tx_histogram},
};

/// The measured samples of one grid point.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    /// Per-pass figures: median, range, every sample.
    pub summary: Summary,
    /// Passes in each measured sample, in run order (at least 1 each).
    pub passes_per_sample: Vec<u32>,
    /// With a state store: what the median sample read.
    pub io: Option<IoFigures>,
    /// For the points that keep them ([`crate::blocks::keeps_batches`]): each batch of the
    /// median sample, phase by phase (the mean over its passes), keys not yet counted.
    pub per_batch: Vec<BatchFigures>,
    /// The same for every measured sample, in run order (the median one's are
    /// `per_batch`): what the per-block latency distribution is taken over.
    pub sample_batches: Vec<Vec<BatchFigures>>,
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
        t.cpu = t.cpu.plus(&pass.cpu);
        let (r, p) = (&mut t.root, pass.root);
        r.exec_ns += p.exec_ns;
        r.root_ns += p.root_ns;
        r.root_busy_ns += p.root_busy_ns;
        r.overlap_ns += p.overlap_ns;
        r.read_ns += p.read_ns;
        r.blocks += p.blocks;
        // Each block's commit, summed block by block (the same blocks every pass).
        for (a, b) in r.persisted.iter_mut().zip(&p.persisted) {
            a.ns += b.ns;
            a.bytes += b.bytes;
            a.pages += b.pages;
            a.commit_blocks += b.commit_blocks;
            a.commit_ns += b.commit_ns;
        }
        r.drain_ns += p.drain_ns;
        // The trace takes its spans from one pass: keep the last.
        r.spans = p.spans;
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
        for v in [
            &mut t.cpu.user_ns,
            &mut t.cpu.system_ns,
            &mut t.cpu.minor_faults,
            &mut t.cpu.major_faults,
            &mut t.root.exec_ns,
            &mut t.root.root_ns,
            &mut t.root.root_busy_ns,
            &mut t.root.overlap_ns,
            &mut t.root.read_ns,
            &mut t.root.drain_ns,
        ] {
            div(v);
        }
        for p in &mut t.root.persisted {
            div(&mut p.ns);
            div(&mut p.bytes);
            div(&mut p.pages);
            div(&mut p.commit_ns);
            let blocks = u64::from(p.commit_blocks);
            p.commit_blocks = ((blocks + n / 2) / n) as u32;
        }
        let passes = self.passes.max(1) as usize;
        t.root.blocks = (t.root.blocks + passes / 2) / passes;
        (self.passes, self.timings)
    }
}

/// The figures of a pass on `threads` workers: throughput from the dump's gas, the
/// longest-transaction latency and critical-path bound from the batches' item times,
/// utilisation from the workers' busy time; with the state-root phase on, what the
/// execution and the root took ([`RootFigures`]).
pub fn metrics_of(
    replay: &Replay,
    timings: &RunTimings,
    threads: std::num::NonZeroUsize,
) -> Metrics {
    let threads = threads.get() as f64;
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
    let r = &timings.root;
    let root = (r.blocks > 0).then(|| RootFigures {
        exec_s: r.exec_ns as f64 / 1e9,
        root_s: r.root_ns as f64 / 1e9,
        root_busy_s: r.root_busy_ns as f64 / 1e9,
        overlap_s: r.overlap_ns as f64 / 1e9,
        read_s: r.read_ns as f64 / 1e9,
        nodes_read: r.reads.read,
        nodes_held: r.reads.held,
        faults: r.faults,
        blocks: r.blocks,
        persist_s: r.persisted.iter().map(|p| p.ns).sum::<u64>() as f64 / 1e9,
        persist_bytes: r.persisted.iter().map(|p| p.bytes).sum(),
        persist_pages: r.persisted.iter().map(|p| p.pages).sum(),
        persist_commits: r.persisted.iter().filter(|p| p.commit_blocks > 0).count() as u64,
        persist_drain_s: r.drain_ns as f64 / 1e9,
    });
    Metrics {
        wall_s,
        ggas_per_s: replay.total_gas() as f64 / timings.wall_ns.max(1) as f64,
        longest_tx_s: longest as f64 / 1e9,
        bound_s: bound / 1e9,
        efficiency: bound / timings.wall_ns.max(1) as f64,
        work_s: work as f64 / 1e9,
        utilisation: busy as f64 / (timings.wall_ns.max(1) as f64 * threads),
        cpu: CpuFigures {
            user_s: timings.cpu.user_ns as f64 / 1e9,
            system_s: timings.cpu.system_ns as f64 / 1e9,
            minor_faults: timings.cpu.minor_faults as f64,
            major_faults: timings.cpu.major_faults as f64,
        },
        root,
    }
}

/// The order in which round `round` runs `points` points: a permutation drawn from
/// `seed` and the round (ChaCha8), so every point runs exactly once per round, drift
/// lands on every point alike, and a run is reproducible from its recorded seed.
pub fn round_order(points: usize, round: usize, seed: u64) -> Vec<usize> {
    use rand::{SeedableRng, seq::SliceRandom};
    let mut order: Vec<usize> = (0..points).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(round as u64);
    order.shuffle(&mut rng);
    order
}

/// The measured samples of one point as they accrue, round by round: per-sample figures
/// and a histogram of transaction times (fixed size, however many passes).
struct PointSamples {
    metrics: Vec<Metrics>,
    busy: Vec<Vec<u64>>,
    passes: Vec<u32>,
    tx_ns: hdrhistogram::Histogram<u64>,
    /// With a state store: what each sample's last pass read.
    io: Vec<IoFigures>,
    /// Each sample's batches ([`crate::blocks::batch_figures`]), for the points that keep
    /// them.
    per_batch: Vec<Vec<BatchFigures>>,
}

impl PointSamples {
    fn new(repeats: usize) -> Self {
        Self {
            metrics: Vec::with_capacity(repeats),
            busy: Vec::with_capacity(repeats),
            passes: Vec::with_capacity(repeats),
            tx_ns: tx_histogram(),
            io: Vec::new(),
            per_batch: Vec::new(),
        }
    }

    fn finish(self) -> Sampled {
        let summary = Summary::with_histogram(self.metrics, &self.tx_ns, &self.busy);
        // The median sample (by wall time, as the summary's median).
        let median_sample = summary.median_index();
        let every = self.per_batch.len() == summary.repeats.len();
        let per_batch = match median_sample {
            Some(m) if every => self.per_batch[m].clone(),
            _ => Vec::new(),
        };
        // Its reads.
        let io = (self.io.len() == summary.repeats.len() && !self.io.is_empty()).then(|| {
            let mut median = self.io[median_sample.expect("a sample per read")];
            // The coldness check holds for every sample: report the warmest.
            median.resident_before = self
                .io
                .iter()
                .map(|f| f.resident_before)
                .fold(0.0, f64::max);
            median
        });
        Sampled {
            summary,
            passes_per_sample: self.passes,
            io,
            per_batch,
            sample_batches: if every { self.per_batch } else { Vec::new() },
        }
    }
}

/// One pass of `point`: its timed window, then (with `verify`) its verification. What
/// passes over `replay` share (the tries, a store pass's tables) comes from `pass_cache`,
/// built by the first pass that needs it. A point that reads its state from a store needs the
/// `store`, and also returns what it read.
pub fn bench_pass(
    replay: &Replay,
    pass_cache: &PassCache,
    point: &Point,
    verify: bool,
    store: Option<&mut StoreContext>,
) -> Result<(RunTimings, Option<IoFigures>), PassError> {
    if let gigagas_grid::StateRead::Store {
        cache: page_cache, ..
    } = point.work().state
    {
        let store = store.ok_or(IoError::NoStore)?;
        let pass = match point {
            Point::Sequential(work) => {
                crate::io::sequential_pass(replay, pass_cache, *work, page_cache, store, verify)?
            }
            Point::Bal(config) => {
                crate::io::replay_pass(replay, pass_cache, config, page_cache, store, verify)?
            }
        };
        return Ok((pass.timings, Some(pass.figures)));
    }
    let timings = match point {
        Point::Sequential(work) => Sequential::new(*work)
            .cached(pass_cache)
            .run(replay, verify)?,
        Point::Bal(config) => Parallel::new(config)
            .cached(pass_cache)
            .run(replay, verify)?,
    };
    Ok((timings, None))
}

/// Passes of the oracle's profile: the median of this many 1-thread passes per item.
pub const ORACLE_PROFILE_PASSES: usize = 3;

/// Measure every item's execution time for the oracle scheduler: [`ORACLE_PROFILE_PASSES`]
/// verified passes on one thread, block by block in block order (no worker beside it, so
/// the times are the items' own), the median per item recorded into the replay
/// ([`Replay::set_measured_times`]). Outside every measured sample.
pub fn measure_item_times(replay: &mut Replay, verify: bool) -> Result<(), PassError> {
    let point = Point::Bal(gigagas_grid::RunConfig::new(
        std::num::NonZeroUsize::MIN,
        1,
        gigagas_grid::SchedulerKind::Ols,
    ));
    let mut runs: Vec<Vec<u64>> = Vec::with_capacity(ORACLE_PROFILE_PASSES);
    let pass_cache = PassCache::new();
    for _ in 0..ORACLE_PROFILE_PASSES {
        let (timings, _) = bench_pass(replay, &pass_cache, &point, verify, None)?;
        runs.push(timings.item_ns);
    }
    let medians: Vec<u64> = (0..replay.items().len())
        .map(|i| {
            let mut v: Vec<u64> = runs.iter().map(|r| r[i]).collect();
            v.sort_unstable();
            v[v.len() / 2]
        })
        .collect();
    replay.set_measured_times(&medians);
    Ok(())
}

/// One measured sample of `point`: passes until their timed windows sum to
/// `rep.min_sample_ns`, recorded into `into`.
fn sample(
    replay: &Replay,
    pass_cache: &PassCache,
    point: &Point,
    rep: Repetition,
    into: &mut PointSamples,
    mut store: Option<&mut StoreContext>,
) -> Result<(), PassError> {
    let mut sum: Option<PassSum> = None;
    let mut io = None;
    let keep_batches = crate::blocks::keeps_batches(point);
    let mut batches = Vec::new();
    loop {
        let (timings, figures) =
            bench_pass(replay, pass_cache, point, rep.verify, store.as_deref_mut())?;
        io = figures.or(io);
        if keep_batches {
            batches.push(crate::blocks::batch_figures(replay, &timings));
        }
        for (w, ns) in replay.items().iter().zip(&timings.item_ns) {
            if matches!(w.kind, ItemKind::Tx(_)) {
                into.tx_ns.saturating_record((*ns).max(1));
            }
        }
        let s = PassSum::add(sum, timings);
        let done = s.timings.wall_ns >= rep.min_sample_ns || s.passes >= MAX_PASSES_PER_SAMPLE;
        sum = Some(s);
        if done {
            break;
        }
    }
    let (passes, mean) = sum.expect("a sample has at least one pass").mean();
    into.metrics
        .push(metrics_of(replay, &mean, point.thread_count()));
    into.busy.push(mean.worker_busy_ns);
    into.passes.push(passes);
    into.io.extend(io);
    if keep_batches {
        into.per_batch.push(crate::blocks::mean_batches(&batches));
    }
    Ok(())
}

/// Benchmark several points in interleaved rounds: `rep.warmup` passes of every point
/// first, then `rep.repeats` rounds, each running every point once — one measured
/// sample of at least `rep.min_sample_ns` — in the order [`round_order`] draws from
/// `seed`. Sample `r` of every point comes from round `r`, so ratios between points
/// can be taken round by round ([`gigagas_report::stats::paired_ratios`]) and a machine whose
/// speed drifts moves every point alike. Every pass is verified outside its timed
/// window (unless `rep.verify` is off). `after` is called with the point's index after
/// every warm-up pass and every sample (for progress bars).
pub fn bench_interleaved(
    replay: &Replay,
    pass_cache: &PassCache,
    points: &[Point],
    rep: Repetition,
    seed: u64,
    mut store: Option<&mut StoreContext>,
    mut after: impl FnMut(usize),
) -> Result<Vec<Sampled>, PassError> {
    let repeats = rep.repeats.max(1);
    for _ in 0..rep.warmup {
        for (i, point) in points.iter().enumerate() {
            bench_pass(replay, pass_cache, point, rep.verify, store.as_deref_mut())?;
            after(i);
        }
    }
    let mut samples: Vec<PointSamples> =
        points.iter().map(|_| PointSamples::new(repeats)).collect();
    for round in 0..repeats {
        for i in round_order(points.len(), round, seed) {
            sample(
                replay,
                pass_cache,
                &points[i],
                rep,
                &mut samples[i],
                store.as_deref_mut(),
            )?;
            after(i);
        }
    }
    Ok(samples.into_iter().map(PointSamples::finish).collect())
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
            ..Default::default()
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

    fn with_root(mut t: RunTimings, exec: u64, root: u64, busy: u64, overlap: u64) -> RunTimings {
        t.root = gigagas_executor::RootTimings {
            exec_ns: exec,
            root_ns: root,
            root_busy_ns: busy,
            overlap_ns: overlap,
            blocks: 4,
            read_ns: 0,
            reads: Default::default(),
            faults: 0,
            persisted: Vec::new(),
            drain_ns: 0,
            spans: vec![gigagas_executor::RootSpan {
                worker: 0,
                start_ns: exec,
                ns: root,
                read_ns: 0,
                persist_ns: 0,
                faults: 0,
                kind: gigagas_executor::RootStepKind::Accounts,
                block: 3,
                writes: 0,
            }],
        };
        t
    }

    /// The root figures of a sample are the mean pass's too, the blocks per pass; the
    /// spans are the last pass's.
    #[test]
    fn a_sample_averages_the_root_figures() {
        let mut sum = PassSum::add(
            None,
            with_root(pass(100, vec![10], vec![70]), 60, 40, 50, 0),
        );
        sum = PassSum::add(
            Some(sum),
            with_root(pass(300, vec![30], vec![150]), 200, 150, 170, 50),
        );
        sum = PassSum::add(
            Some(sum),
            with_root(pass(200, vec![20], vec![120]), 100, 110, 120, 11),
        );
        assert_eq!(sum.timings.root.blocks, 12);
        let (passes, mean) = sum.mean();
        assert_eq!(passes, 3);
        let r = &mean.root;
        assert_eq!(
            (r.exec_ns, r.root_ns, r.root_busy_ns, r.overlap_ns, r.blocks),
            (120, 100, 113, 20, 4)
        );
        assert_eq!(r.spans.len(), 1);
        assert_eq!(r.spans[0].start_ns, 100, "the last pass's span");
    }

    /// A pass without a root has no root figures; one with a root has them in seconds.
    #[test]
    fn metrics_carry_the_root_figures() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet.gigagas");
        let (dump, _) = gigagas_dump::read_dump(&path).unwrap();
        let replay = gigagas_executor::test_utils::prepare(dump).unwrap();
        let threads = std::num::NonZeroUsize::MIN;
        let plain = pass(2_000, vec![1_000; replay.items().len()], vec![2_000]);
        assert_eq!(metrics_of(&replay, &plain, threads).root, None);
        let rooted = with_root(plain, 1_500, 1_000, 1_200, 500);
        let root = metrics_of(&replay, &rooted, threads).root.unwrap();
        assert_eq!(root.blocks, 4);
        assert!((root.exec_s - 1.5e-6).abs() < 1e-15, "{root:?}");
        assert!((root.root_s - 1e-6).abs() < 1e-15, "{root:?}");
        assert!((root.root_busy_s - 1.2e-6).abs() < 1e-15, "{root:?}");
        assert!((root.overlap_s - 5e-7).abs() < 1e-15, "{root:?}");
    }

    #[test]
    fn one_pass_is_itself() {
        let (passes, mean) = PassSum::add(None, pass(7, vec![3], vec![5])).mean();
        assert_eq!((passes, mean.wall_ns, mean.item_ns[0]), (1, 7, 3));
    }
}

#[cfg(test)]
mod round_tests {
    use super::round_order;

    #[test]
    fn every_point_runs_once_per_round_in_an_order_fixed_by_the_seed() {
        let mut seen_orders = std::collections::BTreeSet::new();
        for round in 0..20 {
            let order = round_order(7, round, 42);
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(
                sorted,
                (0..7).collect::<Vec<_>>(),
                "round {round}: {order:?}"
            );
            assert_eq!(
                order,
                round_order(7, round, 42),
                "the same seed, the same order"
            );
            seen_orders.insert(order);
        }
        assert!(seen_orders.len() > 10, "rounds are shuffled differently");
        assert_ne!(round_order(7, 0, 42), round_order(7, 0, 43));
        assert!(round_order(0, 3, 1).is_empty());
    }
}
