//! The access-list designs over a real state store: for both committed dumps, a
//! store built in a scratch folder with the state crate's builder, read through the seam by
//! the replay on demand (no list) and with a list carrying every pre-value (`full`), every
//! key (`keys`) or the writes only (`writes`), prefetched, pipelined or read beside
//! execution: every pass verifies
//! and its outputs equal the pass in memory, item by item. No timing is asserted.

use gigagas_bench::io::StoreSource;
use gigagas_executor::{Parallel, RunConfig, SchedulerKind, TimedWork, test_utils::output_summary};
use gigagas_grid::{BalDesign, CacheState, IoMode, StateRead, StoreRead};
use gigagas_state::{BuildOptions, build_store, open_store};
use std::path::Path;

/// A scratch folder on the disk the tests build in.
fn scratch() -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(root).unwrap();
    tempfile::tempdir_in(root).unwrap()
}

#[test]
fn every_design_over_a_store_verifies_and_equals_the_pass_in_memory() {
    gigagas_executor::test_utils::install_kzg_verifier();
    for name in ["mainnet.gigagas", "mainnet-like.gigagas"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../dumps")
            .join(name);
        let (dump, info) = gigagas_dump::read_dump(&path).unwrap();
        let dir = scratch();
        let out = dir.path().join("store");
        build_store(&dump, &info, &out, &BuildOptions::default(), &mut |_| {}).unwrap();
        let store = open_store(&out, info.checksum).unwrap();
        let replay = gigagas_executor::test_utils::prepare(dump).unwrap();
        // Per block on two workers, and all blocks as one mega-block on one.
        for (threads, batch) in [(2, 1), (1, 1000)] {
            let config = RunConfig::new(
                std::num::NonZeroUsize::new(threads).unwrap(),
                batch,
                SchedulerKind::Ols,
            );
            let (_, memory) = Parallel::new(&config).outputs(&replay).unwrap();
            let memory: Vec<String> = memory.iter().map(output_summary).collect();
            let reads = IoMode::ALL
                .into_iter()
                .flat_map(|io| StoreRead::each(io, &BalDesign::ALL))
                .map(|read| StateRead::store(read, CacheState::Warm));
            for state in reads {
                let config = config.with_work(TimedWork {
                    state,
                    ..TimedWork::default()
                });
                let what = format!("{name} {config}");
                let mut readers: Vec<StoreSource> = (0..2)
                    .map(|_| StoreSource::new(store.reader().unwrap()))
                    .collect();
                let (timings, outputs) =
                    Parallel::reading(&config, config.work.state.read().unwrap(), &mut readers)
                        .outputs(&replay)
                        .unwrap();
                replay
                    .verify_all(&outputs)
                    .unwrap_or_else(|d| panic!("{what}: {d}"));
                assert!(timings.io.read_ns > 0, "{what}: the pass read the store");
                assert_eq!(outputs.len(), memory.len(), "{what}");
                for (i, (got, want)) in outputs.iter().map(output_summary).zip(&memory).enumerate()
                {
                    assert_eq!(&got, want, "{what}: item {i}");
                }
            }
        }
    }
}
