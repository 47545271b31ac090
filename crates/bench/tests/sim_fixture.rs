//! Records the model's fixture: a real one-thread profile of a generated dump with a
//! witness (its items, per-item times, validation runs and, per store point, the recorded
//! phases of a one-thread pass) beside the projections the model gives for it, execution
//! and whole block. The model's crate tests every later build against these files
//! (`crates/sim/tests/fixture.rs`), so a change that moves a projection shows.
//!
//! Run on purpose only, to record again after a change that is meant to move the
//! projections (its own commit, with the projections before and after):
//! `GIGAGAS_RECORD_SIM_FIXTURE=1 cargo test -p gigagas-bench --test sim_fixture -- --ignored`.

use alloy_hardforks::EthereumHardfork;
use gigagas_bench::{
    NonEmpty, Replay, SimulatePlan, StoreContext,
    simulate::{self, workload},
    whole_block::{WholeBlockPlan, profile_and_measure_point},
};
use gigagas_executor::{ItemKind, PassCache};
use gigagas_grid::{BalDesign, CacheState, Repetition, SchedulerKind, StateRootPhase, StoreRead};
use gigagas_report::results::DumpRecord;
use gigagas_sim::{
    DeviceCurve, DumpId, Measured, Slowdown,
    whole_block::{self, memory_cost, project_point},
};
use gigagas_workload::{GeneratorConfig, Profile};
use serde_json::{Value, json};
use std::{num::NonZeroUsize, path::Path};

fn n(x: usize) -> NonZeroUsize {
    NonZeroUsize::new(x).unwrap()
}

fn write(dir: &Path, name: &str, value: &Value) {
    let text = serde_json::to_string_pretty(value).unwrap() + "\n";
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
#[ignore = "records the model's fixture; run with GIGAGAS_RECORD_SIM_FIXTURE=1"]
fn record_the_models_fixture() {
    if std::env::var_os("GIGAGAS_RECORD_SIM_FIXTURE").is_none() {
        panic!("set GIGAGAS_RECORD_SIM_FIXTURE=1 to record the fixture");
    }
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim/tests/fixtures");
    std::fs::create_dir_all(&out).unwrap();
    gigagas_executor::test_utils::install_kzg_verifier();
    let config = GeneratorConfig {
        profile: Profile::Erc20,
        blocks: 6,
        gas_per_block: 3_000_000,
        seed: 11,
        fork: EthereumHardfork::Prague,
        users: 40,
    };
    let dump = gigagas_workload::generate_with_witness(&config, |_, _| {}).unwrap();
    let name = dump.meta.name.clone();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(root).unwrap();
    let dir = tempfile::tempdir_in(root).unwrap();
    let info = gigagas_dump::write_dump(&dump, &dir.path().join("w.gigagas")).unwrap();
    let store_dir = dir.path().join("store");
    gigagas_state::build_store(&dump, &info, &store_dir, &Default::default(), &mut |_| {}).unwrap();
    let replay = Replay::new(dump).unwrap();
    let mut store = StoreContext::open(&store_dir, info.checksum, NonZeroUsize::MIN).unwrap();

    // The workload: every item and where each block's items end.
    let items: Vec<Value> = replay
        .items()
        .iter()
        .map(|w| {
            let kind = match w.kind {
                ItemKind::PreBlock => json!("PreBlock"),
                ItemKind::Tx(i) => json!({ "Tx": i }),
                ItemKind::PostBlock => json!("PostBlock"),
            };
            json!({
                "block": w.block,
                "kind": kind,
                "gas_used": w.gas_used,
                "gas_limit": w.gas_limit,
                "measured_ns": w.measured_ns,
            })
        })
        .collect();
    let block_ends: Vec<usize> = (0..replay.block_count())
        .map(|b| replay.block_items(b).end)
        .collect();

    // Execution: a profile and measured validation points, then two simulations.
    let schedulers = [
        SchedulerKind::Ols,
        SchedulerKind::GasUsed,
        SchedulerKind::GasLimit,
        SchedulerKind::Oracle,
    ];
    let plan = SimulatePlan {
        threads: NonEmpty::new(vec![n(1), n(2), n(4), n(16), n(64), n(192)]).unwrap(),
        batch: NonEmpty::new(vec![n(1), n(3)]).unwrap(),
        schedulers: NonEmpty::new(schedulers.to_vec()).unwrap(),
        profile_repeats: n(2),
        validate_threads: vec![n(1), n(2)],
        item_slowdown: None,
    };
    let rep = Repetition {
        warmup: 1,
        repeats: 2,
        verify: true,
        min_sample_ns: 0,
    };
    let (profile, mut measured) = simulate::profile_and_measure(
        &replay,
        plan.profile_repeats,
        &plan.validation_points(),
        rep,
        |_| {},
    )
    .unwrap();
    let dump_record = DumpRecord {
        name,
        label: None,
        path: "w.gigagas".to_string(),
        checksum: info.checksum_hex(),
        size_bytes: 0,
        blocks: replay.block_count(),
        transactions: replay.transaction_count(),
        total_gas: replay.total_gas(),
        drift: None,
    };
    let dump_id = DumpId {
        name: &dump_record.name,
        checksum: &dump_record.checksum,
    };
    let work = workload(&replay);
    let fitted =
        gigagas_sim::simulate(dump_id, work, &profile, &plan.record(), &mut measured).unwrap();
    let configured_plan = SimulatePlan {
        item_slowdown: Some(plan::ItemSlowdown::new(1.15).unwrap()),
        ..plan.clone()
    };
    let configured = gigagas_sim::simulate(
        dump_id,
        work,
        &profile,
        &configured_plan.record(),
        &mut measured,
    )
    .unwrap();
    let Measured(points) = &measured;
    let measured_json: Vec<Value> = points
        .iter()
        .map(|m| {
            json!({
                "threads": m.config.threads,
                "batch": m.config.batch,
                "scheduler": m.config.scheduler,
                "wall_s": m.wall_s,
                "work_s": m.work_s,
            })
        })
        .collect();
    write(
        &out,
        "execution-profile.json",
        &json!({
            "dump": { "name": dump_record.name, "checksum": dump_record.checksum },
            "total_gas": replay.total_gas(),
            "block_ends": block_ends,
            "items": items,
            "profile": {
                "item_ns": profile.item_ns,
                "runs": profile.runs,
                "run_work_ns": profile.run_work_ns,
            },
            "measured": measured_json,
            "plans": [plan.record(), configured_plan.record()],
        }),
    );
    write(
        &out,
        "execution-projections.json",
        &json!([fitted, configured]),
    );

    // The whole block: one-thread records of three store points, then projections.
    let cache = PassCache::new();
    let wb_plan = WholeBlockPlan {
        points: Vec::new(),
        threads: vec![n(1), n(2), n(16), n(64)],
        validate: Vec::new(),
        profile_runs: n(1),
        rep: Repetition {
            warmup: 1,
            repeats: 1,
            verify: true,
            min_sample_ns: 0,
        },
        cores: n(2),
        device: None,
    };
    let cost = memory_cost(&fitted, replay.items().len());
    let curve = DeviceCurve::new(vec![(1, 2_000.0), (4, 6_000.0), (8, 9_000.0)]).unwrap();
    let mut records = Vec::new();
    let mut projections = Vec::new();
    let cases = [
        (
            StoreRead::Prefetch(BalDesign::Keys),
            StateRootPhase::After,
            1,
        ),
        (
            StoreRead::Prefetch(BalDesign::Full),
            StateRootPhase::Overlapped,
            2,
        ),
        (
            StoreRead::Pipelined(BalDesign::Keys),
            StateRootPhase::After,
            2,
        ),
        (
            StoreRead::Pipelined(BalDesign::Writes),
            StateRootPhase::Overlapped,
            3,
        ),
    ];
    for (read, phase, batch) in cases {
        let point = whole_block::points(
            &[read],
            &[phase],
            whole_block::PersistChoice::NONE,
            CacheState::Warm,
            batch,
            SchedulerKind::GasUsed,
        )
        .unwrap()[0];
        let m = profile_and_measure_point(&replay, &cache, &mut store, &point, &wb_plan, |_| {})
            .unwrap();
        let mut record = m.record;
        // Device reads as a cold store would count them, so the curve caps some reads.
        for (k, faults) in record.read_faults.iter_mut().enumerate() {
            *faults = 40 + 25 * k as u64;
        }
        for &workers in &wb_plan.threads {
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
                            replay.work_items(),
                            &point,
                            &record,
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
        records.push(json!({
            "point": point.label(),
            "io": read.io().name(),
            "design": read.design().map(|d| d.name()),
            "state_root": phase,
            "batch": batch,
            "scheduler": SchedulerKind::GasUsed,
            "record": {
                "batch": record.batch,
                "wall_ns": record.wall_ns,
                "item_ns": record.item_ns,
                "read_ns": record.read_ns,
                "read_faults": record.read_faults,
                "roots": record.roots.iter().map(|batch| batch.iter().map(|b| json!({
                    "segment": b.segment,
                    "prepare_ns": b.prepare_ns,
                    "storage_ns": b.storage_ns,
                    "storage_writes": b.storage_writes,
                    "finish_ns": b.finish_ns,
                })).collect::<Vec<_>>()).collect::<Vec<_>>(),
            },
        }));
    }
    write(
        &out,
        "whole-block-profile.json",
        &json!({ "device_curve": curve.points(), "records": records }),
    );
    write(&out, "whole-block-projections.json", &json!(projections));
}

use gigagas_bench::plan;
