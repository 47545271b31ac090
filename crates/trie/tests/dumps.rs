//! The committed synthetic dump with its witness (`dumps/mainnet-like-witness.gigagas`,
//! 100 generated blocks): its root-only witness gives every block's header
//! root, as the full witness does, with fewer nodes; per block, the root-only witness is
//! smaller than the producers' (every accessed path) and the same whichever of the two
//! the dump carries.

use gigagas_dump::{Dump, read_dump};
use gigagas_trie::{root_only_dump, witness_roots, witness_sizes};
use std::path::Path;

fn committed() -> Dump {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet-like-witness.gigagas");
    read_dump(&path).expect("the committed dump reads").0
}

/// Every block's root from the dump's witness equals its header's.
fn roots_equal_the_headers(dump: &Dump) {
    let roots = witness_roots(dump).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(roots.len(), dump.block_count());
    for ((number, root), block) in roots.iter().zip(dump.blocks()) {
        assert_eq!(*number, block.number());
        assert_eq!(*root, block.header.state_root, "block {number}");
    }
}

#[test]
fn committed_witness_dump_root_only_gives_the_same_roots() {
    let dump = committed();
    roots_equal_the_headers(&dump);
    let mut pruned = dump.clone();
    let figures = root_only_dump(&mut pruned).unwrap();
    pruned.validate().unwrap();
    eprintln!("mainnet-like-witness: {figures}");
    assert_eq!(figures.segments, 1);
    assert!(figures.nodes_after < figures.nodes_before, "{figures}");
    roots_equal_the_headers(&pruned);

    let sizes = witness_sizes(&dump).unwrap();
    let pruned_sizes = witness_sizes(&pruned).unwrap();
    eprint!("{sizes}");
    assert_eq!(sizes.blocks.len(), dump.block_count());
    for (full, root_only) in sizes.blocks.iter().zip(&pruned_sizes.blocks) {
        let accessed = full
            .accessed
            .expect("the producers' witness has every path");
        let needed = full.root_only.expect("every root is computable");
        assert!(needed.bytes <= accessed.bytes, "block {}", full.block);
        assert_eq!(root_only.root_only, Some(needed), "block {}", full.block);
    }
}

/// `gigagas inspect` streams the file: the per-design list sizes and the
/// witness sizes it computes block by block, as the blocks go past, are those of the
/// decoded dump.
#[test]
fn streaming_inspection_gives_the_decoded_dump_s_figures() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet-like-witness.gigagas");
    let dump = committed();
    let mut sizer = gigagas_trie::WitnessSizer::default();
    let mut seen = Vec::new();
    let inspection = gigagas_dump::inspect_dump_with(&path, |b| {
        seen.push((b.segment_index, b.block.number()));
        sizer.block(b.meta, b.segment_index, b.segment, b.block)
    })
    .unwrap();
    let want: Vec<_> = dump.blocks().map(|b| (0, b.number())).collect();
    assert_eq!(seen, want, "every block, once, in order");
    assert_eq!(sizer.finish().unwrap(), witness_sizes(&dump).unwrap());
    assert_eq!(
        inspection.designs.unwrap(),
        gigagas_dump::design_sizes(&dump).unwrap()
    );
    assert_eq!(inspection.summary.blocks, dump.block_count());
}

/// Every block's root from the dump's witness, its tries split into units (small units, so
/// that its blocks are cut; each unit run in turn), equals its header's.
#[test]
fn committed_witness_dump_split_into_units_gives_the_header_roots() {
    use gigagas_trie::{AccountTask, PreValues, RootRules, SplitRule, StateTrie, StorageTask};
    let dump = committed();
    for rule in [
        SplitRule {
            depth: 2,
            min_leaves: 4,
        },
        SplitRule {
            depth: 1,
            min_leaves: 1,
        },
    ] {
        let mut split_blocks = 0;
        for segment in &dump.segments {
            let witness = segment.witness.as_ref().expect("the dump has a witness");
            let mut trie = StateTrie::from_witness(witness)
                .unwrap()
                .with_pre_values(PreValues::of_pre_state(&segment.pre_state))
                .with_split(rule);
            for block in &segment.blocks {
                let mut job = trie
                    .prepare_block(&block.access_list, RootRules::SPURIOUS_DRAGON)
                    .unwrap();
                let results = job.storage_tasks().into_iter().map(StorageTask::run);
                let tasks = job.account_tasks(&mut trie, results.collect()).unwrap();
                split_blocks += usize::from(tasks.len() > 1);
                let parts = tasks.into_iter().map(AccountTask::run).collect();
                let root = job.finish_accounts(&mut trie, parts).unwrap();
                assert_eq!(root, block.header.state_root, "block {}", block.number());
            }
        }
        assert!(
            split_blocks > dump.block_count() / 2,
            "{rule:?}: {split_blocks}"
        );
    }
}
