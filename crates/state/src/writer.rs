//! Writing blocks into a store as a client commits them, and taking them back:
//! [`StoreWriter`].
//!
//! - [`StoreWriter::write_block`] writes one block's changes in one write transaction: its
//!   accounts, slots and new code in the plain tables, and its tries' changed nodes under
//!   their paths in [`TRIE_NODES`], under the block's segment (the keys its reads use).
//!   Each commit is synced as [`PERSIST_SYNC`] says.
//! - Before the first block, [`StoreWriter::begin`] marks the store dirty in its meta
//!   table (its own synced commit) and opens a read transaction on the store as built:
//!   MDBX keeps the pages that transaction sees for as long as it lives, so the pre-state
//!   of every key the pass writes stays readable beside the new one (the file grows by the
//!   pages the pass writes instead of reusing freed ones).
//! - [`StoreWriter::restore`] writes every key the pass wrote back to its value in that
//!   read transaction (or deletes it where it had none), clears the mark in the same
//!   commit, and reads every such key again to check it equals its value before the pass.
//!   Its cost is the pass's written keys, not the store's size.
//! - A store still marked dirty (the process ended before the restore) is refused when
//!   opened ([`StoreError::Dirty`]): rebuild it.

use crate::{
    Store, StoreError,
    layout::{
        ACCOUNTS, BYTECODES, META, STORAGE, TRIE_NODES, TrieNodeKey, encode_account, encode_code,
        encode_slot, state_key,
    },
    store::{Entry, Tables},
};
use alloy_primitives::{B256, Bytes, U256};
use gigagas_dump::AccountState;
use signet_libmdbx::{
    Database, Environment, MdbxError, ReadError, SyncMode, WriteFlags, tx::aliases::RoTxUnsync,
};
use std::{
    borrow::Cow,
    fs,
    path::{Path, PathBuf},
    sync::Arc,
};

/// How each commit of a written block reaches the disk: MDBX's `Durable`, an `fdatasync` of
/// the data file at every commit (reth's default for its database). A block's persistence
/// time includes it.
pub const PERSIST_SYNC: SyncMode = SyncMode::Durable;

/// The meta-table key that marks a store changed by a `--persist` pass not yet taken back.
pub(crate) const DIRTY: &str = "persist_dirty";

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

/// What one block's write put into the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Bytes of the keys and values written, and of the keys deleted (encoded, as stored).
    pub bytes: u64,
    /// Pages the transaction dirtied: new pages plus pages copied for update (MDBX's page
    /// operation counters, over the transaction).
    pub pages: u64,
    /// Entries put or deleted.
    pub entries: u64,
}

/// A key a pass wrote, to take back.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Written {
    Account([u8; 24]),
    Slot([u8; 24], [u8; 32]),
    Code(B256),
    Node(Vec<u8>),
}

/// One trie's changed nodes by path (nibbles): the new RLP, or `None` to delete.
pub type NodeWrites<'a> = &'a [(gigagas_trie::Nibbles, Option<Bytes>)];

/// One block's changes, as [`StoreWriter::write_block`] writes them (the trie crate's
/// `BlockChanges` in the store's terms, so that this crate stays free of the executor).
#[derive(Debug, Clone, Copy)]
pub struct BlockWrite<'a> {
    /// Accounts with their fields after the block (`None`: deleted).
    pub accounts: &'a [(alloy_primitives::Address, Option<AccountState>)],
    /// Slots with their values after the block (zero: deleted).
    pub slots: &'a [(alloy_primitives::Address, U256, U256)],
    /// New code by hash.
    pub codes: &'a [(B256, Bytes)],
    /// Trie nodes by trie (`None`: the account trie; else the storage trie's owner,
    /// keccak256 of its address) and path (nibbles): the new RLP, or `None` to delete.
    pub nodes: &'a [(Option<B256>, NodeWrites<'a>)],
    /// Storage tries (by owner) whose every node goes.
    pub wiped: &'a [B256],
}

/// Writes a pass's blocks into a store opened with [`crate::open_store_writable`], and
/// takes them back after the pass (see the module's notes). `Send`; one block at a time.
pub struct StoreWriter {
    env: Environment,
    path: Arc<PathBuf>,
    tables: Tables,
    meta: Database,
    /// The store as it was before the pass (kept readable by MDBX while this lives).
    pre: Option<RoTxUnsync>,
    written: Vec<Written>,
}

impl std::fmt::Debug for StoreWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreWriter")
            .field("path", &self.path)
            .field("written", &self.written.len())
            .finish_non_exhaustive()
    }
}

impl StoreWriter {
    /// Marks `store` dirty and keeps its present state readable, for a pass that writes
    /// into it. Outside any timed window.
    pub fn begin(store: &Store) -> Result<Self, StoreError> {
        if !store.writable {
            return Err(StoreError::ReadOnly {
                path: store.path.to_path_buf(),
                reason: "it was opened read-only".into(),
            });
        }
        let path = store.path.clone();
        let err = |what| {
            let path = path.to_path_buf();
            move |source: MdbxError| StoreError::Write {
                path,
                what,
                source: source.into(),
            }
        };
        let txn = store.env.begin_rw_unsync().map_err(err("begin"))?;
        let meta = txn.open_db(Some(META)).map_err(err("open meta"))?;
        txn.put(meta, DIRTY, 1u64.to_le_bytes(), WriteFlags::empty())
            .map_err(err("mark dirty"))?;
        txn.commit().map_err(err("commit"))?;
        let pre = store.env.begin_ro_unsync().map_err(err("begin read"))?;
        Ok(Self {
            env: store.env.clone(),
            path,
            tables: store.tables,
            meta,
            pre: Some(pre),
            written: Vec::new(),
        })
    }

    fn err<E: Into<ReadError>>(&self, what: &'static str) -> impl Fn(E) -> StoreError + '_ {
        move |source| StoreError::Write {
            path: self.path.to_path_buf(),
            what,
            source: source.into(),
        }
    }

    /// Writes one block of `segment` in one write transaction, committed (and synced as
    /// [`PERSIST_SYNC`] says) before it returns.
    pub fn write_block(
        &mut self,
        segment: u32,
        block: &BlockWrite<'_>,
    ) -> Result<WriteStats, StoreError> {
        let ops = |env: &Environment| env.info().map(|i| i.page_ops());
        let before = ops(&self.env).map_err(self.err("info"))?;
        let txn = self.env.begin_rw_unsync().map_err(self.err("begin"))?;
        let t = self.tables;
        let mut stats = WriteStats::default();
        let mut value = Vec::with_capacity(128);
        let mut written = Vec::new();
        let put = |db: Database, key: &[u8], value: &[u8], stats: &mut WriteStats| {
            stats.bytes += (key.len() + value.len()) as u64;
            stats.entries += 1;
            txn.put(db, key, value, WriteFlags::empty())
        };
        for (address, account) in block.accounts {
            let key = state_key(address, segment);
            match account {
                Some(a) => {
                    encode_account(a, &mut value);
                    put(t.accounts, &key, &value, &mut stats).map_err(self.err(ACCOUNTS))?;
                }
                None => {
                    stats.bytes += key.len() as u64;
                    stats.entries += 1;
                    txn.del(t.accounts, key, None).map_err(self.err(ACCOUNTS))?;
                }
            }
            written.push(Written::Account(key));
        }
        {
            let mut cursor = txn.cursor(t.storage).map_err(self.err(STORAGE))?;
            for (address, slot, v) in block.slots {
                let key = state_key(address, segment);
                let slot_key = slot.to_be_bytes::<32>();
                let old: Option<Cow<'_, [u8]>> = cursor
                    .get_both_range(&key, &slot_key)
                    .map_err(self.err(STORAGE))?;
                if old.is_some_and(|old| old.len() >= 32 && old[..32] == slot_key) {
                    cursor.del().map_err(self.err(STORAGE))?;
                }
                if !v.is_zero() {
                    encode_slot(slot, v, &mut value);
                    stats.bytes += (key.len() + value.len()) as u64;
                    cursor
                        .put(&key, &value, WriteFlags::empty())
                        .map_err(self.err(STORAGE))?;
                } else {
                    stats.bytes += (key.len() + 32) as u64;
                }
                stats.entries += 1;
                written.push(Written::Slot(key, slot_key));
            }
        }
        for (hash, code) in block.codes {
            let present: Option<Cow<'_, [u8]>> = txn
                .get(t.codes.dbi(), hash.as_slice())
                .map_err(self.err(BYTECODES))?;
            if present.is_none() {
                encode_code(code, &mut value);
                put(t.codes, hash.as_slice(), &value, &mut stats).map_err(self.err(BYTECODES))?;
                written.push(Written::Code(*hash));
            }
        }
        {
            let mut cursor = txn.cursor(t.trie_nodes).map_err(self.err(TRIE_NODES))?;
            for owner in block.wiped {
                let prefix = TrieNodeKey::new(segment, Some(owner), &[]).expect("an empty path");
                let prefix = prefix.as_slice().to_vec();
                let mut at: Entry<'_> = cursor.set_range(&prefix).map_err(self.err(TRIE_NODES))?;
                while let Some((key, _)) = at.take() {
                    if !key.starts_with(&prefix) {
                        break;
                    }
                    stats.bytes += key.len() as u64;
                    stats.entries += 1;
                    written.push(Written::Node(key.to_vec()));
                    cursor.del().map_err(self.err(TRIE_NODES))?;
                    at = cursor.set_range(&prefix).map_err(self.err(TRIE_NODES))?;
                }
            }
        }
        let mut nibbles = Vec::with_capacity(64);
        for (owner, nodes) in block.nodes {
            for (path, node) in nodes.iter() {
                nibbles.clear();
                nibbles.extend(path.iter());
                let Some(key) = TrieNodeKey::new(segment, owner.as_ref(), &nibbles) else {
                    continue;
                };
                match node {
                    Some(node) => {
                        put(t.trie_nodes, key.as_slice(), node, &mut stats)
                            .map_err(self.err(TRIE_NODES))?;
                    }
                    None => {
                        stats.bytes += key.as_slice().len() as u64;
                        stats.entries += 1;
                        txn.del(t.trie_nodes, key.as_slice(), None)
                            .map_err(self.err(TRIE_NODES))?;
                    }
                }
                written.push(Written::Node(key.as_slice().to_vec()));
            }
        }
        txn.commit().map_err(self.err("commit"))?;
        let after = ops(&self.env).map_err(self.err("info"))?;
        stats.pages = (after.newly + after.cow).saturating_sub(before.newly + before.cow);
        self.written.append(&mut written);
        Ok(stats)
    }

    /// Takes every block written back out: each key the pass wrote gets its value before
    /// the pass again (or goes, where it had none), and the dirty mark goes, in one synced
    /// commit; then each such key is read again and compared with its value before the
    /// pass. Outside any timed window. Returns the keys restored.
    pub fn restore(mut self) -> Result<usize, StoreError> {
        let pre = self.pre.take().expect("restored once");
        self.written.sort_unstable();
        self.written.dedup();
        let t = self.tables;
        let txn = self.env.begin_rw_unsync().map_err(self.err("begin"))?;
        let read = self.err::<ReadError>("restore");
        {
            let mut pre_storage = pre.cursor(t.storage).map_err(self.err(STORAGE))?;
            let mut storage = txn.cursor(t.storage).map_err(self.err(STORAGE))?;
            for w in &self.written {
                let (db, key): (Database, &[u8]) = match w {
                    Written::Account(key) => (t.accounts, key),
                    Written::Code(hash) => (t.codes, hash.as_slice()),
                    Written::Node(key) => (t.trie_nodes, key),
                    Written::Slot(key, slot) => {
                        let now: Option<Cow<'_, [u8]>> =
                            storage.get_both_range(key, slot).map_err(&read)?;
                        if now.is_some_and(|e| e.len() >= 32 && e[..32] == slot[..]) {
                            storage.del().map_err(self.err(STORAGE))?;
                        }
                        let before: Option<Cow<'_, [u8]>> =
                            pre_storage.get_both_range(key, slot).map_err(&read)?;
                        if let Some(entry) = before.filter(|e| e.len() >= 32 && e[..32] == slot[..])
                        {
                            storage
                                .put(key, &entry, WriteFlags::empty())
                                .map_err(self.err(STORAGE))?;
                        }
                        continue;
                    }
                };
                let before: Option<Cow<'_, [u8]>> = pre.get(db.dbi(), key).map_err(&read)?;
                match before {
                    Some(v) => txn
                        .put(db, key, &v, WriteFlags::empty())
                        .map_err(self.err("restore"))?,
                    None => {
                        txn.del(db, key, None).map_err(self.err("restore"))?;
                    }
                }
            }
        }
        txn.del(self.meta, DIRTY, None)
            .map_err(self.err("clear dirty"))?;
        txn.commit().map_err(self.err("commit"))?;
        // Every key reads as before the pass.
        let now = self.env.begin_ro_unsync().map_err(self.err("begin read"))?;
        let mut now_storage = now.cursor(t.storage).map_err(self.err(STORAGE))?;
        let mut pre_storage = pre.cursor(t.storage).map_err(self.err(STORAGE))?;
        for w in &self.written {
            let (table, same) = match w {
                Written::Slot(key, slot) => {
                    let a: Option<Vec<u8>> =
                        now_storage.get_both_range(key, slot).map_err(&read)?;
                    let b: Option<Vec<u8>> =
                        pre_storage.get_both_range(key, slot).map_err(&read)?;
                    let of =
                        |e: Option<Vec<u8>>| e.filter(|e| e.len() >= 32 && e[..32] == slot[..]);
                    (STORAGE, of(a) == of(b))
                }
                other => {
                    let (table, db, key): (&'static str, Database, &[u8]) = match other {
                        Written::Account(key) => (ACCOUNTS, t.accounts, key),
                        Written::Code(hash) => (BYTECODES, t.codes, hash.as_slice()),
                        Written::Node(key) => (TRIE_NODES, t.trie_nodes, key),
                        Written::Slot(..) => unreachable!("matched above"),
                    };
                    let a: Option<Vec<u8>> = now.get(db.dbi(), key).map_err(&read)?;
                    let b: Option<Vec<u8>> = pre.get(db.dbi(), key).map_err(&read)?;
                    (table, a == b)
                }
            };
            if !same {
                return Err(StoreError::NotRestored {
                    path: self.path.to_path_buf(),
                    table,
                });
            }
        }
        Ok(self.written.len())
    }
}
