//! Replays real dumps (the embedded default and small generated ones of every profile)
//! at 1 and 2 threads, every scheduler, batch 1 and 50, with verification; checks that
//! results do not depend on threads or scheduler, and that corruption is caught.

use alloy_hardforks::EthereumHardfork;
use gigagas_dump::Dump;
use gigagas_executor::{
    DivergenceField, ExecFailure, Expected, ItemKind, Mismatch, Parallel, RunConfig, SchedulerKind,
    Sequential, TimedWork,
    test_utils::{Point, RECOVER_SENDERS, grid, prepare, replay_and_verify},
};
use gigagas_workload::{GeneratorConfig, Profile};
use std::path::Path;

fn default_dump() -> Dump {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet-like.gigagas");
    gigagas_dump::read_dump(&path)
        .expect("the embedded default dump loads")
        .0
}

fn small(profile: Profile) -> Dump {
    gigagas_workload::generate(
        &GeneratorConfig {
            profile,
            blocks: 4,
            gas_per_block: 4_000_000,
            seed: 7,
            fork: EthereumHardfork::Prague,
            users: 40,
        },
        |_, _| {},
    )
    .expect("generation succeeds")
}

/// The sequential baseline and every grid point verify, and every point's outcomes and
/// timings agree ([`replay_and_verify`]).
fn replay_grid(dump: &Dump) {
    let points = grid(&[1, 2], &[1, 50], &SchedulerKind::ALL)
        .into_iter()
        .map(Point::Bal);
    replay_and_verify(
        dump.clone(),
        std::iter::once(Point::Sequential(TimedWork::default())).chain(points),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", dump.meta.name));
}

#[test]
fn default_dump_replays_and_verifies_on_every_grid_point() {
    replay_grid(&default_dump());
}

#[test]
fn every_profile_replays_and_verifies_on_every_grid_point() {
    for profile in Profile::ALL {
        replay_grid(&small(profile));
    }
}

#[test]
fn sequential_baseline_verifies_and_sender_recovery_changes_nothing() {
    let dump = small(Profile::MainnetLike);
    let replay = prepare(dump.clone()).unwrap();
    let (_, results) = Sequential::new(TimedWork::default())
        .outputs(&replay)
        .unwrap();
    replay.verify_sequential(&results.unwrap()).unwrap();
    let (_, plain) = Parallel::new(&RunConfig::new(
        std::num::NonZeroUsize::new(2).unwrap(),
        1,
        SchedulerKind::Ols,
    ))
    .outputs(&replay)
    .unwrap();
    let (_, recovered) = Parallel::new(
        &RunConfig::new(
            std::num::NonZeroUsize::new(2).unwrap(),
            1,
            SchedulerKind::Ols,
        )
        .with_work(RECOVER_SENDERS),
    )
    .outputs(&replay)
    .unwrap();
    replay.verify_all(&recovered).unwrap();
    assert_eq!(replay.outcomes(&plain), replay.outcomes(&recovered));
}

/// Index of the first transaction in `block` that writes storage.
fn first_storage_write(dump: &Dump, block: usize) -> (alloy_primitives::Address, usize, usize) {
    for (a, account) in dump.block(block).unwrap().access_list.iter().enumerate() {
        for (s, slot) in account.storage_changes.iter().enumerate() {
            if slot.changes.iter().any(|c| c.block_access_index.get() >= 1) {
                return (account.address, a, s);
            }
        }
    }
    panic!("block {block} writes no storage");
}

#[test]
fn corrupted_bal_write_is_named() {
    let mut dump = small(Profile::Erc20);
    let (address, a, s) = first_storage_write(&dump, 1);
    let change = dump.block_mut(1).unwrap().access_list[a].storage_changes[s]
        .changes
        .iter_mut()
        .find(|c| c.block_access_index.get() >= 1)
        .unwrap();
    change.new_value += alloy_primitives::U256::from(1);
    let tx = change.block_access_index.get() - 1;
    let replay = prepare(dump.clone()).unwrap();
    let (_, outputs) = Parallel::new(&RunConfig::new(
        std::num::NonZeroUsize::new(2).unwrap(),
        1,
        SchedulerKind::GasUsed,
    ))
    .outputs(&replay)
    .unwrap();
    let d = replay
        .verify_all(&outputs)
        .expect_err("a corrupted BAL must not verify")
        .divergence()
        .unwrap();
    assert_eq!(d.block, dump.block(1).unwrap().header.number);
    assert_eq!(d.item, ItemKind::Tx(tx as u32));
    assert_eq!(d.address, Some(address));
    assert!(matches!(d.field(), DivergenceField::Storage(_)), "{d}");
    assert!(d.to_string().contains(&format!("{address}")), "{d}");
}

#[test]
fn corrupted_receipt_is_named() {
    let mut dump = small(Profile::Transfers);
    dump.block_mut(2).unwrap().receipts[3].gas_used += 1;
    let replay = prepare(dump.clone()).unwrap();
    let (_, outputs) = Parallel::new(&RunConfig::new(
        std::num::NonZeroUsize::MIN,
        50,
        SchedulerKind::Ols,
    ))
    .outputs(&replay)
    .unwrap();
    let d = replay
        .verify_all(&outputs)
        .expect_err("a corrupted receipt must not verify")
        .divergence()
        .unwrap();
    assert_eq!(
        (d.block, d.item, d.field()),
        (
            dump.block(2).unwrap().header.number,
            ItemKind::Tx(3),
            DivergenceField::GasUsed
        )
    );
    assert!(
        matches!(
            *d.mismatch,
            Mismatch::GasUsed(Expected {
                expected: 21001,
                got: 21000
            })
        ),
        "{d}"
    );
}

#[test]
fn read_outside_the_bal_is_an_error_naming_block_tx_and_address() {
    let mut dump = small(Profile::Erc20);
    // Drop the first token-contract entry the block's transactions touch.
    let block = 1;
    let victim = dump
        .block(block)
        .unwrap()
        .access_list
        .iter()
        .position(|a| {
            a.storage_changes
                .iter()
                .any(|s| s.changes.iter().any(|c| c.block_access_index.get() >= 1))
        })
        .expect("an account a transaction writes storage of");
    let address = dump
        .block_mut(block)
        .unwrap()
        .access_list
        .remove(victim)
        .address;
    let replay = prepare(dump.clone()).unwrap();
    let (_, outputs) = Parallel::new(&RunConfig::new(
        std::num::NonZeroUsize::new(2).unwrap(),
        1,
        SchedulerKind::Ols,
    ))
    .outputs(&replay)
    .unwrap();
    let d = replay
        .verify_all(&outputs)
        .expect_err("a missing BAL account must fail")
        .divergence()
        .unwrap();
    let text = d.to_string();
    assert_eq!(d.block, dump.block(block).unwrap().header.number);
    assert!(matches!(d.item, ItemKind::Tx(_)), "{text}");
    assert!(
        text.contains(&address.to_string()) && text.contains("not in the block access list"),
        "{text}"
    );
}

/// A crafted access list whose write index lies past the block (a huge one, or `u64::MAX`)
/// is refused when the dump is prepared, naming the block: it never sizes an allocation.
#[test]
fn a_write_index_past_the_block_is_an_error_not_an_abort() {
    let dump = small(Profile::Transfers);
    for index in [
        u64::MAX,
        1 << 40,
        dump.block(0).unwrap().transactions.len() as u64 + 2,
    ] {
        let mut crafted = dump.clone();
        let entry = crafted
            .block_mut(0)
            .unwrap()
            .access_list
            .iter_mut()
            .find(|a| !a.balance_changes.is_empty())
            .expect("a balance write in the first block");
        entry.balance_changes[0].block_access_index = alloy_eip7928::BlockAccessIndex(index);
        let err = prepare(crafted).expect_err("an index past the block must be refused");
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("block {}", dump.block(0).unwrap().number()))
                && msg.contains("past the block"),
            "{msg}"
        );
    }
}

/// A stored sender that disagrees with the signature is an error when senders are
/// recovered (on both paths), not a run that verifies because recovery hid it.
#[test]
fn a_stored_sender_that_disagrees_with_the_signature_fails_when_recovering() {
    let mut dump = small(Profile::Erc20);
    let tx = dump.block_mut(1).unwrap().transactions.remove(0);
    let (inner, signer) = tx.into_parts();
    assert_ne!(signer, alloy_primitives::Address::ZERO);
    dump.block_mut(1).unwrap().transactions.insert(
        0,
        alloy_consensus::transaction::Recovered::new_unchecked(
            inner,
            alloy_primitives::Address::repeat_byte(0x42),
        ),
    );
    let replay = prepare(dump.clone()).unwrap();
    let config = RunConfig::new(
        std::num::NonZeroUsize::new(2).unwrap(),
        1,
        SchedulerKind::Ols,
    )
    .with_work(RECOVER_SENDERS);
    let (_, outputs) = Parallel::new(&config).outputs(&replay).unwrap();
    let d = replay
        .verify_all(&outputs)
        .unwrap_err()
        .divergence()
        .unwrap();
    assert_eq!(
        (d.block, d.item),
        (dump.block(1).unwrap().number(), ItemKind::Tx(0))
    );
    assert!(
        matches!(
            &*d.mismatch,
            Mismatch::Execution(e) if matches!(e.failure, ExecFailure::SenderMismatch { .. })
        ),
        "{d}"
    );
    assert!(d.to_string().contains("the signature gives"), "{d}");
    let err = Sequential::new(RECOVER_SENDERS)
        .outputs(&replay)
        .unwrap()
        .1
        .unwrap_err();
    assert!(
        matches!(err.failure, ExecFailure::SenderMismatch { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("the signature gives"), "{err}");
}
