//! The timed work is the same on both paths: receipts (with their logs blooms) are built by
//! both or by neither, they are the same receipts, and they hash to the headers'
//! `receiptsRoot` from Byzantium on (checked on the 42 real mainnet blocks).

use gigagas_dump::Dump;
use gigagas_executor::{
    DivergenceField, ItemOutput, Parallel, ReceiptsRootCheck, RunConfig, SchedulerKind, Sequential,
    TimedWork,
    test_utils::{RECEIPTS, prepare},
};
use std::path::Path;

fn mainnet() -> Dump {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet.gigagas");
    gigagas_dump::read_dump(&path)
        .expect("the mainnet dump loads")
        .0
}

fn config(threads: usize, batch: usize, receipts: bool) -> RunConfig {
    let config = RunConfig::new(
        std::num::NonZeroUsize::new(threads).unwrap(),
        batch,
        SchedulerKind::GasUsed,
    );
    if receipts {
        config.with_work(RECEIPTS)
    } else {
        config
    }
}

fn replay_receipts(
    outputs: &gigagas_executor::RunOutputs,
) -> Vec<alloy_consensus::ReceiptEnvelope> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Ok(ItemOutput::Tx { receipt, .. }) => Some(receipt.clone()),
            _ => None,
        })
        .map(|r| r.expect("every transaction built its receipt"))
        .collect()
}

#[test]
fn neither_path_builds_receipts_without_the_option() {
    let replay = prepare(mainnet()).unwrap();
    let (_, seq) = Sequential::new(TimedWork::default())
        .outputs(&replay)
        .unwrap();
    let seq = seq.unwrap();
    assert!(
        seq.receipts.is_empty(),
        "the sequential loop built receipts"
    );
    replay.verify_sequential(&seq).unwrap();
    let (_, outputs) = Parallel::new(&config(2, 1, false))
        .outputs(&replay)
        .unwrap();
    replay.verify_all(&outputs).unwrap();
    for out in &outputs {
        if let Ok(ItemOutput::Tx { receipt, .. }) = out {
            assert!(receipt.is_none(), "the replay built a receipt");
        }
    }
}

#[test]
fn both_paths_build_the_same_receipts_and_they_match_every_header_from_byzantium() {
    let replay = prepare(mainnet()).unwrap();
    let (_, seq) = Sequential::new(RECEIPTS).outputs(&replay).unwrap();
    let seq = seq.unwrap();
    assert_eq!(seq.receipts.len(), replay.transaction_count());
    replay.verify_sequential(&seq).unwrap();
    for (threads, batch) in [(1, 1), (2, 42)] {
        let (_, outputs) = Parallel::new(&config(threads, batch, true))
            .outputs(&replay)
            .unwrap();
        replay.verify_all(&outputs).unwrap();
        assert!(
            replay_receipts(&outputs) == seq.receipts,
            "{threads} threads, batch {batch}: the replay's receipts differ from the loop's"
        );
    }
    let (checked, before_byzantium) = replay.receipts_root_coverage();
    assert!(
        checked >= 30 && before_byzantium >= 5,
        "{checked}/{before_byzantium}"
    );
    assert_eq!(checked + before_byzantium, replay.block_count());
}

#[test]
fn receipts_that_hash_differently_fail_with_the_block_named_and_pre_byzantium_says_not_checked() {
    let mut dump = mainnet();
    let replay = prepare(dump.clone()).unwrap();
    let spec = replay.spec();
    use alloy_hardforks::EthereumHardforks;
    let late = dump
        .blocks()
        .collect::<Vec<_>>()
        .iter()
        .rposition(|b| !b.transactions.is_empty())
        .unwrap();
    let early = dump
        .blocks()
        .position(|b| !b.transactions.is_empty() && !spec.is_byzantium_active_at_block(b.number()))
        .expect("the dump has a pre-Byzantium block with transactions");
    let (late_number, early_number) = (
        dump.block(late).unwrap().number(),
        dump.block(early).unwrap().number(),
    );
    for b in [late, early] {
        dump.block_mut(b).unwrap().header.receipts_root = alloy_primitives::B256::repeat_byte(0xee);
    }
    let replay = prepare(dump.clone()).unwrap();

    // Without receipts nothing looks at the root.
    let (_, outputs) = Parallel::new(&config(2, 1, false))
        .outputs(&replay)
        .unwrap();
    replay.verify_all(&outputs).unwrap();

    // With them, both paths name the late block.
    let (_, outputs) = Parallel::new(&config(2, 1, true)).outputs(&replay).unwrap();
    let d = replay
        .verify_all(&outputs)
        .unwrap_err()
        .divergence()
        .unwrap();
    assert_eq!(
        (d.block, d.field()),
        (late_number, DivergenceField::ReceiptsRoot)
    );
    let (_, seq) = Sequential::new(RECEIPTS).outputs(&replay).unwrap();
    let d = replay
        .verify_sequential(&seq.unwrap())
        .unwrap_err()
        .divergence()
        .unwrap();
    assert_eq!(
        (d.block, d.field()),
        (late_number, DivergenceField::ReceiptsRoot)
    );

    // The pre-Byzantium block's wrong root is not checked, and says so.
    let blocks = replay.blocks(0..replay.block_count()).unwrap();
    let (_, block) = blocks
        .iter()
        .find(|(_, b)| b.header().number == early_number)
        .unwrap();
    let receipts: Vec<_> = (0..block.transactions().len())
        .map(|_| gigagas_executor::tx_receipt(alloy_consensus::TxType::Legacy, true, 0, Vec::new()))
        .collect();
    assert_eq!(
        replay.check_receipts_root(block, &receipts).unwrap(),
        ReceiptsRootCheck::NotCheckedBeforeByzantium
    );
}

#[test]
fn a_wrong_log_count_in_the_dump_is_caught_on_both_paths() {
    let mut dump = mainnet();
    let (b, i) = dump
        .blocks()
        .enumerate()
        .find_map(|(b, block)| {
            block
                .receipts
                .iter()
                .position(|r| r.logs > 0)
                .map(|i| (b, i))
        })
        .unwrap();
    dump.block_mut(b).unwrap().receipts[i].logs += 1;
    let number = dump.block(b).unwrap().number();
    let replay = prepare(dump.clone()).unwrap();
    let (_, outputs) = Parallel::new(&config(1, 1, false))
        .outputs(&replay)
        .unwrap();
    let d = replay
        .verify_all(&outputs)
        .unwrap_err()
        .divergence()
        .unwrap();
    assert_eq!((d.block, d.field()), (number, DivergenceField::LogCount));
    let (_, seq) = Sequential::new(TimedWork::default())
        .outputs(&replay)
        .unwrap();
    let d = replay
        .verify_sequential(&seq.unwrap())
        .unwrap_err()
        .divergence()
        .unwrap();
    assert_eq!((d.block, d.field()), (number, DivergenceField::LogCount));
}
