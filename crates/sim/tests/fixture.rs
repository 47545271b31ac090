//! The model against its fixture: a real one-thread profile of a generated witness dump
//! (recorded by `crates/bench/tests/sim_fixture.rs`) gives, byte for byte, the projections
//! recorded beside it, execution (two simulations: the item cost fitted to the validation
//! runs, and a configured factor) and whole block (four store points at 1–64 workers,
//! each with no slowdown, the memory points' and a flat factor, with and without a device
//! curve). A change that moves a projection fails here; one meant to move them records the
//! fixture again in a commit of its own.

use gigagas_grid::{
    BalDesign, CacheState, IoMode, RunConfig, SchedulerKind, SimulateConfig, StateRootPhase,
    StoreRead, WorkItem, WorkItems,
};
use gigagas_sim::{
    DeviceCurve, DumpId, ItemProfile, Measured, MeasuredPoint, PhaseRecord, SimulationReport,
    Slowdown, Workload, simulate,
    whole_block::{self, memory_cost, project_point},
};
use serde::Deserialize;
use serde_json::{Value, json};
use std::{num::NonZeroUsize, path::Path};

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `got`, written as the recorder writes it and read back, equals the fixture `name` read
/// the same way: every figure is the same number written the same way. (Keys are compared
/// as sets: whether serde_json keeps their order depends on the features the workspace
/// build unifies.)
#[track_caller]
fn assert_recorded(got: &Value, name: &str) {
    let text = serde_json::to_string_pretty(got).unwrap();
    let got: Value = serde_json::from_str(&text).unwrap();
    let recorded: Value = serde_json::from_str(&fixture(name)).unwrap();
    assert!(got == recorded, "{name}: the projections moved");
}

#[derive(Deserialize)]
struct Dump {
    name: String,
    checksum: String,
}

#[derive(Deserialize)]
struct Point {
    threads: NonZeroUsize,
    batch: usize,
    scheduler: SchedulerKind,
    wall_s: f64,
    work_s: f64,
}

#[derive(Deserialize)]
struct ExecutionFixture {
    dump: Dump,
    total_gas: u64,
    block_ends: Vec<u32>,
    items: Vec<WorkItem>,
    profile: ItemProfile,
    measured: Vec<Point>,
    plans: Vec<SimulateConfig>,
}

struct Execution {
    fixture: ExecutionFixture,
    items: WorkItems,
}

impl Execution {
    fn load() -> Self {
        let fixture: ExecutionFixture =
            serde_json::from_str(&fixture("execution-profile.json")).unwrap();
        let mut offsets = vec![0];
        offsets.extend(&fixture.block_ends);
        let items = WorkItems::new(fixture.items.clone(), offsets).unwrap();
        Self { fixture, items }
    }

    fn work(&self) -> Workload<'_> {
        Workload {
            items: &self.items,
            total_gas: self.fixture.total_gas,
        }
    }

    fn simulate(&self, plan: &SimulateConfig) -> SimulationReport {
        let mut measured = Measured(
            self.fixture
                .measured
                .iter()
                .map(|p| MeasuredPoint {
                    config: RunConfig::new(p.threads, p.batch, p.scheduler),
                    wall_s: p.wall_s,
                    work_s: p.work_s,
                })
                .collect(),
        );
        let dump = DumpId {
            name: &self.fixture.dump.name,
            checksum: &self.fixture.dump.checksum,
        };
        simulate(
            dump,
            self.work(),
            &self.fixture.profile,
            plan,
            &mut measured,
        )
        .unwrap()
    }
}

#[test]
fn the_execution_projections_are_the_recorded_ones() {
    let execution = Execution::load();
    let reports: Vec<SimulationReport> = execution
        .fixture
        .plans
        .iter()
        .map(|plan| execution.simulate(plan))
        .collect();
    assert_eq!(reports.len(), 2);
    assert_recorded(&json!(reports), "execution-projections.json");
}

#[derive(Deserialize)]
struct StorePoint {
    io: String,
    design: Option<String>,
    state_root: StateRootPhase,
    batch: usize,
    scheduler: SchedulerKind,
    record: PhaseRecord,
}

#[derive(Deserialize)]
struct WholeBlockFixture {
    device_curve: Vec<(usize, f64)>,
    records: Vec<StorePoint>,
}

#[test]
fn the_whole_block_projections_are_the_recorded_ones() {
    let execution = Execution::load();
    let fitted = execution.simulate(&execution.fixture.plans[0]);
    let cost = memory_cost(&fitted, execution.items.items().len());
    assert!(cost.is_some(), "the fixture validates above one thread");
    let wb: WholeBlockFixture = serde_json::from_str(&fixture("whole-block-profile.json")).unwrap();
    let curve = DeviceCurve::new(wb.device_curve).unwrap();
    let n = |x: usize| NonZeroUsize::new(x).unwrap();
    let mut projections = Vec::new();
    for p in &wb.records {
        let io: IoMode = p.io.parse().unwrap();
        let design: Option<BalDesign> = p.design.as_deref().map(|d| d.parse().unwrap());
        let read = StoreRead::new(io, design).unwrap();
        let point = whole_block::points(
            &[read],
            &[p.state_root],
            whole_block::PersistChoice::NONE,
            CacheState::Warm,
            p.batch,
            p.scheduler,
        )
        .unwrap()[0];
        for workers in [n(1), n(2), n(16), n(64)] {
            for cores in [workers, n(2)] {
                for (slowdown_name, slowdown) in [
                    ("none", Slowdown::NONE),
                    ("memory", Slowdown::of(cost.as_ref(), workers.get())),
                    (
                        "sixteen-core",
                        Slowdown {
                            factor: 1.23,
                            added_ns: 0.0,
                        },
                    ),
                ] {
                    for (device_name, device) in [("none", None), ("curve", Some(&curve))] {
                        let times = project_point(
                            &execution.items,
                            &point,
                            &p.record,
                            workers,
                            cores,
                            slowdown,
                            device,
                        )
                        .unwrap();
                        projections.push(json!({
                            "point": point.label(),
                            "workers": workers,
                            "cores": cores,
                            "slowdown": slowdown_name,
                            "device": device_name,
                            "wall_ns": times.wall_ns,
                            "read_ns": times.read_ns,
                            "exposed_read_ns": times.exposed_read_ns,
                            "exec_ns": times.exec_ns,
                            "root_ns": times.root_ns,
                        }));
                    }
                }
            }
        }
    }
    assert_eq!(projections.len(), 4 * 4 * 2 * 3 * 2);
    assert_recorded(&json!(projections), "whole-block-projections.json");
}
