//! Root-only witnesses of generated dumps: every profile's root-only witness
//! gives every block's header root; a generated block whose list also holds a zero-value
//! call to an address that does not exist (an entry with no change, absent before and
//! after) and whose accounts and slots are partly only read computes its root from the
//! root-only witness, though the witness holds no path of that address.

use alloy_eip7928::AccountChanges;
use alloy_hardforks::EthereumHardfork;
use alloy_primitives::{Address, keccak256};
use gigagas_dump::{Dump, PreAccount};
use gigagas_trie::{RootError, RootRules, StateTrie, root_only_dump, witness_roots, witness_sizes};
use gigagas_workload::{GeneratorConfig, Profile, generate_with_witness};

fn config(profile: Profile, blocks: u64) -> GeneratorConfig {
    GeneratorConfig {
        profile,
        blocks,
        gas_per_block: 3_000_000,
        seed: 45,
        fork: EthereumHardfork::Prague,
        users: 60,
    }
}

/// Every block's root from the dump's witness equals its header's.
fn roots_equal_the_headers(dump: &Dump) {
    let roots = witness_roots(dump).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(roots.len(), dump.block_count());
    for ((number, root), block) in roots.iter().zip(dump.blocks()) {
        assert_eq!(*root, block.header.state_root, "block {number}");
    }
}

#[test]
fn generated_root_only_witnesses_give_the_header_roots() {
    for profile in Profile::ALL {
        let mut dump = generate_with_witness(&config(profile, 3), |_, _| {})
            .unwrap_or_else(|e| panic!("{profile:?}: {e}"));
        roots_equal_the_headers(&dump);
        let sizes = witness_sizes(&dump).unwrap();
        let figures = root_only_dump(&mut dump).unwrap();
        dump.validate().unwrap();
        roots_equal_the_headers(&dump);
        eprintln!("{profile:?}: {figures}");
        assert!(figures.nodes_after <= figures.nodes_before, "{profile:?}");
        for b in &sizes.blocks {
            let (accessed, needed) = (b.accessed.unwrap(), b.root_only.unwrap());
            assert!(
                needed.nodes <= accessed.nodes,
                "{profile:?}: block {}",
                b.block
            );
        }
    }
}

#[test]
fn zero_value_call_to_an_absent_address_and_reads_need_no_node() {
    let mut dump = generate_with_witness(&config(Profile::MainnetLike, 3), |_, _| {}).unwrap();
    let witness = dump.segments[0].witness.clone().unwrap();
    // The generated blocks read accounts and slots they do not change.
    let lists = || dump.blocks().flat_map(|b| b.access_list.iter());
    let read_slots: usize = lists().map(|c| c.storage_reads.len()).sum();
    let unchanged = lists()
        .filter(|c| {
            c.nonce_changes.is_empty()
                && c.balance_changes.is_empty()
                && c.code_changes.is_empty()
                && c.storage_changes.is_empty()
        })
        .count();
    eprintln!("{read_slots} slots only read, {unchanged} accounts listed without a change");
    assert!(read_slots > 0 && unchanged > 0);

    // An address the witness has no path for, called with zero value in block 1: its list
    // names it with no change, the pre-state records it absent, and the root is as before.
    let mut probe = StateTrie::from_witness(&witness).unwrap();
    let absent = (0u64..)
        .map(|i| Address::from_word(keccak256(i.to_be_bytes())))
        .find(|a| matches!(probe.account(*a), Err(RootError::MissingNode { .. })))
        .expect("an address off the witness's paths");
    let segment = &mut dump.segments[0];
    segment.blocks[1]
        .access_list
        .push(AccountChanges::new(absent));
    segment.blocks[1].access_list.sort_by_key(|c| c.address);
    segment.pre_state.accounts.push(PreAccount {
        address: absent,
        state: None,
    });
    segment.pre_state.canonicalize();

    // Knowing nothing of the pre-state, a trie walks every listed account: block 1 fails.
    let mut trie = StateTrie::from_witness(&witness).unwrap();
    let rules = RootRules::SPURIOUS_DRAGON;
    let blocks = &dump.segments[0].blocks;
    trie.apply_block(&blocks[0].access_list, rules).unwrap();
    let e = trie.apply_block(&blocks[1].access_list, rules).unwrap_err();
    assert!(matches!(e, RootError::MissingNode { .. }), "{e}");

    // Knowing it, only changed values walk the trie: the roots follow, from the witness
    // and from its root-only part.
    roots_equal_the_headers(&dump);
    let figures = root_only_dump(&mut dump).unwrap();
    eprintln!("{figures}");
    roots_equal_the_headers(&dump);
}
