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
    #[error("{path}: inconsistent dump: {detail}")]
    Inconsistent {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
}
