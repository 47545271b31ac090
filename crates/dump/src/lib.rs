//! The gigagas dump: everything needed to replay blocks without a node.
//!
//! A [`Dump`] is its metadata ([`DumpMeta`]) and one or more independent [`Segment`]s. A
//! segment owns a run of consecutive [`DumpBlock`]s, the block hashes before its first
//! block (up to 256, for `BLOCKHASH`) and its [`PreState`]: the state at the parent of its
//! first block for every account and slot its access lists touch — including accounts
//! that do not exist, recorded as absent, so a replay can tell "empty" from "missing from
//! the dump" — and, where the producer had it, its [`Witness`]: the trie nodes that prove
//! that pre-state at the parent's state root. A block owns its transactions (with recovered senders), withdrawals, receipt
//! summaries, ommers and its EIP-7928 block access list. A range of blocks from a node is
//! one segment; a set of unrelated mainnet blocks is one segment each. [`Dump::blocks`]
//! walks every block in order; [`Dump::validate`] checks what the types cannot say.
//!
//! On disk a dump is one file (see [`format`](mod@format), the only place that knows the
//! layout): a fixed header with magic bytes, format version and an xxh3 checksum of the
//! content, followed by zstd-compressed sections (the blocks of all segments in one section,
//! their access lists in another, the witnesses, if any, in a third). Files are written to a temporary name and renamed into
//! place, so an interrupted write never leaves a file that looks whole (gigagas-fs-util's
//! `write_atomic_with`, the rules every crate writes and reads files by). A file can also
//! be read block by block ([`stream_dump_blocks`]), and its blocks read again from the file
//! ([`BlockReader`]), for a replay whose memory follows the blocks it runs rather than the
//! dump.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

mod chain;
pub mod designs;
mod error;
pub mod format;
mod model;
#[cfg(feature = "reth")]
pub mod reth;
mod summary;

pub use chain::{
    BLOB_FORKS_WITHOUT_DEFAULTS, BLOCK_FORKS, BlobSchedule, ChainConfig, ChainConfigError,
    ForkActivation, TIMESTAMP_FORKS,
};
pub use designs::{
    AccessListDesign, BlockDesignSizes, BlockStartState, DesignError, DesignSizes, FullAccessList,
    FullAccount, SizeSummary, design_sizes, full_access_list, full_access_lists, writes_only,
};
pub use error::{DumpError, InvariantError, SectionProblem};
pub use format::{
    BlockReader, DumpFileInfo, FORMAT_VERSION, Inspection, MAGIC, OLDEST_READABLE_VERSION,
    StreamedBlock, StreamedDump, decode_dump, encode_dump, inspect_dump, inspect_dump_with,
    read_dump, stream_dump_blocks, version_for, write_dump,
};
pub use model::{
    AccountState, Dump, DumpBlock, DumpMeta, PreAccount, PreSlot, PreState, ReceiptSummary,
    Segment, Witness,
};
pub use summary::{DumpSummary, SegmentSummary, WitnessFigures};

// Dev-dependencies used only by the integration tests in `tests/` (this crate itself with
// the `reth` feature for tests/reth_types.rs).
