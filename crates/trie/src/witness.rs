//! Witnesses for producers that hold the whole state: full tries built with alloy-trie's
//! hash builder, retaining the proof of every touched account and slot, plus the sibling
//! nodes the blocks' deletions need.

use crate::{
    error::{RootError, TrieId},
    state::{RootRules, StateTrie, StorageTask},
};
use alloy_eip7928::BlockAccessList;
use alloy_primitives::{Address, B256, Bytes, U256, keccak256, map::HashMap};
use alloy_trie::{
    EMPTY_ROOT_HASH, HashBuilder, KECCAK_EMPTY, Nibbles, TrieAccount, proof::ProofRetainer,
};
use gigagas_dump::Witness;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// A whole state: every account by address.
pub type FullState = BTreeMap<Address, FullAccount>;

/// One account of a [`FullState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullAccount {
    /// The nonce.
    pub nonce: u64,
    /// The balance.
    pub balance: U256,
    /// keccak256 of the code ([`KECCAK_EMPTY`] for none).
    pub code_hash: B256,
    /// The storage; zero values are ignored (a zero slot is no slot).
    pub storage: BTreeMap<U256, U256>,
}

impl Default for FullAccount {
    fn default() -> Self {
        Self {
            nonce: 0,
            balance: U256::ZERO,
            code_hash: KECCAK_EMPTY,
            storage: BTreeMap::new(),
        }
    }
}

/// The state root of `state` (the full account trie, every storage trie built).
pub fn full_state_root(state: &FullState) -> B256 {
    let storage_roots = storage_roots(state);
    account_trie(state, &storage_roots, Vec::new()).0
}

/// The witness of `access_lists` (consecutive blocks, the first one's parent state being
/// `state`): the proof nodes of every account and slot they touch (written or read), plus
/// every node the updates of the blocks need beyond those (the siblings that deletions
/// collapse into their parents), so that [`StateTrie::from_witness`] and
/// [`StateTrie::apply_block`] compute each block's root from the witness alone.
///
/// The nodes deletions need are found by applying the blocks to the witness so far: a
/// block that reports paths missing is retried, from the state before it, with the proofs
/// of those paths retained too, until none is. An error means the access lists cannot be
/// applied at all (e.g. a node missing that no proof holds, which would be a bug).
pub fn witness_for_blocks(
    state: &FullState,
    access_lists: &[&BlockAccessList],
    rules: RootRules,
) -> Result<Witness, RootError> {
    let storage_roots = storage_roots(state);
    let mut account_targets: BTreeSet<Nibbles> = BTreeSet::new();
    let mut storage_targets: BTreeMap<Address, BTreeSet<Nibbles>> = BTreeMap::new();
    for bal in access_lists {
        for changes in bal.iter() {
            account_targets.insert(Nibbles::unpack(keccak256(changes.address)));
            let slots = changes
                .storage_changes
                .iter()
                .map(|s| s.slot)
                .chain(changes.storage_reads.iter().copied());
            let targets = storage_targets.entry(changes.address).or_default();
            targets.extend(slots.map(|s| Nibbles::unpack(keccak256(B256::from(s)))));
        }
    }
    // The proofs of the targets: every storage trie's, then the account trie's.
    let storage_proof = |address: &Address, targets: &BTreeSet<Nibbles>| {
        let account = state.get(address)?;
        Some(storage_trie(&account.storage, targets.iter().copied().collect()).1)
    };
    let mut nodes: BTreeSet<Bytes> = storage_targets
        .par_iter()
        .filter_map(|(address, targets)| storage_proof(address, targets))
        .flatten()
        .collect();
    let (root, account_nodes) = account_trie(
        state,
        &storage_roots,
        account_targets.iter().copied().collect(),
    );
    nodes.extend(account_nodes);
    // Nodes under 32 bytes are embedded in their parents.
    nodes.retain(|n| n.len() >= 32);

    // Apply the blocks; a block that needs nodes beyond those is retried, from the state
    // before it, with the proofs of the missing paths retained too.
    let mut trie = StateTrie::from_witness(&Witness::new(root, nodes.iter().cloned().collect()))?;
    for bal in access_lists {
        loop {
            let mut attempt = trie.snapshot();
            let missing = missing_nodes(&mut attempt, bal, rules)?;
            if missing.is_empty() {
                trie = attempt;
                break;
            }
            let mut accounts = false;
            let mut storages: BTreeSet<Address> = BTreeSet::new();
            for error in &missing {
                match error.missing_node().expect("only missing nodes") {
                    (TrieId::Account, path) => {
                        accounts |= account_targets.insert(path);
                    }
                    (TrieId::Storage(address), path) => {
                        storage_targets.entry(address).or_default().insert(path);
                        storages.insert(address);
                    }
                }
            }
            let mut fresh: Vec<Bytes> = storages
                .par_iter()
                .filter_map(|address| storage_proof(address, &storage_targets[address]))
                .flatten()
                .collect();
            if accounts {
                let targets = account_targets.iter().copied().collect();
                fresh.extend(account_trie(state, &storage_roots, targets).1);
            }
            fresh.retain(|n| n.len() >= 32 && !nodes.contains(n));
            if fresh.is_empty() {
                // Missing, yet no proof holds more: retrying would not help.
                return Err(missing.into_iter().next().expect("not empty"));
            }
            trie.add_nodes(&fresh);
            nodes.extend(fresh);
        }
    }
    Ok(Witness::new(root, nodes.into_iter().collect()))
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

/// Every account's storage root.
fn storage_roots(state: &FullState) -> HashMap<Address, B256> {
    state
        .par_iter()
        .map(|(address, account)| (*address, storage_trie(&account.storage, Vec::new()).0))
        .collect()
}

/// The root of `storage`'s trie and the proof nodes of `targets` (full keys or paths).
fn storage_trie(storage: &BTreeMap<U256, U256>, targets: Vec<Nibbles>) -> (B256, Vec<Bytes>) {
    let mut leaves: Vec<(Nibbles, Vec<u8>)> = storage
        .iter()
        .filter(|(_, v)| !v.is_zero())
        .map(|(k, v)| {
            let key = Nibbles::unpack(keccak256(B256::from(*k)));
            (key, alloy_rlp::encode(v))
        })
        .collect();
    leaves.sort_unstable_by_key(|l| l.0);
    build(leaves, targets)
}

/// The account trie's root and the proof nodes of `targets`.
fn account_trie(
    state: &FullState,
    storage_roots: &HashMap<Address, B256>,
    targets: Vec<Nibbles>,
) -> (B256, Vec<Bytes>) {
    let mut leaves: Vec<(Nibbles, Vec<u8>)> = state
        .par_iter()
        .map(|(address, a)| {
            let storage_root = storage_roots
                .get(address)
                .copied()
                .unwrap_or(EMPTY_ROOT_HASH);
            let account = TrieAccount::new(a.nonce, a.balance, storage_root, a.code_hash);
            (
                Nibbles::unpack(keccak256(address)),
                alloy_rlp::encode(account),
            )
        })
        .collect();
    leaves.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
    build(leaves, targets)
}

/// The hash builder over sorted `leaves`, retaining the proofs of `targets`.
fn build(leaves: Vec<(Nibbles, Vec<u8>)>, targets: Vec<Nibbles>) -> (B256, Vec<Bytes>) {
    if leaves.is_empty() {
        return (EMPTY_ROOT_HASH, Vec::new());
    }
    let retain = !targets.is_empty();
    let mut hb = HashBuilder::default();
    if retain {
        hb = hb.with_proof_retainer(ProofRetainer::new(targets));
    }
    for (key, value) in &leaves {
        hb.add_leaf(*key, value);
    }
    let root = hb.root();
    let nodes = if retain {
        hb.take_proof_nodes()
            .into_nodes_sorted()
            .into_iter()
            .map(|(_, n)| n)
            .collect()
    } else {
        Vec::new()
    };
    (root, nodes)
}
