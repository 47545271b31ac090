//! No thread starts inside a timed window: a pass in every read mode, with the
//! root phase on, at 1 to 3 threads, finds at each window's close only threads that were
//! alive when it opened, and every read it made ran on such a thread. The pools are set up
//! before the window, never inside it.
//!
//! Its own test binary: another test running beside it would start threads of its own.
#![cfg(target_os = "linux")]

use alloy_hardforks::EthereumHardfork;
use gigagas_executor::{
    AccountInfo, Bytecode, Parallel, RunConfig, Runner, SchedulerKind, StateError, StateSource,
    TimedWork, WindowObserver, observe_windows,
    test_utils::{DumpSource, prepare},
};
use gigagas_grid::{BalDesign, CacheState, IoMode, StateRead, StateRootPhase, StoreRead};
use gigagas_workload::{GeneratorConfig, Profile, generate_with_witness};
use std::{
    collections::BTreeSet,
    num::NonZeroUsize,
    sync::{Arc, Mutex},
};

/// The process's threads now.
fn threads() -> BTreeSet<u32> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc is mounted")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The calling thread's id.
fn me() -> u32 {
    std::fs::read_link("/proc/thread-self")
        .expect("/proc is mounted")
        .file_name()
        .and_then(|n| n.to_str()?.parse().ok())
        .expect("a thread id")
}

/// Records the threads alive at each window's opening, and any found at its close that
/// were not.
#[derive(Default)]
struct Watch {
    open: Mutex<BTreeSet<u32>>,
    seen: Mutex<BTreeSet<u32>>,
    started: Mutex<Vec<u32>>,
}

impl WindowObserver for Watch {
    fn opened(&self) {
        let now = threads();
        self.seen.lock().unwrap().extend(&now);
        *self.open.lock().unwrap() = now;
    }
    fn closed(&self) {
        let open = self.open.lock().unwrap();
        let new = threads().difference(&open).copied().collect::<Vec<_>>();
        self.started.lock().unwrap().extend(new);
    }
}

/// A source that notes the thread of every read.
struct Noting {
    inner: DumpSource,
    on: Arc<Mutex<BTreeSet<u32>>>,
}

impl StateSource for Noting {
    fn account(
        &mut self,
        s: usize,
        a: alloy_primitives::Address,
    ) -> Result<Option<AccountInfo>, StateError> {
        self.on.lock().unwrap().insert(me());
        self.inner.account(s, a)
    }
    fn storage(
        &mut self,
        s: usize,
        a: alloy_primitives::Address,
        slot: alloy_primitives::U256,
    ) -> Result<alloy_primitives::U256, StateError> {
        self.on.lock().unwrap().insert(me());
        self.inner.storage(s, a, slot)
    }
    fn code(&mut self, h: alloy_primitives::B256) -> Result<Option<Bytecode>, StateError> {
        self.on.lock().unwrap().insert(me());
        self.inner.code(h)
    }
    fn trie_nodes(
        &mut self,
        segment: usize,
        trie: gigagas_trie::TrieId,
        paths: &[gigagas_trie::Nibbles],
        out: &mut Vec<Option<alloy_primitives::Bytes>>,
    ) -> Result<(), StateError> {
        self.on.lock().unwrap().insert(me());
        self.inner.trie_nodes(segment, trie, paths, out)
    }
}

#[test]
fn no_thread_starts_inside_a_timed_window() {
    let dump = generate_with_witness(
        &GeneratorConfig {
            profile: Profile::MainnetLike,
            blocks: 4,
            gas_per_block: 1_500_000,
            seed: 44,
            fork: EthereumHardfork::Prague,
            users: 50,
        },
        |_, _| {},
    )
    .unwrap();
    let source = DumpSource::of(&dump);
    let replay = prepare(dump).unwrap();
    let mut reads = vec![None];
    for io in IoMode::ALL {
        reads.push(Some(io));
    }
    let mut passes = 0;
    for read in reads {
        for threads in [1, 2, 3] {
            for batch in [1, 4] {
                let config = RunConfig::new(
                    NonZeroUsize::new(threads).unwrap(),
                    batch,
                    SchedulerKind::GasUsed,
                )
                .with_work(TimedWork {
                    state_root: StateRootPhase::Overlapped,
                    state: read.map_or(StateRead::Memory, |io| {
                        StateRead::store(
                            StoreRead::each(io, &[BalDesign::Keys])[0],
                            CacheState::Warm,
                        )
                    }),
                    ..TimedWork::default()
                });
                let watch = Arc::new(Watch::default());
                observe_windows(Some(watch.clone()));
                let on = Arc::new(Mutex::new(BTreeSet::new()));
                let result = match read {
                    None => Parallel::new(&config).run(&replay, true),
                    Some(_) => {
                        let mut readers: Vec<Noting> = (0..3)
                            .map(|_| Noting {
                                inner: source.fresh(),
                                on: on.clone(),
                            })
                            .collect();
                        Parallel::reading(&config, config.work.state.read().unwrap(), &mut readers)
                            .run(&replay, true)
                    }
                };
                observe_windows(None);
                result.unwrap_or_else(|d| panic!("{config:?}: {d}"));
                let started = watch.started.lock().unwrap().clone();
                assert!(
                    started.is_empty(),
                    "{config:?}: threads {started:?} started inside a window"
                );
                let seen = watch.seen.lock().unwrap().clone();
                assert!(!seen.is_empty(), "{config:?}: no window opened");
                let strangers: Vec<u32> = on.lock().unwrap().difference(&seen).copied().collect();
                assert!(
                    strangers.is_empty(),
                    "{config:?}: reads on threads {strangers:?}, none alive when a window opened"
                );
                if read.is_some() {
                    assert!(!on.lock().unwrap().is_empty(), "{config:?}: nothing read");
                }
                passes += 1;
            }
        }
    }
    assert_eq!(passes, (1 + IoMode::ALL.len()) * 3 * 2);
}
