//! A 1G-gas block end to end, as `bench-configs/big-blocks.toml` runs it: generated
//! mainnet-like with both tries padded to mainnet's depth, read from a store by its access
//! list (`keys`: every value from the store), its root after the transactions and
//! overlapped with them, at 1 and 2 threads, every root checked against its header.
//!
//! Ignored by default: two 1G-gas blocks take a minute or more to generate, store and run
//! even in release. Run it with
//!
//! ```text
//! cargo test --release -p gigagas-bench --test big_blocks -- --ignored
//! ```

use alloy_hardforks::EthereumHardfork;
use gigagas_state::{BuildOptions, build_store};
use gigagas_workload::{GeneratorConfig, Profile, TrieSizes};
use std::path::Path;

mod common;

/// Two blocks: the second reads the nodes and state the first left open and changed.
const BLOCKS: u64 = 2;
const GAS_PER_BLOCK: u64 = 1_000_000_000;

#[test]
#[ignore = "two 1G-gas blocks: run in release with --ignored (see the module doc)"]
fn one_gigagas_blocks_verify_from_a_store_with_the_root() {
    gigagas_executor::test_utils::install_kzg_verifier();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(root).unwrap();
    let dir = tempfile::tempdir_in(root).unwrap();
    let sizes = TrieSizes::accounts(gigagas_trie::MAINNET_ACCOUNTS).with_storage(
        &gigagas_workload::WorkloadContract::LARGE,
        gigagas_trie::MAINNET_LARGE_STORAGE,
    );
    let dump = gigagas_workload::generate_with_padded_witness(
        &GeneratorConfig {
            profile: Profile::MainnetLike,
            blocks: BLOCKS,
            gas_per_block: GAS_PER_BLOCK,
            seed: 45,
            fork: EthereumHardfork::Prague,
            users: 4_000,
        },
        &sizes,
        |_, _| {},
    )
    .expect("generation succeeds");
    let gas: u64 = dump.segments[0]
        .blocks
        .iter()
        .map(|b| b.header.gas_used)
        .sum();
    assert!(
        gas > BLOCKS * GAS_PER_BLOCK * 9 / 10,
        "the blocks are full: {gas} gas"
    );
    let dump_path = dir.path().join("mainnet-like-1g.gigagas");
    let info = gigagas_dump::write_dump(&dump, &dump_path).unwrap();
    build_store(
        &dump,
        &info,
        &dir.path().join("store"),
        &BuildOptions::default(),
        &mut |_| {},
    )
    .expect("the store builds");
    let config = dir.path().join("big.toml");
    std::fs::write(
        &config,
        r#"
dumps = [{ path = "mainnet-like-1g.gigagas", label = "1G" }]
stores = ["store"]
io = ["prefetch"]
cache = ["warm"]
bal_design = ["keys"]
memory = false
threads = [1, 2]
batch = [1]
schedulers = ["gas-used"]
state_root = ["after", "overlapped"]
sequential = false
warmup = 0
repeats = 1
min_sample_ms = 0
"#,
    )
    .unwrap();
    let results = common::run_test_sweep(&config, "big blocks");
    assert_eq!(results.rows.len(), 4);
    for r in &results.rows {
        assert!(r.verified, "{}", r.point);
        let root = r.summary.median.root.expect("the root phase ran");
        assert_eq!(root.blocks, BLOCKS as usize, "{}", r.point);
        assert!(root.nodes_read > 0, "{}: {root:?}", r.point);
        assert_eq!(r.per_batch.len(), BLOCKS as usize, "{}", r.point);
        assert!(
            r.per_batch.iter().all(|b| b.gas > GAS_PER_BLOCK * 9 / 10),
            "{}: {:?}",
            r.point,
            r.per_batch
        );
    }
}
