//! The state-root phase: each block's post state root from its access list and
//! its segment's witness, computed by the pass's workers after the block's transactions or
//! beside them, and checked against the block's header.
//!
//! An EIP-7928 access list carries every post-value of its block, so the root needs no
//! execution output: [`gigagas_trie::StateTrie::prepare_block`] splits a block's root into
//! storage tasks, account units and a finish, under the pass's split rule
//! ([`SplitRule::DEFAULT`]: lower subtries at 2 nibbles, units of at least 64 leaves).
//! Blocks of one segment form a chain (each block's root is computed on the trie the block
//! before left); segments are independent. A pass's root work is a queue of *units*:
//!
//! - *advance* a segment: finish its current block (the upper account trie, the root) and
//!   prepare the next block of the batch, putting its storage tasks on the queue (a block
//!   without any goes on to its account stage at once);
//! - a *storage task*: one account's storage trie, or one unit of lower subtries of a
//!   storage trie whose block changes enough slots; the worker that completes a block's
//!   last storage task runs its *account stage* (the split storage tries joined, every
//!   account's new leaf, the account trie cut), putting its account units on the queue (a
//!   block whose account trie is not cut is finished at once);
//! - an *account unit*: lower subtries of the account trie; the worker that completes a
//!   block's last one advances the segment.
//!
//! Block N+1 is prepared once block N is finished: its units wait for N's whole finish, not
//! only for the subtries they share. The finish after the account units is the upper trie
//! alone (at most 256 references joined and 17 branches hashed), so little is to be gained
//! by starting N+1 earlier, and N+1's preparation reads N's leaves through that upper trie.
//!
//! The queue hands out advances first, then the largest task (slot writes of a storage
//! task, account leaves of an account unit), then the earliest queued ([`root_rank`], the
//! rule the model ranks by too), so the chain, which is the critical path of the root,
//! never waits behind a small task.
//! Under [`StateRootPhase::After`] the units of a batch are handed out once every worker
//! has run out of the batch's transactions; under [`StateRootPhase::Overlapped`] from the
//! batch's start, a worker running every ready unit before it takes its next transaction:
//! the root's work and the transactions share the pool as the scheduler's list does, the
//! root's chain first.
//!
//! Every computed root is compared with the header's `stateRoot` after the pass
//! (`RootPass::check`); a difference or a node the witness lacks fails the pass like any
//! other divergence. Segments without a witness get no root (a run says so).

use crate::{
    replay::{Blocks, Replay, ReplayBlock, RootSetupError},
    source::{BlockSink, OnDemandPass, SegmentNodes, StateSource},
    verify::Divergence,
};
use alloy_primitives::B256;
use gigagas_grid::{
    StateRootPhase,
    schedule::{RootUnit, root_rank},
};
use gigagas_trie::{
    AccountPart, AccountTask, BlockRootJob, NodeReads, PreValues, RootError, RootRules, SplitRule,
    StateTrie, StorageRoot, StorageTask,
};
use revm::primitives::hardfork::SpecId;
use std::{
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Instant,
};

/// What the root phase starts every pass from: per segment with a witness, its trie at
/// the parent root, opened once (hashing the witness's nodes) and copied per pass.
#[derive(Debug)]
pub struct RootInputs {
    /// Per segment, the trie at its parent root (`None`: no witness).
    tries: Vec<Option<StateTrie>>,
}

impl RootInputs {
    /// Opens every segment's witness. Fails when none has one or one does not open.
    pub(crate) fn open(replay: &Replay) -> Result<Self, RootSetupError> {
        if replay.witnesses.iter().all(Option::is_none) {
            return Err(RootSetupError::NoWitness);
        }
        let tries = replay
            .witnesses
            .iter()
            .enumerate()
            .map(|(segment, w)| {
                w.as_ref()
                    .map(|w| {
                        StateTrie::from_witness(w)
                            .map(|t| t.with_pre_values(pre_values(&replay.segments[segment].pre)))
                            .map_err(|source| RootSetupError::Witness { segment, source })
                    })
                    .transpose()
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { tries })
    }

    /// Segment `s`'s trie for a pass: a copy of the one opened over the witness in memory,
    /// or, when the pass reads its nodes from a source (`read_nodes`), one at the same
    /// root holding no node, that knows the same values (each block reads the nodes its
    /// paths need, [`StateTrie::unread`]).
    /// With `collect`, the trie collects each block's changes for the pass to commit.
    fn trie(&self, s: usize, read_nodes: bool, collect: bool) -> Option<StateTrie> {
        let trie = self.tries[s].as_ref()?;
        let trie = if read_nodes {
            StateTrie::unread(trie.root()).with_pre_values(trie.pre_values().clone())
        } else {
            trie.snapshot()
        };
        Some(if collect {
            trie.collecting_changes()
        } else {
            trie
        })
    }
}

/// What segment pre-state `pre` holds, for the trie to walk only where a block changes a
/// value.
fn pre_values(pre: &crate::PreStateDb) -> PreValues {
    let mut values = PreValues::new();
    for (address, info) in pre.accounts() {
        let state = info.as_ref().map(|i| gigagas_dump::AccountState {
            balance: i.balance,
            nonce: i.nonce,
            code_hash: i.code_hash,
        });
        values.set_account(*address, state);
    }
    for ((address, slot), value) in pre.slots() {
        values.set_slot(*address, *slot, *value);
    }
    values.shared()
}

/// The client loop's roots (the sequential baseline with the root phase on): after each
/// block's transactions, its root on the thread that ran them, from the same witness and
/// access lists as the replay's, so the two sides of a ratio do the same root work; on a
/// store run, each block's trie nodes read from the loop's source as the replay reads them.
#[derive(Debug, Default)]
pub(crate) struct SequentialRoots<'s> {
    /// Per segment, its trie (`None`: no witness).
    tries: Vec<Option<StateTrie>>,
    /// Per block, its root or why there is none.
    pub(crate) roots: Vec<Option<Result<B256, RootError>>>,
    /// A segment whose root failed gets no more (its trie is part-updated).
    failed: Vec<bool>,
    /// Time spent on roots, nanoseconds (reading their nodes included).
    pub(crate) root_ns: u64,
    /// On a store run: reading the tries' nodes, nanoseconds.
    pub(crate) read_ns: u64,
    /// On a store run: what was read.
    pub(crate) reads: NodeReads,
    /// Where each block is committed after its root (`--persist`), if anywhere.
    sink: Option<&'s dyn BlockSink>,
    /// Each block committed.
    pub(crate) persisted: Vec<BlockPersist>,
}

impl<'s> SequentialRoots<'s> {
    /// The tries `inputs` opened, one per segment; with `read_nodes`, tries that read each
    /// block's nodes from the loop's source; with `sink`, each block committed to it after
    /// its root.
    pub(crate) fn new(
        replay: &Replay,
        inputs: &RootInputs,
        read_nodes: bool,
        sink: Option<&'s dyn BlockSink>,
    ) -> Self {
        Self {
            tries: (0..inputs.tries.len())
                .map(|s| inputs.trie(s, read_nodes, sink.is_some()))
                .collect(),
            sink,
            roots: (0..replay.block_count()).map(|_| None).collect(),
            failed: vec![false; inputs.tries.len()],
            ..Self::default()
        }
    }

    /// Block `b` (of segment `s`), `block`, has run: its root, its nodes read from `nodes`
    /// when the loop reads from a source.
    pub(crate) fn block(
        &mut self,
        replay: &Replay,
        s: usize,
        b: usize,
        block: &ReplayBlock,
        nodes: Option<&mut SegmentNodes<'_>>,
    ) {
        let Some(trie) = self.tries[s].as_mut() else {
            return;
        };
        if self.failed[s] {
            return;
        }
        let start = Instant::now();
        let list = block
            .root_list
            .as_deref()
            .expect("a segment with a witness keeps its access lists");
        let rules = root_rules(replay, b);
        let root = match nodes {
            None => trie.apply_block(list, rules),
            Some(nodes) => {
                let result = trie.apply_block_reading(list, rules, &mut *nodes);
                self.read_ns += nodes.ns;
                result
                    .map(|(root, reads)| {
                        self.reads += reads;
                        root
                    })
                    .map_err(RootError::from)
            }
        };
        self.root_ns += start.elapsed().as_nanos() as u64;
        let root = match self.sink {
            None => root,
            Some(sink) => {
                let (root, persisted) = commit(sink, trie, s, b, root);
                self.persisted.extend(persisted);
                root
            }
        };
        self.failed[s] = root.is_err();
        self.roots[b] = Some(root);
    }
}

/// Commits block `b` of segment `s` to `sink` once its root is known (`--persist`): the
/// changes `trie` collected for it, written in one write. Returns the root, or the write's
/// failure as the block's root error, and the write's figures.
fn commit(
    sink: &dyn BlockSink,
    trie: &mut StateTrie,
    s: usize,
    b: usize,
    root: Result<B256, RootError>,
) -> (Result<B256, RootError>, Option<BlockPersist>) {
    let Ok(root) = root else {
        return (root, None);
    };
    let changes = trie.take_changes();
    let start = Instant::now();
    let written = sink.write_block(s, b, changes);
    let ns = start.elapsed().as_nanos() as u64;
    match written {
        Ok(w) => (
            Ok(root),
            Some(BlockPersist {
                block: b,
                ns,
                bytes: w.bytes,
                pages: w.pages,
                commit_blocks: w.blocks,
                commit_ns: if w.blocks > 0 { ns } else { 0 },
            }),
        ),
        Err(e) => (
            Err(RootError::Persist {
                reason: e.to_string(),
            }),
            None,
        ),
    }
}

/// The root rules of block `b`'s fork: EIP-161 from Spurious Dragon on.
fn root_rules(replay: &Replay, b: usize) -> RootRules {
    RootRules {
        delete_empty_accounts: replay.spec_id(b).is_enabled_in(SpecId::SPURIOUS_DRAGON),
    }
}

/// What a pass's root work took, nanoseconds of wall time summed over its batches.
#[derive(Debug, Clone, Default)]
pub struct RootTimings {
    /// Per batch, from its start to the end of its last transaction (execution alone).
    pub exec_ns: u64,
    /// Per batch, from the start of its first root unit to the end of its last.
    pub root_ns: u64,
    /// Root units' own time, all workers together.
    pub root_busy_ns: u64,
    /// Per batch, how long execution and the root phase ran at once (the intersection of
    /// the two spans).
    pub overlap_ns: u64,
    /// Blocks whose root was computed.
    pub blocks: usize,
    /// On a store run: reading the trie nodes each block needs from the state source,
    /// inside the root units (part of `root_busy_ns`; 0 in memory).
    pub read_ns: u64,
    /// On a store run: the nodes read, and those the blocks' paths found already read.
    pub reads: NodeReads,
    /// The root units' major page faults, all workers together: the pages they waited for
    /// the device to read (the sum of [`RootSpan::faults`]).
    pub faults: u64,
    /// Every unit as it ran, for the trace.
    pub spans: Vec<RootSpan>,
    /// With `--persist`: each block's commit into the store after its root, in block order
    /// (their time is inside the root units' and the pass's).
    pub persisted: Vec<BlockPersist>,
    /// With `--persist background`: draining the writer at the pass's end, nanoseconds
    /// (part of the pass's wall time: the tail after its last block).
    pub drain_ns: u64,
}

/// One block's commit into the store after its root (`--persist`), and the commit that
/// ended with it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockPersist {
    /// The block (index into the replay's blocks).
    pub block: usize,
    /// Its chain's wait on persistence, nanoseconds: its synced write (`block`), or its
    /// hand-over to the background writer and any stall on it (`background`).
    pub ns: u64,
    /// Bytes of keys and values written by the commit that ended with this block (0 where
    /// none did).
    pub bytes: u64,
    /// Pages that commit dirtied.
    pub pages: u64,
    /// Blocks that commit wrote (1 a block with `block`; a group's size, on its last block,
    /// with `background`; 0 where no commit ended with this block).
    pub commit_blocks: u32,
    /// That commit's write transaction, from its start to its synced commit, nanoseconds.
    pub commit_ns: u64,
}

/// One unit of root work as it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootSpan {
    /// The worker that ran it.
    pub worker: u32,
    /// Its start, nanoseconds after the timed window opened (wall clock).
    pub start_ns: u64,
    /// Its length, nanoseconds.
    pub ns: u64,
    /// Of its length, reading trie nodes from the state source (0 in memory).
    pub read_ns: u64,
    /// Of its length, committing the block it finished into the store (`--persist`; 0
    /// without).
    pub persist_ns: u64,
    /// Major page faults of its worker's thread while it ran: the pages it waited for the
    /// device to read, its trie nodes' (and, with `--persist`, its commit's); 0 where the
    /// count is not available (not Linux).
    pub faults: u64,
    /// What it was.
    pub kind: RootStepKind,
    /// The block it worked for (index into the replay's blocks).
    pub block: u32,
    /// A storage task's slot writes, what the queue ranked it by (0 for the account trie).
    pub writes: u64,
}

/// What a root unit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootStepKind {
    /// One account's storage trie, or one unit of lower subtries of a split storage trie.
    Storage,
    /// One unit of lower subtries of a block's account trie.
    AccountSubtries,
    /// The account trie: the account stage of a block (its storage roots joined, its
    /// account trie cut into units), finishing a block (the upper account trie, the root)
    /// and preparing the next.
    Accounts,
}

/// One segment's chain of roots within a pass.
#[derive(Debug)]
struct Lane {
    /// The segment's trie after its last finished block.
    trie: StateTrie,
    /// The next block to prepare (index into the replay's blocks).
    next: usize,
    /// The block after the current batch's last of this segment.
    end: usize,
    /// The block prepared and not yet finished, with its job.
    job: Option<(usize, BlockRootJob)>,
    /// Its storage tasks' results so far.
    results: Vec<StorageRoot>,
    /// Its account units' results so far.
    parts: Vec<AccountPart>,
    /// Its storage tasks, or account units, not yet completed.
    pending: usize,
    /// A root failed: the lane's trie is part-updated, so its later blocks get no root.
    failed: bool,
}

/// A unit on the queue: an advance of a segment, or a task of a segment's block.
enum Unit {
    Advance(usize),
    Storage(usize, usize, Box<StorageTask>),
    Accounts(usize, usize, Box<AccountTask>),
}

/// What a task hands to its segment's lane.
enum Done {
    Storage(Box<StorageRoot>),
    Accounts(AccountPart),
}

impl Unit {
    /// What the queue ranks this unit as ([`root_rank`]).
    fn ranked(&self) -> RootUnit {
        match self {
            Unit::Advance(_) => RootUnit::Advance,
            Unit::Storage(_, _, t) => RootUnit::Storage {
                writes: t.writes() as u64,
            },
            Unit::Accounts(_, _, t) => RootUnit::Accounts {
                leaves: t.leaves() as u64,
            },
        }
    }
}

/// The units ready to run, taken by [`root_rank`]: advances first, then storage tasks by
/// writes, then the earliest queued.
#[derive(Default)]
struct Queue {
    heap: std::collections::BinaryHeap<Queued>,
    /// Units queued so far (the rank's tie-break).
    seq: u64,
}

/// A unit with its rank on the queue.
struct Queued {
    rank: (u64, std::cmp::Reverse<u64>),
    unit: Unit,
}

impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank.cmp(&other.rank)
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        self.rank == other.rank
    }
}

impl Eq for Queued {}

impl Queue {
    fn extend(&mut self, units: impl IntoIterator<Item = Unit>) {
        for unit in units {
            self.seq += 1;
            let rank = root_rank(unit.ranked(), self.seq);
            self.heap.push(Queued { rank, unit });
        }
    }

    fn pop(&mut self) -> Option<Unit> {
        self.heap.pop().map(|q| q.unit)
    }

    fn clear(&mut self) {
        self.heap.clear();
        self.seq = 0;
    }
}

/// One pass's root work: the lanes and the queue of units, shared by the workers while a
/// batch runs (each lane and the queue behind its own lock: a unit is taken by whichever
/// worker is free). What the units produce goes to the worker's [`RootOut`].
pub(crate) struct RootPass<'r> {
    replay: &'r Replay,
    phase: StateRootPhase,
    /// Per segment, its lane (`None`: no witness).
    lanes: Vec<Option<Mutex<Lane>>>,
    /// Units ready to run, popped from the end.
    queue: Mutex<Queue>,
    /// Blocks of the current batch whose root is not yet finished.
    remaining: AtomicUsize,
    /// Workers still running the current batch's transactions (`After`: no unit is
    /// handed out before it is 0).
    executing: AtomicUsize,
    /// Where each block is committed once its root is known (`--persist`), if anywhere.
    sink: Option<&'r dyn BlockSink>,
}

/// What one worker's root units produced in one batch: each finished block's root (or why
/// there is none), and each unit's span on the worker's clock.
#[derive(Debug, Default)]
pub(crate) struct RootOut {
    roots: Vec<(usize, Result<B256, RootError>)>,
    /// Each unit as it ran.
    spans: Vec<UnitSpan>,
    /// The nodes its units read.
    reads: NodeReads,
    /// The blocks its units committed (`--persist`).
    persisted: Vec<BlockPersist>,
}

/// Of a unit's time, reading nodes and committing its block (ns).
#[derive(Debug, Default)]
struct UnitNs {
    read: u64,
    persist: u64,
}

/// A point on a worker's clock: the time, and its thread's major page faults so far, so
/// that a span between two marks has both its length and its device reads.
#[derive(Clone, Copy)]
struct Mark {
    at: Instant,
    faults: u64,
}

impl Mark {
    fn now() -> Self {
        Self {
            at: Instant::now(),
            faults: crate::window::thread_major_faults(),
        }
    }
}

/// A task as the queue handed it out: what, for which block, its size (leaves) and start.
struct TaskSpan {
    kind: RootStepKind,
    block: usize,
    size: u64,
    start: Mark,
}

/// One unit as a worker ran it: start, end, what, for which block, of its time, reading
/// nodes and committing the block (ns), and its thread's major page faults meanwhile.
#[derive(Debug)]
struct UnitSpan {
    start: Instant,
    end: Instant,
    kind: RootStepKind,
    block: usize,
    read_ns: u64,
    persist_ns: u64,
    faults: u64,
    /// A task's leaves: a storage task's slot writes, an account unit's account leaves
    /// (0 for the account trie's stage).
    writes: u64,
}

/// A pass's roots and root spans, gathered by the coordinator from the workers'
/// [`RootOut`]s after each batch.
#[derive(Debug, Default)]
pub(crate) struct RootRecord {
    /// Per block, its computed root or why there is none.
    roots: Vec<Option<Result<B256, RootError>>>,
    spans: Vec<RootSpan>,
    busy_ns: u64,
    read_ns: u64,
    reads: NodeReads,
    faults: u64,
    persisted: Vec<BlockPersist>,
}

impl RootRecord {
    /// A record for a replay of `blocks` blocks.
    pub(crate) fn new(blocks: usize) -> Self {
        Self {
            roots: (0..blocks).map(|_| None).collect(),
            ..Self::default()
        }
    }

    /// Takes worker `worker`'s `out` of the batch, its spans as offsets from `epoch`.
    pub(crate) fn add(&mut self, worker: u32, out: &mut RootOut, epoch: Instant) {
        for (b, root) in out.roots.drain(..) {
            self.roots[b] = Some(root);
        }
        for span in out.spans.drain(..) {
            let start_ns = span.start.saturating_duration_since(epoch).as_nanos() as u64;
            let ns = span.end.saturating_duration_since(span.start).as_nanos() as u64;
            self.busy_ns += ns;
            self.read_ns += span.read_ns;
            self.faults += span.faults;
            self.spans.push(RootSpan {
                worker,
                start_ns,
                ns,
                read_ns: span.read_ns,
                persist_ns: span.persist_ns,
                faults: span.faults,
                kind: span.kind,
                block: span.block as u32,
                writes: span.writes,
            });
        }
        self.reads += std::mem::take(&mut out.reads);
        self.persisted.append(&mut out.persisted);
    }

    /// A batch's root span over the workers' `outs` (first unit start, last unit end),
    /// nanoseconds after `epoch`; `None` when no unit ran.
    pub(crate) fn batch_span<'o>(
        outs: impl Iterator<Item = &'o RootOut>,
        epoch: Instant,
    ) -> Option<(u64, u64)> {
        let spans = outs.flat_map(|o| &o.spans);
        let (first, last) = spans.fold(None, |span, s| match span {
            None => Some((s.start, s.end)),
            Some((first, last)) => Some((Instant::min(first, s.start), Instant::max(last, s.end))),
        })?;
        let ns = |t: Instant| t.saturating_duration_since(epoch).as_nanos() as u64;
        Some((ns(first), ns(last)))
    }

    /// The pass's spans, busy time and roots computed, into `timings`.
    pub(crate) fn finish(&mut self, timings: &mut RootTimings) {
        timings.root_busy_ns = self.busy_ns;
        timings.read_ns = self.read_ns;
        timings.reads = self.reads;
        timings.faults = self.faults;
        timings.spans = std::mem::take(&mut self.spans);
        self.persisted.sort_unstable_by_key(|p| p.block);
        timings.persisted = std::mem::take(&mut self.persisted);
        timings.blocks = self
            .roots
            .iter()
            .filter(|r| matches!(r, Some(Ok(_))))
            .count();
    }
}

impl<'r> RootPass<'r> {
    /// A pass's root work from `inputs` (each lane a copy of its segment's trie; with
    /// `read_nodes`, a trie that reads each block's nodes from the pass's sources as the
    /// block needs them, inside its units).
    /// With `sink`, the worker that finishes a block's root commits the block to it at
    /// once, before the segment's next block is prepared: on the root's chain.
    pub(crate) fn new(
        replay: &'r Replay,
        inputs: &RootInputs,
        phase: StateRootPhase,
        read_nodes: bool,
        sink: Option<&'r dyn BlockSink>,
    ) -> Self {
        let lanes = replay
            .segments
            .iter()
            .enumerate()
            .map(|(s, segment)| {
                inputs.trie(s, read_nodes, sink.is_some()).map(|trie| {
                    Mutex::new(Lane {
                        trie: trie.with_split(SplitRule::DEFAULT),
                        next: segment.blocks.start,
                        end: segment.blocks.start,
                        job: None,
                        results: Vec::new(),
                        parts: Vec::new(),
                        pending: 0,
                        failed: false,
                    })
                })
            })
            .collect();
        Self {
            replay,
            phase,
            lanes,
            queue: Mutex::new(Queue::default()),
            remaining: AtomicUsize::new(0),
            executing: AtomicUsize::new(0),
            sink,
        }
    }

    /// Queues the roots of `blocks` (the batch's) for `workers` workers: each segment with
    /// a witness whose blocks the batch holds gets an advance.
    pub(crate) fn begin_batch(&self, blocks: std::ops::Range<usize>, workers: usize) {
        // Each lane locked alone, then the queue: the lock order of `advance` (a lane,
        // then the queue), whoever else runs.
        let mut advances = Vec::new();
        let mut remaining = 0;
        for (s, lane) in self.lanes.iter().enumerate() {
            let Some(lane) = lane else { continue };
            let seg = &self.replay.segments[s].blocks;
            let end = seg.end.min(blocks.end);
            let mut lane = lane.lock().expect("no worker panics holding a lane");
            if lane.failed || lane.next >= end || seg.start >= blocks.end {
                continue;
            }
            remaining += end - lane.next;
            lane.end = end;
            advances.push(Unit::Advance(s));
        }
        let mut queue = self.lock_queue();
        queue.clear();
        queue.extend(advances);
        drop(queue);
        self.remaining.store(remaining, Ordering::Release);
        self.executing.store(workers, Ordering::Release);
    }

    /// Whether a worker takes root units between the batch's transactions.
    pub(crate) fn overlapped(&self) -> bool {
        self.phase == StateRootPhase::Overlapped
    }

    /// A worker has run out of the batch's transactions.
    pub(crate) fn executed(&self) {
        self.executing.fetch_sub(1, Ordering::AcqRel);
    }

    /// Runs one unit if one is ready (`blocks`: the batch's), into `out`, its trie nodes
    /// read from `nodes` on a store run; returns its time (0: none was).
    fn help<S: StateSource>(
        &self,
        blocks: &Blocks<'_>,
        out: &mut RootOut,
        nodes: Option<&OnDemandPass<'_, S>>,
    ) -> u64 {
        if self.phase == StateRootPhase::After && self.executing.load(Ordering::Acquire) > 0 {
            return 0;
        }
        let Some(unit) = self.lock_queue().pop() else {
            return 0;
        };
        let start = Mark::now();
        let mut ns = UnitNs::default();
        let (from, block) = match unit {
            Unit::Advance(s) => (start, self.advance(s, None, blocks, out, nodes, &mut ns)),
            Unit::Storage(s, b, task) => {
                let writes = task.writes() as u64;
                let result = match nodes {
                    None => task.run(),
                    Some(sources) => {
                        let mut reader = SegmentNodes {
                            source: &mut |trie, paths, out| {
                                sources.with_reader(|r| r.trie_nodes(s, trie, paths, out))
                            },
                            ns: 0,
                        };
                        let (result, reads) = task.run_reading(&mut reader);
                        out.reads += reads;
                        ns.read = reader.ns;
                        result
                    }
                };
                let span = TaskSpan {
                    kind: RootStepKind::Storage,
                    block: b,
                    size: writes,
                    start,
                };
                self.handed(
                    s,
                    Done::Storage(Box::new(result)),
                    span,
                    blocks,
                    out,
                    nodes,
                    &mut ns,
                )
            }
            Unit::Accounts(s, b, task) => {
                let leaves = task.leaves() as u64;
                let part = task.run();
                let span = TaskSpan {
                    kind: RootStepKind::AccountSubtries,
                    block: b,
                    size: leaves,
                    start,
                };
                self.handed(s, Done::Accounts(part), span, blocks, out, nodes, &mut ns)
            }
        };
        if let Some(block) = block {
            let end = Mark::now();
            out.spans.push(UnitSpan {
                start: from.at,
                end: end.at,
                kind: RootStepKind::Accounts,
                block,
                read_ns: ns.read,
                persist_ns: ns.persist,
                faults: end.faults.saturating_sub(from.faults),
                writes: 0,
            });
        }
        start.at.elapsed().as_nanos() as u64
    }

    /// A task's `span`, to now, into `out` (its reads' time `ns.read`), its result handed
    /// to lane `s` ([`Self::advance`], its time into `ns` afresh); returns when the lane's
    /// work began (a [`Mark`]) and the block it worked on at the account trie, if any.
    #[allow(clippy::too_many_arguments)]
    fn handed<S: StateSource>(
        &self,
        s: usize,
        done: Done,
        span: TaskSpan,
        blocks: &Blocks<'_>,
        out: &mut RootOut,
        nodes: Option<&OnDemandPass<'_, S>>,
        ns: &mut UnitNs,
    ) -> (Mark, Option<usize>) {
        let finish = Mark::now();
        out.spans.push(UnitSpan {
            start: span.start.at,
            end: finish.at,
            kind: span.kind,
            block: span.block,
            read_ns: std::mem::take(ns).read,
            persist_ns: 0,
            faults: finish.faults.saturating_sub(span.start.faults),
            writes: span.size,
        });
        let worked = self.advance(s, Some(done), blocks, out, nodes, ns);
        (finish, worked)
    }

    /// Runs units while any is ready (before a worker takes its next transaction, when
    /// overlapped: the root is a chain, and a worker holding its next step should not go off
    /// to run a long transaction first); returns their time.
    pub(crate) fn help_while_ready<S: StateSource>(
        &self,
        blocks: &Blocks<'_>,
        out: &mut RootOut,
        nodes: Option<&OnDemandPass<'_, S>>,
    ) -> u64 {
        std::iter::from_fn(|| Some(self.help(blocks, out, nodes)).filter(|&ns| ns > 0)).sum()
    }

    /// Runs units until the batch's roots are all finished, or the pass is `abandoned` (a
    /// thread panicked: its units will never finish); returns their time.
    pub(crate) fn help_until_done<S: StateSource>(
        &self,
        blocks: &Blocks<'_>,
        out: &mut RootOut,
        nodes: Option<&OnDemandPass<'_, S>>,
        abandoned: impl Fn() -> bool,
    ) -> u64 {
        let mut busy = 0;
        while self.remaining.load(Ordering::Acquire) > 0 && !abandoned() {
            let ns = self.help(blocks, out, nodes);
            if ns == 0 {
                // Another worker is finishing a block: the next block's tasks follow.
                std::hint::spin_loop();
                std::thread::yield_now();
            }
            busy += ns;
        }
        busy
    }

    /// Lane `s`: with a task's result (`done`), adds it and, if it was the stage's last,
    /// runs the block's next stage ([`Self::next_stage`]); without, the lane is at a block
    /// boundary. Then prepares blocks until one has tasks (queued) or the batch's are
    /// done. Returns the block it worked on at the account trie, if any.
    fn advance<S: StateSource>(
        &self,
        s: usize,
        done: Option<Done>,
        blocks: &Blocks<'_>,
        out: &mut RootOut,
        nodes: Option<&OnDemandPass<'_, S>>,
        ns: &mut UnitNs,
    ) -> Option<usize> {
        let mut lane = self.lanes[s]
            .as_ref()
            .expect("units are queued for lanes only")
            .lock()
            .expect("no worker panics holding a lane");
        let lane = &mut *lane;
        let mut worked = None;
        if let Some(done) = done {
            match done {
                Done::Storage(result) => lane.results.push(*result),
                Done::Accounts(part) => lane.parts.push(part),
            }
            lane.pending -= 1;
            if lane.pending > 0 {
                return None;
            }
            worked = lane.job.as_ref().map(|(b, _)| *b);
            if !self.next_stage(lane, s, out, ns) {
                return worked;
            }
        }
        while !lane.failed && lane.next < lane.end {
            let b = lane.next;
            lane.next += 1;
            worked = Some(b);
            let list = blocks
                .get(b)
                .root_list
                .as_deref()
                .expect("a segment with a witness keeps its access lists");
            let rules = root_rules(self.replay, b);
            if let Some(sources) = nodes {
                let mut reader = SegmentNodes {
                    source: &mut |trie, paths, out| {
                        sources.with_reader(|r| r.trie_nodes(s, trie, paths, out))
                    },
                    ns: 0,
                };
                let read = lane.trie.read_account_nodes(list, rules, &mut reader);
                ns.read += reader.ns;
                match read {
                    Ok(reads) => out.reads += reads,
                    Err(e) => {
                        self.finish_block(lane, b, Err(e.into()), out);
                        continue;
                    }
                }
            }
            match lane.trie.prepare_block(list, rules) {
                Err(e) => self.finish_block(lane, b, Err(e), out),
                Ok(mut job) => {
                    let tasks = job.storage_tasks();
                    lane.job = Some((b, job));
                    if !tasks.is_empty() {
                        lane.pending = tasks.len();
                        // Lock order: a lane, then the queue (never the reverse).
                        self.lock_queue()
                            .extend(tasks.into_iter().map(|t| Unit::Storage(s, b, Box::new(t))));
                        break;
                    }
                    if !self.next_stage(lane, s, out, ns) {
                        break;
                    }
                }
            }
        }
        worked
    }

    /// Lane `s`'s prepared block, its last task of a stage done: after its storage tasks,
    /// the account stage, whose account units are queued (`false`) or, when the account
    /// trie is not cut, the block finished; after its account units, the block finished
    /// (its upper account trie, the root, committed with a sink). `true` once the block's
    /// root is known or failed.
    fn next_stage(&self, lane: &mut Lane, s: usize, out: &mut RootOut, ns: &mut UnitNs) -> bool {
        let (b, mut job) = lane.job.take().expect("a block is prepared");
        if lane.parts.is_empty() {
            match job.account_tasks(&mut lane.trie, std::mem::take(&mut lane.results)) {
                Err(e) => {
                    self.finish_block(lane, b, Err(e), out);
                    return true;
                }
                Ok(tasks) if !tasks.is_empty() => {
                    lane.pending = tasks.len();
                    lane.job = Some((b, job));
                    self.lock_queue()
                        .extend((tasks.into_iter()).map(|t| Unit::Accounts(s, b, Box::new(t))));
                    return false;
                }
                Ok(_) => {}
            }
        }
        let root = job.finish_accounts(&mut lane.trie, std::mem::take(&mut lane.parts));
        let root = self.commit(lane, s, b, root, out, &mut ns.persist);
        self.finish_block(lane, b, root, out);
        true
    }

    /// With a sink, commits block `b` of segment `s` (its root `root` just computed on
    /// `lane`), adding the write's time to `persist_ns`.
    fn commit(
        &self,
        lane: &mut Lane,
        s: usize,
        b: usize,
        root: Result<B256, RootError>,
        out: &mut RootOut,
        persist_ns: &mut u64,
    ) -> Result<B256, RootError> {
        let Some(sink) = self.sink else {
            return root;
        };
        let (root, persisted) = commit(sink, &mut lane.trie, s, b, root);
        if let Some(p) = persisted {
            *persist_ns += p.ns;
            out.persisted.push(p);
        }
        root
    }

    /// Block `b`'s root is known (or failed): record it; a failure ends the lane, and the
    /// rest of its blocks in the batch count as done.
    fn finish_block(
        &self,
        lane: &mut Lane,
        b: usize,
        root: Result<B256, RootError>,
        out: &mut RootOut,
    ) {
        let failed = root.is_err();
        out.roots.push((b, root));
        let mut done = 1;
        if failed {
            lane.failed = true;
            done += lane.end - lane.next;
            lane.next = lane.end;
        }
        self.remaining.fetch_sub(done, Ordering::AcqRel);
    }

    /// Every computed root against its header's `stateRoot`, in block order: the first
    /// difference, or the first root that could not be computed, as a divergence.
    pub(crate) fn check(&self, record: &RootRecord) -> Result<(), Divergence> {
        self.replay.check_roots(&record.roots)
    }

    fn lock_queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue
            .lock()
            .expect("no worker panics holding the queue")
    }
}

/// Adds one batch's figures to `timings`: execution ran from `start_ns` to `exec_end_ns`,
/// the root units over `root` (both after the epoch). Returns the batch's end (the later of
/// the two).
pub(crate) fn add_batch(
    timings: &mut RootTimings,
    start_ns: u64,
    exec_end_ns: u64,
    root: Option<(u64, u64)>,
) -> u64 {
    timings.exec_ns += exec_end_ns.saturating_sub(start_ns);
    let Some((first, last)) = root else {
        return exec_end_ns;
    };
    timings.root_ns += last.saturating_sub(first);
    timings.overlap_ns += exec_end_ns.min(last).saturating_sub(start_ns.max(first));
    exec_end_ns.max(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root task's fixed cost on `threads` workers beside its work, as a pass pays it:
    /// queueing it (the queue's lock and heap, about 256 units queued), claiming it, the
    /// span's two clock reads, and handing its result to its lane (the lane's lock); each
    /// worker's time a unit, nanoseconds (`cargo test --release -p gigagas-executor --lib
    /// root_unit_cost -- --ignored --nocapture`; the model's `ROOT_UNIT_NS`).
    fn unit_cost(threads: usize) -> f64 {
        const UNITS: usize = 400_000;
        let queue = Mutex::new(Queue::default());
        queue
            .lock()
            .unwrap()
            .extend((0..256).map(|_| Unit::Advance(0)));
        let lane = Mutex::new((Vec::<u64>::with_capacity(UNITS + 256), 0usize));
        let queued = AtomicUsize::new(256);
        let start = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    loop {
                        let Some(unit) = queue.lock().unwrap().pop() else {
                            break;
                        };
                        let begun = Instant::now();
                        std::hint::black_box(&unit);
                        let ended = Instant::now();
                        let mut lane = lane.lock().unwrap();
                        lane.0.push((ended - begun).as_nanos() as u64);
                        lane.1 += 1;
                        drop(lane);
                        if queued.fetch_add(1, Ordering::Relaxed) < UNITS {
                            queue.lock().unwrap().extend([Unit::Advance(0)]);
                        }
                    }
                });
            }
        });
        let wall = start.elapsed().as_nanos() as f64;
        assert!(lane.lock().unwrap().1 >= UNITS);
        wall * threads as f64 / UNITS as f64
    }

    #[test]
    #[ignore = "a timing, for the model's unit cost"]
    fn root_unit_cost() {
        for round in 0..3 {
            for threads in [1, 2] {
                let ns = unit_cost(threads);
                eprintln!("round {round}: {threads} thread(s): {ns:.0} ns of a worker a unit");
            }
        }
    }

    #[test]
    fn a_batch_counts_the_overlap_of_its_two_spans() {
        let mut t = RootTimings::default();
        // Execution 100..400, root 300..700: overlap 100, the batch ends at 700.
        assert_eq!(add_batch(&mut t, 100, 400, Some((300, 700))), 700);
        assert_eq!((t.exec_ns, t.root_ns, t.overlap_ns), (300, 400, 100));
        // Root after execution: no overlap; no root: the batch ends with execution.
        assert_eq!(add_batch(&mut t, 0, 50, Some((60, 80))), 80);
        assert_eq!(add_batch(&mut t, 0, 50, None), 50);
        assert_eq!((t.exec_ns, t.root_ns, t.overlap_ns), (400, 420, 100));
    }
}
