//! Benchmark sweeps: configs, results folders, tables, plots and a schedule simulator.
//!
//! Words: a *batch* is always a mega-block, consecutive blocks replayed as one parallel
//! unit, and `batch` (config key, `--batch`, [`ResultRow::batch`]) is its size in blocks;
//! *batches* are how many of them a dump makes. A *pass* replays a dump once, a *sample*
//! is one or more passes timed together (at least `min_sample_ms`), a *repeat* is one
//! measured sample.
//!
//! - [`config`]: a sweep is a TOML file (`bench-configs/*.toml`) naming dumps and the grid
//!   (threads × batch × scheduler × sender recovery), repetitions, an optional sequential
//!   baseline and an optional simulation. [`SweepConfig::load`] rejects a bad file with one
//!   error naming the file and the key.
//! - [`plan`]: a [`Plan`] is a grid checked once (non-zero counts, non-empty lists, stated
//!   limits), what a sweep config and `gigagas run`'s flags both convert into and what
//!   [`run_grid`] and the simulator take.
//! - [`sweep`]: [`run_grid`] (behind both `gigagas run` and [`run_sweep`]) loads every dump
//!   of a suite in parallel, runs every grid point through the executor's public benchmark
//!   API ([`gigagas_executor::Replay::bench_parallel`] and
//!   [`gigagas_executor::Replay::bench_sequential`]), every pass verified, and collects a
//!   [`SweepResults`]: a row per dump and grid point, a suite total per grid point, and a
//!   failure per dump that did not load or verify.
//! - [`results`]: the results model (serde), stored as `results.json`.
//! - [`table`] and [`plot`]: `table.md`, `results.csv` and SVG plots, rendered from results
//!   (one machine, or several merged).
//! - [`folder`]: writes `results/<name>/<YYYY-MM-DD>-<commit>/` atomically and re-renders
//!   existing folders.
//! - [`simulate`]: per-item times from a one-thread run, list-scheduled onto N virtual
//!   workers in each scheduler's order, validated against measured runs.
//! - [`output`]: the rules of every write: outputs never alias inputs, locations checked
//!   before any work, every file written atomically, input files read bounded.
//! - [`machine`]: CPU, cores, memory, OS, rustc and commit of the measuring machine.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod compare;
pub mod config;
pub mod error;
pub mod folder;
pub mod machine;
pub mod output;
pub mod plan;
pub mod plot;
pub mod provenance;
pub mod results;
pub mod simulate;
pub mod sweep;
pub mod table;
pub mod timeline;
pub mod trace;

pub use config::{ConfigError, SimulateConfig, Sweep, SweepConfig};
pub use error::{DumpFault, NotMeasured, OutputProblem, ReportError};
pub use folder::{render_dir, write_results_dir};
pub use machine::MachineInfo;
pub use plan::{NonEmpty, Plan, PlanError, SimulatePlan};
pub use results::{
    DumpFailure, DumpRecord, Mode, ResultRow, SuiteTotal, SweepResults, suite_totals,
};
pub use simulate::{ItemProfile, Projection, SimulationReport, Validation};
pub use sweep::{Progress, SuiteDump, SweepOptions, run_grid, run_sweep};
