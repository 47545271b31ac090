//! The command line's arguments and dispatch: the one file that names every subcommand.
//! Each subcommand is a module `cmd_*` whose arguments implement [`Command`]; what the
//! subcommands share is in [`crate::args`], logic lives in the library crates, and what is
//! printed to the terminal in [`crate::terminal`].

use crate::{args::Command, terminal};
use anyhow::Result;
use clap::Parser;
use std::process::ExitCode;

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
    command: Subcommand,
}

#[derive(clap::Subcommand)]
enum Subcommand {
    /// Make a dump by executing a synthetic workload from a fresh genesis.
    ///
    /// Deterministic: the same profile, seed, block count, gas and fork give a
    /// byte-identical file. The committed synthetic dump is
    /// `gigagas generate --profile mainnet-like --blocks 100 --seed 1 -o dumps/mainnet-like.gigagas`.
    Generate(crate::cmd_generate::GenerateArgs),
    /// Replay dumps in parallel on their block access lists, verify them, and print throughput.
    ///
    /// DUMPS are dump files and/or folders of dumps (every `*.gigagas` directly inside,
    /// sorted by name); all are loaded first (in parallel, before anything is timed), then
    /// the same grid runs on each. Every grid point (threads × batch × scheduler) gets
    /// `--warmup` single passes, then `--repeats` measured samples: a sample replays the
    /// dump until its timed passes add up to `--min-sample-ms` (a 10 ms block is replayed
    /// about ten times), and its figures are per pass. Every pass is verified (gas and
    /// status against the receipts, writes against the BAL) outside its timed window. The
    /// sequential baseline (one revm State, no BAL, as a client executes today) runs
    /// first; speedups are relative to it.
    ///
    /// Timed work, the same on both paths: per transaction, execute it and produce its
    /// state changes (the sequential loop commits them to its State; the replay returns
    /// them for verification); per block, the system calls, rewards and withdrawals.
    /// Nothing else, unless asked: --recover-senders adds sender recovery, --receipts a
    /// receipt with its logs bloom per transaction — on both paths alike. The replay's
    /// window also holds its scheduler's ordering. Loading, worker start-up and
    /// verification are outside both windows.
    ///
    /// Output: a row per dump and grid point; with several dumps, a suite total per grid
    /// point (total gas / total time, and the geometric mean of the per-dump speedups). A
    /// dump that fails to load or verify gets a FAIL line with the reason, the other dumps
    /// still run, and the exit code is 1.
    ///
    /// Columns: MGas/s is the median sample [min–max]; longest tx = sum over batches of
    /// the slowest transaction; bound = sum over batches of max(slowest tx, batch work /
    /// threads), the critical-path lower bound on wall time; eff = bound / wall;
    /// passes/sample = replays per measured sample.
    ///
    /// Example: gigagas run --threads 1,2 --batch 1,50 --scheduler ols,gas-used
    ///
    /// A suite: gigagas run dumps/benchmark-compute --threads 1 --batch 1 --out /tmp/bc
    Run(Box<crate::cmd_run::RunArgs>),
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
    Report(crate::cmd_report::ReportArgs),
    /// Project throughput on machines with more cores: list-schedule per-transaction times
    /// measured on one thread onto N virtual workers.
    Simulate(crate::cmd_simulate::SimulateArgs),
    /// Compare two runs, or two builds, point by point: is NEW faster than OLD, beyond the noise?
    ///
    /// OLD and NEW are results.json files or results folders (from `gigagas sweep`, or
    /// `gigagas run --json FILE` / `--out DIR`). For every dump and grid point measured in
    /// both: OLD and NEW MGas/s (median sample), NEW/OLD with a 95 % interval (percentile
    /// bootstrap over the samples of both, 10,000 resamples, fixed seed, so the same two
    /// runs always print the same figures), and a verdict: faster when the whole interval
    /// lies above 1 + threshold, slower when below 1 − threshold, else within noise. Then
    /// the points measured in one run only, and a summary line with the geometric mean.
    ///
    /// Refuses two runs of different dumps (same name, different checksum) or of different
    /// timed work, naming the difference. More samples (`--repeats`) narrow the intervals.
    ///
    /// Example: gigagas compare results/mainnet/OLD-FOLDER results/mainnet/NEW-FOLDER
    ///
    /// In CI: gigagas compare base.json head.json --fail-on-regression 5   (exit 1 if a
    /// point lost more than 5 %)
    ///
    /// A/B of two builds: gigagas compare --against OLD_BINARY (options) -- RUN_ARGS...
    /// runs the same points in OLD_BINARY and in this binary (NEW, or --new-binary), each
    /// as `gigagas run RUN_ARGS --repeats N` (N = --samples, 1 by default; a round's figure
    /// is the median sample), alternately: in --rounds rounds, ABBA (OLD then NEW in odd
    /// rounds, NEW then OLD in even ones). Each point's NEW/OLD is taken round by round;
    /// its median gets a 95 % distribution-free interval and the verdict above. It writes
    /// results.json and table.md, which name both builds' commits, to --out (default
    /// results/ab/<date>-<NEW's commit>). --old-args/--new-args give one build arguments of
    /// its own (e.g. --new-args=--receipts, to measure what receipts cost).
    ///
    /// Example: gigagas compare --against /tmp/gigagas-old -- --threads 1,2
    Compare(crate::cmd_compare::CompareArgs),
    /// Print a summary of a dump: blocks, transactions, gas, pre-state and BAL sizes.
    Inspect(crate::cmd_inspect::InspectArgs),
    /// Keep only the witness nodes the state roots need (a root-only witness).
    ///
    /// Producers write a witness that proves every account and slot a block accesses; a
    /// root needs only the paths of the values a block changes (the net change over the
    /// block) and the siblings deletions collapse onto. Every block's root from the pruned
    /// witness is the one from the full witness; `gigagas inspect` shows both sizes per block.
    ///
    /// Example: gigagas prune-witness dumps/mainnet-like-witness.gigagas -o /tmp/root-only.gigagas
    PruneWitness(crate::cmd_prune_witness::PruneWitnessArgs),
    /// State stores on disk: `gigagas state build DUMP -o DIR [--pad-to SIZE]` writes a
    /// dump's pre-state in reth's flat tables (MDBX), for `gigagas run --state DIR`.
    State(crate::cmd_state::StateArgs),
}

impl Command for Subcommand {
    fn execute(self) -> Result<()> {
        match self {
            Subcommand::Generate(args) => args.execute(),
            Subcommand::Run(args) => args.execute(),
            Subcommand::Dump(args) => args.execute(),
            Subcommand::Import(args) => args.execute(),
            Subcommand::Sweep(args) => args.execute(),
            Subcommand::Report(args) => args.execute(),
            Subcommand::Simulate(args) => args.execute(),
            Subcommand::Compare(args) => args.execute(),
            Subcommand::Inspect(args) => args.execute(),
            Subcommand::State(args) => args.execute(),
            Subcommand::PruneWitness(args) => args.execute(),
        }
    }
}

/// Entry point: run the command, print one error line on failure.
pub(crate) fn main() -> ExitCode {
    terminal::exit_quietly_on_closed_pipe();
    let cli = Cli::parse();
    match cli.command.execute() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", terminal::error_line(&e));
            ExitCode::FAILURE
        }
    }
}
