//! Why a dump yields no figures ([`DumpFault`]) and why a sweep, a run or a simulation
//! failed ([`BenchError`]): the errors of every stage of a dump gathered, the config's,
//! a pass's, the simulator's and the CPU profile's among them.

use crate::{
    config::ConfigError,
    error::{IoError, PassError},
    profile::ProfileError,
    whole_block::WholeBlockError,
};
use gigagas_dump::{DumpError, InvariantError};
use gigagas_executor::{Divergence, PrepareError, SetupError};
use gigagas_report::ReportError;
use gigagas_sim::NotMeasured;
use std::path::PathBuf;

/// Why a sweep, a run or a simulation failed. Every variant names the file involved.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The sweep config is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Results could not be written or rendered.
    #[error(transparent)]
    Report(#[from] ReportError),
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
    /// The whole-block simulator could not run (its store, its device curve, a pass or a
    /// point the model cannot project).
    #[error(transparent)]
    WholeBlock(#[from] WholeBlockError),
}

impl From<DumpError> for BenchError {
    fn from(e: DumpError) -> Self {
        Self::Read(Box::new(e))
    }
}

/// Why a dump that was read yields no figures. Holds no path: the error or failure that
/// carries it ([`BenchError::Dump`], [`gigagas_report::DumpFailure`]) names the dump once.
#[derive(Debug, thiserror::Error)]
pub enum DumpFault {
    /// The dump holds no block or no transaction: nothing to time (refused before any
    /// timing, so no row ever reads "0 [0–0]" or "NaN×").
    #[error(transparent)]
    NoWork(Box<InvariantError>),
    /// The plan computes state roots and no segment of the dump has a witness: refused
    /// after loading, before any pass.
    #[error(
        "--state-root {phase} needs a witness and no segment of this dump has one; give it one: \
         `gigagas generate` writes one (unless --no-witness), `gigagas import blockchain-test` \
         and `gigagas dump --rpc` add one, `gigagas import snapshot` reads a witness.json per \
         block folder"
    )]
    NoWitness {
        /// The first phase of the plan that computes roots.
        phase: &'static str,
    },
    /// The dump does not prepare for replay (an unknown fork, a malformed access list).
    #[error(transparent)]
    Prepare(Box<PrepareError>),
    /// A pass diverged from the receipts or the access list: no number is reported.
    #[error(transparent)]
    Divergence(Box<Divergence>),
    /// A pass could not be set up (its threads did not start, its root phase cannot).
    #[error(transparent)]
    Setup(Box<SetupError>),
    /// The state store could not be read, or a cold pass was not cold.
    #[error(transparent)]
    Io(Box<IoError>),
    /// A pass ended early: the dump's blocks could not be read again, or a thread of the
    /// pass panicked.
    #[error(transparent)]
    Stopped(Box<gigagas_executor::PassError>),
    /// The simulator found no measurement of a validation point.
    #[error(transparent)]
    NotMeasured(#[from] NotMeasured),
    /// The CPU profile (`--cpu-profile`) could not be taken or written.
    #[error(transparent)]
    Profile(Box<ProfileError>),
}

impl From<ProfileError> for DumpFault {
    fn from(e: ProfileError) -> Self {
        Self::Profile(Box::new(e))
    }
}

impl From<Divergence> for DumpFault {
    fn from(d: Divergence) -> Self {
        Self::Divergence(Box::new(d))
    }
}

impl From<gigagas_executor::PassError> for DumpFault {
    fn from(e: gigagas_executor::PassError) -> Self {
        PassError::from(e).into()
    }
}

impl From<PassError> for DumpFault {
    fn from(e: PassError) -> Self {
        match e {
            PassError::Divergence(d) => Self::Divergence(d),
            PassError::Setup(e) => Self::Setup(e),
            PassError::Io(e) => Self::Io(Box::new(e)),
            PassError::Stopped(e) => Self::Stopped(e),
        }
    }
}
