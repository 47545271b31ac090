//! `generate_with_witness`: every header carries the root of the generator's whole state
//! after its block, and the segment's witness alone, with each block's access list, gives
//! that root block after block (gigagas-trie's sparse trie). `generate` is unchanged: no
//! witness, every state root left the empty trie's.

use alloy_hardforks::EthereumHardfork;
use gigagas_dump::{Dump, decode_dump, encode_dump};
use gigagas_trie::{RootRules, StateTrie};
use gigagas_workload::{GeneratorConfig, Profile, generate, generate_with_witness};
use std::path::Path;

fn config(profile: Profile, blocks: u64) -> GeneratorConfig {
    GeneratorConfig {
        profile,
        blocks,
        gas_per_block: 3_000_000,
        seed: 9,
        fork: EthereumHardfork::Prague,
        users: 60,
    }
}

/// Every block's root from the witness alone equals its header's (the generator's full
/// trie), in order, each on the trie the previous block left.
fn roots_from_the_witness_match_the_headers(dump: &Dump) {
    let witness = dump.segments[0].witness.as_ref().expect("a witness");
    let mut trie = StateTrie::from_witness(witness).expect("the witness opens");
    for block in dump.blocks() {
        assert_ne!(
            block.header.state_root,
            alloy_trie::EMPTY_ROOT_HASH,
            "block {}",
            block.number()
        );
        let root = trie
            .apply_block(&block.access_list, RootRules::SPURIOUS_DRAGON)
            .unwrap_or_else(|e| panic!("block {}: {e}", block.number()));
        assert_eq!(root, block.header.state_root, "block {}", block.number());
    }
}

#[test]
fn generated_roots_follow_from_the_witness_for_every_profile() {
    for profile in Profile::ALL {
        let dump = generate_with_witness(&config(profile, 3), |_, _| {})
            .unwrap_or_else(|e| panic!("{profile:?}: {e}"));
        dump.validate().unwrap();
        assert_eq!(dump.meta.provenance["witness"], "on");
        roots_from_the_witness_match_the_headers(&dump);
        // The witness survives the file (version 3).
        let bytes = encode_dump(&dump);
        assert_eq!(&bytes[8..12], &3u32.to_le_bytes());
        let (back, _) = decode_dump(&bytes, Path::new("w.gigagas")).unwrap();
        assert_eq!(back, dump);
    }
}

#[test]
fn without_a_witness_the_dump_is_as_before() {
    let plain = generate(&config(Profile::MainnetLike, 2), |_, _| {}).unwrap();
    assert!(plain.segments[0].witness.is_none());
    // The header's default: the empty trie's root, not the state's.
    assert!(
        plain
            .blocks()
            .all(|b| b.header.state_root == alloy_trie::EMPTY_ROOT_HASH)
    );
    assert!(!plain.meta.provenance.contains_key("witness"));
    assert_eq!(&encode_dump(&plain)[8..12], &2u32.to_le_bytes());
    // Same transactions and access lists with the witness: only the roots (and so the
    // hashes) differ.
    let with = generate_with_witness(&config(Profile::MainnetLike, 2), |_, _| {}).unwrap();
    for (a, b) in plain.blocks().zip(with.blocks()) {
        assert_eq!(a.transactions.len(), b.transactions.len());
        assert_eq!(a.header.gas_used, b.header.gas_used);
    }
}
