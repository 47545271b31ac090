//! Writing blocks into a store as a client commits them, and taking them back:
//! [`StoreWriter`].
//!
//! - [`StoreWriter::write_block`] writes one block's changes in one write transaction: its
//!   accounts, slots and new code in the plain tables, and its tries' changed nodes under
//!   their paths in [`TRIE_NODES`], under the block's segment (the keys its reads use).
//!   Each commit is synced as [`PERSIST_SYNC`](crate::PERSIST_SYNC) says.
//!   [`StoreWriter::write_blocks`] writes several blocks in one such transaction (a group
//!   commit, one sync), as the background writer ([`crate::BackgroundWriter`]) does.
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
        ACCOUNTS, BYTECODES, DIRTY, META, STORAGE, TRIE_NODES, TrieNodeKey, encode_account,
        encode_code, encode_slot, state_key,
    },
    tables::{Entry, Tables},
};
use alloy_primitives::{B256, Bytes, U256};
use gigagas_dump::AccountState;
use signet_libmdbx::{
    Database, Environment, MdbxError, ReadError, WriteFlags,
    tx::aliases::{RoTxUnsync, RwTxUnsync},
};
use std::{
    borrow::Cow,
    path::{Path, PathBuf},
    sync::Arc,
};

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

impl<'a> BlockWrite<'a> {
    /// The tries' changed nodes of `changes` as [`BlockWrite::nodes`] takes them: the
    /// account trie's, then each storage trie's by owner.
    pub fn nodes_of(
        changes: &'a gigagas_trie::BlockChanges,
    ) -> Vec<(Option<B256>, NodeWrites<'a>)> {
        std::iter::once((None, changes.account_nodes.as_slice()))
            .chain(
                changes
                    .storage_nodes
                    .iter()
                    .map(|(owner, nodes)| (Some(*owner), nodes.as_slice())),
            )
            .collect()
    }

    /// The write of `changes`, its nodes as [`Self::nodes_of`] gives them.
    pub fn of(
        changes: &'a gigagas_trie::BlockChanges,
        nodes: &'a [(Option<B256>, NodeWrites<'a>)],
    ) -> Self {
        Self {
            accounts: &changes.accounts,
            slots: &changes.slots,
            codes: &changes.codes,
            nodes,
            wiped: &changes.wiped,
        }
    }
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
        let err = |what| write_err::<MdbxError>(&path, what);
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
        write_err(&self.path, what)
    }

    /// The store's folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one block of `segment` in one write transaction, committed (and synced as
    /// [`PERSIST_SYNC`](crate::PERSIST_SYNC) says) before it returns.
    pub fn write_block(
        &mut self,
        segment: u32,
        block: &BlockWrite<'_>,
    ) -> Result<WriteStats, StoreError> {
        self.write_blocks(&[(segment, *block)])
    }

    /// Writes several blocks (each with its segment, in order) in one write transaction,
    /// committed (and synced as [`PERSIST_SYNC`](crate::PERSIST_SYNC) says: one sync for
    /// them all) before it returns: a group commit. The figures are the group's.
    pub fn write_blocks(
        &mut self,
        blocks: &[(u32, BlockWrite<'_>)],
    ) -> Result<WriteStats, StoreError> {
        let ops = |env: &Environment| env.info().map(|i| i.page_ops());
        let before = ops(&self.env).map_err(self.err("info"))?;
        let txn = self.env.begin_rw_unsync().map_err(self.err("begin"))?;
        let mut w = BlockTxn {
            txn: &txn,
            tables: self.tables,
            path: &self.path,
            segment: 0,
            stats: WriteStats::default(),
            value: Vec::with_capacity(128),
            written: Vec::new(),
        };
        for (segment, block) in blocks {
            w.segment = *segment;
            w.accounts(block.accounts)?;
            w.slots(block.slots)?;
            w.codes(block.codes)?;
            w.wipe(block.wiped)?;
            w.nodes(block.nodes)?;
        }
        let (mut stats, mut written) = (w.stats, w.written);
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

/// One block's write transaction ([`StoreWriter::write_block`]): what it has written so far
/// and the keys to take back.
struct BlockTxn<'t> {
    txn: &'t RwTxUnsync,
    tables: Tables,
    path: &'t Path,
    segment: u32,
    stats: WriteStats,
    /// A value's encoding, reused.
    value: Vec<u8>,
    written: Vec<Written>,
}

impl<'t> BlockTxn<'t> {
    fn err<E: Into<ReadError>>(&self, what: &'static str) -> impl Fn(E) -> StoreError + 't {
        write_err(self.path, what)
    }

    /// Counts one entry of `bytes` put or deleted.
    fn count(&mut self, bytes: usize) {
        self.stats.bytes += bytes as u64;
        self.stats.entries += 1;
    }

    /// Puts `value` (the encoding at hand, or `node`) under `key` in `db`, counted.
    fn put(&mut self, db: Database, key: &[u8], node: Option<&[u8]>) -> Result<(), MdbxError> {
        self.count(key.len() + node.map_or(self.value.len(), <[u8]>::len));
        let value = node.unwrap_or(&self.value);
        self.txn.put(db, key, value, WriteFlags::empty())
    }

    /// Deletes `key` from `db`, counted.
    fn del(&mut self, db: Database, key: &[u8]) -> Result<(), MdbxError> {
        self.count(key.len());
        self.txn.del(db, key, None).map(|_| ())
    }

    /// The block's accounts: put, or deleted where `None`.
    fn accounts(
        &mut self,
        accounts: &[(alloy_primitives::Address, Option<AccountState>)],
    ) -> Result<(), StoreError> {
        for (address, account) in accounts {
            let key = state_key(address, self.segment);
            let written = match account {
                Some(a) => {
                    encode_account(a, &mut self.value);
                    self.put(self.tables.accounts, &key, None)
                }
                None => self.del(self.tables.accounts, &key),
            };
            written.map_err(self.err(ACCOUNTS))?;
            self.written.push(Written::Account(key));
        }
        Ok(())
    }

    /// The block's slots: each old entry replaced, or deleted where the value is zero.
    fn slots(
        &mut self,
        slots: &[(alloy_primitives::Address, U256, U256)],
    ) -> Result<(), StoreError> {
        let mut cursor = self
            .txn
            .cursor(self.tables.storage)
            .map_err(self.err(STORAGE))?;
        for (address, slot, v) in slots {
            let key = state_key(address, self.segment);
            let slot_key = slot.to_be_bytes::<32>();
            let old: Option<Cow<'_, [u8]>> = cursor
                .get_both_range(&key, &slot_key)
                .map_err(self.err(STORAGE))?;
            if old.is_some_and(|old| old.len() >= 32 && old[..32] == slot_key) {
                cursor.del().map_err(self.err(STORAGE))?;
            }
            if !v.is_zero() {
                encode_slot(slot, v, &mut self.value);
                self.count(key.len() + self.value.len());
                cursor
                    .put(&key, &self.value, WriteFlags::empty())
                    .map_err(self.err(STORAGE))?;
            } else {
                self.count(key.len() + 32);
            }
            self.written.push(Written::Slot(key, slot_key));
        }
        Ok(())
    }

    /// The block's new code, where the store does not hold it yet.
    fn codes(&mut self, codes: &[(B256, Bytes)]) -> Result<(), StoreError> {
        for (hash, code) in codes {
            let present: Option<Cow<'_, [u8]>> = self
                .txn
                .get(self.tables.codes.dbi(), hash.as_slice())
                .map_err(self.err(BYTECODES))?;
            if present.is_none() {
                encode_code(code, &mut self.value);
                self.put(self.tables.codes, hash.as_slice(), None)
                    .map_err(self.err(BYTECODES))?;
                self.written.push(Written::Code(*hash));
            }
        }
        Ok(())
    }

    /// Every node of the storage tries of `wiped` (by owner) deleted.
    fn wipe(&mut self, wiped: &[B256]) -> Result<(), StoreError> {
        let mut cursor = self
            .txn
            .cursor(self.tables.trie_nodes)
            .map_err(self.err(TRIE_NODES))?;
        for owner in wiped {
            let prefix = TrieNodeKey::new(self.segment, Some(owner), &[]).expect("an empty path");
            let prefix = prefix.as_slice().to_vec();
            let mut at: Entry<'_> = cursor.set_range(&prefix).map_err(self.err(TRIE_NODES))?;
            while let Some((key, _)) = at.take() {
                if !key.starts_with(&prefix) {
                    break;
                }
                self.count(key.len());
                self.written.push(Written::Node(key.to_vec()));
                cursor.del().map_err(self.err(TRIE_NODES))?;
                at = cursor.set_range(&prefix).map_err(self.err(TRIE_NODES))?;
            }
        }
        Ok(())
    }

    /// The tries' changed nodes by path: put, or deleted where `None`.
    fn nodes(&mut self, nodes: &[(Option<B256>, NodeWrites<'_>)]) -> Result<(), StoreError> {
        let mut nibbles = Vec::with_capacity(64);
        for (owner, nodes) in nodes {
            for (path, node) in nodes.iter() {
                nibbles.clear();
                nibbles.extend(path.iter());
                let Some(key) = TrieNodeKey::new(self.segment, owner.as_ref(), &nibbles) else {
                    continue;
                };
                let db = self.tables.trie_nodes;
                match node {
                    Some(node) => self.put(db, key.as_slice(), Some(node)),
                    None => self.del(db, key.as_slice()),
                }
                .map_err(self.err(TRIE_NODES))?;
                self.written.push(Written::Node(key.as_slice().to_vec()));
            }
        }
        Ok(())
    }
}

/// A failed write (or read while writing) of `what` into the store at `path`.
fn write_err<'p, E: Into<ReadError>>(
    path: &'p Path,
    what: &'static str,
) -> impl Fn(E) -> StoreError + 'p {
    move |source| StoreError::Write {
        path: path.to_path_buf(),
        what,
        source: source.into(),
    }
}
