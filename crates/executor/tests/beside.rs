//! Reads beside execution: a batch's state read while it runs, block by block in the
//! order its schedule first reaches them, each item waiting only for its own block. A pass
//! whose readers are slowed on purpose still verifies and starts no item before its block
//! is read; with one reader the blocks are read in the schedule's order; every design,
//! with the root phase reading the witness's nodes, verifies.

use alloy_primitives::{Address, B256, Bytes, U256};
use gigagas_executor::{
    Parallel, PassCache, RunConfig, Runner, SchedulerKind, StateError, StateSource, TimedWork,
    test_utils::{DumpSource, prepare},
};
use gigagas_grid::{
    BalDesign, CacheState, StateRead, StateRootPhase, StoreRead,
    schedule::{BatchOrder, scheduler},
};
use gigagas_trie::{Nibbles, TrieId};
use revm::{bytecode::Bytecode, state::AccountInfo};
use std::{num::NonZeroUsize, path::Path, time::Duration};

fn dump(name: &str) -> gigagas_dump::Dump {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../dumps")
        .join(name);
    gigagas_dump::read_dump(&path).unwrap().0
}

/// A source that sleeps 1 ms after every `every` account and slot reads: a slow device.
#[derive(Clone)]
struct Slow {
    inner: DumpSource,
    every: u32,
    reads: u32,
}

impl Slow {
    fn tick(&mut self) {
        self.reads += 1;
        if self.reads.is_multiple_of(self.every) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl StateSource for Slow {
    fn account(&mut self, s: usize, a: Address) -> Result<Option<AccountInfo>, StateError> {
        self.tick();
        self.inner.account(s, a)
    }

    fn storage(&mut self, s: usize, a: Address, slot: U256) -> Result<U256, StateError> {
        self.tick();
        self.inner.storage(s, a, slot)
    }

    fn code(&mut self, code_hash: B256) -> Result<Option<Bytecode>, StateError> {
        self.inner.code(code_hash)
    }

    fn trie_nodes(
        &mut self,
        s: usize,
        trie: TrieId,
        paths: &[Nibbles],
        out: &mut Vec<Option<Bytes>>,
    ) -> Result<(), StateError> {
        self.inner.trie_nodes(s, trie, paths, out)
    }
}

fn beside(threads: usize, batch: usize, design: BalDesign, root: StateRootPhase) -> RunConfig {
    RunConfig::new(
        NonZeroUsize::new(threads).unwrap(),
        batch,
        SchedulerKind::GasUsed,
    )
    .with_work(TimedWork {
        state: StateRead::store(StoreRead::Beside(design), CacheState::Warm),
        state_root: root,
        ..TimedWork::default()
    })
}

/// Slowed readers (about 1 ms per 200 keys, so the read is longer than the batch's first
/// items): the pass verifies, and every item starts after its block's read was published;
/// with one reader the blocks are published in the order the schedule first reaches them.
#[test]
fn slowed_readers_still_verify_and_no_item_starts_before_its_reads() {
    let dump = dump("mainnet.gigagas");
    let source = DumpSource::of(&dump);
    let replay = prepare(dump).unwrap();
    let blocks = replay.block_count();
    for (threads, readers) in [(1, 1), (2, 1), (2, 2)] {
        let config = beside(threads, blocks, BalDesign::Keys, StateRootPhase::Off);
        let slow = Slow {
            inner: source.fresh(),
            every: 200,
            reads: 0,
        };
        let mut sources = vec![slow; readers];
        let read = StoreRead::Beside(BalDesign::Keys);
        let t = Parallel::reading(&config, read, &mut sources)
            .run(&replay, true)
            .unwrap_or_else(|e| panic!("{threads} threads, {readers} readers: {e}"));
        let what = format!("{threads} threads, {readers} readers");
        assert_eq!(t.block_ready_ns.len(), blocks, "{what}");
        assert!(
            t.block_ready_ns.iter().all(|&r| r > 0),
            "{what}: every block read"
        );
        for (i, item) in replay.items().iter().enumerate() {
            let ready = t.block_ready_ns[item.block as usize];
            assert!(
                t.item_start_ns[i] >= ready,
                "{what}: item {i} started at {} ns, its block was read at {ready} ns",
                t.item_start_ns[i]
            );
        }
        assert_eq!(t.read_spans.len(), 1, "{what}: one batch, one read");
        assert_eq!(t.batch_read_exposed_ns.len(), 1, "{what}");
        assert!(t.batch_read_exposed_ns[0] <= t.batch_wall_ns[0], "{what}");
        if readers == 1 {
            // The schedule's order of the batch, and each block where it first appears.
            let items = &replay.items()[t.batches[0].clone()];
            let order = BatchOrder::new(items, scheduler(config.scheduler), &config);
            let mut first_reached = Vec::new();
            for pos in (0..).map_while(|c| order.chunk(c)).flatten() {
                let b = items[*pos as usize].block as usize;
                if !first_reached.contains(&b) {
                    first_reached.push(b);
                }
            }
            assert_eq!(first_reached.len(), blocks, "{what}");
            let ready: Vec<u64> = first_reached.iter().map(|&b| t.block_ready_ns[b]).collect();
            assert!(
                ready.windows(2).all(|w| w[0] <= w[1]),
                "{what}: blocks read in the schedule's order {first_reached:?}, at {ready:?}"
            );
            assert_ne!(
                first_reached,
                (0..blocks).collect::<Vec<_>>(),
                "gas order reaches the blocks out of block order"
            );
        }
    }
}

/// Every design, read beside execution with the root phase on (its nodes read from the
/// source), on the committed witness dump's first blocks: verified, roots included, at 1
/// thread a block per batch, at 2 threads all of them as one batch with the roots beside
/// the transactions.
#[test]
fn every_design_beside_execution_verifies_with_its_roots() {
    let mut dump = dump("mainnet-like-witness.gigagas");
    // Each segment's first blocks (its witness and pre-state cover them): a test of seconds.
    for segment in &mut dump.segments {
        segment.blocks.truncate(4);
    }
    let source = DumpSource::of(&dump);
    let replay = prepare(dump).unwrap();
    // The tries and tables built once for every pass.
    let cache = PassCache::new();
    let all = replay.block_count();
    for design in BalDesign::ALL {
        for (threads, batch, root) in [
            (1, 1, StateRootPhase::After),
            (2, all, StateRootPhase::Overlapped),
        ] {
            let config = beside(threads, batch, design, root);
            let mut sources = vec![source.fresh(), source.fresh()];
            let read = StoreRead::Beside(design);
            let t = Parallel::reading(&config, read, &mut sources)
                .cached(&cache)
                .run(&replay, true)
                .unwrap_or_else(|e| panic!("{config}: {e}"));
            assert!(t.io.read_ns > 0, "{config}: the pass read its state");
            assert_eq!(t.read_spans.len(), t.batches.len(), "{config}");
        }
    }
}
