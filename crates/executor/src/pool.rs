//! Worker threads kept across passes.
//!
//! A parallel pass used to spawn its workers and join them at its end. Every pass then ran
//! on threads that had never allocated: each new thread starts an empty allocator heap, so
//! the memory a pass allocates (the EVMs, every transaction's state changes) came from
//! fresh pages that the kernel zeroes on first touch, inside the timed window, and the
//! exiting threads' pages were handed back. On 2 cores a 2-thread pass of plain transfers
//! spent a fifth of its CPU time in `clear_page_erms` (perf, `docs/benchmarks.md`), and a
//! 16-thread pass cloned about 16 threads per pass (`strace -c -f`).
//!
//! `workers` keeps one pool per thread count (and pinning) for the life of the process:
//! a pass borrows its threads ([`rayon::ThreadPool::in_place_scope`] with one broadcast job
//! per thread), so their heaps, stacks and per-thread bytecode copies
//! ([`crate::local_code`]) stay warm from one pass to the next. Pools are built outside
//! every timed window, on the first pass of their thread count (a warm-up pass).

use std::{
    num::NonZeroUsize,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

/// Whether worker `i` of a pool is pinned to the `i`-th core the process may run on.
static PIN: AtomicBool = AtomicBool::new(false);

/// Pools built so far: (threads, pinned) → pool.
static POOLS: Mutex<Vec<(usize, bool, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());

/// Pin every worker thread to a core of its own from now on (`gigagas run --pin`): worker
/// `i` of a pool runs only on the `i`-th core the process may use (modulo their number).
/// Pools built before keep their placement; later passes use pinned pools. On systems
/// other than Linux pinning is not available and the setting is ignored
/// ([`pinning_supported`]).
pub fn set_pinning(pin: bool) {
    PIN.store(pin, Ordering::Relaxed);
}

/// Whether workers are pinned to cores ([`set_pinning`]).
pub fn pinning() -> bool {
    PIN.load(Ordering::Relaxed) && pinning_supported()
}

/// Whether this build can pin threads to cores (Linux only).
pub const fn pinning_supported() -> bool {
    cfg!(target_os = "linux")
}

/// Why a pool could not be built.
#[derive(Debug, thiserror::Error)]
#[error("starting {threads} worker threads: {source}")]
pub struct PoolError {
    /// Threads asked for.
    pub threads: usize,
    /// What rayon reported.
    #[source]
    pub source: rayon::ThreadPoolBuildError,
}

/// The pool of `threads` workers (with the current [`pinning`]), built on first use and
/// kept for the life of the process.
pub(crate) fn workers(threads: NonZeroUsize) -> Result<Arc<rayon::ThreadPool>, PoolError> {
    let threads = threads.get();
    let pin = pinning();
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, _, pool)) = pools.iter().find(|(t, p, _)| *t == threads && *p == pin) {
        return Ok(Arc::clone(pool));
    }
    let cores = if pin { allowed_cores() } else { Vec::new() };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("gigagas-worker-{i}"))
        .start_handler(move |i| {
            if let Some(&core) = cores.get(i % cores.len().max(1)) {
                pin_current_thread(core);
            }
        })
        .build()
        .map_err(|source| PoolError { threads, source })?;
    let pool = Arc::new(pool);
    pools.push((threads, pin, Arc::clone(&pool)));
    Ok(pool)
}

/// The cores this process may run on, in order (empty where that cannot be read).
#[cfg(target_os = "linux")]
fn allowed_cores() -> Vec<usize> {
    // SAFETY: `set` is a plain bit set that `sched_getaffinity` fills; its size is passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

#[cfg(not(target_os = "linux"))]
fn allowed_cores() -> Vec<usize> {
    Vec::new()
}

/// Restrict the calling thread to `core` (best effort: a refusal leaves it unpinned).
#[cfg(target_os = "linux")]
fn pin_current_thread(core: usize) {
    // SAFETY: `set` is a zeroed bit set with one bit set; its size is passed, and 0 names
    // the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        let _ = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_current_thread(_core: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_is_built_once_per_thread_count() {
        let n = |t| NonZeroUsize::new(t).unwrap();
        let a = workers(n(3)).expect("a pool of 3 starts");
        let b = workers(n(3)).expect("the same pool");
        assert!(
            Arc::ptr_eq(&a, &b),
            "the second pass reuses the first's threads"
        );
        assert_eq!(a.current_num_threads(), 3);
        let c = workers(n(2)).expect("a pool of 2 starts");
        assert_eq!(c.current_num_threads(), 2);
        assert!(!Arc::ptr_eq(&a, &c));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_may_run_on_at_least_one_core() {
        let cores = allowed_cores();
        assert!(!cores.is_empty());
        assert!(cores.len() <= libc::CPU_SETSIZE as usize);
    }
}
