//! The model of a gigagas pass, with no EVM: one-thread profiles in, projections onto N
//! workers, C cores and R readers out. The bench crate records the profiles and measures
//! the passes a projection is validated against; this crate only computes.
//!
//! | Module | What it models |
//! |---|---|
//! | [`report`] | The execution model's results as recorded in results.json: projections, validations, the slowdown curve and the item cost model ([`ItemCost`]). |
//! | [`execution`] | Execution alone: each batch's items in the scheduler's order and chunks (the executor's own rule, [`gigagas_grid::schedule`]) list-scheduled onto N workers ([`simulate`]). |
//! | [`phases`] | A pass end to end: each batch's read, its items and its state-root units on N workers, C cores and R readers, a device curve capping the reads ([`project_phases`]). |
//! | [`whole_block`] | A store point's one-thread record turned into a phase profile, projected and set beside measured passes ([`whole_block_report`]). |
//!
//! Everything here is a pure function of its inputs: the fixture test
//! (`tests/fixture.rs`) holds the projections of a recorded profile byte for byte.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod execution;
pub mod persist;
pub mod phases;
pub mod report;
pub mod whole_block;

pub use execution::{
    ASSUMPTIONS, BatchCut, DumpId, ItemProfile, Measure, Measured, MeasuredPoint, NotMeasured,
    Workload, simulate,
};
pub use phases::{
    CurveError, CurveFileError, DeviceCurve, PHASE_ASSUMPTIONS, PhaseConfig, PhaseProfile,
    PhaseProfileError, PhaseProjection, ReadMode, project_phases,
};
pub use report::{ItemCost, Projection, SimulationReport, SlowdownCurve, Validation};
pub use whole_block::{
    PhaseRecord, PhaseTimes, PointError, PointMeasurement, RootUnitCounts, Slowdown, StoreReaders,
    WholeBlockPoint, WholeBlockReport, whole_block_report,
};
