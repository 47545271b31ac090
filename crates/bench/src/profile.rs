//! An in-process CPU profile of a point's timed windows: a flamegraph and its folded
//! stacks, with neither `perf` nor root (`gigagas run … --cpu-profile FILE`).
//!
//! [`profile_point`] runs extra verified passes of a point after its measured ones, with a
//! sampling profiler running only while a timed window is open
//! ([`gigagas_executor::observe_windows`]): scheduling and execution are sampled,
//! verification between batches and after the pass is not. The stacks of every window are
//! merged into one [`CpuProfile`]: folded stacks (`thread;outer;…;inner count`, the format
//! of `inferno` and Brendan Gregg's flamegraph scripts), written beside an SVG flamegraph
//! and a JSON file of its figures. Workers are merged into one root (`gigagas-worker`), so
//! the graph shows where all workers' time went; the coordinator's own root is the calling
//! thread's.
//!
//! **Every thread sampled at the same rate.** [`pprof`] walks the stack of the thread a
//! `SIGPROF` is delivered to, and arms one process-wide `setitimer(ITIMER_PROF)`: the
//! kernel checks that timer once per scheduler tick for the whole process, so a profile
//! held about one sample per tick whatever the number of busy threads (a 16-core machine
//! gave 503 samples in 2 s at 1 thread, 380 at 16). On Linux its timer is disarmed, and
//! each window arms one CPU-time timer per sampled thread instead (`timer_create` on the
//! thread's own CPU clock, `SIGEV_THREAD_ID`, so the signal goes to that thread and
//! pprof's handler walks its stack): the window's thread and every worker of every pool
//! alive when the window opens ([`gigagas_executor::pool::with_worker_threads`], so pools
//! built or released between windows are followed). Between windows the timers pause,
//! each keeping the CPU time left to its next expiry, so that windows shorter than an
//! interval are sampled in their share. A per-thread CPU timer also fires at
//! most once per tick of its thread, so [`default_frequency`] is the kernel's tick rate,
//! and a profile states what it got: its samples, the CPU seconds of the sampled threads
//! and the samples per CPU-second ([`CpuProfile::summary`]). A pass starts no thread
//! inside its window: its workers and its readers are threads of pools its set-up built
//! ([`gigagas_executor::pool`]), so every thread that works in a window is sampled; the
//! process's CPU time in the windows is stated beside the sampled threads' so that any
//! other thread's share shows. Elsewhere than Linux, pprof's own process-wide timer samples.
//!
//! pprof records a sample only when no other thread's handler is recording one at that
//! instant (`try_write` on its collector), and per-thread timers fire on ticks, which are
//! aligned across cores: a small handler in front of pprof's lets one thread at a time
//! into it (a handler ran about 3 µs on this 2-core VM, so even 16 threads wait well under
//! a tick), and counts the signals, so that a profile shows the samples pprof dropped
//! (it drops those taken inside libc and the other blocklisted libraries).
//!
//! The measured figures are never taken from profiled passes: the signal handler costs a
//! stack walk per sample.

use crate::{bench::bench_pass, error::PassError, io::StoreContext};
use gigagas_executor::{CpuUsage, Replay, WindowObserver, observe_windows};
use gigagas_grid::Point;
use std::{
    cell::RefCell,
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

/// Samples per CPU-second of each sampled thread asked for by default: the kernel's tick
/// rate (`CONFIG_HZ`, read as the resolution of `CLOCK_MONOTONIC_COARSE`, one tick), the
/// most a CPU-time timer can deliver to one thread, as it is checked once per tick. 250
/// where that cannot be read.
pub fn default_frequency() -> u32 {
    #[cfg(target_os = "linux")]
    if let Ok(tick) = nix::time::clock_getres(nix::time::ClockId::CLOCK_MONOTONIC_COARSE)
        && let Some(hz) = 1_000_000_000u128.checked_div(Duration::from(tick).as_nanos())
    {
        return hz.clamp(1, MAX_FREQUENCY as u128) as u32;
    }
    250
}

/// The highest sampling frequency taken (samples per CPU-second per thread).
pub const MAX_FREQUENCY: u32 = 10_000;

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
    /// The per-thread CPU timers could not be armed (Linux: `timer_create`, `timer_settime`).
    #[error("per-thread CPU timers: {0}")]
    Timer(#[from] nix::Error),
    /// A frequency outside `1..=MAX_FREQUENCY` samples per CPU-second.
    #[error("a sampling frequency of {0} per CPU-second: it must be 1 to {MAX_FREQUENCY}")]
    Frequency(u32),
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

/// The merged stacks of the profiled windows of one point, and what they cover.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuProfile {
    /// Folded stack (`root;outer;…;inner`) → samples.
    pub stacks: BTreeMap<String, u64>,
    /// Timed windows profiled (passes × batches).
    pub windows: u64,
    /// Passes run with the profiler on.
    pub passes: u32,
    /// Samples asked per CPU-second of each sampled thread.
    pub frequency: u32,
    /// Sampled threads that ran in a window (the most of any window): the window's own
    /// thread and the pools' workers that used CPU time in it (1 elsewhere than Linux,
    /// where the process is sampled as one).
    pub threads: usize,
    /// Threads whose timers were armed in a window (the most of any window): the window's
    /// own and every pool worker alive when it opened, whether or not the machine gave it
    /// CPU time there (1 elsewhere than Linux).
    pub armed_threads: usize,
    /// CPU time of the sampled threads inside the windows, nanoseconds (elsewhere than
    /// Linux, the process's).
    pub sampled_cpu_ns: u64,
    /// CPU time of the whole process inside the windows (user and system, `getrusage`),
    /// nanoseconds: above [`Self::sampled_cpu_ns`] by what unsampled threads used.
    pub process_cpu_ns: u64,
    /// Wall time of the windows, nanoseconds.
    pub wall_ns: u64,
    /// Timer signals delivered to the sampled threads (Linux): above [`Self::samples`] by
    /// those pprof did not record, as it drops a sample taken inside libc, libgcc,
    /// pthread or the vDSO (unwinding there is not safe in a signal handler).
    pub signals: Option<u64>,
}

impl CpuProfile {
    /// Samples in all stacks.
    pub fn samples(&self) -> u64 {
        self.stacks.values().sum()
    }

    /// Samples per CPU-second of the sampled threads: [`Self::frequency`] where every
    /// expiry was delivered and recorded (0 with no CPU time).
    pub fn rate(&self) -> f64 {
        per_second(self.samples(), self.sampled_cpu_ns)
    }

    /// Samples per wall-second of the windows: about the rate times the busy threads.
    pub fn samples_per_wall_second(&self) -> f64 {
        per_second(self.samples(), self.wall_ns)
    }

    /// Samples in the stacks rooted at `root` (a thread name, the workers merged into
    /// `gigagas-worker`).
    pub fn samples_of(&self, root: &str) -> u64 {
        self.stacks
            .iter()
            .filter(|(stack, _)| stack.split(';').next() == Some(root))
            .map(|(_, n)| n)
            .sum()
    }

    /// One line of what the profile holds: its samples, the CPU seconds they cover and the
    /// effective rate, e.g. `1234 samples (1300 signals) over 4.94 CPU-s of 2 sampled
    /// threads (process 4.95 CPU-s) in 2.47 s of windows: 250 per CPU-s (asked 250), 500
    /// per wall-s`.
    pub fn summary(&self) -> String {
        format!(
            "{} samples{} over {:.2} CPU-s of {} sampled thread{} (process {:.2} CPU-s) in \
             {:.2} s of windows: {:.0} per CPU-s (asked {}), {:.0} per wall-s",
            self.samples(),
            self.signals
                .map(|n| format!(" ({n} signals)"))
                .unwrap_or_default(),
            self.sampled_cpu_ns as f64 / 1e9,
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            self.process_cpu_ns as f64 / 1e9,
            self.wall_ns as f64 / 1e9,
            self.rate(),
            self.frequency,
            self.samples_per_wall_second(),
        )
    }

    /// The profile's figures as JSON (what `<stem>.json` holds).
    pub fn stats_json(&self) -> serde_json::Value {
        serde_json::json!({
            "samples": self.samples(),
            "signals": self.signals,
            "frequency_per_cpu_s": self.frequency,
            "samples_per_cpu_s": self.rate(),
            "samples_per_wall_s": self.samples_per_wall_second(),
            "sampled_threads": self.threads,
            "armed_threads": self.armed_threads,
            "sampled_cpu_s": self.sampled_cpu_ns as f64 / 1e9,
            "process_cpu_s": self.process_cpu_ns as f64 / 1e9,
            "wall_s": self.wall_ns as f64 / 1e9,
            "windows": self.windows,
            "passes": self.passes,
        })
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

    /// Write `<stem>.folded`, `<stem>.svg` (the flamegraph, titled `title`, its subtitle
    /// the [`Self::summary`]) and `<stem>.json` ([`Self::stats_json`]).
    pub fn write(&self, stem: &Path, title: &str) -> Result<ProfileFiles, ProfileError> {
        let folded_path = stem.with_extension("folded");
        let svg_path = stem.with_extension("svg");
        let stats_path = stem.with_extension("json");
        let folded = self.folded();
        std::fs::write(&folded_path, &folded).map_err(|source| ProfileError::Write {
            path: folded_path.clone(),
            source,
        })?;
        let stats = serde_json::to_string_pretty(&self.stats_json()).expect("plain JSON values");
        std::fs::write(&stats_path, stats + "\n").map_err(|source| ProfileError::Write {
            path: stats_path.clone(),
            source,
        })?;
        let mut options = inferno::flamegraph::Options::default();
        options.title = title.to_string();
        options.subtitle = Some(self.summary());
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
        Ok(ProfileFiles {
            folded: folded_path,
            svg: svg_path,
            stats: stats_path,
        })
    }
}

/// The files [`CpuProfile::write`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileFiles {
    /// The folded stacks (`<stem>.folded`).
    pub folded: PathBuf,
    /// The flamegraph (`<stem>.svg`).
    pub svg: PathBuf,
    /// The figures: samples, CPU seconds, rates (`<stem>.json`).
    pub stats: PathBuf,
}

/// `count` per second of `ns` nanoseconds (0 for none).
fn per_second(count: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        count as f64 * 1e9 / ns as f64
    }
}

/// A [`WindowObserver`] that samples while a window is open and merges every window's
/// stacks.
struct WindowProfiler {
    frequency: u32,
    profile: Mutex<CpuProfile>,
    error: Mutex<Option<ProfileError>>,
}

thread_local! {
    /// The sampling of the profile taken on this thread: its per-thread timers, kept from
    /// one window to the next, and the window open now. A window opens and closes on the
    /// thread that times it, and a timer's handle stays on the thread that made it.
    static SAMPLING: RefCell<Option<Sampling>> = const { RefCell::new(None) };
}

/// The timers of a profile, and its open window.
struct Sampling {
    timers: timers::ThreadTimers,
    open: Option<OpenWindow>,
}

/// What samples an open window, and where it started.
struct OpenWindow {
    guard: pprof::ProfilerGuard<'static>,
    process_cpu: CpuUsage,
    started: Instant,
}

/// What a window covered, taken as it closed.
struct ClosedWindow {
    guard: pprof::ProfilerGuard<'static>,
    wall_ns: u64,
    process_cpu_ns: u64,
    paused: Paused,
}

impl WindowProfiler {
    fn fail(&self, e: ProfileError) {
        self.error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(e);
    }

    /// Start pprof (its handler) and the per-thread timers.
    fn open(&self, sampling: &mut Sampling) -> Result<(), ProfileError> {
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(timers::pprof_frequency(self.frequency))
            .blocklist(&["libc", "libgcc", "pthread", "vdso"])
            .build()?;
        if let Err(e) = sampling.timers.resume() {
            sampling.timers.pause();
            return Err(e.into());
        }
        sampling.open = Some(OpenWindow {
            guard,
            process_cpu: CpuUsage::now(),
            started: Instant::now(),
        });
        Ok(())
    }
}

/// Stop sampling the window open on this thread, if any.
fn close_window() -> Option<ClosedWindow> {
    SAMPLING.with(|s| {
        let mut s = s.borrow_mut();
        let sampling = s.as_mut()?;
        let open = sampling.open.take()?;
        let wall_ns = open.started.elapsed().as_nanos() as u64;
        let cpu = CpuUsage::now().since(&open.process_cpu);
        // The timers stop first, so that no signal arrives once pprof's handler is gone.
        let paused = sampling.timers.pause();
        Some(ClosedWindow {
            guard: open.guard,
            wall_ns,
            process_cpu_ns: cpu.user_ns + cpu.system_ns,
            paused,
        })
    })
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
        let opened = SAMPLING.with(|s| match s.borrow_mut().as_mut() {
            Some(sampling) => self.open(sampling),
            None => Ok(()),
        });
        if let Err(e) = opened {
            self.fail(e);
        }
    }

    fn closed(&self) {
        let Some(window) = close_window() else {
            return;
        };
        let report = match window.guard.report().build() {
            Ok(report) => report,
            Err(e) => return self.fail(e.into()),
        };
        drop(window.guard);
        let paused = window.paused;
        let mut profile = self.profile.lock().unwrap_or_else(|e| e.into_inner());
        profile.windows += 1;
        profile.threads = profile.threads.max(paused.threads);
        profile.armed_threads = profile.armed_threads.max(paused.armed);
        profile.wall_ns += window.wall_ns;
        profile.process_cpu_ns += window.process_cpu_ns;
        profile.sampled_cpu_ns += paused.cpu_ns.unwrap_or(window.process_cpu_ns);
        profile.signals = paused.signals.map(|n| profile.signals.unwrap_or(0) + n);
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

/// What the per-thread timers covered in a window.
struct Paused {
    /// Sampled threads that ran in it (a tenth of the busiest one's CPU time or more).
    threads: usize,
    /// Threads whose timers were armed in it.
    armed: usize,
    /// Their CPU time in it, nanoseconds (`None`: not known per thread; the process's).
    cpu_ns: Option<u64>,
    /// Timer signals delivered in it (`None`: not counted).
    signals: Option<u64>,
}

/// Per-thread CPU-time timers that send `SIGPROF` to their own thread (Linux).
#[cfg(target_os = "linux")]
mod timers {
    use super::Paused;
    use gigagas_executor::pool::{OsThread, with_worker_threads};
    use nix::{
        sys::{
            signal::{SaFlags, SigAction, SigEvent, SigHandler, SigSet, SigevNotify, Signal},
            timer::{Expiration, Timer, TimerSetTimeFlags},
        },
        time::{ClockId, clock_gettime},
    };
    use std::{
        sync::{
            OnceLock,
            atomic::{AtomicBool, AtomicU64, Ordering},
        },
        time::Duration,
    };

    /// A `SA_SIGINFO` signal handler.
    type Handler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

    /// pprof's `SIGPROF` handler, as it installs it.
    static PPROF_HANDLER: OnceLock<Handler> = OnceLock::new();
    /// Set while a thread runs pprof's handler.
    static RECORDING: AtomicBool = AtomicBool::new(false);
    /// `SIGPROF`s delivered to [`one_at_a_time`] so far.
    static DELIVERED: AtomicU64 = AtomicU64::new(0);

    /// The `SIGPROF` handler while per-thread timers sample: counts the signal, then runs
    /// pprof's handler once no other thread is in it. pprof's handler records a sample
    /// only if its collector is free (`try_write`), and the per-thread timers of threads
    /// on different cores fire on the same tick: unserialised, most of them would be lost
    /// at many threads. It uses atomics and `sched_yield` only (async-signal-safe), and no
    /// thread waits for itself (`SIGPROF` is blocked while its own handler runs).
    extern "C" fn one_at_a_time(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        DELIVERED.fetch_add(1, Ordering::Relaxed);
        let Some(pprof) = PPROF_HANDLER.get() else {
            return;
        };
        let mut spins = 0u32;
        while RECORDING
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins < 1_000 {
                std::hint::spin_loop();
            } else {
                // The recording thread may have been preempted: let it run.
                // SAFETY: `sched_yield` has no preconditions and is async-signal-safe.
                unsafe { libc::sched_yield() };
            }
        }
        pprof(signal, info, context);
        RECORDING.store(false, Ordering::Release);
    }

    /// Put [`one_at_a_time`] in front of the `SIGPROF` handler pprof just installed.
    fn serialise_pprof() -> Result<(), nix::Error> {
        let ours = SigAction::new(
            SigHandler::SigAction(one_at_a_time),
            SaFlags::SA_SIGINFO | SaFlags::SA_RESTART,
            SigSet::empty(),
        );
        // SAFETY: `one_at_a_time` is async-signal-safe (above) and calls pprof's handler
        // with the arguments the kernel gave it, as pprof's own installation would. pprof
        // puts `SIG_IGN` back when its guard is dropped.
        let old = unsafe { nix::sys::signal::sigaction(Signal::SIGPROF, &ours) }?;
        match old.handler() {
            SigHandler::SigAction(pprof)
                if !std::ptr::fn_addr_eq(pprof, one_at_a_time as Handler) =>
            {
                let installed = *PPROF_HANDLER.get_or_init(|| pprof);
                // pprof installs the same function every time.
                if std::ptr::fn_addr_eq(installed, pprof) {
                    return Ok(());
                }
            }
            SigHandler::SigAction(_) => return Ok(()),
            _ => {}
        }
        // Not pprof's handler: leave things as they were.
        // SAFETY: restores the disposition that was there.
        unsafe { nix::sys::signal::sigaction(Signal::SIGPROF, &old) }?;
        Err(nix::Error::EINVAL)
    }

    /// The frequency pprof is started with: 1 Hz, its process-wide timer then disarmed at
    /// once ([`ThreadTimers::resume`]); pprof only installs its handler for us.
    pub(super) fn pprof_frequency(_frequency: u32) -> i32 {
        1
    }

    /// The interval of a timer that delivers `frequency` signals per CPU-second: `1 /
    /// frequency`, or 90 % of a tick where that is a tick or less. The kernel checks a CPU-time timer once
    /// per tick of its thread, so where `1 / frequency` is a tick or less every tick on which
    /// the thread ran delivers one signal, the expiries between folded into it. An interval
    /// of exactly one tick loses ticks to jitter instead: on a 250 Hz kernel, 226–235
    /// signals per CPU-second at 2 threads against 240–248 with 90 % of a tick.
    pub(super) fn timer_interval(frequency: u32) -> Duration {
        let asked = Duration::from_nanos(1_000_000_000 / u64::from(frequency.max(1)));
        let tick = Duration::from_nanos(1_000_000_000 / u64::from(super::default_frequency()));
        if asked <= tick {
            tick.mul_f64(0.9)
        } else {
            asked
        }
    }

    /// A sampled thread's timer.
    struct Sampled {
        thread: OsThread,
        timer: Timer,
        /// CPU time left to its next expiry while paused (carried from one window to the
        /// next, so that windows shorter than an interval are sampled in their share).
        next: Duration,
        /// Its CPU clock when armed (`None` while paused).
        armed_at: Option<Duration>,
    }

    /// One timer per sampled thread, armed while a window is open and paused between
    /// windows; a thread's timer is deleted once the thread is gone (or with these).
    pub(super) struct ThreadTimers {
        interval: Duration,
        sampled: Vec<Sampled>,
        delivered_at: u64,
    }

    impl ThreadTimers {
        /// No timer yet: [`Self::resume`] arms them.
        pub(super) fn new(frequency: u32) -> Self {
            Self {
                interval: timer_interval(frequency),
                sampled: Vec::new(),
                delivered_at: 0,
            }
        }

        /// A window opens: disarm the process-wide `ITIMER_PROF` that pprof armed, put
        /// [`one_at_a_time`] in front of pprof's handler, and arm a timer of
        /// [`timer_interval`] on the calling thread and on every live pool worker, each
        /// sending `SIGPROF` to its own thread (the first expiry where the last window
        /// left it). Timers of threads that are gone are deleted.
        pub(super) fn resume(&mut self) -> Result<(), nix::Error> {
            let off = libc::itimerval {
                it_interval: libc::timeval {
                    tv_sec: 0,
                    tv_usec: 0,
                },
                it_value: libc::timeval {
                    tv_sec: 0,
                    tv_usec: 0,
                },
            };
            // SAFETY: `off` is a valid `itimerval` for the call; the old value is not asked.
            nix::errno::Errno::result(unsafe {
                libc::setitimer(libc::ITIMER_PROF, &off, std::ptr::null_mut())
            })?;
            serialise_pprof()?;
            self.delivered_at = DELIVERED.load(Ordering::Relaxed);
            let me = OsThread::current().ok_or(nix::Error::ENOSYS)?;
            let interval = self.interval;
            // The list stays locked while the timers are armed: no listed worker exits.
            with_worker_threads(|workers| {
                let live: Vec<OsThread> = std::iter::once(me)
                    .chain(workers.iter().copied().filter(|w| w.tid != me.tid))
                    .collect();
                self.sampled.retain(|s| live.contains(&s.thread));
                for thread in live {
                    if self.sampled.iter().any(|s| s.thread == thread) {
                        continue;
                    }
                    let timer = Timer::new(
                        ClockId::from_raw(thread.cpu_clock),
                        SigEvent::new(SigevNotify::SigevThreadId {
                            signal: Signal::SIGPROF,
                            thread_id: thread.tid,
                            si_value: 0,
                        }),
                    )?;
                    self.sampled.push(Sampled {
                        thread,
                        timer,
                        next: interval,
                        armed_at: None,
                    });
                }
                for s in &mut self.sampled {
                    s.timer.set(
                        Expiration::IntervalDelayed(s.next.into(), interval.into()),
                        TimerSetTimeFlags::empty(),
                    )?;
                    let clock = ClockId::from_raw(s.thread.cpu_clock);
                    s.armed_at = Some(clock_gettime(clock)?.into());
                }
                Ok(())
            })
        }

        /// The window closes: pause every armed timer, keeping the CPU time left to its
        /// next expiry; returns what the timers covered since [`Self::resume`] (a worker
        /// that exited meanwhile counts nothing, and its timer is deleted).
        pub(super) fn pause(&mut self) -> Paused {
            let me = OsThread::current().map(|t| t.tid);
            let interval = self.interval;
            // Under the list's lock: every clock read is of a thread still alive.
            let used: Vec<u64> = with_worker_threads(|workers| {
                self.sampled
                    .retain(|s| Some(s.thread.tid) == me || workers.contains(&s.thread));
                self.sampled
                    .iter_mut()
                    .filter_map(|s| {
                        let armed_at = s.armed_at.take()?;
                        s.next = match s.timer.get() {
                            Ok(Some(Expiration::IntervalDelayed(next, _))) => next.into(),
                            Ok(Some(Expiration::OneShot(next))) => next.into(),
                            _ => interval,
                        };
                        let _ = s.timer.set(
                            Expiration::OneShot(Duration::ZERO.into()),
                            TimerSetTimeFlags::empty(),
                        );
                        let now = clock_gettime(ClockId::from_raw(s.thread.cpu_clock)).ok()?;
                        Some(Duration::from(now).saturating_sub(armed_at).as_nanos() as u64)
                    })
                    .collect()
            });
            // A thread that ran a tenth of the busiest one's time or more: a pool thread
            // that woke for a moment to look for a job it did not get is not a worker.
            let busiest = used.iter().copied().max().unwrap_or(0);
            Paused {
                threads: used
                    .iter()
                    .filter(|&&ns| ns > 0 && ns * 10 >= busiest)
                    .count(),
                armed: used.len(),
                cpu_ns: Some(used.iter().sum()),
                signals: Some(DELIVERED.load(Ordering::Relaxed) - self.delivered_at),
            }
        }
    }
}

/// Elsewhere than Linux: pprof's own process-wide timer samples.
#[cfg(not(target_os = "linux"))]
mod timers {
    use super::Paused;

    /// pprof's own timer samples at the frequency asked.
    pub(super) fn pprof_frequency(frequency: u32) -> i32 {
        frequency as i32
    }

    /// Nothing to arm: the process is sampled as one.
    pub(super) struct ThreadTimers;

    impl ThreadTimers {
        pub(super) fn new(_frequency: u32) -> Self {
            Self
        }

        pub(super) fn resume(&mut self) -> Result<(), nix::Error> {
            Ok(())
        }

        /// One "thread", the process; its CPU time is the window's `getrusage`; signals
        /// are not counted.
        pub(super) fn pause(&mut self) -> Paused {
            Paused {
                threads: 1,
                armed: 1,
                cpu_ns: None,
                signals: None,
            }
        }
    }
}

/// Profile `point`: verified passes, the profiler on inside their timed windows only,
/// until the windows add up to `window` (at least one pass), sampling each sampled thread
/// `frequency` times per CPU-second ([`default_frequency`]: the most the kernel
/// delivers). Passes run from other threads meanwhile are not sampled, but their pools'
/// workers are.
pub fn profile_point(
    replay: &Replay,
    pass_cache: &gigagas_executor::PassCache,
    point: &Point,
    verify: bool,
    mut store: Option<&mut StoreContext>,
    window: Duration,
    frequency: u32,
) -> Result<CpuProfile, ProfileError> {
    if !(1..=MAX_FREQUENCY).contains(&frequency) {
        return Err(ProfileError::Frequency(frequency));
    }
    let profiler = Arc::new(WindowProfiler {
        frequency,
        profile: Mutex::new(CpuProfile {
            frequency,
            ..CpuProfile::default()
        }),
        error: Mutex::new(None),
    });
    SAMPLING.with(|s| {
        *s.borrow_mut() = Some(Sampling {
            timers: timers::ThreadTimers::new(frequency),
            open: None,
        })
    });
    observe_windows(Some(profiler.clone()));
    let mut timed = 0u64;
    let mut passes = 0u32;
    let result = loop {
        match bench_pass(replay, pass_cache, point, verify, store.as_deref_mut()) {
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
    // Every timer is deleted (a window is closed before its pass returns).
    SAMPLING.with(|s| s.borrow_mut().take());
    result.map_err(|e| ProfileError::Pass(Box::new(e)))?;
    if let Some(e) = profiler
        .error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        return Err(e);
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
    fn a_profile_states_its_rates() {
        let mut p = CpuProfile {
            frequency: 250,
            threads: 2,
            sampled_cpu_ns: 2_000_000_000,
            process_cpu_ns: 2_100_000_000,
            wall_ns: 1_000_000_000,
            signals: Some(480),
            ..CpuProfile::default()
        };
        p.stacks.insert("gigagas-worker;a".into(), 230);
        p.stacks.insert("main;b".into(), 220);
        assert_eq!(p.samples_of("gigagas-worker"), 230);
        assert_eq!(p.samples_of("main"), 220);
        assert_eq!(p.rate(), 225.0);
        assert_eq!(p.samples_per_wall_second(), 450.0);
        assert_eq!(
            p.summary(),
            "450 samples (480 signals) over 2.00 CPU-s of 2 sampled threads (process 2.10 \
             CPU-s) in 1.00 s of windows: 225 per CPU-s (asked 250), 450 per wall-s"
        );
        let stats = p.stats_json();
        assert_eq!(stats["samples"], 450);
        assert_eq!(stats["samples_per_cpu_s"], 225.0);
        assert_eq!(CpuProfile::default().rate(), 0.0);
    }

    #[test]
    fn the_default_frequency_is_one_the_kernel_delivers() {
        let hz = default_frequency();
        assert!((1..=MAX_FREQUENCY).contains(&hz), "{hz}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_timer_of_a_tick_or_less_fires_every_tick() {
        let tick = Duration::from_nanos(1_000_000_000 / u64::from(default_frequency()));
        assert_eq!(
            timers::timer_interval(default_frequency()),
            tick.mul_f64(0.9)
        );
        assert_eq!(timers::timer_interval(MAX_FREQUENCY), tick.mul_f64(0.9));
        assert_eq!(timers::timer_interval(1), Duration::from_secs(1));
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
