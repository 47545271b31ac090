//! Persistence as a client does it: [`BackgroundWriter`], a [`StoreWriter`] on a thread of
//! its own that commits the blocks handed to it in groups.
//!
//! - The pass hands each block to the writer once its root is known
//!   ([`BackgroundWriter::hand`]): the block's changes move into the writer's queue, and
//!   the block's chain goes on.
//! - The writer thread (`gigagas-persist`) sleeps until the head (the blocks handed) is
//!   more than [`Backlog::threshold`] blocks ahead of what is on disk, then commits the
//!   oldest blocks up to [`Backlog::buffer`] behind the head in one write transaction,
//!   synced once ([`StoreWriter::write_blocks`]): a group commit. It goes on while the gap
//!   stays past the threshold.
//! - Backpressure: a block's hand-over waits while the head is more than
//!   [`Backlog::stall_gap`] blocks ahead of the disk; that wait is the block's persist wait.
//! - At the pass's end [`BackgroundWriter::drain`] commits every block still held and
//!   waits for it (a client writes every block eventually); [`BackgroundWriter::finish`]
//!   stops the thread and gives back the [`StoreWriter`], to take the pass's blocks back
//!   out ([`StoreWriter::restore`]).
//! - Dropped without [`BackgroundWriter::finish`] (a pass stopped part-way), the thread
//!   stops after the commit it is in and the blocks it held are never written: the store
//!   stays marked dirty, and is refused when opened, as with a per-block writer.

use crate::{BlockWrite, StoreError, StoreWriter, WriteStats};
use gigagas_grid::Backlog;
use gigagas_trie::BlockChanges;
use std::{
    collections::VecDeque,
    path::PathBuf,
    sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError},
    thread::JoinHandle,
    time::Instant,
};

/// One group commit of the background writer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupCommit {
    /// The last block it wrote (as handed: an index into the pass's blocks).
    pub last_block: usize,
    /// How many blocks it wrote.
    pub blocks: u32,
    /// What it put into the store (the group's bytes, pages and entries).
    pub stats: WriteStats,
    /// Its write transaction, from its start to its synced commit, nanoseconds.
    pub ns: u64,
}

/// A block handed to the writer, not yet written.
struct Held {
    segment: u32,
    block: usize,
    changes: BlockChanges,
}

/// What the pass and the writer thread share.
#[derive(Default)]
struct Queue {
    held: VecDeque<Held>,
    /// Blocks handed over so far (the head).
    head: u64,
    /// Blocks committed so far.
    on_disk: u64,
    /// Commit everything held now (the pass's end).
    draining: bool,
    /// Stop after the commit under way.
    closed: bool,
    /// The thread stopped on a failure (its words; the error itself comes from `finish`).
    failed: Option<String>,
    commits: Vec<GroupCommit>,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Wakes the writer thread: a block handed, draining, or closing.
    to_writer: Condvar,
    /// Wakes the blocks waiting on the writer: a commit done, or the thread stopped.
    to_chain: Condvar,
    limits: Backlog,
    path: PathBuf,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stopped(&self, reason: &str) -> StoreError {
        StoreError::WriterStopped {
            path: self.path.clone(),
            reason: reason.to_string(),
        }
    }

    /// Waits on the chain's condition while `blocked` holds and the writer has not failed;
    /// then fails where the writer stopped on a failure.
    fn wait_chain(
        &self,
        mut q: MutexGuard<'_, Queue>,
        blocked: impl Fn(&Queue) -> bool,
    ) -> Result<(), StoreError> {
        while blocked(&q) && q.failed.is_none() {
            q = self
                .to_chain
                .wait(q)
                .unwrap_or_else(PoisonError::into_inner);
        }
        match &q.failed {
            Some(reason) => Err(self.stopped(reason)),
            None => Ok(()),
        }
    }
}

/// A [`StoreWriter`] on a thread of its own, committing the blocks handed to it in groups
/// as its [`Backlog`] says (see the module's notes). `Sync`: the pass's workers hand
/// blocks to it from any thread.
pub struct BackgroundWriter {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<(StoreWriter, Option<StoreError>)>>,
}

impl std::fmt::Debug for BackgroundWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundWriter")
            .field("path", &self.shared.path)
            .field("limits", &self.shared.limits)
            .finish_non_exhaustive()
    }
}

impl BackgroundWriter {
    /// Starts the writer thread over `writer` (begun on its store), with `limits`.
    pub fn start(writer: StoreWriter, limits: Backlog) -> Result<Self, StoreError> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            to_writer: Condvar::new(),
            to_chain: Condvar::new(),
            limits,
            path: writer.path().to_path_buf(),
        });
        let on_thread = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("gigagas-persist".into())
            .spawn(move || write_loop(&on_thread, writer))
            .map_err(|source| StoreError::Io {
                op: "start the background writer of",
                path: shared.path.clone(),
                source,
            })?;
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// Hands block `block` of `segment` over to the writer, then waits while the writer
    /// is more than [`Backlog::stall_gap`] blocks behind (backpressure). Fails once the
    /// writer has stopped on a failure.
    pub fn hand(
        &self,
        segment: u32,
        block: usize,
        changes: BlockChanges,
    ) -> Result<(), StoreError> {
        let shared = &*self.shared;
        let mut q = shared.lock();
        if let Some(reason) = &q.failed {
            return Err(shared.stopped(reason));
        }
        q.held.push_back(Held {
            segment,
            block,
            changes,
        });
        q.head += 1;
        shared.to_writer.notify_one();
        let stall = u64::from(shared.limits.stall_gap());
        shared.wait_chain(q, |q| q.head - q.on_disk > stall)
    }

    /// Commits every block still held and waits until it is on disk. Fails where the
    /// writer stopped on a failure.
    pub fn drain(&self) -> Result<(), StoreError> {
        let shared = &*self.shared;
        let mut q = shared.lock();
        q.draining = true;
        shared.to_writer.notify_one();
        shared.wait_chain(q, |q| q.on_disk < q.head)
    }

    /// The group commits so far, in order.
    pub fn commits(&self) -> Vec<GroupCommit> {
        self.shared.lock().commits.clone()
    }

    /// Stops the writer thread (blocks still held are not written: [`Self::drain`] first
    /// to write them) and gives back its [`StoreWriter`], with every block it committed,
    /// and the failure it stopped on, if any. Fails where the thread panicked (the store
    /// then stays marked dirty).
    pub fn finish(mut self) -> Result<(StoreWriter, Option<StoreError>), StoreError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(StoreWriter, Option<StoreError>), StoreError> {
        {
            let mut q = self.shared.lock();
            q.closed = true;
            self.shared.to_writer.notify_one();
        }
        let thread = self.thread.take().expect("stopped once");
        thread
            .join()
            .map_err(|_| self.shared.stopped("its thread panicked"))
    }
}

impl Drop for BackgroundWriter {
    /// Stops the thread; a writer not finished leaves its store marked dirty.
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.stop();
        }
    }
}

/// The writer thread: waits for a group to commit, commits it, until closed or failed.
fn write_loop(shared: &Shared, mut writer: StoreWriter) -> (StoreWriter, Option<StoreError>) {
    let limits = shared.limits;
    loop {
        let group: Vec<Held> = {
            let mut q = shared.lock();
            loop {
                if q.closed {
                    return (writer, None);
                }
                let gap = q.head - q.on_disk;
                if (q.draining && gap > 0) || gap > u64::from(limits.threshold) {
                    break;
                }
                q = shared
                    .to_writer
                    .wait(q)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            // Up to `buffer` blocks behind the head; everything when draining.
            let keep = if q.draining {
                0
            } else {
                limits.buffer as usize
            };
            let n = q.held.len().saturating_sub(keep).max(1);
            q.held.drain(..n).collect()
        };
        let start = Instant::now();
        let written = write_group(&mut writer, &group);
        let ns = start.elapsed().as_nanos() as u64;
        let mut q = shared.lock();
        match written {
            Ok(stats) => {
                q.on_disk += group.len() as u64;
                q.commits.push(GroupCommit {
                    last_block: group.last().map_or(0, |h| h.block),
                    blocks: group.len() as u32,
                    stats,
                    ns,
                });
                shared.to_chain.notify_all();
            }
            Err(e) => {
                q.failed = Some(e.to_string());
                shared.to_chain.notify_all();
                return (writer, Some(e));
            }
        }
    }
}

/// Writes `group` in one transaction.
fn write_group(writer: &mut StoreWriter, group: &[Held]) -> Result<WriteStats, StoreError> {
    let nodes: Vec<Vec<_>> = group
        .iter()
        .map(|h| BlockWrite::nodes_of(&h.changes))
        .collect();
    let blocks: Vec<(u32, BlockWrite<'_>)> = group
        .iter()
        .zip(&nodes)
        .map(|(h, nodes)| (h.segment, BlockWrite::of(&h.changes, nodes)))
        .collect();
    writer.write_blocks(&blocks)
}
