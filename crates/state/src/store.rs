//! Opening a store and reading it: [`open_store`], [`Store`], [`StoreReader`] with its
//! [`ReadMeter`].

use crate::{
    StoreError, StoreMeta,
    layout::{
        ACCOUNTS, BLOCK_HASHES, BYTECODES, DIRTY, META, STORAGE, StoreKey, TRIE_NODES, TrieNodeKey,
        ValueError, block_hash_key, decode_account, decode_code, decode_slot, state_key,
    },
    tables::{Entry, Tables},
};
use alloy_primitives::{Address, B256, Bytes, KECCAK256_EMPTY, U256};
use gigagas_dump::AccountState;
use revm_bytecode::Bytecode;
use signet_libmdbx::{
    Cursor, Database, DatabaseFlags, Environment, EnvironmentFlags, MdbxError, Mode, ReadError, Ro,
    Stat, SyncMode, tx::aliases::RoTxUnsync,
};
use std::{
    borrow::Cow,
    cell::{Cell, RefCell},
    fmt, fs,
    io::ErrorKind,
    mem::ManuallyDrop,
    path::{Path, PathBuf},
    ptr::NonNull,
    sync::Arc,
    time::Instant,
};

/// How each commit of a written block reaches the disk: MDBX's `Durable`, an `fdatasync` of
/// the data file at every commit (reth's default for its database). A block's persistence
/// time includes it.
pub const PERSIST_SYNC: SyncMode = SyncMode::Durable;

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

/// An open store (MDBX environment, read-only). Cheap to share across threads
/// (`Send + Sync`); [`Store::reader`] gives each thread its own reader.
///
/// Drop the store and all its readers before [`crate::evict`]: pages mapped by an open
/// environment stay in the page cache.
pub struct Store {
    pub(crate) env: Environment,
    pub(crate) path: Arc<PathBuf>,
    meta: StoreMeta,
    pub(crate) tables: Tables,
    /// Opened read-write ([`open_store_writable`]): a [`crate::StoreWriter`] may write.
    pub(crate) writable: bool,
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
    of_dump(Store::open(dir)?, dir, expected_dump_checksum)
}

/// [`open_store`], read-write, for a pass that writes its blocks into the store
/// ([`crate::StoreWriter`]) and takes them back after it. A store whose data file or folder
/// has no write permission (a user's mark that it stays as built, honoured even for root),
/// or that cannot be opened for writing (a read-only file system), is refused in one line
/// ([`StoreError::ReadOnly`]).
pub fn open_store_writable(dir: &Path, expected_dump_checksum: u64) -> Result<Store, StoreError> {
    of_dump(Store::open_mode(dir, true)?, dir, expected_dump_checksum)
}

/// Refuses a store the user marked read-only (no write permission on its data file or
/// folder: honoured even by root, who could write anyway) before it is opened read-write.
pub(crate) fn check_writable(dir: &Path, data: &Path) -> Result<(), StoreError> {
    for path in [dir, data] {
        let meta = fs::metadata(path).map_err(|e| StoreError::io("stat", path, e))?;
        if meta.permissions().readonly() {
            return Err(StoreError::ReadOnly {
                path: dir.to_path_buf(),
                reason: format!("{} has no write permission", path.display()),
            });
        }
    }
    Ok(())
}

/// `store`, opened from `dir`, if it was built from the dump of `expected_dump_checksum`.
fn of_dump(store: Store, dir: &Path, expected_dump_checksum: u64) -> Result<Store, StoreError> {
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
        Self::open_mode(dir, false)
    }

    /// [`Self::open`], read-write with `writable` (commits synced as
    /// [`crate::PERSIST_SYNC`] says).
    fn open_mode(dir: &Path, writable: bool) -> Result<Self, StoreError> {
        let data_len = data_file_len(dir, writable)?;
        let env = open_env(dir, writable)?;
        let open_err = StoreError::open(dir);
        // MDBX maps the file: a page past its end would fault (SIGBUS) on first touch.
        let page = env.stat().map_err(&open_err)?.page_size();
        let used = (env.info().map_err(&open_err)?.last_pgno() as u64 + 1) * u64::from(page);
        if data_len < used {
            return Err(StoreError::Truncated {
                path: dir.to_path_buf(),
                actual: data_len,
                expected: used,
            });
        }
        let (meta, tables) = open_tables(&env, dir)?;
        Ok(Self {
            env,
            path: Arc::new(dir.to_path_buf()),
            meta,
            tables,
            writable,
        })
    }

    /// A reader owning one read transaction and one cursor per table. Use it from one
    /// thread at a time (it is `Send`, not `Sync`); open one per thread to read in
    /// parallel.
    pub fn reader(&self) -> Result<StoreReader, StoreError> {
        let txn = self
            .env
            .begin_ro_unsync()
            .map_err(StoreError::open(&self.path))?;
        StoreReader::new(txn, &self.tables, self.meta.segments, self.path.clone())
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

    /// A digest of every entry of every table, the meta table's included, in key order:
    /// two stores (or one store at two times) with equal digests hold the same entries.
    /// Reads the whole store: for tests and checks, not for a timed pass.
    pub fn content_digest(&self) -> Result<u64, StoreError> {
        use std::hash::{DefaultHasher, Hasher};
        let reader = self.reader()?;
        let txn = reader.txn();
        let meta = txn
            .open_db(Some(META))
            .map_err(StoreError::open(&self.path))?;
        let mut hasher = DefaultHasher::new();
        for (name, db) in self.tables.named().into_iter().chain([(META, meta)]) {
            let err = read_err(&self.path, name);
            let mut cursor = txn.cursor(db).map_err(|e| err(ReadError::Mdbx(e)))?;
            hasher.write(name.as_bytes());
            let mut entry: Entry<'_> = cursor.first().map_err(&err)?;
            while let Some((key, value)) = entry {
                hasher.write_usize(key.len());
                hasher.write(&key);
                hasher.write_usize(value.len());
                hasher.write(&value);
                entry = cursor.next().map_err(&err)?;
            }
        }
        Ok(hasher.finish())
    }

    /// Entries, depth and pages of the accounts, storage, bytecode and block-hash tables.
    pub fn table_stats(&self) -> Result<Vec<TableStats>, StoreError> {
        let reader = self.reader()?;
        let stat = |(name, db): (&'static str, Database)| {
            reader
                .txn()
                .db_stat(&db)
                .map(|s| TableStats::new(name, s))
                .map_err(read_err(&self.path, name))
        };
        self.tables.named().into_iter().map(stat).collect()
    }
}

/// The length of the data file of the store in `dir`, once `dir` is a folder with one of
/// at least MDBX's three meta pages (it reports a shorter file obscurely) and, with
/// `writable`, one that may be written ([`check_writable`]).
fn data_file_len(dir: &Path, writable: bool) -> Result<u64, StoreError> {
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
    if writable {
        check_writable(dir, &data)?;
    }
    if data_len < 3 * crate::PAGE_SIZE as u64 {
        return Err(StoreError::corrupt(
            dir,
            format!("its {DATA_FILE} has only {data_len} bytes"),
        ));
    }
    Ok(data_len)
}

/// The MDBX environment in `dir`, read-only or, with `writable`, read-write (commits synced
/// as [`PERSIST_SYNC`] says); opened like reth opens its database for reads: no readahead.
fn open_env(dir: &Path, writable: bool) -> Result<Environment, StoreError> {
    let mode = if writable {
        Mode::ReadWrite {
            sync_mode: PERSIST_SYNC,
        }
    } else {
        Mode::ReadOnly
    };
    Environment::builder()
        .set_flags(EnvironmentFlags {
            mode,
            no_rdahead: true,
            ..Default::default()
        })
        .set_max_dbs(8)
        .set_max_readers(1024)
        .open(dir)
        .map_err(|source| match writable {
            true => StoreError::ReadOnly {
                path: dir.to_path_buf(),
                reason: format!("it cannot be opened for writing ({source})"),
            },
            false => StoreError::open(dir)(source),
        })
}

/// The store's meta (refused while a `--persist` pass left it dirty) and its state tables,
/// each present with its flags, from `env` opened on `dir`.
fn open_tables(env: &Environment, dir: &Path) -> Result<(StoreMeta, Tables), StoreError> {
    let txn = env.begin_ro_unsync().map_err(StoreError::open(dir))?;
    let table = |name: &'static str| -> Result<Database, StoreError> {
        txn.open_db(Some(name)).map_err(|e| match e {
            MdbxError::NotFound => StoreError::corrupt(dir, format!("it has no table {name}")),
            source => StoreError::open(dir)(source),
        })
    };
    let meta_db = table(META)?;
    let meta_get = |key: &str| {
        txn.get::<Vec<u8>>(meta_db.dbi(), key.as_bytes())
            .map_err(read_err(dir, META))
    };
    let meta = StoreMeta::decode(dir, meta_get)?;
    if meta_get(DIRTY)?.is_some() {
        return Err(StoreError::Dirty {
            path: dir.to_path_buf(),
        });
    }
    let tables = Tables::each(|name, flags| {
        let db = table(name)?;
        if flags.contains(DatabaseFlags::DUP_SORT) && !db.flags().contains(DatabaseFlags::DUP_SORT)
        {
            return Err(StoreError::corrupt(
                dir,
                format!("table {name} is not dup-sorted"),
            ));
        }
        Ok(db)
    })?;
    Ok((meta, tables))
}

/// One thread's reads from a [`Store`]: an MDBX read transaction (a consistent snapshot)
/// with one cursor per table, opened with it and reused by every read, and its counters,
/// like revm's `DatabaseRef`. `Send`, not `Sync`; reads take `&mut self`.
///
/// `segment` is the index of a dump segment (`0..meta().segments`); each segment sees
/// only its own pre-state. Every read is counted (and timed, if asked) by the reader's
/// [`ReadMeter`]. A pass reads it through the executor's `StateSource`, which the bench
/// crate implements for it (`gigagas-bench`'s `io`).
pub struct StoreReader {
    /// Declared (so dropped) before `txn`, which they borrow.
    cursors: ManuallyDrop<Cursors<'static>>,
    /// The transaction, on the heap so that the cursors' borrow of it survives moving the
    /// reader; freed in `Drop` after the cursors.
    txn: NonNull<RoTxUnsync>,
    segments: u32,
    path: Arc<PathBuf>,
    meter: ReadMeter,
}

/// A reader's cursors, one per table.
struct Cursors<'tx> {
    accounts: Cursor<'tx, Ro>,
    storage: Cursor<'tx, Ro>,
    codes: Cursor<'tx, Ro>,
    hashes: Cursor<'tx, Ro>,
    trie_nodes: Cursor<'tx, Ro>,
}

// SAFETY: the transaction (`RoTxUnsync: Send`) and its cursors (`Cursor: Send`) move
// together and are only ever used through `&mut self` or `&self` of one reader, which is
// not `Sync` (its meter's `Cell`s): no two threads touch them at once. MDBX's read
// transactions may move between threads (the environment is opened with
// `MDBX_NOSTICKYTHREADS`).
unsafe impl Send for StoreReader {}

impl Drop for StoreReader {
    fn drop(&mut self) {
        // SAFETY: the cursors borrow `*self.txn`: they go first (returning their MDBX
        // cursors to the transaction's cache, which closes them), then the transaction,
        // made by `Box::into_raw` in `Store::reader` and freed only here.
        unsafe {
            ManuallyDrop::drop(&mut self.cursors);
            drop(Box::from_raw(self.txn.as_ptr()));
        }
    }
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
    /// A reader over `txn`, opening its cursors.
    fn new(
        txn: RoTxUnsync,
        tables: &Tables,
        segments: u32,
        path: Arc<PathBuf>,
    ) -> Result<Self, StoreError> {
        let txn = NonNull::from(Box::leak(Box::new(txn)));
        // SAFETY: `txn` lives on the heap until `Drop` frees it, after the cursors; the
        // `'static` never escapes: reads reach the cursors through `Self::cursors`, which
        // shortens it to the borrow of `self`.
        let tx: &'static RoTxUnsync = unsafe { txn.as_ref() };
        let open =
            |db: Database, table: &'static str| tx.cursor(db).map_err(read_err(&path, table));
        let cursors = (|| {
            Ok(Cursors {
                accounts: open(tables.accounts, ACCOUNTS)?,
                storage: open(tables.storage, STORAGE)?,
                codes: open(tables.codes, BYTECODES)?,
                hashes: open(tables.hashes, BLOCK_HASHES)?,
                trie_nodes: open(tables.trie_nodes, TRIE_NODES)?,
            })
        })();
        match cursors {
            Ok(cursors) => Ok(Self {
                cursors: ManuallyDrop::new(cursors),
                txn,
                segments,
                path,
                meter: ReadMeter::default(),
            }),
            Err(e) => {
                // SAFETY: the cursors opened before the failure were dropped inside the
                // closure; nothing borrows the transaction any more.
                drop(unsafe { Box::from_raw(txn.as_ptr()) });
                Err(e)
            }
        }
    }

    /// The transaction, for the few calls that are not cursor reads.
    fn txn(&self) -> &RoTxUnsync {
        // SAFETY: valid from `new` until `Drop`.
        unsafe { self.txn.as_ref() }
    }

    /// The cursors, the meter and the path, with the cursors' borrow of the transaction
    /// shortened to that of `self` (values they return cannot outlive the next read on
    /// `self`). No shared counter is touched: readers on other threads never contend here.
    fn parts(&mut self) -> (&mut Cursors<'_>, &ReadMeter, &Path) {
        // SAFETY: `Cursors<'static>` and `Cursors<'a>` have one layout; the transaction
        // outlives `'a` (it lives as long as `self`), and nothing shorter-lived can be
        // written through the result, which only reads with the cursors.
        let cursors = unsafe {
            std::mem::transmute::<&mut Cursors<'static>, &mut Cursors<'_>>(&mut *self.cursors)
        };
        (cursors, &self.meter, &self.path)
    }

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
}

/// The value stored under `key` (the bytes of `store_key`), decoded by `decode` (`None`
/// where nothing is), with its size for the meter; a failed read is the store's
/// [`StoreError::ReadKey`], a value that does not decode its [`StoreError::BadValue`].
fn read_value<T>(
    cursor: &mut Cursor<'_, Ro>,
    key: &[u8],
    path: &Path,
    store_key: impl Fn() -> StoreKey,
    decode: impl FnOnce(&[u8]) -> Result<T, ValueError>,
) -> Result<(Option<T>, usize), StoreError> {
    let value: Option<Cow<'_, [u8]>> = cursor.set(key).map_err(key_err(path, &store_key))?;
    match value {
        None => Ok((None, 0)),
        Some(v) => decode(&v)
            .map(|decoded| (Some(decoded), v.len()))
            .map_err(|what| bad_value(path, store_key(), what)),
    }
}

/// A failed read of `table` in the store at `path`.
fn read_err<'a, E: Into<ReadError>>(
    path: &'a Path,
    table: &'static str,
) -> impl Fn(E) -> StoreError + 'a {
    move |source| StoreError::Read {
        path: path.to_path_buf(),
        table,
        source: source.into(),
    }
}

/// A failed read of the key `store_key` gives, in the store at `path`.
fn key_err<'a>(
    path: &'a Path,
    store_key: &'a impl Fn() -> StoreKey,
) -> impl Fn(ReadError) -> StoreError + 'a {
    move |source| StoreError::ReadKey {
        path: path.to_path_buf(),
        key: store_key(),
        source,
    }
}

/// A value of `key` in the store at `path` that does not decode.
fn bad_value(path: &Path, key: StoreKey, what: ValueError) -> StoreError {
    StoreError::BadValue {
        path: path.to_path_buf(),
        key,
        what,
    }
}

impl StoreReader {
    /// The account, `None` if it does not exist (the dump records it absent). An existing
    /// empty account reads as `Some` with zero nonce and balance and the empty code hash.
    pub fn account(
        &mut self,
        segment: usize,
        address: Address,
    ) -> Result<Option<AccountState>, StoreError> {
        let key = state_key(&address, self.segment(segment)?);
        let (cursors, meter, path) = self.parts();
        let store_key = || StoreKey::Account { segment, address };
        meter.measure(ReadKind::Account, || {
            read_value(&mut cursors.accounts, &key, path, store_key, decode_account)
        })
    }

    /// The slot's value; zero where nothing is stored, as in a node: a slot the dump
    /// records as zero, a slot of an absent account and a slot the dump does not list at
    /// all read alike.
    pub fn storage(
        &mut self,
        segment: usize,
        address: Address,
        slot: U256,
    ) -> Result<U256, StoreError> {
        let key = state_key(&address, self.segment(segment)?);
        let store_key = || StoreKey::Slot {
            segment,
            address,
            slot,
        };
        let slot = slot.to_be_bytes::<32>();
        let (cursors, meter, path) = self.parts();
        meter.measure(ReadKind::Slot, || {
            let entry: Option<Cow<'_, [u8]>> = cursors
                .storage
                .get_both_range(&key, &slot)
                .map_err(key_err(path, &store_key))?;
            match entry {
                None => Ok((U256::ZERO, 0)),
                Some(entry) => decode_slot(&slot, &entry)
                    .map(|v| (v.unwrap_or(U256::ZERO), entry.len()))
                    .map_err(|what| bad_value(path, store_key(), what)),
            }
        })
    }

    /// The bytecode of `code_hash`, analysed and ready to run, `None` if the store does not
    /// hold it. The jump table is read with the code (the store keeps it), so no read
    /// analyses code. The empty code's hash gives the empty code without a read (and is
    /// not counted).
    pub fn code(&mut self, code_hash: B256) -> Result<Option<Bytecode>, StoreError> {
        if code_hash == KECCAK256_EMPTY {
            return Ok(Some(Bytecode::new()));
        }
        let (cursors, meter, path) = self.parts();
        meter.measure(ReadKind::Code, || {
            read_value(
                &mut cursors.codes,
                code_hash.as_slice(),
                path,
                || StoreKey::Code(code_hash),
                decode_code,
            )
        })
    }

    /// The witness trie node of segment `segment` at `path` (nibbles, one per byte) of the
    /// account trie (`owner` `None`) or of the storage trie of the account whose hashed
    /// address is `owner`; `None` if the store holds no node there (the segment has no
    /// witness, or its witness has no node at that path).
    pub fn trie_node(
        &mut self,
        segment: usize,
        owner: Option<&B256>,
        path: &[u8],
    ) -> Result<Option<Bytes>, StoreError> {
        let index = self.segment(segment)?;
        let (cursors, meter, store_path) = self.parts();
        let Some(key) = TrieNodeKey::new(index, owner, path) else {
            return Ok(None);
        };
        let store_key = || StoreKey::TrieNode {
            segment,
            owner: owner.copied(),
            path: path.to_vec(),
        };
        meter.measure(ReadKind::TrieNode, || {
            read_value(
                &mut cursors.trie_nodes,
                key.as_slice(),
                store_path,
                store_key,
                |v| Ok(Bytes::copy_from_slice(v)),
            )
        })
    }

    /// Reads ahead the witness trie nodes of segment `segment` that lie on the path to
    /// `key` (a full key, 64 nibbles one per byte) of the account trie (`owner` `None`) or
    /// of the storage trie whose hashed address is `owner`, keeping none: what the state
    /// root will read there ([`Self::trie_node`]) is then in memory. Returns how many nodes
    /// it met.
    ///
    /// No node is decoded: the walk seeks the key's prefixes, shortest first. Where a node
    /// lies at the prefix, it is on the path; where the first key at or after the prefix
    /// lies below it and off the path, no node lies on the path until the two part (an
    /// extension's span), so the walk goes on past that point; where nothing lies below
    /// the prefix, the path ends. A path `d` nodes deep takes about `d` seeks, each on the
    /// pages the root's read of that node walks. Not counted by the reader's meter (the
    /// reads are timed as a batch's read, by whoever reads ahead).
    pub fn read_ahead_trie_path(
        &mut self,
        segment: usize,
        owner: Option<&B256>,
        key: &[u8],
    ) -> Result<u32, StoreError> {
        let index = self.segment(segment)?;
        let (cursors, _, store_path) = self.parts();
        let Some(full) = TrieNodeKey::new(index, owner, key) else {
            return Ok(0);
        };
        let full = full.as_slice();
        let trie = full.len() - key.len();
        let (mut depth, mut met) = (0, 0);
        while depth <= key.len() {
            let prefix = &full[..trie + depth];
            let store_key = || StoreKey::TrieNode {
                segment,
                owner: owner.copied(),
                path: key[..depth].to_vec(),
            };
            let at: Entry<'_> = cursors
                .trie_nodes
                .set_range(prefix)
                .map_err(key_err(store_path, &store_key))?;
            let Some((found, node)) = at else { break };
            if !found.starts_with(prefix) {
                break;
            }
            // The value's bytes are read so that its page is in memory.
            std::hint::black_box(node.last());
            let found = &found[trie..];
            let shared = found.iter().zip(key).take_while(|(a, b)| a == b).count();
            if shared == found.len() {
                met += 1;
            }
            depth = shared + 1;
        }
        Ok(met)
    }

    /// The hash of block `number` before the segment's first block, `None` if the dump
    /// does not hold it.
    pub fn block_hash(&mut self, segment: usize, number: u64) -> Result<Option<B256>, StoreError> {
        let key = block_hash_key(self.segment(segment)?, number);
        let (cursors, meter, path) = self.parts();
        let store_key = || StoreKey::BlockHash { segment, number };
        meter.measure(ReadKind::BlockHash, || {
            read_value(&mut cursors.hashes, &key, path, store_key, |v| {
                B256::try_from(v).map_err(|_| ValueError::BlockHash { len: v.len() })
            })
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
    /// [`StoreReader::trie_node`].
    TrieNode,
}

/// Under [`Timing::Sampled`], one read in this many (on average) is timed.
pub const SAMPLE_EVERY: u32 = 64;

/// How many of a [`ReadMeter`]'s reads it times. Every read is counted whatever the
/// timing; only the clock reads (two per timed read) differ.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Timing {
    /// Count reads and bytes only: no clock read.
    #[default]
    Off,
    /// Time a sample: one read in [`SAMPLE_EVERY`] on average, the gaps between timed reads
    /// drawn at random (uniform in `1..2 × SAMPLE_EVERY`, so no access pattern aliases
    /// with them), and the first read after [`ReadMeter::reset`] always timed.
    /// [`ReadStats::read_ns`] scales the sampled time to all reads; the latencies kept
    /// ([`ReadMeter::take_latencies`]) are the sampled reads', so their percentiles
    /// estimate all reads'. What a pass uses: a warm lookup costs about a microsecond, and
    /// two clock reads on each would be a measurable share of it.
    Sampled,
    /// Time every read (two clock reads each): [`ReadStats::read_ns`] is the exact sum
    /// and every read's latency is kept.
    Every,
}

/// Counts of one reader's reads since it was made or last [reset](ReadMeter::reset).
/// The counts are exact whatever the [`Timing`]; the time is that of the reads timed.
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
    /// Witness trie-node reads (the state-root phase's).
    pub trie_nodes: u64,
    /// Bytes of the values read (encoded, as stored).
    pub bytes: u64,
    /// Reads that were timed: all with [`Timing::Every`], a sample with
    /// [`Timing::Sampled`], none with [`Timing::Off`].
    pub timed_reads: u64,
    /// Nanoseconds spent in the timed reads.
    pub timed_ns: u64,
}

impl ReadStats {
    /// All reads.
    pub fn reads(&self) -> u64 {
        self.accounts + self.slots + self.codes + self.block_hashes + self.trie_nodes
    }

    /// Nanoseconds spent in all reads: exact when every read was timed, else the timed
    /// reads' time scaled by reads ÷ timed reads (an estimate from the sample); 0 when no
    /// read was timed.
    pub fn read_ns(&self) -> u64 {
        let reads = self.reads();
        if self.timed_reads == 0 {
            0
        } else if self.timed_reads >= reads {
            self.timed_ns
        } else {
            (self.timed_ns as u128 * reads as u128 / self.timed_reads as u128) as u64
        }
    }

    /// The sum of two counts (e.g. of several threads' readers).
    pub fn merged(self, other: Self) -> Self {
        Self {
            accounts: self.accounts + other.accounts,
            slots: self.slots + other.slots,
            codes: self.codes + other.codes,
            block_hashes: self.block_hashes + other.block_hashes,
            trie_nodes: self.trie_nodes + other.trie_nodes,
            bytes: self.bytes + other.bytes,
            timed_reads: self.timed_reads + other.timed_reads,
            timed_ns: self.timed_ns + other.timed_ns,
        }
    }
}

/// Counters (and, if asked, latencies) of one reader: engine-neutral, so that a second
/// engine's reader would count alike. Single-threaded (`Cell`s), like its reader, so
/// counting a read is a few adds on the reader's own cache lines.
#[derive(Debug)]
pub struct ReadMeter {
    stats: Cell<ReadStats>,
    timing: Cell<Timing>,
    latencies: RefCell<Vec<u64>>,
    /// Reads left before the next timed one ([`Timing::Sampled`]).
    until_sample: Cell<u32>,
    /// The state of the xorshift generator that draws the gaps.
    rng: Cell<u64>,
}

impl Default for ReadMeter {
    fn default() -> Self {
        Self {
            stats: Cell::default(),
            timing: Cell::default(),
            latencies: RefCell::default(),
            until_sample: Cell::new(0),
            rng: Cell::new(0x9e37_79b9_7f4a_7c15),
        }
    }
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

    /// Zero the counts and drop the latencies kept (e.g. between passes); under
    /// [`Timing::Sampled`] the next read is timed.
    pub fn reset(&self) {
        self.stats.set(ReadStats::default());
        self.latencies.borrow_mut().clear();
        self.until_sample.set(0);
    }

    /// The latencies of the reads timed since the last take or reset (every read with
    /// [`Timing::Every`], the sample with [`Timing::Sampled`]), in nanoseconds, in the
    /// order of the reads.
    pub fn take_latencies(&self) -> Vec<u64> {
        std::mem::take(&mut *self.latencies.borrow_mut())
    }

    /// Whether the next read is timed; under [`Timing::Sampled`], counts it down.
    #[inline]
    fn time_next(&self) -> bool {
        match self.timing.get() {
            Timing::Off => false,
            Timing::Every => true,
            Timing::Sampled => {
                let left = self.until_sample.get();
                if left > 0 {
                    self.until_sample.set(left - 1);
                    return false;
                }
                // xorshift64: the gap to the next timed read, uniform in 1..2 × SAMPLE_EVERY.
                let mut x = self.rng.get();
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                self.rng.set(x);
                self.until_sample
                    .set((x % (2 * u64::from(SAMPLE_EVERY) - 1)) as u32);
                true
            }
        }
    }

    /// Run one read of `kind` (returning its value and the bytes it read), counting it
    /// and, if [`Timing`] says so, timing it. For the readers of every engine. A read that
    /// fails is neither counted nor timed.
    #[inline]
    pub fn measure<T>(
        &self,
        kind: ReadKind,
        read: impl FnOnce() -> Result<(T, usize), StoreError>,
    ) -> Result<T, StoreError> {
        let start = self.time_next().then(Instant::now);
        let (value, bytes) = read()?;
        let mut stats = self.stats.get();
        if let Some(start) = start {
            let ns = start.elapsed().as_nanos() as u64;
            stats.timed_reads += 1;
            stats.timed_ns += ns;
            self.latencies.borrow_mut().push(ns);
        }
        match kind {
            ReadKind::Account => stats.accounts += 1,
            ReadKind::Slot => stats.slots += 1,
            ReadKind::Code => stats.codes += 1,
            ReadKind::BlockHash => stats.block_hashes += 1,
            ReadKind::TrieNode => stats.trie_nodes += 1,
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
