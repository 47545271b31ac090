//! Verified parallel replay of gigagas dumps.
//!
//! Both the replay and the sequential baseline time exactly the work defined in [`work`]
//! (per transaction: execute and produce the state changes; per block: system calls,
//! rewards, withdrawals; optionally sender recovery and receipts with their blooms).
//!
//! Every transaction runs on its own [`BalView`]: the dump's pre-state overlaid with the
//! block access list's writes from earlier transactions. Nothing waits on another
//! transaction, so a [`Scheduler`] only decides the order in which free workers take
//! them. Blocks can be merged into mega-blocks ([`RunConfig::batch`]). Every run is
//! verified afterwards ([`Replay::verify_all`]): gas and status against the receipts,
//! writes against the access list.
//!
//! # Where things live
//!
//! [`Replay`] (module [`replay`]) is the dump prepared once: every block's header and the
//! flat list of [`WorkItem`]s, each segment's pre-state, and the blocks' bodies
//! (transactions, receipts, access lists: [`ReplayBlock`]) kept decoded while they fit
//! [`ResidentLimits::blocks`], else each block packed on its own and a batch's decoded
//! between batches ([`Replay::blocks`], a [`Blocks`] view every reader takes; [`Replay::load`]
//! streams a file in without holding it decoded). A parallel pass's data flows through the
//! modules in this order:
//!
//! | module | what it does |
//! |---|---|
//! | [`exec`] | executing one item on its [`BalView`] ([`ItemExecutor`], one EVM per worker), and the sequential baseline |
//! | [`verify`] | comparing every item's gas, status and writes with the receipts and the [`ExpectedWrites`]: a [`Divergence`] whose [`Mismatch`] holds each pair as an [`Expected`] |
//! | [`root`] | the state-root phase: each block's root from its segment's witness and the access lists ([`RootTimings`]), checked against the header |
//! | [`pass`] | a pass set up once, before its window, as a value: its batches, where its items find their state (memory, or read from [`StateSource`]s as the config's [`StoreRead`] says), its root phase, its worker and reader threads ([`SetupError`] when it cannot be); the [`PassCache`] passes share |
//! | `batch` | the one batch loop over a set-up pass, on the calling thread and the pass's workers whatever their number: the timed window, reading, root units and the sink between batches |
//! | [`run`] | the [`Runner`]s, one timed and verified pass each: [`Parallel`] (set up, loop, figures) and [`Sequential`] (the client loop); [`PassError`] |
//!
//! Below them, [`prestate`] (the in-memory state, [`Carried`], [`StateError`]) depends on no
//! other module, [`view`] on `prestate` alone, [`source`] (the state seam) on `prestate` and
//! `replay`; [`pool`] (the threads kept across passes), [`barrier`], [`schedule`] and
//! [`window`] on none of the stages.
//!
//! Each module imports only those above it in the table or below it in this paragraph:
//! none names a later one, through a re-export or otherwise. `Replay` holds the dump's
//! data alone; what passes over it build once and share (the values earlier blocks wrote,
//! the tables a store pass fills, the `full` lists, the opened tries) lives in a
//! [`PassCache`] the runner is given ([`Parallel::cached`]), filled by `pass` before a
//! window. The sequential loop calls back after each block (`run` computes the client
//! loop's root there), and verification checks the roots a pass hands it.
//!
//! Measuring (warm-up, samples, rounds, statistics) is the `gigagas-bench` crate's, and
//! the grid's vocabulary ([`RunConfig`], [`SchedulerKind`], [`TimedWork`]) is
//! `gigagas-grid`'s, re-exported here: this crate only prepares, runs and verifies.
//!
//! [`Replay::new`] installs no process-wide state: the caller installs the setup-free
//! point-evaluation verifier at start-up (`gigagas_chain::install_kzg_verifier`), and a
//! dump that calls the precompile is refused without it. The feature `test-utils` adds
//! the module `test_utils`, the helpers the tests of every crate that replays dumps share
//! (prepare with the verifier installed, replay and verify a small grid).

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod barrier;
mod batch;
pub mod exec;
pub mod expected;
pub mod local_code;
pub mod pass;
pub mod pool;
pub mod prestate;
pub mod replay;
pub mod root;
pub mod run;
pub mod schedule;
pub mod source;
#[cfg(any(test, feature = "test-utils"))]
pub mod test_utils;
pub mod verify;
pub mod view;
pub mod window;
pub mod work;

pub use exec::{
    ExecError, ExecFailure, ItemExecutor, ItemOutput, SequentialOutputs, SequentialTx, TxResult,
};
pub use expected::{AccountWrites, ExpectedWrites, WriteIndexError};
pub use gigagas_chain::{ChainSpec, Expected};
pub use gigagas_grid::{Claims, RunConfig, SchedulerKind, StateRootPhase, StoreRead, TimedWork};
pub use pass::{IoTimings, PassCache, SetupError};
pub use prestate::{Carried, PreStateDb, SourceError, StateError};
pub use replay::{
    BaseCursor, BlockReadError, Blocks, CarriedCursor, ItemKind, LoadError, LoadedDump,
    PrepareError, RESIDENT_BASES_BYTES, RESIDENT_BLOCKS_BYTES, Replay, ReplayBlock, ResidentLimits,
    RootSetupError, WorkItem,
};
pub use revm::{bytecode::Bytecode, state::AccountInfo};
pub use root::{RootInputs, RootSpan, RootStepKind, RootTimings};
pub use run::{Parallel, PassError, RunOutputs, RunTimings, Runner, Sequential};
pub use schedule::{
    CHUNK_SHARE, Estimate, GasLimit, GasUsed, HEAVY_SHARE, MIN_ITEM_GAS, Ols, Oracle, Scheduler,
    TIME_SPREAD, chunk_bounds, scheduler,
};
pub use source::{
    FullListError, NoSource, OnDemand, OnDemandPass, Prefetched, SourceDb, StateSource,
};
pub use verify::{
    Divergence, DivergenceField, FailedItem, ItemOutcome, Mismatch, ReceiptsRootCheck,
};
pub use view::BalView;
pub use window::{CpuUsage, WindowObserver, observe_windows};
pub use work::tx_receipt;
