//! The rows table: one line per measured row, in the columns a reader chooses
//! ([`Column`]), as `gigagas report` prints it on a terminal (full, or [`narrow_columns`]
//! for a narrow one) and as `table.md` embeds it.

use super::{
    escape::md_cell,
    md::{Align, MdTable},
};
use crate::results::{DumpLabels, ResultRow, SweepResults};
use gigagas_grid::{Point, SchedulerKind, StateRead};

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

pub(super) fn any(sets: &[SweepResults], f: impl Fn(&ResultRow) -> bool) -> bool {
    sets.iter().flat_map(|s| &s.rows).any(f)
}

/// The dumps of `sets`' rows, told apart by their labels.
fn distinct_dumps(sets: &[SweepResults]) -> usize {
    let mut labels: Vec<String> = Vec::new();
    for s in sets {
        let l = DumpLabels::of(s);
        for r in &s.rows {
            let label = l.of_row(r);
            if !labels.iter().any(|x| x == label) {
                labels.push(label.to_string());
            }
        }
    }
    labels.len()
}

/// A column of the rows table ([`rows_table_with`]): its head, its alignment and how a
/// row's cell is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// The result set's tag (`M1`, `M2`, ... as listed by [`render_markdown`](super::render_markdown)).
    Machine,
    /// `yes`, or `UNVERIFIED` for a row measured with `--no-verify`.
    Verified,
    /// The dump's label ([`crate::results::dump_labels`]).
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
    /// The state-root phase: `off`, `after` or `overlapped`.
    StateRoot,
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
    pub const ALL: [Column; 22] = [
        Column::Machine,
        Column::Verified,
        Column::Dump,
        Column::Mode,
        Column::State,
        Column::Threads,
        Column::Scheduler,
        Column::Batch,
        Column::Senders,
        Column::StateRoot,
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
            Column::StateRoot => "state root",
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
                | Column::StateRoot
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
            Column::Mode => any(sets, |r| r.point.is_sequential()),
            Column::Senders => any(sets, |r| r.point.work().recover_senders),
            Column::StateRoot => any(sets, |r| !r.point.work().state_root.is_off()),
            Column::VsSequential => any(sets, |r| {
                r.speedup_vs_sequential.is_some() && !r.point.is_sequential()
            }),
            Column::VsOneThread => any(sets, |r| r.vs_one_thread.is_some()),
            Column::State => any(sets, |r| r.point.work().state.is_store()),
            // Only in the narrow table, which names its columns.
            Column::Point => false,
            _ => true,
        }
    }

    /// The cell of row `r` of result set number `set`, whose dumps have `labels` (a
    /// markdown cell: names escaped).
    fn cell(self, set: usize, labels: &DumpLabels, r: &ResultRow) -> String {
        let m = &r.summary.median;
        match self {
            Column::Machine => machine_tag(set),
            Column::Verified => if r.verified { "yes" } else { "UNVERIFIED" }.into(),
            Column::Dump => md_cell(labels.of_row(r)),
            Column::Mode => match r.point {
                Point::Sequential(_) => "sequential".into(),
                Point::Bal(_) => "BAL".into(),
            },
            Column::Threads => r.point.threads().to_string(),
            Column::Scheduler => scheduler_cell(&r.point).into(),
            Column::Batch => r.point.batch().to_string(),
            Column::Senders => if r.point.work().recover_senders {
                "recovered"
            } else {
                "given"
            }
            .into(),
            Column::StateRoot => r.point.work().state_root.name().into(),
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
            Column::VsSequential => match r.point {
                // The baseline against itself: no interval to show.
                Point::Sequential(_) => "1.00×".into(),
                Point::Bal(_) => ratio_cell(r.vs_sequential, r.speedup_vs_sequential),
            },
            Column::VsOneThread => ratio_cell(r.vs_one_thread, None),
            Column::TxLatency => {
                let t = r.summary.tx_us;
                format!("{:.0}/{:.0}", t.p50, t.p99)
            }
            Column::Passes => passes_cell(r),
            Column::State => state_cell(r.point.work().state),
            Column::Point => md_cell(&r.point.to_string()),
        }
    }
}

/// A point's scheduler by name, `-` for the sequential baseline (which has none).
pub(super) fn scheduler_cell(point: &Point) -> &'static str {
    point.scheduler().map_or("-", SchedulerKind::name)
}

/// `memory`, or `cold store, prefetch`.
pub(super) fn state_cell(state: StateRead) -> String {
    match state {
        StateRead::Memory => "memory".into(),
        StateRead::Store { read, cache } => match read.design() {
            None => format!("{cache} store, {}", read.io()),
            Some(design) => format!("{cache} store, {}, {design}", read.io()),
        },
    }
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
/// [`render_markdown`](super::render_markdown)) leads each row.
pub fn rows_table(sets: &[SweepResults]) -> String {
    rows_table_with(sets, &rows_columns(sets))
}

/// The measured rows of every set as one markdown table of the given `columns`, in the
/// order given, less those empty (`–`) on every row. Without rows, the head alone.
pub fn rows_table_with(sets: &[SweepResults], columns: &[Column]) -> String {
    let heads = columns.iter().map(|c| {
        (
            c.head(),
            if c.is_text() {
                Align::Left
            } else {
                Align::Right
            },
        )
    });
    let mut table = MdTable::new(heads);
    for (i, set) in sets.iter().enumerate() {
        let labels = DumpLabels::of(set);
        for r in &set.rows {
            table.push(columns.iter().map(|c| c.cell(i, &labels, r)).collect());
        }
    }
    let text = table.render();
    if !text.is_empty() {
        return text;
    }
    let heads: Vec<&str> = columns.iter().map(|c| c.head()).collect();
    let rule: String = columns
        .iter()
        .map(|c| if c.is_text() { "---|" } else { "---:|" })
        .collect();
    format!("| {} |\n|{rule}\n", heads.join(" | "))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::sample;

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
            assert!(line.starts_with(&format!("| {} |", r.point)), "{line}");
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
        assert!(!columns.contains(&Column::StateRoot), "no row has a root");
        assert!(rows_columns(&[s.clone(), s]).starts_with(&[Column::Machine]));
    }

    /// A row with the state-root phase on shows it: a `state root` column in the full
    /// table, `+root …` in the narrow table's point.
    #[test]
    fn the_state_root_phase_is_visible() {
        let mut s = sample("CPU");
        let Point::Bal(mut config) = s.rows[1].point else {
            panic!("row 1 is a replay row")
        };
        config.work.state_root = gigagas_grid::StateRootPhase::Overlapped;
        s.rows[1].point = Point::Bal(config);
        let sets = std::slice::from_ref(&s);
        assert!(rows_columns(sets).contains(&Column::StateRoot));
        let full = rows_table(sets);
        assert!(
            full.lines().next().unwrap().contains("| state root |"),
            "{full}"
        );
        let lines: Vec<&str> = full.lines().skip(2).collect();
        assert!(lines[0].contains("| off |"), "{full}");
        assert!(lines[1].contains("| overlapped |"), "{full}");
        let narrow = rows_table_with(sets, &narrow_columns(sets));
        assert!(narrow.contains("+root overlapped"), "{narrow}");
    }
}
