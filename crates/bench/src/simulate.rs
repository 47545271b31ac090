//! The simulator's measuring side: a dump's items profiled on one thread and its
//! validation points measured, interleaved ([`profile_and_measure`]), then handed to the
//! model (`gigagas-sim`, which computes and knows nothing of passes). [`simulate_dump`] is
//! `gigagas simulate`'s one entry point: execution alone, or with a state store the whole
//! block too, in one [`SimulationResults`].

use crate::plan::{FlagError, SimulateFlags};
use crate::{
    fault::{BenchError, DumpFault},
    io::StoreContext,
    plan::SimulatePlan,
    progress::{Progress, run_units},
    whole_block::{self, WholeBlockError, WholeBlockPlan},
};
use gigagas_executor::{Parallel, Replay, Runner};
use gigagas_grid::{
    Backlog, BalDesign, CacheState, IoMode, Persist, Repetition, RunConfig, SchedulerKind,
    StateRootPhase, StoreRead,
};
use gigagas_report::{
    MachineInfo, SimulationResults, provenance::recorded_path, results::DumpRecord,
};
use gigagas_sim::{
    DeviceCurve, DumpId, ItemProfile, Measured, MeasuredPoint, SimulationReport, WholeBlockPoint,
    Workload,
};
use std::{
    num::NonZeroUsize,
    path::{Path, PathBuf},
    time::Duration,
};

/// One line on `record` and `machine`: what a simulation runs on.
pub fn describe(path: &Path, record: &DumpRecord, machine: &MachineInfo) -> String {
    format!(
        "{}: {} blocks, {} txs, {:.3} Ggas; {} on {} cores",
        path.display(),
        record.blocks,
        record.transactions,
        record.total_gas as f64 / 1e9,
        machine.cpu,
        machine.cores
    )
}

/// The model's view of `replay`: its items and the gas they use.
pub fn workload(replay: &Replay) -> Workload<'_> {
    Workload {
        items: replay.work_items(),
        total_gas: replay.total_gas(),
    }
}

/// Profile the items and measure the validation points **interleaved**: `rep.warmup`
/// rounds of one run of everything (verified, discarded), then rounds of one profiling run
/// (1 thread, batch 1, ols; `profile_runs` in all) followed by one run of every point
/// (`rep.repeats` in all). Profile and validation runs so sample the same stretch of time:
/// on a shared machine, throughput drifts by tens of percent over minutes, which would
/// otherwise show up as model error. `after_run` is called after every run.
pub fn profile_and_measure(
    replay: &Replay,
    profile_runs: NonZeroUsize,
    points: &[RunConfig],
    rep: Repetition,
    mut after_run: impl FnMut(&RunConfig),
) -> Result<(ItemProfile, Measured), gigagas_executor::PassError> {
    let profile_runs = profile_runs.get();
    let repeats = rep.repeats.max(1);
    let profile_config = RunConfig::new(std::num::NonZeroUsize::MIN, 1, SchedulerKind::Ols);
    let mut per_item: Vec<Vec<u64>> = vec![Vec::with_capacity(profile_runs); replay.items().len()];
    let mut run_work_ns = Vec::with_capacity(profile_runs);
    let mut runs: Vec<Vec<gigagas_report::stats::Metrics>> =
        vec![Vec::with_capacity(repeats); points.len()];
    let mut run =
        |config: &RunConfig| -> Result<gigagas_executor::RunTimings, gigagas_executor::PassError> {
            // Verified batch by batch, each batch's outputs dropped after it (memory
            // follows the batch, as in every other pass).
            let timings = Parallel::new(config).run(replay, rep.verify)?;
            after_run(config);
            Ok(timings)
        };
    for _ in 0..rep.warmup {
        run(&profile_config)?;
        for p in points {
            run(p)?;
        }
    }
    for round in 0..profile_runs.max(repeats) {
        if round < profile_runs {
            let timings = run(&profile_config)?;
            run_work_ns.push(timings.item_ns.iter().sum());
            for (times, ns) in per_item.iter_mut().zip(&timings.item_ns) {
                times.push(*ns);
            }
        }
        if round < repeats {
            for (p, m) in points.iter().zip(&mut runs) {
                let timings = run(p)?;
                m.push(crate::bench::metrics_of(replay, &timings, p.threads));
            }
        }
    }
    let item_ns = per_item
        .into_iter()
        .map(|mut t| {
            t.sort_unstable();
            t[t.len() / 2]
        })
        .collect();
    let measured = points
        .iter()
        .zip(runs)
        .map(|(p, mut m)| {
            m.sort_by(|a, b| a.wall_s.total_cmp(&b.wall_s));
            let median = m[m.len() / 2];
            MeasuredPoint {
                config: *p,
                wall_s: median.wall_s,
                work_s: median.work_s,
            }
        })
        .collect();
    Ok((
        ItemProfile {
            item_ns,
            runs: profile_runs,
            run_work_ns,
        },
        Measured(measured),
    ))
}

/// Profile `replay` and measure `plan`'s validation points, interleaved, and project them
/// with the execution model (the sweep's `[simulate]` section and `gigagas simulate`).
pub fn simulate_execution(
    replay: &Replay,
    record: &DumpRecord,
    plan: &SimulatePlan,
    rep: Repetition,
    cores: NonZeroUsize,
    progress: &mut dyn Progress,
) -> Result<SimulationReport, DumpFault> {
    let points = plan.validation_points();
    let (profile, mut measure) =
        profile_and_measure(replay, plan.profile_repeats, &points, rep, |c| {
            progress.advance(run_units(c.threads, cores))
        })?;
    let dump = DumpId {
        name: &record.name,
        checksum: &record.checksum,
    };
    Ok(gigagas_sim::simulate(
        dump,
        workload(replay),
        &profile,
        &plan.record(),
        &mut measure,
    )?)
}

/// Work units of [`simulate_execution`] (for a progress bar's total).
pub fn execution_units(plan: &SimulatePlan, rep: Repetition, cores: NonZeroUsize) -> u64 {
    (rep.warmup + plan.profile_repeats.get()) as u64 * 1000
        + plan
            .validation_points()
            .iter()
            .map(|p| run_units(p.threads, cores) * (rep.warmup + rep.repeats) as u64)
            .sum::<u64>()
}

/// Where the whole-block simulator's device curve comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceSource {
    /// Probed on the store's data file before any pass ([`CURVE_PROBE`] a reader count).
    Probe,
    /// No curve: no cap.
    None,
    /// Given (read from a CSV file).
    Given(DeviceCurve),
}

/// How long the device probe reads at each reader count.
pub const CURVE_PROBE: Duration = Duration::from_millis(200);

/// The whole block's part of a simulation: a state store and its points.
#[derive(Debug, Clone)]
pub struct WholeBlockRequest {
    /// The store (`gigagas state build`) the points read.
    pub store: PathBuf,
    /// Its readers.
    pub io_threads: NonZeroUsize,
    /// The store points: one batch size and one scheduler, prefetch, pipelined or beside.
    pub points: Vec<WholeBlockPoint>,
    /// The device curve that caps each read.
    pub device: DeviceSource,
}

/// The whole block's store flags (`gigagas simulate --state`), as given.
#[derive(Debug, Clone, Copy)]
pub struct StoreFlags<'a> {
    /// `--io`: how the points read.
    pub io: &'a [IoMode],
    /// `--bal-design`: the access list's designs.
    pub designs: &'a [BalDesign],
    /// `--state-root`: the root phases.
    pub state_root: &'a [StateRootPhase],
    /// `--io-threads`: the store's readers.
    pub io_threads: usize,
    /// `--cache`: warm or cold before every pass.
    pub cache: CacheState,
    /// `--device-curve`: `probe`, `none` or a CSV file [default: probe when cold, none
    /// when warm].
    pub device_curve: Option<&'a str>,
    /// `--persist`: how the points with a root commit their blocks (a background writer
    /// with reth's limits, [`Backlog::RETH`]).
    pub persist: &'a [Persist],
}

impl WholeBlockRequest {
    /// The request of `flags` on `store` for `plan` (its one batch size and scheduler): a
    /// curve file is read, and refused, here, before anything runs.
    pub fn from_flags(
        store: PathBuf,
        flags: StoreFlags<'_>,
        plan: &SimulatePlan,
    ) -> Result<Self, BenchError> {
        let each = |&io| StoreRead::each(io, flags.designs);
        let reads: Vec<StoreRead> = flags.io.iter().flat_map(each).collect();
        let (batch, scheduler) = (plan.batch.first().get(), *plan.schedulers.first());
        let persist = gigagas_sim::whole_block::PersistChoice {
            modes: flags.persist,
            backlog: Backlog::RETH,
        };
        let points = gigagas_sim::whole_block::points(
            &reads,
            flags.state_root,
            persist,
            flags.cache,
            batch,
            scheduler,
        )
        .map_err(WholeBlockError::from)?;
        let io_threads = crate::plan::thread_counts(&[flags.io_threads], crate::plan::MAX_THREADS)
            .map_err(FlagError::of("--io-threads"))
            .map_err(WholeBlockError::from)?;
        let device = match (flags.device_curve, flags.cache) {
            (Some("probe"), _) | (None, CacheState::Cold) => DeviceSource::Probe,
            (Some("none"), _) | (None, CacheState::Warm) => DeviceSource::None,
            (Some(file), _) => DeviceSource::Given(
                DeviceCurve::read_csv(file.as_ref()).map_err(WholeBlockError::from)?,
            ),
        };
        Ok(Self {
            store,
            io_threads: *io_threads.first(),
            points,
            device,
        })
    }
}

/// What `gigagas simulate` runs: the execution model's plan, the validation runs'
/// repetition, and (with a store) the whole block's points.
#[derive(Debug, Clone)]
pub struct SimulateRequest {
    /// What to project and where to validate.
    pub plan: SimulatePlan,
    /// Warm-up and measured runs of each validation point.
    pub rep: Repetition,
    /// The whole block's store and points (`None`: execution alone).
    pub whole: Option<WholeBlockRequest>,
}

impl SimulateRequest {
    /// The request of `gigagas simulate`'s flags (`store`: `--state` and its flags),
    /// every value checked; a device curve file is read, and refused, here.
    pub fn from_flags(
        flags: SimulateFlags<'_>,
        warmup: usize,
        repeats: usize,
        store: Option<(PathBuf, StoreFlags<'_>)>,
    ) -> Result<Self, BenchError> {
        let plan = SimulatePlan::from_flags(flags).map_err(WholeBlockError::from)?;
        let rep = SimulatePlan::repetition(warmup, repeats).map_err(WholeBlockError::from)?;
        let whole = store
            .map(|(dir, store)| WholeBlockRequest::from_flags(dir, store, &plan))
            .transpose()?;
        Ok(Self { plan, rep, whole })
    }
}

/// `gigagas simulate`: for the oracle's validation runs the item times measured first;
/// then execution alone, or with `request.whole` the whole block: the memory points
/// validated first (the slowdown's fit, when the plan validates), then every store point
/// profiled, projected and validated, on `machine`'s cores. `path` names the dump in
/// errors and in the results (relative to the repository).
pub fn simulate_dump(
    path: &Path,
    replay: &mut Replay,
    record: &DumpRecord,
    request: &SimulateRequest,
    machine: &MachineInfo,
    progress: &mut dyn Progress,
) -> Result<SimulationResults, BenchError> {
    let (plan, rep, whole) = (&request.plan, request.rep, request.whole.as_ref());
    let cores = machine.cores;
    let results = |execution, whole_block| SimulationResults {
        dump_path: recorded_path(path),
        machine: machine.clone(),
        provenance: None,
        execution,
        whole_block,
    };
    let dump_error = |source: DumpFault| BenchError::Dump {
        path: path.to_path_buf(),
        source,
    };
    let points = plan.validation_points();
    if points.iter().any(|p| p.scheduler == SchedulerKind::Oracle) {
        // A measured oracle run orders by measured item times, as in a sweep: take them
        // first (the projections order by the simulator's own profile).
        progress.note("measuring item times for the oracle's validation runs");
        crate::bench::measure_item_times(replay, true).map_err(|e| dump_error(e.into()))?;
    }
    let replay = &*replay;
    let Some(whole) = whole else {
        progress.total(execution_units(plan, rep, cores));
        progress.stage("profiling items on 1 thread, interleaved with validation runs");
        let execution =
            simulate_execution(replay, record, plan, rep, cores, progress).map_err(dump_error)?;
        return Ok(results(Some(execution), None));
    };
    let store_error = |e: &dyn std::fmt::Display| WholeBlockError::Store {
        store: whole.store.clone(),
        message: e.to_string(),
    };
    let checksum = u64::from_str_radix(&record.checksum, 16).unwrap_or_default();
    let writable = whole.points.iter().any(|p| p.work.persist.is_on());
    let open = match writable {
        true => StoreContext::open_writable,
        false => StoreContext::open,
    };
    let mut store = open(&whole.store, checksum, whole.io_threads).map_err(|e| store_error(&e))?;
    let device = match &whole.device {
        DeviceSource::Given(curve) => {
            progress.note(&format!("device curve given: {}", curve.summary()));
            Some(curve.clone())
        }
        DeviceSource::None => None,
        DeviceSource::Probe => {
            let curve = whole_block::probe_device_curve(&mut store, CURVE_PROBE)
                .map_err(|e| store_error(&e))?;
            progress.note(&format!(
                "device curve of {} (probed): {}",
                whole.store.display(),
                curve.summary()
            ));
            Some(curve)
        }
    };
    let wb_plan = WholeBlockPlan {
        points: whole.points.clone(),
        threads: plan.threads.to_vec(),
        validate: plan.validate_threads.clone(),
        profile_runs: plan.profile_repeats,
        rep,
        cores,
        device,
    };
    let validating = !plan.validate_threads.is_empty();
    let memory_units = u64::from(validating) * execution_units(plan, rep, cores);
    progress.total(memory_units + wb_plan.units(cores));
    let mut execution = None;
    if validating {
        // The free term, fitted on memory points only.
        progress.stage("memory points");
        let report =
            simulate_execution(replay, record, plan, rep, cores, progress).map_err(dump_error)?;
        execution = Some(report);
    }
    let cost = execution
        .as_ref()
        .and_then(|r| gigagas_sim::whole_block::memory_cost(r, replay.items().len()));
    progress.stage("whole block");
    let report = whole_block::simulate_whole_block(
        replay,
        &mut store,
        &wb_plan,
        cost.as_ref(),
        |c: &RunConfig| progress.advance(run_units(c.threads, cores)),
    )?;
    Ok(results(execution, Some(report)))
}
