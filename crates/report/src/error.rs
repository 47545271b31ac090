//! The errors of this crate.

use crate::config::ConfigError;
use gigagas_dump::{DumpError, InvariantError};
use gigagas_executor::{Divergence, PrepareError, RunConfig};
use std::path::PathBuf;

/// Why a sweep, a report or a simulation failed. Every variant names the file involved.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The sweep config is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A `results.json` could not be parsed or written.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// A dump could not be read or decoded. The dump crate's error names the file.
    #[error(transparent)]
    Read(Box<DumpError>),
    /// A dump was read but yields no figures: nothing to time, a dump that does not
    /// prepare for replay, or a replay that diverged from the receipts or the access list.
    #[error("{}", path.display())]
    Dump {
        /// The dump file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: DumpFault,
    },
    /// A plot could not be drawn.
    #[error("{}: plotting failed: {source}", path.display())]
    Plot {
        /// The folder the plots were for.
        path: PathBuf,
        /// What went wrong.
        source: crate::plot::PlotError,
    },
    /// Invalid arguments or output locations (an output that is also an input, a path
    /// with no file name).
    #[error("{0}")]
    Invalid(String),
}

/// Why a dump that was read yields no figures. Holds no path: the error or failure that
/// carries it ([`ReportError::Dump`], [`crate::DumpFailure`]) names the dump once.
#[derive(Debug, thiserror::Error)]
pub enum DumpFault {
    /// The dump holds no block or no transaction: nothing to time (refused before any
    /// timing, so no row ever reads "0 [0–0]" or "NaN×").
    #[error(transparent)]
    NoWork(Box<InvariantError>),
    /// The dump does not prepare for replay (an unknown fork, a malformed access list).
    #[error(transparent)]
    Prepare(Box<PrepareError>),
    /// A pass diverged from the receipts or the access list: no number is reported.
    #[error("verification failed")]
    Divergence(#[source] Box<Divergence>),
    /// The simulator found no measurement of a validation point.
    #[error(transparent)]
    NotMeasured(#[from] NotMeasured),
}

impl From<Divergence> for DumpFault {
    fn from(d: Divergence) -> Self {
        Self::Divergence(Box::new(d))
    }
}

/// The simulator's validation asked for a point that was not measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("simulate: no measurement for {config}")]
pub struct NotMeasured {
    /// The point.
    pub config: RunConfig,
}

impl From<DumpError> for ReportError {
    fn from(e: DumpError) -> Self {
        Self::Read(Box::new(e))
    }
}

impl ReportError {
    /// An [`ReportError::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
