//! Padded dumps: `generate_with_padded_witness` pads the account trie to
//! the depth of a larger state, and chosen contracts' storage tries to that of larger
//! contracts. Every block's root from the witness (full and root-only) equals its header's;
//! every touched account's path in the witness runs through ⌊log16 N⌋ full branches from
//! the root, and so does every touched slot's of a padded contract (⌊log16 SLOTS⌋); the
//! transactions are the unpadded dump's.

use alloy_hardforks::EthereumHardfork;
use alloy_primitives::{B256, Bytes, keccak256};
use alloy_rlp::Decodable;
use alloy_trie::{Nibbles, TrieAccount, nodes::TrieNode};
use gigagas_dump::{Dump, encode_dump};
use gigagas_trie::{MAINNET_ACCOUNTS, root_only_dump, witness_roots, witness_sizes};
use gigagas_workload::{
    ConfigError, GenerateError, GeneratorConfig, Profile, TrieSizes, WorkloadContract,
    generate_with_padded_witness, generate_with_witness,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};

fn config(profile: Profile, blocks: u64) -> GeneratorConfig {
    GeneratorConfig {
        profile,
        blocks,
        gas_per_block: 3_000_000,
        seed: 8,
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

/// The nodes on `key`'s path from `root` in `nodes` (by hash): for each, its number of
/// children when it is a branch (0 otherwise), until the path leaves the witness or ends.
fn path_shape(nodes: &HashMap<B256, Bytes>, root: B256, key: Nibbles) -> Vec<usize> {
    path(nodes, root, key).0
}

/// [`path_shape`], and the value of `key`'s leaf when the path ends at it.
fn path(nodes: &HashMap<B256, Bytes>, root: B256, key: Nibbles) -> (Vec<usize>, Option<Vec<u8>>) {
    let mut shape = Vec::new();
    let mut hash = root;
    let mut depth = 0;
    while let Some(rlp) = nodes.get(&hash) {
        match TrieNode::decode(&mut &rlp[..]).unwrap() {
            TrieNode::Branch(b) => {
                shape.push(b.state_mask.count_ones() as usize);
                let nibble = key.get_unchecked(depth);
                if !b.state_mask.is_bit_set(nibble) {
                    break;
                }
                let below = (0..nibble).filter(|&i| b.state_mask.is_bit_set(i)).count();
                let Some(child) = b.stack[below].as_hash() else {
                    break;
                };
                hash = child;
                depth += 1;
            }
            TrieNode::Extension(e) => {
                shape.push(0);
                let Some(child) = e.child.as_hash() else {
                    break;
                };
                depth += e.key.len();
                hash = child;
            }
            TrieNode::Leaf(leaf) => {
                shape.push(0);
                let value = (key.slice(depth..) == leaf.key).then_some(leaf.value);
                return (shape, value);
            }
            _ => {
                shape.push(0);
                break;
            }
        }
    }
    (shape, None)
}

#[test]
fn padded_dumps_verify_and_their_paths_run_through_full_branches() {
    for (profile, state_size, levels) in [
        (Profile::MainnetLike, MAINNET_ACCOUNTS, 7),
        (Profile::Erc20, 1 << 20, 5),
        (Profile::Transfers, 5_000, 3),
    ] {
        let dump = generate_with_padded_witness(
            &config(profile, 4),
            &TrieSizes::accounts(state_size),
            |_, _| {},
        )
        .unwrap_or_else(|e| panic!("{profile:?}: {e}"));
        dump.validate().unwrap();
        assert_eq!(
            dump.meta.provenance["state-size"],
            state_size.to_string(),
            "{profile:?}"
        );
        roots_equal_the_headers(&dump);

        // The same transactions as unpadded, other roots.
        let plain = generate_with_witness(&config(profile, 4), |_, _| {}).unwrap();
        for (a, b) in plain.blocks().zip(dump.blocks()) {
            assert_eq!(a.transactions.len(), b.transactions.len(), "{profile:?}");
            assert_eq!(a.header.gas_used, b.header.gas_used, "{profile:?}");
            assert_ne!(a.header.state_root, b.header.state_root, "{profile:?}");
        }

        // Every touched account's path starts with `levels` full branches.
        let witness = dump.segments[0].witness.as_ref().unwrap();
        let nodes: HashMap<B256, Bytes> = witness
            .nodes
            .iter()
            .map(|n| (keccak256(n), n.clone()))
            .collect();
        let mut depths = Vec::new();
        for changes in dump.blocks().flat_map(|b| b.access_list.iter()) {
            let key = Nibbles::unpack(keccak256(changes.address));
            let shape = path_shape(&nodes, witness.parent_state_root, key);
            assert!(
                shape.len() > levels && shape[..levels].iter().all(|&c| c == 16),
                "{profile:?}: {} has the path {shape:?}",
                changes.address
            );
            depths.push(shape.len());
        }
        let deepest = depths.iter().max().unwrap();
        eprintln!(
            "{profile:?} at {state_size} accounts: {} touched paths, {} to {deepest} nodes; \
             witness {} nodes, {} bytes (the unpadded {} nodes, {} bytes)",
            depths.len(),
            depths.iter().min().unwrap(),
            witness.nodes.len(),
            witness.nodes.iter().map(|n| n.len()).sum::<usize>(),
            plain.segments[0].witness.as_ref().unwrap().nodes.len(),
            plain.segments[0]
                .witness
                .as_ref()
                .unwrap()
                .nodes
                .iter()
                .map(|n| n.len())
                .sum::<usize>(),
        );

        // The root-only witness gives the same roots.
        let mut pruned = dump.clone();
        let sizes = witness_sizes(&pruned).unwrap();
        assert_eq!(sizes.blocks.len(), 4);
        let figures = root_only_dump(&mut pruned).unwrap();
        assert!(figures.nodes_after <= figures.nodes_before);
        roots_equal_the_headers(&pruned);

        // Deterministic.
        let again = generate_with_padded_witness(
            &config(profile, 4),
            &TrieSizes::accounts(state_size),
            |_, _| {},
        )
        .unwrap();
        assert_eq!(encode_dump(&again), encode_dump(&dump), "{profile:?}");
    }
}

#[test]
fn a_state_size_under_16_accounts_is_refused() {
    let err = generate_with_padded_witness(
        &config(Profile::Transfers, 1),
        &TrieSizes::accounts(15),
        |_, _| {},
    )
    .unwrap_err();
    assert!(
        matches!(err, GenerateError::Config(ConfigError::StateSize(_))),
        "{err}"
    );
    assert!(err.to_string().contains("16 accounts"), "{err}");
}

/// Storage tries padded as asked: every touched slot's path of a padded contract starts
/// with ⌊log16 SLOTS⌋ full branches, an unpadded contract's does not; the roots verify,
/// root-only too; the transactions are the unpadded dump's.
#[test]
fn storage_padded_dumps_verify_and_their_slot_paths_are_as_deep_as_asked() {
    let erc20 = TrieSizes::default().with_storage(&[WorkloadContract::TokenA], 4_096);
    for (profile, sizes, levels, padded) in [
        // Transfers of both tokens, token A's trie alone padded (3 levels).
        (Profile::Erc20, erc20, 3, 1),
        // Both tokens and the NFT at mainnet's largest size (6 levels), and the accounts.
        (
            Profile::MainnetLike,
            TrieSizes {
                accounts: Some(MAINNET_ACCOUNTS),
                ..TrieSizes::mainnet_storage()
            },
            6,
            3,
        ),
    ] {
        let dump = generate_with_padded_witness(&config(profile, 3), &sizes, |_, _| {})
            .unwrap_or_else(|e| panic!("{profile:?}: {e}"));
        dump.validate().unwrap();
        assert_eq!(
            dump.meta.provenance["storage-size"],
            sizes.storage_provenance(),
            "{profile:?}"
        );
        roots_equal_the_headers(&dump);
        let plain = generate_with_witness(&config(profile, 3), |_, _| {}).unwrap();
        for (a, b) in plain.blocks().zip(dump.blocks()) {
            assert_eq!(a.transactions, b.transactions, "{profile:?}");
            assert_ne!(a.header.state_root, b.header.state_root, "{profile:?}");
        }

        // Each contract's touched slots, and their paths in its storage trie.
        let witness = dump.segments[0].witness.as_ref().unwrap();
        let nodes: HashMap<B256, Bytes> = witness
            .nodes
            .iter()
            .map(|n| (keccak256(n), n.clone()))
            .collect();
        let mut slots: BTreeMap<_, BTreeSet<B256>> = BTreeMap::new();
        for changes in dump.blocks().flat_map(|b| b.access_list.iter()) {
            let touched = changes
                .storage_changes
                .iter()
                .map(|s| s.slot)
                .chain(changes.storage_reads.iter().copied());
            slots
                .entry(changes.address)
                .or_default()
                .extend(touched.map(B256::from));
        }
        let mut deep = Vec::new();
        for (address, slots) in slots.iter().filter(|(_, s)| !s.is_empty()) {
            let key = Nibbles::unpack(keccak256(address));
            let (_, leaf) = path(&nodes, witness.parent_state_root, key);
            let Some(leaf) = leaf else {
                continue; // created by the blocks: no storage at the parent
            };
            let account = TrieAccount::decode(&mut &leaf[..]).unwrap();
            let shapes: Vec<Vec<usize>> = slots
                .iter()
                .map(|slot| {
                    path_shape(
                        &nodes,
                        account.storage_root,
                        Nibbles::unpack(keccak256(slot)),
                    )
                })
                .collect();
            let full = |shape: &Vec<usize>| {
                shape.len() > levels && shape[..levels].iter().all(|&c| c == 16)
            };
            if shapes.iter().all(full) {
                deep.push(*address);
                let longest = shapes.iter().map(Vec::len).max().unwrap();
                eprintln!(
                    "{profile:?}: {address}: {} touched slots, paths of {} to {longest} nodes",
                    shapes.len(),
                    shapes.iter().map(Vec::len).min().unwrap(),
                );
            } else {
                assert!(
                    !shapes.iter().any(full),
                    "{profile:?}: {address}: {shapes:?}"
                );
            }
        }
        assert_eq!(deep.len(), padded, "{profile:?}: {deep:?}");
        eprintln!(
            "{profile:?}: witness {} nodes, {} bytes (unpadded {} nodes)",
            witness.nodes.len(),
            witness.nodes.iter().map(|n| n.len()).sum::<usize>(),
            plain.segments[0].witness.as_ref().unwrap().nodes.len(),
        );

        // The root-only witness gives the same roots.
        let mut pruned = dump.clone();
        root_only_dump(&mut pruned).unwrap();
        roots_equal_the_headers(&pruned);
    }
}

#[test]
fn a_storage_size_under_16_slots_is_refused() {
    let sizes = TrieSizes::default().with_storage(&[WorkloadContract::Nft], 15);
    let err = generate_with_padded_witness(&config(Profile::Transfers, 1), &sizes, |_, _| {})
        .unwrap_err();
    assert!(
        matches!(
            err,
            GenerateError::Config(ConfigError::StorageSize {
                contract: WorkloadContract::Nft,
                ..
            })
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("storage size of nft") && err.to_string().contains("16 slots"),
        "{err}"
    );
}
