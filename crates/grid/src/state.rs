//! Where a pass reads the pre-state from: memory (pure execution) or a state store on disk.

use std::{fmt, str::FromStr};

/// Where a pass reads the pre-state from, and how.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum StateRead {
    /// From memory, prepared before the clock starts: pure execution (the default).
    #[default]
    Memory,
    /// From a state store on disk (`gigagas state build`), inside the timed window.
    Store {
        /// How the reads are made.
        io: IoMode,
        /// Whether the store's pages are in the OS page cache when the pass starts.
        cache: CacheState,
    },
}

impl StateRead {
    /// Whether this reads from a store.
    pub fn is_store(&self) -> bool {
        matches!(self, Self::Store { .. })
    }
}

/// How a pass reads its state from a store.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
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
}

impl IoMode {
    /// All modes.
    pub const ALL: [IoMode; 3] = [IoMode::OnDemand, IoMode::Prefetch, IoMode::Pipelined];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            IoMode::OnDemand => "on-demand",
            IoMode::Prefetch => "prefetch",
            IoMode::Pipelined => "pipelined",
        }
    }
}

/// Whether a store's pages are in the OS page cache when a pass starts.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
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
    /// The choices.
    pub expected: &'static str,
}

impl FromStr for IoMode {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        IoMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownName {
                what: "I/O mode",
                name: s.to_string(),
                expected: "on-demand, prefetch or pipelined",
            })
    }
}

impl FromStr for CacheState {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        CacheState::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownName {
                what: "cache state",
                name: s.to_string(),
                expected: "warm or cold",
            })
    }
}

impl fmt::Display for IoMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for CacheState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
