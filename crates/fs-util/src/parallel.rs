//! One ordered parallel map for the I/O-bound work of every crate (node requests, loading
//! files): a fixed number of scoped threads take the items in order, one at a time, and
//! the results come back in the items' order.
//!
//! Items are handed out in order, so at most `threads` are in flight at any moment (a node
//! is never sent more concurrent requests than asked for) and, with [`try_ordered_map`],
//! a failure stops the handing out: the items after it that no thread took yet never run.
//! For CPU-bound work over many small items, rayon's work stealing is the better tool.

use std::sync::{
    atomic::{AtomicBool, AtomicUsize, Ordering},
    mpsc,
};

/// Run `f` on every item with up to `threads` in parallel, items taken in
/// order; `on_done(i)` is called on the calling thread as item `i` finishes (in completion
/// order, for progress). Stops handing out items once `stop` says a result should stop
/// the run. Returns each item's result, `None` for the items never run.
fn run<T: Sync, R: Send>(
    items: &[T],
    threads: std::num::NonZeroUsize,
    f: impl Fn(&T) -> R + Sync,
    stop: impl Fn(&R) -> bool + Sync,
    mut on_done: impl FnMut(usize),
) -> Vec<Option<R>> {
    let mut results: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    // No more threads than items (one with none).
    let workers = threads.get().min(items.len().max(1));
    if workers == 1 {
        for (i, item) in items.iter().enumerate() {
            let r = f(item);
            let done = stop(&r);
            results[i] = Some(r);
            on_done(i);
            if done {
                break;
            }
        }
        return results;
    }
    let next = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (tx, next, stopped, f, stop) = (tx.clone(), &next, &stopped, &f, &stop);
            scope.spawn(move || {
                while !stopped.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    if stop(&r) {
                        stopped.store(true, Ordering::Relaxed);
                    }
                    if tx.send((i, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, r) in rx {
            results[i] = Some(r);
            on_done(i);
        }
    });
    results
}

/// `f` applied to every item, on up to `threads` scoped threads, items taken
/// in order; the results in the items' order. `on_done(i)` runs on the calling thread as
/// item `i` finishes, in completion order (for a progress bar). A panic in `f` is
/// propagated once every thread has stopped.
pub fn ordered_map<T: Sync, R: Send>(
    items: &[T],
    threads: std::num::NonZeroUsize,
    f: impl Fn(&T) -> R + Sync,
    on_done: impl FnMut(usize),
) -> Vec<R> {
    run(items, threads, f, |_| false, on_done)
        .into_iter()
        .map(|r| r.expect("without a stop every item runs"))
        .collect()
}

/// Like [`ordered_map`] for a fallible `f`: after a failure no further item is started
/// (those already running finish), and the error returned is that of the first failed
/// item in the items' order, as a sequential loop would return (every item before it ran,
/// since items are taken in order). The results in the items' order when all succeed.
pub fn try_ordered_map<T: Sync, R: Send, E: Send>(
    items: &[T],
    threads: std::num::NonZeroUsize,
    f: impl Fn(&T) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E> {
    let results = run(items, threads, f, Result::is_err, |_| {});
    // Items are taken in order: the ones never run all come after the first failure.
    let mut out = Vec::with_capacity(results.len());
    for r in results {
        match r {
            Some(Ok(v)) => out.push(v),
            Some(Err(e)) => return Err(e),
            None => unreachable!("an item is skipped only after a failure before it"),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(threads: usize) -> std::num::NonZeroUsize {
        std::num::NonZeroUsize::new(threads).unwrap()
    }
    use std::{sync::atomic::AtomicUsize, time::Duration};

    #[test]
    fn results_keep_the_items_order() {
        let items: Vec<u64> = (0..50).collect();
        for threads in [1, 3, 8, 100] {
            let mut done = Vec::new();
            // Later items finish first.
            let out = ordered_map(
                &items,
                n(threads),
                |&i| {
                    std::thread::sleep(Duration::from_micros(50 * (50 - i)));
                    i * 2
                },
                |i| done.push(i),
            );
            assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
            done.sort_unstable();
            assert_eq!(done, (0..50).collect::<Vec<usize>>(), "{threads} threads");
        }
        assert!(ordered_map(&[] as &[u8], n(4), |_| (), |_| {}).is_empty());
        assert_eq!(
            try_ordered_map(&[1, 2, 3], n(2), |&i| Ok::<_, ()>(i)),
            Ok(vec![1, 2, 3])
        );
    }

    #[test]
    fn at_most_threads_items_run_at_once() {
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let items = [(); 40];
        ordered_map(
            &items,
            n(3),
            |_| {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(2));
                running.fetch_sub(1, Ordering::SeqCst);
            },
            |_| {},
        );
        // The items overlap, three at a time and never more.
        assert_eq!(most.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_failure_stops_the_run_and_the_first_one_in_order_is_returned() {
        for threads in [1, 4] {
            let ran = AtomicUsize::new(0);
            let items: Vec<usize> = (0..1000).collect();
            let r = try_ordered_map(&items, n(threads), |&i| {
                ran.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_micros(100));
                // Two failures: the earlier one is returned whichever finishes first.
                match i {
                    5 => {
                        std::thread::sleep(Duration::from_millis(5));
                        Err(format!("item {i}"))
                    }
                    6 => Err(format!("item {i}")),
                    _ => Ok(i),
                }
            });
            assert_eq!(r, Err("item 5".to_string()), "{threads} threads");
            let ran = ran.load(Ordering::SeqCst);
            assert!(
                ran < 100,
                "{threads} threads: {ran} items ran after the failure"
            );
        }
    }
}
