//! Timed runs: the worker pool, mega-blocks and the sequential baseline.

use crate::{
    exec::{ExecError, ItemExecutor, ItemOutput, SequentialTx, TxResult},
    replay::Replay,
    schedule::SchedulerKind,
    work::TimedWork,
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
    /// Build each transaction's receipt with its logs bloom inside the timed work (and
    /// check the receipts root after the pass).
    #[serde(default)]
    pub receipts: bool,
}

impl RunConfig {
    /// The optional steps of this point's timed work.
    pub fn work(&self) -> TimedWork {
        TimedWork {
            recover_senders: self.recover_senders,
            receipts: self.receipts,
        }
    }
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

/// What one worker hands back: its busy time and, per item it ran, `(index, ns, output)`.
type WorkerResult = (u64, Vec<(u32, u64, Result<ItemOutput, ExecError>)>);

/// The state the coordinator and the workers of one run share.
///
/// # Barrier protocol
///
/// One [`Barrier`] of `threads + 1` parties (the workers and the coordinator) is passed
/// `2 + batches` times per run:
/// 1. *ready*: every worker has allocated its output buffer and its [`ItemExecutor`]; the
///    coordinator starts the clock after it (spawning is outside the timed window);
/// 2. *start*: the coordinator has computed every batch's order (inside the window: a
///    scheduler's cost is part of what is measured) and published it in `orders`;
/// 3. then one pass per batch: a worker leaves batch `b` when the shared cursor runs past
///    its order, and waits; when all have arrived, batch `b` is over (its wall time is
///    taken) and batch `b + 1` starts — a mega-block is one batch, so blocks within it
///    overlap, while batches never do.
struct Shared<'r> {
    replay: &'r Replay,
    config: &'r RunConfig,
    /// Item ranges of the batches.
    batches: &'r [std::ops::Range<usize>],
    /// Per batch, the next position in its order to hand out.
    cursors: &'r [AtomicUsize],
    /// Per batch, item positions (relative to the batch start) in the scheduler's order.
    orders: &'r OnceLock<Vec<Vec<u32>>>,
    barrier: &'r Barrier,
}

impl Shared<'_> {
    /// One worker: list scheduling over the shared cursors, following the barrier
    /// protocol above. Every item's output is kept for verification after the run.
    fn worker(&self) -> WorkerResult {
        let replay = self.replay;
        // Room for every item, so recording one never reallocates in the timed window.
        let mut done = Vec::with_capacity(replay.items.len());
        let mut busy = 0u64;
        let mut executor = ItemExecutor::new();
        self.barrier.wait(); // 1. ready
        self.barrier.wait(); // 2. orders published, batch 0 starts
        let orders = self
            .orders
            .get()
            .expect("orders are published before the start barrier");
        for (b, range) in self.batches.iter().enumerate() {
            let order = &orders[b];
            loop {
                let k = self.cursors[b].fetch_add(1, Ordering::Relaxed);
                let Some(&pos) = order.get(k) else { break };
                let index = range.start + pos as usize;
                busy += self.execute_timed(&mut executor, index, &mut done);
            }
            self.barrier.wait(); // 3. batch b ends
        }
        (busy, done)
    }

    /// Execute item `index` on `executor`, record its output and time; returns the time.
    #[inline]
    fn execute_timed<'r>(
        &self,
        executor: &mut ItemExecutor<'r>,
        index: usize,
        done: &mut Vec<(u32, u64, Result<ItemOutput, ExecError>)>,
    ) -> u64
    where
        Self: 'r,
    {
        let replay: &'r Replay = self.replay;
        let start = Instant::now();
        let out = replay.execute_item_with(executor, &replay.items[index], self.config.work());
        let ns = start.elapsed().as_nanos() as u64;
        done.push((index as u32, ns, out));
        ns
    }

    /// One thread: the calling thread is the only worker, so there is nobody to spawn or
    /// wait for (a pass of a tiny dump would otherwise cost more in thread start-up than
    /// in execution). The timed window, the scheduler's orders inside it and each batch's
    /// wall time are as in the protocol above.
    fn single(&self, scheduler: &dyn crate::Scheduler) -> (RunTimings, WorkerResult) {
        let replay = self.replay;
        let mut done = Vec::with_capacity(replay.items.len());
        let mut busy = 0u64;
        let mut executor = ItemExecutor::new();
        let mut order = Vec::new();
        let mut batch_wall_ns = Vec::with_capacity(self.batches.len());
        let start = Instant::now();
        let mut last = start;
        for range in self.batches {
            scheduler.order(&replay.items[range.clone()], &mut order);
            for &pos in &order {
                busy += self.execute_timed(&mut executor, range.start + pos as usize, &mut done);
            }
            let now = Instant::now();
            batch_wall_ns.push(now.duration_since(last).as_nanos() as u64);
            last = now;
        }
        let timings = RunTimings {
            wall_ns: start.elapsed().as_nanos() as u64,
            batch_wall_ns,
            ..Default::default()
        };
        (timings, (busy, done))
    }

    /// The coordinator's side of the protocol: the timed window, and each batch's wall time.
    fn coordinate(&self, scheduler: &dyn crate::Scheduler) -> RunTimings {
        self.barrier.wait(); // 1. all workers ready: the timed window starts now
        let start = Instant::now();
        let mut all_orders = Vec::with_capacity(self.batches.len());
        for range in self.batches {
            let mut order = Vec::with_capacity(range.len());
            scheduler.order(&self.replay.items[range.clone()], &mut order);
            all_orders.push(order);
        }
        self.orders.set(all_orders).expect("orders are set once");
        self.barrier.wait(); // 2. start
        let mut batch_wall_ns = Vec::with_capacity(self.batches.len());
        let mut last = start;
        for _ in self.batches {
            self.barrier.wait(); // 3. batch ends
            let now = Instant::now();
            batch_wall_ns.push(now.duration_since(last).as_nanos() as u64);
            last = now;
        }
        RunTimings {
            wall_ns: start.elapsed().as_nanos() as u64,
            batch_wall_ns,
            ..Default::default()
        }
    }
}

impl Replay {
    /// Run every item once with `config`: spawn the workers, then time scheduling and
    /// execution of all batches. Each batch ends when its last item ends; workers take
    /// items from one shared cursor over the scheduler's order (list scheduling). The
    /// protocol between the workers and the clock is described on [`Shared`]; one thread
    /// runs on the calling thread.
    pub fn run_parallel(&self, config: &RunConfig) -> (RunTimings, RunOutputs) {
        let threads = config.threads.max(1);
        let batches = self.batches(config.batch);
        let cursors: Vec<AtomicUsize> = batches.iter().map(|_| AtomicUsize::new(0)).collect();
        let orders = OnceLock::new();
        let barrier = Barrier::new(threads + 1);
        let scheduler = config.scheduler.scheduler();
        let shared = Shared {
            replay: self,
            config,
            batches: &batches,
            cursors: &cursors,
            orders: &orders,
            barrier: &barrier,
        };

        let (mut timings, per_worker) = if threads == 1 {
            let (timings, worker) = shared.single(scheduler);
            (timings, vec![worker])
        } else {
            std::thread::scope(|scope| {
                let workers: Vec<_> = (0..threads)
                    .map(|_| scope.spawn(|| shared.worker()))
                    .collect();
                let timings = shared.coordinate(scheduler);
                let per_worker: Vec<WorkerResult> = workers
                    .into_iter()
                    .map(|w| w.join().expect("worker panicked"))
                    .collect();
                (timings, per_worker)
            })
        };

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

    /// The sequential baseline timed the same way (one batch per block, one worker), with
    /// the same timed work as the replay ([`crate::work`]). Returns the timings and every
    /// transaction's result (and receipt, with `work.receipts`) for verification.
    pub fn run_sequential(
        &self,
        work: TimedWork,
    ) -> (RunTimings, Result<SequentialOutputs, ExecError>) {
        let mut item_ns = vec![0u64; self.items.len()];
        let mut txs = Vec::with_capacity(self.transaction_count());
        let mut receipts = Vec::with_capacity(if work.receipts { txs.capacity() } else { 0 });
        let start = Instant::now();
        let r = self.execute_sequential(work, |done: SequentialTx| {
            item_ns[self.block_items[done.block] as usize + 1 + done.tx] = done.nanos;
            txs.push(done.result);
            receipts.extend(done.receipt);
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
        (timings, r.map(|()| SequentialOutputs { txs, receipts }))
    }
}

/// What a sequential pass hands to verification.
#[derive(Debug, Default)]
pub struct SequentialOutputs {
    /// Every transaction's result, block after block.
    pub txs: Vec<TxResult>,
    /// Every transaction's receipt, block after block (empty without
    /// [`TimedWork::receipts`]).
    pub receipts: Vec<alloy_consensus::ReceiptEnvelope>,
}
