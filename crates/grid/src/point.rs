//! One point of a benchmark grid and how often it runs.

use crate::{Claims, SchedulerKind, StateRead, TimedWork};
use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};
use std::{fmt, num::NonZeroUsize};

/// The BAL replay's settings at one grid point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunConfig {
    /// Worker threads: never zero, from the plan to the pool.
    pub threads: NonZeroUsize,
    /// Blocks per mega-block.
    pub batch: usize,
    /// Order in which workers take items.
    pub scheduler: SchedulerKind,
    /// The optional steps of the timed work (sender recovery, receipts) and where the
    /// pre-state is read from: the same fields the sequential baseline's point has.
    pub work: TimedWork,
    /// How workers claim each batch's order: in chunks (the default), or one item per
    /// claim (the reference the chunk cut is checked against).
    pub claims: Claims,
}

impl RunConfig {
    /// `threads` workers over mega-blocks of `batch` blocks in `scheduler`'s order, with no
    /// optional timed work.
    pub fn new(threads: NonZeroUsize, batch: usize, scheduler: SchedulerKind) -> Self {
        Self {
            threads,
            batch,
            scheduler,
            work: TimedWork::default(),
            claims: Claims::Chunked,
        }
    }

    /// The same settings with workers claiming items as `claims` says.
    pub fn with_claims(self, claims: Claims) -> Self {
        Self { claims, ..self }
    }

    /// The same settings with these optional steps of the timed work.
    pub fn with_work(self, work: TimedWork) -> Self {
        Self { work, ..self }
    }
}

/// The replay point's name: the same as its [`Point`]'s.
impl fmt::Display for RunConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Point::Bal(*self).fmt(f)
    }
}

/// One point of a benchmark grid: the sequential baseline, or the BAL replay.
///
/// Results files store a point as flat fields, the same for both variants so that a row
/// reads alike whatever it measured: `mode` (`sequential` or `bal-parallel`), `threads`,
/// `batch`, `scheduler` (`null` for the sequential baseline, which runs on one thread
/// block by block), then the [`TimedWork`] fields `recover_senders`, `receipts` and
/// `state` (left out when the state is read from memory). Reading is strict: a replay
/// point without a scheduler, or a sequential one with a scheduler, more than one thread
/// or a batch, is an error rather than a guess.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Point {
    /// The sequential client loop (one revm `State`, no access list) with this timed work.
    Sequential(TimedWork),
    /// The BAL replay with these settings.
    Bal(RunConfig),
}

impl Point {
    /// Worker threads (1 for the sequential loop), as a number for tables and ratios.
    pub fn threads(&self) -> usize {
        self.thread_count().get()
    }

    /// Worker threads (1 for the sequential loop), never zero: what a pass runs on.
    pub fn thread_count(&self) -> NonZeroUsize {
        match self {
            Self::Sequential(_) => NonZeroUsize::MIN,
            Self::Bal(c) => c.threads,
        }
    }

    /// Blocks per mega-block (1 for the sequential loop, which runs block by block).
    pub fn batch(&self) -> usize {
        match self {
            Self::Sequential(_) => 1,
            Self::Bal(c) => c.batch,
        }
    }

    /// The scheduler (`None` for the sequential loop).
    pub fn scheduler(&self) -> Option<SchedulerKind> {
        match self {
            Self::Sequential(_) => None,
            Self::Bal(c) => Some(c.scheduler),
        }
    }

    /// The optional steps of the timed work and where the pre-state is read from.
    pub fn work(&self) -> TimedWork {
        match self {
            Self::Sequential(w) => *w,
            Self::Bal(c) => c.work,
        }
    }

    /// Whether this is the sequential baseline (the point every ratio over "sequential"
    /// is taken against).
    pub fn is_sequential(&self) -> bool {
        matches!(self, Self::Sequential(_))
    }

    /// The kind of point as results files and CSV name it: `sequential` or
    /// `bal-parallel` (the `mode` field).
    pub fn mode(&self) -> &'static str {
        PointMode::of(self).name()
    }

    /// The same point on one worker thread: the replay at the same batch, scheduler and
    /// timed work (the denominator of a "vs 1 thread" ratio); `None` for the sequential
    /// loop, which has no threads to take away.
    pub fn on_one_thread(&self) -> Option<Point> {
        match self {
            Self::Sequential(_) => None,
            Self::Bal(c) => Some(Self::Bal(RunConfig {
                threads: NonZeroUsize::MIN,
                ..*c
            })),
        }
    }
}

/// The `mode` field of a stored point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum PointMode {
    Sequential,
    BalParallel,
}

impl PointMode {
    fn of(point: &Point) -> Self {
        match point {
            Point::Sequential(_) => Self::Sequential,
            Point::Bal(_) => Self::BalParallel,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Sequential => "sequential",
            Self::BalParallel => "bal-parallel",
        }
    }
}

/// A point as results files store it (see [`Point`]): what its `Serialize` writes and its
/// `Deserialize` checks.
#[derive(Serialize, Deserialize)]
struct StoredPoint {
    mode: PointMode,
    threads: usize,
    batch: usize,
    scheduler: Option<SchedulerKind>,
    #[serde(flatten)]
    work: TimedWork,
    /// Stored only when items are claimed one by one (a replay's reference run).
    #[serde(default, skip_serializing_if = "Claims::is_chunked")]
    claims: Claims,
}

/// A stored point whose fields contradict each other.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum BadPoint {
    #[error("a `bal-parallel` point has no `scheduler`")]
    NoScheduler,
    #[error("a `bal-parallel` point runs on at least 1 thread (found threads 0)")]
    NoThreads,
    #[error(
        "a `sequential` point runs on 1 thread, block by block, without a scheduler or \
         claims (found threads {threads}, batch {batch}, scheduler {scheduler:?}, claims {claims})"
    )]
    SequentialWithSettings {
        threads: usize,
        batch: usize,
        scheduler: Option<SchedulerKind>,
        claims: Claims,
    },
}

impl StoredPoint {
    fn point(self) -> Result<Point, BadPoint> {
        let Self {
            mode,
            threads,
            batch,
            scheduler,
            work,
            claims,
        } = self;
        match mode {
            PointMode::Sequential
                if (threads, batch, scheduler, claims) == (1, 1, None, Claims::Chunked) =>
            {
                Ok(Point::Sequential(work))
            }
            PointMode::Sequential => Err(BadPoint::SequentialWithSettings {
                threads,
                batch,
                scheduler,
                claims,
            }),
            PointMode::BalParallel => {
                let scheduler = scheduler.ok_or(BadPoint::NoScheduler)?;
                let threads = NonZeroUsize::new(threads).ok_or(BadPoint::NoThreads)?;
                Ok(Point::Bal(
                    RunConfig::new(threads, batch, scheduler)
                        .with_work(work)
                        .with_claims(claims),
                ))
            }
        }
    }
}

impl Serialize for Point {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        StoredPoint {
            mode: PointMode::of(self),
            threads: self.threads(),
            batch: self.batch(),
            scheduler: self.scheduler(),
            work: self.work(),
            claims: match self {
                Self::Sequential(_) => Claims::Chunked,
                Self::Bal(c) => c.claims,
            },
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Point {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        StoredPoint::deserialize(deserializer)?
            .point()
            .map_err(D::Error::custom)
    }
}

/// The one name of a point: `sequential`, `BAL 2t b50 ols`, followed by ` +senders` and
/// ` +receipts` when those steps are inside the timed work, and `[cold store, prefetch,
/// keys]` when the pre-state is read from a store (cache state, I/O mode and, when the
/// replay reads with an access list, its design; `[warm store, on-demand]` without one).
impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sequential(_) => f.write_str("sequential")?,
            Self::Bal(c) => {
                write!(f, "BAL {}t b{} {}", c.threads, c.batch, c.scheduler)?;
                if !c.claims.is_chunked() {
                    write!(f, " {}", c.claims)?;
                }
            }
        }
        let work = self.work();
        if work.recover_senders {
            f.write_str(" +senders")?;
        }
        if work.receipts {
            f.write_str(" +receipts")?;
        }
        if !work.state_root.is_off() {
            write!(f, " +root {}", work.state_root)?;
        }
        match work.persist {
            crate::Persist::None => {}
            // The name points had before the modes, kept so that their results still match.
            crate::Persist::Block => f.write_str(" +persist")?,
            crate::Persist::Background => {
                f.write_str(" +persist background")?;
                if !work.backlog.is_default() {
                    let b = work.backlog;
                    write!(f, " {}/{}/{}", b.threshold, b.buffer, b.backpressure)?;
                }
            }
        }
        if let StateRead::Store { read, cache } = work.state {
            let (io, design) = (read.io(), read.design());
            write!(f, " [{cache} store, {io}")?;
            if let Some(design) = design {
                write!(f, ", {design}")?;
            }
            f.write_str("]")?;
        }
        Ok(())
    }
}

/// How many runs a point gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Repetition {
    /// Warm-up passes first: one pass each, verified, not in the summary.
    pub warmup: usize,
    /// Measured samples that enter the summary.
    pub repeats: usize,
    /// Verify every pass (off only to measure verification's cost).
    pub verify: bool,
    /// Minimum summed timed length of the passes of one measured sample, nanoseconds
    /// (0: one pass per sample).
    #[serde(default)]
    pub min_sample_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CacheState;
    use serde_json::json;

    const BOTH: TimedWork = TimedWork {
        recover_senders: true,
        receipts: true,
        state: StateRead::Memory,
        state_root: crate::StateRootPhase::Off,
        persist: crate::Persist::None,
        backlog: crate::Backlog::RETH,
    };

    const COLD_PREFETCH: TimedWork = TimedWork {
        recover_senders: false,
        receipts: false,
        state: StateRead::Store {
            read: crate::StoreRead::Prefetch(crate::BalDesign::Keys),
            cache: CacheState::Cold,
        },
        state_root: crate::StateRootPhase::Off,
        persist: crate::Persist::None,
        backlog: crate::Backlog::RETH,
    };

    #[test]
    fn a_point_has_one_name() {
        let c = RunConfig::new(
            std::num::NonZeroUsize::new(2).unwrap(),
            50,
            SchedulerKind::Ols,
        );
        assert_eq!(Point::Bal(c).to_string(), "BAL 2t b50 ols");
        assert_eq!(
            c.to_string(),
            "BAL 2t b50 ols",
            "RunConfig names itself as its point"
        );
        assert_eq!(
            Point::Bal(
                RunConfig::new(
                    std::num::NonZeroUsize::new(16).unwrap(),
                    1,
                    SchedulerKind::GasUsed
                )
                .with_work(BOTH)
            )
            .to_string(),
            "BAL 16t b1 gas-used +senders +receipts"
        );
        assert_eq!(
            Point::Sequential(TimedWork::default()).to_string(),
            "sequential"
        );
        assert_eq!(
            Point::Sequential(BOTH).to_string(),
            "sequential +senders +receipts"
        );
        assert_eq!(Point::Sequential(BOTH).threads(), 1);
        assert_eq!(
            Point::Bal(
                RunConfig::new(
                    std::num::NonZeroUsize::new(2).unwrap(),
                    42,
                    SchedulerKind::Ols
                )
                .with_work(COLD_PREFETCH)
            )
            .to_string(),
            "BAL 2t b42 ols [cold store, prefetch, keys]"
        );
        assert_eq!(
            Point::Sequential(TimedWork {
                state: StateRead::on_demand(CacheState::Warm),
                ..TimedWork::default()
            })
            .to_string(),
            "sequential [warm store, on-demand]"
        );
        assert_eq!(Point::Sequential(BOTH).scheduler(), None);
    }

    #[test]
    fn one_thread_keeps_everything_else() {
        let c = RunConfig::new(
            std::num::NonZeroUsize::new(8).unwrap(),
            42,
            SchedulerKind::GasLimit,
        )
        .with_work(COLD_PREFETCH);
        assert_eq!(
            Point::Bal(c).on_one_thread(),
            Some(Point::Bal(RunConfig {
                threads: NonZeroUsize::MIN,
                ..c
            }))
        );
        assert_eq!(Point::Sequential(BOTH).on_one_thread(), None);
        assert!(Point::Sequential(BOTH).is_sequential());
        assert!(!Point::Bal(c).is_sequential());
        assert_eq!(Point::Sequential(BOTH).mode(), "sequential");
        assert_eq!(Point::Bal(c).mode(), "bal-parallel");
    }

    /// The flat fields results files have always held, memory left out, and back.
    #[test]
    fn a_point_is_stored_flat_and_read_back() {
        let seq = Point::Sequential(BOTH);
        let stored = json!({
            "mode": "sequential", "threads": 1, "batch": 1, "scheduler": null,
            "recover_senders": true, "receipts": true,
        });
        assert_eq!(serde_json::to_value(seq).unwrap(), stored);
        assert_eq!(serde_json::from_value::<Point>(stored).unwrap(), seq);
        let bal = Point::Bal(
            RunConfig::new(
                std::num::NonZeroUsize::new(16).unwrap(),
                42,
                SchedulerKind::Ols,
            )
            .with_work(COLD_PREFETCH),
        );
        let stored = json!({
            "mode": "bal-parallel", "threads": 16, "batch": 42, "scheduler": "ols",
            "recover_senders": false, "receipts": false,
            "state": {"store": {"io": "prefetch", "cache": "cold", "bal_design": "keys"}},
        });
        assert_eq!(serde_json::to_value(bal).unwrap(), stored);
        assert_eq!(serde_json::from_value::<Point>(stored).unwrap(), bal);
    }

    /// A point whose fields contradict each other is refused, not guessed at.
    #[test]
    fn contradictory_points_are_refused() {
        let read =
            |v: serde_json::Value| serde_json::from_value::<Point>(v).unwrap_err().to_string();
        let no_scheduler = read(json!({
            "mode": "bal-parallel", "threads": 2, "batch": 1, "scheduler": null,
            "recover_senders": false, "receipts": false,
        }));
        assert!(
            no_scheduler.contains("has no `scheduler`"),
            "{no_scheduler}"
        );
        let seq = read(json!({
            "mode": "sequential", "threads": 2, "batch": 1, "scheduler": null,
            "recover_senders": false, "receipts": false,
        }));
        assert!(seq.contains("found threads 2"), "{seq}");
        let unknown = read(json!({
            "mode": "parallel", "threads": 2, "batch": 1, "scheduler": "ols",
            "recover_senders": false, "receipts": false,
        }));
        assert!(unknown.contains("unknown variant `parallel`"), "{unknown}");
    }
}
