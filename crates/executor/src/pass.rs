//! A pass set up once, outside its timed window, as a value (the crate's `Pass`): its
//! batches, where its items find their state (memory, or read from sources as the config's
//! [`gigagas_grid::StoreRead`] says), its root phase and the threads it runs on, all built
//! before the clock starts; [`SetupError`] when it cannot be. The batch loop only runs it.

use crate::{
    prestate::{Carried, PreStateDb},
    replay::{BaseCursor, BlockReadError, Blocks, CarriedCursor, Replay, RootSetupError},
    root::{RootInputs, RootPass},
    source::{IoLayout, OnDemand, OnDemandPass, ReadInputs, StateSource},
};
use gigagas_grid::{BalDesign, RunConfig, StateRead, StateRootPhase, StoreRead};
use std::{
    borrow::Cow,
    num::NonZeroUsize,
    ops::Range,
    sync::{Arc, Mutex, OnceLock, RwLock, RwLockReadGuard},
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
    /// batch's execution when pipelined; every read on demand.
    pub exposed_ns: u64,
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
    pub(crate) fn carried(&self, replay: &Replay) -> Result<Option<&[Carried]>, SetupError> {
        if replay.resident_bases().is_none() {
            return Ok(None);
        }
        let carried = self.carried.get_or_init(|| replay.carried_values());
        Ok(Some(
            carried
                .as_deref()
                .map_err(|e| SetupError::Blocks(e.clone()))?,
        ))
    }

    /// The tables a pass reading from a source fills, kept as [`PassCache::carried`] is.
    pub(crate) fn layout(&self, replay: &Replay) -> Result<Option<&IoLayout>, SetupError> {
        let Some(carried) = self.carried(replay)? else {
            return Ok(None);
        };
        let layout = self
            .layout
            .get_or_init(|| IoLayout::of_all(replay, carried));
        Ok(Some(
            layout.as_ref().map_err(|e| SetupError::Blocks(e.clone()))?,
        ))
    }

    /// Each block's `full` list, encoded.
    pub(crate) fn full_lists(&self, replay: &Replay) -> Result<&[Vec<u8>], SetupError> {
        self.full_lists
            .get_or_init(|| replay.encode_full_lists())
            .as_deref()
            .map_err(|e| SetupError::Blocks(e.clone()))
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

/// A pass's state read from sources before each batch: the readers, each batch's tables
/// prepared before its read, the bases read and not yet handed to the workers, those the
/// current batch reads, and what reading took.
pub(crate) struct IoState<'r, 's, S> {
    /// The readers (and, with `writes`, what was read on demand).
    pub(crate) pass: OnDemandPass<'s, S>,
    /// What the access list carries.
    pub(crate) design: BalDesign,
    /// Batch `k + 1` read while batch `k` runs.
    pub(crate) pipelined: bool,
    /// Every block's layout, when the cache keeps it; `None`: each batch's is laid out
    /// with its tables.
    pub(crate) layout: Option<&'r IoLayout>,
    /// With `full`, each block's encoded list (empty otherwise).
    pub(crate) full_lists: &'r [Vec<u8>],
    /// Per batch, its blank tables (and its layout, when not kept), prepared between
    /// batches before the read that takes them.
    pub(crate) prepared: Mutex<Vec<Option<PreparedRead>>>,
    /// Bases read and not yet handed over: installed into `bases` before the next *go*.
    pub(crate) pending: Mutex<Vec<(usize, PreStateDb)>>,
    /// Per block, its base once read and installed; a batch's are dropped between the
    /// batches after it.
    pub(crate) bases: RwLock<Vec<Option<PreStateDb>>>,
    /// What a read has done with (a batch's own layout), dropped between batches.
    pub(crate) spent: Mutex<Vec<PreparedRead>>,
    pub(crate) timings: Mutex<IoTimings>,
    /// Each read of a batch's state as (start after the epoch, length), nanoseconds.
    pub(crate) spans: Mutex<Vec<(u64, u64)>>,
}

/// One batch's tables before its read: blank ([`IoLayout::blank`]), cloned between
/// batches (outside the window), with the batch's layout when the cache keeps none.
pub(crate) struct PreparedRead {
    pub(crate) layout: Option<IoLayout>,
    pub(crate) tables: Vec<(usize, PreStateDb)>,
}

impl<S> IoState<'_, '_, S> {
    /// What the read of a batch prepared as `prepared` fills its tables from.
    pub(crate) fn inputs<'a>(&'a self, prepared: &'a PreparedRead) -> ReadInputs<'a> {
        ReadInputs {
            layout: prepared
                .layout
                .as_ref()
                .or(self.layout)
                .expect("a batch's layout is kept or prepared with it"),
            full_lists: self.full_lists,
        }
    }

    /// Hand the bases read so far to the workers (before a *go*: no worker holds them).
    pub(crate) fn install(&self) {
        let pending = std::mem::take(
            &mut *self
                .pending
                .lock()
                .expect("no reader panics holding the lock"),
        );
        if pending.is_empty() {
            return;
        }
        let mut bases = self
            .bases
            .write()
            .expect("no worker panics holding the bases");
        for (b, base) in pending {
            bases[b] = Some(base);
        }
    }

    /// Drop the bases of blocks before `first` and what the reads have done with (between
    /// batches: no worker holds them, and no window is open).
    pub(crate) fn retire(&self, first: usize) {
        self.spent
            .lock()
            .expect("no reader panics holding the lock")
            .clear();
        let mut bases = self
            .bases
            .write()
            .expect("no worker panics holding the bases");
        for base in &mut bases[..first] {
            *base = None;
        }
    }
}

/// What earlier blocks of each block's segment wrote, for a pass that reads its state from
/// sources: kept by the cache for every block, or built for each batch in block order.
pub(crate) enum CarriedValues<'r> {
    /// In memory: no block needs them.
    None,
    /// Every block's, kept by the [`PassCache`].
    Kept(&'r [Carried]),
    /// Each batch's, built between batches.
    PerBatch {
        cursor: Box<Mutex<CarriedCursor<'r>>>,
        /// A batch's values built with its prepared read (pipelined: the batch after the
        /// current one), kept for its views: (first block, values).
        stashed: Mutex<Option<(usize, Vec<Carried>)>>,
    },
}

/// One batch's views of the sources (on demand, and with `writes` for what was not read
/// before the batch), built between batches.
pub(crate) struct BatchViews<'p, 's, S> {
    /// The batch's first block.
    pub(crate) first: usize,
    /// Its blocks' views, in order.
    pub(crate) views: Vec<OnDemand<'p, 's, S>>,
}

impl<S> Default for BatchViews<'_, '_, S> {
    fn default() -> Self {
        Self {
            first: 0,
            views: Vec::new(),
        }
    }
}

impl<'p, 's, S> BatchViews<'p, 's, S> {
    pub(crate) fn get(&self, b: usize) -> &OnDemand<'p, 's, S> {
        &self.views[b - self.first]
    }
}

/// Where a pass's items find the state at the start of their block, owned by the pass.
pub(crate) enum PassState<'r, 's, S> {
    /// In memory: every block's base, prepared with the replay
    /// ([`Replay::resident_bases`]).
    Resident(&'r [PreStateDb]),
    /// In memory, when the replay keeps no bases: the current batch's, built into `slot`
    /// by `cursor` before the batch's *go* (outside the timed window).
    PerBatch {
        slot: RwLock<BatchBases>,
        cursor: Mutex<BaseCursor<'r>>,
    },
    /// Read from state sources on demand: the pass's readers and cache.
    OnDemand(OnDemandPass<'s, S>),
    /// Read from state sources before each batch runs, or pipelined behind the batch
    /// before it.
    Read(Box<IoState<'r, 's, S>>),
}

/// The bases of one batch's blocks, built by the coordinator before the batch's *go*
/// when the replay does not keep every block's ([`Replay::resident_bases`]), and dropped
/// when the next batch's are built.
#[derive(Debug, Default)]
pub(crate) struct BatchBases {
    /// The batch's first block.
    pub(crate) first: usize,
    /// Its blocks' bases, in order.
    pub(crate) bases: Vec<PreStateDb>,
}

impl BatchBases {
    pub(crate) fn get(&self, b: usize) -> &PreStateDb {
        &self.bases[b - self.first]
    }
}

/// The blocks a pass works on now, decoded between batches ([`Replay::blocks`]: borrowed
/// when the replay keeps every block decoded): the current batch's, which its items,
/// bases, reads, roots and verification read, and, pipelined, the next batch's, whose
/// state is read while the current one runs.
#[derive(Debug)]
pub(crate) struct PassBlocks<'r> {
    replay: &'r Replay,
    current: RwLock<Blocks<'r>>,
    next: Mutex<Blocks<'r>>,
}

impl<'r> PassBlocks<'r> {
    fn new(replay: &'r Replay) -> Self {
        Self {
            replay,
            current: RwLock::new(Blocks::default()),
            next: Mutex::new(Blocks::default()),
        }
    }

    /// Between batches: `blocks` become the current batch's (taken from the next slot when
    /// decoded there, the previous batch's dropped first), and `next`, when given, the
    /// next batch's. On a failed read, the block it failed at.
    pub(crate) fn advance(
        &self,
        blocks: Range<usize>,
        next: Option<Range<usize>>,
    ) -> Result<(), (usize, BlockReadError)> {
        let mut current = self
            .current
            .write()
            .expect("no thread panics holding the blocks");
        *current = Blocks::default();
        let mut slot = self
            .next
            .lock()
            .expect("no thread panics holding the blocks");
        let staged = std::mem::take(&mut *slot);
        let first = blocks.start;
        *current = if staged.range() == blocks {
            staged
        } else {
            self.replay.blocks(blocks).map_err(|e| (first, e))?
        };
        if let Some(next) = next {
            let first = next.start;
            *slot = self.replay.blocks(next).map_err(|e| (first, e))?;
        }
        Ok(())
    }

    /// The current batch's blocks.
    pub(crate) fn current(&self) -> RwLockReadGuard<'_, Blocks<'r>> {
        self.current
            .read()
            .expect("no thread panics holding the blocks")
    }

    /// The next batch's blocks (pipelined).
    pub(crate) fn next(&self) -> std::sync::MutexGuard<'_, Blocks<'r>> {
        self.next
            .lock()
            .expect("no thread panics holding the blocks")
    }
}

/// One pass, set up before its timed window: everything the batch loop reads, and nothing
/// it has to build, open or start while the clock runs.
pub(crate) struct Pass<'r, 's, S> {
    pub(crate) replay: &'r Replay,
    /// The blocks of the batch that runs (and, pipelined, of the next).
    pub(crate) blocks: PassBlocks<'r>,
    /// What earlier blocks of each block's segment wrote (a pass that reads from a
    /// source).
    pub(crate) carried: CarriedValues<'r>,
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
    /// The config reads a store and the runner was given no readers
    /// ([`crate::Parallel::reading`]).
    #[error("the pass reads its state from a store ({0:?}) and was given no readers")]
    NoReaders(StoreRead),
    /// The config reads from memory and the runner was given readers.
    #[error(
        "the pass reads its state from memory and was given readers: its config names no store"
    )]
    ReadersInMemory,
    /// The runner's [`PassCache`] was built for another replay.
    #[error("the pass was given a cache built for another replay")]
    ForeignCache,
    /// What the pass builds from every block before its window could not read them again.
    #[error(transparent)]
    Blocks(BlockReadError),
}

impl<'r, 's, S: StateSource> Pass<'r, 's, S> {
    /// Set up a pass of `config` over `replay`, its state from memory or read from
    /// `readers` as `config`'s state says: from `cache` (filled first where it lacks what
    /// the pass needs), the tries opened and the tables a store pass reads laid out; the
    /// blank tables cloned, the worker and reader threads started. Never inside a timed
    /// window.
    pub(crate) fn setup(
        replay: &'r Replay,
        cache: &'r PassCache,
        config: &'r RunConfig,
        readers: Option<&'s mut [S]>,
    ) -> Result<Self, SetupError> {
        cache.bind(replay)?;
        let root = match config.work.state_root {
            StateRootPhase::Off => None,
            phase => Some(RootPass::new(replay, cache.root_inputs(replay)?, phase)),
        };
        let carried = match (readers.is_some(), cache.carried(replay)?) {
            (false, _) => CarriedValues::None,
            (true, Some(kept)) => CarriedValues::Kept(kept),
            (true, None) => CarriedValues::PerBatch {
                cursor: Box::new(Mutex::new(CarriedCursor::new(replay))),
                stashed: Mutex::new(None),
            },
        };
        let batches = replay.batches(config.batch);
        let state = match (config.work.state, readers) {
            (StateRead::Memory, None) => match replay.resident_bases() {
                Some(bases) => PassState::Resident(bases),
                None => PassState::PerBatch {
                    slot: RwLock::new(BatchBases::default()),
                    cursor: Mutex::new(BaseCursor::new(replay)),
                },
            },
            (StateRead::Memory, Some(_)) => return Err(SetupError::ReadersInMemory),
            (StateRead::Store { read, .. }, None) => return Err(SetupError::NoReaders(read)),
            (
                StateRead::Store {
                    read: StoreRead::OnDemand,
                    ..
                },
                Some(readers),
            ) => PassState::OnDemand(OnDemandPass::new(readers)),
            (
                StateRead::Store {
                    read: read @ (StoreRead::Prefetch(design) | StoreRead::Pipelined(design)),
                    ..
                },
                Some(readers),
            ) => {
                // Laid out (and, for `full`, encoded) on a source's first pass, here:
                // never inside a timed window. Each batch's blank tables are cloned from
                // it between batches (laid out then, when the cache keeps no layout).
                let blocks = replay.block_count();
                PassState::Read(Box::new(IoState {
                    pass: OnDemandPass::new(readers),
                    design,
                    pipelined: matches!(read, StoreRead::Pipelined(_)),
                    layout: cache.layout(replay)?,
                    full_lists: match design {
                        BalDesign::Full => cache.full_lists(replay)?,
                        BalDesign::Keys | BalDesign::Writes => &[],
                    },
                    prepared: Mutex::new((0..batches.len()).map(|_| None).collect()),
                    pending: Mutex::new(Vec::new()),
                    bases: RwLock::new((0..blocks).map(|_| None).collect()),
                    spent: Mutex::new(Vec::new()),
                    timings: Mutex::new(IoTimings::default()),
                    spans: Mutex::new(Vec::new()),
                }))
            }
        };
        // The readers that read beside the calling thread: each batch's state before it
        // runs, and on a store pass that computes roots, the tries' nodes.
        let reader_count = match &state {
            PassState::Read(io) => io.pass.reader_count(),
            PassState::OnDemand(pass) if root.is_some() => pass.reader_count(),
            PassState::OnDemand(_) | PassState::Resident(_) | PassState::PerBatch { .. } => 0,
        };
        let helps = !matches!(&state, PassState::Read(io) if io.pipelined);
        let threads = config.threads.get();
        let workers = NonZeroUsize::new(threads - usize::from(helps))
            .map(crate::pool::workers)
            .transpose()?;
        let readers = crate::pool::reader_threads(reader_count)?;
        Ok(Self {
            replay,
            blocks: PassBlocks::new(replay),
            carried,
            config,
            batches,
            state,
            root,
            helps,
            workers,
            readers,
        })
    }

    /// The workers of the pass's pool that run it (the helping calling thread not
    /// counted).
    pub(crate) fn pool_workers(&self) -> usize {
        self.config.threads.get() - usize::from(self.helps)
    }

    /// Whether the items read through views of the sources: on demand, and with the
    /// `writes` design for what was not read before the batch.
    fn reads_on_demand(&self) -> Option<&OnDemandPass<'s, S>> {
        match &self.state {
            PassState::OnDemand(pass) => Some(pass),
            PassState::Read(io) if io.design == BalDesign::Writes => Some(&io.pass),
            _ => None,
        }
    }

    /// The carried values of `blocks` (a batch's, in block order across calls), when
    /// built per batch.
    fn batch_carried(&self, blocks: &Blocks<'_>) -> Result<Vec<Carried>, BlockReadError> {
        let CarriedValues::PerBatch { cursor, stashed } = &self.carried else {
            return Ok(Vec::new());
        };
        let mut stashed = stashed.lock().expect("no thread panics holding it");
        if let Some((first, _)) = &*stashed
            && *first == blocks.range().start
        {
            return Ok(stashed.take().expect("checked").1);
        }
        let mut cursor = cursor.lock().expect("no thread panics holding the cursor");
        blocks
            .iter()
            .map(|(b, block)| cursor.carried(b, block))
            .collect()
    }

    /// Views of the sources for `blocks` (a batch's), when its items read through them
    /// (empty otherwise). Between batches, never inside a window.
    pub(crate) fn views<'p>(
        &'p self,
        blocks: &Blocks<'_>,
    ) -> Result<BatchViews<'p, 's, S>, BlockReadError> {
        let Some(pass) = self.reads_on_demand() else {
            return Ok(BatchViews::default());
        };
        let first = blocks.range().start;
        let views = match &self.carried {
            CarriedValues::Kept(kept) => blocks
                .range()
                .map(|b| OnDemand::new(pass, self.replay, b, Cow::Borrowed(&kept[b])))
                .collect(),
            CarriedValues::PerBatch { .. } => blocks
                .range()
                .zip(self.batch_carried(blocks)?)
                .map(|(b, carried)| OnDemand::new(pass, self.replay, b, Cow::Owned(carried)))
                .collect(),
            CarriedValues::None => unreachable!("a pass reading from sources has carried values"),
        };
        Ok(BatchViews { first, views })
    }

    /// Prepare batch `k`'s read (`blocks`, its blocks): its blank tables, laid out first
    /// when the cache keeps no layout. Between batches, never inside a window.
    pub(crate) fn prepare_read(&self, k: usize, blocks: &Blocks<'_>) -> Result<(), BlockReadError> {
        let PassState::Read(io) = &self.state else {
            return Ok(());
        };
        let layout = match io.layout {
            Some(_) => None,
            None => {
                let carried = self.batch_carried(blocks)?;
                let layout = IoLayout::new(self.replay, blocks, &carried);
                if let (true, CarriedValues::PerBatch { stashed, .. }) =
                    (io.design == BalDesign::Writes, &self.carried)
                {
                    // The batch's views take them when it runs.
                    *stashed.lock().expect("no thread panics holding it") =
                        Some((blocks.range().start, carried));
                }
                Some(layout)
            }
        };
        let kept = layout.as_ref().or(io.layout).expect("kept or laid out");
        let tables = blocks.range().map(|b| (b, kept.blank(b))).collect();
        io.prepared
            .lock()
            .expect("no reader panics holding the lock")[k] = Some(PreparedRead { layout, tables });
        Ok(())
    }

    /// What the loop's items read their state from; `views` is the slot each batch's views
    /// are built into.
    pub(crate) fn bases<'p>(
        &'p self,
        views: &'p RwLock<BatchViews<'p, 's, S>>,
    ) -> Bases<'p, 's, S> {
        match &self.state {
            PassState::Resident(bases) => Bases::Resident(bases),
            PassState::PerBatch { slot, .. } => Bases::PerBatch(slot),
            PassState::OnDemand(pass) => Bases::OnDemand { pass, views },
            PassState::Read(io) => Bases::Read {
                io,
                views: (io.design == BalDesign::Writes).then_some(views),
            },
        }
    }

    /// Build the bases of `blocks` (a batch's) into the batch slot, in memory without
    /// resident bases (nothing otherwise). Outside the timed window: the replay's prepared
    /// state, which a dump that fits keeps from the start.
    pub(crate) fn build_bases(&self, blocks: &Blocks<'_>) -> Result<(), BlockReadError> {
        let PassState::PerBatch { slot, cursor } = &self.state else {
            return Ok(());
        };
        let mut slot = slot
            .write()
            .expect("no thread panics holding the batch's bases");
        slot.bases.clear();
        slot.first = blocks.range().start;
        let mut cursor = cursor.lock().expect("no thread panics holding the cursor");
        for (b, block) in blocks.iter() {
            slot.bases.push(cursor.base(b, block)?);
        }
        Ok(())
    }

    /// The readers' figures after the window: what reading took, and when each batch's
    /// read ran.
    pub(crate) fn io_timings(&self) -> (IoTimings, Vec<(u64, u64)>) {
        match &self.state {
            PassState::Read(io) => {
                let mut timings = *io
                    .timings
                    .lock()
                    .expect("no reader panics holding the lock");
                // With `writes`, what was read on demand, while a transaction waited.
                let on_demand = io.pass.read_ns();
                timings.read_ns += on_demand;
                timings.exposed_ns += on_demand;
                let spans = std::mem::take(
                    &mut *io.spans.lock().expect("no reader panics holding the lock"),
                );
                (timings, spans)
            }
            // Every read is made while a transaction waits for it.
            PassState::OnDemand(pass) => {
                let read_ns = pass.read_ns();
                let timings = IoTimings {
                    read_ns,
                    build_ns: 0,
                    exposed_ns: read_ns,
                };
                (timings, Vec::new())
            }
            PassState::Resident(_) | PassState::PerBatch { .. } => Default::default(),
        }
    }
}

/// Where a pass's items find the state at the start of their block, as the loop borrows it
/// from its [`Pass`].
pub(crate) enum Bases<'r, 's, S> {
    /// Every block's base, kept by the replay.
    Resident(&'r [PreStateDb]),
    /// The current batch's bases, built into this slot before its *go*
    /// ([`Pass::build_bases`]).
    PerBatch(&'r RwLock<BatchBases>),
    /// Read before each batch (`views`, with `writes`: what was not read, on demand).
    Read {
        io: &'r IoState<'r, 's, S>,
        views: Option<&'r RwLock<BatchViews<'r, 's, S>>>,
    },
    /// Read on demand: the pass's cache, and the batch's views of it.
    OnDemand {
        pass: &'r OnDemandPass<'s, S>,
        views: &'r RwLock<BatchViews<'r, 's, S>>,
    },
}

impl<S> Clone for Bases<'_, '_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Bases<'_, '_, S> {}

impl<'r, 's, S> Bases<'r, 's, S> {
    /// The pass's readers, when its state is read from sources.
    pub(crate) fn pass(self) -> Option<&'r OnDemandPass<'s, S>> {
        match self {
            Self::Read { io, .. } => Some(&io.pass),
            Self::OnDemand { pass, .. } => Some(pass),
            Self::Resident(_) | Self::PerBatch(_) => None,
        }
    }

    /// The slot each batch's views of the sources are built into, when its items read
    /// through them.
    pub(crate) fn views(self) -> Option<&'r RwLock<BatchViews<'r, 's, S>>> {
        match self {
            Self::Read { views, .. } => views,
            Self::OnDemand { views, .. } => Some(views),
            Self::Resident(_) | Self::PerBatch(_) => None,
        }
    }

    /// Whether each batch's state is read while the batch before it runs.
    pub(crate) fn pipelined(self) -> bool {
        matches!(self, Self::Read { io, .. } if io.pipelined)
    }

    /// The bases one batch's items read, the per-batch slots locked for reading until
    /// the batch is handed over.
    pub(crate) fn for_batch(self) -> BatchBase<'r, 's, S> {
        let views = |views: &'r RwLock<BatchViews<'r, 's, S>>| {
            views.read().expect("no thread panics holding the views")
        };
        match self {
            Self::Resident(bases) => BatchBase::Resident(bases),
            Self::PerBatch(slot) => BatchBase::Built(
                slot.read()
                    .expect("no thread panics holding the batch's bases"),
            ),
            Self::Read { io, views: v } => BatchBase::Read {
                bases: io.bases.read().expect("no thread panics holding the bases"),
                views: v.map(views),
            },
            Self::OnDemand { views: v, .. } => BatchBase::OnDemand(views(v)),
        }
    }
}

/// [`Bases`] while one batch runs: what its items read their block's state from.
pub(crate) enum BatchBase<'r, 's, S> {
    /// Every block's base, kept by the replay.
    Resident(&'r [PreStateDb]),
    /// The batch's bases, built for it.
    Built(RwLockReadGuard<'r, BatchBases>),
    /// The bases read from the sources before the batch's *go* (per block, installed).
    Read {
        bases: RwLockReadGuard<'r, Vec<Option<PreStateDb>>>,
        views: Option<RwLockReadGuard<'r, BatchViews<'r, 's, S>>>,
    },
    /// Each block's view of the sources, read on demand.
    OnDemand(RwLockReadGuard<'r, BatchViews<'r, 's, S>>),
}
