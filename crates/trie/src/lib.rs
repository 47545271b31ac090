//! State roots from a witness and block access lists.
//!
//! An EIP-7928 block access list carries every post-value of its block, so the block's
//! post state root follows from the list and the trie nodes that prove, at the parent
//! root, every account and slot it touches (a [`gigagas_dump::Witness`]) — no execution
//! needed, so the root can be computed beside it.
//!
//! - [`StateTrie::from_witness`] opens the state at the witness's parent root as a sparse
//!   Merkle-Patricia trie over blinded proof nodes (opened on demand); a node an update
//!   needs but the witness lacks is a [`RootError::MissingNode`] ("root not computable:
//!   missing node under `<path>` in `<trie>`"), never a guessed root.
//! - [`StateTrie::apply_block`] applies one block's access list under [`RootRules`] and
//!   returns its post state root; each block's root is computed on the trie the previous
//!   block left. An account's post-values are its leaf at the parent (absent when the
//!   proof shows absence) overridden by the last change of each field in the list (code
//!   hash = keccak256 of the last new code); its storage root is recomputed when slots
//!   change (a zero value deletes the slot). Under EIP-161 an account of the list that ends
//!   empty is deleted.
//! - Only net changes walk the trie: given what the pre-state holds
//!   ([`StateTrie::with_pre_values`], [`PreValues`]), a block reads the trie only for the
//!   accounts and slots whose value after it differs from before; an account only read, or
//!   touched and absent before and after, and a slot read or written back to its value
//!   need no node. The nodes a root needs are a *root-only witness*
//!   ([`root_only_witness`], [`root_only_dump`]; per block beside the producers' witness:
//!   [`witness_sizes`]).
//! - The parallel shape: [`StateTrie::prepare_block`] returns a [`BlockRootJob`] whose
//!   [`BlockRootJob::storage_tasks`] are independent [`StorageTask`]s, one per account whose
//!   storage changes (`Send + 'static`, each [`StorageTask::run`] gives that account's new
//!   [`StorageRoot`]; [`StorageTask::writes`] is its size, for a scheduler to place the
//!   largest first); [`BlockRootJob::finish`] then updates the account trie with those
//!   roots. [`StateTrie::apply_block_parallel`] runs the tasks on rayon's pool. What runs
//!   between the tasks stays small: the preparation reads an account's leaf only where it
//!   must (its fields unknown, its deletion, its storage trie opened at the leaf's root);
//!   every other leaf is read where it is set, in the account stage or unit.
//! - Nodes read by path as each block needs them: [`StateTrie::unread`] starts with none,
//!   and [`StateTrie::read_account_nodes`] / [`StorageTask::read_nodes`] read a block's from
//!   a [`NodeReader`] (a store keyed by trie and path, [`nodes_by_path`]), batched by depth
//!   ([`reads`]).
//! - For producers that hold the whole state (the generator, blockchain-test fixtures):
//!
//!   ```ignore
//!   pub fn witness_for_blocks(
//!       state: &FullState,                   // BTreeMap<Address, FullAccount>
//!       access_lists: &[&BlockAccessList],   // consecutive blocks on `state`
//!       rules: RootRules,
//!   ) -> Result<Witness, RootError>
//!   ```
//!
//!   builds the full tries ([`FullTries`]), keeps the nodes on the path of every touched
//!   account and slot, then applies the blocks to that witness and adds the nodes on every
//!   path reported missing (deletions' siblings) until none is. A [`FullTries`] kept open
//!   and updated change by change gives each block's root hashing only the changed paths
//!   (the generator's headers). [`full_state_root`] is the root of a [`FullState`] with
//!   alloy-trie's `HashBuilder`, the reference.
//! - Tries at mainnet depth: a [`Padding`] of `N` accounts pads the account trie
//!   with one alike virtual account per prefix of ⌊log16 N⌋ nibbles, one of `N` slots a
//!   contract's storage trie with one alike virtual slot per prefix, so every touched path
//!   runs through that many full branches whose untouched children are hashes, and the
//!   trie stays a real one under inserts and deletions ([`StatePadding`] says which tries
//!   of a state are padded; [`FullTries::new`]).
//!
//! ## Why its own sparse trie
//!
//! kona-mpt (crates.io, 0.3.0 current) was the candidate: its `TrieNode` opens blinded
//! nodes through a `TrieProvider`. It does not fit cleanly: it depends on
//! `op-alloy-rpc-types-engine` (OP Stack engine types, a tree this workspace does not
//! otherwise need), it reports a missing node as the provider's error for a hash, without
//! the path and trie the "missing node under" message names, and its deletion consults a
//! `TrieHinter` built for fault-proof pre-image hinting. The trie here is small
//! ([`sparse`](crate) module, ~400 lines) on alloy-trie's node types, `Nibbles` and
//! hashing, and checked against alloy-trie's `HashBuilder` in its tests.

//! ## Limits
//!
//! - Every account of an access list counts as touched for EIP-161, as the list does not
//!   say how an account was accessed: an empty account that a block only reads (`BALANCE`,
//!   `EXTCODEHASH`) would be deleted here and kept by a client. Since the state clearing of
//!   2016 mainnet holds almost none, and every committed fixture's roots come out right.
//! - A pre-Cancun `SELFDESTRUCT` of an account that keeps existing (re-created in the same
//!   block) wipes storage the access list does not name; it is not modelled. An account
//!   destroyed for good ends empty and is deleted, storage and all.
//! - Before Spurious Dragon (`delete_empty_accounts: false`) a call that creates an empty
//!   account leaves no change in the list, so such an account is not created here.
//!
//! ## Timing it
//!
//! `cargo run --release -p gigagas-import --example root_timing` times opening the witness
//! of mainnet block 21688509 and that block's root, sequentially and with the storage tasks
//! on rayon's pool (the example lives in the import crate, which reads the block's snapshot).

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

mod error;
mod full;
mod full_state;
mod leaf;
mod padding;
mod paths;
pub mod reads;
mod root_only;
mod sparse;
mod split;
mod state;

pub use alloy_trie::Nibbles;
pub use error::{RootError, TrieId, TriePath};
pub use full::{FullTries, witness_for_blocks};
pub use full_state::{FullAccount, FullState, full_state_root};
pub use padding::{
    KnownNodes, MAINNET_ACCOUNTS, MAINNET_LARGE_STORAGE, PaddedTrie, Padding, PaddingError,
    RandomTrie, StatePadding, storage_roots,
};
pub use paths::{PathNode, nodes_by_path};
pub use reads::{NodeReader, NodeReads, ReadNodesError};
pub use root_only::{
    BlockWitnessSize, NodeCount, Pruned, RootOnlyError, UnrootedBlock, WitnessSizer, WitnessSizes,
    root_only_dump, root_only_witness, witness_roots, witness_sizes,
};
pub use sparse::NodeChanges;
pub use split::SplitRule;
pub use state::{
    AccountPart, AccountTask, BlockChanges, BlockRootJob, PreValues, RootRules, StateTrie,
    StorageRoot, StorageTask,
};

#[cfg(test)]
mod tests {
    /// The split's pieces move to any thread: a scheduler's pool needs no borrow.
    #[test]
    fn split_pieces_are_send_and_static() {
        fn send<T: Send + 'static>() {}
        send::<super::StateTrie>();
        send::<super::BlockRootJob>();
        send::<super::StorageTask>();
        send::<super::StorageRoot>();
        send::<super::AccountTask>();
        send::<super::AccountPart>();
        send::<super::RootError>();
    }
}
