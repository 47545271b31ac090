//! The edges of a timed window: the CPU time and page faults inside it, and observers
//! told when it opens and closes (an in-process profiler samples only the window).
//!
//! A parallel pass's window opens when the workers are ready and closes while the
//! coordinator verifies a batch (then opens again for the next batch); the sequential
//! loop's window is its whole pass. [`CpuUsage`] is read from `getrusage(RUSAGE_SELF)` at
//! each edge, so it counts every thread of the process — the workers, the coordinator and
//! any reader — and the kernel's share of the work (page faults, purged pages, thread
//! wake-ups), which a wall clock cannot tell from user code.

use std::{cell::RefCell, sync::Arc};

/// CPU time and page faults of the whole process over a span, as `getrusage` counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuUsage {
    /// CPU time in user code, all threads, nanoseconds.
    pub user_ns: u64,
    /// CPU time in the kernel on the process's behalf, all threads, nanoseconds.
    pub system_ns: u64,
    /// Page faults served without I/O (a page zeroed or mapped in: fresh memory).
    pub minor_faults: u64,
    /// Page faults that read from disk.
    pub major_faults: u64,
}

impl CpuUsage {
    /// The process's usage so far (zero where `getrusage` is not available).
    pub fn now() -> Self {
        #[cfg(unix)]
        {
            // SAFETY: `usage` is a plain struct that `getrusage` fills; RUSAGE_SELF is valid.
            let usage = unsafe {
                let mut usage: libc::rusage = std::mem::zeroed();
                if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
                    return Self::default();
                }
                usage
            };
            let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
            Self {
                user_ns: ns(usage.ru_utime),
                system_ns: ns(usage.ru_stime),
                minor_faults: usage.ru_minflt as u64,
                major_faults: usage.ru_majflt as u64,
            }
        }
        #[cfg(not(unix))]
        Self::default()
    }

    /// What was used from `earlier` to `self` (saturating: counters only grow).
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            system_ns: self.system_ns.saturating_sub(earlier.system_ns),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
        }
    }

    /// Both spans together.
    pub fn plus(&self, other: &Self) -> Self {
        Self {
            user_ns: self.user_ns + other.user_ns,
            system_ns: self.system_ns + other.system_ns,
            minor_faults: self.minor_faults + other.minor_faults,
            major_faults: self.major_faults + other.major_faults,
        }
    }
}

/// Major page faults of the calling thread so far (`getrusage(RUSAGE_THREAD)`): the pages
/// it waited for the device to read. 0 where the count is not available (not Linux). Two
/// calls around a span of work on one thread count the device reads of that span alone.
pub(crate) fn thread_major_faults() -> u64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `usage` is a plain struct that `getrusage` fills; RUSAGE_THREAD is valid
        // on Linux.
        unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            if libc::getrusage(libc::RUSAGE_THREAD, &mut usage) != 0 {
                return 0;
            }
            usage.ru_majflt as u64
        }
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// Told when a timed window opens and closes, on the thread that times it (the
/// coordinator, or the only thread of a 1-thread pass). Calls alternate, opened first;
/// what an observer does there is outside the window's clock but not outside its
/// [`CpuUsage`], so it should be cheap.
pub trait WindowObserver: Send + Sync {
    /// The window opened (the clock runs).
    fn opened(&self);
    /// The window closed (the clock stopped: a batch is being verified, or the pass ended).
    fn closed(&self);
}

thread_local! {
    /// The observer of the windows timed on this thread from now on (`None`: none).
    static OBSERVER: RefCell<Option<Arc<dyn WindowObserver>>> = const { RefCell::new(None) };
}

/// Tell `observer` about every timed window of every pass run from the calling thread from
/// now on, until replaced (`None` stops). A pass's window is timed on the thread that runs
/// the pass (its workers are other threads), so passes run from other threads meanwhile
/// are not observed. Read once per pass, before its window first opens.
pub fn observe_windows(observer: Option<Arc<dyn WindowObserver>>) {
    OBSERVER.with(|o| *o.borrow_mut() = observer);
}

/// One pass's window: its usage so far and its observer.
pub(crate) struct Window {
    observer: Option<Arc<dyn WindowObserver>>,
    opened_at: Option<CpuUsage>,
    used: CpuUsage,
}

impl Window {
    /// A closed window with the current observer.
    pub(crate) fn new() -> Self {
        Self {
            observer: OBSERVER.with(|o| o.borrow().clone()),
            opened_at: None,
            used: CpuUsage::default(),
        }
    }

    /// The window opens (no-op while open).
    pub(crate) fn open(&mut self) {
        if self.opened_at.is_none() {
            if let Some(o) = &self.observer {
                o.opened();
            }
            self.opened_at = Some(CpuUsage::now());
        }
    }

    /// The window closes (no-op while closed).
    pub(crate) fn close(&mut self) {
        if let Some(at) = self.opened_at.take() {
            self.used = self.used.plus(&CpuUsage::now().since(&at));
            if let Some(o) = &self.observer {
                o.closed();
            }
        }
    }

    /// Close it and return what it used while open.
    pub(crate) fn finish(mut self) -> CpuUsage {
        self.close();
        self.used
    }
}

/// A window dropped open (its pass unwound) is closed, so an observer sees every opening
/// closed.
impl Drop for Window {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn usage_counts_the_work_and_the_fresh_pages_of_the_window() {
        let mut w = Window {
            observer: None,
            opened_at: None,
            used: CpuUsage::default(),
        };
        w.open();
        // Touch 64 MiB of fresh memory: at least one minor fault per 2 MiB, and CPU time.
        let mut v = vec![0u8; 64 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = i as u8;
        }
        std::hint::black_box(&v);
        let used = w.finish();
        assert!(used.minor_faults >= 32, "{used:?}");
        assert!(used.user_ns + used.system_ns > 0, "{used:?}");
    }

    struct Count(AtomicUsize, AtomicUsize);
    impl WindowObserver for Count {
        fn opened(&self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        fn closed(&self) {
            self.1.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn an_observer_sees_each_edge_once() {
        let count = Arc::new(Count(AtomicUsize::new(0), AtomicUsize::new(0)));
        let mut w = Window {
            observer: Some(count.clone()),
            opened_at: None,
            used: CpuUsage::default(),
        };
        w.open();
        w.open();
        w.close();
        w.close();
        w.open();
        let _ = w.finish();
        assert_eq!(count.0.load(Ordering::Relaxed), 2);
        assert_eq!(count.1.load(Ordering::Relaxed), 2);
    }
}
