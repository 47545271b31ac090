//! Generates gigagas dumps by really executing transactions.
//!
//! [`generate`] builds a genesis (funded accounts, the system contracts, and the workload
//! contracts of `contracts/` deployed and initialised by executing their constructors and
//! setup calls), then produces blocks one after another: it draws signed transactions
//! from a [`Profile`], executes each one with alloy-evm's Ethereum block executor on revm
//! (system calls, withdrawals and requests included) and stops a block when its gas
//! target is reached. The block access list of each block is recorded by revm's BAL
//! builder during that same execution; receipts and header fields (gas used, transaction,
//! receipt and withdrawal roots, logs bloom, requests hash, BAL hash) come from the same
//! run. [`generate`] leaves the state root at the empty trie's root (no trie is kept); [`generate_with_witness`] computes each
//! block's real state root from the whole state and adds the segment's witness (what a
//! state-root phase starts from), with gigagas-trie; [`generate_with_padded_witness`] pads the
//! account trie to a larger state's depth (mainnet's: full branches at the top seven levels)
//! and chosen contracts' storage tries to that of larger contracts ([`TrieSizes`]; mainnet's
//! largest: full branches at the top six levels).
//!
//! Generation is deterministic: the same [`GeneratorConfig`] gives a byte-identical dump.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod contracts;
mod generator;
mod profile;
mod trie_sizes;

pub use generator::{
    ConfigError, GenerateError, GeneratorConfig, SetupError, generate,
    generate_with_padded_witness, generate_with_witness,
};
pub use profile::Profile;
pub use trie_sizes::{TrieSizes, WorkloadContract};
