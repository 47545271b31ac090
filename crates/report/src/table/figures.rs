//! A results folder as the README shows it: one compact table, a row per dump (or the
//! suite total, for a suite of many dumps) and per value of the timed work that varies
//! (state read, state-root phase, persistence, sender recovery, receipts), a column per
//! thread count × batch size beside the sequential baseline's (where the sweep ran one),
//! each cell the range over the rest (the schedulers, the ways of claiming items). The throughput tables of `table.md`
//! ([`super::throughput_tables`]) keep every point; this table is their summary.

use super::{
    layout::{Entry, baselines_of, distinct, entries, head, order, sort_keys},
    md::{Align, MdTable},
};
use crate::results::SweepResults;
use gigagas_grid::{Dimension, Point};
use std::fmt::Write;

/// The most dumps a figure shows a row each; a suite of more (a folder of fixtures) shows
/// its total alone.
pub const MAX_FIGURE_DUMPS: usize = 8;

/// The dimensions of the timed work a figure's rows are split by, where they vary.
const WORK: [Dimension; 5] = [
    Dimension::State,
    Dimension::StateRoot,
    Dimension::Persist,
    Dimension::RecoverSenders,
    Dimension::Receipts,
];

/// `lo–hi` of figures formatted alike, or the one figure where both read the same.
fn range(values: impl IntoIterator<Item = f64>, fmt: impl Fn(f64) -> String) -> Option<String> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return None;
    }
    let (lo, hi) = (fmt(lo), fmt(hi));
    Some(if lo == hi { lo } else { format!("{lo}–{hi}") })
}

/// A figure's cell: the MGas/s of `entries` as a range, with their speedups' range.
fn cell(entries: &[&Entry]) -> String {
    let Some(mgas) = range(entries.iter().map(|e| e.mgas_per_s), |v| format!("{v:.0}")) else {
        return "–".into();
    };
    let total = entries.iter().any(|e| e.dump.is_none());
    match range(entries.iter().filter_map(|e| e.speedup), |v| {
        format!("{v:.2}")
    }) {
        Some(s) if total => format!("{mgas} (geomean {s}×)"),
        Some(s) => format!("{mgas} ({s}×)"),
        None => mgas,
    }
}

/// The head of a thread count × batch size column.
fn column_head(threads: usize, batch: usize) -> String {
    let t = if threads == 1 { "thread" } else { "threads" };
    if batch == 1 {
        format!("{threads} {t}, per block")
    } else {
        format!("{threads} {t}, mega-block of {batch}")
    }
}

/// The short commit a figure names: seven characters, and whether the tree was dirty.
fn short_commit(commit: &str) -> String {
    let (hash, dirty) = match commit.strip_suffix("-dirty") {
        Some(h) => (h, true),
        None => (commit, false),
    };
    let short: String = hash.chars().take(7).collect();
    if dirty {
        format!("`{short}` (uncommitted changes)")
    } else {
        format!("`{short}`")
    }
}

/// The README's figure of one results folder: a line saying where it comes from (the
/// folder, linked as `link`, its commit, date, machine and rounds), then its table
/// (module docs). `link` is the folder's path as the README links it, e.g.
/// `results/mainnet/2026-11-27-cfc17ad51e4e`; every row links its `table.md`.
pub fn figure(set: &SweepResults, link: &str) -> String {
    let all = entries(set);
    let totals_only = set.dumps.len() > MAX_FIGURE_DUMPS && !set.totals.is_empty();
    let shown: Vec<&Entry> = all
        .iter()
        .filter(|e| e.dump.is_none() == totals_only)
        .collect();
    let replay: Vec<&Entry> = shown
        .iter()
        .copied()
        .filter(|e| !e.point.is_sequential())
        .collect();
    let varies = |d: Dimension| distinct(replay.iter().map(|e| e.value(d))).len() > 1;
    let mut rows: Vec<Dimension> = vec![Dimension::Dump];
    rows.extend(WORK.into_iter().filter(|d| varies(*d)));
    let orders: Vec<Vec<String>> = Dimension::ALL.iter().map(|d| order(&all, *d)).collect();
    let mut row_keys = distinct(replay.iter().map(|e| e.values(&rows)));
    let mut columns = distinct(replay.iter().filter_map(|e| match e.point {
        Point::Bal(c) => Some((c.threads.get(), c.batch)),
        Point::Sequential(_) => None,
    }));
    sort_keys(&mut row_keys, &rows, &orders);
    columns.sort_unstable();

    let has_baseline = shown.iter().any(|e| e.point.is_sequential());
    let mut heads: Vec<(String, Align)> = rows
        .iter()
        .map(|d| (head(*d).to_string(), Align::Left))
        .collect();
    if has_baseline {
        heads.push(("sequential".into(), Align::Right));
    }
    heads.extend(
        columns
            .iter()
            .map(|&(t, b)| (column_head(t, b), Align::Right)),
    );
    let mut table = MdTable::new(heads);
    let dumps = set.dumps.len();
    for key in &row_keys {
        let in_row: Vec<&Entry> = replay
            .iter()
            .copied()
            .filter(|e| e.values(&rows) == *key)
            .collect();
        let name = match &key[0] {
            Some(_) if totals_only => format!("suite of {dumps} dumps"),
            Some(name) => name.clone(),
            None => "–".into(),
        };
        let mut cells = vec![format!("[{name}]({link}/table.md)")];
        cells.extend(
            key[1..]
                .iter()
                .map(|v| v.clone().unwrap_or_else(|| "–".into())),
        );
        if has_baseline {
            cells.push(cell(&baselines_of(shown.iter().copied(), &in_row)));
        }
        for &(t, b) in &columns {
            let here: Vec<&Entry> = in_row
                .iter()
                .copied()
                .filter(
                    |e| matches!(e.point, Point::Bal(c) if c.threads.get() == t && c.batch == b),
                )
                .collect();
            cells.push(cell(&here));
        }
        table.push(cells);
    }
    let mut out = source_line(set, link);
    out.push_str(&table.render());
    out
}

/// Where a figure comes from, the line above its table: the folder linked as `link`, its
/// commit, date, machine, warm-up passes and rounds, and the machine's note; a blank line
/// after it.
fn source_line(set: &SweepResults, link: &str) -> String {
    let mut out = String::new();
    let m = &set.machine;
    let date = set.started_utc.get(..10).unwrap_or("?");
    let _ = write!(
        out,
        "[`{link}`]({link}/table.md): commit {}, {date}, {} ({} cores); {} warm-up pass{} and {} rounds",
        short_commit(&m.commit),
        m.cpu.trim(),
        m.cores,
        set.config.warmup,
        if set.config.warmup == 1 { "" } else { "es" },
        set.config.repeats,
    );
    if let Some(note) = m.note.as_deref().filter(|n| !n.trim().is_empty()) {
        let _ = write!(out, "; noted: {}", note.trim());
    }
    let _ = writeln!(out, ".\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::sample;

    /// The folder the sample figures link.
    const LINK: &str = "results/sample/2025-01-01-0000000";

    /// The sample's thread count × batch size columns, as a figure's head ends.
    const THREAD_COLUMNS: &str = "1 thread, per block | 1 thread, mega-block of 50 | \
        2 threads, per block | 2 threads, mega-block of 50 | 4 threads, per block | \
        4 threads, mega-block of 50 |";

    /// A figure's table lines (its head, separator and rows).
    fn table_lines(text: &str) -> Vec<&str> {
        text.lines().filter(|l| l.starts_with('|')).collect()
    }

    /// The sample (one dump, threads 1, 2, 4 × batch 1, 50 × two schedulers, and a
    /// baseline): one row, the baseline beside a column per thread count × batch size,
    /// each the range over the schedulers; the row links its folder.
    #[test]
    fn one_dump_is_one_row_of_ranges() {
        let mut s = sample("CPU");
        let faster = s
            .rows
            .iter_mut()
            .find(|r| {
                matches!(r.point, Point::Bal(c) if c.threads.get() == 2 && c.batch == 1
                    && c.scheduler == gigagas_grid::SchedulerKind::GasUsed)
            })
            .unwrap();
        faster.summary.median.ggas_per_s *= 1.1;
        faster.speedup_vs_sequential = Some(1.5);
        let link = LINK;
        let text = figure(&s, link);
        let lines = table_lines(&text);
        assert_eq!(
            lines[0],
            format!("| dump | sequential | {THREAD_COLUMNS}"),
            "{text}"
        );
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[2].starts_with(&format!(
                "| [mainnet-like]({link}/table.md) | 500 | 488 (0.98×) | 488 (0.98×) | \
                 683–751 (1.37–1.50×) |"
            )),
            "{text}"
        );
        assert!(
            text.starts_with(&format!(
                "[`{link}`]({link}/table.md): commit `0000000`, 2025-01-01, CPU (2 cores); "
            )),
            "{text}"
        );
    }

    /// Persistence splits rows where it varies (it costs far more than a range should hide),
    /// and a sweep that ran no sequential baseline has no baseline column.
    #[test]
    fn persistence_is_a_row_and_no_baseline_no_column() {
        let mut s = sample("CPU");
        s.rows.retain(|r| !r.point.is_sequential());
        let persisted: Vec<_> = s
            .rows
            .iter()
            .filter(|r| r.point.batch() == 1)
            .map(|r| {
                let mut r = r.clone();
                if let Point::Bal(c) = &mut r.point {
                    c.work.persist = gigagas_grid::Persist::Block;
                }
                r.summary.median.ggas_per_s *= 0.5;
                r
            })
            .collect();
        s.rows.extend(persisted);
        let link = LINK;
        let text = figure(&s, link);
        let lines = table_lines(&text);
        assert_eq!(
            lines[0],
            format!("| dump | persist | {THREAD_COLUMNS}"),
            "{text}"
        );
        assert_eq!(lines.len(), 4, "{text}");
        assert!(
            lines[2].starts_with(&format!(
                "| [mainnet-like]({link}/table.md) | not persisted | 488 (0.98×) | 488 (0.98×) |"
            )),
            "{text}"
        );
        assert!(
            lines[3].starts_with(&format!(
                "| [mainnet-like]({link}/table.md) | persisted | 244 (0.98×) | – |"
            )),
            "{text}"
        );
    }

    /// Ranges read `lo–hi`, and one figure where both ends read the same.
    #[test]
    fn ranges_collapse_when_equal() {
        let f = |v: f64| format!("{v:.0}");
        assert_eq!(range([1.2, 3.7], f).unwrap(), "1–4");
        assert_eq!(range([1.2, 1.4], f).unwrap(), "1");
        assert_eq!(range(std::iter::empty(), f), None);
        assert_eq!(
            short_commit("cf0977f668cb-dirty"),
            "`cf0977f` (uncommitted changes)"
        );
    }
}
