//! Measuring gigagas replays.
//!
//! The executor prepares, runs and verifies one pass; this crate decides how often and in
//! what order passes run, and turns their timings into the figures of the results model
//! (`gigagas-report`).
//!
//! Words: a *pass* replays a dump once, a *sample* is one or more passes timed together (at
//! least `min_sample_ms`), a *repeat* is one measured sample; a *batch* is a mega-block.
//!
//! The modules, in dependency order: each names in its code (`crate::module::…`) only
//! modules above it in this table, those its last column lists; doc links may point
//! anywhere. A unit test of this file reads every module's source and holds it to the
//! table, and a module added without a row fails it.
//!
//! | Module | What it does | Imports |
//! |---|---|---|
//! | [`progress`] | The [`Progress`] of a run and the work units it is counted in. | — |
//! | [`plan`] | A [`Plan`] is a grid checked once (non-zero counts, non-empty lists, the stated limits such as [`MAX_THREADS`]) over its [`SuiteDump`]s: what a sweep config and `gigagas run`'s flags both convert into, and what [`run_grid`] and the simulator take. | `progress` |
//! | [`config`] | A sweep config file (`bench-configs/*.toml`) read and checked ([`load`]). | `plan` |
//! | [`blocks`] | A pass batch by batch (read, execute, root, end to end) and the keys each block updates, for the rows of store and root points. | — |
//! | [`trace`] | One pass of a parallel point as Chrome trace events. | — |
//! | [`timeline`] | The longest batch of a pass as a [`gigagas_report::timeline::Timeline`]. | — |
//! | [`error`] | The errors of one pass: [`PassError`] and the state store's [`IoError`] it may hold. | — |
//! | [`io`] | Passes that read their state from a store on disk ([`StoreContext`]), warm or cold (checked), with what each read, beside the device's own random-read rate. | `error` |
//! | [`bench`](mod@bench) | One pass of a [`Point`] ([`bench_pass`]), warm-up and interleaved rounds of measured samples ([`bench_interleaved`]), the round order ([`round_order`]) and the figures of a pass ([`metrics_of`]). | `error`, `io`, `blocks` |
//! | [`whole_block`] | The whole-block simulator's measuring side: a store point's phases recorded from one-thread passes ([`whole_block::record_phases`]) and measured passes, handed to the model (`gigagas_sim::whole_block`). | `progress`, `plan`, `error`, `io`, `bench` |
//! | [`profile`] | An in-process CPU profile of a point's timed windows, a flamegraph and its folded stacks ([`profile_point`]; `--cpu-profile`), needing neither `perf` nor root. | `error`, `io`, `bench` |
//! | [`fault`] | Why a dump yields no figures ([`DumpFault`]) and why a sweep, a run or a simulation failed ([`BenchError`]). | `config`, `error`, `profile`, `whole_block` |
//! | [`simulate`] | The simulator's measuring side: one-thread profiles and validation runs handed to the model (`gigagas-sim`), and `gigagas simulate`'s one entry point ([`simulate::simulate_dump`]). | `progress`, `plan`, `io`, `bench`, `whole_block`, `fault` |
//! | [`sweep`] | [`run_grid`] (behind both `gigagas run` and [`run_sweep`]) loads every dump of a suite, runs every grid point on it, every pass verified, and collects a [`gigagas_report::SweepResults`]. | `progress`, `plan`, `config`, `trace`, `timeline`, `blocks`, `io`, `bench`, `profile`, `fault`, `simulate` |
//! | [`ab`] | An A/B of two builds ([`AbPlan`]): each runs the same points as a child process, one sample a round in ABBA order, and the rounds are paired point by point into a [`gigagas_report::ab::AbResults`]. | `progress` |

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod ab;
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
pub mod whole_block;

pub use ab::{AbError, AbPlan};
pub use bench::{Sampled, bench_interleaved, bench_pass, metrics_of, round_order};
pub use config::{ConfigError, Sweep, load};
pub use error::{IoError, PassError};
pub use fault::{BenchError, DumpFault};
pub use gigagas_executor::Replay;
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
pub use simulate::{DeviceSource, SimulateRequest, StoreFlags, WholeBlockRequest, simulate_dump};
pub use sweep::{SweepOptions, run_grid, run_sweep};
pub use timeline::timeline_of;

#[cfg(test)]
mod tests {
    use std::{
        collections::{BTreeMap, BTreeSet},
        path::Path,
    };

    /// The crate doc's table of modules, in its order: each module with the modules its
    /// last column says it imports.
    fn documented_order() -> Vec<(String, BTreeSet<String>)> {
        let ticked = |cell: &str| -> Vec<String> {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect()
        };
        include_str!("lib.rs")
            .lines()
            .filter_map(|line| line.strip_prefix("//! | [`"))
            .map(|row| {
                let cells: Vec<&str> = row.trim_end_matches('|').split('|').collect();
                let module = row.split('`').next().expect("a module name").to_string();
                let imports = ticked(cells.last().expect("an imports column"));
                (module, imports.into_iter().collect())
            })
            .collect()
    }

    /// `source` without its comments, string literals and character literals (each
    /// replaced by a space), so that only code is left to search.
    fn code_of(source: &str) -> String {
        let chars: Vec<char> = source.chars().collect();
        let mut out = String::with_capacity(source.len());
        let mut i = 0;
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        let at = |j: usize| chars.get(j).copied();
        while i < chars.len() {
            match chars[i] {
                '/' if at(i + 1) == Some('/') => {
                    while i < chars.len() && chars[i] != '\n' {
                        i += 1;
                    }
                    out.push(' ');
                    continue;
                }
                '/' if at(i + 1) == Some('*') => {
                    let mut depth = 0;
                    while i < chars.len() {
                        if chars[i] == '/' && at(i + 1) == Some('*') {
                            depth += 1;
                            i += 2;
                        } else if chars[i] == '*' && at(i + 1) == Some('/') {
                            depth -= 1;
                            i += 2;
                            if depth == 0 {
                                break;
                            }
                        } else {
                            i += 1;
                        }
                    }
                    out.push(' ');
                    continue;
                }
                'r' if (i == 0 || !ident(chars[i - 1])) && matches!(at(i + 1), Some('"' | '#')) => {
                    let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
                    if chars.get(i + 1 + hashes) == Some(&'"') {
                        let close: String = std::iter::once('"')
                            .chain(std::iter::repeat_n('#', hashes))
                            .collect();
                        let rest: String = chars[i + 2 + hashes..].iter().collect();
                        let end = rest.find(&close).expect("a closed raw string");
                        i += 2 + hashes + rest[..end].chars().count() + close.len();
                        out.push(' ');
                        continue;
                    }
                }
                '"' => {
                    i += 1;
                    while i < chars.len() && chars[i] != '"' {
                        i += if chars[i] == '\\' { 2 } else { 1 };
                    }
                    i += 1;
                    out.push(' ');
                    continue;
                }
                '\'' if at(i + 1) == Some('\\') => {
                    i += 3;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                    out.push(' ');
                    continue;
                }
                '\'' if at(i + 2) == Some('\'') => {
                    i += 3;
                    out.push(' ');
                    continue;
                }
                _ => {}
            }
            out.push(chars[i]);
            i += 1;
        }
        out
    }

    /// The first segment of every `crate::` path in `code` (a `crate::{…}` group gives one
    /// per item): the modules, or root items, that the code names.
    fn crate_paths(code: &str) -> BTreeSet<String> {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        let mut named = BTreeSet::new();
        for (at, _) in code.match_indices("crate") {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| ident(c) || c == '$') {
                continue;
            }
            let Some(rest) = code[at + "crate".len()..].trim_start().strip_prefix("::") else {
                continue;
            };
            let rest = rest.trim_start();
            let first = |s: &str| s.trim_start().chars().take_while(|&c| ident(c)).collect();
            let Some(group) = rest.strip_prefix('{') else {
                named.insert(first(rest));
                continue;
            };
            // Each item of the group starts the text after `{` or a top-level comma.
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        named.insert(first(&group[start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        named.insert(first(&group[start..i]));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        }
        // A trailing comma leaves an empty item.
        named.remove("");
        named
    }

    /// Every module's source names (in code) only modules above it in the crate doc's
    /// table, exactly those its row lists, and never an item of the root: its re-exports
    /// would hide which module the item comes from. Every module has a row.
    #[test]
    fn modules_import_only_modules_above_them() {
        let order = documented_order();
        let rank: BTreeMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(i, (module, _))| (module.as_str(), i))
            .collect();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files: BTreeSet<String> = BTreeSet::new();
        for entry in std::fs::read_dir(&src).unwrap() {
            let path = entry.unwrap().path();
            let Some(module) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".rs"))
            else {
                continue;
            };
            if module != "lib" {
                files.insert(module.to_string());
            }
        }
        let documented: BTreeSet<String> = order.iter().map(|(m, _)| m.clone()).collect();
        assert_eq!(
            files, documented,
            "every module has one row in the crate doc"
        );
        for (i, (module, listed)) in order.iter().enumerate() {
            let source = std::fs::read_to_string(src.join(format!("{module}.rs"))).unwrap();
            let mut named = crate_paths(&code_of(&source));
            named.remove(module);
            for name in &named {
                let Some(&at) = rank.get(name.as_str()) else {
                    panic!("{module} names crate::{name}, not a module: name its module");
                };
                assert!(
                    at < i,
                    "{module} imports {name}, which comes after it in the crate doc's order"
                );
            }
            assert_eq!(
                &named, listed,
                "the imports of {module} as its row lists them"
            );
        }
    }

    /// The search finds the paths of `use` groups, nested or not, and of expressions, and
    /// none in comments, strings or other crates' paths.
    #[test]
    fn crate_paths_are_found_in_code_only() {
        let source = r##"
            use crate::{
                bench::{Sampled, bench_pass},
                io::StoreContext,
                simulate,
            };
            // crate::commented::x
            /* crate::blocked /* nested */ crate::blocked_too */
            let s = "crate::quoted";
            let r = r#"crate::raw "quoted""#;
            let c = '"';
            let t = crate::trace::pass_events(&x);
            let g = gigagas_crate::other;
            fn f<'a>(x: &'a str) -> crate::plan::Plan {}
        "##;
        let named: Vec<String> = crate_paths(&code_of(source)).into_iter().collect();
        assert_eq!(named, ["bench", "io", "plan", "simulate", "trace"]);
    }
}
