//! Running a grid over dumps: the one library path behind `gigagas run` and
//! `gigagas sweep`. One dump at a time, in order: it is loaded (before anything is timed),
//! every grid point runs on it, every pass verified, and it is dropped before the next
//! loads. A dump that fails to
//! load, prepare or verify loses its rows and becomes a [`DumpFailure`]; the others are
//! still measured.

use crate::{
    bench::{Sampled, bench_interleaved, bench_pass},
    config::Sweep,
    fault::{BenchError, DumpFault},
    io::StoreContext,
    plan::{DumpShape, Plan, SuiteDump},
    progress::{LOAD_UNITS, Progress, run_units},
    simulate,
    timeline::timeline_of,
};
use gigagas_dump::{DumpError, InvariantError};
use gigagas_executor::{PassCache, Replay};
use gigagas_grid::{Point, SchedulerKind, StateRootPhase};
use gigagas_report::{
    SimulationReport,
    folder::utc_timestamp,
    machine::MachineInfo,
    provenance::Provenance,
    results::{
        DumpFailure, DumpRecord, DumpSkip, RESULTS_FORMAT, ResultRow, SweepResults, suite_totals,
    },
    timeline::Timeline,
};
use std::{num::NonZeroUsize, path::Path};

/// How to run a sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepOptions {
    /// Commit of the measured build (recorded in the results and the folder name).
    pub commit: String,
    /// Free-form note about the conditions, recorded with the machine.
    pub note: Option<String>,
    /// How the measuring binary was built: with it, the results record their
    /// [`gigagas_report::provenance::Provenance`] (command line, build, peak RSS, load, governor).
    pub build: Option<gigagas_report::provenance::BuildInfo>,
}

/// Run a loaded sweep: [`run_grid`] with its plan on this machine.
pub fn run_sweep(
    sweep: &Sweep,
    options: &SweepOptions,
    progress: &mut dyn Progress,
) -> SweepResults {
    run_grid(&sweep.name, &sweep.plan, options, progress)
}

/// Run `plan` on every one of its dumps and collect the results (named `name`, recording
/// the plan as it ran: [`Plan::record`]). Per dump, in order: loaded, then the sequential
/// baselines and every parallel point in interleaved rounds, then the simulation (if
/// asked), then dropped: a suite holds one dump at a time. A dump that fails to load, prepare or verify is recorded in
/// [`SweepResults::failures`] and the others still run: a wrong execution never yields a
/// row. A dump with no transaction (an empty block: valid, but nothing to measure) is
/// recorded in [`SweepResults::skipped`]: no row, out of the totals, not a failure.
pub fn run_grid(
    name: &str,
    plan: &Plan,
    options: &SweepOptions,
    progress: &mut dyn Progress,
) -> SweepResults {
    let started_utc = utc_timestamp(std::time::SystemTime::now());
    let provenance = options.build.clone().map(Provenance::start).map(|mut p| {
        p.workers_pinned = gigagas_executor::pool::pinning();
        p
    });
    let mut machine = MachineInfo::detect(options.commit.clone());
    machine.note = options.note.clone();
    let grid = Grid::prepare(plan, machine.cores, progress);
    let dumps = &grid.plan.dumps;
    let mut accrued = Accrued::default();
    // One dump at a time, in the order they run: each is loaded (outside every timed
    // window), measured and dropped before the next loads, so a suite's memory is its
    // largest dump's, not the sum of them all.
    for (index, dump) in dumps.iter().enumerate() {
        progress.stage(&format!(
            "loading {} ({}/{})",
            dump.named,
            index + 1,
            dumps.len()
        ));
        let loaded = grid.load_dump(&dump.path);
        progress.advance(LOAD_UNITS);
        let mut spent = 0u64;
        let outcome = loaded.and_then(|(replay, record)| {
            let mut counted = Counted {
                inner: &mut *progress,
                spent: &mut spent,
            };
            grid.measure_dump(index, replay, record, &mut counted, &mut accrued.trace)
                .map_err(Failed::from)
        });
        progress.advance(grid.left.saturating_sub(spent));
        accrued.add(dump, outcome);
    }
    accrued.into_results(name, &grid.plan, started_utc, machine, provenance)
}

/// A plan made ready to run on this machine, and what each dump's turn takes from it.
struct Grid {
    /// The plan as it runs (shortened for dumps of single-transaction blocks where asked),
    /// as the results record it.
    plan: Plan,
    /// The machine's cores: the plan's all-cores point and the work units of its points.
    cores: NonZeroUsize,
    /// Whether a dump keeps its in-memory block bases: not when only store points run.
    keep_bases: bool,
    /// The first phase of the plan that computes state roots, if any: a dump with no
    /// witness is refused before any pass.
    roots: Option<StateRootPhase>,
    /// The work units of one dump after its loading, once the grid is shortened.
    left: u64,
}

impl Grid {
    /// `plan` made ready for `cores`: the progress bar's total set from the plan as given;
    /// then, with `collapse_single_transaction_blocks`, the grid shortened from every
    /// dump's streamed summary (read before the first dump loads) and the units it no
    /// longer runs advanced at once, so that the bar still ends.
    fn prepare(plan: &Plan, cores: NonZeroUsize, progress: &mut dyn Progress) -> Self {
        let mut plan = plan.clone();
        let dumps = plan.dumps.len() as u64;
        let units = plan.units_per_dump(cores);
        progress.total(units * dumps);

        // A plan with only store points never runs on the in-memory bases: none are kept.
        let keep_bases = plan.state.as_ref().is_none_or(|s| s.memory);
        // A plan that computes roots refuses a dump without a witness before any pass.
        let roots = plan.state_root.iter().find(|p| !p.is_off()).copied();
        if plan.collapse_single_transaction_blocks {
            // Decided from every dump's shape before the first one loads: each file's summary,
            // streamed (a dump that cannot be read, or holds no transaction, fails or is
            // skipped when its turn comes).
            progress.stage(&format!(
                "reading the shape of {} dump(s)",
                plan.dumps.len()
            ));
            let shapes: Vec<DumpShape> = plan
                .dumps
                .iter()
                .filter_map(|d| gigagas_dump::inspect_dump(&d.path).ok())
                .filter(|(summary, _)| summary.transactions > 0)
                .map(|(summary, _)| DumpShape::of_summary(&summary))
                .collect();
            plan.collapse_for_single_transactions(&shapes, cores);
        }
        let left = plan.units_per_dump(cores) - LOAD_UNITS;
        // The collapsed grid has fewer units: account for them now so the bar still ends.
        progress.advance((units - LOAD_UNITS - left) * dumps);
        Self {
            plan,
            cores,
            keep_bases,
            roots,
            left,
        }
    }

    /// Load the dump at `path` as the plan runs it ([`load`]: without in-memory bases when
    /// only store points run), refusing it when the plan computes roots and no segment of
    /// the dump has a witness.
    fn load_dump(&self, path: &Path) -> Result<(Replay, DumpRecord), Failed> {
        let (replay, record) = load(path, self.keep_bases)?;
        if let Some(phase) = self.roots
            && replay.witness_coverage().0 == 0
        {
            return Err(DumpFault::NoWitness {
                phase: phase.name(),
            }
            .into());
        }
        Ok((replay, record))
    }

    /// Measure the `index`th dump of the plan, loaded as `replay` and `record`: the
    /// oracle's item times first (when a scheduler needs them), its state store opened
    /// (when the plan reads one), the measured rounds and the simulation ([`run_dump`]),
    /// then the profiled passes ([`profiled_passes`], with `--cpu-profile`) and the drawn
    /// ones ([`drawn_passes`]), whose trace events are appended to `trace`. Returns the
    /// dump's record (its path the dump's label), rows, simulation and timeline.
    fn measure_dump(
        &self,
        index: usize,
        mut replay: Replay,
        mut record: DumpRecord,
        progress: &mut dyn Progress,
        trace: &mut Vec<serde_json::Value>,
    ) -> Result<MeasuredDump, DumpFault> {
        let (plan, cores) = (&self.plan, self.cores);
        record.path = plan.dumps[index].named.clone();
        record.label = plan.dumps[index].label.clone();
        if plan.schedulers.contains(&SchedulerKind::Oracle) {
            // The oracle's item times, before any measured pass.
            crate::bench::measure_item_times(&mut replay, plan.verify).map_err(DumpFault::from)?;
        }
        let mut store = self.open_store(index, &record)?;
        // What passes over the dump share, built by the first that needs it.
        let pass_cache = PassCache::new();
        let (rows, simulation) = run_dump(
            &replay,
            &pass_cache,
            &mut record,
            plan,
            cores,
            store.as_mut(),
            progress,
        )?;
        if let Some(profile) = &plan.cpu_profile {
            profiled_passes(
                &replay,
                &pass_cache,
                &record,
                plan,
                profile,
                plan.dumps.len() > 1,
                cores,
                store.as_mut(),
                progress,
            )?;
        }
        let timeline = drawn_passes(
            &replay,
            &pass_cache,
            &record,
            plan,
            cores,
            store.as_mut(),
            trace,
        )?;
        Ok(MeasuredDump {
            record,
            rows,
            simulation,
            timeline,
        })
    }

    /// The state store of the `index`th dump, when the plan reads one: its folder, refused
    /// if built from another dump than `record`'s, the device probed at the plan's I/O
    /// threads.
    fn open_store(
        &self,
        index: usize,
        record: &DumpRecord,
    ) -> Result<Option<StoreContext>, DumpFault> {
        let Some(state) = &self.plan.state else {
            return Ok(None);
        };
        let checksum = u64::from_str_radix(&record.checksum, 16).unwrap_or_default();
        // A plan that persists opens its store read-write (refused here, before any pass,
        // when it may not be changed).
        let open = if self.plan.persist.iter().any(gigagas_grid::Persist::is_on) {
            StoreContext::open_writable
        } else {
            StoreContext::open
        };
        open(state.dir_of(index), checksum, state.readers())
            .map(|store| Some(store.beside_readers(state.io_threads)))
            .map_err(|e| DumpFault::Io(Box::new(e)))
    }
}

/// What one measured dump adds to the results.
struct MeasuredDump {
    record: DumpRecord,
    rows: Vec<ResultRow>,
    simulation: Option<SimulationReport>,
    /// The timeline of its widest point ([`drawn_passes`]), if it has a parallel point.
    timeline: Option<Timeline>,
}

/// The results of a grid as they accrue, dump by dump.
#[derive(Default)]
struct Accrued {
    records: Vec<DumpRecord>,
    rows: Vec<ResultRow>,
    simulations: Vec<SimulationReport>,
    failures: Vec<DumpFailure>,
    skipped: Vec<DumpSkip>,
    /// The trace events of every dump's drawn passes, a process per dump and point.
    trace: Vec<serde_json::Value>,
    /// The best timeline of the dumps so far ([`Timeline::better_than`]).
    timeline: Option<Timeline>,
}

impl Accrued {
    /// Add the outcome of `dump`: a measured dump's record, rows, simulation, and its
    /// timeline where it is better than the best so far; a dump with nothing to measure
    /// as skipped; any other as failed, with its one-line reason.
    fn add(&mut self, dump: &SuiteDump, outcome: Result<MeasuredDump, Failed>) {
        match outcome {
            Ok(measured) => {
                if let Some(t) = measured.timeline
                    && self
                        .timeline
                        .as_ref()
                        .is_none_or(|best| t.better_than(best))
                {
                    self.timeline = Some(t);
                }
                self.rows.extend(measured.rows);
                self.simulations.extend(measured.simulation);
                self.records.push(measured.record);
            }
            Err(failed) => match failed.nothing_to_measure() {
                Some(blocks) => self.skipped.push(DumpSkip {
                    path: dump.named.clone(),
                    blocks,
                }),
                None => self.failures.push(DumpFailure {
                    path: dump.named.clone(),
                    reason: failed.reason(&dump.path),
                }),
            },
        }
    }

    /// The results of the grid: what every dump added, the suite's totals when more than
    /// one dump was measured, `plan` recorded as it ran, the provenance finished now.
    fn into_results(
        self,
        name: &str,
        plan: &Plan,
        started_utc: String,
        machine: MachineInfo,
        provenance: Option<Provenance>,
    ) -> SweepResults {
        let totals = if self.records.len() > 1 {
            suite_totals(&self.rows)
        } else {
            Vec::new()
        };
        SweepResults {
            format: RESULTS_FORMAT,
            name: name.to_string(),
            description: plan.description.clone(),
            started_utc,
            machine,
            config_hash: Some(gigagas_report::results::config_hash(&plan.record())),
            config: plan.record(),
            dumps: self.records,
            rows: self.rows,
            simulations: self.simulations,
            failures: self.failures,
            skipped: self.skipped,
            totals,
            provenance: provenance.map(Provenance::finish),
            timeline: self.timeline,
            trace: self.trace,
        }
    }
}

/// Why one dump of a grid yields no rows, before the path is attached: it could not be
/// read ([`DumpError`], which names the file itself), or a [`DumpFault`].
#[derive(Debug)]
enum Failed {
    Read(Box<DumpError>),
    Fault(DumpFault),
}

impl From<DumpFault> for Failed {
    fn from(fault: DumpFault) -> Self {
        Self::Fault(fault)
    }
}

impl Failed {
    /// The blocks of a dump that holds no transaction ([`InvariantError::NoBlocks`],
    /// [`InvariantError::NoTransactions`]): skipped, not failed. `None` for every other
    /// failure.
    fn nothing_to_measure(&self) -> Option<usize> {
        match self {
            Failed::Fault(DumpFault::NoWork(e)) => match **e {
                InvariantError::NoBlocks => Some(0),
                InvariantError::NoTransactions { blocks } => Some(blocks),
                _ => None,
            },
            _ => None,
        }
    }

    /// The error of the dump at `path`: the path attached once.
    fn at(self, path: &Path) -> BenchError {
        match self {
            Failed::Read(e) => BenchError::Read(e),
            Failed::Fault(source) => BenchError::Dump {
                path: path.to_path_buf(),
                source,
            },
        }
    }

    /// The one-line reason of a [`DumpFailure`], which names the dump already: the
    /// error and its sources without the path. A read error is the dump crate's, whose
    /// every message starts with the file it read (`path`): that one prefix is left out.
    fn reason(&self, path: &Path) -> String {
        match self {
            Failed::Read(e) => {
                let line = error_chain(e);
                let prefix = format!("{}: ", path.display());
                match line.strip_prefix(&prefix) {
                    Some(rest) => rest.to_string(),
                    None => line,
                }
            }
            Failed::Fault(fault) => error_chain(fault),
        }
    }
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
    fn note(&mut self, line: &str) {
        self.inner.note(line);
    }
}

/// The passes drawn rather than timed, after the measured rounds: with `plan.trace`, one
/// more verified pass of every parallel point, its trace events appended to `events` (a
/// process per dump and point); and the timeline of the longest batch of the widest point
/// (most threads, then the smallest batch — where workers wait on a block's longest
/// transaction —, the first scheduler), from its traced pass or, without a trace, from one
/// more pass of that point alone. `None` when the plan has no parallel point.
fn drawn_passes(
    replay: &Replay,
    pass_cache: &PassCache,
    record: &DumpRecord,
    plan: &Plan,
    cores: NonZeroUsize,
    mut store: Option<&mut StoreContext>,
    events: &mut Vec<serde_json::Value>,
) -> Result<Option<Timeline>, DumpFault> {
    let points = plan.points(cores);
    let widest = points
        .iter()
        .enumerate()
        .rev()
        .max_by_key(|(_, p)| (p.threads, std::cmp::Reverse(p.batch)))
        .map(|(i, _)| i);
    let mut timeline = None;
    for (i, p) in points.iter().enumerate() {
        let is_widest = widest == Some(i);
        if !plan.trace && !is_widest {
            continue;
        }
        // The same pass as a sample's: a store point's reads from its store, so its
        // batches' times hold the reads.
        let (timings, _) = bench_pass(
            replay,
            pass_cache,
            &Point::Bal(*p),
            plan.verify,
            store.as_deref_mut(),
        )?;
        if plan.trace {
            let pid = events
                .iter()
                .filter(|e| e["name"] == "process_name")
                .count() as u32;
            let name = format!("{}: {p}", gigagas_report::table::escape_name(&record.name));
            events.extend(crate::trace::pass_events(replay, p, &timings, pid, &name));
        }
        if is_widest {
            // The label the config gives the dump, else its name.
            let dump = record.label.as_deref().unwrap_or(&record.name);
            timeline = timeline_of(replay, p, &timings, dump);
        }
    }
    Ok(timeline)
}

/// With `--cpu-profile`: after the measured rounds, the profile of every point of the plan
/// (or the one named), written beside the profile path, each announced as a stage.
#[allow(clippy::too_many_arguments)]
fn profiled_passes(
    replay: &Replay,
    pass_cache: &PassCache,
    record: &DumpRecord,
    plan: &Plan,
    profile: &crate::plan::CpuProfilePlan,
    name_dump: bool,
    cores: NonZeroUsize,
    mut store: Option<&mut StoreContext>,
    progress: &mut dyn Progress,
) -> Result<(), DumpFault> {
    let points = plan.all_points(cores);
    for point in points {
        if profile
            .point
            .as_ref()
            .is_some_and(|name| *name != point.to_string())
        {
            continue;
        }
        let dump = name_dump.then_some(record.name.as_str());
        let stem = crate::profile::profile_stem(&profile.path, dump, &point);
        let cpu = crate::profile::profile_point(
            replay,
            pass_cache,
            &point,
            plan.verify,
            store.as_deref_mut(),
            profile.window,
            crate::profile::default_frequency(),
        )?;
        let title = format!("{}: {point}", record.name);
        let files = cpu.write(&stem, &title)?;
        progress.note(&format!(
            "{title}: CPU profile of {} passes in {}: {}",
            cpu.passes,
            files.svg.display(),
            cpu.summary()
        ));
    }
    Ok(())
}

/// One dump through the plan: baselines, parallel points, simulation.
fn run_dump(
    replay: &Replay,
    pass_cache: &PassCache,
    record: &mut DumpRecord,
    plan: &Plan,
    cores: NonZeroUsize,
    store: Option<&mut StoreContext>,
    progress: &mut dyn Progress,
) -> Result<(Vec<ResultRow>, Option<SimulationReport>), DumpFault> {
    let rep = plan.repetition();
    // The keys each block updates, for the rows that keep their batches' figures.
    let points = plan.all_points(cores);
    let keys = if points.iter().any(crate::blocks::keeps_batches) {
        crate::blocks::updated_keys(replay)
            .map_err(|e| DumpFault::Setup(Box::new(gigagas_executor::SetupError::Blocks(e))))?
    } else {
        Vec::new()
    };
    let row = |point: Point, mut sampled: Sampled| ResultRow {
        dump: record.name.clone(),
        dump_checksum: record.checksum.clone(),
        point,
        io: sampled.io,
        timed_work: point.work().describe(),
        warmup: rep.warmup,
        repeats: rep.repeats,
        verified: rep.verify,
        total_gas: replay.total_gas(),
        batches: replay.batches(point.batch()).len(),
        avg_batch_gas: replay.total_gas() as f64
            / replay.batches(point.batch()).len().max(1) as f64,
        speedup_vs_sequential: None,
        vs_sequential: None,
        vs_one_thread: None,
        summary: sampled.summary,
        passes_per_sample: sampled.passes_per_sample,
        per_batch: {
            crate::blocks::add_keys(&mut sampled.per_batch, &keys);
            sampled.per_batch
        },
        sample_batches: {
            for batches in &mut sampled.sample_batches {
                crate::blocks::add_keys(batches, &keys);
            }
            sampled.sample_batches
        },
    };

    // The baselines first, then the grid: one list of points, run in interleaved rounds.
    progress.stage(&format!(
        "{}: {} points in {} interleaved rounds (seed {:#x})",
        gigagas_report::table::escape_name(&record.name),
        points.len(),
        rep.repeats,
        plan.seed,
    ));
    let units: Vec<u64> = points
        .iter()
        .map(|p| match p {
            Point::Sequential(_) => 1000,
            Point::Bal(c) => run_units(c.threads, cores),
        })
        .collect();
    let sampled = bench_interleaved(replay, pass_cache, &points, rep, plan.seed, store, |i| {
        progress.advance(units[i])
    })?;

    let mut rows: Vec<ResultRow> = points
        .iter()
        .zip(sampled)
        .map(|(point, sampled)| row(*point, sampled))
        .collect();
    gigagas_report::results::pair_ratios(&mut rows);
    record.drift = gigagas_report::results::Drift::of_rows(&rows);

    let Some(sim) = &plan.simulate else {
        return Ok((rows, None));
    };
    progress.stage(&format!(
        "{}: profiling items on 1 thread, interleaved with validation runs",
        gigagas_report::table::escape_name(&record.name)
    ));
    let report = simulate::simulate_execution(replay, record, sim, rep, cores, progress)?;
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
pub fn load_replay(path: &Path) -> Result<(Replay, DumpRecord), BenchError> {
    load(path, true).map_err(|e| e.at(path))
}

/// [`load_replay`] before the path is attached; with `keep_bases` off, the replay keeps no
/// in-memory block bases (for passes that read their state from a store).
fn load(path: &Path, keep_bases: bool) -> Result<(Replay, DumpRecord), Failed> {
    // No KZG setup to load: the caller installed the setup-free point-evaluation verifier
    // at start-up (gigagas_chain::install_kzg_verifier, in gigagas's main), and
    // `Replay::load` refuses a dump that calls the precompile without it. The dump streams
    // into the replay: never held decoded whole, its blocks kept decoded only while they
    // fit the budget (else each pass decodes a batch's between batches).
    let limits = gigagas_executor::ResidentLimits {
        bases: if keep_bases {
            gigagas_executor::RESIDENT_BASES_BYTES
        } else {
            0
        },
        ..Default::default()
    };
    let (replay, loaded) = Replay::load(path, limits).map_err(|e| match e {
        gigagas_executor::LoadError::Read(e) => Failed::Read(Box::new(e)),
        gigagas_executor::LoadError::Prepare(e) => DumpFault::Prepare(Box::new(e)).into(),
    })?;
    // Nothing to time: refused here, before any timing, so no row ever reads "0 [0–0]"
    // or "NaN×".
    let (blocks, transactions) = (replay.block_count(), replay.transaction_count());
    if blocks == 0 {
        return Err(DumpFault::NoWork(Box::new(InvariantError::NoBlocks)).into());
    }
    if transactions == 0 {
        return Err(DumpFault::NoWork(Box::new(InvariantError::NoTransactions { blocks })).into());
    }
    let record = DumpRecord {
        name: loaded.name,
        label: None,
        path: path.display().to_string(),
        checksum: loaded.info.checksum_hex(),
        size_bytes: loaded.info.size,
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
    fn failure_reasons_and_errors_name_the_path_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.gigagas");
        std::fs::write(&path, b"GIGAGAS\0 far too short").unwrap();
        let Err(failed) = load(&path, true) else {
            panic!("a truncated file loads")
        };
        let reason = failed.reason(&path);
        assert!(!reason.contains("x.gigagas"), "{reason}");
        let shown = path.display().to_string();
        let line = error_chain(&failed.at(&path));
        assert_eq!(line.matches(&shown).count(), 1, "{line}");
        assert!(line.ends_with(&reason), "{line} / {reason}");
        // A fault holds no path: the edge adds it once.
        let fault = Failed::from(DumpFault::NoWork(Box::new(
            gigagas_dump::InvariantError::EmptySegment(1),
        )));
        assert_eq!(fault.reason(&path), "segment 1 has no blocks");
        assert_eq!(
            error_chain(&fault.at(&path)),
            format!("{shown}: segment 1 has no blocks")
        );
    }

    #[test]
    fn dumps_without_transactions_are_skipped_not_failed() {
        let no_work = |e| Failed::from(DumpFault::NoWork(Box::new(e)));
        assert_eq!(
            no_work(InvariantError::NoTransactions { blocks: 3 }).nothing_to_measure(),
            Some(3)
        );
        assert_eq!(
            no_work(InvariantError::NoBlocks).nothing_to_measure(),
            Some(0)
        );
        assert_eq!(
            no_work(InvariantError::EmptySegment(0)).nothing_to_measure(),
            None
        );
        let dir = tempfile::tempdir().unwrap();
        let Err(unreadable) = load(&dir.path().join("missing.gigagas"), true) else {
            panic!("a missing file loads")
        };
        assert_eq!(unreadable.nothing_to_measure(), None);
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
}
