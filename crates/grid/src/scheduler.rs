//! The schedulers by name.

use crate::schedule::{GasLimit, GasUsed, HeavyFirst, Ols, Oracle, Scheduler};
use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};
use std::{
    cmp::Ordering,
    fmt,
    hash::{Hash, Hasher},
    sync::{Mutex, PoisonError},
};

/// The schedulers by name, for the command line, configs and result rows: the built-in
/// ones, and one's own ([`SchedulerKind::own`]). Each maps to its ordering
/// ([`SchedulerKind::ordering`], `gigagas_grid::schedule::scheduler`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    /// Ordered list scheduling: block order.
    Ols,
    /// Largest gas used first (longest-processing-time rule), from the receipts.
    GasUsed,
    /// Largest gas limit first: what a builder knows before execution.
    GasLimit,
    /// The heavy transactions first (by gas used, each more than a small share of one
    /// worker's work), longest first, then the rest in block order: the balance of
    /// largest-first, and the locality of block order for the many small ones.
    HeavyFirst,
    /// The oracle, a reference and never a default: heavy-first by execution time, the
    /// times measured in a 1-thread profiling pass of the same dump before the measured
    /// rounds. No real scheduler knows them; it shows what a better gas proxy could win.
    Oracle,
    /// A scheduler of one's own: an implementation of [`Scheduler`] outside this crate,
    /// named by itself ([`SchedulerKind::own`]). Results store it as `{"own": NAME}`;
    /// tables and CSV show its name. It runs from the program that defines it, never from
    /// the command line or a sweep config.
    Own(OwnScheduler),
}

impl SchedulerKind {
    /// The schedulers `all` and the defaults run; [`SchedulerKind::HeavyFirst`] and the
    /// [`SchedulerKind::Oracle`] are asked for by name.
    pub const ALL: [SchedulerKind; 3] = [
        SchedulerKind::Ols,
        SchedulerKind::GasUsed,
        SchedulerKind::GasLimit,
    ];

    /// Every scheduler a name can ask for: [`SchedulerKind::ALL`],
    /// [`SchedulerKind::HeavyFirst`] and the [`SchedulerKind::Oracle`]. The one list of
    /// names: parsing and its error message read it.
    pub const NAMED: [SchedulerKind; 5] = [
        SchedulerKind::Ols,
        SchedulerKind::GasUsed,
        SchedulerKind::GasLimit,
        SchedulerKind::HeavyFirst,
        SchedulerKind::Oracle,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Ols => "ols",
            SchedulerKind::GasUsed => "gas-used",
            SchedulerKind::GasLimit => "gas-limit",
            SchedulerKind::HeavyFirst => "heavy-first",
            SchedulerKind::Oracle => "oracle",
            SchedulerKind::Own(own) => own.0.name,
        }
    }

    /// `scheduler` as a kind that grid points, plans and results carry, named by its
    /// [`Scheduler::name`]: how a scheduler of one's own runs through the executor and the
    /// bench crate, on the built-in ones' path (`crates/bench/examples/own_scheduler.rs`).
    /// A `'static` reference: a unit struct's (`&MyOrder`), or a leaked box for one with
    /// settings. Fails when the name is not lowercase letters, digits and `-`, or is a
    /// built-in one's.
    pub fn own(scheduler: &'static dyn Scheduler) -> Result<Self, BadSchedulerName> {
        OwnScheduler::kept(scheduler.name(), Some(scheduler)).map(Self::Own)
    }

    /// Its ordering: a built-in one's, or one's own; `None` for a scheduler of one's own read
    /// back from a file, which carries its name and not its order.
    pub fn ordering(self) -> Option<&'static dyn Scheduler> {
        match self {
            SchedulerKind::Ols => Some(&Ols),
            SchedulerKind::GasUsed => Some(&GasUsed),
            SchedulerKind::GasLimit => Some(&GasLimit),
            SchedulerKind::HeavyFirst => Some(&HeavyFirst),
            SchedulerKind::Oracle => Some(&Oracle),
            SchedulerKind::Own(own) => own.0.scheduler,
        }
    }
}

/// A scheduler of one's own as [`SchedulerKind::Own`] carries it: its name and, in the
/// program that defines it, its order ([`SchedulerKind::own`]); read back from a file, its
/// name alone. Equal, ordered and hashed by name; stored as the name. One pointer, so that
/// a kind stays small.
#[derive(Clone, Copy)]
pub struct OwnScheduler(&'static Own);

/// What an [`OwnScheduler`] points to: kept for the life of the process, once per name and
/// order ([`OwnScheduler::kept`]).
struct Own {
    name: &'static str,
    scheduler: Option<&'static dyn Scheduler>,
}

/// A name a scheduler of one's own cannot have ([`SchedulerKind::own`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "scheduler name `{0}`: a scheduler of one's own is named in lowercase letters, digits and \
     `-`, by a name no built-in scheduler has"
)]
pub struct BadSchedulerName(pub String);

impl OwnScheduler {
    /// `name` with `scheduler`'s order (none when read from a file), if a scheduler of
    /// one's own may have that name. A kind is `Copy`: what it points to is made once per
    /// name and order, and kept.
    fn kept(
        name: &str,
        scheduler: Option<&'static dyn Scheduler>,
    ) -> Result<Self, BadSchedulerName> {
        let plain = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
        if name.is_empty() || !name.chars().all(plain) || name.parse::<SchedulerKind>().is_ok() {
            return Err(BadSchedulerName(name.to_string()));
        }
        static KEPT: Mutex<Vec<&'static Own>> = Mutex::new(Vec::new());
        let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
        let same = |own: &&&Own| {
            own.name == name
                && match (own.scheduler, scheduler) {
                    (Some(a), Some(b)) => std::ptr::addr_eq(a, b),
                    (a, b) => a.is_none() && b.is_none(),
                }
        };
        if let Some(&own) = kept.iter().find(same) {
            return Ok(Self(own));
        }
        let own: &'static Own = Box::leak(Box::new(Own {
            name: Box::leak(name.into()),
            scheduler,
        }));
        kept.push(own);
        Ok(Self(own))
    }
}

impl fmt::Debug for OwnScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OwnScheduler").field(&self.0.name).finish()
    }
}

impl PartialEq for OwnScheduler {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for OwnScheduler {}

impl Hash for OwnScheduler {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.name.hash(state)
    }
}

impl PartialOrd for OwnScheduler {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OwnScheduler {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.name.cmp(other.0.name)
    }
}

impl Serialize for OwnScheduler {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.name)
    }
}

impl<'de> Deserialize<'de> for OwnScheduler {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::kept(&String::deserialize(deserializer)?, None).map_err(D::Error::custom)
    }
}

/// How workers claim a batch's order from the shared cursor.
///
/// [`Claims::Chunked`] is what every pass does: the order cut into chunks that shrink
/// towards the batch's end, heavy items alone (`gigagas_executor::chunk_bounds`), one claim
/// per chunk. [`Claims::OneItem`] is the reference it is checked against: plain list
/// scheduling, one claim per item, which balances best and pays a write to the shared cursor
/// for every item. The simulator projects both; `gigagas run --one-item-claims` (hidden)
/// measures the reference on a machine with many cores.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Claims {
    /// Chunks of the order, heavy items alone: what a pass does unless told otherwise.
    #[default]
    Chunked,
    /// One item per claim: the reference.
    OneItem,
}

impl Claims {
    /// Whether this is the default, [`Claims::Chunked`] (results store only the other).
    pub fn is_chunked(&self) -> bool {
        matches!(self, Claims::Chunked)
    }

    /// The name results, tables and the simulator use: `chunked` or `one-item`.
    pub fn name(self) -> &'static str {
        match self {
            Claims::Chunked => "chunked",
            Claims::OneItem => "one-item",
        }
    }
}

impl fmt::Display for Claims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

crate::state::named_choice!(SchedulerKind, "scheduler", NAMED);

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroUsize;

    #[test]
    fn names_round_trip_and_unknown_names_list_all() {
        for k in SchedulerKind::NAMED {
            assert_eq!(k.name().parse::<SchedulerKind>().unwrap(), k);
            assert_eq!(k.to_string(), k.name());
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::Value::String(k.name().into())
            );
        }
        assert!(
            !SchedulerKind::ALL.contains(&SchedulerKind::Oracle)
                && SchedulerKind::ALL
                    .iter()
                    .all(|k| SchedulerKind::NAMED.contains(k)),
            "never a default"
        );
        let err = "fifo".parse::<SchedulerKind>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown scheduler `fifo` (expected ols, gas-used, gas-limit, heavy-first or oracle)"
        );
    }

    /// A scheduler named by itself.
    #[derive(Debug)]
    struct Named(&'static str);

    impl Scheduler for Named {
        fn name(&self) -> &str {
            self.0
        }

        fn order(&self, items: &[crate::WorkItem], _: NonZeroUsize, order: &mut Vec<u32>) {
            order.clear();
            order.extend((0..items.len() as u32).rev());
        }
    }

    /// One's own scheduler names itself in points and results, is stored as `{"own":
    /// NAME}` and read back by its name alone; the built-in ones map to their orderings
    /// by the same path.
    #[test]
    fn ones_own_scheduler_names_itself() {
        for k in SchedulerKind::NAMED {
            assert_eq!(k.ordering().map(|s| s.name()), Some(k.name()));
        }
        let own = SchedulerKind::own(&Named("reversed")).unwrap();
        assert_eq!(
            std::mem::size_of::<SchedulerKind>(),
            16,
            "a tag and a pointer"
        );
        assert_eq!(
            (own.name(), own.to_string()),
            ("reversed", "reversed".into())
        );
        assert_eq!(crate::schedule::scheduler(own).name(), "reversed");
        let point = crate::Point::Bal(crate::RunConfig::new(NonZeroUsize::MIN, 50, own));
        assert_eq!(point.to_string(), "BAL 1t b50 reversed");
        let stored = serde_json::to_value(point).unwrap();
        assert_eq!(stored["scheduler"], serde_json::json!({"own": "reversed"}));
        let back: crate::Point = serde_json::from_value(stored).unwrap();
        assert_eq!(back, point);
        assert!(
            back.scheduler().unwrap().ordering().is_none(),
            "a name alone"
        );
        for bad in ["ols", "", "Mine", "a b"] {
            let leaked: &'static Named = Box::leak(Box::new(Named(bad)));
            assert_eq!(
                SchedulerKind::own(leaked),
                Err(BadSchedulerName(bad.into()))
            );
        }
        let read = serde_json::from_value::<SchedulerKind>(serde_json::json!({"own": "ols"}));
        assert!(
            read.unwrap_err()
                .to_string()
                .contains("scheduler name `ols`")
        );
    }
}
