//! The sweep's throughput tables (`table.md`'s "Throughput" section), laid out by the
//! dimensions that vary: a row per dump × thread count (or the rows the config's `layout`
//! names), a column per combination of at most [`MAX_POINT_COLUMNS`] other values, and a
//! table per value of the rest (the state read, the state-root phase, ...).
//!
//! The sequential baseline has no threads, batch or scheduler: it stands in every row of
//! its dump, in a `sequential` column, in each table whose replay rows it is the baseline
//! of ([`crate::results::baseline_point`]). The dimensions of the timed work (state, root,
//! senders, receipts) change the baseline, so with a baseline in the results they make
//! tables rather than columns, and a table's baseline column is one point.

use super::{
    escape::md_cell,
    md::{Align, MdTable},
    terminal::state_cell,
};
use crate::results::{DumpLabels, SweepResults, baseline_point};
use gigagas_grid::{Dimension, Point};
use std::fmt::Write;

/// The most point columns a table takes from the varying dimensions before the rest make
/// tables of their own (besides the baseline's column).
pub const MAX_POINT_COLUMNS: usize = 8;

/// Which dimensions make a sweep's rows, columns and tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The rows' dimensions, outermost first.
    pub rows: Vec<Dimension>,
    /// The columns' dimensions, outermost first.
    pub columns: Vec<Dimension>,
    /// The dimensions with a table per value.
    pub tables: Vec<Dimension>,
}

/// One measured figure a table places: a row of one dump, or a suite total.
pub(super) struct Entry {
    pub(super) point: Point,
    /// The dump's label, escaped for a cell (`None`: a suite total).
    pub(super) dump: Option<String>,
    /// MGas/s of the median sample.
    pub(super) mgas_per_s: f64,
    /// The speedup over the sequential baseline (a suite total's: the geometric mean of
    /// its dumps'); `None` for the baseline itself and where there is none.
    pub(super) speedup: Option<f64>,
    /// The cell as shown.
    cell: String,
}

impl Entry {
    /// The entry's value along `dim`, as a table shows it; `None` where the point has none
    /// (the baseline's threads, batch, scheduler and claims).
    pub(super) fn value(&self, dim: Dimension) -> Option<String> {
        let work = self.point.work();
        let bal = match self.point {
            Point::Bal(c) => Some(c),
            Point::Sequential(_) => None,
        };
        match dim {
            Dimension::Dump => Some(
                self.dump
                    .clone()
                    .unwrap_or_else(|| "**suite total**".into()),
            ),
            Dimension::Threads => bal.map(|c| c.threads.to_string()),
            Dimension::Batch => bal.map(|c| format!("b{}", c.batch)),
            Dimension::Scheduler => bal.map(|c| c.scheduler.name().into()),
            Dimension::Claims => bal.map(|c| c.claims.name().into()),
            Dimension::RecoverSenders => Some(
                if work.recover_senders {
                    "senders recovered"
                } else {
                    "senders given"
                }
                .into(),
            ),
            Dimension::Receipts => Some(
                if work.receipts {
                    "receipts"
                } else {
                    "no receipts"
                }
                .into(),
            ),
            Dimension::State => Some(state_cell(work.state)),
            Dimension::StateRoot => Some(format!("root {}", work.state_root.name())),
            Dimension::Persist => Some(
                match work.persist {
                    gigagas_grid::Persist::None => "not persisted",
                    gigagas_grid::Persist::Block => "persisted",
                    gigagas_grid::Persist::Background => "persisted in the background",
                }
                .into(),
            ),
        }
    }

    pub(super) fn values(&self, dims: &[Dimension]) -> Vec<Option<String>> {
        dims.iter().map(|d| self.value(*d)).collect()
    }
}

/// What a table per value of a dimension is a table per.
fn noun(dim: Dimension) -> &'static str {
    match dim {
        Dimension::Dump => "dump",
        Dimension::Threads => "thread count",
        Dimension::Batch => "batch size",
        Dimension::Scheduler => "scheduler",
        Dimension::Claims => "way of claiming items",
        Dimension::RecoverSenders => "sender-recovery setting",
        Dimension::Receipts => "receipts setting",
        Dimension::State => "state read",
        Dimension::StateRoot => "state-root phase",
        Dimension::Persist => "persistence setting",
    }
}

/// The head of a dimension's column.
pub(super) fn head(dim: Dimension) -> &'static str {
    match dim {
        Dimension::Dump => "dump",
        Dimension::Threads => "threads",
        Dimension::Batch => "batch",
        Dimension::Scheduler => "scheduler",
        Dimension::Claims => "claims",
        Dimension::RecoverSenders => "senders",
        Dimension::Receipts => "receipts",
        Dimension::State => "state",
        Dimension::StateRoot => "state root",
        Dimension::Persist => "persist",
    }
}

/// The entries of a set: its rows (by their dump's label), then its suite totals.
pub(super) fn entries(set: &SweepResults) -> Vec<Entry> {
    let labels = DumpLabels::of(set).shortened(super::short_test_name);
    let mut out: Vec<Entry> = set
        .rows
        .iter()
        .map(|r| Entry {
            point: r.point,
            dump: Some(md_cell(labels.of_row(r))),
            mgas_per_s: r.mgas_per_s(),
            speedup: r.speedup_vs_sequential.filter(|_| !r.point.is_sequential()),
            cell: match (r.point, r.speedup_vs_sequential) {
                (Point::Bal(_), Some(s)) => format!("{:.0} ({s:.2}×)", r.mgas_per_s()),
                _ => format!("{:.0}", r.mgas_per_s()),
            },
        })
        .collect();
    out.extend(set.totals.iter().map(|t| Entry {
        point: t.point,
        dump: None,
        mgas_per_s: t.mgas_per_s(),
        speedup: t.speedup().filter(|_| !t.point.is_sequential()),
        cell: match t.speedup().filter(|_| !t.point.is_sequential()) {
            Some(g) => format!("**{:.0}** (geomean {g:.2}×)", t.mgas_per_s()),
            None => format!("**{:.0}**", t.mgas_per_s()),
        },
    }));
    out
}

/// The values `dim` takes over `entries`, in table order: thread counts and batch sizes
/// ascending, the others as first met (the dumps in run order, the totals last).
pub(super) fn order(entries: &[Entry], dim: Dimension) -> Vec<String> {
    let mut values = distinct(entries.iter().filter_map(|e| e.value(dim)));
    if matches!(dim, Dimension::Threads | Dimension::Batch) {
        let number = |v: &String| {
            v.trim_start_matches('b')
                .parse::<usize>()
                .unwrap_or(usize::MAX)
        };
        values.sort_by_key(number);
    }
    values
}

/// How many values `dim` takes over the replay's entries (the dump over every row).
fn count(entries: &[Entry], dim: Dimension) -> usize {
    let replay: Vec<&Entry> = entries
        .iter()
        .filter(|e| !e.point.is_sequential() && (dim != Dimension::Dump || e.dump.is_some()))
        .collect();
    distinct(replay.iter().filter_map(|e| e.value(dim))).len()
}

/// The layout of `set`'s tables: the rows the config names (else dump × threads), each
/// kept only where it varies; the columns the config names, else the other varying
/// dimensions in [`Dimension::ALL`]'s order while their combinations number at most
/// [`MAX_POINT_COLUMNS`] (with a baseline in the results, not the timed work's); a table
/// per combination of the varying dimensions left.
pub fn layout_of(set: &SweepResults) -> Layout {
    let entries = entries(set);
    layout_of_entries(set, &entries)
}

fn layout_of_entries(set: &SweepResults, entries: &[Entry]) -> Layout {
    let varies = |d: Dimension| count(entries, d) > 1;
    let named = &set.config.layout;
    let rows: Vec<Dimension> = if named.rows.is_empty() {
        vec![Dimension::Dump, Dimension::Threads]
    } else {
        named.rows.clone()
    }
    .into_iter()
    .filter(|d| varies(*d))
    .collect();
    let baseline = entries.iter().any(|e| e.point.is_sequential());
    let columns: Vec<Dimension> = if named.columns.is_empty() {
        let mut columns = Vec::new();
        let mut product = 1;
        for d in Dimension::ALL {
            if rows.contains(&d) || !varies(d) || (baseline && d.is_work()) {
                continue;
            }
            let n = count(entries, d);
            if product * n <= MAX_POINT_COLUMNS {
                columns.push(d);
                product *= n;
            }
        }
        columns
    } else {
        named
            .columns
            .iter()
            .copied()
            .filter(|d| varies(*d) && !rows.contains(d))
            .collect()
    };
    let tables = Dimension::ALL
        .into_iter()
        .filter(|d| varies(*d) && !rows.contains(d) && !columns.contains(d))
        .collect();
    Layout {
        rows,
        columns,
        tables,
    }
}

/// `values` sorted by each dimension's [`order`], outermost first.
pub(super) fn sort_keys(
    keys: &mut [Vec<Option<String>>],
    dims: &[Dimension],
    orders: &[Vec<String>],
) {
    let rank = |k: &Vec<Option<String>>| -> Vec<usize> {
        k.iter()
            .zip(dims)
            .map(|(v, d)| {
                let order = &orders[Dimension::ALL.iter().position(|x| x == d).unwrap_or(0)];
                v.as_ref()
                    .and_then(|v| order.iter().position(|o| o == v))
                    .unwrap_or(usize::MAX)
            })
            .collect()
    };
    keys.sort_by_key(rank);
}

/// `values` without repeats, each where it first comes.
pub(crate) fn distinct<T: PartialEq>(values: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The baselines among `entries` of the replay entries `replay`: the sequential entries
/// of their dumps at their points' [`baseline_point`].
pub(super) fn baselines_of<'a>(
    entries: impl IntoIterator<Item = &'a Entry>,
    replay: &[&Entry],
) -> Vec<&'a Entry> {
    entries
        .into_iter()
        .filter(|s| {
            s.point.is_sequential()
                && replay
                    .iter()
                    .any(|e| e.dump == s.dump && baseline_point(&e.point) == s.point)
        })
        .collect()
}

/// Whether a baseline's key matches a row's: each of its values is the row's, or has none
/// (a baseline stands beside every thread count).
fn matches(baseline: &[Option<String>], key: &[Option<String>]) -> bool {
    baseline.iter().zip(key).all(|(b, k)| b.is_none() || b == k)
}

/// The "Throughput" section of a result set's `table.md`: a heading, what the layout is,
/// and its tables ([`Layout`]). Empty without a replay row.
pub fn throughput_tables(set: &SweepResults, unverified: bool) -> String {
    let entries = entries(set);
    let mut out = String::new();
    if !entries.iter().any(|e| !e.point.is_sequential()) {
        return out;
    }
    let layout = layout_of_entries(set, &entries);
    let orders: Vec<Vec<String>> = Dimension::ALL.iter().map(|d| order(&entries, *d)).collect();
    let _ = writeln!(
        out,
        "## Throughput (MGas/s{})\n",
        if unverified { ", UNVERIFIED" } else { "" }
    );
    let baseline = entries.iter().any(|e| e.point.is_sequential());
    let _ = writeln!(out, "{}", layout_sentence(set, &layout, baseline));
    // The tables, each with its key over the table dimensions.
    let replay: Vec<&Entry> = entries
        .iter()
        .filter(|e| !e.point.is_sequential())
        .collect();
    let mut table_keys = distinct(replay.iter().map(|e| e.values(&layout.tables)));
    sort_keys(&mut table_keys, &layout.tables, &orders);
    for key in &table_keys {
        let in_table: Vec<&Entry> = replay
            .iter()
            .copied()
            .filter(|e| e.values(&layout.tables) == *key)
            .collect();
        let baselines = baselines_of(&entries, &in_table);
        if !layout.tables.is_empty() {
            let title: Vec<&str> = key.iter().flatten().map(String::as_str).collect();
            let _ = writeln!(out, "### {}\n", title.join(", "));
        }
        let table = throughput_table(&layout, &orders, &in_table, &baselines);
        let _ = writeln!(out, "{}", table.render());
    }
    out
}

/// The sentence under the throughput heading, with its blank line: the layout's rows,
/// columns and tables, and what a cell holds (the speedup where the results hold a
/// `baseline`; how a suite total is taken where they hold totals).
fn layout_sentence(set: &SweepResults, layout: &Layout, baseline: bool) -> String {
    let names = |dims: &[Dimension]| {
        dims.iter()
            .map(|d| head(*d))
            .collect::<Vec<_>>()
            .join(" × ")
    };
    let mut what = Vec::new();
    if !layout.rows.is_empty() {
        what.push(format!("rows: {}", names(&layout.rows)));
    }
    if !layout.columns.is_empty() {
        what.push(format!("columns: {}", names(&layout.columns)));
    }
    if !layout.tables.is_empty() {
        let per: Vec<&str> = layout.tables.iter().map(|d| noun(*d)).collect();
        what.push(format!("a table per {}", per.join(" × ")));
    }
    format!(
        "{}{}. Cells: MGas/s of the median sample{}{}.\n",
        if what.is_empty() {
            String::new()
        } else {
            let mut w = what.join("; ");
            w[..1].make_ascii_uppercase();
            w
        },
        if what.is_empty() { "One table" } else { "" },
        if baseline {
            ", with the speedup over the dump's sequential baseline of the same timed work \
             (paired round by round, the median); the baseline runs on one thread and \
             stands beside every thread count"
        } else {
            ""
        },
        match (
            set.totals.is_empty(),
            set.totals.iter().any(|t| t.geomean_speedup.is_some()),
        ) {
            (true, _) => "",
            (false, false) => "; a suite total is the dumps' total gas over their total time",
            (false, true) => {
                "; a suite total is the dumps' total gas over their total time, with the \
                 geometric mean of their speedups"
            }
        },
    )
}

/// One throughput table: a row per value of the layout's rows, a column per baseline key
/// then per key of the layout's columns, over the replay entries `in_table` and their
/// `baselines`; `–` where no entry has a cell.
fn throughput_table(
    layout: &Layout,
    orders: &[Vec<String>],
    in_table: &[&Entry],
    baselines: &[&Entry],
) -> MdTable {
    let mut row_keys = distinct(in_table.iter().map(|e| e.values(&layout.rows)));
    let mut column_keys = distinct(in_table.iter().map(|e| e.values(&layout.columns)));
    sort_keys(&mut row_keys, &layout.rows, orders);
    sort_keys(&mut column_keys, &layout.columns, orders);
    let baseline_keys = distinct(baselines.iter().map(|s| s.values(&layout.columns)));
    let mut heads: Vec<(String, Align)> = layout
        .rows
        .iter()
        .map(|d| (head(*d).to_string(), Align::Left))
        .collect();
    if heads.is_empty() {
        heads.push((String::new(), Align::Left));
    }
    for k in &baseline_keys {
        let tail: Vec<&str> = k.iter().flatten().map(String::as_str).collect();
        let name = if tail.is_empty() {
            "sequential".to_string()
        } else {
            format!("sequential {}", tail.join(" "))
        };
        heads.push((name, Align::Right));
    }
    for k in &column_keys {
        let name: Vec<&str> = k.iter().flatten().map(String::as_str).collect();
        let name = if name.is_empty() {
            "BAL replay".to_string()
        } else {
            name.join(" ")
        };
        heads.push((name, Align::Right));
    }
    let mut table = MdTable::new(heads);
    for row in &row_keys {
        let mut cells: Vec<String> = if layout.rows.is_empty() {
            vec!["MGas/s".into()]
        } else {
            row.iter()
                .map(|v| v.clone().unwrap_or_else(|| "–".into()))
                .collect()
        };
        for k in &baseline_keys {
            let cell = baselines
                .iter()
                .find(|s| s.values(&layout.columns) == *k && matches(&s.values(&layout.rows), row))
                .map_or_else(|| "–".into(), |s| s.cell.clone());
            cells.push(cell);
        }
        for k in &column_keys {
            let cell = in_table
                .iter()
                .find(|e| e.values(&layout.rows) == *row && e.values(&layout.columns) == *k)
                .map_or_else(|| "–".into(), |e| e.cell.clone());
            cells.push(cell);
        }
        table.push(cells);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ResultRow;
    use crate::results::tests::sample;
    use gigagas_grid::{
        BalDesign, CacheState, IoMode, RunConfig, SchedulerKind, StateRead, StateRootPhase,
        StoreRead, TableLayout, TimedWork,
    };

    /// The sample (threads 1, 2, 4 × batch 1, 50 × two schedulers, and a baseline, one
    /// dump): rows per thread count, the four batch × scheduler columns beside the
    /// baseline's, one table.
    #[test]
    fn one_dump_reads_as_rows_of_threads() {
        let s = sample("CPU");
        let layout = layout_of(&s);
        assert_eq!(layout.rows, [Dimension::Threads]);
        assert_eq!(layout.columns, [Dimension::Batch, Dimension::Scheduler]);
        assert!(layout.tables.is_empty());
        let text = throughput_tables(&s, false);
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(
            lines[0],
            "| threads | sequential | b1 ols | b1 gas-used | b50 ols | b50 gas-used |"
        );
        assert_eq!(lines.len(), 2 + 3, "{text}");
        // The baseline stands beside every thread count.
        assert!(lines[2..].iter().all(|l| l.contains("| 500 |")), "{text}");
    }

    /// Big blocks as the committed sweep ran them: three dumps of one name, threads 1, 2 ×
    /// batch 1, 10 × root off, after, overlapped × designs full, keys, a cold store, no
    /// baseline.
    fn big_blocks() -> SweepResults {
        let mut s = sample("CPU");
        let template = s.rows[1].clone();
        let record = s.dumps[0].clone();
        s.rows.clear();
        s.dumps.clear();
        for (k, size) in ["30m", "100m", "300m"].into_iter().enumerate() {
            let mut d = record.clone();
            d.path = format!("../target/big-blocks/mainnet-like-{size}.gigagas");
            d.checksum = format!("{k:016x}");
            s.dumps.push(d.clone());
            for design in [BalDesign::Full, BalDesign::Keys] {
                for root in StateRootPhase::ALL {
                    for threads in [1, 2] {
                        for batch in [1, 10] {
                            let work = TimedWork {
                                state: StateRead::store(
                                    StoreRead::new(IoMode::Prefetch, Some(design)).unwrap(),
                                    CacheState::Cold,
                                ),
                                state_root: root,
                                ..TimedWork::default()
                            };
                            let config = RunConfig::new(
                                std::num::NonZeroUsize::new(threads).unwrap(),
                                batch,
                                SchedulerKind::GasUsed,
                            )
                            .with_work(work);
                            let mut row = template.clone();
                            row.point = Point::Bal(config);
                            row.dump_checksum = d.checksum.clone();
                            row.speedup_vs_sequential = None;
                            s.rows.push(row);
                        }
                    }
                }
            }
        }
        s.totals = crate::results::suite_totals(&s.rows);
        s
    }

    /// Rows per dump (by file stem: the names collide) × threads, batch × root phase as
    /// six columns, a table per design; no column that is empty everywhere.
    #[test]
    fn big_blocks_read_as_rows_per_block_size() {
        let s = big_blocks();
        let layout = layout_of(&s);
        assert_eq!(layout.rows, [Dimension::Dump, Dimension::Threads]);
        assert_eq!(layout.columns, [Dimension::Batch, Dimension::StateRoot]);
        assert_eq!(layout.tables, [Dimension::State]);
        let text = throughput_tables(&s, false);
        let titles: Vec<&str> = text.lines().filter(|l| l.starts_with("### ")).collect();
        assert_eq!(
            titles,
            [
                "### cold store, prefetch, full",
                "### cold store, prefetch, keys"
            ]
        );
        for table in text.split("### ").skip(1) {
            let lines: Vec<&str> = table.lines().filter(|l| l.starts_with('|')).collect();
            assert_eq!(
                lines[0],
                "| dump | threads | b1 root off | b1 root after | b1 root overlapped | b10 root off | b10 root after | b10 root overlapped |"
            );
            // Three dumps and the suite total, on two thread counts each.
            assert_eq!(lines.len(), 2 + 4 * 2, "{table}");
            let firsts: Vec<&str> = lines[2..]
                .iter()
                .map(|l| l.split(" | ").next().unwrap())
                .collect();
            assert_eq!(
                firsts,
                [
                    "| mainnet-like-30m",
                    "| mainnet-like-30m",
                    "| mainnet-like-100m",
                    "| mainnet-like-100m",
                    "| mainnet-like-300m",
                    "| mainnet-like-300m",
                    "| **suite total**",
                    "| **suite total**"
                ]
            );
            assert!(!table.contains("| – |"), "every cell filled: {table}");
            let columns = lines[0].matches(" | ").count() - 1;
            assert!(columns <= MAX_POINT_COLUMNS, "{columns} point columns");
        }
        // Labels given in the config are shown instead.
        let mut labelled = s.clone();
        for (d, l) in labelled.dumps.iter_mut().zip(["30M", "100M", "300M"]) {
            d.label = Some(l.into());
        }
        let text = throughput_tables(&labelled, false);
        assert!(text.contains("\n| 30M | 1 | "), "{text}");
        assert!(text.contains("\n| 300M | 2 | "), "{text}");
    }

    /// A layout the config names: its rows and columns, the rest in tables; a dimension
    /// that does not vary is left out.
    #[test]
    fn the_config_can_name_the_layout() {
        let mut s = big_blocks();
        s.config.layout = TableLayout {
            rows: vec![Dimension::Dump, Dimension::Batch, Dimension::Scheduler],
            columns: vec![Dimension::State, Dimension::Threads],
        };
        let layout = layout_of(&s);
        assert_eq!(layout.rows, [Dimension::Dump, Dimension::Batch]);
        assert_eq!(layout.columns, [Dimension::State, Dimension::Threads]);
        assert_eq!(layout.tables, [Dimension::StateRoot]);
        let text = throughput_tables(&s, false);
        assert_eq!(text.matches("### root ").count(), 3, "{text}");
        assert!(
            text.contains(
                "| dump | batch | cold store, prefetch, full 1 | cold store, prefetch, full 2 |"
            ),
            "{text}"
        );
    }

    /// With more combinations than fit, the later dimensions make tables; with a
    /// baseline, the timed work's dimensions always do, and each table's baseline column
    /// is the baseline of its rows.
    #[test]
    fn a_baseline_keeps_the_timed_work_in_tables() {
        let mut s = sample("CPU");
        let base = s.rows[0].clone();
        let replay: Vec<ResultRow> = s.rows[1..].to_vec();
        for root in [StateRootPhase::After, StateRootPhase::Overlapped] {
            for r in &replay {
                let Point::Bal(c) = r.point else { continue };
                let mut r = r.clone();
                r.point = Point::Bal(c.with_work(TimedWork {
                    state_root: root,
                    ..c.work
                }));
                s.rows.push(r);
            }
        }
        let mut with_root = base.clone();
        with_root.point = Point::Sequential(TimedWork {
            state_root: StateRootPhase::After,
            ..TimedWork::default()
        });
        with_root.summary.median.ggas_per_s /= 2.0;
        s.rows.push(with_root);
        let layout = layout_of(&s);
        assert_eq!(layout.columns, [Dimension::Batch, Dimension::Scheduler]);
        assert_eq!(layout.tables, [Dimension::StateRoot]);
        let text = throughput_tables(&s, false);
        let tables: Vec<&str> = text.split("### ").skip(1).collect();
        assert_eq!(tables.len(), 3, "{text}");
        assert!(tables[0].starts_with("root off"), "{text}");
        assert!(tables[0].contains("| 1 | 500 |"), "{}", tables[0]);
        for t in &tables[1..] {
            assert!(t.contains("| 1 | 250 |"), "the root's baseline: {t}");
        }
        // Without the baseline the root phase fits beside batch × scheduler? 4 × 3 > 8: no.
        s.rows.retain(|r| !r.point.is_sequential());
        let layout = layout_of(&s);
        assert_eq!(layout.columns, [Dimension::Batch, Dimension::Scheduler]);
        assert_eq!(layout.tables, [Dimension::StateRoot]);
    }
}
