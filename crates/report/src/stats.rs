//! The figures of a measured point: throughput, longest-transaction latency, the
//! critical-path bound and utilisation per run ([`Metrics`], derived from a pass's timings
//! by `gigagas_bench::metrics_of`), their median over repeats ([`Summary`]), and the
//! distribution-free intervals and paired ratios the tables print ([`median_interval`],
//! [`paired_ratios`]).

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
    /// CPU time and page faults of the whole process inside the timed window, per pass
    /// (zero in results written before they were recorded).
    #[serde(default)]
    pub cpu: CpuFigures,
    /// With the state-root phase on: what the execution and the root took per
    /// pass. `None` with the phase off and in results written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<RootFigures>,
}

/// What the state-root phase of a pass took, seconds of wall time summed over its batches
/// (from the executor's `RootTimings`). With the roots after the transactions the batch
/// lasts about `exec_s + root_s`; overlapped, at least `max(exec_s, root_s)`, and
/// `overlap_s` says how much of the two ran at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RootFigures {
    /// Per batch, from its start to the end of its last transaction (execution alone).
    pub exec_s: f64,
    /// Per batch, from the start of its first root unit to the end of its last.
    pub root_s: f64,
    /// Root units' own time, all workers together.
    pub root_busy_s: f64,
    /// Per batch, how long execution and the root ran at once (the intersection of the
    /// two spans).
    pub overlap_s: f64,
    /// Blocks whose root was computed, per pass.
    pub blocks: usize,
    /// On a store run: reading the trie nodes each block needs from the store, inside the
    /// root units (part of `root_busy_s`; 0 in memory, where the tries hold every node).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_s: f64,
    /// On a store run: trie nodes read from the store per pass (the cache's misses: each
    /// node is read once per pass, then stays open for the blocks after).
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub nodes_read: u64,
    /// On a store run: nodes on the blocks' paths found already read by an earlier block
    /// of the pass, or made by its updates (the cache's hits), per pass.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub nodes_held: u64,
    /// The root units' major page faults per pass, all workers together: the pages they
    /// waited for the device to read (their trie nodes', and with `--persist` their
    /// commits').
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub faults: u64,
    /// With `--persist`: committing each block into the store after its root, summed over
    /// the pass's blocks (inside the root units: part of `root_busy_s`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub persist_s: f64,
    /// With `--persist`: bytes of keys and values the pass's commits wrote.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub persist_bytes: u64,
    /// With `--persist`: pages the pass's commits dirtied.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub persist_pages: u64,
    /// With `--persist`: the commits the pass made (its blocks with `block`; the groups
    /// with `background`).
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub persist_commits: u64,
    /// With `--persist background`: draining the writer at the pass's end, the tail of
    /// its wall time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub persist_drain_s: f64,
}

/// Whether a count is zero (left out of results files).
fn is_zero_count(v: &u64) -> bool {
    *v == 0
}

/// Whether a figure is zero (left out of results files).
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl RootFigures {
    /// `wall_s / max(exec_s, root_s)`: 1.0 when the pass took no longer than the longer of
    /// its execution and its root (a perfect overlap); `None` when both are zero.
    pub fn wall_over_longer(&self, wall_s: f64) -> Option<f64> {
        let longer = self.exec_s.max(self.root_s);
        (longer > 0.0).then(|| wall_s / longer)
    }
}

/// CPU time and page faults of the whole process inside a timed window, per pass, from
/// `getrusage` (every thread: workers, coordinator, readers). System time and minor faults
/// show the kernel's share of a pass: fresh pages zeroed on first touch, purged pages
/// faulted back in, thread wake-ups.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CpuFigures {
    /// CPU time in user code, all threads, seconds.
    pub user_s: f64,
    /// CPU time in the kernel on the process's behalf, all threads, seconds.
    pub system_s: f64,
    /// Page faults served without I/O.
    pub minor_faults: f64,
    /// Page faults that read from disk.
    pub major_faults: f64,
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
    /// Per-transaction execution time over all repeats, microseconds. Read from files
    /// written before it had named fields too (key `tx_us_p50_p99_max`, an array).
    #[serde(alias = "tx_us_p50_p99_max")]
    pub tx_us: TxTimes,
    /// Busy time of each worker in the median repeat, seconds (utilisation = busy / wall).
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
        let mut hist = tx_histogram();
        for ns in tx_ns {
            hist.saturating_record(ns.max(1));
        }
        Self::with_histogram(repeats, &hist, worker_busy_ns)
    }

    /// Like [`Summary::with_workers`], with the transaction times already in a histogram
    /// ([`tx_histogram`]): what a long sample records pass by pass, so its memory does not
    /// grow with its length.
    pub fn with_histogram(
        repeats: Vec<Metrics>,
        tx_ns: &Histogram<u64>,
        worker_busy_ns: &[Vec<u64>],
    ) -> Self {
        assert!(!repeats.is_empty(), "a summary needs at least one repeat");
        let mut by_wall: Vec<usize> = (0..repeats.len()).collect();
        by_wall.sort_by(|&a, &b| repeats[a].wall_s.total_cmp(&repeats[b].wall_s));
        let median_index = by_wall[by_wall.len() / 2];
        let sorted: Vec<Metrics> = by_wall.iter().map(|&i| repeats[i]).collect();
        Self::from_histogram(repeats, tx_ns, worker_busy_ns, median_index, sorted)
    }

    /// The index of the median sample in [`Summary::repeats`] (run order): the one whose
    /// figures are [`Summary::median`], by wall time as the summary chose it. `None` without
    /// samples.
    pub fn median_index(&self) -> Option<usize> {
        let mut by_wall: Vec<usize> = (0..self.repeats.len()).collect();
        by_wall.sort_by(|&a, &b| self.repeats[a].wall_s.total_cmp(&self.repeats[b].wall_s));
        by_wall.get(by_wall.len() / 2).copied()
    }

    fn from_histogram(
        repeats: Vec<Metrics>,
        hist: &Histogram<u64>,
        worker_busy_ns: &[Vec<u64>],
        median_index: usize,
        sorted: Vec<Metrics>,
    ) -> Self {
        let median = repeats[median_index];
        let worker_busy_s = worker_busy_ns
            .get(median_index)
            .map(|w| w.iter().map(|ns| *ns as f64 / 1e9).collect())
            .unwrap_or_default();
        let us = |ns: u64| ns as f64 / 1e3;
        Self {
            median,
            max_ggas_per_s: sorted[0].ggas_per_s,
            min_ggas_per_s: sorted[sorted.len() - 1].ggas_per_s,
            repeats,
            tx_us: TxTimes {
                p50: us(hist.value_at_quantile(0.5)),
                p99: us(hist.value_at_quantile(0.99)),
                max: us(hist.max()),
            },
            worker_busy_s,
        }
    }
}

/// Percentiles of per-transaction execution time, microseconds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(from = "TxTimesForm")]
pub struct TxTimes {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Longest.
    pub max: f64,
}

/// The forms [`TxTimes`] is read from: named fields, or the `[p50, p99, max]` array of
/// results files written before.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum TxTimesForm {
    Named { p50: f64, p99: f64, max: f64 },
    Array(f64, f64, f64),
}

impl From<TxTimesForm> for TxTimes {
    fn from(form: TxTimesForm) -> Self {
        match form {
            TxTimesForm::Named { p50, p99, max } | TxTimesForm::Array(p50, p99, max) => {
                Self { p50, p99, max }
            }
        }
    }
}

/// An empty histogram of transaction times, nanoseconds (1 ns to 1 h, 3 significant
/// digits): fixed size, whatever the number of passes recorded into it.
pub fn tx_histogram() -> Histogram<u64> {
    Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds")
}

/// A median with a distribution-free confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    /// The median of the values.
    pub median: f64,
    /// Lower end of the interval.
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
    /// The interval's coverage: at least [`CONFIDENCE`] when there are enough values
    /// (6 or more), else the most that `[min, max]` of so few values can give.
    pub confidence: f64,
    /// How many values it is computed from.
    pub n: usize,
}

/// The coverage an [`Interval`] aims at.
pub const CONFIDENCE: f64 = 0.95;

impl Interval {
    /// Whether `x` lies inside the interval (e.g. 1.0 for a ratio: no difference shown).
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
}

/// The median of `values` with a distribution-free confidence interval from order
/// statistics: with `n` values sorted, `[x(k), x(n+1-k)]` covers the true median with
/// probability `1 - 2·P(Bin(n, ½) < k)`; `k` is the largest with that at least
/// [`CONFIDENCE`]. No assumption on the distribution (rounds on a drifting machine are
/// not normal). `None` for no values or a non-finite one.
pub fn median_interval(values: &[f64]) -> Option<Interval> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    // P(Bin(n, 1/2) <= j), cumulatively.
    let mut cdf = Vec::with_capacity(n + 1);
    let (mut term, mut sum) = (0.5f64.powi(n as i32), 0.0);
    for j in 0..=n {
        sum += term;
        cdf.push(sum);
        term *= (n - j) as f64 / (j + 1) as f64;
    }
    // k = 1 is [min, max]; grow k while the coverage stays at or above the target.
    let coverage = |k: usize| 1.0 - 2.0 * cdf[k - 1];
    let mut k = 1;
    while k < n.div_ceil(2) && coverage(k + 1) >= CONFIDENCE {
        k += 1;
    }
    Some(Interval {
        median,
        lo: v[k - 1],
        hi: v[n - k],
        confidence: coverage(k),
        n,
    })
}

/// Paired ratios, round by round: `num.repeats[r] / den.repeats[r]` in Ggas/s, for the
/// rounds both have (samples of one round ran back to back, so drift cancels).
pub fn paired_ratios(num: &Summary, den: &Summary) -> Vec<f64> {
    num.repeats
        .iter()
        .zip(&den.repeats)
        .map(|(a, b)| a.ggas_per_s / b.ggas_per_s)
        .filter(|r| r.is_finite())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_times_are_written_named_and_read_in_both_forms() {
        let t = TxTimes {
            p50: 1.5,
            p99: 20.0,
            max: 300.25,
        };
        let named = serde_json::to_value(t).unwrap();
        assert_eq!(
            named,
            serde_json::json!({ "p50": 1.5, "p99": 20.0, "max": 300.25 })
        );
        assert_eq!(serde_json::from_value::<TxTimes>(named).unwrap(), t);
        let old = serde_json::json!([1.5, 20.0, 300.25]);
        assert_eq!(serde_json::from_value::<TxTimes>(old).unwrap(), t);
    }

    /// Figures without a root leave the key out and load back as `None`; with one, they
    /// round-trip.
    #[test]
    fn root_figures_are_optional() {
        let mut m = Metrics {
            wall_s: 2.0,
            ggas_per_s: 1.0,
            longest_tx_s: 0.5,
            bound_s: 1.5,
            efficiency: 0.75,
            work_s: 3.0,
            utilisation: 0.8,
            cpu: CpuFigures::default(),
            root: None,
        };
        let json = serde_json::to_value(m).unwrap();
        assert!(json.get("root").is_none(), "{json}");
        assert_eq!(serde_json::from_value::<Metrics>(json).unwrap(), m);
        m.root = Some(RootFigures {
            exec_s: 1.5,
            root_s: 1.0,
            root_busy_s: 1.8,
            overlap_s: 0.5,
            blocks: 7,
            nodes_read: 0,
            nodes_held: 0,
            read_s: 0.0,
            ..Default::default()
        });
        let json = serde_json::to_value(m).unwrap();
        assert_eq!(json["root"]["blocks"], 7);
        assert_eq!(serde_json::from_value::<Metrics>(json).unwrap(), m);
        let root = m.root.unwrap();
        assert_eq!(root.wall_over_longer(m.wall_s), Some(2.0 / 1.5));
        assert_eq!(RootFigures::default().wall_over_longer(1.0), None);
    }

    #[test]
    fn the_interval_of_ten_values_is_the_second_to_the_ninth() {
        // n = 10: P(Bin(10, ½) <= 1) = 11/1024, so k = 2 covers 1 - 22/1024 = 97.85 %;
        // k = 3 would cover 1 - 2·56/1024 = 89.1 % < 95 %.
        let values = [7.0, 3.0, 10.0, 1.0, 5.0, 9.0, 2.0, 8.0, 6.0, 4.0];
        let i = median_interval(&values).unwrap();
        assert_eq!((i.median, i.lo, i.hi, i.n), (5.5, 2.0, 9.0, 10));
        assert!((i.confidence - (1.0 - 22.0 / 1024.0)).abs() < 1e-12);
        assert!(i.contains(2.0) && !i.contains(1.5));
    }

    #[test]
    fn few_values_give_min_max_with_their_real_coverage() {
        // n = 5: [min, max] covers 1 - 2/32 = 93.75 %, the most five values can give.
        let i = median_interval(&[1.0, 1.2, 1.1, 0.9, 1.05]).unwrap();
        assert_eq!((i.median, i.lo, i.hi), (1.05, 0.9, 1.2));
        assert!((i.confidence - 0.9375).abs() < 1e-12);
        // n = 20: k = 6 (P(Bin(20, ½) <= 5) = 0.0207).
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        let i = median_interval(&v).unwrap();
        assert_eq!((i.lo, i.hi), (6.0, 15.0));
        assert!(median_interval(&[]).is_none());
        assert!(median_interval(&[1.0, f64::NAN]).is_none());
    }
}
