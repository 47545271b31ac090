//! A real 2025 mainnet block (21688509, Cancun) with the witness of a zk prover's input: the
//! root computed from the witness and the block's access list (recorded by importing the
//! snapshot folder, i.e. executing the block) equals the header's `stateRoot`; sequential,
//! parallel and split give the same root; a witness without one of its nodes gives the
//! one-line "root not computable" error or the right root, never another. gigagas-trie's
//! roots checked here, in the import crate (which depends on it), because the access list
//! comes from importing the block.

use alloy_primitives::{B256, Bytes, keccak256};
use alloy_rlp::Decodable;
use alloy_trie::{TrieAccount, nodes::TrieNode};
use gigagas_dump::Witness;
use gigagas_trie::{RootError, RootRules, StateTrie, StorageTask};
use std::{
    collections::HashSet,
    path::{Path, PathBuf},
};

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;

/// The block folder (`block.json`, `pre_state.json`, `block_hashes.json`, `witness.json`).
fn block_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../dumps/test-data/mainnet-2025/21688509")
}

/// `witness.json`'s `state` (hex RLP trie nodes) in block folder `dir`.
fn witness_nodes(dir: &Path) -> Vec<Bytes> {
    let text = std::fs::read_to_string(dir.join("witness.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["state"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().parse::<Bytes>().unwrap())
        .collect()
}

/// The hashes a node refers to: its children by hash (embedded children searched too) or,
/// for a leaf holding an account, that account's storage root.
fn references(node: &TrieNode, out: &mut HashSet<B256>) {
    let mut child = |r: &alloy_trie::nodes::RlpNode| match r.as_hash() {
        Some(h) => {
            out.insert(h);
        }
        None => references(&TrieNode::decode(&mut r.as_slice()).unwrap(), out),
    };
    match node {
        TrieNode::Branch(b) => b.stack.iter().for_each(&mut child),
        TrieNode::Extension(e) => child(&e.child),
        TrieNode::Leaf(l) => {
            if let Ok(account) = TrieAccount::decode(&mut l.value.as_slice()) {
                out.insert(account.storage_root);
            }
        }
        TrieNode::EmptyRoot => {}
    }
}

/// The parent state root: the one node no other node refers to (storage tries' roots are
/// referred to by their accounts' leaves).
fn parent_root(nodes: &[Bytes]) -> B256 {
    let mut referenced = HashSet::new();
    for n in nodes {
        references(&TrieNode::decode(&mut n.as_ref()).unwrap(), &mut referenced);
    }
    let roots: Vec<B256> = nodes
        .iter()
        .map(keccak256)
        .filter(|h| !referenced.contains(h))
        .collect();
    assert_eq!(roots.len(), 1, "one node is no other's child: {roots:?}");
    roots[0]
}

#[test]
fn mainnet_21688509_root_from_its_witness_equals_the_header() {
    assert_eq!(check_block(&block_dir()), 21_688_509);
}

/// With `GIGAGAS_CORPORA` set: every block folder of its `mainnet-2025/` with a
/// `witness.json`.
#[test]
fn every_mainnet_2025_block_with_a_witness() {
    if !corpora::full() {
        corpora::skipped(
            "every_mainnet_2025_block_with_a_witness",
            "mainnet-2025 (full)",
        );
        return;
    }
    let root = corpora::path("mainnet-2025");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|d| d.join("witness.json").is_file())
        .collect();
    dirs.sort();
    assert!(
        !dirs.is_empty(),
        "{}: no block folder with a witness",
        root.display()
    );
    for dir in &dirs {
        let number = check_block(dir);
        eprintln!("{number}: the root from the witness equals the header's");
    }
}

/// Imports block folder `dir` (recording its access list), computes its root from its
/// witness sequentially, in parallel and split, checks each against the header; the
/// block's number.
fn check_block(dir: &Path) -> u64 {
    let import = gigagas_import::import_snapshots(dir, "mainnet-2025", |_| {}).unwrap();
    assert_eq!(import.failed(), 0, "{}", dir.display());
    let dump = import.dump.unwrap();
    let block = &dump.segments[0].blocks[0];
    let bal = &block.access_list;
    let expected = block.header.state_root;

    let nodes = witness_nodes(dir);
    let witness = Witness::new(parent_root(&nodes), nodes);
    let rules = RootRules::SPURIOUS_DRAGON;

    let mut trie = StateTrie::from_witness(&witness).unwrap();
    assert_eq!(trie.root(), witness.parent_state_root);
    assert_eq!(trie.apply_block(bal, rules).unwrap(), expected);

    let mut trie = StateTrie::from_witness(&witness).unwrap();
    assert_eq!(trie.apply_block_parallel(bal, rules).unwrap(), expected);

    let mut trie = StateTrie::from_witness(&witness).unwrap();
    let mut job = trie.prepare_block(bal, rules).unwrap();
    let mut tasks = job.storage_tasks();
    assert!(!tasks.is_empty(), "{}: no storage task", dir.display());
    tasks.sort_by_key(|t| std::cmp::Reverse(t.writes()));
    let results = tasks.into_iter().rev().map(StorageTask::run).collect();
    assert_eq!(job.finish(&mut trie, results).unwrap(), expected);
    block.header.number
}

#[test]
fn mainnet_21688509_witness_without_a_node_never_gives_a_wrong_root() {
    let import = gigagas_import::import_snapshots(&block_dir(), "mainnet-2025", |_| {}).unwrap();
    let dump = import.dump.unwrap();
    let block = &dump.segments[0].blocks[0];
    let nodes = witness_nodes(&block_dir());
    let witness = Witness::new(parent_root(&nodes), nodes);
    let rules = RootRules::SPURIOUS_DRAGON;

    let mut missing = 0;
    let mut computed = 0;
    for n in 0..witness.nodes.len() {
        let mut cut = witness.clone();
        let removed = cut.nodes.remove(n);
        let root = StateTrie::from_witness(&cut)
            .and_then(|mut t| t.apply_block(&block.access_list, rules));
        match root {
            Ok(root) => {
                assert_eq!(root, block.header.state_root, "node {n} removed");
                computed += 1;
            }
            Err(e @ RootError::MissingNode { .. }) => {
                let text = e.to_string();
                assert!(
                    text.starts_with("root not computable: missing node under 0x"),
                    "{text}"
                );
                assert!(!text.contains('\n'), "{text}");
                missing += 1;
            }
            Err(RootError::MissingRoot { root }) => {
                assert_eq!(keccak256(&removed), root);
            }
            Err(e) => panic!("node {n} removed: {e}"),
        }
    }
    eprintln!(
        "{} nodes: {missing} needed (MissingNode), {computed} not needed",
        witness.nodes.len()
    );
    assert!(missing > 100, "{missing}");
}
