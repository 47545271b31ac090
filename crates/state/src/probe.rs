//! [`probe_random_reads`]: the device's own random-read rate on a store's data file, for
//! a device bound (reads ÷ rate) beside a cold pass; [`probe_read_curve`]: that rate at 1,
//! 2, 4, … readers, the curve that caps a read phase in the whole-block model.

use crate::{StoreError, cache::fadvise_dontneed, layout::mix, store::quantile};
use std::{
    fs::{File, OpenOptions},
    io::ErrorKind,
    os::unix::fs::{FileExt, OpenOptionsExt},
    path::Path,
    time::{Duration, Instant},
};

/// Bytes per probe read: one store page.
pub const PROBE_BLOCK: usize = 4096;

/// The outcome of [`probe_random_reads`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeResult {
    /// Reads in flight at once (threads, each reading one block at a time).
    pub queue_depth: usize,
    /// Reads completed.
    pub reads: u64,
    /// Wall time of the probe.
    pub elapsed: Duration,
    /// Reads per second, all threads together.
    pub reads_per_s: f64,
    /// Median latency of one read.
    pub p50: Duration,
    /// 99th-percentile latency of one read.
    pub p99: Duration,
    /// `true` if the reads bypassed the page cache (`O_DIRECT`); `false` if the file
    /// system refused it and the probe read through the cache after evicting the file
    /// (then a block read twice in the probe is a cache hit: a bound, not a measurement,
    /// on small files).
    pub direct: bool,
}

/// Random [`PROBE_BLOCK`]-byte reads at block-aligned offsets of `file` for `duration`,
/// `queue_depth` at a time (one thread each), with `O_DIRECT` where the file system
/// allows it, else through the page cache after evicting the file. Short probes
/// (200 ms) are enough for a rate; latencies are per read.
pub fn probe_random_reads(
    file: &Path,
    duration: Duration,
    queue_depth: usize,
) -> Result<ProbeResult, StoreError> {
    let probe_err = |reason: String| StoreError::Probe {
        path: file.to_path_buf(),
        reason,
    };
    let queue_depth = queue_depth.max(1);
    let len = std::fs::metadata(file)
        .map_err(|e| StoreError::io("stat", file, e))?
        .len();
    let blocks = len / PROBE_BLOCK as u64;
    if blocks == 0 {
        return Err(probe_err(format!(
            "{len} bytes, less than one {PROBE_BLOCK}-byte block"
        )));
    }
    // A file system may accept O_DIRECT at open and refuse the reads.
    let (handle, direct) = match open_direct(file) {
        Ok(f) if read_block(&f, 0).is_ok() => (f, true),
        _ => (buffered(file)?, false),
    };

    let start = Instant::now();
    let deadline = start + duration;
    let results: Vec<Result<Vec<u64>, std::io::Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..queue_depth)
            .map(|thread| {
                let handle = &handle;
                scope.spawn(move || {
                    let mut latencies = Vec::with_capacity(4096);
                    let mut buf = vec![0u8; 2 * PROBE_BLOCK];
                    let offset = buf.as_ptr().align_offset(PROBE_BLOCK);
                    let block = &mut buf[offset..offset + PROBE_BLOCK];
                    let mut r = mix(0x7072_6f62_6500_0000 ^ thread as u64);
                    while Instant::now() < deadline {
                        r = mix(r);
                        let at = (r % blocks) * PROBE_BLOCK as u64;
                        let t = Instant::now();
                        handle.read_exact_at(block, at)?;
                        latencies.push(t.elapsed().as_nanos() as u64);
                    }
                    Ok(latencies)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(ErrorKind::Other.into())))
            .collect()
    });
    let elapsed = start.elapsed();
    let mut latencies = Vec::new();
    for r in results {
        latencies.extend(r.map_err(|e| probe_err(format!("read failed: {e}")))?);
    }
    let reads = latencies.len() as u64;
    let p50 = Duration::from_nanos(quantile(&mut latencies, 0.5));
    let p99 = Duration::from_nanos(quantile(&mut latencies, 0.99));
    Ok(ProbeResult {
        queue_depth,
        reads,
        elapsed,
        reads_per_s: reads as f64 / elapsed.as_secs_f64().max(1e-9),
        p50,
        p99,
        direct,
    })
}

/// The reader counts [`probe_read_curve`] measures up to `max_readers`: 1, 2, 4, … (powers
/// of two), and `max_readers` itself when it is not one (at least 1).
pub fn curve_reader_counts(max_readers: usize) -> Vec<usize> {
    let max = max_readers.max(1);
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |&r| r.checked_mul(2))
        .take_while(|&r| r <= max)
        .collect();
    if counts.last() != Some(&max) {
        counts.push(max);
    }
    counts
}

/// The device's random-read curve on `file`: [`probe_random_reads`] for `duration` at each
/// of [`curve_reader_counts`]`(max_readers)` readers in turn (one thread per reader, each
/// with one read in flight), as `(readers, reads per second)`, reader counts increasing.
/// Each point is its own probe, so the rates are as noisy as one probe's; a file the
/// device's cache can hold gives a cache's rate, not the device's.
pub fn probe_read_curve(
    file: &Path,
    duration: Duration,
    max_readers: usize,
) -> Result<Vec<(usize, f64)>, StoreError> {
    curve_reader_counts(max_readers)
        .into_iter()
        .map(|readers| {
            probe_random_reads(file, duration, readers).map(|probe| (readers, probe.reads_per_s))
        })
        .collect()
}

fn open_direct(file: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(file)
}

/// The file opened normally, with its cached pages dropped.
fn buffered(file: &Path) -> Result<File, StoreError> {
    let f = File::open(file).map_err(|e| StoreError::io("open", file, e))?;
    fadvise_dontneed(&f).map_err(|e| StoreError::io("fadvise", file, e))?;
    Ok(f)
}

fn read_block(file: &File, at: u64) -> std::io::Result<()> {
    let mut buf = vec![0u8; 2 * PROBE_BLOCK];
    let offset = buf.as_ptr().align_offset(PROBE_BLOCK);
    file.read_exact_at(&mut buf[offset..offset + PROBE_BLOCK], at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_counts_readers_in_powers_of_two_up_to_the_largest() {
        assert_eq!(curve_reader_counts(0), [1]);
        assert_eq!(curve_reader_counts(1), [1]);
        assert_eq!(curve_reader_counts(4), [1, 2, 4]);
        assert_eq!(curve_reader_counts(6), [1, 2, 4, 6]);
        assert_eq!(curve_reader_counts(16), [1, 2, 4, 8, 16]);
    }

    #[test]
    fn a_curve_of_a_small_file_has_a_point_per_reader_count() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data");
        std::fs::write(&file, vec![7u8; 16 * PROBE_BLOCK]).unwrap();
        let curve = probe_read_curve(&file, Duration::from_millis(5), 4).unwrap();
        let readers: Vec<usize> = curve.iter().map(|&(r, _)| r).collect();
        assert_eq!(readers, [1, 2, 4]);
        assert!(
            curve
                .iter()
                .all(|&(_, rate)| rate.is_finite() && rate >= 0.0)
        );
        // Less than a block: refused, not a curve of nothing.
        std::fs::write(&file, [1u8; 100]).unwrap();
        assert!(probe_read_curve(&file, Duration::from_millis(5), 2).is_err());
    }
}
