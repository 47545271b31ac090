//! The whole-block simulator on real passes: a profile recorded from a one-thread store
//! pass with the root phase on holds every item, read and root unit of the pass, and its
//! projection at one worker fits inside the pass's timed window; a cold pass counts each
//! read's device reads, which a device curve caps, and its root units count their own;
//! on-demand points are refused.

use alloy_hardforks::EthereumHardfork;
use gigagas_bench::{Replay, StoreContext, bench_pass, whole_block::record_phases};
use gigagas_executor::{PassCache, RootStepKind};
use gigagas_grid::{
    BalDesign, CacheState, Point, SchedulerKind, StateRead, StateRootPhase, StoreRead,
};
use gigagas_sim::{
    BatchCut, DeviceCurve, PhaseRecord, PointError, ReadMode, Slowdown, WholeBlockPoint,
    whole_block::{self, project_point, read_mode},
};
use gigagas_workload::{GeneratorConfig, Profile};
use std::{num::NonZeroUsize, path::Path};

/// A generated dump with a witness (4 blocks), its replay and a store built from it.
fn store_and_replay() -> (tempfile::TempDir, Replay, StoreContext) {
    gigagas_executor::test_utils::install_kzg_verifier();
    let config = GeneratorConfig {
        profile: Profile::Erc20,
        blocks: 4,
        gas_per_block: 3_000_000,
        seed: 7,
        fork: EthereumHardfork::Prague,
        users: 30,
    };
    let dump = gigagas_workload::generate_with_witness(&config, |_, _| {}).unwrap();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(root).unwrap();
    let dir = tempfile::tempdir_in(root).unwrap();
    let info = gigagas_dump::write_dump(&dump, &dir.path().join("w.gigagas")).unwrap();
    let out = dir.path().join("store");
    gigagas_state::build_store(&dump, &info, &out, &Default::default(), &mut |_| {}).unwrap();
    let replay = Replay::new(dump).unwrap();
    let ctx = StoreContext::open(&out, info.checksum, NonZeroUsize::MIN).unwrap();
    (dir, replay, ctx)
}

#[test]
fn a_recorded_profile_holds_the_passs_phases() {
    let (_dir, replay, mut ctx) = store_and_replay();
    let one = NonZeroUsize::MIN;
    let cache = PassCache::new();
    for (read, phase, batch) in [
        (
            StoreRead::Prefetch(BalDesign::Keys),
            StateRootPhase::After,
            1,
        ),
        (
            StoreRead::Prefetch(BalDesign::Full),
            StateRootPhase::Overlapped,
            2,
        ),
        (
            StoreRead::Pipelined(BalDesign::Keys),
            StateRootPhase::After,
            2,
        ),
    ] {
        let point = whole_block::points(
            &[read],
            &[phase],
            whole_block::PersistChoice::NONE,
            CacheState::Warm,
            batch,
            SchedulerKind::Ols,
        )
        .unwrap()[0];
        let config = point.config(one);
        let (timings, _) =
            bench_pass(&replay, &cache, &Point::Bal(config), true, Some(&mut ctx)).unwrap();
        let record = record_phases(&replay, &timings, batch);
        let label = point.label();
        // Structure and counts: every item, one read per batch, every root unit.
        let batches = replay.batches(batch).len();
        assert_eq!(record.item_ns, timings.item_ns, "{label}");
        assert_eq!(record.read_ns.len(), batches, "{label}");
        assert_eq!(record.roots.len(), batches, "{label}");
        let spans = &timings.root.spans;
        let storage = spans
            .iter()
            .filter(|s| s.kind == RootStepKind::Storage)
            .count();
        let advances = spans
            .iter()
            .filter(|s| s.kind == RootStepKind::Accounts)
            .count();
        let subtries = spans
            .iter()
            .filter(|s| s.kind == RootStepKind::AccountSubtries)
            .count();
        let recorded = record.root_units();
        assert_eq!(recorded.storage, storage, "{label}");
        assert_eq!(recorded.accounts, subtries, "{label}");
        assert!(recorded.advances + recorded.stages <= advances, "{label}");
        let span_ns: u64 = spans.iter().map(|s| s.ns).sum();
        assert_eq!(record.root_work_ns(), span_ns, "{label}");
        assert_eq!(timings.root.blocks, replay.block_count(), "{label}");
        assert!(record.roots.iter().flatten().count() <= replay.block_count());
        // The median of one record is itself.
        assert_eq!(
            PhaseRecord::median(std::slice::from_ref(&record)),
            Some(record.clone())
        );

        // Projected at one worker on one core: the pass's items, reads and root units one
        // after another, each measured inside the window, so never beyond its wall time
        // (prefetch: the read, the items and the units are disjoint on one thread).
        let projected = project_point(
            replay.work_items(),
            &point,
            &record,
            one,
            one,
            Slowdown::NONE,
            None,
        )
        .unwrap();
        // Every root task (a storage task, an account unit) pays the model's unit cost.
        let tasks = spans
            .iter()
            .filter(|s| s.kind != RootStepKind::Accounts)
            .count() as u64;
        let unit_ns = tasks * gigagas_sim::phases::ROOT_UNIT_NS;
        let work: u64 = record.item_ns.iter().sum::<u64>() + span_ns + unit_ns;
        let measured =
            gigagas_bench::whole_block::measured_times(&timings, read_mode(&config.work).unwrap());
        if matches!(read, StoreRead::Prefetch(_)) {
            let reads: u64 = record.read_ns.iter().sum();
            assert!(
                (projected.wall_ns - (work + reads) as f64).abs() < 1.0,
                "{label}"
            );
            assert!(projected.wall_ns <= timings.wall_ns as f64, "{label}");
            assert_eq!(measured.exposed_read_ns, measured.read_ns, "{label}");
        } else {
            assert_eq!(read_mode(&config.work).unwrap(), ReadMode::Pipelined);
        }
        assert!(projected.wall_ns + 1.0 >= work as f64, "{label}");
        assert!(measured.exec_ns <= measured.wall_ns, "{label}");
        assert!(measured.root_ns > 0.0, "{label}");
    }
}

/// The committed witness dump from a store, cold as `--cache cold` makes it (the store's
/// files evicted before the pass and checked with mincore; the whole page cache is left
/// alone, for the other users of the machine): each batch's read records its device reads
/// (its readers' major page faults), one count per read span, at least one read faulted
/// pages in, and together with the root's after them (few: the reads took the root's trie
/// paths in) no more than the whole process did in the window. A warm pass after it
/// faults no more than the cold one. The record and its profile carry the counts, and a
/// slow device curve caps each projected read by them, as the model says.
#[test]
fn a_cold_store_pass_counts_each_reads_device_reads() {
    gigagas_executor::test_utils::install_kzg_verifier();
    let dump_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet-like-witness.gigagas");
    let (dump, info) = gigagas_dump::read_dump(&dump_path).unwrap();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(root).unwrap();
    let dir = tempfile::tempdir_in(root).unwrap();
    let out = dir.path().join("store");
    gigagas_state::build_store(&dump, &info, &out, &Default::default(), &mut |_| {}).unwrap();
    let replay = Replay::new(dump).unwrap();
    let mut ctx = StoreContext::open(&out, info.checksum, NonZeroUsize::new(2).unwrap())
        .unwrap()
        .without_drop_caches();
    let cache = PassCache::new();
    let one = NonZeroUsize::MIN;
    let batch = 10;
    let batches = replay.batches(batch).len();
    let point = |page_cache| {
        whole_block::points(
            &[StoreRead::Prefetch(BalDesign::Keys)],
            &[StateRootPhase::After],
            whole_block::PersistChoice::NONE,
            page_cache,
            batch,
            SchedulerKind::Ols,
        )
        .unwrap()[0]
    };
    let cold_point = point(CacheState::Cold);
    let pass = |ctx: &mut StoreContext, p: &WholeBlockPoint| {
        bench_pass(&replay, &cache, &Point::Bal(p.config(one)), true, Some(ctx)).map(|r| r.0)
    };
    // A store that cannot be evicted fails the test: it never passes unchecked.
    let cold = pass(&mut ctx, &cold_point).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cold.read_spans.len(), batches);
    assert_eq!(cold.read_faults.len(), cold.read_spans.len());
    let cold_faults: u64 = cold.read_faults.iter().sum();
    assert!(
        cold.read_faults.iter().any(|&f| f > 0),
        "no batch's read faulted a page in: {:?}",
        cold.read_faults
    );
    assert!(
        cold_faults + root_faults(&cold) <= cold.cpu.major_faults,
        "{cold_faults} device reads, the root's after them, the process's window {:?}",
        cold.cpu
    );

    // Warm (re-warmed untimed first): the same reads find their pages in memory.
    let warm = pass(&mut ctx, &point(CacheState::Warm)).unwrap();
    assert_eq!(warm.read_faults.len(), batches);
    let warm_faults: u64 = warm.read_faults.iter().sum();
    assert!(
        warm_faults <= cold_faults,
        "warm {:?}, cold {:?}",
        warm.read_faults,
        cold.read_faults
    );

    // The record and the profile carry the counts.
    let record = record_phases(&replay, &cold, batch);
    assert_eq!(record.read_faults, cold.read_faults);
    let cut = BatchCut {
        threads: one,
        scheduler: SchedulerKind::Ols,
    };
    let profile = record.profile(replay.work_items(), cut, Slowdown::NONE);
    let reads: Vec<u64> = profile.batches.iter().map(|b| b.read.reads).collect();
    assert_eq!(reads, cold.read_faults);

    // A device of 1000 reads/s: each read takes the longer of its time and 1 ms a device
    // read; without a curve, its time.
    let project = |device: Option<&DeviceCurve>| {
        project_point(
            replay.work_items(),
            &cold_point,
            &record,
            one,
            one,
            Slowdown::NONE,
            device,
        )
        .unwrap()
    };
    let slow = DeviceCurve::new(vec![(1, 1000.0)]).unwrap();
    let capped: f64 = record
        .read_ns
        .iter()
        .zip(&record.read_faults)
        .map(|(&ns, &faults)| (ns as f64).max(faults as f64 * 1e6))
        .sum();
    let uncapped: u64 = record.read_ns.iter().sum();
    assert!((project(None).read_ns - uncapped as f64).abs() < 1.0);
    assert!((project(Some(&slow)).read_ns - capped).abs() < 1e-9 * capped + 1.0);
    assert!(
        capped > uncapped as f64,
        "1 ms a device read caps some read"
    );
}

/// Read on demand, nothing reads a block's trie paths ahead of its root: a cold root after
/// the transactions faults its trie nodes in itself, and counts them in its units' spans.
#[test]
fn a_cold_root_counts_its_own_device_reads() {
    let (_dir, replay, ctx) = store_and_replay();
    let mut ctx = ctx.without_drop_caches();
    let config = gigagas_grid::RunConfig {
        work: gigagas_grid::TimedWork {
            state: StateRead::Store {
                read: StoreRead::OnDemand,
                cache: CacheState::Cold,
            },
            state_root: StateRootPhase::After,
            ..Default::default()
        },
        ..gigagas_grid::RunConfig::new(NonZeroUsize::MIN, 1, SchedulerKind::GasUsed)
    };
    let cache = PassCache::new();
    // A store that cannot be evicted fails the test: it never passes unchecked.
    let (cold, _) = bench_pass(&replay, &cache, &Point::Bal(config), true, Some(&mut ctx))
        .unwrap_or_else(|e| panic!("{e}"));
    let faults = root_faults(&cold);
    assert!(
        faults > 0,
        "the cold root faulted nothing in: {:?}",
        cold.root.reads
    );
    assert!(faults <= cold.cpu.major_faults, "{:?}", cold.cpu);
}

/// The root units' device reads in a pass, checked to be the sum of its units' spans.
fn root_faults(t: &gigagas_executor::RunTimings) -> u64 {
    let spans: u64 = t.root.spans.iter().map(|s| s.faults).sum();
    assert_eq!(t.root.faults, spans, "the pass's count is its units'");
    t.root.faults
}

#[test]
fn on_demand_and_memory_points_are_refused() {
    let err = whole_block::points(
        &[StoreRead::OnDemand],
        &[StateRootPhase::After],
        whole_block::PersistChoice::NONE,
        CacheState::Warm,
        1,
        SchedulerKind::Ols,
    )
    .unwrap_err();
    assert!(matches!(err, PointError::OnDemand));
    assert!(!err.to_string().contains('\n'));
    let memory = WholeBlockPoint {
        work: Default::default(),
        batch: 1,
        scheduler: SchedulerKind::Ols,
    };
    assert!(matches!(
        read_mode(&memory.work),
        Err(PointError::NotAStore)
    ));
}
