//! What the command line prints to the terminal: progress bars, the results of `run` and
//! `sweep` (rows fitted to the terminal's width, totals, FAIL lines, and the exit status
//! they imply), the line of a written dump, the one-line error, and a quiet end on a
//! closed pipe. The arguments are [`crate::cli`]'s.

use anyhow::{Result, bail};
use gigagas_report::{SweepResults, table};
use indicatif::{ProgressBar, ProgressStyle};
use std::{path::Path, time::Instant};

/// An error and its causes on one line (`a: b: c`), a cause left out where the message
/// before it already ends with it (no "File exists (os error 17): File exists (os error
/// 17)"), control characters escaped (a hostile path cannot drive the terminal).
pub(crate) fn error_line(e: &anyhow::Error) -> String {
    let mut line = e.to_string();
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !line.ends_with(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    gigagas_report::table::escape_name(&line).into_owned()
}

/// The progress bar of every command: `what`, the bar, percent, elapsed < ETA, message.
pub(crate) fn progress_bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len.max(1));
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{what} {{bar:40}} {{percent:>3}}% [{{elapsed_precise}} < {{eta_precise}}] {{msg}}"
        ))
        .expect("valid template"),
    );
    bar
}

/// A progress bar fed in the report crate's work units ([`gigagas_bench::Progress`]).
pub(crate) struct Bar {
    bar: ProgressBar,
}

impl Bar {
    /// A bar labelled `what`, its length set by [`gigagas_bench::Progress::total`].
    pub(crate) fn new(what: &str) -> Self {
        Self {
            bar: progress_bar(1, what),
        }
    }

    /// Clear the bar from the terminal (before the results are printed).
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl gigagas_bench::Progress for Bar {
    fn total(&mut self, units: u64) {
        self.bar.set_length(units.max(1));
    }
    fn stage(&mut self, what: &str) {
        self.bar.set_message(what.to_string());
    }
    fn advance(&mut self, units: u64) {
        self.bar.inc(units);
    }
    fn note(&mut self, line: &str) {
        // Above the bar on a terminal; a hidden bar prints nothing, so stderr then.
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }
}

/// What `run` and `sweep` print of their results, the rows on stdout, the rest on
/// stderr: the UNVERIFIED warning, the rows, the suite totals, the simulations, the drift
/// lines and a FAIL line per failed dump.
pub(crate) fn print_results(results: &SweepResults, wide: bool) {
    let one = std::slice::from_ref(results);
    if table::any_unverified(one) {
        eprintln!("{}", table::UNVERIFIED);
    }
    if !results.rows.is_empty() {
        print!("{}", rows_for_terminal(one, wide));
    }
    let io = table::io_table(one);
    if !io.is_empty() {
        println!();
        print!("{io}");
    }
    let totals = table::totals_table(results);
    if !totals.is_empty() {
        println!();
        print!("{totals}");
    }
    for sim in &results.simulations {
        println!();
        print!("{}", table::simulation_markdown(sim, None));
    }
    eprint!("{}", table::drift_lines(results));
    // On stderr only, next to the error line; each skipped dump once.
    eprint!("{}", table::skipped_list(results));
    eprint!("{}", table::failures_list(results));
}

/// The rows table for stdout: every column, or, on a terminal narrower than that (and
/// without `--wide`), the columns a reader needs first and a line on stderr saying how to
/// get the rest. Files always get every column.
fn rows_for_terminal(sets: &[SweepResults], wide: bool) -> String {
    let full = table::rows_table(sets);
    if wide {
        return full;
    }
    match terminal_columns() {
        Some(width) if table::table_width(&full) > width => {
            eprintln!(
                "(the table is {} columns wide, the terminal {width}: the first columns shown; --wide prints every column, and --json/--out files have them all)",
                table::table_width(&full)
            );
            table::rows_table_with(sets, &table::narrow_columns(sets))
        }
        _ => full,
    }
}

/// The width of the terminal stdout is, if it is one.
fn terminal_columns() -> Option<usize> {
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ writes a `winsize` into the struct passed; stdout's fd is valid
        // for the process's life.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
        (ok && ws.ws_col > 0).then_some(ws.ws_col as usize)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Fail when a dump of `results` failed (how many of the `dumps`, and what the other rows
/// are, if there are any), or when every dump was skipped for having nothing to measure.
/// Skipped dumps alone, beside dumps that verified, are no failure.
pub(crate) fn fail_on_failures(results: &SweepResults, dumps: usize) -> Result<()> {
    let failed = results.failures.len();
    let skipped = results.skipped.len();
    if failed == 0 {
        if skipped > 0 && skipped >= dumps {
            bail!(
                "nothing was measured: {skipped} of {dumps} dump(s) hold no transactions (skipped lines above)"
            );
        }
        return Ok(());
    }
    let others = if failed + skipped >= dumps || results.rows.is_empty() {
        "no dump was measured"
    } else if table::any_unverified(std::slice::from_ref(results)) {
        "the other rows are UNVERIFIED (--no-verify)"
    } else {
        "the other rows are verified"
    };
    let skipped = if skipped > 0 {
        format!(", {skipped} skipped: no transactions")
    } else {
        String::new()
    };
    bail!("{failed} of {dumps} dump(s) failed (FAIL lines above){skipped}; {others}")
}

/// `gigagas inspect | head` closes stdout early: end quietly like other command-line tools
/// (the default SIGPIPE action) instead of panicking in `println!`.
pub(crate) fn exit_quietly_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The line that reports a written dump: file, blocks, transactions, gas, size, checksum, time.
pub(crate) fn written(
    path: &Path,
    dump: &gigagas_dump::Dump,
    info: &gigagas_dump::DumpFileInfo,
    start: Instant,
) -> String {
    format!(
        "wrote {} ({} blocks, {} txs, {:.3} Ggas, {:.1} MB, checksum {}) in {:.1} s",
        path.display(),
        dump.block_count(),
        dump.transaction_count(),
        dump.total_gas() as f64 / 1e9,
        info.size as f64 / 1e6,
        info.checksum_hex(),
        start.elapsed().as_secs_f64()
    )
}
