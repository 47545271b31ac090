//! One validated plan for a grid: what `gigagas run`'s flags and a sweep config's TOML
//! both convert into, checked once, and what everything downstream ([`crate::run_grid`],
//! [`crate::simulate::simulate_dump`]) takes.
//!
//! Flags and TOML are the raw inputs (ripgrep's low-level arguments); a [`Plan`] is the
//! resolved one (its high-level arguments). Every count that must not be zero is a
//! [`NonZeroUsize`], every list that must not be empty a [`NonEmpty`], so code that holds a
//! plan never checks again. The checks are the functions of this module; each returns a
//! [`PlanError`] that says what is wrong without naming the setting, so the command line
//! prefixes its flag (`--threads: 0 is not a thread count`) and a sweep config its file and
//! key (`x.toml: key `threads`: 0 is not a thread count`) around the same message.

use crate::progress::{LOAD_UNITS, run_units};
use gigagas_executor::Replay;
use gigagas_grid::{
    Backlog, BalDesign, CacheState, Claims, Dimension, DumpEntry, IoMode, Persist, Point,
    Repetition, RunConfig, SchedulerKind, SimulateConfig, StateRead, StateRootPhase, StoreRead,
    SweepConfig, TableLayout, TimedWork,
};
use std::{num::NonZeroUsize, ops::Deref, path::PathBuf};

/// The most worker threads a grid point may ask for (`threads`, `--threads`,
/// `simulate.validate_threads`): more is an error naming this limit, never a thread that
/// fails to spawn.
pub const MAX_THREADS: usize = 1024;

/// The most virtual workers the schedule simulator projects onto (`simulate.threads`,
/// `--threads` of `gigagas simulate`); they are list-scheduled, not spawned.
pub const MAX_VIRTUAL_WORKERS: usize = 65_536;

/// The longest minimum sample time, milliseconds (`min_sample_ms`, `--min-sample-ms`).
pub const MAX_MIN_SAMPLE_MS: u64 = 60_000;

/// The most warm-up passes per point (`warmup`, `--warmup`).
pub const MAX_WARMUP: usize = 1_000;

/// The most measured samples per point (`repeats`, `--repeats`) and profiling runs
/// (`simulate.profile_repeats`, `--profile-repeats`).
pub const MAX_REPEATS: usize = 10_000;

/// A dump of a suite: the file, how the config or command line names it, and the label
/// the config gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteDump {
    /// The file to read.
    pub path: PathBuf,
    /// The path as the config or command line names it (a folder entry joined with the
    /// file's name): the dump's `path` in the results.
    pub named: String,
    /// The label the config gives the dump (`{ path = ..., label = ... }`), shown in place
    /// of its name in tables, CSV files and plots.
    pub label: Option<String>,
}

/// The persistence modes a plan runs (`--persist`, a config's `persist`): refused where a
/// mode that writes is asked for without a store (`has_store`) or without a root phase on.
pub fn persist_settings(
    persist: Vec<Persist>,
    has_store: bool,
    state_root: &[StateRootPhase],
) -> Result<NonEmpty<Persist>, PlanError> {
    let persist = NonEmpty::new(persist)?;
    if persist.iter().any(Persist::is_on) && (!has_store || state_root.iter().all(|r| r.is_off())) {
        return Err(PlanError::PersistNeedsStoreAndRoot);
    }
    Ok(persist)
}

/// Why a setting cannot make a plan. The message says what is wrong with the value; the
/// caller names the setting (a flag, or a config file and key).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// A list that must name at least one value is empty.
    #[error("empty list: the grid would have no points")]
    Empty,
    /// A thread count of 0.
    #[error("0 is not a thread count")]
    ZeroThreads,
    /// Persistence asked for without a store or without a root phase on.
    #[error(
        "persistence commits each block into the state store after its root: it needs a store (--state, `state`) and a state-root phase on (after or overlapped)"
    )]
    PersistNeedsStoreAndRoot,
    /// The state store named is not there.
    #[error("no state store at {} (build it: gigagas state build DUMP -o DIR [--pad-to 8GiB])", dir.display())]
    NoStore {
        /// The folder, resolved.
        dir: PathBuf,
    },
    /// A state store holds one dump's pre-state: a run with a store names one dump.
    #[error(
        "a state store holds one dump's pre-state, and {dumps} dumps are named (name the one the store was built from; a sweep config can name one store per dump with `stores`)"
    )]
    StoreNeedsOneDump {
        /// The dumps named.
        dumps: usize,
    },
    /// One store per dump, and the counts differ.
    #[error(
        "{stores} store(s) for {dumps} dump(s): name one store per entry of `dumps`, in the same order"
    )]
    StoresPerDump {
        /// The stores named.
        stores: usize,
        /// The dumps named.
        dumps: usize,
    },
    /// Both one store for the sweep and one store per dump.
    #[error("`state` names one store for one dump and `stores` one per dump: give one of the two")]
    StateAndStores,
    /// One store per dump, and an entry of `dumps` is a folder (several dumps).
    #[error(
        "{} is a folder of dumps: with `stores`, every entry of `dumps` names one dump file (its store beside it in `stores`)",
        entry.display()
    )]
    StoresWithFolder {
        /// The entry of `dumps`, as the config writes it.
        entry: PathBuf,
    },
    /// A batch size of 0.
    #[error("0 is not a batch size")]
    ZeroBatch,
    /// A scheduler of one's own named in a file: its order is in the program that defines
    /// it, which runs it (`gigagas_grid::SchedulerKind::own`).
    #[error("`{0}` is a scheduler of one's own: it runs from the program that defines it")]
    NameOnly(SchedulerKind),
    /// A dump's label that is empty, or holds a control character.
    #[error("label {label:?}: a label is a non-empty line of text")]
    BadLabel {
        /// The label given.
        label: String,
    },
    /// Two dumps with the same label.
    #[error("label {label:?} is given to two dumps: each dump's label names it alone")]
    RepeatedLabel {
        /// The label given twice.
        label: String,
    },
    /// A dimension named twice in the layout.
    #[error("dimension `{0}` is named twice: a dimension makes rows or columns, once")]
    RepeatedDimension(Dimension),
    /// No measured samples.
    #[error("at least one measured run is needed")]
    ZeroRepeats,
    /// No profiling runs for the simulator.
    #[error("at least one profiling run is needed")]
    ZeroProfileRepeats,
    /// More warm-up passes per point than [`MAX_WARMUP`].
    #[error("{warmup} warm-up passes is over the limit of {MAX_WARMUP} per point")]
    TooManyWarmups {
        /// The count given.
        warmup: usize,
    },
    /// More measured (or profiling) runs per point than [`MAX_REPEATS`].
    #[error("{repeats} runs is over the limit of {MAX_REPEATS} per point")]
    TooManyRepeats {
        /// The count given.
        repeats: usize,
    },
    /// A thread count over the stated limit ([`MAX_THREADS`], or the simulator's
    /// [`MAX_VIRTUAL_WORKERS`]). The message names the limit's value, never the constant:
    /// the caller names the flag or key.
    #[error("{threads} threads is over the limit of {max}")]
    TooManyThreads {
        /// The count given.
        threads: usize,
        /// The limit.
        max: usize,
    },
    /// A minimum sample time over [`MAX_MIN_SAMPLE_MS`].
    #[error("{ms} ms is over the limit of {MAX_MIN_SAMPLE_MS} ms per sample")]
    SampleTooLong {
        /// The time given, milliseconds.
        ms: u64,
    },
    /// An item slowdown that is not a positive finite factor.
    #[error("expected a positive factor (e.g. 1.05), or leave it out to use the measured one")]
    ItemSlowdown {
        /// The factor given.
        factor: f64,
    },
}

/// A list with at least one element. Dereferences to the slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonEmpty<T>(Vec<T>);

impl<T> NonEmpty<T> {
    /// `values`, or [`PlanError::Empty`] if there are none.
    pub fn new(values: Vec<T>) -> Result<Self, PlanError> {
        if values.is_empty() {
            Err(PlanError::Empty)
        } else {
            Ok(Self(values))
        }
    }

    /// The first element (there always is one).
    pub fn first(&self) -> &T {
        &self.0[0]
    }
}

impl<T> Deref for NonEmpty<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

/// Thread counts: at least one, none 0, none over `max` ([`MAX_THREADS`] for real workers,
/// [`MAX_VIRTUAL_WORKERS`] for the simulator's virtual ones).
pub fn thread_counts(values: &[usize], max: usize) -> Result<NonEmpty<NonZeroUsize>, PlanError> {
    let counts = NonEmpty::new(non_zero(values, PlanError::ZeroThreads)?)?;
    check_limit(&counts, max)?;
    Ok(counts)
}

/// Thread counts that may be empty (the simulator's validation points: none means no
/// validation); otherwise as [`thread_counts`].
pub fn thread_counts_or_none(values: &[usize], max: usize) -> Result<Vec<NonZeroUsize>, PlanError> {
    let counts = non_zero(values, PlanError::ZeroThreads)?;
    check_limit(&counts, max)?;
    Ok(counts)
}

/// The labels the config gives its dumps: each a non-empty line of text, none given to
/// two dumps.
pub fn dump_labels(dumps: &[SuiteDump]) -> Result<(), PlanError> {
    let mut seen: Vec<&str> = Vec::new();
    for label in dumps.iter().filter_map(|d| d.label.as_deref()) {
        if label.trim().is_empty() || label.chars().any(char::is_control) {
            return Err(PlanError::BadLabel {
                label: label.into(),
            });
        }
        if seen.contains(&label) {
            return Err(PlanError::RepeatedLabel {
                label: label.into(),
            });
        }
        seen.push(label);
    }
    Ok(())
}

/// Mega-block sizes: at least one, none 0.
pub fn batch_sizes(values: &[usize]) -> Result<NonEmpty<NonZeroUsize>, PlanError> {
    NonEmpty::new(non_zero(values, PlanError::ZeroBatch)?)
}

/// Schedulers a config names: at least one, each with its order in this program (a
/// scheduler of one's own named in a file has its name alone).
pub fn schedulers(values: &[SchedulerKind]) -> Result<NonEmpty<SchedulerKind>, PlanError> {
    if let Some(&own) = values.iter().find(|k| k.ordering().is_none()) {
        return Err(PlanError::NameOnly(own));
    }
    NonEmpty::new(values.to_vec())
}

/// Measured samples per point: at least one, at most [`MAX_REPEATS`].
pub fn repeats(value: usize) -> Result<NonZeroUsize, PlanError> {
    at_most_repeats(NonZeroUsize::new(value).ok_or(PlanError::ZeroRepeats)?)
}

/// The simulator's one-thread profiling runs: at least one, at most [`MAX_REPEATS`].
pub fn profile_repeats(value: usize) -> Result<NonZeroUsize, PlanError> {
    at_most_repeats(NonZeroUsize::new(value).ok_or(PlanError::ZeroProfileRepeats)?)
}

fn at_most_repeats(value: NonZeroUsize) -> Result<NonZeroUsize, PlanError> {
    if value.get() > MAX_REPEATS {
        Err(PlanError::TooManyRepeats {
            repeats: value.get(),
        })
    } else {
        Ok(value)
    }
}

/// Verified, unreported warm-up passes per point: 0 up to [`MAX_WARMUP`].
pub fn warmup(value: usize) -> Result<usize, PlanError> {
    if value > MAX_WARMUP {
        Err(PlanError::TooManyWarmups { warmup: value })
    } else {
        Ok(value)
    }
}

fn non_zero(values: &[usize], zero: PlanError) -> Result<Vec<NonZeroUsize>, PlanError> {
    values
        .iter()
        .map(|&v| NonZeroUsize::new(v).ok_or_else(|| zero.clone()))
        .collect()
}

fn check_limit(counts: &[NonZeroUsize], max: usize) -> Result<(), PlanError> {
    match counts.iter().find(|t| t.get() > max) {
        Some(t) => Err(PlanError::TooManyThreads {
            threads: t.get(),
            max,
        }),
        None => Ok(()),
    }
}

/// The minimum timed length of a measured sample: at most [`MAX_MIN_SAMPLE_MS`]; 0 is one
/// pass per sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinSample(u64);

impl MinSample {
    /// `ms` milliseconds, or [`PlanError::SampleTooLong`].
    pub fn from_ms(ms: u64) -> Result<Self, PlanError> {
        if ms > MAX_MIN_SAMPLE_MS {
            Err(PlanError::SampleTooLong { ms })
        } else {
            Ok(Self(ms))
        }
    }

    /// Milliseconds.
    pub fn ms(self) -> u64 {
        self.0
    }

    /// Nanoseconds, as [`Repetition::min_sample_ns`] takes them.
    pub fn ns(self) -> u64 {
        self.0 * 1_000_000
    }
}

/// How much longer every item takes above one thread than in the one-thread profile: a
/// positive finite factor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ItemSlowdown(f64);

impl ItemSlowdown {
    /// `factor`, or [`PlanError::ItemSlowdown`] unless it is positive and finite.
    pub fn new(factor: f64) -> Result<Self, PlanError> {
        if factor.is_finite() && factor > 0.0 {
            Ok(Self(factor))
        } else {
            Err(PlanError::ItemSlowdown { factor })
        }
    }

    /// The factor.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// The schedule simulator's part of a plan: what to project and where to check it.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatePlan {
    /// Virtual worker counts to project.
    pub threads: NonEmpty<NonZeroUsize>,
    /// Mega-block sizes to project (and to validate).
    pub batch: NonEmpty<NonZeroUsize>,
    /// Schedulers to project (and to validate).
    pub schedulers: NonEmpty<SchedulerKind>,
    /// One-thread runs whose per-item median times feed the model.
    pub profile_repeats: NonZeroUsize,
    /// Real thread counts at which predictions are checked against measured runs (every
    /// batch × scheduler); empty: no validation.
    pub validate_threads: Vec<NonZeroUsize>,
    /// A configured item slowdown; `None`: measured in the validation runs.
    pub item_slowdown: Option<ItemSlowdown>,
}

/// `gigagas simulate`'s flags, as given (empty lists: the defaults).
#[derive(Debug, Clone, Copy)]
pub struct SimulateFlags<'a> {
    /// `--threads`: virtual worker counts.
    pub threads: &'a [usize],
    /// `--batch` [default: 1, 50; the whole block: one size, 1].
    pub batch: &'a [usize],
    /// `--scheduler`, expanded [default: the three real ones and the oracle; the whole
    /// block: ols].
    pub schedulers: &'a [SchedulerKind],
    /// `--profile-repeats`.
    pub profile_repeats: usize,
    /// `--validate`; `None` under `--no-validate`.
    pub validate: Option<&'a [usize]>,
    /// `--item-slowdown`.
    pub item_slowdown: Option<f64>,
    /// Whether the whole block is simulated (`--state`).
    pub whole_block: bool,
}

/// A `gigagas simulate` flag that cannot make a plan: `--flag: why`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{flag}: {problem}")]
pub struct FlagError {
    /// The flag.
    pub flag: &'static str,
    /// What is wrong with its value.
    pub problem: String,
}

impl FlagError {
    /// `flag`'s value refused as `problem` says.
    pub fn new(flag: &'static str, problem: impl std::fmt::Display) -> Self {
        Self {
            flag,
            problem: problem.to_string(),
        }
    }

    /// Turns a [`PlanError`] of `flag`'s value into this error.
    pub fn of(flag: &'static str) -> impl Fn(PlanError) -> Self {
        move |e| Self::new(flag, e)
    }
}

impl SimulatePlan {
    /// The validation runs' repetition of `gigagas simulate`'s `--warmup` and `--repeats`:
    /// every pass verified, one pass a sample.
    pub fn repetition(warmup: usize, runs: usize) -> Result<Repetition, FlagError> {
        Ok(Repetition {
            warmup: self::warmup(warmup).map_err(FlagError::of("--warmup"))?,
            repeats: repeats(runs).map_err(FlagError::of("--repeats"))?.get(),
            verify: true,
            min_sample_ns: 0,
        })
    }

    /// The plan of `gigagas simulate`'s flags, every value checked as a sweep config's
    /// `[simulate]` keys are; the whole block takes one batch size and one scheduler, not
    /// the oracle.
    pub fn from_flags(f: SimulateFlags<'_>) -> Result<Self, FlagError> {
        fn at<T>(flag: &'static str, r: Result<T, PlanError>) -> Result<T, FlagError> {
            r.map_err(FlagError::of(flag))
        }
        let refuse = FlagError::new;
        let batch = match (f.batch, f.whole_block) {
            ([], false) => vec![1, 50],
            ([], true) => vec![1],
            ([_], _) | (_, false) => f.batch.to_vec(),
            (_, true) => {
                return Err(refuse(
                    "--batch",
                    "the whole-block simulator (--state) takes one size",
                ));
            }
        };
        let schedulers = match (f.schedulers, f.whole_block) {
            ([], false) => [&SchedulerKind::ALL[..], &[SchedulerKind::Oracle]].concat(),
            ([], true) => vec![SchedulerKind::Ols],
            (given, _) => given.to_vec(),
        };
        if f.whole_block && (schedulers.len() != 1 || schedulers[0] == SchedulerKind::Oracle) {
            return Err(refuse(
                "--scheduler",
                "the whole-block simulator (--state) takes one scheduler, not the oracle",
            ));
        }
        let validate = match f.validate {
            None => Vec::new(),
            Some(v) => at("--validate", thread_counts_or_none(v, MAX_THREADS))?,
        };
        let threads = thread_counts(f.threads, MAX_VIRTUAL_WORKERS)
            .map_err(|e| FlagError::new("--threads", format!("{e} (virtual workers)")))?;
        Ok(SimulatePlan {
            threads,
            batch: at("--batch", batch_sizes(&batch))?,
            schedulers: at("--scheduler", NonEmpty::new(schedulers))?,
            profile_repeats: at("--profile-repeats", profile_repeats(f.profile_repeats))?,
            validate_threads: validate,
            item_slowdown: at(
                "--item-slowdown",
                f.item_slowdown.map(ItemSlowdown::new).transpose(),
            )?,
        })
    }

    /// The validation points: every `validate_threads × batch × schedulers`, in that
    /// order ([`SimulateConfig::validation_points`]).
    pub fn validation_points(&self) -> Vec<RunConfig> {
        self.record().validation_points()
    }

    /// The `[simulate]` section that records this part of a plan.
    pub fn record(&self) -> SimulateConfig {
        SimulateConfig {
            threads: plain(&self.threads),
            batch: plain(&self.batch),
            schedulers: self.schedulers.to_vec(),
            profile_repeats: self.profile_repeats.get(),
            validate_threads: plain(&self.validate_threads),
            item_slowdown: self.item_slowdown.map(ItemSlowdown::get),
        }
    }
}

/// Counts as plain numbers (for records and messages).
pub fn plain(counts: &[NonZeroUsize]) -> Vec<usize> {
    counts.iter().map(|c| c.get()).collect()
}

/// Everything a grid run needs, checked: the dumps, the grid (threads × batch × scheduler
/// × sender recovery), the baselines, the repetitions and the simulator. Built from a
/// sweep config ([`crate::config::load`]) or from `gigagas run`'s flags; recorded in the
/// results as a [`SweepConfig`] ([`Plan::record`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// One line shown at the top of `table.md`.
    pub description: String,
    /// The dumps as the config or command line names them (files or folders, with the
    /// labels the config gives), recorded in the results.
    pub named_dumps: Vec<DumpEntry>,
    /// The dump files to run, folders expanded, each with its name in the results.
    pub dumps: NonEmpty<SuiteDump>,
    /// Worker thread counts of the parallel points.
    pub threads: NonEmpty<NonZeroUsize>,
    /// Also run every parallel point on all the machine's cores.
    pub all_cores: bool,
    /// Mega-block sizes (blocks per parallel unit).
    pub batch: NonEmpty<NonZeroUsize>,
    /// Schedulers of the parallel points.
    pub schedulers: NonEmpty<SchedulerKind>,
    /// How the parallel points' workers claim items: in chunks (every published figure),
    /// or one item per claim, the reference (`gigagas run --one-item-claims`, hidden).
    pub claims: Claims,
    /// Sender recovery inside the timed work, per point: `[false]` or `[false, true]`.
    pub recover_senders: NonEmpty<bool>,
    /// Build each transaction's receipt with its logs bloom inside the timed window, on
    /// both paths.
    pub receipts: bool,
    /// The state-root phases of the replay's points ([`StateRootPhase`]): each point runs
    /// once per phase; `[Off]` for every figure published before the root phase.
    pub state_root: NonEmpty<StateRootPhase>,
    /// How the store points with a root commit each block into the store after it
    /// (`--persist`; [`persist_settings`]): any of `none`, `block`, `background`. Points
    /// without a store or a root run once, without.
    pub persist: NonEmpty<Persist>,
    /// The background writer's limits (`--persist background`).
    pub backlog: Backlog,
    /// Run the sequential baseline (one per sender-recovery setting).
    pub baseline: bool,
    /// Run the parallel points (`false`: the baseline only, `gigagas run --sequential`).
    pub parallel: bool,
    /// Verified but unreported passes per point before the measured ones.
    pub warmup: usize,
    /// Measured samples per point (interleaved rounds).
    pub repeats: NonZeroUsize,
    /// Minimum timed length of a measured sample.
    pub min_sample: MinSample,
    /// Seed of the order in which each round runs the points.
    pub seed: u64,
    /// Verify every pass (off only to measure verification's cost).
    pub verify: bool,
    /// After the measured rounds, one more verified pass of every parallel point, traced
    /// into [`gigagas_report::SweepResults::trace`].
    pub trace: bool,
    /// After the measured rounds, an in-process CPU profile of the named points
    /// ([`crate::profile`]).
    pub cpu_profile: Option<CpuProfilePlan>,
    /// Shorten the grid when every block of every dump holds at most one transaction
    /// ([`Plan::collapse_for_single_transactions`]); for defaults the user did not choose.
    pub collapse_single_transaction_blocks: bool,
    /// The schedule simulator on each dump, if asked for.
    pub simulate: Option<SimulatePlan>,
    /// A state store to read the pre-state from, if named: its points beside (or instead
    /// of) the in-memory ones.
    pub state: Option<StorePlan>,
    /// How `table.md` lays the results out (the config's `layout`; default for `gigagas
    /// run`), recorded in the results.
    pub layout: TableLayout,
}

/// One of the settings of a store plan, as `gigagas run`'s flags ([`StoreSetting::flag`])
/// and a sweep config's keys ([`StoreSetting::key`]) name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreSetting {
    /// The store's folder, `--state` / `state`.
    State,
    /// One store per dump, `stores` (a sweep config's only).
    Stores,
    /// The I/O modes, `--io` / `io`.
    Io,
    /// The cache states, `--cache` / `cache`.
    Cache,
    /// The readers of a store pass, `--io-threads` / `io_threads`.
    IoThreads,
    /// What the access list carries, `--bal-design` / `bal_design`.
    BalDesign,
}

impl StoreSetting {
    /// The flag of `gigagas run` that sets it.
    pub const fn flag(self) -> &'static str {
        match self {
            Self::State | Self::Stores => "--state",
            Self::Io => "--io",
            Self::Cache => "--cache",
            Self::IoThreads => "--io-threads",
            Self::BalDesign => "--bal-design",
        }
    }

    /// The sweep config key that sets it.
    pub const fn key(self) -> &'static str {
        match self {
            Self::State => "state",
            Self::Stores => "stores",
            Self::Io => "io",
            Self::Cache => "cache",
            Self::IoThreads => "io_threads",
            Self::BalDesign => "bal_design",
        }
    }
}

/// Why store settings cannot make a plan: the setting at fault, so the caller names its
/// flag or key without guessing it from the problem, and what is wrong with its value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{problem}")]
pub struct StorePlanError {
    /// The setting whose value is refused.
    pub setting: StoreSetting,
    /// What is wrong with it.
    pub problem: PlanError,
}

/// The store points of `dumps` dumps from the stores named by `dirs` (if any) with these
/// settings, checked: one store for one dump, or one store per dump; non-empty lists, at
/// least one I/O thread where `io_threads` gives them (at most [`MAX_THREADS`]). An error
/// names the setting at fault.
pub fn store_plan(
    dirs: Option<StoreDirs>,
    dumps: usize,
    io: &[IoMode],
    cache: &[CacheState],
    designs: &[BalDesign],
    io_threads: Option<usize>,
    memory: bool,
) -> Result<Option<StorePlan>, StorePlanError> {
    let at = |setting| move |problem| StorePlanError { setting, problem };
    let Some(dirs) = dirs else { return Ok(None) };
    match &dirs {
        StoreDirs::One(_) if dumps != 1 => {
            return Err(StorePlanError {
                setting: StoreSetting::State,
                problem: PlanError::StoreNeedsOneDump { dumps },
            });
        }
        StoreDirs::PerDump(stores) if stores.len() != dumps => {
            return Err(StorePlanError {
                setting: StoreSetting::Stores,
                problem: PlanError::StoresPerDump {
                    stores: stores.len(),
                    dumps,
                },
            });
        }
        _ => {}
    }
    let io_threads = io_threads
        .map(|n| thread_counts(&[n], MAX_THREADS).map(|n| *n.first()))
        .transpose()
        .map_err(at(StoreSetting::IoThreads))?;
    Ok(Some(StorePlan {
        dirs,
        io: NonEmpty::new(io.to_vec()).map_err(at(StoreSetting::Io))?,
        cache: NonEmpty::new(cache.to_vec()).map_err(at(StoreSetting::Cache))?,
        designs: NonEmpty::new(designs.to_vec()).map_err(at(StoreSetting::BalDesign))?,
        io_threads,
        memory,
    }))
}

/// The stores of a plan's dumps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreDirs {
    /// One store, for the plan's one dump (`--state`, a sweep config's `state`).
    One(PathBuf),
    /// One store per dump, in the order of the plan's dumps (a sweep config's `stores`):
    /// each dump's pre-state and witness in a store of its own.
    PerDump(NonEmpty<PathBuf>),
}

/// The store points of a plan: its stores, how to read them, and in which cache states.
#[derive(Debug, Clone, PartialEq)]
pub struct StorePlan {
    /// The stores' folders (`gigagas state build`).
    pub dirs: StoreDirs,
    /// I/O modes of the replay's points; the sequential baseline reads `on-demand`
    /// whichever are named (it has no access list to prefetch from).
    pub io: NonEmpty<IoMode>,
    /// Cache states.
    pub cache: NonEmpty<CacheState>,
    /// What the access list carries for the replay's prefetching points (each `prefetch`
    /// and `pipelined` point runs once per design; `on-demand` reads without a list).
    pub designs: NonEmpty<BalDesign>,
    /// Readers of every store pass where given (`--io-threads`); where not, a prefetch
    /// has [`gigagas_grid::DEFAULT_IO_THREADS`] and a read beside execution
    /// [`gigagas_grid::beside_readers`] ([`StorePlan::readers`]).
    pub io_threads: Option<NonZeroUsize>,
    /// Also run the in-memory points.
    pub memory: bool,
}

impl StorePlan {
    /// The readers of a prefetch or pipelined pass (and the queue depth the device is
    /// probed at): [`StorePlan::io_threads`] or [`gigagas_grid::DEFAULT_IO_THREADS`].
    pub fn readers(&self) -> NonZeroUsize {
        self.io_threads.unwrap_or(
            NonZeroUsize::new(gigagas_grid::DEFAULT_IO_THREADS).expect("a non-zero default"),
        )
    }

    /// The store of dump `dump` (its index in the plan's dumps; [`store_plan`] checked that
    /// every dump has one).
    pub fn dir_of(&self, dump: usize) -> &std::path::Path {
        match &self.dirs {
            StoreDirs::One(dir) => dir,
            StoreDirs::PerDump(dirs) => &dirs[dump],
        }
    }

    /// The ways the replay reads from the store: each cache state × I/O mode × design
    /// (on demand once, without a list).
    pub fn replay_reads(&self) -> Vec<StateRead> {
        let mut reads = Vec::new();
        for &cache in self.cache.iter() {
            for &io in self.io.iter() {
                reads.extend(
                    StoreRead::each(io, &self.designs)
                        .into_iter()
                        .map(|read| StateRead::store(read, cache)),
                );
            }
        }
        reads
    }

    /// The ways the sequential baseline reads from the store: on demand, in each cache
    /// state.
    pub fn baseline_reads(&self) -> Vec<StateRead> {
        self.cache
            .iter()
            .map(|&cache| StateRead::on_demand(cache))
            .collect()
    }
}

/// What [`Plan::collapse_for_single_transactions`] needs of a dump: its block count and
/// the most transactions one of its blocks holds (from [`gigagas_dump::inspect_dump`]'s
/// summary, which streams the file, or a prepared replay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DumpShape {
    /// Blocks.
    pub blocks: usize,
    /// The most transactions in one block.
    pub most_transactions: usize,
}

impl DumpShape {
    /// The shape of a prepared replay.
    pub fn of(replay: &Replay) -> Self {
        Self {
            blocks: replay.block_count(),
            most_transactions: (0..replay.block_count())
                .map(|b| replay.tx_count(b))
                .max()
                .unwrap_or(0),
        }
    }

    /// The shape a dump's summary gives.
    pub fn of_summary(summary: &gigagas_dump::DumpSummary) -> Self {
        Self {
            blocks: summary.blocks,
            most_transactions: summary.most_transactions,
        }
    }
}

impl Plan {
    /// Where the in-memory points and the store's read, in run order.
    fn reads(&self, baseline: bool) -> Vec<StateRead> {
        let Some(store) = &self.state else {
            return vec![StateRead::Memory];
        };
        let mut reads = Vec::new();
        if store.memory {
            reads.push(StateRead::Memory);
        }
        reads.extend(if baseline {
            store.baseline_reads()
        } else {
            store.replay_reads()
        });
        reads
    }

    /// The thread counts of the grid on a machine with `cores` cores: the plan's, and
    /// `cores` with [`Plan::all_cores`].
    pub fn thread_counts(&self, cores: NonZeroUsize) -> Vec<NonZeroUsize> {
        let mut threads = self.threads.to_vec();
        if self.all_cores && !threads.contains(&cores) {
            threads.push(cores);
        }
        threads
    }

    /// The parallel points on a machine with `cores` cores, in run order (recover,
    /// threads, batch, scheduler); none without [`Plan::parallel`].
    pub fn points(&self, cores: NonZeroUsize) -> Vec<RunConfig> {
        let mut points = Vec::new();
        if !self.parallel {
            return points;
        }
        for state in self.reads(false) {
            for (&recover_senders, &state_root) in self
                .recover_senders
                .iter()
                .flat_map(|r| self.state_root.iter().map(move |p| (r, p)))
            {
                for persist in self.persists(state, state_root) {
                    for threads in self.thread_counts(cores) {
                        for batch in self.batch.iter() {
                            for &scheduler in self.schedulers.iter() {
                                let work = TimedWork {
                                    recover_senders,
                                    receipts: self.receipts,
                                    state,
                                    state_root,
                                    persist,
                                    backlog: self.backlog_of(persist),
                                };
                                points.push(
                                    RunConfig::new(threads, batch.get(), scheduler)
                                        .with_work(work)
                                        .with_claims(self.claims),
                                );
                            }
                        }
                    }
                }
            }
        }
        points
    }

    /// The persistence modes of the points reading `state` at root phase `state_root`:
    /// the plan's where both are on, else only `none`.
    fn persists(&self, state: StateRead, state_root: StateRootPhase) -> Vec<Persist> {
        if state.is_store() && !state_root.is_off() {
            self.persist.to_vec()
        } else {
            vec![Persist::None]
        }
    }

    /// The backlog of a point persisting as `persist`: the plan's for `background`, the
    /// default (which no point's name shows) for the others.
    fn backlog_of(&self, persist: Persist) -> Backlog {
        if persist == Persist::Background {
            self.backlog
        } else {
            Backlog::default()
        }
    }

    /// Every point a dump runs, in the order of a round's list: the baselines first
    /// ([`Plan::baselines`]), then the replay's grid ([`Plan::points`]) on `cores` cores.
    pub fn all_points(&self, cores: NonZeroUsize) -> Vec<Point> {
        let mut points: Vec<Point> = self
            .baselines()
            .into_iter()
            .map(Point::Sequential)
            .collect();
        points.extend(self.points(cores).into_iter().map(Point::Bal));
        points
    }

    /// The sequential baselines, run first: one per sender-recovery setting, none without
    /// [`Plan::baseline`].
    pub fn baselines(&self) -> Vec<TimedWork> {
        if !self.baseline {
            return Vec::new();
        }
        // With the root phase on, the client loop also computes each block's root, so
        // root rows have a baseline that does the same work.
        let mut phases = Vec::new();
        for &phase in self.state_root.iter() {
            let phase = phase.of_baseline();
            if !phases.contains(&phase) {
                phases.push(phase);
            }
        }
        let mut baselines = Vec::new();
        for state in self.reads(true) {
            for &state_root in &phases {
                for persist in self.persists(state, state_root) {
                    for &recover_senders in self.recover_senders.iter() {
                        baselines.push(TimedWork {
                            recover_senders,
                            receipts: self.receipts,
                            state,
                            state_root,
                            persist,
                            backlog: self.backlog_of(persist),
                        });
                    }
                }
            }
        }
        baselines
    }

    /// Warm-up passes, measured samples, verification and minimum sample time, as the
    /// executor takes them.
    pub fn repetition(&self) -> Repetition {
        Repetition {
            warmup: self.warmup,
            repeats: self.repeats.get(),
            verify: self.verify,
            min_sample_ns: self.min_sample.ns(),
        }
    }

    /// Work units of one dump (see [`crate::Progress`]), loading included.
    pub fn units_per_dump(&self, cores: NonZeroUsize) -> u64 {
        let per_point = (self.warmup + self.repeats.get()) as u64;
        let mut units = LOAD_UNITS + self.baselines().len() as u64 * per_point * 1000;
        units += self
            .points(cores)
            .iter()
            .map(|p| per_point * run_units(p.threads, cores))
            .sum::<u64>();
        if let Some(sim) = &self.simulate {
            units += (self.warmup + sim.profile_repeats.get()) as u64 * 1000;
            for p in sim.validation_points() {
                units += per_point * run_units(p.threads, cores);
            }
        }
        units
    }

    /// When every block of every dump holds at most one transaction, thread counts and
    /// schedulers cannot change the work (a single transaction cannot be split, and the
    /// schedulers only reorder it with its block's system work), and batch sizes of at
    /// least the longest dump's block count make the same mega-blocks. Keep the first
    /// thread count and scheduler and the smallest such batch size; return a note saying
    /// so (also added to the description), or `None` if nothing was collapsed.
    pub fn collapse_for_single_transactions(
        &mut self,
        dumps: &[DumpShape],
        cores: NonZeroUsize,
    ) -> Option<String> {
        if !self.parallel || dumps.is_empty() || dumps.iter().any(|d| d.most_transactions > 1) {
            return None;
        }
        let blocks = dumps.iter().map(|d| d.blocks).max().unwrap_or(1);
        let before = self.points(cores).len();
        let whole = self
            .batch
            .iter()
            .map(|b| b.get())
            .filter(|&b| b >= blocks)
            .min();
        let batch: Vec<NonZeroUsize> = self
            .batch
            .iter()
            .copied()
            .filter(|b| b.get() < blocks || Some(b.get()) == whole)
            .collect();
        let mut collapsed = self.clone();
        collapsed.threads = NonEmpty(vec![*self.threads.first()]);
        collapsed.all_cores = false;
        collapsed.schedulers = NonEmpty(vec![*self.schedulers.first()]);
        collapsed.batch = NonEmpty::new(batch).ok()?;
        let after = collapsed.points(cores).len();
        if after >= before {
            return None;
        }
        let note = format!(
            "grid shortened from {before} to {after} parallel points: every block holds at most one transaction, \
             so more threads or another scheduler cannot change the work (a single transaction cannot run in \
             parallel); choose --threads/--batch/--scheduler to run them anyway"
        );
        collapsed.description = if self.description.is_empty() {
            note.clone()
        } else {
            format!("{} ({note})", self.description)
        };
        *self = collapsed;
        Some(note)
    }

    /// The sweep config that records this plan in the results (`results.json`).
    pub fn record(&self) -> SweepConfig {
        SweepConfig {
            description: self.description.clone(),
            dumps: self.named_dumps.clone(),
            threads: plain(&self.threads),
            batch: plain(&self.batch),
            schedulers: self.schedulers.to_vec(),
            recover_senders: self.recover_senders.to_vec(),
            receipts: self.receipts,
            state_root: self.state_root.to_vec(),
            persist: self.persist.to_vec(),
            backlog: self.backlog,
            seed: self.seed,
            warmup: self.warmup,
            repeats: self.repeats.get(),
            sequential: self.baseline,
            all_cores: self.all_cores,
            min_sample_ms: self.min_sample.ms(),
            simulate: self.simulate.as_ref().map(SimulatePlan::record),
            state: match self.state.as_ref().map(|s| &s.dirs) {
                Some(StoreDirs::One(dir)) => Some(dir.clone()),
                _ => None,
            },
            stores: match self.state.as_ref().map(|s| &s.dirs) {
                Some(StoreDirs::PerDump(dirs)) => dirs.to_vec(),
                _ => Vec::new(),
            },
            io: self
                .state
                .as_ref()
                .map_or_else(|| IoMode::DEFAULT.to_vec(), |s| s.io.to_vec()),
            cache: self
                .state
                .as_ref()
                .map_or_else(|| CacheState::ALL.to_vec(), |s| s.cache.to_vec()),
            bal_design: self
                .state
                .as_ref()
                .map_or_else(|| vec![BalDesign::Keys], |s| s.designs.to_vec()),
            io_threads: self
                .state
                .as_ref()
                .and_then(|s| s.io_threads)
                .map(NonZeroUsize::get),
            memory: self.state.as_ref().is_none_or(|s| s.memory),
            layout: self.layout.clone(),
        }
    }
}

/// The default thread counts where none are given: 1 up to the machine's core count (at
/// most [`MAX_THREADS`]).
pub fn default_thread_counts(cores: NonZeroUsize) -> NonEmpty<NonZeroUsize> {
    NonEmpty(
        (1..=cores.get().min(MAX_THREADS))
            .filter_map(NonZeroUsize::new)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_checked_once_with_stated_messages() {
        assert_eq!(thread_counts(&[], 4), Err(PlanError::Empty));
        assert_eq!(thread_counts(&[1, 0], 4), Err(PlanError::ZeroThreads));
        assert_eq!(
            thread_counts(&[1, 5], 4).unwrap_err().to_string(),
            "5 threads is over the limit of 4"
        );
        assert_eq!(thread_counts(&[2, 1], 4).unwrap().first().get(), 2);
        assert_eq!(thread_counts_or_none(&[], 4), Ok(Vec::new()));
        assert_eq!(batch_sizes(&[0]), Err(PlanError::ZeroBatch));
        assert_eq!(repeats(0), Err(PlanError::ZeroRepeats));
        assert_eq!(repeats(MAX_REPEATS).unwrap().get(), MAX_REPEATS);
        assert_eq!(
            repeats(MAX_REPEATS + 1).unwrap_err().to_string(),
            "10001 runs is over the limit of 10000 per point"
        );
        assert_eq!(
            profile_repeats(usize::MAX),
            Err(PlanError::TooManyRepeats {
                repeats: usize::MAX
            })
        );
        assert_eq!(warmup(0), Ok(0));
        assert_eq!(warmup(MAX_WARMUP), Ok(MAX_WARMUP));
        assert_eq!(
            warmup(usize::MAX).unwrap_err().to_string(),
            "18446744073709551615 warm-up passes is over the limit of 1000 per point"
        );
        assert_eq!(
            MinSample::from_ms(MAX_MIN_SAMPLE_MS + 1)
                .unwrap_err()
                .to_string(),
            "60001 ms is over the limit of 60000 ms per sample"
        );
        assert_eq!(MinSample::from_ms(2).unwrap().ns(), 2_000_000);
        assert!(ItemSlowdown::new(f64::NAN).is_err() && ItemSlowdown::new(0.0).is_err());
        assert_eq!(ItemSlowdown::new(1.5).unwrap().get(), 1.5);
        assert_eq!(default_thread_counts(NonZeroUsize::MIN).len(), 1);
        assert_eq!(
            default_thread_counts(NonZeroUsize::new(3).unwrap()).len(),
            3
        );
        let many = NonZeroUsize::new(MAX_THREADS + 1).unwrap();
        assert_eq!(default_thread_counts(many).len(), MAX_THREADS);
    }

    #[test]
    fn a_store_plan_error_names_its_setting() {
        let keys = [BalDesign::Keys];
        let setting = |dumps, io: &[IoMode], cache: &[CacheState], designs, io_threads| {
            store_plan(
                Some(StoreDirs::One("s".into())),
                dumps,
                io,
                cache,
                designs,
                Some(io_threads),
                false,
            )
            .unwrap_err()
            .setting
        };
        let (io, cache) = ([IoMode::OnDemand], [CacheState::Warm]);
        assert_eq!(setting(2, &io, &cache, &keys, 1), StoreSetting::State);
        assert_eq!(setting(1, &[], &cache, &keys, 1), StoreSetting::Io);
        assert_eq!(setting(1, &io, &[], &keys, 1), StoreSetting::Cache);
        assert_eq!(setting(1, &io, &cache, &[], 1), StoreSetting::BalDesign);
        assert_eq!(setting(1, &io, &cache, &keys, 0), StoreSetting::IoThreads);
        assert_eq!(
            setting(1, &io, &cache, &keys, MAX_THREADS + 1).flag(),
            "--io-threads"
        );
        assert_eq!(StoreSetting::BalDesign.key(), "bal_design");
        let per_dump = |n: usize| {
            store_plan(
                Some(StoreDirs::PerDump(
                    NonEmpty::new((0..n).map(|i| format!("s{i}").into()).collect()).unwrap(),
                )),
                2,
                &io,
                &cache,
                &keys,
                Some(1),
                false,
            )
        };
        assert_eq!(per_dump(3).unwrap_err().setting, StoreSetting::Stores);
        assert_eq!(StoreSetting::Stores.key(), "stores");
        let two = per_dump(2).unwrap().unwrap();
        assert_eq!(two.dir_of(1), std::path::Path::new("s1"));
        assert_eq!(store_plan(None, 2, &[], &[], &[], Some(0), false), Ok(None));
    }

    /// Each prefetching mode runs once per design; on demand (no list) once; the sequential
    /// baseline reads on demand in each cache state.
    #[test]
    fn designs_multiply_the_prefetching_points_only() {
        let plan = store_plan(
            Some(StoreDirs::One("s".into())),
            1,
            &IoMode::ALL,
            &[CacheState::Cold],
            &BalDesign::ALL,
            Some(2),
            false,
        )
        .unwrap()
        .unwrap();
        let reads = plan.replay_reads();
        assert_eq!(reads.len(), 1 + 3 * 3, "{reads:?}");
        assert_eq!(
            reads.iter().filter(|r| r.design().is_none()).count(),
            1,
            "{reads:?}"
        );
        assert!(reads.contains(&StateRead::store(
            StoreRead::Pipelined(BalDesign::Writes),
            CacheState::Cold,
        )));
        assert_eq!(
            plan.baseline_reads(),
            vec![StateRead::on_demand(CacheState::Cold)]
        );
    }
}

/// Which points to profile and where the profiles go (`--cpu-profile`,
/// `--cpu-profile-point`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuProfilePlan {
    /// Where the profiles go: each profiled point writes `<stem>-<point>.svg` and
    /// `<stem>-<point>.folded` beside this path ([`crate::profile::profile_stem`]; the
    /// dump's name is added when the run has several).
    pub path: PathBuf,
    /// Only the point with this name (as the tables print it, e.g. `BAL 2t b20 ols`);
    /// `None`: every point, the sequential baseline included.
    pub point: Option<String>,
    /// Timed window to profile per point at least.
    pub window: std::time::Duration,
}
