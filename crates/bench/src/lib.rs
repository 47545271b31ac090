//! Measuring gigagas replays.
//!
//! The executor prepares, runs and verifies one pass; this crate decides how often and in
//! what order passes run, and turns their timings into the figures of the results model
//! (`gigagas-report`).
//!
//! Words: a *pass* replays a dump once, a *sample* is one or more passes timed together (at
//! least `min_sample_ms`), a *repeat* is one measured sample; a *batch* is a mega-block.
//!
//! - [`bench`](mod@bench): one pass of a [`Point`] ([`bench_pass`]), warm-up and
//!   interleaved rounds of measured samples ([`bench_interleaved`]), the round order
//!   ([`round_order`]) and the figures of a pass ([`metrics_of`]).
//! - [`config`]: a sweep config file (`bench-configs/*.toml`) read and checked ([`load`]).
//! - [`plan`]: a [`Plan`] is a grid checked once (non-zero counts, non-empty lists, the
//!   stated limits such as [`MAX_THREADS`]) over its [`SuiteDump`]s, what a sweep config
//!   and `gigagas run`'s flags both convert into and what [`run_grid`] and the simulator
//!   take.
//! - [`progress`]: the [`Progress`] of a run and the work units it is counted in.
//! - [`sweep`]: [`run_grid`] (behind both `gigagas run` and [`run_sweep`]) loads every dump
//!   of a suite, runs every grid point on it, every pass verified, and collects a
//!   [`gigagas_report::SweepResults`].
//! - [`simulate`]: per-item times from a one-thread run, list-scheduled onto N virtual
//!   workers in each scheduler's order, validated against measured runs.
//! - [`io`]: passes that read their state from a store on disk, warm or cold (checked),
//!   with what each read, beside the device's own random-read rate.
//! - [`profile`]: an in-process CPU profile of a point's timed windows, a flamegraph and
//!   its folded stacks ([`profile_point`]; `--cpu-profile`), needing neither `perf` nor root.
//! - [`trace`] and [`timeline`]: one pass per parallel point as Chrome trace events, and
//!   the longest batch of the widest point as a [`gigagas_report::timeline::Timeline`].
//! - [`blocks`]: a pass batch by batch (read, execute, root, end to end) and the keys each
//!   block updates, for the rows of store and root points (issue 45).
//! - [`error`]: the errors of one pass, [`PassError`] and the store's [`IoError`] it may
//!   hold; it imports no module.
//! - [`fault`]: why a dump yields no figures ([`DumpFault`]) and why a sweep, a run or a
//!   simulation failed ([`BenchError`]).
//!
//! Imports point one way: `config` → `plan` → `progress`; `io` → `error`; `blocks` imports
//! no module; `bench` → `error`, `io`, `blocks`; `simulate` → `plan`, `bench`; `profile` →
//! `error`, `io`, `bench`; `fault` → `config`, `error`, `simulate`, `profile`; `sweep` →
//! `config`, `fault`, `plan`, `progress`, `bench`, `blocks`, `io`, `simulate`, `profile`,
//! `trace`, `timeline`; no module imports `sweep`.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod bench;
pub mod blocks;
pub mod config;
pub mod error;
pub mod fault;
pub mod io;
pub mod plan;
pub mod profile;
pub mod progress;
pub mod simulate;
pub mod sweep;
pub mod timeline;
pub mod trace;

pub use bench::{Sampled, bench_interleaved, bench_pass, metrics_of, round_order};
pub use config::{ConfigError, Sweep, load};
pub use error::{IoError, PassError};
pub use fault::{BenchError, DumpFault};
pub use gigagas_executor::pool::set_pinning;
pub use gigagas_grid::{
    Point, Repetition, RunConfig, SchedulerKind, SimulateConfig, SweepConfig, TimedWork,
};
pub use io::StoreContext;
pub use plan::{
    CpuProfilePlan, MAX_MIN_SAMPLE_MS, MAX_REPEATS, MAX_THREADS, MAX_VIRTUAL_WORKERS, MAX_WARMUP,
    NonEmpty, Plan, PlanError, SimulatePlan, StoreDirs, StorePlanError, StoreSetting, SuiteDump,
};
pub use profile::{CpuProfile, ProfileError, ProfileFiles, profile_point, profile_stem};
pub use progress::{LOAD_UNITS, Progress};
pub use simulate::{ItemProfile, NotMeasured};
pub use sweep::{SweepOptions, run_grid, run_sweep};
pub use timeline::timeline_of;
