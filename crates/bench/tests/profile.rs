//! The in-process CPU profile (`--cpu-profile`) and the figures issue 36 added, on a small
//! generated dump: a profile of real passes names gigagas's own functions in its folded
//! stacks and its flamegraph; every measured sample carries the window's CPU time; the
//! oracle scheduler orders by times measured on the same replay.

use alloy_hardforks::EthereumHardfork;
use gigagas_bench::{
    Point, Repetition, RunConfig, SchedulerKind, bench_interleaved, profile_point,
};
use gigagas_executor::test_utils::prepare;
use gigagas_workload::{GeneratorConfig, Profile};
use std::time::Duration;

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
    let replay = replay();
    let point = Point::Bal(RunConfig::new(
        std::num::NonZeroUsize::new(2).unwrap(),
        3,
        SchedulerKind::Ols,
    ));
    let profile = profile_point(
        &replay,
        &point,
        true,
        None,
        Duration::from_millis(300),
        gigagas_bench::profile::DEFAULT_FREQUENCY,
    )
    .expect("the profiled passes verify");
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
    let (folded_path, svg_path) = profile.write(&stem, "test").expect("written");
    assert_eq!(std::fs::read_to_string(&folded_path).unwrap(), folded);
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("<svg"), "an SVG");
    assert!(
        svg.contains("gigagas_executor"),
        "the flamegraph names the executor"
    );
    assert!(svg_path.ends_with("prof-bal-2t-b3-ols.svg"));
}

#[test]
fn every_sample_records_the_cpu_time_of_its_windows() {
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
    let sampled = bench_interleaved(&replay, &points, rep, 1, None, |_| {}).expect("verified");
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
    let mut replay = replay();
    assert!(!replay.has_measured_times());
    gigagas_bench::bench::measure_item_times(&mut replay, true).expect("profiling passes verify");
    assert!(replay.has_measured_times());
    let items = &replay.items()[replay.block_items(0)];
    let mut order = Vec::new();
    gigagas_executor::scheduler(SchedulerKind::Oracle).order(items, &mut order);
    let times: Vec<u64> = order
        .iter()
        .map(|&i| items[i as usize].measured_ns)
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] >= w[1]),
        "longest measured first: {times:?}"
    );
    // And an oracle point replays and verifies like any other.
    let point = Point::Bal(RunConfig::new(
        std::num::NonZeroUsize::new(2).unwrap(),
        1,
        SchedulerKind::Oracle,
    ));
    gigagas_bench::bench_pass(&replay, &point, true, None).expect("verified");
}
