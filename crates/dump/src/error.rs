//! Errors of reading and writing dumps.

use alloy_eip7928::BlockAccessListValidationError;
use alloy_primitives::{Address, B256, U256};
use std::path::PathBuf;

/// Everything that can go wrong reading or writing a dump. Every variant names the file.
///
/// A variant with a `source` does not repeat it in its own message: print the whole chain
/// (e.g. anyhow's `{:#}`, or walk [`std::error::Error::source`]) to see the cause, so that
/// no cause is printed twice.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// The file could not be opened, read or written.
    #[error("{path}: I/O error")]
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
    /// The header announces more content than any dump may have
    /// ([`crate::format::MAX_DECOMPRESSED`]).
    #[error(
        "{path}: the header announces {announced} bytes of content, more than the {limit} a dump may have"
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Content bytes the header announces.
        announced: u64,
        /// The most a dump may have.
        limit: u64,
    },
    /// The file changed on disk after it was checked (its length or modification time
    /// differs), while a reader read its blocks again ([`crate::BlockReader`]).
    #[error(
        "{path}: the dump changed on disk since it was loaded (rewritten in place?): load it again"
    )]
    Changed {
        /// The file.
        path: PathBuf,
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
    #[error("{path}: section {section}: {problem}")]
    CorruptSection {
        /// The file.
        path: PathBuf,
        /// Section tag, e.g. `BLKS`.
        section: String,
        /// What is wrong.
        #[source]
        problem: SectionProblem,
    },
    /// The sections decode but break an invariant of the dump ([`InvariantError`]).
    #[error("{path}: inconsistent dump")]
    Inconsistent {
        /// The file.
        path: PathBuf,
        /// Which invariant is broken (boxed: it names accounts, slots and values).
        source: Box<InvariantError>,
    },
}

impl DumpError {
    /// [`DumpError::Io`] of `path`, for a failed open, read or write of it.
    pub(crate) fn io(path: &std::path::Path) -> impl Fn(std::io::Error) -> Self + Copy + '_ {
        |source| Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// What is wrong inside one section of a dump ([`DumpError::CorruptSection`]).
#[derive(Debug, thiserror::Error)]
pub enum SectionProblem {
    /// zstd cannot decompress the section.
    #[error("zstd: {0}")]
    Zstd(#[source] std::io::Error),
    /// The `META` section is not the metadata's JSON.
    #[error("invalid metadata JSON: {0}")]
    MetaJson(#[source] serde_json::Error),
    /// An RLP item of `BLKS` or `BALS` does not decode.
    #[error("{item}: {source}")]
    Rlp {
        /// Which item (`block #3 in the section`, `access list #0`).
        item: String,
        /// The decoder's error.
        #[source]
        source: alloy_rlp::Error,
    },
    /// The bytes break the section's layout: a length, count or record that does not fit
    /// (the text says which and where).
    #[error("{0}")]
    Layout(String),
}

impl From<String> for SectionProblem {
    fn from(what: String) -> Self {
        SectionProblem::Layout(what)
    }
}

/// An invariant of a dump that a replay relies on, broken ([`crate::Dump::validate`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvariantError {
    /// A segment of zero blocks.
    #[error("segment {0} has no blocks")]
    EmptySegment(usize),
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
    /// The receipts' gas does not add up to the header's gas used.
    #[error("block {block}: the receipts use {receipts} gas but the header says {header}")]
    BlockGasUsed {
        /// Block number.
        block: u64,
        /// The header's gas used.
        header: u64,
        /// The last receipt's cumulative gas (0 without transactions).
        receipts: u64,
    },
    /// A segment's block hash is not for a block before the segment's first block (the
    /// replay takes the hashes of the segment's own blocks from their headers).
    #[error(
        "segment {segment}: a hash for block {number}, not before the segment's first block {first_block}"
    )]
    BlockHashNotBefore {
        /// Segment index.
        segment: usize,
        /// The hash's block number.
        number: u64,
        /// The segment's first block.
        first_block: u64,
    },
    /// Pre-state accounts not sorted by address, or one listed twice.
    #[error(
        "segment {segment}: pre-state account {account} follows {previous} (accounts must be sorted by address, each once)"
    )]
    PreStateAccountOrder {
        /// Segment index.
        segment: usize,
        /// The account out of place (equal to `previous`: listed twice).
        account: Address,
        /// The account before it.
        previous: Address,
    },
    /// Pre-state slots not sorted by (address, slot), or one listed twice.
    #[error(
        "segment {segment}: pre-state slot {slot:#x} of {account} is out of order or listed twice (slots must be sorted by address and slot, each once)"
    )]
    PreStateSlotOrder {
        /// Segment index.
        segment: usize,
        /// The slot's account.
        account: Address,
        /// The slot.
        slot: U256,
    },
    /// A pre-state slot of an account the pre-state does not list.
    #[error(
        "segment {segment}: pre-state slot {slot:#x} of {account}, an account the pre-state does not list"
    )]
    SlotOfUnlistedAccount {
        /// Segment index.
        segment: usize,
        /// The slot's account.
        account: Address,
        /// The slot.
        slot: U256,
    },
    /// A nonzero pre-state slot of an account recorded absent: an account that does not
    /// exist has no storage (its slots are recorded, as zero, when the block creates it).
    #[error(
        "segment {segment}: account {account} is recorded absent but its slot {slot:#x} holds {value:#x}"
    )]
    StorageOfAbsentAccount {
        /// Segment index.
        segment: usize,
        /// The absent account.
        account: Address,
        /// The slot.
        slot: U256,
        /// Its (nonzero) value.
        value: U256,
    },
    /// Pre-state codes not sorted by hash, or one stored twice.
    #[error(
        "segment {segment}: code {code_hash} is out of order or stored twice (codes must be sorted by hash, each once)"
    )]
    CodeOrder {
        /// Segment index.
        segment: usize,
        /// The code's hash as stored.
        code_hash: B256,
    },
    /// Bytecode stored under a hash it does not have.
    #[error("segment {segment}: code stored as {code_hash} hashes to {actual}")]
    CodeHash {
        /// Segment index.
        segment: usize,
        /// The hash it is stored under.
        code_hash: B256,
        /// Keccak-256 of the bytes.
        actual: B256,
    },
    /// An existing account whose code the pre-state does not hold.
    #[error(
        "segment {segment}: account {account} has code {code_hash}, which the dump does not hold"
    )]
    MissingCode {
        /// Segment index.
        segment: usize,
        /// The account.
        account: Address,
        /// Its code hash.
        code_hash: B256,
    },
    /// A block access list that is not a well-formed EIP-7928 list for its block: accounts
    /// sorted by address and each once, storage keys and indices in order and unique,
    /// indices within the block.
    #[error("segment {segment} block {block}: malformed block access list: {error}")]
    MalformedAccessList {
        /// Segment index.
        segment: usize,
        /// Block number.
        block: u64,
        /// What is wrong (names the account).
        error: BlockAccessListValidationError,
    },
    /// An account of a block access list the segment's pre-state does not list (neither
    /// present nor recorded absent).
    #[error(
        "segment {segment} block {block}: access-list account {account} is missing from the pre-state"
    )]
    AccessListAccountNotInPreState {
        /// Segment index.
        segment: usize,
        /// Block number.
        block: u64,
        /// The account.
        account: Address,
    },
    /// A storage slot of a block access list (read or written) the segment's pre-state
    /// does not hold.
    #[error(
        "segment {segment} block {block}: access-list slot {slot:#x} of {account} is missing from the pre-state"
    )]
    AccessListSlotNotInPreState {
        /// Segment index.
        segment: usize,
        /// Block number.
        block: u64,
        /// The account.
        account: Address,
        /// The slot.
        slot: U256,
    },
    /// A witness node of zero bytes (no RLP item is empty).
    #[error("segment {segment}: witness node {node} is empty")]
    EmptyWitnessNode {
        /// Segment index.
        segment: usize,
        /// The node's index in the witness.
        node: usize,
    },
    /// A witness node listed twice.
    #[error("segment {segment}: witness node {hash} is listed twice")]
    DuplicateWitnessNode {
        /// Segment index.
        segment: usize,
        /// The node's keccak-256 hash.
        hash: B256,
    },
    /// A witness none of whose nodes is the root it claims: it proves nothing at that root.
    #[error(
        "segment {segment}: none of the witness's {nodes} nodes hashes to its parent state root {root}"
    )]
    WitnessWithoutRoot {
        /// Segment index.
        segment: usize,
        /// The witness's parent state root.
        root: B256,
        /// Nodes in the witness.
        nodes: usize,
    },
    /// A dump without blocks: nothing to time ([`crate::Dump::check_has_work`]).
    #[error("the dump has no blocks, so no transactions: nothing to measure")]
    NoBlocks,
    /// A dump whose blocks hold no transaction: nothing to time
    /// ([`crate::Dump::check_has_work`]).
    #[error("the dump's {blocks} blocks hold no transactions: nothing to measure")]
    NoTransactions {
        /// Blocks in the dump.
        blocks: usize,
    },
}
