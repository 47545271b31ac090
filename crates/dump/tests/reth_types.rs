//! Reth's primitives and the dump's types describe the same blocks and accounts: the 42
//! real mainnet blocks of `dumps/mainnet.gigagas` go to reth's `RecoveredBlock` and back
//! unchanged, reth recovers the same senders from the signatures and hashes the same
//! header, and every pre-state account survives reth's `Account`.

use gigagas_dump::{
    AccountState, DumpBlock, read_dump,
    reth::{Account, EthBlock, RecoveredBlock},
};
use std::path::Path;

#[test]
fn mainnet_blocks_and_accounts_round_trip_through_reths_types() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet.gigagas");
    let (dump, _) = read_dump(&path).expect("the committed mainnet dump reads");
    assert_eq!(dump.block_count(), 42);
    for block in dump.blocks() {
        let reth = block.to_recovered_block();
        assert_eq!(
            reth.hash(),
            block.header.hash_slow(),
            "block {}",
            block.number()
        );
        let senders: Vec<_> = block.transactions.iter().map(|t| t.signer()).collect();
        assert_eq!(reth.senders(), senders.as_slice());
        // Reth recovers the senders itself (unchecked: Frontier's high-s signatures).
        let recovered =
            RecoveredBlock::<EthBlock>::try_recover_unchecked(reth.clone().into_block())
                .expect("every signature recovers");
        assert_eq!(
            recovered.senders(),
            senders.as_slice(),
            "block {}",
            block.number()
        );

        let back = DumpBlock::from_recovered_block(
            reth,
            block.receipts.clone(),
            block.access_list.clone(),
        );
        let expected = DumpBlock {
            // Ommers known only by hash are the dump's own record: reth's block has none.
            headerless_ommers: 0,
            ..block.clone()
        };
        assert_eq!(back, expected, "block {}", block.number());
    }
    let mut with_code = 0;
    for account in dump.segments.iter().flat_map(|s| &s.pre_state.accounts) {
        let Some(state) = account.state else { continue };
        let reth = Account::from(state);
        with_code += usize::from(reth.bytecode_hash.is_some());
        assert_eq!(AccountState::from(reth), state, "{}", account.address);
    }
    assert!(with_code > 0, "the mainnet pre-state holds contracts");
    for slot in dump
        .segments
        .iter()
        .flat_map(|s| &s.pre_state.storage)
        .take(1000)
    {
        let entry = slot.storage_entry();
        assert_eq!(
            alloy_primitives::U256::from_be_bytes(entry.key.0),
            slot.slot
        );
        assert_eq!(entry.value, slot.value);
    }
}
