//! The batch hand-over under stress: each batch is one value handed to the workers at the
//! barrier and taken back the same way. Many small batches on more workers than the
//! machine has cores, in memory and from a store, with the root phase on, give the outputs
//! of one thread, pass after pass; a thread that panics ends the pass with an error and no
//! thread waits for it.

use alloy_hardforks::EthereumHardfork;
use gigagas_executor::{
    AccountInfo, Bytecode, Parallel, PassError, Replay, RunConfig, Runner, SchedulerKind,
    StateError, StateSource, TimedWork,
    test_utils::{DumpSource, output_summary, prepare},
};
use gigagas_grid::{BalDesign, CacheState, StateRead, StateRootPhase, StoreRead};
use gigagas_workload::{GeneratorConfig, Profile, generate_with_witness};
use std::{
    num::NonZeroUsize,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
        mpsc,
    },
    time::Duration,
};

const BLOCKS: u64 = 16;

fn setup() -> (Replay, DumpSource) {
    let dump = generated();
    let source = DumpSource::of(&dump);
    (prepare(dump).unwrap(), source)
}

fn generated() -> gigagas_dump::Dump {
    generate_with_witness(
        &GeneratorConfig {
            profile: Profile::MainnetLike,
            blocks: BLOCKS,
            gas_per_block: 1_500_000,
            seed: 51,
            fork: EthereumHardfork::Prague,
            users: 40,
        },
        |_, _| {},
    )
    .unwrap()
}

fn config(threads: usize, batch: usize, read: Option<StoreRead>) -> RunConfig {
    rooted(threads, batch, read, StateRootPhase::Overlapped)
}

fn rooted(
    threads: usize,
    batch: usize,
    read: Option<StoreRead>,
    state_root: StateRootPhase,
) -> RunConfig {
    RunConfig::new(
        NonZeroUsize::new(threads).unwrap(),
        batch,
        SchedulerKind::GasUsed,
    )
    .with_work(TimedWork {
        state_root,
        state: read.map_or(StateRead::Memory, |r| StateRead::store(r, CacheState::Warm)),
        ..TimedWork::default()
    })
}

/// Runs `f` on a thread of its own and fails the test if it has not returned within a
/// minute (a barrier that waits for a thread that will never come hangs).
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the pass returned (no thread waited forever at the barrier)")
}

#[test]
fn many_small_batches_on_more_workers_than_cores_give_one_threads_outputs() {
    let (replay, source) = setup();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = 4 * cores + 1;
    let (_, reference) = Parallel::new(&config(1, 1, None)).outputs(&replay).unwrap();
    let reference: Vec<String> = reference.iter().map(output_summary).collect();
    let reads = [
        None,
        Some(StoreRead::OnDemand),
        Some(StoreRead::Prefetch(BalDesign::Keys)),
        Some(StoreRead::Pipelined(BalDesign::Writes)),
    ];
    for read in reads {
        for batch in [1, 2] {
            let config = config(threads, batch, read);
            for pass in 0..3 {
                let mut readers: Vec<DumpSource> = (0..3).map(|_| source.fresh()).collect();
                let (timings, outputs) = match read {
                    None => Parallel::new(&config).outputs(&replay),
                    Some(r) => Parallel::reading(&config, r, &mut readers).outputs(&replay),
                }
                .unwrap_or_else(|e| panic!("{config:?}, pass {pass}: {e}"));
                let got: Vec<String> = outputs.iter().map(output_summary).collect();
                assert!(got == reference, "{config:?}, pass {pass}: outputs differ");
                assert_eq!(timings.batch_wall_ns.len(), replay.batches(batch).len());
                assert_eq!(timings.worker_busy_ns.len(), threads);
                assert_eq!(timings.root.blocks, BLOCKS as usize, "{config:?}");
                // And it verifies, roots included.
                let mut readers: Vec<DumpSource> = (0..3).map(|_| source.fresh()).collect();
                match read {
                    None => Parallel::new(&config).run(&replay, true),
                    Some(r) => Parallel::reading(&config, r, &mut readers).run(&replay, true),
                }
                .unwrap_or_else(|e| panic!("{config:?}, pass {pass}: {e}"));
            }
        }
    }
}

/// A source that panics on its `after`-th account read.
struct Panicking {
    inner: DumpSource,
    reads: Arc<AtomicUsize>,
    after: usize,
}

impl StateSource for Panicking {
    fn account(
        &mut self,
        segment: usize,
        address: alloy_primitives::Address,
    ) -> Result<Option<AccountInfo>, StateError> {
        if self.reads.fetch_add(1, Ordering::SeqCst) == self.after {
            panic!("the source broke on purpose");
        }
        self.inner.account(segment, address)
    }

    fn storage(
        &mut self,
        segment: usize,
        address: alloy_primitives::Address,
        slot: alloy_primitives::U256,
    ) -> Result<alloy_primitives::U256, StateError> {
        self.inner.storage(segment, address, slot)
    }

    fn code(&mut self, code_hash: alloy_primitives::B256) -> Result<Option<Bytecode>, StateError> {
        self.inner.code(code_hash)
    }

    fn trie_nodes(
        &mut self,
        segment: usize,
        trie: gigagas_trie::TrieId,
        paths: &[gigagas_trie::Nibbles],
        out: &mut Vec<Option<alloy_primitives::Bytes>>,
    ) -> Result<(), StateError> {
        self.inner.trie_nodes(segment, trie, paths, out)
    }
}

/// A read that panics (on a worker reading on demand, on the helping coordinator, or on
/// the coordinator reading the next batch) ends the pass with [`PassError::Panicked`]
/// carrying the panic's message: the barrier is broken, so no thread waits for the one
/// that left.
#[test]
fn a_thread_that_panics_ends_the_pass_with_an_error() {
    let (replay, source) = setup();
    let replay = Arc::new(replay);
    for read in [
        StoreRead::OnDemand,
        StoreRead::Prefetch(BalDesign::Keys),
        StoreRead::Pipelined(BalDesign::Keys),
    ] {
        for (threads, root) in [
            (1, StateRootPhase::Overlapped),
            (3, StateRootPhase::Overlapped),
            (3, StateRootPhase::After),
        ] {
            for after in [0, 40] {
                let (replay, source) = (replay.clone(), source.clone());
                let failed = within_a_minute(move || {
                    let reads = Arc::new(AtomicUsize::new(0));
                    let mut readers: Vec<Panicking> = (0..2)
                        .map(|_| Panicking {
                            inner: source.fresh(),
                            reads: reads.clone(),
                            after,
                        })
                        .collect();
                    let config = rooted(threads, 1, Some(read), root);
                    Parallel::reading(&config, read, &mut readers)
                        .run(&replay, true)
                        .map(|_| ())
                });
                let at = format!("{read:?}, {threads} threads, {root:?}, panic at read {after}");
                match failed {
                    Err(PassError::Panicked(message)) => {
                        assert!(message.contains("on purpose"), "{at}: {message}")
                    }
                    other => panic!("{at}: {other:?}"),
                }
            }
        }
    }
    // The pool is still usable afterwards.
    Parallel::new(&config(3, 1, None))
        .run(&replay, true)
        .unwrap();
}

/// A batch that diverges before the last ends the pass with its divergence: the workers
/// waiting for the next batch are let go at its *go*, in memory and pipelined.
#[test]
fn a_divergence_before_the_last_batch_ends_the_pass() {
    let _ = setup();
    let mut dump = generated();
    dump.block_mut(2).unwrap().receipts[0].gas_used += 1;
    let number = dump.block(2).unwrap().header.number;
    let source = DumpSource::of(&dump);
    let replay = Arc::new(prepare(dump).unwrap());
    for read in [None, Some(StoreRead::Pipelined(BalDesign::Keys))] {
        for threads in [1, 3] {
            let (replay, source) = (replay.clone(), source.clone());
            let failed = within_a_minute(move || {
                let config = config(threads, 1, read);
                let mut readers = vec![source.fresh(), source.fresh()];
                match read {
                    None => Parallel::new(&config).run(&replay, true),
                    Some(r) => Parallel::reading(&config, r, &mut readers).run(&replay, true),
                }
                .map(|_| ())
            });
            let at = format!("{read:?}, {threads} threads");
            let divergence = failed.expect_err(&at);
            let divergence = divergence.divergence().expect(&at);
            assert_eq!(divergence.block, number, "{at}: {divergence}");
        }
    }
}
