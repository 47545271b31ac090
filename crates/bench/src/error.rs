//! The errors of one pass, shared by every module that runs passes ([`crate::io`],
//! [`crate::bench`], [`crate::profile`], [`crate::sweep`]): [`PassError`] and the state
//! store's [`IoError`] it may hold. This module imports no other of the crate.

use gigagas_executor::{Divergence, SetupError};
use gigagas_state::{COLD_MAX_RESIDENT_BYTES, StoreError};

/// Why one pass of a point yields no timing: its replay diverged, or its state store
/// could not be read or made cold.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The pass diverged from the receipts or the access list.
    #[error(transparent)]
    Divergence(Box<Divergence>),
    /// The pass could not be set up.
    #[error(transparent)]
    Setup(Box<SetupError>),
    /// The state store failed, or a cold pass was not cold.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The pass ended early: its state could not be read from its source (the store's
    /// error names the store and the key), its dump's blocks could not be read again, or one
    /// of its threads panicked.
    #[error(transparent)]
    Stopped(Box<gigagas_executor::PassError>),
}

impl From<gigagas_executor::PassError> for PassError {
    fn from(e: gigagas_executor::PassError) -> Self {
        match e {
            gigagas_executor::PassError::Divergence(d) => Self::Divergence(d),
            gigagas_executor::PassError::Setup(e) => Self::Setup(Box::new(e)),
            e @ (gigagas_executor::PassError::Read(_)
            | gigagas_executor::PassError::Blocks(_)
            | gigagas_executor::PassError::Panicked(_)) => Self::Stopped(Box::new(e)),
        }
    }
}

impl From<Divergence> for PassError {
    fn from(d: Divergence) -> Self {
        Self::Divergence(Box::new(d))
    }
}

/// Why a store pass could not be timed: the store failed ([`crate::io`]), a cold pass was
/// not cold ([`crate::io`]), or a store point ran with no store open ([`crate::bench`]).
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The store could not be opened, read, evicted or probed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A point reads its state from a store, and none was named (`--state DIR`).
    #[error("this point reads its state from a store, and none is open (--state DIR)")]
    NoStore,
    /// After eviction, more of the store was still in the page cache than a cold pass
    /// allows: the pass is not reported as cold.
    #[error(
        "not cold: {:.1} % of the store ({:.1} MB) was still in the page cache after eviction (at most {:.1} MB allowed); run as root so the page cache can be dropped",
        resident * 100.0,
        *bytes as f64 / 1e6,
        COLD_MAX_RESIDENT_BYTES as f64 / 1e6
    )]
    NotCold {
        /// The resident share.
        resident: f64,
        /// The resident bytes.
        bytes: u64,
    },
}
