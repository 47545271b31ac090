//! The barrier of a parallel pass: waiters that spin before they sleep.
//!
//! A pass of a per-block run meets at a barrier two or three times per block (see the
//! protocol on [`crate::run`]'s `Shared`). With [`std::sync::Barrier`] every waiter sleeps
//! in the kernel, and the release has to wake it: on a virtual machine that wake-up takes
//! from microseconds to milliseconds (a halted vCPU is woken through the hypervisor), and
//! it lands inside the timed window — a 2-thread mainnet pass showed a worker starting its
//! block 3.3 ms after the release, in a 15 ms block. [`SpinBarrier`] lets a waiter spin
//! (then yield its CPU) for a bounded time before it sleeps, so a worker that is already
//! waiting when the coordinator releases a batch sees the release within nanoseconds.
//!
//! Spinning only pays while every spinning thread has a core of its own: a waiter whose
//! [`Spin`] budget is zero sleeps at once (the coordinator, whose wait at the end of a
//! batch would take a core from a worker, and every thread of a run with more workers
//! than cores).

use crossbeam_utils::Backoff;
use std::{
    sync::{
        Condvar, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

/// How long a waiter busy-waits (spinning, then yielding its CPU between checks) before it
/// sleeps until the release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spin(pub Duration);

impl Spin {
    /// Sleep at once, like [`std::sync::Barrier`].
    pub const NONE: Spin = Spin(Duration::ZERO);
}

/// A reusable barrier for a fixed number of parties whose waiters busy-wait for up to
/// their [`Spin`] budget before sleeping on a condition variable.
///
/// The last party to arrive opens the next generation and wakes the sleepers; parties
/// that are still busy-waiting see the new generation on their next check.
#[derive(Debug)]
pub struct SpinBarrier {
    parties: usize,
    /// Parties arrived in the current generation.
    arrived: AtomicUsize,
    /// Incremented when a generation is released.
    generation: AtomicUsize,
    /// Parties asleep in the current generation (changed only under this lock, which
    /// also orders the release against a party going to sleep).
    sleepers: Mutex<usize>,
    released: Condvar,
}

impl SpinBarrier {
    /// A barrier that releases every `parties` arrivals.
    pub fn new(parties: std::num::NonZeroUsize) -> Self {
        Self {
            parties: parties.get(),
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            sleepers: Mutex::new(0),
            released: Condvar::new(),
        }
    }

    /// Wait until all parties have arrived; busy-wait for up to `spin` first. Returns
    /// `true` for the one party whose arrival released the others.
    pub fn wait(&self, spin: Spin) -> bool {
        if self.parties == 1 {
            // Alone (a one-thread pass): nobody to wait for or to wake.
            return true;
        }
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            self.arrived.store(0, Ordering::Relaxed);
            // Publish the new generation and take this generation's sleepers under the
            // lock: a party between its last check and its sleep cannot miss the wake-up,
            // and a sleeper of the next generation is not counted here.
            let mut sleepers = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
            self.generation
                .store(generation.wrapping_add(1), Ordering::Release);
            let asleep = std::mem::take(&mut *sleepers);
            drop(sleepers);
            if asleep > 0 {
                self.released.notify_all();
            }
            return true;
        }
        let released = || self.generation.load(Ordering::Acquire) != generation;
        if spin.0 > Duration::ZERO {
            let deadline = Instant::now() + spin.0;
            let backoff = Backoff::new();
            loop {
                if released() {
                    return false;
                }
                // Spins a few rounds, then yields the CPU on every call.
                backoff.snooze();
                if backoff.is_completed() && Instant::now() >= deadline {
                    break;
                }
            }
        }
        let mut sleepers = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        if released() {
            return false;
        }
        *sleepers += 1;
        while !released() {
            sleepers = self
                .released
                .wait(sleepers)
                .unwrap_or_else(|e| e.into_inner());
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Every party leaves a generation only after all have arrived, for spinning and
    /// sleeping waiters mixed, over many generations; one leader per generation.
    #[test]
    fn no_party_passes_before_all_arrive() {
        const PARTIES: usize = 4;
        const ROUNDS: u64 = 2_000;
        let barrier = SpinBarrier::new(std::num::NonZeroUsize::new(PARTIES).unwrap());
        let arrivals = AtomicU64::new(0);
        let leaders = AtomicU64::new(0);
        std::thread::scope(|scope| {
            for id in 0..PARTIES {
                let (barrier, arrivals, leaders) = (&barrier, &arrivals, &leaders);
                scope.spawn(move || {
                    // Half the parties spin, half sleep at once.
                    let spin = if id % 2 == 0 {
                        Spin(Duration::from_millis(1))
                    } else {
                        Spin::NONE
                    };
                    for round in 0..ROUNDS {
                        arrivals.fetch_add(1, Ordering::SeqCst);
                        if barrier.wait(spin) {
                            leaders.fetch_add(1, Ordering::SeqCst);
                        }
                        // Everyone of this round has arrived before anyone leaves it.
                        assert!(arrivals.load(Ordering::SeqCst) >= (round + 1) * PARTIES as u64);
                        barrier.wait(spin);
                        // And nobody has arrived for the next round before all left this one.
                        assert!(
                            arrivals.load(Ordering::SeqCst)
                                <= (round + 1) * PARTIES as u64 + PARTIES as u64
                        );
                    }
                });
            }
        });
        assert_eq!(arrivals.load(Ordering::SeqCst), ROUNDS * PARTIES as u64);
        assert_eq!(leaders.load(Ordering::SeqCst), ROUNDS);
    }

    /// A single party never waits.
    #[test]
    fn one_party_is_always_the_leader() {
        let barrier = SpinBarrier::new(std::num::NonZeroUsize::MIN);
        assert!(barrier.wait(Spin::NONE));
        assert!(barrier.wait(Spin(Duration::from_millis(5))));
    }
}
