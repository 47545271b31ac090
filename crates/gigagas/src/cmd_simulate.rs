//! `gigagas simulate`: parse, run `gigagas_bench::simulate_dump`, print.

use crate::{
    args::{Command, SchedulerChoice, build_info, commit, dump_or_default, schedulers},
    terminal::Bar,
};
use anyhow::Result;
use gigagas_bench::{SimulateRequest, StoreFlags, plan::SimulateFlags, simulate, simulate_dump};
use gigagas_grid::{BalDesign, CacheState, IoMode, Persist, StateRootPhase};
use gigagas_report::{MachineInfo, output, provenance::Provenance};
use std::path::PathBuf;

/// Arguments of `gigagas simulate`.
///
/// Profiles every item on one thread (batch 1, ols; the median of --profile-repeats verified
/// runs), list-schedules the times onto N virtual workers in each scheduler's order, checked
/// against measured runs at --validate counts. With --state, the whole block: each store
/// point's read, items, root units and persistence, projected end to end per phase.
///
/// Example: gigagas simulate --threads 16,64,192 --batch 1,50 --scheduler all,oracle
///
/// Example: gigagas simulate DUMP --state STORE --io prefetch,pipelined --cache cold
#[derive(Debug, clap::Args)]
pub(crate) struct SimulateArgs {
    /// The dump [default: dumps/mainnet.gigagas, found from the current folder up].
    dump: Option<PathBuf>,
    /// Virtual worker counts to project.
    #[arg(long, value_delimiter = ',')]
    #[arg(default_value = "1,2,4,8,16,32,64,128,192")]
    threads: Vec<usize>,
    /// Mega-block sizes [default: 1,50; with --state, one size, default 1].
    #[arg(long, value_delimiter = ',')]
    batch: Vec<usize>,
    /// Schedulers: ols, gas-used, gas-limit, heavy-first, oracle (longest first by the
    /// profile's item times), or all [default: all,oracle; with --state one, default ols].
    #[arg(long, value_delimiter = ',')]
    scheduler: Vec<SchedulerChoice>,
    /// One-thread profiling runs (per-item medians).
    #[arg(long, default_value_t = 3)]
    profile_repeats: usize,
    /// Real thread counts at which to compare prediction with measurement.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    validate: Vec<usize>,
    /// Skip validation.
    #[arg(long)]
    no_validate: bool,
    /// A factor on every item time above one thread (e.g. 1.08) [default: as --validate measures].
    #[arg(long, conflicts_with = "state")]
    item_slowdown: Option<f64>,
    /// Warm-up runs per validation point.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Measured runs per validation point (median).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Write the simulation (projections, validations, assumptions, machine) as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write a results folder: simulation.json and table.md (`gigagas report DIR` renders it).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Simulate the whole block reading this state store (`gigagas state build`).
    #[arg(long, value_name = "DIR", help_heading = "Whole block")]
    state: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

/// The store points of the whole block (each needs --state).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Whole block")]
#[group(requires = "state", multiple = true)]
struct StoreArgs {
    /// How the store points read: prefetch, pipelined, beside (on-demand is not modelled).
    #[arg(long, value_delimiter = ',', default_value = "prefetch")]
    io: Vec<IoMode>,
    /// The access list's design of the store points: keys, full, writes.
    #[arg(long, value_delimiter = ',', default_value = "keys")]
    bal_design: Vec<BalDesign>,
    /// The state-root phase of the store points: off, after, overlapped.
    #[arg(long, value_delimiter = ',', default_value = "overlapped")]
    state_root: Vec<StateRootPhase>,
    /// Readers of a store point's reads.
    #[arg(long, default_value_t = gigagas_grid::DEFAULT_IO_THREADS)]
    io_threads: usize,
    /// The store's page cache before every pass: warm, or cold (evicted, mincore-checked).
    #[arg(long, default_value = "warm")]
    cache: CacheState,
    /// The curve capping each read: probe (the store's 4 KiB reads/s at 1, 2, 4, … --io-threads
    /// readers), none, or a CSV file (`readers,reads_per_s`) [default: probe when cold].
    #[arg(long, value_name = "probe|none|FILE")]
    device_curve: Option<String>,
    /// How points with a root commit blocks: none, block, background (reth's limits).
    #[arg(long, value_delimiter = ',', default_value = "none")]
    persist: Vec<Persist>,
}

impl Command for SimulateArgs {
    fn execute(self) -> Result<()> {
        let chosen = (!self.scheduler.is_empty()).then(|| schedulers(&self.scheduler));
        let chosen = chosen.unwrap_or_default();
        let flags = SimulateFlags {
            threads: &self.threads,
            batch: &self.batch,
            schedulers: &chosen,
            profile_repeats: self.profile_repeats,
            validate: (!self.no_validate).then_some(&self.validate[..]),
            item_slowdown: self.item_slowdown,
            whole_block: self.state.is_some(),
        };
        let store = self.state.clone().zip(Some(StoreFlags {
            io: &self.store.io,
            designs: &self.store.bal_design,
            state_root: &self.store.state_root,
            io_threads: self.store.io_threads,
            cache: self.store.cache,
            device_curve: self.store.device_curve.as_deref(),
            persist: &self.store.persist,
        }));
        let request = SimulateRequest::from_flags(flags, self.warmup, self.repeats, store)?;
        let path = dump_or_default(self.dump)?;
        for (flag, out) in [("--json", &self.json), ("--out", &self.out)] {
            let Some(out) = out else { continue };
            output::check_not_inputs(std::slice::from_ref(&path), &[(flag, out.clone())])?;
            match flag {
                "--out" => output::prepare_output_dir(out, false)?,
                _ => output::prepare_output_file(out, false)?,
            }
        }
        let provenance = Provenance::start(build_info());
        let (mut replay, record) = gigagas_bench::sweep::load_replay(&path)?;
        let machine = MachineInfo::detect(commit());
        eprintln!("{}", simulate::describe(&path, &record, &machine));
        let mut bar = Bar::new("simulating");
        let results = simulate_dump(&path, &mut replay, &record, &request, &machine, &mut bar);
        bar.finish();
        let mut results = results?;
        results.provenance = Some(provenance.finish());
        print!("{}", results.markdown());
        if let Some(out) = &self.json {
            output::write_atomic(out, results.to_json().as_bytes())?;
            eprintln!("wrote {}", out.display());
        }
        if let Some(dir) = &self.out {
            results.write_into(dir)?;
            eprintln!("wrote {}", dir.display());
        }
        Ok(())
    }
}
