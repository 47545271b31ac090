//! Errors of reading and writing dumps.

use std::path::PathBuf;

/// Everything that can go wrong reading or writing a dump. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// The file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file does not start with the gigagas magic bytes.
    #[error("{path}: not a gigagas dump (expected magic bytes {expected:?}, found {found:?})")]
    NotADump {
        /// The file.
        path: PathBuf,
        /// What a dump starts with.
        expected: String,
        /// What this file starts with.
        found: String,
    },
    /// The file was written by a newer (or unknown) format version.
    #[error(
        "{path}: dump format version {found} is not supported (this gigagas reads versions 1 to {supported}); \
         regenerate the dump with this gigagas (`gigagas generate`, `import` or `dump`) or upgrade gigagas"
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// Version in the file.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// The file is shorter (or longer) than its header says.
    #[error(
        "{path}: truncated or padded dump: header promises {expected} bytes of content, file has {actual}"
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Content bytes the header announces.
        expected: u64,
        /// Content bytes present.
        actual: u64,
    },
    /// The content checksum does not match: the file is corrupted.
    #[error(
        "{path}: checksum mismatch (header {expected:016x}, content {actual:016x}): the file is corrupted"
    )]
    ChecksumMismatch {
        /// The file.
        path: PathBuf,
        /// Checksum in the header.
        expected: u64,
        /// Checksum of the content.
        actual: u64,
    },
    /// A section is missing, malformed or decodes to nonsense.
    #[error("{path}: section {section}: {detail}")]
    CorruptSection {
        /// The file.
        path: PathBuf,
        /// Section tag, e.g. `BLKS`.
        section: String,
        /// What is wrong.
        detail: String,
    },
    /// The sections decode but do not fit together (e.g. BAL count differs from block count).
    #[error("{path}: inconsistent dump: {source}")]
    Inconsistent {
        /// The file.
        path: PathBuf,
        /// Which invariant is broken.
        source: InvariantError,
    },
}

/// An invariant of a dump that a replay relies on, broken ([`crate::Dump::validate`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvariantError {
    /// Not one access list per block.
    #[error("{access_lists} block access lists for {blocks} blocks")]
    AccessListCount {
        /// Access lists in the dump.
        access_lists: usize,
        /// Blocks in the dump.
        blocks: usize,
    },
    /// Blocks that belong to no segment.
    #[error("blocks but no segment")]
    NoSegment,
    /// A segment of zero blocks.
    #[error("segment {0} has no blocks")]
    EmptySegment(usize),
    /// The segments' block counts do not add up to the dump's blocks.
    #[error("the segments hold {covered} blocks but the dump has {blocks}")]
    SegmentBlocks {
        /// Blocks the segments claim (at least; counting stops past the dump's).
        covered: usize,
        /// Blocks in the dump.
        blocks: usize,
    },
    /// A segment's block hashes are not in strictly ascending block-number order.
    #[error("segment {0}: block hashes are not in ascending order")]
    UnorderedBlockHashes(usize),
    /// Two blocks of a segment are not consecutive.
    #[error("block {next} follows block {previous}: blocks of a segment must be consecutive")]
    NotConsecutive {
        /// The earlier block's number.
        previous: u64,
        /// The later block's number.
        next: u64,
    },
    /// Not one receipt summary per transaction.
    #[error("block {block}: {receipts} receipts for {transactions} transactions")]
    ReceiptCount {
        /// Block number.
        block: u64,
        /// Receipt summaries.
        receipts: usize,
        /// Transactions.
        transactions: usize,
    },
    /// A receipt's cumulative gas is not the running sum of the gas used.
    #[error(
        "block {block} tx {tx}: cumulative gas {cumulative} but the gas used so far adds up to {sum}"
    )]
    CumulativeGas {
        /// Block number.
        block: u64,
        /// Transaction index.
        tx: usize,
        /// The receipt's cumulative gas.
        cumulative: u64,
        /// The sum of the gas used up to it.
        sum: u64,
    },
    /// Withdrawals in a block whose header has no withdrawals root (before Shanghai).
    #[error("block {0} has withdrawals but no withdrawals root")]
    WithdrawalsWithoutRoot(u64),
}
