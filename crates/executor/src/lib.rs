//! Verified parallel replay of gigagas dumps.
//!
//! Every transaction runs on its own [`BalView`]: the dump's pre-state overlaid with the
//! block access list's writes from earlier transactions. Nothing waits on another
//! transaction, so a [`Scheduler`] only decides the order in which free workers take
//! them. Blocks can be merged into mega-blocks ([`RunConfig::batch`]). Every run is
//! verified afterwards ([`Replay::verify_all`]): gas and status against the receipts,
//! writes against the access list.

pub mod bench;
pub mod exec;
pub mod plan;
pub mod prestate;
pub mod run;
pub mod schedule;
pub mod stats;
pub mod verify;
pub mod view;

pub use bench::{DEFAULT_MIN_SAMPLE_MS, MAX_PASSES_PER_SAMPLE, Repetition, Sampled};
pub use exec::{ExecError, ItemOutput};
pub use gigagas_record::ChainSpec;
pub use plan::{ItemKind, PrepareError, Replay, ReplayBlock, WorkItem};
pub use prestate::{PreStateDb, StateError};
pub use run::{RunConfig, RunOutputs, RunTimings};
pub use schedule::{GasLimit, GasUsed, Ols, Scheduler, SchedulerKind};
pub use stats::{Metrics, Summary};
pub use verify::{AccountWrites, Divergence, ExpectedWrites, ItemOutcome};
pub use view::BalView;

// Dev-dependencies used only by the integration tests in `tests/`.
#[cfg(test)]
use {alloy_eip7928 as _, gigagas_workload as _};
