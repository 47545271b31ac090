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
}

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
        if let crate::StateRead::Store { io, cache } = self.state {
            s.push_str(&format!(
                "; + reading the pre-state from a state store ({cache} page cache, {io})"
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_names_every_option_on() {
        let plain = TimedWork::default().describe();
        assert_eq!(plain, TIMED_WORK);
        let both = TimedWork {
            recover_senders: true,
            receipts: true,
            state: crate::StateRead::Memory,
        }
        .describe();
        assert!(both.contains("sender recovery") && both.contains("logs bloom"));
    }
}
