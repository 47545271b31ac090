//! End to end on a small generated dump: a sweep config is loaded, run (every run
//! verified), written as a results folder, re-rendered and merged; every SVG is valid XML
//! with its axis labels and legend; the simulator's projections are consistent.

use alloy_hardforks::EthereumHardfork;
use gigagas_bench::{
    SweepOptions, run_sweep,
    simulate::{self, workload},
};
use gigagas_executor::SchedulerKind;
use gigagas_report::folder;
use gigagas_workload::{GeneratorConfig, Profile};
use std::path::{Path, PathBuf};

/// 3 blocks of 4 Mgas, 40 users: quick to generate and replay.
fn small_dump(dir: &Path, profile: Profile) -> PathBuf {
    let config = GeneratorConfig {
        profile,
        blocks: 3,
        gas_per_block: 4_000_000,
        seed: 3,
        fork: EthereumHardfork::Prague,
        users: 40,
    };
    let dump = gigagas_workload::generate(&config, |_, _| {}).expect("generation succeeds");
    let path = dir.join("dumps").join("small.gigagas");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    gigagas_dump::write_dump(&dump, &path).expect("dump writes");
    path
}

const CONFIG: &str = r#"
description = "integration test"
dumps = ["../dumps/small.gigagas"]
threads = [1, 2]
batch = [1, 2]
schedulers = ["ols", "gas-used"]
sequential = true
warmup = 0
repeats = 2

[simulate]
threads = [1, 2, 8]
batch = [1, 2]
schedulers = ["ols", "gas-used"]
profile_repeats = 2
validate_threads = [1, 2]
"#;

fn svg_texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text)
        .unwrap_or_else(|e| panic!("{}: invalid XML: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect()
}

#[derive(Default)]
struct Counter {
    total: u64,
    done: u64,
    stages: usize,
}

impl gigagas_bench::Progress for Counter {
    fn total(&mut self, units: u64) {
        self.total = units;
    }
    fn stage(&mut self, _: &str) {
        self.stages += 1;
    }
    fn advance(&mut self, units: u64) {
        self.done += units;
    }
}

#[test]
fn sweep_writes_a_complete_results_folder() {
    // As gigagas's main does at start-up: the sweep replays dumps that may call point
    // evaluation.
    gigagas_executor::test_utils::install_kzg_verifier();
    let tmp = tempfile::tempdir().unwrap();
    small_dump(tmp.path(), Profile::MainnetLike);
    let configs = tmp.path().join("bench-configs");
    std::fs::create_dir_all(&configs).unwrap();
    let file = configs.join("small.toml");
    std::fs::write(&file, CONFIG).unwrap();

    let sweep = gigagas_bench::load(&file).expect("config loads");
    assert_eq!(sweep.name, "small");
    let mut progress = Counter::default();
    let results = run_sweep(
        &sweep,
        &SweepOptions {
            commit: "abc123".into(),
            note: Some("test".into()),
            build: Some(gigagas_report::provenance::BuildInfo {
                profile: "test-profile".into(),
                ..Default::default()
            }),
        },
        &mut progress,
    );
    assert_eq!(progress.done, progress.total, "progress reaches its total");
    assert!(progress.stages > 0);

    // 1 baseline + 2 threads × 2 batches × 2 schedulers, every repeat kept.
    assert_eq!(results.rows.len(), 1 + 8);
    assert!(results.rows[0].point.is_sequential());
    for r in &results.rows {
        assert!(r.verified);
        assert_eq!(r.summary.repeats.len(), 2);
        assert!(r.summary.median.ggas_per_s > 0.0);
        if !r.point.is_sequential() {
            // Paired round by round, the bare figure is the interval's median.
            let i = r.vs_sequential.expect("a paired ratio with its interval");
            assert_eq!(r.speedup_vs_sequential, Some(i.median));
            assert!(i.lo <= i.median && i.median <= i.hi && i.n == 2, "{i:?}");
            assert_eq!(r.vs_one_thread.is_some(), r.point.threads() > 1);
        }
        assert_eq!(r.timed_work, gigagas_grid::TIMED_WORK);
    }
    // Provenance: the real command line (this test binary's, portable), the build,
    // memory, load; the config's hash and the tree's state.
    let p = results.provenance.as_ref().expect("provenance recorded");
    let args: Vec<String> = std::env::args().collect();
    let start = std::env::current_dir().unwrap();
    assert_eq!(
        p.command_line,
        gigagas_report::provenance::portable_command(&args, Some(&start))
    );
    assert!(!p.command_line[0].contains('/'), "{:?}", p.command_line);
    assert_eq!(
        results.config_hash,
        Some(gigagas_report::results::config_hash(&results.config))
    );
    assert_eq!(results.machine.tree_clean, Some(true));
    assert_eq!(p.build.profile, "test-profile");
    assert!(p.peak_rss_bytes.is_some() && p.load_average_after.is_some());
    assert!(
        results.dumps[0].drift.is_some(),
        "two rounds give a drift figure"
    );
    assert_eq!(results.dumps.len(), 1);
    assert_eq!(results.dumps[0].checksum.len(), 16);
    assert_eq!(results.machine.commit, "abc123");
    assert_eq!(results.machine.note.as_deref(), Some("test"));

    // Simulation: projections for every point, validations at 1 and 2 threads.
    let sim = &results.simulations[0];
    assert_eq!(sim.projections.len(), 3 * 2 * 2);
    assert_eq!(sim.validations.len(), 2 * 2 * 2);
    for v in &sim.validations {
        assert!(
            v.predicted_s > 0.0 && v.measured_s > 0.0 && v.item_time_ratio > 0.0,
            "{v:?}"
        );
        let scaled = v.predicted_s * v.item_time_ratio / v.measured_s - 1.0;
        assert!((scaled - v.scheduling_error).abs() < 1e-9);
    }
    // Measured: the median item-time ratio at each validated count.
    let median = |t: usize| {
        let mut r: Vec<f64> = sim
            .validations
            .iter()
            .filter(|v| v.threads.get() == t)
            .map(|v| v.item_time_ratio)
            .collect();
        r.sort_by(f64::total_cmp);
        r[r.len() / 2]
    };
    // Concurrency's extra item time at 2 threads, split into a factor on a fitted share of
    // it and a fixed cost per item for the rest.
    let curve = sim.slowdown_curve();
    let share = sim.item_cost_scaled_share;
    assert!((0.0..=1.0).contains(&share), "{share}");
    assert!((curve.extra_at(2) - (median(2) / median(1) - 1.0).max(0.0)).abs() < 1e-12);
    assert_eq!(sim.item_cost_ns.len(), 1, "one validated count above one");
    let (two, cost) = sim.item_cost_ns[0];
    assert_eq!(two, 2);
    let extra = curve.extra_at(2);
    assert!(
        cost >= 0.0 && (cost == 0.0) == (extra == 0.0 || share == 1.0),
        "{cost} {extra}"
    );
    assert!((sim.item_slowdown - (1.0 + share * extra)).abs() < 1e-12);
    for p in &sim.projections {
        assert!(p.bound_s <= p.makespan_s * (1.0 + 1e-9), "{p:?}");
        assert!(p.longest_share <= 1.0 + 1e-9);
        // Each projection takes the model at its thread count: nothing at one thread, and
        // beyond the largest validated count (2) the model at 2.
        if p.threads > 1 {
            assert_eq!(
                (p.item_slowdown, p.item_cost_ns),
                (sim.item_slowdown, cost),
                "{p:?}"
            );
        } else {
            assert_eq!((p.item_slowdown, p.item_cost_ns), (1.0, 0.0), "{p:?}");
        }
    }
    // Every projection carries its order's penalty from the one-thread validation runs
    // (ols's is 1 by definition).
    let penalties = gigagas_sim::execution::order_penalties(&sim.validations);
    for p in &sim.projections {
        let penalty = penalties
            .iter()
            .find(|&&(b, s, _)| b == p.batch && s == p.scheduler)
            .map_or(1.0, |&(_, _, p)| p);
        assert_eq!(p.order_penalty, penalty, "{p:?}");
        if p.scheduler == SchedulerKind::Ols {
            assert_eq!(p.order_penalty, 1.0);
        }
    }
    for v in &sim.validations {
        // Modelled: the profile at the 1-thread ratio plus the cost, times the order's
        // penalty, scheduled again; at one thread that is the projection times the ratio
        // and the penalty.
        let modelled = v
            .modelled_s
            .expect("the simulator records its model's time");
        assert!(modelled > 0.0, "{v:?}");
        if v.threads.get() == 1 {
            let penalty = penalties
                .iter()
                .find(|&&(b, s, _)| b == v.batch && s == v.scheduler)
                .map_or(1.0, |&(_, _, p)| p);
            let scaled = v.predicted_s * curve.ratio_at(1) * penalty;
            assert!(
                (modelled - scaled).abs() <= 1e-6 * scaled.max(1.0) + 1e-9,
                "{v:?}"
            );
        }
    }
    assert!(sim.item_slowdown_source.starts_with("measured"));
    assert_eq!(sim.assumptions.len(), gigagas_sim::ASSUMPTIONS.len());

    // Results folder.
    let root = tmp.path().join("results");
    let dir = folder::write_results_dir(&root, &results).unwrap();
    assert!(dir.starts_with(root.join("small")));
    assert!(
        dir.file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with("-abc123")
    );
    let table = std::fs::read_to_string(dir.join("table.md")).unwrap();
    for col in [
        "threads",
        "scheduler",
        "batch",
        "avg batch Mgas",
        "MGas/s",
        "longest tx",
        "total",
        "bound",
        "eff",
    ] {
        assert!(table.contains(col), "table.md lacks {col}");
    }
    assert!(table.contains("Schedule simulation") && table.contains("Model assumptions"));
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + results.rows.len());
    assert!(dir.join("simulation.csv").is_file());

    let expect = [
        (
            "ggas-vs-threads-batch1.svg",
            vec![
                "threads",
                "GGas/s",
                "ols",
                "gas-used",
                "ideal linear",
                "critical-path bound",
            ],
        ),
        (
            "ggas-vs-threads-batch2.svg",
            vec!["threads", "GGas/s", "ideal linear", "critical-path bound"],
        ),
        (
            "ggas-vs-batch-threads2.svg",
            vec![
                "batch size (blocks per mega-block)",
                "GGas/s",
                "ols",
                "gas-used",
            ],
        ),
        (
            "longest-tx-share.svg",
            vec![
                "threads",
                "longest tx / total (%)",
                "ols, batch 1",
                "gas-used, batch 2",
            ],
        ),
        (
            "simulated-ggas-vs-threads.svg",
            vec![
                "virtual threads",
                "projected GGas/s",
                "projected: batch 2, gas-used",
                "measured (validation runs)",
            ],
        ),
    ];
    for (name, wants) in expect {
        let texts = svg_texts(&dir.join(name));
        for w in wants {
            assert!(
                texts.iter().any(|t| t == w),
                "{name}: no text {w:?} in {texts:?}"
            );
        }
    }
    // The timeline of the widest point's longest batch: 2 threads, batch 1, every item of
    // the batch in its runs, drawn with a row per worker.
    let t = results
        .timeline
        .as_ref()
        .expect("a timeline of the widest point");
    assert_eq!(t.threads.get(), 2);
    assert!(t.config.starts_with("BAL 2t b1 "), "{}", t.config);
    assert_eq!(
        t.runs.iter().map(|r| r.items as usize).sum::<usize>(),
        t.items
    );
    let texts = svg_texts(&dir.join("timeline.svg"));
    for w in ["worker 0", "worker 1", "time since the batch started (ms)"] {
        assert!(
            texts.iter().any(|t| t == w),
            "timeline.svg: no {w:?} in {texts:?}"
        );
    }
    assert!(
        table.contains("timeline.svg"),
        "table.md links the timeline"
    );
    // Every SVG in the folder parses.
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "svg") {
            svg_texts(&p);
        }
    }

    // Re-render from results.json alone.
    for f in ["table.md", "results.csv", "ggas-vs-threads-batch1.svg"] {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    let again = folder::render_dir(&dir).unwrap();
    assert_eq!(again, results);
    assert_eq!(
        std::fs::read_to_string(dir.join("table.md")).unwrap(),
        table
    );

    // Merge with a second "machine".
    let mut other = results.clone();
    other.machine.cpu = "Other CPU".into();
    other.machine.commit = "def456".into();
    let dir2 = folder::write_results_dir(&root, &other).unwrap();
    let merged = tmp.path().join("merged");
    folder::merge_dirs(&[dir.clone(), dir2], &merged).unwrap();
    let md = std::fs::read_to_string(merged.join("table.md")).unwrap();
    assert!(md.contains("| machine |") && md.contains("| M1 |") && md.contains("| M2 |"));
    let texts = svg_texts(&merged.join("ggas-vs-threads-batch1.svg"));
    assert!(texts.iter().any(|t| t == "M2 ols"), "{texts:?}");
    assert!(merged.join("timeline-M1.svg").is_file() && merged.join("timeline-M2.svg").is_file());
}

/// Two labelled dumps of one name (the generator's profile), each block's root after its
/// transactions: every measured sample keeps its batches (the median one's are the row's
/// `per_batch`), the labels tell the dumps apart in every CSV key, and the per-block latency
/// is taken over both samples, with an interval.
#[test]
fn labelled_dumps_keep_every_sample_s_blocks() {
    gigagas_executor::test_utils::install_kzg_verifier();
    let tmp = tempfile::tempdir().unwrap();
    let dumps = tmp.path().join("dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    for (name, seed) in [("a.gigagas", 3), ("b.gigagas", 4)] {
        let config = GeneratorConfig {
            profile: Profile::MainnetLike,
            blocks: 3,
            gas_per_block: 2_000_000,
            seed,
            fork: EthereumHardfork::Prague,
            users: 20,
        };
        let dump = gigagas_workload::generate_with_witness(&config, |_, _| {})
            .expect("generation succeeds");
        gigagas_dump::write_dump(&dump, &dumps.join(name)).expect("dump writes");
    }
    let file = tmp.path().join("labelled.toml");
    std::fs::write(
        &file,
        r#"
dumps = [{ path = "dumps/a.gigagas", label = "small A" }, { path = "dumps/b.gigagas", label = "small B" }]
threads = [1, 2]
batch = [1]
schedulers = ["gas-used"]
state_root = ["after"]
sequential = false
warmup = 0
repeats = 2
min_sample_ms = 0
"#,
    )
    .unwrap();
    let sweep = gigagas_bench::load(&file).expect("config loads");
    let results = run_sweep(
        &sweep,
        &SweepOptions {
            commit: "abc123".into(),
            note: None,
            build: None,
        },
        &mut Counter::default(),
    );
    assert!(results.failures.is_empty(), "{:?}", results.failures);
    let labels: Vec<Option<&str>> = results.dumps.iter().map(|d| d.label.as_deref()).collect();
    assert_eq!(labels, [Some("small A"), Some("small B")]);
    assert_eq!(
        results.dumps[0].name, results.dumps[1].name,
        "one profile, one name"
    );
    assert_eq!(results.rows.len(), 4);
    for r in &results.rows {
        assert_eq!(r.sample_batches.len(), 2, "every sample's batches");
        assert!(r.sample_batches.iter().all(|b| b.len() == 3));
        let median = r.summary.median_index().unwrap();
        assert_eq!(r.per_batch, r.sample_batches[median]);
        let l = gigagas_report::latency::block_latency(r).expect("a latency");
        assert!(l.every_sample && l.samples == 2 && l.batches == 3);
        assert!(
            l.wall_s.mean_bounds.is_some(),
            "an interval over two samples"
        );
    }
    let sets = std::slice::from_ref(&results);
    let csv = gigagas_report::table::render_csv(sets);
    assert!(
        csv.contains(",small A,") && csv.contains(",small B,"),
        "{csv}"
    );
    let blocks = gigagas_report::table::render_blocks_csv(sets);
    assert_eq!(blocks.lines().count(), 1 + 4 * 2 * 3, "{blocks}");
    let md = gigagas_report::table::render_markdown(sets, &[]);
    assert!(
        md.contains("| small A | 1 |") && md.contains("| small B | 2 |"),
        "{md}"
    );
    assert!(md.contains("| 3 × 2 |"), "{md}");
}

#[test]
fn simulator_matches_list_scheduling_by_hand() {
    let tmp = tempfile::tempdir().unwrap();
    let path = small_dump(tmp.path(), Profile::Adversarial);
    let (dump, _) = gigagas_dump::read_dump(&path).unwrap();
    let replay = gigagas_executor::test_utils::prepare(dump.clone()).unwrap();
    // A synthetic profile: every item takes 1 µs plus 1 µs per 10 kgas, so the projection
    // can be checked against a hand computation.
    let item_ns: Vec<u64> = replay
        .items()
        .iter()
        .map(|w| 1_000 + w.gas_used / 10)
        .collect();
    let profile = gigagas_sim::ItemProfile {
        item_ns: item_ns.clone(),
        runs: 1,
        run_work_ns: vec![item_ns.iter().sum()],
    };
    let work: u64 = item_ns.iter().sum();
    for s in SchedulerKind::ALL {
        let one = gigagas_sim::execution::project(workload(&replay), &profile, n(1), 1, s);
        assert!(
            (one.makespan_s - work as f64 / 1e9).abs() < 1e-12,
            "one worker: makespan = total work"
        );
        let many = gigagas_sim::execution::project(workload(&replay), &profile, n(10_000), 1, s);
        assert!(
            (many.makespan_s - many.longest_tx_s).abs() < 1e-12,
            "unbounded workers: makespan = longest"
        );
        assert!((many.longest_share - 1.0).abs() < 1e-9);
    }
    // A stated item slowdown scales every projection above one thread, and only those.
    for s in SchedulerKind::ALL {
        let plain = gigagas_sim::execution::project(workload(&replay), &profile, n(2), 1, s);
        let slowed =
            gigagas_sim::execution::project_slowed(workload(&replay), &profile, n(2), 1, s, 1.25);
        assert!((slowed.makespan_s - 1.25 * plain.makespan_s).abs() < 1e-12);
        assert!((slowed.bound_s - 1.25 * plain.bound_s).abs() < 1e-12);
        assert!((slowed.ggas_per_s * 1.25 - plain.ggas_per_s).abs() < 1e-6);
        assert_eq!(slowed.item_slowdown, 1.25);
        let one =
            gigagas_sim::execution::project_slowed(workload(&replay), &profile, n(1), 1, s, 1.25);
        assert!((one.makespan_s - work as f64 / 1e9).abs() < 1e-12);
        assert_eq!(one.item_slowdown, 1.0);
        // A cost added to every item: one worker pays it for every item; unbounded
        // workers once per batch (each batch's longest item).
        let items = replay.items().len() as f64;
        let costly = gigagas_sim::execution::project_with(
            workload(&replay),
            &profile,
            n(1),
            1,
            s,
            1.0,
            1000.0,
        );
        assert!((costly.makespan_s - (work as f64 + items * 1000.0) / 1e9).abs() < 1e-9);
        assert_eq!(costly.item_cost_ns, 1000.0);
        let wide = gigagas_sim::execution::project_with(
            workload(&replay),
            &profile,
            n(10_000),
            1,
            s,
            1.0,
            1000.0,
        );
        let plain_wide =
            gigagas_sim::execution::project(workload(&replay), &profile, n(10_000), 1, s);
        let batches = replay.batches(1).len() as f64;
        assert!((wide.makespan_s - (plain_wide.makespan_s + batches * 1000.0 / 1e9)).abs() < 1e-9);
    }
    // The share of concurrency's cost that scales with item length is recovered from
    // validation runs made by a known model (a quarter scaled, the rest a fixed cost).
    let curve = gigagas_sim::report::SlowdownCurve::from_validations(&[
        validation_at(1, 1.1),
        validation_at(2, 1.4),
        validation_at(4, 2.2),
    ]);
    let truth = gigagas_sim::report::ItemCost::new(
        curve.clone(),
        0.25,
        work as f64 / 1e9,
        replay.items().len(),
    );
    let mut made = Vec::new();
    for (t, s) in [
        (2, SchedulerKind::Ols),
        (4, SchedulerKind::Ols),
        (4, SchedulerKind::GasUsed),
    ] {
        let (factor, added) = truth.at_run_scale(t);
        let v = gigagas_sim::execution::project_with(
            workload(&replay),
            &profile,
            n(t),
            1,
            s,
            factor,
            added,
        );
        made.push(gigagas_sim::report::Validation {
            threads: n(t),
            scheduler: s,
            measured_s: v.makespan_s,
            ..validation_at(t, if t == 2 { 1.4 } else { 2.2 })
        });
    }
    let fitted = gigagas_sim::execution::fit_item_cost(workload(&replay), &profile, &curve, &made);
    assert_eq!(fitted.scaled(), 0.25);
    // Adversarial blocks: a big item last. Largest-first on 2 workers is never worse than
    // block order, and here strictly better.
    let ols =
        gigagas_sim::execution::project(workload(&replay), &profile, n(2), 1, SchedulerKind::Ols);
    let lpt = gigagas_sim::execution::project(
        workload(&replay),
        &profile,
        n(2),
        1,
        SchedulerKind::GasUsed,
    );
    assert!(
        lpt.makespan_s < ols.makespan_s,
        "gas-used {} vs ols {}",
        lpt.makespan_s,
        ols.makespan_s
    );
    // Real profile: verified one-thread runs give one time per item.
    let verified_only = gigagas_grid::Repetition {
        warmup: 0,
        repeats: 1,
        verify: true,
        min_sample_ns: 0,
    };
    let runs = std::num::NonZeroUsize::new(2).unwrap();
    let (real, measured) =
        simulate::profile_and_measure(&replay, runs, &[], verified_only, |_| {}).unwrap();
    assert_eq!((real.runs, real.run_work_ns.len()), (2, 2));
    assert!(measured.0.is_empty());
    assert_eq!(real.item_ns.len(), replay.items().len());
    assert!(gigagas_sim::execution::tx_share(workload(&replay), &real) > 0.5);
}

#[test]
fn bad_configs_name_file_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.toml");
    for (text, want) in [
        (
            "dumps = [\"x\"]\nthreads = [1]\nbatch = [1]\nschedulers = [\"ols\"]\nthread = [2]\n",
            "unknown field `thread`",
        ),
        (
            "dumps = [\"x\"]\nthreads = []\nbatch = [1]\nschedulers = [\"ols\"]\n",
            "key `threads`: empty list",
        ),
        (
            "dumps = [\"x\"]\nthreads = [0]\nbatch = [1]\nschedulers = [\"ols\"]\n",
            "key `threads`: 0 is not a thread count",
        ),
        (
            "dumps = [\"x.gigagas\"]\nthreads = [1]\nbatch = [1]\nschedulers = [\"ols\"]\n",
            "key `dumps`: x.gigagas: no such file",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let e = gigagas_bench::load(&file).unwrap_err().to_string();
        assert!(e.starts_with(&file.display().to_string()), "{e}");
        assert!(e.contains(want), "{e} lacks {want}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
    }
}

#[test]
fn shipped_configs_are_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench-configs");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let config = match gigagas_bench::load(&p) {
                Ok(s) => s.plan.record(),
                // Suites of imported dumps are gitignored, dumps imported under target/ and
                // state stores are built, not committed: without them, check the file alone.
                Err(e)
                    if e.to_string()
                        .contains("dumps/benchmark-compute: no such file")
                        || e.to_string().contains("no state store at")
                        || (e.to_string().contains("../target/")
                            && e.to_string().contains("no such file")) =>
                {
                    eprintln!("{e} (not imported here: checking the config alone)");
                    let text = std::fs::read_to_string(&p).unwrap();
                    gigagas_bench::config::parse(&text, &p).unwrap_or_else(|e| panic!("{e}"))
                }
                Err(e) => panic!("{e}"),
            };
            // Configs for the 16-core machine (`*-16c.toml`, run by
            // bench-configs/run-16-core.sh) go to 16 threads; the rest run on 2 cores.
            let sixteen = p
                .file_stem()
                .is_some_and(|s| s.to_string_lossy().ends_with("-16c"));
            let max_threads = if sixteen { 16 } else { 2 };
            assert!(
                config.repeats >= 3 && config.threads.iter().all(|&t| t <= max_threads),
                "{}: keep shipped configs small",
                p.display()
            );
            n += 1;
        }
    }
    assert!(n >= 6, "six shipped configs, found {n}");
}

/// A validation at `threads` whose items ran `ratio` times the profile (batch 1, ols), for
/// building a slowdown curve.
fn validation_at(threads: usize, ratio: f64) -> gigagas_sim::report::Validation {
    gigagas_sim::report::Validation {
        threads: n(threads),
        batch: 1,
        scheduler: SchedulerKind::Ols,
        predicted_s: 1.0,
        measured_s: 1.0,
        error: 0.0,
        measured_work_s: ratio,
        item_time_ratio: ratio,
        scheduling_error: 0.0,
        modelled_s: None,
    }
}

/// A thread count.
fn n(threads: usize) -> std::num::NonZeroUsize {
    std::num::NonZeroUsize::new(threads).expect("a thread count is at least 1")
}

/// A suite decides whether to shorten its grid for single-transaction blocks from each
/// dump's streamed summary, before any dump loads: the shape it reads is the
/// prepared replay's, for a dump of one transaction per block and one of many.
#[test]
fn a_dump_s_streamed_shape_is_its_replay_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps");
    let compute = std::fs::read_dir(root.join("benchmark-compute"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "gigagas"))
        .min()
        .unwrap();
    for path in [root.join("mainnet.gigagas"), compute] {
        let (summary, _) = gigagas_dump::inspect_dump(&path).unwrap();
        let streamed = gigagas_bench::plan::DumpShape::of_summary(&summary);
        let (dump, _) = gigagas_dump::read_dump(&path).unwrap();
        let replay = gigagas_executor::test_utils::prepare(dump).unwrap();
        assert_eq!(
            streamed,
            gigagas_bench::plan::DumpShape::of(&replay),
            "{}",
            path.display()
        );
        assert!(streamed.most_transactions >= 1);
    }
}
