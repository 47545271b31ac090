//! A pass batch by batch: what reading, executing and the root took for
//! each batch (a block at batch 1, a mega-block otherwise), end to end, and the keys each
//! block updates, so the root's cost can be given per updated key.
//!
//! Everything is derived from what the executor records anyway ([`RunTimings`]: the batches'
//! starts and wall times, every item's start and length, each prefetch's span, every root
//! unit's span and block) and from the replay's access lists and pre-state: no clock is read
//! here, and the executor is not asked for anything more.

use alloy_primitives::{Address, B256, U256};
use gigagas_executor::{BlockReadError, Replay, RunTimings};
use gigagas_grid::{Point, StateRead};
use gigagas_report::results::BatchFigures;
use revm::{DatabaseRef, primitives::hardfork::SpecId};
use std::collections::{HashMap, HashSet};

/// Whether a point's rows keep their batches' figures: the replay's points that read a
/// store or compute roots (the big blocks' end-to-end figures). In-memory points without a
/// root have no read and no root to split a batch into.
pub fn keeps_batches(point: &Point) -> bool {
    match point {
        Point::Sequential(_) => false,
        Point::Bal(config) => {
            !matches!(config.work.state, StateRead::Memory) || !config.work.state_root.is_off()
        }
    }
}

/// Each batch of one pass, phase by phase, its updated keys left at zero ([`add_keys`]).
/// Empty when the timings hold no batches (a sequential pass).
pub fn batch_figures(replay: &Replay, t: &RunTimings) -> Vec<BatchFigures> {
    let items = replay.items();
    // The root units by block, once: first start, last end, busy, read, faults.
    let mut root_by_block: HashMap<u32, (u64, u64, u64, u64, u64)> = HashMap::new();
    for span in &t.root.spans {
        let e = root_by_block
            .entry(span.block)
            .or_insert((u64::MAX, 0, 0, 0, 0));
        e.0 = e.0.min(span.start_ns);
        e.1 = e.1.max(span.start_ns + span.ns);
        e.2 += span.ns;
        e.3 += span.read_ns;
        e.4 += span.faults;
    }
    // Each block's commit (`--persist`), by block.
    let persisted: HashMap<u32, &gigagas_executor::BlockPersist> = t
        .root
        .persisted
        .iter()
        .map(|p| (p.block as u32, p))
        .collect();
    // One prefetch per batch, in batch order (before it runs, or pipelined beside the one
    // before); none in memory or on demand.
    let reads = (t.read_spans.len() == t.batches.len()).then_some(&t.read_spans);
    // The part of each batch's read it waited for (all of it before the batch).
    let exposed = |k: usize| {
        t.batch_read_exposed_ns
            .get(k)
            .copied()
            .unwrap_or_else(|| reads.map_or(0, |r| r[k].1))
    };
    let s = |ns: u64| ns as f64 / 1e9;
    t.batches
        .iter()
        .enumerate()
        .filter(|(_, range)| !range.is_empty())
        .map(|(k, range)| {
            let first = items[range.start].block;
            let last = items[range.end - 1].block;
            let (mut start, mut end, mut gas) = (u64::MAX, 0, 0);
            for i in range.clone() {
                start = start.min(t.item_start_ns[i]);
                end = end.max(t.item_start_ns[i] + t.item_ns[i]);
                gas += items[i].gas_used;
            }
            let (mut root_start, mut root_end, mut root_busy, mut root_read) = (u64::MAX, 0, 0, 0);
            let mut root_faults = None;
            let mut persist = gigagas_executor::BlockPersist::default();
            for b in first..=last {
                if let Some(p) = persisted.get(&b) {
                    persist.ns += p.ns;
                    persist.bytes += p.bytes;
                    persist.pages += p.pages;
                    persist.commit_blocks += p.commit_blocks;
                    persist.commit_ns += p.commit_ns;
                }
            }
            for b in first..=last {
                if let Some(&(s0, e0, busy, read, faults)) = root_by_block.get(&b) {
                    root_start = root_start.min(s0);
                    root_end = root_end.max(e0);
                    root_busy += busy;
                    root_read += read;
                    *root_faults.get_or_insert(0.0) += faults as f64;
                }
            }
            BatchFigures {
                first_block: first,
                blocks: last - first + 1,
                gas,
                read_s: reads.map_or(0.0, |r| s(r[k].1)),
                read_exposed_s: Some(s(exposed(k))),
                exec_s: s(end.saturating_sub(start)),
                root_s: s(root_end.saturating_sub(root_start)),
                root_busy_s: s(root_busy),
                root_read_s: s(root_read),
                root_faults,
                persist_s: s(persist.ns),
                persist_bytes: persist.bytes,
                persist_pages: persist.pages,
                commit_blocks: persist.commit_blocks,
                commit_s: s(persist.commit_ns),
                wall_s: s(t.batch_wall_ns.get(k).copied().unwrap_or(0)),
                updated_accounts: 0,
                updated_slots: 0,
            }
        })
        .collect()
}

/// The mean of several passes' batch figures (a sample's passes): each time averaged
/// batch by batch; the batches, gas and keys are the same in every pass.
pub fn mean_batches(passes: &[Vec<BatchFigures>]) -> Vec<BatchFigures> {
    let Some(first) = passes.first() else {
        return Vec::new();
    };
    let n = passes.len() as f64;
    let mut mean = first.clone();
    for (k, m) in mean.iter_mut().enumerate() {
        let avg = |f: fn(&BatchFigures) -> f64| {
            passes.iter().filter_map(|p| p.get(k)).map(f).sum::<f64>() / n
        };
        m.read_s = avg(|b| b.read_s);
        m.read_exposed_s = Some(avg(|b| b.read_exposed_s.unwrap_or(0.0)));
        m.exec_s = avg(|b| b.exec_s);
        m.root_s = avg(|b| b.root_s);
        m.root_busy_s = avg(|b| b.root_busy_s);
        m.root_read_s = avg(|b| b.root_read_s);
        m.root_faults = m.root_faults.map(|_| avg(|b| b.root_faults.unwrap_or(0.0)));
        m.persist_s = avg(|b| b.persist_s);
        m.commit_s = avg(|b| b.commit_s);
        m.wall_s = avg(|b| b.wall_s);
    }
    mean
}

/// The keys one block updates: accounts and slots whose value after the block differs
/// from before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpdatedKeys {
    /// Accounts with a changed field (nonce, balance, code) or a changed slot, or deleted
    /// (EIP-161: touched, existing, and left empty): each a leaf of the account trie.
    pub accounts: u64,
    /// Slots whose last value in the block differs from their value before it.
    pub slots: u64,
}

/// An account's fields: nonce, balance, code hash.
type Fields = (u64, U256, B256);

/// The keys each block of the replay updates (indexed like [`Replay::blocks`]), from its
/// access list (the last write of each field and slot) against the values before it: the
/// segment's pre-state, moved on block by block. The net change over a block, as the root
/// walks it (`StateTrie::prepare_block`): a slot written back to its value, an account only
/// read, or one touched and absent before and after, is not updated. A value the pre-state
/// lacks counts as changed when written.
pub fn updated_keys(replay: &Replay) -> Result<Vec<UpdatedKeys>, BlockReadError> {
    let mut out = vec![UpdatedKeys::default(); replay.block_count()];
    for segment in replay.segments() {
        let pre = segment.pre();
        // What earlier blocks of the segment left (`None`: absent), over the pre-state.
        let mut accounts: HashMap<Address, Option<Fields>> = HashMap::new();
        let mut slots: HashMap<(Address, U256), U256> = HashMap::new();
        // Accounts deleted by an earlier block: their other slots are zero.
        let mut wiped: HashSet<Address> = HashSet::new();
        replay.each_block(segment.blocks(), |b, block| {
            let delete_empty = block
                .env()
                .cfg_env
                .spec
                .is_enabled_in(SpecId::SPURIOUS_DRAGON);
            let keys = &mut out[b];
            for (address, account) in block.bal().accounts.iter() {
                let address = *address;
                // `Some(None)`: known absent; `None`: unknown.
                let before: Option<Option<Fields>> =
                    accounts.get(&address).copied().or_else(|| {
                        pre.basic_ref(address)
                            .ok()
                            .map(|a| a.map(|i| (i.nonce, i.balance, i.code_hash)))
                    });
                let mut slots_changed = 0;
                for (slot, writes) in &account.storage.storage {
                    let Some(&(_, after)) = writes.writes.last() else {
                        continue;
                    };
                    let key = (address, *slot);
                    let was = slots.get(&key).copied().or_else(|| {
                        if wiped.contains(&address) || matches!(before, Some(None)) {
                            Some(U256::ZERO)
                        } else {
                            pre.storage_ref(address, *slot).ok()
                        }
                    });
                    if was != Some(after) {
                        slots_changed += 1;
                    }
                    slots.insert(key, after);
                }
                let info = &account.account_info;
                let nonce = info.nonce.writes.last().map(|(_, n)| *n);
                let balance = info.balance.writes.last().map(|(_, v)| *v);
                let code_hash = info.code.writes.last().map(|(_, (hash, _))| *hash);
                let written = nonce.is_some() || balance.is_some() || code_hash.is_some();
                let base = before.flatten();
                let after: Fields = (
                    nonce.unwrap_or(base.map_or(0, |a| a.0)),
                    balance.unwrap_or(base.map_or(U256::ZERO, |a| a.1)),
                    code_hash.unwrap_or(base.map_or(alloy_primitives::KECCAK256_EMPTY, |a| a.2)),
                );
                let empty = after.0 == 0
                    && after.1.is_zero()
                    && after.2 == alloy_primitives::KECCAK256_EMPTY;
                let deleted = delete_empty && empty;
                let fields_changed = match before {
                    // Unknown before: a write counts as a change.
                    None => written,
                    Some(Some(_)) if deleted => true,
                    Some(Some(was)) => was != after,
                    Some(None) if deleted => false,
                    Some(None) => written,
                };
                if fields_changed || slots_changed > 0 {
                    keys.accounts += 1;
                }
                keys.slots += slots_changed;
                if deleted {
                    accounts.insert(address, None);
                    wiped.insert(address);
                    slots.retain(|(a, _), _| *a != address);
                } else if written || before.is_some() {
                    accounts.insert(address, Some(after));
                }
            }
        })?;
    }
    Ok(out)
}

/// Fill each batch's updated keys from its blocks' (`keys`: [`updated_keys`]).
pub fn add_keys(batches: &mut [BatchFigures], keys: &[UpdatedKeys]) {
    for batch in batches {
        let first = batch.first_block as usize;
        let blocks = keys
            .get(first..first + batch.blocks as usize)
            .unwrap_or(&[]);
        batch.updated_accounts = blocks.iter().map(|k| k.accounts).sum();
        batch.updated_slots = blocks.iter().map(|k| k.slots).sum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_hardforks::EthereumHardfork;
    use gigagas_executor::{Parallel, RootSpan, RootStepKind, Runner};
    use gigagas_grid::{RunConfig, SchedulerKind, StateRootPhase, TimedWork};
    use gigagas_trie::{PreValues, RootRules, StateTrie};
    use gigagas_workload::{GeneratorConfig, Profile, generate_with_witness};

    fn generated(profile: Profile, blocks: u64) -> gigagas_dump::Dump {
        generate_with_witness(
            &GeneratorConfig {
                profile,
                blocks,
                gas_per_block: 3_000_000,
                seed: 45,
                fork: EthereumHardfork::Prague,
                users: 60,
            },
            |_, _| {},
        )
        .unwrap()
    }

    /// The keys counted from the access lists and the pre-state are the ones the trie
    /// walks as net changes (`StateTrie::prepare_block` with every pre-value known): its
    /// changed accounts and its storage tasks' writes, block by block.
    #[test]
    fn updated_keys_are_the_tries_net_changes() {
        for profile in [Profile::MainnetLike, Profile::Erc20, Profile::Amm] {
            let mut dump = generated(profile, 4);
            if profile == Profile::MainnetLike {
                write_back_a_slot(&mut dump);
            }
            let mut expected = Vec::new();
            for segment in &dump.segments {
                let mut trie = StateTrie::from_witness(segment.witness.as_ref().unwrap())
                    .unwrap()
                    .with_pre_values(PreValues::of_pre_state(&segment.pre_state));
                for block in &segment.blocks {
                    let mut job = trie
                        .prepare_block(&block.access_list, RootRules::SPURIOUS_DRAGON)
                        .unwrap();
                    let tasks = job.storage_tasks();
                    let keys = UpdatedKeys {
                        accounts: job.accounts() as u64,
                        slots: tasks.iter().map(|t| t.writes() as u64).sum(),
                    };
                    let results = tasks.into_iter().map(|t| t.run()).collect();
                    assert_eq!(
                        job.finish(&mut trie, results).unwrap(),
                        block.header.state_root
                    );
                    expected.push(keys);
                }
            }
            let replay = gigagas_executor::test_utils::prepare(dump).unwrap();
            let counted = updated_keys(&replay).unwrap();
            assert_eq!(counted, expected, "{profile:?}");
            assert!(counted.iter().all(|k| k.accounts > 0), "{profile:?}");
            // Some listed accounts are only read: the count is not the list's size.
            let mut listed = 0;
            replay
                .each_block(0..replay.block_count(), |_, b| {
                    listed += b.bal().accounts.len()
                })
                .unwrap();
            let updated: u64 = counted.iter().map(|k| k.accounts).sum();
            assert!(
                updated < listed as u64,
                "{profile:?}: {updated} of {listed}"
            );
        }
    }

    /// Block 0 also writes one slot back to its value before the block (a slot the block's
    /// list does not name, of an account whose storage it changes): listed, not updated.
    fn write_back_a_slot(dump: &mut gigagas_dump::Dump) {
        let segment = &mut dump.segments[0];
        let pre = &segment.pre_state.storage;
        let list = &mut segment.blocks[0].access_list;
        let (account, slot) = list
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.storage_changes.is_empty())
            .find_map(|(i, c)| {
                let named = |slot| {
                    c.storage_changes.iter().any(|s| s.slot == slot)
                        || c.storage_reads.contains(&slot)
                };
                pre.iter()
                    .find(|s| s.address == c.address && !named(s.slot))
                    .map(|s| (i, *s))
            })
            .expect("an account whose storage block 0 changes, with a slot it does not name");
        let changes = &mut list[account].storage_changes;
        changes.push(alloy_eip7928::SlotChanges::new(
            slot.slot,
            vec![alloy_eip7928::StorageChange::new(
                alloy_eip7928::BlockAccessIndex(1),
                slot.value,
            )],
        ));
        changes.sort_by_key(|s| s.slot);
    }

    /// A pass's batches from its recorded spans: execution from the first item's start to
    /// the last one's end, the read of the batch, the root units of its blocks (span and
    /// own time), the batch's wall time; keys summed over its blocks.
    #[test]
    fn a_batch_is_cut_from_the_recorded_spans() {
        let replay =
            gigagas_executor::test_utils::prepare(generated(Profile::Transfers, 2)).unwrap();
        let batches = replay.batches(1);
        assert_eq!(batches.len(), 2);
        let n = replay.items().len();
        let mut t = RunTimings {
            item_ns: vec![10; n],
            item_start_ns: vec![0; n],
            batches: batches.clone(),
            batch_wall_ns: vec![500, 900],
            read_spans: vec![(0, 40), (600, 70)],
            ..Default::default()
        };
        for (k, range) in batches.iter().enumerate() {
            for (j, i) in range.clone().enumerate() {
                t.item_start_ns[i] = [50, 700][k] + j as u64 * 5;
            }
        }
        // Each unit spent a tenth of its time reading trie nodes, and faulted once every
        // 10 ns.
        let span = |block, start_ns, ns| RootSpan {
            worker: 0,
            start_ns,
            ns,
            read_ns: ns / 10,
            persist_ns: 0,
            faults: ns / 10,
            kind: RootStepKind::Storage,
            block,
            writes: 1,
        };
        t.root.spans = vec![span(0, 100, 30), span(0, 200, 50), span(1, 800, 20)];
        let mut figures = batch_figures(&replay, &t);
        assert_eq!(figures.len(), 2);
        let last_start = |k: usize| [50, 700][k] + (batches[k].len() as u64 - 1) * 5;
        for (k, f) in figures.iter().enumerate() {
            assert_eq!((f.first_block, f.blocks), (k as u32, 1));
            let gas: u64 = replay.items()[batches[k].clone()]
                .iter()
                .map(|i| i.gas_used)
                .sum();
            assert_eq!(f.gas, gas);
            assert_eq!(f.exec_s, (last_start(k) + 10 - [50, 700][k]) as f64 / 1e9);
            assert_eq!(f.wall_s, [500e-9, 900e-9][k]);
            assert_eq!(f.read_s, [40e-9, 70e-9][k]);
        }
        assert_eq!((figures[0].root_s, figures[0].root_busy_s), (150e-9, 80e-9));
        assert_eq!((figures[1].root_s, figures[1].root_busy_s), (20e-9, 20e-9));
        // The root's reads split from its hashing, block by block.
        assert_eq!(
            (figures[0].root_read_s, figures[1].root_read_s),
            (8e-9, 2e-9)
        );
        assert_eq!(
            (figures[0].root_faults, figures[1].root_faults),
            (Some(8.0), Some(2.0))
        );
        let keys = [
            UpdatedKeys {
                accounts: 3,
                slots: 7,
            },
            UpdatedKeys {
                accounts: 2,
                slots: 0,
            },
        ];
        add_keys(&mut figures, &keys);
        assert_eq!(figures[0].updated_keys(), 10);
        assert_eq!(figures[0].root_ns_per_key(), Some(15.0));
        // One mega-block of both: the keys of both blocks, the root units of both.
        t.batches = replay.batches(2);
        t.batch_wall_ns = vec![1_000];
        t.read_spans.clear();
        let mut mega = batch_figures(&replay, &t);
        add_keys(&mut mega, &keys);
        assert_eq!(mega.len(), 1);
        assert_eq!((mega[0].blocks, mega[0].updated_keys()), (2, 12));
        assert_eq!((mega[0].root_s, mega[0].root_busy_s), (720e-9, 100e-9));
        assert_eq!(mega[0].root_read_s, 10e-9);
        assert_eq!(mega[0].root_faults, Some(10.0));
        assert_eq!(
            mega[0].read_s, 0.0,
            "no read per batch: in memory or on demand"
        );
        // A sample's passes average batch by batch.
        let mut other = mega.clone();
        other[0].wall_s = 3e-6;
        other[0].root_faults = Some(20.0);
        let mean = mean_batches(&[mega, other]);
        assert_eq!((mean[0].wall_s, mean[0].root_faults), (2e-6, Some(15.0)));
    }

    /// On a real pass with the root overlapped, every block is a batch of its own with its
    /// gas, its execution and its root inside its wall time; only store and root points
    /// keep them.
    #[test]
    fn a_root_pass_has_a_figure_per_block() {
        let replay =
            gigagas_executor::test_utils::prepare(generated(Profile::MainnetLike, 3)).unwrap();
        let work = TimedWork {
            state_root: StateRootPhase::Overlapped,
            ..Default::default()
        };
        let config = RunConfig::new(
            std::num::NonZeroUsize::new(2).unwrap(),
            1,
            SchedulerKind::GasUsed,
        )
        .with_work(work);
        assert!(keeps_batches(&Point::Bal(config)));
        assert!(!keeps_batches(&Point::Bal(
            config.with_work(TimedWork::default())
        )));
        assert!(!keeps_batches(&Point::Sequential(work)));
        let timings = Parallel::new(&config).run(&replay, true).unwrap();
        let figures = batch_figures(&replay, &timings);
        assert_eq!(figures.len(), 3);
        assert_eq!(
            figures.iter().map(|f| f.gas).sum::<u64>(),
            replay.total_gas()
        );
        for f in &figures {
            assert!(
                f.exec_s > 0.0 && f.root_s > 0.0 && f.root_busy_s > 0.0,
                "{f:?}"
            );
            assert!(f.wall_s >= f.exec_s && f.wall_s >= f.root_s, "{f:?}");
            assert_eq!(f.read_s, 0.0);
        }
        // Every block's root counted its device reads, and the blocks' counts are the pass's.
        let faults: Option<f64> = figures.iter().map(|f| f.root_faults).sum();
        assert_eq!(faults, Some(timings.root.faults as f64), "{figures:?}");
    }
}
