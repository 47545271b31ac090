//! One pass, every way it can be set up (issue 43): at 1, 2 and 3 threads, per block, in
//! batches of 7 and as one mega-block, with the state in memory or read from a source (on
//! demand, prefetched, pipelined, with each access-list design), the root phase off, after
//! and overlapped, every pass gives the outputs of one thread per block in memory, and
//! verifies (roots included): its first pass building what it needs, its second taking it
//! from a [`PassCache`] that every set-up shares. A replay that keeps no bases (a dump over
//! the resident budget: a store pass then builds each batch's carried values, tables and
//! views between batches, issue 44) gives the same outputs in every store set-up.

use alloy_hardforks::EthereumHardfork;
use gigagas_executor::{
    Parallel, PassCache, PassError, Replay, RunConfig, Runner, SchedulerKind, SetupError,
    TimedWork,
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

/// [`setup`]'s dump prepared to keep no bases: memory follows the batch (after [`setup`],
/// which installs the point-evaluation verifier).
fn per_batch() -> Replay {
    let replay = Replay::with_resident_bases_limit(dump(), 0).unwrap();
    assert!(replay.resident_bases().is_none());
    replay
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
    let (_, outputs) = Parallel::reading(config, &mut readers)
        .outputs(replay)
        .unwrap();
    Parallel::reading(config, &mut readers)
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

    // Store passes over a replay that keeps nothing across batches.
    let per_batch = per_batch();
    let cache = PassCache::new();
    for root in [StateRootPhase::Off, StateRootPhase::Overlapped] {
        for read in reads().into_iter().flatten() {
            for threads in [1, 2] {
                for batch in [1, 7] {
                    let config = config(threads, batch, Some(read), root);
                    let got = outputs(&per_batch, &cache, &source, &config);
                    assert!(got == reference, "per batch, {config:?}: outputs differ");
                }
            }
        }
    }
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
