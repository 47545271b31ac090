//! Capturing the timeline of a parallel pass's longest batch (drawn by
//! [`gigagas_report::timeline`]).

use gigagas_executor::{ItemKind, Replay, RunConfig, RunTimings};
use gigagas_report::timeline::{BusyRun, LongestItem, RESOLUTION, Timeline};

/// The longest batch (by wall time) of a pass of `config` on `replay` recorded in
/// `timings`; `None` for a pass without per-item records (a sequential run) or
/// without batches.
pub fn timeline_of(
    replay: &Replay,
    config: &RunConfig,
    timings: &RunTimings,
    dump: &str,
) -> Option<Timeline> {
    let n = replay.items().len();
    if timings.item_start_ns.len() != n || timings.item_worker.len() != n {
        return None;
    }
    let (b, range) = timings
        .batches
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .max_by_key(|(b, _)| timings.batch_wall_ns.get(*b).copied().unwrap_or(0))?;
    let start = *timings.batch_start_ns.get(b)?;
    let span_ns = timings.batch_wall_ns.get(b).copied().unwrap_or(0);
    let mut order: Vec<usize> = range.clone().collect();
    order.sort_by_key(|&i| (timings.item_worker[i], timings.item_start_ns[i]));
    let rel = |i: usize| timings.item_start_ns[i].saturating_sub(start);
    let system = |i: usize| !matches!(replay.items()[i].kind, ItemKind::Tx(_));
    let gap = (span_ns as f64 * RESOLUTION) as u64;
    let mut runs: Vec<BusyRun> = Vec::new();
    for &i in &order {
        let (s, ns) = (rel(i), timings.item_ns[i]);
        match runs.last_mut() {
            Some(r)
                if r.worker == timings.item_worker[i]
                    && r.system == system(i)
                    && s <= r.start_ns + r.ns + gap =>
            {
                r.ns = r.ns.max(s + ns - r.start_ns);
                r.items += 1;
            }
            _ => runs.push(BusyRun {
                worker: timings.item_worker[i],
                start_ns: s,
                ns,
                items: 1,
                system: system(i),
            }),
        }
    }
    let l = range.clone().max_by_key(|&i| timings.item_ns[i])?;
    let item = &replay.items()[l];
    Some(Timeline {
        dump: dump.to_string(),
        config: config.to_string(),
        threads: config.threads,
        batch: b,
        batches: timings.batches.len(),
        items: range.len(),
        gas: range.clone().map(|i| replay.items()[i].gas_used).sum(),
        span_ns,
        busy_ns: range.clone().map(|i| timings.item_ns[i]).sum(),
        longest: LongestItem {
            block: replay.header(item.block as usize).number,
            item: item.kind.to_string(),
            worker: timings.item_worker[l],
            start_ns: rel(l),
            ns: timings.item_ns[l],
            gas: item.gas_used,
        },
        runs,
        read_ns: timings
            .read_spans
            .iter()
            .filter(|(at, _)| (start..start + span_ns.max(1)).contains(at))
            .map(|(_, ns)| ns)
            .sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gigagas_executor::SchedulerKind;
    use gigagas_executor::{Parallel, Runner};
    use gigagas_report::timeline::Timeline;

    fn mainnet() -> Replay {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet.gigagas");
        let (dump, _) = gigagas_dump::read_dump(&path).unwrap();
        gigagas_executor::test_utils::prepare(dump).unwrap()
    }

    #[test]
    fn the_longest_batch_keeps_every_item_and_the_longest_one() {
        let replay = mainnet();
        let config = RunConfig::new(
            std::num::NonZeroUsize::new(2).unwrap(),
            1,
            SchedulerKind::GasUsed,
        );
        let timings = Parallel::new(&config).run(&replay, true).unwrap();
        let t = timeline_of(&replay, &config, &timings, "mainnet").unwrap();
        // The drawn batch is the pass's longest.
        assert_eq!(
            t.span_ns,
            *timings.batch_wall_ns.iter().max().unwrap(),
            "longest batch"
        );
        let range = timings.batches[t.batch].clone();
        assert_eq!(t.items, range.len());
        // Merging loses no item, and runs of one worker do not overlap.
        assert_eq!(
            t.runs.iter().map(|r| r.items as usize).sum::<usize>(),
            t.items
        );
        for w in t.runs.windows(2) {
            if w[0].worker == w[1].worker {
                assert!(w[0].start_ns + w[0].ns <= w[1].start_ns, "{w:?}");
            }
        }
        // Busy time inside the runs' extents; the longest item is the batch's longest.
        let extent: u64 = t.runs.iter().map(|r| r.ns).sum();
        assert!(t.busy_ns <= extent, "{} > {extent}", t.busy_ns);
        let longest = range.clone().map(|i| timings.item_ns[i]).max().unwrap();
        assert_eq!(t.longest.ns, longest);
        assert!(t.utilisation() > 0.0 && t.utilisation() <= 1.0 + 1e-9);
        assert_eq!(t.idle_tails_ns().len(), 2);
        // A run ends by the batch's end (small slack: the span is taken by the scheduler).
        assert!(t.idle_tails_ns().iter().all(|&tail| tail <= t.span_ns));

        let svg = t.render_svg().unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.contains("worker 0") && svg.contains("worker 1"));
        let rects = svg.matches("<rect").count();
        assert!(
            rects > t.runs.len(),
            "a bar per run: {rects} rects, {} runs",
            t.runs.len()
        );

        // It survives results.json.
        let back: Timeline = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn a_mega_block_pass_is_one_batch_and_a_better_picture_than_one_worker() {
        let replay = mainnet();
        let pass = |threads| {
            let config = RunConfig::new(
                std::num::NonZeroUsize::new(threads).unwrap(),
                64,
                SchedulerKind::Ols,
            );
            let timings = Parallel::new(&config).run(&replay, true).unwrap();
            timeline_of(&replay, &config, &timings, "mainnet").unwrap()
        };
        let (one, two) = (pass(1), pass(2));
        assert_eq!(
            (one.batches, one.batch, one.items),
            (1, 0, replay.items().len())
        );
        assert_eq!(one.runs.iter().map(|r| r.worker).max(), Some(0));
        assert!(two.better_than(&one) && !one.better_than(&two));
        // One worker never waits inside a run-merged picture: its runs cover its busy time.
        assert!(one.utilisation() > 0.5, "{}", one.utilisation());
    }
}
