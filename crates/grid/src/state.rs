//! Where a pass reads the pre-state from: memory (pure execution) or a state store on disk.

use serde::{Deserialize, Serialize};

/// Where a pass reads the pre-state from, and how.
///
/// Stored as `"state": {"store": {"io": "prefetch", "cache": "cold", "bal_design": "keys"}}`
/// (memory is left out of a stored point). `bal_design` is there exactly when the replay
/// reads with an access list (`prefetch`, `pipelined`), and reading is strict: a
/// prefetching store point without one, or an on-demand one with one, is refused rather
/// than guessed at (older results get `keys` when they are upgraded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "StoredStateRead", try_from = "StoredStateRead")]
pub enum StateRead {
    /// From memory, prepared before the clock starts: pure execution (the default).
    #[default]
    Memory,
    /// From a state store on disk (`gigagas state build`), inside the timed window.
    Store {
        /// How the reads are made, with the access list's design where they use one.
        read: StoreRead,
        /// Whether the store's pages are in the OS page cache when the pass starts.
        cache: CacheState,
    },
}

impl StateRead {
    /// Whether this reads from a store.
    pub fn is_store(&self) -> bool {
        matches!(self, Self::Store { .. })
    }

    /// How a store is read (`None` from memory).
    pub fn read(&self) -> Option<StoreRead> {
        match self {
            Self::Memory => None,
            Self::Store { read, .. } => Some(*read),
        }
    }

    /// Reading a store with `read` in `cache`.
    pub fn store(read: StoreRead, cache: CacheState) -> Self {
        Self::Store { read, cache }
    }

    /// Reading a store on demand (no access list) in `cache`: the sequential loop's only
    /// way, and the replay's client baseline.
    pub fn on_demand(cache: CacheState) -> Self {
        Self::store(StoreRead::OnDemand, cache)
    }

    /// How the sequential baseline of a replay reading this way reads: as a client
    /// without an access list can (memory for memory, on demand from the store in the same
    /// cache state for a store).
    pub fn of_baseline(self) -> Self {
        match self {
            Self::Memory => Self::Memory,
            Self::Store { cache, .. } => Self::on_demand(cache),
        }
    }

    /// The access-list design this reads with (`None`: memory, or a store on demand).
    pub fn design(&self) -> Option<BalDesign> {
        match self {
            Self::Store { read, .. } => read.design(),
            Self::Memory => None,
        }
    }
}

/// How a pass reads a store, each way carrying exactly its settings: on demand (no list),
/// or with an access list of a [`BalDesign`] before each batch or pipelined behind the
/// batch before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StoreRead {
    /// Each account, slot or code read the first time the pass needs it.
    OnDemand,
    /// Before a batch runs, what its access lists call for.
    Prefetch(BalDesign),
    /// Batch `k + 1`'s list read while batch `k` executes.
    Pipelined(BalDesign),
    /// A batch's list read while the batch executes, block by block in the order its
    /// schedule first reaches them; an item waits only for its own block's read.
    Beside(BalDesign),
}

impl StoreRead {
    /// The I/O mode.
    pub fn io(self) -> IoMode {
        match self {
            Self::OnDemand => IoMode::OnDemand,
            Self::Prefetch(_) => IoMode::Prefetch,
            Self::Pipelined(_) => IoMode::Pipelined,
            Self::Beside(_) => IoMode::Beside,
        }
    }

    /// The design of the access list read with (`None` on demand).
    pub fn design(self) -> Option<BalDesign> {
        match self {
            Self::OnDemand => None,
            Self::Prefetch(design) | Self::Pipelined(design) | Self::Beside(design) => Some(design),
        }
    }

    /// `io` with `design` when it reads with a list; `None` when the two disagree (a list
    /// mode without a design, on demand with one).
    pub fn new(io: IoMode, design: Option<BalDesign>) -> Result<Self, BadStateRead> {
        match (io, design) {
            (IoMode::OnDemand, None) => Ok(Self::OnDemand),
            (IoMode::Prefetch, Some(design)) => Ok(Self::Prefetch(design)),
            (IoMode::Pipelined, Some(design)) => Ok(Self::Pipelined(design)),
            (IoMode::Beside, Some(design)) => Ok(Self::Beside(design)),
            (IoMode::OnDemand, Some(design)) => Err(BadStateRead::DesignOnDemand { design }),
            (io, None) => Err(BadStateRead::NoDesign { io }),
        }
    }

    /// Every way of reading with `io` over `designs`: on demand once (it has no list),
    /// else one per design.
    pub fn each(io: IoMode, designs: &[BalDesign]) -> Vec<Self> {
        match io {
            IoMode::OnDemand => vec![Self::OnDemand],
            IoMode::Prefetch => designs.iter().map(|&d| Self::Prefetch(d)).collect(),
            IoMode::Pipelined => designs.iter().map(|&d| Self::Pipelined(d)).collect(),
            IoMode::Beside => designs.iter().map(|&d| Self::Beside(d)).collect(),
        }
    }
}

/// [`StateRead`] as stored, its design and I/O mode checked against each other on reading.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
enum StoredStateRead {
    Memory,
    Store {
        io: IoMode,
        cache: CacheState,
        #[serde(
            rename = "bal_design",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        design: Option<BalDesign>,
    },
}

impl From<StateRead> for StoredStateRead {
    fn from(state: StateRead) -> Self {
        match state {
            StateRead::Memory => Self::Memory,
            StateRead::Store { read, cache } => Self::Store {
                io: read.io(),
                cache,
                design: read.design(),
            },
        }
    }
}

/// A stored store read whose design contradicts its I/O mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadStateRead {
    /// A prefetching or pipelined read without the design of its list.
    #[error("a `{io}` store read has no `bal_design` (full, keys or writes)")]
    NoDesign {
        /// The I/O mode.
        io: IoMode,
    },
    /// An on-demand read (no list) with a design.
    #[error(
        "an `on-demand` store read reads without an access list, but names `bal_design` `{design}`"
    )]
    DesignOnDemand {
        /// The design named.
        design: BalDesign,
    },
}

impl TryFrom<StoredStateRead> for StateRead {
    type Error = BadStateRead;

    fn try_from(stored: StoredStateRead) -> Result<Self, BadStateRead> {
        match stored {
            StoredStateRead::Memory => Ok(Self::Memory),
            StoredStateRead::Store { io, cache, design } => Ok(Self::Store {
                read: StoreRead::new(io, design)?,
                cache,
            }),
        }
    }
}

/// What a block's access list carries for a replay that reads its state from a store:
/// the designs the field argues about, each a run option
/// (`--bal-design`), so their cost and their size can be put side by side.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum BalDesign {
    /// The pre-value of every account and slot the block reads or writes arrives with the
    /// block, encoded: decoding it is inside the timed window, and only code the list does
    /// not carry is read from the store.
    Full,
    /// EIP-7928 as specified (the default): the list names every key the block reads or
    /// writes, and the values are read from the store before the batch runs.
    #[default]
    Keys,
    /// The state diffs only: the keys the block writes are read before the batch runs
    /// (their pre-values are needed for gas and for verification); every other read goes
    /// to the store on demand, when a transaction needs it.
    Writes,
}

impl BalDesign {
    /// All designs.
    pub const ALL: [BalDesign; 3] = [BalDesign::Full, BalDesign::Keys, BalDesign::Writes];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            BalDesign::Full => "full",
            BalDesign::Keys => "keys",
            BalDesign::Writes => "writes",
        }
    }
}

/// How a pass reads its state from a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoMode {
    /// What a client without hints does: each account, slot or code is read the first time
    /// the pass needs it. The only mode of the sequential loop, which has no access list.
    OnDemand,
    /// The EIP-7928 client: before a batch runs, every account, slot and code its access
    /// lists name is read by the I/O threads.
    Prefetch,
    /// Batch `k + 1` is read while batch `k` executes.
    Pipelined,
    /// Reads beside execution: readers of their own read a batch's blocks while it runs,
    /// in the order its schedule first reaches them, and an item waits only until its own
    /// block is read.
    Beside,
}

impl IoMode {
    /// All modes.
    pub const ALL: [IoMode; 4] = [
        IoMode::OnDemand,
        IoMode::Prefetch,
        IoMode::Pipelined,
        IoMode::Beside,
    ];

    /// The modes a run or a sweep config that names none runs: every mode but
    /// [`IoMode::Beside`], which is named to run (so a config written before it existed
    /// keeps its meaning and its hash).
    pub const DEFAULT: [IoMode; 3] = [IoMode::OnDemand, IoMode::Prefetch, IoMode::Pipelined];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            IoMode::OnDemand => "on-demand",
            IoMode::Prefetch => "prefetch",
            IoMode::Pipelined => "pipelined",
            IoMode::Beside => "beside",
        }
    }
}

/// Whether a store's pages are in the OS page cache when a pass starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheState {
    /// The passes run after a warm-up pass: the store is in the page cache.
    Warm,
    /// The store's pages are evicted before every timed pass, and that they were is
    /// checked.
    Cold,
}

impl CacheState {
    /// Both.
    pub const ALL: [CacheState; 2] = [CacheState::Warm, CacheState::Cold];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            CacheState::Warm => "warm",
            CacheState::Cold => "cold",
        }
    }
}

/// A name that is none of the choices.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{name}` (expected {expected})")]
pub struct UnknownName {
    /// What was named (`I/O mode`, `cache state`).
    pub what: &'static str,
    /// The name given.
    pub name: String,
    /// The choices, as a list to read ("warm or cold").
    pub expected: String,
}

impl UnknownName {
    /// The choice of `all` whose `name` is `given`, or the error that lists them all: the
    /// one parser of every named choice in a grid (schedulers, designs, I/O modes, cache
    /// states, state-root phases), through the crate's `named_choice!` macro.
    pub fn parse<T: Copy>(
        given: &str,
        what: &'static str,
        all: &[T],
        name: fn(T) -> &'static str,
    ) -> Result<T, UnknownName> {
        all.iter()
            .copied()
            .find(|&c| name(c) == given)
            .ok_or_else(|| {
                let names: Vec<&str> = all.iter().map(|&c| name(c)).collect();
                let expected = match names.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} or {last}", rest.join(", "))
                    }
                    _ => names.concat(),
                };
                UnknownName {
                    what,
                    name: given.to_string(),
                    expected,
                }
            })
    }
}

/// `FromStr` and `Display` for a choice enum with `name` and a list of every choice
/// (`ALL` unless named): parsed by its name ([`UnknownName::parse`], `what` naming it in
/// the error) and shown as it.
macro_rules! named_choice {
    ($t:ty, $what:literal) => {
        $crate::state::named_choice!($t, $what, ALL);
    };
    ($t:ty, $what:literal, $every:ident) => {
        impl std::str::FromStr for $t {
            type Err = $crate::UnknownName;
            fn from_str(s: &str) -> Result<Self, $crate::UnknownName> {
                $crate::UnknownName::parse(s, $what, &<$t>::$every, <$t>::name)
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use named_choice;

named_choice!(BalDesign, "access-list design");
named_choice!(IoMode, "I/O mode");
named_choice!(CacheState, "cache state");

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every choice parses from its name and shows as it; an unknown name is refused in one
    /// line that lists the choices.
    #[test]
    fn choices_parse_by_name_and_list_the_others() {
        for d in BalDesign::ALL {
            assert_eq!(d.name().parse::<BalDesign>(), Ok(d));
            assert_eq!(d.to_string(), d.name());
        }
        for m in IoMode::ALL {
            assert_eq!(m.name().parse::<IoMode>(), Ok(m));
        }
        for c in CacheState::ALL {
            assert_eq!(c.to_string().parse::<CacheState>(), Ok(c));
        }
        assert_eq!(
            "lukewarm".parse::<CacheState>().unwrap_err().to_string(),
            "unknown cache state `lukewarm` (expected warm or cold)"
        );
        assert_eq!(
            "batched".parse::<IoMode>().unwrap_err().to_string(),
            "unknown I/O mode `batched` (expected on-demand, prefetch, pipelined or beside)"
        );
        assert_eq!(
            "Keys".parse::<BalDesign>().unwrap_err().to_string(),
            "unknown access-list design `Keys` (expected full, keys or writes)"
        );
        // One choice alone is listed as itself.
        let one = UnknownName::parse("b", "letter", &['a'], |_| "a").unwrap_err();
        assert_eq!(one.expected, "a");
    }

    /// A store read's design is stored exactly when it reads with a list, and a stored one
    /// that contradicts its I/O mode is refused.
    #[test]
    fn a_design_goes_with_a_list() {
        let read = StateRead::store(StoreRead::Prefetch(BalDesign::Writes), CacheState::Cold);
        let stored = json!({"store": {"io": "prefetch", "cache": "cold", "bal_design": "writes"}});
        assert_eq!(serde_json::to_value(read).unwrap(), stored);
        assert_eq!(serde_json::from_value::<StateRead>(stored).unwrap(), read);
        let on_demand = StateRead::on_demand(CacheState::Warm);
        assert_eq!(on_demand.design(), None);
        let stored = json!({"store": {"io": "on-demand", "cache": "warm"}});
        assert_eq!(serde_json::to_value(on_demand).unwrap(), stored);
        assert_eq!(
            serde_json::from_value::<StateRead>(stored).unwrap(),
            on_demand
        );
        let refused = |v| {
            serde_json::from_value::<StateRead>(v)
                .unwrap_err()
                .to_string()
        };
        assert!(
            refused(json!({"store": {"io": "pipelined", "cache": "warm"}}))
                .contains("has no `bal_design`")
        );
        assert!(
            refused(json!({"store": {"io": "on-demand", "cache": "warm", "bal_design": "keys"}}))
                .contains("names `bal_design` `keys`")
        );
        assert_eq!(
            StoreRead::each(IoMode::OnDemand, &BalDesign::ALL),
            [StoreRead::OnDemand]
        );
        assert_eq!(StoreRead::each(IoMode::Pipelined, &BalDesign::ALL).len(), 3);
        assert_eq!("writes".parse::<BalDesign>(), Ok(BalDesign::Writes));
        assert!(
            "values"
                .parse::<BalDesign>()
                .unwrap_err()
                .to_string()
                .contains("full, keys or writes")
        );
    }
}
