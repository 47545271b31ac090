//! The state seam: where a pass reads pre-state values that it is not handed in memory.
//!
//! By default every pass of a [`Replay`] reads the dump's pre-state from memory, prepared
//! before the clock starts (pure execution). A [`StateSource`] replaces that with reads from
//! somewhere else inside the timed window — a state store on disk (`gigagas-state`, MDBX in
//! reth's flat layout), or any other engine — the way a client reads its database:
//!
//! - **prefetch** ([`Replay::prefetch_bases`]): before a batch runs, every account, slot and
//!   code its access lists name is read (by several readers at once) and joined with the
//!   lists into the blocks' bases, the same tables the in-memory replay uses. This is what
//!   an EIP-7928 client can do: the list gives every key up front.
//! - **on demand** ([`SourceDb`]): the sequential client loop reads each account, slot or
//!   code from the source the first time its `State` needs it (it has no access list).
//!
//! Values that earlier blocks of the same segment wrote are not read from the source: a
//! client holds its own recent writes in memory. They come from the blocks' access lists
//! ([`Replay::carried`](crate::Replay::carried)), so the source only ever answers with the
//! segment's pre-state.

use crate::{
    prestate::{PreStateDb, StateError},
    replay::Replay,
};
use alloy_primitives::{Address, B256, Bytes, U256};
use revm::{Database, bytecode::Bytecode, primitives::KECCAK_EMPTY, state::AccountInfo};
use rustc_hash::FxHashMap;
use std::{
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Instant,
};

/// One reader of pre-state values, used by one thread at a time: revm's `Database` for a
/// dump's segments. `segment` is the index of a dump segment; each segment sees only its own
/// pre-state.
///
/// The one read trait of the state seam. A store implements it where both it and this
/// crate are visible (the MDBX store of `gigagas-state` in `gigagas-bench`'s `io`), so the
/// executor knows no store and a store no executor. A failed read is a
/// [`StateError::Source`] holding the store's own error ([`StateError::from_source`]).
pub trait StateSource: Send {
    /// The account (nonce, balance, code hash; its code is read with [`StateSource::code`]),
    /// `None` if it does not exist.
    fn account(
        &mut self,
        segment: usize,
        address: Address,
    ) -> Result<Option<AccountInfo>, StateError>;
    /// The slot's value (zero where nothing is stored).
    fn storage(&mut self, segment: usize, address: Address, slot: U256)
    -> Result<U256, StateError>;
    /// The bytecode with this hash, `None` if the source does not hold it.
    fn code(&mut self, code_hash: B256) -> Result<Option<Bytes>, StateError>;
}

/// What a prefetch read: per block of the batch, its base; and how long reading and
/// building took.
#[derive(Debug, Default)]
pub struct Prefetched {
    /// The base of each block of the batch, in block order.
    pub bases: Vec<PreStateDb>,
    /// Wall time of the reads (all readers together), nanoseconds.
    pub read_ns: u64,
    /// Wall time of joining the values with the access lists into the bases, nanoseconds.
    pub build_ns: u64,
}

/// The values read for one block's keys.
#[derive(Debug, Default)]
struct BlockValues {
    accounts: FxHashMap<Address, Option<AccountInfo>>,
    storage: FxHashMap<(Address, U256), U256>,
    codes: FxHashMap<B256, Bytecode>,
}

/// A key one reader reads: an account (and its code), or a slot.
#[derive(Debug, Clone, Copy)]
enum Key {
    Account(u32, Address),
    Slot(u32, Address, U256),
}

impl Replay {
    /// Read every account, slot and code that the access lists of `blocks` name from the
    /// `readers` (one thread each, keys split evenly between them; one reader reads on the
    /// calling thread), then build each block's base from those values (the values earlier
    /// blocks of the segment wrote taken from the access lists, not read).
    pub fn prefetch_bases(
        &self,
        blocks: std::ops::Range<usize>,
        readers: &mut [Box<dyn StateSource>],
    ) -> Result<Prefetched, StateError> {
        let start = Instant::now();
        let mut keys = Vec::new();
        for b in blocks.clone() {
            let block = &self.blocks()[b];
            let carried = self.carried(b);
            let local = (b - blocks.start) as u32;
            for (address, account) in block.bal.accounts.iter() {
                if carried.account(address).is_none() {
                    keys.push(Key::Account(local, *address));
                }
                for slot in account.storage.storage.keys() {
                    if carried.slot(address, slot).is_none() {
                        keys.push(Key::Slot(local, *address, *slot));
                    }
                }
            }
        }
        let n = blocks.len();
        let segment_of = |local: u32| self.segment_of(blocks.start + local as usize);
        let read_chunk = |reader: &mut Box<dyn StateSource>,
                          chunk: &[Key]|
         -> Result<Vec<BlockValues>, StateError> {
            let mut values: Vec<BlockValues> = (0..n).map(|_| BlockValues::default()).collect();
            for key in chunk {
                match *key {
                    Key::Account(b, address) => {
                        let seg = segment_of(b);
                        let info = reader.account(seg, address)?;
                        let v = &mut values[b as usize];
                        if let Some(info) = &info
                            && info.code_hash != KECCAK_EMPTY
                            && !v.codes.contains_key(&info.code_hash)
                        {
                            let code = reader
                                .code(info.code_hash)?
                                .ok_or(StateError::MissingCode(info.code_hash))?;
                            v.codes.insert(info.code_hash, Bytecode::new_raw(code));
                        }
                        v.accounts.insert(address, info);
                    }
                    Key::Slot(b, address, slot) => {
                        let value = reader.storage(segment_of(b), address, slot)?;
                        values[b as usize].storage.insert((address, slot), value);
                    }
                }
            }
            Ok(values)
        };
        let per = keys.len().div_ceil(readers.len().max(1)).max(1);
        let mut parts: Vec<Result<Vec<BlockValues>, StateError>> = Vec::new();
        std::thread::scope(|scope| {
            let mut chunks = keys.chunks(per);
            let mut readers = readers.iter_mut();
            let first = chunks.next().zip(readers.next());
            let handles: Vec<_> = chunks
                .zip(readers)
                .map(|(chunk, reader)| scope.spawn(move || read_chunk(reader, chunk)))
                .collect();
            if let Some((chunk, reader)) = first {
                parts.push(read_chunk(reader, chunk));
            }
            parts.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a prefetch reader panicked")),
            );
        });
        let read_ns = start.elapsed().as_nanos() as u64;
        let built = Instant::now();
        let mut merged: Vec<BlockValues> = (0..n).map(|_| BlockValues::default()).collect();
        for part in parts {
            for (into, from) in merged.iter_mut().zip(part?) {
                into.accounts.extend(from.accounts);
                into.storage.extend(from.storage);
                into.codes.extend(from.codes);
            }
        }
        let bases = blocks
            .zip(merged)
            .map(|(b, values)| self.base_from(b, values))
            .collect();
        Ok(Prefetched {
            bases,
            read_ns,
            build_ns: built.elapsed().as_nanos() as u64,
        })
    }

    /// Block `b`'s base from values read for its keys (and the values earlier blocks of its
    /// segment wrote, from their access lists): the same tables as its in-memory base.
    fn base_from(&self, b: usize, values: BlockValues) -> PreStateDb {
        let block = &self.blocks()[b];
        let carried = self.carried(b);
        // Code and block hashes: the segment's tables (every base of it shares them).
        let pre = &self.segments()[self.segment_of(b)].pre;
        let BlockValues {
            mut accounts,
            mut storage,
            codes,
        } = values;
        for (address, info) in carried.accounts() {
            accounts.insert(*address, info.clone());
        }
        for ((address, slot), value) in carried.slots() {
            storage.insert((*address, *slot), *value);
        }
        for info in accounts.values_mut().flatten() {
            info.code = Some(if info.code_hash == KECCAK_EMPTY {
                Bytecode::default()
            } else {
                // A source's account carries no code (revm's default is the empty code):
                // the code read for its hash, or the segment's (deployed by a block).
                match info.code.take().filter(|c| !c.is_empty()) {
                    Some(code) => code,
                    None => codes
                        .get(&info.code_hash)
                        .cloned()
                        .or_else(|| pre.code(info.code_hash))
                        .unwrap_or_default(),
                }
            });
        }
        PreStateDb::from_values(accounts, storage, pre).block_base(&block.bal)
    }
}

/// The sequential loop's database over a [`StateSource`]: reads on demand, the first time
/// revm's `State` asks (the `State` caches what it loaded for the rest of the segment).
/// Block hashes come from the dump in memory (not state).
pub struct SourceDb<'a> {
    source: &'a mut dyn StateSource,
    segment: usize,
    hashes: &'a PreStateDb,
}

impl std::fmt::Debug for SourceDb<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceDb")
            .field("segment", &self.segment)
            .finish_non_exhaustive()
    }
}

impl<'a> SourceDb<'a> {
    /// Segment `segment`'s state from `source`, block hashes from `hashes` (its in-memory
    /// pre-state).
    pub fn new(source: &'a mut dyn StateSource, segment: usize, hashes: &'a PreStateDb) -> Self {
        Self {
            source,
            segment,
            hashes,
        }
    }
}

impl Database for SourceDb<'_> {
    type Error = StateError;

    fn basic(&mut self, address: Address) -> Result<Option<AccountInfo>, StateError> {
        let mut info = self.source.account(self.segment, address)?;
        if let Some(info) = info.as_mut() {
            // No code with the account: revm's `State` then reads it by hash, on demand.
            info.code = (info.code_hash == KECCAK_EMPTY).then(Bytecode::default);
        }
        Ok(info)
    }

    fn code_by_hash(&mut self, code_hash: B256) -> Result<Bytecode, StateError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        self.source
            .code(code_hash)?
            .map(Bytecode::new_raw)
            .ok_or(StateError::MissingCode(code_hash))
    }

    fn storage(&mut self, address: Address, slot: U256) -> Result<U256, StateError> {
        self.source.storage(self.segment, address, slot)
    }

    fn block_hash(&mut self, number: u64) -> Result<B256, StateError> {
        use revm::DatabaseRef;
        self.hashes.block_hash_ref(number)
    }
}

/// A replay pass's state read on demand: each account, slot and code is read from one of
/// the pass's sources the first time any transaction of the pass needs it, then held for
/// the rest of the pass (a client's cache), while the writes of earlier transactions still
/// come from the access list. What a replay without prefetching does.
pub struct OnDemandPass<'s> {
    readers: Vec<Mutex<&'s mut Box<dyn StateSource>>>,
    accounts: Mutex<FxHashMap<(usize, Address), Option<AccountInfo>>>,
    slots: Mutex<FxHashMap<(usize, Address, U256), U256>>,
    codes: Mutex<FxHashMap<B256, Bytecode>>,
    read_ns: AtomicU64,
}

impl std::fmt::Debug for OnDemandPass<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnDemandPass")
            .field("readers", &self.readers.len())
            .finish_non_exhaustive()
    }
}

impl<'s> OnDemandPass<'s> {
    /// A pass reading from `readers` (shared by the workers: a worker takes a free one).
    pub fn new(readers: &'s mut [Box<dyn StateSource>]) -> Self {
        Self {
            readers: readers.iter_mut().map(Mutex::new).collect(),
            accounts: Mutex::default(),
            slots: Mutex::default(),
            codes: Mutex::default(),
            read_ns: AtomicU64::new(0),
        }
    }

    /// The summed time spent inside reads, nanoseconds (all workers).
    pub fn read_ns(&self) -> u64 {
        self.read_ns.load(Ordering::Relaxed)
    }

    /// Run `read` on a free reader (the first one free, else the first), timing it.
    fn read<T>(
        &self,
        read: impl FnOnce(&mut dyn StateSource) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let start = Instant::now();
        let mut guard = self
            .readers
            .iter()
            .find_map(|r| r.try_lock().ok())
            .or_else(|| self.readers.first().and_then(|r| r.lock().ok()))
            .ok_or(StateError::NoReader)?;
        let value = read(&mut ***guard);
        drop(guard);
        self.read_ns
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        value
    }
}

/// Block `b`'s state at its start, read on demand through an [`OnDemandPass`]: what earlier
/// blocks of its segment wrote from memory ([`Replay::carried`]), the rest from
/// the pass's sources.
#[derive(Debug)]
pub struct OnDemand<'a, 's> {
    pass: &'a OnDemandPass<'s>,
    segment: usize,
    carried: &'a crate::Carried,
    /// The segment's pre-state: its code deployed by blocks and its block hashes.
    pre: &'a PreStateDb,
}

impl<'a, 's> OnDemand<'a, 's> {
    /// Block `b` of `replay` read through `pass`.
    pub fn new(pass: &'a OnDemandPass<'s>, replay: &'a Replay, b: usize) -> Self {
        let segment = replay.segment_of(b);
        Self {
            pass,
            segment,
            carried: replay.carried(b),
            pre: &replay.segments()[segment].pre,
        }
    }
}

impl revm::DatabaseRef for OnDemand<'_, '_> {
    type Error = StateError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, StateError> {
        if let Some(info) = self.carried.account(&address) {
            return Ok(info.clone());
        }
        let key = (self.segment, address);
        if let Some(info) = self
            .pass
            .accounts
            .lock()
            .expect("no panic holding it")
            .get(&key)
        {
            return Ok(info.clone());
        }
        let mut info = self.pass.read(|r| r.account(self.segment, address))?;
        if let Some(info) = info.as_mut() {
            // No code with the account: the view reads it by hash, on demand.
            info.code = (info.code_hash == KECCAK_EMPTY).then(Bytecode::default);
        }
        self.pass
            .accounts
            .lock()
            .expect("no panic holding it")
            .insert(key, info.clone());
        Ok(info)
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, StateError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        if let Some(code) = self
            .pass
            .codes
            .lock()
            .expect("no panic holding it")
            .get(&code_hash)
        {
            return Ok(code.clone());
        }
        let code = match self.pass.read(|r| r.code(code_hash))? {
            Some(bytes) => Bytecode::new_raw(bytes),
            // Deployed by a block of the segment: the access lists carry it.
            None => self
                .pre
                .code(code_hash)
                .ok_or(StateError::MissingCode(code_hash))?,
        };
        self.pass
            .codes
            .lock()
            .expect("no panic holding it")
            .insert(code_hash, code.clone());
        Ok(code)
    }

    fn storage_ref(&self, address: Address, slot: U256) -> Result<U256, StateError> {
        if let Some(v) = self.carried.slot(&address, &slot) {
            return Ok(v);
        }
        let key = (self.segment, address, slot);
        if let Some(v) = self
            .pass
            .slots
            .lock()
            .expect("no panic holding it")
            .get(&key)
        {
            return Ok(*v);
        }
        let v = self.pass.read(|r| r.storage(self.segment, address, slot))?;
        self.pass
            .slots
            .lock()
            .expect("no panic holding it")
            .insert(key, v);
        Ok(v)
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, StateError> {
        self.pre.block_hash_ref(number)
    }
}
