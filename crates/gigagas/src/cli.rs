//! Command-line parsing and dispatch. Logic lives in the library crates.

use alloy_hardforks::EthereumHardfork;
use anyhow::{Result, bail};
use clap::{Parser, Subcommand};
use gigagas_executor::{Repetition, Replay, RunConfig, SchedulerKind, Summary};
use gigagas_workload::{GeneratorConfig, Profile};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::{
    path::{Path, PathBuf},
    process::ExitCode,
    time::Instant,
};

/// The default dump, relative to a checkout: 42 real mainnet blocks (Frontier to Cancun).
pub(crate) const DEFAULT_DUMP: &str = "dumps/mainnet.gigagas";

/// The dump a command was given, or else the default one, found at run time: in the
/// checkout around the current folder (the current folder and its parents), then beside the
/// executable (and its parents, which covers `target/release/gigagas`), then in the source
/// tree this binary was built from.
pub(crate) fn dump_or_default(given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(path) = given {
        return Ok(path);
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.extend(cwd.ancestors().map(Path::to_path_buf));
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        roots.extend(dir.ancestors().map(Path::to_path_buf));
    }
    roots.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    for root in roots {
        let candidate = root.join(DEFAULT_DUMP);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    bail!(
        "no dump given and the default {DEFAULT_DUMP} was not found in the current folder, beside the executable \
         or in their parents; pass a dump file (e.g. `gigagas run path/to/mainnet.gigagas`) or run from a gigagas checkout"
    )
}

#[derive(Parser)]
#[command(
    name = "gigagas",
    version,
    about = "How fast can Ethereum blocks execute when a block access list (EIP-7928) tells every \
             transaction its inputs up front?",
    long_about = "gigagas replays blocks from a self-contained dump on revm. Every transaction runs on \
                  its own view of state (the pre-state overlaid with the block access list's writes \
                  from earlier transactions), so all transactions run in parallel with no speculation \
                  and no re-execution. Every replay is verified against the receipts and the access \
                  lists; a wrong execution never produces a number.\n\n\
                  Start with:  gigagas run            (the default benchmark: 42 real mainnet blocks)\n\
                  then:        gigagas inspect DUMP   (what is in a dump)\n\
                  and:         gigagas generate -h    (make your own workloads)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Make a dump by executing a synthetic workload from a fresh genesis.
    ///
    /// Deterministic: the same profile, seed, block count, gas and fork give a
    /// byte-identical file. The embedded default dump is
    /// `gigagas generate --profile mainnet-like --blocks 100 --seed 1 -o dumps/mainnet-like.gigagas`.
    Generate {
        /// Workload profile: mainnet-like, transfers, erc20, amm, heavy-tail, adversarial.
        #[arg(long, default_value = "mainnet-like", value_parser = parse_profile)]
        profile: Profile,
        /// Number of blocks.
        #[arg(long, default_value_t = 100)]
        blocks: u64,
        /// Gas target per block.
        #[arg(long, default_value_t = 25_000_000)]
        gas_per_block: u64,
        /// Seed of the random choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Fork rules: cancun, prague or osaka.
        #[arg(long, default_value = "prague", value_parser = parse_fork)]
        fork: EthereumHardfork,
        /// Number of funded accounts that send transactions.
        #[arg(long, default_value_t = 4_000)]
        users: usize,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Replay a dump in parallel on its block access lists, verify it, and print throughput.
    ///
    /// Every grid point (threads × batch × scheduler) runs `--warmup` times, then
    /// `--repeats` times; every run is verified (gas and status against the receipts,
    /// writes against the BAL) outside its timed window, and any divergence stops the
    /// benchmark with an error. The sequential baseline (one revm State, no BAL, as a
    /// client executes today) runs first; speedups are relative to it.
    ///
    /// Columns: GGas/s is the median repeat [min-max]; longest tx = sum over batches of
    /// the slowest transaction; bound = sum over batches of max(slowest tx, batch work /
    /// threads), the critical-path lower bound on wall time; eff = bound / wall.
    ///
    /// Example: gigagas run --threads 1,2 --batch 1,50 --scheduler ols,gas-used
    Run(RunArgs),
    /// Export a block range from a JSON-RPC node into a dump (blocks, receipts, BALs,
    /// block hashes and the pre-state the range touches), verified while dumping.
    Dump(crate::cmd_dump::DumpArgs),
    /// Turn external fixtures (Ethereum BlockchainTests) into dumps, checked against their
    /// expected post-state.
    Import(crate::cmd_import::ImportArgs),
    /// Run a benchmark sweep from a bench-configs/*.toml file and write results/<name>/...
    /// (results.json, results.csv, table.md, SVG plots).
    Sweep(crate::cmd_sweep::SweepArgs),
    /// Re-render tables and plots from results folders; several folders merge into one
    /// table (a row per machine and grid point).
    Report(crate::cmd_sweep::ReportArgs),
    /// Project throughput on machines with more cores: list-schedule per-transaction times
    /// measured on one thread onto N virtual workers.
    Simulate(crate::cmd_sweep::SimulateArgs),
    /// Print a summary of a dump: blocks, transactions, gas, pre-state and BAL sizes.
    Inspect {
        /// The dump file (default: dumps/mainnet.gigagas, 42 real mainnet blocks).
        dump: Option<PathBuf>,
    },
}

/// Arguments of `gigagas run`.
#[derive(clap::Args)]
struct RunArgs {
    /// The dump to replay (default: dumps/mainnet.gigagas, 42 real mainnet blocks; the
    /// synthetic workload is dumps/mainnet-like.gigagas).
    dump: Option<PathBuf>,
    /// Worker thread counts to sweep, comma-separated (default: 1 up to the core count).
    #[arg(long, value_delimiter = ',')]
    threads: Vec<usize>,
    /// Mega-block sizes (blocks merged into one parallel unit) to sweep.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 50])]
    batch: Vec<usize>,
    /// Schedulers to sweep: ols (block order), gas-used (largest first), gas-limit.
    #[arg(long, value_delimiter = ',', default_values = ["ols", "gas-used", "gas-limit"])]
    scheduler: Vec<SchedulerKind>,
    /// Runs per point before the measured ones (verified, not reported).
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Measured runs per point: the table shows the median and the range.
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// Recover every sender from its signature inside the timed work.
    #[arg(long)]
    recover_senders: bool,
    /// Run only the sequential baseline (one revm State, no BAL).
    #[arg(long)]
    sequential: bool,
    /// Skip the sequential baseline.
    #[arg(long, conflicts_with = "sequential")]
    no_baseline: bool,
    /// Skip verification (only to measure what verification costs; numbers are unverified).
    #[arg(long)]
    no_verify: bool,
    /// Write every row (all repeats, machine info, dump checksum) as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn parse_profile(s: &str) -> Result<Profile, String> {
    s.parse()
}

fn parse_fork(s: &str) -> Result<EthereumHardfork, String> {
    match s.to_ascii_lowercase().as_str() {
        "cancun" => Ok(EthereumHardfork::Cancun),
        "prague" => Ok(EthereumHardfork::Prague),
        "osaka" => Ok(EthereumHardfork::Osaka),
        _ => Err(format!(
            "unsupported fork `{s}` (expected cancun, prague or osaka)"
        )),
    }
}

/// Entry point: run the command, print one error line on failure.
pub(crate) fn main() -> ExitCode {
    exit_quietly_on_closed_pipe();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{what} {{bar:40}} {{pos}}/{{len}} [{{elapsed_precise}} < {{eta_precise}}] {{msg}}"
        ))
        .expect("valid template"),
    );
    bar
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Generate {
            profile,
            blocks,
            gas_per_block,
            seed,
            fork,
            users,
            output,
        } => {
            let config = GeneratorConfig {
                profile,
                blocks,
                gas_per_block,
                seed,
                fork,
                users,
            };
            let bar = progress(blocks, "generating");
            let start = Instant::now();
            let dump = gigagas_workload::generate(&config, |done, _| bar.set_position(done))?;
            bar.finish_and_clear();
            let info = gigagas_dump::write_dump(&dump, &output)?;
            eprintln!("{}", written(&output, &dump, &info, start));
            Ok(())
        }
        Command::Run(args) => run_bench(args),
        Command::Dump(args) => crate::cmd_dump::run(args),
        Command::Import(args) => crate::cmd_import::run(args),
        Command::Sweep(args) => crate::cmd_sweep::sweep(args),
        Command::Report(args) => crate::cmd_sweep::report(args),
        Command::Simulate(args) => crate::cmd_sweep::simulate(args),
        Command::Inspect { dump } => {
            let path = dump_or_default(dump)?;
            if !path.exists() {
                bail!("{}: no such file", path.display());
            }
            let (dump, info) = gigagas_dump::read_dump(&path)?;
            println!(
                "file              {} ({:.2} MB, checksum {})",
                path.display(),
                info.size as f64 / 1e6,
                info.checksum_hex()
            );
            println!("{}", dump.summary());
            Ok(())
        }
    }
}

/// `gigagas inspect | head` closes stdout early: end quietly like other command-line tools
/// (the default SIGPIPE action) instead of panicking in `println!`.
fn exit_quietly_on_closed_pipe() {
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
        dump.blocks.len(),
        dump.transaction_count(),
        dump.total_gas() as f64 / 1e9,
        info.size as f64 / 1e6,
        info.checksum_hex(),
        start.elapsed().as_secs_f64()
    )
}

/// One row of `gigagas run` output, with everything needed to reproduce it.
#[derive(Serialize)]
struct Row {
    dump: String,
    dump_checksum: String,
    mode: &'static str,
    threads: usize,
    batch: usize,
    scheduler: String,
    recover_senders: bool,
    warmup: usize,
    repeats: usize,
    verified: bool,
    total_gas: u64,
    avg_batch_gas: f64,
    speedup_vs_sequential: Option<f64>,
    summary: Summary,
    machine: crate::machine::MachineInfo,
}

fn run_bench(args: RunArgs) -> Result<()> {
    let path = dump_or_default(args.dump.clone())?;
    if args.repeats == 0 {
        bail!("--repeats must be at least 1");
    }
    if args.threads.contains(&0) {
        bail!("--threads: 0 is not a thread count");
    }
    if args.batch.contains(&0) {
        bail!("--batch: 0 is not a batch size");
    }
    let load = Instant::now();
    let (dump, info) = gigagas_dump::read_dump(&path)?;
    let replay = Replay::new(&dump).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let name = dump.meta.name.clone();
    drop(dump);
    let machine = crate::machine::MachineInfo::detect();
    let threads = if args.threads.is_empty() {
        (1..=machine.cores).collect()
    } else {
        args.threads.clone()
    };
    eprintln!(
        "{}: {} blocks, {} txs, {:.3} Ggas, loaded in {:.2} s; {} on {} cores",
        path.display(),
        replay.blocks.len(),
        replay.transaction_count(),
        replay.total_gas() as f64 / 1e9,
        load.elapsed().as_secs_f64(),
        machine.cpu,
        machine.cores
    );
    let rep = Repetition {
        warmup: args.warmup,
        repeats: args.repeats,
        verify: !args.no_verify,
    };
    let mut points = Vec::new();
    if !args.sequential {
        for &t in &threads {
            for &b in &args.batch {
                for &s in &args.scheduler {
                    points.push(RunConfig {
                        threads: t,
                        batch: b,
                        scheduler: s,
                        recover_senders: args.recover_senders,
                    });
                }
            }
        }
    }
    let with_baseline = !args.no_baseline;
    let runs = (points.len() + with_baseline as usize) * (rep.warmup + rep.repeats);
    let bar = progress(runs as u64, "running");
    let mut rows = Vec::new();
    let row = |mode, threads, batch, scheduler: String, summary: Summary, speedup| Row {
        dump: name.clone(),
        dump_checksum: info.checksum_hex(),
        mode,
        threads,
        batch,
        scheduler,
        recover_senders: args.recover_senders,
        warmup: rep.warmup,
        repeats: rep.repeats,
        verified: rep.verify,
        total_gas: replay.total_gas(),
        avg_batch_gas: replay.total_gas() as f64 / replay.batches(batch).len() as f64,
        speedup_vs_sequential: speedup,
        summary,
        machine: machine.clone(),
    };
    let mut baseline = None;
    if with_baseline {
        bar.set_message("sequential baseline");
        let s = replay
            .bench_sequential(args.recover_senders, rep, || bar.inc(1))
            .map_err(|d| anyhow::anyhow!("{}: {d}", path.display()))?;
        baseline = Some(s.median.ggas_per_s);
        rows.push(row("sequential", 1, 1, "-".into(), s, Some(1.0)));
    }
    for p in &points {
        bar.set_message(format!(
            "{} threads, batch {}, {}",
            p.threads, p.batch, p.scheduler
        ));
        let s = replay
            .bench_parallel(p, rep, || bar.inc(1))
            .map_err(|d| anyhow::anyhow!("{}: {d}", path.display()))?;
        let speedup = baseline.map(|b| s.median.ggas_per_s / b);
        rows.push(row(
            "bal-parallel",
            p.threads,
            p.batch,
            p.scheduler.to_string(),
            s,
            speedup,
        ));
    }
    bar.finish_and_clear();
    print_table(&rows);
    if let Some(out) = &args.json {
        let text = serde_json::to_string_pretty(&rows)?;
        std::fs::write(out, text).map_err(|e| anyhow::anyhow!("{}: {e}", out.display()))?;
        eprintln!("wrote {}", out.display());
    }
    Ok(())
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<12} {:>7} {:<9} {:>5} {:>10} {:>22} {:>10} {:>9} {:>9} {:>5} {:>7} {:>14}",
        "mode",
        "threads",
        "scheduler",
        "batch",
        "avg Mgas",
        "GGas/s [min-max]",
        "longest",
        "total",
        "bound",
        "eff",
        "speedup",
        "tx p50/p99 us"
    );
    for r in rows {
        let m = &r.summary.median;
        println!(
            "{:<12} {:>7} {:<9} {:>5} {:>10.1} {:>22} {:>9.3}s {:>8.3}s {:>8.3}s {:>5.2} {:>7} {:>14}",
            r.mode,
            r.threads,
            r.scheduler,
            r.batch,
            r.avg_batch_gas / 1e6,
            format!(
                "{:.3} [{:.3}-{:.3}]",
                m.ggas_per_s, r.summary.min_ggas_per_s, r.summary.max_ggas_per_s
            ),
            m.longest_tx_s,
            m.wall_s,
            m.bound_s,
            m.efficiency,
            r.speedup_vs_sequential
                .map(|s| format!("{s:.2}x"))
                .unwrap_or_default(),
            format!(
                "{:.0}/{:.0}",
                r.summary.tx_us_p50_p99_max.0, r.summary.tx_us_p50_p99_max.1
            ),
        );
    }
}
