//! A store whose trie tables hold the padded tries' virtual nodes beside the witness's gives
//! every block the root its header holds, reading the same nodes as a store of the witness's
//! nodes alone.

use alloy_hardforks::EthereumHardfork;
use gigagas_state::{BuildOptions, build_store};
use gigagas_workload::{GeneratorConfig, Profile, TrieSizes, WorkloadContract};
use std::path::Path;

mod common;

/// A scratch folder on the disk the tests build in.
fn scratch() -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(root).unwrap();
    tempfile::tempdir_in(root).unwrap()
}

#[test]
fn roots_from_a_store_with_virtual_nodes_are_the_headers() {
    gigagas_executor::test_utils::install_kzg_verifier();
    let dir = scratch();
    let config = GeneratorConfig {
        profile: Profile::MainnetLike,
        blocks: 3,
        gas_per_block: 3_000_000,
        seed: 28,
        fork: EthereumHardfork::Prague,
        users: 50,
    };
    let sizes = TrieSizes::accounts(1 << 20).with_storage(&WorkloadContract::LARGE, 1 << 20);
    let dump = gigagas_workload::generate_with_padded_witness(&config, &sizes, |_, _| {})
        .expect("dump generates");
    let dump_path = dir.path().join("padded.gigagas");
    let info = gigagas_dump::write_dump(&dump, &dump_path).unwrap();
    let mut nodes_read = Vec::new();
    for (name, pad_to) in [("bare", None), ("padded", Some(32 << 20))] {
        let summary = build_store(
            &dump,
            &info,
            &dir.path().join(name),
            &BuildOptions { pad_to },
            &mut |_| {},
        )
        .expect("the store builds");
        assert_eq!(summary.meta.pad_trie_nodes > 0, pad_to.is_some());
        let config = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &config,
            format!(
                r#"
dumps = ["padded.gigagas"]
stores = ["{name}"]
io = ["prefetch"]
cache = ["warm"]
bal_design = ["full"]
memory = false
threads = [1, 2]
batch = [1]
schedulers = ["ols"]
state_root = ["after"]
sequential = false
warmup = 0
repeats = 1
min_sample_ms = 0
"#
            ),
        )
        .unwrap();
        let results = common::run_test_sweep(&config, name);
        assert_eq!(results.rows.len(), 2);
        for r in &results.rows {
            assert!(r.verified, "{name}: {}", r.point);
            let root = r.summary.median.root.expect("the root phase ran");
            assert_eq!(root.blocks, 3, "{name}: {}", r.point);
            nodes_read.push(root.nodes_read);
        }
    }
    assert!(nodes_read[0] > 0, "{nodes_read:?}");
    assert!(
        nodes_read.iter().all(|n| *n == nodes_read[0]),
        "{nodes_read:?}"
    );
}
