//! Errors of dumping from a node. Each is meant to be printed as one line.

use alloy_primitives::B256;
use gigagas_chain::{Expected, HeaderMismatch};
use std::{fmt, path::PathBuf};

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

/// Why one attempt of a call failed in transport: the last attempt's failure in
/// [`RpcDumpError::Transport`] and [`RpcDumpError::Connect`], kept with its own source (an
/// I/O error, a JSON parse error) where it has one.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The URL is not `http://` or `https://`.
    #[error("the URL must start with http:// or https://")]
    NotHttp,
    /// The HTTP client refused the URL.
    #[error("bad URL: {0}")]
    BadUrl(String),
    /// No answer within the time-out.
    #[error("timed out ({0})")]
    TimedOut(ureq::Timeout),
    /// The host name does not resolve.
    #[error("host not found")]
    HostNotFound,
    /// No connection could be made.
    #[error("connection failed")]
    ConnectionFailed,
    /// The node refused the connection.
    #[error("connection refused")]
    ConnectionRefused,
    /// Another I/O error (a broken connection, a reset).
    #[error(transparent)]
    Io(std::io::Error),
    /// An HTTP error status (5xx and 429 are retried, other 4xx are final).
    #[error("HTTP {status}: {body}")]
    Status {
        /// The HTTP status code.
        status: u16,
        /// The start of the answer.
        body: String,
    },
    /// The answer is over [`crate::MAX_RESPONSE_BYTES`].
    #[error(
        "the answer is larger than {limit} bytes ({} MiB), the most accepted \
         (MAX_RESPONSE_BYTES); not read further",
        limit >> 20
    )]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The answer holds more than [`crate::MAX_RESPONSE_VALUES`] JSON values.
    #[error(
        "the answer holds more than {} JSON values ({values}), the most accepted \
         (MAX_RESPONSE_VALUES); not parsed",
        crate::MAX_RESPONSE_VALUES
    )]
    TooManyValues {
        /// An upper bound of the values it holds.
        values: usize,
    },
    /// The answer is not JSON.
    #[error("the answer is not JSON: {body}")]
    NotJson {
        /// The start of the answer.
        body: String,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The node kept answering with a rate-limit error.
    #[error("rate limited: error {code}: {message}")]
    RateLimited {
        /// The JSON-RPC error code (`-32005`, `429`).
        code: i64,
        /// The JSON-RPC error message.
        message: String,
    },
    /// Any other failure of the HTTP client (boxed: some of its errors are large).
    #[error(transparent)]
    Http(Box<ureq::Error>),
}

impl TransportError {
    /// What kind of failure this is, in short.
    pub fn kind(&self) -> TransportKind {
        match self {
            Self::TimedOut(_) => TransportKind::TimedOut,
            Self::Io(e) if e.kind() == std::io::ErrorKind::TimedOut => TransportKind::TimedOut,
            Self::RateLimited { .. } => TransportKind::RateLimited,
            _ => TransportKind::Other,
        }
    }
}

/// A transaction of a block, in [`RpcDumpError::Divergence`]: `tx 3 (0xabc…)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxRef {
    /// Index in the block.
    pub index: usize,
    /// Transaction hash.
    pub hash: B256,
}

impl fmt::Display for TxRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tx {} ({})", self.index, self.hash)
    }
}

/// A transaction's status, as [`Difference::Status`] shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status(pub bool);

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0 { "success" } else { "failure" })
    }
}

/// What a re-executed block and the node disagree on, typed by field: the node's value is
/// `expected`, revm's is `got`. Displayed as `<field> differs: node <expected>, revm <got>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// How many receipts the block has.
    ReceiptCount(Expected<usize>),
    /// A transaction's gas used.
    GasUsed(Expected<u64>),
    /// A transaction's status.
    Status(Expected<Status>),
    /// A transaction's log count.
    LogCount(Expected<u64>),
    /// A field of the header that execution decides (gas used, receipts root, logs bloom,
    /// requests hash, ...): the header's value against the execution's.
    Header(HeaderMismatch),
    /// The header's `blockAccessListHash` against the hash of the list revm built.
    AccessListHash(Expected<B256>),
}

impl Difference {
    /// The field that differs, in words (`gas used`, `block access list hash`, ...).
    pub fn field(&self) -> &'static str {
        match self {
            Self::ReceiptCount(_) => "receipt count",
            Self::GasUsed(_) => "gas used",
            Self::Status(_) => "status",
            Self::LogCount(_) => "log count",
            // "block": the transactions' gas used is `gas used`.
            Self::Header(HeaderMismatch::GasUsed(_)) => "block gas used",
            Self::Header(m) => m.field(),
            Self::AccessListHash(_) => "block access list hash",
        }
    }

    /// Both values in their display form.
    pub fn values(&self) -> Expected<String> {
        fn shown<T: fmt::Display>(e: &Expected<T>) -> Expected<String> {
            e.as_ref().map(ToString::to_string)
        }
        match self {
            Self::ReceiptCount(e) => shown(e),
            Self::GasUsed(e) | Self::LogCount(e) => shown(e),
            Self::Status(e) => shown(e),
            Self::Header(m) => m.values(),
            Self::AccessListHash(e) => shown(e),
        }
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Expected { expected, got } = self.values();
        write!(f, "{} differs: node {expected}, revm {got}", self.field())
    }
}

/// Everything that can go wrong making a dump from a JSON-RPC node.
#[derive(Debug, thiserror::Error)]
pub enum RpcDumpError {
    /// The node cannot be reached at all (connection refused, unknown host, bad URL).
    #[error(
        "cannot reach the node at {url}{}: {source}",
        match (method, attempts) {
            (Some(m), n) => format!(" ({m}, {n} attempts)"),
            (None, _) => String::new(),
        }
    )]
    Connect {
        /// The node URL (path and credentials removed).
        url: String,
        /// The call that kept failing to connect, after every retry; `None` when the first
        /// attempt already gave up (a bad URL, the first call of a dump).
        method: Option<String>,
        /// Attempts made.
        attempts: u32,
        /// What the transport said.
        #[source]
        source: TransportError,
    },
    /// A call kept failing in transport (time-out, HTTP error, broken connection) after every retry.
    #[error("{method}({params}) failed after {attempts} attempts over {elapsed_s:.1} s: {source}")]
    Transport {
        /// JSON-RPC method.
        method: String,
        /// Parameters, as JSON (shortened).
        params: String,
        /// Attempts made.
        attempts: u32,
        /// Seconds spent on the call including back-off.
        elapsed_s: f64,
        /// What the last failure was, in short ([`TransportError::kind`]).
        kind: TransportKind,
        /// The last failure.
        #[source]
        source: TransportError,
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
    #[error("block {block}{}: {what}", tx.as_ref().map(|t| format!(", {t}")).unwrap_or_default())]
    Divergence {
        /// Block number.
        block: u64,
        /// The transaction, if the divergence is per transaction.
        tx: Option<TxRef>,
        /// What differs, with the node's value as `expected` and revm's as `got` (boxed:
        /// hashes and header values would make every result carrying the error large).
        what: Box<Difference>,
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
    pub(crate) fn inconsistent(block: u64, detail: impl std::fmt::Display) -> Self {
        Self::Inconsistent {
            block,
            detail: detail.to_string(),
        }
    }

    pub(crate) fn partial(path: impl Into<PathBuf>, detail: impl std::fmt::Display) -> Self {
        Self::Partial {
            path: path.into(),
            detail: detail.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_difference_shows_the_header_mismatch() {
        let gas = Difference::Header(HeaderMismatch::GasUsed(Expected::new(21_000, 21_001)));
        assert_eq!(
            gas.to_string(),
            "block gas used differs: node 21000, revm 21001"
        );
        let root = Difference::Header(HeaderMismatch::ReceiptsRoot(Expected::new(
            B256::repeat_byte(1),
            B256::repeat_byte(2),
        )));
        assert_eq!(
            root.to_string(),
            format!(
                "receipts root differs: node {}, revm {}",
                B256::repeat_byte(1),
                B256::repeat_byte(2)
            )
        );
    }
}
