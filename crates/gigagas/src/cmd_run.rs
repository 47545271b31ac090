//! `gigagas run`: parse the arguments into a grid over dumps, hand it to
//! `gigagas-bench` (the same path `gigagas sweep` takes), print the rows.

use crate::{
    args::{
        Command, SchedulerChoice, commit, dump_or_default, flag_error, refuse_non_regular,
        schedulers,
    },
    terminal::{Bar, fail_on_failures, print_results},
};
use anyhow::{Context, Result, anyhow, bail};
use gigagas_bench::{
    CpuProfilePlan, NonEmpty, Plan, SuiteDump, SweepOptions,
    plan::{self, MAX_THREADS, MinSample},
    run_grid,
};
use gigagas_report::{folder, machine::MachineInfo, output};
use std::{num::NonZeroUsize, path::PathBuf};

/// Arguments of `gigagas run`.
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// Dump files and/or folders of dumps (default: dumps/mainnet.gigagas, 42 real
    /// mainnet blocks; the synthetic workload is dumps/mainnet-like.gigagas).
    pub dumps: Vec<PathBuf>,
    /// Worker thread counts to sweep, comma-separated (default: 1 up to the core count).
    #[arg(long, value_delimiter = ',')]
    pub threads: Vec<usize>,
    /// Mega-block sizes (blocks merged into one parallel unit) to sweep (default: 1,50).
    #[arg(long, value_delimiter = ',')]
    pub batch: Vec<usize>,
    /// Schedulers to sweep: ols (block order), gas-used (largest first), gas-limit, or all
    /// (default: all three). By name only, never in all: `heavy-first` (the transactions
    /// above a small share of a worker's work first, largest first, the rest in block
    /// order, which keeps each block's data warm on a mega-block), and `oracle` (the same
    /// by each transaction's time measured in three 1-thread profiling passes first): a
    /// reference no real scheduler can reach, for how much a better gas proxy could win.
    #[arg(long, value_delimiter = ',')]
    pub scheduler: Vec<SchedulerChoice>,
    /// Workers claim one item at a time instead of chunks (plain list scheduling): the
    /// reference the chunk cut is checked against on a machine with many cores. Points are
    /// named with ` one-item` and results store `claims`. Hidden: no published figure uses it.
    #[arg(long, hide = true)]
    pub one_item_claims: bool,
    /// Single passes per point before the measured samples (verified, not reported).
    #[arg(long, default_value_t = gigagas_grid::DEFAULT_WARMUP)]
    pub warmup: usize,
    /// Measured rounds: each round runs every point once (the sequential baseline
    /// included) in a shuffled order, one sample each; the table shows each point's
    /// median and range, and every ratio taken round by round as its median with a 95 %
    /// distribution-free interval. 10 rounds give an interval from the 2nd to the 9th
    /// smallest ratio (97.9 % coverage); fewer than 6 cannot reach 95 % ([min, max]).
    #[arg(long, default_value_t = gigagas_grid::DEFAULT_REPEATS)]
    pub repeats: usize,
    /// Seed of each round's order of points (recorded in the results).
    #[arg(long, default_value_t = gigagas_grid::DEFAULT_ROUND_SEED)]
    pub seed: u64,
    /// Minimum timed length of a measured sample, milliseconds: a dump that replays
    /// faster is replayed several times per sample (figures are per pass). 0: one pass.
    #[arg(long, default_value_t = gigagas_grid::DEFAULT_MIN_SAMPLE_MS)]
    pub min_sample_ms: u64,
    /// Recover every sender from its signature inside the timed work (both paths).
    #[arg(long)]
    pub recover_senders: bool,
    /// Build every transaction's receipt with its logs bloom inside the timed work, on
    /// the sequential loop and the replay alike (what a client needs for receiptsRoot);
    /// the receipts root is then checked against every header from Byzantium on.
    #[arg(long)]
    pub receipts: bool,
    /// Run only the sequential baseline (one revm State, no BAL).
    #[arg(long)]
    pub sequential: bool,
    /// Skip the sequential baseline.
    #[arg(long, conflicts_with = "sequential")]
    pub no_baseline: bool,
    /// Skip verification (only to measure what verification costs; numbers are unverified).
    #[arg(long)]
    pub no_verify: bool,
    /// Write results.json (every sample, machine, dump checksums) to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// After the measured rounds, run one more verified pass of every parallel point and
    /// write it as Chrome trace-event JSON to this file (open it in https://ui.perfetto.dev
    /// or chrome://tracing): a track per worker, a slice per item (block, kind, gas,
    /// scheduler position), the batch boundaries.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// After the measured rounds, profile every point in-process (no perf, no root) while
    /// its timed windows are open, over extra verified passes of --cpu-profile-ms, and
    /// write a flamegraph, its folded stacks and its figures per point beside this path:
    /// `<stem>-<point>.svg`, `.folded` and `.json` (e.g. --cpu-profile prof/run gives
    /// prof/run-bal-2t-b20-ols.svg). Every worker is sampled on its own CPU time, at the
    /// kernel's tick rate; each profile states its samples, the CPU seconds they cover and
    /// the samples per CPU-second. The measured figures never come from profiled passes.
    #[arg(long, value_name = "FILE", help_heading = "Profiling")]
    pub cpu_profile: Option<PathBuf>,
    /// Profile only this point, named as the table prints it (e.g. "BAL 2t b20 ols" or
    /// "sequential").
    #[arg(
        long,
        value_name = "POINT",
        requires = "cpu_profile",
        help_heading = "Profiling"
    )]
    pub cpu_profile_point: Option<String>,
    /// Timed window to profile per point, milliseconds (passes repeat until they add up).
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 2000,
        requires = "cpu_profile",
        help_heading = "Profiling"
    )]
    pub cpu_profile_ms: u64,
    /// Pin worker i of every pass to the i-th core this process may use (Linux; recorded
    /// in the results' provenance). Without it the kernel places the workers.
    #[arg(long)]
    pub pin: bool,
    /// Write a results folder like `gigagas sweep` does (results.json, results.csv,
    /// totals.csv, table.md, plots) into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print every column of the table even on a terminal narrower than it (a narrower
    /// terminal otherwise gets the point, MGas/s, the ratio, eff and the longest tx).
    #[arg(long)]
    pub wide: bool,
    /// Also read the pre-state from this state store (`gigagas state build DUMP -o DIR`)
    /// inside the timed window, beside the in-memory points: every point again for each
    /// --io mode, --cache state and (prefetching) --bal-design. One dump only: the one the
    /// store was built from.
    #[arg(long, value_name = "DIR", help_heading = "Execution with I/O")]
    pub state: Option<PathBuf>,
    /// How store points read, comma-separated: prefetch (before each batch runs, every
    /// account, slot and code its access lists name, by --io-threads readers), pipelined
    /// (batch k+1 read while batch k executes), beside (a batch read while it executes, by
    /// --io-threads readers of their own, block by block in the order its schedule first
    /// reaches them: an item waits only for its own block), on-demand (each read the first time it is
    /// needed: what a client without hints does; the sequential baseline, which has no
    /// access list, always reads on demand).
    #[arg(long, value_delimiter = ',', default_values_t = gigagas_grid::IoMode::DEFAULT, help_heading = "Execution with I/O")]
    pub io: Vec<gigagas_grid::IoMode>,
    /// The page cache at the start of each store pass, comma-separated: warm (after a
    /// warm-up pass), cold (the store evicted before every timed pass, and checked with
    /// mincore: a pass that was not cold is refused).
    #[arg(long, value_delimiter = ',', default_values_t = gigagas_grid::CacheState::ALL, help_heading = "Execution with I/O")]
    pub cache: Vec<gigagas_grid::CacheState>,
    /// What the block's access list carries for the prefetch and pipelined points,
    /// comma-separated; each such point runs once per design: keys (EIP-7928 as
    /// specified, the default: the list names every key the block reads or writes, and the
    /// values are read from the store before the batch runs), writes (the state diffs only:
    /// the keys the block writes are read before the batch, every other read goes to the
    /// store on demand while the transactions run), full (the value of every key at the
    /// start of the block arrives with the block, RLP-encoded: decoding it is timed, and
    /// only code is read from the store). on-demand points have no list and run once.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "keys",
        help_heading = "Execution with I/O"
    )]
    pub bal_design: Vec<gigagas_grid::BalDesign>,
    /// The state-root phase of the replay's points, comma-separated; each point runs once
    /// per phase: off (the default), after (each batch's state roots computed on
    /// the workers once its transactions have run: storage tries in parallel, then the
    /// account trie, each block on the trie the block before left), overlapped (the same
    /// work from the batch's start, beside the transactions on the same workers). Roots come
    /// from the dump's witness and the access lists alone, and every one is checked against
    /// its header. Needs a dump with a witness (`gigagas generate`, `gigagas dump`,
    /// `gigagas import blockchain-test` write one; `gigagas inspect` shows it). With a
    /// phase on, the sequential baseline also runs with each block's root after its
    /// transactions (the client loop), the baseline of both phases.
    #[arg(long, value_delimiter = ',', default_value = "off")]
    pub state_root: Vec<gigagas_grid::StateRootPhase>,
    /// With --state and a --state-root phase on, how each block is committed into the
    /// store after its root, as a client commits a block (its state changes in the plain
    /// tables and its tries' new nodes by path), comma-separated: none; block (one write
    /// transaction per block, synced: an fdatasync per block, written at once by the worker
    /// that finished the block's root, on the root's chain); background (as reth's
    /// persistence task: each block handed to a writer on a thread of its own, which
    /// commits the oldest blocks in one synced transaction a group once the head is more
    /// than --persist-threshold blocks ahead of the disk, up to --persist-buffer behind the
    /// head; a block's chain stalls while the head is more than --persist-buffer plus
    /// --persist-backpressure blocks ahead; the writer is drained at the pass's end,
    /// inside its time). The store points with a root (the sequential baseline's too) then
    /// persist (`+persist` or `+persist background` in their name); blocks.csv gives each
    /// block's persist_s (its chain's wait) and, on the last block of each commit, its
    /// commit_blocks, persist_bytes, persist_pages and commit_s. Every pass's writes are
    /// taken back after it, outside the timed window: the store is left as built. A store
    /// without write permission is refused before the first pass; one left changed by an
    /// interrupted pass is refused when opened (rebuild it).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "none",
        help_heading = "Execution with I/O"
    )]
    pub persist: Vec<gigagas_grid::Persist>,
    /// With --persist background: blocks the head runs ahead of the disk before the
    /// writer commits (reth's persistence threshold).
    #[arg(long, default_value_t = gigagas_grid::Backlog::RETH.threshold, help_heading = "Execution with I/O")]
    pub persist_threshold: u16,
    /// With --persist background: blocks each commit leaves behind the head (reth's memory
    /// block buffer target).
    #[arg(long, default_value_t = gigagas_grid::Backlog::RETH.buffer, help_heading = "Execution with I/O")]
    pub persist_buffer: u16,
    /// With --persist background: blocks beyond --persist-buffer awaiting the disk before
    /// a block's chain stalls (reth's persistence backpressure threshold).
    #[arg(long, default_value_t = gigagas_grid::Backlog::RETH.backpressure, help_heading = "Execution with I/O")]
    pub persist_backpressure: u16,
    /// Readers of every store pass (threads, each with its own read transaction). Default: 8
    /// for a prefetch; for a read beside execution, one per core the workers leave free (at
    /// least one).
    #[arg(long, help_heading = "Execution with I/O")]
    pub io_threads: Option<usize>,
    /// With --state, skip the in-memory points (only the store's).
    #[arg(long, requires = "state", help_heading = "Execution with I/O")]
    pub no_memory: bool,
}

/// The dumps named on the command line: files as given, folders expanded to their
/// `*.gigagas` files (sorted); the default dump if none.
fn suite_dumps(given: &[PathBuf]) -> Result<Vec<SuiteDump>> {
    let dump = |path: PathBuf| SuiteDump {
        named: path.display().to_string(),
        path,
        label: None,
    };
    if given.is_empty() {
        return Ok(vec![dump(dump_or_default(None)?)]);
    }
    let mut dumps = Vec::new();
    for p in given {
        if p.is_dir() {
            let files = gigagas_bench::config::dumps_in_folder(p)
                .with_context(|| format!("{}: cannot list the folder", p.display()))?;
            if files.is_empty() {
                bail!("{}: no *.gigagas files in this folder", p.display());
            }
            dumps.extend(files.into_iter().map(dump));
        } else {
            // A FIFO, a device or a socket is refused here, before anything opens it; a
            // missing or unreadable file becomes that dump's FAIL row.
            refuse_non_regular(p, false)?;
            dumps.push(dump(p.clone()));
        }
    }
    Ok(dumps)
}

impl RunArgs {
    /// The plan of these flags on a machine with `cores` cores: every core count
    /// 1..=cores, mega-blocks of 1 and 50 and every scheduler where a flag is not given;
    /// every value checked (the checks a sweep config's keys get), then the dumps found
    /// (`dumps`), so a bad value is refused before the dumps are looked for.
    fn plan(
        &self,
        cores: NonZeroUsize,
        dumps: impl FnOnce(&[PathBuf]) -> Result<Vec<SuiteDump>>,
    ) -> Result<Plan> {
        let threads = if self.threads.is_empty() {
            plan::default_thread_counts(cores)
        } else {
            plan::thread_counts(&self.threads, MAX_THREADS).map_err(flag_error("--threads"))?
        };
        let batch = if self.batch.is_empty() {
            plan::batch_sizes(&[1, 50]).expect("non-zero defaults")
        } else {
            plan::batch_sizes(&self.batch).map_err(flag_error("--batch"))?
        };
        let warmup = plan::warmup(self.warmup).map_err(flag_error("--warmup"))?;
        let repeats = plan::repeats(self.repeats).map_err(flag_error("--repeats"))?;
        let min_sample =
            MinSample::from_ms(self.min_sample_ms).map_err(flag_error("--min-sample-ms"))?;
        let dumps = dumps(&self.dumps)?;
        let state = plan::store_plan(
            self.state.clone().map(plan::StoreDirs::One),
            dumps.len(),
            &self.io,
            &self.cache,
            &self.bal_design,
            self.io_threads,
            !self.no_memory,
        )
        .map_err(|e| flag_error(e.setting.flag())(e.problem))?;
        Ok(Plan {
            description: String::new(),
            named_dumps: dumps
                .iter()
                .map(|d| gigagas_grid::DumpEntry::path(&d.named))
                .collect(),
            dumps: NonEmpty::new(dumps).map_err(flag_error("DUMPS"))?,
            threads,
            all_cores: false,
            batch,
            schedulers: NonEmpty::new(schedulers(&self.scheduler)).expect("all by default"),
            claims: if self.one_item_claims {
                gigagas_grid::Claims::OneItem
            } else {
                gigagas_grid::Claims::Chunked
            },
            recover_senders: NonEmpty::new(vec![self.recover_senders]).expect("one setting"),
            receipts: self.receipts,
            state_root: NonEmpty::new(self.state_root.clone())
                .map_err(flag_error("--state-root"))?,
            persist: plan::persist_settings(
                self.persist.clone(),
                state.is_some(),
                &self.state_root,
            )
            .map_err(flag_error("--persist"))?,
            backlog: gigagas_grid::Backlog {
                threshold: self.persist_threshold,
                buffer: self.persist_buffer,
                backpressure: self.persist_backpressure,
            },
            baseline: !self.no_baseline,
            parallel: !self.sequential,
            warmup,
            repeats,
            min_sample,
            seed: self.seed,
            verify: !self.no_verify,
            trace: self.trace.is_some(),
            cpu_profile: self.cpu_profile.as_ref().map(|path| CpuProfilePlan {
                path: path.clone(),
                point: self.cpu_profile_point.clone(),
                window: std::time::Duration::from_millis(self.cpu_profile_ms.max(1)),
            }),
            collapse_single_transaction_blocks: self.threads.is_empty()
                && self.batch.is_empty()
                && self.scheduler.is_empty(),
            simulate: None,
            state,
            layout: gigagas_grid::TableLayout::default(),
        })
    }
}

impl Command for RunArgs {
    fn execute(self) -> Result<()> {
        let cores = MachineInfo::detect_cores();
        let plan = self.plan(cores, suite_dumps)?;
        self.prepare_outputs(&plan)?;
        if let Some(name) = &self.cpu_profile_point {
            let names: Vec<String> = plan
                .all_points(cores)
                .iter()
                .map(ToString::to_string)
                .collect();
            if !names.contains(name) {
                bail!(
                    "--cpu-profile-point: no point named {name:?} in this run; its points are: {}",
                    names.join(", ")
                );
            }
        }
        gigagas_bench::set_pinning(self.pin);
        eprintln!(
            "{} dump(s) × {} grid point(s){}: {} warm-up pass(es) + {} samples of at least {} ms each{}",
            plan.dumps.len(),
            plan.points(cores).len(),
            if plan.baselines().is_empty() {
                ""
            } else {
                " + sequential baseline"
            },
            plan.warmup,
            plan.repeats,
            plan.min_sample.ms(),
            if plan.verify {
                ", every pass verified"
            } else {
                ", UNVERIFIED (--no-verify)"
            }
        );
        let options = SweepOptions {
            commit: commit(),
            note: None,
            build: Some(crate::args::build_info()),
        };
        let mut bar = Bar::new("running");
        let results = run_grid("run", &plan, &options, &mut bar);
        bar.finish();
        let m = &results.machine;
        if !results.description.is_empty() {
            eprintln!("{}", results.description);
        }
        eprintln!("{} on {} cores, commit {}", m.cpu, m.cores, m.commit);
        print_results(&results, self.wide);
        if let Some(out) = &self.json {
            output::write_atomic(out, results.to_json().as_bytes())?;
            eprintln!("wrote {}", out.display());
        }
        if let Some(out) = &self.trace {
            let trace = gigagas_bench::trace::trace_file(results.trace.clone());
            output::write_atomic(out, trace.to_string().as_bytes())?;
            eprintln!("wrote {} (open in https://ui.perfetto.dev)", out.display());
        }
        if let Some(out) = &self.out {
            folder::write_into(out, &results)?;
            eprintln!("wrote {}", out.display());
        }
        fail_on_failures(&results, plan.dumps.len())
    }
}

impl RunArgs {
    /// Before any work: no output is an input, and every output location is writable.
    fn prepare_outputs(&self, plan: &Plan) -> Result<()> {
        let inputs: Vec<PathBuf> = plan.dumps.iter().map(|d| d.path.clone()).collect();
        let files = [("--json", &self.json), ("--trace", &self.trace)];
        let mut outputs: Vec<(&str, PathBuf)> = files
            .iter()
            .filter_map(|(flag, file)| Some((*flag, file.as_ref()?.clone())))
            .collect();
        if let Some(out) = &self.out {
            outputs.push(("--out", out.clone()));
            outputs.extend(folder::FILES.iter().map(|f| ("--out", out.join(f))));
        }
        output::check_not_inputs(&inputs, &outputs)?;
        for file in files.iter().filter_map(|(_, file)| file.as_ref()) {
            output::prepare_output_file(file, false)?;
        }
        if let Some(out) = &self.out {
            output::prepare_output_dir(out, false)?;
        }
        if let Some(dir) = self
            .cpu_profile
            .as_ref()
            .and_then(|p| p.parent())
            .filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow!("--cpu-profile: creating {}: {e}", dir.display()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use gigagas_bench::plan::plain;

    /// The cores of the machine these plans are made for.
    const TWO: NonZeroUsize = NonZeroUsize::new(2).unwrap();

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    fn plan(args: &[&str]) -> Result<Plan> {
        let cli = Cli::try_parse_from(std::iter::once("run").chain(args.iter().copied())).unwrap();
        cli.run.plan(TWO, |_| {
            Ok(vec![SuiteDump {
                path: "d.gigagas".into(),
                named: "d.gigagas".into(),
                label: None,
            }])
        })
    }

    /// The error of a minimal sweep config with `line` in place of its key's line.
    fn config_error(line: &str) -> String {
        let key = line.split(" =").next().unwrap();
        let mut lines = vec![
            "dumps = [\"d\"]",
            "threads = [1]",
            "batch = [1]",
            "schedulers = [\"ols\"]",
        ];
        lines.retain(|l| !l.starts_with(&format!("{key} =")));
        lines.push(line);
        gigagas_bench::config::parse(&lines.join("\n"), std::path::Path::new("c.toml"))
            .unwrap_err()
            .to_string()
    }

    /// The same settings make the same plan from flags and from a sweep config, defaults
    /// included (repeats, warm-up, the baseline, sample time, seed, I/O threads).
    #[test]
    fn flags_and_a_config_with_the_same_settings_make_the_same_plan() {
        let from_flags =
            plan(&["--threads", "1,2", "--batch", "1,42", "--scheduler", "ols"]).unwrap();
        let from_config = gigagas_bench::config::plan_of(
            &gigagas_bench::config::parse(
                "dumps = [\"d.gigagas\"]\nthreads = [1, 2]\nbatch = [1, 42]\nschedulers = [\"ols\"]\n",
                std::path::Path::new("c.toml"),
            )
            .unwrap(),
            std::path::Path::new("c.toml"),
            vec![SuiteDump {
                path: "d.gigagas".into(),
                named: "d.gigagas".into(),
                label: None,
            }],
        )
        .unwrap();
        assert_eq!(from_flags.repetition(), from_config.repetition());
        assert_eq!(from_flags.baselines(), from_config.baselines());
        assert_eq!(from_flags.points(TWO), from_config.points(TWO));
        assert_eq!(
            (from_flags.seed, from_flags.min_sample, from_flags.warmup),
            (from_config.seed, from_config.min_sample, from_config.warmup)
        );
        assert_eq!(from_flags.record(), from_config.record());
    }

    #[test]
    fn flags_and_config_keys_are_refused_with_the_same_message() {
        for (flags, toml, flag, key) in [
            (
                &["--threads", "1,0"][..],
                "threads = [1, 0]",
                "--threads",
                "threads",
            ),
            (
                &["--threads", "2000"],
                "threads = [2000]",
                "--threads",
                "threads",
            ),
            (&["--batch", "0"], "batch = [0]", "--batch", "batch"),
            (&["--repeats", "0"], "repeats = 0", "--repeats", "repeats"),
            (
                &["--repeats", "10001"],
                "repeats = 10001",
                "--repeats",
                "repeats",
            ),
            (&["--warmup", "1001"], "warmup = 1001", "--warmup", "warmup"),
            (
                &["--min-sample-ms", "60001"],
                "min_sample_ms = 60001",
                "--min-sample-ms",
                "min_sample_ms",
            ),
        ] {
            let from_flags = plan(flags).unwrap_err().to_string();
            let from_config = config_error(toml);
            let message = from_flags
                .strip_prefix(&format!("{flag}: "))
                .unwrap_or_else(|| panic!("{from_flags}"));
            assert_eq!(from_config, format!("c.toml: key `{key}`: {message}"));
        }
    }

    #[test]
    fn defaults_make_the_documented_grid() {
        let plan_of = plan;
        let plan = plan_of(&[]).unwrap();
        assert_eq!(plain(&plan.thread_counts(TWO)), [1, 2]);
        assert_eq!(plan.points(TWO).len(), 2 * 2 * 3);
        assert_eq!(plan.baselines().len(), 1);
        assert!(plan.collapse_single_transaction_blocks && plan.verify);
        let plan = plan_of(&["--scheduler", "ols,all", "--sequential"]).unwrap();
        assert_eq!(&*plan.schedulers, &gigagas_grid::SchedulerKind::ALL);
        assert!(plan.points(TWO).is_empty() && !plan.collapse_single_transaction_blocks);
    }
}
