//! The access-list designs: a pass reading its state from a source with the list
//! carrying every pre-value (`full`), every key (`keys`) or the writes only (`writes`),
//! prefetched before each batch or pipelined, verifies and yields the same outputs as the
//! pass on the dump's state in memory, on both committed dumps; the `full` list the replay
//! decodes is the dump crate's, byte for byte.

use gigagas_dump::Dump;
use gigagas_executor::{
    Parallel, Replay, RunConfig, Runner, SchedulerKind, TimedWork,
    test_utils::{DumpSource, output_summary, prepare},
};
use gigagas_grid::{BalDesign, CacheState, IoMode, StateRead, StoreRead};
use std::{path::Path, sync::atomic::Ordering};

fn read(name: &str) -> Dump {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../dumps")
        .join(name);
    gigagas_dump::read_dump(&path).unwrap().0
}

fn store(io: IoMode, design: BalDesign) -> TimedWork {
    TimedWork {
        state: StateRead::store(StoreRead::each(io, &[design])[0], CacheState::Warm),
        ..TimedWork::default()
    }
}

#[test]
fn every_design_verifies_and_equals_the_pass_in_memory() {
    for name in ["mainnet.gigagas", "mainnet-like.gigagas"] {
        let dump = read(name);
        let source = DumpSource::of(&dump);
        let replay = prepare(dump).unwrap();
        for (threads, batch) in [(2, 1), (1, 1000)] {
            let config = RunConfig::new(
                std::num::NonZeroUsize::new(threads).unwrap(),
                batch,
                SchedulerKind::GasUsed,
            );
            let (_, memory) = Parallel::new(&config).outputs(&replay).unwrap();
            let memory: Vec<String> = memory.iter().map(output_summary).collect();
            for io in [IoMode::Prefetch, IoMode::Pipelined] {
                for design in BalDesign::ALL {
                    let config = config.with_work(store(io, design));
                    let what = format!("{name} {config}");
                    let mut readers = vec![source.fresh(); 3];
                    let (timings, outputs) =
                        Parallel::reading(&config, config.work.state.read().unwrap(), &mut readers)
                            .outputs(&replay)
                            .unwrap();
                    // Verified like any pass.
                    replay
                        .verify_all(&outputs)
                        .unwrap_or_else(|d| panic!("{what}: {d}"));
                    assert!(timings.io.read_ns > 0, "{what}: the pass read its state");
                    // Only `full` decodes; the others read straight into the tables.
                    assert_eq!(timings.io.build_ns > 0, design == BalDesign::Full, "{what}");
                    let counts = &readers[0].counts;
                    if design == BalDesign::Full {
                        // Every value arrives with the block: only code is read.
                        assert_eq!(counts.accounts.load(Ordering::Relaxed), 0, "{what}");
                        assert_eq!(counts.slots.load(Ordering::Relaxed), 0, "{what}");
                        assert!(counts.codes.load(Ordering::Relaxed) > 0, "{what}");
                    } else {
                        assert!(counts.accounts.load(Ordering::Relaxed) > 0, "{what}");
                        assert!(counts.slots.load(Ordering::Relaxed) > 0, "{what}");
                    }
                    // The same outputs as in memory, item by item.
                    assert_eq!(outputs.len(), memory.len(), "{what}");
                    for (i, (got, want)) in
                        outputs.iter().map(output_summary).zip(&memory).enumerate()
                    {
                        assert_eq!(&got, want, "{what}: item {i}");
                    }
                }
            }
        }
    }
}

/// With the writes only in the list, what the block only reads is read while transactions
/// run: fewer keys before the batch than the list names, and reads on demand during it.
#[test]
fn the_writes_design_leaves_the_reads_to_demand() {
    let dump = read("mainnet.gigagas");
    let source = DumpSource::of(&dump);
    let replay = prepare(dump).unwrap();
    let n = replay.block_count();
    let named: usize = replay
        .blocks(0..n)
        .unwrap()
        .iter()
        .map(|(_, b)| {
            b.bal().accounts.len()
                + b.bal()
                    .accounts
                    .values()
                    .map(|a| a.storage.storage.len())
                    .sum::<usize>()
        })
        .sum();
    let keys = source.fresh();
    let keys_config = RunConfig::new(std::num::NonZeroUsize::MIN, 1, SchedulerKind::Ols)
        .with_work(store(IoMode::Prefetch, BalDesign::Keys));
    let read = StoreRead::Prefetch(BalDesign::Keys);
    Parallel::reading(&keys_config, read, &mut [keys.clone()])
        .run(&replay, true)
        .unwrap();
    let keys_read =
        keys.counts.accounts.load(Ordering::Relaxed) + keys.counts.slots.load(Ordering::Relaxed);
    assert_eq!(keys_read, named, "`keys` reads every key the lists name");

    let config = RunConfig::new(std::num::NonZeroUsize::MIN, 1, SchedulerKind::Ols)
        .with_work(store(IoMode::Prefetch, BalDesign::Writes));
    let mut readers = vec![source.fresh()];
    let timings = Parallel::reading(&config, config.work.state.read().unwrap(), &mut readers)
        .run(&replay, true)
        .unwrap();
    // Reads on demand are exposed, all of them: the window waited for more than the
    // prefetches alone.
    assert!(
        timings.io.exposed_ns >= timings.io.read_ns,
        "{:?}",
        timings.io
    );
    let writes_read = readers[0].counts.accounts.load(Ordering::Relaxed)
        + readers[0].counts.slots.load(Ordering::Relaxed);
    assert!(
        writes_read > 0 && writes_read <= named,
        "{writes_read} reads of {named} keys"
    );
}

/// The `full` list the replay decodes is the one the dump crate builds from the dump (the
/// same RLP, byte for byte), for every block of both dumps, segments of one block and a
/// segment of a hundred.
#[test]
fn the_full_list_is_the_dump_crates() {
    for name in ["mainnet.gigagas", "mainnet-like.gigagas"] {
        let dump = read(name);
        let expected: Vec<Vec<u8>> = dump
            .segments
            .iter()
            .flat_map(|s| gigagas_dump::full_access_lists(s).unwrap())
            .map(|l| l.encode_to_vec())
            .collect();
        let replay: Replay = prepare(dump).unwrap();
        let mut cursor = gigagas_executor::BaseCursor::new(&replay);
        let blocks = replay.blocks(0..replay.block_count()).unwrap();
        for (b, expected) in expected.iter().enumerate() {
            let block = blocks.get(b);
            let got = replay
                .full_list(block, &cursor.base(b, block).unwrap())
                .encode_to_vec();
            assert!(
                &got == expected,
                "{name} block {}: {} bytes, the dump crate's {}",
                replay.header(b).number,
                got.len(),
                expected.len()
            );
        }
    }
}
