//! `gigagas simulate`: profile a dump on one thread and project it onto N virtual
//! workers (logic in `gigagas-bench`'s simulator).

use crate::{
    args::{Command, SchedulerChoice, commit, flag_error, schedulers},
    terminal::Bar,
};
use anyhow::{Result, anyhow, bail};
use gigagas_bench::{
    BenchError, DeviceCurve, NonEmpty, Progress, SimulatePlan,
    plan::{self, ItemSlowdown, MAX_THREADS, MAX_VIRTUAL_WORKERS},
    simulate, whole_block,
};
use gigagas_grid::{Repetition, SchedulerKind};
use gigagas_report::{MachineInfo, SimulationReport, output, table};
use std::path::PathBuf;

/// Arguments of `gigagas simulate`.
///
/// Measures every item's time in one-thread runs (batch 1, ols; median per item over
/// `--profile-repeats` runs, each verified), then list-schedules those times onto N
/// virtual workers in each scheduler's order: projected wall time, GGas/s and
/// longest-transaction share. Predictions are checked against measured runs at
/// `--validate` thread counts. The model ignores memory bandwidth, caches, SMT and
/// scheduling overhead; its assumptions are printed with the results.
///
/// With --state, the whole block: each store point (--io × --bal-design × --state-root) is
/// profiled on one thread (each batch's read, each item, each state-root unit, warm) and
/// projected end to end by the whole-block model, per phase; validation first fits the
/// items' slowdown on memory points, then checks the store points against measured passes
/// without refitting. On-demand reads are not modelled. Each batch's read is profiled with
/// its device reads (its readers' major page faults); a device curve (--device-curve) caps
/// each read at those reads ÷ the curve's rate at the store's readers.
///
/// Example: gigagas simulate --threads 16,64,192 --batch 1,50 --scheduler all,oracle
///
/// Example: gigagas simulate DUMP --state STORE --io prefetch,pipelined --state-root after
///
/// Example: gigagas simulate DUMP --state STORE --cache cold --device-curve slow-disk.csv
#[derive(Debug, clap::Args)]
pub(crate) struct SimulateArgs {
    /// The dump (default: dumps/mainnet.gigagas, 42 real mainnet blocks, found from the
    /// current folder up, then beside the binary).
    pub dump: Option<PathBuf>,
    /// Virtual worker counts to project.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 2, 4, 8, 16, 32, 64, 128, 192])]
    pub threads: Vec<usize>,
    /// Mega-block sizes to project [default: 1,50; with --state, one size, default 1].
    #[arg(long, value_delimiter = ',')]
    pub batch: Vec<usize>,
    /// Schedulers: ols, gas-used, gas-limit, oracle (longest first by the profile's own item
    /// times), or all (the three real ones). Every projection shows the chunks a pass claims
    /// beside one item per claim [default: all,oracle; with --state, one scheduler but the
    /// oracle, default ols].
    #[arg(long, value_delimiter = ',')]
    pub scheduler: Vec<SchedulerChoice>,
    /// One-thread profiling runs (per-item medians).
    #[arg(long, default_value_t = 3)]
    pub profile_repeats: usize,
    /// Real thread counts at which to compare prediction with measurement (empty: none).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 2])]
    pub validate: Vec<usize>,
    /// Skip validation.
    #[arg(long)]
    pub no_validate: bool,
    /// How much longer every item takes above one thread than in the one-thread profile
    /// (e.g. 1.08), one factor for every projection above one thread. Default: measured per
    /// thread count in the validation runs (the median item-time ratio at each validated count
    /// over the one at 1 thread, interpolated between counts, held beyond the largest); 1
    /// without validation.
    #[arg(long, conflicts_with = "state")]
    pub item_slowdown: Option<f64>,
    /// Warm-up runs per validation point.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Measured runs per validation point (median).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Write the simulation (projections, validations, assumptions, machine) as JSON.
    #[arg(long, conflicts_with = "state")]
    pub json: Option<PathBuf>,
    /// Simulate the whole block reading this state store (`gigagas state build`): read,
    /// execution and state root per phase.
    #[arg(long, value_name = "DIR", help_heading = "Whole block")]
    pub state: Option<PathBuf>,
    /// How the store points read, comma-separated: prefetch, pipelined (on-demand reads
    /// happen inside items: not modelled, refused).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "prefetch",
        requires = "state",
        help_heading = "Whole block"
    )]
    pub io: Vec<gigagas_grid::IoMode>,
    /// The access list's design of the store points, comma-separated: keys, full, writes.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "keys",
        requires = "state",
        help_heading = "Whole block"
    )]
    pub bal_design: Vec<gigagas_grid::BalDesign>,
    /// The state-root phase of the store points, comma-separated: off, after, overlapped.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "overlapped",
        requires = "state",
        help_heading = "Whole block"
    )]
    pub state_root: Vec<gigagas_grid::StateRootPhase>,
    /// Readers of a store point's reads.
    #[arg(long, default_value_t = gigagas_grid::DEFAULT_IO_THREADS, requires = "state", help_heading = "Whole block")]
    pub io_threads: usize,
    /// The store's page cache at the start of every pass (profiling and validation):
    /// warm (after a warm-up pass: reads make next to no device reads), or cold (the store
    /// evicted before every pass, as `gigagas run --cache cold` does, and checked with
    /// mincore: a pass that was not cold is refused). Cold profiles count each batch's
    /// device reads, which a device curve caps.
    #[arg(
        long,
        default_value = "warm",
        requires = "state",
        help_heading = "Whole block"
    )]
    pub cache: gigagas_grid::CacheState,
    /// The device curve that caps each batch's read (its device reads ÷ the curve's rate
    /// at --io-threads readers): probe (random 4 KiB reads per second of the store's data
    /// file at 1, 2, 4, … --io-threads readers, cold, measured before any pass and
    /// printed), none (no cap), or a CSV file (the header `readers,reads_per_s`, then one
    /// row per reader count, counts increasing: another disk's curve) [default: probe with
    /// --cache cold, none with warm].
    #[arg(
        long,
        value_name = "probe|none|FILE",
        value_parser = parse_device_curve,
        requires = "state",
        help_heading = "Whole block"
    )]
    pub device_curve: Option<DeviceCurveChoice>,
}

/// Where `--device-curve` takes the curve from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DeviceCurveChoice {
    /// Probed on the store's data file.
    Probe,
    /// No curve: no cap.
    None,
    /// Read from a CSV file.
    File(PathBuf),
}

fn parse_device_curve(value: &str) -> Result<DeviceCurveChoice, String> {
    Ok(match value {
        "probe" => DeviceCurveChoice::Probe,
        "none" => DeviceCurveChoice::None,
        "" => return Err("expected probe, none or a CSV file".into()),
        file => DeviceCurveChoice::File(PathBuf::from(file)),
    })
}

/// How long the device probe reads at each reader count.
const CURVE_PROBE: std::time::Duration = std::time::Duration::from_millis(200);

impl SimulateArgs {
    /// The simulator's plan of these flags: every value checked as a sweep config's
    /// `[simulate]` keys are.
    fn plan(&self) -> Result<SimulatePlan> {
        let validate = if self.no_validate {
            Vec::new()
        } else {
            plan::thread_counts_or_none(&self.validate, MAX_THREADS)
                .map_err(flag_error("--validate"))?
        };
        let whole = self.state.is_some();
        let batch = match (&self.batch[..], whole) {
            ([], false) => vec![1, 50],
            ([], true) => vec![1],
            ([_], _) | (_, false) => self.batch.clone(),
            (_, true) => bail!("--batch: the whole-block simulator (--state) takes one size"),
        };
        let chosen = match (&self.scheduler[..], whole) {
            ([], false) => vec![
                SchedulerChoice::All,
                SchedulerChoice::One(SchedulerKind::Oracle),
            ],
            ([], true) => vec![SchedulerChoice::One(SchedulerKind::Ols)],
            (given, _) => given.to_vec(),
        };
        if whole && self.io.contains(&gigagas_grid::IoMode::OnDemand) {
            bail!("{}", whole_block::WholeBlockError::OnDemand);
        }
        let chosen = schedulers(&chosen);
        if whole && (chosen.len() != 1 || chosen[0] == SchedulerKind::Oracle) {
            bail!(
                "--scheduler: the whole-block simulator (--state) takes one scheduler, not the oracle"
            );
        }
        Ok(SimulatePlan {
            threads: plan::thread_counts(&self.threads, MAX_VIRTUAL_WORKERS)
                .map_err(|e| anyhow!("--threads: {e} (virtual workers)"))?,
            batch: plan::batch_sizes(&batch).map_err(flag_error("--batch"))?,
            schedulers: NonEmpty::new(chosen).expect("all by default"),
            profile_repeats: plan::profile_repeats(self.profile_repeats)
                .map_err(flag_error("--profile-repeats"))?,
            validate_threads: validate,
            item_slowdown: self
                .item_slowdown
                .map(ItemSlowdown::new)
                .transpose()
                .map_err(flag_error("--item-slowdown"))?,
        })
    }
}

impl Command for SimulateArgs {
    fn execute(self) -> Result<()> {
        let sim = self.plan()?;
        let repeats = plan::repeats(self.repeats).map_err(flag_error("--repeats"))?;
        let warmup = plan::warmup(self.warmup).map_err(flag_error("--warmup"))?;
        let path = crate::args::dump_or_default(self.dump.clone())?;
        if let Some(json) = &self.json {
            output::check_not_inputs(std::slice::from_ref(&path), &[("--json", json.clone())])?;
            output::prepare_output_file(json, false)?;
        }
        let (mut replay, record) = gigagas_bench::sweep::load_replay(&path)?;
        let machine = MachineInfo::detect(commit());
        eprintln!(
            "{}: {} blocks, {} txs, {:.3} Ggas; {} on {} cores",
            path.display(),
            record.blocks,
            record.transactions,
            record.total_gas as f64 / 1e9,
            machine.cpu,
            machine.cores
        );
        let rep = Repetition {
            warmup,
            repeats: repeats.get(),
            verify: true,
            min_sample_ns: 0,
        };
        let units = |t| gigagas_bench::progress::run_units(t, machine.cores);
        let points = sim.validation_points();
        let total = (rep.warmup + sim.profile_repeats.get()) as u64 * 1000
            + points
                .iter()
                .map(|p| units(p.threads) * (rep.warmup + rep.repeats) as u64)
                .sum::<u64>();
        if points.iter().any(|p| p.scheduler == SchedulerKind::Oracle) {
            // A measured oracle run orders by measured item times, as in a sweep: take them
            // first (the projections order by the simulator's own profile).
            eprintln!("measuring item times for the oracle's validation runs");
            gigagas_bench::bench::measure_item_times(&mut replay, true).map_err(|e| {
                BenchError::Dump {
                    path: path.clone(),
                    source: e.into(),
                }
            })?;
        }
        if let Some(dir) = &self.state {
            return self.whole_block(dir, &replay, &record, &sim, rep, &machine);
        }
        let mut bar = Bar::new("simulating");
        bar.total(total);
        bar.stage("profiling items on 1 thread, interleaved with validation runs");
        let measured =
            simulate::profile_and_measure(&replay, sim.profile_repeats, &points, rep, |c| {
                bar.advance(units(c.threads))
            });
        bar.finish();
        let (profile, mut measure) = measured.map_err(|d| BenchError::Dump {
            path: path.clone(),
            source: d.into(),
        })?;
        let report = simulate::simulate(&replay, &profile, &record, &sim, &mut measure)?;
        print!("{}", table::simulation_markdown(&report, None));
        if let Some(out) = &self.json {
            #[derive(serde::Serialize)]
            struct Out<'a> {
                machine: &'a MachineInfo,
                dump_path: String,
                simulation: &'a SimulationReport,
            }
            let text = serde_json::to_string_pretty(&Out {
                machine: &machine,
                dump_path: path.display().to_string(),
                simulation: &report,
            })?;
            output::write_atomic(out, text.as_bytes())?;
            eprintln!("wrote {}", out.display());
        }
        Ok(())
    }
}

impl SimulateArgs {
    /// The whole block (`--state`): memory validation (the slowdown's fit) when validating,
    /// then the store points profiled, projected and validated.
    fn whole_block(
        &self,
        dir: &std::path::Path,
        replay: &gigagas_bench::Replay,
        record: &gigagas_report::results::DumpRecord,
        sim: &SimulatePlan,
        rep: Repetition,
        machine: &MachineInfo,
    ) -> Result<()> {
        let reads: Vec<gigagas_grid::StoreRead> = self
            .io
            .iter()
            .flat_map(|&io| gigagas_grid::StoreRead::each(io, &self.bal_design))
            .collect();
        let points = whole_block::points(
            &reads,
            &self.state_root,
            self.cache,
            sim.batch.first().get(),
            *sim.schedulers.first(),
        )?;
        let io_threads = plan::thread_counts(&[self.io_threads], MAX_THREADS)
            .map_err(flag_error("--io-threads"))?;
        let checksum = u64::from_str_radix(&record.checksum, 16).unwrap_or_default();
        // A bad curve file is refused before the store is opened or anything runs.
        let choice = self.device_curve.clone().unwrap_or(match self.cache {
            gigagas_grid::CacheState::Cold => DeviceCurveChoice::Probe,
            gigagas_grid::CacheState::Warm => DeviceCurveChoice::None,
        });
        let mut device = match &choice {
            DeviceCurveChoice::File(file) => {
                let curve = DeviceCurve::read_csv(file)?;
                eprintln!("device curve from {}: {}", file.display(), curve.summary());
                Some(curve)
            }
            DeviceCurveChoice::Probe | DeviceCurveChoice::None => None,
        };
        let mut store = gigagas_bench::StoreContext::open(dir, checksum, *io_threads.first())
            .map_err(|e| anyhow!("{}: {e}", dir.display()))?;
        if choice == DeviceCurveChoice::Probe {
            let curve = whole_block::probe_device_curve(&mut store, CURVE_PROBE)
                .map_err(|e| anyhow!("{}: {e}", dir.display()))?;
            eprintln!(
                "device curve of {} (probed): {}",
                dir.display(),
                curve.summary()
            );
            device = Some(curve);
        }
        let units = |t| gigagas_bench::progress::run_units(t, machine.cores);
        let mut cost = None;
        if !sim.validate_threads.is_empty() {
            // The free term, fitted on memory points only.
            let memory = sim.validation_points();
            let mut bar = Bar::new("memory points");
            bar.total(
                (rep.warmup + sim.profile_repeats.get()) as u64 * 1000
                    + memory
                        .iter()
                        .map(|p| units(p.threads) * (rep.warmup + rep.repeats) as u64)
                        .sum::<u64>(),
            );
            let measured =
                simulate::profile_and_measure(replay, sim.profile_repeats, &memory, rep, |c| {
                    bar.advance(units(c.threads))
                });
            bar.finish();
            let (profile, mut measure) = measured?;
            let report = simulate::simulate(replay, &profile, record, sim, &mut measure)?;
            print!("{}", table::simulation_markdown(&report, None));
            cost = whole_block::memory_cost(&report, replay.items().len());
        }
        let plan = whole_block::WholeBlockPlan {
            points,
            threads: sim.threads.to_vec(),
            validate: sim.validate_threads.clone(),
            profile_runs: sim.profile_repeats,
            rep,
            cores: machine.cores,
            device,
        };
        let mut bar = Bar::new("whole block");
        let per_point = (rep.warmup + sim.profile_repeats.get()) as u64 * 1000
            + plan
                .validate
                .iter()
                .map(|&t| units(t) * (rep.warmup + rep.repeats) as u64)
                .sum::<u64>();
        bar.total(per_point * plan.points.len() as u64);
        let report =
            whole_block::simulate_whole_block(replay, &mut store, &plan, cost.as_ref(), |c| {
                bar.advance(units(c.threads))
            });
        bar.finish();
        print!("{}", report?.markdown());
        Ok(())
    }
}
