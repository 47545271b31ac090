//! Execution with I/O end to end: a store built from a generated dump, a sweep config
//! naming it, every store point (warm and cold; on demand, prefetch, pipelined, beside)
//! verified,
//! with its reads recorded and its ratio taken against the client loop reading the same
//! store on demand.

use alloy_hardforks::EthereumHardfork;
use gigagas_grid::{CacheState, IoMode, StateRead};
use gigagas_state::{BuildOptions, build_store};
use gigagas_workload::{GeneratorConfig, Profile};
use std::{num::NonZeroUsize, path::Path};

mod common;

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
io = ["on-demand", "prefetch", "pipelined", "beside"]
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
    // A store that cannot be evicted (its pages kept, as on a tmpfs) fails the sweep and
    // this test: a cold point never passes unchecked.
    let results = common::run_test_sweep(&config, "store points");
    // Memory, then per cache state: the sequential loop on demand, the replay on demand,
    // prefetched, pipelined and read beside execution; every row verified.
    let stores: Vec<_> = results
        .rows
        .iter()
        .filter(|r| r.point.work().state.is_store())
        .collect();
    assert_eq!(
        results.rows.len(),
        1 + 4 + 2 * (1 + 4 * 4),
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
            // pass's first batch at least); beside execution, what the workers waited for,
            // which may be nothing. No bound against the read time: the two are separate
            // clocks, and a loaded machine stretches one more than the other.
            let beside = r.point.work().state.read().map(|r| r.io()) == Some(IoMode::Beside);
            assert!(io.exposed_s.is_finite(), "{io:?}");
            assert!(beside || io.exposed_s > 0.0, "{io:?}");
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

/// The committed witness dump (`dumps/mainnet-like-witness.gigagas`, 100 blocks) read from a
/// store with the root on: every block's root equals its header's with the trie nodes read
/// by path as each block needs them, cold and warm, at 1 and 2 threads, after and
/// overlapped, the state read beside execution. Every pass reads the same nodes, each
/// once; later blocks find nodes earlier ones read; each block's root splits into its reads
/// and its hashing.
#[test]
fn the_committed_witness_dump_reads_its_trie_nodes_per_block() {
    gigagas_executor::test_utils::install_kzg_verifier();
    let dir = scratch();
    let dump_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet-like-witness.gigagas");
    let (dump, info) = gigagas_dump::read_dump(&dump_path).unwrap();
    build_store(
        &dump,
        &info,
        &dir.path().join("store"),
        &BuildOptions::default(),
        &mut |_| {},
    )
    .expect("the store builds");
    let stored = gigagas_state::open_store(&dir.path().join("store"), info.checksum)
        .unwrap()
        .meta()
        .trie_nodes;
    let config = dir.path().join("root.toml");
    std::fs::write(
        &config,
        format!(
            r#"
dumps = ["{}"]
stores = ["store"]
io = ["beside"]
cache = ["cold", "warm"]
bal_design = ["full"]
memory = false
threads = [1, 2]
batch = [1]
schedulers = ["ols"]
state_root = ["after", "overlapped"]
sequential = false
warmup = 0
repeats = 1
min_sample_ms = 0
"#,
            dump_path.display()
        ),
    )
    .unwrap();
    let results = common::run_test_sweep(&config, "witness store");
    assert_eq!(results.rows.len(), 8);
    let mut read = Vec::new();
    for r in &results.rows {
        assert!(r.verified, "{}", r.point);
        let root = r.summary.median.root.expect("the root phase ran");
        assert_eq!(root.blocks, 100, "{}", r.point);
        assert!(root.read_s > 0.0, "{}: {root:?}", r.point);
        assert!(
            root.nodes_read > 0 && root.nodes_read <= stored,
            "{}: {root:?}, {stored} stored",
            r.point
        );
        assert!(root.nodes_held > 0, "{}: {root:?}", r.point);
        read.push(root.nodes_read);
        assert_eq!(r.per_batch.len(), 100, "{}", r.point);
        // Every block counts its root's device reads (0 warm), summing to the pass's.
        let faults: Option<f64> = r.per_batch.iter().map(|b| b.root_faults).sum();
        assert_eq!(faults, Some(root.faults as f64), "{}", r.point);
        for b in &r.per_batch {
            assert!(
                b.root_read_s > 0.0 && b.root_read_s < b.root_busy_s,
                "{}: block {}: {b:?}",
                r.point,
                b.first_block
            );
        }
    }
    assert!(read.iter().all(|n| *n == read[0]), "{read:?}");
}
