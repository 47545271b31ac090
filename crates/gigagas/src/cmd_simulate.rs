//! `gigagas simulate`: profile a dump on one thread and project it onto N virtual
//! workers (logic in `gigagas-bench`'s simulator).

use crate::{
    cli::{Command, SchedulerChoice, commit, schedulers},
    cmd_run::flag_error,
    terminal::Bar,
};
use anyhow::{Result, anyhow};
use gigagas_bench::{
    BenchError, NonEmpty, Progress, SimulatePlan,
    plan::{self, ItemSlowdown, MAX_THREADS, MAX_VIRTUAL_WORKERS},
    simulate,
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
/// Example: gigagas simulate --threads 16,64,192 --batch 1,50 --scheduler all,oracle
#[derive(Debug, clap::Args)]
pub(crate) struct SimulateArgs {
    /// The dump (default: dumps/mainnet.gigagas, 42 real mainnet blocks, found from the
    /// current folder up, then beside the binary).
    pub dump: Option<PathBuf>,
    /// Virtual worker counts to project.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 2, 4, 8, 16, 32, 64, 128, 192])]
    pub threads: Vec<usize>,
    /// Mega-block sizes to project.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 50])]
    pub batch: Vec<usize>,
    /// Schedulers: ols, gas-used, gas-limit, oracle (longest first by the profile's own item
    /// times), or all (the three real ones). Every projection shows the chunks a pass claims
    /// beside one item per claim.
    #[arg(long, value_delimiter = ',', default_values = ["all", "oracle"])]
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
    #[arg(long)]
    pub item_slowdown: Option<f64>,
    /// Warm-up runs per validation point.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Measured runs per validation point (median).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Write the simulation (projections, validations, assumptions, machine) as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

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
        Ok(SimulatePlan {
            threads: plan::thread_counts(&self.threads, MAX_VIRTUAL_WORKERS)
                .map_err(|e| anyhow!("--threads: {e} (virtual workers)"))?,
            batch: plan::batch_sizes(&self.batch).map_err(flag_error("--batch"))?,
            schedulers: NonEmpty::new(schedulers(&self.scheduler)).expect("all by default"),
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
        let path = crate::cli::dump_or_default(self.dump.clone())?;
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
