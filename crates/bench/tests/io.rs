//! Execution with I/O end to end: a store built from a generated dump, a sweep config
//! naming it, every store point (warm and cold; on demand, prefetch, pipelined) verified,
//! with its reads recorded and its ratio taken against the client loop reading the same
//! store on demand.

use alloy_hardforks::EthereumHardfork;
use gigagas_bench::{SweepOptions, run_sweep};
use gigagas_grid::{CacheState, StateRead};
use gigagas_state::{BuildOptions, build_store};
use gigagas_workload::{GeneratorConfig, Profile};
use std::{num::NonZeroUsize, path::Path};

/// A scratch folder on the disk the tests build in (not a tmpfs, where nothing can be
/// evicted).
fn scratch() -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(root).unwrap();
    tempfile::tempdir_in(root).unwrap()
}

#[test]
fn store_points_verify_and_record_their_reads() {
    // As gigagas's main does at start-up, before the sweep replays.
    gigagas_executor::test_utils::install_kzg_verifier();
    let dir = scratch();
    let dump = gigagas_workload::generate(
        &GeneratorConfig {
            profile: Profile::Erc20,
            blocks: 3,
            gas_per_block: 3_000_000,
            seed: 5,
            fork: EthereumHardfork::Prague,
            users: 30,
        },
        |_, _| {},
    )
    .expect("generation succeeds");
    let dump_path = dir.path().join("small.gigagas");
    let info = gigagas_dump::write_dump(&dump, &dump_path).unwrap();
    build_store(
        &dump,
        &info,
        &dir.path().join("store"),
        &BuildOptions {
            pad_to: Some(16 << 20),
        },
        &mut |_| {},
    )
    .expect("the store builds");
    let config = dir.path().join("io.toml");
    std::fs::write(
        &config,
        r#"
dumps = ["small.gigagas"]
state = "store"
threads = [1, 2]
batch = [1, 3]
schedulers = ["ols"]
sequential = true
warmup = 1
repeats = 2
min_sample_ms = 0
"#,
    )
    .unwrap();
    let sweep = gigagas_bench::load(&config).expect("the config loads");
    let results = run_sweep(
        &sweep,
        &SweepOptions {
            commit: "test".into(),
            note: None,
            build: None,
        },
        &mut (),
    );
    if let Some(f) = results.failures.first() {
        // A filesystem that keeps evicted pages (tmpfs) cannot make a cold pass: say so.
        assert!(f.reason.contains("not cold"), "{}: {}", f.path, f.reason);
        eprintln!("SKIPPED: cold passes on this filesystem: {}", f.reason);
        return;
    }
    // Memory, then per cache state: the sequential loop on demand, the replay on demand,
    // prefetched and pipelined; every row verified.
    let stores: Vec<_> = results
        .rows
        .iter()
        .filter(|r| r.point.work().state.is_store())
        .collect();
    assert_eq!(
        results.rows.len(),
        1 + 4 + 2 * (1 + 3 * 4),
        "{:#?}",
        results.rows.len()
    );
    assert!(results.rows.iter().all(|r| r.verified));
    for cache in CacheState::ALL {
        let base = StateRead::on_demand(cache);
        assert!(
            results
                .rows
                .iter()
                .any(|r| r.point.is_sequential() && r.point.work().state == base),
            "the client loop reads on demand from the {cache} store"
        );
    }
    for r in &stores {
        let io = r.io.expect("a store row records its reads");
        assert!(io.accounts > 0 && io.slots > 0 && io.bytes > 0, "{io:?}");
        assert!(io.read_s > 0.0, "{io:?}");
        if !r.point.is_sequential() {
            // Against the client loop on the same store and cache.
            assert!(r.vs_sequential.is_some(), "{}", r.point);
            // Some reading is always in the window (a prefetch's all of it, a pipelined
            // pass's first batch at least). No bound against the read time: the two are
            // separate clocks, and a loaded machine stretches one more than the other.
            assert!(io.exposed_s > 0.0 && io.exposed_s.is_finite(), "{io:?}");
        }
        if matches!(
            r.point.work().state,
            StateRead::Store {
                cache: CacheState::Cold,
                ..
            }
        ) {
            assert!(io.resident_before < 0.5, "a cold pass starts cold: {io:?}");
        }
    }
    // The timeline is of the widest point (the first such: the in-memory one, which reads
    // nothing).
    let t = results.timeline.as_ref().expect("a timeline");
    assert_eq!((t.config.as_str(), t.read_ns), ("BAL 2t b1 ols", 0));
    // The table says what was read.
    let table = gigagas_report::table::io_table(std::slice::from_ref(&results));
    assert_eq!(table.lines().count(), 2 + stores.len(), "{table}");
    assert!(table.contains("[cold store, pipelined, keys]"), "{table}");
}

#[test]
fn a_store_of_another_dump_is_refused_naming_both_checksums() {
    // As gigagas's main does at start-up, before the sweep replays.
    gigagas_executor::test_utils::install_kzg_verifier();
    let dir = scratch();
    let make = |seed, name: &str| {
        let dump = gigagas_workload::generate(
            &GeneratorConfig {
                profile: Profile::Transfers,
                blocks: 1,
                gas_per_block: 1_000_000,
                seed,
                fork: EthereumHardfork::Prague,
                users: 10,
            },
            |_, _| {},
        )
        .unwrap();
        let path = dir.path().join(name);
        let info = gigagas_dump::write_dump(&dump, &path).unwrap();
        (dump, info)
    };
    let (a, a_info) = make(1, "a.gigagas");
    let (_, b_info) = make(2, "b.gigagas");
    build_store(
        &a,
        &a_info,
        &dir.path().join("store"),
        &BuildOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    let err = gigagas_bench::StoreContext::open(
        &dir.path().join("store"),
        b_info.checksum,
        NonZeroUsize::MIN,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(&a_info.checksum_hex()) && err.contains(&b_info.checksum_hex()),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
