//! Dump a realistic mix of transactions from a local anvil, then replay the dump with
//! gigagas-executor at 2 threads with every scheduler and verify it. Prague (with
//! prestateTracer prefetching, written to a file and read back) and Cancun (state fetched
//! on demand only; the detected fork schedule equals `--fork cancun`).

mod common;

use alloy_hardforks::EthereumHardfork;
use common::{Driver, Kind, Node, check_statuses, replay_and_verify, setup, workload};
use gigagas_dump::Dump;
use gigagas_rpc::{DumpEvent, DumpOptions, dump_from_rpc, dump_to_file, partial_dir_for};
use std::collections::BTreeSet;

/// Run the workload on a fresh anvil; returns the node, the range and the transaction count.
fn chain(fork: &str) -> Option<(Node, u64, u64, usize, u64)> {
    let node = Node::start_with(Kind::Anvil, fork)?;
    let (from, to, txs, chain_id) = {
        let mut d = Driver::new(&node);
        let mut c = setup(&mut d);
        let first_receipt = d.receipts.len();
        let from = d.block_number() + 1;
        let reverts = workload(&mut d, &mut c);
        let to = d.block_number();
        check_statuses(&d, first_receipt, &reverts);
        assert!(
            to >= from + 3,
            "the workload spans several blocks ({from}..={to})"
        );
        (from, to, d.receipts.len() - first_receipt, d.chain_id)
    };
    Some((node, from, to, txs, chain_id))
}

fn tx_types(dump: &Dump) -> BTreeSet<u8> {
    dump.blocks()
        .flat_map(|b| b.transactions.iter().map(|t| t.inner().tx_type() as u8))
        .collect()
}

fn common_checks(dump: &Dump, from: u64, to: u64, txs: usize, chain_id: u64) {
    assert_eq!(dump.block_count() as u64, to - from + 1);
    assert_eq!(dump.meta.chain.chain_id, chain_id);
    assert_eq!(dump.transaction_count(), txs);
    assert_eq!(dump.segments[0].block_hashes.len() as u64, from.min(256));
    assert!(
        dump.blocks().flat_map(|b| &b.receipts).any(|r| !r.success),
        "a reverting transaction"
    );
    assert!(
        dump.segments[0]
            .pre_state
            .accounts
            .iter()
            .any(|a| a.state.is_none()),
        "absent accounts are recorded"
    );
    assert!(
        !dump.segments[0].pre_state.storage.is_empty()
            && !dump.segments[0].pre_state.codes.is_empty()
    );
}

#[test]
fn anvil_prague_range_dumps_replays_and_verifies() {
    let Some((node, from, to, txs, chain_id)) = chain("prague") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("anvil.gigagas");
    let opts = DumpOptions {
        concurrency: std::num::NonZeroUsize::new(2).unwrap(),
        batch_size: 16,
        ..DumpOptions::new(node.url.clone(), from, to)
    };
    let mut events = Vec::new();
    let (dump, info) = dump_to_file(&opts, &out, &mut |p| events.push(p))
        .unwrap_or_else(|e| panic!("dump from anvil: {e}"));
    assert!(
        !partial_dir_for(&out).exists(),
        "the resume directory is removed after success"
    );
    let (read, read_info) = gigagas_dump::read_dump(&out).unwrap();
    assert_eq!(read, dump);
    assert_eq!(read_info, info);

    common_checks(&dump, from, to, txs, chain_id);
    assert_eq!(dump.meta.provenance["fork"], "Prague");
    assert_eq!(dump.meta.provenance["fork-source"], "eth_config");
    assert!(
        tx_types(&dump).is_superset(&[0, 1, 2, 4].into()),
        "legacy, 2930, 1559 and 7702: {:?}",
        tx_types(&dump)
    );
    // The pre-state is completed, then the witness fetched (anvil serves eth_getProof).
    assert!(
        matches!(events.as_slice(), [.., DumpEvent::Finishing, DumpEvent::Witness { nodes, .. }] if *nodes > 0),
        "{events:?}"
    );
    if let Some(DumpEvent::Block {
        state_calls,
        on_demand,
        ..
    }) = events
        .iter()
        .rev()
        .find(|e| matches!(e, DumpEvent::Block { .. }))
    {
        eprintln!("anvil prague: {state_calls} state calls, {on_demand} on demand");
    }
    replay_and_verify(&dump);
    common::check_final_state(&dump, &node.client());
    common::check_witness(&dump, &node.client(), "eth_getProof");
}

#[test]
fn anvil_cancun_range_dumps_on_demand_replays_and_verifies() {
    let Some((node, from, to, txs, chain_id)) = chain("cancun") else {
        return;
    };
    let opts = DumpOptions {
        concurrency: std::num::NonZeroUsize::new(1).unwrap(),
        batch_size: 5,
        trace_prefetch: false,
        ..DumpOptions::new(node.url.clone(), from, to)
    };
    let mut on_demand = 0;
    let dump = dump_from_rpc(&opts, &mut |p| {
        if let DumpEvent::Block { on_demand: n, .. } = p {
            on_demand = n;
        }
    })
    .unwrap_or_else(|e| panic!("dump from anvil: {e}"));
    common_checks(&dump, from, to, txs, chain_id);
    assert_eq!(dump.meta.provenance["fork"], "Cancun");
    assert!(
        on_demand > 0,
        "without prefetching, revm's reads go to the node one by one"
    );
    assert!(
        tx_types(&dump).is_superset(&[0, 1, 2].into()),
        "{:?}",
        tx_types(&dump)
    );

    let forced = dump_from_rpc(
        &DumpOptions {
            fork: Some(EthereumHardfork::Cancun),
            ..opts
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(forced.meta.chain.forks, dump.meta.chain.forks);
    assert_eq!(forced.meta.provenance["fork-source"], "--fork");
    assert_eq!(
        // The blocks with their access lists, and the pre-state.
        (&forced.segments[0].blocks, &forced.segments[0].pre_state),
        (&dump.segments[0].blocks, &dump.segments[0].pre_state)
    );

    replay_and_verify(&dump);
    common::check_final_state(&dump, &node.client());
}
