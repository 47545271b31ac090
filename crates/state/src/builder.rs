//! [`build_store`]: write a dump's pre-state into a new store, optionally padded.

use crate::{
    StoreError, StoreMeta,
    layout::{
        ACCOUNTS, BLOCK_HASHES, BYTECODES, FORMAT_VERSION, META, PAD_SEGMENT, STATE_KEY_LEN,
        STORAGE, TRIE_NODES, TrieNodeKey, block_hash_key, encode_account, encode_code, encode_slot,
        mix, state_key,
    },
    store::{DATA_FILE, LOCK_FILE, TableStats},
    tables::Tables,
    virtual_nodes::{Plan, VirtualTries},
};
use alloy_primitives::{Address, B256, Bytes, U256};
use gigagas_dump::{AccountState, Dump, DumpFileInfo, PreSlot};
use gigagas_trie::{PathNode, nodes_by_path};
use signet_libmdbx::{
    Database, DatabaseFlags, Environment, EnvironmentFlags, Geometry, Mode, SyncMode, WriteFlags,
    sys::{EnvironmentKind, PageSize},
};
use std::{
    collections::BTreeMap,
    fs,
    io::ErrorKind,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

/// Today's Ethereum mainnet flat state, for scale: about 126 GB of keys and values.
///
/// go-ethereum's state-size metrics at block 23,872,855 (November 2025, go-ethereum pull
/// request 33254) count 328 million accounts (16.2 GB) and 1.42 billion storage slots
/// (109.7 GB) in its flat snapshot, plus 12.2 GB of contract code counted per account. reth
/// keeps the same entries in `PlainAccountState` and `PlainStorageState`: `reth db stats`
/// at block 18.5 M (November 2023, reth pull request 5355) showed 225 million accounts
/// (17 GiB) and 1.07 billion slots (80.4 GiB) in its hashed twins of those tables and
/// 9.9 GiB of `Bytecodes`. So a node's plain state is some 100–130 GiB today, and a store
/// padded to that size has a node's tree depth; padding to a size well above the
/// machine's RAM is what makes cold reads miss like a node's.
pub const MAINNET_PLAIN_STATE_BYTES: u64 = 126_000_000_000;

/// Page size of a store: 4 KiB, the OS page and what a random read of the device probe
/// reads (reth uses the OS page size too).
pub const PAGE_SIZE: usize = 4096;

/// What [`build_store`] writes besides the dump's pre-state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// Pad the store with synthetic accounts and storage slots, and the padded tries'
    /// virtual nodes a client's tries hold for them (a dump whose witness pads its tries,
    /// `gigagas generate --state-size`), until its used pages take at least this many bytes,
    /// the nodes included (`None`: no padding).
    ///
    /// Without padding a store holds only what the dump's blocks read (a few tens of MB),
    /// which readahead pulls into the page cache whole: cold reads would mean nothing.
    /// Padded, the tables' depth and the share of reads that miss the cache are those of
    /// a node's database. For scale, mainnet's flat state is some 100–130 GiB
    /// ([`MAINNET_PLAIN_STATE_BYTES`]: 328 M accounts and 1.42 B slots in late 2025);
    /// pad to well above the machine's RAM for cold runs that miss like a node's.
    ///
    /// Padding adds accounts with addresses spread evenly over the whole address space
    /// (each a deterministic pseudo-random point in its own stride), one in four of them
    /// a contract with 1–64 slots (4.5 slots per account on average; mainnet has 4.3),
    /// all in segment [`crate::PAD_SEGMENT`], so the dump's accounts lie scattered among
    /// them as in a node and no padded entry can answer a read of a dump segment. The
    /// same options build the same store.
    pub pad_to: Option<u64>,
}

/// The stage a build is in, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildStage {
    /// Writing the dump's pre-state (no padding): `done` and `total` count entries.
    State,
    /// Writing the pre-state among the padding: `done` and `total` are bytes of used
    /// pages against [`BuildOptions::pad_to`].
    Padding,
    /// Flushing the store to disk and moving it into place (`done == total` when done).
    Sync,
}

/// Progress of a build, given to [`build_store`]'s callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildProgress {
    /// What is being done.
    pub stage: BuildStage,
    /// How much of it is done.
    pub done: u64,
    /// How much there is in all.
    pub total: u64,
}

/// What a build wrote, and how long it took.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreSummary {
    /// The store folder.
    pub path: PathBuf,
    /// The meta table written (counts of what the store holds).
    pub meta: StoreMeta,
    /// Size of the data file.
    pub file_bytes: u64,
    /// Bytes of used pages (the data file may be up to one growth step larger).
    pub used_bytes: u64,
    /// Wall time of the whole build, sync and rename included.
    pub elapsed: Duration,
    /// Time of the final sync to disk alone.
    pub sync: Duration,
    /// Entries, depth and pages of the accounts and storage tables.
    pub tables: Vec<TableStats>,
}

/// Write `dump`'s pre-state (every segment's accounts, storage, codes, block hashes and
/// witness trie nodes) into a new store at `out`, recording `info`'s checksum, padded as
/// `options` says.
///
/// The store is complete or absent: it is written to a hidden sibling folder, synced,
/// then renamed to `out`; on failure the sibling is removed. `out` may be missing, an
/// empty folder or an earlier store (replaced); anything else is refused. `progress` is
/// called as the build goes on.
///
/// Writes go through large write transactions of sorted appends in an MDBX environment
/// opened with a writable map and without syncing commits; the data file is synced
/// once at the end.
pub fn build_store(
    dump: &Dump,
    info: &DumpFileInfo,
    out: &Path,
    options: &BuildOptions,
    progress: &mut dyn FnMut(BuildProgress),
) -> Result<StoreSummary, StoreError> {
    let start = Instant::now();
    let max = PAD_SEGMENT;
    if dump.segments.len() >= max as usize {
        return Err(StoreError::TooManySegments {
            segments: dump.segments.len(),
            max: max - 1,
        });
    }
    let replace = check_out(out)?;
    let name = out
        .file_name()
        .ok_or_else(|| StoreError::RefuseOverwrite {
            path: out.to_path_buf(),
            reason: "it has no folder name".into(),
        })?
        .to_string_lossy()
        .into_owned();
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let temp = TempDir::create(parent.join(format!(".{name}.building-{}", std::process::id())))?;

    let Written {
        meta,
        used_bytes,
        tables,
        sync,
    } = write_env(dump, info, &temp.path, options, progress)?;

    // The environment is closed: sync the files and the folder, then move into place.
    let sync_start = Instant::now();
    for file in [DATA_FILE, LOCK_FILE] {
        let path = temp.path.join(file);
        if path.exists() {
            fsync(&path)?;
        }
    }
    fsync(&temp.path)?;
    match replace {
        Replace::Nothing => {}
        Replace::Folder => {
            let old = parent.join(format!(".{name}.replaced-{}", std::process::id()));
            fs::rename(out, &old).map_err(|e| StoreError::io("move aside", out, e))?;
            fs::remove_dir_all(&old).map_err(|e| StoreError::io("remove", &old, e))?;
        }
    }
    fs::rename(&temp.path, out).map_err(|e| StoreError::io("rename into place", out, e))?;
    temp.disarm();
    fsync(&parent)?;
    let sync = sync + sync_start.elapsed();
    progress(BuildProgress {
        stage: BuildStage::Sync,
        done: 1,
        total: 1,
    });
    let file_bytes = fs::metadata(out.join(DATA_FILE))
        .map_err(|e| StoreError::io("stat", out.join(DATA_FILE), e))?
        .len();
    Ok(StoreSummary {
        path: out.to_path_buf(),
        meta,
        file_bytes,
        used_bytes,
        elapsed: start.elapsed(),
        sync,
        tables,
    })
}

/// What is at the output path now.
enum Replace {
    /// Nothing, or an empty folder (which the rename replaces).
    Nothing,
    /// An earlier store, to replace once the new one is complete.
    Folder,
}

/// Refuse an output path that is neither missing, nor an empty folder, nor a store.
fn check_out(out: &Path) -> Result<Replace, StoreError> {
    let refuse = |reason: &str| StoreError::RefuseOverwrite {
        path: out.to_path_buf(),
        reason: reason.into(),
    };
    let meta = match fs::symlink_metadata(out) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Replace::Nothing),
        Err(e) => return Err(StoreError::io("stat", out, e)),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return Err(refuse("it exists and is not a folder"));
    }
    let names = folder_names(out)?;
    if names.is_empty() {
        // The rename into place replaces an empty folder.
        return Ok(Replace::Nothing);
    }
    if looks_like_store(&names) {
        return Ok(Replace::Folder);
    }
    Err(refuse(
        "it is a folder that holds more than a state store's mdbx.dat and mdbx.lck",
    ))
}

fn folder_names(dir: &Path) -> Result<Vec<String>, StoreError> {
    let name = |e: fs::DirEntry| e.file_name().to_string_lossy().into_owned();
    fs::read_dir(dir)
        .and_then(|entries| entries.map(|e| e.map(name)).collect())
        .map_err(|e| StoreError::io("list", dir, e))
}

/// A folder that holds a data file and nothing but MDBX's two files.
fn looks_like_store(names: &[String]) -> bool {
    names.iter().any(|n| n == DATA_FILE) && names.iter().all(|n| n == DATA_FILE || n == LOCK_FILE)
}

/// A folder removed on drop unless disarmed.
struct TempDir {
    path: PathBuf,
    armed: bool,
}

impl TempDir {
    fn create(path: PathBuf) -> Result<Self, StoreError> {
        // A leftover of an interrupted build by a process with the same id.
        if path.is_dir() && looks_like_store(&folder_names(&path)?) {
            fs::remove_dir_all(&path).map_err(|e| StoreError::io("remove stale", &path, e))?;
        }
        fs::create_dir(&path).map_err(|e| StoreError::io("create", &path, e))?;
        Ok(Self { path, armed: true })
    }

    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

fn fsync(path: &Path) -> Result<(), StoreError> {
    fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| StoreError::io("sync", path, e))
}

/// Map an MDBX error while writing `what`.
fn build_err(what: &'static str) -> impl Fn(signet_libmdbx::MdbxError) -> StoreError {
    move |source| StoreError::Build { what, source }
}

/// Bytes of growth between commits while padding (and never more than a sixteenth of the
/// target, so small stores stop close to their size).
const COMMIT_BYTES: u64 = 64 << 20;

/// Bytes of used pages one padded account adds with its storage: 389–408 measured
/// (8 GiB and 512 MiB of padding), a little less here so the first plan errs on more accounts. The
/// build measures it again at every commit and re-plans the rest of the address space.
const PAD_BYTES_PER_ACCOUNT: u64 = 390;

/// Storage slots a padded account has on average (one in four a contract with 1–64 slots,
/// a power of two: 18.1 each).
const PAD_SLOTS_PER_ACCOUNT: f64 = 4.5;

/// What [`write_env`] wrote: the meta table, the size and the tables' stats, and how long
/// the final sync took.
struct Written {
    /// The meta table written.
    meta: StoreMeta,
    /// Bytes of used pages.
    used_bytes: u64,
    /// Entries, depth and pages of the accounts, storage, bytecode and block-hash tables.
    tables: Vec<TableStats>,
    /// Time of the environment's sync to disk.
    sync: Duration,
}

/// The handles of the tables a build writes: the state tables and [`META`].
struct BuildTables {
    /// The state tables (the store's list).
    state: Tables,
    /// The meta table, written last.
    meta: Database,
}

/// Write the environment in `dir`, step by step: open it, write the small tables
/// (bytecodes, block hashes), the dump's accounts and storage merged with the padding,
/// top the padding up if that pass fell short, write the meta table last (a store
/// without it is refused), then sync.
fn write_env(
    dump: &Dump,
    info: &DumpFileInfo,
    dir: &Path,
    options: &BuildOptions,
    progress: &mut dyn FnMut(BuildProgress),
) -> Result<Written, StoreError> {
    let pad_to = options.pad_to.filter(|p| *p > 0);
    let target = pad_to.unwrap_or(0);
    let env = open_env(dir, target)?;
    let mut meta = StoreMeta {
        format_version: FORMAT_VERSION,
        dump_checksum: info.checksum,
        dump_size: info.size,
        segments: dump.segments.len() as u32,
        pad_to,
        ..StoreMeta::default()
    };
    let witness_nodes: Vec<Vec<PathNode>> = dump
        .segments
        .iter()
        .map(|s| match &s.witness {
            Some(w) => nodes_by_path(w, s.blocks.iter().map(|b| &b.access_list)),
            None => Vec::new(),
        })
        .collect();
    let tries = VirtualTries::of(dump, &witness_nodes);
    let tables = create_tables_with_codes_and_hashes(&env, dump, &mut meta)?;
    let mut writer = StateWriter {
        accounts: tables.state.accounts,
        storage: tables.state.storage,
        meta: &mut meta,
        value: Vec::with_capacity(80),
    };
    let state_target = pad_to.map(|target| state_target(&tries, target));
    write_state(&env, dump, &mut writer, state_target, progress)?;
    let plan = tries.plan(writer.meta.pad_accounts, writer.meta.pad_slots);
    let nodes = TrieNodes {
        db: tables.state.trie_nodes,
        witness: &witness_nodes,
        tries: &tries,
        plan: &plan,
    };
    let used = write_trie_nodes(&env, &nodes, writer.meta, target, progress)?;
    top_up_padding(&env, &mut writer, used, target, progress)?;
    let stats = write_meta(&env, &tables, &meta)?;
    let used_bytes = used_bytes(&env)?;
    let sync = sync_env(env, progress)?;
    Ok(Written {
        meta,
        used_bytes,
        tables: stats,
        sync,
    })
}

/// Open a new environment in `dir` for writing: a writable map, no sync on commit, no
/// readahead, 4 KiB pages, growing in steps of a thirty-second of `target` (the padded
/// size; 0 without padding) up to twice it.
fn open_env(dir: &Path, target: u64) -> Result<Environment, StoreError> {
    let upper = (target.saturating_mul(2)).clamp(64 << 30, 4 << 40) as usize;
    let growth = (target / 32).clamp(4 << 20, 256 << 20) as isize;
    Environment::builder()
        .set_kind(EnvironmentKind::WriteMap)
        .set_flags(EnvironmentFlags {
            mode: Mode::ReadWrite {
                sync_mode: SyncMode::UtterlyNoSync,
            },
            no_rdahead: true,
            ..Default::default()
        })
        .set_max_dbs(8)
        .set_geometry(Geometry {
            size: Some(0..upper),
            growth_step: Some(growth),
            shrink_threshold: Some(0),
            page_size: Some(PageSize::Set(PAGE_SIZE)),
        })
        .open(dir)
        .map_err(StoreError::open(dir))
}

/// Create the tables and write the small ones, bytecodes (once per hash over every
/// segment) and block hashes, in one transaction; counts them in `meta`. The trie nodes
/// come after the padding ([`write_trie_nodes`]), which sets how many there are.
fn create_tables_with_codes_and_hashes(
    env: &Environment,
    dump: &Dump,
    meta: &mut StoreMeta,
) -> Result<BuildTables, StoreError> {
    let txn = env.begin_rw_unsync().map_err(build_err("begin"))?;
    let create =
        |name: &'static str, flags| txn.create_db(Some(name), flags).map_err(build_err(name));
    let tables = BuildTables {
        state: Tables::each(&create)?,
        meta: create(META, DatabaseFlags::empty())?,
    };
    let codes: BTreeMap<B256, &Bytes> = dump
        .segments
        .iter()
        .flat_map(|s| s.pre_state.codes.iter().map(|(h, c)| (*h, c)))
        .collect();
    {
        let mut cursor = txn
            .cursor(tables.state.codes)
            .map_err(build_err(BYTECODES))?;
        let mut value = Vec::new();
        for (hash, code) in &codes {
            encode_code(code, &mut value);
            cursor
                .append(hash.as_slice(), &value)
                .map_err(build_err(BYTECODES))?;
        }
        meta.codes = codes.len() as u64;
        let mut cursor = txn
            .cursor(tables.state.hashes)
            .map_err(build_err(BLOCK_HASHES))?;
        for (segment, s) in dump.segments.iter().enumerate() {
            for (number, hash) in &s.block_hashes {
                let key = block_hash_key(segment as u32, *number);
                cursor
                    .append(&key, hash.as_slice())
                    .map_err(build_err(BLOCK_HASHES))?;
                meta.block_hashes += 1;
            }
        }
    }
    txn.commit().map_err(build_err("commit"))?;
    Ok(tables)
}

/// Bytes a transaction grows the store by before it commits, for a store padded to
/// `target` (0: unpadded).
fn commit_bytes(target: u64) -> u64 {
    (target / 16).clamp(1 << 20, COMMIT_BYTES)
}

/// Write every segment's accounts and storage merged in key order with the padding's
/// (planned for `pad_to`, re-planned at each commit at the rate measured so far), by
/// sorted appends in transactions of [`commit_bytes`]; returns the bytes of used pages.
fn write_state(
    env: &Environment,
    dump: &Dump,
    writer: &mut StateWriter<'_>,
    pad_to: Option<u64>,
    progress: &mut dyn FnMut(BuildProgress),
) -> Result<u64, StoreError> {
    let target = pad_to.unwrap_or(0);
    let real = real_entries(dump, writer.meta);
    let commit_bytes = commit_bytes(target);
    let mut pad = PadGen::new(target / PAD_BYTES_PER_ACCOUNT, 0);
    let mut per_account = PAD_BYTES_PER_ACCOUNT;
    let used_before = used_bytes(env)?;
    let mut real_iter = real.iter().peekable();
    let total_real = real.len() as u64;
    let mut real_done = 0u64;
    loop {
        let txn = env.begin_rw_unsync().map_err(build_err("begin"))?;
        let mut acc = txn.cursor(writer.accounts).map_err(build_err(ACCOUNTS))?;
        let mut sto = txn.cursor(writer.storage).map_err(build_err(STORAGE))?;
        let batch_start = pad.index;
        let batch_accounts = (commit_bytes / per_account).max(1);
        let mut real_in_batch = 0u64;
        let mut more = true;
        while pad.index - batch_start < batch_accounts && real_in_batch < 1 << 20 {
            let pad_next = pad.peek_key();
            match (real_iter.peek(), pad_next) {
                (None, None) => {
                    more = false;
                    break;
                }
                (Some(r), p) if p.is_none_or(|p| r.key < p) => {
                    writer.write_real(&mut acc, &mut sto, r, true)?;
                    real_iter.next();
                    real_done += 1;
                    real_in_batch += 1;
                }
                _ => {
                    let account = pad.next_account();
                    writer.write_pad(&mut acc, &mut sto, &account, true)?;
                }
            }
        }
        drop((acc, sto));
        txn.commit().map_err(build_err("commit"))?;
        let used = used_bytes(env)?;
        if pad_to.is_some() {
            if used >= target {
                pad.stop();
            } else if let Some(rate) = (used - used_before).checked_div(writer.meta.pad_accounts) {
                // Spread what is still missing over the rest of the address space, at
                // the rate measured so far (plus 1 %, so the pass ends past the target
                // rather than short of it).
                per_account = rate.max(64);
                let missing = (target - used).div_ceil(per_account);
                pad.replan(missing + missing / 100 + 16);
            }
            progress(BuildProgress {
                stage: BuildStage::Padding,
                done: used.min(target),
                total: target,
            });
        } else {
            progress(BuildProgress {
                stage: BuildStage::State,
                done: real_done,
                total: total_real,
            });
        }
        if !more {
            return Ok(used);
        }
    }
}

/// The bytes of used pages the state tables are padded to for a store of `target` bytes
/// whose padded tries `tries` get their virtual nodes: `target` less the nodes' bytes for
/// the padding that fills the rest, found in a few steps from an estimate of
/// [`PAD_BYTES_PER_ACCOUNT`] and [`PAD_SLOTS_PER_ACCOUNT`] (the nodes' bytes grow with the
/// accounts about linearly). `target` itself where no trie is padded.
fn state_target(tries: &VirtualTries, target: u64) -> u64 {
    let nodes = |accounts: u64| {
        let slots = (accounts as f64 * PAD_SLOTS_PER_ACCOUNT) as u64;
        tries.bytes(&tries.plan(accounts, slots))
    };
    let mut accounts = target / PAD_BYTES_PER_ACCOUNT;
    for _ in 0..4 {
        let per_account = PAD_BYTES_PER_ACCOUNT + nodes(accounts) / accounts.max(1);
        accounts = target / per_account;
    }
    target.saturating_sub(nodes(accounts))
}

/// Where [`write_trie_nodes`] writes and what: the table, each segment's witness nodes by
/// path, its padded tries and the virtual nodes planned for them.
struct TrieNodes<'a> {
    db: Database,
    witness: &'a [Vec<PathNode>],
    tries: &'a VirtualTries,
    plan: &'a Plan,
}

/// Trie nodes a transaction of [`write_trie_nodes`] appends before it commits.
const NODES_PER_COMMIT: usize = 1 << 18;

/// Write every segment's witness nodes, and its padded tries' virtual nodes as `nodes.plan`
/// says, into [`TRIE_NODES`] by sorted appends (a path the witness holds a node at keeps
/// it), counting them in `meta`; returns the bytes of used pages.
fn write_trie_nodes(
    env: &Environment,
    nodes: &TrieNodes<'_>,
    meta: &mut StoreMeta,
    target: u64,
    progress: &mut dyn FnMut(BuildProgress),
) -> Result<u64, StoreError> {
    let mut entries = (0..nodes.witness.len()).flat_map(|segment| {
        let s = segment as u32;
        let mut witness: Vec<(TrieNodeKey, Bytes, bool)> = nodes.witness[segment]
            .iter()
            .filter_map(|n| {
                let key = TrieNodeKey::new(s, n.owner.as_ref(), &n.path.to_vec())?;
                Some((key, n.rlp.clone(), false))
            })
            .collect();
        witness.sort_unstable_by(|a, b| a.0.as_slice().cmp(b.0.as_slice()));
        let virtual_nodes =
            nodes
                .tries
                .nodes(nodes.plan, s)
                .filter_map(move |(owner, path, node)| {
                    Some((
                        TrieNodeKey::new(s, owner.as_ref(), &path)?,
                        node.clone(),
                        true,
                    ))
                });
        merge_by_key(witness.into_iter(), virtual_nodes)
    });
    let mut used = used_bytes(env)?;
    loop {
        let batch: Vec<_> = entries.by_ref().take(NODES_PER_COMMIT).collect();
        if batch.is_empty() {
            return Ok(used);
        }
        let txn = env.begin_rw_unsync().map_err(build_err("begin"))?;
        let mut cursor = txn.cursor(nodes.db).map_err(build_err(TRIE_NODES))?;
        for (key, node, is_virtual) in &batch {
            cursor
                .append(key.as_slice(), node)
                .map_err(build_err(TRIE_NODES))?;
            *if *is_virtual {
                &mut meta.pad_trie_nodes
            } else {
                &mut meta.trie_nodes
            } += 1;
        }
        drop(cursor);
        txn.commit().map_err(build_err("commit"))?;
        used = used_bytes(env)?;
        if target > 0 {
            progress(BuildProgress {
                stage: BuildStage::Padding,
                done: used.min(target),
                total: target,
            });
        }
    }
}

/// The entries of `a` and `b` (each sorted by key) in key order; where both hold a key, `a`'s
/// alone.
fn merge_by_key<V>(
    a: impl Iterator<Item = (TrieNodeKey, Bytes, V)>,
    b: impl Iterator<Item = (TrieNodeKey, Bytes, V)>,
) -> impl Iterator<Item = (TrieNodeKey, Bytes, V)> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || {
        let order = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x.0.as_slice().cmp(y.0.as_slice()),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, _) => return b.next(),
        };
        if order == std::cmp::Ordering::Equal {
            b.next();
        }
        if order == std::cmp::Ordering::Greater {
            b.next()
        } else {
            a.next()
        }
    })
}

/// Rarely, [`write_state`]'s pass falls short of `target`: top up with further passes of
/// padded accounts between the existing ones (plain puts, as the keys interleave), at
/// most 15, until the used pages (`used` now) reach it.
fn top_up_padding(
    env: &Environment,
    writer: &mut StateWriter<'_>,
    mut used: u64,
    target: u64,
    progress: &mut dyn FnMut(BuildProgress),
) -> Result<(), StoreError> {
    let commit_bytes = commit_bytes(target);
    let mut pass = 1u8;
    while used < target && pass < 16 {
        let per_account = (used / writer.meta.pad_accounts.max(1)).max(64);
        let missing = target - used;
        let mut pad = PadGen::new(missing.div_ceil(per_account) + 16, pass);
        pass += 1;
        while pad.peek_key().is_some() && used < target {
            let txn = env.begin_rw_unsync().map_err(build_err("begin"))?;
            let mut acc = txn.cursor(writer.accounts).map_err(build_err(ACCOUNTS))?;
            let mut sto = txn.cursor(writer.storage).map_err(build_err(STORAGE))?;
            for _ in 0..(commit_bytes / per_account).max(1) {
                if pad.peek_key().is_none() {
                    break;
                }
                let account = pad.next_account();
                writer.write_pad(&mut acc, &mut sto, &account, false)?;
            }
            drop((acc, sto));
            txn.commit().map_err(build_err("commit"))?;
            used = used_bytes(env)?;
            progress(BuildProgress {
                stage: BuildStage::Padding,
                done: used.min(target),
                total: target,
            });
        }
    }
    Ok(())
}

/// Write the meta table (last: a store without it is refused) and read the tables'
/// stats in the same transaction.
fn write_meta(
    env: &Environment,
    tables: &BuildTables,
    meta: &StoreMeta,
) -> Result<Vec<TableStats>, StoreError> {
    let txn = env.begin_rw_unsync().map_err(build_err("begin"))?;
    let mut cursor = txn.cursor(tables.meta).map_err(build_err(META))?;
    for (key, value) in meta.entries() {
        cursor
            .append(key.as_bytes(), &value.to_le_bytes())
            .map_err(build_err(META))?;
    }
    drop(cursor);
    let stat = |(name, db): (&'static str, Database)| {
        txn.db_stat(&db)
            .map(|s| TableStats::new(name, s))
            .map_err(build_err(name))
    };
    let stats = tables
        .state
        .named()
        .into_iter()
        .map(stat)
        .collect::<Result<_, _>>()?;
    txn.commit().map_err(build_err("commit"))?;
    Ok(stats)
}

/// Sync the environment to disk and close it; returns how long the sync took.
fn sync_env(
    env: Environment,
    progress: &mut dyn FnMut(BuildProgress),
) -> Result<Duration, StoreError> {
    progress(BuildProgress {
        stage: BuildStage::Sync,
        done: 0,
        total: 1,
    });
    let start = Instant::now();
    env.sync(true).map_err(build_err("sync"))?;
    let sync = start.elapsed();
    drop(env);
    Ok(sync)
}

/// Bytes of the environment's used pages.
fn used_bytes(env: &Environment) -> Result<u64, StoreError> {
    let info = env.info().map_err(build_err("info"))?;
    Ok((info.last_pgno() as u64 + 1) * PAGE_SIZE as u64)
}

/// One address of one segment of the dump: its account (if it exists) and its slots.
struct RealEntry<'a> {
    key: [u8; STATE_KEY_LEN],
    account: Option<&'a AccountState>,
    slots: &'a [PreSlot],
}

/// Every segment's accounts with their slots, sorted by key; counts absent accounts.
fn real_entries<'a>(dump: &'a Dump, meta: &mut StoreMeta) -> Vec<RealEntry<'a>> {
    let mut entries = Vec::new();
    for (segment, s) in dump.segments.iter().enumerate() {
        let pre = &s.pre_state;
        let mut slot_start = 0;
        for account in &pre.accounts {
            // Slots are sorted by (address, slot) and all of listed accounts.
            while slot_start < pre.storage.len()
                && pre.storage[slot_start].address < account.address
            {
                slot_start += 1;
            }
            let mut slot_end = slot_start;
            while slot_end < pre.storage.len() && pre.storage[slot_end].address == account.address {
                slot_end += 1;
            }
            if account.state.is_none() {
                meta.absent_accounts += 1;
            }
            entries.push(RealEntry {
                key: state_key(&account.address, segment as u32),
                account: account.state.as_ref(),
                slots: &pre.storage[slot_start..slot_end],
            });
            slot_start = slot_end;
        }
    }
    entries.sort_unstable_by_key(|e| e.key);
    entries
}

/// Writes accounts and slots through two cursors of one transaction.
struct StateWriter<'a> {
    accounts: Database,
    storage: Database,
    meta: &'a mut StoreMeta,
    value: Vec<u8>,
}

type RwCursor<'tx> = signet_libmdbx::Cursor<'tx, signet_libmdbx::Rw>;

impl StateWriter<'_> {
    /// Writes one record of `table`: with `append`, appended in key order (the `first` of
    /// a key's records as a new key, the others as its duplicates); else put anywhere.
    fn put(
        cursor: &mut RwCursor<'_>,
        key: &[u8],
        value: &[u8],
        (append, first): (bool, bool),
        table: &'static str,
    ) -> Result<(), StoreError> {
        let result = match (append, first) {
            (true, true) => cursor.append(key, value),
            (true, false) => cursor.append_dup(key, value),
            (false, _) => cursor.put(key, value, WriteFlags::empty()),
        };
        result.map_err(build_err(table))
    }

    fn write_real(
        &mut self,
        acc: &mut RwCursor<'_>,
        sto: &mut RwCursor<'_>,
        entry: &RealEntry<'_>,
        append: bool,
    ) -> Result<(), StoreError> {
        if let Some(account) = entry.account {
            encode_account(account, &mut self.value);
            Self::put(acc, &entry.key, &self.value, (append, true), ACCOUNTS)?;
            self.meta.accounts += 1;
        }
        let mut first = true;
        for slot in entry.slots {
            if slot.value.is_zero() {
                self.meta.zero_slots += 1;
                continue;
            }
            encode_slot(&slot.slot, &slot.value, &mut self.value);
            Self::put(sto, &entry.key, &self.value, (append, first), STORAGE)?;
            first = false;
            self.meta.slots += 1;
        }
        Ok(())
    }

    fn write_pad(
        &mut self,
        acc: &mut RwCursor<'_>,
        sto: &mut RwCursor<'_>,
        pad: &PadAccount,
        append: bool,
    ) -> Result<(), StoreError> {
        encode_account(&pad.account, &mut self.value);
        Self::put(acc, &pad.key, &self.value, (append, true), ACCOUNTS)?;
        self.meta.pad_accounts += 1;
        for (i, (slot, value)) in pad.slots.iter().enumerate() {
            encode_slot(slot, value, &mut self.value);
            Self::put(sto, &pad.key, &self.value, (append, i == 0), STORAGE)?;
            self.meta.pad_slots += 1;
        }
        Ok(())
    }
}

/// A synthetic account with its slots, sorted.
struct PadAccount {
    key: [u8; STATE_KEY_LEN],
    account: AccountState,
    slots: Vec<(U256, U256)>,
}

/// The padding's accounts in key order: the accounts still to come are spread over the
/// rest of the address space (its first 16 bytes), account `i` of the `n` planned at a
/// pseudo-random point of the `i`-th of `n` equal strides; its last byte is the pass, so
/// passes never repeat an address. [`PadGen::replan`] spreads a new count over what is
/// left of the space.
#[derive(Default)]
struct PadGen {
    /// Start of the rest of the space (high 16 bytes).
    lo: u128,
    n: u64,
    index: u64,
    stride: u128,
    /// Accounts made so far in this pass (seeds their content).
    made: u64,
    /// High 16 bytes of the last account made.
    last_high: Option<u128>,
    pass: u8,
    seed: u64,
}

impl PadGen {
    fn new(n: u64, pass: u8) -> Self {
        let mut pad = Self {
            pass,
            seed: mix(0x6769_6761_6761_7300 ^ u64::from(pass)),
            ..Self::default()
        };
        pad.replan(n);
        pad
    }

    /// Plan `n` more accounts over the space after the last one made.
    fn replan(&mut self, n: u64) {
        if let Some(last) = self.last_high {
            self.lo = last.saturating_add(1);
        }
        self.n = n;
        self.index = 0;
        self.stride = if n == 0 {
            0
        } else {
            (u128::MAX - self.lo) / u128::from(n)
        };
    }

    /// End the pass here.
    fn stop(&mut self) {
        self.n = self.index;
    }

    /// The high 16 bytes of the next account's address: in its stride, at a point drawn
    /// from the count of accounts made.
    fn high(&self) -> u128 {
        let r = mix(self.seed ^ self.made);
        let jitter = u128::from(r >> 32) * (self.stride >> 32);
        self.lo + u128::from(self.index) * self.stride + jitter
    }

    fn address(&self) -> Address {
        let r = mix(self.seed.rotate_left(29) ^ self.made);
        let mut address = [0u8; 20];
        address[..16].copy_from_slice(&self.high().to_be_bytes());
        address[16..19].copy_from_slice(&(r as u32).to_be_bytes()[..3]);
        address[19] = self.pass;
        Address::from(address)
    }

    fn peek_key(&self) -> Option<[u8; STATE_KEY_LEN]> {
        (self.index < self.n).then(|| state_key(&self.address(), PAD_SEGMENT))
    }

    fn next_account(&mut self) -> PadAccount {
        let key = state_key(&self.address(), PAD_SEGMENT);
        self.last_high = Some(self.high());
        let mut r = mix(self.seed.rotate_left(17) ^ self.made);
        let mut next = || {
            r = mix(r);
            r
        };
        let shape = next();
        let nonce = shape >> 54; // 0..1024
        let balance_bytes = (shape % 12 + 1) as usize;
        let mut balance = [0u8; 32];
        for chunk in balance[32 - balance_bytes..].chunks_mut(8) {
            let bytes = next().to_be_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        let contract = (shape >> 8) & 3 == 0;
        let (code_hash, slots) = if contract {
            let mut hash = [0u8; 32];
            for chunk in hash.chunks_mut(8) {
                chunk.copy_from_slice(&next().to_be_bytes());
            }
            let count = 1usize << ((shape >> 16) % 7);
            let mut slots: Vec<(U256, U256)> = (0..count)
                .map(|_| {
                    let slot = U256::from_limbs([next(), next(), next(), next()]);
                    let len = (next() % 32 + 1) as u32;
                    let value = U256::from_limbs([next(), next(), next(), next()])
                        >> (256 - 8 * len)
                        | U256::from(1);
                    (slot, value)
                })
                .collect();
            slots.sort_unstable_by_key(|s| s.0);
            slots.dedup_by_key(|s| s.0);
            (B256::from(hash), slots)
        } else {
            (alloy_primitives::KECCAK256_EMPTY, Vec::new())
        };
        self.index += 1;
        self.made += 1;
        PadAccount {
            key,
            account: AccountState {
                balance: U256::from_be_bytes(balance),
                nonce,
                code_hash,
            },
            slots,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pad_keys_ascend_and_stay_in_the_pad_segment() {
        let mut pad = PadGen::new(10_000, 0);
        let mut last = None;
        let mut slots = 0;
        while let Some(key) = pad.peek_key() {
            if pad.made == 3_000 && pad.n == 10_000 {
                // Re-planned after 3,000: 7,000 more over the rest of the space.
                pad.replan(7_000);
                assert!(pad.peek_key().unwrap() > last.unwrap());
                continue;
            }
            assert!(last.is_none_or(|l| l < key));
            assert_eq!(key[20..], PAD_SEGMENT.to_be_bytes());
            last = Some(key);
            let account = pad.next_account();
            assert_eq!(account.key, key);
            assert!(account.slots.windows(2).all(|w| w[0].0 < w[1].0));
            assert!(account.slots.iter().all(|s| !s.1.is_zero()));
            slots += account.slots.len();
        }
        // One in four accounts has 1..=64 slots, 18.1 on average.
        let per_account = slots as f64 / 10_000.0;
        assert!((3.5..5.5).contains(&per_account), "{per_account}");
        // The strides cover the whole address space.
        assert_eq!(pad.made, 10_000);
        assert!(last.unwrap()[0] == 0xff);
    }
}
