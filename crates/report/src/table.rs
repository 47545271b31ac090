//! `table.md` and the CSV files, from one machine's results or several merged.

use crate::{
    results::{Mode, ResultRow, SuiteTotal, SweepResults},
    simulate::SimulationReport,
};
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

/// The measured rows as one markdown table. With several result sets, a `machine`
/// column (`M1`, `M2`, ... as listed by [`render_markdown`]) leads each row.
pub fn rows_table(sets: &[SweepResults]) -> String {
    let merged = sets.len() > 1;
    let show_dump = distinct_dumps(sets) > 1;
    let show_mode = any(sets, |r| r.mode == Mode::Sequential);
    let show_senders = any(sets, |r| r.recover_senders);
    let show_speedup = any(sets, |r| {
        r.speedup_vs_sequential.is_some() && r.mode == Mode::BalParallel
    });
    let show_vs_one = any(sets, |r| r.vs_one_thread.is_some());
    let show_verified = any_unverified(sets);
    let mut head: Vec<&str> = Vec::new();
    if merged {
        head.push("machine");
    }
    if show_verified {
        head.push("verified");
    }
    if show_dump {
        head.push("dump");
    }
    if show_mode {
        head.push("mode");
    }
    head.extend(["threads", "scheduler", "batch"]);
    if show_senders {
        head.push("senders");
    }
    head.extend([
        "avg batch Mgas",
        "MGas/s [min–max]",
        "longest tx",
        "total",
        "bound",
        "eff",
        "longest share",
    ]);
    if show_speedup {
        head.push("vs seq. [95 % CI]");
    }
    if show_vs_one {
        head.push("vs 1 thread [95 % CI]");
    }
    head.push("tx p50/p99 µs");
    head.push("passes/sample");
    let mut out = String::new();
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        head.iter()
            .map(|h| if is_text(h) { "---|" } else { "---:|" })
            .collect::<String>()
    );
    for (i, set) in sets.iter().enumerate() {
        for r in &set.rows {
            let m = &r.summary.median;
            let mut cells: Vec<String> = Vec::new();
            if merged {
                cells.push(machine_tag(i));
            }
            if show_verified {
                cells.push(if r.verified { "yes" } else { "UNVERIFIED" }.into());
            }
            if show_dump {
                cells.push(md_cell(&r.dump));
            }
            if show_mode {
                cells.push(if r.mode == Mode::Sequential {
                    "sequential".into()
                } else {
                    "BAL".into()
                });
            }
            cells.push(r.threads.to_string());
            cells.push(r.scheduler_name().into());
            cells.push(r.batch.to_string());
            if show_senders {
                cells.push(if r.recover_senders {
                    "recovered".into()
                } else {
                    "given".into()
                });
            }
            cells.push(format!("{:.1}", r.avg_batch_gas / 1e6));
            cells.push(format!(
                "{:.0} [{:.0}–{:.0}]",
                r.mgas_per_s(),
                r.summary.min_ggas_per_s * 1e3,
                r.summary.max_ggas_per_s * 1e3
            ));
            cells.push(format!("{:.3} s", m.longest_tx_s));
            cells.push(format!("{:.3} s", m.wall_s));
            cells.push(format!("{:.3} s", m.bound_s));
            cells.push(format!("{:.2}", m.efficiency));
            cells.push(format!("{:.0} %", r.longest_share() * 100.0));
            if show_speedup {
                cells.push(if r.mode == Mode::Sequential {
                    // The baseline against itself: no interval to show.
                    "1.00×".into()
                } else {
                    ratio_cell(r.vs_sequential, r.speedup_vs_sequential)
                });
            }
            if show_vs_one {
                cells.push(ratio_cell(r.vs_one_thread, None));
            }
            let (p50, p99, _) = r.summary.tx_us_p50_p99_max;
            cells.push(format!("{p50:.0}/{p99:.0}"));
            cells.push(passes_cell(r));
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
pub fn ratio_cell(interval: Option<gigagas_executor::Interval>, bare: Option<f64>) -> String {
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

/// The name of a grid point in column heads: `sequential`, `BAL 4t gas-used` (with the
/// batch when the set has several, and the sender recovery when it varies).
fn point_label(
    mode: Mode,
    threads: usize,
    batch: usize,
    scheduler: &str,
    recover: bool,
    set: &SweepResults,
) -> String {
    let many_batches = set
        .rows
        .iter()
        .any(|r| r.batch != batch && r.mode == Mode::BalParallel);
    let senders = if set.rows.iter().any(|r| r.recover_senders) {
        if recover {
            ", senders recovered"
        } else {
            ", senders given"
        }
    } else {
        ""
    };
    match mode {
        Mode::Sequential => format!("sequential{senders}"),
        Mode::BalParallel if many_batches => {
            format!("BAL {threads}t {scheduler} b{batch}{senders}")
        }
        Mode::BalParallel => format!("BAL {threads}t {scheduler}{senders}"),
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
            total_label(t, set),
            t.dumps,
            t.total_gas as f64 / 1e9,
            t.total_wall_s,
            t.mgas_per_s(),
            ratio_cell(t.geomean_interval, t.geomean_speedup)
        );
    }
    out
}

fn total_label(t: &SuiteTotal, set: &SweepResults) -> String {
    point_label(
        t.mode,
        t.threads,
        t.batch,
        t.scheduler_name(),
        t.recover_senders,
        set,
    )
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

/// A suite's per-test table: a row per dump, a column per grid point, cells in MGas/s
/// (parallel cells with their speedup over the dump's own sequential baseline), then the
/// suite total. Empty for a single dump.
pub fn per_dump_table(set: &SweepResults) -> String {
    let mut out = String::new();
    if set.dumps.len() < 2 {
        return out;
    }
    type Key = (
        Mode,
        usize,
        usize,
        Option<gigagas_executor::SchedulerKind>,
        bool,
    );
    let key =
        |r: &ResultRow| -> Key { (r.mode, r.threads, r.batch, r.scheduler, r.recover_senders) };
    let mut columns: Vec<Key> = Vec::new();
    for r in &set.rows {
        if !columns.contains(&key(r)) {
            columns.push(key(r));
        }
    }
    let heads: Vec<String> = columns
        .iter()
        .map(|&(mode, threads, batch, scheduler, recover)| {
            point_label(
                mode,
                threads,
                batch,
                scheduler.map_or("-", |s| s.name()),
                recover,
                set,
            )
        })
        .collect();
    let _ = writeln!(out, "| dump | Mgas | {} |", heads.join(" | "));
    let _ = writeln!(out, "|---|---:|{}", "---:|".repeat(columns.len()));
    for d in &set.dumps {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| {
                set.rows
                    .iter()
                    .find(|r| r.dump_checksum == d.checksum && r.dump == d.name && key(r) == *c)
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
                    .find(|t| (t.mode, t.threads, t.batch, t.scheduler, t.recover_senders) == *c)
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

fn is_text(head: &str) -> bool {
    matches!(
        head,
        "machine" | "verified" | "dump" | "mode" | "scheduler" | "senders"
    )
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
    let _ = writeln!(
        out,
        "Item slowdown above one thread: **{:.3}×** every profiled item time ({}).\n",
        sim.item_slowdown,
        if sim.item_slowdown_source.is_empty() {
            "not recorded"
        } else {
            &sim.item_slowdown_source
        }
    );
}

/// Projected GGas/s per (batch, scheduler) row and thread-count column.
fn projection_table(out: &mut String, sim: &SimulationReport) {
    let mut threads: Vec<usize> = sim.projections.iter().map(|p| p.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut keys: Vec<(usize, gigagas_executor::SchedulerKind)> = Vec::new();
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
    let _ = writeln!(
        out,
        "| threads | batch | scheduler | predicted | measured | error | item-time ratio | scheduling error |"
    );
    let _ = writeln!(out, "|---:|---:|---|---:|---:|---:|---:|---:|");
    for v in &sim.validations {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.3} s | {:.3} s | {:+.1} % | {:.3} | {:+.1} % |",
            v.threads,
            v.batch,
            v.scheduler,
            v.predicted_s,
            v.measured_s,
            v.error * 100.0,
            v.item_time_ratio,
            v.scheduling_error * 100.0
        );
    }
    if let Some(e) = sim.max_abs_error() {
        let sched = sim
            .validations
            .iter()
            .map(|v| v.scheduling_error.abs())
            .fold(0.0, f64::max);
        let _ = writeln!(
            out,
            "\nLargest error: {:.1} % (goal: within 5 %); of the scheduling model alone (prediction × item-time \
             ratio, i.e. with the measured run's own per-item slowdown factored in): {:.1} %.",
            e * 100.0,
            sched * 100.0
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

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `results.csv`: one line per grid point (median figures and range), machine columns
/// included so files of several machines concatenate.
pub fn render_csv(sets: &[SweepResults]) -> String {
    let mut out = String::from(
        "machine_cpu,machine_cores,commit,dump,dump_checksum,mode,threads,scheduler,batch,recover_senders,warmup,repeats,\
         verified,avg_batch_gas,mgas_per_s,mgas_per_s_min,mgas_per_s_max,longest_tx_s,wall_s,bound_s,efficiency,\
         longest_share,work_s,utilisation,speedup_vs_sequential,tx_p50_us,tx_p99_us,tx_max_us,passes_min,passes_max\n",
    );
    for s in sets {
        for r in &s.rows {
            let m = &r.summary.median;
            let (p50, p99, max) = r.summary.tx_us_p50_p99_max;
            let fields = [
                csv_field(&s.machine.cpu),
                s.machine.cores.to_string(),
                csv_field(&s.machine.commit),
                csv_field(&r.dump),
                r.dump_checksum.clone(),
                r.mode.name().into(),
                r.threads.to_string(),
                r.scheduler_name().into(),
                r.batch.to_string(),
                r.recover_senders.to_string(),
                r.warmup.to_string(),
                r.repeats.to_string(),
                r.verified.to_string(),
                format!("{:.0}", r.avg_batch_gas),
                format!("{:.2}", r.mgas_per_s()),
                format!("{:.2}", r.summary.min_ggas_per_s * 1e3),
                format!("{:.2}", r.summary.max_ggas_per_s * 1e3),
                format!("{:.6}", m.longest_tx_s),
                format!("{:.6}", m.wall_s),
                format!("{:.6}", m.bound_s),
                format!("{:.4}", m.efficiency),
                format!("{:.4}", r.longest_share()),
                format!("{:.6}", m.work_s),
                format!("{:.4}", m.utilisation),
                r.speedup_vs_sequential
                    .map(|x| format!("{x:.4}"))
                    .unwrap_or_default(),
                format!("{p50:.1}"),
                format!("{p99:.1}"),
                format!("{max:.1}"),
                r.passes_range().0.to_string(),
                r.passes_range().1.to_string(),
            ];
            let _ = writeln!(out, "{}", fields.join(","));
        }
    }
    out
}

/// `totals.csv`: one line per suite total (grid point summed over a suite's dumps).
pub fn render_totals_csv(sets: &[SweepResults]) -> String {
    let mut out = String::from(
        "machine_cpu,machine_cores,commit,mode,threads,scheduler,batch,recover_senders,dumps,total_gas,total_wall_s,mgas_per_s,geomean_speedup_vs_sequential,verified\n",
    );
    for s in sets {
        let verified = !any_unverified(std::slice::from_ref(s));
        for t in &s.totals {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{:.6},{:.2},{},{verified}",
                csv_field(&s.machine.cpu),
                s.machine.cores,
                csv_field(&s.machine.commit),
                t.mode.name(),
                t.threads,
                t.scheduler_name(),
                t.batch,
                t.recover_senders,
                t.dumps,
                t.total_gas,
                t.total_wall_s,
                t.mgas_per_s(),
                t.geomean_speedup
                    .map(|g| format!("{g:.4}"))
                    .unwrap_or_default()
            );
        }
    }
    out
}

/// `simulation.csv`: one line per projection, with the machine the profile came from.
pub fn render_simulation_csv(sets: &[SweepResults]) -> String {
    let mut out = String::from(
        "machine_cpu,machine_cores,commit,dump,dump_checksum,threads,batch,scheduler,makespan_s,ggas_per_s,longest_tx_s,longest_share,bound_s\n",
    );
    for s in sets {
        for sim in &s.simulations {
            for p in &sim.projections {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{:.6},{:.4},{:.6},{:.4},{:.6}",
                    csv_field(&s.machine.cpu),
                    s.machine.cores,
                    csv_field(&s.machine.commit),
                    csv_field(&sim.dump),
                    sim.dump_checksum,
                    p.threads,
                    p.batch,
                    p.scheduler,
                    p.makespan_s,
                    p.ggas_per_s,
                    p.longest_tx_s,
                    p.longest_share,
                    p.bound_s
                );
            }
        }
    }
    out
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
            head.contains("| sequential |") && head.contains("| BAL 1t ols b1 |"),
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
        let md = render_markdown(std::slice::from_ref(&s), &[]);
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
}
