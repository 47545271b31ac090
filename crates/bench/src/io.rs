//! Passes that read their state from a store on disk (`gigagas state build`): the store
//! behind the executor's [`StateSource`] seam, warm and cold passes, and what each pass
//! read.
//!
//! - [`StateSource`] is the one read trait of the seam. The store crate does not depend on
//!   the executor, so the store's reader is put behind it here, where both are visible:
//!   a failed read is a [`StateError::Source`] holding the store's
//!   [`StoreError`](gigagas_state::StoreError) whole.
//! - A **warm** pass runs on whatever the page cache holds after the warm-up passes.
//! - A **cold** pass first closes the store, evicts its files from the page cache
//!   (`posix_fadvise(DONTNEED)`, and `drop_caches` where this process may), reopens it (outside the window), measures with `mincore` what is still resident, and
//!   refuses to time the pass as cold if more than
//!   [`COLD_MAX_RESIDENT_BYTES`](gigagas_state::COLD_MAX_RESIDENT_BYTES) is.
//! - What a pass read: every read is counted exactly; the readers time a sample of them
//!   ([`Timing::Sampled`]: one read in [`SAMPLE_EVERY`](gigagas_state::SAMPLE_EVERY) on
//!   average, no clock read on the others), so a pass's read latency percentiles are the
//!   sample's and the on-demand loop's time in reads is the sample's scaled to all reads.
//! - **Persistence** (`--persist`): a pass whose timed work persists commits each block
//!   into the store once its root is computed ([`StoreSink`], the executor's
//!   [`BlockSink`]), one synced write transaction per block
//!   ([`gigagas_state::PERSIST_SYNC`]). Its readers keep reading the store as built (each
//!   holds a read transaction opened before the pass: MDBX's snapshot), as the executor
//!   expects: later blocks take earlier blocks' writes from the pass's own carried state.
//!   After the pass, outside its window, every key it wrote is taken back to its value
//!   before the pass and checked ([`gigagas_state::StoreWriter::restore`]). Such a store
//!   is opened read-write, so one without write permission is refused when opened.
//! - The device bound: a short probe of random 4 KiB reads on the store's data file at the
//!   I/O threads' queue depth gives the disk's read rate; a pass's reads ÷ that rate is the
//!   least time the disk allows for them.

use crate::error::{IoError, PassError};
use alloy_primitives::{Address, B256, Bytes, U256};
use gigagas_executor::{AccountInfo, Bytecode};
use gigagas_executor::{
    BlockChanges, BlockSink, BlockWritten, Parallel, PassCache, Replay, RunTimings, Runner,
    Sequential, StateError, StateSource,
};
use gigagas_executor::{Nibbles, TrieId};
use gigagas_grid::CacheState;
use gigagas_grid::{Backlog, Persist};
use gigagas_report::results::IoFigures;
use gigagas_state::{
    BackgroundWriter, BlockWrite, EvictOptions, GroupCommit, ReadStats, Store, StoreReader,
    StoreWriter, Timing, evict, open_store, open_store_writable, probe_random_reads, quantile,
    residency,
};
use std::{
    collections::HashSet,
    num::NonZeroUsize,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

/// A state store opened for the passes of one dump.
#[derive(Debug)]
pub struct StoreContext {
    dir: PathBuf,
    checksum: u64,
    store: Option<Store>,
    /// The readers of a replay pass that prefetches (`--io-threads`), and the queue depth
    /// the device was probed at.
    io_threads: NonZeroUsize,
    /// The readers of a read beside execution where given (`--io-threads`); where not,
    /// [`gigagas_grid::beside_readers`] of each pass's workers.
    beside_readers: Option<NonZeroUsize>,
    drop_caches: bool,
    device_reads_per_s: f64,
    /// The store was evicted (for a cold pass) since it was opened: then a warm pass of a
    /// kind not in `rewarmed` first runs once untimed, so that it finds in the page cache
    /// what it reads (interleaved rounds run cold and warm points in any order).
    evicted: bool,
    /// The kinds of pass (the loop or the replay, and its timed work: how it reads, with
    /// which design, with or without the root) re-warmed since the last eviction. One per
    /// kind, not one for all: each kind warms only what it reads (`full` only code, `keys`
    /// every key), so a point after another kind's re-warm could still read cold.
    rewarmed: HashSet<(bool, gigagas_grid::TimedWork)>,
    /// Opened read-write, for passes that persist their blocks ([`Self::open_writable`]).
    writable: bool,
}

impl StoreContext {
    /// Open the store in `dir`, refusing one built from another dump than the one with
    /// `checksum`; probe the device's random-read rate at `io_threads` readers.
    pub fn open(dir: &Path, checksum: u64, io_threads: NonZeroUsize) -> Result<Self, IoError> {
        Self::open_as(dir, checksum, io_threads, false)
    }

    /// [`Self::open`], read-write, for passes that persist their blocks (`--persist`): a
    /// store that may not be changed is refused here, before any pass.
    pub fn open_writable(
        dir: &Path,
        checksum: u64,
        io_threads: NonZeroUsize,
    ) -> Result<Self, IoError> {
        Self::open_as(dir, checksum, io_threads, true)
    }

    fn open_as(
        dir: &Path,
        checksum: u64,
        io_threads: NonZeroUsize,
        writable: bool,
    ) -> Result<Self, IoError> {
        let store = if writable {
            open_store_writable(dir, checksum)?
        } else {
            open_store(dir, checksum)?
        };
        let probe = probe_random_reads(
            &store.data_file(),
            Duration::from_millis(200),
            io_threads.get(),
        )?;
        Ok(Self {
            dir: dir.to_path_buf(),
            checksum,
            store: Some(store),
            io_threads,
            beside_readers: None,
            drop_caches: true,
            device_reads_per_s: probe.reads_per_s,
            evicted: false,
            rewarmed: HashSet::new(),
            writable,
        })
    }

    /// The same, its reads beside execution by `readers` readers (`None`: one per core
    /// each pass's workers leave free, [`gigagas_grid::beside_readers`]).
    pub fn beside_readers(mut self, readers: Option<NonZeroUsize>) -> Self {
        self.beside_readers = readers;
        self
    }

    /// The same, its cold passes evicting the store's files alone (`posix_fadvise`), never
    /// the whole OS page cache (`drop_caches`, which it otherwise drops where this process
    /// may): for a machine others measure on. A pass the files' eviction leaves not cold
    /// is refused as ever.
    pub fn without_drop_caches(mut self) -> Self {
        self.drop_caches = false;
        self
    }

    /// The readers of each replay pass that prefetches (`--io-threads`).
    pub fn io_threads(&self) -> NonZeroUsize {
        self.io_threads
    }

    /// The store's data file (what a device probe reads).
    pub fn data_file(&mut self) -> Result<PathBuf, IoError> {
        Ok(self.store()?.data_file())
    }

    fn store(&mut self) -> Result<&Store, IoError> {
        if self.store.is_none() {
            self.store = Some(if self.writable {
                open_store_writable(&self.dir, self.checksum)?
            } else {
                open_store(&self.dir, self.checksum)?
            });
        }
        Ok(self.store.as_ref().expect("opened above"))
    }

    /// Make the store cold: close it, evict its pages, reopen it, and check with `mincore`
    /// that (but for the few pages opening reads) none is resident; returns the resident
    /// share.
    fn make_cold(&mut self) -> Result<f64, IoError> {
        self.store = None;
        self.evicted = true;
        self.rewarmed.clear();
        evict(
            &self.dir,
            &EvictOptions {
                drop_caches: self.drop_caches,
            },
        )?;
        self.store()?;
        let resident = residency(&self.dir)?;
        if !resident.is_cold() {
            return Err(IoError::NotCold {
                resident: resident.fraction(),
                bytes: resident.resident_bytes,
            });
        }
        Ok(resident.fraction())
    }

    /// The sink of a pass whose timed work persists its blocks (none for others): the
    /// store marked dirty and its state as built kept readable, before the pass.
    fn sink(&mut self, work: gigagas_grid::TimedWork) -> Result<Option<StoreSink>, IoError> {
        if work.persist.is_none() {
            return Ok(None);
        }
        StoreSink::begin(self.store()?, work.persist, work.backlog).map(Some)
    }

    /// Whether a warm pass of this kind (`replay` or the loop, with `work`) must first run
    /// once untimed: the store was evicted and no pass of this kind has read it since.
    /// Marks the kind re-warmed.
    fn needs_rewarm(&mut self, replay: bool, work: gigagas_grid::TimedWork) -> bool {
        self.evicted && self.rewarmed.insert((replay, work))
    }

    /// `n` readers, each timing a sample of its reads; each hands its counts to `into`
    /// when dropped.
    fn readers(
        &mut self,
        n: NonZeroUsize,
        into: &Arc<Mutex<Collected>>,
    ) -> Result<Vec<StoreSource>, IoError> {
        let store = self.store()?;
        (0..n.get())
            .map(|_| {
                let reader = store.reader()?;
                reader.meter().set_timing(Timing::Sampled);
                Ok(StoreSource {
                    reader,
                    into: Arc::clone(into),
                })
            })
            .collect()
    }
}

/// The store behind the executor's [`BlockSink`], as the pass's [`Persist`] mode says:
/// each block written at once by one [`StoreWriter`] (`block`: one block at a time,
/// whichever worker finished its root), or handed to a [`BackgroundWriter`] that commits
/// them in groups on a thread of its own (`background`). Taken back after the pass
/// ([`StoreSink::restore`]); one dropped without that is taken back when dropped, so that
/// no exit of a pass leaves its store marked dirty.
#[derive(Debug)]
pub struct StoreSink {
    writer: Option<SinkWriter>,
}

/// The writer behind a [`StoreSink`].
#[derive(Debug)]
enum SinkWriter {
    Block(Box<Mutex<StoreWriter>>),
    Background(BackgroundWriter),
}

impl StoreSink {
    /// A sink over `store` (opened read-write) committing as `persist` says (with
    /// `background`, as `backlog` says), marking the store dirty until [`Self::restore`].
    /// Outside any timed window.
    pub fn begin(store: &Store, persist: Persist, backlog: Backlog) -> Result<Self, IoError> {
        let writer = StoreWriter::begin(store)?;
        let writer = match persist {
            Persist::Background => {
                SinkWriter::Background(BackgroundWriter::start(writer, backlog)?)
            }
            Persist::Block | Persist::None => SinkWriter::Block(Box::new(Mutex::new(writer))),
        };
        Ok(Self {
            writer: Some(writer),
        })
    }

    /// Writes every block the background writer still holds and waits for it (nothing to
    /// do with `block`); returns the time it took, nanoseconds. Inside the pass's window:
    /// the pass's tail.
    pub fn drain(&self) -> Result<u64, IoError> {
        let Some(SinkWriter::Background(w)) = &self.writer else {
            return Ok(0);
        };
        let start = std::time::Instant::now();
        w.drain()?;
        Ok(start.elapsed().as_nanos() as u64)
    }

    /// The background writer's group commits so far, in order (none with `block`).
    pub fn commits(&self) -> Vec<GroupCommit> {
        match &self.writer {
            Some(SinkWriter::Background(w)) => w.commits(),
            _ => Vec::new(),
        }
    }

    /// Takes every block written back out and checks the store reads as before; returns
    /// the keys restored. Outside any timed window. The background writer is stopped
    /// first (blocks it still holds are never written).
    pub fn restore(mut self) -> Result<usize, IoError> {
        self.take_back()
    }

    fn take_back(&mut self) -> Result<usize, IoError> {
        let writer = match self.writer.take() {
            None => return Ok(0),
            Some(SinkWriter::Block(w)) => w.into_inner().unwrap_or_else(PoisonError::into_inner),
            // A failed write leaves the blocks committed before it: those are taken back.
            Some(SinkWriter::Background(w)) => w.finish()?.0,
        };
        Ok(writer.restore()?)
    }
}

impl Drop for StoreSink {
    /// A sink dropped before [`StoreSink::restore`] (a pass that returned early or
    /// panicked) takes its blocks back all the same; a failure leaves the store marked
    /// dirty, refused when opened.
    fn drop(&mut self) {
        let _ = self.take_back();
    }
}

impl BlockSink for StoreSink {
    fn write_block(
        &self,
        segment: usize,
        block: usize,
        changes: BlockChanges,
    ) -> Result<BlockWritten, StateError> {
        match self.writer.as_ref() {
            Some(SinkWriter::Background(w)) => {
                w.hand(segment as u32, block, changes)
                    .map_err(StateError::from_source)?;
                Ok(BlockWritten::default())
            }
            Some(SinkWriter::Block(w)) => {
                let nodes = BlockWrite::nodes_of(&changes);
                let stats = w
                    .lock()
                    .map_err(|_| {
                        StateError::from_source(std::io::Error::other("a writer panicked"))
                    })?
                    .write_block(segment as u32, &BlockWrite::of(&changes, &nodes))
                    .map_err(StateError::from_source)?;
                Ok(BlockWritten {
                    blocks: 1,
                    bytes: stats.bytes,
                    pages: stats.pages,
                })
            }
            None => Err(StateError::from_source(std::io::Error::other(
                "the store's writes were already taken back",
            ))),
        }
    }
}

/// Ends a persisting pass, whatever its `result`: a pass that ran drains the writer
/// (inside its window: the drain is added to its wall time and kept as its tail,
/// `drain_ns`) and gets each group commit on its last block's record; then every block
/// written is taken back. Without a sink, the result as it is.
fn end_persisting(
    sink: Option<StoreSink>,
    result: Result<RunTimings, gigagas_executor::PassError>,
) -> Result<RunTimings, PassError> {
    let Some(sink) = sink else {
        return Ok(result?);
    };
    let drained = match result {
        Ok(mut timings) => sink.drain().map(|ns| {
            timings.wall_ns += ns;
            timings.root.drain_ns = ns;
            for c in sink.commits() {
                if let Some(p) = timings
                    .root
                    .persisted
                    .iter_mut()
                    .find(|p| p.block == c.last_block)
                {
                    p.bytes = c.stats.bytes;
                    p.pages = c.stats.pages;
                    p.commit_blocks = c.blocks;
                    p.commit_ns = c.ns;
                }
            }
            Ok(timings)
        }),
        Err(e) => Ok(Err(e)),
    };
    sink.restore()?;
    Ok(drained??)
}

/// The counts and sampled latencies of a pass's readers, handed over as they are dropped.
#[derive(Debug, Default)]
struct Collected {
    stats: ReadStats,
    latencies: Vec<u64>,
}

/// A store reader behind the executor's [`StateSource`]: what a store pass reads through.
/// One made by a pass hands its reads' counts and latencies to the pass when dropped; one
/// made by [`StoreSource::new`] keeps them to itself.
#[derive(Debug)]
pub struct StoreSource {
    reader: StoreReader,
    into: Arc<Mutex<Collected>>,
}

impl StoreSource {
    /// `reader` behind the seam, its reads' counts kept to itself.
    pub fn new(reader: StoreReader) -> Self {
        Self {
            reader,
            into: Arc::default(),
        }
    }
}

impl Drop for StoreSource {
    fn drop(&mut self) {
        let meter = self.reader.meter();
        if let Ok(mut c) = self.into.lock() {
            c.stats = c.stats.merged(meter.stats());
            c.latencies.extend(meter.take_latencies());
        }
    }
}

impl StateSource for StoreSource {
    fn account(
        &mut self,
        segment: usize,
        address: Address,
    ) -> Result<Option<AccountInfo>, StateError> {
        Ok(self
            .reader
            .account(segment, address)
            .map_err(StateError::from_source)?
            .map(|a| AccountInfo {
                balance: a.balance,
                nonce: a.nonce,
                code_hash: a.code_hash,
                ..Default::default()
            }))
    }

    fn storage(
        &mut self,
        segment: usize,
        address: Address,
        slot: U256,
    ) -> Result<U256, StateError> {
        self.reader
            .storage(segment, address, slot)
            .map_err(StateError::from_source)
    }

    fn code(&mut self, code_hash: B256) -> Result<Option<Bytecode>, StateError> {
        self.reader.code(code_hash).map_err(StateError::from_source)
    }

    /// The paths are sorted, so one cursor walks the trie table forward through them.
    fn trie_nodes(
        &mut self,
        segment: usize,
        trie: TrieId,
        paths: &[Nibbles],
        out: &mut Vec<Option<Bytes>>,
    ) -> Result<(), StateError> {
        let owner = trie.owner();
        let mut nibbles = Vec::with_capacity(64);
        for path in paths {
            nibbles.clear();
            nibbles.extend(path.iter());
            let node = self
                .reader
                .trie_node(segment, owner.as_ref(), &nibbles)
                .map_err(StateError::from_source)?;
            out.push(node);
        }
        Ok(())
    }

    fn read_ahead_trie_path(
        &mut self,
        segment: usize,
        trie: TrieId,
        key: &B256,
    ) -> Result<u32, StateError> {
        let nibbles: [u8; 64] = std::array::from_fn(|i| (key[i / 2] >> (4 * (1 - i % 2))) & 15);
        self.reader
            .read_ahead_trie_path(segment, trie.owner().as_ref(), &nibbles)
            .map_err(StateError::from_source)
    }
}

/// What one store pass read: its timings and its reads.
#[derive(Debug)]
pub(crate) struct IoPass {
    pub(crate) timings: RunTimings,
    pub(crate) figures: IoFigures,
}

/// The figures of a pass's collected reads.
fn figures_of(
    collected: &Mutex<Collected>,
    io: gigagas_executor::IoTimings,
    resident: f64,
    device_reads_per_s: f64,
) -> IoFigures {
    let mut c = collected.lock().expect("no reader panics holding the lock");
    let stats = c.stats;
    let reads = stats.accounts + stats.slots + stats.codes;
    let us = |ns: u64| ns as f64 / 1e3;
    IoFigures {
        accounts: stats.accounts,
        slots: stats.slots,
        codes: stats.codes,
        bytes: stats.bytes,
        read_s: io.read_ns as f64 / 1e9,
        build_s: io.build_ns as f64 / 1e9,
        exposed_s: io.exposed_ns as f64 / 1e9,
        read_p50_us: us(quantile(&mut c.latencies, 0.5)),
        read_p99_us: us(quantile(&mut c.latencies, 0.99)),
        resident_before: resident,
        device_reads_per_s,
        device_bound_s: if device_reads_per_s > 0.0 {
            reads as f64 / device_reads_per_s
        } else {
            0.0
        },
    }
}

/// One pass of the sequential loop reading its state on demand from the store, whose pages
/// are in the page cache or evicted first as `page_cache` says. What passes over `replay`
/// share comes from `pass_cache`.
pub(crate) fn sequential_pass(
    replay: &Replay,
    pass_cache: &PassCache,
    work: gigagas_grid::TimedWork,
    page_cache: CacheState,
    ctx: &mut StoreContext,
    verify: bool,
) -> Result<IoPass, PassError> {
    if page_cache == CacheState::Warm && ctx.needs_rewarm(false, work) {
        // Re-warm what this pass reads: the same pass once, untimed and unverified.
        sequential_pass(replay, pass_cache, work, page_cache, ctx, false)?;
    }
    let resident = prepare(ctx, page_cache)?;
    let collected = Arc::new(Mutex::new(Collected::default()));
    let mut readers = ctx.readers(NonZeroUsize::MIN, &collected)?;
    // The sink last: nothing between marking the store dirty and the pass can fail.
    let sink = ctx.sink(work)?;
    let mut runner = Sequential::on(work, &mut readers[0]).cached(pass_cache);
    if let Some(sink) = &sink {
        runner = runner.persisting(sink);
    }
    let result = runner.run(replay, verify);
    // On demand, reading is inside the loop: its time is the readers' own (their sample's,
    // scaled to all their reads).
    let read_ns = readers
        .iter()
        .map(|r| r.reader.meter().stats().read_ns())
        .sum();
    drop(readers);
    let timings = end_persisting(sink, result)?;
    let io = gigagas_executor::IoTimings {
        read_ns,
        build_ns: 0,
        exposed_ns: read_ns,
    };
    let figures = figures_of(&collected, io, resident, ctx.device_reads_per_s);
    Ok(IoPass { timings, figures })
}

/// One pass of the replay reading its state from the store, whose pages are in the page
/// cache or evicted first as `page_cache` says, as `config`'s state says: each batch's keys
/// before it runs, pipelined behind the previous batch, or each value the first time it is
/// needed. What passes over `replay` share comes from `pass_cache`.
pub(crate) fn replay_pass(
    replay: &Replay,
    pass_cache: &PassCache,
    config: &gigagas_grid::RunConfig,
    page_cache: CacheState,
    ctx: &mut StoreContext,
    verify: bool,
) -> Result<IoPass, PassError> {
    if page_cache == CacheState::Warm && ctx.needs_rewarm(true, config.work) {
        // Re-warm what this pass reads: the same pass once, untimed and unverified.
        replay_pass(replay, pass_cache, config, page_cache, ctx, false)?;
    }
    let resident = prepare(ctx, page_cache)?;
    let collected = Arc::new(Mutex::new(Collected::default()));
    // The readers' own type: the pass calls them directly, no boxed call per read.
    let read = config.work.state.read().ok_or(IoError::NoStore)?;
    let count = match read {
        gigagas_grid::StoreRead::Beside(_) => ctx.beside_readers.unwrap_or_else(|| {
            let cores = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
            gigagas_grid::beside_readers(config.threads, cores)
        }),
        _ => ctx.io_threads,
    };
    let mut readers = ctx.readers(count, &collected)?;
    let sink = ctx.sink(config.work)?;
    let mut runner = Parallel::reading(config, read, &mut readers).cached(pass_cache);
    if let Some(sink) = &sink {
        runner = runner.persisting(sink);
    }
    let result = runner.run(replay, verify);
    drop(readers);
    let timings = end_persisting(sink, result)?;
    let figures = figures_of(&collected, timings.io, resident, ctx.device_reads_per_s);
    Ok(IoPass { timings, figures })
}

/// Bring the store's pages to `page_cache` before a pass; returns the resident share
/// measured (cold), or the share now resident (warm).
fn prepare(ctx: &mut StoreContext, page_cache: CacheState) -> Result<f64, IoError> {
    match page_cache {
        CacheState::Cold => ctx.make_cold(),
        CacheState::Warm => Ok(residency(&ctx.dir)?.fraction()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gigagas_state::StoreError;
    use std::error::Error;

    /// A scratch folder on the disk the tests are built on (beside the test binary), not in
    /// the system's temporary folder: a tmpfs there keeps evicted pages, and a cold pass
    /// needs them dropped.
    fn scratch() -> tempfile::TempDir {
        let exe = std::env::current_exe().expect("the test binary's path");
        tempfile::tempdir_in(exe.parent().expect("the test binary's folder")).unwrap()
    }

    /// The store's reader behind the seam reads what the dump holds; a failed read is a
    /// `StateError::Source` whose source is the store's own error; and its counts reach
    /// the pass when it is dropped.
    #[test]
    fn a_store_read_behind_the_seam_keeps_the_stores_error() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet.gigagas");
        let (dump, info) = gigagas_dump::read_dump(&path).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("store");
        gigagas_state::build_store(&dump, &info, &out, &Default::default(), &mut |_| {}).unwrap();
        let store = open_store(&out, info.checksum).unwrap();
        let collected = Arc::new(Mutex::new(Collected::default()));
        let mut source = StoreSource {
            reader: store.reader().unwrap(),
            into: Arc::clone(&collected),
        };
        let account = &dump.segments[0].pre_state.accounts[0];
        let read = StateSource::account(&mut source, 0, account.address).unwrap();
        assert_eq!(
            read.map(|a| (a.balance, a.nonce, a.code_hash)),
            account.state.map(|s| (s.balance, s.nonce, s.code_hash))
        );

        let segments = dump.segments.len();
        let err = StateSource::account(&mut source, segments, account.address).unwrap_err();
        assert!(matches!(err, StateError::Source(_)), "{err:?}");
        let store_err = err.source().and_then(|e| e.downcast_ref::<StoreError>());
        assert!(
            matches!(
                store_err,
                Some(StoreError::NoSuchSegment { segment, .. }) if *segment == segments
            ),
            "{err:?}"
        );
        drop(source);
        // The one read that reached the store is counted.
        assert_eq!(collected.lock().unwrap().stats.accounts, 1);
    }

    /// The timed work of a warm store pass reading as `io` says, the root phase `phase`.
    fn warm_store_work(
        io: gigagas_grid::IoMode,
        phase: gigagas_grid::StateRootPhase,
    ) -> gigagas_grid::TimedWork {
        gigagas_grid::TimedWork {
            state: gigagas_grid::StateRead::store(
                gigagas_grid::StoreRead::each(io, &[Default::default()])[0],
                CacheState::Warm,
            ),
            state_root: phase,
            ..Default::default()
        }
    }

    /// One verified warm replay pass of `replay` from `ctx`'s store at `threads` workers and
    /// mega-blocks of `batch`, reading as `io` says with the root phase `phase`: the point,
    /// and the pass (a failure panics naming the point).
    fn warm_root_pass(
        replay: &gigagas_executor::Replay,
        ctx: &mut StoreContext,
        (io, phase, threads): (gigagas_grid::IoMode, gigagas_grid::StateRootPhase, usize),
        batch: usize,
    ) -> (gigagas_grid::RunConfig, IoPass) {
        let threads = NonZeroUsize::new(threads).unwrap();
        let point = gigagas_grid::RunConfig::new(threads, batch, gigagas_grid::SchedulerKind::Ols)
            .with_work(warm_store_work(io, phase));
        let pass = replay_pass(
            replay,
            &PassCache::new(),
            &point,
            CacheState::Warm,
            ctx,
            true,
        )
        .unwrap_or_else(|e| panic!("{point}: {e}"));
        (point, pass)
    }

    /// A dump whose account trie and a token's storage trie are padded (deeper paths, full
    /// branches): a store run reads each block's nodes by path and every root equals its
    /// header, in the replay (1 and 2 threads, after and overlapped) and the client loop.
    #[test]
    fn a_padded_store_run_reads_its_trie_per_block() {
        use gigagas_grid::{IoMode, StateRootPhase};
        use gigagas_workload::{TrieSizes, WorkloadContract};
        gigagas_executor::test_utils::install_kzg_verifier();
        let config = gigagas_workload::GeneratorConfig {
            profile: gigagas_workload::Profile::Erc20,
            blocks: 3,
            gas_per_block: 3_000_000,
            seed: 6,
            fork: alloy_hardforks::EthereumHardfork::Prague,
            users: 30,
        };
        let sizes = TrieSizes::accounts(4_096).with_storage(&[WorkloadContract::TokenA], 4_096);
        let dump =
            gigagas_workload::generate_with_padded_witness(&config, &sizes, |_, _| {}).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let info = gigagas_dump::write_dump(&dump, &dir.path().join("p.gigagas")).unwrap();
        let out = dir.path().join("store");
        gigagas_state::build_store(&dump, &info, &out, &Default::default(), &mut |_| {}).unwrap();
        let replay = gigagas_executor::Replay::new(dump).unwrap();
        let two = NonZeroUsize::new(2).unwrap();
        let mut ctx = StoreContext::open(&out, info.checksum, two).unwrap();
        let work = warm_store_work;
        for case in [
            (IoMode::Prefetch, StateRootPhase::After, 1),
            (IoMode::OnDemand, StateRootPhase::Overlapped, 2),
        ] {
            let (point, pass) = warm_root_pass(&replay, &mut ctx, case, 1);
            let root = &pass.timings.root;
            assert_eq!(root.blocks, 3, "{point}");
            assert!(
                root.reads.read > 0 && root.reads.held > 0,
                "{point}: {:?}",
                root.reads
            );
        }
        let pass = sequential_pass(
            &replay,
            &PassCache::new(),
            work(IoMode::OnDemand, StateRootPhase::After),
            CacheState::Warm,
            &mut ctx,
            true,
        )
        .unwrap();
        assert_eq!(pass.timings.root.blocks, 3);
        assert!(pass.timings.root.reads.read > 0);
    }

    /// A store run with the root phase on reads each block's trie nodes from the store (its
    /// trie table, by path) inside the block's root units, and every root still equals its
    /// header: the replay prefetching and on demand, 1 and 2 threads, after and overlapped,
    /// and the client loop. A store without the nodes fails in one line.
    #[test]
    fn a_store_run_reads_its_trie_from_the_store() {
        use gigagas_grid::{IoMode, RunConfig, SchedulerKind, StateRootPhase};
        gigagas_executor::test_utils::install_kzg_verifier();
        let config = gigagas_workload::GeneratorConfig {
            profile: gigagas_workload::Profile::Erc20,
            blocks: 3,
            gas_per_block: 3_000_000,
            seed: 5,
            fork: alloy_hardforks::EthereumHardfork::Prague,
            users: 30,
        };
        let dump = gigagas_workload::generate_with_witness(&config, |_, _| {}).unwrap();
        // Stored by trie and path: a node on several paths (alike storage tries) at each.
        let nodes = gigagas_trie::nodes_by_path(
            dump.segments[0].witness.as_ref().unwrap(),
            dump.segments[0].blocks.iter().map(|b| &b.access_list),
        )
        .len() as u64;
        let dir = tempfile::tempdir().unwrap();
        let info = gigagas_dump::write_dump(&dump, &dir.path().join("w.gigagas")).unwrap();
        let out = dir.path().join("store");
        gigagas_state::build_store(&dump, &info, &out, &Default::default(), &mut |_| {}).unwrap();
        assert_eq!(
            open_store(&out, info.checksum).unwrap().meta().trie_nodes,
            nodes
        );
        // The same state without the witness's nodes, under the dump's checksum.
        let mut bare = dump.clone();
        bare.segments[0].witness = None;
        let bare_out = dir.path().join("bare");
        gigagas_state::build_store(&bare, &info, &bare_out, &Default::default(), &mut |_| {})
            .unwrap();
        let replay = gigagas_executor::Replay::new(dump).unwrap();
        let two = NonZeroUsize::new(2).unwrap();
        let mut ctx = StoreContext::open(&out, info.checksum, two).unwrap();
        let work = warm_store_work;
        for case in [
            (IoMode::Prefetch, StateRootPhase::After, 1),
            (IoMode::Prefetch, StateRootPhase::Overlapped, 2),
            (IoMode::OnDemand, StateRootPhase::After, 2),
            (IoMode::OnDemand, StateRootPhase::Overlapped, 1),
        ] {
            let (point, pass) = warm_root_pass(&replay, &mut ctx, case, 3);
            let root = &pass.timings.root;
            assert_eq!(root.blocks, 3, "{point}");
            // Each block read its nodes inside its root units; the later blocks found
            // nodes the first read, and no node was read twice.
            assert!(root.read_ns > 0, "{point}");
            assert!(
                root.reads.read > 0 && root.reads.held > 0,
                "{point}: {:?}",
                root.reads
            );
            assert!(root.reads.read <= nodes, "{point}: {:?}", root.reads);
            let in_units: u64 = root.spans.iter().map(|s| s.read_ns).sum();
            assert_eq!(in_units, root.read_ns, "{point}");
        }
        let sequential = work(IoMode::OnDemand, StateRootPhase::After);
        let pass = sequential_pass(
            &replay,
            &PassCache::new(),
            sequential,
            CacheState::Warm,
            &mut ctx,
            true,
        )
        .unwrap();
        assert_eq!(pass.timings.root.blocks, 3);
        assert!(pass.timings.root.read_ns > 0);
        assert!(pass.timings.root.reads.read > 0 && pass.timings.root.reads.read <= nodes);

        let mut ctx = StoreContext::open(&bare_out, info.checksum, two).unwrap();
        let point = RunConfig::new(two, 3, SchedulerKind::Ols)
            .with_work(work(IoMode::Prefetch, StateRootPhase::Overlapped));
        let err = replay_pass(
            &replay,
            &PassCache::new(),
            &point,
            CacheState::Warm,
            &mut ctx,
            true,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("missing node under 0x in the account trie") && !err.contains('\n'),
            "{err}"
        );
        let err = sequential_pass(
            &replay,
            &PassCache::new(),
            sequential,
            CacheState::Warm,
            &mut ctx,
            true,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("missing node under 0x in the account trie"),
            "{err}"
        );
    }

    /// A warm pass after a cold one (interleaved rounds run them in any order) finds what
    /// it reads in the page cache: the store evicted for the cold pass is read once,
    /// untimed, before the warm pass's window; and so it is when another kind of warm pass,
    /// which reads less (`full` reads only code), ran between the eviction and this one.
    #[test]
    fn a_warm_pass_after_an_eviction_starts_warm() {
        gigagas_executor::test_utils::install_kzg_verifier();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet.gigagas");
        let (dump, info) = gigagas_dump::read_dump(&path).unwrap();
        let dir = scratch();
        let out = dir.path().join("store");
        gigagas_state::build_store(&dump, &info, &out, &Default::default(), &mut |_| {}).unwrap();
        let replay = gigagas_executor::Replay::new(dump).unwrap();
        let mut ctx =
            StoreContext::open(&out, info.checksum, NonZeroUsize::new(2).unwrap()).unwrap();
        let point_of = |page_cache, design| {
            gigagas_grid::RunConfig::new(
                std::num::NonZeroUsize::MIN,
                42,
                gigagas_grid::SchedulerKind::Ols,
            )
            .with_work(gigagas_grid::TimedWork {
                state: gigagas_grid::StateRead::store(
                    gigagas_grid::StoreRead::Prefetch(design),
                    page_cache,
                ),
                ..Default::default()
            })
        };
        let point = |page_cache| point_of(page_cache, gigagas_grid::BalDesign::Keys);
        // A store that cannot be evicted fails the test: it never passes unchecked.
        let cold = replay_pass(
            &replay,
            &PassCache::new(),
            &point(CacheState::Cold),
            CacheState::Cold,
            &mut ctx,
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(ctx.evicted, "a cold pass leaves the store evicted");
        // `full` first: it re-warms the code it reads, not the accounts and slots.
        let full = point_of(CacheState::Warm, gigagas_grid::BalDesign::Full);
        replay_pass(
            &replay,
            &PassCache::new(),
            &full,
            CacheState::Warm,
            &mut ctx,
            true,
        )
        .unwrap();
        let warm = replay_pass(
            &replay,
            &PassCache::new(),
            &point(CacheState::Warm),
            CacheState::Warm,
            &mut ctx,
            true,
        )
        .unwrap();
        // What the cold pass found resident is at most its threshold; the warm pass finds
        // at least what one pass reads (the cold pass's reads, in bytes, as a share of the
        // store).
        let store_bytes = residency(&out).unwrap().total_bytes as f64;
        assert!(
            warm.figures.resident_before * store_bytes >= cold.figures.bytes as f64,
            "warm {:?} after cold {:?}",
            warm.figures,
            cold.figures
        );
        assert!(ctx.rewarmed.contains(&(true, point(CacheState::Warm).work)));
        // A cold pass again: every kind must re-warm again.
        replay_pass(
            &replay,
            &PassCache::new(),
            &point(CacheState::Cold),
            CacheState::Cold,
            &mut ctx,
            true,
        )
        .unwrap();
        assert!(ctx.rewarmed.is_empty());
    }

    /// The last block's access-list post-values and root, as the store holds them after a
    /// persisting pass and before it is taken back: every account and slot it lists reads
    /// its last value in the list (an account deleted as empty reads absent), and the
    /// account trie's root node, at path [], hashes to the last header's state root.
    fn assert_holds_last_block(store: &Store, dump: &gigagas_dump::Dump) {
        let segment = dump.segments.len() - 1;
        let block = dump.segments[segment].blocks.last().unwrap();
        let mut reader = store.reader().unwrap();
        let root = reader.trie_node(segment, None, &[]).unwrap().unwrap();
        assert_eq!(
            alloy_primitives::keccak256(&root),
            block.header.state_root,
            "the account trie's root node after the last block"
        );
        for changes in block.access_list.iter() {
            let account = reader.account(segment, changes.address).unwrap();
            let balance = changes.balance_changes.last().map(|c| c.post_balance);
            let nonce = changes.nonce_changes.last().map(|c| c.new_nonce);
            match account {
                Some(a) => {
                    if let Some(b) = balance {
                        assert_eq!(a.balance, b, "{}", changes.address);
                    }
                    if let Some(n) = nonce {
                        assert_eq!(a.nonce, n, "{}", changes.address);
                    }
                }
                None => assert!(
                    balance.is_none_or(|b| b.is_zero()) && nonce.is_none_or(|n| n == 0),
                    "{} reads absent",
                    changes.address
                ),
            }
            for slot in &changes.storage_changes {
                let Some(last) = slot.changes.last() else {
                    continue;
                };
                assert_eq!(
                    reader.storage(segment, changes.address, slot.slot).unwrap(),
                    last.new_value,
                    "{} slot {}",
                    changes.address,
                    slot.slot
                );
            }
        }
    }

    /// The timed work of a warm store pass reading as `io` says, the root phase `phase`,
    /// persisting as `persist` (in the background with a backlog small enough that a few
    /// blocks make groups and stalls).
    fn persisting_work(
        io: gigagas_grid::IoMode,
        phase: gigagas_grid::StateRootPhase,
        persist: Persist,
    ) -> gigagas_grid::TimedWork {
        gigagas_grid::TimedWork {
            persist,
            backlog: Backlog {
                threshold: 1,
                buffer: 0,
                backpressure: 1,
            },
            ..warm_store_work(io, phase)
        }
    }

    /// A pass persisting in the background at 2 threads, by hand: once drained, the store
    /// holds every block (the last block's state and root), the group commits wrote every
    /// block once and the drain is in the pass's wall time; taken back, the store is as
    /// `built`.
    fn assert_background_pass_leaves_every_block(
        ctx: &mut StoreContext,
        replay: &Replay,
        dump: &gigagas_dump::Dump,
        built: u64,
        name: &str,
    ) {
        use gigagas_grid::{IoMode, RunConfig, SchedulerKind, StateRootPhase};
        let two = NonZeroUsize::new(2).unwrap();
        let blocks = dump.segments.iter().map(|s| s.blocks.len()).sum::<usize>();
        let point = RunConfig::new(two, 1, SchedulerKind::Ols).with_work(persisting_work(
            IoMode::Prefetch,
            StateRootPhase::Overlapped,
            Persist::Background,
        ));
        let collected = Arc::new(Mutex::new(Collected::default()));
        let mut readers = ctx.readers(two, &collected).unwrap();
        let sink = ctx.sink(point.work).unwrap().unwrap();
        let read = point.work.state.read().unwrap();
        let timings = Parallel::reading(&point, read, &mut readers)
            .persisting(&sink)
            .run(replay, true)
            .unwrap_or_else(|e| panic!("{name} {point}: {e}"));
        drop(readers);
        let drain_ns = sink.drain().unwrap();
        let commits = sink.commits();
        assert_eq!(
            commits.iter().map(|c| c.blocks as usize).sum::<usize>(),
            blocks,
            "{name}: {commits:?}"
        );
        assert_eq!(timings.root.persisted.len(), blocks, "{name}");
        assert!(timings.root.persisted.iter().all(|p| p.commit_blocks == 0));
        assert_holds_last_block(ctx.store().unwrap(), dump);
        assert!(sink.restore().unwrap() > 0);
        assert_eq!(
            ctx.store().unwrap().content_digest().unwrap(),
            built,
            "{name}"
        );
        // Through the pass's own ending, the drain is the wall time's tail.
        let pass = replay_pass(
            replay,
            &PassCache::new(),
            &point,
            CacheState::Warm,
            ctx,
            true,
        )
        .unwrap_or_else(|e| panic!("{name} {point}: {e}"));
        let root = &pass.timings.root;
        assert!(
            root.drain_ns > 0 && root.drain_ns <= pass.timings.wall_ns,
            "{name}"
        );
        let _ = drain_ns;
    }

    /// Every exit of a pass's setup leaves its store unmarked or restored: a sink dropped
    /// before its pass (an early return) takes its mark back, and a loop pass whose readers
    /// cannot be made (its store reopened against another dump's checksum) never marks it.
    #[test]
    fn a_failed_setup_leaves_the_store_unmarked() {
        use gigagas_grid::{IoMode, StateRootPhase};
        gigagas_executor::test_utils::install_kzg_verifier();
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet-like-witness.gigagas");
        let (dump, info) = gigagas_dump::read_dump(&path).unwrap();
        let dir = scratch();
        let out = dir.path().join("store");
        gigagas_state::build_store(&dump, &info, &out, &Default::default(), &mut |_| {}).unwrap();
        let replay = Replay::new(dump).unwrap();
        let one = NonZeroUsize::MIN;
        let mut ctx = StoreContext::open_writable(&out, info.checksum, one).unwrap();
        let built = ctx.store().unwrap().content_digest().unwrap();
        for persist in [Persist::Block, Persist::Background] {
            let work = gigagas_grid::TimedWork {
                persist,
                ..warm_store_work(IoMode::OnDemand, StateRootPhase::After)
            };
            drop(ctx.sink(work).unwrap().unwrap());
            assert_eq!(
                ctx.store().unwrap().content_digest().unwrap(),
                built,
                "{persist}"
            );
            // The readers fail: the store, closed, reopens against another checksum.
            ctx.store = None;
            ctx.checksum ^= 1;
            let err = sequential_pass(
                &replay,
                &PassCache::new(),
                work,
                CacheState::Warm,
                &mut ctx,
                true,
            )
            .unwrap_err();
            assert!(err.to_string().contains("not from this dump"), "{err}");
            ctx.checksum ^= 1;
            let store =
                open_store(&out, info.checksum).unwrap_or_else(|e| panic!("{persist}: {e}"));
            assert_eq!(store.content_digest().unwrap(), built, "{persist}");
        }
    }

    /// A persisting pass commits every block after its root, one write per block, and the
    /// store holds the last block's state before the writes are taken back; taken back, the
    /// store holds exactly what it was built with (every entry of every table), and every
    /// root still equals its header: the replay (1 and 2 threads, after and overlapped, 1
    /// block per batch and all in one) and the client loop, on the committed witness dump
    /// and on a generated one. A store opened read-only cannot take such a pass.
    #[test]
    fn a_persisting_pass_writes_each_block_and_leaves_the_store_as_built() {
        use gigagas_grid::{IoMode, RunConfig, SchedulerKind, StateRootPhase};
        gigagas_executor::test_utils::install_kzg_verifier();
        let committed =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet-like-witness.gigagas");
        let generated = gigagas_workload::generate_with_witness(
            &gigagas_workload::GeneratorConfig {
                profile: gigagas_workload::Profile::Erc20,
                blocks: 3,
                gas_per_block: 3_000_000,
                seed: 7,
                fork: alloy_hardforks::EthereumHardfork::Prague,
                users: 30,
            },
            |_, _| {},
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        for (name, dump) in [
            ("committed", gigagas_dump::read_dump(&committed).unwrap().0),
            ("generated", generated),
        ] {
            let info = gigagas_dump::write_dump(&dump, &dir.path().join(name)).unwrap();
            let out = dir.path().join(format!("{name}-store"));
            gigagas_state::build_store(&dump, &info, &out, &Default::default(), &mut |_| {})
                .unwrap();
            let blocks = dump.segments.iter().map(|s| s.blocks.len()).sum::<usize>();
            let replay = gigagas_executor::Replay::new(dump.clone()).unwrap();
            let two = NonZeroUsize::new(2).unwrap();
            // Read-only, the store refuses to take the writes.
            let mut ro = StoreContext::open(&out, info.checksum, two).unwrap();
            let err = StoreSink::begin(ro.store().unwrap(), Persist::Block, Backlog::RETH)
                .unwrap_err()
                .to_string();
            assert!(err.contains("--persist") && !err.contains('\n'), "{err}");
            drop(ro);
            let mut ctx = StoreContext::open_writable(&out, info.checksum, two).unwrap();
            let built = ctx.store().unwrap().content_digest().unwrap();
            let work = |io, phase| persisting_work(io, phase, Persist::Block);
            // One pass by hand, to look at the store before its writes are taken back.
            let point = RunConfig::new(two, 1, SchedulerKind::Ols)
                .with_work(work(IoMode::Prefetch, StateRootPhase::Overlapped));
            let collected = Arc::new(Mutex::new(Collected::default()));
            let mut readers = ctx.readers(two, &collected).unwrap();
            let sink = ctx.sink(point.work).unwrap().unwrap();
            let read = point.work.state.read().unwrap();
            let timings = Parallel::reading(&point, read, &mut readers)
                .persisting(&sink)
                .run(&replay, true)
                .unwrap_or_else(|e| panic!("{name} {point}: {e}"));
            drop(readers);
            assert_eq!(timings.root.persisted.len(), blocks, "{name}");
            assert!(
                timings
                    .root
                    .persisted
                    .iter()
                    .all(|p| p.bytes > 0 && p.pages > 0),
                "{name}: {:?}",
                timings.root.persisted
            );
            assert_holds_last_block(ctx.store().unwrap(), &dump);
            assert_ne!(ctx.store().unwrap().content_digest().unwrap(), built);
            assert!(sink.restore().unwrap() > 0);
            assert_eq!(
                ctx.store().unwrap().content_digest().unwrap(),
                built,
                "{name}"
            );
            assert_background_pass_leaves_every_block(&mut ctx, &replay, &dump, built, name);

            for (io, phase, threads, batch, persist) in [
                (
                    IoMode::Prefetch,
                    StateRootPhase::After,
                    1,
                    1,
                    Persist::Block,
                ),
                (
                    IoMode::Prefetch,
                    StateRootPhase::Overlapped,
                    2,
                    1,
                    Persist::Block,
                ),
                (
                    IoMode::OnDemand,
                    StateRootPhase::After,
                    2,
                    3,
                    Persist::Block,
                ),
                (
                    IoMode::OnDemand,
                    StateRootPhase::Overlapped,
                    1,
                    1,
                    Persist::Block,
                ),
                (
                    IoMode::OnDemand,
                    StateRootPhase::After,
                    1,
                    3,
                    Persist::Background,
                ),
            ] {
                let threads = NonZeroUsize::new(threads).unwrap();
                let point = RunConfig::new(threads, batch, SchedulerKind::Ols)
                    .with_work(persisting_work(io, phase, persist));
                let pass = replay_pass(
                    &replay,
                    &PassCache::new(),
                    &point,
                    CacheState::Warm,
                    &mut ctx,
                    true,
                )
                .unwrap_or_else(|e| panic!("{name} {point}: {e}"));
                let root = &pass.timings.root;
                assert_eq!(root.blocks, blocks, "{name} {point}");
                assert_eq!(root.persisted.len(), blocks, "{name} {point}");
                let in_units: u64 = root.spans.iter().map(|s| s.persist_ns).sum();
                let waits: u64 = root.persisted.iter().map(|p| p.ns).sum();
                assert_eq!(in_units, waits, "{name} {point}");
                let committed: u32 = root.persisted.iter().map(|p| p.commit_blocks).sum();
                assert_eq!(committed as usize, blocks, "{name} {point}");
                // Only the background writer has a drain.
                assert_eq!(root.drain_ns > 0, persist == Persist::Background, "{point}");
                assert_eq!(
                    ctx.store().unwrap().content_digest().unwrap(),
                    built,
                    "{name} {point}"
                );
            }
            let pass = sequential_pass(
                &replay,
                &PassCache::new(),
                work(IoMode::OnDemand, StateRootPhase::After),
                CacheState::Warm,
                &mut ctx,
                true,
            )
            .unwrap();
            assert_eq!(pass.timings.root.persisted.len(), blocks, "{name}");
            assert_eq!(
                ctx.store().unwrap().content_digest().unwrap(),
                built,
                "{name}"
            );
            // Reopened read-only, the store reads as the dump.
            drop(ctx);
            let store = open_store(&out, info.checksum).unwrap();
            assert_eq!(store.content_digest().unwrap(), built, "{name}");
        }
    }
}
