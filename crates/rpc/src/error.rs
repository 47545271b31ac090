//! Errors of dumping from a node. Each is meant to be printed as one line.

use std::path::PathBuf;

/// What the last attempt of a call that failed in transport ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// No answer within the time-out.
    TimedOut,
    /// The node kept rate limiting the call.
    RateLimited,
    /// Anything else: an HTTP error status, a broken connection, an answer that is not JSON.
    Other,
}

/// Everything that can go wrong making a dump from a JSON-RPC node.
#[derive(Debug, thiserror::Error)]
pub enum RpcDumpError {
    /// The node cannot be reached at all (connection refused, unknown host, bad URL).
    #[error("cannot reach the node at {url}: {detail}")]
    Connect {
        /// The node URL (path and credentials removed).
        url: String,
        /// What the transport said.
        detail: String,
    },
    /// A call kept failing in transport (time-out, HTTP error, broken connection) after every retry.
    #[error("{method}({params}) failed after {attempts} attempts over {elapsed_s:.1} s: {detail}")]
    Transport {
        /// JSON-RPC method.
        method: String,
        /// Parameters, as JSON (shortened).
        params: String,
        /// Attempts made.
        attempts: u32,
        /// Seconds spent on the call including back-off.
        elapsed_s: f64,
        /// What the last failure was.
        kind: TransportKind,
        /// The last failure.
        detail: String,
    },
    /// The node answered a call with a JSON-RPC error object.
    #[error("{method}({params}): the node answered with error {code}: {message}")]
    Rpc {
        /// JSON-RPC method.
        method: String,
        /// Parameters, as JSON (shortened).
        params: String,
        /// JSON-RPC error code.
        code: i64,
        /// JSON-RPC error message.
        message: String,
    },
    /// The node answered, but not with what the method returns.
    #[error("{method}({params}): unexpected answer: {detail}")]
    BadResponse {
        /// JSON-RPC method.
        method: String,
        /// Parameters, as JSON (shortened).
        params: String,
        /// What is wrong.
        detail: String,
    },
    /// The requested range is not a range this tool can dump.
    #[error("invalid block range: {0}")]
    InvalidRange(String),
    /// The node does not have a block of the range.
    #[error("the node does not have block {number} (its latest block is {latest})")]
    BlockNotFound {
        /// The missing block.
        number: u64,
        /// The node's latest block.
        latest: u64,
    },
    /// The node has the blocks but cannot serve the state the range starts from.
    #[error(
        "the node cannot serve state at block {block} (the parent of the first block): {detail}; \
         use an archive node or a range within the node's recent state"
    )]
    StateUnavailable {
        /// The block whose state is needed.
        block: u64,
        /// The node's answer.
        detail: String,
    },
    /// The fork schedule could not be determined.
    #[error("chain config: {0}")]
    Chain(#[from] crate::chain::ChainDetectError),
    /// The determined schedule is not usable (unknown fork, missing blob parameters).
    #[error(transparent)]
    ChainConfig(#[from] gigagas_dump::ChainConfigError),
    /// A block the node returned does not parse, or its header, ommer hashes, transactions
    /// and withdrawals do not fit together.
    #[error("block {block}: the node's data is inconsistent: {source}")]
    Block {
        /// Block number.
        block: u64,
        /// What is wrong.
        #[source]
        source: gigagas_chain::json::BlockJsonError,
    },
    /// What the node returned does not fit together (receipts, state, counts).
    #[error("block {block}: the node's data is inconsistent: {detail}")]
    Inconsistent {
        /// Block number.
        block: u64,
        /// What does not match.
        detail: String,
    },
    /// Re-executing a block failed.
    #[error("block {block}: re-execution failed: {source}")]
    Execution {
        /// Block number.
        block: u64,
        /// The recording path's error (the stage and alloy-evm's error).
        #[source]
        source: Box<gigagas_record::RecordError>,
    },
    /// The re-execution disagrees with the node: the dump would not verify and is not written.
    #[error("block {block}{}: {what} differs: node {node}, revm {revm}", tx.as_ref().map(|t| format!(", {t}")).unwrap_or_default())]
    Divergence {
        /// Block number.
        block: u64,
        /// The transaction (`tx 3 (0xabc…)`), if the divergence is per transaction.
        tx: Option<String>,
        /// What differs (gas used, status, receipts root, block access list hash, ...).
        what: String,
        /// The node's value.
        node: String,
        /// The re-execution's value.
        revm: String,
    },
    /// The resume directory cannot be used.
    #[error("{}: {detail}", path.display())]
    Partial {
        /// The directory or file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// Writing the dump file failed.
    #[error(transparent)]
    Write(#[from] gigagas_dump::DumpError),
    /// The dump was stopped on purpose after some blocks ([`crate::DumpOptions::stop_after`]).
    #[error("stopped after {done} of {total} blocks as requested; continue with --resume")]
    Stopped {
        /// Blocks executed and verified.
        done: u64,
        /// Blocks in the range.
        total: u64,
    },
}

impl RpcDumpError {
    pub(crate) fn partial(path: impl Into<PathBuf>, detail: impl std::fmt::Display) -> Self {
        Self::Partial {
            path: path.into(),
            detail: detail.to_string(),
        }
    }
}
