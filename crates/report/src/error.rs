//! The errors of this crate.

use crate::config::ConfigError;
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
    /// A dump could not be read or prepared for replay.
    #[error("{}: {detail}", path.display())]
    Dump {
        /// The dump file.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
    /// A replay diverged from the receipts or the access list: no number is reported.
    #[error("{}: verification failed: {detail}", path.display())]
    Divergence {
        /// The dump file.
        path: PathBuf,
        /// The first divergence.
        detail: String,
    },
    /// A plot could not be drawn.
    #[error("{}: plotting failed: {source}", path.display())]
    Plot {
        /// The folder the plots were for.
        path: PathBuf,
        /// What went wrong.
        source: crate::plot::PlotError,
    },
    /// Invalid arguments (e.g. a simulation grid with 0 threads).
    #[error("{0}")]
    Invalid(String),
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
