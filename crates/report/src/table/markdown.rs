//! `table.md`: the whole Markdown document of a results folder (machines, dumps, the rows
//! table, per-dump and suite-total tables, reading the state, simulations, plots).

use super::{
    escape::{escape_name, md_cell},
    layout::distinct,
    md::{Align, MdTable, heads},
    terminal::{UNVERIFIED, any_unverified, machine_tag, ratio_cell, rows_table},
};
use crate::{
    latency::{BlockLatency, Distribution, Tail},
    results::{DumpLabels, ResultRow, SweepResults},
    simulation::{Projection, SimulationReport},
};
use std::fmt::Write;

/// What the store rows of `sets` read, one row each: reads (accounts/slots/codes), MB,
/// reading, building and exposed time per pass, the overlap (pipelined), read latency
/// p50/p99, the page-cache share resident before the pass (the coldness check), and the
/// device bound (reads ÷ the disk's probed random-read rate) with `eff` = bound / total.
/// Empty when no row read from a store.
pub fn io_table(sets: &[SweepResults]) -> String {
    let figures = "reads acc/slots/codes | MB | read | build | exposed | overlap | \
        read p50/p99 µs | resident before | device bound | eff vs device";
    detail_table(sets, figures, |r| {
        let io = r.io.as_ref()?;
        let total = r.summary.median.wall_s;
        Some(vec![
            format!("{}/{}/{}", io.accounts, io.slots, io.codes),
            format!("{:.1}", io.bytes as f64 / 1e6),
            format!("{:.3} s", io.read_s),
            format!("{:.3} s", io.build_s),
            format!("{:.3} s", io.exposed_s),
            format!("{:.0} %", io.overlap() * 100.0),
            format!("{:.0}/{:.0}", io.read_p50_us, io.read_p99_us),
            format!("{:.1} %", io.resident_before * 100.0),
            format!("{:.3} s", io.device_bound_s),
            if io.device_bound_s > 0.0 && total > 0.0 {
                format!("{:.2}", io.device_bound_s / total)
            } else {
                "–".into()
            },
        ])
    })
}

/// A detail table of `sets`' rows: the machine and dump heads ([`DumpColumn`]), `point`,
/// then the ` | `-separated `figures` ([`heads`]); a row per result row that `figures_of`
/// has cells for, led by its machine, dump and point cells.
fn detail_table(
    sets: &[SweepResults],
    figures: &str,
    figures_of: impl Fn(&ResultRow) -> Option<Vec<String>>,
) -> String {
    let dumps = DumpColumn::of(sets);
    let mut table = MdTable::new(dumps.heads().into_iter().chain(heads("point", figures)));
    for (i, set) in sets.iter().enumerate() {
        for r in &set.rows {
            let Some(figures) = figures_of(r) else {
                continue;
            };
            let mut cells = dumps.cells(i, r);
            cells.push(md_cell(&r.point.to_string()));
            cells.extend(figures);
            table.push(cells);
        }
    }
    table.render()
}

/// The machine and dump cells that lead a row of the detail tables (the io, state-root,
/// per-block and latency tables): the machine's tag when sets are merged, the dump's label
/// when there are several dumps.
struct DumpColumn {
    machines: bool,
    dumps: bool,
    labels: Vec<DumpLabels>,
}

impl DumpColumn {
    fn of(sets: &[SweepResults]) -> Self {
        let labels: Vec<DumpLabels> = sets
            .iter()
            .map(|s| DumpLabels::of(s).shortened(short_test_name))
            .collect();
        let seen = distinct(
            sets.iter()
                .zip(&labels)
                .flat_map(|(set, l)| set.rows.iter().map(|r| l.of_row(r))),
        );
        Self {
            machines: sets.len() > 1,
            dumps: seen.len() > 1,
            labels,
        }
    }

    fn heads(&self) -> Vec<(&'static str, Align)> {
        let mut heads = Vec::new();
        if self.machines {
            heads.push(("machine", Align::Left));
        }
        if self.dumps {
            heads.push(("dump", Align::Left));
        }
        heads
    }

    fn cells(&self, set: usize, r: &ResultRow) -> Vec<String> {
        let mut cells = Vec::new();
        if self.machines {
            cells.push(machine_tag(set));
        }
        if self.dumps {
            cells.push(md_cell(self.labels[set].of_row(r)));
        }
        cells
    }
}

/// What the state-root phase of the rows that ran it took, one row each (median sample,
/// per pass): the point, its throughput with the root, the execution's and the root's
/// spans, how long they ran at once, and `wall / max(exec, root)` (1.00: the pass took no
/// longer than the longer of the two). Empty when no row has root figures.
pub(super) fn root_table(sets: &[SweepResults]) -> String {
    // Store runs read the witness's nodes inside the window (`trie nodes read`); memory
    // runs show none.
    let figures = "GGas/s | exec | root | trie nodes read | overlap | wall / max(exec, root)";
    detail_table(sets, figures, |r| {
        let m = &r.summary.median;
        let root = m.root.as_ref()?;
        Some(vec![
            format!("{:.3}", m.ggas_per_s),
            format!("{:.3} s", root.exec_s),
            format!("{:.3} s", root.root_s),
            if root.read_s > 0.0 {
                format!("{:.3} s", root.read_s)
            } else {
                "–".into()
            },
            format!("{:.3} s", root.overlap_s),
            root.wall_over_longer(m.wall_s)
                .map_or_else(|| "–".into(), |x| format!("{x:.2}")),
        ])
    })
}

/// Each row that kept its batches (the replay's store and root points), by its dump's
/// label (with several dumps) and point, phase by phase, as the mean batch of its median
/// sample (a block at batch 1, a mega-block otherwise): reading its state, executing, the
/// root, end to end (and the slowest batch), the keys it updates and the root's time per
/// key (its span, and its units' own time). Empty when no row kept them.
pub fn batch_table(sets: &[SweepResults]) -> String {
    let figures = "batches | Mgas a batch | read | execute | root | end to end [slowest] | \
        updated keys | root ns/key | root work ns/key";
    detail_table(sets, figures, |r| {
        let b = &r.per_batch;
        if b.is_empty() {
            return None;
        }
        let n = b.len() as f64;
        let sum = |f: fn(&crate::results::BatchFigures) -> f64| b.iter().map(f).sum::<f64>();
        let ms =
            |f: fn(&crate::results::BatchFigures) -> f64| format!("{:.2} ms", sum(f) / n * 1e3);
        let keys: u64 = b.iter().map(|x| x.updated_keys()).sum();
        let per_key = |s: f64| {
            if keys > 0 && s > 0.0 {
                format!("{:.0}", s * 1e9 / keys as f64)
            } else {
                "–".into()
            }
        };
        let slowest = b.iter().map(|x| x.wall_s).fold(0.0, f64::max);
        Some(vec![
            b.len().to_string(),
            format!("{:.1}", sum(|x| x.gas as f64) / n / 1e6),
            ms(|x| x.read_s),
            ms(|x| x.exec_s),
            ms(|x| x.root_s),
            format!("{} [{:.2} ms]", ms(|x| x.wall_s), slowest * 1e3),
            format!("{:.0}", keys as f64 / n),
            per_key(sum(|x| x.root_s)),
            per_key(sum(|x| x.root_busy_s)),
        ])
    })
}

/// The drift of each dump's run, merged into one line: its baseline's first rounds
/// against its last (`- drift from the first rounds to the last: `30M` -1.6 % (954 → 939
/// MGas/s), ...`), with a warning naming the dumps whose speed moved more than
/// [`crate::results::DRIFT_THRESHOLD`]. Over eight dumps, the range and the dumps over the
/// threshold only. Empty when no dump has a drift.
pub fn drift_lines(set: &SweepResults) -> String {
    let labels = crate::results::dump_labels(&set.dumps);
    let drifts: Vec<(&str, crate::results::Drift)> = set
        .dumps
        .iter()
        .zip(&labels)
        .filter_map(|(d, l)| d.drift.map(|x| (l.as_str(), x)))
        .collect();
    if drifts.is_empty() {
        return String::new();
    }
    let one = |(label, d): &(&str, crate::results::Drift)| {
        format!(
            "`{}` {:+.1} % ({:.0} → {:.0} MGas/s)",
            escape_name(label),
            d.change * 100.0,
            d.first_ggas_per_s * 1e3,
            d.last_ggas_per_s * 1e3
        )
    };
    let mut over: Vec<&(&str, crate::results::Drift)> =
        drifts.iter().filter(|(_, d)| d.exceeded).collect();
    let mut line = if drifts.len() == 1 {
        format!(
            "- drift from the first rounds to the last: {}",
            one(&drifts[0])
        )
    } else if drifts.len() <= 8 {
        format!(
            "- drift from the first rounds to the last: {}",
            drifts.iter().map(one).collect::<Vec<_>>().join(", ")
        )
    } else {
        let change = |(_, d): &&(&str, crate::results::Drift)| d.change;
        let lo = drifts.iter().map(|d| change(&d)).fold(f64::MAX, f64::min);
        let hi = drifts.iter().map(|d| change(&d)).fold(f64::MIN, f64::max);
        format!(
            "- drift from the first rounds to the last, over {} dumps: from {:+.1} % to {:+.1} %",
            drifts.len(),
            lo * 100.0,
            hi * 100.0
        )
    };
    if drifts.len() > 8 && over.len() > 1 {
        // A suite: how many, and the one that moved most.
        over.sort_by(|a, b| b.1.change.abs().total_cmp(&a.1.change.abs()));
        let _ = write!(
            line,
            " — the machine's speed moved more than {:.0} % during the run of {} dumps, most {}",
            crate::results::DRIFT_THRESHOLD * 100.0,
            over.len(),
            one(over[0])
        );
    } else if !over.is_empty() {
        let _ = write!(
            line,
            " — the machine's speed moved more than {:.0} % during the run of {}",
            crate::results::DRIFT_THRESHOLD * 100.0,
            over.iter().map(|d| one(d)).collect::<Vec<_>>().join(", ")
        );
    }
    line.push('\n');
    line
}

/// The suite totals of one result set as a markdown table: per grid point, the dumps,
/// total gas over total time and the geometric mean of the per-dump speedups over their
/// own sequential baselines (a column left out where no point has one). Empty for a single
/// dump.
pub fn totals_table(set: &SweepResults) -> String {
    let name = if any_unverified(std::slice::from_ref(set)) {
        "suite total (UNVERIFIED)"
    } else {
        "suite total"
    };
    let figures = "dumps | Ggas | total | MGas/s (total gas / total time) | \
        geomean speedup vs seq. [95 % CI]";
    let mut table = MdTable::new(heads(name, figures));
    for t in &set.totals {
        table.push(vec![
            md_cell(&t.point.to_string()),
            t.dumps.to_string(),
            format!("{:.3}", t.total_gas as f64 / 1e9),
            format!("{:.3} s", t.total_wall_s),
            format!("{:.0}", t.mgas_per_s()),
            ratio_cell(t.geomean_interval, t.geomean_speedup),
        ]);
    }
    table.render()
}

/// One line per dump that failed: `FAIL path: reason`.
pub fn failures_list(set: &SweepResults) -> String {
    dump_lines(
        "FAIL",
        set.failures.iter().map(|f| (&f.path, f.reason.clone())),
    )
}

/// The dumps a run left out because they have nothing to measure, one line each, once:
/// `skipped path: no transactions (2 blocks)`.
pub fn skipped_list(set: &SweepResults) -> String {
    dump_lines("skipped", set.skipped.iter().map(|s| (&s.path, s.reason())))
}

/// One line per dump, `<word> path: reason`, path and reason escaped.
fn dump_lines<'a>(word: &str, dumps: impl Iterator<Item = (&'a String, String)>) -> String {
    let mut out = String::new();
    for (path, reason) in dumps {
        let _ = writeln!(
            out,
            "{word} {}: {}",
            escape_name(path),
            escape_name(&reason)
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
    let penalties = distinct(
        sim.projections
            .iter()
            .filter(|p| p.order_penalty != 1.0)
            .map(|p| format!("{} batch {} {:.3}×", p.scheduler, p.batch, p.order_penalty)),
    );
    if !penalties.is_empty() {
        let _ = writeln!(
            out,
            "Order penalty (items on one thread in the scheduler's order against block order, same \
             batch; every item time of the order's projections multiplied by it): {}.\n",
            penalties.join(", "),
        );
    }
}

/// Projected GGas/s per (batch, scheduler) row and thread-count column, then the same
/// grid with one item per claim beside the chunked schedule (when recorded).
fn projection_table(out: &mut String, sim: &SimulationReport) {
    let cell = |p: &Projection| {
        Some(format!(
            "{:.3} ({:.0} %)",
            p.ggas_per_s,
            p.longest_share * 100.0
        ))
    };
    projection_grid(out, sim, cell);
    if sim
        .projections
        .iter()
        .all(|p| p.one_item_makespan_s.is_none())
    {
        return;
    }
    let _ = writeln!(
        out,
        "\nThe same projections with one item per claim (plain list scheduling, the reference \
         for the chunks a pass claims). Cells: GGas/s with one-item claims (chunked makespan \
         against one-item's; + is slower):\n"
    );
    let one_item = |p: &Projection| {
        let (one, cost) = (p.one_item_makespan_s?, p.chunk_cost()?);
        let ggas = sim.total_gas as f64 / 1e9 / one.max(f64::MIN_POSITIVE);
        Some(format!("{ggas:.3} ({:+.1} %)", cost * 100.0))
    };
    projection_grid(out, sim, one_item);
}

/// One Markdown grid of the projections: a row per (batch, scheduler) in the order they
/// were projected, a column per thread count, `cell` of each projection (– where none).
fn projection_grid(
    out: &mut String,
    sim: &SimulationReport,
    cell: impl Fn(&Projection) -> Option<String>,
) {
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
                    .and_then(&cell)
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

/// The whole `table.md`: title, machines, dumps, what every point timed (repeated notes
/// merged), the throughput tables laid out by the sweep's dimensions (one result set),
/// suite totals, every row, the state read, the state root, per-block phases and latency,
/// simulations and plots.
pub fn render_markdown(sets: &[SweepResults], plots: &[String]) -> String {
    let mut out = String::new();
    let Some(first) = sets.first() else {
        return out;
    };
    let merged = sets.len() > 1;
    let unverified = any_unverified(sets);
    out.push_str(&heading_and_sources(sets, unverified));
    out.push_str(&how_measured(sets, unverified));
    out.push_str(&failed_and_skipped(sets));
    if !merged {
        let throughput = super::layout::throughput_tables(first, unverified);
        if !throughput.is_empty() {
            out.push_str(&throughput);
            let totals = totals_table(first);
            if !totals.is_empty() {
                let _ = writeln!(out, "## Suite totals\n\n{totals}");
            }
            let _ = writeln!(out, "## Every row\n");
        }
    }
    out.push_str(&rows_table(sets));
    out.push_str(&state_sections(sets));
    out.push_str(&latency_section(sets));
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

/// The start of result set `i`'s lines: its machine tag in bold where several are merged.
fn machine_prefix(merged: bool, i: usize) -> String {
    if merged {
        format!("**{}** ", machine_tag(i))
    } else {
        String::new()
    }
}

/// The top of `table.md`: its title (the sweeps' names), the unverified warning, the
/// description, a line per machine and a line per distinct dump.
fn heading_and_sources(sets: &[SweepResults], unverified: bool) -> String {
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
    if unverified {
        let _ = writeln!(out, "**{UNVERIFIED}.**\n");
    }
    if !first.description.is_empty() {
        let _ = writeln!(out, "{}\n", escape_name(&first.description));
    }
    for (i, s) in sets.iter().enumerate() {
        let m = &s.machine;
        let prefix = machine_prefix(merged, i);
        let tree = match m.tree_clean() {
            Some(true) => " (tree clean)",
            Some(false) => " (tree dirty: tracked files differed from the commit)",
            None => "",
        };
        let _ = writeln!(
            out,
            "- {prefix}{} ({} cores, {:.1} GiB), {}; {}; commit `{}`{tree}; started {}",
            m.cpu, m.cores, m.memory_gib, m.os, m.rustc, m.commit, s.started_utc
        );
        if let Some(note) = &m.note {
            let _ = writeln!(out, "  - note: {}", escape_name(note));
        }
    }
    let mut seen = Vec::new();
    for s in sets {
        for (d, label) in s.dumps.iter().zip(crate::results::dump_labels(&s.dumps)) {
            if seen.contains(&(&d.name, &d.checksum)) {
                continue;
            }
            seen.push((&d.name, &d.checksum));
            let name = if label == d.name {
                format!("`{}`", escape_name(&d.name))
            } else {
                format!("`{}`: `{}`", escape_name(&label), escape_name(&d.name))
            };
            let _ = writeln!(
                out,
                "- dump {name} ({}): {} blocks, {} transactions, {:.3} Ggas, checksum `{}`",
                escape_name(&d.path),
                d.blocks,
                d.transactions,
                d.total_gas as f64 / 1e9,
                d.checksum
            );
        }
    }
    out
}

/// How the points were measured, a line each, then a blank line: samples and
/// verification, the interleaved rounds, the timed work, and per result set the config's
/// hash, the provenance and the drift.
fn how_measured(sets: &[SweepResults], unverified: bool) -> String {
    let mut out = String::new();
    let Some(first) = sets.first() else {
        return out;
    };
    let merged = sets.len() > 1;
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
    out.push_str(&timed_work_lines(sets));
    for (i, s) in sets.iter().enumerate() {
        let prefix = machine_prefix(merged, i);
        let _ = writeln!(
            out,
            "- {prefix}config as run: hash `{}` (xxh3-64 of results.json's `config` as compact JSON)",
            s.config_hash_or_computed()
        );
        if let Some(p) = &s.provenance {
            // The command line holds user-given paths: escaped like every name.
            for line in p.markdown().lines() {
                let _ = writeln!(out, "{}", escape_name(line));
            }
        }
        out.push_str(&drift_lines(s));
    }
    let _ = writeln!(out);
    out
}

/// The dumps that failed and those skipped, per result set, each list in a code block.
fn failed_and_skipped(sets: &[SweepResults]) -> String {
    let mut out = String::new();
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
    out
}

/// The sections on reading the state from a store, the state root and the per-block
/// phases, each with its note; a section is left out where no row has its figures.
fn state_sections(sets: &[SweepResults]) -> String {
    let mut out = String::new();
    let io = io_table(sets);
    if !io.is_empty() {
        let _ = write!(
            out,
            "\n## Reading the state\n\n{io}\n*read*: wall time of the reads (prefetch: all readers together, straight into the tables the replay reads; \
             on demand, and what a `writes` list leaves to demand: the time inside reads); \
             *build*: decoding a `full` access list into those tables (0 for `keys` and `writes`); *exposed*: the part of both the timed window waited for; \
             *overlap* = 1 − exposed / (read + build); *resident before*: share of the store's pages in the page cache when the pass started \
             (mincore; a cold pass above 1 % is refused); *device bound*: reads ÷ the disk's random 4 KiB read rate at the I/O threads' queue depth.\n"
        );
    }
    let root = root_table(sets);
    if !root.is_empty() {
        let _ = write!(
            out,
            "\n## State root\n\n{root}\n*GGas/s*: with the root inside the timed window; \
             *exec*: Σ over batches of the time from the batch's start to the end of its last transaction; \
             *root*: Σ over batches of the time from the first root unit's start to the last one's end; \
             *trie nodes read*: on a store run, reading trie nodes from the store inside the window (each block's inside its root units; in results of store layout 3, every node before the first batch); \
             *overlap*: Σ over batches of the time both ran at once; \
             *wall / max(exec, root)*: 1.00 when the pass took no longer than the longer of the two \
             (`after` approaches (exec + root) / max).\n"
        );
    }
    let batches = batch_table(sets);
    if !batches.is_empty() {
        let _ = write!(
            out,
            "\n## Per block\n\n{batches}\nThe mean batch of each row's median sample (a block at batch 1, a mega-block otherwise; every batch in `blocks.csv`). \
             *read*: reading the batch's state from the store before it runs, all readers together (0 in memory; with the state root on, the readers also read \
             ahead the trie paths of the keys the batch's blocks change, so that the root finds those nodes' pages in memory); *execute*: from its first \
             transaction's start to its last one's end; *root*: from its blocks' first root unit's start to their last one's end (on a store run, the units read \
             the trie nodes each block needs, and the pass's tries keep the nodes read for its later blocks: the state-root table's *trie nodes read*); \
             *end to end*: from the batch's start (its read included) to the later of its last transaction and its \
             last root unit, and the slowest batch's; *updated keys*: accounts and slots whose value after a block differs from before it, a mean per batch; \
             *root ns/key*: the root's span per updated key; *root work ns/key*: its units' own time, all workers together, per updated key. {}\n",
            persistence_note(sets)
        );
    }
    out
}

/// The per-block note's sentence on persistence, as the rows of the per-block table set
/// it: on `+persist` rows each block's commit is timed inside the root units; rows
/// without it write nothing back.
fn persistence_note(sets: &[SweepResults]) -> String {
    const COMMITTED: &str = "each block is committed into the store after its root (its state changes and its tries' new nodes, \
        one synced write transaction per block) by the worker that finished the root, inside the root units, so the commit is part of \
        *root*, *root work ns/key* and *end to end* (`persist_s` in `blocks.csv`)";
    const BACKGROUND: &str = " On `+persist background` rows a writer on a thread of its own commits the blocks in groups, \
        one synced write transaction a group: `persist_s` is the block's wait on it (its hand-over, and a stall where the writer \
        fell too far behind), and each group's blocks, bytes, pages and time are on the row of its last block \
        (`commit_blocks`, `persist_bytes`, `persist_pages`, `commit_s`); the pass's time includes draining the writer at its end";
    let persists: Vec<gigagas_grid::Persist> = sets
        .iter()
        .flat_map(|s| &s.rows)
        .filter(|r| !r.per_batch.is_empty())
        .map(|r| r.point.work().persist)
        .collect();
    let has = |mode| persists.contains(&mode);
    if !persists.iter().any(|p| p.is_on()) {
        return "Persistence (writing the block's state and trie back) is off on every row.".into();
    }
    let rows = if has(gigagas_grid::Persist::None) {
        "`+persist` rows; the others write nothing back"
    } else {
        "`+persist`, every row"
    };
    let mut note = format!("Persistence ({rows}):");
    if has(gigagas_grid::Persist::Block) {
        note.push_str(&format!(" {COMMITTED}."));
    }
    if has(gigagas_grid::Persist::Background) {
        note.push_str(&format!("{BACKGROUND}."));
    }
    note
}

/// What the rows timed, each description once: the steps every point shares on one line,
/// then the steps only some points add (reading a store, the state root, ...) listed once
/// each beneath it, where results hold several descriptions with the same start.
pub fn timed_work_lines(sets: &[SweepResults]) -> String {
    let works = distinct(
        sets.iter()
            .flat_map(|s| &s.rows)
            .map(|r| r.timed_work.as_str())
            .filter(|w| !w.is_empty()),
    );
    // By shared start: the descriptions, and the `; + ...` steps after the start.
    let mut out = String::new();
    for base in distinct(
        works
            .iter()
            .map(|w| w.split("; + ").next().unwrap_or_default()),
    ) {
        let whole: Vec<&str> = works
            .iter()
            .copied()
            .filter(|w| w.split("; + ").next() == Some(base))
            .collect();
        if let [only] = whole[..] {
            let _ = writeln!(out, "- timed work, the same on both paths: {only}");
            continue;
        }
        let _ = writeln!(
            out,
            "- timed work, the same on both paths: {base}; and, on the points whose name says so \
             (state, `+root`, `+senders`, `+receipts`):"
        );
        for e in distinct(whole.iter().flat_map(|w| w.split("; + ").skip(1))) {
            let _ = writeln!(out, "  - + {e}");
        }
    }
    out
}

/// The per-block latency of the rows that kept their batches (a section of `table.md`):
/// for wall time and for GGas/s, the mean and P50 with their bootstrap intervals over the
/// samples, the P90 and P99 where there are batches enough, and the slowest batch
/// ([`crate::latency`]). Empty when no row kept batches.
pub fn latency_section(sets: &[SweepResults]) -> String {
    let dumps = DumpColumn::of(sets);
    let figures: Vec<(usize, &ResultRow, BlockLatency)> = sets
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.rows
                .iter()
                .filter_map(move |r| crate::latency::block_latency(r).map(|l| (i, r, l)))
        })
        .collect();
    if figures.is_empty() {
        return String::new();
    }
    let table = |unit: &str, pick: fn(&BlockLatency) -> &Distribution, show: fn(f64) -> String| {
        let heads = heads(
            "point | per",
            "batches × samples | mean [95 % CI] | P50 [95 % CI] | P90 | P99 | slowest",
        );
        let mut t = MdTable::new(dumps.heads().into_iter().chain(heads));
        for (i, r, l) in &figures {
            let d = pick(l);
            let with = |x: f64, b: Option<crate::latency::Bounds>| match b {
                Some(b) => format!("{} [{}–{}]", show(x), show(b.lo), show(b.hi)),
                None => show(x),
            };
            let mut cells = dumps.cells(*i, r);
            cells.extend([
                md_cell(&r.point.to_string()),
                l.unit.describe(),
                format!(
                    "{} × {}{}",
                    l.batches,
                    l.samples,
                    if l.every_sample {
                        ""
                    } else {
                        " (median sample only)"
                    }
                ),
                with(d.mean, d.mean_bounds),
                with(d.p50, d.p50_bounds),
                d.p90().map_or_else(|| "–".into(), show),
                d.p99().map_or_else(|| "–".into(), show),
                match d.tail {
                    Tail::SlowestOnly => format!("{} (slowest only)", show(d.slowest)),
                    Tail::Percentiles { .. } => show(d.slowest),
                },
            ]);
            t.push(cells);
        }
        format!("### {unit}\n\n{}", t.render())
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "\n## Per-block latency\n\n{}\n{}\nEvery batch of every recorded sample, pooled: a block at batch 1; at a larger batch \
         a mega-block, whose blocks ran as one unit, so its line is the batch's. *mean* and *P50* (nearest rank) \
         with a 95 % percentile-bootstrap interval over the samples ({} resamples, fixed seed; none from one sample: \
         results that kept the median sample's batches alone say *median sample only*); *P90* from {} batches a sample, \
         *P99* from {}; with fewer the slowest batch alone is given (*slowest only*). Percentiles lean to the slow end: \
         the wall time 90 % of batches stayed under, the GGas/s 90 % of them reached. Every batch in `blocks.csv`, \
         these figures in `latency.csv`.\n",
        table(
            "Wall time per batch",
            |l| &l.wall_s,
            |x| format!("{:.2} ms", x * 1e3)
        ),
        table("GGas/s per batch", |l| &l.ggas_per_s, |x| format!("{x:.3}")),
        crate::latency::RESAMPLES,
        crate::latency::P90_MIN_BLOCKS,
        crate::latency::P99_MIN_BLOCKS,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        results::{ResultRow, tests::sample},
        table::{render_csv, render_totals_csv, rows_table},
    };
    use gigagas_grid::Point;

    #[test]
    fn hostile_names_are_escaped_everywhere() {
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

    /// The state-root section appears only when some row has root figures, with a line per
    /// such row and the point's phase.
    #[test]
    fn the_state_root_section_lists_the_rows_with_a_root() {
        let s = sample("CPU");
        let md = render_markdown(std::slice::from_ref(&s), &[]);
        assert!(!md.contains("## State root"), "{md}");
        assert!(root_table(std::slice::from_ref(&s)).is_empty());
        let mut s = s;
        let Point::Bal(mut config) = s.rows[1].point else {
            panic!("row 1 is a replay row")
        };
        config.work.state_root = gigagas_grid::StateRootPhase::After;
        s.rows[1].point = Point::Bal(config);
        let wall = s.rows[1].summary.median.wall_s;
        s.rows[1].summary.median.root = Some(crate::stats::RootFigures {
            exec_s: wall * 0.6,
            root_s: wall * 0.4,
            root_busy_s: wall * 0.4,
            overlap_s: 0.0,
            blocks: 2,
            nodes_read: 0,
            nodes_held: 0,
            read_s: 0.0,
            ..Default::default()
        });
        let table = root_table(std::slice::from_ref(&s));
        assert_eq!(table.lines().count(), 3, "{table}");
        let line = table.lines().nth(2).unwrap();
        assert!(
            line.starts_with(&format!("| {} |", s.rows[1].point)),
            "{line}"
        );
        assert!(line.contains("+root after"), "{line}");
        assert!(line.ends_with("| 1.67 |"), "{line}");
        let md = render_markdown(std::slice::from_ref(&s), &[]);
        assert!(md.contains("## State root"), "{md}");
        assert!(md.contains("| state root |"), "{md}");
    }

    /// Two blocks of a root row: the section shows its mean block, the slowest one's end
    /// to end, the mean keys and the root's time per key; rows without batches are left
    /// out, and without any the section is.
    /// The per-block note says where a store run's trie nodes are read, and its
    /// persistence sentence follows the rows: off, `+persist` beside rows that write
    /// nothing back, and every row persisting.
    #[test]
    fn the_per_block_note_follows_the_rows_persistence() {
        let mut s = sample("CPU");
        let block = crate::results::BatchFigures {
            blocks: 1,
            exec_s: 0.1,
            wall_s: 0.1,
            ..Default::default()
        };
        s.rows[1].per_batch = vec![block];
        let note = |s: &SweepResults| {
            let md = render_markdown(std::slice::from_ref(s), &[]);
            let at = md.find("## Per block").expect("the per-block section");
            md[at..]
                .lines()
                .find(|l| l.starts_with("The mean batch"))
                .unwrap()
                .to_string()
        };
        let plain = note(&s);
        assert!(
            plain.contains("the units read the trie nodes each block needs"),
            "{plain}"
        );
        assert!(plain.contains("read ahead the trie paths"), "{plain}");
        assert!(!plain.contains("once before the first batch"), "{plain}");
        assert!(
            plain.ends_with(
                "Persistence (writing the block's state and trie back) is off on every row."
            ),
            "{plain}"
        );
        let mut persisting = s.rows[1].clone();
        if let Point::Bal(c) = &mut persisting.point {
            c.work.persist = gigagas_grid::Persist::Block;
        }
        assert!(persisting.point.to_string().contains("+persist"));
        s.rows.push(persisting);
        let mixed = note(&s);
        assert!(mixed.contains("Persistence (`+persist` rows; the others write nothing back): each block is committed into the store after its root"), "{mixed}");
        assert!(
            mixed.contains("inside the root units, so the commit is part of *root*"),
            "{mixed}"
        );
        assert!(
            !mixed.contains("not timed") && !mixed.contains("is off"),
            "{mixed}"
        );
        s.rows
            .retain(|r| r.per_batch.is_empty() || r.point.work().persist.is_on());
        let every = note(&s);
        assert!(
            every.contains("Persistence (`+persist`, every row): each block is committed"),
            "{every}"
        );
        assert!(!every.contains("the others"), "{every}");
    }

    #[test]
    fn the_per_block_section_shows_the_mean_block() {
        let mut s = sample("CPU");
        assert!(batch_table(std::slice::from_ref(&s)).is_empty());
        let block = |first_block, wall_s, updated_slots| crate::results::BatchFigures {
            first_block,
            blocks: 1,
            gas: 300_000_000,
            read_s: 0.004,
            read_exposed_s: Some(0.004),
            exec_s: 0.1,
            root_s: 0.02,
            root_busy_s: 0.03,
            root_read_s: 0.0,
            root_faults: None,
            persist_s: 0.0,
            persist_bytes: 0,
            persist_pages: 0,
            commit_blocks: 0,
            commit_s: 0.0,
            wall_s,
            updated_accounts: 1_000,
            updated_slots,
        };
        s.rows[1].per_batch = vec![block(0, 0.11, 9_000), block(1, 0.13, 19_000)];
        // The dump by its file: generated dumps of one profile share a name.
        s.dumps[0].path = "../target/big-blocks/mainnet-like-300m.gigagas".into();
        let table = batch_table(std::slice::from_ref(&s));
        assert_eq!(table.lines().count(), 3, "{table}");
        let line = table.lines().nth(2).unwrap();
        assert_eq!(
            line,
            format!(
                "| {} | 2 | 300.0 | 4.00 ms | 100.00 ms | 20.00 ms | 120.00 ms [130.00 ms] | 15000 | 1333 | 2000 |",
                s.rows[1].point
            )
        );
        let md = render_markdown(std::slice::from_ref(&s), &[]);
        assert!(md.contains("## Per block"), "{md}");
        assert!(md.contains("Persistence"), "{md}");
        // A second dump of the same name: each is shown by its file's stem.
        let mut other = s.dumps[0].clone();
        other.path = "../target/big-blocks/mainnet-like-30m.gigagas".into();
        other.checksum = "fedcba9876543210".into();
        let mut row = s.rows[1].clone();
        row.dump_checksum = other.checksum.clone();
        s.dumps.push(other);
        s.rows.push(row);
        let table = batch_table(std::slice::from_ref(&s));
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("| dump | point |"), "{table}");
        assert!(lines[2].starts_with("| mainnet-like-300m | "), "{table}");
        assert!(lines[3].starts_with("| mainnet-like-30m | "), "{table}");
    }

    /// Rows whose timed work differs only in the steps some points add print the shared
    /// steps once and each added step once beneath; one description prints whole.
    #[test]
    fn repeated_notes_are_merged() {
        use gigagas_grid::{StateRootPhase, TimedWork};
        let mut s = sample("CPU");
        assert_eq!(
            timed_work_lines(std::slice::from_ref(&s)),
            format!(
                "- timed work, the same on both paths: {}\n",
                gigagas_grid::TIMED_WORK
            )
        );
        for (i, phase) in [StateRootPhase::After, StateRootPhase::Overlapped]
            .into_iter()
            .enumerate()
        {
            for r in s.rows.iter_mut().skip(1 + i).step_by(3) {
                r.timed_work = TimedWork {
                    state_root: phase,
                    ..TimedWork::default()
                }
                .describe();
            }
        }
        let lines = timed_work_lines(std::slice::from_ref(&s));
        assert_eq!(lines.lines().count(), 3, "{lines}");
        assert_eq!(lines.matches("- timed work").count(), 1, "{lines}");
        assert!(
            lines.contains(
                "\n  - + each block's state root from its access list and witness, after"
            )
        );
        assert!(
            lines.contains(
                "\n  - + each block's state root from its access list and witness, beside"
            )
        );
        // Drift: one line for every dump, the warning naming the ones that moved.
        let drift = |change: f64| crate::results::Drift {
            first_ggas_per_s: 1.0,
            last_ggas_per_s: 1.0 + change,
            change,
            exceeded: change.abs() > crate::results::DRIFT_THRESHOLD,
        };
        let mut other = s.dumps[0].clone();
        other.name = "other".into();
        other.checksum = "fedcba9876543210".into();
        s.dumps.push(other);
        s.dumps[0].drift = Some(drift(0.01));
        s.dumps[1].drift = Some(drift(-0.08));
        assert_eq!(
            drift_lines(&s),
            "- drift from the first rounds to the last: `mainnet-like` +1.0 % (1000 → 1010 MGas/s), \
             `other` -8.0 % (1000 → 920 MGas/s) — the machine's speed moved more than 5 % during \
             the run of `other` -8.0 % (1000 → 920 MGas/s)\n"
        );
    }

    /// The folder says whether its tree was clean and the hash of its config; a label that
    /// differs from the dump's name is shown with it.
    #[test]
    fn the_header_records_the_tree_and_the_config() {
        let mut s = sample("CPU");
        s.machine.commit = "abc-dirty".into();
        s.machine.tree_clean = None;
        s.dumps[0].label = Some("30M".into());
        let md = render_markdown(std::slice::from_ref(&s), &[]);
        assert!(md.contains("commit `abc-dirty` (tree dirty"), "{md}");
        let hash = crate::results::config_hash(&s.config);
        assert_eq!(hash.len(), 16);
        assert!(
            md.contains(&format!("- config as run: hash `{hash}`")),
            "{md}"
        );
        assert!(md.contains("- dump `30M`: `mainnet-like` (d)"), "{md}");
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
        let per_dump = crate::table::throughput_tables(&s, false);
        let lines: Vec<&str> = per_dump.lines().filter(|l| l.starts_with('|')).collect();
        // head, rule, two dumps and the total on each of three thread counts
        assert_eq!(lines.len(), 2 + 3 * 3, "{per_dump}");
        assert!(
            lines[0].starts_with("| dump | threads | sequential | b1 ols |"),
            "{per_dump}"
        );
        assert!(
            lines[2].starts_with("| mainnet-like | 1 | 500 | "),
            "{per_dump}"
        );
        assert!(
            lines[8].starts_with("| **suite total** | 1 | **500** |"),
            "{per_dump}"
        );
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
        assert!(md.contains("## Throughput (MGas/s)") && md.contains("## Suite totals"));
        assert!(
            md.contains("FAIL dumps/bad.gigagas: checksum mismatch"),
            "{md}"
        );
        let csv = render_totals_csv(std::slice::from_ref(&s));
        assert_eq!(csv.lines().count(), 1 + s.totals.len());
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

    #[test]
    fn projections_show_one_item_claims_beside_chunks() {
        let projection = |threads, makespan_s, one_item_makespan_s| Projection {
            threads,
            batch: 42,
            scheduler: gigagas_grid::SchedulerKind::GasUsed,
            makespan_s,
            ggas_per_s: 1.0 / makespan_s,
            longest_tx_s: 0.5,
            longest_share: 0.5 / makespan_s,
            bound_s: 0.5,
            item_slowdown: 1.0,
            item_cost_ns: 0.0,
            one_item_makespan_s,
            order_penalty: 1.0,
        };
        let mut sim = SimulationReport {
            dump: "d".into(),
            dump_checksum: "c".into(),
            total_gas: 1_000_000_000,
            profile_runs: 1,
            profile_work_s: 1.0,
            profile_run_work_s: vec![1.0],
            item_slowdown: 1.0,
            item_slowdown_source: String::new(),
            item_cost_ns: Vec::new(),
            item_cost_scaled_share: 1.0,
            projections: vec![
                projection(16, 1.02, Some(1.0)),
                projection(64, 0.5, Some(0.5)),
            ],
            validations: Vec::new(),
            assumptions: Vec::new(),
        };
        let text = simulation_markdown(&sim, None);
        assert!(
            text.contains("| 42 | gas-used | 0.980 (49 %) | 2.000 (100 %) |"),
            "{text}"
        );
        // One item per claim: 1 Ggas in 1 s and 0.5 s; chunks 2 % and 0 % slower.
        assert!(
            text.contains("| 42 | gas-used | 1.000 (+2.0 %) | 2.000 (+0.0 %) |"),
            "{text}"
        );
        // Results written before the simulator projected one-item claims: no second grid.
        for p in &mut sim.projections {
            p.one_item_makespan_s = None;
        }
        let text = simulation_markdown(&sim, None);
        assert!(!text.contains("one item per claim"), "{text}");
    }
}
