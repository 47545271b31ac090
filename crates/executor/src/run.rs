//! Timed runs: the worker pool, mega-blocks and the sequential baseline.

use crate::{
    exec::{ExecError, ItemExecutor, ItemOutput},
    plan::Replay,
    schedule::SchedulerKind,
};
use std::{
    sync::{
        Barrier, OnceLock,
        atomic::{AtomicUsize, Ordering},
    },
    time::Instant,
};

/// One point of the benchmark grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunConfig {
    /// Worker threads.
    pub threads: usize,
    /// Blocks per mega-block.
    pub batch: usize,
    /// Order in which workers take items.
    pub scheduler: SchedulerKind,
    /// Recover each sender from its signature inside the timed work.
    pub recover_senders: bool,
}

/// Timings of one run (what the timed window saw).
#[derive(Debug, Clone, Default)]
pub struct RunTimings {
    /// Wall time of the timed window, nanoseconds (scheduling + execution).
    pub wall_ns: u64,
    /// Wall time of each batch, nanoseconds.
    pub batch_wall_ns: Vec<u64>,
    /// Execution time of each item (indexed like [`Replay::items`]), nanoseconds.
    pub item_ns: Vec<u64>,
    /// Busy time of each worker, nanoseconds.
    pub worker_busy_ns: Vec<u64>,
    /// Item ranges of the batches.
    pub batches: Vec<std::ops::Range<usize>>,
}

/// Outputs of every item of a run, for verification.
pub type RunOutputs = Vec<Result<ItemOutput, ExecError>>;

impl Replay {
    /// Run every item once with `config`: spawn the workers, then time scheduling and
    /// execution of all batches. Each batch ends when its last item ends; workers take
    /// items from one shared cursor over the scheduler's order (list scheduling).
    pub fn run_parallel(&self, config: &RunConfig) -> (RunTimings, RunOutputs) {
        let threads = config.threads.max(1);
        let batches = self.batches(config.batch);
        let cursors: Vec<AtomicUsize> = batches.iter().map(|_| AtomicUsize::new(0)).collect();
        let orders: OnceLock<Vec<Vec<u32>>> = OnceLock::new();
        let barrier = Barrier::new(threads + 1);
        let scheduler = config.scheduler.scheduler();

        let (timings, per_worker) = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let (batches, cursors, orders, barrier) =
                        (&batches, &cursors, &orders, &barrier);
                    scope.spawn(move || {
                        // Room for every item, so recording one never reallocates in the timed window.
                        let mut done: Vec<(u32, u64, Result<ItemOutput, ExecError>)> =
                            Vec::with_capacity(self.items.len());
                        let mut busy = 0u64;
                        let mut executor = ItemExecutor::new();
                        barrier.wait(); // ready
                        barrier.wait(); // orders published, batch 0 starts
                        let orders = orders
                            .get()
                            .expect("orders are published before the start barrier");
                        for (b, range) in batches.iter().enumerate() {
                            let order = &orders[b];
                            loop {
                                let k = cursors[b].fetch_add(1, Ordering::Relaxed);
                                let Some(&pos) = order.get(k) else { break };
                                let index = range.start + pos as usize;
                                let start = Instant::now();
                                let out = self.execute_item_with(
                                    &mut executor,
                                    &self.items[index],
                                    config.recover_senders,
                                );
                                let ns = start.elapsed().as_nanos() as u64;
                                busy += ns;
                                done.push((index as u32, ns, out));
                            }
                            barrier.wait(); // batch b ends
                        }
                        (busy, done)
                    })
                })
                .collect();

            barrier.wait(); // all workers ready: the timed window starts now
            let start = Instant::now();
            let mut all_orders = Vec::with_capacity(batches.len());
            for range in &batches {
                let mut order = Vec::with_capacity(range.len());
                scheduler.order(&self.items[range.clone()], &mut order);
                all_orders.push(order);
            }
            orders.set(all_orders).expect("orders are set once");
            barrier.wait();
            let mut batch_wall_ns = Vec::with_capacity(batches.len());
            let mut last = start;
            for _ in &batches {
                barrier.wait();
                let now = Instant::now();
                batch_wall_ns.push(now.duration_since(last).as_nanos() as u64);
                last = now;
            }
            let wall_ns = start.elapsed().as_nanos() as u64;
            let per_worker: Vec<_> = workers
                .into_iter()
                .map(|w| w.join().expect("worker panicked"))
                .collect();
            (
                RunTimings {
                    wall_ns,
                    batch_wall_ns,
                    ..Default::default()
                },
                per_worker,
            )
        });

        let mut timings = timings;
        let mut outputs: Vec<Option<Result<ItemOutput, ExecError>>> =
            (0..self.items.len()).map(|_| None).collect();
        timings.item_ns = vec![0; self.items.len()];
        for (busy, done) in per_worker {
            timings.worker_busy_ns.push(busy);
            for (index, ns, out) in done {
                timings.item_ns[index as usize] = ns;
                outputs[index as usize] = Some(out);
            }
        }
        timings.batches = batches;
        let outputs = outputs
            .into_iter()
            .map(|o| o.expect("every item ran exactly once"))
            .collect();
        (timings, outputs)
    }

    /// The sequential baseline timed the same way (one batch per block, one worker).
    /// Returns the timings and, per transaction, `(gas_used, success)` for verification.
    pub fn run_sequential(
        &self,
        recover_senders: bool,
    ) -> (RunTimings, Result<Vec<(u64, bool)>, ExecError>) {
        let mut item_ns = vec![0u64; self.items.len()];
        let mut results = Vec::with_capacity(self.transaction_count());
        let start = Instant::now();
        let r = self.execute_sequential(recover_senders, |b, i, gas, ok, ns| {
            item_ns[self.block_items[b] as usize + 1 + i] = ns;
            results.push((gas, ok));
        });
        let wall_ns = start.elapsed().as_nanos() as u64;
        let batches = self.batches(1);
        let timings = RunTimings {
            wall_ns,
            batch_wall_ns: Vec::new(),
            worker_busy_ns: vec![wall_ns],
            item_ns,
            batches,
        };
        (timings, r.map(|()| results))
    }

    /// Verify a sequential run: every transaction's gas and status against its receipt.
    pub fn verify_sequential(&self, results: &[(u64, bool)]) -> Result<(), crate::Divergence> {
        let mut it = results.iter();
        for block in &self.blocks {
            let mut total = 0;
            for (i, r) in block.receipts.iter().enumerate() {
                let &(gas, ok) = it.next().ok_or_else(|| crate::Divergence {
                    block: block.header.number,
                    item: crate::ItemKind::Tx(i as u32),
                    address: None,
                    field: "execution".into(),
                    expected: "a result".into(),
                    got: "none".into(),
                })?;
                let div = |field: &str, e: String, g: String| crate::Divergence {
                    block: block.header.number,
                    item: crate::ItemKind::Tx(i as u32),
                    address: None,
                    field: field.into(),
                    expected: e,
                    got: g,
                };
                if gas != r.gas_used {
                    return Err(div("gas used", r.gas_used.to_string(), gas.to_string()));
                }
                if ok != r.success {
                    return Err(div("status", r.success.to_string(), ok.to_string()));
                }
                total += gas;
            }
            if total != block.header.gas_used {
                return Err(crate::Divergence {
                    block: block.header.number,
                    item: crate::ItemKind::PostBlock,
                    address: None,
                    field: "block gas used".into(),
                    expected: block.header.gas_used.to_string(),
                    got: total.to_string(),
                });
            }
        }
        Ok(())
    }
}
