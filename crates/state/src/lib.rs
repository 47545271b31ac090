//! The pre-state of a gigagas dump on disk, in reth's flat tables, for runs that read
//! their state from a store instead of memory.
//!
//! - [`build_store`] writes every segment's accounts, storage, bytecodes and block hashes
//!   into an MDBX environment in a folder, optionally [padded](BuildOptions::pad_to) with
//!   synthetic entries to a node's size; the folder is complete or absent.
//! - [`open_store`] opens it read-only and refuses a store built from another dump;
//!   [`Store::reader`] gives each thread a [`StoreReader`] (one read transaction) whose
//!   reads are counted and, if asked, timed by its [`ReadMeter`].
//! - The seam a pass reads through is the executor's `StateSource`, the one read trait:
//!   this crate does not depend on the executor (nor on revm), so the bench crate, which
//!   sees both, puts a [`StoreReader`] behind it. A second engine would be one more
//!   reader behind that trait, counting its reads with a [`ReadMeter`] as this one does.
//! - [`evict`] and [`residency`] make a store cold and check that it is;
//!   [`probe_random_reads`] measures the device under it.
//!
//! # Layout
//!
//! reth's `PlainAccountState`, `PlainStorageState` (dup-sorted by slot, read with a dup
//! cursor's `get_both_range` as reth does), `Bytecodes` and `CanonicalHeaders`, plus a
//! meta table with the dump's checksum and counts; see [`layout`] for the encodings. Keys
//! carry the segment after the address, so segments never see each other's entries and
//! the accounts a block reads lie scattered among the padding as in a node. Accounts the
//! dump records absent are not stored and read as `None`; an existing empty account reads
//! as `Some`. Zero slots are not stored (as in reth): every slot without an entry reads
//! as zero.
//!
//! # Engine
//!
//! [`signet-libmdbx`](https://docs.rs/signet-libmdbx) 0.8: the published, maintained fork
//! of reth's own `reth-libmdbx` bindings (same API: `get_both_range`, append cursors,
//! `WRITEMAP`, sync modes), MIT/Apache like this workspace. Its `signet-mdbx-sys`
//! compiles libmdbx 0.13.7 from the C amalgamation with `cc` and ships pregenerated
//! bindings, so it needs a C compiler but no libclang. vorot93's `libmdbx` 0.9 needs
//! bindgen (libclang) at build time, is Apache-only, and its API differs from reth's.
//!
//! # Threads
//!
//! A [`Store`] is `Send + Sync`. Each [`StoreReader`] owns one MDBX read transaction and
//! is `Send` but not `Sync`: make one per worker thread (on that thread or moved to it);
//! any number of readers may read at once from different threads. Environments are
//! opened without thread-local reader slots (`MDBX_NOSTICKYTHREADS`), so a reader may
//! move between threads.
//!
//! # Cold runs
//!
//! Drop the store and all readers, [`evict`] the folder, open the store again, check
//! [`residency`]`(dir)?.is_cold()` just before the pass (at most
//! [`COLD_MAX_RESIDENT_BYTES`] resident; opening touches a few pages), and run. A store
//! that a pass has just read has far more resident: a pass after it is warm.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

mod background;
mod builder;
mod cache;
mod error;
pub mod layout;
mod probe;
mod store;
mod tables;
mod virtual_nodes;
mod writer;

pub use background::{BackgroundWriter, GroupCommit};
pub use builder::{
    BuildOptions, BuildProgress, BuildStage, MAINNET_PLAIN_STATE_BYTES, PAGE_SIZE, StoreSummary,
    build_store,
};
pub use cache::{
    COLD_MAX_RESIDENT_BYTES, DropCaches, EvictOptions, EvictReport, Residency, evict, residency,
};
pub use error::StoreError;
pub use layout::{FORMAT_VERSION, PAD_SEGMENT, StoreKey, StoreMeta, ValueError};
pub use probe::{
    PROBE_BLOCK, ProbeResult, curve_reader_counts, probe_random_reads, probe_read_curve,
};
pub use store::{
    DATA_FILE, LOCK_FILE, PERSIST_SYNC, ReadKind, ReadMeter, ReadStats, SAMPLE_EVERY, Store,
    StoreReader, TableStats, Timing, open_store, open_store_writable, quantile,
};
pub use writer::{BlockWrite, NodeWrites, StoreWriter, WriteStats};

// Dev-dependencies used only by the integration tests in `tests/`.
#[cfg(test)]
use {alloy_hardforks as _, gigagas_workload as _, tempfile as _};
