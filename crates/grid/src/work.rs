//! The optional steps of the timed work.

use serde::{Deserialize, Serialize};

/// One-line wording of the timed work without options (the results' `timed_work` field
/// starts with it; [`TimedWork::describe`] adds the options). The executor's `work` module
/// documents what each step is.
pub const TIMED_WORK: &str = "per transaction: execute it and produce its state changes \
(sequential: committed to its State; replay: returned for verification); per block: system \
calls, rewards and withdrawals";

/// The optional steps of the timed work, the same on the sequential loop and the replay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TimedWork {
    /// Recover each sender from its signature instead of taking it from the dump.
    pub recover_senders: bool,
    /// Build each transaction's receipt with its logs bloom.
    pub receipts: bool,
    /// Where the pre-state is read from: memory (outside the window), or a store inside it.
    /// Stored only when it is a store: an absent `state` is memory.
    #[serde(default, skip_serializing_if = "in_memory")]
    pub state: crate::StateRead,
    /// Whether each block's state root is computed from the access lists and the dump's
    /// witness, and when: after the transactions or beside them. Stored only when on (the
    /// sequential baseline, one thread, computes each block's root after it: `after`).
    #[serde(default, skip_serializing_if = "StateRootPhase::is_off")]
    pub state_root: StateRootPhase,
    /// How each block is committed into the state store after its root (`--persist`):
    /// not at all, one synced write per block on the root's chain, or by a background
    /// writer in groups ([`Persist`]). Whatever a pass writes is taken back out after it.
    /// Needs a store and the root; stored only when on (a stored `true`, from before the
    /// modes, reads as [`Persist::Block`]).
    #[serde(default, skip_serializing_if = "Persist::is_none")]
    pub persist: Persist,
    /// The background writer's limits ([`Persist::Background`]; reth's by default).
    /// Stored only when not the default.
    #[serde(default, skip_serializing_if = "Backlog::is_default")]
    pub backlog: Backlog,
}

/// How a pass commits its blocks into the state store (`--persist`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Persist {
    /// Nothing is written.
    #[default]
    None,
    /// Each block in one write transaction, synced (an fdatasync) before the block's
    /// root is done: the write is on the root's chain.
    Block,
    /// As a client's persistence task: blocks are handed to a writer on a thread of its
    /// own, which commits them in groups (one synced transaction a group) as its
    /// [`Backlog`] says; a block's chain waits only when the writer falls too far behind.
    Background,
}

impl Persist {
    /// Every mode, in order.
    pub const ALL: [Self; 3] = [Self::None, Self::Block, Self::Background];

    /// The name on the command line, in configs and results.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Block => "block",
            Self::Background => "background",
        }
    }

    /// Whether nothing is written.
    pub fn is_none(&self) -> bool {
        *self == Self::None
    }

    /// Whether blocks are written.
    pub fn is_on(&self) -> bool {
        !self.is_none()
    }
}

crate::state::named_choice!(Persist, "persistence mode");

impl serde::Serialize for Persist {
    /// `none` and `block` as the bools stored before the modes (`false`, `true`), so that
    /// a config or point from then stores, and hashes, as it did; `background` by its name.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::None => s.serialize_bool(false),
            Self::Block => s.serialize_bool(true),
            Self::Background => s.serialize_str(self.name()),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Persist {
    /// A mode's name, or a bool as points and configs stored it before the modes
    /// (`true`: [`Persist::Block`], the one mode there was).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Stored {
            Flag(bool),
            Name(String),
        }
        match Stored::deserialize(d)? {
            Stored::Flag(on) => Ok(if on { Self::Block } else { Self::None }),
            Stored::Name(name) => name.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// The background writer's limits, in blocks, as reth's engine tree sets them: the writer
/// starts a commit once the head (the last block handed to it) is more than `threshold`
/// blocks ahead of what is on disk, and commits up to `buffer` blocks behind the head; a
/// block's chain stalls while the head is more than `buffer + backpressure` blocks ahead
/// of the disk (reth stalls its engine past `backpressure` blocks beyond its in-memory
/// buffer target).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Backlog {
    /// Blocks ahead of the disk before a commit starts (reth's persistence threshold, 7).
    pub threshold: u16,
    /// Blocks a commit leaves behind the head (reth's memory block buffer target, 5).
    pub buffer: u16,
    /// Blocks beyond `buffer` awaiting the disk before a chain stalls (reth's
    /// persistence backpressure threshold, 16).
    pub backpressure: u16,
}

impl Default for Backlog {
    fn default() -> Self {
        Self::RETH
    }
}

impl Backlog {
    /// reth's engine-tree defaults.
    pub const RETH: Self = Self {
        threshold: 7,
        buffer: 5,
        backpressure: 16,
    };

    /// Whether these are the defaults (left out of stored points).
    pub fn is_default(&self) -> bool {
        *self == Self::RETH
    }

    /// The gap (head minus blocks on disk) past which a block's chain stalls.
    pub fn stall_gap(&self) -> u32 {
        u32::from(self.buffer) + u32::from(self.backpressure)
    }
}

/// The state-root phase of a replay (`--state-root`): off, or each batch's roots computed
/// on the pass's workers once its transactions have run (`after`), or from the batch's
/// start beside them (`overlapped`). Either way every root is checked against the header.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum StateRootPhase {
    /// No root (every figure published before the root phase).
    #[default]
    Off,
    /// The batch's roots once every worker has run out of its transactions: the batch's
    /// time is execution plus root.
    After,
    /// The batch's roots from its start, the workers taking root work between
    /// transactions: the batch's time is at least max(execution, root).
    Overlapped,
}

impl StateRootPhase {
    /// Every phase, in order.
    pub const ALL: [Self; 3] = [Self::Off, Self::After, Self::Overlapped];

    /// The name on the command line, in configs and results.
    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::After => "after",
            Self::Overlapped => "overlapped",
        }
    }

    /// Whether no root is computed.
    pub fn is_off(&self) -> bool {
        *self == Self::Off
    }

    /// The phase of the sequential baseline a replay at this phase is measured against.
    /// The client loop has one thread, so it computes each block's root after the block's
    /// transactions: `overlapped`'s baseline is `after`; `off` and `after` are their own.
    pub fn of_baseline(self) -> Self {
        match self {
            Self::Overlapped => Self::After,
            phase => phase,
        }
    }
}

crate::state::named_choice!(StateRootPhase, "state-root phase");

/// Whether `state` is memory, the state a stored point leaves out.
fn in_memory(state: &crate::StateRead) -> bool {
    !state.is_store()
}

impl TimedWork {
    /// The timed work in words: [`TIMED_WORK`] and the options that are on.
    pub fn describe(&self) -> String {
        let mut s = String::from(TIMED_WORK);
        if self.recover_senders {
            s.push_str("; + sender recovery from the signature");
        }
        if self.receipts {
            s.push_str("; + a receipt with its logs bloom per transaction");
        }
        if let crate::StateRead::Store { read, cache } = self.state {
            let (io, design) = (read.io(), read.design());
            s.push_str(&format!(
                "; + reading the pre-state from a state store ({cache} page cache, {io}"
            ));
            match design {
                Some(crate::BalDesign::Full) => s.push_str(
                    ", the access list carrying every pre-value: decoding it and reading the \
                     code it lacks",
                ),
                Some(crate::BalDesign::Keys) => s.push_str(", the access list naming every key"),
                Some(crate::BalDesign::Writes) => s.push_str(
                    ", the access list naming the writes only: the other reads on demand",
                ),
                None => {}
            }
            s.push(')');
        }
        match self.state_root {
            StateRootPhase::Off => {}
            StateRootPhase::After => s.push_str(
                "; + each block's state root from its access list and witness, after its \
                 transactions, checked against the header",
            ),
            StateRootPhase::Overlapped => s.push_str(
                "; + each block's state root from its access list and witness, beside its \
                 transactions on the same workers, checked against the header",
            ),
        }
        match self.persist {
            Persist::None => {}
            Persist::Block => s.push_str(
                "; + each block committed into the state store after its root (its state \
                 changes and its tries' new nodes, one synced write transaction per block, on \
                 the worker that finished the root)",
            ),
            Persist::Background => s.push_str(&format!(
                "; + each block handed after its root to a background writer, which commits \
                 blocks into the state store in groups on a thread of its own (one synced \
                 write transaction a group) once the head is more than {} blocks ahead of the \
                 disk, up to {} behind the head; a block's chain stalls while the head is \
                 more than {} ahead; the writer drained at the pass's end",
                self.backlog.threshold,
                self.backlog.buffer,
                self.backlog.stall_gap()
            )),
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A phase is stored only when on, by its name, and an unknown name says the choices.
    #[test]
    fn the_phase_is_stored_only_when_on() {
        let off = serde_json::to_value(TimedWork::default()).unwrap();
        assert!(off.get("state_root").is_none());
        let on = TimedWork {
            state_root: StateRootPhase::After,
            ..TimedWork::default()
        };
        let value = serde_json::to_value(on).unwrap();
        assert_eq!(value["state_root"], "after");
        assert_eq!(serde_json::from_value::<TimedWork>(value).unwrap(), on);
        let baseline = StateRootPhase::ALL.map(StateRootPhase::of_baseline);
        assert_eq!(
            baseline,
            [
                StateRootPhase::Off,
                StateRootPhase::After,
                StateRootPhase::After
            ]
        );
        let err = "later".parse::<StateRootPhase>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown state-root phase `later` (expected off, after or overlapped)"
        );
    }

    /// The persistence mode is stored only when on, `block` as the bool stored before the
    /// modes and `background` by its name; a stored bool reads as `none` or `block`; the backlog is stored only
    /// where it is not reth's; an unknown mode says the choices.
    #[test]
    fn the_persistence_mode_reads_old_bools_and_stores_its_name() {
        let off = serde_json::to_value(TimedWork::default()).unwrap();
        assert!(off.get("persist").is_none() && off.get("backlog").is_none());
        let old: TimedWork = serde_json::from_value(serde_json::json!({
            "recover_senders": false, "receipts": false, "persist": true
        }))
        .unwrap();
        assert_eq!(old.persist, Persist::Block);
        let none: TimedWork = serde_json::from_value(serde_json::json!({
            "recover_senders": false, "receipts": false, "persist": false
        }))
        .unwrap();
        assert_eq!(none.persist, Persist::None);
        assert_eq!(serde_json::to_value(old).unwrap()["persist"], true);
        let background = TimedWork {
            persist: Persist::Background,
            backlog: Backlog {
                threshold: 2,
                ..Backlog::RETH
            },
            ..TimedWork::default()
        };
        let value = serde_json::to_value(background).unwrap();
        assert_eq!(value["persist"], "background");
        assert_eq!(value["backlog"]["threshold"], 2);
        assert_eq!(
            serde_json::from_value::<TimedWork>(value).unwrap(),
            background
        );
        assert_eq!(Backlog::RETH.stall_gap(), 21);
        let err = "lazy".parse::<Persist>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown persistence mode `lazy` (expected none, block or background)"
        );
    }

    #[test]
    fn the_description_names_every_option_on() {
        let plain = TimedWork::default().describe();
        assert_eq!(plain, TIMED_WORK);
        let both = TimedWork {
            recover_senders: true,
            receipts: true,
            state: crate::StateRead::Memory,
            state_root: StateRootPhase::Overlapped,
            ..TimedWork::default()
        }
        .describe();
        assert!(both.contains("sender recovery") && both.contains("logs bloom"));
        assert!(both.contains("state root") && both.contains("beside"));
    }
}
