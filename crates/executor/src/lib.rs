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
//! (transactions, receipts, access lists: [`ReplayBlock`]) kept decoded, or — a file loaded
//! over [`ResidentLimits::blocks`] — read again from the file a batch at a time
//! ([`Replay::blocks`], a [`Blocks`] view every reader takes).
//!
//! A parallel pass is data flowing one way. *Set up* (module `pass`, before the window):
//! the batches, where items find their state — memory, or a store read on demand, before
//! each batch or pipelined, one choice made from the runner's constructor — the root phase
//! and the threads. *Stage* (between batches, outside the window): each batch becomes one
//! owned value, its blocks, the state each block's items read and, over a store, the blank
//! tables its read fills. *Run* (module `batch`): the coordinator reads the batch's state
//! when the pass reads before each batch, hands the value to the workers at the barrier,
//! takes it back with their outputs, hands the outputs to the sink (verification) and drops
//! it; pipelined, it reads the next batch's while this one runs.
//!
//! The modules, from the bottom up; each imports only modules above it in this table (a
//! test reads the sources and holds them to it):
//!
//! | module | what it does |
//! |---|---|
//! | [`prestate`] | the in-memory state ([`PreStateDb`]), what earlier blocks wrote ([`Carried`]), [`StateError`] |
//! | [`expected`] | the access list's writes grouped per item, what verification compares with |
//! | [`local_code`] | each thread's own copy of the bytecode it runs |
//! | [`work`] | the timed work's receipt step |
//! | [`window`] | the timed window's CPU and fault counts |
//! | [`barrier`] | the [`barrier::SpinBarrier`] and the batons a pass hands its batches over with |
//! | [`pool`] | the worker and reader threads kept across passes |
//! | [`view`] | one transaction's [`BalView`] over a block's start ([`view::Pre`]) |
//! | [`replay`] | the prepared dump, block views, the cursors that walk the blocks |
//! | [`source`] | the state seam: [`StateSource`] (state and trie nodes), reads before a batch, reads on demand |
//! | [`exec`] | executing one item ([`ItemExecutor`], one EVM per worker), and the sequential loop |
//! | [`verify`] | every item against the receipts and the access list ([`Divergence`]) |
//! | [`root`] | the state-root phase: each block's root from its witness and access lists, its trie nodes read as it needs them on a store run |
//! | `beside` | reads beside execution: the order a batch's blocks are read in, and whether each is read yet |
//! | [`pass`] | a pass set up ([`SetupError`]), each batch staged as one value, the [`PassCache`]; [`PassError`] |
//! | `batch` | the batch loop: the timed window, the barrier protocol, the hand-over |
//! | [`run`] | the [`Runner`]s: [`Parallel`] and [`Sequential`] |
//! | `test_utils` | with the feature `test-utils`: what the tests of every crate that replays dumps share |
//!
//! # The locks that remain
//!
//! None holds a batch's inputs or outputs: the barrier orders every hand-over.
//! - the barrier's own `Mutex` (a sleeper and its wake-up);
//! - the cached core count (`OnceLock`);
//! - [`PassCache`]'s `OnceLock`s: what passes over one replay build once and share;
//! - the pools kept across passes, and the list of their live threads (`pool`);
//! - the file a replay reads its blocks again from (the coordinator's alone, between
//!   batches);
//! - the root phase's lanes and queue: units taken by whichever worker is free;
//! - [`OnDemandPass`]: each reader (a read before a batch takes them all, a worker one) and
//!   what a pass read on demand (a client's cache, shared by the workers).
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
mod beside;
pub mod exec;
pub mod expected;
pub mod local_code;
pub mod pass;
pub mod pool;
pub mod prestate;
pub mod replay;
pub mod root;
pub mod run;
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
pub use gigagas_grid::schedule::{
    BatchOrder, CHUNK_SHARE, Estimate, GasLimit, GasUsed, HEAVY_SHARE, HeavyFirst, LEAD_SHARE,
    MIN_ITEM_GAS, Ols, Oracle, Scheduler, TIME_SPREAD, band, chunk_bounds, heavy_first, scheduler,
};
pub use gigagas_grid::{Claims, RunConfig, SchedulerKind, StateRootPhase, StoreRead, TimedWork};
pub use gigagas_trie::BlockChanges;
pub use gigagas_trie::{Nibbles, NodeReads, TrieId};
pub use pass::{IoTimings, PassCache, PassError, ReadFailure, RunTimings, SetupError};
pub use prestate::{Carried, PreStateDb, SourceError, StateError};
pub use replay::{
    BaseCursor, BlockReadError, Blocks, CarriedCursor, ItemKind, LoadError, LoadedDump,
    PrepareError, RESIDENT_BASES_BYTES, RESIDENT_BLOCKS_BYTES, Replay, ReplayBlock, ResidentLimits,
    RootSetupError, WorkItem, WorkItems,
};
pub use revm::{bytecode::Bytecode, state::AccountInfo};
pub use root::{BlockPersist, RootInputs, RootSpan, RootStepKind, RootTimings};
pub use run::{Parallel, RunOutputs, Runner, Sequential};
pub use source::{
    BlockSink, BlockWritten, FullListError, NoSource, OnDemand, OnDemandPass, SourceDb, StateSource,
};
pub use verify::{
    Divergence, DivergenceField, FailedItem, ItemOutcome, Mismatch, ReceiptsRootCheck, VerifyError,
};
pub use view::BalView;
pub use window::{CpuUsage, WindowObserver, observe_windows};
pub use work::tx_receipt;

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    /// The module table of the crate doc, bottom first.
    fn table(lib: &str) -> Vec<String> {
        lib.lines()
            .filter_map(|l| l.strip_prefix("//! | "))
            .filter_map(|row| {
                let name = row.split('|').next()?.trim();
                let name = name.trim_start_matches("[`").trim_start_matches('`');
                let name = name.trim_end_matches("`]").trim_end_matches('`');
                let is_module = !name.is_empty()
                    && name != "module"
                    && name.chars().all(|c| c.is_ascii_lowercase() || c == '_');
                is_module.then(|| name.to_string())
            })
            .collect()
    }

    /// `code` without comments and without its test module.
    fn code_of(source: &str) -> String {
        let source = source.split("#[cfg(test)]").next().unwrap_or_default();
        source
            .lines()
            .map(|l| l.split("//").next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The first path segment of every name `code` reaches through `crate::` (a module, or
    /// an item the crate root re-exports), braces of a `use crate::{..}` opened.
    fn crate_paths(code: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(inner) = rest.strip_prefix('{') {
                let (mut depth, mut start) = (0, 0);
                for (i, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            out.push(ident(&inner[start..i]));
                            break;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            out.push(ident(&inner[start..i]));
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
            } else {
                out.push(ident(rest));
            }
        }
        out.retain(|s| !s.is_empty());
        out
    }

    fn ident(s: &str) -> String {
        s.trim()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    }

    /// Every module names only modules above it in the crate doc's table (directly, or an
    /// item re-exported at the crate root), so data flows one way through the crate.
    #[test]
    fn modules_import_only_modules_above_them() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
        let order = table(&lib);
        assert!(order.len() > 10, "the crate doc's table: {order:?}");
        // Each item the crate root re-exports, and its module (empty: another crate's).
        let mut owner: HashMap<String, String> = HashMap::new();
        for export in code_of(&lib).split("pub use ").skip(1) {
            let export = export.split(';').next().unwrap_or_default();
            let Some((module, items)) = export.split_once("::") else {
                continue;
            };
            let module = if order.iter().any(|m| m == module) {
                module
            } else {
                ""
            };
            for item in items
                .trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace())
                .split(',')
            {
                owner.insert(
                    ident(item.rsplit("::").next().unwrap_or(item)),
                    module.to_string(),
                );
            }
        }
        let mut checked = 0;
        for entry in std::fs::read_dir(&src).unwrap() {
            let path = entry.unwrap().path();
            let module = path.file_stem().unwrap().to_str().unwrap().to_string();
            if module == "lib" {
                continue;
            }
            let rank = |m: &str| order.iter().position(|o| o == m);
            let own = rank(&module).unwrap_or_else(|| panic!("{module} is not in the table"));
            let code = code_of(&std::fs::read_to_string(&path).unwrap());
            for name in crate_paths(&code) {
                let target = owner.get(&name).cloned().unwrap_or(name.clone());
                if target.is_empty() {
                    continue; // another crate's item, re-exported
                }
                let Some(target_rank) = rank(&target) else {
                    panic!("{module} names crate::{name}, which is no module of the table");
                };
                assert!(
                    target_rank <= own,
                    "{module} names {target} (crate::{name}), a module below it in the table"
                );
            }
            checked += 1;
        }
        assert_eq!(checked, order.len(), "every module is in the table once");
    }

    /// The reader of paths sees through braces and re-exports.
    #[test]
    fn the_path_reader_opens_braces() {
        let code = "use crate::{a::{B, C}, d, E};\nlet x = crate::f::g();";
        assert_eq!(crate_paths(code), ["a", "d", "E", "f"]);
    }
}
