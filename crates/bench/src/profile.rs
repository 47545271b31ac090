//! An in-process CPU profile of a point's timed windows: a flamegraph and its folded
//! stacks, with neither `perf` nor root (`gigagas run … --cpu-profile FILE`).
//!
//! [`profile_point`] runs extra verified passes of a point after its measured ones, with a
//! sampling profiler ([`pprof`], `setitimer(ITIMER_PROF)` and a signal handler that walks
//! the stack of whichever thread the CPU time was spent on) running only while a timed
//! window is open ([`gigagas_executor::observe_windows`]): scheduling and execution are
//! sampled, verification between batches and after the pass is not. The stacks of every
//! window are merged into one [`CpuProfile`]: folded stacks (`thread;outer;…;inner
//! count`, the format of `inferno` and Brendan Gregg's flamegraph scripts), written beside
//! an SVG flamegraph. Workers are merged into one root (`gigagas-worker`), so the graph
//! shows where all workers' time went; the coordinator's own root is the calling thread's.
//!
//! The measured figures are never taken from profiled passes: the signal handler costs a
//! stack walk per sample (about 1 % at the default frequency).

use crate::{bench::bench_pass, error::PassError, io::StoreContext};
use gigagas_executor::{Replay, WindowObserver, observe_windows};
use gigagas_grid::Point;
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

/// Samples per second of CPU time (a prime, so sampling does not beat with periodic work).
pub const DEFAULT_FREQUENCY: i32 = 997;

/// Timed window profiled per point at least (passes are repeated until their windows add
/// up to it).
pub const DEFAULT_PROFILE_WINDOW: Duration = Duration::from_secs(2);

/// Why a profile could not be taken or written.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The sampling profiler did not start or could not build its report.
    #[error("CPU profiler: {0}")]
    Profiler(#[from] pprof::Error),
    /// A profiled pass failed (it is verified like any other).
    #[error(transparent)]
    Pass(#[from] Box<PassError>),
    /// Writing the folded stacks or the flamegraph failed.
    #[error("writing {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// The flamegraph could not be drawn from the stacks.
    #[error("drawing the flamegraph {}: {message}", path.display())]
    Flamegraph {
        /// The SVG file.
        path: PathBuf,
        /// inferno's message.
        message: String,
    },
}

/// The merged stacks of the profiled windows of one point.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuProfile {
    /// Folded stack (`root;outer;…;inner`) → samples.
    pub stacks: BTreeMap<String, u64>,
    /// Timed windows profiled (passes × batches).
    pub windows: u64,
    /// Passes run with the profiler on.
    pub passes: u32,
}

impl CpuProfile {
    /// Samples in all stacks.
    pub fn samples(&self) -> u64 {
        self.stacks.values().sum()
    }

    /// The folded stacks, one `stack count` line each, sorted.
    pub fn folded(&self) -> String {
        let mut out = String::new();
        for (stack, n) in &self.stacks {
            out.push_str(stack);
            out.push(' ');
            out.push_str(&n.to_string());
            out.push('\n');
        }
        out
    }

    /// Write `<stem>.folded` and `<stem>.svg` (the flamegraph, titled `title`); returns the
    /// two paths.
    pub fn write(&self, stem: &Path, title: &str) -> Result<(PathBuf, PathBuf), ProfileError> {
        let folded_path = stem.with_extension("folded");
        let svg_path = stem.with_extension("svg");
        let folded = self.folded();
        std::fs::write(&folded_path, &folded).map_err(|source| ProfileError::Write {
            path: folded_path.clone(),
            source,
        })?;
        let mut options = inferno::flamegraph::Options::default();
        options.title = title.to_string();
        options.count_name = "samples".to_string();
        let mut svg = Vec::new();
        inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut svg).map_err(|e| {
            ProfileError::Flamegraph {
                path: svg_path.clone(),
                message: e.to_string(),
            }
        })?;
        std::fs::write(&svg_path, svg).map_err(|source| ProfileError::Write {
            path: svg_path.clone(),
            source,
        })?;
        Ok((folded_path, svg_path))
    }
}

/// A [`WindowObserver`] that samples while a window is open and merges every window's
/// stacks.
struct WindowProfiler {
    frequency: i32,
    guard: Mutex<Option<pprof::ProfilerGuard<'static>>>,
    profile: Mutex<CpuProfile>,
    error: Mutex<Option<pprof::Error>>,
}

impl WindowProfiler {
    fn fail(&self, e: pprof::Error) {
        self.error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(e);
    }
}

/// The root of a sample's stack: its thread, the pool's workers merged into one.
fn thread_root(name: &str) -> &str {
    match name.strip_prefix("gigagas-worker-") {
        Some(_) => "gigagas-worker",
        None => name,
    }
}

impl WindowObserver for WindowProfiler {
    fn opened(&self) {
        match pprof::ProfilerGuardBuilder::default()
            .frequency(self.frequency)
            .blocklist(&["libc", "libgcc", "pthread", "vdso"])
            .build()
        {
            Ok(guard) => *self.guard.lock().unwrap_or_else(|e| e.into_inner()) = Some(guard),
            Err(e) => self.fail(e),
        }
    }

    fn closed(&self) {
        let Some(guard) = self.guard.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        let report = match guard.report().build() {
            Ok(report) => report,
            Err(e) => return self.fail(e),
        };
        drop(guard);
        let mut profile = self.profile.lock().unwrap_or_else(|e| e.into_inner());
        profile.windows += 1;
        for (frames, count) in &report.data {
            let mut line = thread_root(&frames.thread_name_or_id()).to_string();
            for frame in frames.frames.iter().rev() {
                for symbol in frame.iter().rev() {
                    line.push(';');
                    // `;` separates frames in the folded format.
                    line.push_str(&symbol.to_string().replace(';', ":"));
                }
            }
            *profile.stacks.entry(line).or_default() += (*count).max(0) as u64;
        }
    }
}

/// Profile `point`: verified passes, the profiler on inside their timed windows only,
/// until the windows add up to `window` (at least one pass). The samples are the whole
/// process's: passes run from other threads meanwhile would be sampled too.
pub fn profile_point(
    replay: &Replay,
    point: &Point,
    verify: bool,
    mut store: Option<&mut StoreContext>,
    window: Duration,
    frequency: i32,
) -> Result<CpuProfile, ProfileError> {
    let profiler = Arc::new(WindowProfiler {
        frequency,
        guard: Mutex::new(None),
        profile: Mutex::new(CpuProfile::default()),
        error: Mutex::new(None),
    });
    observe_windows(Some(profiler.clone()));
    let mut timed = 0u64;
    let mut passes = 0u32;
    let result = loop {
        match bench_pass(replay, point, verify, store.as_deref_mut()) {
            Ok((timings, _)) => {
                timed += timings.wall_ns;
                passes += 1;
                if timed >= window.as_nanos() as u64 {
                    break Ok(());
                }
            }
            Err(e) => break Err(e),
        }
    };
    observe_windows(None);
    result.map_err(|e| ProfileError::Pass(Box::new(e)))?;
    if let Some(e) = profiler
        .error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        return Err(e.into());
    }
    let mut profile =
        std::mem::take(&mut *profiler.profile.lock().unwrap_or_else(|e| e.into_inner()));
    profile.passes = passes;
    Ok(profile)
}

/// The file stem of `point`'s profile under `path` (the `--cpu-profile` value, with or
/// without an extension): `path`'s stem, then `-` and the dump's name where a run has
/// several (`dump`), then `-` and the point's name; in both names every run of characters
/// that are not a letter, digit, `+` or `.` becomes one `-` (`prof-bal-2t-b20-ols`).
pub fn profile_stem(path: &Path, dump: Option<&str>, point: &Point) -> PathBuf {
    let mut stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    for name in dump
        .into_iter()
        .map(str::to_string)
        .chain([point.to_string()])
    {
        let mut slug = String::new();
        for c in name.to_lowercase().chars() {
            if c.is_ascii_alphanumeric() || c == '+' || c == '.' {
                slug.push(c);
            } else if !slug.ends_with('-') {
                slug.push('-');
            }
        }
        stem.push('-');
        stem.push_str(slug.trim_matches('-'));
    }
    path.with_file_name(stem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gigagas_grid::{RunConfig, SchedulerKind, TimedWork};

    #[test]
    fn a_stem_names_its_point() {
        let p = Point::Bal(RunConfig::new(
            std::num::NonZeroUsize::new(2).unwrap(),
            20,
            SchedulerKind::GasUsed,
        ));
        assert_eq!(
            profile_stem(Path::new("out/prof.svg"), None, &p),
            Path::new("out/prof-bal-2t-b20-gas-used")
        );
        assert_eq!(
            profile_stem(
                Path::new("prof"),
                None,
                &Point::Sequential(TimedWork::default())
            ),
            Path::new("prof-sequential")
        );
        assert_eq!(
            profile_stem(Path::new("prof"), Some("mainnet like/2"), &p),
            Path::new("prof-mainnet-like-2-bal-2t-b20-gas-used")
        );
    }

    #[test]
    fn folded_lines_are_sorted_stack_count_pairs() {
        let mut p = CpuProfile::default();
        p.stacks.insert("gigagas-worker;a;b".into(), 3);
        p.stacks.insert("main;c".into(), 1);
        assert_eq!(p.folded(), "gigagas-worker;a;b 3\nmain;c 1\n");
        assert_eq!(p.samples(), 4);
        assert_eq!(thread_root("gigagas-worker-11"), "gigagas-worker");
        assert_eq!(thread_root("main"), "main");
    }
}
