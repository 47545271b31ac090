//! The state seam: a pass that reads its pre-state from a [`StateSource`] inside the timed
//! window (prefetched before each batch, pipelined, or on demand, in the replay and in the
//! sequential loop) verifies and yields the same outputs as the pass on the dump's state in
//! memory.

use alloy_primitives::{Address, B256, U256};
use gigagas_executor::{
    AccountInfo, Bytecode, ItemOutput, Parallel, PassError, Replay, RunConfig, Runner,
    SchedulerKind, Sequential, StateError, StateSource,
    test_utils::{DumpSource, prepare},
};
use gigagas_grid::{BalDesign, CacheState, IoMode, StateRead, StoreRead};

/// `config` reading a warm store with `io` (an access list of `keys` where it uses one).
fn reading(config: &RunConfig, io: IoMode) -> RunConfig {
    config.with_work(gigagas_executor::TimedWork {
        state: StateRead::store(StoreRead::each(io, &[BalDesign::Keys])[0], CacheState::Warm),
        ..config.work
    })
}
use std::path::Path;

fn load(name: &str) -> (Replay, DumpSource) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../dumps")
        .join(name);
    let (dump, _) = gigagas_dump::read_dump(&path).unwrap();
    let source = DumpSource::of(&dump);
    (prepare(dump).unwrap(), source)
}

fn gas_and_status(outputs: &[Result<ItemOutput, gigagas_executor::ExecError>]) -> Vec<(u64, bool)> {
    outputs
        .iter()
        .filter_map(|o| match o.as_ref().unwrap() {
            ItemOutput::Tx {
                gas_used, success, ..
            } => Some((*gas_used, *success)),
            ItemOutput::System { .. } => None,
        })
        .collect()
}

#[test]
fn the_sequential_loop_reads_on_demand_and_verifies() {
    // 42 one-block segments (mainnet) and one 100-block segment (generated).
    for name in ["mainnet.gigagas", "mainnet-like.gigagas"] {
        let (replay, mut source) = load(name);
        let (_, memory) = Sequential::new(Default::default())
            .outputs(&replay)
            .unwrap();
        let (timings, read) = Sequential::on(Default::default(), &mut source)
            .outputs(&replay)
            .unwrap();
        let read = read.unwrap_or_else(|e| panic!("{name}: {e}"));
        replay
            .verify_sequential(&read)
            .unwrap_or_else(|d| panic!("{name}: {d}"));
        assert_eq!(read.txs, memory.unwrap().txs, "{name}");
        assert!(source.counts.total() > 0 && timings.wall_ns > 0);
    }
}

#[test]
fn prefetched_and_pipelined_passes_verify_like_the_pass_in_memory() {
    for name in ["mainnet.gigagas", "mainnet-like.gigagas"] {
        let (replay, source) = load(name);
        for (threads, batch) in [(2, 1), (1, 1000)] {
            let config = RunConfig::new(
                std::num::NonZeroUsize::new(threads).unwrap(),
                batch,
                SchedulerKind::GasUsed,
            );
            let (_, memory) = Parallel::new(&config).outputs(&replay).unwrap();
            for mode in IoMode::ALL {
                let mut readers: Vec<Box<dyn StateSource>> = (0..3)
                    .map(|_| Box::new(source.clone()) as Box<dyn StateSource>)
                    .collect();
                let store = reading(&config, mode);
                let timings =
                    Parallel::reading(&store, store.work.state.read().unwrap(), &mut readers)
                        .run(&replay, true)
                        .unwrap_or_else(|d| panic!("{name} {config} {mode}: {d}"));
                assert!(timings.io.read_ns > 0, "{name}: the pass read its state");
                if mode != IoMode::OnDemand {
                    // On demand, two workers' reads overlap: their sum may pass the wall.
                    assert!(timings.io.exposed_ns <= timings.wall_ns);
                }
                // Read before each batch, the window waits for all of it; pipelined or
                // beside execution, for a part at most.
                if !matches!(mode, IoMode::Pipelined | IoMode::Beside) {
                    assert!(timings.io.exposed_ns >= timings.io.read_ns);
                }
                // A prefetching pass records each read's span for the trace; on demand, reads
                // are inside the items.
                assert_eq!(timings.read_spans.is_empty(), mode == IoMode::OnDemand);
            }
            // The same outputs as in memory, item by item, from bases read before each
            // batch with every key the lists name.
            let keys = StoreRead::Prefetch(BalDesign::Keys);
            let (_, read) = Parallel::reading(
                &reading(&config, IoMode::Prefetch),
                keys,
                &mut [Box::new(source.clone()) as Box<dyn StateSource>],
            )
            .outputs(&replay)
            .unwrap();
            assert_eq!(read.len(), replay.items().len());
            assert_eq!(
                gas_and_status(&read),
                gas_and_status(&memory),
                "{name} {config}"
            );
        }
    }
}

/// A store's own error, as a source would hold it.
#[derive(Debug, PartialEq, Eq)]
struct Unreadable {
    segment: usize,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "segment {} is unreadable", self.segment)
    }
}

impl std::error::Error for Unreadable {}

/// A source whose every account and slot read fails with its own error.
struct Failing;

impl StateSource for Failing {
    fn account(&mut self, segment: usize, _: Address) -> Result<Option<AccountInfo>, StateError> {
        Err(StateError::from_source(Unreadable { segment }))
    }

    fn storage(&mut self, segment: usize, _: Address, _: U256) -> Result<U256, StateError> {
        Err(StateError::from_source(Unreadable { segment }))
    }

    fn code(&mut self, _: B256) -> Result<Option<Bytecode>, StateError> {
        Ok(None)
    }
}

/// A failed read is a pass error of its own ([`PassError::Read`]), not a divergence, in
/// every mode and in the sequential loop: the source's own error travels whole as its
/// source (downcast, not a string).
#[test]
fn a_failed_read_is_its_own_error_and_keeps_the_sources_error() {
    use std::error::Error;
    let (replay, _) = load("mainnet.gigagas");
    let config = RunConfig::new(std::num::NonZeroUsize::MIN, 1, SchedulerKind::Ols);
    let prefetch = reading(&config, IoMode::Prefetch);
    let read = prefetch.work.state.read().unwrap();
    let failed = Parallel::reading(
        &prefetch,
        read,
        &mut [Box::new(Failing) as Box<dyn StateSource>],
    )
    .run(&replay, true)
    .unwrap_err();
    let PassError::Read(read) = &failed else {
        panic!("the read before the batch failed: {failed}");
    };
    assert!(failed.divergence().is_none());
    let err = &read.source;
    assert!(matches!(err, StateError::Source(_)), "{err:?}");
    assert_eq!(
        err.source().and_then(|e| e.downcast_ref::<Unreadable>()),
        Some(&Unreadable { segment: 0 })
    );
    assert_eq!(err.to_string(), "state source: segment 0 is unreadable");
    assert_eq!(read.block, replay.header(0).number);

    // Through a pass in each mode, and the client loop: the error's chain reaches the
    // source's error.
    let reaches_the_source = |failed: &PassError| {
        let mut cause: Option<&dyn Error> = Some(failed);
        let mut found = false;
        while let Some(e) = cause {
            found |= e.downcast_ref::<Unreadable>().is_some();
            cause = e.source();
        }
        found
    };
    for mode in IoMode::ALL {
        let mut readers = vec![Box::new(Failing) as Box<dyn StateSource>];
        let store = reading(&config, mode);
        let failed = Parallel::reading(&store, store.work.state.read().unwrap(), &mut readers)
            .run(&replay, true)
            .expect_err("no state can be read");
        assert!(matches!(failed, PassError::Read(_)), "{mode}: {failed}");
        assert!(reaches_the_source(&failed), "{mode}: {failed}");
    }
    let failed = Sequential::on(gigagas_executor::TimedWork::default(), &mut Failing)
        .run(&replay, true)
        .expect_err("no state can be read");
    assert!(matches!(failed, PassError::Read(_)), "sequential: {failed}");
    assert!(reaches_the_source(&failed), "sequential: {failed}");
}

/// A pass reading on demand with no reader fails with its own error, not a panic or a
/// string.
#[test]
fn an_on_demand_pass_without_readers_says_so() {
    let (replay, _) = load("mainnet.gigagas");
    let config = reading(
        &RunConfig::new(std::num::NonZeroUsize::MIN, 1, SchedulerKind::Ols),
        IoMode::OnDemand,
    );
    let io = &mut [] as &mut [Box<dyn StateSource>];
    let divergence = Parallel::reading(&config, config.work.state.read().unwrap(), io)
        .run(&replay, true)
        .expect_err("nothing can be read");
    assert!(
        divergence
            .to_string()
            .contains("state source: the pass was given no reader"),
        "{divergence}"
    );
}

/// A source that records the order of its account and slot reads, reading from `inner`.
struct Recording {
    inner: DumpSource,
    reads: Vec<(Address, usize, Option<U256>)>,
}

impl StateSource for Recording {
    fn account(
        &mut self,
        segment: usize,
        address: Address,
    ) -> Result<Option<AccountInfo>, StateError> {
        self.reads.push((address, segment, None));
        self.inner.account(segment, address)
    }

    fn storage(
        &mut self,
        segment: usize,
        address: Address,
        slot: U256,
    ) -> Result<U256, StateError> {
        self.reads.push((address, segment, Some(slot)));
        self.inner.storage(segment, address, slot)
    }

    fn code(&mut self, code_hash: B256) -> Result<Option<Bytecode>, StateError> {
        self.inner.code(code_hash)
    }
}

/// A prefetch of several blocks reads in the store's key order over the whole batch
/// (address, then segment, the account before its slots, slots ascending), not block by
/// block: one address's reads in every segment come together, where a store's cursor finds
/// them on the page it is on. The mainnet dump's 42 blocks are 42 segments that share many
/// addresses.
#[test]
fn a_prefetch_of_several_blocks_reads_in_key_order() {
    let (replay, source) = load("mainnet.gigagas");
    let n = replay.block_count();
    let mut recording = Recording {
        inner: source,
        reads: Vec::new(),
    };
    let config = reading(
        &RunConfig::new(std::num::NonZeroUsize::MIN, n, SchedulerKind::Ols),
        IoMode::Prefetch,
    );
    let read = config.work.state.read().unwrap();
    Parallel::reading(&config, read, &mut [&mut recording])
        .run(&replay, true)
        .unwrap();
    let reads = recording.reads;
    assert!(reads.len() > 30_000, "{} reads", reads.len());
    assert!(
        reads.is_sorted(),
        "reads out of key order at {:?}",
        reads.windows(2).find(|w| w[0] > w[1])
    );
    // Several segments read the same address: the merge over blocks matters here.
    let repeated = reads
        .windows(2)
        .filter(|w| w[0].0 == w[1].0 && w[0].1 != w[1].1)
        .count();
    assert!(
        repeated > 1_000,
        "{repeated} reads follow the same address's in another segment"
    );
}

/// A store pass that computes roots reads ahead, in each batch's read, the trie paths of
/// what its blocks change: every node its roots then read lies on a path read before it
/// (or beside one: a removal's sibling). A pass without a root, or reading on demand (no
/// batch read), reads none ahead.
#[test]
fn a_batch_read_reads_ahead_the_trie_paths_its_roots_then_read() {
    use gigagas_executor::test_utils::TrieRead;
    use gigagas_grid::StateRootPhase;
    use gigagas_trie::Nibbles;
    use std::collections::HashMap;
    let (replay, source) = load("mainnet-like-witness.gigagas");
    for (threads, batch, root, io, design) in [
        (
            1,
            1,
            StateRootPhase::After,
            IoMode::Prefetch,
            BalDesign::Keys,
        ),
        (
            2,
            3,
            StateRootPhase::Overlapped,
            IoMode::Prefetch,
            BalDesign::Full,
        ),
        (
            2,
            1,
            StateRootPhase::Overlapped,
            IoMode::Pipelined,
            BalDesign::Keys,
        ),
        (
            2,
            1,
            StateRootPhase::After,
            IoMode::OnDemand,
            BalDesign::Keys,
        ),
        (2, 1, StateRootPhase::Off, IoMode::Prefetch, BalDesign::Keys),
    ] {
        let config = RunConfig::new(
            std::num::NonZeroUsize::new(threads).unwrap(),
            batch,
            SchedulerKind::GasUsed,
        );
        let read = StoreRead::each(io, &[design])[0];
        let config = config.with_work(gigagas_executor::TimedWork {
            state: StateRead::store(read, CacheState::Warm),
            state_root: root,
            ..config.work
        });
        let fresh = source.fresh();
        let mut readers: Vec<Box<dyn StateSource>> = (0..2)
            .map(|_| Box::new(fresh.clone()) as Box<dyn StateSource>)
            .collect();
        let point = format!("{threads} threads, batch {batch}, {root:?}, {io:?}, {design:?}");
        Parallel::reading(&config, read, &mut readers)
            .run(&replay, true)
            .unwrap_or_else(|d| panic!("{point}: {d}"));
        let log = fresh.counts.trie_log.lock().unwrap().clone();
        // The keys read ahead so far, by segment and trie (`None`: the account trie).
        let mut ahead: HashMap<(usize, Option<B256>), Vec<Nibbles>> = HashMap::new();
        let (mut on_path, mut beside) = (0, 0);
        for read in &log {
            match read {
                TrieRead::Ahead(segment, owner, key) => ahead
                    .entry((*segment, *owner))
                    .or_default()
                    .push(Nibbles::unpack(key)),
                TrieRead::Node(segment, owner, path) => {
                    let keys = ahead.get(&(*segment, *owner)).map_or(&[][..], |k| &k[..]);
                    let before = |p: &Nibbles| keys.iter().any(|k| k.starts_with(p));
                    if before(path) {
                        on_path += 1;
                    } else if !path.is_empty() && before(&path.slice(..path.len() - 1)) {
                        beside += 1;
                    } else if root != StateRootPhase::Off && io != IoMode::OnDemand {
                        panic!(
                            "{point}: node {path:?} of {owner:?} read, its path never read ahead"
                        );
                    }
                }
            }
        }
        let read_ahead = log
            .iter()
            .filter(|r| matches!(r, TrieRead::Ahead(..)))
            .count();
        match (root, io) {
            (StateRootPhase::Off, _) | (_, IoMode::OnDemand) => {
                assert_eq!(read_ahead, 0, "{point}")
            }
            _ => assert!(
                read_ahead > 0 && on_path > beside,
                "{point}: {read_ahead} paths ahead, nodes {on_path} on them, {beside} beside"
            ),
        }
    }
}
