//! The state trie: the account trie and the storage tries it opens, updated block by block
//! from access lists.

use crate::{
    error::{RootError, TrieId, TriePath},
    sparse::{NodeStore, SparseTrie},
};
use alloy_eip7928::{AccountChanges, BlockAccessList};
use alloy_primitives::{Address, B256, Bytes, U256, keccak256, map::HashMap};
use alloy_rlp::Decodable;
use alloy_trie::{EMPTY_ROOT_HASH, KECCAK_EMPTY, Nibbles, TrieAccount};
use gigagas_dump::Witness;
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
}

impl StateTrie {
    /// The state at `witness.parent_state_root`, its nodes opened on demand from the
    /// witness. Fails when no node hashes to that root (unless it is the empty trie's).
    pub fn from_witness(witness: &Witness) -> Result<Self, RootError> {
        let store = Arc::new(NodeStore::new(&witness.nodes));
        let root = witness.parent_state_root;
        if root != EMPTY_ROOT_HASH && !store.contains(&root) {
            return Err(RootError::MissingRoot { root });
        }
        Ok(Self {
            accounts: SparseTrie::blinded(TrieId::Account, root, store.clone()),
            storages: HashMap::default(),
            store,
            root,
            id: NEXT_TRIE.fetch_add(1, Ordering::Relaxed),
            pending: false,
        })
    }

    /// The state at `parent_root` over nodes already keyed by their hash, e.g. read from a
    /// state store's trie table (nothing is hashed again: the keys are trusted as a store's
    /// values are). Fails like [`Self::from_witness`] when no node has the root's hash.
    pub fn from_hashed_nodes(
        parent_root: B256,
        nodes: Vec<(B256, Bytes)>,
    ) -> Result<Self, RootError> {
        let store = Arc::new(NodeStore::from_hashed(nodes));
        if parent_root != EMPTY_ROOT_HASH && !store.contains(&parent_root) {
            return Err(RootError::MissingRoot { root: parent_root });
        }
        Ok(Self {
            accounts: SparseTrie::blinded(TrieId::Account, parent_root, store.clone()),
            storages: HashMap::default(),
            store,
            root: parent_root,
            id: NEXT_TRIE.fetch_add(1, Ordering::Relaxed),
            pending: false,
        })
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
        TrieAccount::decode(&mut leaf.as_slice())
            .map(Some)
            .map_err(|e| RootError::BadLeaf {
                trie: TrieId::Account,
                path: TriePath(key),
                reason: e.to_string(),
            })
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

    /// Splits one block's root into independent tasks: reads each touched account's leaf
    /// (so it needs the account trie's nodes on those paths) and hands out the storage
    /// tries that change, one [`StorageTask`] each, to run on any thread; then
    /// [`BlockRootJob::finish`] updates the account trie with their roots.
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
        for changes in bal {
            let pre = self.account(changes.address)?;
            let storage_task = (!changes.storage_changes.is_empty()).then(|| {
                let trie = self.storages.remove(&changes.address).unwrap_or_else(|| {
                    SparseTrie::blinded(
                        TrieId::Storage(changes.address),
                        pre.as_ref().map_or(EMPTY_ROOT_HASH, |a| a.storage_root),
                        self.store.clone(),
                    )
                });
                tasks.push(StorageTask::new(changes, trie));
                tasks.len() - 1
            });
            accounts.push(AccountUpdate::new(changes, pre, storage_task));
        }
        self.pending = true;
        Ok(BlockRootJob {
            trie: self.id,
            rules,
            accounts,
            tasks,
        })
    }
}

/// One touched account's post-values, but for its storage root.
#[derive(Debug)]
struct AccountUpdate {
    address: Address,
    pre: Option<TrieAccount>,
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
        changes: &AccountChanges,
        pre: Option<TrieAccount>,
        storage_task: Option<usize>,
    ) -> Self {
        let nonce = changes.nonce_changes.last().map(|c| c.new_nonce);
        let balance = changes.balance_changes.last().map(|c| c.post_balance);
        let code_hash = changes.code_changes.last().map(|c| keccak256(&c.new_code));
        Self {
            address: changes.address,
            nonce: nonce.unwrap_or(pre.as_ref().map_or(0, |a| a.nonce)),
            balance: balance.unwrap_or(pre.as_ref().map_or(U256::ZERO, |a| a.balance)),
            code_hash: code_hash.unwrap_or(pre.as_ref().map_or(KECCAK_EMPTY, |a| a.code_hash)),
            changed: nonce.is_some()
                || balance.is_some()
                || code_hash.is_some()
                || storage_task.is_some(),
            pre,
            storage_task,
        }
    }
}

/// One block's root, split: the storage tasks ([`Self::storage_tasks`]), independent of
/// each other, then the account trie ([`Self::finish`]).
///
/// A scheduler runs the tasks anywhere (each is `Send + 'static`), in any order (largest
/// first, by [`StorageTask::writes`], shortens the critical path), and hands all the
/// results to `finish`, which needs the [`StateTrie`] the job came from.
#[derive(Debug)]
#[must_use = "a prepared block must be finished"]
pub struct BlockRootJob {
    trie: u64,
    rules: RootRules,
    accounts: Vec<AccountUpdate>,
    tasks: Vec<StorageTask>,
}

impl BlockRootJob {
    /// The storage tasks, handed out once (later calls return none): one per account whose
    /// storage the block changes.
    pub fn storage_tasks(&mut self) -> Vec<StorageTask> {
        std::mem::take(&mut self.tasks)
    }

    /// The number of accounts the block touches (the account trie's share of the work).
    pub fn accounts(&self) -> usize {
        self.accounts.len()
    }

    /// Updates `trie` (the trie this job was prepared on) with every touched account's
    /// post-values and the storage roots of `results` (one per storage task, in any
    /// order), and returns the block's post state root. The first error in account order
    /// wins, a storage task's included.
    ///
    /// Panics when `trie` is not the one the job was prepared on, or when `results` lacks
    /// a task's result.
    pub fn finish(
        self,
        trie: &mut StateTrie,
        results: Vec<StorageRoot>,
    ) -> Result<B256, RootError> {
        self.finish_collecting(trie, results, false)
            .map_err(|mut errors| errors.swap_remove(0))
    }

    /// [`Self::finish`]; with `collect`, the account trie's missing nodes are collected
    /// (every insert and removal tried) rather than the first returned, for the witness
    /// builder to retain them all in one round. Never empty on error.
    pub(crate) fn finish_collecting(
        self,
        trie: &mut StateTrie,
        results: Vec<StorageRoot>,
        collect: bool,
    ) -> Result<B256, Vec<RootError>> {
        assert!(
            trie.id == self.trie && trie.pending,
            "BlockRootJob::finish: not the trie the job was prepared on"
        );
        trie.pending = false;
        let mut roots: HashMap<Address, Result<B256, RootError>> = HashMap::default();
        for r in results {
            if r.root.is_ok() {
                trie.storages.insert(r.address, r.trie);
            }
            roots.insert(r.address, r.root);
        }
        let mut inserts = Vec::new();
        let mut removals = Vec::new();
        for a in &self.accounts {
            let storage_root = match a.storage_task {
                Some(_) => roots
                    .remove(&a.address)
                    .unwrap_or_else(|| panic!("no storage result for {}", a.address))
                    .map_err(|e| vec![e])?,
                None => a.pre.as_ref().map_or(EMPTY_ROOT_HASH, |p| p.storage_root),
            };
            let key = Nibbles::unpack(keccak256(a.address));
            let empty = a.nonce == 0 && a.balance.is_zero() && a.code_hash == KECCAK_EMPTY;
            if self.rules.delete_empty_accounts && empty {
                trie.storages.remove(&a.address);
                if a.pre.is_some() {
                    removals.push(key);
                }
                continue;
            }
            if a.pre.is_none() && !a.changed {
                continue;
            }
            let post = TrieAccount::new(a.nonce, a.balance, storage_root, a.code_hash);
            if a.pre.as_ref() != Some(&post) {
                inserts.push((key, alloy_rlp::encode(post)));
            }
        }
        // Updates before deletions, as clients do: an insert can keep a branch that a
        // deletion would otherwise collapse (and so need no sibling node).
        let mut errors = Vec::new();
        let mut keep = |result: Result<(), RootError>| match result {
            Err(e @ RootError::MissingNode { .. }) if collect => {
                errors.push(e);
                Ok(())
            }
            other => other.map_err(|e| vec![e]),
        };
        for (key, value) in inserts {
            keep(trie.accounts.insert(key, value))?;
        }
        for key in removals {
            keep(trie.accounts.remove(key))?;
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        trie.root = trie.accounts.root();
        Ok(trie.root)
    }
}

/// One account's storage-trie update for one block: runs on any thread ([`Self::run`]).
#[derive(Debug)]
pub struct StorageTask {
    address: Address,
    trie: SparseTrie,
    /// (hashed slot, post-value), in the access list's slot order.
    writes: Vec<(Nibbles, U256)>,
}

impl StorageTask {
    fn new(changes: &AccountChanges, trie: SparseTrie) -> Self {
        let writes = changes
            .storage_changes
            .iter()
            .filter_map(|s| {
                let value = s.changes.last()?.new_value;
                Some((Nibbles::unpack(keccak256(B256::from(s.slot))), value))
            })
            .collect();
        Self {
            address: changes.address,
            trie,
            writes,
        }
    }

    /// The account whose storage this is.
    pub fn address(&self) -> Address {
        self.address
    }

    /// The number of slot writes: the task's size, for a scheduler to order tasks by.
    pub fn writes(&self) -> usize {
        self.writes.len()
    }

    /// Applies the writes (a zero value deletes the slot; non-zero writes first, then
    /// deletions) and hashes the storage trie.
    pub fn run(mut self) -> StorageRoot {
        let root = self.apply();
        StorageRoot {
            address: self.address,
            trie: self.trie,
            root,
        }
    }

    fn apply(&mut self) -> Result<B256, RootError> {
        for (key, value) in &self.writes {
            if !value.is_zero() {
                self.trie.insert(*key, alloy_rlp::encode(value))?;
            }
        }
        for (key, value) in &self.writes {
            if value.is_zero() {
                self.trie.remove(*key)?;
            }
        }
        Ok(self.trie.root())
    }
}

/// What a [`StorageTask`] returns: the account's new storage root (or why it is not
/// computable), and the updated trie, which [`BlockRootJob::finish`] keeps for the next
/// block.
#[derive(Debug)]
pub struct StorageRoot {
    address: Address,
    trie: SparseTrie,
    root: Result<B256, RootError>,
}

impl StorageRoot {
    /// The account whose storage this is.
    pub fn address(&self) -> Address {
        self.address
    }

    /// The new storage root, or why it is not computable.
    pub fn root(&self) -> Result<B256, &RootError> {
        self.root.as_ref().copied()
    }
}
