//! The state trie: the account trie and the storage tries it opens, updated block by block
//! from access lists.

use crate::{
    error::{RootError, TrieId},
    leaf::{AccountLeaf, LeafValue, decode_account},
    reads::{NodeReader, NodeReads, ReadNodesError, read_paths},
    sparse::{NodeChanges, NodeStore, Seen, SparseTrie},
    split::{Lower, SplitRule, Updates, join, split},
};
use alloy_eip7928::{AccountChanges, BlockAccessList, SlotChanges};
use alloy_primitives::{
    Address, B256, Bytes, U256, keccak256,
    map::{Entry, HashMap},
};
use alloy_trie::{EMPTY_ROOT_HASH, KECCAK_EMPTY, Nibbles, TrieAccount};
use gigagas_dump::{AccountState, PreState, Witness};
use rayon::prelude::*;
use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

/// The fork rules the root depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RootRules {
    /// EIP-161 (Spurious Dragon and later): an account the block touches that ends empty
    /// (nonce 0, balance 0, no code) is deleted. Every account in an access list counts as
    /// touched.
    pub delete_empty_accounts: bool,
}

impl RootRules {
    /// The rules of every fork since Spurious Dragon (empty touched accounts deleted).
    pub const SPURIOUS_DRAGON: Self = Self {
        delete_empty_accounts: true,
    };
}

/// Account fields and slot values known apart from the trie, at the state a
/// [`StateTrie`] is at: from a segment's pre-state ([`Self::of_pre_state`]), then each
/// block's post-values. [`StateTrie::prepare_block`] compares a block's post-values with
/// them and walks the trie only where a value changes (the net change over the block):
/// an account or slot they do not hold is walked as if it changed.
///
/// A clone shares the values it started from (a pass copies a trie in microseconds) and
/// holds its own changes since.
#[derive(Debug, Clone, Default)]
pub struct PreValues {
    /// The values it was built from, shared by its clones.
    base: Arc<Known>,
    /// What changed since, over `base`.
    changed: Known,
}

/// Known accounts and slots.
#[derive(Debug, Clone, Default)]
struct Known {
    /// By address: the fields (`None`: the account does not exist).
    accounts: HashMap<Address, Option<AccountState>>,
    /// By address: its known slots.
    storage: HashMap<Address, KnownStorage>,
}

/// The slots of one account that [`PreValues`] holds.
#[derive(Debug, Clone, Default)]
struct KnownStorage {
    slots: HashMap<U256, U256>,
    /// Every other slot is zero: the account does not exist, or its storage was deleted
    /// with it.
    rest_zero: bool,
}

impl Known {
    fn set_account(&mut self, address: Address, state: Option<AccountState>) {
        self.accounts.insert(address, state);
        if state.is_none() {
            let storage = self.storage.entry(address).or_default();
            storage.slots.clear();
            storage.rest_zero = true;
        }
    }

    fn set_slot(&mut self, address: Address, slot: U256, value: U256) {
        self.storage
            .entry(address)
            .or_default()
            .slots
            .insert(slot, value);
    }
}

impl PreValues {
    /// Nothing known: every account and slot a block lists is walked.
    pub fn new() -> Self {
        Self::default()
    }

    /// What a segment's pre-state records: its accounts (present or absent) and slots.
    pub fn of_pre_state(pre: &PreState) -> Self {
        let mut values = Self::new();
        for a in &pre.accounts {
            values.set_account(a.address, a.state);
        }
        for s in &pre.storage {
            values.set_slot(s.address, s.slot, s.value);
        }
        values.shared()
    }

    /// These values, all shared by the clones made from now on (none copied per clone).
    pub fn shared(mut self) -> Self {
        if self.changed.accounts.is_empty() && self.changed.storage.is_empty() {
            return self;
        }
        let mut base = Arc::unwrap_or_clone(self.base);
        for (address, state) in self.changed.accounts.drain() {
            base.accounts.insert(address, state);
        }
        for (address, storage) in self.changed.storage.drain() {
            let into = base.storage.entry(address).or_default();
            if storage.rest_zero {
                *into = storage;
            } else {
                into.slots.extend(storage.slots);
            }
        }
        self.base = Arc::new(base);
        self
    }

    /// Records account `address`'s fields (`None`: it does not exist, so none of its
    /// slots is set).
    pub fn set_account(&mut self, address: Address, state: Option<AccountState>) {
        self.changed.set_account(address, state);
    }

    /// Records the value of `address`'s slot `slot`.
    pub fn set_slot(&mut self, address: Address, slot: U256, value: U256) {
        self.changed.set_slot(address, slot, value);
    }

    /// The account's fields: `None` when unknown, `Some(None)` when known absent.
    fn account(&self, address: Address) -> Option<Option<AccountState>> {
        self.changed
            .accounts
            .get(&address)
            .or_else(|| self.base.accounts.get(&address))
            .copied()
    }

    /// Account `address`'s known slots, looked up once for all its slots.
    fn storage_of(&self, address: Address) -> KnownSlots<'_> {
        KnownSlots {
            changed: self.changed.storage.get(&address),
            base: self.base.storage.get(&address),
        }
    }

    /// Records the values of `address`'s slots `writes` (slot, value).
    fn set_slots(&mut self, address: Address, writes: &[(U256, U256)]) {
        if writes.is_empty() {
            return;
        }
        let storage = self.changed.storage.entry(address).or_default();
        storage.slots.extend(writes.iter().copied());
    }

    /// Whether a slot of `address` ends, after `slots` (each slot's last change), other
    /// than known (an unknown value counts as changed); stops at the first that does.
    fn slots_change(&self, address: Address, slots: &[SlotChanges]) -> bool {
        if slots.is_empty() {
            return false;
        }
        let known = self.storage_of(address);
        slots.iter().any(|s| {
            s.changes
                .last()
                .is_some_and(|c| known.get(s.slot) != Some(c.new_value))
        })
    }

    /// The writes (slot, post-value) of `slots` (each slot's last change) to `address`
    /// that change a value known (an unknown value counts as changed), in the list's
    /// order, each recorded as known from now on: one look-up of the slot where its value
    /// changed since the base, two where it is the base's.
    fn record_slot_writes(&mut self, address: Address, slots: &[SlotChanges]) -> Vec<(U256, U256)> {
        if slots.is_empty() {
            return Vec::new();
        }
        let base = self.base.storage.get(&address);
        let changed = self.changed.storage.entry(address).or_default();
        let mut writes = Vec::with_capacity(slots.len());
        for s in slots {
            let Some(value) = s.changes.last().map(|c| c.new_value) else {
                continue;
            };
            match changed.slots.entry(s.slot) {
                Entry::Occupied(mut known) => {
                    if *known.get() != value {
                        known.insert(value);
                        writes.push((s.slot, value));
                    }
                }
                Entry::Vacant(unset) => {
                    let before = if changed.rest_zero {
                        Some(U256::ZERO)
                    } else {
                        base.and_then(|b| b.get(s.slot))
                    };
                    if before != Some(value) {
                        unset.insert(value);
                        writes.push((s.slot, value));
                    }
                }
            }
        }
        writes
    }
}

/// One account's slots in [`PreValues`]: what changed since its base, over the base.
struct KnownSlots<'a> {
    changed: Option<&'a KnownStorage>,
    base: Option<&'a KnownStorage>,
}

impl KnownStorage {
    /// The slot's value, `None` when unknown here.
    fn get(&self, slot: U256) -> Option<U256> {
        self.slots
            .get(&slot)
            .copied()
            .or(self.rest_zero.then_some(U256::ZERO))
    }
}

impl KnownSlots<'_> {
    /// The slot's value, `None` when unknown.
    fn get(&self, slot: U256) -> Option<U256> {
        match self.changed {
            Some(storage) if storage.rest_zero => storage.get(slot),
            Some(storage) => storage
                .slots
                .get(&slot)
                .copied()
                .or_else(|| self.base.and_then(|b| b.get(slot))),
            None => self.base.and_then(|b| b.get(slot)),
        }
    }
}

/// Distinguishes tries, so that a job is finished on the trie that prepared it.
static NEXT_TRIE: AtomicU64 = AtomicU64::new(0);

/// The state at a block's parent as a sparse trie over a [`Witness`]'s nodes, updated by
/// each block's access list in turn ([`StateTrie::apply_block`]).
///
/// After an error the trie is left part-updated: build a new one from the witness.
#[derive(Debug)]
pub struct StateTrie {
    accounts: SparseTrie,
    /// Storage tries opened by earlier blocks, each matching its account's storage root.
    storages: HashMap<Address, SparseTrie>,
    store: Arc<NodeStore>,
    root: B256,
    id: u64,
    /// Whether a job was prepared and not finished.
    pending: bool,
    /// Values known apart from the trie at its current state.
    known: PreValues,
    /// Where the hashes of the nodes opened from the store are recorded, if anywhere.
    seen: Option<Seen>,
    /// With [`Self::collecting_changes`]: the last finished block's changes.
    changes: Option<Box<BlockChanges>>,
    /// How each block's tries are split into units ([`Self::with_split`]).
    split: SplitRule,
}

/// One block's changes as a client commits them ([`StateTrie::collecting_changes`]): its
/// plain state (each account's and slot's value after the block, where it changed) and
/// its tries' nodes by path ([`NodeChanges`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockChanges {
    /// Accounts changed, with their fields after the block (`None`: deleted).
    pub accounts: Vec<(Address, Option<AccountState>)>,
    /// Slots changed: account, slot, value after the block (zero: deleted).
    pub slots: Vec<(Address, U256, U256)>,
    /// New code, by its hash.
    pub codes: Vec<(B256, Bytes)>,
    /// The account trie's nodes changed.
    pub account_nodes: NodeChanges,
    /// Each changed storage trie's nodes, by its owner (keccak256 of the address).
    pub storage_nodes: Vec<(B256, NodeChanges)>,
    /// Storage tries of deleted accounts (by owner): every node of them goes.
    pub wiped: Vec<B256>,
}

impl StateTrie {
    /// The state at `witness.parent_state_root`, its nodes opened on demand from the
    /// witness. Fails when no node hashes to that root (unless it is the empty trie's).
    ///
    /// Nothing is known apart from the trie until [`Self::with_pre_values`] says what the
    /// pre-state holds: a block walks every account and slot it lists that no block before
    /// it on this trie changed.
    pub fn from_witness(witness: &Witness) -> Result<Self, RootError> {
        Self::over(
            witness.parent_state_root,
            Arc::new(NodeStore::new(&witness.nodes)),
        )
    }

    /// The state at `parent_root` over nodes already keyed by their hash, e.g. read from a
    /// state store's trie table (nothing is hashed again: the keys are trusted as a store's
    /// values are). Fails like [`Self::from_witness`] when no node has the root's hash.
    pub fn from_hashed_nodes(
        parent_root: B256,
        nodes: Vec<(B256, Bytes)>,
    ) -> Result<Self, RootError> {
        Self::over(parent_root, Arc::new(NodeStore::from_hashed(nodes)))
    }

    /// The state at `root` over `store`'s nodes: the one body of [`Self::from_witness`]
    /// and [`Self::from_hashed_nodes`].
    pub(crate) fn over(root: B256, store: Arc<NodeStore>) -> Result<Self, RootError> {
        if root != EMPTY_ROOT_HASH && !store.contains(&root) {
            return Err(RootError::MissingRoot { root });
        }
        Ok(Self::at(root, store.clone(), store))
    }

    /// The state at `root`, its account trie opening nodes from `accounts` and its storage
    /// tries from `store`, nothing else known, its updates whole.
    fn at(root: B256, accounts: Arc<NodeStore>, store: Arc<NodeStore>) -> Self {
        Self {
            accounts: SparseTrie::blinded(TrieId::Account, root, accounts),
            storages: HashMap::default(),
            store,
            root,
            id: NEXT_TRIE.fetch_add(1, Ordering::Relaxed),
            pending: false,
            known: PreValues::default(),
            seen: None,
            changes: None,
            split: SplitRule::WHOLE,
        }
    }

    /// This trie, knowing `values` at its current state (a segment's pre-state, for a trie
    /// at the segment's parent root): each block then walks the trie only for the accounts
    /// and slots whose value it changes. A value `values` holds that the trie contradicts
    /// makes the root differ from the header's, never a node go missing.
    pub fn with_pre_values(mut self, values: PreValues) -> Self {
        self.known = values;
        self
    }

    /// This trie, its blocks' updates split under `rule` ([`SplitRule::WHOLE`] until
    /// set): a storage trie whose block changes enough slots is cut into units of lower
    /// subtries at [`BlockRootJob::storage_tasks`], and so is the account trie at
    /// [`BlockRootJob::account_tasks`]. Every root is the one the whole tries give.
    pub fn with_split(mut self, rule: SplitRule) -> Self {
        self.split = rule;
        self
    }

    /// This trie, collecting each block's [`BlockChanges`] as it is finished (taken with
    /// [`Self::take_changes`]): what a client commits after the block. The nodes' RLP is
    /// copied as the root hashes them, inside the root's time.
    pub fn collecting_changes(mut self) -> Self {
        self.changes = Some(Box::default());
        self
    }

    /// The changes of the blocks finished since the last call (with
    /// [`Self::collecting_changes`]; empty without).
    pub fn take_changes(&mut self) -> BlockChanges {
        self.changes
            .as_deref_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Records the hash of every node opened from the store from now on in `seen`.
    pub(crate) fn record(&mut self, seen: Seen) {
        self.accounts.record(Some(seen.clone()));
        for trie in self.storages.values_mut() {
            trie.record(Some(seen.clone()));
        }
        self.seen = Some(seen);
    }

    /// Every node of this trie as it is now that its store lacks (those the blocks applied
    /// so far made), keyed by hash.
    pub(crate) fn new_nodes(&self, store: &NodeStore) -> Vec<(B256, Bytes)> {
        let mut out = Vec::new();
        self.accounts.new_nodes(store, &mut out);
        for trie in self.storages.values() {
            trie.new_nodes(store, &mut out);
        }
        out
    }

    /// The values known apart from the trie at its current state ([`Self::with_pre_values`],
    /// moved on by each block applied).
    pub fn pre_values(&self) -> &PreValues {
        &self.known
    }

    /// The value of `address`'s slot `slot`, `None` when the trie proves it absent (walking
    /// the account's leaf and its storage trie).
    pub(crate) fn storage(
        &mut self,
        address: Address,
        slot: U256,
    ) -> Result<Option<Vec<u8>>, RootError> {
        let Some(account) = self.account(address)? else {
            return Ok(None);
        };
        let key = Nibbles::unpack(keccak256(B256::from(slot)));
        if let Some(trie) = self.storages.get_mut(&address) {
            return trie.get(key);
        }
        let mut trie = self.storage_trie(address, account.storage_root);
        trie.get(key)
    }

    /// `address`'s storage trie at `root`, blinded, recording where this trie records.
    fn storage_trie(&self, address: Address, root: B256) -> SparseTrie {
        let mut trie = SparseTrie::blinded(TrieId::Storage(address), root, self.store.clone());
        trie.record(self.seen.clone());
        trie
    }

    /// A copy of this trie (opened nodes, storage tries and all) that jobs tell apart; the
    /// witness's nodes are shared, not copied. A trie fresh from the witness copies in
    /// microseconds, so a benchmark opens the witness once and starts every pass from a
    /// snapshot of it.
    pub fn snapshot(&self) -> Self {
        Self {
            accounts: self.accounts.clone(),
            storages: self.storages.clone(),
            store: self.store.clone(),
            root: self.root,
            id: NEXT_TRIE.fetch_add(1, Ordering::Relaxed),
            pending: self.pending,
            known: self.known.clone(),
            seen: self.seen.clone(),
            changes: self.changes.clone(),
            split: self.split,
        }
    }

    /// Adds witness nodes (for the witness builder's retries).
    pub(crate) fn add_nodes(&mut self, nodes: &[Bytes]) {
        let mut store = NodeStore::clone(&self.store);
        store.extend(nodes);
        let store = Arc::new(store);
        self.accounts.set_store(store.clone());
        for trie in self.storages.values_mut() {
            trie.set_store(store.clone());
        }
        self.store = store;
    }

    /// The state root after the last block applied (the parent root before any).
    pub fn root(&self) -> B256 {
        self.root
    }

    /// The account at `address`, `None` when the trie proves it absent.
    pub fn account(&mut self, address: Address) -> Result<Option<TrieAccount>, RootError> {
        let key = Nibbles::unpack(keccak256(address));
        let Some(leaf) = self.accounts.get(key)? else {
            return Ok(None);
        };
        decode_account(key, &leaf).map(Some)
    }

    /// An account's fields before the block (`None`: absent) and its leaf's storage root
    /// (`None`: not read here), given what the known values hold of it (`known`, as
    /// [`PreValues::account`] gives it). Its leaf is read from the trie only where the
    /// known values lack its fields, where it ends deleted (a deleted account's storage
    /// may need wiping), or where its storage changes and its storage trie is not open;
    /// otherwise its account unit reads it ([`AccountLeaf`]), on any thread.
    fn pre_of(
        &mut self,
        address: Address,
        known: Option<Option<AccountState>>,
        post: &PostFields,
        storage_changes: bool,
        rules: RootRules,
    ) -> Result<(Option<AccountState>, Option<B256>), RootError> {
        if let Some(Some(fields)) = known
            && !(rules.delete_empty_accounts && post.ends_empty(Some(fields)))
            && (!storage_changes || self.storages.contains_key(&address))
        {
            return Ok((Some(fields), None));
        }
        let pre = self.account(address)?;
        let fields = pre.as_ref().map(|a| AccountState {
            balance: a.balance,
            nonce: a.nonce,
            code_hash: a.code_hash,
        });
        Ok((
            fields,
            Some(pre.map_or(EMPTY_ROOT_HASH, |a| a.storage_root)),
        ))
    }

    /// Applies one block's access list and returns the block's post state root: storage
    /// tries one after the other on this thread, then the account trie.
    pub fn apply_block(
        &mut self,
        bal: &BlockAccessList,
        rules: RootRules,
    ) -> Result<B256, RootError> {
        let mut job = self.prepare_block(bal, rules)?;
        let results = job
            .storage_tasks()
            .into_iter()
            .map(StorageTask::run)
            .collect();
        job.finish(self, results)
    }

    /// [`Self::apply_block`] with the storage tries updated in parallel on rayon's pool.
    pub fn apply_block_parallel(
        &mut self,
        bal: &BlockAccessList,
        rules: RootRules,
    ) -> Result<B256, RootError> {
        let mut job = self.prepare_block(bal, rules)?;
        let results = job
            .storage_tasks()
            .into_par_iter()
            .map(StorageTask::run)
            .collect();
        job.finish(self, results)
    }

    /// Whether an account's entry in a block's list changes it over the values known
    /// before the block: its fields (`post`, over `known`, as [`PreValues::account`] gives
    /// them) or, where `slots_change`, its storage. Unknown fields count as changed.
    fn net_change(
        known: Option<Option<AccountState>>,
        post: &PostFields,
        slots_change: bool,
        rules: RootRules,
    ) -> bool {
        slots_change || known.is_none_or(|before| post.changes(before, rules))
    }

    /// The state at `parent_root` with no node read yet: each block's nodes are read as it
    /// needs them ([`Self::read_account_nodes`], [`StorageTask::read_nodes`]) and stay open
    /// for the blocks after. A node needed and not read is a [`RootError::MissingNode`].
    pub fn unread(parent_root: B256) -> Self {
        Self::at(parent_root, Arc::default(), Arc::default())
    }

    /// Reads, from `reader`, the account-trie nodes on the paths of the accounts `bal`
    /// changes (as [`Self::prepare_block`] will walk them, siblings a deletion may need
    /// included), batched by depth ([`crate::reads`]). Call it before `prepare_block`; the
    /// storage tries' nodes are read by each [`StorageTask::read_nodes`].
    pub fn read_account_nodes<R: NodeReader + ?Sized>(
        &mut self,
        bal: &BlockAccessList,
        rules: RootRules,
        reader: &mut R,
    ) -> Result<NodeReads, ReadNodesError<R::Error>> {
        let mut targets = Vec::new();
        for changes in bal {
            let post = PostFields::of(changes);
            let known = self.known.account(changes.address);
            let slots_change = self
                .known
                .slots_change(changes.address, &changes.storage_changes);
            if !Self::net_change(known, &post, slots_change, rules) {
                continue;
            }
            let removable = rules.delete_empty_accounts
                && match known {
                    // Absent before: never removed.
                    Some(None) => false,
                    Some(Some(before)) => post.ends_empty(Some(before)),
                    // Unknown: it may end empty if no field it sets is non-empty.
                    None => post.ends_empty(None),
                };
            targets.push((Nibbles::unpack(keccak256(changes.address)), removable));
        }
        read_paths(&mut self.accounts, &mut targets, reader)
    }

    /// [`Self::apply_block`] on a trie whose nodes are read from `reader` as the block
    /// needs them ([`Self::unread`]): the account trie's, then each storage task's before
    /// it runs. Returns the root and what was read.
    pub fn apply_block_reading<R: NodeReader + ?Sized>(
        &mut self,
        bal: &BlockAccessList,
        rules: RootRules,
        reader: &mut R,
    ) -> Result<(B256, NodeReads), ReadNodesError<R::Error>> {
        let mut reads = self.read_account_nodes(bal, rules, reader)?;
        let mut job = self.prepare_block(bal, rules)?;
        let mut results = Vec::new();
        for mut task in job.storage_tasks() {
            reads += task.read_nodes(reader)?;
            results.push(task.run());
        }
        let root = job.finish(self, results)?;
        Ok((root, reads))
    }

    /// Splits one block's root into independent tasks: hands out the storage tries that
    /// change, one [`StorageTask`] each, to run on any thread; then
    /// [`BlockRootJob::finish`] updates the account trie with their roots.
    ///
    /// Only net changes walk the trie: an account whose post-values (the last change of
    /// each field in the list) equal the values known before the block ([`PreValues`]),
    /// and whose slots all end as they began, needs no node, nor does a slot written back
    /// to its value before the block; an account that ends empty under EIP-161 and
    /// existed is a change (its deletion). A changed account's leaf is read from the trie
    /// (its storage root is known nowhere else), so it needs the account trie's nodes on
    /// its path: here where its fields are not known, it is deleted, or its storage trie
    /// is to be opened at that root; otherwise in the account stage or unit that sets it.
    /// An account or slot whose value before the block is not known is walked as a
    /// change. The known values then move on to the block's post-values.
    ///
    /// Panics when a job prepared on this trie has not been finished.
    pub fn prepare_block(
        &mut self,
        bal: &BlockAccessList,
        rules: RootRules,
    ) -> Result<BlockRootJob, RootError> {
        assert!(
            !self.pending,
            "prepare_block: the previous block's job is not finished"
        );
        let mut accounts = Vec::with_capacity(bal.len());
        let mut tasks = Vec::new();
        let mut split_storages = HashMap::default();
        for changes in bal {
            let address = changes.address;
            let post = PostFields::of(changes);
            let known = self.known.account(address);
            // The slots that change are recorded as known as they are found.
            let writes = self
                .known
                .record_slot_writes(address, &changes.storage_changes);
            if !Self::net_change(known, &post, !writes.is_empty(), rules) {
                continue;
            }
            let (pre, pre_storage_root) =
                self.pre_of(address, known, &post, !writes.is_empty(), rules)?;
            if pre.is_none() {
                // Absent before: no slot is set but those the block writes.
                self.known.set_account(address, None);
                self.known.set_slots(address, &writes);
            }
            if let Some(out) = self.changes.as_deref_mut() {
                out.slots
                    .extend(writes.iter().map(|(slot, value)| (address, *slot, *value)));
                if let (Some(code), Some(hash)) = (changes.code_changes.last(), post.code_hash) {
                    out.codes.push((hash, code.new_code.clone()));
                }
            }
            let storage_task = if writes.is_empty() {
                None
            } else {
                let trie = self.storages.remove(&address).unwrap_or_else(|| {
                    let root = pre_storage_root.expect("read where its storage trie is not open");
                    self.storage_trie(address, root)
                });
                let first = tasks.len();
                self.storage_tasks_of(address, writes, trie, &mut tasks, &mut split_storages)?;
                Some(first)
            };
            let update = AccountUpdate::new(address, post, pre, pre_storage_root, storage_task);
            if update.deleted(rules) {
                self.known.set_account(address, None);
            } else if update.pre.is_some() || update.changed {
                self.known.set_account(
                    address,
                    Some(AccountState {
                        balance: update.balance,
                        nonce: update.nonce,
                        code_hash: update.code_hash,
                    }),
                );
            }
            accounts.push(update);
        }
        self.pending = true;
        Ok(BlockRootJob {
            trie: self.id,
            rules,
            accounts,
            tasks,
            split_storages,
            stage: None,
        })
    }

    /// Adds to `tasks` the update of `address`'s storage `trie` by its slot `writes`: one
    /// task (which hashes its slots itself), or, when the split rule cuts the trie, one
    /// per unit of its lower subtries (its slots hashed here to cut them; its upper trie
    /// kept in `split_storages` for the account stage to join them).
    fn storage_tasks_of(
        &self,
        address: Address,
        writes: Vec<(U256, U256)>,
        mut trie: SparseTrie,
        tasks: &mut Vec<StorageTask>,
        split_storages: &mut HashMap<Address, SparseTrie>,
    ) -> Result<(), RootError> {
        let collect = self.changes.is_some();
        if self.split.splits(writes.len()) {
            let updates = slot_updates(&writes);
            if let Ok(units) = split(&mut trie, self.split, updates)? {
                split_storages.insert(address, trie);
                tasks.extend(units.into_iter().map(|unit| StorageTask {
                    address,
                    work: StorageWork::Lower(unit),
                    collect,
                }));
                return Ok(());
            }
        }
        let mut task = StorageTask::new(address, writes, trie);
        task.collect = collect;
        tasks.push(task);
        Ok(())
    }
}

/// Slot `writes` (slot, post-value) as a storage trie's updates: non-zero values set,
/// zero values removed.
fn slot_updates(writes: &[(U256, U256)]) -> Updates {
    let mut updates = Updates::default();
    for (slot, value) in writes {
        let key = Nibbles::unpack(keccak256(B256::from(*slot)));
        if value.is_zero() {
            updates.removals.push(key);
        } else {
            updates.inserts.push((key, LeafValue::Slot(*value)));
        }
    }
    updates
}

/// An account's post-values in a block's list: the last change of each field, if any.
#[derive(Debug, Clone, Copy)]
struct PostFields {
    nonce: Option<u64>,
    balance: Option<U256>,
    /// keccak256 of the last new code.
    code_hash: Option<B256>,
}

impl PostFields {
    fn of(changes: &AccountChanges) -> Self {
        Self {
            nonce: changes.nonce_changes.last().map(|c| c.new_nonce),
            balance: changes.balance_changes.last().map(|c| c.post_balance),
            code_hash: changes.code_changes.last().map(|c| keccak256(&c.new_code)),
        }
    }

    /// Whether the account differs after the block from `before` (its fields before it,
    /// `None`: absent), its storage left as it was: a field changed, or under EIP-161 an
    /// account that existed and ends empty (deleted). An absent account that ends empty
    /// stays absent; before EIP-161 one the list changes is created even when empty.
    /// Whether the account may end empty: every field the list sets is empty, and every
    /// field it does not set is empty in `before` (`None`: not known, so it may be).
    fn ends_empty(&self, before: Option<AccountState>) -> bool {
        let nonce = self.nonce.or(before.map(|a| a.nonce)).unwrap_or(0);
        let balance = self
            .balance
            .or(before.map(|a| a.balance))
            .unwrap_or_default();
        let code_hash = self
            .code_hash
            .or(before.map(|a| a.code_hash))
            .unwrap_or(KECCAK_EMPTY);
        nonce == 0 && balance.is_zero() && code_hash == KECCAK_EMPTY
    }

    fn changes(&self, before: Option<AccountState>, rules: RootRules) -> bool {
        let nonce = self.nonce.unwrap_or(before.map_or(0, |a| a.nonce));
        let balance = self
            .balance
            .unwrap_or(before.map_or(U256::ZERO, |a| a.balance));
        let code_hash = self
            .code_hash
            .unwrap_or(before.map_or(KECCAK_EMPTY, |a| a.code_hash));
        let empty = nonce == 0 && balance.is_zero() && code_hash == KECCAK_EMPTY;
        match before {
            Some(_) if rules.delete_empty_accounts && empty => true,
            Some(a) => (a.nonce, a.balance, a.code_hash) != (nonce, balance, code_hash),
            None if rules.delete_empty_accounts && empty => false,
            None => self.nonce.is_some() || self.balance.is_some() || self.code_hash.is_some(),
        }
    }
}

/// One changed account's post-values, but for its storage root.
#[derive(Debug)]
struct AccountUpdate {
    address: Address,
    /// Its fields before the block (`None`: absent).
    pre: Option<AccountState>,
    /// Its leaf's storage root before the block; `None` where the leaf is read only where
    /// it is set ([`AccountLeaf`]).
    pre_storage_root: Option<B256>,
    /// The fields the block sets.
    post: PostFields,
    nonce: u64,
    balance: U256,
    code_hash: B256,
    /// Whether the access list changes anything of the account.
    changed: bool,
    /// The index of its storage task, when its storage changes.
    storage_task: Option<usize>,
}

impl AccountUpdate {
    fn new(
        address: Address,
        post: PostFields,
        pre: Option<AccountState>,
        pre_storage_root: Option<B256>,
        storage_task: Option<usize>,
    ) -> Self {
        let PostFields {
            nonce,
            balance,
            code_hash,
        } = post;
        Self {
            address,
            nonce: nonce.unwrap_or(pre.as_ref().map_or(0, |a| a.nonce)),
            balance: balance.unwrap_or(pre.as_ref().map_or(U256::ZERO, |a| a.balance)),
            code_hash: code_hash.unwrap_or(pre.as_ref().map_or(KECCAK_EMPTY, |a| a.code_hash)),
            changed: nonce.is_some()
                || balance.is_some()
                || code_hash.is_some()
                || storage_task.is_some(),
            pre,
            pre_storage_root,
            post,
            storage_task,
        }
    }

    /// Whether the account ends empty under EIP-161, so it is deleted (or, absent before,
    /// not created).
    fn deleted(&self, rules: RootRules) -> bool {
        rules.delete_empty_accounts
            && self.nonce == 0
            && self.balance.is_zero()
            && self.code_hash == KECCAK_EMPTY
    }
}

/// One block's root, split into units: the storage tasks ([`Self::storage_tasks`]),
/// independent of each other; then the account tasks ([`Self::account_tasks`]), the
/// account trie's lower subtries, independent of each other; then the upper account trie
/// ([`Self::finish_accounts`]).
///
/// A scheduler runs the tasks anywhere (each is `Send + 'static`), in any order (largest
/// first, by [`StorageTask::writes`] and [`AccountTask::leaves`], shortens the critical
/// path), and hands all the results of one stage to the next, which needs the
/// [`StateTrie`] the job came from. [`Self::finish`] runs the account stage on the calling
/// thread.
#[derive(Debug)]
#[must_use = "a prepared block must be finished"]
pub struct BlockRootJob {
    trie: u64,
    rules: RootRules,
    accounts: Vec<AccountUpdate>,
    tasks: Vec<StorageTask>,
    /// The storage tries split into units: by address, the upper trie.
    split_storages: HashMap<Address, SparseTrie>,
    /// After [`Self::account_tasks`]: what the block's finish commits.
    stage: Option<Box<AccountStage>>,
}

/// A block's changes in plain state and storage nodes, gathered by the account stage for
/// its finish to record.
#[derive(Debug, Default)]
struct AccountStage {
    plain: Vec<(Address, Option<AccountState>)>,
    wiped: Vec<B256>,
    storage_nodes: Vec<(B256, NodeChanges)>,
    /// The account trie's changed nodes from its units.
    account_nodes: NodeChanges,
}

impl BlockRootJob {
    /// The storage tasks, handed out once (later calls return none): one per account whose
    /// storage the block changes, or one per unit of a storage trie the split rule cuts.
    pub fn storage_tasks(&mut self) -> Vec<StorageTask> {
        std::mem::take(&mut self.tasks)
    }

    /// The number of accounts the block changes, each a path of the account trie to
    /// update (the account trie's share of the work).
    pub fn accounts(&self) -> usize {
        self.accounts.len()
    }

    /// Updates `trie` (the trie this job was prepared on) with every touched account's
    /// post-values and the storage roots of `results` (one per storage task, in any
    /// order), and returns the block's post state root: [`Self::account_tasks`], each
    /// task run here, then [`Self::finish_accounts`]. The first error in account order
    /// wins, a storage task's included.
    ///
    /// Panics when `trie` is not the one the job was prepared on, or when `results` lacks
    /// a task's result.
    pub fn finish(
        mut self,
        trie: &mut StateTrie,
        results: Vec<StorageRoot>,
    ) -> Result<B256, RootError> {
        let parts = self
            .account_tasks(trie, results)?
            .into_iter()
            .map(AccountTask::run)
            .collect();
        self.finish_accounts(trie, parts)
    }

    /// The account stage, once every storage task has run: joins the split storage tries,
    /// and updates the account trie with every touched account's post-values and storage
    /// root. When the split rule cuts the account trie, its lower subtries are the
    /// returned tasks, to run anywhere and hand to [`Self::finish_accounts`]; otherwise
    /// the account trie is updated here and none is returned.
    ///
    /// Panics as [`Self::finish`] does.
    pub fn account_tasks(
        &mut self,
        trie: &mut StateTrie,
        results: Vec<StorageRoot>,
    ) -> Result<Vec<AccountTask>, RootError> {
        let updates = self.account_updates(trie, results)?;
        match split(&mut trie.accounts, trie.split, updates)? {
            Err(updates) => {
                updates
                    .apply(&mut trie.accounts, false)
                    .map_err(|mut e| e.swap_remove(0))?;
                Ok(Vec::new())
            }
            Ok(units) => {
                let collect = trie.changes.is_some();
                Ok(units
                    .into_iter()
                    .map(|unit| AccountTask { unit, collect })
                    .collect())
            }
        }
    }

    /// The block's post state root, once the account tasks have run: their lower subtries
    /// joined into the account trie (`parts`, one per task, in any order; none when
    /// [`Self::account_tasks`] gave none), and the upper trie hashed. The first task's
    /// error, in path order, wins.
    ///
    /// Panics when `trie` is not the one the job was prepared on, or the account stage has
    /// not run.
    pub fn finish_accounts(
        mut self,
        trie: &mut StateTrie,
        mut parts: Vec<AccountPart>,
    ) -> Result<B256, RootError> {
        assert!(
            trie.id == self.trie,
            "BlockRootJob::finish_accounts: not the trie the job was prepared on"
        );
        let mut stage = self
            .stage
            .take()
            .expect("BlockRootJob::finish_accounts: the account stage has not run");
        if !parts.is_empty() {
            parts.sort_by_key(|p| p.unit.first_path());
            let mut units = Vec::with_capacity(parts.len());
            for part in parts {
                part.result?;
                stage.account_nodes.extend(part.nodes.into_iter().flatten());
                units.push(part.unit);
            }
            join(&mut trie.accounts, units, trie.split.depth)?;
        }
        Ok(commit_root(trie, *stage))
    }

    /// [`Self::finish`], the account trie whole; with `collect`, the account trie's
    /// missing nodes are collected (every insert and removal tried) rather than the first
    /// returned, for the witness builder to retain them all in one round. Never empty on
    /// error.
    pub(crate) fn finish_collecting(
        mut self,
        trie: &mut StateTrie,
        results: Vec<StorageRoot>,
        collect: bool,
    ) -> Result<B256, Vec<RootError>> {
        let updates = self.account_updates(trie, results).map_err(|e| vec![e])?;
        updates.apply(&mut trie.accounts, collect)?;
        let stage = self.stage.take().expect("set by account_updates");
        Ok(commit_root(trie, *stage))
    }

    /// The storage results into storage roots (split tries joined and hashed), and every
    /// changed account's leaf update; the plain changes kept for the finish.
    fn account_updates(
        &mut self,
        trie: &mut StateTrie,
        results: Vec<StorageRoot>,
    ) -> Result<Updates, RootError> {
        assert!(
            trie.id == self.trie && trie.pending,
            "BlockRootJob::finish: not the trie the job was prepared on"
        );
        let mut stage = AccountStage::default();
        let mut roots = self.storage_roots(trie, results, &mut stage.storage_nodes);
        let mut updates = Updates::default();
        for a in &self.accounts {
            let storage_root = match a.storage_task {
                Some(_) => Some(
                    roots
                        .remove(&a.address)
                        .unwrap_or_else(|| panic!("no storage result for {}", a.address))?,
                ),
                None => a.pre_storage_root,
            };
            let key = Nibbles::unpack(keccak256(a.address));
            if a.deleted(self.rules) {
                trie.storages.remove(&a.address);
                if a.pre.is_some() {
                    updates.removals.push(key);
                    stage.plain.push((a.address, None));
                    if a.pre_storage_root.is_some_and(|r| r != EMPTY_ROOT_HASH) {
                        stage.wiped.push(keccak256(a.address));
                    }
                }
                continue;
            }
            if a.pre.is_none() && !a.changed {
                continue;
            }
            let fields = AccountState {
                balance: a.balance,
                nonce: a.nonce,
                code_hash: a.code_hash,
            };
            if a.pre != Some(fields) {
                stage.plain.push((a.address, Some(fields)));
            }
            match (a.pre_storage_root, storage_root) {
                (Some(pre_root), Some(storage_root)) => {
                    let pre = a
                        .pre
                        .map(|p| TrieAccount::new(p.nonce, p.balance, pre_root, p.code_hash));
                    let post = TrieAccount::new(a.nonce, a.balance, storage_root, a.code_hash);
                    if pre != Some(post) {
                        updates.inserts.push((key, LeafValue::Account(post)));
                    }
                }
                // The leaf is read where it is set: the fields the block leaves are its own.
                _ => updates.accounts.push((
                    key,
                    AccountLeaf {
                        nonce: a.post.nonce,
                        balance: a.post.balance,
                        code_hash: a.post.code_hash,
                        storage_root,
                    },
                )),
            }
        }
        self.stage = Some(Box::new(stage));
        Ok(updates)
    }

    /// Each storage task's root by account (a split trie's units joined into its upper
    /// trie, then hashed), the updated tries kept in `trie` for the next block and, when
    /// collected, their changed nodes added to `storage_nodes`.
    fn storage_roots(
        &mut self,
        trie: &mut StateTrie,
        results: Vec<StorageRoot>,
        storage_nodes: &mut Vec<(B256, NodeChanges)>,
    ) -> HashMap<Address, Result<B256, RootError>> {
        let mut roots: HashMap<Address, Result<B256, RootError>> = HashMap::default();
        let mut split_parts: HashMap<Address, Vec<StorageRoot>> = HashMap::default();
        for r in results {
            match r.done {
                StorageDone::Lower { .. } => split_parts.entry(r.address).or_default().push(r),
                StorageDone::Whole { trie: t, root } => {
                    if root.is_ok() {
                        trie.storages.insert(r.address, t);
                        if let Some(nodes) = r.nodes {
                            storage_nodes.push((keccak256(r.address), nodes));
                        }
                    }
                    roots.insert(r.address, root);
                }
            }
        }
        for (address, mut parts) in split_parts {
            let mut upper = self
                .split_storages
                .remove(&address)
                .expect("a storage unit's trie was split by its job");
            parts.sort_by_key(|p| match &p.done {
                StorageDone::Lower { unit, .. } => unit.first_path(),
                StorageDone::Whole { .. } => unreachable!("only units are gathered"),
            });
            let mut nodes = trie.changes.is_some().then(NodeChanges::new);
            let root = join_storage(&mut upper, parts, nodes.as_mut(), trie.split.depth);
            if root.is_ok() {
                trie.storages.insert(address, upper);
                if let Some(nodes) = nodes {
                    storage_nodes.push((keccak256(address), nodes));
                }
            }
            roots.insert(address, root);
        }
        roots
    }
}

/// A split storage trie's root: its units (`parts`, run, in path order) joined into its
/// `upper` trie, which is then hashed (its changed nodes, the units' first, added to
/// `nodes` when given). The first unit's error wins.
fn join_storage(
    upper: &mut SparseTrie,
    parts: Vec<StorageRoot>,
    mut nodes: Option<&mut NodeChanges>,
    depth: usize,
) -> Result<B256, RootError> {
    let mut units = Vec::with_capacity(parts.len());
    for part in parts {
        let StorageDone::Lower { unit, result } = part.done else {
            unreachable!("only units are gathered");
        };
        result?;
        if let (Some(nodes), Some(mut own)) = (nodes.as_deref_mut(), part.nodes) {
            nodes.append(&mut own);
        }
        units.push(unit);
    }
    join(upper, units, depth)?;
    Ok(match nodes {
        None => upper.root(),
        Some(nodes) => upper.root_collecting(nodes),
    })
}

/// Hashes the account trie (its changed nodes recorded after the units' when `trie`
/// collects changes), records the block's changes, and ends the job: the block's root.
fn commit_root(trie: &mut StateTrie, mut stage: AccountStage) -> B256 {
    trie.pending = false;
    match trie.changes.as_deref_mut() {
        None => trie.root = trie.accounts.root(),
        Some(out) => {
            out.account_nodes.append(&mut stage.account_nodes);
            trie.root = trie.accounts.root_collecting(&mut out.account_nodes);
            out.accounts.append(&mut stage.plain);
            out.storage_nodes.append(&mut stage.storage_nodes);
            out.wiped.append(&mut stage.wiped);
        }
    }
    trie.root
}

/// A unit of the account trie's update: lower subtries of the account trie with their
/// accounts' new leaves, run on any thread ([`Self::run`]) once the block's storage roots
/// are known ([`BlockRootJob::account_tasks`]).
#[derive(Debug)]
pub struct AccountTask {
    unit: Lower,
    /// Whether the subtries' changed nodes are collected as they hash.
    collect: bool,
}

impl AccountTask {
    /// The account leaves it updates: its size, for a scheduler to order tasks by.
    pub fn leaves(&self) -> usize {
        self.unit.leaves()
    }

    /// Applies the leaves' updates to its subtries and hashes them.
    pub fn run(mut self) -> AccountPart {
        let mut nodes = self.collect.then(NodeChanges::new);
        let result = self.unit.run(nodes.as_mut());
        AccountPart {
            unit: self.unit,
            result,
            nodes,
        }
    }
}

/// What an [`AccountTask`] returns, for [`BlockRootJob::finish_accounts`]: its updated
/// subtries, or why they could not be updated.
#[derive(Debug)]
pub struct AccountPart {
    unit: Lower,
    result: Result<(), RootError>,
    nodes: Option<NodeChanges>,
}

/// One account's storage-trie update for one block, or one unit of it when the trie is
/// split: runs on any thread ([`Self::run`]).
#[derive(Debug)]
pub struct StorageTask {
    address: Address,
    work: StorageWork,
    /// Whether the trie's changed nodes are collected as it hashes.
    collect: bool,
}

/// A storage task's trie and updates.
#[derive(Debug)]
enum StorageWork {
    /// The whole trie, and its (slot, post-value) writes in the access list's slot order,
    /// with their slots' keys (hashed by the task, on first use: empty until then).
    Whole {
        trie: Box<SparseTrie>,
        writes: Vec<(U256, U256)>,
        keys: Vec<Nibbles>,
    },
    /// Lower subtries of a split trie, whose upper trie the job keeps.
    Lower(Lower),
}

impl StorageTask {
    /// The task of `address`'s slot `writes` (slot, post-value) on its storage `trie`.
    fn new(address: Address, writes: Vec<(U256, U256)>, trie: SparseTrie) -> Self {
        Self {
            address,
            work: StorageWork::Whole {
                trie: Box::new(trie),
                writes,
                keys: Vec::new(),
            },
            collect: false,
        }
    }

    /// The account whose storage this is.
    pub fn address(&self) -> Address {
        self.address
    }

    /// The number of slot writes: the task's size, for a scheduler to order tasks by.
    pub fn writes(&self) -> usize {
        match &self.work {
            StorageWork::Whole { writes, .. } => writes.len(),
            StorageWork::Lower(unit) => unit.leaves(),
        }
    }

    /// Whether this is one unit of a storage trie the split rule cut (its root is then
    /// known once every unit of the trie has run, at [`BlockRootJob::account_tasks`]).
    pub fn is_unit(&self) -> bool {
        matches!(self.work, StorageWork::Lower(_))
    }

    /// Reads, from `reader`, the nodes of this task's storage trie on the paths of its
    /// slots (and the siblings a deletion may need), batched by depth, for a trie whose
    /// nodes are read as each block needs them ([`StateTrie::unread`]).
    pub fn read_nodes<R: NodeReader + ?Sized>(
        &mut self,
        reader: &mut R,
    ) -> Result<NodeReads, ReadNodesError<R::Error>> {
        match &mut self.work {
            StorageWork::Whole { trie, writes, keys } => {
                let mut targets = slot_keys(writes, keys)
                    .iter()
                    .zip(writes.iter())
                    .map(|(key, (_, value))| (*key, value.is_zero()))
                    .collect();
                read_paths(trie, &mut targets, reader)
            }
            StorageWork::Lower(unit) => unit.read_nodes(reader),
        }
    }

    /// [`Self::read_nodes`], then [`Self::run`]: the new root (or why there is none, a
    /// failed read included) and what was read.
    pub fn run_reading<R: NodeReader + ?Sized>(
        mut self,
        reader: &mut R,
    ) -> (StorageRoot, NodeReads) {
        match self.read_nodes(reader) {
            Ok(reads) => (self.run(), reads),
            Err(e) => {
                let e = RootError::from(e);
                let done = match self.work {
                    StorageWork::Whole { trie, .. } => StorageDone::Whole {
                        trie: *trie,
                        root: Err(e),
                    },
                    StorageWork::Lower(unit) => StorageDone::Lower {
                        unit,
                        result: Err(e),
                    },
                };
                let root = StorageRoot {
                    address: self.address,
                    done,
                    nodes: None,
                };
                (root, NodeReads::default())
            }
        }
    }

    /// Applies the writes (a zero value deletes the slot; non-zero writes first, then
    /// deletions) and hashes the storage trie, or the unit's subtries.
    pub fn run(self) -> StorageRoot {
        let mut nodes = self.collect.then(NodeChanges::new);
        let done = match self.work {
            StorageWork::Whole {
                mut trie,
                writes,
                mut keys,
            } => {
                slot_keys(&writes, &mut keys);
                let root = apply_writes(&mut trie, &keys, &writes, nodes.as_mut());
                StorageDone::Whole { trie: *trie, root }
            }
            StorageWork::Lower(mut unit) => {
                let result = unit.run(nodes.as_mut());
                StorageDone::Lower { unit, result }
            }
        };
        StorageRoot {
            address: self.address,
            done,
            nodes,
        }
    }
}

/// The keys of `writes`' slots in `keys`, hashed there first if it is empty.
fn slot_keys<'k>(writes: &[(U256, U256)], keys: &'k mut Vec<Nibbles>) -> &'k [Nibbles] {
    if keys.is_empty() {
        keys.extend(
            writes
                .iter()
                .map(|(slot, _)| Nibbles::unpack(keccak256(B256::from(*slot)))),
        );
    }
    keys
}

/// Applies slot `writes`, at `keys`, to a whole storage `trie` (non-zero values first,
/// then the deletions) and hashes it.
fn apply_writes(
    trie: &mut SparseTrie,
    keys: &[Nibbles],
    writes: &[(U256, U256)],
    nodes: Option<&mut NodeChanges>,
) -> Result<B256, RootError> {
    for (key, (_, value)) in keys.iter().zip(writes) {
        if !value.is_zero() {
            trie.insert(*key, alloy_rlp::encode(value))?;
        }
    }
    for (key, (_, value)) in keys.iter().zip(writes) {
        if value.is_zero() {
            trie.remove(*key)?;
        }
    }
    Ok(match nodes {
        None => trie.root(),
        Some(nodes) => trie.root_collecting(nodes),
    })
}

/// What a [`StorageTask`] returns: the account's new storage root (or why it is not
/// computable), and the updated trie, which [`BlockRootJob::account_tasks`] keeps for the
/// next block; for a unit of a split trie, its updated subtries.
#[derive(Debug)]
pub struct StorageRoot {
    address: Address,
    done: StorageDone,
    /// The trie's changed nodes, when collected.
    nodes: Option<NodeChanges>,
}

/// A storage task's outcome.
#[derive(Debug)]
enum StorageDone {
    Whole {
        trie: SparseTrie,
        root: Result<B256, RootError>,
    },
    Lower {
        unit: Lower,
        result: Result<(), RootError>,
    },
}

impl StorageRoot {
    /// The account whose storage this is.
    pub fn address(&self) -> Address {
        self.address
    }

    /// The new storage root (`None` for a unit of a split trie, whose root is known once
    /// its units are joined), or why it is not computable.
    pub fn root(&self) -> Result<Option<B256>, &RootError> {
        match &self.done {
            StorageDone::Whole { root, .. } => root.as_ref().map(|r| Some(*r)),
            StorageDone::Lower { result, .. } => result.as_ref().map(|()| None),
        }
    }
}
