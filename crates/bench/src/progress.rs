//! Progress of a grid run and the work units it is counted in: the [`Progress`] trait the
//! command line's bar implements, and what loading a dump ([`LOAD_UNITS`]) and one sample
//! on some threads ([`run_units`]) weigh, so a plan can say in advance how much work it
//! holds ([`crate::Plan::units_per_dump`]).

use std::num::NonZeroUsize;

/// Progress of a grid run, in work units (a one-thread sample of a dump is 1000 units; a
/// sample on `t` threads is `1000 / min(t, cores)`; loading a dump is
/// [`LOAD_UNITS`]), so a progress bar's ETA follows the real remaining time. Every
/// method has a no-op default; `()` ignores progress.
pub trait Progress {
    /// The total number of units, reported once before the first run.
    fn total(&mut self, _units: u64) {}
    /// What runs now (e.g. `mainnet-like: BAL 2t b50 ols`).
    fn stage(&mut self, _what: &str) {}
    /// `units` more are done.
    fn advance(&mut self, _units: u64) {}
    /// A line to keep, not replaced by the next stage (e.g. where a CPU profile was
    /// written and what it holds).
    fn note(&mut self, _line: &str) {}
}

impl Progress for () {}

/// Work units of loading one dump.
pub const LOAD_UNITS: u64 = 100;

/// Work units of one sample on `threads` workers on a machine with `cores`: 1000 spread
/// over the threads that run at once (at most the cores).
pub fn run_units(threads: NonZeroUsize, cores: NonZeroUsize) -> u64 {
    1000 / threads.min(cores).get() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_weighs_1000_units_spread_over_the_threads_that_run_at_once() {
        let units = |threads, cores| {
            let n = |n| NonZeroUsize::new(n).unwrap();
            run_units(n(threads), n(cores))
        };
        assert_eq!(units(1, 16), 1000);
        assert_eq!(units(4, 16), 250);
        assert_eq!(units(64, 16), 1000 / 16);
        assert_eq!(units(2, 2), 500);
        assert_eq!(units(16, 2), 500);
        assert_eq!(units(1, 1), 1000);
    }
}
