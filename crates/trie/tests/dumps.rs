//! The committed synthetic dump with its witness (`dumps/mainnet-like-witness.gigagas`,
//! 100 generated blocks): its root-only witness (issue 45) gives every block's header
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
