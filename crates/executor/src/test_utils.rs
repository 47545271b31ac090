//! Helpers for the tests of every crate that replays dumps (feature `test-utils`, which
//! tests enable through `[dev-dependencies]`; never a normal dependency).
//!
//! - [`prepare`]: [`Replay::new`] after installing the setup-free KZG verifier, as
//!   gigagas's `main` does at start-up ([`Replay::new`] itself installs nothing).
//! - [`grid`]: a small grid of replay points.
//! - [`replay_and_verify`]: prepare a dump, run every point given (the sequential baseline
//!   and replay points), verify each, and check that every replay point's outcomes and
//!   timings agree.
//! - [`DumpSource`]: a dump's pre-state behind the state seam ([`crate::StateSource`]), read
//!   like a store reads, counting its reads.

use crate::{Parallel, PrepareError, Replay, RunConfig, SchedulerKind, Sequential, TimedWork};
pub use gigagas_chain::{install_kzg_verifier, kzg_verifier_installed};
use gigagas_dump::Dump;
pub use gigagas_grid::Point;

/// The timed work with sender recovery from the signature, nothing else.
pub const RECOVER_SENDERS: TimedWork = TimedWork {
    recover_senders: true,
    receipts: false,
    state: gigagas_grid::StateRead::Memory,
    state_root: gigagas_grid::StateRootPhase::Off,
    persist: gigagas_grid::Persist::None,
    backlog: gigagas_grid::Backlog::RETH,
};

/// The timed work with a receipt per transaction, nothing else.
pub const RECEIPTS: TimedWork = TimedWork {
    recover_senders: false,
    receipts: true,
    ..RECOVER_SENDERS
};

/// [`Replay::new`] with the setup-free point-evaluation verifier installed first
/// ([`install_kzg_verifier`]), as a binary does at start-up.
pub fn prepare(dump: Dump) -> Result<Replay, PrepareError> {
    // If a precompile ran first, this fails, and `Replay::new` refuses a dump that calls
    // point evaluation.
    install_kzg_verifier();
    Replay::new(dump)
}

/// Every `threads × batches × schedulers` replay point, in that order, with no optional
/// timed work; a batch size listed twice (e.g. `[1, blocks]` for a one-block dump) is run
/// once.
pub fn grid(threads: &[usize], batches: &[usize], schedulers: &[SchedulerKind]) -> Vec<RunConfig> {
    let mut points = Vec::new();
    for &t in threads {
        let firsts = batches.iter().enumerate();
        for (_, &b) in firsts.filter(|&(i, b)| !batches[..i].contains(b)) {
            for &s in schedulers {
                let t = std::num::NonZeroUsize::new(t).expect("a test names at least 1 thread");
                points.push(RunConfig::new(t, b, s));
            }
        }
    }
    points
}

/// Prepare `dump` ([`prepare`]) and run every point of `points` on it, each verified:
///
/// - [`Point::Sequential`]: the sequential baseline, checked by
///   [`Replay::verify_sequential`];
/// - [`Point::Bal`]: the replay, checked by [`Replay::verify_all`]; its timings cover
///   every item, each batch's time runs from its start to the end of its last item, the
///   wall time holds every batch; and its outcomes ([`Replay::outcomes`]) equal the first
///   replay point's. An oracle point orders by measured times: the first replay point's
///   item times are recorded for it ([`Replay::set_measured_times`]) before it runs, so it
///   is not heavy-first by gas under another name.
///
/// Returns the prepared replay for further checks, or the first failure, naming the point.
pub fn replay_and_verify(
    dump: Dump,
    points: impl IntoIterator<Item = Point>,
) -> Result<Replay, ReplayCheckError> {
    let mut replay = prepare(dump)?;
    let mut reference: Option<(Point, _)> = None;
    // The first replay point's item times, for an oracle point.
    let mut measured: Option<Vec<u64>> = None;
    for point in points {
        let failed = |problem: PointProblem| ReplayCheckError::Point {
            point,
            problem: Box::new(problem),
        };
        if let Point::Bal(config) = &point
            && config.scheduler == SchedulerKind::Oracle
            && !replay.has_measured_times()
        {
            let times = measured
                .as_deref()
                .ok_or_else(|| failed(PointProblem::NoMeasuredTimes))?;
            if !replay.set_measured_times(times) {
                return Err(failed(PointProblem::MeasuredTimes));
            }
        }
        match point {
            Point::Sequential(work) => {
                let (_, outputs) = Sequential::new(work).outputs(&replay).unwrap();
                let outputs = outputs.map_err(|e| failed(e.into()))?;
                replay
                    .verify_sequential(&outputs)
                    .map_err(|e| failed(e.into()))?;
            }
            Point::Bal(config) => {
                let (timings, outputs) = Parallel::new(&config).outputs(&replay).unwrap();
                check_timings(&replay, &timings).map_err(failed)?;
                replay.verify_all(&outputs).map_err(|e| failed(e.into()))?;
                if measured.is_none() {
                    measured = Some(timings.item_ns.iter().map(|&ns| ns.max(1)).collect());
                }
                let outcomes = replay.outcomes(&outputs);
                match &reference {
                    None => reference = Some((point, outcomes)),
                    Some((first, r)) => {
                        if r != &outcomes {
                            return Err(failed(PointProblem::Outcomes(*first)));
                        }
                    }
                }
            }
        }
    }
    Ok(replay)
}

/// A replay pass's timings cover every item, each batch's time runs from its start to the
/// end of its last item (or root unit), and the wall time holds every batch.
fn check_timings(replay: &Replay, timings: &crate::RunTimings) -> Result<(), PointProblem> {
    if timings.item_ns.len() != replay.items().len() {
        return Err(PointProblem::ItemTimes {
            times: timings.item_ns.len(),
            items: replay.items().len(),
        });
    }
    for (b, range) in timings.batches.iter().enumerate() {
        let start = timings.batch_start_ns[b];
        let end = range
            .clone()
            .map(|i| timings.item_start_ns[i] + timings.item_ns[i])
            .max()
            .ok_or(PointProblem::EmptyBatch(b))?;
        // With the root phase on, the batch ends with the later of its last item and its
        // last root unit (a unit may still run when the last item ends).
        let blocks = replay.items()[range.start].block..=replay.items()[range.end - 1].block;
        let end = timings
            .root
            .spans
            .iter()
            .filter(|s| blocks.contains(&s.block))
            .map(|s| s.start_ns + s.ns)
            .fold(end, u64::max);
        if !range.clone().all(|i| timings.item_start_ns[i] >= start) {
            return Err(PointProblem::ItemBeforeBatch(b));
        }
        if timings.batch_wall_ns[b] != end - start {
            return Err(PointProblem::BatchTime {
                batch: b,
                took: timings.batch_wall_ns[b],
                span: end - start,
            });
        }
    }
    if timings.wall_ns < timings.batch_wall_ns.iter().sum::<u64>() {
        return Err(PointProblem::WallShorterThanBatches);
    }
    Ok(())
}

/// Why [`replay_and_verify`] failed: the dump did not prepare, or a point failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayCheckError {
    /// The dump could not be prepared.
    #[error("prepare: {0}")]
    Prepare(#[from] PrepareError),
    /// A point failed.
    #[error("{point}: {problem}")]
    Point {
        /// The point.
        point: Point,
        /// What failed.
        #[source]
        problem: Box<PointProblem>,
    },
}

/// What failed at one point of [`replay_and_verify`].
#[derive(Debug, thiserror::Error)]
pub enum PointProblem {
    /// An oracle point came before any replay point, whose item times it orders by.
    #[error("no replay point ran before the oracle")]
    NoMeasuredTimes,
    /// The measured times are not one per item.
    #[error("not one measured time per item")]
    MeasuredTimes,
    /// An item of the sequential baseline did not execute.
    #[error(transparent)]
    Exec(#[from] crate::ExecError),
    /// The outputs do not verify.
    #[error(transparent)]
    Verify(#[from] crate::VerifyError),
    /// The timings do not hold one time per item.
    #[error("{times} item times for {items} items")]
    ItemTimes {
        /// Item times.
        times: usize,
        /// Items.
        items: usize,
    },
    /// A batch holds no item.
    #[error("batch {0} is empty")]
    EmptyBatch(usize),
    /// An item of the batch starts before the batch.
    #[error("an item of batch {0} starts before it")]
    ItemBeforeBatch(usize),
    /// A batch's time is not the span of its items (and root units).
    #[error("batch {batch} took {took} ns, its items span {span} ns")]
    BatchTime {
        /// The batch.
        batch: usize,
        /// Its time.
        took: u64,
        /// The span of its items.
        span: u64,
    },
    /// The wall time is shorter than the batches' times together.
    #[error("the wall time is shorter than its batches")]
    WallShorterThanBatches,
    /// The outcomes differ from those of this earlier point.
    #[error("outcomes differ from {0}'s")]
    Outcomes(Point),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_has_every_point_once() {
        let g = grid(
            &[1, 2],
            &[1, 1],
            &[SchedulerKind::Ols, SchedulerKind::GasUsed],
        );
        let names: Vec<String> = g.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "BAL 1t b1 ols",
                "BAL 1t b1 gas-used",
                "BAL 2t b1 ols",
                "BAL 2t b1 gas-used"
            ]
        );
        assert!(g.iter().all(|c| c.work == TimedWork::default()));
    }
}

/// Reads per kind, shared by a source's clones made with [`DumpSource::fresh`]'s siblings.
#[derive(Debug, Default)]
pub struct ReadCounts {
    /// Account reads.
    pub accounts: std::sync::atomic::AtomicUsize,
    /// Storage reads.
    pub slots: std::sync::atomic::AtomicUsize,
    /// Code reads.
    pub codes: std::sync::atomic::AtomicUsize,
    /// Trie nodes asked for (not in [`Self::total`], which counts state reads).
    pub trie_nodes: std::sync::atomic::AtomicUsize,
    /// Every trie-node read and every path read ahead, in the order they happened.
    pub trie_log: std::sync::Mutex<Vec<TrieRead>>,
}

/// A trie read a [`DumpSource`] served: at segment, owner (`None`: the account trie; else
/// the hashed address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrieRead {
    /// The node at this path ([`crate::StateSource::trie_nodes`]).
    Node(usize, Option<alloy_primitives::B256>, gigagas_trie::Nibbles),
    /// The nodes on the path to this key ([`crate::StateSource::read_ahead_trie_path`]).
    Ahead(
        usize,
        Option<alloy_primitives::B256>,
        alloy_primitives::B256,
    ),
}

impl ReadCounts {
    /// Every read so far.
    pub fn total(&self) -> usize {
        use std::sync::atomic::Ordering::Relaxed;
        self.accounts.load(Relaxed) + self.slots.load(Relaxed) + self.codes.load(Relaxed)
    }
}

/// A dump's pre-state behind the state seam, read like a store reads (per segment; a
/// missing slot is zero, a missing account an error), counting its reads. Clones share
/// the state and the counts; [`DumpSource::fresh`] gives a clone with its own counts.
#[derive(Debug, Clone)]
pub struct DumpSource {
    accounts: std::sync::Arc<
        std::collections::HashMap<(usize, alloy_primitives::Address), Option<crate::AccountInfo>>,
    >,
    slots: std::sync::Arc<
        std::collections::HashMap<
            (usize, alloy_primitives::Address, alloy_primitives::U256),
            alloy_primitives::U256,
        >,
    >,
    codes: std::sync::Arc<std::collections::HashMap<alloy_primitives::B256, crate::Bytecode>>,
    /// Each segment's witness nodes by trie and path (what a store keeps for the root
    /// phase).
    nodes: std::sync::Arc<TrieNodesByPath>,
    /// What this source (and the clones sharing them) read.
    pub counts: std::sync::Arc<ReadCounts>,
}

/// Witness nodes by segment, owner (`None`: the account trie; else the hashed address) and
/// path.
type TrieNodesByPath = std::collections::HashMap<
    (usize, Option<alloy_primitives::B256>, gigagas_trie::Nibbles),
    alloy_primitives::Bytes,
>;

impl DumpSource {
    /// Every segment's pre-state of `dump`.
    pub fn of(dump: &Dump) -> Self {
        let (mut accounts, mut slots, mut codes, mut nodes) = (
            std::collections::HashMap::new(),
            std::collections::HashMap::new(),
            std::collections::HashMap::new(),
            std::collections::HashMap::new(),
        );
        for (s, segment) in dump.segments.iter().enumerate() {
            let lists = segment.blocks.iter().map(|b| &b.access_list);
            let nodes_of = |w| gigagas_trie::nodes_by_path(w, lists.clone());
            for node in segment.witness.iter().flat_map(nodes_of) {
                nodes.insert((s, node.owner, node.path), node.rlp);
            }
            for a in &segment.pre_state.accounts {
                accounts.insert(
                    (s, a.address),
                    a.state.map(|st| crate::AccountInfo {
                        balance: st.balance,
                        nonce: st.nonce,
                        code_hash: st.code_hash,
                        ..Default::default()
                    }),
                );
            }
            for slot in &segment.pre_state.storage {
                slots.insert((s, slot.address, slot.slot), slot.value);
            }
            for (h, c) in &segment.pre_state.codes {
                codes.insert(*h, crate::Bytecode::new_raw(c.clone()));
            }
        }
        Self {
            accounts: std::sync::Arc::new(accounts),
            slots: std::sync::Arc::new(slots),
            codes: std::sync::Arc::new(codes),
            nodes: std::sync::Arc::new(nodes),
            counts: std::sync::Arc::default(),
        }
    }

    /// The same source with its own counts.
    pub fn fresh(&self) -> Self {
        Self {
            counts: std::sync::Arc::default(),
            ..self.clone()
        }
    }
}

impl crate::StateSource for DumpSource {
    fn account(
        &mut self,
        segment: usize,
        address: alloy_primitives::Address,
    ) -> Result<Option<crate::AccountInfo>, crate::StateError> {
        self.counts
            .accounts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.accounts
            .get(&(segment, address))
            .cloned()
            .ok_or(crate::StateError::MissingAccount(address))
    }

    fn storage(
        &mut self,
        segment: usize,
        address: alloy_primitives::Address,
        slot: alloy_primitives::U256,
    ) -> Result<alloy_primitives::U256, crate::StateError> {
        self.counts
            .slots
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(self
            .slots
            .get(&(segment, address, slot))
            .copied()
            .unwrap_or_default())
    }

    fn code(
        &mut self,
        code_hash: alloy_primitives::B256,
    ) -> Result<Option<crate::Bytecode>, crate::StateError> {
        self.counts
            .codes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(self.codes.get(&code_hash).cloned())
    }

    fn trie_nodes(
        &mut self,
        segment: usize,
        trie: gigagas_trie::TrieId,
        paths: &[gigagas_trie::Nibbles],
        out: &mut Vec<Option<alloy_primitives::Bytes>>,
    ) -> Result<(), crate::StateError> {
        let owner = trie.owner();
        self.counts
            .trie_nodes
            .fetch_add(paths.len(), std::sync::atomic::Ordering::Relaxed);
        out.extend(
            paths
                .iter()
                .map(|path| self.nodes.get(&(segment, owner, *path)).cloned()),
        );
        let mut log = self.counts.trie_log.lock().expect("no reader panicked");
        log.extend(
            paths
                .iter()
                .map(|path| TrieRead::Node(segment, owner, *path)),
        );
        Ok(())
    }

    /// Meets the nodes it holds at the key's prefixes, as a store's walk does.
    fn read_ahead_trie_path(
        &mut self,
        segment: usize,
        trie: gigagas_trie::TrieId,
        key: &alloy_primitives::B256,
    ) -> Result<u32, crate::StateError> {
        let owner = trie.owner();
        let key_path = gigagas_trie::Nibbles::unpack(key);
        let met = (0..=key_path.len())
            .filter(|&d| {
                self.nodes
                    .contains_key(&(segment, owner, key_path.slice(..d)))
            })
            .count();
        let mut log = self.counts.trie_log.lock().expect("no reader panicked");
        log.push(TrieRead::Ahead(segment, owner, *key));
        Ok(met as u32)
    }
}

/// What an item's output says, comparable across passes: a transaction's gas, status, logs
/// and every account it loaded (fields and storage, in address and slot order); a system
/// item's writes, in address order (the builder's order follows the order accounts were
/// loaded). Two passes of the same replay agree item by item exactly when these agree.
pub fn output_summary(output: &Result<crate::ItemOutput, crate::ExecError>) -> String {
    match output.as_ref().expect("every item executes") {
        crate::ItemOutput::Tx {
            gas_used,
            success,
            logs,
            state,
            ..
        } => {
            let mut accounts: Vec<_> = state
                .iter()
                .map(|(address, account)| {
                    let mut storage: Vec<_> = account
                        .storage
                        .iter()
                        .map(|(k, v)| (*k, v.original_value, v.present_value))
                        .collect();
                    storage.sort();
                    (
                        *address,
                        account.info.balance,
                        account.info.nonce,
                        account.info.code_hash,
                        storage,
                    )
                })
                .collect();
            accounts.sort();
            format!("tx {gas_used} {success} {logs} {accounts:?}")
        }
        crate::ItemOutput::System { writes } => {
            let mut accounts: Vec<String> = writes
                .accounts
                .iter()
                .map(|(address, account)| format!("{address} {account:?}"))
                .collect();
            accounts.sort();
            format!("system {accounts:?}")
        }
    }
}
