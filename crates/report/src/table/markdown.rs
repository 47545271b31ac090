//! `table.md`: the whole Markdown document of a results folder (machines, dumps, the rows
//! table, per-dump and suite-total tables, reading the state, simulations, plots).

use super::{
    escape::{escape_name, md_cell},
    terminal::{UNVERIFIED, any_unverified, machine_tag, ratio_cell, rows_table},
};
use crate::{
    results::SweepResults,
    simulation::{Projection, SimulationReport},
};
use gigagas_grid::Point;
use std::fmt::Write;

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
                md_cell(&r.point.to_string()),
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

/// What the state-root phase of the rows that ran it took, one row each (median sample,
/// per pass): the point, its throughput with the root, the execution's and the root's
/// spans, how long they ran at once, and `wall / max(exec, root)` (1.00: the pass took no
/// longer than the longer of the two). Empty when no row has root figures.
pub(super) fn root_table(sets: &[SweepResults]) -> String {
    let mut out = String::new();
    if !sets
        .iter()
        .any(|s| s.rows.iter().any(|r| r.summary.median.root.is_some()))
    {
        return out;
    }
    // Store runs read the witness's nodes inside the window: a column for it where any did.
    let reads = sets.iter().any(|s| {
        s.rows
            .iter()
            .any(|r| r.summary.median.root.is_some_and(|x| x.read_s > 0.0))
    });
    let (read_head, read_rule) = if reads {
        (" trie nodes read |", "---:|")
    } else {
        ("", "")
    };
    let _ = writeln!(
        out,
        "| point | GGas/s | exec | root |{read_head} overlap | wall / max(exec, root) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|{read_rule}---:|---:|");
    for set in sets {
        for r in &set.rows {
            let m = &r.summary.median;
            let Some(root) = &m.root else { continue };
            let read = if reads {
                format!(" {:.3} s |", root.read_s)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "| {} | {:.3} | {:.3} s | {:.3} s |{read} {:.3} s | {} |",
                md_cell(&r.point.to_string()),
                m.ggas_per_s,
                root.exec_s,
                root.root_s,
                root.overlap_s,
                root.wall_over_longer(m.wall_s)
                    .map_or_else(|| "–".into(), |x| format!("{x:.2}")),
            );
        }
    }
    out
}

/// Each row that kept its batches (issue 45: the replay's store and root points), by its
/// dump's file (generated dumps of one profile share a name) and point, phase by phase, as the mean batch of its median sample (a block at batch 1, a mega-block
/// otherwise): reading its state, executing, the root, end to end (and the slowest batch),
/// the keys it updates and the root's time per key (its span, and its units' own time).
/// Empty when no row kept them.
pub fn batch_table(sets: &[SweepResults]) -> String {
    let mut out = String::new();
    if !sets
        .iter()
        .any(|s| s.rows.iter().any(|r| !r.per_batch.is_empty()))
    {
        return out;
    }
    let _ = writeln!(
        out,
        "| dump | point | batches | Mgas a batch | read | execute | root | end to end [slowest] | updated keys | root ns/key | root work ns/key |"
    );
    let _ = writeln!(
        out,
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for set in sets {
        for r in &set.rows {
            let b = &r.per_batch;
            if b.is_empty() {
                continue;
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
            // Generated dumps of one profile share a name: the file tells them apart.
            let dump = set
                .dumps
                .iter()
                .find(|d| d.checksum == r.dump_checksum)
                .and_then(|d| std::path::Path::new(&d.path).file_name())
                .map_or_else(|| r.dump.clone(), |f| f.to_string_lossy().into_owned());
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} | {} | {} | {} | {} [{:.2} ms] | {:.0} | {} | {} |",
                md_cell(&dump),
                md_cell(&r.point.to_string()),
                b.len(),
                sum(|x| x.gas as f64) / n / 1e6,
                ms(|x| x.read_s),
                ms(|x| x.exec_s),
                ms(|x| x.root_s),
                ms(|x| x.wall_s),
                slowest * 1e3,
                keys as f64 / n,
                per_key(sum(|x| x.root_s)),
                per_key(sum(|x| x.root_busy_s)),
            );
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
            t.point,
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
        if !columns.contains(&r.point) {
            columns.push(r.point);
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
                    .find(|r| r.dump_checksum == d.checksum && r.dump == d.name && r.point == *c)
                    .map(|r| match (r.point, r.speedup_vs_sequential) {
                        (Point::Bal(_), Some(s)) => format!("{:.0} ({s:.2}×)", r.mgas_per_s()),
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
                    .find(|t| t.point == *c)
                    .map(
                        |t| match t.geomean_speedup.filter(|_| !t.point.is_sequential()) {
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
    let mut penalties: Vec<String> = Vec::new();
    for p in sim.projections.iter().filter(|p| p.order_penalty != 1.0) {
        let line = format!("{} batch {} {:.3}×", p.scheduler, p.batch, p.order_penalty);
        if !penalties.contains(&line) {
            penalties.push(line);
        }
    }
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
             *read*: reading the batch's state from the store before it runs, all readers together (0 in memory; the trie nodes a store run reads once before \
             the first batch are in the state-root table); *execute*: from its first transaction's start to its last one's end; *root*: from its blocks' first \
             root unit's start to their last one's end; *end to end*: from the batch's start (its read included) to the later of its last transaction and its \
             last root unit, and the slowest batch's; *updated keys*: accounts and slots whose value after a block differs from before it, a mean per batch; \
             *root ns/key*: the root's span per updated key; *root work ns/key*: its units' own time, all workers together, per updated key. \
             Persistence (writing the block's state and trie back) is not timed.\n"
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        results::{ResultRow, tests::sample},
        table::{render_csv, render_totals_csv, rows_table},
    };

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
            read_s: 0.0,
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
    #[test]
    fn the_per_block_section_shows_the_mean_block() {
        let mut s = sample("CPU");
        assert!(batch_table(std::slice::from_ref(&s)).is_empty());
        let block = |first_block, wall_s, updated_slots| crate::results::BatchFigures {
            first_block,
            blocks: 1,
            gas: 300_000_000,
            read_s: 0.004,
            exec_s: 0.1,
            root_s: 0.02,
            root_busy_s: 0.03,
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
                "| mainnet-like-300m.gigagas | {} | 2 | 300.0 | 4.00 ms | 100.00 ms | 20.00 ms | 120.00 ms [130.00 ms] | 15000 | 1333 | 2000 |",
                s.rows[1].point
            )
        );
        let md = render_markdown(std::slice::from_ref(&s), &[]);
        assert!(md.contains("## Per block"), "{md}");
        assert!(md.contains("Persistence"), "{md}");
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
