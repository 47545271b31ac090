//! The in-process CPU profile (`--cpu-profile`) and the figures it adds, on a small
//! generated dump: a profile of real passes names gigagas's own functions in its folded
//! stacks and its flamegraph; every measured sample carries the window's CPU time; the
//! oracle scheduler orders by times measured on the same replay.

use alloy_hardforks::EthereumHardfork;
use gigagas_bench::{
    Point, Repetition, RunConfig, SchedulerKind, bench_interleaved, profile_point,
};
use gigagas_executor::{PassCache, test_utils::prepare};
use gigagas_workload::{GeneratorConfig, Profile};
use std::{sync::Mutex, time::Duration};

/// One test at a time: one profiler per process (pprof's is global), and the profiles'
/// figures are not shared with other tests' passes.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn replay() -> gigagas_executor::Replay {
    let dump = gigagas_workload::generate(
        &GeneratorConfig {
            profile: Profile::Erc20,
            blocks: 3,
            gas_per_block: 4_000_000,
            seed: 5,
            fork: EthereumHardfork::Prague,
            users: 40,
        },
        |_, _| {},
    )
    .expect("generation succeeds");
    prepare(dump).expect("the dump prepares")
}

#[test]
fn a_profile_of_two_workers_names_gigagas_own_functions() {
    let _serial = serial();
    let replay = replay();
    let point = bal(2, 3, SchedulerKind::Ols);
    let profile = profiled(&replay, &point, 300);
    assert!(profile.passes >= 1 && profile.windows >= profile.passes as u64);
    assert!(
        profile.samples() > 0,
        "no sample in {} windows",
        profile.windows
    );
    let folded = profile.folded();
    assert!(
        folded.contains("gigagas_executor"),
        "the stacks name the executor: {}",
        &folded[..folded.len().min(2000)]
    );
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').expect("`stack count`");
        assert!(count.parse::<u64>().is_ok_and(|n| n > 0), "{line}");
        assert!(!stack.is_empty());
    }
    let dir = tempfile::tempdir().unwrap();
    let stem = gigagas_bench::profile_stem(&dir.path().join("prof.svg"), None, &point);
    let files = profile.write(&stem, "test").expect("written");
    let (folded_path, svg_path) = (files.folded.clone(), files.svg.clone());
    assert_eq!(std::fs::read_to_string(&folded_path).unwrap(), folded);
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("<svg"), "an SVG");
    assert!(
        svg.contains("gigagas_executor"),
        "the flamegraph names the executor"
    );
    assert!(svg_path.ends_with("prof-bal-2t-b3-ols.svg"));
    // The profile states its samples, the CPU seconds they cover and the rate, in the
    // flamegraph's subtitle and in `<stem>.json`.
    assert!(svg.contains("per CPU-s"), "the subtitle states the rate");
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files.stats).unwrap()).unwrap();
    assert_eq!(stats["samples"], profile.samples());
    assert!(stats["sampled_cpu_s"].as_f64().unwrap() > 0.0, "{stats}");
    assert!(
        stats["samples_per_cpu_s"].as_f64().unwrap() > 0.0,
        "{stats}"
    );
    eprintln!("{}", profile.summary());
}

#[test]
fn every_sample_records_the_cpu_time_of_its_windows() {
    let _serial = serial();
    let replay = replay();
    let points = [
        Point::Sequential(Default::default()),
        Point::Bal(RunConfig::new(
            std::num::NonZeroUsize::new(2).unwrap(),
            3,
            SchedulerKind::GasUsed,
        )),
    ];
    let rep = Repetition {
        warmup: 1,
        repeats: 2,
        verify: true,
        min_sample_ns: 0,
    };
    let sampled = bench_interleaved(&replay, &PassCache::new(), &points, rep, 1, None, |_| {})
        .expect("verified");
    for (point, s) in points.iter().zip(&sampled) {
        for m in &s.summary.repeats {
            assert!(
                m.cpu.user_s + m.cpu.system_s > 0.0,
                "{point}: the window used CPU time: {:?}",
                m.cpu
            );
            // The process's CPU time in the window cannot exceed every thread busy for the
            // whole window (the coordinator counted too), with slack for clock granularity.
            let threads = point.threads() as f64 + 1.0;
            assert!(
                m.cpu.user_s + m.cpu.system_s <= m.wall_s * threads + 0.01,
                "{point}: {:?} in a {} s window",
                m.cpu,
                m.wall_s
            );
        }
    }
}

#[test]
fn the_oracle_orders_by_the_measured_times() {
    let _serial = serial();
    let mut replay = replay();
    assert!(!replay.has_measured_times());
    gigagas_bench::bench::measure_item_times(&mut replay, true).expect("profiling passes verify");
    assert!(replay.has_measured_times());
    let items = &replay.items()[replay.block_items(0)];
    let mut order = Vec::new();
    let workers = std::num::NonZeroUsize::new(2).unwrap();
    gigagas_executor::scheduler(SchedulerKind::Oracle).order(items, workers, &mut order);
    // Heavy-first by the measured times: the items above the heavy share, longest first,
    // then the rest.
    let total: u64 = items.iter().map(|w| w.measured_ns.max(1)).sum();
    let heavy = total / (gigagas_executor::LEAD_SHARE * 2);
    let lead = order
        .iter()
        .take_while(|&&i| items[i as usize].measured_ns.max(1) > heavy)
        .count();
    let times: Vec<u64> = order[..lead]
        .iter()
        .map(|&i| items[i as usize].measured_ns)
        .collect();
    assert!(lead > 0, "a block has a heavy item");
    assert!(
        times.windows(2).all(|w| w[0] >= w[1]),
        "longest measured first: {times:?}"
    );
    // The rest by band of their measured time, largest first, block order within a band.
    let rest = &order[lead..];
    let key = |i: u32| {
        let band = gigagas_executor::band(items[i as usize].measured_ns.max(1));
        (std::cmp::Reverse(band), i)
    };
    assert!(
        rest.windows(2).all(|w| key(w[0]) < key(w[1])),
        "the rest by band, each in block order"
    );
    assert!(
        rest.iter()
            .all(|&i| items[i as usize].measured_ns.max(1) <= heavy),
        "no heavy item in the rest"
    );
    // And an oracle point replays and verifies like any other.
    let point = Point::Bal(RunConfig::new(
        std::num::NonZeroUsize::new(2).unwrap(),
        1,
        SchedulerKind::Oracle,
    ));
    gigagas_bench::bench_pass(&replay, &PassCache::new(), &point, true, None).expect("verified");
}

/// Each window arms a timer on every worker alive when it opens: a pool built by the
/// profiled passes themselves (no other test here runs 3 threads) is sampled, the caller
/// and both of the pass's pool workers (armed, whether or not a loaded machine gave each
/// of them CPU time in a window: how many *ran* is the machine's, not the profiler's).
#[cfg(target_os = "linux")]
#[test]
fn a_pool_built_while_profiling_is_sampled() {
    let _serial = serial();
    let replay = replay();
    let profile = profiled(&replay, &bal(3, 3, SchedulerKind::GasUsed), 300);
    assert_eq!(profile.armed_threads, 3, "{}", profile.summary());
    assert!((1..=3).contains(&profile.threads), "{}", profile.summary());
    assert!(
        profile.samples_of("gigagas-worker") > 0,
        "{}",
        profile.summary()
    );
}

/// `dumps/mainnet.gigagas`, prepared.
fn mainnet() -> gigagas_executor::Replay {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet.gigagas");
    let dump = gigagas_dump::read_dump(&path)
        .expect("the shipped dump loads")
        .0;
    prepare(dump).expect("the dump prepares")
}

/// The replay's point at `threads` threads, mega-blocks of `batch`, `scheduler`.
fn bal(threads: usize, batch: usize, scheduler: SchedulerKind) -> Point {
    Point::Bal(RunConfig::new(
        std::num::NonZeroUsize::new(threads).unwrap(),
        batch,
        scheduler,
    ))
}

/// The verified profile of `point` over at least `ms` of timed windows at the default
/// frequency; its summary printed.
fn profiled(
    replay: &gigagas_executor::Replay,
    point: &Point,
    ms: u64,
) -> gigagas_bench::CpuProfile {
    let p = profile_point(
        replay,
        &PassCache::new(),
        point,
        true,
        None,
        Duration::from_millis(ms),
        gigagas_bench::profile::default_frequency(),
    )
    .expect("the profiled passes verify");
    eprintln!("{point}: {}", p.summary());
    p
}

/// One CPU-time timer per thread, so a profile's samples per CPU-second do not
/// fall as threads are added (a process-wide `ITIMER_PROF` gave one sample per tick for
/// the whole process), and a 2-thread profile holds both workers' stacks. Asserted on
/// samples per CPU-second, which a busy shared machine does not move; samples per wall
/// second (about twice at 2 threads where 2 cores are free) are printed.
#[cfg(target_os = "linux")]
#[test]
fn two_threads_are_sampled_at_the_rate_of_one_per_cpu_second() {
    let _serial = serial();
    let replay = mainnet();
    let frequency = gigagas_bench::profile::default_frequency();
    // `dumps/mainnet.gigagas` as one mega-block.
    let one = profiled(&replay, &bal(1, 42, SchedulerKind::GasUsed), 1_500);
    let two = profiled(&replay, &bal(2, 42, SchedulerKind::GasUsed), 1_500);
    for p in [&one, &two] {
        // Every timer signal pprof recorded or dropped (inside libc, …), per CPU-second of
        // the sampled threads: every tick they ran, with slack for a loaded machine.
        let signals = p.signals.expect("counted on Linux") as f64;
        let per_cpu_s = signals * 1e9 / p.sampled_cpu_ns as f64;
        assert!(
            per_cpu_s >= 0.5 * frequency as f64 && per_cpu_s <= 1.1 * frequency as f64,
            "{per_cpu_s:.0} signals per CPU-second, asked {frequency}: {}",
            p.summary()
        );
        assert!(p.samples() as f64 >= 0.6 * signals, "{}", p.summary());
    }
    let ratio = two.rate() / one.rate();
    assert!(
        (0.8..=1.2).contains(&ratio),
        "samples per CPU-second at 2 threads {:.0}, at 1 {:.0} (ratio {ratio:.2})",
        two.rate(),
        one.rate()
    );
    eprintln!(
        "samples per wall-second: 2 threads / 1 thread = {:.2}",
        two.samples_per_wall_second() / one.samples_per_wall_second()
    );
    assert_eq!(one.threads, 1, "{}", one.summary());
    assert_eq!(two.threads, 2, "{}", two.summary());
    // Both workers: the pool's and the calling thread, which helps as the last worker (its
    // root is its name as the kernel keeps it, cut to 15 bytes).
    let roots: std::collections::BTreeSet<&str> = two
        .stacks
        .keys()
        .filter_map(|s| s.split(';').next())
        .collect();
    assert_eq!(roots.len(), 2, "the worker and the caller: {roots:?}");
    let caller = roots.iter().find(|r| **r != "gigagas-worker").unwrap();
    let (worker, caller) = (two.samples_of("gigagas-worker"), two.samples_of(caller));
    for (who, n) in [
        ("the pool's worker", worker),
        ("the calling thread", caller),
    ] {
        assert!(
            n as f64 >= 0.25 * two.samples() as f64,
            "{who} holds {n} of {} samples",
            two.samples()
        );
    }
    assert!(
        two.folded()
            .lines()
            .any(|l| l.starts_with("gigagas-worker;") && l.contains("gigagas_executor")),
        "the worker's stacks name the executor"
    );
}
