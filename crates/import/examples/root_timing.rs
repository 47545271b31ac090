//! Times gigagas-trie's root of mainnet block 21688509 from its witness (`cargo run
//! --release -p gigagas-import --example root_timing`): opening the witness, then the
//! block's root on the opened witness, sequentially and with the storage tasks on rayon's
//! pool, each the median of 101 runs. It lives in the import crate, which depends on the
//! trie crate, because the block's access list comes from importing (executing) it.

use alloy_primitives::{B256, Bytes, keccak256};
use alloy_rlp::Decodable;
use alloy_trie::{TrieAccount, nodes::TrieNode};
use gigagas_dump::Witness;
use gigagas_trie::{RootRules, StateTrie};
use std::{collections::HashSet, path::PathBuf, time::Instant};

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../dumps/test-data/mainnet-2025/21688509");
    let import = gigagas_import::import_snapshots(&dir, "mainnet-2025", |_| {}).unwrap();
    let dump = import.dump.unwrap();
    let block = &dump.segments[0].blocks[0];
    let text = std::fs::read_to_string(dir.join("witness.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let nodes: Vec<Bytes> = json["state"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().parse().unwrap())
        .collect();
    // The root: the one node no other node (nor an account leaf) refers to.
    let mut referenced = HashSet::new();
    for n in &nodes {
        refs(&TrieNode::decode(&mut n.as_ref()).unwrap(), &mut referenced);
    }
    let root = nodes
        .iter()
        .map(keccak256)
        .find(|h| !referenced.contains(h))
        .unwrap();
    let witness = Witness::new(root, nodes);
    let rules = RootRules::SPURIOUS_DRAGON;
    let bal = &block.access_list;

    let mut job = StateTrie::from_witness(&witness)
        .unwrap()
        .prepare_block(bal, rules)
        .unwrap();
    let tasks = job.storage_tasks();
    let writes: usize = tasks.iter().map(|t| t.writes()).sum();
    println!(
        "block {}: {} gas, {} accounts, {} storage tasks, {} slot writes, {} witness nodes ({} bytes)",
        block.header.number,
        block.header.gas_used,
        job.accounts(),
        tasks.len(),
        writes,
        witness.nodes.len(),
        witness.node_bytes()
    );

    // Each sample opens the witness untimed, then times `f` on it.
    let median = |f: &dyn Fn(&mut StateTrie) -> B256| {
        let mut t: Vec<f64> = (0..101)
            .map(|_| {
                let mut trie = StateTrie::from_witness(&witness).unwrap();
                let s = Instant::now();
                assert_eq!(f(&mut trie), block.header.state_root);
                s.elapsed().as_secs_f64()
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[50]
    };
    let mut opens: Vec<f64> = (0..101)
        .map(|_| {
            let s = Instant::now();
            std::hint::black_box(StateTrie::from_witness(&witness).unwrap());
            s.elapsed().as_secs_f64()
        })
        .collect();
    opens.sort_by(f64::total_cmp);
    let seq = median(&|t| t.apply_block(bal, rules).unwrap());
    let par = median(&|t| t.apply_block_parallel(bal, rules).unwrap());
    let mgas = |s: f64| block.header.gas_used as f64 / s / 1e6;
    println!(
        "open the witness (hash every node) {:.3} ms; the block's root: sequential {:.3} ms ({:.0} Mgas/s), storage tasks on rayon ({} threads) {:.3} ms ({:.0} Mgas/s)",
        opens[50] * 1e3,
        seq * 1e3,
        mgas(seq),
        rayon::current_num_threads(),
        par * 1e3,
        mgas(par)
    );
}

fn refs(node: &TrieNode, out: &mut HashSet<B256>) {
    let mut child = |r: &alloy_trie::nodes::RlpNode| match r.as_hash() {
        Some(h) => {
            out.insert(h);
        }
        None => refs(&TrieNode::decode(&mut r.as_slice()).unwrap(), out),
    };
    match node {
        TrieNode::Branch(b) => b.stack.iter().for_each(&mut child),
        TrieNode::Extension(e) => child(&e.child),
        TrieNode::Leaf(l) => {
            if let Ok(a) = TrieAccount::decode(&mut l.value.as_slice()) {
                out.insert(a.storage_root);
            }
        }
        TrieNode::EmptyRoot => {}
    }
}
