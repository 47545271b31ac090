//! Opening a store and reading it: [`open_store`], [`Store`], [`StoreReader`] with its
//! [`ReadMeter`].

use crate::{
    StoreError, StoreMeta,
    layout::{
        ACCOUNTS, BLOCK_HASHES, BYTECODES, META, STORAGE, ValueError, block_hash_key,
        decode_account, decode_slot, state_key,
    },
};
use alloy_primitives::{Address, B256, Bytes, KECCAK256_EMPTY, U256};
use gigagas_dump::AccountState;
use signet_libmdbx::{
    Database, DatabaseFlags, Environment, EnvironmentFlags, MdbxError, Mode, ReadError, Stat,
    tx::aliases::RoTxUnsync,
};
use std::{
    borrow::Cow,
    cell::{Cell, RefCell},
    fmt, fs,
    io::ErrorKind,
    path::{Path, PathBuf},
    sync::Arc,
    time::Instant,
};

/// The data file of a store (MDBX's).
pub const DATA_FILE: &str = "mdbx.dat";
/// MDBX's lock file beside it (the reader table; not data).
pub const LOCK_FILE: &str = "mdbx.lck";

/// Entries, depth and pages of one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableStats {
    /// Table name.
    pub name: &'static str,
    /// Entries (for the storage table: key–value pairs, i.e. slots).
    pub entries: u64,
    /// Depth of its B-tree: the pages a lookup visits.
    pub depth: u32,
    /// Branch pages.
    pub branch_pages: u64,
    /// Leaf pages.
    pub leaf_pages: u64,
    /// Overflow pages (large values: bytecode).
    pub overflow_pages: u64,
}

impl TableStats {
    /// Stats of `name` from MDBX's `stat`.
    pub(crate) fn new(name: &'static str, stat: Stat) -> Self {
        Self {
            name,
            entries: stat.entries() as u64,
            depth: stat.depth(),
            branch_pages: stat.branch_pages() as u64,
            leaf_pages: stat.leaf_pages() as u64,
            overflow_pages: stat.overflow_pages() as u64,
        }
    }
}

/// The tables' handles.
#[derive(Debug, Clone, Copy)]
struct Tables {
    accounts: Database,
    storage: Database,
    codes: Database,
    hashes: Database,
}

/// An open store (MDBX environment, read-only). Cheap to share across threads
/// (`Send + Sync`); [`Store::reader`] gives each thread its own reader.
///
/// Drop the store and all its readers before [`crate::evict`]: pages mapped by an open
/// environment stay in the page cache.
pub struct Store {
    env: Environment,
    path: Arc<PathBuf>,
    meta: StoreMeta,
    tables: Tables,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .finish_non_exhaustive()
    }
}

/// Open the store in `dir` read-only and check that it was built from the dump whose
/// checksum is `expected_dump_checksum` ([`gigagas_dump::DumpFileInfo::checksum`]).
///
/// A store built from another dump, of another layout version, truncated or corrupt is
/// refused with a one-line [`StoreError`].
pub fn open_store(dir: &Path, expected_dump_checksum: u64) -> Result<Store, StoreError> {
    let store = Store::open(dir)?;
    if store.meta.dump_checksum != expected_dump_checksum {
        return Err(StoreError::WrongDump {
            path: dir.to_path_buf(),
            store: store.meta.dump_checksum,
            expected: expected_dump_checksum,
        });
    }
    Ok(store)
}

impl Store {
    /// Open the store in `dir` read-only, whatever dump it was built from (for inspecting
    /// it; a run uses [`open_store`]).
    ///
    /// Opened like reth opens its database for reads: no readahead, so a cold lookup
    /// reads the pages it needs and no more.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let not_a_store = |reason: &str| StoreError::NotAStore {
            path: dir.to_path_buf(),
            reason: reason.into(),
        };
        match fs::metadata(dir) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(not_a_store("it does not exist"));
            }
            Err(e) => return Err(StoreError::io("stat", dir, e)),
            Ok(m) if !m.is_dir() => return Err(not_a_store("it is not a folder")),
            Ok(_) => {}
        }
        let data = dir.join(DATA_FILE);
        let data_len = match fs::metadata(&data) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(not_a_store(&format!("it has no {DATA_FILE}")));
            }
            Err(e) => return Err(StoreError::io("stat", &data, e)),
            Ok(m) => m.len(),
        };
        // MDBX's three meta pages at least (it reports a shorter file obscurely).
        if data_len < 3 * crate::PAGE_SIZE as u64 {
            return Err(StoreError::Corrupt {
                path: dir.to_path_buf(),
                what: format!("its {DATA_FILE} has only {data_len} bytes"),
            });
        }
        let env = Environment::builder()
            .set_flags(EnvironmentFlags {
                mode: Mode::ReadOnly,
                no_rdahead: true,
                ..Default::default()
            })
            .set_max_dbs(8)
            .set_max_readers(1024)
            .open(dir)
            .map_err(|source| StoreError::Open {
                path: dir.to_path_buf(),
                source,
            })?;
        let open_err = |source| StoreError::Open {
            path: dir.to_path_buf(),
            source,
        };
        // MDBX maps the file: a page past its end would fault (SIGBUS) on first touch.
        let page = env.stat().map_err(open_err)?.page_size();
        let used = (env.info().map_err(open_err)?.last_pgno() as u64 + 1) * u64::from(page);
        if data_len < used {
            return Err(StoreError::Truncated {
                path: dir.to_path_buf(),
                actual: data_len,
                expected: used,
            });
        }
        let path = Arc::new(dir.to_path_buf());
        let txn = env.begin_ro_unsync().map_err(open_err)?;
        let table = |name: &'static str| -> Result<Database, StoreError> {
            txn.open_db(Some(name)).map_err(|e| match e {
                MdbxError::NotFound => StoreError::Corrupt {
                    path: dir.to_path_buf(),
                    what: format!("it has no table {name}"),
                },
                source => StoreError::Open {
                    path: dir.to_path_buf(),
                    source,
                },
            })
        };
        let meta_db = table(META)?;
        let meta = StoreMeta::decode(dir, |key| {
            txn.get::<Vec<u8>>(meta_db.dbi(), key.as_bytes())
                .map_err(|source| StoreError::Read {
                    path: dir.to_path_buf(),
                    table: META,
                    source,
                })
        })?;
        let tables = Tables {
            accounts: table(ACCOUNTS)?,
            storage: table(STORAGE)?,
            codes: table(BYTECODES)?,
            hashes: table(BLOCK_HASHES)?,
        };
        if !tables.storage.flags().contains(DatabaseFlags::DUP_SORT) {
            return Err(StoreError::Corrupt {
                path: dir.to_path_buf(),
                what: format!("table {STORAGE} is not dup-sorted"),
            });
        }
        drop(txn);
        Ok(Self {
            env,
            path,
            meta,
            tables,
        })
    }

    /// A reader owning one read transaction. Use it from one thread at a time (it is
    /// `Send`, not `Sync`); open one per thread to read in parallel.
    pub fn reader(&self) -> Result<StoreReader, StoreError> {
        let txn = self
            .env
            .begin_ro_unsync()
            .map_err(|source| StoreError::Open {
                path: self.path.to_path_buf(),
                source,
            })?;
        Ok(StoreReader {
            txn,
            tables: self.tables,
            segments: self.meta.segments,
            path: self.path.clone(),
            meter: ReadMeter::default(),
        })
    }

    /// What the store was built from and what it holds.
    pub fn meta(&self) -> &StoreMeta {
        &self.meta
    }

    /// The store's folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The data file, for [`crate::probe_random_reads`].
    pub fn data_file(&self) -> PathBuf {
        self.path.join(DATA_FILE)
    }

    /// Entries, depth and pages of the accounts, storage, bytecode and block-hash tables.
    pub fn table_stats(&self) -> Result<Vec<TableStats>, StoreError> {
        let reader = self.reader()?;
        let stat = |name: &'static str, db: &Database| {
            reader
                .txn
                .db_stat(db)
                .map(|s| TableStats::new(name, s))
                .map_err(|source| StoreError::Read {
                    path: self.path.to_path_buf(),
                    table: name,
                    source: ReadError::Mdbx(source),
                })
        };
        Ok(vec![
            stat(ACCOUNTS, &self.tables.accounts)?,
            stat(STORAGE, &self.tables.storage)?,
            stat(BYTECODES, &self.tables.codes)?,
            stat(BLOCK_HASHES, &self.tables.hashes)?,
        ])
    }
}

/// One thread's reads from a [`Store`]: an MDBX read transaction (a consistent snapshot)
/// with its counters, like revm's `DatabaseRef`. `Send`, not `Sync`.
///
/// `segment` is the index of a dump segment (`0..meta().segments`); each segment sees
/// only its own pre-state. Every read is counted (and timed, if asked) by the reader's
/// [`ReadMeter`]. A pass reads it through the executor's `StateSource`, which the bench
/// crate implements for it (`gigagas-bench`'s `io`).
pub struct StoreReader {
    txn: RoTxUnsync,
    tables: Tables,
    segments: u32,
    path: Arc<PathBuf>,
    meter: ReadMeter,
}

impl fmt::Debug for StoreReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreReader")
            .field("path", &self.path)
            .field("meter", &self.meter)
            .finish_non_exhaustive()
    }
}

impl StoreReader {
    fn segment(&self, segment: usize) -> Result<u32, StoreError> {
        if segment < self.segments as usize {
            Ok(segment as u32)
        } else {
            Err(StoreError::NoSuchSegment {
                segment,
                segments: self.segments,
            })
        }
    }

    fn read_err(&self, table: &'static str) -> impl Fn(ReadError) -> StoreError + '_ {
        move |source| StoreError::Read {
            path: self.path.to_path_buf(),
            table,
            source,
        }
    }

    fn bad_value(&self, table: &'static str, what: ValueError) -> StoreError {
        StoreError::BadValue {
            path: self.path.to_path_buf(),
            table,
            what,
        }
    }
}

impl StoreReader {
    /// The account, `None` if it does not exist (the dump records it absent). An existing
    /// empty account reads as `Some` with zero nonce and balance and the empty code hash.
    pub fn account(
        &self,
        segment: usize,
        address: Address,
    ) -> Result<Option<AccountState>, StoreError> {
        let key = state_key(&address, self.segment(segment)?);
        self.meter.measure(ReadKind::Account, || {
            let value: Option<Cow<'_, [u8]>> = self
                .txn
                .get(self.tables.accounts.dbi(), &key)
                .map_err(self.read_err(ACCOUNTS))?;
            match value {
                None => Ok((None, 0)),
                Some(v) => decode_account(&v)
                    .map(|a| (Some(a), v.len()))
                    .map_err(|what| self.bad_value(ACCOUNTS, what)),
            }
        })
    }

    /// The slot's value; zero where nothing is stored, as in a node: a slot the dump
    /// records as zero, a slot of an absent account and a slot the dump does not list at
    /// all read alike.
    pub fn storage(
        &self,
        segment: usize,
        address: Address,
        slot: U256,
    ) -> Result<U256, StoreError> {
        let key = state_key(&address, self.segment(segment)?);
        let slot = slot.to_be_bytes::<32>();
        self.meter.measure(ReadKind::Slot, || {
            let mut cursor = self
                .txn
                .cursor(self.tables.storage)
                .map_err(|e| self.read_err(STORAGE)(ReadError::Mdbx(e)))?;
            let entry: Option<Cow<'_, [u8]>> = cursor
                .get_both_range(&key, &slot)
                .map_err(self.read_err(STORAGE))?;
            match entry {
                None => Ok((U256::ZERO, 0)),
                Some(entry) => decode_slot(&slot, &entry)
                    .map(|v| (v.unwrap_or(U256::ZERO), entry.len()))
                    .map_err(|what| self.bad_value(STORAGE, what)),
            }
        })
    }

    /// The bytecode of `code_hash`, `None` if the store does not hold it. The empty code's
    /// hash gives empty bytes without a read (and is not counted).
    pub fn code(&self, code_hash: B256) -> Result<Option<Bytes>, StoreError> {
        if code_hash == KECCAK256_EMPTY {
            return Ok(Some(Bytes::new()));
        }
        self.meter.measure(ReadKind::Code, || {
            let value: Option<Cow<'_, [u8]>> = self
                .txn
                .get(self.tables.codes.dbi(), code_hash.as_slice())
                .map_err(self.read_err(BYTECODES))?;
            Ok(match value {
                None => (None, 0),
                Some(v) => (Some(Bytes::copy_from_slice(&v)), v.len()),
            })
        })
    }

    /// The hash of block `number` before the segment's first block, `None` if the dump
    /// does not hold it.
    pub fn block_hash(&self, segment: usize, number: u64) -> Result<Option<B256>, StoreError> {
        let key = block_hash_key(self.segment(segment)?, number);
        self.meter.measure(ReadKind::BlockHash, || {
            let value: Option<Cow<'_, [u8]>> = self
                .txn
                .get(self.tables.hashes.dbi(), &key)
                .map_err(self.read_err(BLOCK_HASHES))?;
            match value {
                None => Ok((None, 0)),
                Some(v) if v.len() == 32 => Ok((Some(B256::from_slice(&v)), 32)),
                Some(v) => {
                    Err(self.bad_value(BLOCK_HASHES, ValueError::BlockHash { len: v.len() }))
                }
            }
        })
    }

    /// The reader's counters and latencies.
    pub fn meter(&self) -> &ReadMeter {
        &self.meter
    }
}

/// What a read was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReadKind {
    /// [`StoreReader::account`].
    Account,
    /// [`StoreReader::storage`].
    Slot,
    /// [`StoreReader::code`].
    Code,
    /// [`StoreReader::block_hash`].
    BlockHash,
}

/// How much of each read a [`ReadMeter`] times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Timing {
    /// Count reads and bytes only.
    #[default]
    Off,
    /// Also sum the time spent in reads ([`ReadStats::read_ns`]): two clock reads per read.
    Total,
    /// Also keep every read's latency ([`ReadMeter::take_latencies`]).
    PerRead,
}

/// Counts of one reader's reads since it was made or last [reset](ReadMeter::reset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Account reads (found or not).
    pub accounts: u64,
    /// Storage reads.
    pub slots: u64,
    /// Bytecode reads.
    pub codes: u64,
    /// Block-hash reads.
    pub block_hashes: u64,
    /// Bytes of the values read (encoded, as stored).
    pub bytes: u64,
    /// Nanoseconds spent in reads, with [`Timing::Total`] or [`Timing::PerRead`].
    pub read_ns: u64,
}

impl ReadStats {
    /// All reads.
    pub fn reads(&self) -> u64 {
        self.accounts + self.slots + self.codes + self.block_hashes
    }

    /// The sum of two counts (e.g. of several threads' readers).
    pub fn merged(self, other: Self) -> Self {
        Self {
            accounts: self.accounts + other.accounts,
            slots: self.slots + other.slots,
            codes: self.codes + other.codes,
            block_hashes: self.block_hashes + other.block_hashes,
            bytes: self.bytes + other.bytes,
            read_ns: self.read_ns + other.read_ns,
        }
    }
}

/// Counters (and, if asked, latencies) of one reader: engine-neutral, so that a second
/// engine's reader would count alike. Single-threaded (`Cell`s), like its reader.
#[derive(Debug, Default)]
pub struct ReadMeter {
    stats: Cell<ReadStats>,
    timing: Cell<Timing>,
    latencies: RefCell<Vec<u64>>,
}

impl ReadMeter {
    /// Time the reads from now on as `timing` says.
    pub fn set_timing(&self, timing: Timing) {
        self.timing.set(timing);
    }

    /// The current timing.
    pub fn timing(&self) -> Timing {
        self.timing.get()
    }

    /// The counts so far.
    pub fn stats(&self) -> ReadStats {
        self.stats.get()
    }

    /// Zero the counts and drop the latencies kept (e.g. between passes).
    pub fn reset(&self) {
        self.stats.set(ReadStats::default());
        self.latencies.borrow_mut().clear();
    }

    /// The latencies kept with [`Timing::PerRead`] since the last take or reset, in
    /// nanoseconds, in the order of the reads.
    pub fn take_latencies(&self) -> Vec<u64> {
        std::mem::take(&mut *self.latencies.borrow_mut())
    }

    /// Run one read of `kind` (returning its value and the bytes it read), counting and
    /// timing it. For the readers of every engine.
    pub fn measure<T>(
        &self,
        kind: ReadKind,
        read: impl FnOnce() -> Result<(T, usize), StoreError>,
    ) -> Result<T, StoreError> {
        let timing = self.timing.get();
        let start = (timing != Timing::Off).then(Instant::now);
        let (value, bytes) = read()?;
        let mut stats = self.stats.get();
        if let Some(start) = start {
            let ns = start.elapsed().as_nanos() as u64;
            stats.read_ns += ns;
            if timing == Timing::PerRead {
                self.latencies.borrow_mut().push(ns);
            }
        }
        match kind {
            ReadKind::Account => stats.accounts += 1,
            ReadKind::Slot => stats.slots += 1,
            ReadKind::Code => stats.codes += 1,
            ReadKind::BlockHash => stats.block_hashes += 1,
        }
        stats.bytes += bytes as u64;
        self.stats.set(stats);
        Ok(value)
    }
}

/// The `q`-quantile (0..=1) of `values`, sorting them; 0 for none. Nearest rank.
pub fn quantile(values: &mut [u64], q: f64) -> u64 {
    if values.is_empty() {
        return 0;
    }
    values.sort_unstable();
    let rank = (q.clamp(0.0, 1.0) * (values.len() - 1) as f64).round() as usize;
    values[rank]
}
