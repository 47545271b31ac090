//! `gigagas sweep`: load a sweep config into its plan, run it, write the results folder
//! (logic in `gigagas-bench`).

use crate::{
    args::{Command, commit, flag_error},
    terminal::{Bar, fail_on_failures, print_results},
};
use anyhow::Result;
use gigagas_bench::{SweepOptions, plan::MinSample, run_sweep};
use gigagas_report::{folder, machine::MachineInfo, output, table};
use std::path::PathBuf;

/// Arguments of `gigagas sweep`.
///
/// Runs every grid point of a sweep config (`bench-configs/*.toml`, format in
/// `bench-configs/README.md`), each run verified, and writes
/// `<results-dir>/<name>/<YYYY-MM-DD>-<commit>/` atomically: results.json (every repeat,
/// machine, dump checksums), results.csv, table.md and SVG plots.
///
/// Example: gigagas sweep bench-configs/schedulers.toml --note "idle 16-core desktop"
#[derive(Debug, clap::Args)]
pub(crate) struct SweepArgs {
    /// The sweep config (TOML). Dump paths in it are relative to its folder.
    pub config: PathBuf,
    /// Root of the results folders.
    #[arg(long, default_value = "results")]
    pub results_dir: PathBuf,
    /// A note on the conditions (e.g. "shared VM, other builds running"), kept with the
    /// machine facts.
    #[arg(long)]
    pub note: Option<String>,
    /// Override the config's warm-up runs per point.
    #[arg(long)]
    pub warmup: Option<usize>,
    /// Override the config's measured samples per point.
    #[arg(long)]
    pub repeats: Option<usize>,
    /// Override the config's minimum timed length of a sample, milliseconds.
    #[arg(long)]
    pub min_sample_ms: Option<u64>,
    /// Validate the config and print the grid, without running anything.
    #[arg(long)]
    pub dry_run: bool,
}

impl Command for SweepArgs {
    fn execute(self) -> Result<()> {
        let mut sweep = gigagas_bench::load(&self.config)?;
        let plan = &mut sweep.plan;
        if let Some(w) = self.warmup {
            plan.warmup = gigagas_bench::plan::warmup(w).map_err(flag_error("--warmup"))?;
        }
        if let Some(r) = self.repeats {
            plan.repeats = gigagas_bench::plan::repeats(r).map_err(flag_error("--repeats"))?;
        }
        if let Some(ms) = self.min_sample_ms {
            plan.min_sample = MinSample::from_ms(ms).map_err(flag_error("--min-sample-ms"))?;
        }
        // Before any work (a dry run included): the results folder is no input, and it can
        // be created and written.
        let results_parent = self.results_dir.join(&sweep.name);
        let mut inputs: Vec<PathBuf> = plan.dumps.iter().map(|d| d.path.clone()).collect();
        inputs.push(self.config.clone());
        output::check_not_inputs(&inputs, &[("--results-dir", results_parent.clone())])?;
        output::prepare_output_dir(&results_parent, self.dry_run)?;
        let points = plan.points(MachineInfo::detect_cores());
        eprintln!(
            "{}: {} dump(s) × {} grid points{}, {} warm-up pass(es) + {} samples of at least {} ms each{}",
            self.config.display(),
            plan.dumps.len(),
            points.len(),
            if plan.baseline {
                " + sequential baseline"
            } else {
                ""
            },
            plan.warmup,
            plan.repeats,
            plan.min_sample.ms(),
            if plan.simulate.is_some() {
                ", then the schedule simulator"
            } else {
                ""
            }
        );
        if self.dry_run {
            for d in plan.dumps.iter() {
                eprintln!(
                    "  dump {}",
                    table::escape_name(&d.path.display().to_string())
                );
            }
            eprintln!(
                "  results into {} (writable)",
                table::escape_name(&results_parent.display().to_string())
            );
            for p in &points {
                eprintln!("  {p}");
            }
            return Ok(());
        }
        let options = SweepOptions {
            commit: commit(),
            note: self.note.clone(),
            build: Some(crate::args::build_info()),
        };
        let mut bar = Bar::new("sweeping");
        let results = run_sweep(&sweep, &options, &mut bar);
        bar.finish();
        let dir = folder::write_results_dir(&self.results_dir, &results)?;
        print_results(&results, true);
        eprintln!("wrote {}", dir.display());
        fail_on_failures(&results, sweep.plan.dumps.len())
    }
}
