//! `table.md` and the CSV files, from one machine's results or several merged.

use crate::{
    results::{Mode, ResultRow, SweepResults},
    simulation::SimulationReport,
};
use gigagas_grid::{Point, StateRead};
use serde::{Serialize, Serializer};
use std::{borrow::Cow, fmt::Write};

/// A name from a dump, a path or a reason as it may be shown: control characters (escape
/// sequences, newlines, tabs, DEL, C1 controls) and the invisible bidirectional-text
/// controls are written as `\n`, `\t`, `\r` or `\u{..}`, so a hostile name can neither
/// drive the terminal nor split a line of `table.md`. The one escaping function of every
/// name shown on a terminal or written to a table.
pub fn escape_name(s: &str) -> Cow<'_, str> {
    let special = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !s.chars().any(special) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if special(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape_name`] for a markdown table cell: `|` escaped too.
fn md_cell(s: &str) -> String {
    escape_name(s).replace('|', "\\|")
}

/// Whether any row of `sets` was measured without verification (`--no-verify`).
pub fn any_unverified(sets: &[SweepResults]) -> bool {
    any(sets, |r| !r.verified)
}

/// What every table, file and plot of unverified results says.
pub const UNVERIFIED: &str =
    "UNVERIFIED (--no-verify): passes were not checked against the receipts and the access lists";

/// Short label of each result set in a merged table: `M1`, `M2`, ...
pub fn machine_tag(index: usize) -> String {
    format!("M{}", index + 1)
}

fn any(sets: &[SweepResults], f: impl Fn(&ResultRow) -> bool) -> bool {
    sets.iter().flat_map(|s| &s.rows).any(f)
}

fn distinct_dumps(sets: &[SweepResults]) -> usize {
    let mut names: Vec<&str> = sets
        .iter()
        .flat_map(|s| s.rows.iter().map(|r| r.dump.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    names.len()
}

/// A column of the rows table ([`rows_table_with`]): its head, its alignment and how a
/// row's cell is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// The result set's tag (`M1`, `M2`, ... as listed by [`render_markdown`]).
    Machine,
    /// `yes`, or `UNVERIFIED` for a row measured with `--no-verify`.
    Verified,
    /// The dump's name.
    Dump,
    /// `sequential` or `BAL`.
    Mode,
    /// Worker threads.
    Threads,
    /// Scheduler name, `-` for the sequential baseline.
    Scheduler,
    /// Blocks per mega-block.
    Batch,
    /// `recovered` or `given`: whether sender recovery was inside the timed work.
    Senders,
    /// Mean gas per batch, Mgas.
    AvgBatchGas,
    /// Median MGas/s with the slowest and fastest sample.
    MgasPerS,
    /// Σ over batches of the slowest transaction, median sample.
    LongestTx,
    /// Wall time of the median sample.
    Total,
    /// The critical-path lower bound on the wall time.
    Bound,
    /// bound / total.
    Efficiency,
    /// longest tx / total.
    LongestShare,
    /// The paired ratio over the sequential baseline, with its interval.
    VsSequential,
    /// The paired ratio over the same point on one thread, with its interval.
    VsOneThread,
    /// Median and 99th percentile of the transaction times, µs.
    TxLatency,
    /// Passes per measured sample (a range where samples differ).
    Passes,
    /// Where the pre-state is read from: memory, or a store (cache state, I/O mode).
    State,
    /// The grid point by its one name (`BAL 2t b50 ols [cold store, prefetch]`): the narrow
    /// table's first column, in place of mode, state, threads, scheduler and batch.
    Point,
}

impl Column {
    /// Every column, in table order.
    pub const ALL: [Column; 21] = [
        Column::Machine,
        Column::Verified,
        Column::Dump,
        Column::Mode,
        Column::State,
        Column::Threads,
        Column::Scheduler,
        Column::Batch,
        Column::Senders,
        Column::AvgBatchGas,
        Column::MgasPerS,
        Column::LongestTx,
        Column::Total,
        Column::Bound,
        Column::Efficiency,
        Column::LongestShare,
        Column::VsSequential,
        Column::VsOneThread,
        Column::TxLatency,
        Column::Passes,
        Column::Point,
    ];

    /// The column's head in `table.md`.
    pub fn head(self) -> &'static str {
        match self {
            Column::Machine => "machine",
            Column::Verified => "verified",
            Column::Dump => "dump",
            Column::Mode => "mode",
            Column::Threads => "threads",
            Column::Scheduler => "scheduler",
            Column::Batch => "batch",
            Column::Senders => "senders",
            Column::AvgBatchGas => "avg batch Mgas",
            Column::MgasPerS => "MGas/s [min–max]",
            Column::LongestTx => "longest tx",
            Column::Total => "total",
            Column::Bound => "bound",
            Column::Efficiency => "eff",
            Column::LongestShare => "longest share",
            Column::VsSequential => "vs seq. [95 % CI]",
            Column::VsOneThread => "vs 1 thread [95 % CI]",
            Column::TxLatency => "tx p50/p99 µs",
            Column::Passes => "passes/sample",
            Column::State => "state",
            Column::Point => "point",
        }
    }

    /// Text columns are left-aligned, figures right-aligned.
    pub fn is_text(self) -> bool {
        matches!(
            self,
            Column::Machine
                | Column::Verified
                | Column::Dump
                | Column::Mode
                | Column::Scheduler
                | Column::Senders
                | Column::State
                | Column::Point
        )
    }

    /// Whether the rows table of `sets` shows this column: the optional ones only where
    /// they tell something (a machine tag only when sets are merged, the dump only when
    /// there are several, a ratio only when some row has one, ...).
    pub fn shown_for(self, sets: &[SweepResults]) -> bool {
        match self {
            Column::Machine => sets.len() > 1,
            Column::Verified => any_unverified(sets),
            Column::Dump => distinct_dumps(sets) > 1,
            Column::Mode => any(sets, |r| r.mode == Mode::Sequential),
            Column::Senders => any(sets, |r| r.recover_senders),
            Column::VsSequential => any(sets, |r| {
                r.speedup_vs_sequential.is_some() && r.mode == Mode::BalParallel
            }),
            Column::VsOneThread => any(sets, |r| r.vs_one_thread.is_some()),
            Column::State => any(sets, |r| r.state.is_store()),
            // Only in the narrow table, which names its columns.
            Column::Point => false,
            _ => true,
        }
    }

    /// The cell of row `r` of result set number `set` (a markdown cell: names escaped).
    fn cell(self, set: usize, r: &ResultRow) -> String {
        let m = &r.summary.median;
        match self {
            Column::Machine => machine_tag(set),
            Column::Verified => if r.verified { "yes" } else { "UNVERIFIED" }.into(),
            Column::Dump => md_cell(&r.dump),
            Column::Mode => match r.mode {
                Mode::Sequential => "sequential".into(),
                Mode::BalParallel => "BAL".into(),
            },
            Column::Threads => r.threads.to_string(),
            Column::Scheduler => r.scheduler_name().into(),
            Column::Batch => r.batch.to_string(),
            Column::Senders => if r.recover_senders {
                "recovered"
            } else {
                "given"
            }
            .into(),
            Column::AvgBatchGas => format!("{:.1}", r.avg_batch_gas / 1e6),
            Column::MgasPerS => format!(
                "{:.0} [{:.0}–{:.0}]",
                r.mgas_per_s(),
                r.summary.min_ggas_per_s * 1e3,
                r.summary.max_ggas_per_s * 1e3
            ),
            Column::LongestTx => format!("{:.3} s", m.longest_tx_s),
            Column::Total => format!("{:.3} s", m.wall_s),
            Column::Bound => format!("{:.3} s", m.bound_s),
            Column::Efficiency => format!("{:.2}", m.efficiency),
            Column::LongestShare => format!("{:.0} %", r.longest_share() * 100.0),
            Column::VsSequential => match r.mode {
                // The baseline against itself: no interval to show.
                Mode::Sequential => "1.00×".into(),
                Mode::BalParallel => ratio_cell(r.vs_sequential, r.speedup_vs_sequential),
            },
            Column::VsOneThread => ratio_cell(r.vs_one_thread, None),
            Column::TxLatency => {
                let t = r.summary.tx_us;
                format!("{:.0}/{:.0}", t.p50, t.p99)
            }
            Column::Passes => passes_cell(r),
            Column::State => state_cell(r.state),
            Column::Point => md_cell(&r.point().to_string()),
        }
    }
}

/// `memory`, or `cold store, prefetch`.
fn state_cell(state: StateRead) -> String {
    match state {
        StateRead::Memory => "memory".into(),
        StateRead::Store { io, cache } => format!("{cache} store, {io}"),
    }
}

/// What the store rows of `sets` read, one row each: reads (accounts/slots/codes), MB,
/// reading, building and exposed time per pass, the overlap (pipelined), read latency
/// p50/p99, the page-cache share resident before the pass (the coldness check), and the
/// device bound (reads ÷ the disk's probed random-read rate) with `eff` = bound / total.
/// Empty when no row read from a store.
pub fn io_table(sets: &[SweepResults]) -> String {
    let mut out = String::new();
    if !sets.iter().any(|s| s.rows.iter().any(|r| r.io.is_some())) {
        return out;
    }
    let _ = writeln!(
        out,
        "| point | reads acc/slots/codes | MB | read | build | exposed | overlap | read p50/p99 µs | resident before | device bound | eff vs device |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for set in sets {
        for r in &set.rows {
            let Some(io) = &r.io else { continue };
            let total = r.summary.median.wall_s;
            let _ = writeln!(
                out,
                "| {} | {}/{}/{} | {:.1} | {:.3} s | {:.3} s | {:.3} s | {:.0} % | {:.0}/{:.0} | {:.1} % | {:.3} s | {} |",
                md_cell(&r.point().to_string()),
                io.accounts,
                io.slots,
                io.codes,
                io.bytes as f64 / 1e6,
                io.read_s,
                io.build_s,
                io.exposed_s,
                io.overlap() * 100.0,
                io.read_p50_us,
                io.read_p99_us,
                io.resident_before * 100.0,
                io.device_bound_s,
                if io.device_bound_s > 0.0 && total > 0.0 {
                    format!("{:.2}", io.device_bound_s / total)
                } else {
                    "–".into()
                },
            );
        }
    }
    out
}

/// The columns the rows table of `sets` has: every column of [`Column::ALL`] that
/// [`Column::shown_for`] keeps, in table order. The one place that decides them.
pub fn rows_columns(sets: &[SweepResults]) -> Vec<Column> {
    Column::ALL
        .into_iter()
        .filter(|c| c.shown_for(sets))
        .collect()
}

/// The columns a reader needs first, for a terminal narrower than the full table: the
/// point, MGas/s, the ratio over the sequential baseline with its interval, eff and the
/// longest transaction (with the machine and dump where the full table has them).
pub fn narrow_columns(sets: &[SweepResults]) -> Vec<Column> {
    let mut columns: Vec<Column> = [Column::Machine, Column::Verified, Column::Dump]
        .into_iter()
        .filter(|c| c.shown_for(sets))
        .collect();
    columns.extend([Column::Point, Column::MgasPerS]);
    if Column::VsSequential.shown_for(sets) {
        columns.push(Column::VsSequential);
    }
    columns.extend([Column::Efficiency, Column::LongestTx]);
    columns
}

/// The width of the widest line of a markdown table, in characters.
pub fn table_width(table: &str) -> usize {
    table.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// The measured rows as one markdown table, with the columns of [`rows_columns`]. With
/// several result sets, a `machine` column (`M1`, `M2`, ... as listed by
/// [`render_markdown`]) leads each row.
pub fn rows_table(sets: &[SweepResults]) -> String {
    rows_table_with(sets, &rows_columns(sets))
}

/// The measured rows of every set as one markdown table of the given `columns`, in the
/// order given.
pub fn rows_table_with(sets: &[SweepResults], columns: &[Column]) -> String {
    let mut out = String::new();
    let heads: Vec<&str> = columns.iter().map(|c| c.head()).collect();
    let _ = writeln!(out, "| {} |", heads.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        columns
            .iter()
            .map(|c| if c.is_text() { "---|" } else { "---:|" })
            .collect::<String>()
    );
    for (i, set) in sets.iter().enumerate() {
        for r in &set.rows {
            let cells: Vec<String> = columns.iter().map(|c| c.cell(i, r)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
    }
    out
}

/// One `- drift of …` line per dump: its baseline's first rounds against its last, and a
/// warning where the machine's speed moved more than [`crate::results::DRIFT_THRESHOLD`].
pub fn drift_lines(set: &SweepResults) -> String {
    let mut out = String::new();
    for d in &set.dumps {
        if let Some(drift) = d.drift {
            let _ = writeln!(
                out,
                "- drift of `{}`: {:+.1} % from the first rounds to the last ({:.0} → {:.0} MGas/s){}",
                escape_name(&d.name),
                drift.change * 100.0,
                drift.first_ggas_per_s * 1e3,
                drift.last_ggas_per_s * 1e3,
                if drift.exceeded {
                    format!(
                        " — the machine's speed moved more than {:.0} % during the run",
                        crate::results::DRIFT_THRESHOLD * 100.0
                    )
                } else {
                    String::new()
                }
            );
        }
    }
    out
}

/// A paired ratio as `1.84× [1.80–1.88]`; an interval that contains 1.0 (no difference
/// shown at that confidence) is marked `≈`. A ratio without an interval (results written
/// before intervals existed) prints bare; none prints `–`.
pub fn ratio_cell(interval: Option<crate::stats::Interval>, bare: Option<f64>) -> String {
    match (interval, bare) {
        (Some(i), _) => format!(
            "{:.2}× [{:.2}–{:.2}]{}",
            i.median,
            i.lo,
            i.hi,
            if i.contains(1.0) { " ≈" } else { "" }
        ),
        (None, Some(s)) => format!("{s:.2}×"),
        (None, None) => "–".into(),
    }
}

fn passes_cell(r: &ResultRow) -> String {
    match r.passes_range() {
        (lo, hi) if lo == hi => lo.to_string(),
        (lo, hi) => format!("{lo}–{hi}"),
    }
}

/// The suite totals of one result set as a markdown table: per grid point, the dumps,
/// total gas over total time and the geometric mean of the per-dump speedups over their
/// own sequential baselines. Empty for a single dump.
pub fn totals_table(set: &SweepResults) -> String {
    let mut out = String::new();
    if set.totals.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "| suite total{} | dumps | Ggas | total | MGas/s (total gas / total time) | geomean speedup vs seq. [95 % CI] |",
        if any_unverified(std::slice::from_ref(set)) {
            " (UNVERIFIED)"
        } else {
            ""
        }
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
    for t in &set.totals {
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} | {:.3} s | {:.0} | {} |",
            t.point(),
            t.dumps,
            t.total_gas as f64 / 1e9,
            t.total_wall_s,
            t.mgas_per_s(),
            ratio_cell(t.geomean_interval, t.geomean_speedup)
        );
    }
    out
}

/// One line per dump that failed: `FAIL path: reason`.
pub fn failures_list(set: &SweepResults) -> String {
    let mut out = String::new();
    for f in &set.failures {
        let _ = writeln!(
            out,
            "FAIL {}: {}",
            escape_name(&f.path),
            escape_name(&f.reason)
        );
    }
    out
}

/// The dumps a run left out because they have nothing to measure, one line each, once:
/// `skipped path: no transactions (2 blocks)`.
pub fn skipped_list(set: &SweepResults) -> String {
    let mut out = String::new();
    for s in &set.skipped {
        let _ = writeln!(
            out,
            "skipped {}: {}",
            escape_name(&s.path),
            escape_name(&s.reason())
        );
    }
    out
}

/// A suite's per-test table: a row per dump, a column per grid point, cells in MGas/s
/// (parallel cells with their speedup over the dump's own sequential baseline), then the
/// suite total. Empty for a single dump.
pub fn per_dump_table(set: &SweepResults) -> String {
    let mut out = String::new();
    if set.dumps.len() < 2 {
        return out;
    }
    let mut columns: Vec<Point> = Vec::new();
    for r in &set.rows {
        if !columns.contains(&r.point()) {
            columns.push(r.point());
        }
    }
    let heads: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    let _ = writeln!(out, "| dump | Mgas | {} |", heads.join(" | "));
    let _ = writeln!(out, "|---|---:|{}", "---:|".repeat(columns.len()));
    for d in &set.dumps {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| {
                set.rows
                    .iter()
                    .find(|r| r.dump_checksum == d.checksum && r.dump == d.name && r.point() == *c)
                    .map(|r| match (r.mode, r.speedup_vs_sequential) {
                        (Mode::BalParallel, Some(s)) => format!("{:.0} ({s:.2}×)", r.mgas_per_s()),
                        _ => format!("{:.0}", r.mgas_per_s()),
                    })
                    .unwrap_or_else(|| "–".into())
            })
            .collect();
        let _ = writeln!(
            out,
            "| {} | {:.1} | {} |",
            md_cell(&short_test_name(&d.name)),
            d.total_gas as f64 / 1e6,
            cells.join(" | ")
        );
    }
    if !set.totals.is_empty() {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| {
                set.totals
                    .iter()
                    .find(|t| t.point() == *c)
                    .map(
                        |t| match t.geomean_speedup.filter(|_| t.mode == Mode::BalParallel) {
                            Some(g) => format!("**{:.0}** (geomean {g:.2}×)", t.mgas_per_s()),
                            None => format!("**{:.0}**", t.mgas_per_s()),
                        },
                    )
                    .unwrap_or_else(|| "–".into())
            })
            .collect();
        let gas: u64 = set.dumps.iter().map(|d| d.total_gas).sum();
        let _ = writeln!(
            out,
            "| **suite total** | {:.1} | {} |",
            gas as f64 / 1e6,
            cells.join(" | ")
        );
    }
    out
}

/// A fixture test's name without its file path and fixture-format tag:
/// `tests/x/test_a.py::test_b[fork_Osaka-blockchain_test-gas_1M]` → `test_b[fork_Osaka-gas_1M]`.
pub fn short_test_name(name: &str) -> String {
    let tail = name.rsplit_once("::").map_or(name, |(_, t)| t);
    tail.replace("-blockchain_test_from_state_test", "")
        .replace("-blockchain_test", "")
}

/// A simulation as markdown: projected GGas/s (longest-tx share) per batch × scheduler
/// and virtual threads, the validation against measured runs, and the assumptions.
pub fn simulation_markdown(sim: &SimulationReport, tag: Option<&str>) -> String {
    let mut out = String::new();
    simulation_intro(&mut out, sim, tag);
    projection_table(&mut out, sim);
    if !sim.validations.is_empty() {
        validation_table(&mut out, sim);
    }
    let _ = writeln!(out, "\nModel assumptions:\n");
    for a in &sim.assumptions {
        let _ = writeln!(out, "- {a}");
    }
    out
}

/// The heading, what was profiled and the item slowdown used.
fn simulation_intro(out: &mut String, sim: &SimulationReport, tag: Option<&str>) {
    let _ = writeln!(
        out,
        "### Schedule simulation{}: `{}`\n",
        tag.map(|t| format!(" ({t})")).unwrap_or_default(),
        escape_name(&sim.dump)
    );
    let _ = writeln!(
        out,
        "Per-item medians of {} one-thread runs (batch 1, ols; {:.3} s of work{}), list-scheduled onto N \
         virtual workers in each scheduler's order. Cells: projected GGas/s (longest-tx share of the projected \
         time).\n",
        sim.profile_runs,
        sim.profile_work_s,
        if sim.profile_run_work_s.is_empty() {
            String::new()
        } else {
            format!(
                "; the runs' own sums: {}",
                sim.profile_run_work_s
                    .iter()
                    .map(|s| format!("{s:.3} s"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    let source = if sim.item_slowdown_source.is_empty() {
        "not recorded"
    } else {
        &sim.item_slowdown_source
    };
    // A cost of zero everywhere (a fitted share of 1, or no extra time): the factor alone.
    if sim.item_cost_ns.iter().all(|&(_, ns)| ns == 0.0) {
        let _ = writeln!(
            out,
            "Item slowdown above one thread: **{:.3}×** every profiled item time ({source}).\n",
            sim.item_slowdown,
        );
    } else {
        let costs: Vec<String> = sim
            .item_cost_ns
            .iter()
            .map(|&(t, ns)| format!("{t} threads {:.2} µs", ns / 1e3))
            .collect();
        let _ = writeln!(
            out,
            "Item slowdown above one thread: **{:.3}×** every profiled item time, plus a fixed cost per \
             item: **{}** ({source}).\n",
            sim.item_slowdown,
            costs.join(", "),
        );
    }
}

/// Projected GGas/s per (batch, scheduler) row and thread-count column.
fn projection_table(out: &mut String, sim: &SimulationReport) {
    let mut threads: Vec<usize> = sim.projections.iter().map(|p| p.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut keys: Vec<(usize, gigagas_grid::SchedulerKind)> = Vec::new();
    for p in &sim.projections {
        if !keys.contains(&(p.batch, p.scheduler)) {
            keys.push((p.batch, p.scheduler));
        }
    }
    let _ = writeln!(
        out,
        "| batch | scheduler | {} |",
        threads
            .iter()
            .map(|t| format!("{t} threads"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(out, "|---:|---|{}", "---:|".repeat(threads.len()));
    for (batch, scheduler) in keys {
        let cells: Vec<String> = threads
            .iter()
            .map(|&t| {
                sim.projections
                    .iter()
                    .find(|p| p.threads == t && p.batch == batch && p.scheduler == scheduler)
                    .map(|p| format!("{:.3} ({:.0} %)", p.ggas_per_s, p.longest_share * 100.0))
                    .unwrap_or_else(|| "–".into())
            })
            .collect();
        let _ = writeln!(out, "| {batch} | {scheduler} | {} |", cells.join(" | "));
    }
}

/// Predicted vs measured wall time, and the largest errors.
fn validation_table(out: &mut String, sim: &SimulationReport) {
    let _ = writeln!(
        out,
        "\nPredicted vs measured wall time (median repeat) on this machine:\n"
    );
    // Recorded by the simulator (its item-cost model, scheduled again); in older results,
    // the projection scaled by the median ratio at its thread count.
    let curve = sim.slowdown_curve();
    let recorded = sim.validations.iter().any(|v| v.modelled_s.is_some());
    let _ = writeln!(
        out,
        "| threads | batch | scheduler | predicted | measured | error | item-time ratio | scheduling error | modelled | modelled error |"
    );
    let _ = writeln!(out, "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for v in &sim.validations {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.3} s | {:.3} s | {:+.1} % | {:.3} | {:+.1} % | {:.3} s | {:+.1} % |",
            v.threads,
            v.batch,
            v.scheduler,
            v.predicted_s,
            v.measured_s,
            v.error * 100.0,
            v.item_time_ratio,
            v.scheduling_error * 100.0,
            v.modelled_wall_s(&curve),
            v.modelled_error(&curve) * 100.0
        );
    }
    if let Some(e) = sim.max_abs_error() {
        let sched = sim
            .validations
            .iter()
            .map(|v| v.scheduling_error.abs())
            .fold(0.0, f64::max);
        let worst = sim
            .validations
            .iter()
            .map(|v| v.modelled_error(&curve).abs())
            .fold(0.0, f64::max);
        let how = if recorded {
            format!(
                "every item's time with the measured slowdown at its thread count, {:.0} % of it \
                 scaling with the item's length and the rest a fixed cost per item, scheduled \
                 again; median item-time ratios: {}",
                sim.item_cost_scaled_share * 100.0,
                curve.describe()
            )
        } else {
            format!(
                "prediction × the median item-time ratio at its thread count: {}",
                curve.describe()
            )
        };
        let _ = writeln!(
            out,
            "\nLargest error: {:.1} % (goal: within 5 %); of the scheduling model alone (prediction × item-time \
             ratio, i.e. with the measured run's own per-item slowdown factored in): {:.1} %; modelled \
             ({how}): {:.1} %.",
            e * 100.0,
            sched * 100.0,
            worst * 100.0
        );
    }
}

/// The whole `table.md`: title, machines, dumps, the rows table, simulations and plots.
pub fn render_markdown(sets: &[SweepResults], plots: &[String]) -> String {
    let mut out = String::new();
    let Some(first) = sets.first() else {
        return out;
    };
    let merged = sets.len() > 1;
    let mut names: Vec<&str> = sets.iter().map(|s| s.name.as_str()).collect();
    names.dedup();
    let _ = writeln!(
        out,
        "# {}{}\n",
        names.join(" + "),
        if merged { " (merged)" } else { "" }
    );
    let unverified = any_unverified(sets);
    if unverified {
        let _ = writeln!(out, "**{UNVERIFIED}.**\n");
    }
    if !first.description.is_empty() {
        let _ = writeln!(out, "{}\n", escape_name(&first.description));
    }
    for (i, s) in sets.iter().enumerate() {
        let m = &s.machine;
        let prefix = if merged {
            format!("**{}** ", machine_tag(i))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "- {prefix}{} ({} cores, {:.1} GiB), {}; {}; commit `{}`; started {}",
            m.cpu, m.cores, m.memory_gib, m.os, m.rustc, m.commit, s.started_utc
        );
        if let Some(note) = &m.note {
            let _ = writeln!(out, "  - note: {}", escape_name(note));
        }
    }
    let mut seen = Vec::new();
    for d in sets.iter().flat_map(|s| &s.dumps) {
        if seen.contains(&(&d.name, &d.checksum)) {
            continue;
        }
        seen.push((&d.name, &d.checksum));
        let _ = writeln!(
            out,
            "- dump `{}` ({}): {} blocks, {} transactions, {:.3} Ggas, checksum `{}`",
            escape_name(&d.name),
            escape_name(&d.path),
            d.blocks,
            d.transactions,
            d.total_gas as f64 / 1e9,
            d.checksum
        );
    }
    let c = &first.config;
    let _ = writeln!(
        out,
        "- every point: {} warm-up pass(es) + {} measured samples of at least {} ms (a short dump is replayed \
         several times per sample and the figures are per pass), {}; \
         figures are the median sample, MGas/s shows [slowest–fastest]",
        c.warmup,
        c.repeats,
        c.min_sample_ms,
        if unverified {
            "**passes NOT verified** (--no-verify)"
        } else {
            "every pass verified (gas, status, writes)"
        }
    );
    let _ = writeln!(
        out,
        "- measured in {} interleaved rounds (order seed `{:#x}`): each round runs every point once, the \
         baseline included, in its own shuffled order; ratios are taken round by round and shown as the \
         median [95 % distribution-free interval]; ≈ marks an interval that contains 1.0 (no difference shown)",
        c.repeats, c.seed
    );
    let mut works: Vec<&str> = sets
        .iter()
        .flat_map(|s| &s.rows)
        .map(|r| r.timed_work.as_str())
        .filter(|w| !w.is_empty())
        .collect();
    works.sort_unstable();
    works.dedup();
    for w in works {
        let _ = writeln!(out, "- timed work, the same on both paths: {w}");
    }
    for s in sets {
        if let Some(p) = &s.provenance {
            // The command line holds user-given paths: escaped like every name.
            for line in p.markdown().lines() {
                let _ = writeln!(out, "{}", escape_name(line));
            }
        }
        out.push_str(&drift_lines(s));
    }
    let _ = writeln!(out);
    for s in sets {
        let failures = failures_list(s);
        if !failures.is_empty() {
            let _ = writeln!(
                out,
                "**{} dump(s) failed** (no rows):\n\n```\n{failures}```\n",
                s.failures.len()
            );
        }
        let skipped = skipped_list(s);
        if !skipped.is_empty() {
            let _ = writeln!(
                out,
                "{} dump(s) skipped: nothing to measure (no rows, not in the totals):\n\n```\n{skipped}```\n",
                s.skipped.len()
            );
        }
    }
    if !merged {
        let per_dump = per_dump_table(first);
        if !per_dump.is_empty() {
            let _ = writeln!(
                out,
                "## Per dump (MGas/s{})\n\n{per_dump}",
                if unverified { ", UNVERIFIED" } else { "" }
            );
            let _ = writeln!(out, "## Suite totals\n\n{}", totals_table(first));
            let _ = writeln!(out, "## Every row\n");
        }
    }
    out.push_str(&rows_table(sets));
    let io = io_table(sets);
    if !io.is_empty() {
        let _ = write!(
            out,
            "\n## Reading the state\n\n{io}\n*read*: wall time of the reads (prefetch: all readers together; on demand: the time inside reads); \
             *build*: joining the values with the access lists into the blocks' tables; *exposed*: the part of both the timed window waited for; \
             *overlap* = 1 − exposed / (read + build); *resident before*: share of the store's pages in the page cache when the pass started \
             (mincore; a cold pass above 1 % is refused); *device bound*: reads ÷ the disk's random 4 KiB read rate at the I/O threads' queue depth.\n"
        );
    }
    out.push_str(
        "\n*longest tx*: Σ over batches of the slowest transaction; *total*: wall time of the median repeat; \
         *bound*: Σ over batches of max(slowest item, batch work / threads), the critical-path lower bound; \
         *eff* = bound / total; *longest share* = longest tx / total.\n",
    );
    for (i, s) in sets.iter().enumerate() {
        for sim in &s.simulations {
            out.push('\n');
            let tag = merged.then(|| machine_tag(i));
            out.push_str(&simulation_markdown(sim, tag.as_deref()));
        }
    }
    if !plots.is_empty() {
        let _ = writeln!(out, "\n## Plots\n");
        for p in plots {
            let _ = writeln!(out, "![{p}]({p})");
        }
    }
    out
}

/// A figure written with `N` decimals (`{:.N}`), as every CSV file writes its figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Fixed<const N: usize>(f64);

impl<const N: usize> Serialize for Fixed<N> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("{:.*}", N, self.0))
    }
}

/// The machine columns that lead every CSV line, so files of several machines
/// concatenate. (Written field by field: the csv crate cannot flatten a nested struct.)
fn machine_columns(s: &SweepResults) -> (&str, usize, &str) {
    (&s.machine.cpu, s.machine.cores, &s.machine.commit)
}

/// A line of `results.csv`: one grid point of one dump, median figures and range.
#[derive(Debug, Default, Serialize)]
struct ResultsCsvRow<'a> {
    machine_cpu: &'a str,
    machine_cores: usize,
    commit: &'a str,
    dump: &'a str,
    dump_checksum: &'a str,
    mode: &'static str,
    threads: usize,
    scheduler: &'static str,
    batch: usize,
    recover_senders: bool,
    warmup: usize,
    repeats: usize,
    verified: bool,
    avg_batch_gas: Fixed<0>,
    mgas_per_s: Fixed<2>,
    mgas_per_s_min: Fixed<2>,
    mgas_per_s_max: Fixed<2>,
    longest_tx_s: Fixed<6>,
    wall_s: Fixed<6>,
    bound_s: Fixed<6>,
    efficiency: Fixed<4>,
    longest_share: Fixed<4>,
    work_s: Fixed<6>,
    utilisation: Fixed<4>,
    speedup_vs_sequential: Option<Fixed<4>>,
    tx_p50_us: Fixed<1>,
    tx_p99_us: Fixed<1>,
    tx_max_us: Fixed<1>,
    passes_min: u32,
    passes_max: u32,
}

/// A line of `totals.csv`: one grid point summed over a suite's dumps.
#[derive(Debug, Default, Serialize)]
struct TotalsCsvRow<'a> {
    machine_cpu: &'a str,
    machine_cores: usize,
    commit: &'a str,
    mode: &'static str,
    threads: usize,
    scheduler: &'static str,
    batch: usize,
    recover_senders: bool,
    dumps: usize,
    total_gas: u64,
    total_wall_s: Fixed<6>,
    mgas_per_s: Fixed<2>,
    geomean_speedup_vs_sequential: Option<Fixed<4>>,
    verified: bool,
}

/// A line of `simulation.csv`: one projection of one simulation.
#[derive(Debug, Default, Serialize)]
struct SimulationCsvRow<'a> {
    machine_cpu: &'a str,
    machine_cores: usize,
    commit: &'a str,
    dump: &'a str,
    dump_checksum: &'a str,
    threads: usize,
    batch: usize,
    scheduler: &'static str,
    makespan_s: Fixed<6>,
    ggas_per_s: Fixed<4>,
    longest_tx_s: Fixed<6>,
    longest_share: Fixed<4>,
    bound_s: Fixed<6>,
}

/// `rows` as CSV text: a header line of the row type's field names (written even when
/// there is no row), then one line per row, fields quoted only where they must be.
fn csv_text<R: Serialize + Default>(rows: impl IntoIterator<Item = R>) -> String {
    let serialize_all = |rows: &mut dyn Iterator<Item = R>| {
        let mut w = csv::Writer::from_writer(Vec::new());
        for row in rows {
            w.serialize(row)
                .expect("CSV rows are flat structs of strings and numbers");
        }
        let bytes = w.into_inner().expect("writing to memory does not fail");
        String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8")
    };
    let mut rows = rows.into_iter().peekable();
    if rows.peek().is_some() {
        return serialize_all(&mut rows);
    }
    // serde writes the header with the first row: write a default row, keep its header.
    let text = serialize_all(&mut std::iter::once(R::default()));
    text.split_inclusive('\n')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// `results.csv`: one line per grid point (median figures and range), machine columns
/// included so files of several machines concatenate.
pub fn render_csv(sets: &[SweepResults]) -> String {
    csv_text(sets.iter().flat_map(|s| {
        let (machine_cpu, machine_cores, commit) = machine_columns(s);
        s.rows.iter().map(move |r| {
            let m = &r.summary.median;
            let crate::stats::TxTimes { p50, p99, max } = r.summary.tx_us;
            let (passes_min, passes_max) = r.passes_range();
            ResultsCsvRow {
                machine_cpu,
                machine_cores,
                commit,
                dump: &r.dump,
                dump_checksum: &r.dump_checksum,
                mode: r.mode.name(),
                threads: r.threads,
                scheduler: r.scheduler_name(),
                batch: r.batch,
                recover_senders: r.recover_senders,
                warmup: r.warmup,
                repeats: r.repeats,
                verified: r.verified,
                avg_batch_gas: Fixed(r.avg_batch_gas),
                mgas_per_s: Fixed(r.mgas_per_s()),
                mgas_per_s_min: Fixed(r.summary.min_ggas_per_s * 1e3),
                mgas_per_s_max: Fixed(r.summary.max_ggas_per_s * 1e3),
                longest_tx_s: Fixed(m.longest_tx_s),
                wall_s: Fixed(m.wall_s),
                bound_s: Fixed(m.bound_s),
                efficiency: Fixed(m.efficiency),
                longest_share: Fixed(r.longest_share()),
                work_s: Fixed(m.work_s),
                utilisation: Fixed(m.utilisation),
                speedup_vs_sequential: r.speedup_vs_sequential.map(Fixed),
                tx_p50_us: Fixed(p50),
                tx_p99_us: Fixed(p99),
                tx_max_us: Fixed(max),
                passes_min,
                passes_max,
            }
        })
    }))
}

/// `totals.csv`: one line per suite total (grid point summed over a suite's dumps).
pub fn render_totals_csv(sets: &[SweepResults]) -> String {
    csv_text(sets.iter().flat_map(|s| {
        let (machine_cpu, machine_cores, commit) = machine_columns(s);
        let verified = !any_unverified(std::slice::from_ref(s));
        s.totals.iter().map(move |t| TotalsCsvRow {
            machine_cpu,
            machine_cores,
            commit,
            mode: t.mode.name(),
            threads: t.threads,
            scheduler: t.scheduler_name(),
            batch: t.batch,
            recover_senders: t.recover_senders,
            dumps: t.dumps,
            total_gas: t.total_gas,
            total_wall_s: Fixed(t.total_wall_s),
            mgas_per_s: Fixed(t.mgas_per_s()),
            geomean_speedup_vs_sequential: t.geomean_speedup.map(Fixed),
            verified,
        })
    }))
}

/// `simulation.csv`: one line per projection, with the machine the profile came from.
pub fn render_simulation_csv(sets: &[SweepResults]) -> String {
    csv_text(sets.iter().flat_map(|s| {
        let (machine_cpu, machine_cores, commit) = machine_columns(s);
        s.simulations.iter().flat_map(move |sim| {
            sim.projections.iter().map(move |p| SimulationCsvRow {
                machine_cpu,
                machine_cores,
                commit,
                dump: &sim.dump,
                dump_checksum: &sim.dump_checksum,
                threads: p.threads,
                batch: p.batch,
                scheduler: p.scheduler.name(),
                makespan_s: Fixed(p.makespan_s),
                ggas_per_s: Fixed(p.ggas_per_s),
                longest_tx_s: Fixed(p.longest_tx_s),
                longest_share: Fixed(p.longest_share),
                bound_s: Fixed(p.bound_s),
            })
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::sample;

    #[test]
    fn hostile_names_are_escaped_everywhere() {
        assert_eq!(escape_name("plain-name[x]"), "plain-name[x]");
        assert_eq!(
            escape_name("a\u{1b}[31mred\nb\t\u{7f}\u{202e}"),
            "a\\u{1b}[31mred\\nb\\t\\u{7f}\\u{202e}"
        );
        let mut s = sample("CPU");
        let hostile = "evil\u{1b}[2J\nname|x";
        for r in &mut s.rows {
            r.dump = hostile.into();
        }
        for d in &mut s.dumps {
            d.name = hostile.into();
            d.path = hostile.into();
        }
        let mut other = s.clone();
        for r in &mut other.rows {
            r.dump = "other".into();
        }
        s.rows.extend(other.rows);
        s.failures.push(crate::results::DumpFailure {
            path: hostile.into(),
            reason: "bad\u{1b}[0m\nreason".into(),
        });
        let md = render_markdown(std::slice::from_ref(&s), &[]);
        let fails = failures_list(&s);
        for text in [&md, &fails, &rows_table(std::slice::from_ref(&s))] {
            assert!(!text.contains('\u{1b}'), "{text}");
            assert!(!text.contains("\nname"), "a name split a line: {text}");
        }
        assert!(md.contains("evil\\u{1b}[2J\\nname\\|x"), "{md}");
        assert_eq!(fails.lines().count(), 1, "{fails}");
    }

    #[test]
    fn unverified_results_say_so_in_every_table() {
        let verified = render_markdown(std::slice::from_ref(&sample("CPU")), &[]);
        assert!(verified.contains("every pass verified"));
        assert!(!verified.contains("UNVERIFIED"));
        let mut s = sample("CPU");
        for r in &mut s.rows {
            r.verified = false;
        }
        let md = render_markdown(std::slice::from_ref(&s), &[]);
        assert!(!md.contains("every pass verified"), "{md}");
        assert!(md.contains(UNVERIFIED), "{md}");
        let rows = rows_table(std::slice::from_ref(&s));
        let data: Vec<&str> = rows.lines().skip(2).collect();
        assert!(!data.is_empty());
        assert!(data.iter().all(|l| l.contains("| UNVERIFIED |")), "{rows}");
        s.totals = crate::results::suite_totals(&s.rows);
        if !s.totals.is_empty() {
            assert!(totals_table(&s).contains("UNVERIFIED"));
            assert!(render_totals_csv(std::slice::from_ref(&s)).contains(",false\n"));
        }
    }

    #[test]
    fn single_machine_table_has_the_seed_columns() {
        let s = sample("Test CPU");
        let md = render_markdown(std::slice::from_ref(&s), &["a.svg".into()]);
        for col in [
            "threads",
            "scheduler",
            "batch",
            "avg batch Mgas",
            "MGas/s",
            "longest tx",
            "total",
            "bound",
            "eff",
        ] {
            assert!(md.contains(col), "missing {col}:\n{md}");
        }
        assert!(!md.contains("| machine |"));
        assert!(md.contains("![a.svg](a.svg)"));
        assert!(md.contains("| sequential | 1 | - | 1 |"), "{md}");
        // header + separator + one line per row
        assert_eq!(
            rows_table(std::slice::from_ref(&s)).lines().count(),
            2 + s.rows.len()
        );
    }

    #[test]
    fn test_names_are_shortened() {
        assert_eq!(
            short_test_name(
                "tests/benchmark/compute/precompile/test_p256verify.py::test_p256verify[fork_Osaka-blockchain_test-p256verify-benchmark-gas-value_10M]"
            ),
            "test_p256verify[fork_Osaka-p256verify-benchmark-gas-value_10M]"
        );
        assert_eq!(short_test_name("mainnet-like"), "mainnet-like");
    }

    #[test]
    fn the_narrow_table_names_each_point_once_and_is_narrower() {
        let s = sample("cpu");
        let sets = std::slice::from_ref(&s);
        let full = rows_table(sets);
        let narrow = rows_table_with(sets, &narrow_columns(sets));
        assert!(table_width(&narrow) < table_width(&full) / 2, "{narrow}");
        assert_eq!(narrow.lines().count(), full.lines().count());
        let head = narrow.lines().next().unwrap();
        assert!(head.starts_with("| point | MGas/s"), "{head}");
        for (line, r) in narrow.lines().skip(2).zip(&s.rows) {
            assert!(line.starts_with(&format!("| {} |", r.point())), "{line}");
        }
    }

    #[test]
    fn suite_tables_have_a_row_per_dump_and_a_total_per_point() {
        let mut s = sample("Test CPU");
        let mut second = s.dumps[0].clone();
        second.name = "other".into();
        second.checksum = "fedcba9876543210".into();
        let extra: Vec<ResultRow> = s
            .rows
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.dump = "other".into();
                r.dump_checksum = second.checksum.clone();
                r
            })
            .collect();
        s.rows.extend(extra);
        s.dumps.push(second);
        s.totals = crate::results::suite_totals(&s.rows);
        let per_dump = per_dump_table(&s);
        // head, separator, two dumps, the total
        assert_eq!(per_dump.lines().count(), 2 + 2 + 1, "{per_dump}");
        let head = per_dump.lines().next().unwrap();
        assert!(
            head.contains("| sequential |") && head.contains("| BAL 1t b1 ols |"),
            "{head}"
        );
        assert!(per_dump.contains("| **suite total** |"), "{per_dump}");
        let totals = totals_table(&s);
        assert_eq!(totals.lines().count(), 2 + s.totals.len());
        s.failures.push(crate::results::DumpFailure {
            path: "dumps/bad.gigagas".into(),
            reason: "checksum mismatch".into(),
        });
        assert_eq!(
            failures_list(&s),
            "FAIL dumps/bad.gigagas: checksum mismatch\n"
        );
        s.skipped.push(crate::results::DumpSkip {
            path: "dumps/empty.gigagas".into(),
            blocks: 1,
        });
        assert_eq!(
            skipped_list(&s),
            "skipped dumps/empty.gigagas: no transactions (1 block)\n"
        );
        let md = render_markdown(std::slice::from_ref(&s), &[]);
        assert_eq!(md.matches("skipped dumps/empty.gigagas").count(), 1, "{md}");
        assert!(md.contains("## Per dump (MGas/s)") && md.contains("## Suite totals"));
        assert!(
            md.contains("FAIL dumps/bad.gigagas: checksum mismatch"),
            "{md}"
        );
        let csv = render_totals_csv(std::slice::from_ref(&s));
        assert_eq!(csv.lines().count(), 1 + s.totals.len());
    }

    /// The headers every reader of the CSV files knows: the columns stay as they were.
    #[test]
    fn csv_headers_keep_their_columns() {
        let header = |text: String| text.lines().next().unwrap().to_string();
        let results = "machine_cpu,machine_cores,commit,dump,dump_checksum,mode,threads,scheduler,batch,\
             recover_senders,warmup,repeats,verified,avg_batch_gas,mgas_per_s,mgas_per_s_min,mgas_per_s_max,\
             longest_tx_s,wall_s,bound_s,efficiency,longest_share,work_s,utilisation,speedup_vs_sequential,\
             tx_p50_us,tx_p99_us,tx_max_us,passes_min,passes_max";
        let totals = "machine_cpu,machine_cores,commit,mode,threads,scheduler,batch,recover_senders,dumps,\
             total_gas,total_wall_s,mgas_per_s,geomean_speedup_vs_sequential,verified";
        let simulation = "machine_cpu,machine_cores,commit,dump,dump_checksum,threads,batch,scheduler,\
             makespan_s,ggas_per_s,longest_tx_s,longest_share,bound_s";
        let s = sample("CPU");
        assert_eq!(header(render_csv(std::slice::from_ref(&s))), results);
        // No line (no totals, no simulation, no set at all): the header alone.
        assert_eq!(
            render_totals_csv(std::slice::from_ref(&s)),
            format!("{totals}\n")
        );
        assert_eq!(render_simulation_csv(&[]), format!("{simulation}\n"));
        assert_eq!(render_csv(&[]), format!("{results}\n"));
    }

    /// results.csv read back with a CSV reader gives the rows' own values, a machine name
    /// with a comma, quotes and a newline included.
    #[test]
    fn results_csv_round_trips() {
        let mut s = sample("CPU \"X\", 2 GHz\nrev 2");
        s.rows[0].speedup_vs_sequential = None;
        s.rows[1].speedup_vs_sequential = Some(1.23456);
        let text = render_csv(std::slice::from_ref(&s));
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let head = reader.headers().unwrap().clone();
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(records.len(), s.rows.len());
        for (rec, r) in records.iter().zip(&s.rows) {
            assert_eq!(&rec[col("machine_cpu")], s.machine.cpu);
            assert_eq!(&rec[col("dump")], r.dump);
            assert_eq!(&rec[col("mode")], r.mode.name());
            assert_eq!(rec[col("threads")].parse::<usize>().unwrap(), r.threads);
            assert_eq!(&rec[col("scheduler")], r.scheduler_name());
            assert_eq!(rec[col("batch")].parse::<usize>().unwrap(), r.batch);
            assert_eq!(rec[col("verified")].parse::<bool>().unwrap(), r.verified);
            let mgas: f64 = rec[col("mgas_per_s")].parse().unwrap();
            assert!((mgas - r.mgas_per_s()).abs() <= 0.005, "{mgas}");
            assert_eq!(&rec[col("mgas_per_s")], format!("{:.2}", r.mgas_per_s()));
            let speedup = &rec[col("speedup_vs_sequential")];
            match r.speedup_vs_sequential {
                Some(x) => assert_eq!(speedup, format!("{x:.4}")),
                None => assert_eq!(speedup, ""),
            }
            let (lo, hi) = r.passes_range();
            assert_eq!(rec[col("passes_min")].parse::<u32>().unwrap(), lo);
            assert_eq!(rec[col("passes_max")].parse::<u32>().unwrap(), hi);
        }
    }

    /// A table of chosen columns has those heads, in that order, and a cell per column.
    #[test]
    fn rows_table_takes_a_column_list() {
        let s = sample("CPU");
        let sets = std::slice::from_ref(&s);
        let table = rows_table_with(sets, &[Column::Scheduler, Column::Threads]);
        let mut lines = table.lines();
        assert_eq!(lines.next(), Some("| scheduler | threads |"));
        assert_eq!(lines.next(), Some("|---|---:|"));
        assert_eq!(lines.next(), Some("| - | 1 |"));
        assert_eq!(lines.count(), s.rows.len() - 1);
        // The default list: no machine column for one set, every fixed column.
        let columns = rows_columns(sets);
        assert!(!columns.contains(&Column::Machine));
        assert!(!columns.contains(&Column::Verified));
        for c in [
            Column::Threads,
            Column::MgasPerS,
            Column::TxLatency,
            Column::Passes,
        ] {
            assert!(columns.contains(&c), "{c:?}");
        }
        assert!(rows_columns(&[s.clone(), s]).starts_with(&[Column::Machine]));
    }

    #[test]
    fn merged_table_has_a_row_per_machine_and_point() {
        let a = sample("CPU A");
        let b = sample("CPU B, with comma");
        let md = render_markdown(&[a.clone(), b.clone()], &[]);
        assert!(md.contains("| machine |"));
        assert!(md.contains("**M1** CPU A") && md.contains("**M2** CPU B"));
        assert_eq!(
            rows_table(&[a.clone(), b.clone()]).lines().count(),
            2 + a.rows.len() + b.rows.len()
        );
        let csv = render_csv(&[a.clone(), b]);
        assert_eq!(csv.lines().count(), 1 + 2 * a.rows.len());
        assert!(csv.contains("\"CPU B, with comma\""));
        let cols = csv.lines().next().unwrap().split(',').count();
        assert!(
            csv.lines()
                .filter(|l| l.starts_with("CPU A"))
                .all(|l| l.split(',').count() == cols)
        );
    }
}
