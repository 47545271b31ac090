//! Reads beside execution ([`gigagas_grid::StoreRead::Beside`]): a batch's state is read
//! while the batch runs, and an item waits only for its own block's read.
//!
//! The access list names a block's keys, not a transaction's (the reads are per block), so
//! the unit of readiness is the block: an item's accounts, slots and code are in once its
//! block is read. The readers walk the batch's blocks in the order the schedule first
//! reaches them ([`read_order`]): the block of the first item claimed is read first, then
//! the block of the first item of another block, and so on.
//!
//! How readiness is known: one flag per block of the batch ([`Progress`]), set once with
//! `Release` by the reader that read it after its last value is written, and read with
//! `Acquire` by a worker before each item (one load on the fast path). Which threads read:
//! the pass's readers, each on a thread of its own beside the workers (a worker never
//! reads ahead); each reader claims the next block of the order from one cursor, so the
//! readers fill the blocks in the schedule's order whatever their count. A worker that
//! reaches an item whose block is unread spins, then yields its core to the readers, until
//! the flag is set; the time it waited is what the read exposed.
//!
//! The values go straight into the batch's own tables (the one owned value handed at the
//! barrier): each block's table is written by the one reader that claimed it, before its
//! flag is set, and read by the workers only after; no lock is on a worker's path.

use crate::prestate::StateError;
use gigagas_grid::schedule::BatchOrder;
use std::{
    sync::{
        Mutex,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::Instant,
};

/// How many times a waiting worker spins before it yields its core.
const SPINS_BEFORE_YIELD: u32 = 64;

/// The batch's blocks (relative to its first, `first_block`) in the order the schedule
/// first reaches them: each block at the position of its first item in `order`; blocks with
/// no item in the order (none in a well-formed batch) follow in block order.
/// `block_of(pos)` is the block of the batch's item at position `pos`.
pub(crate) fn read_order(
    order: &BatchOrder,
    blocks: usize,
    first_block: usize,
    block_of: impl Fn(u32) -> usize,
) -> Vec<u32> {
    let mut seen = vec![false; blocks];
    let mut out = Vec::with_capacity(blocks);
    for pos in (0..).map_while(|c| order.chunk(c)).flatten() {
        let i = block_of(*pos) - first_block;
        if !std::mem::replace(&mut seen[i], true) {
            out.push(i as u32);
        }
    }
    out.extend((0..blocks as u32).filter(|&i| !seen[i as usize]));
    out
}

/// One batch's read beside execution: the order its blocks are read in, which are read,
/// and when.
pub(crate) struct Progress {
    /// Blocks (relative to the batch's first) in the order they are read.
    order: Vec<u32>,
    /// The next position of `order` to claim.
    next: AtomicUsize,
    /// The next position of `order` whose trie paths to read ahead (after every block's
    /// state).
    next_paths: AtomicUsize,
    /// Per block: set once its values are all in its table.
    ready: Vec<AtomicBool>,
    /// Per block: when it was set, nanoseconds after `epoch`.
    ready_ns: Vec<AtomicU64>,
    /// When the last reader finished (its blocks and their trie paths), nanoseconds after
    /// `epoch`.
    done_ns: AtomicU64,
    /// A reader panicked: every flag counts as set (its items then read no value and fail).
    abandoned: AtomicBool,
    /// The first failed read.
    failure: Mutex<Option<(usize, StateError)>>,
    /// When the pass's timed window opened.
    epoch: Instant,
}

impl Progress {
    /// Nothing read yet of a batch whose blocks are read in `order` (from [`read_order`]),
    /// times after `epoch`.
    pub(crate) fn new(order: Vec<u32>, epoch: Instant) -> Self {
        let blocks = order.len();
        Self {
            order,
            next: AtomicUsize::new(0),
            next_paths: AtomicUsize::new(0),
            ready: (0..blocks).map(|_| AtomicBool::new(false)).collect(),
            ready_ns: (0..blocks).map(|_| AtomicU64::new(0)).collect(),
            done_ns: AtomicU64::new(0),
            abandoned: AtomicBool::new(false),
            failure: Mutex::new(None),
            epoch,
        }
    }

    /// The next block to read (relative to the batch's first), or `None` when every one is
    /// claimed.
    pub(crate) fn claim(&self) -> Option<usize> {
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        self.order.get(k).map(|&i| i as usize)
    }

    /// The next block whose trie paths to read ahead, once every block's state is claimed.
    pub(crate) fn claim_paths(&self) -> Option<usize> {
        let k = self.next_paths.fetch_add(1, Ordering::Relaxed);
        self.order.get(k).map(|&i| i as usize)
    }

    /// A read for block `i` failed: kept when it is the first failure.
    pub(crate) fn fail(&self, i: usize, e: StateError) {
        let mut first = self.failure.lock().expect("no panic holding it");
        first.get_or_insert((i, e));
    }

    /// Block `i`'s values are all in its table (or its read failed: `failed`, kept by
    /// [`Progress::fail`]; its items then find no value and fail too).
    pub(crate) fn publish(&self, i: usize, failed: Option<StateError>) {
        if let Some(e) = failed {
            self.fail(i, e);
        }
        self.ready_ns[i].store(self.epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
        self.ready[i].store(true, Ordering::Release);
    }

    /// A reader has nothing more to read.
    pub(crate) fn reader_done(&self) {
        let now = self.epoch.elapsed().as_nanos() as u64;
        self.done_ns.fetch_max(now, Ordering::Relaxed);
    }

    /// When the last reader finished, nanoseconds after the window opened.
    pub(crate) fn done_ns(&self) -> u64 {
        self.done_ns.load(Ordering::Relaxed)
    }

    /// A reader panicked: no block is waited for any longer.
    pub(crate) fn abandon(&self) {
        self.abandoned.store(true, Ordering::Release);
    }

    /// Whether block `i` may be read by the workers.
    #[inline]
    pub(crate) fn is_ready(&self, i: usize) -> bool {
        self.ready[i].load(Ordering::Acquire) || self.abandoned.load(Ordering::Acquire)
    }

    /// Wait until block `i` is read: returns at once when it is (one `Acquire` load), else
    /// spins, then yields, and returns how long it waited, nanoseconds.
    #[inline]
    pub(crate) fn wait(&self, i: usize) -> u64 {
        if self.is_ready(i) {
            return 0;
        }
        self.wait_slow(i)
    }

    #[cold]
    fn wait_slow(&self, i: usize) -> u64 {
        let start = Instant::now();
        let mut spins = 0u32;
        while !self.is_ready(i) {
            if spins < SPINS_BEFORE_YIELD {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        start.elapsed().as_nanos() as u64
    }

    /// The first failed read: the block (relative to the batch's first) and its error.
    pub(crate) fn take_failure(&self) -> Option<(usize, StateError)> {
        self.failure.lock().expect("no panic holding it").take()
    }

    /// When each block (relative to the batch's first) was read, nanoseconds after the
    /// window opened (0: never).
    pub(crate) fn ready_ns(&self) -> impl Iterator<Item = u64> + '_ {
        self.ready_ns.iter().map(|t| t.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gigagas_grid::{
        RunConfig, SchedulerKind,
        schedule::{ItemKind, WorkItem, scheduler},
    };
    use std::num::NonZeroUsize;

    fn item(block: u32, gas: u64) -> WorkItem {
        WorkItem {
            block,
            kind: ItemKind::Tx(0),
            gas_used: gas,
            gas_limit: gas,
            measured_ns: 0,
        }
    }

    /// The readers' order is the order the schedule first reaches each block: ordered by
    /// gas, the block of the heaviest item comes first, and every block once.
    #[test]
    fn blocks_are_read_in_the_order_the_schedule_reaches_them() {
        // Blocks 10..13; the heaviest item is block 12's, then block 10's, then 11's.
        let items = [
            item(10, 5),
            item(10, 50),
            item(11, 7),
            item(12, 90),
            item(12, 1),
            item(11, 3),
        ];
        for kind in [SchedulerKind::GasUsed, SchedulerKind::Ols] {
            let config = RunConfig::new(NonZeroUsize::new(2).unwrap(), 3, kind);
            let order = BatchOrder::new(&items, scheduler(kind), &config);
            let positions: Vec<u32> = (0..)
                .map_while(|c| order.chunk(c))
                .flatten()
                .copied()
                .collect();
            let got = read_order(&order, 3, 10, |p| items[p as usize].block as usize);
            // Expected from the positions themselves: first appearance of each block.
            let mut expected = Vec::new();
            for p in &positions {
                let b = items[*p as usize].block - 10;
                if !expected.contains(&b) {
                    expected.push(b);
                }
            }
            assert_eq!(got, expected, "{kind:?}");
            assert_eq!(got.len(), 3);
        }
        let config = RunConfig::new(NonZeroUsize::MIN, 3, SchedulerKind::GasUsed);
        let order = BatchOrder::new(&items, scheduler(SchedulerKind::GasUsed), &config);
        assert_eq!(
            read_order(&order, 3, 10, |p| items[p as usize].block as usize),
            [2, 0, 1],
            "heaviest first: block 12, then 10, then 11"
        );
    }

    /// A block is waited for until its flag is set, and the wait ends once it is.
    #[test]
    fn a_wait_ends_when_its_block_is_published() {
        let progress = Progress::new(vec![1, 0], Instant::now());
        assert_eq!(progress.claim(), Some(1));
        assert!(!progress.is_ready(1));
        std::thread::scope(|s| {
            let waiter = s.spawn(|| progress.wait(1));
            std::thread::sleep(std::time::Duration::from_millis(5));
            progress.publish(1, None);
            assert!(waiter.join().unwrap() > 0);
        });
        assert!(progress.is_ready(1) && !progress.is_ready(0));
        assert_eq!(progress.claim(), Some(0));
        assert_eq!(progress.claim(), None);
        progress.publish(0, Some(StateError::NoReader));
        assert_eq!(progress.take_failure(), Some((0, StateError::NoReader)));
    }
}
