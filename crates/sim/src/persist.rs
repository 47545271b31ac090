//! The background writer of a projected pass (`--persist background`): blocks handed to a
//! writer on a thread of its own as their roots are done, committed in groups as its
//! [`Backlog`] says, the chain stalling only past the backpressure ([`Writer`]).
//!
//! The rules are the store's writer's (`gigagas_state::BackgroundWriter`), in wall time:
//!
//! - the writer starts a commit once the head (blocks handed) is more than
//!   [`Backlog::threshold`] blocks ahead of the disk, and commits the oldest blocks handed
//!   by then up to [`Backlog::buffer`] behind the head, one group; it goes on while the gap
//!   stays past the threshold;
//! - a group commit takes the sum of its blocks' commit times (each block's share of the
//!   profiled commit it was written in, its sync included);
//! - a block's hand-over waits while the head is more than [`Backlog::stall_gap`] blocks
//!   ahead of the disk (a commit under way counts as not on disk): that wait is the
//!   block's persist wait, and its chain waits with it;
//! - at the pass's end everything still held is committed in one group, after the commit
//!   under way ([`Writer::drain`]): the drain.
//!
//! The writer runs on a core of its own (it takes none from the workers).

use gigagas_grid::Backlog;
use std::collections::VecDeque;

/// The background writer's state through a projected pass, in wall nanoseconds from the
/// pass's start.
#[derive(Debug, Clone)]
pub struct Writer {
    limits: Backlog,
    /// Blocks handed and not yet in a commit: (handed at, commit time).
    held: VecDeque<(f64, f64)>,
    /// When the writer is free: the end of its last commit.
    free: f64,
    /// Blocks of its last commit (not on disk before `free`).
    last_group: usize,
    /// Each block's persist wait, in the order handed.
    waits: Vec<f64>,
    /// Each group commit: (start, end, blocks).
    commits: Vec<(f64, f64, usize)>,
}

impl Writer {
    /// A writer with nothing handed, with `limits`.
    pub fn new(limits: Backlog) -> Self {
        Self {
            limits,
            held: VecDeque::new(),
            free: 0.0,
            last_group: 0,
            waits: Vec::new(),
            commits: Vec::new(),
        }
    }

    /// Hands over a block at `t` whose share of a commit takes `commit_ns`; returns when
    /// its chain goes on (`t`, or later past the backpressure).
    pub fn hand(&mut self, t: f64, commit_ns: f64) -> f64 {
        // Hands across segments may come out of order: none goes back in time.
        let t = self.held.back().map_or(t, |&(last, _)| t.max(last));
        self.run_until(t);
        self.held.push_back((t, commit_ns));
        let stall = self.limits.stall_gap() as usize;
        let mut at = t;
        while self.gap(at) > stall {
            if self.free > at {
                at = self.free;
            } else {
                self.commit_next(false);
            }
        }
        self.waits.push(at - t);
        at
    }

    /// Commits everything still held once the pass ends at `end`; returns the drain, how
    /// long after `end` the last commit ends.
    pub fn drain(&mut self, end: f64) -> f64 {
        self.run_until(end);
        if !self.held.is_empty() {
            self.free = self.free.max(end);
            self.commit_next(true);
        }
        (self.free - end).max(0.0)
    }

    /// Each block's persist wait, in the order handed.
    pub fn waits(&self) -> &[f64] {
        &self.waits
    }

    /// The group commits so far: (start, end, blocks), in order.
    pub fn commits(&self) -> &[(f64, f64, usize)] {
        &self.commits
    }

    /// Blocks handed and not on disk at `t`.
    fn gap(&self, t: f64) -> usize {
        self.held.len() + if self.free > t { self.last_group } else { 0 }
    }

    /// Runs every commit that starts by `t`.
    fn run_until(&mut self, t: f64) {
        let threshold = usize::from(self.limits.threshold);
        while let Some(&(past, _)) = self.held.get(threshold) {
            if self.free.max(past) > t {
                break;
            }
            self.commit_next(false);
        }
    }

    /// The writer's next commit, from when it is free and, unless `draining`, the gap has
    /// passed the threshold: the oldest blocks handed by then, up to the buffer behind the
    /// head (every block held when draining).
    fn commit_next(&mut self, draining: bool) {
        let threshold = usize::from(self.limits.threshold);
        let past = match (draining, self.held.get(threshold)) {
            (true, _) => self.free,
            (false, Some(&(at, _))) => at,
            (false, None) => return,
        };
        let start = self.free.max(past);
        let handed = self.held.iter().take_while(|h| h.0 <= start).count();
        let keep = if draining {
            0
        } else {
            usize::from(self.limits.buffer)
        };
        let n = handed.saturating_sub(keep).max(1);
        let ns: f64 = self.held.drain(..n).map(|(_, ns)| ns).sum();
        self.free = start + ns;
        self.last_group = n;
        self.commits.push((start, self.free, n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RETH: Backlog = Backlog::RETH;

    /// Blocks handed every `every` ns, each a commit share of `ns`.
    fn run(limits: Backlog, blocks: usize, every: f64, ns: f64) -> (Writer, f64, f64) {
        let mut w = Writer::new(limits);
        let mut t = 0.0;
        for _ in 0..blocks {
            t = w.hand(t + every, ns);
        }
        let drain = w.drain(t);
        (w, t, drain)
    }

    #[test]
    fn a_short_pass_stalls_nobody_and_drains_everything() {
        // 7 blocks (the threshold): the writer never starts before the end; the drain
        // commits all 7 in one group, 7 × 3.
        let (w, end, drain) = run(RETH, 7, 10.0, 3.0);
        assert!(w.waits().iter().all(|&x| x == 0.0));
        assert_eq!(end, 70.0);
        assert_eq!(w.commits(), [(70.0, 91.0, 7)]);
        assert_eq!(drain, 21.0);
    }

    #[test]
    fn a_writer_that_keeps_up_commits_past_the_threshold_and_stalls_nobody() {
        // A block every 10, 1 each to write: the 8th hand (at 80) passes the threshold;
        // the writer commits the 3 oldest (8 − 5 behind the head), 80–83, and so on.
        let (w, end, drain) = run(RETH, 20, 10.0, 1.0);
        assert!(w.waits().iter().all(|&x| x == 0.0));
        assert_eq!(end, 200.0);
        assert_eq!(w.commits()[0], (80.0, 83.0, 3));
        let written: usize = w.commits().iter().map(|c| c.2).sum();
        assert_eq!(written, 20);
        // The drain writes what was held at the end: fewer than threshold + 1 blocks.
        let last = w.commits().last().unwrap();
        assert!(last.2 <= 8 && drain == last.1 - end);
    }

    #[test]
    fn a_slow_writer_stalls_the_chain_past_the_backpressure() {
        // A block every 1, 100 each to write: the writer falls behind; no block waits
        // until the head is more than 21 (buffer + backpressure) blocks ahead of the disk,
        // the 22nd waits, and from then on the chain runs at the writer's pace: when the
        // last block is handed, at least 60 − 21 blocks are on disk (3,900 of writing).
        let (w, end, drain) = run(RETH, 60, 1.0, 100.0);
        let stall = RETH.stall_gap() as usize;
        assert!(w.waits()[..stall].iter().all(|&x| x == 0.0));
        assert!(w.waits()[stall] > 0.0, "{:?}", w.waits());
        assert!(end >= (60 - stall) as f64 * 100.0, "{end}");
        let written: usize = w.commits().iter().map(|c| c.2).sum();
        assert_eq!(written, 60);
        assert_eq!(end + drain, w.commits().last().unwrap().1);
        // The same blocks with a writer that keeps up end at 60.
        let (_, fast_end, _) = run(RETH, 60, 1.0, 0.01);
        assert_eq!(fast_end, 60.0);
    }
}
