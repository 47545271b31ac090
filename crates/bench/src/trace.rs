//! A trace of one pass: Chrome trace-event JSON (opens in Perfetto or chrome://tracing)
//! with a track per worker and a slice per item, the batch boundaries, and, for a pass that
//! reads its state from a store before its batches (prefetch, pipelined), a track of those
//! reads — where a parallel pass waits, apart from its longest transaction. With the
//! state-root phase on, the root's units (storage tries, account trie) are slices on the
//! tracks of the workers that ran them.

use gigagas_executor::{ItemKind, Replay, RootStepKind, RunConfig, RunTimings};
use serde_json::{Value, json};

/// The trace events of one pass of `config` on `replay` (process `pid`, named `name`):
/// thread names (one track per worker), one complete (`X`) slice per item with its block,
/// kind, gas and position in the scheduler's order, one complete slice per unit of root
/// work (`root: storage`, `root: accounts`, with its block) on its worker's track, and one
/// instant event per batch start. Times are microseconds from the opening of the timed window, on the wall
/// clock: the gaps between batches are their verification, outside the window.
pub fn pass_events(
    replay: &Replay,
    config: &RunConfig,
    timings: &RunTimings,
    pid: u32,
    name: &str,
) -> Vec<Value> {
    let us = |ns: u64| ns as f64 / 1e3;
    let mut events = vec![json!({
        "ph": "M", "pid": pid, "name": "process_name", "args": { "name": name }
    })];
    // The kernel's share of the pass beside the workers' tracks: the whole process's CPU
    // time and page faults while the window was open, as counters at its start.
    let cpu = &timings.cpu;
    events.push(json!({
        "ph": "C", "pid": pid, "ts": 0.0, "name": "cpu in window (ms)",
        "args": { "user": cpu.user_ns as f64 / 1e6, "system": cpu.system_ns as f64 / 1e6 }
    }));
    events.push(json!({
        "ph": "C", "pid": pid, "ts": 0.0, "name": "page faults in window",
        "args": { "minor": cpu.minor_faults, "major": cpu.major_faults }
    }));
    for w in 0..config.threads.get() {
        events.push(json!({
            "ph": "M", "pid": pid, "tid": w, "name": "thread_name",
            "args": { "name": format!("worker {w}") }
        }));
    }
    // A pass that read its batches' state from a store: a track of its reads.
    if !timings.read_spans.is_empty() {
        let tid = config.threads.get();
        events.push(json!({
            "ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
            "args": { "name": "reading state" }
        }));
        for (k, &(start, ns)) in timings.read_spans.iter().enumerate() {
            events.push(json!({
                "ph": "X", "pid": pid, "tid": tid, "ts": us(start), "dur": us(ns),
                "name": format!("read {k}"),
                "args": { "read": k }
            }));
        }
    }
    // The state-root phase: each unit on the track of the worker that ran it.
    for span in &timings.root.spans {
        let (name, step) = match span.kind {
            RootStepKind::Storage => ("root: storage", "storage"),
            RootStepKind::AccountSubtries => ("root: account subtries", "account subtries"),
            RootStepKind::Accounts => ("root: accounts", "accounts"),
        };
        let block = ((span.block as usize) < replay.block_count())
            .then(|| replay.header(span.block as usize).number);
        events.push(json!({
            "ph": "X", "pid": pid, "tid": span.worker,
            "ts": us(span.start_ns), "dur": us(span.ns),
            "name": name, "cat": "root",
            "args": { "block_index": span.block, "block": block, "step": step }
        }));
    }
    // Each item's position in its batch's order: its rank by start time.
    let mut position = vec![0u32; replay.items().len()];
    for range in &timings.batches {
        let mut by_start: Vec<usize> = range.clone().collect();
        by_start.sort_by_key(|&i| timings.item_start_ns[i]);
        for (k, i) in by_start.into_iter().enumerate() {
            position[i] = k as u32;
        }
    }
    for (b, range) in timings.batches.iter().enumerate() {
        if let Some(&start) = timings.batch_start_ns.get(b) {
            events.push(json!({
                "ph": "i", "s": "p", "pid": pid, "tid": 0, "ts": us(start),
                "name": format!("batch {b} starts ({} items)", range.len())
            }));
        }
        for i in range.clone() {
            let item = &replay.items()[i];
            let block = replay.header(item.block as usize).number;
            let label = match item.kind {
                ItemKind::PreBlock => format!("block {block} pre-block"),
                ItemKind::Tx(t) => format!("block {block} tx {t}"),
                ItemKind::PostBlock => format!("block {block} post-block"),
            };
            events.push(json!({
                "ph": "X", "pid": pid, "tid": timings.item_worker[i],
                "ts": us(timings.item_start_ns[i]), "dur": us(timings.item_ns[i]),
                "name": label,
                "args": {
                    "block": block,
                    "item": item.kind.to_string(),
                    "gas_used": item.gas_used,
                    "batch": b,
                    "scheduler_position": position[i],
                }
            }));
        }
    }
    events
}

/// A whole trace file: `{"traceEvents": [...], "displayTimeUnit": "ms"}`.
pub fn trace_file(events: Vec<Value>) -> Value {
    json!({ "traceEvents": events, "displayTimeUnit": "ms" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gigagas_executor::{Parallel, Runner};

    /// Asserts that the slices (`"ph": "X"` events) on worker `tid`'s track do not overlap
    /// (1 µs of rounding allowed); `what` names the pass in the message.
    fn assert_track_does_not_overlap(slices: &[&Value], tid: u64, what: &str) {
        let mut mine: Vec<(f64, f64)> = slices
            .iter()
            .filter(|e| e["tid"] == tid)
            .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
            .collect();
        mine.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in mine.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0 + 1.0, "{what}: {w:?}");
        }
    }

    #[test]
    fn a_trace_has_one_slice_per_item_per_pass_and_is_json() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet.gigagas");
        let (dump, _) = gigagas_dump::read_dump(&path).unwrap();
        let replay = gigagas_executor::test_utils::prepare(dump).unwrap();
        let mut events = Vec::new();
        for (pid, (threads, batch)) in [(1, 1), (2, 42)].into_iter().enumerate() {
            let config = RunConfig::new(
                std::num::NonZeroUsize::new(threads).unwrap(),
                batch,
                gigagas_executor::SchedulerKind::GasUsed,
            );
            let timings = Parallel::new(&config).run(&replay, true).unwrap();
            let pass = pass_events(&replay, &config, &timings, pid as u32, "mainnet");
            let slices: Vec<&Value> = pass.iter().filter(|e| e["ph"] == "X").collect();
            assert_eq!(slices.len(), replay.items().len(), "one slice per item");
            let tids: std::collections::BTreeSet<u64> =
                slices.iter().map(|e| e["tid"].as_u64().unwrap()).collect();
            assert_eq!(tids.len(), threads, "a track per worker");
            let batches = pass.iter().filter(|e| e["ph"] == "i").count();
            assert_eq!(batches, replay.batches(batch).len());
            for tid in tids {
                assert_track_does_not_overlap(&slices, tid, &config.to_string());
            }
            events.extend(pass);
        }
        let text = trace_file(events).to_string();
        let back: Value = serde_json::from_str(&text).unwrap();
        assert!(back["traceEvents"].as_array().unwrap().len() > 2 * replay.items().len());
    }

    /// With the state-root phase on, every root unit is a slice on its worker's track,
    /// named by its step, with its block; a worker's items and root units do not overlap.
    #[test]
    fn a_trace_shows_the_root_work_on_the_workers_tracks() {
        use alloy_hardforks::EthereumHardfork;
        use gigagas_workload::{GeneratorConfig, Profile, generate_with_witness};
        let dump = generate_with_witness(
            &GeneratorConfig {
                profile: Profile::MainnetLike,
                blocks: 3,
                gas_per_block: 2_000_000,
                seed: 38,
                fork: EthereumHardfork::Prague,
                users: 80,
            },
            |_, _| {},
        )
        .unwrap();
        let replay = gigagas_executor::test_utils::prepare(dump).unwrap();
        for phase in [
            gigagas_grid::StateRootPhase::After,
            gigagas_grid::StateRootPhase::Overlapped,
        ] {
            let config = RunConfig::new(
                std::num::NonZeroUsize::new(2).unwrap(),
                2,
                gigagas_executor::SchedulerKind::GasUsed,
            )
            .with_work(gigagas_executor::TimedWork {
                state_root: phase,
                ..Default::default()
            });
            let timings = Parallel::new(&config).run(&replay, true).unwrap();
            assert!(!timings.root.spans.is_empty(), "{config}");
            let pass = pass_events(&replay, &config, &timings, 1, "generated");
            let roots: Vec<&Value> = pass.iter().filter(|e| e["cat"] == "root").collect();
            assert_eq!(roots.len(), timings.root.spans.len(), "one slice per unit");
            for (e, span) in roots.iter().zip(&timings.root.spans) {
                assert_eq!(e["ph"], "X");
                assert_eq!(e["tid"], span.worker);
                assert!(span.worker < 2, "{span:?}");
                assert_eq!(e["args"]["block_index"], span.block);
                let number = replay.header(span.block as usize).number;
                assert_eq!(e["args"]["block"], number);
                let name = match span.kind {
                    RootStepKind::Storage => "root: storage",
                    RootStepKind::AccountSubtries => "root: account subtries",
                    RootStepKind::Accounts => "root: accounts",
                };
                assert_eq!(e["name"], name);
            }
            assert!(roots.iter().any(|e| e["name"] == "root: accounts"));
            let slices: Vec<&Value> = pass.iter().filter(|e| e["ph"] == "X").collect();
            assert_eq!(slices.len(), replay.items().len() + roots.len());
            for tid in 0..2u64 {
                assert_track_does_not_overlap(&slices, tid, phase.name());
            }
        }
    }
}
