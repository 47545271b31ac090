//! A replay that keeps no block bases (a dump too large for them: each pass builds a
//! batch's bases before it runs and drops them after) runs and verifies exactly like one
//! that keeps them all, at every thread count and batch size.

use gigagas_executor::{Parallel, Replay, RunConfig, Runner, SchedulerKind};
use std::path::Path;

fn dump(name: &str) -> gigagas_dump::Dump {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../dumps")
        .join(name);
    gigagas_dump::read_dump(&path)
        .expect("a shipped dump loads")
        .0
}

#[test]
fn bases_built_per_batch_give_the_outcomes_of_resident_bases() {
    for name in ["mainnet.gigagas", "mainnet-like.gigagas"] {
        let dump = dump(name);
        let resident = gigagas_executor::test_utils::prepare(dump.clone()).expect("dump prepares");
        assert!(
            resident.resident_bases().is_some(),
            "{name} keeps its bases"
        );
        let per_batch = Replay::with_resident_bases_limit(dump, 0).expect("dump prepares");
        assert!(per_batch.resident_bases().is_none());
        for (threads, batch) in [(1, 1), (1, 7), (2, 1), (2, 50)] {
            let config = RunConfig::new(
                std::num::NonZeroUsize::new(threads).unwrap(),
                batch,
                SchedulerKind::Ols,
            );
            let (_, want) = Parallel::new(&config).outputs(&resident).unwrap();
            let (_, got) = Parallel::new(&config).outputs(&per_batch).unwrap();
            if let Err(d) = per_batch.verify_all(&got) {
                panic!("{name}, {config}: {d}");
            }
            assert!(
                resident.outcomes(&want) == per_batch.outcomes(&got),
                "{name}, {config}: outcomes differ"
            );
            Parallel::new(&config)
                .run(&per_batch, true)
                .unwrap_or_else(|d| panic!("{name}, {config}: {d}"));
        }
    }
}
