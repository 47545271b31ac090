//! A scheduler of one's own, in one file: an implementation of
//! [`gigagas_grid::schedule::Scheduler`] that names itself, run beside `ols` on a dump
//! through the library (`gigagas_bench::run_grid`, every pass verified) and printed as
//! `gigagas run` prints its rows. The results carry its name: `--out DIR` writes a results
//! folder (`table.md`, `results.csv`, ...) that `gigagas report DIR` renders again.
//!
//! ```text
//! cargo run --release -p gigagas-bench --example own_scheduler -- [DUMP] [--out DIR]
//! ```
//!
//! DUMP defaults to `dumps/mainnet.gigagas`.

use gigagas_bench::{NonEmpty, Plan, SchedulerKind, SuiteDump, SweepOptions, plan, run_grid};
use gigagas_grid::{Claims, DumpEntry, StateRootPhase, TableLayout, WorkItem, schedule::Scheduler};
use gigagas_report::table;
use std::{cmp::Reverse, num::NonZeroUsize, path::PathBuf, process::ExitCode};

/// The order: blocks in order, and within each block the largest gas used first (the
/// longest-processing-time rule inside a block, so a worker stays on one block's data).
#[derive(Debug)]
struct LargestInBlock;

impl Scheduler for LargestInBlock {
    fn name(&self) -> &str {
        "largest-in-block"
    }

    fn order(&self, items: &[WorkItem], _workers: NonZeroUsize, order: &mut Vec<u32>) {
        order.clear();
        order.extend(0..items.len() as u32);
        // Stable: equal gas keeps block order.
        order.sort_by_key(|&i| {
            let item = &items[i as usize];
            (item.block, Reverse(item.gas_used))
        });
    }
}

/// A list of one value.
fn one<T>(value: T) -> NonEmpty<T> {
    NonEmpty::new(vec![value]).expect("one value")
}

fn main() -> ExitCode {
    // As a binary does at start-up, before any precompile runs.
    gigagas_chain::install_kzg_verifier();
    let mut args = std::env::args().skip(1);
    let (mut dump, mut out) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = args.next().map(PathBuf::from),
            _ => dump = Some(PathBuf::from(arg)),
        }
    }
    let dump = dump.unwrap_or_else(|| {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../dumps/mainnet.gigagas"
        ))
    });

    // One's own scheduler as a kind, beside a built-in one: both run on the same path.
    let own = SchedulerKind::own(&LargestInBlock).expect("a plain name no built-in has");
    let plan = Plan {
        description: format!("{} beside ols", own.name()),
        named_dumps: vec![DumpEntry::path(&dump)],
        dumps: one(SuiteDump {
            named: dump.display().to_string(),
            path: dump,
            label: None,
        }),
        // One thread and every core.
        threads: one(NonZeroUsize::MIN),
        all_cores: true,
        batch: plan::batch_sizes(&[1, 50]).expect("non-zero"),
        schedulers: NonEmpty::new(vec![SchedulerKind::Ols, own]).expect("two"),
        claims: Claims::Chunked,
        recover_senders: one(false),
        receipts: false,
        state_root: one(StateRootPhase::Off),
        persist: one(gigagas_grid::Persist::None),
        backlog: gigagas_grid::Backlog::default(),
        baseline: true,
        parallel: true,
        warmup: gigagas_grid::DEFAULT_WARMUP,
        repeats: plan::repeats(gigagas_grid::DEFAULT_REPEATS).expect("in range"),
        min_sample: plan::MinSample::from_ms(gigagas_grid::DEFAULT_MIN_SAMPLE_MS)
            .expect("in range"),
        seed: gigagas_grid::DEFAULT_ROUND_SEED,
        verify: true,
        trace: false,
        cpu_profile: None,
        collapse_single_transaction_blocks: false,
        simulate: None,
        state: None,
        layout: TableLayout::default(),
    };
    let options = SweepOptions {
        commit: "example".into(),
        note: None,
        build: None,
    };
    let results = run_grid("own-scheduler", &plan, &options, &mut ());

    print!("{}", table::rows_table(std::slice::from_ref(&results)));
    eprint!("{}", table::failures_list(&results));
    if let Some(out) = out {
        if let Err(e) = gigagas_report::folder::write_into(&out, &results) {
            eprintln!("{}: {e}", out.display());
            return ExitCode::FAILURE;
        }
        eprintln!("wrote {}", out.display());
    }
    if results.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
