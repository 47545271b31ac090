//! The cross-check: dump from geth --dev (an independent EVM implementation), replay the
//! dump with gigagas-executor on revm at 2 threads with every scheduler and verify it.
//! Any gas or status difference between geth and revm fails the dump itself.

mod common;

use common::{Driver, Kind, Node, check_statuses, replay_and_verify, setup, workload};
use gigagas_rpc::{DumpOptions, dump_from_rpc};

#[test]
fn geth_range_dumps_replays_and_verifies() {
    let Some(node) = Node::start(Kind::Geth) else {
        return;
    };
    let mut d = Driver::new(&node);
    let mut c = setup(&mut d);
    let first_receipt = d.receipts.len();
    let from = d.block_number() + 1;
    let reverts = workload(&mut d, &mut c);
    let to = d.block_number();
    check_statuses(&d, first_receipt, &reverts);

    let opts = DumpOptions {
        concurrency: std::num::NonZeroUsize::new(2).unwrap(),
        batch_size: 16,
        ..DumpOptions::new(node.url.clone(), from, to)
    };
    let dump = dump_from_rpc(&opts, &mut |_| {}).unwrap_or_else(|e| panic!("dump from geth: {e}"));
    assert_eq!(dump.block_count() as u64, to - from + 1);
    assert_eq!(dump.transaction_count(), d.receipts.len() - first_receipt);
    eprintln!(
        "geth {}: blocks {from}..={to}, fork {} ({}), {} txs, {} gas, {} withdrawals",
        dump.meta
            .provenance
            .get("client")
            .cloned()
            .unwrap_or_default(),
        dump.meta.provenance["fork"],
        dump.meta.provenance["fork-source"],
        dump.transaction_count(),
        dump.total_gas(),
        dump.blocks().map(|b| b.withdrawals.len()).sum::<usize>()
    );
    let types: std::collections::BTreeSet<u8> = dump
        .blocks()
        .flat_map(|b| b.transactions.iter().map(|t| t.inner().tx_type() as u8))
        .collect();
    assert!(
        types.is_superset(&[0, 1, 2, 4].into()),
        "legacy, 2930, 1559 and 7702 transactions: {types:?}"
    );

    replay_and_verify(&dump);
    common::check_final_state(&dump, &node.client());
    common::check_witness(&dump, &node.client(), "eth_getProof");
    common::check_roots(&dump, false);

    // One block at a time: debug_executionWitness where geth serves it, else eth_getProof;
    // with geth's own witness every root is computable and equals geth's header.
    for number in from..=to {
        let one = DumpOptions::new(node.url.clone(), number, number);
        let dump =
            dump_from_rpc(&one, &mut |_| {}).unwrap_or_else(|e| panic!("dump from geth: {e}"));
        common::check_witness(&dump, &node.client(), "");
        let complete = dump.meta.provenance["witness"].starts_with("debug_executionWitness");
        common::check_roots(&dump, complete);
    }
}
