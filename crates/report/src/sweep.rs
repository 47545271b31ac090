//! Running a sweep: every dump, every grid point, every repeat, verified.

use crate::{
    config::Sweep,
    error::ReportError,
    folder::utc_timestamp,
    machine::MachineInfo,
    results::{DumpRecord, Mode, RESULTS_FORMAT, ResultRow, SweepResults},
    simulate,
};
use gigagas_executor::{Repetition, Replay, RunConfig, Summary};
use std::path::Path;

/// Progress of a sweep, in work units (a one-thread run of a dump is 1000 units; a run on
/// `t` threads is `1000 / min(t, cores)`), so a progress bar's ETA follows the real
/// remaining time. Every method has a no-op default; `()` ignores progress.
pub trait Progress {
    /// The total number of units, reported once before the first run.
    fn total(&mut self, _units: u64) {}
    /// What runs now (e.g. `mainnet-like: 2 threads, batch 50, ols`).
    fn stage(&mut self, _what: &str) {}
    /// `units` more are done.
    fn advance(&mut self, _units: u64) {}
}

impl Progress for () {}

/// How to run a sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepOptions {
    /// Commit of the measured build (recorded in the results and the folder name).
    pub commit: String,
    /// Free-form note about the conditions, recorded with the machine.
    pub note: Option<String>,
}

fn run_units(threads: usize, cores: usize) -> u64 {
    1000 / threads.clamp(1, cores.max(1)) as u64
}

/// Run a loaded sweep: for each dump, the sequential baselines (if asked), every grid
/// point `warmup + repeats` times (each run verified), and the simulation (if asked).
/// Any divergence stops the sweep with an error: a wrong execution never yields a row.
pub fn run_sweep(
    sweep: &Sweep,
    options: &SweepOptions,
    progress: &mut dyn Progress,
) -> Result<SweepResults, ReportError> {
    let config = &sweep.config;
    let started_utc = utc_timestamp(std::time::SystemTime::now());
    let mut machine = MachineInfo::detect(options.commit.clone());
    machine.note = options.note.clone();
    let cores = machine.cores;
    let rep = Repetition {
        warmup: config.warmup,
        repeats: config.repeats,
        verify: true,
    };
    let per_point = (rep.warmup + rep.repeats) as u64;
    let points = config.points();

    // Total work, for the ETA.
    let mut per_dump = 0u64;
    if config.sequential {
        per_dump += config.recover_senders.len() as u64 * per_point * 1000;
    }
    per_dump += points
        .iter()
        .map(|p| per_point * run_units(p.threads, cores))
        .sum::<u64>();
    if let Some(sim) = &config.simulate {
        per_dump += (rep.warmup + sim.profile_repeats) as u64 * 1000;
        for p in simulate::validation_points(&sim.validate_threads, &sim.batch, &sim.schedulers) {
            per_dump += per_point * run_units(p.threads, cores);
        }
    }
    progress.total(per_dump * sweep.dump_paths.len() as u64);

    let mut dumps = Vec::new();
    let mut rows = Vec::new();
    let mut simulations = Vec::new();
    for (path, as_written) in sweep.dump_paths.iter().zip(&config.dumps) {
        progress.stage(&format!("loading {}", path.display()));
        let (replay, mut record) = load_replay(path)?;
        record.path = as_written.display().to_string();
        let diverged = |d: gigagas_executor::Divergence| ReportError::Divergence {
            path: path.clone(),
            detail: d.to_string(),
        };
        let row = |mode, config: &RunConfig, summary: Summary, speedup| ResultRow {
            dump: record.name.clone(),
            dump_checksum: record.checksum.clone(),
            mode,
            threads: config.threads,
            batch: config.batch,
            scheduler: (mode == Mode::BalParallel).then_some(config.scheduler),
            recover_senders: config.recover_senders,
            warmup: rep.warmup,
            repeats: rep.repeats,
            verified: rep.verify,
            total_gas: replay.total_gas(),
            batches: replay.batches(config.batch).len(),
            avg_batch_gas: replay.total_gas() as f64
                / replay.batches(config.batch).len().max(1) as f64,
            speedup_vs_sequential: speedup,
            summary,
        };

        let mut dump_rows: Vec<ResultRow> = Vec::new();
        let mut baselines: Vec<(bool, f64)> = Vec::new();
        if config.sequential {
            for &recover in &config.recover_senders {
                progress.stage(&format!(
                    "{}: sequential baseline{}",
                    record.name,
                    if recover { ", senders recovered" } else { "" }
                ));
                let summary = replay
                    .bench_sequential(recover, rep, || progress.advance(1000))
                    .map_err(diverged)?;
                baselines.push((recover, summary.median.ggas_per_s));
                let c = RunConfig {
                    threads: 1,
                    batch: 1,
                    scheduler: gigagas_executor::SchedulerKind::Ols,
                    recover_senders: recover,
                };
                dump_rows.push(row(Mode::Sequential, &c, summary, Some(1.0)));
            }
        }
        for p in &points {
            progress.stage(&format!(
                "{}: {} threads, batch {}, {}{}",
                record.name,
                p.threads,
                p.batch,
                p.scheduler,
                if p.recover_senders {
                    ", senders recovered"
                } else {
                    ""
                }
            ));
            let units = run_units(p.threads, cores);
            let summary = replay
                .bench_parallel(p, rep, || progress.advance(units))
                .map_err(diverged)?;
            let speedup = baselines
                .iter()
                .find(|(r, _)| *r == p.recover_senders)
                .map(|(_, g)| summary.median.ggas_per_s / g);
            dump_rows.push(row(Mode::BalParallel, p, summary, speedup));
        }

        if let Some(sim) = &config.simulate {
            progress.stage(&format!(
                "{}: profiling items on 1 thread, interleaved with validation runs",
                record.name
            ));
            let points =
                simulate::validation_points(&sim.validate_threads, &sim.batch, &sim.schedulers);
            let (profile, mut measure) =
                simulate::profile_and_measure(&replay, sim.profile_repeats, &points, rep, |c| {
                    progress.advance(run_units(c.threads, cores))
                })
                .map_err(diverged)?;
            let report = simulate::simulate(
                &replay,
                &profile,
                (&record.name, &record.checksum),
                &sim.threads,
                &sim.batch,
                &sim.schedulers,
                &sim.validate_threads,
                &mut measure,
            )?;
            simulations.push(report);
        }
        rows.extend(dump_rows);
        dumps.push(record);
    }
    Ok(SweepResults {
        format: RESULTS_FORMAT,
        name: sweep.name.clone(),
        description: config.description.clone(),
        started_utc,
        machine,
        config: config.clone(),
        dumps,
        rows,
        simulations,
    })
}

/// Load a dump and prepare it for replay, with errors naming the file.
pub fn load_replay(path: &Path) -> Result<(Replay, DumpRecord), ReportError> {
    let (dump, info) = gigagas_dump::read_dump(path).map_err(|e| ReportError::Dump {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    let replay = Replay::new(&dump).map_err(|e| ReportError::Dump {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    let record = DumpRecord {
        name: dump.meta.name.clone(),
        path: path.display().to_string(),
        checksum: info.checksum_hex(),
        size_bytes: info.size,
        blocks: dump.blocks.len(),
        transactions: dump.transaction_count(),
        total_gas: replay.total_gas(),
    };
    Ok((replay, record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_scale_with_threads_up_to_the_cores() {
        assert_eq!(run_units(1, 2), 1000);
        assert_eq!(run_units(2, 2), 500);
        assert_eq!(run_units(16, 2), 500);
        assert_eq!(run_units(0, 0), 1000);
    }
}
