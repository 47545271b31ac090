//! The contents of a sweep config file (`bench-configs/*.toml`), as data: what a sweep
//! asks for before it is checked. The bench crate reads and validates it into a plan
//! (`gigagas_bench::config`), and a results file records it (`gigagas_report::SweepResults::config`).

use crate::SchedulerKind;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::{fmt, num::NonZeroUsize, path::PathBuf};

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
    /// config file's folder (or absolute); a file may carry the label its rows are shown
    /// under ([`DumpEntry`]).
    pub dumps: Vec<DumpEntry>,
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
    /// How the store points with a root commit each block into the store after its root
    /// (any of `none`, `block`, `background`; default `["none"]`; `false` and `true`, as
    /// stored before the modes, read as `none` and `block`): a mode on needs a store and
    /// a root phase on, and applies to the store points with a root (the others run
    /// once, without).
    #[serde(default = "persist_off", skip_serializing_if = "is_persist_off")]
    pub persist: Vec<crate::Persist>,
    /// The background writer's limits (`background`; reth's by default).
    #[serde(default, skip_serializing_if = "crate::Backlog::is_default")]
    pub backlog: crate::Backlog,
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
    /// How store points read (`on-demand`, `prefetch`, `pipelined`, `beside`; default the
    /// first three, [`IoMode::DEFAULT`](crate::IoMode::DEFAULT)).
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
    /// Readers of every store pass (threads, each with its own read transaction); where
    /// not given, a prefetch has [`crate::DEFAULT_IO_THREADS`] and a read beside execution
    /// [`crate::beside_readers`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_threads: Option<usize>,
    /// With a store, also run the in-memory points (default true).
    #[serde(default = "yes")]
    pub memory: bool,
    /// How `table.md` lays the sweep out: which dimensions make the rows and the columns
    /// of its throughput tables (default: rows of dump × threads, the columns chosen from
    /// what varies; see [`TableLayout`]).
    #[serde(default, skip_serializing_if = "TableLayout::is_default")]
    pub layout: TableLayout,
}

/// One entry of a sweep's `dumps`: a dump file or a folder of dumps, written as its path
/// (`"dumps/mainnet.gigagas"`) or, for one file, as a table that also gives the label its
/// rows are shown under in tables, CSV files and plots
/// (`{ path = "../target/big-blocks/mainnet-like-30m.gigagas", label = "30M" }`). Without a
/// label a dump is shown by its name, or by its file stem where names collide. Stored the
/// way it was written: a path alone as a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpEntry {
    /// The dump file or folder, relative to the config file's folder (or absolute).
    pub path: PathBuf,
    /// The label of the dump's rows, if the config gives one.
    pub label: Option<String>,
}

impl DumpEntry {
    /// An entry of a path alone, without a label.
    pub fn path(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            label: None,
        }
    }
}

/// The table form of a [`DumpEntry`].
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LabelledDump {
    path: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
}

impl Serialize for DumpEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.label {
            None => self.path.serialize(serializer),
            Some(label) => LabelledDump {
                path: self.path.clone(),
                label: Some(label.clone()),
            }
            .serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for DumpEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entry;
        impl<'de> serde::de::Visitor<'de> for Entry {
            type Value = DumpEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a dump path, or a table { path = \"...\", label = \"...\" }")
            }
            fn visit_str<E: serde::de::Error>(self, path: &str) -> Result<DumpEntry, E> {
                Ok(DumpEntry::path(path))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<DumpEntry, A::Error> {
                let t =
                    LabelledDump::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(DumpEntry {
                    path: t.path,
                    label: t.label,
                })
            }
        }
        deserializer.deserialize_any(Entry)
    }
}

/// A dimension of a sweep's grid, as a table's rows, columns or sections are named by it
/// (the config's `layout`; the names are the config keys and CSV columns of the same
/// dimension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    /// The dump (shown by its label).
    Dump,
    /// Worker threads (the sequential baseline stands beside every thread count).
    Threads,
    /// Blocks per mega-block.
    Batch,
    /// The scheduler.
    Scheduler,
    /// How workers claim items (chunked, or one item per claim).
    Claims,
    /// Sender recovery inside the timed work.
    RecoverSenders,
    /// Receipts inside the timed work.
    Receipts,
    /// Where the pre-state is read from: memory, or a store (its cache state, I/O mode and
    /// access-list design).
    State,
    /// The state-root phase.
    StateRoot,
    /// How blocks are committed into the store (`--persist`).
    Persist,
}

impl Dimension {
    /// Every dimension, in the order a layout takes its columns from them.
    pub const ALL: [Dimension; 10] = [
        Dimension::Dump,
        Dimension::Threads,
        Dimension::Batch,
        Dimension::Scheduler,
        Dimension::Claims,
        Dimension::StateRoot,
        Dimension::Persist,
        Dimension::RecoverSenders,
        Dimension::Receipts,
        Dimension::State,
    ];

    /// The dimension's name, as the config and the CSV columns write it.
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Dump => "dump",
            Dimension::Threads => "threads",
            Dimension::Batch => "batch",
            Dimension::Scheduler => "scheduler",
            Dimension::Claims => "claims",
            Dimension::RecoverSenders => "recover_senders",
            Dimension::Receipts => "receipts",
            Dimension::State => "state",
            Dimension::StateRoot => "state_root",
            Dimension::Persist => "persist",
        }
    }

    /// Whether the dimension is part of the timed work, which the sequential baseline shares
    /// with the replay (its baseline changes with it), rather than of the replay's settings.
    pub fn is_work(self) -> bool {
        matches!(
            self,
            Dimension::RecoverSenders
                | Dimension::Receipts
                | Dimension::State
                | Dimension::StateRoot
                | Dimension::Persist
        )
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How `table.md` lays a sweep out: its throughput tables have a row per combination of
/// the `rows` dimensions that was measured, a column per combination of the `columns`
/// dimensions (at most about eight), and one table per combination of the dimensions that
/// vary and are in neither. Left empty, the rows are dump × threads (those of them that
/// vary) and the columns are taken from the other varying dimensions in the order of
/// [`Dimension::ALL`] while they fit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableLayout {
    /// The dimensions of a table's rows, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<Dimension>,
    /// The dimensions of a table's columns, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<Dimension>,
}

impl TableLayout {
    /// Whether nothing is named (the default layout).
    pub fn is_default(&self) -> bool {
        self.rows.is_empty() && self.columns.is_empty()
    }

    /// The first dimension named twice (in rows or columns, or in both), if any.
    pub fn repeated(&self) -> Option<Dimension> {
        let all: Vec<Dimension> = self.rows.iter().chain(&self.columns).copied().collect();
        all.iter()
            .enumerate()
            .find(|(i, d)| all[..*i].contains(d))
            .map(|(_, d)| *d)
    }
}

fn all_io() -> Vec<crate::IoMode> {
    crate::IoMode::DEFAULT.to_vec()
}
fn all_cache() -> Vec<crate::CacheState> {
    crate::CacheState::ALL.to_vec()
}
fn persist_off() -> Vec<crate::Persist> {
    vec![crate::Persist::None]
}
fn is_persist_off(persist: &Vec<crate::Persist>) -> bool {
    persist.as_slice() == [crate::Persist::None]
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

impl SimulateConfig {
    /// The validation points: every `validate_threads × batch × schedulers`, in that
    /// order (counts of 0 skipped: a checked plan has none).
    pub fn validation_points(&self) -> Vec<crate::RunConfig> {
        let mut v = Vec::new();
        for threads in self
            .validate_threads
            .iter()
            .filter_map(|&t| NonZeroUsize::new(t))
        {
            for &batch in &self.batch {
                for &scheduler in &self.schedulers {
                    v.push(crate::RunConfig::new(threads, batch, scheduler));
                }
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dump entry reads from a path or a table, and is written back the way it was
    /// given; a table with an unknown key is refused by name.
    #[test]
    fn dump_entries_read_as_paths_or_labelled_tables() {
        let entries: Vec<DumpEntry> = serde_json::from_str(
            r#"["dumps/a.gigagas", {"path": "b.gigagas", "label": "30M"}, {"path": "c"}]"#,
        )
        .unwrap();
        assert_eq!(entries[0], DumpEntry::path("dumps/a.gigagas"));
        assert_eq!(entries[1].label.as_deref(), Some("30M"));
        assert_eq!(entries[2], DumpEntry::path("c"));
        let back = serde_json::to_string(&entries).unwrap();
        assert_eq!(
            back,
            r#"["dumps/a.gigagas",{"path":"b.gigagas","label":"30M"},"c"]"#
        );
        let err = serde_json::from_str::<DumpEntry>(r#"{"path": "a", "lable": "x"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `lable`"), "{err}");
        let err = serde_json::from_str::<DumpEntry>("3")
            .unwrap_err()
            .to_string();
        assert!(err.contains("a dump path, or a table"), "{err}");
    }

    /// Layout dimensions are read by their config names; a repeated one is found.
    #[test]
    fn layouts_name_dimensions() {
        let layout: TableLayout =
            serde_json::from_str(r#"{"rows": ["dump", "threads"], "columns": ["state_root"]}"#)
                .unwrap();
        assert_eq!(layout.rows, [Dimension::Dump, Dimension::Threads]);
        assert_eq!(layout.repeated(), None);
        let twice = TableLayout {
            rows: vec![Dimension::Batch],
            columns: vec![Dimension::Scheduler, Dimension::Batch],
        };
        assert_eq!(twice.repeated(), Some(Dimension::Batch));
        let err = serde_json::from_str::<TableLayout>(r#"{"rows": ["thread"]}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown variant `thread`"), "{err}");
        for d in Dimension::ALL {
            let name = serde_json::to_value(d).unwrap();
            assert_eq!(name, d.name());
        }
    }
}
