//! The chunk cut checked where it matters: many workers on real blocks.
//!
//! Workers claim a batch's order in chunks ([`gigagas_executor::chunk_bounds`]) rather than
//! one item at a time. On 2 cores any cut looks fine; at 16 workers a cut that bundles the
//! heaviest transactions into one chunk leaves fifteen workers waiting behind it. The
//! simulator replays the same cut on N virtual workers, so these tests check the cut at 16
//! and 64 workers on the committed mainnet and mainnet-like dumps, without a 16-core
//! machine, deterministically:
//!
//! - with each item's gas used as its time, and with the item times of a recorded
//!   one-thread profile of each dump (`tests/profiles/`, where gas and time disagree as
//!   they do in a real run), the chunked schedule's makespan is within 2 % of one item per
//!   claim, for every named scheduler, per block and as one mega-block;
//! - on the recorded profiles, the oracle (heavy-first by each item's measured time) is
//!   never behind gas-used as one mega-block.
//!
//! `cargo test --release -p gigagas-bench --test claims -- --ignored record_profiles`
//! records the profiles again (after a dump changes; the tests refuse a profile whose dump
//! checksum is not the dump's).

use gigagas_bench::simulate::{self, workload};
use gigagas_executor::{Estimate, Replay, SchedulerKind};
use gigagas_grid::Repetition;
use gigagas_sim::{ItemProfile, execution::project};
use std::{num::NonZeroUsize, path::PathBuf};

/// The committed real and synthetic dumps the cut is checked on.
const DUMPS: [&str; 2] = ["mainnet", "mainnet-like"];

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A committed dump, its replay and its block count (one mega-block).
struct Loaded {
    name: &'static str,
    replay: Replay,
    blocks: usize,
    checksum: String,
}

fn load(name: &'static str) -> Loaded {
    gigagas_executor::test_utils::install_kzg_verifier();
    let path = manifest()
        .join("../../dumps")
        .join(format!("{name}.gigagas"));
    let (replay, record) = gigagas_bench::sweep::load_replay(&path).expect("committed dump loads");
    Loaded {
        name,
        replay,
        blocks: record.blocks,
        checksum: record.checksum,
    }
}

fn profile_path(name: &str) -> PathBuf {
    manifest()
        .join("tests/profiles")
        .join(format!("{name}.json"))
}

/// The recorded profile of `dump`, checked against it.
fn recorded(dump: &Loaded) -> ItemProfile {
    let path = profile_path(dump.name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // `{"dump_checksum", "recorded_with", "runs", "item_ns": [median ns of each item]}`
    let p: serde_json::Value = serde_json::from_str(&text).expect("a recorded profile parses");
    assert_eq!(
        p["dump_checksum"].as_str(),
        Some(dump.checksum.as_str()),
        "{} was recorded from another {}.gigagas: record it again (see the module doc)",
        path.display(),
        dump.name
    );
    let item_ns: Vec<u64> = p["item_ns"]
        .as_array()
        .expect("item_ns")
        .iter()
        .map(|ns| ns.as_u64().expect("item_ns holds nanoseconds"))
        .collect();
    assert_eq!(item_ns.len(), dump.replay.items().len());
    ItemProfile {
        run_work_ns: vec![item_ns.iter().sum()],
        item_ns,
        runs: p["runs"].as_u64().expect("runs") as usize,
    }
}

/// Every item's gas used as its time (system items at the estimate's floor, as the cut
/// weighs them): the schedule then depends on the dump alone.
fn gas_as_time(replay: &Replay) -> ItemProfile {
    let item_ns: Vec<u64> = replay
        .items()
        .iter()
        .map(|w| Estimate::GasUsed.of(w))
        .collect();
    ItemProfile {
        run_work_ns: vec![item_ns.iter().sum()],
        item_ns,
        runs: 1,
    }
}

/// The projections where chunks run more than 2 % longer than one item per claim.
fn chunk_costs_over_two_percent(dump: &Loaded, profile: &ItemProfile, times: &str) -> Vec<String> {
    let mut over = Vec::new();
    for batch in [1, dump.blocks] {
        for scheduler in SchedulerKind::NAMED {
            for workers in [16, 64] {
                let workers = std::num::NonZeroUsize::new(workers).expect("16 or 64");
                let p = project(workload(&dump.replay), profile, workers, batch, scheduler);
                let cost = p.chunk_cost().expect("projected");
                if cost > 0.02 {
                    over.push(format!(
                        "{} ({times}) batch {batch} {scheduler} {workers} workers: chunked {:.3} ms, \
                         one item per claim {:.3} ms ({:+.1} %)",
                        dump.name,
                        p.makespan_s * 1e3,
                        p.one_item_makespan_s.expect("projected") * 1e3,
                        cost * 100.0
                    ));
                }
            }
        }
    }
    over
}

#[test]
fn chunks_are_within_two_percent_of_one_item_claims_at_16_and_64_workers() {
    let mut over = Vec::new();
    for name in DUMPS {
        let dump = load(name);
        over.extend(chunk_costs_over_two_percent(
            &dump,
            &gas_as_time(&dump.replay),
            "gas as time",
        ));
        over.extend(chunk_costs_over_two_percent(
            &dump,
            &recorded(&dump),
            "recorded times",
        ));
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

#[test]
fn the_oracle_is_never_behind_gas_used_as_one_mega_block() {
    for name in DUMPS {
        let dump = load(name);
        let profile = recorded(&dump);
        for workers in [16, 64] {
            let workers = std::num::NonZeroUsize::new(workers).expect("16 or 64");
            let project = |s| project(workload(&dump.replay), &profile, workers, dump.blocks, s);
            let (oracle, gas_used) = (
                project(SchedulerKind::Oracle),
                project(SchedulerKind::GasUsed),
            );
            assert!(
                oracle.makespan_s <= gas_used.makespan_s,
                "{name}, one mega-block, {workers} workers: oracle {:.3} ms, gas-used {:.3} ms",
                oracle.makespan_s * 1e3,
                gas_used.makespan_s * 1e3
            );
        }
    }
}

/// Records `tests/profiles/<dump>.json`: the simulator's own profile (verified one-thread
/// runs, batch 1, ols, per-item medians). Run in release, on an idle machine.
#[test]
#[ignore = "records the profiles the tests read; run by hand in release"]
fn record_profiles() {
    for name in DUMPS {
        let dump = load(name);
        let runs = NonZeroUsize::new(5).unwrap();
        let rep = Repetition {
            warmup: 1,
            repeats: 0,
            verify: true,
            min_sample_ns: 0,
        };
        let (profile, _) = simulate::profile_and_measure(&dump.replay, runs, &[], rep, |_| {})
            .expect("the committed dump verifies");
        let record = serde_json::json!({
            "dump_checksum": dump.checksum,
            "recorded_with": format!(
                "simulate::profile_and_measure, {runs} runs, release build of {}",
                commit()
            ),
            "runs": profile.runs,
            "item_ns": profile.item_ns,
        });
        let path = profile_path(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string(&record).unwrap() + "\n").unwrap();
        eprintln!("wrote {}", path.display());
    }
}

/// The checkout's commit, `-dirty` when it has changes (or `unknown` without git).
fn commit() -> String {
    std::process::Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .current_dir(manifest())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}
