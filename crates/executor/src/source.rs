//! The state seam: where a pass reads pre-state values that it is not handed in memory.
//!
//! By default every pass of a [`Replay`] reads the dump's pre-state from memory, prepared
//! before the clock starts (pure execution). A [`StateSource`] replaces that with reads from
//! somewhere else inside the timed window — a state store on disk (`gigagas-state`, MDBX in
//! reth's flat layout), or any other engine — the way a client reads its database:
//!
//! - **with an access list** (a pass's `prefetch` and `pipelined` modes): before a batch runs, the values its access lists call for are read
//!   (by several readers at once) straight into the tables the replay reads. Each block's
//!   table is laid out from its list before the first such pass, outside every timed window,
//!   as the list itself is converted before it (`IoLayout`: the list's accounts, slots and
//!   writes in place, and the values earlier blocks of the segment wrote, which a client
//!   holds in memory); a read writes its value where a transaction will look for it, and no
//!   join follows the reads. Read beside execution (`beside`), the same reads fill each
//!   block's table while the batch runs, one block per reader at a time (`Replay::read_block`,
//!   ordered and published by the batch loop). What the list carries is the pass's
//!   [`BalDesign`]:
//!   - `keys` (EIP-7928 as specified): every key the block reads or writes is read;
//!   - `writes`: only the keys the block writes are read before the batch (their values at
//!     the start of the block set the gas of a store and are what verification compares);
//!     every other value is read on demand ([`OnDemand`]) when a transaction first needs it;
//!   - `full`: every key's value at the start of the block arrives with the block, encoded
//!     ([`gigagas_dump::FullAccessList`], built from the replay's own state before the first
//!     such pass); decoding it into the tables is inside the timed window, and only the code
//!     the list does not carry is read.
//! - **on demand** ([`OnDemand`] for the replay, [`SourceDb`] for the sequential client
//!   loop): each account, slot or code is read the first time a transaction needs it (no
//!   access list: the client baseline).
//!
//! Values that earlier blocks of the same segment wrote are not read from the source: a
//! client holds its own recent writes in memory. They come from the blocks' access lists
//! (each block's [`crate::Carried`]), so the source only ever answers with the
//! segment's pre-state.
//!
//! Readers are generic (`S: StateSource`): a pass over a concrete reader calls it without a
//! boxed trait call per read; `Box<dyn StateSource>` is a source too.

use crate::{
    prestate::{PreStateDb, StateError},
    replay::{Blocks, Replay, ReplayBlock},
};
use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use gigagas_dump::{FullAccessList, FullAccount};
use gigagas_grid::BalDesign;
use gigagas_trie::{Nibbles, NodeReader, TrieId};
use revm::{
    Database,
    bytecode::Bytecode,
    primitives::KECCAK_EMPTY,
    state::{AccountInfo, bal::Bal},
};
use rustc_hash::FxHashMap;
use std::{
    sync::{
        Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::Instant,
};

/// Where a pass commits each block once its root is computed (`--persist`): the block's
/// changes ([`gigagas_trie::BlockChanges`]: its plain state and its tries' nodes by path),
/// written as a client commits a block: at once, in one write each, or handed to a writer
/// of its own that commits them later in groups. Called from whichever worker finished the
/// block's root (the sequential loop: its one thread), one block at a time per segment;
/// the sink orders the writes of several segments itself. A failed write fails the block's
/// root.
pub trait BlockSink: Sync + std::fmt::Debug {
    /// Writes block `block` (index into the replay's blocks) of segment `segment`, or
    /// hands it to a writer (then what the call took is the block's wait on it).
    fn write_block(
        &self,
        segment: usize,
        block: usize,
        changes: gigagas_trie::BlockChanges,
    ) -> Result<BlockWritten, StateError>;
}

/// What one block's write put into the store, as the sink measures it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockWritten {
    /// Blocks the call committed: 1 where it wrote the block, 0 where it handed it to a
    /// writer that commits it later.
    pub blocks: u32,
    /// Bytes of the keys and values written (and of the keys deleted), encoded.
    pub bytes: u64,
    /// Pages the write dirtied.
    pub pages: u64,
}

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
    /// The bytecode with this hash, analysed and ready to run (a store that keeps the
    /// analysis, as reth's and gigagas's do, spares every read the analysis), `None` if the
    /// source does not hold it.
    fn code(&mut self, code_hash: B256) -> Result<Option<Bytecode>, StateError>;

    /// The witness trie nodes of `segment` at `paths` (sorted) of `trie` (what the
    /// state-root phase of a store run reads as each block needs them): appends one entry
    /// per path to `out`, `None` where the source holds no node; a source without trie
    /// nodes holds none.
    fn trie_nodes(
        &mut self,
        segment: usize,
        trie: TrieId,
        paths: &[Nibbles],
        out: &mut Vec<Option<Bytes>>,
    ) -> Result<(), StateError> {
        let _ = (segment, trie);
        out.extend(paths.iter().map(|_| None));
        Ok(())
    }

    /// Reads ahead, keeping none, the witness trie nodes of `segment` on the path to `key`
    /// (a hashed account or slot) of `trie`: what a batch's read does for every key its
    /// blocks change, so that the state root's reads of those nodes
    /// ([`StateSource::trie_nodes`]) find them in memory. Returns how many nodes it met; a
    /// source without trie nodes, or one held in memory, meets none.
    fn read_ahead_trie_path(
        &mut self,
        segment: usize,
        trie: TrieId,
        key: &B256,
    ) -> Result<u32, StateError> {
        let _ = (segment, trie, key);
        Ok(0)
    }
}

/// A source behind a pointer reads through it: a boxed source (one dynamic call per read
/// for `Box<dyn StateSource>`) and a borrowed one.
macro_rules! through_pointer {
    ($($pointer:ty),*) => {$(
        impl<S: StateSource + ?Sized> StateSource for $pointer {
            fn account(&mut self, s: usize, a: Address) -> Result<Option<AccountInfo>, StateError> {
                (**self).account(s, a)
            }

            fn storage(&mut self, s: usize, a: Address, slot: U256) -> Result<U256, StateError> {
                (**self).storage(s, a, slot)
            }

            fn code(&mut self, code_hash: B256) -> Result<Option<Bytecode>, StateError> {
                (**self).code(code_hash)
            }

            fn trie_nodes(
                &mut self,
                s: usize,
                trie: TrieId,
                paths: &[Nibbles],
                out: &mut Vec<Option<Bytes>>,
            ) -> Result<(), StateError> {
                (**self).trie_nodes(s, trie, paths, out)
            }

            fn read_ahead_trie_path(
                &mut self,
                s: usize,
                trie: TrieId,
                key: &B256,
            ) -> Result<u32, StateError> {
                (**self).read_ahead_trie_path(s, trie, key)
            }
        }
    )*};
}

through_pointer!(Box<S>, &mut S);

/// The source of a runner whose state is in memory ([`crate::Parallel::new`],
/// [`crate::Sequential::new`]): it has no value, so nothing can read from it.
#[derive(Debug)]
pub enum NoSource {}

impl StateSource for NoSource {
    fn account(&mut self, _: usize, _: Address) -> Result<Option<AccountInfo>, StateError> {
        match *self {}
    }

    fn storage(&mut self, _: usize, _: Address, _: U256) -> Result<U256, StateError> {
        match *self {}
    }

    fn code(&mut self, _: B256) -> Result<Option<Bytecode>, StateError> {
        match *self {}
    }
}

/// The tables a pass reading from a source fills, laid out once per replay from the access
/// lists, before the first such pass (outside every timed window), and cloned for each
/// pass: per block, its base with every key of its list in place and no value but those
/// earlier blocks of the segment wrote, and the order in which a read walks the keys.
#[derive(Debug)]
pub(crate) struct IoLayout {
    /// The first block laid out.
    first: usize,
    /// Blocks `first..`, in order.
    blocks: Vec<BlockLayout>,
}

/// What a read before a batch fills its tables from: the layout, and with the `full`
/// design each block's encoded list (empty otherwise).
#[derive(Clone, Copy)]
pub(crate) struct ReadInputs<'a> {
    pub(crate) layout: &'a IoLayout,
    pub(crate) full_lists: &'a [Vec<u8>],
    /// Whether the read also reads ahead the trie nodes on the paths of what each block
    /// changes (a pass whose state root reads its nodes from the store).
    pub(crate) trie_paths: bool,
}

/// What one read of a batch's tables took ([`Replay::read_tables`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TableRead {
    /// Reading, nanoseconds.
    pub(crate) read_ns: u64,
    /// Decoding `full` lists, nanoseconds.
    pub(crate) build_ns: u64,
    /// The readers' threads' major page faults while they read their shares, summed: the
    /// pages the device read for the batch.
    pub(crate) major_faults: u64,
}

/// One block of an [`IoLayout`].
#[derive(Debug)]
struct BlockLayout {
    /// The block's base: its table laid out, the values carried from earlier blocks of its
    /// segment filled in, every other value empty.
    blank: PreStateDb,
    /// Per account of the list (by index), its position in the list's order (account by
    /// account, each followed by its slots, ascending): the order a read walks, so that one
    /// reader reads neighbouring keys.
    account_rank: Vec<u32>,
    /// For the table's slots in the order of its map ([`crate::prestate::BlockTable::
    /// slot_keys`]), each one's position in the list's order.
    slot_rank: Vec<u32>,
    /// Per account of the list, whether the block writes its balance, nonce or code.
    account_written: Vec<bool>,
    /// Accounts and slots in the list.
    keys: usize,
}

/// One value a read fetches, and where it goes: into a block's table.
enum Task<'t> {
    /// An account (and its code).
    Account {
        segment: u32,
        address: Address,
        into: &'t mut Option<Option<AccountInfo>>,
    },
    /// A slot's value.
    Slot {
        segment: u32,
        address: Address,
        slot: U256,
        into: &'t mut Option<U256>,
    },
    /// The code of an account whose fields are known (decoded from a `full` list).
    Code { info: &'t mut AccountInfo },
    /// The trie nodes on the path of an account the batch changes (`slot` `None`) or of
    /// a slot it writes, read ahead of the state root
    /// ([`StateSource::read_ahead_trie_path`]).
    TriePath {
        segment: u32,
        address: Address,
        slot: Option<U256>,
    },
}

impl Task<'_> {
    /// Where the read lies in the store's key order: address, then segment (the store's
    /// key is address ++ segment), then the account before its slots, slots ascending. Codes
    /// (keyed by hash in their own table; only `full` reads them alone) keep their order.
    fn store_order(&self) -> (Address, u32, Option<U256>) {
        match self {
            Task::Account {
                segment, address, ..
            } => (*address, *segment, None),
            Task::Slot {
                segment,
                address,
                slot,
                ..
            } => (*address, *segment, Some(*slot)),
            Task::Code { .. } => (Address::ZERO, 0, None),
            Task::TriePath {
                segment,
                address,
                slot,
            } => (*address, *segment, *slot),
        }
    }
}

/// A `full` list that does not describe its block: decoding it failed, or it names other
/// accounts or slots than the block's access list (the source of a
/// [`StateError::Source`]).
#[derive(Debug, thiserror::Error)]
pub enum FullListError {
    /// The bytes are not a `full` list.
    #[error("block {block}: the full access list does not decode: {source}")]
    Decode {
        /// Block number.
        block: u64,
        /// The RLP error.
        source: alloy_rlp::Error,
    },
    /// The list's accounts are not the block's.
    #[error(
        "block {block}: the full access list's account {index} is {found}, the block's list has {expected}"
    )]
    Account {
        /// Block number.
        block: u64,
        /// Position in the list.
        index: usize,
        /// The block's account there (`no more`: the list is longer).
        expected: String,
        /// The list's (`no more`: the list is shorter).
        found: String,
    },
    /// The list names a slot the block's list does not.
    #[error(
        "block {block}: the full access list names slot {slot:#x} of {address}, which the block's list does not"
    )]
    Slot {
        /// Block number.
        block: u64,
        /// The account.
        address: Address,
        /// The slot.
        slot: U256,
    },
}

impl IoLayout {
    /// The tables of `blocks` laid out from their access lists, with `carried` (per block
    /// of `blocks`, in order: what earlier blocks of its segment wrote,
    /// [`crate::CarriedCursor`]) in place. Built before a pass's window, never inside one.
    pub(crate) fn new(
        replay: &Replay,
        blocks: &Blocks<'_>,
        carried: &[impl std::borrow::Borrow<crate::Carried>],
    ) -> Self {
        Self {
            first: blocks.range().start,
            blocks: blocks
                .iter()
                .zip(carried)
                .map(|((b, block), carried)| Self::block(replay, b, block, carried.borrow()))
                .collect(),
        }
    }

    /// [`IoLayout::new`] over every block of `replay` (walked a few at a time when it
    /// keeps none).
    pub(crate) fn of_all(
        replay: &Replay,
        carried: &[crate::Carried],
    ) -> Result<Self, crate::replay::BlockReadError> {
        let blocks = replay.collect_blocks(0..replay.block_count(), |b, block| {
            Ok(Self::block(replay, b, block, &carried[b]))
        })?;
        Ok(Self { first: 0, blocks })
    }

    /// Block `b`'s base before anything is read for it: its table laid out, the values
    /// earlier blocks of its segment wrote in place, the rest empty.
    pub(crate) fn blank(&self, b: usize) -> PreStateDb {
        self.of(b).blank.clone()
    }

    /// Block `b`'s layout (a block this layout holds).
    fn of(&self, b: usize) -> &BlockLayout {
        &self.blocks[b - self.first]
    }

    fn block(
        replay: &Replay,
        b: usize,
        block: &ReplayBlock,
        carried: &crate::Carried,
    ) -> BlockLayout {
        let pre = &replay.segments[replay.segment_of(b)].pre;
        let mut accounts: FxHashMap<Address, Option<AccountInfo>> = carried
            .accounts()
            .map(|(address, info)| (*address, info.clone()))
            .collect();
        for info in accounts.values_mut().flatten() {
            info.code = Some(if info.code_hash == KECCAK_EMPTY {
                Bytecode::default()
            } else {
                // Code an earlier block deployed, or the segment's: in memory either way.
                match info.code.take().filter(|c| !c.is_empty()) {
                    Some(code) => code,
                    None => pre.code(info.code_hash).unwrap_or_default(),
                }
            });
        }
        let storage = carried.slots().map(|(key, v)| (*key, *v)).collect();
        let blank = PreStateDb::from_values(accounts, storage, pre).block_base(&block.bal);
        let mut rank = 0u32;
        let mut account_rank = Vec::with_capacity(block.bal.accounts.len());
        let mut account_written = Vec::with_capacity(block.bal.accounts.len());
        let mut slot_ranks = FxHashMap::default();
        for (id, account) in block.bal.accounts.values().enumerate() {
            account_rank.push(rank);
            rank += 1;
            let info = &account.account_info;
            account_written.push(
                !info.balance.writes.is_empty()
                    || !info.nonce.writes.is_empty()
                    || !info.code.writes.is_empty(),
            );
            for slot in account.storage.storage.keys() {
                slot_ranks.insert((id as u32, *slot), rank);
                rank += 1;
            }
        }
        let slot_rank = blank
            .table(block.bal.accounts.len())
            .expect("a block base has its table")
            .slot_keys()
            .map(|key| slot_ranks[&key])
            .collect();
        BlockLayout {
            blank,
            account_rank,
            slot_rank,
            account_written,
            keys: rank as usize,
        }
    }
}

impl Replay {
    /// Each block's `full` list, encoded (built before a pass of that design, never inside
    /// a timed window).
    pub(crate) fn encode_full_lists(&self) -> Result<Vec<Vec<u8>>, crate::replay::BlockReadError> {
        let mut cursor = crate::BaseCursor::new(self);
        self.collect_blocks(0..self.block_count(), |b, block| {
            let base = match self.resident_bases() {
                Some(bases) => std::borrow::Cow::Borrowed(&bases[b]),
                None => std::borrow::Cow::Owned(cursor.base(b, block)?),
            };
            Ok(self.full_list(block, &base).encode_to_vec())
        })
    }

    /// `block`'s `full` access list ([`gigagas_dump::designs`]): its EIP-7928 list with
    /// every key's value at the start of the block, taken from `base`, the block's base in
    /// memory. The same list (and encoding) as the dump crate builds from the dump.
    pub fn full_list(&self, block: &ReplayBlock, base: &PreStateDb) -> FullAccessList {
        use revm::DatabaseRef;
        let bal = Bal::clone(&block.bal).into_alloy_bal();
        FullAccessList(
            bal.into_iter()
                .map(|a| {
                    let address = a.address;
                    let slot = |slot: U256| base.storage_ref(address, slot).unwrap_or_default();
                    FullAccount {
                        address,
                        storage_changes: a
                            .storage_changes
                            .into_iter()
                            .map(|s| gigagas_dump::designs::FullSlotChanges {
                                slot: s.slot,
                                pre_value: slot(s.slot),
                                changes: s.changes,
                            })
                            .collect(),
                        storage_reads: a
                            .storage_reads
                            .into_iter()
                            .map(|s| gigagas_dump::designs::SlotRead {
                                slot: s,
                                value: slot(s),
                            })
                            .collect(),
                        balance_changes: a.balance_changes,
                        nonce_changes: a.nonce_changes,
                        code_changes: a.code_changes,
                        pre: base.basic_ref(address).ok().flatten().map(|info| {
                            gigagas_dump::designs::PreAccountFields {
                                balance: info.balance,
                                nonce: info.nonce,
                                code_hash: info.code_hash,
                            }
                        }),
                    }
                })
                .collect(),
        )
    }

    /// Fill `tables` (each block of the batch `blocks` with its blank base,
    /// [`IoLayout::blank`]) with what `design` reads before the batch runs, from `readers`
    /// (all but the first on `pool`'s threads; decoding the `full` lists of `inputs` first
    /// for that design). Returns the time reading and decoding took, nanoseconds, and the
    /// device reads the readers made (their threads' major page faults while reading).
    pub(crate) fn read_tables<'t, S: StateSource + ?Sized>(
        &self,
        design: BalDesign,
        inputs: ReadInputs<'_>,
        blocks: &Blocks<'_>,
        tables: impl Iterator<Item = (usize, &'t mut PreStateDb)>,
        readers: &mut [&mut S],
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<TableRead, StateError> {
        let start = Instant::now();
        let mut build_ns = 0;
        let mut tasks = Vec::new();
        for (b, table) in tables {
            let decoding = Instant::now();
            self.block_tasks(design, inputs, b, blocks.get(b), table, &mut tasks)?;
            if design == BalDesign::Full {
                build_ns += decoding.elapsed().as_nanos() as u64;
            }
        }
        // Each block's reads are in key order already; merged over the batch's blocks, one
        // address's reads in every segment lie side by side in the store, so a reader's
        // cursor finds the next key on the leaf page it is on (MDBX then skips the walk from
        // the root). A stable sort merges the blocks' sorted runs (one run: one pass over it).
        tasks.sort_by_key(Task::store_order);
        if inputs.trie_paths {
            // After the state, shared out like it (the last readers' shares), each path
            // once however many of the batch's blocks change its key.
            let mut paths = Vec::new();
            for b in blocks.range() {
                trie_paths_of(self.segment_of(b) as u32, blocks.get(b), &mut paths);
            }
            paths.sort_by_key(Task::store_order);
            paths.dedup_by_key(|t| t.store_order());
            tasks.append(&mut paths);
        }
        let major_faults = read_all(readers, &mut tasks, pool)?;
        drop(tasks);
        let total = start.elapsed().as_nanos() as u64;
        Ok(TableRead {
            read_ns: total.saturating_sub(build_ns),
            build_ns,
            major_faults,
        })
    }

    /// The reads that fill block `b`'s blank `table` as `design` reads it (a `full` list
    /// decoded into the table first), appended to `tasks` in the list's order.
    fn block_tasks<'t>(
        &self,
        design: BalDesign,
        inputs: ReadInputs<'_>,
        b: usize,
        block: &ReplayBlock,
        table: &'t mut PreStateDb,
        tasks: &mut Vec<Task<'t>>,
    ) -> Result<(), StateError> {
        match design {
            BalDesign::Full => self.decode_full(b, &inputs.full_lists[b], table, tasks),
            BalDesign::Keys | BalDesign::Writes => {
                let writes_only = design == BalDesign::Writes;
                self.tasks_of(inputs.layout, b, block, writes_only, table, tasks);
                Ok(())
            }
        }
    }

    /// Fill block `b`'s blank `table` with what `design` reads for it, from `reader` alone,
    /// in the store's key order (a read beside execution: one reader per block, its
    /// `full` list decoded inside the read); `codes` holds the codes this reader read so far.
    pub(crate) fn read_block<S: StateSource + ?Sized>(
        &self,
        design: BalDesign,
        inputs: ReadInputs<'_>,
        (b, block): (usize, &ReplayBlock),
        table: &mut PreStateDb,
        reader: &mut S,
        codes: &mut FxHashMap<B256, Bytecode>,
    ) -> Result<(), StateError> {
        let mut tasks = Vec::new();
        self.block_tasks(design, inputs, b, block, table, &mut tasks)?;
        tasks.sort_by_key(Task::store_order);
        read_tasks(reader, &mut tasks, codes)
    }

    /// Read ahead, from `reader`, the trie paths of what block `b` changes (as a read
    /// before a batch does after its state).
    pub(crate) fn read_block_paths<S: StateSource + ?Sized>(
        &self,
        (b, block): (usize, &ReplayBlock),
        reader: &mut S,
    ) -> Result<(), StateError> {
        let mut paths = Vec::new();
        trie_paths_of(self.segment_of(b) as u32, block, &mut paths);
        paths.sort_by_key(Task::store_order);
        read_tasks(reader, &mut paths, &mut FxHashMap::default())
    }

    /// The reads that fill block `b`'s blank `table` (every empty value, or, with
    /// `writes_only`, those of the keys the block writes), in the list's order.
    fn tasks_of<'t>(
        &self,
        layout: &IoLayout,
        b: usize,
        block: &ReplayBlock,
        writes_only: bool,
        table: &'t mut PreStateDb,
        tasks: &mut Vec<Task<'t>>,
    ) {
        let layout = layout.of(b);
        let bal = &block.bal;
        let segment = self.segment_of(b) as u32;
        let (accounts, slots) = table
            .table_mut()
            .expect("a blank base has its table")
            .values_mut();
        let mut placed: Vec<Option<Task<'t>>> = (0..layout.keys).map(|_| None).collect();
        for (id, (address, into)) in accounts.iter_mut().enumerate() {
            if into.is_none() && (!writes_only || layout.account_written[id]) {
                placed[layout.account_rank[id] as usize] = Some(Task::Account {
                    segment,
                    address: *address,
                    into,
                });
            }
        }
        for (i, (id, slot, written, into)) in slots.into_iter().enumerate() {
            if into.is_none() && (!writes_only || written) {
                let (address, _) = bal
                    .accounts
                    .get_index(id as usize)
                    .expect("a table's slot belongs to an account of its list");
                placed[layout.slot_rank[i] as usize] = Some(Task::Slot {
                    segment,
                    address: *address,
                    slot,
                    into,
                });
            }
        }
        tasks.extend(placed.into_iter().flatten());
    }

    /// Decode block `b`'s `full` list (`bytes`) into its blank `table`; the code of every
    /// account the list gives with code (and that no earlier block of the segment wrote)
    /// becomes a read.
    fn decode_full<'t>(
        &self,
        b: usize,
        bytes: &[u8],
        table: &'t mut PreStateDb,
        tasks: &mut Vec<Task<'t>>,
    ) -> Result<(), StateError> {
        use alloy_rlp::Decodable;
        let block = self.header(b).number;
        let list = FullAccessList::decode(&mut &*bytes)
            .map_err(|source| StateError::from_source(FullListError::Decode { block, source }))?;
        let (accounts, mut slots) = table
            .table_mut()
            .expect("a blank base has its table")
            .values_mut();
        if list.0.len() != accounts.len() {
            let index = list.0.len().min(accounts.len());
            return Err(StateError::from_source(FullListError::Account {
                block,
                index,
                expected: accounts
                    .get(index)
                    .map_or("no more".into(), |(a, _)| a.to_string()),
                found: list
                    .0
                    .get(index)
                    .map_or("no more".into(), |a| a.address.to_string()),
            }));
        }
        for (id, ((address, into), account)) in accounts.iter_mut().zip(list.0).enumerate() {
            if *address != account.address {
                return Err(StateError::from_source(FullListError::Account {
                    block,
                    index: id,
                    expected: address.to_string(),
                    found: account.address.to_string(),
                }));
            }
            for (slot, value) in account.pre_slots() {
                let into = slots.get_mut(id as u32, slot).ok_or_else(|| {
                    StateError::from_source(FullListError::Slot {
                        block,
                        address: *address,
                        slot,
                    })
                })?;
                // A value carried from an earlier block is the same; memory's is kept.
                into.get_or_insert(value);
            }
            if into.is_none() {
                *into = Some(account.pre.map(|pre| AccountInfo {
                    balance: pre.balance,
                    nonce: pre.nonce,
                    code_hash: pre.code_hash,
                    code: (pre.code_hash == KECCAK_EMPTY).then(Bytecode::default),
                    ..Default::default()
                }));
                if let Some(Some(info)) = into
                    && info.code.is_none()
                {
                    tasks.push(Task::Code { info });
                }
            }
        }
        Ok(())
    }
}

/// The trie paths block `block` (of segment `segment`) changes, as [`Task::TriePath`]s:
/// each account its access list changes, and each slot it writes; none for a block whose
/// segment has no witness (it gets no root).
fn trie_paths_of(segment: u32, block: &ReplayBlock, tasks: &mut Vec<Task<'_>>) {
    let Some(list) = &block.root_list else { return };
    for account in list.iter() {
        let changed = !(account.balance_changes.is_empty()
            && account.nonce_changes.is_empty()
            && account.code_changes.is_empty()
            && account.storage_changes.is_empty());
        if changed {
            tasks.push(Task::TriePath {
                segment,
                address: account.address,
                slot: None,
            });
        }
        tasks.extend(account.storage_changes.iter().map(|s| Task::TriePath {
            segment,
            address: account.address,
            slot: Some(s.slot),
        }));
    }
}

/// Run `tasks` on `readers`, split evenly between them ([`on_readers`]); the first failed
/// read is the error. Returns the device reads they made: the major page faults of each
/// reader's thread while it read its share (two `getrusage` calls per share), summed.
fn read_all<S: StateSource + ?Sized>(
    readers: &mut [&mut S],
    tasks: &mut [Task<'_>],
    pool: Option<&rayon::ThreadPool>,
) -> Result<u64, StateError> {
    if tasks.is_empty() {
        return Ok(0);
    }
    if readers.is_empty() {
        return Err(StateError::NoReader);
    }
    let per = tasks.len().div_ceil(readers.len());
    let shares = on_readers(readers, tasks.chunks_mut(per), pool, |r, chunk| {
        let before = crate::window::thread_major_faults();
        let read = read_into(r, chunk);
        (
            read,
            crate::window::thread_major_faults().saturating_sub(before),
        )
    });
    let mut faults = 0;
    for (read, share_faults) in shares {
        read?;
        faults += share_faults;
    }
    Ok(faults)
}

/// `read` of each of `shares` with its reader, in order: the first share on the calling
/// thread, each other on a thread of `pool` (started before any timed window:
/// [`crate::pool::readers`]; `None` with one reader: every share on the calling thread, in
/// turn). Shares past the readers' count are not read.
pub(crate) fn on_readers<S: StateSource + ?Sized, C: Send, R: Send>(
    readers: &mut [&mut S],
    shares: impl Iterator<Item = C>,
    pool: Option<&rayon::ThreadPool>,
    read: impl Fn(&mut S, C) -> R + Sync,
) -> Vec<R> {
    let mut shares = shares.zip(readers.iter_mut());
    let Some((first_share, first_reader)) = shares.next() else {
        return Vec::new();
    };
    let read = &read;
    let mut results: Vec<Option<R>> = Vec::new();
    let first = match pool {
        Some(pool) => {
            let others: Vec<_> = shares.collect();
            results.resize_with(others.len(), || None);
            pool.in_place_scope(|scope| {
                for ((share, reader), slot) in others.into_iter().zip(results.iter_mut()) {
                    scope.spawn(move |_| *slot = Some(read(&mut **reader, share)));
                }
                read(&mut **first_reader, first_share)
            })
        }
        None => {
            results.extend(shares.map(|(share, reader)| Some(read(&mut **reader, share))));
            read(&mut **first_reader, first_share)
        }
    };
    std::iter::once(first)
        .chain(
            results
                .into_iter()
                .map(|r| r.expect("every share was read")),
        )
        .collect()
}

/// One reader's share of a batch's reads, each value written where its task points.
fn read_into<S: StateSource + ?Sized>(
    reader: &mut S,
    tasks: &mut [Task<'_>],
) -> Result<(), StateError> {
    // The codes this reader read for the batch (one read per code, however many accounts).
    read_tasks(reader, tasks, &mut FxHashMap::default())
}

/// `tasks` read from `reader`, each value written where its task points; `codes` the codes
/// this reader read before (and those it reads now, added).
fn read_tasks<S: StateSource + ?Sized>(
    reader: &mut S,
    tasks: &mut [Task<'_>],
    codes: &mut FxHashMap<B256, Bytecode>,
) -> Result<(), StateError> {
    for task in tasks {
        match task {
            Task::Account {
                segment,
                address,
                into,
            } => {
                let mut info = reader.account(*segment as usize, *address)?;
                if let Some(info) = &mut info {
                    info.code = Some(code_of(reader, codes, info.code_hash)?);
                }
                **into = Some(info);
            }
            Task::Slot {
                segment,
                address,
                slot,
                into,
            } => **into = Some(reader.storage(*segment as usize, *address, *slot)?),
            Task::Code { info } => info.code = Some(code_of(reader, codes, info.code_hash)?),
            Task::TriePath {
                segment,
                address,
                slot,
            } => {
                let (trie, key) = match slot {
                    None => (TrieId::Account, keccak256(address)),
                    Some(slot) => (TrieId::Storage(*address), keccak256(B256::from(*slot))),
                };
                reader.read_ahead_trie_path(*segment as usize, trie, &key)?;
            }
        }
    }
    Ok(())
}

/// The analysed code with this hash: empty, read before by this reader, or read now.
fn code_of<S: StateSource + ?Sized>(
    reader: &mut S,
    codes: &mut FxHashMap<B256, Bytecode>,
    code_hash: B256,
) -> Result<Bytecode, StateError> {
    if code_hash == KECCAK_EMPTY {
        return Ok(Bytecode::default());
    }
    if let Some(code) = codes.get(&code_hash) {
        return Ok(code.clone());
    }
    let code = reader
        .code(code_hash)?
        .ok_or(StateError::MissingCode(code_hash))?;
    codes.insert(code_hash, code.clone());
    Ok(code)
}

/// The sequential loop's database over a [`StateSource`]: reads on demand, the first time
/// revm's `State` asks (the `State` caches what it loaded for the rest of the segment).
/// Block hashes come from the dump in memory (not state).
pub struct SourceDb<'a, S: StateSource + ?Sized> {
    pub(crate) source: &'a mut S,
    segment: usize,
    hashes: &'a PreStateDb,
}

impl<S: StateSource + ?Sized> std::fmt::Debug for SourceDb<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceDb")
            .field("segment", &self.segment)
            .finish_non_exhaustive()
    }
}

impl<'a, S: StateSource + ?Sized> SourceDb<'a, S> {
    /// Segment `segment`'s state from `source`, block hashes from `hashes` (its in-memory
    /// pre-state).
    pub fn new(source: &'a mut S, segment: usize, hashes: &'a PreStateDb) -> Self {
        Self {
            source,
            segment,
            hashes,
        }
    }
}

impl<S: StateSource + ?Sized> Database for SourceDb<'_, S> {
    type Error = StateError;

    fn basic(&mut self, address: Address) -> Result<Option<AccountInfo>, StateError> {
        // No code with the account: revm's `State` then reads it by hash, on demand.
        Ok(without_code(self.source.account(self.segment, address)?))
    }

    fn code_by_hash(&mut self, code_hash: B256) -> Result<Bytecode, StateError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        self.source
            .code(code_hash)?
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

/// One segment's trie nodes, read from a state source as its roots need them (a store
/// run), and the time spent inside the reads: the [`NodeReader`] of every root that reads
/// its nodes, the client loop's (on its own source) and a pass's units' (on a free reader
/// of the pass's, [`OnDemandPass`]).
pub(crate) struct SegmentNodes<'a> {
    /// [`StateSource::trie_nodes`] of the segment.
    #[allow(clippy::type_complexity)] // NodeReader::read_nodes's signature, once.
    pub(crate) source:
        &'a mut dyn FnMut(TrieId, &[Nibbles], &mut Vec<Option<Bytes>>) -> Result<(), StateError>,
    /// Time spent inside reads so far, nanoseconds.
    pub(crate) ns: u64,
}

impl NodeReader for SegmentNodes<'_> {
    type Error = StateError;

    fn read_nodes(
        &mut self,
        trie: TrieId,
        paths: &[Nibbles],
        out: &mut Vec<Option<Bytes>>,
    ) -> Result<(), StateError> {
        let start = Instant::now();
        let result = (self.source)(trie, paths, out);
        self.ns += start.elapsed().as_nanos() as u64;
        result
    }
}

/// A replay pass's readers, and what it read on demand: each account, slot and code is read
/// from one of the readers the first time any transaction of the pass needs it, then held
/// for the rest of the pass (a client's cache), while the writes of earlier transactions
/// still come from the access list. What a replay without an access list does, and what a
/// replay whose list names only the writes does for every other key. A read before a batch
/// takes every reader ([`OnDemandPass::lock_all`]).
pub struct OnDemandPass<'s, S> {
    readers: Vec<Mutex<&'s mut S>>,
    accounts: Mutex<FxHashMap<(usize, Address), Option<AccountInfo>>>,
    slots: Mutex<FxHashMap<(usize, Address, U256), U256>>,
    codes: Mutex<FxHashMap<B256, Bytecode>>,
    read_ns: AtomicU64,
}

impl<S> std::fmt::Debug for OnDemandPass<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnDemandPass")
            .field("readers", &self.readers.len())
            .finish_non_exhaustive()
    }
}

impl<'s, S: StateSource> OnDemandPass<'s, S> {
    /// A pass reading from `readers` (shared by the workers: a worker takes a free one).
    pub fn new(readers: &'s mut [S]) -> Self {
        Self {
            readers: readers.iter_mut().map(Mutex::new).collect(),
            accounts: Mutex::default(),
            slots: Mutex::default(),
            codes: Mutex::default(),
            read_ns: AtomicU64::new(0),
        }
    }

    /// How many readers the pass has.
    pub fn reader_count(&self) -> usize {
        self.readers.len()
    }

    /// The summed time spent inside reads on demand, nanoseconds (all workers).
    pub fn read_ns(&self) -> u64 {
        self.read_ns.load(Ordering::Relaxed)
    }

    /// Reader `i`, for one block of a read beside execution (a read on demand meanwhile
    /// takes another, or waits for it).
    pub(crate) fn lock(&self, i: usize) -> MutexGuard<'_, &'s mut S> {
        self.readers[i]
            .lock()
            .expect("no reader panics holding its lock")
    }

    /// Every reader, for a read before a batch (a read on demand meanwhile waits for one).
    pub fn lock_all(&self) -> Vec<MutexGuard<'_, &'s mut S>> {
        self.readers
            .iter()
            .map(|r| r.lock().expect("no reader panics holding its lock"))
            .collect()
    }

    /// Run `read` on a free reader (the first one free, else the first), timing it.
    fn read<T>(&self, read: impl FnOnce(&mut S) -> Result<T, StateError>) -> Result<T, StateError> {
        let start = Instant::now();
        let value = self.with_reader(read);
        self.read_ns
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        value
    }

    /// Run `read` on a free reader (the first one free, else the first), untimed (the
    /// root units' trie nodes: the root phase times its own reads).
    pub(crate) fn with_reader<T>(
        &self,
        read: impl FnOnce(&mut S) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut guard = self
            .readers
            .iter()
            .find_map(|r| r.try_lock().ok())
            .or_else(|| self.readers.first().and_then(|r| r.lock().ok()))
            .ok_or(StateError::NoReader)?;
        read(&mut **guard)
    }
}

/// Block `b`'s state at its start, read on demand through an [`OnDemandPass`]: what earlier
/// blocks of its segment wrote from memory (its [`crate::Carried`]), the rest from the
/// pass's sources.
pub struct OnDemand<'a, 's, S> {
    pass: &'a OnDemandPass<'s, S>,
    segment: usize,
    carried: std::borrow::Cow<'a, crate::Carried>,
    /// The segment's pre-state: its code deployed by blocks and its block hashes.
    pre: &'a PreStateDb,
}

impl<S> std::fmt::Debug for OnDemand<'_, '_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnDemand")
            .field("segment", &self.segment)
            .finish_non_exhaustive()
    }
}

impl<'a, 's, S: StateSource> OnDemand<'a, 's, S> {
    /// Block `b` of `replay` read through `pass`, `carried` what earlier blocks of its
    /// segment wrote ([`Replay::carried_values`], [`crate::CarriedCursor`]), borrowed or
    /// owned by the view.
    pub fn new(
        pass: &'a OnDemandPass<'s, S>,
        replay: &'a Replay,
        b: usize,
        carried: std::borrow::Cow<'a, crate::Carried>,
    ) -> Self {
        let segment = replay.segment_of(b);
        Self {
            pass,
            segment,
            carried,
            pre: &replay.segments()[segment].pre,
        }
    }
}

impl<S: StateSource> crate::view::Pre for OnDemand<'_, '_, S> {}

impl<S: StateSource> revm::DatabaseRef for OnDemand<'_, '_, S> {
    type Error = StateError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, StateError> {
        if let Some(info) = self.carried.account(&address) {
            return Ok(info.clone());
        }
        cached(&self.pass.accounts, (self.segment, address), || {
            // No code with the account: the view reads it by hash, on demand.
            Ok(without_code(
                self.pass.read(|r| r.account(self.segment, address))?,
            ))
        })
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, StateError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        cached(&self.pass.codes, code_hash, || {
            match self.pass.read(|r| r.code(code_hash))? {
                Some(code) => Ok(code),
                // Deployed by a block of the segment: the access lists carry it.
                None => self
                    .pre
                    .code(code_hash)
                    .ok_or(StateError::MissingCode(code_hash)),
            }
        })
    }

    fn storage_ref(&self, address: Address, slot: U256) -> Result<U256, StateError> {
        if let Some(v) = self.carried.slot(&address, &slot) {
            return Ok(v);
        }
        cached(&self.pass.slots, (self.segment, address, slot), || {
            self.pass.read(|r| r.storage(self.segment, address, slot))
        })
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, StateError> {
        self.pre.block_hash_ref(number)
    }
}

/// `key`'s value in `cache` (what a pass read on demand so far), else `read` and kept there.
fn cached<K: Eq + std::hash::Hash, V: Clone>(
    cache: &Mutex<FxHashMap<K, V>>,
    key: K,
    read: impl FnOnce() -> Result<V, StateError>,
) -> Result<V, StateError> {
    if let Some(value) = cache.lock().expect("no panic holding it").get(&key) {
        return Ok(value.clone());
    }
    let value = read()?;
    cache
        .lock()
        .expect("no panic holding it")
        .insert(key, value.clone());
    Ok(value)
}

/// `info` without its code, unless empty: a reader on demand reads the code by hash.
fn without_code(mut info: Option<AccountInfo>) -> Option<AccountInfo> {
    if let Some(info) = info.as_mut() {
        info.code = (info.code_hash == KECCAK_EMPTY).then(Bytecode::default);
    }
    info
}
