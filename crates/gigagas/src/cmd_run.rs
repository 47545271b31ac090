//! `gigagas run`: parse the arguments into a grid over dumps, hand it to
//! `gigagas-report` (the same path `gigagas sweep` takes), print the rows.

use crate::cli::{Bar, commit, dump_or_default};
use anyhow::{Context, Result, bail};
use gigagas_executor::{Repetition, SchedulerKind};
use gigagas_report::{
    Grid, SuiteDump, SweepConfig, SweepOptions, SweepResults,
    config::{MAX_THREADS, check_min_sample_ms, check_thread_counts},
    folder,
    machine::MachineInfo,
    output, run_grid, table,
};
use std::path::PathBuf;

/// Arguments of `gigagas run`.
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// Dump files and/or folders of dumps (default: dumps/mainnet.gigagas, 42 real
    /// mainnet blocks; the synthetic workload is dumps/mainnet-like.gigagas).
    pub dumps: Vec<PathBuf>,
    /// Worker thread counts to sweep, comma-separated (default: 1 up to the core count).
    #[arg(long, value_delimiter = ',')]
    pub threads: Vec<usize>,
    /// Mega-block sizes (blocks merged into one parallel unit) to sweep (default: 1,50).
    #[arg(long, value_delimiter = ',')]
    pub batch: Vec<usize>,
    /// Schedulers to sweep: ols (block order), gas-used (largest first), gas-limit
    /// (default: all three).
    #[arg(long, value_delimiter = ',')]
    pub scheduler: Vec<SchedulerKind>,
    /// Single passes per point before the measured samples (verified, not reported).
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Measured rounds: each round runs every point once (the sequential baseline
    /// included) in a shuffled order, one sample each; the table shows each point's
    /// median and range, and every ratio taken round by round as its median with a 95 %
    /// distribution-free interval. 10 rounds give an interval from the 2nd to the 9th
    /// smallest ratio (97.9 % coverage); fewer than 6 cannot reach 95 % ([min, max]).
    #[arg(long, default_value_t = 10)]
    pub repeats: usize,
    /// Seed of each round's order of points (recorded in the results).
    #[arg(long, default_value_t = gigagas_executor::DEFAULT_ROUND_SEED)]
    pub seed: u64,
    /// Minimum timed length of a measured sample, milliseconds: a dump that replays
    /// faster is replayed several times per sample (figures are per pass). 0: one pass.
    #[arg(long, default_value_t = gigagas_executor::DEFAULT_MIN_SAMPLE_MS)]
    pub min_sample_ms: u64,
    /// Recover every sender from its signature inside the timed work (both paths).
    #[arg(long)]
    pub recover_senders: bool,
    /// Build every transaction's receipt with its logs bloom inside the timed work, on
    /// the sequential loop and the replay alike (what a client needs for receiptsRoot);
    /// the receipts root is then checked against every header from Byzantium on.
    #[arg(long)]
    pub receipts: bool,
    /// Run only the sequential baseline (one revm State, no BAL).
    #[arg(long)]
    pub sequential: bool,
    /// Skip the sequential baseline.
    #[arg(long, conflicts_with = "sequential")]
    pub no_baseline: bool,
    /// Skip verification (only to measure what verification costs; numbers are unverified).
    #[arg(long)]
    pub no_verify: bool,
    /// Write results.json (every sample, machine, dump checksums) to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// After the measured rounds, run one more verified pass of every parallel point and
    /// write it as Chrome trace-event JSON to this file (open it in https://ui.perfetto.dev
    /// or chrome://tracing): a track per worker, a slice per item (block, kind, gas,
    /// scheduler position), the batch boundaries.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Write a results folder like `gigagas sweep` does (results.json, results.csv,
    /// totals.csv, table.md, plots) into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The dumps named on the command line: files as given, folders expanded to their
/// `*.gigagas` files (sorted); the default dump if none.
fn suite_dumps(given: &[PathBuf]) -> Result<Vec<SuiteDump>> {
    if given.is_empty() {
        let path = dump_or_default(None)?;
        return Ok(vec![SuiteDump {
            label: path.display().to_string(),
            path,
        }]);
    }
    let mut dumps = Vec::new();
    for p in given {
        if p.is_dir() {
            let files = gigagas_report::config::dumps_in_folder(p)
                .with_context(|| format!("{}: cannot list the folder", p.display()))?;
            if files.is_empty() {
                bail!("{}: no *.gigagas files in this folder", p.display());
            }
            dumps.extend(files.into_iter().map(|path| SuiteDump {
                label: path.display().to_string(),
                path,
            }));
        } else {
            // A missing or unreadable file becomes that dump's FAIL row.
            dumps.push(SuiteDump {
                label: p.display().to_string(),
                path: p.clone(),
            });
        }
    }
    Ok(dumps)
}

/// `gigagas run [DUMPS...]`.
pub(crate) fn run(args: RunArgs) -> Result<()> {
    if args.repeats == 0 {
        bail!("--repeats must be at least 1");
    }
    if args.threads.contains(&0) {
        bail!("--threads: 0 is not a thread count");
    }
    check_thread_counts(&args.threads, MAX_THREADS)
        .map_err(|m| anyhow::anyhow!("--threads: {m}"))?;
    check_min_sample_ms(args.min_sample_ms).map_err(|m| anyhow::anyhow!("--min-sample-ms: {m}"))?;
    if args.batch.contains(&0) {
        bail!("--batch: 0 is not a batch size");
    }
    let dumps = suite_dumps(&args.dumps)?;
    // Before any work: no output is an input, and every output location is writable.
    let inputs: Vec<PathBuf> = dumps.iter().map(|d| d.path.clone()).collect();
    let mut outputs: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(json) = &args.json {
        outputs.push(("--json", json.clone()));
    }
    if let Some(trace) = &args.trace {
        outputs.push(("--trace", trace.clone()));
    }
    if let Some(out) = &args.out {
        outputs.push(("--out", out.clone()));
        outputs.extend(folder::FILES.iter().map(|f| ("--out", out.join(f))));
    }
    output::check_not_inputs(&inputs, &outputs)?;
    if let Some(json) = &args.json {
        output::prepare_output_file(json, false)?;
    }
    if let Some(trace) = &args.trace {
        output::prepare_output_file(trace, false)?;
    }
    if let Some(out) = &args.out {
        output::prepare_output_dir(out, false)?;
    }
    let cores = MachineInfo::detect_cores();
    let defaults = args.threads.is_empty() && args.batch.is_empty() && args.scheduler.is_empty();
    let config = sweep_config(&args, &dumps, cores);
    let mut grid = Grid::of(&config, cores);
    if args.sequential {
        grid.points.clear();
    }
    grid.rep = Repetition {
        verify: !args.no_verify,
        ..grid.rep
    };
    grid.collapse_single_transaction_blocks = defaults;
    grid.trace = args.trace.is_some();
    eprintln!(
        "{} dump(s) × {} grid point(s){}: {} warm-up pass(es) + {} samples of at least {} ms each{}",
        dumps.len(),
        grid.points.len(),
        if grid.baselines.is_empty() {
            ""
        } else {
            " + sequential baseline"
        },
        grid.rep.warmup,
        grid.rep.repeats,
        args.min_sample_ms,
        if grid.rep.verify {
            ", every pass verified"
        } else {
            ", UNVERIFIED (--no-verify)"
        }
    );
    let options = SweepOptions {
        commit: commit(),
        note: None,
        build: Some(crate::cli::build_info()),
    };
    let mut bar = Bar::new("running");
    let results = run_grid("run", &config, &grid, &dumps, &options, &mut bar);
    bar.0.finish_and_clear();
    let results = results?;
    print_results(&results);
    if let Some(out) = &args.json {
        output::write_atomic(out, results.to_json().as_bytes())?;
        eprintln!("wrote {}", out.display());
    }
    if let Some(out) = &args.trace {
        let trace = gigagas_report::trace::trace_file(results.trace.clone());
        output::write_atomic(out, trace.to_string().as_bytes())?;
        eprintln!("wrote {} (open in https://ui.perfetto.dev)", out.display());
    }
    if let Some(out) = &args.out {
        folder::write_into(out, &results)?;
        eprintln!("wrote {}", out.display());
    }
    if !results.failures.is_empty() {
        bail!("{}", failed_line(&results, dumps.len()));
    }
    Ok(())
}

/// The grid of `gigagas run`'s flags: every core count 1..=cores, mega-blocks of 1 and 50,
/// every scheduler where a flag is not given.
fn sweep_config(args: &RunArgs, dumps: &[SuiteDump], cores: usize) -> SweepConfig {
    let or = |given: &[usize], default: Vec<usize>| {
        if given.is_empty() {
            default
        } else {
            given.to_vec()
        }
    };
    SweepConfig {
        description: String::new(),
        dumps: dumps.iter().map(|d| PathBuf::from(&d.label)).collect(),
        threads: or(&args.threads, (1..=cores).collect()),
        batch: or(&args.batch, vec![1, 50]),
        schedulers: if args.scheduler.is_empty() {
            SchedulerKind::ALL.to_vec()
        } else {
            args.scheduler.clone()
        },
        recover_senders: vec![args.recover_senders],
        receipts: args.receipts,
        warmup: args.warmup,
        repeats: args.repeats,
        seed: args.seed,
        sequential: !args.no_baseline,
        all_cores: false,
        min_sample_ms: args.min_sample_ms,
        simulate: None,
    }
}

/// The error line of a run or sweep with failed dumps: how many failed, and what the
/// other rows are, if there are any.
pub(crate) fn failed_line(results: &SweepResults, dumps: usize) -> String {
    let failed = results.failures.len();
    let others = if failed >= dumps || results.rows.is_empty() {
        "no dump was measured"
    } else if table::any_unverified(std::slice::from_ref(results)) {
        "the other rows are UNVERIFIED (--no-verify)"
    } else {
        "the other rows are verified"
    };
    format!("{failed} of {dumps} dump(s) failed (FAIL lines above); {others}")
}

/// The machine line, the rows, the suite totals and the failures (on stderr).
fn print_results(results: &SweepResults) {
    let m = &results.machine;
    if !results.description.is_empty() {
        eprintln!("{}", results.description);
    }
    eprintln!("{} on {} cores, commit {}", m.cpu, m.cores, m.commit);
    if table::any_unverified(std::slice::from_ref(results)) {
        eprintln!("{}", table::UNVERIFIED);
    }
    if !results.rows.is_empty() {
        print!("{}", table::rows_table(std::slice::from_ref(results)));
    }
    let totals = table::totals_table(results);
    if !totals.is_empty() {
        println!();
        print!("{totals}");
    }
    eprint!("{}", table::drift_lines(results));
    // On stderr only, next to the error line.
    eprint!("{}", table::failures_list(results));
}
