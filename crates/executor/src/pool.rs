//! Worker threads kept across passes.
//!
//! A parallel pass used to spawn its workers and join them at its end. Every pass then ran
//! on threads that had never allocated: each new thread starts an empty allocator heap, so
//! the memory a pass allocates (the EVMs, every transaction's state changes) came from
//! fresh pages that the kernel zeroes on first touch, inside the timed window, and the
//! exiting threads' pages were handed back. On 2 cores a 2-thread pass of plain transfers
//! spent a fifth of its CPU time in `clear_page_erms` (perf: CHANGELOG.md, *Sixteen threads
//! without the harness's own cost*), and a 16-thread pass cloned about 16 threads per pass
//! (`strace -c -f`).
//!
//! `workers` keeps one pool (per pinning) for the life of the process, as large as the
//! largest pass so far: a pass of `k` threads borrows `k` of its workers
//! ([`rayon::ThreadPool::in_place_scope`] with one job per worker: a job holds its thread
//! until the pass ends, so each runs on a thread of its own, and the others sleep on), so their heaps, stacks and per-thread bytecode copies
//! ([`crate::local_code`]) stay warm from one pass to the next, whatever thread counts a
//! sweep interleaves, and a sweep over 1..=64 threads holds 64 workers, not the sum of
//! every count. A pass that needs more workers than the pool has replaces it outside its
//! timed window (the old workers have exited when the new pool is handed out).
//! `readers` does the same for the threads that read a batch's state from its sources
//! beside the calling thread. Pools are built by a pass's set-up, never inside a timed
//! window.
//!
//! Every worker of every pool is listed while it lives ([`with_worker_threads`]): it
//! enters the list when it starts and leaves it before it exits, so a per-thread profiler
//! (`gigagas run --cpu-profile`) finds the workers of pools built before or after it
//! started, and never a thread that is gone.

use std::{
    num::NonZeroUsize,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

/// Whether worker `i` of a pool is pinned to the `i`-th core the process may run on.
static PIN: AtomicBool = AtomicBool::new(false);

/// The worker pools: (pinned, pool), at most one per pinning.
static POOLS: Mutex<Vec<(bool, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());

/// The reader pool (never pinned).
static READERS: Mutex<Option<Arc<rayon::ThreadPool>>> = Mutex::new(None);

/// How long replacing a pool waits for the old pool's threads to exit.
const EXIT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

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

/// A pool of at least `threads` workers (with the current [`pinning`]), built on first use
/// and kept for the life of the process; a larger count replaces it (its workers exit
/// before this returns). A pass of `threads` injects that many jobs; the other workers
/// sleep on.
pub(crate) fn workers(threads: NonZeroUsize) -> Result<Arc<rayon::ThreadPool>, PoolError> {
    let threads = threads.get();
    let pin = pinning();
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    let slot = pools.iter().position(|(p, _)| *p == pin);
    if let Some(i) = slot
        && pools[i].1.current_num_threads() >= threads
    {
        return Ok(Arc::clone(&pools[i].1));
    }
    let pool = Arc::new(build(threads, pin, "worker")?);
    match slot {
        Some(i) => retire(std::mem::replace(&mut pools[i].1, Arc::clone(&pool))),
        None => pools.push((pin, Arc::clone(&pool))),
    }
    Ok(pool)
}

/// A pool of at least `threads` reader threads (unpinned), for a pass's reads from its
/// state sources beside the calling thread; kept and grown like [`workers`].
pub(crate) fn readers(threads: NonZeroUsize) -> Result<Arc<rayon::ThreadPool>, PoolError> {
    let mut slot = READERS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(pool) = slot.as_ref()
        && pool.current_num_threads() >= threads.get()
    {
        return Ok(Arc::clone(pool));
    }
    let pool = Arc::new(build(threads.get(), false, "reader")?);
    if let Some(old) = slot.replace(Arc::clone(&pool)) {
        retire(old);
    }
    Ok(pool)
}

/// Release a replaced pool and wait (up to [`EXIT_WAIT`]) until its threads have exited,
/// so none exits inside the next timed window. A pool still borrowed elsewhere (an `Arc`
/// held by a running pass) is left to its holder.
fn retire(pool: Arc<rayon::ThreadPool>) {
    let Ok(pool) = Arc::try_unwrap(pool) else {
        return;
    };
    let tids: Vec<i32> = pool
        .broadcast(|_| OsThread::current().map(|t| t.tid))
        .into_iter()
        .flatten()
        .collect();
    drop(pool);
    let deadline = std::time::Instant::now() + EXIT_WAIT;
    while std::time::Instant::now() < deadline
        && live_workers().iter().any(|t| tids.contains(&t.tid))
    {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// A new pool of `threads` threads named `gigagas-<role>-<i>`, pinned if `pin`, each
/// listed in [`with_worker_threads`] from its start to its exit.
fn build(threads: usize, pin: bool, role: &'static str) -> Result<rayon::ThreadPool, PoolError> {
    let cores = if pin { allowed_cores() } else { Vec::new() };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("gigagas-{role}-{i}"))
        .start_handler(move |i| {
            if let Some(&core) = cores.get(i % cores.len().max(1)) {
                pin_current_thread(core);
            }
            if let Some(me) = OsThread::current() {
                live_workers().push(me);
            }
        })
        .exit_handler(|_| {
            if let Some(me) = OsThread::current() {
                live_workers().retain(|t| t.tid != me.tid);
            }
        })
        .build()
        .map_err(|source| PoolError { threads, source })
}

/// A thread as the kernel knows it: what a profiler needs to sample it alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OsThread {
    /// The kernel's thread id (`gettid`): the target of a signal sent to this thread alone
    /// (`SIGEV_THREAD_ID`).
    pub tid: i32,
    /// The thread's CPU-time clock (`pthread_getcpuclockid`): it advances only while this
    /// thread runs, and can time a timer or be read from any thread of the process while
    /// this one lives.
    pub cpu_clock: i32,
}

impl OsThread {
    /// The calling thread (`None` on systems other than Linux, or where the clock cannot
    /// be had).
    #[cfg(target_os = "linux")]
    pub fn current() -> Option<Self> {
        let mut cpu_clock: libc::clockid_t = 0;
        // SAFETY: `pthread_self` is the calling thread, alive during the call; the clock id
        // is written to a local. `gettid` has no preconditions.
        let (tid, rc) = unsafe {
            (
                libc::gettid(),
                libc::pthread_getcpuclockid(libc::pthread_self(), &mut cpu_clock),
            )
        };
        (rc == 0).then_some(Self { tid, cpu_clock })
    }

    /// The calling thread (`None` on systems other than Linux, or where the clock cannot
    /// be had).
    #[cfg(not(target_os = "linux"))]
    pub fn current() -> Option<Self> {
        None
    }
}

/// The workers of every pool alive now (Linux only).
static LIVE_WORKERS: Mutex<Vec<OsThread>> = Mutex::new(Vec::new());

fn live_workers() -> std::sync::MutexGuard<'static, Vec<OsThread>> {
    LIVE_WORKERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Call `f` with the worker threads of every pool alive now, in the order they started
/// (empty on systems other than Linux). The list is locked for the call: no listed thread
/// exits before `f` returns (a worker leaves the list before it exits), so `f` may use
/// their clocks and ids, e.g. to arm a timer on each. Workers of pools built later are
/// listed from their start, and a released pool's workers are gone from the list before
/// they exit.
pub fn with_worker_threads<R>(f: impl FnOnce(&[OsThread]) -> R) -> R {
    f(&live_workers())
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
    fn one_pool_serves_every_smaller_count() {
        let n = |t| NonZeroUsize::new(t).unwrap();
        // Other tests of this binary run passes meanwhile, so only what holds whatever
        // they ask for is asserted: a pool is at least as large as asked, and a smaller
        // count is served by the pool a larger one built.
        let a = workers(n(5)).expect("a pool of 5 starts");
        assert!(a.current_num_threads() >= 5);
        let b = workers(n(2)).expect("a pool of 2 or more");
        assert!(
            b.current_num_threads() >= 5,
            "the larger pool serves 2 threads"
        );
        let r = readers(n(3)).expect("3 readers start");
        assert!(r.current_num_threads() >= 3);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_retired_pool_has_exited() {
        let pool = Arc::new(build(3, false, "worker").expect("a pool of 3 starts"));
        let tids: Vec<i32> = pool.broadcast(|_| OsThread::current().expect("on Linux").tid);
        retire(pool);
        let listed = with_worker_threads(|w| w.iter().filter(|t| tids.contains(&t.tid)).count());
        assert_eq!(listed, 0, "retire returns after the old workers left");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn workers_are_listed_while_they_live() {
        let listed = |tids: &[i32]| {
            with_worker_threads(|w| {
                tids.iter()
                    .filter(|t| w.iter().any(|x| x.tid == **t))
                    .count()
            })
        };
        let pool = build(2, false, "worker").expect("a pool of 2 starts");
        let tids: Vec<i32> = pool.broadcast(|_| OsThread::current().expect("on Linux").tid);
        assert_eq!(listed(&tids), 2, "both workers are listed once started");
        drop(pool);
        // The workers leave the list as they exit, after the pool is released.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while listed(&tids) > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(listed(&tids), 0, "a released pool's workers leave the list");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_may_run_on_at_least_one_core() {
        let cores = allowed_cores();
        assert!(!cores.is_empty());
        assert!(cores.len() <= libc::CPU_SETSIZE as usize);
    }
}
