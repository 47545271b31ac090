//! [`StoreError`]: everything that can go wrong building, opening or reading a store, each
//! variant displayed as one line that names the store or file.

use crate::layout::{StoreKey, ValueError};
use signet_libmdbx::{MdbxError, ReadError};
use std::{
    io,
    path::{Path, PathBuf},
};

/// An error from the state store. Every variant displays as a single line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A file-system call failed.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. `"create"`.
        op: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The path is not a state store (missing, not a folder, or no data file).
    #[error("no state store at {}: {reason}", path.display())]
    NotAStore {
        /// The folder given.
        path: PathBuf,
        /// What is missing.
        reason: String,
    },
    /// The data file is shorter than the pages its meta pages say are in use.
    #[error(
        "state store {} is truncated: its data file has {actual} bytes, its pages need {expected}; rebuild it",
        path.display()
    )]
    Truncated {
        /// The store folder.
        path: PathBuf,
        /// Size of the data file.
        actual: u64,
        /// Bytes the used pages need.
        expected: u64,
    },
    /// MDBX refused to open the environment (not an MDBX file, corrupt meta pages, ...).
    #[error("state store {} cannot be opened: {source}; rebuild it", path.display())]
    Open {
        /// The store folder.
        path: PathBuf,
        /// MDBX's error.
        #[source]
        source: MdbxError,
    },
    /// The environment opened but its content is not what a store holds.
    #[error("state store {} is corrupt: {what}; rebuild it", path.display())]
    Corrupt {
        /// The store folder.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The store was written by a different version of this crate's layout.
    #[error(
        "state store {} has layout version {found}, this build reads version {expected}; rebuild it with `gigagas state build`",
        path.display()
    )]
    Version {
        /// The store folder.
        path: PathBuf,
        /// Version recorded in the store.
        found: u64,
        /// [`crate::FORMAT_VERSION`].
        expected: u32,
    },
    /// The store was built from another dump.
    #[error(
        "state store {} was built from dump {store:016x}, not from this dump {expected:016x}; rebuild it with `gigagas state build`",
        path.display()
    )]
    WrongDump {
        /// The store folder.
        path: PathBuf,
        /// Checksum of the dump the store was built from.
        store: u64,
        /// Checksum of the dump given.
        expected: u64,
    },
    /// An MDBX call failed while building.
    #[error("building the state store ({what}): {source}")]
    Build {
        /// What was being written.
        what: &'static str,
        /// MDBX's error.
        #[source]
        source: MdbxError,
    },
    /// An MDBX read of a table failed (its metadata, a cursor, a whole-table walk); a read
    /// of one key is [`StoreError::ReadKey`].
    #[error("reading table {table} of state store {}: {source}", path.display())]
    Read {
        /// The store folder.
        path: PathBuf,
        /// The table.
        table: &'static str,
        /// MDBX's error.
        #[source]
        source: ReadError,
    },
    /// Reading one key failed (MDBX's error).
    #[error("reading {key} from table {} of state store {}: {source}", key.table(), path.display())]
    ReadKey {
        /// The store folder.
        path: PathBuf,
        /// The key (its table: [`StoreKey::table`]).
        key: StoreKey,
        /// MDBX's error.
        #[source]
        source: ReadError,
    },
    /// A value read from a table does not decode.
    #[error(
        "state store {} is corrupt: table {}: {key}: {what}; rebuild it",
        path.display(),
        key.table()
    )]
    BadValue {
        /// The store folder.
        path: PathBuf,
        /// The key read (its table: [`StoreKey::table`]).
        key: StoreKey,
        /// What is wrong with the value (shown inline, before the advice to rebuild).
        what: ValueError,
    },
    /// A read named a segment the store does not have.
    #[error("segment {segment} is not in the state store ({segments} segments)")]
    NoSuchSegment {
        /// The segment asked for.
        segment: usize,
        /// How many the store holds.
        segments: u32,
    },
    /// `build_store` will not replace this path.
    #[error("refusing to overwrite {}: {reason}", path.display())]
    RefuseOverwrite {
        /// The output path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The dump has more segments than the key layout can address.
    #[error("the dump has {segments} segments, a state store holds at most {max}")]
    TooManySegments {
        /// Segments in the dump.
        segments: usize,
        /// The most a store holds.
        max: u32,
    },
    /// A pass that writes into the store was asked of a store it may not change.
    #[error(
        "state store {} cannot take a --persist pass: {reason}; a --persist pass writes each block into the store and takes it back after the pass",
        path.display()
    )]
    ReadOnly {
        /// The store folder.
        path: PathBuf,
        /// Why it cannot be written.
        reason: String,
    },
    /// A `--persist` pass was interrupted before it took its blocks back out.
    #[error(
        "state store {} was left changed by an interrupted --persist pass; rebuild it with `gigagas state build`",
        path.display()
    )]
    Dirty {
        /// The store folder.
        path: PathBuf,
    },
    /// An MDBX call failed while writing blocks into the store or taking them back.
    #[error("writing state store {} ({what}): {source}", path.display())]
    Write {
        /// The store folder.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// MDBX's error.
        #[source]
        source: ReadError,
    },
    /// The background writer stopped before it wrote every block handed to it: a write
    /// failed (`reason`, the failure), or its thread panicked.
    #[error("the background writer of state store {} stopped: {reason}", path.display())]
    WriterStopped {
        /// The store folder.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// After a `--persist` pass was taken back, a key does not read as before the pass.
    #[error(
        "state store {} does not read back as before the --persist pass (table {table}); rebuild it with `gigagas state build`",
        path.display()
    )]
    NotRestored {
        /// The store folder.
        path: PathBuf,
        /// The table of the first key that differs.
        table: &'static str,
    },
    /// The device probe cannot run on this file.
    #[error("probing {}: {reason}", path.display())]
    Probe {
        /// The file probed.
        path: PathBuf,
        /// Why not.
        reason: String,
    },
}

impl StoreError {
    /// An [`StoreError::Io`] for `op` on `path`.
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// An [`StoreError::Open`] of the store in `path`, from MDBX's error.
    pub(crate) fn open(path: &Path) -> impl Fn(MdbxError) -> Self + '_ {
        move |source| Self::Open {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A [`StoreError::Corrupt`]: the store in `path` holds `what`.
    pub(crate) fn corrupt(path: &Path, what: String) -> Self {
        Self::Corrupt {
            path: path.to_path_buf(),
            what,
        }
    }
}
