//! A whole state's tries, open, kept up to date change by change: for producers that hold
//! the whole state (the generator), each block's root costs the paths its changes touch,
//! not a rebuild, and the witness of a range of blocks is read off the tries at its parent.

use crate::{
    error::{RootError, TrieId},
    full_state::FullState,
    padding::StatePadding,
    sparse::{NodeStore, SparseTrie},
    state::{RootRules, StateTrie, StorageTask},
};
use alloy_eip7928::BlockAccessList;
use alloy_primitives::{
    Address, B256, Bytes, U256, keccak256,
    map::{HashMap, HashSet},
};
use alloy_trie::{EMPTY_ROOT_HASH, Nibbles, TrieAccount};
use gigagas_dump::{AccountState, Witness};
use rayon::prelude::*;
use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

/// One account of [`FullTries`]: its fields and its storage trie.
#[derive(Debug, Clone)]
struct Entry {
    fields: AccountState,
    storage: SparseTrie,
}

/// The paths a witness proves: every touched account's, and every touched slot's by account.
#[derive(Debug, Default)]
struct Targets {
    accounts: BTreeSet<Nibbles>,
    storage: BTreeMap<Address, BTreeSet<Nibbles>>,
}

impl Targets {
    /// The keys of every account and slot `access_lists` write or read.
    fn of(access_lists: &[&BlockAccessList]) -> Self {
        let mut targets = Self::default();
        for bal in access_lists {
            for changes in bal.iter() {
                targets.accounts.insert(account_key(changes.address));
                let slots = changes
                    .storage_changes
                    .iter()
                    .map(|s| s.slot)
                    .chain(changes.storage_reads.iter().copied());
                let storage = targets.storage.entry(changes.address).or_default();
                storage.extend(slots.map(slot_key));
            }
        }
        targets
    }

    /// Adds the paths of `missing` (missing-node errors), returning those not there before:
    /// the account trie's and the storage tries' by account.
    fn add(
        &mut self,
        missing: &[RootError],
    ) -> (Vec<Nibbles>, BTreeMap<Address, BTreeSet<Nibbles>>) {
        let mut account_paths = Vec::new();
        let mut storage_paths: BTreeMap<Address, BTreeSet<Nibbles>> = BTreeMap::new();
        for error in missing {
            match error.missing_node().expect("only missing nodes") {
                (TrieId::Account, path) => {
                    if self.accounts.insert(path) {
                        account_paths.push(path);
                    }
                }
                (TrieId::Storage(address), path) => {
                    if self.storage.entry(address).or_default().insert(path) {
                        storage_paths.entry(address).or_default().insert(path);
                    }
                }
            }
        }
        (account_paths, storage_paths)
    }
}

/// A whole state as open Merkle-Patricia tries: the account trie and every account's
/// storage trie, each padded to a larger trie's depth where a [`StatePadding`] says so
/// ([`crate::Padding`]).
///
/// Changes ([`Self::set_account`], [`Self::set_slot`], [`Self::clear_storage`]) update the
/// tries at once; [`Self::root`] hashes only the nodes on the paths changed since the last
/// root. [`Self::witness`] gives, at the state the tries hold, the witness of blocks to
/// come.
#[derive(Debug, Clone)]
pub struct FullTries {
    accounts: SparseTrie,
    entries: HashMap<Address, Entry>,
    /// Accounts changed since the last root (their leaf to write or remove).
    dirty: HashSet<Address>,
    /// Accounts whose storage changed since the last root (a subset of `dirty`).
    dirty_storage: HashSet<Address>,
    /// The paddings' virtual nodes (empty without padding): untouched subtries open from it.
    store: Arc<NodeStore>,
}

impl FullTries {
    /// The tries of `state`, padded as `padding` says, hashed. A padded trie starts as its
    /// padding's virtual trie, the real leaves inserted into it (opening the virtual nodes
    /// on their paths); a storage padding of an address `state` does not hold is unused.
    pub fn new(state: &FullState, padding: &StatePadding) -> Result<Self, RootError> {
        let store = Arc::new(NodeStore::new(&padding.nodes()));
        let entries: Vec<(Address, Entry, B256)> = state
            .par_iter()
            .map(|(address, account)| {
                let mut slots: Vec<(Nibbles, Vec<u8>)> = account
                    .storage
                    .iter()
                    .filter(|(_, v)| !v.is_zero())
                    .map(|(slot, value)| (slot_key(*slot), alloy_rlp::encode(value)))
                    .collect();
                slots.sort_unstable_by_key(|s| s.0);
                let id = TrieId::Storage(*address);
                let mut storage = match padding.storage_of(address) {
                    None => SparseTrie::from_sorted(id, store.clone(), slots),
                    Some(p) => padded(id, p.root(), &store, slots)?,
                };
                let storage_root = storage.root();
                let fields = AccountState {
                    balance: account.balance,
                    nonce: account.nonce,
                    code_hash: account.code_hash,
                };
                Ok((*address, Entry { fields, storage }, storage_root))
            })
            .collect::<Result<_, RootError>>()?;
        let mut leaves: Vec<(Nibbles, Vec<u8>)> = entries
            .par_iter()
            .map(|(address, entry, storage_root)| {
                (
                    account_key(*address),
                    leaf_value(&entry.fields, *storage_root),
                )
            })
            .collect();
        leaves.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut accounts = match padding.accounts() {
            None => SparseTrie::from_sorted(TrieId::Account, store.clone(), leaves),
            Some(p) => padded(TrieId::Account, p.root(), &store, leaves)?,
        };
        accounts.root();
        Ok(Self {
            accounts,
            entries: entries.into_iter().map(|(a, e, _)| (a, e)).collect(),
            dirty: HashSet::default(),
            dirty_storage: HashSet::default(),
            store,
        })
    }

    /// Sets account `address`'s fields (`None`: it does not exist, its storage deleted with
    /// it). An account created here starts with no storage.
    pub fn set_account(&mut self, address: Address, fields: Option<AccountState>) {
        match fields {
            None => {
                if self.entries.remove(&address).is_some() {
                    self.dirty.insert(address);
                }
            }
            Some(fields) => match self.entries.get_mut(&address) {
                Some(entry) if entry.fields == fields => {}
                Some(entry) => {
                    entry.fields = fields;
                    self.dirty.insert(address);
                }
                None => {
                    let storage = SparseTrie::blinded(
                        TrieId::Storage(address),
                        EMPTY_ROOT_HASH,
                        self.store.clone(),
                    );
                    self.entries.insert(address, Entry { fields, storage });
                    self.dirty.insert(address);
                }
            },
        }
    }

    /// The fields of account `address`, `None` when it does not exist.
    pub fn account(&self, address: Address) -> Option<AccountState> {
        self.entries.get(&address).map(|e| e.fields)
    }

    /// Sets slot `slot` of account `address` to `value` (zero deletes it). The account must
    /// exist ([`Self::set_account`]); a slot of one that does not is ignored, as its
    /// storage is.
    pub fn set_slot(&mut self, address: Address, slot: U256, value: U256) -> Result<(), RootError> {
        let Some(entry) = self.entries.get_mut(&address) else {
            return Ok(());
        };
        let key = slot_key(slot);
        let value = (!value.is_zero()).then(|| alloy_rlp::encode(value));
        if entry.storage.get(key)? == value {
            return Ok(());
        }
        self.dirty.insert(address);
        self.dirty_storage.insert(address);
        match value {
            None => entry.storage.remove(key),
            Some(value) => entry.storage.insert(key, value),
        }
    }

    /// Deletes every slot of account `address`, if it exists.
    pub fn clear_storage(&mut self, address: Address) {
        if let Some(entry) = self.entries.get_mut(&address)
            && entry.storage.root() != EMPTY_ROOT_HASH
        {
            self.dirty.insert(address);
            self.dirty_storage.insert(address);
            entry.storage = SparseTrie::blinded(
                TrieId::Storage(address),
                EMPTY_ROOT_HASH,
                self.store.clone(),
            );
        }
    }

    /// The state root: the storage roots of the accounts changed since the last call, their
    /// leaves, and the account trie, hashing only what changed.
    pub fn root(&mut self) -> Result<B256, RootError> {
        let mut dirty: Vec<Address> = self.dirty.drain().collect();
        dirty.sort_unstable();
        // The changed storage tries hash on rayon's pool (a token's trie is most of a
        // block's work), then their accounts' leaves go into the account trie.
        let mut storages: Vec<(Address, SparseTrie)> = Vec::new();
        for address in self.dirty_storage.drain() {
            if let Some(entry) = self.entries.get_mut(&address) {
                let blank = SparseTrie::blinded(
                    TrieId::Storage(address),
                    EMPTY_ROOT_HASH,
                    self.store.clone(),
                );
                storages.push((address, std::mem::replace(&mut entry.storage, blank)));
            }
        }
        storages.par_iter_mut().for_each(|(_, trie)| {
            trie.root();
        });
        for (address, trie) in storages {
            if let Some(entry) = self.entries.get_mut(&address) {
                entry.storage = trie;
            }
        }
        for address in dirty {
            let key = account_key(address);
            match self.entries.get_mut(&address) {
                Some(entry) => {
                    let storage_root = entry.storage.root();
                    self.accounts
                        .insert(key, leaf_value(&entry.fields, storage_root))?;
                }
                None => self.accounts.remove(key)?,
            }
        }
        Ok(self.accounts.root())
    }

    /// The witness of `access_lists` (consecutive blocks, the first one's parent state being
    /// the one these tries hold): the proof nodes of every account and slot they touch
    /// (written or read), plus every node the updates of the blocks need beyond those (the
    /// siblings that deletions collapse into their parents), so that
    /// [`StateTrie::from_witness`] and [`StateTrie::apply_block`] compute each block's root
    /// from the witness alone.
    ///
    /// The nodes deletions need are found by applying the blocks to the witness so far: a
    /// block that reports paths missing is retried, from the state before it, with the
    /// proofs of those paths added, until none is. An error means the access lists cannot
    /// be applied at all (e.g. a node missing that no proof holds, which would be a bug).
    pub fn witness(
        mut self,
        access_lists: &[&BlockAccessList],
        rules: RootRules,
    ) -> Result<Witness, RootError> {
        let root = self.root()?;
        let mut targets = Targets::of(access_lists);
        let mut nodes: BTreeSet<Bytes> =
            self.storage_proofs(&targets.storage)?.into_iter().collect();
        let accounts: Vec<Nibbles> = targets.accounts.iter().copied().collect();
        let mut account_nodes = Vec::new();
        self.accounts.proofs(&accounts, &mut account_nodes)?;
        nodes.extend(account_nodes);

        // Apply the blocks; a block that needs nodes beyond those is retried, from the state
        // before it, with the proofs of the missing paths added. Only a block that may
        // delete a node can need one (an insert opens only the nodes on its own path), so
        // the blocks after the last such block are not applied at all, and those before it
        // in place, with no copy of the trie to retry from.
        let empty_at_start: HashSet<Address> = self
            .entries
            .iter()
            .filter(|(_, e)| is_empty(&e.fields))
            .map(|(address, _)| *address)
            .collect();
        let may_delete = |bal: &BlockAccessList| {
            may_delete(bal)
                || (rules.delete_empty_accounts
                    && bal.iter().any(|c| empty_at_start.contains(&c.address)))
        };
        let needed = access_lists
            .iter()
            .rposition(|bal| may_delete(bal))
            .map_or(0, |last| last + 1);
        let open = |nodes: &BTreeSet<Bytes>| {
            StateTrie::from_witness(&Witness::new(root, nodes.iter().cloned().collect()))
        };
        if needed == 0 {
            return Ok(Witness::new(root, nodes.into_iter().collect()));
        }
        let mut trie = open(&nodes)?;
        for (i, bal) in access_lists[..needed].iter().enumerate() {
            // Should a block that deletes nothing miss nodes after all (which would be a
            // bug), the state before it is rebuilt and the block retried.
            if !may_delete(bal) {
                if missing_nodes(&mut trie, bal, rules)?.is_empty() {
                    continue;
                }
                trie = open(&nodes)?;
                for earlier in &access_lists[..i] {
                    if let Some(e) = missing_nodes(&mut trie, earlier, rules)?.into_iter().next() {
                        return Err(e);
                    }
                }
            }
            self.complete(&mut trie, bal, rules, &mut targets, &mut nodes)?;
        }
        Ok(Witness::new(root, nodes.into_iter().collect()))
    }

    /// Applies `bal` to `trie`, which holds `nodes` (the proofs of `targets`): while the block
    /// reports paths missing, their proofs are added to `trie`, `nodes` and `targets` and the
    /// block is retried from the state before it.
    fn complete(
        &mut self,
        trie: &mut StateTrie,
        bal: &BlockAccessList,
        rules: RootRules,
        targets: &mut Targets,
        nodes: &mut BTreeSet<Bytes>,
    ) -> Result<(), RootError> {
        loop {
            let mut attempt = trie.snapshot();
            let missing = missing_nodes(&mut attempt, bal, rules)?;
            if missing.is_empty() {
                *trie = attempt;
                return Ok(());
            }
            let (mut account_paths, storage_paths) = targets.add(&missing);
            let mut fresh = self.storage_proofs(&storage_paths)?;
            account_paths.sort_unstable();
            self.accounts.proofs(&account_paths, &mut fresh)?;
            fresh.retain(|n| !nodes.contains(n));
            fresh.sort_unstable();
            fresh.dedup();
            if fresh.is_empty() {
                // Missing, yet no proof holds more: retrying would not help.
                return Err(missing.into_iter().next().expect("not empty"));
            }
            trie.add_nodes(&fresh);
            nodes.extend(fresh);
        }
    }

    /// The proof nodes of `targets` (by account) in the storage tries, on rayon's pool.
    fn storage_proofs(
        &mut self,
        targets: &BTreeMap<Address, BTreeSet<Nibbles>>,
    ) -> Result<Vec<Bytes>, RootError> {
        let mut tries: Vec<(&mut SparseTrie, &BTreeSet<Nibbles>)> = self
            .entries
            .iter_mut()
            .filter_map(|(address, e)| Some((&mut e.storage, targets.get(address)?)))
            .collect();
        let per_trie: Vec<Vec<Bytes>> = tries
            .par_iter_mut()
            .map(|(trie, targets)| {
                let targets: Vec<Nibbles> = targets.iter().copied().collect();
                let mut out = Vec::new();
                trie.proofs(&targets, &mut out).map(|_| out)
            })
            .collect::<Result<_, _>>()?;
        Ok(per_trie.into_iter().flatten().collect())
    }
}

/// The trie `id` holding `leaves` inserted into the virtual trie whose root is `root` (its
/// nodes in `store`), opening the virtual nodes on their paths.
fn padded(
    id: TrieId,
    root: B256,
    store: &Arc<NodeStore>,
    leaves: Vec<(Nibbles, Vec<u8>)>,
) -> Result<SparseTrie, RootError> {
    let mut trie = SparseTrie::blinded(id, root, store.clone());
    for (key, value) in leaves {
        trie.insert(key, value)?;
    }
    Ok(trie)
}

/// Whether a block may delete a trie node, whatever the state before it holds but for
/// accounts empty at the start (the caller's part): a slot written to zero, or an account
/// whose balance, nonce or code it sets to zero (which may leave it empty, deleted under
/// EIP-161).
fn may_delete(bal: &BlockAccessList) -> bool {
    bal.iter().any(|changes| {
        changes
            .balance_changes
            .iter()
            .any(|c| c.post_balance.is_zero())
            || changes.nonce_changes.iter().any(|c| c.new_nonce == 0)
            || changes.code_changes.iter().any(|c| c.new_code.is_empty())
            || changes
                .storage_changes
                .iter()
                .any(|s| s.changes.iter().any(|c| c.new_value.is_zero()))
    })
}

/// Whether an account is empty (EIP-161: no nonce, balance or code).
fn is_empty(fields: &AccountState) -> bool {
    fields.nonce == 0 && fields.balance.is_zero() && fields.code_hash == alloy_trie::KECCAK_EMPTY
}

/// The witness of `access_lists` (consecutive blocks, the first one's parent state being
/// `state`): the proof nodes of every account and slot they touch (written or read), plus
/// every node the updates of the blocks need beyond those (the siblings that deletions
/// collapse into their parents), so that [`StateTrie::from_witness`] and
/// [`StateTrie::apply_block`] compute each block's root from the witness alone.
///
/// [`FullTries::witness`] of `state`'s tries, unpadded: see there how the nodes deletions
/// need are found. An error means the access lists cannot be applied at all (e.g. a node
/// missing that no proof holds, which would be a bug).
pub fn witness_for_blocks(
    state: &FullState,
    access_lists: &[&BlockAccessList],
    rules: RootRules,
) -> Result<Witness, RootError> {
    FullTries::new(state, &StatePadding::default())?.witness(access_lists, rules)
}

/// Applies one block's access list to `trie` and returns the nodes it lacks (every
/// storage trie's misses, else every account trie's); none when the root is computable.
/// Errors other than missing nodes are returned. After misses `trie` is part-updated.
fn missing_nodes(
    trie: &mut StateTrie,
    bal: &BlockAccessList,
    rules: RootRules,
) -> Result<Vec<RootError>, RootError> {
    let mut job = match trie.prepare_block(bal, rules) {
        Ok(job) => job,
        Err(e @ RootError::MissingNode { .. }) => return Ok(vec![e]),
        Err(e) => return Err(e),
    };
    let results: Vec<_> = job
        .storage_tasks()
        .into_par_iter()
        .map(StorageTask::run)
        .collect();
    let mut missing = Vec::new();
    for r in &results {
        match r.root() {
            Ok(_) => {}
            Err(e @ RootError::MissingNode { .. }) => missing.push(e.clone()),
            Err(e) => return Err(e.clone()),
        }
    }
    if !missing.is_empty() {
        return Ok(missing);
    }
    match job.finish_collecting(trie, results, true) {
        Ok(_) => Ok(Vec::new()),
        Err(mut errors) => match errors.iter().position(|e| e.missing_node().is_none()) {
            Some(other) => Err(errors.swap_remove(other)),
            None => Ok(errors),
        },
    }
}

/// An account's key in the account trie.
fn account_key(address: Address) -> Nibbles {
    Nibbles::unpack(keccak256(address))
}

/// A slot's key in a storage trie.
fn slot_key(slot: U256) -> Nibbles {
    Nibbles::unpack(keccak256(B256::from(slot)))
}

/// An account leaf's value.
fn leaf_value(fields: &AccountState, storage_root: B256) -> Vec<u8> {
    alloy_rlp::encode(TrieAccount::new(
        fields.nonce,
        fields.balance,
        storage_root,
        fields.code_hash,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Padding, full_state::FullAccount};
    use alloy_rlp::Decodable;
    use alloy_trie::{HashBuilder, nodes::TrieNode};

    fn address(i: u64) -> Address {
        Address::from_word(keccak256(i.to_be_bytes()))
    }

    fn fields(i: u64) -> AccountState {
        AccountState {
            balance: U256::from(i + 1),
            nonce: i,
            code_hash: alloy_trie::KECCAK_EMPTY,
        }
    }

    /// The leaves of `padding`'s virtual trie: one per prefix of its levels, alike.
    fn virtual_leaves(padding: &Padding) -> BTreeMap<Nibbles, Vec<u8>> {
        let nodes = padding.nodes();
        let TrieNode::Leaf(virt) = TrieNode::decode(&mut &nodes[nodes.len() - 1][..]).unwrap()
        else {
            panic!("the last padding node is the leaf");
        };
        let levels = padding.levels();
        (0..16u64.pow(levels as u32))
            .map(|p| {
                let prefix: Vec<u8> = (0..levels)
                    .rev()
                    .map(|l| ((p >> (4 * l)) & 15) as u8)
                    .collect();
                (
                    Nibbles::from_nibbles(prefix).join(&virt.key),
                    virt.value.clone(),
                )
            })
            .collect()
    }

    /// The root of `leaves` by alloy-trie's hash builder.
    fn hash_builder_root(leaves: &BTreeMap<Nibbles, Vec<u8>>) -> B256 {
        let mut hb = HashBuilder::default();
        for (k, v) in leaves {
            hb.add_leaf(*k, v);
        }
        hb.root()
    }

    /// The root of the padded trie with the accounts `live` (index → fields), computed
    /// with alloy-trie's hash builder over every virtual leaf and every real one.
    fn reference(padding: &Padding, live: &BTreeMap<u64, AccountState>) -> B256 {
        let mut leaves = virtual_leaves(padding);
        for (i, f) in live {
            leaves.insert(account_key(address(*i)), leaf_value(f, EMPTY_ROOT_HASH));
        }
        hash_builder_root(&leaves)
    }

    /// A padded trie's root is that of the real accounts beside one virtual account per
    /// prefix, through creations and deletions; with every real account deleted it is the
    /// padding's alone.
    #[test]
    fn padded_roots_are_the_hash_builders() {
        let padding = Padding::accounts(256, 3).unwrap();
        assert_eq!(padding.levels(), 2);
        let mut live: BTreeMap<u64, AccountState> = (0..40).map(|i| (i, fields(i))).collect();
        let state: FullState = live
            .iter()
            .map(|(i, f)| {
                let account = FullAccount {
                    nonce: f.nonce,
                    balance: f.balance,
                    code_hash: f.code_hash,
                    storage: BTreeMap::new(),
                };
                (address(*i), account)
            })
            .collect();
        let mut tries =
            FullTries::new(&state, &StatePadding::default().with_accounts(padding)).unwrap();
        assert_eq!(tries.root().unwrap(), reference(&padding, &live));
        for i in 40..100 {
            tries.set_account(address(i), Some(fields(i)));
            live.insert(i, fields(i));
        }
        assert_eq!(tries.root().unwrap(), reference(&padding, &live));
        for i in (0..100).step_by(3) {
            tries.set_account(address(i), None);
            live.remove(&i);
        }
        assert_eq!(tries.root().unwrap(), reference(&padding, &live));
        for i in 0..100 {
            tries.set_account(address(i), None);
        }
        assert_eq!(tries.root().unwrap(), padding.root());
    }

    /// A padded storage trie's root is that of the real slots beside one virtual slot per
    /// prefix, through inserts and deletions (which collapse onto virtual leaves); with
    /// every real slot deleted it is the padding's alone. The state root follows, and an
    /// unpadded contract beside it keeps its own trie.
    #[test]
    fn padded_storage_roots_are_the_hash_builders() {
        let padding = Padding::storage(4_096, 3).unwrap();
        assert_eq!(padding.levels(), 3);
        let (padded_contract, plain_contract) = (address(1_000), address(1_001));
        let contract = |storage: BTreeMap<U256, U256>| FullAccount {
            nonce: 1,
            balance: U256::from(7),
            code_hash: keccak256(b"code"),
            storage,
        };
        let plain: BTreeMap<U256, U256> = (0..5u64)
            .map(|i| (U256::from(i), U256::from(i + 1)))
            .collect();
        let mut live: BTreeMap<U256, U256> = (0..60u64)
            .map(|i| (U256::from(i), U256::from(i + 1)))
            .collect();
        let state: FullState = [
            (padded_contract, contract(live.clone())),
            (plain_contract, contract(plain.clone())),
        ]
        .into();
        let mut tries = FullTries::new(
            &state,
            &StatePadding::default().with_storage(padded_contract, padding),
        )
        .unwrap();
        // The state root from the hash builder: the padded storage root over virtual and
        // real slots, the plain one over real slots, both accounts' leaves.
        let check = |tries: &mut FullTries, live: &BTreeMap<U256, U256>| {
            let root = tries.root().unwrap();
            let mut slots = virtual_leaves(&padding);
            for (slot, value) in live {
                slots.insert(slot_key(*slot), alloy_rlp::encode(value));
            }
            let storage_root = hash_builder_root(&slots);
            let stored = tries.entries.get_mut(&padded_contract).unwrap();
            assert_eq!(stored.storage.root(), storage_root);
            let fields = stored.fields;
            let plain_storage = tries
                .entries
                .get_mut(&plain_contract)
                .unwrap()
                .storage
                .root();
            let accounts: BTreeMap<Nibbles, Vec<u8>> = [
                (
                    account_key(padded_contract),
                    leaf_value(&fields, storage_root),
                ),
                (
                    account_key(plain_contract),
                    leaf_value(&fields, plain_storage),
                ),
            ]
            .into();
            assert_eq!(root, hash_builder_root(&accounts));
            // The plain contract's storage root is the unpadded reference's.
            let plain_slots: BTreeMap<Nibbles, Vec<u8>> = plain
                .iter()
                .map(|(s, v)| (slot_key(*s), alloy_rlp::encode(v)))
                .collect();
            assert_eq!(plain_storage, hash_builder_root(&plain_slots));
            storage_root
        };
        check(&mut tries, &live);
        for i in 60..200u64 {
            tries
                .set_slot(padded_contract, U256::from(i), U256::from(i * 3))
                .unwrap();
            live.insert(U256::from(i), U256::from(i * 3));
        }
        check(&mut tries, &live);
        for i in (0..200u64).step_by(3) {
            tries
                .set_slot(padded_contract, U256::from(i), U256::ZERO)
                .unwrap();
            live.remove(&U256::from(i));
        }
        check(&mut tries, &live);
        for i in 0..200u64 {
            tries
                .set_slot(padded_contract, U256::from(i), U256::ZERO)
                .unwrap();
        }
        assert_eq!(check(&mut tries, &BTreeMap::new()), padding.root());
    }
}
