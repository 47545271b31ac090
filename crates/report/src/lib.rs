//! The results model and its renderers: what `results.json` holds, the tables, CSV files
//! and SVG plots drawn from it, `gigagas compare`, and results folders.
//!
//! This crate runs nothing: it depends on no executor and no EVM (`cargo tree -p
//! gigagas-report` shows no revm), so `gigagas report` and `gigagas compare` read and
//! render results without compiling one. The `gigagas-bench` crate measures and fills
//! [`SweepResults`].
//!
//! Words: a *batch* is always a mega-block, consecutive blocks replayed as one parallel
//! unit, and `batch` (config key, `--batch`, [`gigagas_grid::Point::batch`]) is its size in blocks;
//! *batches* are how many of them a dump makes. A *pass* replays a dump once, a *sample*
//! is one or more passes timed together (at least `min_sample_ms`), a *repeat* is one
//! measured sample.
//!
//! - [`results`]: the results model (serde), stored as `results.json`.
//! - [`table`] and [`plot`]: the terminal table, `table.md`, the CSV files and SVG plots,
//!   rendered from results (one machine, or several merged); [`table`] holds one file per
//!   output format.
//! - [`folder`]: writes `results/<name>/<YYYY-MM-DD>-<commit>/` atomically and re-renders
//!   existing folders.
//! - [`readme`]: the README's generated figures, between markers, rendered from the
//!   newest folder of each sweep they name.
//! - [`latency`]: per-block latency: mean, P50 (with bootstrap intervals over samples),
//!   P90, P99 and the slowest block of the rows that keep their batches.
//! - [`ab`]: an A/B of two builds, their rounds paired point by point (`gigagas compare --against`).
//! - [`stats`]: per-pass figures, their median over repeats, intervals and paired ratios.
//! - [`simulation`]: the schedule simulator's projections and validations as recorded
//!   (the model's own types, from `gigagas-sim`).
//! - [`sim_results`]: what `gigagas simulate` found, as its JSON and its results folder
//!   (`simulation.json`, `table.md`).
//! - [`timeline`]: the longest batch of a parallel pass, workers × time, drawn as SVG.
//! - [`provenance`]: command line, build, peak RSS and load of the measuring run.
//! - [`output`]: the rules of every write: outputs never alias inputs, locations checked
//!   before any work, every file written atomically, input files read bounded.
//! - [`machine`]: CPU, cores, memory, OS, rustc and commit of the measuring machine.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod ab;
pub mod compare;
pub mod error;
pub mod folder;
pub mod latency;
pub mod machine;
pub mod output;
pub mod plot;
pub mod provenance;
pub mod readme;
pub mod results;
pub use gigagas_sim::report as simulation;
pub mod sim_results;
pub mod stats;
pub mod table;
pub mod timeline;

pub use error::{OutputProblem, ReportError};
pub use folder::{render_dir, write_results_dir};
pub use machine::MachineInfo;
pub use results::{
    DumpFailure, DumpRecord, DumpSkip, ResultRow, SuiteTotal, SweepResults, suite_totals,
};
pub use sim_results::SimulationResults;
pub use simulation::{Projection, SimulationReport, Validation};
pub use stats::{CONFIDENCE, Interval, Metrics, Summary, TxTimes, median_interval, paired_ratios};
