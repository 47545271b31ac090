//! Gigagas dumps from a real Ethereum node, over standard JSON-RPC only.
//!
//! [`dump_from_rpc`] fetches blocks `A..=B` with full transactions (`eth_getBlockByNumber`),
//! their receipts (`eth_getBlockReceipts`, or `eth_getTransactionReceipt` per transaction)
//! and the 256 block hashes before `A`; converts them to consensus types (checking the
//! header hash, transactions root and withdrawals root); and re-executes the range
//! sequentially with alloy-evm's Ethereum block executor on a revm `State` with the BAL
//! builder — exactly as the workload generator does — over a database that reads state at
//! block `A − 1` from the node (`eth_getBalance`, `eth_getTransactionCount`, `eth_getCode`,
//! `eth_getStorageAt`, batched and parallel), recording every value it reads. The
//! re-execution is verified as it goes: every transaction's gas used, status and log count
//! against the node's receipt, every block's gas used, receipts root and requests hash
//! against the header, and the block access list hash where the header carries one. A
//! range that does not verify yields an error, never a dump.
//!
//! The dump's pre-state is the recorded state at `A − 1` for every account and slot the
//! access lists name (absent accounts recorded as absent); its chain config comes from
//! [`chain::detect`]. Its witness (on by default, [`DumpOptions::witness`]) is the trie
//! nodes proving that pre-state at `A − 1`'s state root ([`witness`]).
//!
//! Long ranges: [`DumpOptions::partial_dir`] keeps fetched blocks and state so that a
//! dump started again with [`DumpOptions::resume`] continues and yields the same file as an
//! uninterrupted one; calls that fail in transport are retried with exponential back-off
//! ([`ClientConfig`]) and then fail with one error naming the call.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod chain;
mod client;
pub mod convert;
mod dumper;
mod error;
pub mod partial;
pub mod state;
pub mod witness;

pub use client::{ClientConfig, MAX_RESPONSE_BYTES, MAX_RESPONSE_VALUES, RpcClient, display_url};
pub use dumper::{DumpEvent, DumpOptions, dump_from_rpc, dump_to_file, partial_dir_for};
pub use error::{Difference, RpcDumpError, Status, TransportError, TransportKind, TxRef};
/// The `{ expected, got }` pair of [`Difference`].
pub use gigagas_chain::Expected;
