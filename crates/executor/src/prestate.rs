//! The dump's pre-state as a compact in-memory store ([`PreStateDb`]), what earlier blocks
//! of a segment wrote ([`Carried`]), and the error of every state read ([`StateError`]).
//! This module depends on no other of the crate.

use alloy_primitives::{Address, B256, U256};
use gigagas_dump::Segment;
use revm::state::bal::{Bal, BlockAccessIndex};
use revm::{DatabaseRef, bytecode::Bytecode, primitives::KECCAK_EMPTY, state::AccountInfo};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// A read of state that failed: state the dump (or the block access list) does not
/// contain, or a [`StateSource`](crate::StateSource) that could not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// The account is not in the dump's pre-state (neither present nor recorded absent).
    #[error("account {0} is missing from the dump's pre-state")]
    MissingAccount(Address),
    /// The slot is not in the dump's pre-state.
    #[error("storage slot {slot:#x} of {address} is missing from the dump's pre-state")]
    MissingSlot {
        /// Account.
        address: Address,
        /// Slot.
        slot: U256,
    },
    /// Bytecode with this hash is neither in the pre-state nor in the access lists.
    #[error("bytecode {0} is missing from the dump")]
    MissingCode(B256),
    /// `BLOCKHASH` of a block the dump has no hash for.
    #[error("hash of block {0} is missing from the dump")]
    MissingBlockHash(u64),
    /// The account is not in the block access list.
    #[error("account {0} is read but is not in the block access list")]
    AccountNotInBal(Address),
    /// A [`StateSource`](crate::StateSource) failed to read: the source's own error (a
    /// store's I/O or decoding error) is this error's source, whole, so a caller can
    /// downcast it.
    #[error("state source: {0}")]
    Source(#[source] SourceError),
    /// A pass reading on demand was given no reader to read with.
    #[error("state source: the pass was given no reader")]
    NoReader,
    /// The slot is not in the block access list.
    #[error("storage slot {slot:#x} of {address} is read but is not in the block access list")]
    SlotNotInBal {
        /// Account.
        address: Address,
        /// Slot.
        slot: U256,
    },
}

impl revm::database_interface::DBErrorMarker for StateError {}

impl StateError {
    /// A [`StateError::Source`] holding `error`, a source's own failure to read.
    pub fn from_source(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Source(SourceError(Arc::new(error)))
    }
}

/// A [`StateSource`](crate::StateSource)'s own error (a store's I/O or decoding error),
/// the source of a [`StateError::Source`]: it dereferences to that error, so
/// `std::error::Error::source` gives the error itself, which a caller can downcast.
/// Shared (`Arc`), so that a [`StateError`] stays `Clone`; equal only to itself (the
/// same shared error), as a store's error cannot be compared by value.
#[derive(Debug, Clone)]
pub struct SourceError(Arc<dyn std::error::Error + Send + Sync + 'static>);

impl std::ops::Deref for SourceError {
    type Target = dyn std::error::Error + Send + Sync + 'static;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl std::fmt::Display for SourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for SourceError {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SourceError {}

/// Values at the start of a block that earlier blocks of its segment wrote
/// ([`Replay::carried_values`](crate::Replay::carried_values)): what a pass reading its state from a
/// [`StateSource`](crate::StateSource) takes from memory instead (a client keeps its own
/// recent writes). Empty for a segment's first block.
#[derive(Debug, Default, Clone)]
pub struct Carried {
    accounts: FxHashMap<Address, Option<AccountInfo>>,
    slots: FxHashMap<(Address, U256), U256>,
}

impl Carried {
    /// The account's value at the start of the block if an earlier block of the segment
    /// wrote it (`Some(None)`: it does not exist).
    pub fn account(&self, address: &Address) -> Option<&Option<AccountInfo>> {
        self.accounts.get(address)
    }

    /// The slot's value at the start of the block if an earlier block of the segment
    /// wrote it.
    pub fn slot(&self, address: &Address, slot: &U256) -> Option<U256> {
        self.slots.get(&(*address, *slot)).copied()
    }

    /// Every carried account.
    pub fn accounts(&self) -> impl Iterator<Item = (&Address, &Option<AccountInfo>)> {
        self.accounts.iter()
    }

    /// Every carried slot.
    pub fn slots(&self) -> impl Iterator<Item = (&(Address, U256), &U256)> {
        self.slots.iter()
    }
}

/// Tables shared by every block: bytecode (analysed once) and block hashes.
#[derive(Debug, Default)]
struct Shared {
    codes: FxHashMap<B256, Bytecode>,
    block_hashes: FxHashMap<u64, B256>,
}

/// State lookup tables (FxHash maps, bytecode analysed once and shared): either the
/// dump's whole pre-state, or the state at the start of one block restricted to what
/// that block's access list names ([`PreStateDb::block_base`]).
#[derive(Debug, Default, Clone)]
pub struct PreStateDb {
    accounts: FxHashMap<Address, Option<AccountInfo>>,
    storage: FxHashMap<(Address, U256), U256>,
    shared: Arc<Shared>,
    /// For a block base: its access list joined with the pre-state, for [`crate::BalView`].
    table: Option<Box<BlockTable>>,
}

/// A block's access list joined with the state at the start of the block, laid out for
/// [`crate::BalView`]'s reads: one lookup per read instead of one in the access list
/// (index map, then a B-tree per account) and one in the pre-state (hash map).
#[derive(Debug, Default, Clone)]
pub(crate) struct BlockTable {
    /// By the access list's account index: the address and its pre-state (`None`: missing
    /// from the dump; `Some(None)`: recorded absent).
    pub(crate) accounts: Vec<(Address, Option<Option<AccountInfo>>)>,
    /// Every slot the access list names, by (account index, slot).
    slots: FxHashMap<(u32, U256), SlotEntry>,
    /// The slots' writes in block access index order, `SlotEntry::writes` ranges into it.
    writes: Vec<(BlockAccessIndex, U256)>,
}

/// One slot of a [`BlockTable`].
#[derive(Debug, Clone, Copy)]
struct SlotEntry {
    /// Value at the start of the block (`None`: missing from the dump).
    pre: Option<U256>,
    /// Its writes: `BlockTable::writes[start..start + len]`.
    start: u32,
    len: u32,
}

/// An account of a [`BlockTable`]: its address and its value at the start of the block
/// (`None`: missing from the dump, or not read yet; `Some(None)`: it does not exist).
pub(crate) type AccountValue = (Address, Option<Option<AccountInfo>>);

/// The slots' values of a [`BlockTable`] at the start of its block, to be filled in.
pub(crate) struct SlotValues<'t>(&'t mut FxHashMap<(u32, U256), SlotEntry>);

impl<'t> SlotValues<'t> {
    /// The value of account `id`'s slot `slot`, if the table has the slot.
    pub(crate) fn get_mut(&mut self, id: u32, slot: U256) -> Option<&mut Option<U256>> {
        self.0.get_mut(&(id, slot)).map(|e| &mut e.pre)
    }

    /// Every slot: account index, slot, whether the block writes it, and its value, in
    /// the order of [`BlockTable::slot_keys`].
    pub(crate) fn into_iter(self) -> impl Iterator<Item = (u32, U256, bool, &'t mut Option<U256>)> {
        self.0
            .iter_mut()
            .map(|(&(id, slot), e)| (id, slot, e.len > 0, &mut e.pre))
    }
}

/// Where [`BlockTable::slot`] finds a slot.
pub(crate) enum SlotRead {
    /// The value seen at the index (a write below it, else the pre-state value; `None`
    /// when neither exists).
    Found(Option<U256>),
    /// The access list does not name the slot.
    NotInBal,
}

impl BlockTable {
    /// The keys of the table's slots, in the order of its map (the order
    /// [`BlockTable::values_mut`] gives their values in, here and in every clone).
    pub(crate) fn slot_keys(&self) -> impl Iterator<Item = (u32, U256)> + '_ {
        self.slots.keys().copied()
    }

    /// The values at the start of the block, to be filled in by a read (a pass reading its
    /// state from a source): each account's (address, value), and the slots.
    pub(crate) fn values_mut(&mut self) -> (&mut [AccountValue], SlotValues<'_>) {
        (&mut self.accounts, SlotValues(&mut self.slots))
    }

    /// The slot of account `id` as seen at block access index `index`: the last write
    /// below `index`, else the value at the start of the block.
    #[inline]
    pub(crate) fn slot(&self, id: u32, slot: U256, index: BlockAccessIndex) -> SlotRead {
        let Some(entry) = self.slots.get(&(id, slot)) else {
            return SlotRead::NotInBal;
        };
        let writes = &self.writes[entry.start as usize..(entry.start + entry.len) as usize];
        let below = writes.partition_point(|(i, _)| *i < index);
        SlotRead::Found(if below > 0 {
            Some(writes[below - 1].1)
        } else {
            entry.pre
        })
    }
}

/// What a segment's blocks add to its pre-state's shared part: the code they deploy and
/// their own hashes (for `BLOCKHASH` in later blocks), gathered block by block.
#[derive(Debug, Default)]
pub(crate) struct SegmentBlocks {
    codes: Vec<Bytecode>,
    hashes: Vec<(u64, B256)>,
}

impl SegmentBlocks {
    /// Adds `block`'s deployed code and hash.
    pub(crate) fn add(&mut self, block: &gigagas_dump::DumpBlock) {
        for account in &block.access_list {
            for change in &account.code_changes {
                self.codes
                    .push(Bytecode::new_raw(change.new_code().clone()));
            }
        }
        self.hashes
            .push((block.header.number, block.header.hash_slow()));
    }
}

impl PreStateDb {
    /// The store of one segment of a dump, from its tables (its `blocks` not read) and what
    /// its blocks add ([`SegmentBlocks`], gathered as they stream past): its accounts, slots
    /// and codes (with the code its blocks deploy), and the hashes of the blocks before it
    /// plus every block inside it.
    pub(crate) fn from_tables(segment: &Segment, added: SegmentBlocks) -> Self {
        let mut codes: FxHashMap<B256, Bytecode> = segment
            .pre_state
            .codes
            .iter()
            .map(|(h, c)| (*h, Bytecode::new_raw(c.clone())))
            .collect();
        // Code deployed inside the segment, so `code_by_hash` finds it too.
        for code in added.codes {
            codes.entry(code.hash_slow()).or_insert(code);
        }
        let accounts = segment
            .pre_state
            .accounts
            .iter()
            .map(|a| {
                let info = a.state.map(|s| AccountInfo {
                    balance: s.balance,
                    nonce: s.nonce,
                    code_hash: s.code_hash,
                    code: if s.code_hash == KECCAK_EMPTY {
                        Some(Bytecode::default())
                    } else {
                        codes.get(&s.code_hash).cloned()
                    },
                    ..Default::default()
                });
                (a.address, info)
            })
            .collect();
        let storage = segment
            .pre_state
            .storage
            .iter()
            .map(|s| ((s.address, s.slot), s.value))
            .collect();
        let mut block_hashes: FxHashMap<u64, B256> = segment.block_hashes.iter().copied().collect();
        block_hashes.extend(added.hashes);
        Self {
            accounts,
            storage,
            shared: Arc::new(Shared {
                codes,
                block_hashes,
            }),
            table: None,
        }
    }

    /// Every account this state holds (`None`: recorded absent).
    pub(crate) fn accounts(&self) -> impl Iterator<Item = (&Address, &Option<AccountInfo>)> {
        self.accounts.iter()
    }

    /// Every slot this state holds.
    pub(crate) fn slots(&self) -> impl Iterator<Item = (&(Address, U256), &U256)> {
        self.storage.iter()
    }

    /// The state at the start of a block, restricted to the accounts and slots its access
    /// list names. Entries the dump lacks stay missing, so reading them is an error.
    ///
    /// The result also joins the access list with this state for [`crate::BalView`]; view
    /// it with the access list it was built from.
    pub fn block_base(&self, bal: &Bal) -> Self {
        let mut accounts = FxHashMap::default();
        let mut storage = FxHashMap::default();
        let slot_count = bal.accounts.values().map(|a| a.storage.storage.len()).sum();
        let mut table = BlockTable {
            accounts: Vec::with_capacity(bal.accounts.len()),
            slots: FxHashMap::with_capacity_and_hasher(slot_count, Default::default()),
            writes: Vec::new(),
        };
        for (id, (address, account)) in bal.accounts.iter().enumerate() {
            let info = self.accounts.get(address).cloned();
            if let Some(info) = &info {
                accounts.insert(*address, info.clone());
            }
            table.accounts.push((*address, info));
            for (slot, writes) in &account.storage.storage {
                let pre = self.storage.get(&(*address, *slot)).copied();
                if let Some(v) = pre {
                    storage.insert((*address, *slot), v);
                }
                let start = table.writes.len() as u32;
                table
                    .writes
                    .extend(writes.writes.iter().map(|(i, v)| (*i, *v)));
                let len = writes.writes.len() as u32;
                table
                    .slots
                    .insert((id as u32, *slot), SlotEntry { pre, start, len });
            }
        }
        Self {
            accounts,
            storage,
            shared: self.shared.clone(),
            table: Some(Box::new(table)),
        }
    }

    /// The joined table of a block base, to fill in its values.
    pub(crate) fn table_mut(&mut self) -> Option<&mut BlockTable> {
        self.table.as_deref_mut()
    }

    /// The access list joined with this state, if this is a block base of a list with
    /// `accounts` accounts.
    pub(crate) fn table(&self, accounts: usize) -> Option<&BlockTable> {
        self.table
            .as_deref()
            .filter(|t| t.accounts.len() == accounts)
    }

    /// Advance to the end of a block: apply the last write of every field in its access
    /// list.
    pub fn apply_block(&mut self, bal: &Bal) {
        // A block base's joined table describes the start of its block only.
        self.table = None;
        for (address, account) in bal.accounts.iter() {
            let info = &account.account_info;
            let (balance, nonce, code) = (
                info.balance.writes.last(),
                info.nonce.writes.last(),
                info.code.writes.last(),
            );
            let written = balance.is_some() || nonce.is_some() || code.is_some();
            if let Some(entry) = self.accounts.get_mut(address).filter(|_| written) {
                let acc = entry.get_or_insert_with(|| AccountInfo {
                    code: Some(Bytecode::default()),
                    ..Default::default()
                });
                if let Some((_, b)) = balance {
                    acc.balance = *b;
                }
                if let Some((_, n)) = nonce {
                    acc.nonce = *n;
                }
                if let Some((_, (hash, bytecode))) = code {
                    acc.code_hash = *hash;
                    acc.code = Some(bytecode.clone());
                }
            }
            for (slot, writes) in &account.storage.storage {
                if let Some((_, v)) = writes.writes.last() {
                    self.storage.insert((*address, *slot), *v);
                }
            }
        }
    }

    /// A state of these values sharing `shared_from`'s bytecode and block hash tables
    /// (what a prefetch builds a block's base from).
    pub fn from_values(
        accounts: FxHashMap<Address, Option<AccountInfo>>,
        storage: FxHashMap<(Address, U256), U256>,
        shared_from: &PreStateDb,
    ) -> Self {
        Self {
            accounts,
            storage,
            shared: shared_from.shared.clone(),
            table: None,
        }
    }

    /// The analysed bytecode with this hash, if the dump holds it (pre-state or deployed by
    /// a block of the segment).
    pub fn code(&self, code_hash: B256) -> Option<Bytecode> {
        self.shared.codes.get(&code_hash).cloned()
    }

    /// Of this block base's accounts and slots, those in `written_accounts` /
    /// `written_slots` (written by earlier blocks of the segment), with their values.
    pub(crate) fn carried(
        &self,
        bal: &Bal,
        written_accounts: &rustc_hash::FxHashSet<Address>,
        written_slots: &rustc_hash::FxHashSet<(Address, U256)>,
    ) -> Carried {
        let mut carried = Carried::default();
        for (address, account) in bal.accounts.iter() {
            if written_accounts.contains(address)
                && let Some(info) = self.accounts.get(address)
            {
                carried.accounts.insert(*address, info.clone());
            }
            for slot in account.storage.storage.keys() {
                if written_slots.contains(&(*address, *slot))
                    && let Some(v) = self.storage.get(&(*address, *slot))
                {
                    carried.slots.insert((*address, *slot), *v);
                }
            }
        }
        carried
    }
}

impl DatabaseRef for PreStateDb {
    type Error = StateError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, StateError> {
        self.accounts
            .get(&address)
            .cloned()
            .ok_or(StateError::MissingAccount(address))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, StateError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        self.shared
            .codes
            .get(&code_hash)
            .cloned()
            .ok_or(StateError::MissingCode(code_hash))
    }

    fn storage_ref(&self, address: Address, slot: U256) -> Result<U256, StateError> {
        self.storage
            .get(&(address, slot))
            .copied()
            .ok_or(StateError::MissingSlot { address, slot })
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, StateError> {
        self.shared
            .block_hashes
            .get(&number)
            .copied()
            .ok_or(StateError::MissingBlockHash(number))
    }
}
