//! The global allocator, its name for the provenance of results, and its options.

/// mimalloc instead of glibc's malloc, as clients ship a tuned allocator (reth: jemalloc).
/// It serves both the sequential baseline and the parallel replay: revm allocates per
/// transaction (journal, state maps), and glibc returns freed heap to the OS between runs,
/// so every pass page-faults its memory in again.
///
/// Built with `--features heap-profile`, the binary keeps the system allocator instead, so
/// a heap profiler that hooks malloc (heaptrack, valgrind's massif) sees every allocation;
/// results then name the allocator `system`.
#[cfg(not(feature = "heap-profile"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The global allocator's name, for the provenance of results.
#[cfg(not(feature = "heap-profile"))]
pub(crate) const ALLOCATOR_NAME: &str = "mimalloc";
/// The global allocator's name, for the provenance of results.
#[cfg(feature = "heap-profile")]
pub(crate) const ALLOCATOR_NAME: &str = "system";
#[cfg(feature = "heap-profile")]
use {libmimalloc_sys as _, mimalloc as _};

/// mimalloc's option `mi_option_purge_delay` (its index in mimalloc 3's `mi_option_e`;
/// libmimalloc-sys names no constant for it).
#[cfg(not(feature = "heap-profile"))]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keep freed pages instead of returning them to the kernel 10 ms after they empty
/// (mimalloc's default purge delay): a pass frees its outputs after it ends, and the next
/// pass would fault the same pages in again, zeroed by the kernel, inside its timed window
/// (a 16-thread transfers run purged 3 GiB and spent a quarter of its CPU time in the
/// kernel; `docs/benchmarks.md`). The process's memory then stays at its peak
/// until it exits, which a benchmark run is.
#[cfg(not(feature = "heap-profile"))]
pub(crate) fn keep_freed_pages() {
    // SAFETY: setting an option is allowed at any time; -1 means "never purge".
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

#[cfg(feature = "heap-profile")]
pub(crate) fn keep_freed_pages() {}
