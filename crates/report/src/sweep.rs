//! Running a grid over dumps: the one library path behind `gigagas run` and
//! `gigagas sweep`. Every dump is loaded first (in parallel, before anything is timed),
//! then every grid point runs on every dump, every pass verified. A dump that fails to
//! load, prepare or verify loses its rows and becomes a [`DumpFailure`]; the others are
//! still measured.

use crate::{
    config::{SimulateConfig, Sweep, SweepConfig},
    error::ReportError,
    folder::utc_timestamp,
    machine::MachineInfo,
    results::{
        DumpFailure, DumpRecord, Mode, RESULTS_FORMAT, ResultRow, SweepResults, suite_totals,
    },
    simulate,
};
use gigagas_executor::{
    BenchPoint, Repetition, Replay, RunConfig, Sampled, SchedulerKind, TimedWork,
};
use std::{
    path::{Path, PathBuf},
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
        mpsc,
    },
};

/// Progress of a grid run, in work units (a one-thread sample of a dump is 1000 units; a
/// sample on `t` threads is `1000 / min(t, cores)`; loading a dump is
/// [`LOAD_UNITS`]), so a progress bar's ETA follows the real remaining time. Every
/// method has a no-op default; `()` ignores progress.
pub trait Progress {
    /// The total number of units, reported once before the first run.
    fn total(&mut self, _units: u64) {}
    /// What runs now (e.g. `mainnet-like: 2 threads, batch 50, ols`).
    fn stage(&mut self, _what: &str) {}
    /// `units` more are done.
    fn advance(&mut self, _units: u64) {}
}

impl Progress for () {}

/// Work units of loading one dump.
pub const LOAD_UNITS: u64 = 100;

/// How to run a sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepOptions {
    /// Commit of the measured build (recorded in the results and the folder name).
    pub commit: String,
    /// Free-form note about the conditions, recorded with the machine.
    pub note: Option<String>,
    /// How the measuring binary was built: with it, the results record their
    /// [`crate::provenance::Provenance`] (command line, build, peak RSS, load, governor).
    pub build: Option<crate::provenance::BuildInfo>,
}

fn run_units(threads: usize, cores: usize) -> u64 {
    1000 / threads.clamp(1, cores.max(1)) as u64
}

/// What runs on every dump of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// The parallel points, in run order.
    pub points: Vec<RunConfig>,
    /// Sequential baselines to run first, one per sender-recovery setting (empty: none).
    pub baselines: Vec<bool>,
    /// Receipts with their logs blooms built inside every timed window (both paths).
    pub receipts: bool,
    /// Seed of the interleaved rounds' order ([`gigagas_executor::round_order`]).
    pub seed: u64,
    /// After the measured rounds, one more verified pass of every parallel point, traced
    /// into [`SweepResults::trace`] ([`crate::trace`]).
    pub trace: bool,
    /// Warm-up passes, measured samples, verification and minimum sample time.
    pub rep: Repetition,
    /// The schedule simulator, if asked for.
    pub simulate: Option<SimulateConfig>,
    /// Collapse the grid when every block of every dump holds at most one transaction
    /// (see [`Grid::collapse_for_single_transactions`]); for defaults the user did not
    /// choose.
    pub collapse_single_transaction_blocks: bool,
}

impl Grid {
    /// The grid of a sweep config on a machine with `cores` cores.
    pub fn of(config: &SweepConfig, cores: usize) -> Self {
        Self {
            points: config.points_on(cores),
            baselines: if config.sequential {
                config.recover_senders.clone()
            } else {
                Vec::new()
            },
            rep: Repetition {
                warmup: config.warmup,
                repeats: config.repeats,
                verify: true,
                min_sample_ns: config.min_sample_ms.saturating_mul(1_000_000),
            },
            receipts: config.receipts,
            seed: config.seed,
            trace: false,
            simulate: config.simulate.clone(),
            collapse_single_transaction_blocks: false,
        }
    }

    /// Work units of one dump (see [`Progress`]), loading included.
    pub fn units_per_dump(&self, cores: usize) -> u64 {
        let per_point = (self.rep.warmup + self.rep.repeats.max(1)) as u64;
        let mut units = LOAD_UNITS + self.baselines.len() as u64 * per_point * 1000;
        units += self
            .points
            .iter()
            .map(|p| per_point * run_units(p.threads, cores))
            .sum::<u64>();
        if let Some(sim) = &self.simulate {
            units += (self.rep.warmup + sim.profile_repeats) as u64 * 1000;
            for p in simulate::validation_points(&sim.validate_threads, &sim.batch, &sim.schedulers)
            {
                units += per_point * run_units(p.threads, cores);
            }
        }
        units
    }

    /// When every block of every dump holds at most one transaction, thread counts and
    /// schedulers cannot change the work (a single transaction cannot be split, and the
    /// schedulers only reorder it with its block's system work), and batch sizes of at
    /// least the longest dump's block count make the same mega-blocks. Keep the first
    /// thread count and scheduler and the smallest such batch size; return a note saying
    /// so, or `None` if nothing was collapsed.
    pub fn collapse_for_single_transactions(&mut self, replays: &[&Replay]) -> Option<String> {
        if replays.is_empty()
            || !replays
                .iter()
                .all(|r| r.blocks().iter().all(|b| b.transactions.len() <= 1))
        {
            return None;
        }
        let blocks = replays.iter().map(|r| r.blocks().len()).max().unwrap_or(1);
        let before = self.points.len();
        let (Some(threads), Some(scheduler)) = (
            self.points.first().map(|p| p.threads),
            self.points.first().map(|p| p.scheduler),
        ) else {
            return None;
        };
        let whole = self
            .points
            .iter()
            .map(|p| p.batch)
            .filter(|&b| b >= blocks)
            .min();
        self.points.retain(|p| {
            p.threads == threads
                && p.scheduler == scheduler
                && (p.batch < blocks || Some(p.batch) == whole)
        });
        (self.points.len() < before).then(|| {
            format!(
                "grid shortened from {before} to {} parallel points: every block holds at most one transaction, \
                 so more threads or another scheduler cannot change the work (a single transaction cannot run in \
                 parallel); choose --threads/--batch/--scheduler to run them anyway",
                self.points.len()
            )
        })
    }
}

/// A dump of a suite: the file and its name in the results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteDump {
    /// The file to read.
    pub path: PathBuf,
    /// The path as the config or command line names it.
    pub label: String,
}

impl Sweep {
    /// The sweep's dumps, as [`SuiteDump`]s.
    pub fn suite_dumps(&self) -> Vec<SuiteDump> {
        self.dump_paths
            .iter()
            .zip(&self.dump_labels)
            .map(|(path, label)| SuiteDump {
                path: path.clone(),
                label: label.display().to_string(),
            })
            .collect()
    }
}

/// Run a loaded sweep: [`run_grid`] with the config's grid on this machine.
pub fn run_sweep(
    sweep: &Sweep,
    options: &SweepOptions,
    progress: &mut dyn Progress,
) -> Result<SweepResults, ReportError> {
    let cores = MachineInfo::detect_cores();
    let grid = Grid::of(&sweep.config, cores);
    run_grid(
        &sweep.name,
        &sweep.config,
        &grid,
        &sweep.suite_dumps(),
        options,
        progress,
    )
}

/// Run `grid` on every dump and collect the results (named `name`, recording `config`).
/// Dumps are loaded first, in parallel; then, per dump, the sequential baselines, every
/// parallel point and the simulation (if asked). A dump that fails to load, prepare or
/// verify is recorded in [`SweepResults::failures`] and the others still run: a wrong
/// execution never yields a row. Errors only on invalid arguments.
pub fn run_grid(
    name: &str,
    config: &SweepConfig,
    grid: &Grid,
    dumps: &[SuiteDump],
    options: &SweepOptions,
    progress: &mut dyn Progress,
) -> Result<SweepResults, ReportError> {
    if dumps.is_empty() {
        return Err(ReportError::Invalid("no dumps to run".into()));
    }
    let started_utc = utc_timestamp(std::time::SystemTime::now());
    let provenance = options
        .build
        .clone()
        .map(crate::provenance::Provenance::start);
    let mut machine = MachineInfo::detect(options.commit.clone());
    machine.note = options.note.clone();
    let cores = machine.cores;
    let mut grid = grid.clone();
    let mut config = config.clone();
    let units = grid.units_per_dump(cores);
    progress.total(units * dumps.len() as u64);

    let loaded = load_all(dumps, cores, progress);
    let mut description = config.description.clone();
    if grid.collapse_single_transaction_blocks {
        let replays: Vec<&Replay> = loaded
            .iter()
            .filter_map(|l| l.as_ref().ok().map(|(r, _)| r))
            .collect();
        if let Some(note) = grid.collapse_for_single_transactions(&replays) {
            config.threads = distinct(grid.points.iter().map(|p| p.threads));
            config.batch = distinct(grid.points.iter().map(|p| p.batch));
            config.schedulers = distinct(grid.points.iter().map(|p| p.scheduler));
            description = if description.is_empty() {
                note
            } else {
                format!("{description} ({note})")
            };
        }
    }
    let left = grid.units_per_dump(cores) - LOAD_UNITS;
    // The collapsed grid has fewer units: account for them now so the bar still ends.
    progress.advance((units - LOAD_UNITS - left) * dumps.len() as u64);

    let mut records = Vec::new();
    let mut rows = Vec::new();
    let mut simulations = Vec::new();
    let mut failures = Vec::new();
    let mut trace = Vec::new();
    for (dump, loaded) in dumps.iter().zip(loaded) {
        let mut spent = 0u64;
        let outcome = loaded.and_then(|(replay, mut record)| {
            record.path = dump.label.clone();
            let mut counted = Counted {
                inner: &mut *progress,
                spent: &mut spent,
            };
            let (dump_rows, sim) = run_dump(&replay, &mut record, &grid, cores, &mut counted)
                .map_err(|e| e.to_string())?;
            if grid.trace {
                trace_dump(&replay, &record, &grid, &mut trace).map_err(|e| e.to_string())?;
            }
            Ok((record, dump_rows, sim))
        });
        progress.advance(left.saturating_sub(spent));
        match outcome {
            Ok((record, dump_rows, sim)) => {
                rows.extend(dump_rows);
                simulations.extend(sim);
                records.push(record);
            }
            Err(reason) => failures.push(DumpFailure {
                path: dump.label.clone(),
                reason: without_path(&reason, dump),
            }),
        }
    }
    let totals = if records.len() > 1 {
        suite_totals(&rows)
    } else {
        Vec::new()
    };
    config.description = description.clone();
    Ok(SweepResults {
        format: RESULTS_FORMAT,
        name: name.to_string(),
        description,
        started_utc,
        machine,
        config,
        dumps: records,
        rows,
        simulations,
        failures,
        totals,
        provenance: provenance.map(crate::provenance::Provenance::finish),
        trace,
    })
}

/// A reason without the leading `path: ` prefixes the errors of each layer add (the
/// failure already names the dump).
fn without_path(reason: &str, dump: &SuiteDump) -> String {
    let prefixes = [
        format!("{}: ", dump.path.display()),
        format!("{}: ", dump.label),
    ];
    let mut rest = reason;
    while let Some(r) = prefixes.iter().find_map(|p| rest.strip_prefix(p.as_str())) {
        rest = r;
    }
    rest.to_string()
}

fn distinct<T: PartialEq>(it: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for v in it {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// A [`Progress`] that also counts the units it passes on.
struct Counted<'a> {
    inner: &'a mut dyn Progress,
    spent: &'a mut u64,
}

impl Progress for Counted<'_> {
    fn stage(&mut self, what: &str) {
        self.inner.stage(what);
    }
    fn advance(&mut self, units: u64) {
        *self.spent += units;
        self.inner.advance(units);
    }
}

/// A loaded dump, or the one-line reason it could not be loaded.
type Loaded = Result<(Replay, DumpRecord), String>;

/// Load every dump on up to `cores` threads, before anything is timed. The results are in
/// the order of `dumps`; an error is the one-line reason.
fn load_all(dumps: &[SuiteDump], cores: usize, progress: &mut dyn Progress) -> Vec<Loaded> {
    let slots: Vec<Mutex<Option<Loaded>>> = dumps.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let workers = cores.clamp(1, dumps.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (slots, next, done_tx) = (&slots, &next, done_tx.clone());
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(dump) = dumps.get(i) else { break };
                    let loaded = load_replay(&dump.path).map_err(|e| e.to_string());
                    *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(loaded);
                    let _ = done_tx.send(());
                }
            });
        }
        drop(done_tx);
        let mut done = 0;
        progress.stage(&format!("loading {} dump(s)", dumps.len()));
        for () in done_rx {
            done += 1;
            progress.stage(&format!("loaded {done}/{} dump(s)", dumps.len()));
            progress.advance(LOAD_UNITS);
        }
    });
    slots
        .into_iter()
        .map(|s| {
            s.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or_else(|| Err("not loaded".into()))
        })
        .collect()
}

/// One more verified pass of every parallel point of `grid` on `replay`, its trace events
/// appended to `events` (a process per dump and point).
fn trace_dump(
    replay: &Replay,
    record: &DumpRecord,
    grid: &Grid,
    events: &mut Vec<serde_json::Value>,
) -> Result<(), ReportError> {
    for p in &grid.points {
        let timings =
            replay
                .run_verified(p, grid.rep.verify)
                .map_err(|d| ReportError::Divergence {
                    path: PathBuf::from(&record.path),
                    detail: d.to_string(),
                })?;
        let pid = events
            .iter()
            .filter(|e| e["name"] == "process_name")
            .count() as u32;
        let name = format!("{}: {p}", crate::table::escape_name(&record.name));
        events.extend(crate::trace::pass_events(replay, p, &timings, pid, &name));
    }
    Ok(())
}

/// One dump through the grid: baselines, parallel points, simulation.
fn run_dump(
    replay: &Replay,
    record: &mut DumpRecord,
    grid: &Grid,
    cores: usize,
    progress: &mut dyn Progress,
) -> Result<(Vec<ResultRow>, Option<crate::SimulationReport>), ReportError> {
    let rep = grid.rep;
    let path = PathBuf::from(&record.path);
    let diverged = |d: gigagas_executor::Divergence| ReportError::Divergence {
        path: path.clone(),
        detail: d.to_string(),
    };
    let row = |mode, config: &RunConfig, sampled: Sampled, speedup| ResultRow {
        dump: record.name.clone(),
        dump_checksum: record.checksum.clone(),
        mode,
        threads: config.threads,
        batch: config.batch,
        scheduler: (mode == Mode::BalParallel).then_some(config.scheduler),
        recover_senders: config.recover_senders,
        receipts: config.receipts,
        timed_work: config.work().describe(),
        warmup: rep.warmup,
        repeats: rep.repeats,
        verified: rep.verify,
        total_gas: replay.total_gas(),
        batches: replay.batches(config.batch).len(),
        avg_batch_gas: replay.total_gas() as f64 / replay.batches(config.batch).len().max(1) as f64,
        speedup_vs_sequential: speedup,
        vs_sequential: None,
        vs_one_thread: None,
        summary: sampled.summary,
        passes_per_sample: sampled.passes_per_sample,
    };

    // The baselines first, then the grid: one list of points, run in interleaved rounds.
    let mut points: Vec<BenchPoint> = grid
        .baselines
        .iter()
        .map(|&recover| {
            BenchPoint::Sequential(TimedWork {
                recover_senders: recover,
                receipts: grid.receipts,
            })
        })
        .collect();
    points.extend(grid.points.iter().copied().map(BenchPoint::Parallel));
    progress.stage(&format!(
        "{}: {} points in {} interleaved rounds (seed {:#x})",
        crate::table::escape_name(&record.name),
        points.len(),
        rep.repeats,
        grid.seed,
    ));
    let units: Vec<u64> = points
        .iter()
        .map(|p| match p {
            BenchPoint::Sequential(_) => 1000,
            BenchPoint::Parallel(c) => run_units(c.threads, cores),
        })
        .collect();
    let sampled = replay
        .bench_interleaved(&points, rep, grid.seed, |i| progress.advance(units[i]))
        .map_err(diverged)?;

    let mut rows: Vec<ResultRow> = Vec::with_capacity(points.len());
    for (point, sampled) in points.iter().zip(sampled) {
        let (mode, config) = match *point {
            BenchPoint::Sequential(work) => (
                Mode::Sequential,
                RunConfig {
                    threads: 1,
                    batch: 1,
                    scheduler: SchedulerKind::Ols,
                    recover_senders: work.recover_senders,
                    receipts: work.receipts,
                },
            ),
            BenchPoint::Parallel(c) => (Mode::BalParallel, c),
        };
        rows.push(row(mode, &config, sampled, None));
    }
    crate::results::pair_ratios(&mut rows);
    record.drift = crate::results::Drift::of_rows(&rows);

    let Some(sim) = &grid.simulate else {
        return Ok((rows, None));
    };
    progress.stage(&format!(
        "{}: profiling items on 1 thread, interleaved with validation runs",
        crate::table::escape_name(&record.name)
    ));
    let points = simulate::validation_points(&sim.validate_threads, &sim.batch, &sim.schedulers);
    let (profile, mut measure) =
        simulate::profile_and_measure(replay, sim.profile_repeats, &points, rep, |c| {
            progress.advance(run_units(c.threads, cores))
        })
        .map_err(diverged)?;
    let report = simulate::simulate(
        replay,
        &profile,
        (&record.name, &record.checksum),
        &sim.threads,
        &sim.batch,
        &sim.schedulers,
        &sim.validate_threads,
        sim.item_slowdown,
        &mut measure,
    )?;
    Ok((rows, Some(report)))
}

/// An error and its sources on one line, `a: b: c`, leaving out a source whose text the
/// message before it already ends with (an I/O error wrapped with its own message).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// Load a dump and prepare it for replay, with errors naming the file.
pub fn load_replay(path: &Path) -> Result<(Replay, DumpRecord), ReportError> {
    let (dump, info) = gigagas_dump::read_dump(path).map_err(|e| ReportError::Dump {
        path: path.to_path_buf(),
        detail: error_chain(&e),
    })?;
    // Nothing to time: refused here, before any timing, so no row ever reads "0 [0–0]"
    // or "NaN×".
    dump.check_has_work().map_err(|e| ReportError::Dump {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    let transactions = dump.transaction_count();
    let (name, blocks) = (dump.meta.name.clone(), dump.blocks.len());
    // No KZG setup to load: `Replay::new` installs the setup-free point-evaluation
    // verifier (gigagas_record::install_kzg_verifier) for the whole process. The dump
    // moves into the replay: its blocks are held once.
    let replay = Replay::new(dump).map_err(|e| ReportError::Dump {
        path: path.to_path_buf(),
        detail: error_chain(&e),
    })?;
    let record = DumpRecord {
        name,
        path: path.display().to_string(),
        checksum: info.checksum_hex(),
        size_bytes: info.size,
        blocks,
        transactions,
        total_gas: replay.total_gas(),
        drift: None,
    };
    Ok((replay, record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_reasons_do_not_repeat_the_path() {
        let dump = SuiteDump {
            path: PathBuf::from("cfg/../dumps/x.gigagas"),
            label: "../dumps/x.gigagas".into(),
        };
        assert_eq!(
            without_path(
                "cfg/../dumps/x.gigagas: cfg/../dumps/x.gigagas: truncated dump",
                &dump
            ),
            "truncated dump"
        );
        assert_eq!(
            without_path("../dumps/x.gigagas: verification failed: gas", &dump),
            "verification failed: gas"
        );
    }

    #[test]
    fn error_chains_are_one_line_without_repeats() {
        #[derive(Debug, thiserror::Error)]
        #[error("{path}: {source}")]
        struct Io {
            path: String,
            source: std::io::Error,
        }
        #[derive(Debug, thiserror::Error)]
        #[error("x.gigagas: inconsistent dump")]
        struct Outer {
            source: Io,
        }
        let e = Outer {
            source: Io {
                path: "p".into(),
                source: std::io::Error::other("File exists (os error 17)"),
            },
        };
        assert_eq!(
            error_chain(&e),
            "x.gigagas: inconsistent dump: p: File exists (os error 17)"
        );
    }

    #[test]
    fn units_scale_with_threads_up_to_the_cores() {
        assert_eq!(run_units(1, 2), 1000);
        assert_eq!(run_units(2, 2), 500);
        assert_eq!(run_units(16, 2), 500);
        assert_eq!(run_units(0, 0), 1000);
    }
}
