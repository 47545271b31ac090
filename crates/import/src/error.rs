//! Why an import failed or was skipped.

use crate::network::NetworkError;
use alloy_consensus::crypto::RecoveryError;
use alloy_evm::block::BlockExecutionError;
use alloy_primitives::{Address, B256, Bytes, U256};
use gigagas_chain::{BlockStage, Expected, HeaderMismatch};
use gigagas_dump::InvariantError;
use gigagas_record::BalEntry;
use std::{borrow::Cow, fmt, path::PathBuf};

/// Everything that can go wrong importing fixtures. File-level variants name the file,
/// test-level variants name the test.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file or directory could not be read, or an output could not be created.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not a BlockchainTests fixture (not JSON, not an object of tests, or
    /// entries without `blocks`/`pre`/`genesisBlockHeader`).
    #[error("{path}: not a BlockchainTests fixture: {reason}")]
    NotAFixture {
        /// The file.
        path: PathBuf,
        /// What is missing or wrong.
        reason: String,
    },
    /// `--test NAME` names no test of the input.
    #[error("{path}: no test named `{test}` (available: {available})")]
    TestNotFound {
        /// The file or directory searched.
        path: PathBuf,
        /// The requested name.
        test: String,
        /// Some of the names that exist.
        available: String,
    },
    /// A directory holds no `.json` file.
    #[error("{path}: no .json fixture files found")]
    NoFixtures {
        /// The directory.
        path: PathBuf,
    },
    /// The fixture's `network` is not one gigagas can schedule.
    #[error("{test}: unsupported network {network}: {source}")]
    UnsupportedNetwork {
        /// Test name.
        test: String,
        /// The fixture's network.
        network: String,
        /// Why, and what is supported.
        #[source]
        source: NetworkError,
    },
    /// Something else about the fixture that gigagas dumps cannot represent (side chains,
    /// a chain that does not start right after genesis, ...).
    #[error("{test}: unsupported: {reason}")]
    Unsupported {
        /// Test name.
        test: String,
        /// Why.
        reason: String,
    },
    /// revm's execution of a block disagrees with the fixture under rules revm does not
    /// implement the way the fixture's filler did (Amsterdam devnet fixtures): skipped, with
    /// the first differing field.
    #[error("{test}: revm's {fork} rules differ from the fixture's: {detail}")]
    RulesDiffer {
        /// Test name.
        test: String,
        /// The fork whose rules differ.
        fork: String,
        /// The first difference: where, which field, expected and got.
        detail: String,
    },
    /// The fixture entry is malformed: fields missing or of the wrong type, RLP that does
    /// not decode, a signature that does not recover.
    #[error("{test}: malformed fixture: {defect}")]
    Malformed {
        /// Test name.
        test: String,
        /// What is wrong (boxed: some defects carry whole values).
        #[source]
        defect: Box<FixtureDefect>,
    },
    /// A block could not be executed (invalid transaction, system call failure, ...).
    #[error("{test}: block {block}: execution failed: {stage}: {source}")]
    Execution {
        /// Test name.
        test: String,
        /// Block number.
        block: u64,
        /// Where in the block: pre-block system calls, a transaction, post-block work.
        stage: BlockStage,
        /// alloy-evm's error.
        #[source]
        source: BlockExecutionError,
    },
    /// Execution disagrees with what the fixture expects.
    #[error("{0}")]
    Mismatch(Box<Mismatch>),
    /// Writing the dump failed.
    #[error(transparent)]
    Dump(#[from] gigagas_dump::DumpError),
    /// An output path names an input: refused before any work.
    #[error(transparent)]
    OutputIsInput(#[from] gigagas_fs_util::OutputIsInput),
}

impl ImportError {
    /// `true` for fixtures gigagas cannot import by design (unsupported network, side
    /// chains, revm's Amsterdam rules): a batch import reports them as skipped, not failed.
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self,
            ImportError::UnsupportedNetwork { .. }
                | ImportError::Unsupported { .. }
                | ImportError::RulesDiffer { .. }
        )
    }

    /// The mismatch, if this is one.
    pub fn mismatch(&self) -> Option<&Mismatch> {
        match self {
            ImportError::Mismatch(m) => Some(m),
            _ => None,
        }
    }
}

/// What is malformed in a fixture entry ([`ImportError::Malformed`]).
#[derive(Debug, thiserror::Error)]
pub enum FixtureDefect {
    /// The entry does not deserialize into a BlockchainTest (a field missing or of the
    /// wrong type).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A `pre` account cannot be loaded.
    #[error(transparent)]
    PreState(#[from] PreStateError),
    /// A `postState` account cannot be loaded.
    #[error("postState account {address}: {source}")]
    PostState {
        /// The account.
        address: Address,
        /// What is wrong with it.
        #[source]
        source: FixtureAccountError,
    },
    /// A `config.blobSchedule` value does not fit in 64 bits.
    #[error(transparent)]
    BlobSchedule(#[from] BlobScheduleError),
    /// `genesisBlockHeader.number` does not fit in 64 bits.
    #[error("genesis block number does not fit in 64 bits")]
    GenesisNumber,
    /// `genesisRLP` is not a block's RLP.
    #[error("genesisRLP does not decode: {0}")]
    GenesisRlp(#[source] alloy_rlp::Error),
    /// A block's header commits to an access list (`blockAccessListHash`) but the fixture
    /// gives none.
    #[error("block {0}: the header has a blockAccessListHash but the fixture no blockAccessList")]
    MissingAccessList(u64),
    /// The fixture gives neither `postState` nor `postStateHash`.
    #[error("neither postState nor postStateHash is given")]
    NoPostState,
    /// The pre-state lacks what the recorded access lists name.
    #[error("pre-state of the access lists: {0}")]
    AccessListPreState(#[source] WorldError),
    /// The dump assembled from the fixture breaks an invariant of the format.
    #[error("the assembled dump is inconsistent: {0}")]
    InconsistentDump(#[source] InvariantError),
    /// A block of `blocks` cannot be decoded.
    #[error("block {index}: {defect}")]
    Block {
        /// Index of the block in the fixture's `blocks` (0-based).
        index: usize,
        /// What is wrong with it.
        #[source]
        defect: BlockDefect,
    },
}

/// A `config.blobSchedule` value that does not fit in 64 bits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config.blobSchedule.{fork}.{field} does not fit in 64 bits")]
pub struct BlobScheduleError {
    /// The fork entry, as the fixture spells it.
    pub fork: String,
    /// The field: `target`, `max` or `baseFeeUpdateFraction`.
    pub field: &'static str,
}

/// A read the world cannot answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorldError {
    /// `BLOCKHASH` of a block the fixture has no hash for.
    #[error("hash of block {0} is unknown")]
    MissingBlockHash(u64),
    /// Bytecode with this hash is unknown.
    #[error("bytecode {0} is unknown")]
    MissingCode(B256),
}

impl revm::database_interface::DBErrorMarker for WorldError {}

/// Why a fixture account cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FixtureAccountError {
    /// The nonce does not fit in 64 bits.
    #[error("nonce {0} does not fit in 64 bits")]
    NonceTooLarge(U256),
}

/// A fixture `pre` account that cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pre-state account {address}: {source}")]
pub struct PreStateError {
    /// The account.
    pub address: Address,
    /// What is wrong with it.
    pub source: FixtureAccountError,
}

/// Why a fixture block's `rlp` does not decode into a block with senders.
#[derive(Debug, thiserror::Error)]
pub enum BlockDefect {
    /// The RLP is not a block.
    #[error("RLP does not decode: {0}")]
    Rlp(#[source] alloy_rlp::Error),
    /// Bytes follow the block's RLP.
    #[error("{0} bytes after the block's RLP")]
    TrailingBytes(usize),
    /// A transaction's signature does not recover to a sender.
    #[error("block {number} tx {tx}: sender recovery failed: {source}")]
    Sender {
        /// The block's number (from its header).
        number: u64,
        /// Index of the transaction in the block.
        tx: usize,
        /// The recovery error.
        #[source]
        source: RecoveryError,
    },
}

/// Where a mismatch was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// After executing the block with this number.
    Block(u64),
    /// The fixture's expected state after the last block (`postState` / `postStateHash`).
    PostState,
    /// The chain as a whole (`lastblockhash`, genesis).
    Chain,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Block(n) => write!(f, "block {n}"),
            Location::PostState => f.write_str("post-state"),
            Location::Chain => f.write_str("chain"),
        }
    }
}

/// The first difference between execution and the fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Test name.
    pub test: String,
    /// Where.
    pub location: Location,
    /// Account concerned, if any.
    pub account: Option<Address>,
    /// What differs, with the fixture's value and the execution's.
    pub difference: Difference,
}

impl Mismatch {
    /// The field in words: `balance`, `nonce`, `code`, `storage[0x..]`, `account`,
    /// `gas used`, `state root`, `last block hash`, ...
    pub fn field(&self) -> Cow<'static, str> {
        self.difference.field()
    }

    /// What the fixture says and what execution produced, in display form.
    pub fn values(&self) -> Expected<String> {
        self.difference.values()
    }
}

/// What a [`Mismatch`] is about, with the fixture's value (`expected`) and the
/// execution's (`got`), typed by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// The hash of `genesisRLP` against `genesisBlockHeader`'s.
    GenesisHash(Expected<B256>),
    /// A block's header against its body, its parent or its execution.
    Header(HeaderMismatch),
    /// A block's state root against the state after executing it.
    StateRoot(Expected<B256>),
    /// `postStateHash` against the final state's root.
    PostStateHash(Expected<B256>),
    /// `lastblockhash` against the hash of the last block imported.
    LastBlockHash(Expected<B256>),
    /// A block the fixture expects rejected passes every check.
    Accepted {
        /// Index of the block in the fixture's `blocks`.
        index: usize,
        /// The exception the fixture expects.
        exception: String,
    },
    /// The fixture's `blockAccessList` is not a well-formed EIP-7928 list (why).
    AccessListFormat(String),
    /// An entry of the fixture's `blockAccessList` against revm's (the account is the
    /// mismatch's).
    AccessListEntry(BalEntry),
    /// The header's `blockAccessListHash` against the hash of the fixture's list.
    AccessListHash(Expected<B256>),
    /// An account `postState` lists that the final state lacks.
    MissingAccount,
    /// An account of the final state that `postState` does not list.
    ExtraAccount {
        /// Its balance.
        balance: U256,
        /// Its nonce.
        nonce: u64,
        /// How many storage slots it holds.
        slots: usize,
    },
    /// An account's balance.
    Balance(Expected<U256>),
    /// An account's nonce.
    Nonce(Expected<u64>),
    /// An account's code (shown shortened past 48 bytes).
    Code(Expected<Bytes>),
    /// A storage slot's value (zero when unset).
    Storage {
        /// The slot.
        slot: U256,
        /// The fixture's value against the final state's.
        values: Expected<U256>,
    },
}

impl Difference {
    /// The field in words (see [`Mismatch::field`]).
    pub fn field(&self) -> Cow<'static, str> {
        match self {
            Self::GenesisHash(_) => "genesis hash (genesisRLP vs genesisBlockHeader)".into(),
            Self::Header(m) => m.field().into(),
            Self::StateRoot(_) => "state root".into(),
            Self::PostStateHash(_) => "state root (postStateHash)".into(),
            Self::LastBlockHash(_) => "last block hash".into(),
            Self::Accepted { index, .. } => format!("validity of fixture block {index}").into(),
            Self::AccessListFormat(_) => {
                "block access list format (the fixture's blockAccessList)".into()
            }
            Self::AccessListEntry(entry) => format!("block access list {}", entry.name()).into(),
            Self::AccessListHash(_) => {
                "block access list hash (the fixture's blockAccessList)".into()
            }
            Self::MissingAccount | Self::ExtraAccount { .. } => "account".into(),
            Self::Balance(_) => "balance".into(),
            Self::Nonce(_) => "nonce".into(),
            Self::Code(_) => "code".into(),
            Self::Storage { slot, .. } => format!("storage[{slot:#x}]").into(),
        }
    }

    /// The fixture's value and the execution's, in display form.
    pub fn values(&self) -> Expected<String> {
        fn text<T: fmt::Display>(e: &Expected<T>) -> Expected<String> {
            e.as_ref().map(ToString::to_string)
        }
        match self {
            Self::GenesisHash(e)
            | Self::StateRoot(e)
            | Self::PostStateHash(e)
            | Self::LastBlockHash(e)
            | Self::AccessListHash(e) => text(e),
            Self::Header(m) => m.values(),
            Self::Accepted { exception, .. } => Expected::new(
                format!("rejected ({exception})"),
                "accepted by every check (transactions, header, state root, access list)".into(),
            ),
            Self::AccessListFormat(why) => {
                Expected::new("a well-formed EIP-7928 list".into(), why.clone())
            }
            Self::AccessListEntry(entry) => entry.values(),
            Self::MissingAccount => Expected::new("present".into(), "absent".into()),
            Self::ExtraAccount {
                balance,
                nonce,
                slots,
            } => Expected::new(
                "absent".into(),
                format!("present (balance {balance}, nonce {nonce}, {slots} storage slots)"),
            ),
            Self::Balance(e) => text(e),
            Self::Nonce(e) => text(e),
            Self::Code(e) => e.as_ref().map(|code| short_hex(code)),
            Self::Storage { values, .. } => values.map(|v| format!("{v:#x}")),
        }
    }
}

/// `bytes` in hex, the first 48 and the length past that.
fn short_hex(bytes: &[u8]) -> String {
    const MAX: usize = 48;
    if bytes.len() <= MAX {
        format!("0x{}", alloy_primitives::hex::encode(bytes))
    } else {
        format!(
            "0x{}… ({} bytes)",
            alloy_primitives::hex::encode(&bytes[..MAX]),
            bytes.len()
        )
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: ", self.test, self.location)?;
        if let Some(a) = self.account {
            write!(f, "account {a}: ")?;
        }
        write!(f, "{}: {}", self.field(), self.values())
    }
}

impl std::error::Error for Mismatch {}

impl From<Mismatch> for ImportError {
    fn from(m: Mismatch) -> Self {
        ImportError::Mismatch(Box::new(m))
    }
}
