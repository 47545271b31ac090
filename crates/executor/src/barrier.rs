//! The barrier of a parallel pass: waiters that spin before they sleep, and the
//! batons a pass hands its batches and outputs over with.
//!
//! A pass of a per-block run meets at a barrier four times per batch (the protocol is on
//! the batch module's `Crew`). With [`std::sync::Barrier`] every waiter sleeps
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
    cell::UnsafeCell,
    sync::{
        Condvar, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
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
/// that are still busy-waiting see the new generation on their next check. A party that
/// cannot go on (a worker that panicked) breaks the barrier ([`SpinBarrier::break_all`]):
/// every wait then returns at once, so no party waits for it forever.
#[derive(Debug)]
pub struct SpinBarrier {
    parties: usize,
    /// Set once by [`SpinBarrier::break_all`]: no wait blocks any more.
    broken: AtomicBool,
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
            broken: AtomicBool::new(false),
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            sleepers: Mutex::new(0),
            released: Condvar::new(),
        }
    }

    /// Break the barrier: every wait, now and later, returns at once (the sleepers are
    /// woken). For a party that cannot arrive any more.
    pub fn break_all(&self) {
        let sleepers = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        self.broken.store(true, Ordering::Release);
        drop(sleepers);
        self.released.notify_all();
    }

    /// Whether the barrier was broken: the waits since then did not wait for every party.
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }

    /// Wait until all parties have arrived (or the barrier is broken); busy-wait for up to
    /// `spin` first. Returns `true` for the one party whose arrival released the others.
    pub fn wait(&self, spin: Spin) -> bool {
        if self.parties == 1 {
            // Alone (a one-thread pass): nobody to wait for or to wake.
            return true;
        }
        if self.is_broken() {
            return false;
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
        let released = || self.generation.load(Ordering::Acquire) != generation || self.is_broken();
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

/// A value the parties of a [`SpinBarrier`] hand to each other with no lock: between two
/// waits, one side owns it (may write it) or every side may read it, and the barrier's
/// release orders the hand-over (each wait's `Release`/`Acquire` on the generation makes
/// what a party wrote before it arrived visible to every party after the release).
///
/// A pass hands each batch's inputs to its workers in one, and each worker hands its
/// outputs back in its own; the batch module's `Crew` says which side holds which baton
/// between which waits.
pub(crate) struct Baton<T>(UnsafeCell<T>);

// SAFETY: the value moves between threads (`T: Send`) and the workers read it at the same
// time (`T: Sync`); writes never overlap another access because every caller of
// `get`/`get_mut` keeps the protocol that those methods' contracts state.
unsafe impl<T: Send + Sync> Sync for Baton<T> {}

impl<T> Baton<T> {
    /// A baton holding `value`.
    pub(crate) fn new(value: T) -> Self {
        Self(UnsafeCell::new(value))
    }

    /// The value, to write.
    ///
    /// # Safety
    /// The caller holds the baton: no other thread reads or writes it from the barrier
    /// release before this call until the caller's next wait.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn get_mut(&self) -> &mut T {
        // SAFETY: exclusive by the caller's contract.
        unsafe { &mut *self.0.get() }
    }

    /// The value, to read.
    ///
    /// # Safety
    /// No thread writes it from the barrier release before this call until the caller's
    /// next wait (others may read it too).
    pub(crate) unsafe fn get(&self) -> &T {
        // SAFETY: no writer by the caller's contract.
        unsafe { &*self.0.get() }
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

    /// A broken barrier releases the waiters already asleep and every later wait.
    #[test]
    fn a_broken_barrier_releases_every_waiter() {
        let barrier = SpinBarrier::new(std::num::NonZeroUsize::new(3).unwrap());
        std::thread::scope(|scope| {
            let waiters: Vec<_> = (0..2)
                .map(|_| scope.spawn(|| barrier.wait(Spin::NONE)))
                .collect();
            std::thread::sleep(Duration::from_millis(20));
            barrier.break_all();
            for w in waiters {
                assert!(!w.join().unwrap());
            }
        });
        assert!(barrier.is_broken());
        assert!(!barrier.wait(Spin(Duration::from_millis(5))));
    }

    /// A single party never waits.
    #[test]
    fn one_party_is_always_the_leader() {
        let barrier = SpinBarrier::new(std::num::NonZeroUsize::MIN);
        assert!(barrier.wait(Spin::NONE));
        assert!(barrier.wait(Spin(Duration::from_millis(5))));
    }
}
