//! The results model: what `results.json` holds.

use crate::{
    error::ReportError,
    machine::MachineInfo,
    simulation::SimulationReport,
    stats::{Interval, Summary},
};
use gigagas_grid::{Point, SweepConfig};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::Path;

/// What a point that reads its state from a store read, per pass (the median sample's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct IoFigures {
    /// Accounts read.
    pub accounts: u64,
    /// Storage slots read.
    pub slots: u64,
    /// Bytecodes read.
    pub codes: u64,
    /// Bytes of the values read, as stored.
    pub bytes: u64,
    /// Wall time of the reads (prefetching modes: all readers together; on demand: the
    /// summed time inside reads), seconds.
    pub read_s: f64,
    /// Wall time of decoding the blocks' `full` access lists into the replay's tables,
    /// seconds (0 for the other designs, whose reads write straight into the tables; in
    /// results from before the designs, the join of the values read with the access lists that the
    /// prefetch then made).
    pub build_s: f64,
    /// The part of reading and building the timed window waited for, seconds: all of it
    /// for prefetch, what the previous batch's execution did not hide when pipelined.
    pub exposed_s: f64,
    /// Read latency, median, microseconds.
    pub read_p50_us: f64,
    /// Read latency, 99th percentile, microseconds.
    pub read_p99_us: f64,
    /// Share of the store's pages in the page cache when the timed pass started (the
    /// coldness check; the largest over the pass's samples).
    pub resident_before: f64,
    /// The device's random 4 KiB read rate the bound is taken at (probe at the I/O threads'
    /// queue depth), reads per second; 0 when not probed.
    pub device_reads_per_s: f64,
    /// Device bound: reads ÷ that rate, seconds — the least time the disk allows for
    /// this pass's reads if none was cached.
    pub device_bound_s: f64,
}

impl IoFigures {
    /// All reads.
    pub fn reads(&self) -> u64 {
        self.accounts + self.slots + self.codes
    }

    /// Share of the reading hidden behind execution (pipelined): `1 - exposed / (read +
    /// build)`.
    pub fn overlap(&self) -> f64 {
        let total = self.read_s + self.build_s;
        if total <= 0.0 {
            0.0
        } else {
            (1.0 - self.exposed_s / total).clamp(0.0, 1.0)
        }
    }
}

/// One batch of a pass, phase by phase: a block at batch 1, a mega-block
/// otherwise. Kept for the replay's points that read a store or compute roots (the median
/// sample's, each figure the mean over its passes), so a row says per block what reading,
/// executing and the root took, end to end, and what the root cost per updated key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchFigures {
    /// The batch's first block (index into the dump's blocks).
    pub first_block: u32,
    /// Blocks in the batch.
    pub blocks: u32,
    /// Gas used by its transactions.
    pub gas: u64,
    /// Reading the batch's state from the store before it runs, all readers together, wall
    /// time (0 in memory and on demand, where reads happen inside the transactions;
    /// pipelined, the read that ran beside the batch before).
    pub read_s: f64,
    /// Of `read_s`, the part the batch waited for (the rest was hidden under execution):
    /// all of a read before the batch; pipelined, the first batch's read and what a read
    /// outlasted its batch by; beside execution, the longest any worker waited for its
    /// items' blocks, plus what the read outlasted the batch by. `None` in a folder recorded
    /// before the split was (its hidden and exposed parts are not known).
    #[serde(default)]
    pub read_exposed_s: Option<f64>,
    /// Execution: from its first transaction's start to its last one's end.
    pub exec_s: f64,
    /// The root: from its blocks' first root unit's start to their last one's end (0 with
    /// the phase off).
    pub root_s: f64,
    /// The root units' own time, all workers together.
    pub root_busy_s: f64,
    /// Of `root_busy_s`, reading the trie nodes its blocks need from the store (0 in
    /// memory, where the tries hold every node); the rest is walking and hashing.
    #[serde(default)]
    pub root_read_s: f64,
    /// The root units' major page faults for the batch's blocks, all workers together: the
    /// pages they waited for the device to read (near 0 on a warm store). `None` in a
    /// folder recorded before they were counted, and for a batch without root units.
    #[serde(default)]
    pub root_faults: Option<f64>,
    /// Of `root_busy_s`, the batch's blocks' chains waiting on persistence after their
    /// roots (`--persist`; 0 without): their synced commits (`block`), or their hand-over
    /// to the background writer and any stall on it (`background`).
    #[serde(default)]
    pub persist_s: f64,
    /// Bytes of keys and values written by the commits that ended with the batch's blocks
    /// (`--persist`).
    #[serde(default)]
    pub persist_bytes: u64,
    /// Pages those commits dirtied (`--persist`).
    #[serde(default)]
    pub persist_pages: u64,
    /// Blocks those commits wrote (`--persist`: the batch's blocks with `block`; with
    /// `background`, the groups that ended with one of them, which may hold earlier
    /// blocks).
    #[serde(default)]
    pub commit_blocks: u32,
    /// Those commits' write transactions, each from its start to its synced commit
    /// (`--persist`; with `background` on the writer's thread, off the blocks' chains).
    #[serde(default)]
    pub commit_s: f64,
    /// The batch end to end: from its start (the read included) to the end of the later of
    /// its last transaction and its last root unit.
    pub wall_s: f64,
    /// Accounts whose value after the batch's blocks differs from before, each block
    /// counted apart (a changed field or a changed storage root: a leaf of the account
    /// trie to update).
    pub updated_accounts: u64,
    /// Storage slots whose value after a block differs from before it, summed over the
    /// batch's blocks.
    pub updated_slots: u64,
}

impl BatchFigures {
    /// Accounts and slots updated: the leaves the root writes.
    pub fn updated_keys(&self) -> u64 {
        self.updated_accounts + self.updated_slots
    }

    /// The root's wall time per updated key, nanoseconds (`None` without a root or keys).
    pub fn root_ns_per_key(&self) -> Option<f64> {
        (self.root_s > 0.0 && self.updated_keys() > 0)
            .then(|| self.root_s * 1e9 / self.updated_keys() as f64)
    }
}

/// The largest `results.json` read, bytes: a file over it (or one that is not a regular
/// file: a FIFO, a device, a socket) is refused before it is read.
pub const MAX_RESULTS_BYTES: u64 = 1 << 30;

/// The schema version of `results.json` this build writes, the newest it reads (see
/// [`SweepResults`] for what each version holds).
pub const RESULTS_FORMAT: u32 = 3;

/// Everything one sweep measured on one machine: the contents of `results.json`.
///
/// The file's `format` is its schema version, and the one way to tell its shapes apart;
/// [`SweepResults::load`] reads every version and refuses a newer one:
/// - **1** (missing `format` reads as 1): the files written before versions were kept
///   apart. A key added during version 1 may be missing, and its absence means what the
///   writers before it did: no description, simulations, failures, skipped dumps or
///   totals; rows without `receipts` (false), `timed_work` (unrecorded) or
///   `passes_per_sample` (one pass each), summaries without `worker_busy_s`, totals
///   without `receipts`; simulations without the item-cost model (a slowdown of 1, no
///   fixed cost, no validation work figures); a timeline without `read_ns` (0).
///   Loading fills them in ([`upgrade_v1`]).
/// - **2**: every key written, so a missing one is an error. Left out only where the
///   absence is a value: a point's `state` when it is memory, a row's `io` without a
///   store, an absent `timeline`, `provenance` or simulation `modelled_s`.
/// - **3**: version 2, and a store point that reads with an access list (`prefetch`,
///   `pipelined`) names what the list carries, `bal_design` (`full`, `keys`, `writes`),
///   which an on-demand one leaves out. Every store point of version 2 read
///   with EIP-7928's list as specified: loading gives it `keys` ([`upgrade_v2`]).
///
/// A row or total stores its grid point as the flat fields [`Point`] documents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResults {
    /// The schema version of the writer ([`RESULTS_FORMAT`]).
    pub format: u32,
    /// Sweep name (the config file's stem).
    pub name: String,
    /// The config's description.
    pub description: String,
    /// When the sweep started, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub started_utc: String,
    /// The machine and build.
    pub machine: MachineInfo,
    /// The config as it was run.
    pub config: SweepConfig,
    /// The dumps, with their checksums.
    pub dumps: Vec<DumpRecord>,
    /// One row per grid point (and sequential baseline), every repeat included.
    pub rows: Vec<ResultRow>,
    /// Schedule simulations, one per dump, if the config asked for them.
    pub simulations: Vec<SimulationReport>,
    /// Dumps that failed to load, prepare or verify: no row of theirs is reported.
    pub failures: Vec<DumpFailure>,
    /// Dumps with nothing to measure (no transactions: an empty block is a valid block,
    /// not a throughput figure): no row, out of the totals, not failures.
    pub skipped: Vec<DumpSkip>,
    /// Per grid point, the sum over the dumps that ran (see [`suite_totals`]).
    pub totals: Vec<SuiteTotal>,
    /// The command line, build, peak RSS, load and governor of the run (set by the
    /// binary; absent from results that no binary wrote).
    pub provenance: Option<crate::provenance::Provenance>,
    /// xxh3-64 of the `config` above as compact JSON, 16 hex digits ([`config_hash`]): one
    /// word that tells whether two folders ran the same config. Absent from results written
    /// before it was recorded (the tables then compute it from `config`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_hash: Option<String>,
    /// The longest batch of one more verified pass of the widest parallel point (most
    /// threads, then the smallest batch), over every dump: workers × time, drawn as
    /// `timeline.svg` ([`crate::timeline`]). Absent in sequential-only runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<crate::timeline::Timeline>,
    /// Trace events of one pass per parallel point, when asked (`--trace`); written to
    /// their own file, not to results.json.
    #[serde(skip)]
    pub trace: Vec<serde_json::Value>,
}

/// A dump whose rows are missing: it failed to load, to prepare or to verify.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpFailure {
    /// The dump's path as the config or command line names it.
    pub path: String,
    /// The one-line reason.
    pub reason: String,
}

/// A dump left out of a run because it has nothing to measure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpSkip {
    /// The dump's path as the config or command line names it.
    pub path: String,
    /// Its blocks (0 for a dump without blocks).
    pub blocks: usize,
}

impl DumpSkip {
    /// Why it was skipped, one line: `no transactions (2 blocks)`.
    pub fn reason(&self) -> String {
        format!(
            "no transactions ({} block{})",
            self.blocks,
            if self.blocks == 1 { "" } else { "s" }
        )
    }
}

/// One grid point summed over the dumps of a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteTotal {
    /// The grid point summed, stored as its flat fields (`mode`, `threads`, `batch`,
    /// `scheduler`, `recover_senders`, `receipts`, `state`).
    #[serde(flatten)]
    pub point: Point,
    /// Dumps summed.
    pub dumps: usize,
    /// Gas used by one pass over every dump.
    pub total_gas: u64,
    /// Sum of the dumps' median per-pass wall times, seconds.
    pub total_wall_s: f64,
    /// Geometric mean over the dumps of each dump's median throughput over its own
    /// sequential baseline (`None` without baselines).
    pub geomean_speedup: Option<f64>,
    /// The geometric mean of the paired ratios taken round by round: its median over the
    /// rounds with a 95 % interval.
    pub geomean_interval: Option<Interval>,
}

impl SuiteTotal {
    /// Total gas over total time, Mgas/s.
    pub fn mgas_per_s(&self) -> f64 {
        self.total_gas as f64 / 1e6 / self.total_wall_s.max(f64::MIN_POSITIVE)
    }

    /// The suite's speedup over sequential, the one figure every table and CSV shows: the
    /// median of [`Self::geomean_interval`] where the rounds pair (as a row's bare ratio is
    /// its interval's median), else [`Self::geomean_speedup`].
    pub fn speedup(&self) -> Option<f64> {
        self.geomean_interval
            .map(|i| i.median)
            .or(self.geomean_speedup)
    }
}

/// The suite totals of `rows`: one per grid point (every dimension of [`Point`]), in
/// first-seen order, over every dump with a row at that point.
pub fn suite_totals(rows: &[ResultRow]) -> Vec<SuiteTotal> {
    let mut totals: Vec<(SuiteTotal, f64, usize)> = Vec::new();
    for r in rows {
        let at = match totals.iter().position(|(t, _, _)| t.point == r.point) {
            Some(i) => i,
            None => {
                totals.push((
                    SuiteTotal {
                        point: r.point,
                        dumps: 0,
                        total_gas: 0,
                        total_wall_s: 0.0,
                        geomean_speedup: None,
                        geomean_interval: None,
                    },
                    0.0,
                    0,
                ));
                totals.len() - 1
            }
        };
        let (t, log_sum, ratios) = &mut totals[at];
        t.dumps += 1;
        t.total_gas += r.total_gas;
        t.total_wall_s += r.summary.median.wall_s;
        if let Some(s) = r.speedup_vs_sequential.filter(|s| *s > 0.0) {
            *log_sum += s.ln();
            *ratios += 1;
        }
    }
    totals
        .into_iter()
        .map(|(mut t, log_sum, ratios)| {
            t.geomean_speedup = (ratios > 0).then(|| (log_sum / ratios as f64).exp());
            t.geomean_interval = paired_geomean(rows, &t);
            t
        })
        .collect()
}

/// The geometric mean over the dumps of each round's paired ratio (row over its dump's
/// baseline, same round), as a median with its interval over the rounds.
fn paired_geomean(rows: &[ResultRow], t: &SuiteTotal) -> Option<Interval> {
    let per_dump: Vec<Vec<f64>> = rows
        .iter()
        .filter(|r| r.point == t.point)
        .filter_map(|r| {
            let base = rows.iter().find(|b| r.is_baseline_of_mine(b))?;
            Some(crate::stats::paired_ratios(&r.summary, &base.summary))
        })
        .filter(|v| !v.is_empty())
        .collect();
    let rounds = per_dump.iter().map(Vec::len).min()?;
    let by_round: Vec<f64> = (0..rounds)
        .map(|k| {
            let logs: f64 = per_dump.iter().map(|v| v[k].ln()).sum();
            (logs / per_dump.len() as f64).exp()
        })
        .collect();
    crate::stats::median_interval(&by_round)
}

/// A dump a sweep ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DumpRecord {
    /// The dump's name (from its metadata).
    pub name: String,
    /// The label the config gives the dump (`{ path = ..., label = ... }`), shown in place
    /// of its name; absent when none was given ([`dump_labels`] then derives one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The path as written in the config.
    pub path: String,
    /// xxh3-64 of the dump's content, 16 hex digits.
    pub checksum: String,
    /// File size, bytes.
    pub size_bytes: u64,
    /// Blocks.
    pub blocks: usize,
    /// Transactions.
    pub transactions: usize,
    /// Gas used by all blocks.
    pub total_gas: u64,
    /// How much the machine's speed moved during the dump's rounds (`None` before they
    /// ran, or with fewer than two rounds).
    pub drift: Option<Drift>,
}

/// Relative change above which [`Drift::exceeded`] is set: the machine's speed moved
/// enough during a run that ratios taken across rounds would carry it.
pub const DRIFT_THRESHOLD: f64 = 0.05;

/// The baseline's first rounds against its last: the machine's drift over a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// Median Ggas/s of the first third of the rounds (at least one).
    pub first_ggas_per_s: f64,
    /// Median Ggas/s of the last third of the rounds.
    pub last_ggas_per_s: f64,
    /// `last / first - 1`.
    pub change: f64,
    /// `|change|` above [`DRIFT_THRESHOLD`].
    pub exceeded: bool,
}

impl Drift {
    /// The drift of one point's samples, in round order.
    pub fn of(summary: &Summary) -> Option<Self> {
        let g: Vec<f64> = summary.repeats.iter().map(|m| m.ggas_per_s).collect();
        if g.len() < 2 {
            return None;
        }
        let third = g.len().div_ceil(3).min(g.len() / 2).max(1);
        let median = |v: &[f64]| crate::stats::median_interval(v).map(|i| i.median);
        let first = median(&g[..third])?;
        let last = median(&g[g.len() - third..])?;
        let change = last / first - 1.0;
        Some(Self {
            first_ggas_per_s: first,
            last_ggas_per_s: last,
            change,
            exceeded: change.abs() > DRIFT_THRESHOLD,
        })
    }

    /// The drift of a dump's run: of its sequential baseline, else of its first point.
    pub fn of_rows(rows: &[ResultRow]) -> Option<Self> {
        let row = rows
            .iter()
            .find(|r| r.point.is_sequential())
            .or(rows.first())?;
        Self::of(&row.summary)
    }
}

/// Fill every row's paired ratios from the rows of the same dump (rows of one dump's
/// interleaved run, sample `r` of each from round `r`): `vs_sequential` against the
/// baseline with the same sender recovery and receipts, `vs_one_thread` against the
/// 1-thread point with the same batch, scheduler and timed work (not on 1-thread rows).
/// `speedup_vs_sequential` is the paired median.
pub fn pair_ratios(rows: &mut [ResultRow]) {
    let ratio = |num: &ResultRow, den: &ResultRow| {
        crate::stats::median_interval(&crate::stats::paired_ratios(&num.summary, &den.summary))
    };
    for i in 0..rows.len() {
        let r = &rows[i];
        let base = rows.iter().find(|b| r.is_baseline_of_mine(b));
        let vs_seq = if r.point.is_sequential() {
            // The baseline against itself.
            base.map(|_| crate::stats::Interval {
                median: 1.0,
                lo: 1.0,
                hi: 1.0,
                confidence: 1.0,
                n: r.summary.repeats.len(),
            })
        } else {
            base.and_then(|b| ratio(r, b))
        };
        let one = r
            .point
            .on_one_thread()
            .filter(|one| *one != r.point)
            .and_then(|one| rows.iter().find(|o| o.dump == r.dump && o.point == one));
        let vs_one = one.and_then(|o| ratio(r, o));
        let r = &mut rows[i];
        r.vs_sequential = vs_seq;
        r.speedup_vs_sequential = vs_seq.map(|i| i.median);
        r.vs_one_thread = vs_one;
    }
}

/// The sequential baseline a point's ratio over "sequential" is taken against: the same
/// timed work, reading its state the way a client without an access list can
/// ([`gigagas_grid::StateRead::of_baseline`]) and computing roots after the transactions
/// where the point computes them at all. The baseline's own is itself.
pub fn baseline_point(point: &Point) -> Point {
    let mut work = point.work();
    work.state = work.state.of_baseline();
    work.state_root = work.state_root.of_baseline();
    Point::Sequential(work)
}

/// One grid point (or a sequential baseline) with all its repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// Dump name.
    pub dump: String,
    /// Dump checksum (16 hex digits).
    pub dump_checksum: String,
    /// The grid point apart from the dump: the suite total it counts in, the column it
    /// fills, the key `compare` matches rows by. Stored as its flat fields (`mode`,
    /// `threads`, `batch`, `scheduler`, `recover_senders`, `receipts`, `state`).
    #[serde(flatten)]
    pub point: Point,
    /// With a state store: what the pass read and how long it took (median sample).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<IoFigures>,
    /// The timed work in words ([`gigagas_grid::TimedWork::describe`]): the same on
    /// the sequential and the replay rows (empty in version-1 results that did not
    /// record it).
    pub timed_work: String,
    /// Warm-up runs before the measured ones.
    pub warmup: usize,
    /// Measured runs.
    pub repeats: usize,
    /// Every run was verified against receipts and access lists.
    pub verified: bool,
    /// Gas used by all blocks.
    pub total_gas: u64,
    /// Number of batches (mega-blocks).
    pub batches: usize,
    /// Mean gas per batch.
    pub avg_batch_gas: f64,
    /// Median throughput over the sequential baseline's (same dump, same sender
    /// recovery), if it was run.
    pub speedup_vs_sequential: Option<f64>,
    /// Throughput over the sequential baseline's, round by round: median and interval
    /// ([`pair_ratios`]).
    pub vs_sequential: Option<Interval>,
    /// Throughput over the same point on one thread, round by round (rows above one
    /// thread).
    pub vs_one_thread: Option<Interval>,
    /// Median, range and every measured sample's figures, per pass.
    pub summary: Summary,
    /// Passes (replays of the whole dump) in each measured sample: a sample lasts at
    /// least the config's `min_sample_ms`. Empty in version-1 results written before
    /// samples had a minimum time (one pass each).
    pub passes_per_sample: Vec<u32>,
    /// The replay's points that read a store or compute roots: each batch's phases in the
    /// median sample ([`BatchFigures`]). Empty for the others and in results written
    /// before batches were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_batch: Vec<BatchFigures>,
    /// The same points' batches in every measured sample, in run order (sample `r` from
    /// round `r`; the median sample's are `per_batch`): what the per-block latency
    /// distribution is taken over ([`crate::latency`]). Empty for the other points and in
    /// results written when only the median sample's were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_batches: Vec<Vec<BatchFigures>>,
}

impl ResultRow {
    /// Whether `b` is the sequential baseline this row's ratio is taken against: the same
    /// dump and timed work, reading its state the same way a client without an access list
    /// can (memory for memory; on demand from the store in the same cache state for a
    /// store row).
    pub fn is_baseline_of_mine(&self, b: &ResultRow) -> bool {
        b.dump == self.dump && b.point == baseline_point(&self.point)
    }

    /// Median throughput, Mgas/s.
    pub fn mgas_per_s(&self) -> f64 {
        self.summary.median.ggas_per_s * 1e3
    }

    /// Fewest and most passes in one measured sample (`(1, 1)` for old results).
    pub fn passes_range(&self) -> (u32, u32) {
        let min = self.passes_per_sample.iter().copied().min().unwrap_or(1);
        let max = self.passes_per_sample.iter().copied().max().unwrap_or(1);
        (min, max)
    }

    /// Longest-transaction latency as a share of the median wall time.
    pub fn longest_share(&self) -> f64 {
        self.summary.median.longest_tx_s / self.summary.median.wall_s.max(f64::MIN_POSITIVE)
    }

    /// Throughput the critical-path bound allows, Ggas/s.
    pub fn bound_ggas_per_s(&self) -> f64 {
        self.total_gas as f64 / 1e9 / self.summary.median.bound_s.max(f64::MIN_POSITIVE)
    }
}

/// The label each dump of `dumps` is shown under, in the same order, every one distinct:
/// the label the config gave it; else its name; where that name is another dump's too, the
/// file stem of its path (`../target/big-blocks/mainnet-like-30m.gigagas` →
/// `mainnet-like-30m`); where even that collides, followed by its checksum.
pub fn dump_labels(dumps: &[DumpRecord]) -> Vec<String> {
    let taken = |labels: &[String], i: usize| {
        labels
            .iter()
            .enumerate()
            .any(|(j, l)| j != i && *l == labels[i])
    };
    let base: Vec<String> = dumps
        .iter()
        .map(|d| d.label.clone().unwrap_or_else(|| d.name.clone()))
        .collect();
    let stems: Vec<String> = (0..dumps.len())
        .map(|i| {
            let d = &dumps[i];
            if d.label.is_none() && taken(&base, i) {
                Path::new(&d.path)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| base[i].clone())
            } else {
                base[i].clone()
            }
        })
        .collect();
    (0..dumps.len())
        .map(|i| {
            if taken(&stems, i) {
                format!("{} ({})", stems[i], dumps[i].checksum)
            } else {
                stems[i].clone()
            }
        })
        .collect()
}

/// The labels of one result set's dumps ([`dump_labels`]), looked up by a row's dump name
/// and checksum: what every table, CSV file and plot shows a row's dump as.
#[derive(Debug, Clone, Default)]
pub struct DumpLabels {
    by_dump: std::collections::HashMap<(String, String), String>,
}

impl DumpLabels {
    /// The labels of `set`'s dumps.
    pub fn of(set: &SweepResults) -> Self {
        let mut by_dump = std::collections::HashMap::new();
        for (d, label) in set.dumps.iter().zip(dump_labels(&set.dumps)) {
            by_dump
                .entry((d.name.clone(), d.checksum.clone()))
                .or_insert(label);
        }
        Self { by_dump }
    }

    /// The label of the dump `name` with `checksum` (its name where the set has no record
    /// of it).
    pub fn label<'a>(&'a self, name: &'a str, checksum: &str) -> &'a str {
        self.by_dump
            .get(&(name.to_string(), checksum.to_string()))
            .map_or(name, String::as_str)
    }

    /// The label of a row's dump.
    pub fn of_row<'a>(&'a self, row: &'a ResultRow) -> &'a str {
        self.label(&row.dump, &row.dump_checksum)
    }

    /// The labels written shorter by `f` (a fixture test's name without its file, say),
    /// where every one stays distinct; else as they are.
    pub fn shortened(self, f: impl Fn(&str) -> String) -> Self {
        let short: std::collections::HashMap<(String, String), String> = self
            .by_dump
            .iter()
            .map(|(k, v)| (k.clone(), f(v)))
            .collect();
        let mut values: Vec<&String> = short.values().collect();
        values.sort_unstable();
        values.dedup();
        if values.len() == short.len() {
            Self { by_dump: short }
        } else {
            self
        }
    }
}

/// xxh3-64 of a sweep config as compact JSON, 16 hex digits: the hash results record of
/// the config they ran ([`SweepResults::config_hash`]).
pub fn config_hash(config: &SweepConfig) -> String {
    let json = serde_json::to_vec(config).expect("a sweep config serializes");
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&json))
}

impl SweepResults {
    /// The hash of the config as run: as recorded, or computed from `config` for results
    /// written before it was recorded.
    pub fn config_hash_or_computed(&self) -> String {
        self.config_hash
            .clone()
            .unwrap_or_else(|| config_hash(&self.config))
    }

    /// Read a `results.json`: a regular file of at most [`MAX_RESULTS_BYTES`] (a FIFO, a
    /// device or a socket is refused by name before it is opened, so it cannot block).
    pub fn load(path: &Path) -> Result<Self, ReportError> {
        let bytes = gigagas_fs_util::read_bounded(path, MAX_RESULTS_BYTES)
            .map_err(|e| ReportError::io(path, e))?;
        let json = |source| ReportError::Json {
            path: path.to_path_buf(),
            source,
        };
        let mut value: Value = serde_json::from_slice(&bytes).map_err(json)?;
        match format_of(&value) {
            RESULTS_FORMAT => {}
            found if found > RESULTS_FORMAT => {
                return Err(ReportError::NewerFormat {
                    path: path.to_path_buf(),
                    found,
                    supported: RESULTS_FORMAT,
                });
            }
            2 => upgrade_v2(&mut value),
            _ => upgrade_v1(&mut value),
        }
        serde_json::from_value(value).map_err(json)
    }

    /// The results as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("results serialize")
    }
}

/// The schema version of a `results.json` read as JSON: its `format`, 1 where there is none.
fn format_of(value: &Value) -> u32 {
    value
        .get("format")
        .and_then(Value::as_u64)
        .map_or(1, |f| u32::try_from(f).unwrap_or(u32::MAX))
}

/// Bring a version-1 `results.json` to the current version: every key a version-1 writer
/// could leave out gets the value its absence meant (listed on [`SweepResults`]), then
/// [`upgrade_v2`] (the result of version 1 is version 2). A key that is there is left as it
/// is.
pub fn upgrade_v1(results: &mut Value) {
    fill(
        results,
        [
            ("description", json!("")),
            ("simulations", json!([])),
            ("failures", json!([])),
            ("skipped", json!([])),
            ("totals", json!([])),
        ],
    );
    for row in items(results, "rows") {
        fill(
            row,
            [
                ("receipts", json!(false)),
                ("timed_work", json!("")),
                ("passes_per_sample", json!([])),
            ],
        );
        if let Some(summary) = row.get_mut("summary") {
            fill(summary, [("worker_busy_s", json!([]))]);
        }
    }
    for total in items(results, "totals") {
        fill(total, [("receipts", json!(false))]);
    }
    for sim in items(results, "simulations") {
        fill(
            sim,
            [
                ("profile_run_work_s", json!([])),
                ("item_slowdown", json!(1.0)),
                ("item_slowdown_source", json!("")),
                ("item_cost_ns", json!([])),
                ("item_cost_scaled_share", json!(1.0)),
            ],
        );
        for p in items(sim, "projections") {
            fill(
                p,
                [("item_slowdown", json!(1.0)), ("item_cost_ns", json!(0.0))],
            );
        }
        for v in items(sim, "validations") {
            fill(
                v,
                [
                    ("measured_work_s", json!(0.0)),
                    ("item_time_ratio", json!(0.0)),
                    ("scheduling_error", json!(0.0)),
                ],
            );
        }
    }
    if let Some(timeline) = results.get_mut("timeline") {
        fill(timeline, [("read_ns", json!(0))]);
    }
    if let Some(o) = results.as_object_mut() {
        o.insert("format".into(), json!(2));
    }
    upgrade_v2(results);
}

/// Bring a version-2 `results.json` to the current version: every store point of a row or
/// a total that reads with an access list (`io` other than `on-demand`) read it as
/// EIP-7928 specifies, and gets `bal_design` `keys`; `format` becomes [`RESULTS_FORMAT`].
/// A design that is there is left as it is.
pub fn upgrade_v2(results: &mut Value) {
    for key in ["rows", "totals"] {
        for point in items(results, key) {
            if let Some(store) = point.pointer_mut("/state/store")
                && store.get("io").and_then(Value::as_str) != Some("on-demand")
            {
                fill(store, [("bal_design", json!("keys"))]);
            }
        }
    }
    if let Some(o) = results.as_object_mut() {
        o.insert("format".into(), json!(RESULTS_FORMAT));
    }
}

/// The elements of the array under `key` of `value` (none where there is no such array).
fn items<'v>(value: &'v mut Value, key: &str) -> impl Iterator<Item = &'v mut Value> {
    value
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// Insert each key `value` (an object) lacks, with its value.
fn fill<const N: usize>(value: &mut Value, keys: [(&str, Value); N]) {
    if let Some(o) = value.as_object_mut() {
        for (key, v) in keys {
            o.entry(key).or_insert(v);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::stats::Metrics;
    use gigagas_grid::{RunConfig, SchedulerKind, TimedWork};

    pub(crate) fn metrics(wall_s: f64, gas: u64, threads: f64) -> Metrics {
        Metrics {
            wall_s,
            ggas_per_s: gas as f64 / 1e9 / wall_s,
            longest_tx_s: 0.1 * wall_s * threads / 2.0,
            bound_s: wall_s * 0.97,
            efficiency: 0.97,
            work_s: wall_s * threads,
            utilisation: 0.95,
            cpu: Default::default(),
            root: None,
        }
    }

    /// A synthetic result set: threads 1, 2, 4 × batch 1, 50 × ols, gas-used, plus a baseline.
    pub(crate) fn sample(cpu: &str) -> SweepResults {
        let gas = 2_000_000_000u64;
        let mut rows = Vec::new();
        let row = |point: Point, wall: f64| {
            let threads = point.threads();
            let batch = point.batch();
            let reps = vec![
                metrics(wall * 1.02, gas, threads as f64),
                metrics(wall, gas, threads as f64),
                metrics(wall * 0.99, gas, threads as f64),
            ];
            ResultRow {
                dump: "mainnet-like".into(),
                dump_checksum: "0123456789abcdef".into(),
                point,
                io: None,
                timed_work: gigagas_grid::TIMED_WORK.into(),
                warmup: 1,
                repeats: 3,
                verified: true,
                total_gas: gas,
                batches: 100 / batch,
                avg_batch_gas: gas as f64 / (100 / batch) as f64,
                speedup_vs_sequential: Some(4.0 / wall),
                vs_sequential: None,
                vs_one_thread: None,
                summary: Summary::of(reps, [10_000, 20_000, 4_000_000]),
                passes_per_sample: vec![1, 1, 1],
                per_batch: Vec::new(),
                sample_batches: Vec::new(),
            }
        };
        rows.push(row(Point::Sequential(TimedWork::default()), 4.0));
        for threads in [1usize, 2, 4] {
            for batch in [1usize, 50] {
                for s in [SchedulerKind::Ols, SchedulerKind::GasUsed] {
                    let eff = if batch == 1 { 0.7 } else { 0.95 };
                    let wall = 4.1 / (threads as f64 * if threads == 1 { 1.0 } else { eff });
                    rows.push(row(
                        Point::Bal(RunConfig::new(
                            std::num::NonZeroUsize::new(threads).unwrap(),
                            batch,
                            s,
                        )),
                        wall,
                    ));
                }
            }
        }
        let mut machine = MachineInfo::detect("0000000c0ffee");
        machine.cpu = cpu.into();
        SweepResults {
            format: RESULTS_FORMAT,
            name: "sample".into(),
            description: "synthetic rows".into(),
            started_utc: "2025-01-01T00:00:00Z".into(),
            machine,
            config: toml::from_str(
                "dumps=[\"d\"]\nthreads=[1,2,4]\nbatch=[1,50]\nschedulers=[\"ols\",\"gas-used\"]\nsequential=true\n",
            )
            .unwrap(),
            dumps: vec![DumpRecord {
                name: "mainnet-like".into(),
                label: None,
                path: "d".into(),
                checksum: "0123456789abcdef".into(),
                size_bytes: 1,
                blocks: 100,
                transactions: 1000,
                total_gas: gas,
                drift: None,
            }],
            rows,
            simulations: Vec::new(),
            failures: Vec::new(),
            skipped: Vec::new(),
            totals: Vec::new(),
            provenance: None,
            config_hash: None,
            timeline: None,
            trace: Vec::new(),
        }
    }

    #[test]
    fn json_round_trip() {
        let r = sample("Test CPU");
        let back: SweepResults = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(back, r);
        assert!(r.to_json().contains("\"format\": 3"));
        assert!(r.to_json().contains("\"mode\": \"bal-parallel\""));
        assert!(r.to_json().contains("\"scheduler\": \"gas-used\""));
    }

    #[test]
    fn skipped_dumps_round_trip() {
        let mut r = sample("Test CPU");
        r.skipped.push(DumpSkip {
            path: "suite/empty.gigagas".into(),
            blocks: 2,
        });
        let back: SweepResults = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.skipped[0].reason(), "no transactions (2 blocks)");
    }

    /// A scheduler of one's own is read back by its name, and the CSV and `table.md` show
    /// it where a built-in one's name stands.
    #[test]
    fn ones_own_scheduler_reads_back_and_renders_by_name() {
        let r = sample("Test CPU");
        let own = r.to_json().replace("\"gas-used\"", "{\"own\": \"mine\"}");
        let own = load_json(&serde_json::from_str(&own).unwrap()).unwrap();
        assert_eq!(own.rows[2].point.to_string(), "BAL 1t b1 mine");
        let csv = |r: &SweepResults| crate::table::render_csv(std::slice::from_ref(r));
        assert_eq!(csv(&own), csv(&r).replace(",gas-used,", ",mine,"));
        let md = crate::table::render_markdown(std::slice::from_ref(&own), &[]);
        assert!(
            md.contains("| b1 mine |") && !md.contains("gas-used"),
            "{md}"
        );
    }

    /// `results` written to a file and read with [`SweepResults::load`].
    fn load_json(results: &Value) -> Result<SweepResults, ReportError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        std::fs::write(&path, results.to_string()).unwrap();
        SweepResults::load(&path)
    }

    /// The sample as a version-1 writer could have left it: the keys added during
    /// version 1 missing.
    fn version_1() -> Value {
        let mut old: Value = serde_json::from_str(&sample("Test CPU").to_json()).unwrap();
        old["format"] = json!(1);
        for key in [
            "description",
            "simulations",
            "failures",
            "skipped",
            "totals",
        ] {
            old.as_object_mut().unwrap().remove(key);
        }
        for row in old["rows"].as_array_mut().unwrap() {
            for key in ["receipts", "timed_work", "passes_per_sample"] {
                row.as_object_mut().unwrap().remove(key);
            }
        }
        old
    }

    /// The version tells the shapes apart: a version-1 file may lack what version 2
    /// always writes, and reads as it meant; the same file claiming version 2 is refused.
    #[test]
    fn old_shapes_load_by_version() {
        let old = version_1();
        let back = load_json(&old).unwrap();
        assert_eq!(back.format, RESULTS_FORMAT);
        assert!(back.description.is_empty() && back.skipped.is_empty() && back.totals.is_empty());
        assert_eq!(back.rows.len(), sample("Test CPU").rows.len());
        for row in &back.rows {
            assert!(!row.point.work().receipts);
            assert!(row.timed_work.is_empty() && row.passes_per_sample.is_empty());
            assert_eq!(row.passes_range(), (1, 1));
        }
        let mut unversioned = old.clone();
        unversioned.as_object_mut().unwrap().remove("format");
        assert_eq!(load_json(&unversioned).unwrap(), back);
        let mut claims_2 = old.clone();
        claims_2["format"] = json!(2);
        let err = load_json(&claims_2).unwrap_err().to_string();
        assert!(err.contains("missing field"), "{err}");
        let mut newer = old;
        newer["format"] = json!(RESULTS_FORMAT + 1);
        assert!(matches!(
            load_json(&newer),
            Err(ReportError::NewerFormat { found, .. }) if found == RESULTS_FORMAT + 1
        ));
    }

    /// A version-2 file's store points read with the list as specified: they load as
    /// `keys`, on-demand ones without a design; a version-3 file that leaves a prefetching
    /// point's design out is refused.
    #[test]
    fn version_2_store_points_load_as_keys() {
        use gigagas_grid::{BalDesign, CacheState, StateRead};
        let mut v2: Value = serde_json::from_str(&sample("Test CPU").to_json()).unwrap();
        v2["format"] = json!(2);
        let rows = v2["rows"].as_array_mut().unwrap();
        rows[0]["state"] = json!({"store": {"io": "on-demand", "cache": "cold"}});
        rows[1]["state"] = json!({"store": {"io": "pipelined", "cache": "cold"}});
        let back = load_json(&v2).unwrap();
        assert_eq!(back.format, RESULTS_FORMAT);
        assert_eq!(
            back.rows[0].point.work().state,
            StateRead::on_demand(CacheState::Cold)
        );
        assert_eq!(back.rows[0].point.work().state.design(), None);
        assert_eq!(
            back.rows[1].point.work().state.design(),
            Some(BalDesign::Keys)
        );
        let mut v3 = v2;
        v3["format"] = json!(RESULTS_FORMAT);
        let err = load_json(&v3).unwrap_err().to_string();
        assert!(err.contains("has no `bal_design`"), "{err}");
    }

    /// A replay row that names no scheduler is an error, not an `ols` row.
    #[test]
    fn a_replay_row_without_a_scheduler_is_refused() {
        let mut old = version_1();
        assert_eq!(old["rows"][1]["mode"], "bal-parallel");
        old["rows"][1]["scheduler"] = Value::Null;
        let err = load_json(&old).unwrap_err().to_string();
        assert!(err.contains("has no `scheduler`"), "{err}");
    }

    #[test]
    fn suite_totals_sum_gas_and_time_and_take_the_geomean() {
        let mut r = sample("Test CPU");
        // A second dump: same points, half the gas, twice the speedup at every point.
        let second: Vec<ResultRow> = r
            .rows
            .iter()
            .map(|row| {
                let mut row = row.clone();
                row.dump = "other".into();
                row.total_gas /= 2;
                row.speedup_vs_sequential = row.speedup_vs_sequential.map(|s| s * 4.0);
                row
            })
            .collect();
        let points = r.rows.len();
        r.rows.extend(second);
        let totals = suite_totals(&r.rows);
        assert_eq!(totals.len(), points);
        for (t, row) in totals.iter().zip(&r.rows) {
            assert_eq!(t.dumps, 2);
            assert_eq!(t.total_gas, row.total_gas + row.total_gas / 2);
            assert!((t.total_wall_s - 2.0 * row.summary.median.wall_s).abs() < 1e-12);
            let geo = t.geomean_speedup.unwrap();
            let want = row.speedup_vs_sequential.unwrap() * 2.0;
            assert!((geo - want).abs() < 1e-9 * want, "{geo} vs {want}");
        }
    }

    /// A label given is kept; a name two dumps share gives way to each file's stem, and a
    /// stem two share to the checksum after it; every label is distinct.
    #[test]
    fn dump_labels_are_distinct() {
        let d = |name: &str, path: &str, checksum: &str, label: Option<&str>| DumpRecord {
            name: name.into(),
            label: label.map(Into::into),
            path: path.into(),
            checksum: checksum.into(),
            size_bytes: 1,
            blocks: 1,
            transactions: 1,
            total_gas: 1,
            drift: None,
        };
        let dumps = [
            d("mainnet-like", "../t/mainnet-like-30m.gigagas", "01", None),
            d("mainnet-like", "../t/mainnet-like-100m.gigagas", "02", None),
            d("mainnet-like", "x/mainnet-like-100m.gigagas", "03", None),
            d("mainnet-like", "../t/a.gigagas", "04", Some("300M")),
            d("mainnet", "dumps/mainnet.gigagas", "05", None),
        ];
        assert_eq!(
            dump_labels(&dumps),
            [
                "mainnet-like-30m",
                "mainnet-like-100m (02)",
                "mainnet-like-100m (03)",
                "300M",
                "mainnet"
            ]
        );
        let mut set = sample("CPU");
        set.dumps = dumps.to_vec();
        let labels = DumpLabels::of(&set);
        assert_eq!(labels.label("mainnet-like", "04"), "300M");
        assert_eq!(labels.label("unknown", "06"), "unknown");
    }

    #[test]
    fn derived_figures() {
        let r = sample("Test CPU");
        let row = &r.rows[1];
        assert!((row.mgas_per_s() - row.summary.median.ggas_per_s * 1e3).abs() < 1e-9);
        assert!(row.longest_share() > 0.0 && row.longest_share() < 1.0);
        assert!(row.bound_ggas_per_s() > row.summary.median.ggas_per_s);
    }
}
