//! Times gigagas-trie's root of mainnet block 21688509 from its witness (`cargo run
//! --release -p gigagas-import --example root_timing`): opening the witness, then the
//! block's root on the opened witness, sequentially and with the storage tasks on rayon's
//! pool, each the median of 101 runs. It lives in the import crate, which depends on the
//! trie crate, because the block's access list and witness come from importing its
//! snapshot folder.

use alloy_primitives::B256;
use gigagas_trie::{RootRules, StateTrie};
use std::{path::PathBuf, time::Instant};

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../dumps/test-data/mainnet-2025/21688509");
    let import = gigagas_import::import_snapshots(&dir, "mainnet-2025", |_| {}).unwrap();
    let dump = import.dump.unwrap();
    let block = &dump.segments[0].blocks[0];
    let witness = dump.segments[0]
        .witness
        .clone()
        .expect("witness.json imported");
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
