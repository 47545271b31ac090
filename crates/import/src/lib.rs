//! Ethereum BlockchainTests fixtures and offline mainnet block snapshots → gigagas dumps.
//!
//! Each test's blocks are decoded from their RLP (senders recovered) and executed like a
//! client: one revm `State` over the fixture's `pre`, alloy-evm's Ethereum block executor,
//! revm's block access list builder recording each block's EIP-7928 access list. The
//! result is checked against everything the fixture commits to (each header's gas used,
//! blob gas used, receipts root, logs bloom, requests hash and state root; `postState`
//! account by account or `postStateHash`; `lastblockhash`) and only then turned into a
//! [`gigagas_dump::Dump`] whose pre-state is what the access lists touch; the first
//! difference is a [`Mismatch`] whose [`Difference`] holds the fixture's value and the
//! execution's, typed, as an [`Expected`] (a header's as gigagas-chain's
//! [`HeaderMismatch`]). A block the fixture expects rejected is offered to the tip and
//! must be refused ([`RejectedBlock`], [`RejectedBy`]); it never enters the dump.
//!
//! [`import`] handles files and directories (one dump per test); [`import_test`] is one
//! test in memory.
//!
//! [`snapshot`] imports offline mainnet block snapshots (block, pre-state, block hashes per
//! folder) into one dump of independent segments, checked against each block's header.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

mod batch;
mod error;
pub mod fixture;
mod import;
pub mod network;
pub mod snapshot;
pub mod world;

pub use batch::{
    ImportSummary, Outcome, OutputLayout, TestReport, fixture_files, import, import_one,
    sanitize_name,
};
pub use error::{BlockDefect, Difference, FixtureDefect, ImportError, Location, Mismatch};
pub use fixture::{BlockchainTest, FixtureFile};
/// The `{ expected, got }` pair a [`Difference`] holds.
pub use gigagas_chain::Expected;
/// What a header check finds ([`Difference::Header`], [`SnapshotError::Mismatch`]).
pub use gigagas_chain::HeaderMismatch;
/// The output-may-not-alias-input rule, shared by every crate that writes.
pub use gigagas_fs_util::{InputSet, OutputIsInput, Overlap, check_output};
pub use import::{ImportStats, RejectedBlock, RejectedBy, SOURCE, import_test};
pub use snapshot::{
    BlockReport, ImportedBlock, SnapshotError, SnapshotImport, check_snapshot_output,
    import_snapshots, import_snapshots_to,
};
