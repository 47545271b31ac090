//! `gigagas sweep`, `gigagas report` and `gigagas simulate`: thin shells over
//! `gigagas-report`.

use crate::cli::{Bar, commit};
use anyhow::{Context, Result, bail};
use gigagas_executor::{Repetition, SchedulerKind};
use gigagas_report::{
    SweepConfig, SweepOptions,
    config::{MAX_THREADS, MAX_VIRTUAL_WORKERS, check_min_sample_ms, check_thread_counts},
    folder, output, run_sweep, simulate, table,
};
use std::path::{Path, PathBuf};

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

/// Arguments of `gigagas report`.
///
/// With one results folder: re-render its table.md, results.csv and plots from its
/// results.json. With several (e.g. the same sweep on several machines): print one table
/// with a row per machine and grid point; `--out DIR` also writes the merged table, CSV
/// and plots there.
#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// Results folders (each holding a results.json).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where to write the merged report (several folders), or an output folder other than
    /// the results folder itself (one folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `gigagas simulate`.
///
/// Measures every item's time in one-thread runs (batch 1, ols; median per item over
/// `--profile-repeats` runs, each verified), then list-schedules those times onto N
/// virtual workers in each scheduler's order: projected wall time, GGas/s and
/// longest-transaction share. Predictions are checked against measured runs at
/// `--validate` thread counts. The model ignores memory bandwidth, caches, SMT and
/// scheduling overhead; its assumptions are printed with the results.
///
/// Example: gigagas simulate --threads 16,64,192 --batch 1,50 --scheduler all
#[derive(Debug, clap::Args)]
pub(crate) struct SimulateArgs {
    /// The dump (default: the embedded mainnet-like dump).
    pub dump: Option<PathBuf>,
    /// Virtual worker counts to project.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 2, 4, 8, 16, 32, 64, 128, 192])]
    pub threads: Vec<usize>,
    /// Mega-block sizes to project.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 50])]
    pub batch: Vec<usize>,
    /// Schedulers: ols, gas-used, gas-limit, or all.
    #[arg(long, value_delimiter = ',', default_values = ["all"])]
    pub scheduler: Vec<String>,
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
    /// (e.g. 1.08), applied to every projection above one thread. Default: measured in the
    /// validation runs (median item-time ratio at the largest validated thread count over
    /// the one at 1 thread); 1 without validation.
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

/// `gigagas sweep CONFIG`.
pub(crate) fn sweep(args: SweepArgs) -> Result<()> {
    let mut sweep = SweepConfig::load(&args.config)?;
    if let Some(w) = args.warmup {
        sweep.config.warmup = w;
    }
    if let Some(r) = args.repeats {
        if r == 0 {
            bail!("--repeats must be at least 1");
        }
        sweep.config.repeats = r;
    }
    if let Some(ms) = args.min_sample_ms {
        check_min_sample_ms(ms).map_err(|m| anyhow::anyhow!("--min-sample-ms: {m}"))?;
        sweep.config.min_sample_ms = ms;
    }
    // Before any work (a dry run included): the results folder is no input, and it can be
    // created and written.
    let results_parent = args.results_dir.join(&sweep.name);
    let mut inputs = sweep.dump_paths.clone();
    inputs.push(args.config.clone());
    output::check_not_inputs(&inputs, &[("--results-dir", results_parent.clone())])?;
    output::prepare_output_dir(&results_parent, args.dry_run)?;
    let c = &sweep.config;
    let points = c.points();
    eprintln!(
        "{}: {} dump(s) × {} grid points{}, {} warm-up pass(es) + {} samples of at least {} ms each{}",
        args.config.display(),
        sweep.dump_paths.len(),
        points.len(),
        if c.sequential {
            " + sequential baseline"
        } else {
            ""
        },
        c.warmup,
        c.repeats,
        c.min_sample_ms,
        if c.simulate.is_some() {
            ", then the schedule simulator"
        } else {
            ""
        }
    );
    if args.dry_run {
        for d in &sweep.dump_paths {
            eprintln!("  dump {}", table::escape_name(&d.display().to_string()));
        }
        eprintln!(
            "  results into {} (writable)",
            table::escape_name(&results_parent.display().to_string())
        );
        for p in &points {
            eprintln!(
                "  {} threads, batch {}, {}{}",
                p.threads,
                p.batch,
                p.scheduler,
                if p.recover_senders {
                    ", senders recovered"
                } else {
                    ""
                }
            );
        }
        return Ok(());
    }
    let options = SweepOptions {
        commit: commit(),
        note: args.note.clone(),
        build: Some(crate::cli::build_info()),
    };
    let mut bar = Bar::new("sweeping");
    let results = run_sweep(&sweep, &options, &mut bar);
    bar.0.finish_and_clear();
    let results = results?;
    let dir = folder::write_results_dir(&args.results_dir, &results)?;
    if table::any_unverified(std::slice::from_ref(&results)) {
        eprintln!("{}", table::UNVERIFIED);
    }
    if !results.rows.is_empty() {
        print!("{}", table::rows_table(std::slice::from_ref(&results)));
    }
    let totals = table::totals_table(&results);
    if !totals.is_empty() {
        println!();
        print!("{totals}");
    }
    for sim in &results.simulations {
        println!();
        print!("{}", table::simulation_markdown(sim, None));
    }
    eprint!("{}", table::drift_lines(&results));
    // On stderr only, next to the error line.
    eprint!("{}", table::failures_list(&results));
    eprintln!("wrote {}", dir.display());
    if !results.failures.is_empty() {
        bail!(
            "{}",
            crate::cmd_run::failed_line(&results, sweep.dump_paths.len())
        );
    }
    Ok(())
}

/// `gigagas report DIR...`.
pub(crate) fn report(args: ReportArgs) -> Result<()> {
    // The results.json files read are inputs; the files written (into the one folder, or
    // into --out) must not be one of them.
    let inputs: Vec<PathBuf> = args
        .dirs
        .iter()
        .map(|d| {
            if d.is_dir() {
                d.join("results.json")
            } else {
                d.clone()
            }
        })
        .collect();
    let target = match (&args.dirs[..], &args.out) {
        ([dir], None) if !dir.is_dir() => dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
        ([dir], None) => dir.clone(),
        (_, Some(out)) => out.clone(),
        (_, None) => PathBuf::new(),
    };
    if !target.as_os_str().is_empty() {
        let mut outputs = vec![("--out", target.clone())];
        outputs.extend(folder::FILES.iter().map(|f| ("--out", target.join(f))));
        // The one folder re-rendered in place holds its own results.json: not an output.
        if args.out.is_none() {
            outputs.retain(|(_, p)| !p.ends_with("results.json"));
            outputs.retain(|(_, p)| *p != target);
        }
        output::check_not_inputs(&inputs, &outputs)?;
    }
    if let Some(out) = &args.out {
        output::prepare_output_dir(out, false)?;
    }
    match (&args.dirs[..], &args.out) {
        ([dir], None) => {
            let results = folder::render_dir(dir)?;
            print!("{}", table::rows_table(std::slice::from_ref(&results)));
            eprintln!("re-rendered {}", dir.display());
        }
        (dirs, out) => {
            let sets = dirs
                .iter()
                .map(|d| folder::load_dir(d))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(out) = out {
                folder::merge_dirs(dirs, out)?;
                eprintln!("wrote {}", out.display());
            }
            if sets.len() > 1 {
                for (i, s) in sets.iter().enumerate() {
                    println!(
                        "{}: {} ({} cores), commit {}",
                        table::machine_tag(i),
                        s.machine.cpu,
                        s.machine.cores,
                        s.machine.commit
                    );
                }
                println!();
            }
            print!("{}", table::rows_table(&sets));
        }
    }
    Ok(())
}

/// `gigagas simulate [DUMP]`.
pub(crate) fn simulate(args: SimulateArgs) -> Result<()> {
    let path = crate::cli::dump_or_default(args.dump.clone())?;
    let mut schedulers = Vec::new();
    for s in &args.scheduler {
        if s == "all" {
            schedulers.extend(SchedulerKind::ALL);
        } else {
            schedulers.push(
                s.parse::<SchedulerKind>()
                    .map_err(anyhow::Error::msg)
                    .context("--scheduler")?,
            );
        }
    }
    schedulers.dedup();
    if args.threads.contains(&0) || args.validate.contains(&0) {
        bail!("--threads/--validate: 0 is not a thread count");
    }
    check_thread_counts(&args.threads, MAX_VIRTUAL_WORKERS)
        .map_err(|m| anyhow::anyhow!("--threads: {m} (virtual workers)"))?;
    check_thread_counts(&args.validate, MAX_THREADS)
        .map_err(|m| anyhow::anyhow!("--validate: {m}"))?;
    if args.batch.contains(&0) {
        bail!("--batch: 0 is not a batch size");
    }
    if args.repeats == 0 || args.profile_repeats == 0 {
        bail!("--repeats and --profile-repeats must be at least 1");
    }
    let validate = if args.no_validate {
        Vec::new()
    } else {
        args.validate.clone()
    };
    if let Some(json) = &args.json {
        output::check_not_inputs(std::slice::from_ref(&path), &[("--json", json.clone())])?;
        output::prepare_output_file(json, false)?;
    }
    let (replay, record) = gigagas_report::sweep::load_replay(&path)?;
    let machine = gigagas_report::MachineInfo::detect(commit());
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
        warmup: args.warmup,
        repeats: args.repeats,
        verify: true,
        min_sample_ns: 0,
    };
    let units = |t: usize| 1000 / t.clamp(1, machine.cores.max(1)) as u64;
    let points = simulate::validation_points(&validate, &args.batch, &schedulers);
    let total = (rep.warmup + args.profile_repeats) as u64 * 1000
        + points
            .iter()
            .map(|p| units(p.threads) * (rep.warmup + rep.repeats) as u64)
            .sum::<u64>();
    let bar = Bar::new("simulating");
    bar.0.set_length(total.max(1));
    bar.0
        .set_message("profiling items on 1 thread, interleaved with validation runs");
    let measured =
        simulate::profile_and_measure(&replay, args.profile_repeats, &points, rep, |c| {
            bar.0.inc(units(c.threads))
        });
    let (profile, mut measure) = match measured {
        Ok(m) => m,
        Err(d) => {
            bar.0.finish_and_clear();
            bail!("{}: verification failed: {d}", path.display());
        }
    };
    let report = simulate::simulate(
        &replay,
        &profile,
        (&record.name, &record.checksum),
        &args.threads,
        &args.batch,
        &schedulers,
        &validate,
        args.item_slowdown,
        &mut measure,
    );
    bar.0.finish_and_clear();
    let report = report?;
    print!("{}", table::simulation_markdown(&report, None));
    if let Some(out) = &args.json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            machine: &'a gigagas_report::MachineInfo,
            dump_path: String,
            simulation: &'a gigagas_report::SimulationReport,
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
