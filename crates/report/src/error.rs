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
    /// An output location that cannot be used, found before any work.
    #[error("{}{}: {problem}", what.as_ref().map(|w| format!("{w} ")).unwrap_or_default(), path.display())]
    Output {
        /// The option that names the output (`--json`, `--out`, ...), when known.
        what: Option<String>,
        /// The output as given.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        problem: OutputProblem,
    },
    /// A `results.json` written by a newer gigagas.
    #[error("{}: results format {found} is newer than this build's {supported}", path.display())]
    NewerFormat {
        /// The file.
        path: PathBuf,
        /// Its format number.
        found: u32,
        /// The newest format this build reads.
        supported: u32,
    },
}

/// Why an output location cannot be used ([`ReportError::Output`]).
#[derive(Debug, thiserror::Error)]
pub enum OutputProblem {
    /// The path ends in no file name (`/`, `..`).
    #[error("not a file name")]
    NotAFileName,
    /// The output is one of the inputs.
    #[error("this is the input {}; refusing to overwrite an input (choose another output)", input.display())]
    IsAnInput {
        /// The input it would overwrite.
        input: PathBuf,
    },
    /// The output lies inside an input (a file of an input folder, a path under a file).
    #[error("would overwrite part of the input {}; choose another output", input.display())]
    InsideAnInput {
        /// The input.
        input: PathBuf,
    },
    /// The folder the output goes into cannot be written.
    #[error("cannot write there ({}): {source}", dir.display())]
    NotWritable {
        /// The existing folder that was probed.
        dir: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Something on the way to the output folder is not a folder.
    #[error("cannot create the output folder: {} is not a folder", blocker.display())]
    NotAFolder {
        /// The path that is not a folder.
        blocker: PathBuf,
    },
    /// The output exists and is a folder or another non-regular file.
    #[error("exists and is not a regular file")]
    NotARegularFile,
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
