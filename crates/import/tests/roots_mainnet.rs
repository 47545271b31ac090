//! A real 2025 mainnet block (21688509, Cancun) with the witness of a zk prover's input: the
//! root computed from the witness and the block's access list (both from importing the
//! snapshot folder: executing the block, reading its `witness.json`) equals the header's `stateRoot`; sequential,
//! parallel and split give the same root; a witness without one of its nodes gives the
//! one-line "root not computable" error or the right root, never another. gigagas-trie's
//! roots checked here, in the import crate (which depends on it), because the access list
//! and the witness come from importing the block.

use alloy_primitives::keccak256;
use gigagas_dump::{Dump, Witness};
use gigagas_trie::{RootError, RootRules, StateTrie, StorageTask};
use std::path::{Path, PathBuf};

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;

/// The block folder (`block.json`, `pre_state.json`, `block_hashes.json`, `witness.json`).
fn block_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../dumps/test-data/mainnet-2025/21688509")
}

/// Imports block folder `dir` (executing the block, so recording its access list, and
/// reading `witness.json` into the segment's witness): the dump.
fn import(dir: &Path) -> Dump {
    let import = gigagas_import::import_snapshots(dir, "mainnet-2025", |_| {}).unwrap();
    assert_eq!(import.failed(), 0, "{}", dir.display());
    import.dump.unwrap()
}

/// The witness the importer read from the folder's `witness.json`.
fn witness(dump: &Dump) -> Witness {
    let witness = dump.segments[0].witness.clone();
    witness.expect("the folder has a witness.json")
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
    let dump = import(dir);
    let block = &dump.segments[0].blocks[0];
    let bal = &block.access_list;
    let expected = block.header.state_root;

    let witness = witness(&dump);
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
    let dump = import(&block_dir());
    let block = &dump.segments[0].blocks[0];
    let witness = witness(&dump);
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
