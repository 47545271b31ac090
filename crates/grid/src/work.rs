//! The optional steps of the timed work.

/// One-line wording of the timed work without options (the results' `timed_work` field
/// starts with it; [`TimedWork::describe`] adds the options). The executor's `work` module
/// documents what each step is.
pub const TIMED_WORK: &str = "per transaction: execute it and produce its state changes \
(sequential: committed to its State; replay: returned for verification); per block: system \
calls, rewards and withdrawals";

/// The optional steps of the timed work, the same on the sequential loop and the replay.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
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
    /// Whether each block is committed into the state store after its root
    /// (`--persist`): its state changes and its tries' new nodes, one synced write
    /// transaction per block, taken back out after the pass. Needs a store and the root;
    /// stored only when on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub persist: bool,
}

/// Whether a flag is off (left out of stored points).
fn is_false(v: &bool) -> bool {
    !*v
}

/// The state-root phase of a replay (`--state-root`): off, or each batch's roots computed
/// on the pass's workers once its transactions have run (`after`), or from the batch's
/// start beside them (`overlapped`). Either way every root is checked against the header.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
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
        if self.persist {
            s.push_str(
                "; + each block committed into the state store after its root (its state \
                 changes and its tries' new nodes, one synced write transaction per block, on \
                 the worker that finished the root)",
            );
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

    #[test]
    fn the_description_names_every_option_on() {
        let plain = TimedWork::default().describe();
        assert_eq!(plain, TIMED_WORK);
        let both = TimedWork {
            recover_senders: true,
            receipts: true,
            state: crate::StateRead::Memory,
            state_root: StateRootPhase::Overlapped,
            persist: false,
        }
        .describe();
        assert!(both.contains("sender recovery") && both.contains("logs bloom"));
        assert!(both.contains("state root") && both.contains("beside"));
    }
}
