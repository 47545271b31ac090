//! The chain rules every gigagas stage shares: producers record blocks under them, the
//! executor replays blocks under them.
//!
//! - [`ChainSpec`]: which fork applies to a block, its EVM environment and blob parameters,
//!   read from a dump's chain config.
//! - [`BlockInput`], [`execution_ctx`], [`pay_headerless_ommer_share`], [`BlockStage`]: what
//!   alloy-evm's block executor takes for a block, the one reward it cannot pay, and where
//!   in a block an execution failed.
//! - [`install_kzg_verifier`]: the point-evaluation precompile's verifier, the same in
//!   every process, so a recorded block and its replay run the same precompile. A binary
//!   installs it at start-up (gigagas's `main`), tests before they replay; no library
//!   entry point installs it for the caller, except the block recorder of the producers.
//!   [`kzg_verifier_installed`] says whether it is in place.
//! - [`Expected`]: the `{ expected, got }` pair every comparison error holds: the
//!   producers' (`HeaderMismatch`, the importers' and the RPC dumper's) and the
//!   executor's (`gigagas_executor::Mismatch`). Not gated: it has no dependency, and the
//!   executor builds without the feature.
//!
//! # Feature `producer` (off by default)
//!
//! Only producers need these, so the executor builds without them (nor their
//! dependencies alloy-rpc-types-eth, serde_json and thiserror):
//!
//! - `consensus`: the checks a client makes before executing a block (body against the
//!   header's roots, header against its parent), with `HeaderMismatch`,
//!   `check_body`, `check_against_parent`, `check_transactions_root` and
//!   `check_withdrawals_root`.
//! - `known`: the public chains' fork schedules and fork names (`KnownChain`,
//!   `known_chain`, `known_chain_schedule`, `parse_fork`, `schedulable_forks`,
//!   `MAINNET_DEPOSIT_CONTRACT`).
//! - `json`: JSON-RPC blocks in consensus types. The RPC dumper and the snapshot importer
//!   both read blocks and schedules this way, and neither depends on the other for it.
//!
//! The rest (the modules `spec`, `block`, `kzg` and `expected`) is what the executor needs
//! to replay a block, and is always built.
//!
//! What is not here is recording, which only producers do and which stays in
//! gigagas-record: executing a block with revm's access-list builder, checking the result
//! against the header, comparing access lists and reading the touched pre-state. The
//! line is drawn by who needs it: an item is a rule when the executor, or more than one
//! producer without recording, needs it.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod block;
#[cfg(feature = "producer")]
pub mod consensus;
pub mod expected;
#[cfg(feature = "producer")]
pub mod json;
#[cfg(feature = "producer")]
pub mod known;
pub mod kzg;
pub mod spec;

pub use block::{BlockInput, BlockStage, execution_ctx, pay_headerless_ommer_share};
#[cfg(feature = "producer")]
pub use consensus::{
    HeaderMismatch, check_against_parent, check_body, check_transactions_root,
    check_withdrawals_root,
};
pub use expected::Expected;
#[cfg(feature = "producer")]
pub use known::{
    KnownChain, MAINNET_DEPOSIT_CONTRACT, UnknownFork, UnschedulableFork, known_chain,
    known_chain_schedule, parse_fork, schedulable_forks,
};
pub use kzg::{install_kzg_verifier, kzg_verifier_installed};
pub use spec::ChainSpec;
