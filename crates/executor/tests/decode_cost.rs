//! What reading a dump's blocks again costs a pass outside its timed window, on a dump given
//! by `GIGAGAS_DECODE_DUMP` (ignored by default: a measurement, not a check):
//! `GIGAGAS_DECODE_DUMP=/path/to.gigagas cargo test --release -p gigagas-executor --test
//! decode_cost -- --ignored --nocapture`.

use gigagas_executor::{Replay, ResidentLimits};
use std::time::Instant;

#[test]
#[ignore = "a measurement on a large dump named by GIGAGAS_DECODE_DUMP"]
fn reading_every_block_again() {
    let Ok(path) = std::env::var("GIGAGAS_DECODE_DUMP") else {
        eprintln!("GIGAGAS_DECODE_DUMP is not set: nothing measured");
        return;
    };
    gigagas_chain::install_kzg_verifier();
    let limits = ResidentLimits {
        bases: 0,
        blocks: 0,
    };
    let start = Instant::now();
    let (replay, loaded) = Replay::load(path.as_ref(), limits).unwrap();
    let load = start.elapsed();
    let n = replay.block_count();
    eprintln!(
        "{path}: {n} blocks, {} transactions, loaded in {:.2} s",
        loaded.summary.transactions,
        load.as_secs_f64()
    );
    for batch in [1, 50] {
        for round in 0..2 {
            let start = Instant::now();
            let mut first = 0;
            while first < n {
                let last = (first + batch).min(n);
                let blocks = replay.blocks(first..last).unwrap();
                drop(blocks);
                first = last;
            }
            let s = start.elapsed().as_secs_f64();
            eprintln!(
                "batch {batch}, round {round}: every block read again in {s:.2} s ({:.0} µs a block)",
                s * 1e6 / n as f64
            );
        }
    }
}
