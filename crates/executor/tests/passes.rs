//! One pass, every way it can be set up: at 1, 2 and 3 threads, per block, in
//! batches of 7 and as one mega-block, with the state in memory or read from a source (on
//! demand, prefetched, pipelined, with each access-list design), the root phase off, after
//! and overlapped, every pass gives the outputs of one thread per block in memory, and
//! verifies (roots included): its first pass building what it needs, its second taking it
//! from a [`PassCache`] that every set-up shares. A replay that keeps no bases (a dump over
//! the resident budget: a store pass then builds each batch's carried values, tables and
//! views between batches) gives the same outputs in every store set-up.

use alloy_hardforks::EthereumHardfork;
use gigagas_executor::{
    Parallel, PassCache, PassError, Replay, ResidentLimits, RunConfig, Runner, SchedulerKind,
    Sequential, SetupError, TimedWork,
    test_utils::{DumpSource, output_summary, prepare},
};
use gigagas_grid::{BalDesign, CacheState, IoMode, StateRead, StateRootPhase, StoreRead};
use gigagas_workload::{GeneratorConfig, Profile, generate_with_witness};
use std::num::NonZeroUsize;

const BLOCKS: usize = 9;

fn dump() -> gigagas_dump::Dump {
    generate_with_witness(
        &GeneratorConfig {
            profile: Profile::MainnetLike,
            blocks: BLOCKS as u64,
            gas_per_block: 1_500_000,
            seed: 43,
            fork: EthereumHardfork::Prague,
            users: 60,
        },
        |_, _| {},
    )
    .unwrap()
}

fn setup() -> (Replay, DumpSource) {
    let dump = dump();
    let source = DumpSource::of(&dump);
    (prepare(dump).unwrap(), source)
}

/// [`setup`]'s dump written to a file and loaded to keep nothing across batches, neither
/// bases nor decoded blocks: memory follows the batch (after [`setup`], which installs the
/// point-evaluation verifier). The folder holds the file while the replay reads it.
fn per_batch() -> (Replay, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("per-batch.gigagas");
    gigagas_dump::write_dump(&dump(), &path).unwrap();
    let limits = ResidentLimits {
        bases: 0,
        blocks: 0,
    };
    let (replay, _) = Replay::load(&path, limits).unwrap();
    assert!(replay.resident_bases().is_none() && !replay.keeps_blocks());
    (replay, dir)
}

/// Where a pass reads its state: memory, or a store read with `io` and `design`.
fn reads() -> Vec<Option<(IoMode, BalDesign)>> {
    let mut reads = vec![None, Some((IoMode::OnDemand, BalDesign::Keys))];
    for io in [IoMode::Prefetch, IoMode::Pipelined] {
        for design in [BalDesign::Full, BalDesign::Keys, BalDesign::Writes] {
            reads.push(Some((io, design)));
        }
    }
    reads
}

fn config(
    threads: usize,
    batch: usize,
    read: Option<(IoMode, BalDesign)>,
    root: StateRootPhase,
) -> RunConfig {
    RunConfig::new(
        NonZeroUsize::new(threads).unwrap(),
        batch,
        SchedulerKind::GasUsed,
    )
    .with_work(TimedWork {
        state_root: root,
        state: read.map_or(StateRead::Memory, |(io, design)| {
            StateRead::store(StoreRead::each(io, &[design])[0], CacheState::Warm)
        }),
        ..TimedWork::default()
    })
}

/// The outputs of one pass of `config` (summarised item by item), its own cache built and
/// dropped, and whether a pass from `cache` verifies.
fn outputs(
    replay: &Replay,
    cache: &PassCache,
    source: &DumpSource,
    config: &RunConfig,
) -> Vec<String> {
    if !config.work.state.is_store() {
        let (_, outputs) = Parallel::new(config).outputs(replay).unwrap();
        Parallel::new(config)
            .cached(cache)
            .run(replay, true)
            .unwrap_or_else(|d| panic!("{config:?}: {d}"));
        return outputs.iter().map(output_summary).collect();
    }
    let mut readers = vec![source.fresh(), source.fresh()];
    let (_, outputs) = Parallel::reading(config, config.work.state.read().unwrap(), &mut readers)
        .outputs(replay)
        .unwrap();
    Parallel::reading(config, config.work.state.read().unwrap(), &mut readers)
        .cached(cache)
        .run(replay, true)
        .unwrap_or_else(|d| panic!("{config:?}: {d}"));
    outputs.iter().map(output_summary).collect()
}

#[test]
fn every_set_up_gives_the_outputs_of_one_thread_in_memory() {
    let (replay, source) = setup();
    let cache = PassCache::new();
    let reference = outputs(
        &replay,
        &cache,
        &source,
        &config(1, 1, None, StateRootPhase::Off),
    );
    assert_eq!(reference.len(), replay.items().len());
    let mut passes = 0;
    for root in [
        StateRootPhase::Off,
        StateRootPhase::After,
        StateRootPhase::Overlapped,
    ] {
        for read in reads() {
            for threads in [1, 2, 3] {
                for batch in [1, 7, BLOCKS] {
                    let config = config(threads, batch, read, root);
                    let got = outputs(&replay, &cache, &source, &config);
                    assert!(got == reference, "{config:?}: outputs differ");
                    passes += 1;
                }
            }
        }
    }
    assert_eq!(passes, 3 * 8 * 3 * 3);

    // Passes in memory and from a store over a replay that keeps nothing across batches:
    // each batch's blocks decoded from their packed form, its bases, carried values,
    // tables and views built between batches.
    let (per_batch, _file) = per_batch();
    let cache = PassCache::new();
    let mut passes = 0;
    for root in [StateRootPhase::Off, StateRootPhase::Overlapped] {
        for read in reads() {
            for threads in [1, 2] {
                for batch in [1, 7, 50] {
                    let config = config(threads, batch, read, root);
                    let got = outputs(&per_batch, &cache, &source, &config);
                    assert!(got == reference, "per batch, {config:?}: outputs differ");
                    passes += 1;
                }
            }
        }
    }
    assert_eq!(passes, 2 * 8 * 2 * 3);
    // The client loop over packed blocks (decoded a few at a time, its window paused)
    // verifies too, roots included, in memory and from a store.
    for root in [StateRootPhase::Off, StateRootPhase::After] {
        let work = TimedWork {
            state_root: root,
            receipts: true,
            ..TimedWork::default()
        };
        Sequential::new(work)
            .run(&per_batch, true)
            .unwrap_or_else(|d| panic!("sequential, {root:?}: {d}"));
        let mut reader = source.fresh();
        Sequential::on(work, &mut reader)
            .run(&per_batch, true)
            .unwrap_or_else(|d| panic!("sequential from a store, {root:?}: {d}"));
    }
}

/// A dump file streamed into a replay that keeps no block (each batch's read again from
/// the file between batches) gives, in every set-up in memory and from a store, the
/// outputs of the decoded dump prepared whole, and verifies; so does one that keeps them.
#[test]
fn a_streamed_dump_gives_the_outputs_of_the_dump_decoded_whole() {
    let (replay, source) = setup();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("passes.gigagas");
    gigagas_dump::write_dump(&dump(), &path).unwrap();
    let cache = PassCache::new();
    let reference = outputs(
        &replay,
        &cache,
        &source,
        &config(1, 1, None, StateRootPhase::Off),
    );
    for blocks in [0, u64::MAX] {
        let limits = ResidentLimits { bases: 0, blocks };
        let (streamed, loaded) = Replay::load(&path, limits).unwrap();
        assert_eq!(streamed.keeps_blocks(), blocks > 0);
        assert_eq!(loaded.summary.blocks, BLOCKS);
        assert_eq!(streamed.items(), replay.items());
        let cache = PassCache::new();
        for root in [StateRootPhase::Off, StateRootPhase::Overlapped] {
            for read in reads() {
                for threads in [1, 2] {
                    for batch in [1, 7, 50] {
                        let config = config(threads, batch, read, root);
                        let got = outputs(&streamed, &cache, &source, &config);
                        assert!(
                            got == reference,
                            "streamed ({blocks}), {config:?}: outputs differ"
                        );
                    }
                }
            }
        }
        let work = TimedWork {
            state_root: StateRootPhase::After,
            receipts: true,
            ..TimedWork::default()
        };
        Sequential::new(work)
            .run(&streamed, true)
            .unwrap_or_else(|d| panic!("sequential, streamed ({blocks}): {d}"));
    }
}

/// A replay that reads its blocks again from the file refuses a file changed in place
/// since it was loaded: the pass fails with an error that says so, no figure, no panic.
#[test]
fn a_dump_changed_since_it_was_loaded_is_refused() {
    let _ = setup();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("changed.gigagas");
    gigagas_dump::write_dump(&dump(), &path).unwrap();
    let limits = ResidentLimits {
        bases: 0,
        blocks: 0,
    };
    let (replay, _) = Replay::load(&path, limits).unwrap();
    let config = config(2, 4, None, StateRootPhase::Off);
    Parallel::new(&config).run(&replay, true).unwrap();
    // Rewritten in place (the same inode, one byte more).
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.push(0);
    std::fs::write(&path, &bytes).unwrap();
    let refused = Parallel::new(&config).run(&replay, true).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("changed on disk since it was loaded"),
        "{refused}"
    );
    // Its own error, not a divergence: nothing about the execution is known.
    assert!(matches!(refused, PassError::Blocks(_)), "{refused:?}");
    let refused = Sequential::new(TimedWork::default())
        .run(&replay, true)
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("changed on disk since it was loaded"),
        "{refused}"
    );
    assert!(matches!(refused, PassError::Blocks(_)), "{refused:?}");
    // Verifying outputs collected before the change cannot read the blocks either.
    let unverified = replay.verify_all(&[]).unwrap_err();
    assert!(
        matches!(unverified, gigagas_executor::VerifyError::Blocks(_)),
        "{unverified:?}"
    );
}

#[test]
fn a_cache_serves_only_the_replay_it_was_built_for() {
    let (replay, _) = setup();
    let (other, _) = setup();
    let cache = PassCache::new();
    let config = config(2, 1, None, StateRootPhase::After);
    Parallel::new(&config)
        .cached(&cache)
        .run(&replay, true)
        .unwrap();
    // The same dump prepared again is another replay: its passes are refused the cache.
    let refused = Parallel::new(&config)
        .cached(&cache)
        .run(&other, true)
        .unwrap_err();
    assert!(
        matches!(refused, PassError::Setup(SetupError::ForeignCache)),
        "{refused}"
    );
    Parallel::new(&config).run(&other, true).unwrap();
}

/// The committed dumps (format version 2, and 3 with a witness) streamed into replays that
/// keep no block verify, in parallel and in the client loop, roots included where the dump
/// has a witness.
#[test]
fn committed_dumps_stream_and_verify() {
    let _ = setup();
    let dumps = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps");
    for (name, root) in [
        ("mainnet.gigagas", StateRootPhase::Off),
        ("mainnet-like-witness.gigagas", StateRootPhase::Overlapped),
    ] {
        let limits = ResidentLimits {
            bases: 0,
            blocks: 0,
        };
        let (replay, _) = Replay::load(&dumps.join(name), limits).unwrap();
        assert!(!replay.keeps_blocks(), "{name}");
        for (threads, batch) in [(1, 1), (2, 7)] {
            let config = config(threads, batch, None, root);
            Parallel::new(&config)
                .run(&replay, true)
                .unwrap_or_else(|d| panic!("{name}, {config:?}: {d}"));
        }
        let work = TimedWork {
            state_root: match root {
                StateRootPhase::Off => StateRootPhase::Off,
                _ => StateRootPhase::After,
            },
            ..TimedWork::default()
        };
        Sequential::new(work)
            .run(&replay, true)
            .unwrap_or_else(|d| panic!("{name}, sequential: {d}"));
    }
}
