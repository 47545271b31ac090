//! A pass set up once, outside its timed window (the crate's `Pass`): its batches, where
//! its items find their state (chosen once from the runner's source), its root phase and
//! the threads it runs on; [`SetupError`] when it cannot be, and [`PassError`] when a pass
//! gives no timings. Between batches, the pass *stages* each batch as one owned value
//! (`Batch`): its blocks, the state each block's items read, and what a read from the
//! store fills. The batch loop (module `batch`) hands that value to the workers and never
//! builds anything itself.

use crate::{
    prestate::{Carried, PreStateDb, StateError},
    replay::{BaseCursor, BlockReadError, Blocks, CarriedCursor, Replay, RootSetupError},
    root::{RootInputs, RootPass},
    source::{IoLayout, OnDemand, OnDemandPass, StateSource},
};
use alloy_primitives::{Address, B256, U256};
use gigagas_grid::{BalDesign, RunConfig, StateRootPhase, StoreRead};
use revm::{bytecode::Bytecode, state::AccountInfo};
use std::{
    borrow::Cow,
    num::NonZeroUsize,
    ops::Range,
    sync::{Arc, OnceLock},
};

/// What reading a pass's state from a [`StateSource`] took, nanoseconds of wall time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoTimings {
    /// Reading what the batches' access lists call for before each batch runs, all readers
    /// together (straight into the tables the replay reads: no join follows), plus, on
    /// demand (no list, or a list of the writes only), the summed time inside the reads
    /// made while transactions waited.
    pub read_ns: u64,
    /// Decoding the blocks' `full` lists into their tables (0 for the other designs).
    pub build_ns: u64,
    /// The part of reading and decoding that the timed window waited for: all of it when
    /// each batch is read before it runs, only what was not hidden behind the previous
    /// batch's execution when pipelined, what the workers waited for read beside
    /// execution; every read on demand.
    pub exposed_ns: u64,
}

/// Timings of one run (what the timed window saw).
#[derive(Debug, Clone, Default)]
pub struct RunTimings {
    /// Wall time of the timed window, nanoseconds (scheduling + execution).
    pub wall_ns: u64,
    /// Wall time of each batch, nanoseconds: from its start to the end of its last item.
    pub batch_wall_ns: Vec<u64>,
    /// With a state source, aligned with [`RunTimings::batch_wall_ns`]: the part of each
    /// batch's wall time spent waiting for its read (the rest of the read was hidden under
    /// execution): the whole read before it runs; pipelined, the first batch's read and
    /// what a read outlasted its batch by; beside execution, the longest any worker waited
    /// for its items' blocks, plus what the read outlasted the batch by. Zero in memory.
    pub batch_read_exposed_ns: Vec<u64>,
    /// Read beside execution: when each block's read was published, nanoseconds after the
    /// timed window opened (indexed like the replay's blocks; empty for other passes).
    /// No item of a block starts before it.
    pub block_ready_ns: Vec<u64>,
    /// Execution time of each item (indexed like [`Replay::items`]), nanoseconds.
    pub item_ns: Vec<u64>,
    /// When each item started, nanoseconds after the timed window opened, on the wall clock
    /// (the pauses between batches included; for a trace of the pass).
    pub item_start_ns: Vec<u64>,
    /// The worker that ran each item (parallel runs).
    pub item_worker: Vec<u32>,
    /// When each batch started, nanoseconds after the timed window opened, on the wall
    /// clock.
    pub batch_start_ns: Vec<u64>,
    /// Busy time of each worker, nanoseconds.
    pub worker_busy_ns: Vec<u64>,
    /// Item ranges of the batches.
    pub batches: Vec<std::ops::Range<usize>>,
    /// With a state source: what reading the state took (zero otherwise).
    pub io: IoTimings,
    /// With a prefetching state source: each read of a batch's state as (start, length),
    /// nanoseconds, the start after the timed window opened on the wall clock (for a trace
    /// of the pass).
    pub read_spans: Vec<(u64, u64)>,
    /// Aligned with [`RunTimings::read_spans`]: the device reads of each batch's read, as
    /// the major page faults its readers' threads took while reading their shares
    /// (`getrusage(RUSAGE_THREAD)` before and after each share, summed over the readers).
    /// A store read without readahead faults in one page per miss, so this counts the
    /// pages the read waited for the device to read: near 0 warm, the read's misses cold.
    /// 0 where the count is not available (not Linux).
    pub read_faults: Vec<u64>,
    /// CPU time and page faults of the whole process while the window was open (the
    /// verification between batches excluded; [`crate::window`]).
    pub cpu: crate::window::CpuUsage,
    /// With the state-root phase on: what it took (zero otherwise).
    pub root: crate::root::RootTimings,
}

impl RunTimings {
    /// Timings with room for `items` items and `batches` batches.
    pub(crate) fn sized(items: usize, batches: usize) -> Self {
        Self {
            item_ns: vec![0; items],
            item_start_ns: vec![0; items],
            item_worker: vec![0; items],
            batch_wall_ns: Vec::with_capacity(batches),
            batch_start_ns: Vec::with_capacity(batches),
            ..Default::default()
        }
    }
}

/// What the passes over one [`Replay`] build once, before their first window, and share:
/// the values earlier blocks wrote (what a pass reading from a source keeps in memory), the
/// tables such a pass fills ([`crate::source`]), each block's encoded `full` list, and the
/// tries the root phase starts from. Each is built the first time a pass needs it, never
/// inside a timed window; a runner given none builds what its pass needs and drops it after
/// ([`crate::Parallel::cached`], [`crate::Sequential::cached`]).
///
/// A cache serves the replay it was first used with: given another, the pass is refused
/// ([`SetupError::ForeignCache`]).
#[derive(Default)]
pub struct PassCache {
    /// The replay it serves ([`Replay`]'s identity), set on first use.
    replay: OnceLock<u64>,
    carried: OnceLock<Result<Vec<Carried>, BlockReadError>>,
    layout: OnceLock<Result<IoLayout, BlockReadError>>,
    full_lists: OnceLock<Result<Vec<Vec<u8>>, BlockReadError>>,
    root_inputs: OnceLock<Result<RootInputs, RootSetupError>>,
}

impl std::fmt::Debug for PassCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassCache")
            .field("carried", &self.carried.get().is_some())
            .field("layout", &self.layout.get().is_some())
            .field("full_lists", &self.full_lists.get().is_some())
            .field("root_inputs", &self.root_inputs.get().map(Result::is_ok))
            .finish()
    }
}

impl PassCache {
    /// An empty cache: it serves the first replay a pass uses it with.
    pub fn new() -> Self {
        Self::default()
    }

    /// `cache`, or else `local` (a cache for one pass, dropped with it).
    pub(crate) fn or_local<'c>(cache: Option<&'c Self>, local: &'c mut Option<Self>) -> &'c Self {
        match cache {
            Some(cache) => cache,
            None => local.insert(Self::new()),
        }
    }

    /// Binds the cache to `replay` on first use; refuses any other.
    pub(crate) fn bind(&self, replay: &Replay) -> Result<(), SetupError> {
        match *self.replay.get_or_init(|| replay.id()) == replay.id() {
            true => Ok(()),
            false => Err(SetupError::ForeignCache),
        }
    }

    /// Per block, what earlier blocks of its segment wrote, kept when the replay keeps
    /// every block's base (they take about as much memory); `None`: each pass builds each
    /// batch's ([`crate::CarriedCursor`]), so memory follows the batch.
    fn carried(&self, replay: &Replay) -> Result<Option<&[Carried]>, SetupError> {
        if replay.resident_bases().is_none() {
            return Ok(None);
        }
        let carried = self.carried.get_or_init(|| replay.carried_values());
        Ok(Some(carried.as_deref().map_err(Clone::clone)?))
    }

    /// The tables a pass reading from a source fills, kept as [`PassCache::carried`] is.
    fn layout(&self, replay: &Replay) -> Result<Option<&IoLayout>, SetupError> {
        let Some(carried) = self.carried(replay)? else {
            return Ok(None);
        };
        let layout = self
            .layout
            .get_or_init(|| IoLayout::of_all(replay, carried));
        Ok(Some(layout.as_ref().map_err(Clone::clone)?))
    }

    /// Each block's `full` list, encoded.
    fn full_lists(&self, replay: &Replay) -> Result<&[Vec<u8>], SetupError> {
        Ok(self
            .full_lists
            .get_or_init(|| replay.encode_full_lists())
            .as_deref()
            .map_err(Clone::clone)?)
    }

    /// The tries the root phase starts from: every segment's witness opened. Fails when no
    /// segment has a witness, or one does not open.
    pub(crate) fn root_inputs(&self, replay: &Replay) -> Result<&RootInputs, RootSetupError> {
        self.root_inputs
            .get_or_init(|| RootInputs::open(replay))
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// Why a pass could not be set up (before its window opened: nothing was timed).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The root phase is on and the dump cannot compute roots (no witness, or one that
    /// does not decode): the one place this is decided, for every runner.
    #[error(transparent)]
    NoRoot(#[from] RootSetupError),
    /// The pass's threads could not start.
    #[error(transparent)]
    Threads(#[from] crate::pool::PoolError),
    /// The runner's [`PassCache`] was built for another replay.
    #[error("the pass was given a cache built for another replay")]
    ForeignCache,
    /// What the pass builds from every block before its window could not read them again.
    #[error(transparent)]
    Blocks(#[from] BlockReadError),
}

/// Why a pass gave no timings: it could not be set up, what it produced diverged, its state
/// or its dump's blocks could not be read, or one of its threads panicked.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The pass could not be set up (before any window): no witness for the root phase,
    /// threads that did not start, a cache of another replay.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The pass ran and diverged from the receipts, the access lists or the headers.
    #[error(transparent)]
    Divergence(Box<crate::Divergence>),
    /// A read of the pass's state from its source failed (a store's I/O error): nothing
    /// about the execution is known.
    #[error(transparent)]
    Read(#[from] ReadFailure),
    /// The replay does not keep its blocks, and reading a batch's again from the dump's
    /// file failed between batches (the file changed or cannot be read): nothing about the
    /// execution is known.
    #[error(transparent)]
    Blocks(#[from] BlockReadError),
    /// A thread of the pass panicked (a bug, or a state source that panics): the pass
    /// ended without waiting for it.
    #[error("a thread of the pass panicked: {0}")]
    Panicked(String),
}

impl From<crate::VerifyError> for PassError {
    fn from(e: crate::VerifyError) -> Self {
        match e {
            crate::VerifyError::Diverged(d) => Self::from(*d),
            crate::VerifyError::Blocks(e) => Self::Blocks(e),
        }
    }
}

impl From<crate::Divergence> for PassError {
    /// A divergence, or [`PassError::Read`] where an item failed because its source could
    /// not be read.
    fn from(d: crate::Divergence) -> Self {
        match &*d.mismatch {
            crate::Mismatch::Execution(e) => match ReadFailure::of(e) {
                Some(read) => Self::Read(read),
                None => Self::Divergence(Box::new(d)),
            },
            _ => Self::Divergence(Box::new(d)),
        }
    }
}

/// A read from a pass's [`StateSource`] that failed, and where: its source is the source's
/// own error (a store's names the store and the key).
#[derive(Debug, Clone, thiserror::Error)]
#[error("block {block}, {item}: reading its state: {source}")]
pub struct ReadFailure {
    /// Block number.
    pub block: u64,
    /// The item that needed the value (for a read before a batch, the batch's first).
    pub item: crate::ItemKind,
    /// The read's error.
    #[source]
    pub source: StateError,
}

impl ReadFailure {
    /// The failed read of a source ([`StateError::Source`]) anywhere in the causes of `e`.
    fn of(e: &crate::ExecError) -> Option<Self> {
        use alloy_evm::block::BlockExecutionError;
        use revm::database::bal::EvmDatabaseError;
        // alloy-evm's block executor (the client loop's) keeps the EVM's error beside its
        // message, and revm's access-list database its database's error, not as their
        // sources: the walk steps into both.
        let mut cause: Option<&(dyn std::error::Error + 'static)> = match &e.failure {
            crate::ExecFailure::Block(block) => match block.as_ref() {
                BlockExecutionError::Internal(internal) => {
                    internal.as_evm().map(|(_, evm)| evm as _)
                }
                BlockExecutionError::Validation(_) => None,
            },
            crate::ExecFailure::State(db) => Some(db),
            failure => Some(failure),
        };
        while let Some(error) = cause {
            if let Some(read @ StateError::Source(_)) = error.downcast_ref::<StateError>() {
                return Some(Self {
                    block: e.block,
                    item: e.item,
                    source: read.clone(),
                });
            }
            cause = match error.downcast_ref::<EvmDatabaseError<StateError>>() {
                Some(EvmDatabaseError::Database(state)) => Some(state),
                _ => error.source(),
            };
        }
        None
    }
}

impl PassError {
    /// The divergence, when the pass ran and diverged.
    pub fn divergence(&self) -> Option<&crate::Divergence> {
        match self {
            Self::Divergence(d) => Some(d),
            Self::Setup(_) | Self::Read(_) | Self::Blocks(_) | Self::Panicked(_) => None,
        }
    }
}

/// Where a pass's items find the state at the start of their block: chosen once, at
/// set-up, from the runner's source. A pass in memory has no readers and a pass over a
/// store always has them: the runner's constructors are the only way in.
pub(crate) enum PassState<'r, 's, S> {
    /// In memory: every block's base, kept by the replay ([`Replay::resident_bases`]).
    Resident(&'r [PreStateDb]),
    /// In memory, when the replay keeps no bases: each batch's built when it is staged
    /// ([`BaseCursor`]).
    Built,
    /// Read from a store inside the timed window.
    Store(StorePass<'r, 's, S>),
}

/// A pass whose state is read from a store: its readers, how it reads them, and what the
/// [`PassCache`] keeps for it.
pub(crate) struct StorePass<'r, 's, S> {
    /// The readers (a read before a batch takes them all; the workers share them on
    /// demand), and what was read on demand.
    pub(crate) sources: OnDemandPass<'s, S>,
    /// On demand, before each batch, or pipelined behind the batch before it; with the
    /// design of what the access list carries when a batch's state is read before it runs.
    pub(crate) read: StoreRead,
    /// Every block's carried values, when the cache keeps them (else built per batch).
    carried: Option<&'r [Carried]>,
    /// Every block's tables, when the cache keeps them (else laid out per batch).
    layout: Option<&'r IoLayout>,
    /// With the `full` design, each block's encoded list (empty otherwise).
    pub(crate) full_lists: &'r [Vec<u8>],
}

/// One block's state at its start, as its items read it.
pub(crate) enum BlockState<'r, 'p, 's, S> {
    /// Its base in memory: kept by the replay, built for the batch, or read from the
    /// store before the batch runs.
    Base(Cow<'r, PreStateDb>),
    /// Read from the store on demand.
    OnDemand(OnDemand<'p, 's, S>),
    /// Its writes read before the batch into its base, the rest on demand.
    Both(PreStateDb, OnDemand<'p, 's, S>),
}

impl<S> BlockState<'_, '_, '_, S> {
    /// The block's base, when it has one (what a read before the batch fills).
    pub(crate) fn base_mut(&mut self) -> Option<&mut PreStateDb> {
        match self {
            Self::Base(base) => Some(base.to_mut()),
            Self::Both(base, _) => Some(base),
            Self::OnDemand(_) => None,
        }
    }
}

impl<S: StateSource> revm::DatabaseRef for BlockState<'_, '_, '_, S> {
    type Error = StateError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, StateError> {
        match self {
            Self::Base(base) => base.basic_ref(address),
            Self::OnDemand(view) | Self::Both(_, view) => view.basic_ref(address),
        }
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, StateError> {
        match self {
            Self::Base(base) => base.code_by_hash_ref(code_hash),
            Self::OnDemand(view) | Self::Both(_, view) => view.code_by_hash_ref(code_hash),
        }
    }

    fn storage_ref(&self, address: Address, slot: U256) -> Result<U256, StateError> {
        match self {
            Self::Base(base) => base.storage_ref(address, slot),
            Self::OnDemand(view) | Self::Both(_, view) => view.storage_ref(address, slot),
        }
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, StateError> {
        match self {
            Self::Base(base) => base.block_hash_ref(number),
            Self::OnDemand(view) | Self::Both(_, view) => view.block_hash_ref(number),
        }
    }
}

impl<S: StateSource> crate::view::Pre for BlockState<'_, '_, '_, S> {
    fn base(&self) -> Option<&PreStateDb> {
        match self {
            Self::Base(base) => Some(base),
            Self::Both(base, _) => Some(base),
            Self::OnDemand(_) => None,
        }
    }
}

impl<S> std::fmt::Debug for BlockState<'_, '_, '_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Base(_) => "Base",
            Self::OnDemand(_) => "OnDemand",
            Self::Both(..) => "Both",
        })
    }
}

/// One batch's inputs, staged between batches (outside the timed window) as one owned
/// value: the batch loop fills its bases from the store when the pass reads before each
/// batch, hands it to the workers at *go*, takes it back after *handed*, and drops it.
pub(crate) struct Batch<'r, 'p, 's, S> {
    /// The batch's index among the pass's batches.
    pub(crate) index: usize,
    /// Its items (indices into [`Replay::items`]).
    pub(crate) items: Range<usize>,
    /// Its blocks, decoded (borrowed when the replay keeps them).
    pub(crate) blocks: Blocks<'r>,
    /// Per block of the batch, in order, the state its items read.
    pub(crate) states: Vec<StateCell<BlockState<'r, 'p, 's, S>>>,
    /// The batch's own layout, when the cache keeps none: what a read fills its bases by.
    pub(crate) layout: Option<IoLayout>,
    /// The scheduler's order of its items, cut into the chunks workers claim (set inside
    /// the window, before the first batch).
    pub(crate) order: gigagas_grid::schedule::BatchOrder,
    /// Whether its bases still wait for their read from the store before it runs.
    pub(crate) unread: bool,
    /// Read beside execution: which of its blocks are read (set at *go*, inside the
    /// window); `None` for every other pass.
    pub(crate) beside: Option<crate::beside::Progress>,
}

/// One block's state in a [`Batch`]. Read beside execution, the one reader that claimed the
/// block writes it while the workers run other blocks' items, and the workers read it only
/// once its read is published ([`crate::beside::Progress`]'s `Release`/`Acquire` flag);
/// otherwise it is written only by the coordinator, which owns the batch then.
pub(crate) struct StateCell<T>(std::cell::UnsafeCell<T>);

// SAFETY: a cell is written by one thread at a time, never while another reads it: by the
// coordinator while it owns the batch, or read beside execution by the reader that claimed
// its block before that block is published (`Batch::state`, `Batch::claimed_base`).
unsafe impl<T: Send + Sync> Sync for StateCell<T> {}

impl<T> StateCell<T> {
    fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// The value, owned by the caller's `&mut`.
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.0.get_mut()
    }
}

impl<'r, 'p, 's, S: StateSource> Batch<'r, 'p, 's, S> {
    /// The state block `b` (of this batch) starts from. Read beside execution, only once
    /// its block's read is published (a worker waits for it first), or after the batch.
    #[inline]
    pub(crate) fn state(&self, b: usize) -> &BlockState<'r, 'p, 's, S> {
        // SAFETY: no thread writes the cell now (see `StateCell`): the caller waited for
        // the block's read, or no read is under way.
        unsafe { &*self.states[b - self.blocks.range().start].0.get() }
    }

    /// The base of block `i` (relative to the batch's first block), for the reader that
    /// claimed it beside execution.
    ///
    /// # Safety
    /// The caller claimed block `i` from the batch's [`crate::beside::Progress`] (no other
    /// thread claims it) and has not yet published it (no worker reads it).
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn claimed_base(&self, i: usize) -> Option<&mut PreStateDb> {
        // SAFETY: exclusive by the caller's contract.
        unsafe { &mut *self.states[i].0.get() }.base_mut()
    }
}

/// The cursors a pass walks its blocks with while it stages batches in block order: the
/// coordinator's alone.
pub(crate) struct Cursors<'r> {
    /// Builds each batch's bases, in memory without resident bases.
    bases: Option<BaseCursor<'r>>,
    /// Builds each batch's carried values, over a store when the cache keeps none.
    carried: Option<CarriedCursor<'r>>,
}

/// One pass, set up before its timed window: everything the batch loop reads, and nothing
/// it has to open or start while the clock runs.
pub(crate) struct Pass<'r, 's, S> {
    pub(crate) replay: &'r Replay,
    pub(crate) config: &'r RunConfig,
    /// Item ranges of the batches.
    pub(crate) batches: Vec<Range<usize>>,
    /// Where the items find their state.
    pub(crate) state: PassState<'r, 's, S>,
    /// The state-root phase, when on.
    pub(crate) root: Option<RootPass<'r>>,
    /// Whether the calling thread, besides coordinating, works as the last of the
    /// workers: always, unless it reads the next batch's state during each batch
    /// (pipelined).
    pub(crate) helps: bool,
    /// The worker pool (its first `threads - helps` workers run the pass); `None` when
    /// the calling thread is the only worker.
    pub(crate) workers: Option<Arc<rayon::ThreadPool>>,
    /// The threads that read beside the calling thread (a store pass with more than one
    /// reader).
    pub(crate) readers: Option<Arc<rayon::ThreadPool>>,
}

impl<'r, 's, S: StateSource> Pass<'r, 's, S> {
    /// Set up a pass of `config` over `replay`, its state in memory or, with `store`, read
    /// from the readers as its [`StoreRead`] says: from `cache` (filled first where it
    /// lacks what the pass needs), the tries opened and the tables a store pass reads laid
    /// out; the worker and reader threads started. Never inside a timed window.
    pub(crate) fn setup(
        replay: &'r Replay,
        cache: &'r PassCache,
        config: &'r RunConfig,
        store: Option<(StoreRead, &'s mut [S])>,
        sink: Option<&'r dyn crate::source::BlockSink>,
    ) -> Result<Self, SetupError> {
        cache.bind(replay)?;
        // A store pass reads the tries' nodes from its readers as each block needs them.
        let root = match config.work.state_root {
            StateRootPhase::Off => None,
            phase => Some(RootPass::new(
                replay,
                cache.root_inputs(replay)?,
                phase,
                store.is_some(),
                sink,
            )),
        };
        let state = match store {
            None => match replay.resident_bases() {
                Some(bases) => PassState::Resident(bases),
                None => PassState::Built,
            },
            Some((read, readers)) => {
                // Laid out (and, for `full`, encoded) on a source's first pass, here:
                // never inside a timed window.
                let design = read.design();
                PassState::Store(StorePass {
                    sources: OnDemandPass::new(readers),
                    read,
                    carried: cache.carried(replay)?,
                    layout: match design {
                        Some(_) => cache.layout(replay)?,
                        None => None,
                    },
                    full_lists: match design {
                        Some(BalDesign::Full) => cache.full_lists(replay)?,
                        _ => &[],
                    },
                })
            }
        };
        // The readers that read beside the calling thread: each batch's state before it
        // runs, and on a store pass that computes roots, the tries' nodes.
        let reader_count = match &state {
            PassState::Store(store) if store.read.design().is_some() || root.is_some() => {
                store.sources.reader_count()
            }
            _ => 0,
        };
        let helps = !matches!(&state,
            PassState::Store(store) if matches!(store.read, StoreRead::Pipelined(_)));
        let workers = NonZeroUsize::new(config.threads.get() - usize::from(helps))
            .map(crate::pool::workers)
            .transpose()?;
        // `reader_count - 1` threads beside the calling thread (none for one reader); read
        // beside execution, every reader on a thread of its own beside the workers.
        let beside = matches!(&state,
            PassState::Store(store) if matches!(store.read, StoreRead::Beside(_)));
        let readers = NonZeroUsize::new(reader_count.saturating_sub(usize::from(!beside)))
            .map(crate::pool::readers)
            .transpose()?;
        Ok(Self {
            replay,
            config,
            batches: replay.batches(config.batch),
            state,
            root,
            helps,
            workers,
            readers,
        })
    }

    /// The pass's store, when its state is read from one.
    pub(crate) fn store(&self) -> Option<&StorePass<'r, 's, S>> {
        match &self.state {
            PassState::Store(store) => Some(store),
            PassState::Resident(_) | PassState::Built => None,
        }
    }

    /// Whether each batch's state is read while the batch runs, by readers of their own
    /// ([`StoreRead::Beside`]).
    pub(crate) fn beside(&self) -> bool {
        self.store()
            .is_some_and(|s| matches!(s.read, StoreRead::Beside(_)))
    }

    /// Read block `i` (relative to the batch's first) of `batch` beside execution, from
    /// `reader`, into its base; `codes` the codes this reader read so far in the batch.
    ///
    /// # Safety
    /// As [`Batch::claimed_base`]: the caller claimed block `i` and has not published it.
    pub(crate) unsafe fn read_claimed(
        &self,
        batch: &Batch<'r, '_, 's, S>,
        i: usize,
        reader: &mut S,
        codes: &mut rustc_hash::FxHashMap<B256, Bytecode>,
    ) -> Result<(), StateError> {
        let Some(store) = self.store() else {
            return Ok(());
        };
        let Some(design) = store.read.design() else {
            return Ok(());
        };
        let layout = batch
            .layout
            .as_ref()
            .or(store.layout)
            .expect("laid out when staged");
        let inputs = crate::source::ReadInputs {
            layout,
            full_lists: store.full_lists,
            trie_paths: self.root.is_some(),
        };
        let b = batch.blocks.range().start + i;
        // SAFETY: the caller's contract.
        let Some(table) = (unsafe { batch.claimed_base(i) }) else {
            return Ok(());
        };
        let block = (b, batch.blocks.get(b));
        self.replay
            .read_block(design, inputs, block, table, reader, codes)
    }

    /// Whether each batch's state is read while the batch before it runs.
    pub(crate) fn pipelined(&self) -> bool {
        self.store()
            .is_some_and(|s| matches!(s.read, StoreRead::Pipelined(_)))
    }

    /// The workers of the pass's pool that run it (the helping calling thread not
    /// counted).
    pub(crate) fn pool_workers(&self) -> usize {
        self.config.threads.get() - usize::from(self.helps)
    }

    /// The cursors the pass's staging walks its blocks with.
    pub(crate) fn cursors(&self) -> Cursors<'r> {
        Cursors {
            bases: matches!(self.state, PassState::Built).then(|| BaseCursor::new(self.replay)),
            carried: self
                .store()
                .filter(|s| s.carried.is_none())
                .map(|_| CarriedCursor::new(self.replay)),
        }
    }

    /// The blocks batch `k`'s items belong to (empty for an empty batch).
    pub(crate) fn blocks_of(&self, k: usize) -> Range<usize> {
        let items = &self.batches[k];
        if items.is_empty() {
            return 0..0;
        }
        let block = |i: usize| self.replay.items()[i].block as usize;
        block(items.start)..block(items.end - 1) + 1
    }

    /// Stage batch `k` (after every batch before it, in order: the cursors walk forward):
    /// its blocks decoded, and per block the state its items read — the base kept or
    /// built, or over a store its blank tables (and its layout, when the cache keeps
    /// none) and its views of the sources. Between batches, never inside a window.
    pub(crate) fn stage<'p>(
        &'p self,
        k: usize,
        cursors: &mut Cursors<'r>,
    ) -> Result<Batch<'r, 'p, 's, S>, BlockReadError> {
        let range = self.blocks_of(k);
        let blocks = self.replay.blocks(range.clone())?;
        let mut layout = None;
        let states = match &self.state {
            PassState::Resident(bases) => range
                .map(|b| StateCell::new(BlockState::Base(Cow::Borrowed(&bases[b]))))
                .collect(),
            PassState::Built => {
                let cursor = cursors.bases.as_mut().expect("a built pass has its cursor");
                blocks
                    .iter()
                    .map(|(b, block)| {
                        let base = Cow::Owned(cursor.base(b, block)?);
                        Ok(StateCell::new(BlockState::Base(base)))
                    })
                    .collect::<Result<_, BlockReadError>>()?
            }
            PassState::Store(store) => {
                let carried: Vec<Cow<'r, Carried>> = match (store.carried, &mut cursors.carried) {
                    (Some(kept), _) => range.clone().map(|b| Cow::Borrowed(&kept[b])).collect(),
                    (None, Some(cursor)) => blocks
                        .iter()
                        .map(|(b, block)| cursor.carried(b, block).map(Cow::Owned))
                        .collect::<Result<_, _>>()?,
                    (None, None) => unreachable!("a store pass without kept values has a cursor"),
                };
                if store.read.design().is_some() && store.layout.is_none() {
                    layout = Some(IoLayout::new(self.replay, &blocks, &carried));
                }
                let kept = layout.as_ref().or(store.layout);
                let view = |b, carried| OnDemand::new(&store.sources, self.replay, b, carried);
                range
                    .zip(carried)
                    .map(|(b, carried)| match store.read.design() {
                        None => StateCell::new(BlockState::OnDemand(view(b, carried))),
                        Some(BalDesign::Writes) => StateCell::new(BlockState::Both(
                            kept.expect("laid out").blank(b),
                            view(b, carried),
                        )),
                        Some(BalDesign::Keys | BalDesign::Full) => StateCell::new(
                            BlockState::Base(Cow::Owned(kept.expect("laid out").blank(b))),
                        ),
                    })
                    .collect()
            }
        };
        Ok(Batch {
            index: k,
            items: self.batches[k].clone(),
            unread: self.store().and_then(|s| s.read.design()).is_some() && !self.beside(),
            blocks,
            states,
            layout,
            order: Default::default(),
            beside: None,
        })
    }

    /// Read batch `batch`'s bases from the store (a pass that reads before each batch;
    /// nothing otherwise), with every reader; returns what reading and decoding took and
    /// the device reads made.
    pub(crate) fn read(
        &self,
        batch: &mut Batch<'r, '_, 's, S>,
    ) -> Result<crate::source::TableRead, StateError> {
        let (Some(store), true) = (self.store(), batch.unread) else {
            return Ok(Default::default());
        };
        let design = store
            .read
            .design()
            .expect("a batch waits for a read only before it runs");
        let layout = batch
            .layout
            .as_ref()
            .or(store.layout)
            .expect("laid out when staged");
        let mut guards = store.sources.lock_all();
        let mut readers: Vec<&mut S> = guards.iter_mut().map(|g| &mut ***g).collect();
        let first = batch.blocks.range().start;
        let tables = batch
            .states
            .iter_mut()
            .enumerate()
            .filter_map(|(i, state)| Some((first + i, state.get_mut().base_mut()?)));
        let inputs = crate::source::ReadInputs {
            layout,
            full_lists: store.full_lists,
            trie_paths: self.root.is_some(),
        };
        let read = self.replay.read_tables(
            design,
            inputs,
            &batch.blocks,
            tables,
            &mut readers,
            self.readers.as_deref(),
        )?;
        batch.unread = false;
        Ok(read)
    }

    /// What was read on demand (all workers' summed time inside the reads).
    pub(crate) fn on_demand_ns(&self) -> u64 {
        self.store().map_or(0, |s| s.sources.read_ns())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        BalView,
        test_utils::{DumpSource, prepare},
    };
    use gigagas_grid::SchedulerKind;
    use revm::{Database, state::AccountInfo};

    /// Every block's base read from a source before its batch (and, past a segment's first
    /// block, carried from what earlier blocks wrote) holds the same accounts, codes and
    /// slots as its base in memory, as the replay's view reads them at the start of the
    /// block (through the table the reads filled); the reads write into the tables, with no
    /// join after them.
    #[test]
    fn bases_read_from_a_source_equal_the_bases_in_memory() {
        for name in ["mainnet.gigagas", "mainnet-like.gigagas"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../dumps")
                .join(name);
            let (dump, _) = gigagas_dump::read_dump(&path).unwrap();
            let mut readers = [DumpSource::of(&dump)];
            let replay = prepare(dump).unwrap();
            let n = replay.block_count();
            let config = RunConfig::new(NonZeroUsize::MIN, n, SchedulerKind::Ols);
            let cache = PassCache::new();
            let read = StoreRead::Prefetch(BalDesign::Keys);
            let pass = Pass::setup(
                &replay,
                &cache,
                &config,
                Some((read, &mut readers[..])),
                None,
            )
            .unwrap();
            let mut batch = pass.stage(0, &mut pass.cursors()).unwrap();
            let build_ns = pass.read(&mut batch).unwrap().build_ns;
            assert_eq!(
                build_ns, 0,
                "{name}: the reads write into the tables: no join"
            );
            let mut cursor = BaseCursor::new(&replay);
            for (b, block) in batch.blocks.iter() {
                let bal = Arc::new(block.bal().clone());
                let in_memory = cursor.base(b, block).unwrap();
                let mut mem = BalView::new(&in_memory, &bal, 0);
                let mut got = BalView::new(batch.state(b), &bal, 0);
                let fields = |i: Option<AccountInfo>| {
                    i.map(|i| (i.balance, i.nonce, i.code_hash, i.code.map(|c| c.len())))
                };
                let number = block.header().number;
                for (address, account) in block.bal().accounts.iter() {
                    let (m, g) = (mem.basic(*address), got.basic(*address));
                    assert_eq!(fields(m.unwrap()), fields(g.unwrap()), "{number} {address}");
                    for slot in account.storage.storage.keys() {
                        assert_eq!(
                            mem.storage(*address, *slot).unwrap(),
                            got.storage(*address, *slot).unwrap(),
                            "block {number} {address} slot {slot}"
                        );
                    }
                }
            }
        }
    }
}
