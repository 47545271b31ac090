//! The contents of a sweep config file (`bench-configs/*.toml`), as data: what a sweep
//! asks for before it is checked. The bench crate reads and validates it into a plan
//! (`gigagas_bench::config`), and a results file records it (`gigagas_report::SweepResults::config`).

use crate::SchedulerKind;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

fn default_seed() -> u64 {
    crate::DEFAULT_ROUND_SEED
}

fn default_recover() -> Vec<bool> {
    vec![false]
}
fn default_warmup() -> usize {
    crate::DEFAULT_WARMUP
}
fn default_repeats() -> usize {
    crate::DEFAULT_REPEATS
}
fn three() -> usize {
    3
}
fn default_validate() -> Vec<usize> {
    vec![1, 2]
}
fn default_min_sample_ms() -> u64 {
    crate::DEFAULT_MIN_SAMPLE_MS
}

/// The contents of a sweep config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepConfig {
    /// One line shown at the top of `table.md`.
    #[serde(default)]
    pub description: String,
    /// Dump files or folders of dumps (their `*.gigagas` files, sorted), relative to the
    /// config file's folder (or absolute).
    pub dumps: Vec<PathBuf>,
    /// Worker thread counts.
    pub threads: Vec<usize>,
    /// Mega-block sizes (blocks per parallel unit).
    pub batch: Vec<usize>,
    /// Schedulers: `ols`, `gas-used`, `gas-limit`.
    pub schedulers: Vec<SchedulerKind>,
    /// Sender recovery inside the timed work: `[false]` or `[false, true]`.
    #[serde(default = "default_recover")]
    pub recover_senders: Vec<bool>,
    /// Build each transaction's receipt with its logs bloom inside the timed window, on
    /// both paths (the receipts root is then checked against every header from
    /// Byzantium on). Without it neither path builds receipts.
    #[serde(default)]
    pub receipts: bool,
    /// The state-root phases of the replay's points (`off`, `after`, `overlapped`; default
    /// `["off"]`): each point runs once per phase. With a phase on, the sequential baseline
    /// also runs with each block's root after its transactions.
    #[serde(default = "root_off", skip_serializing_if = "is_root_off")]
    pub state_root: Vec<crate::StateRootPhase>,
    /// Seed of the order in which each measured round runs the points (recorded, so a
    /// run's order can be reproduced).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Verified but unreported runs before the measured ones, per grid point (default
    /// [`crate::DEFAULT_WARMUP`], as `--warmup`).
    #[serde(default = "default_warmup")]
    pub warmup: usize,
    /// Measured runs per grid point (the table shows the median and the range; default
    /// [`crate::DEFAULT_REPEATS`], as `--repeats`).
    #[serde(default = "default_repeats")]
    pub repeats: usize,
    /// Also run the sequential baseline (one revm `State`, no access list) per dump and
    /// sender-recovery setting; parallel rows then show their speedup over it (default
    /// true, as `gigagas run` without `--no-baseline`).
    #[serde(default = "yes")]
    pub sequential: bool,
    /// Also run every parallel point on all the machine's cores (added to `threads` at run
    /// time, so one config measures "1 thread and all threads" on any machine).
    #[serde(default)]
    pub all_cores: bool,
    /// Minimum timed length of a measured sample, milliseconds: a dump that replays faster
    /// is replayed several times per sample and the figures are divided by the passes.
    #[serde(default = "default_min_sample_ms")]
    pub min_sample_ms: u64,
    /// Run the schedule simulator on each dump.
    #[serde(default)]
    pub simulate: Option<SimulateConfig>,
    /// A state store (`gigagas state build DUMP -o DIR`) to read the pre-state from inside
    /// the timed window, relative to the config file's folder: adds the store points
    /// (`io` × `cache`) beside the in-memory ones. The sweep must name one dump.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<PathBuf>,
    /// One state store per dump, in the order of `dumps` (each entry a dump file, not a
    /// folder), relative to the config file's folder: each dump's store points read its own
    /// store (dumps too different to share one, such as blocks of different sizes). Not with
    /// `state`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stores: Vec<PathBuf>,
    /// How store points read (`on-demand`, `prefetch`, `pipelined`; default all three).
    /// The replay prefetches (before each batch, or pipelined); the sequential baseline has
    /// no access list and reads on demand whatever is named.
    #[serde(default = "all_io", skip_serializing_if = "Vec::is_empty")]
    pub io: Vec<crate::IoMode>,
    /// The page cache at the start of each store pass (`warm`, `cold`; default both).
    #[serde(default = "all_cache", skip_serializing_if = "Vec::is_empty")]
    pub cache: Vec<crate::CacheState>,
    /// What the access list carries for the replay's prefetching store points (`full`,
    /// `keys`, `writes`; default `keys`, EIP-7928 as specified): each `prefetch` and
    /// `pipelined` point runs once per design; `on-demand` reads without a list.
    #[serde(default = "keys_only")]
    pub bal_design: Vec<crate::BalDesign>,
    /// Readers of a prefetch (threads, each with its own read transaction); default
    /// [`crate::DEFAULT_IO_THREADS`].
    #[serde(default = "default_io_threads")]
    pub io_threads: usize,
    /// With a store, also run the in-memory points (default true).
    #[serde(default = "yes")]
    pub memory: bool,
}

fn all_io() -> Vec<crate::IoMode> {
    crate::IoMode::ALL.to_vec()
}
fn all_cache() -> Vec<crate::CacheState> {
    crate::CacheState::ALL.to_vec()
}
fn root_off() -> Vec<crate::StateRootPhase> {
    vec![crate::StateRootPhase::Off]
}
fn is_root_off(phases: &Vec<crate::StateRootPhase>) -> bool {
    phases == &root_off()
}
fn keys_only() -> Vec<crate::BalDesign> {
    vec![crate::BalDesign::Keys]
}
fn default_io_threads() -> usize {
    crate::DEFAULT_IO_THREADS
}
fn yes() -> bool {
    true
}

/// The `[simulate]` section: projected throughput on virtual workers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulateConfig {
    /// Virtual worker counts to project.
    pub threads: Vec<usize>,
    /// Mega-block sizes to project.
    pub batch: Vec<usize>,
    /// Schedulers to project.
    pub schedulers: Vec<SchedulerKind>,
    /// One-thread runs whose per-item median times feed the model.
    #[serde(default = "three")]
    pub profile_repeats: usize,
    /// Thread counts at which predictions are checked against measured runs (every
    /// simulated batch × scheduler; interleaved with the profiling runs). Empty: no
    /// validation.
    #[serde(default = "default_validate")]
    pub validate_threads: Vec<usize>,
    /// How much longer every item takes above one thread than in the one-thread profile,
    /// one factor for every projection above one thread. Default: measured per thread count
    /// in the validation runs (the report crate's `SlowdownCurve`).
    #[serde(default)]
    pub item_slowdown: Option<f64>,
}
