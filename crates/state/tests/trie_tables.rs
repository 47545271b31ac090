//! The trie tables of a padded store: beside the witness's nodes, as many of the padded tries'
//! virtual nodes as a client's tries hold for the padding's accounts and slots, each the true
//! node at its path, in a store of the size asked for.

use alloy_hardforks::EthereumHardfork;
use alloy_primitives::B256;
use gigagas_dump::{Dump, DumpFileInfo};
use gigagas_state::{BuildOptions, open_store};
use gigagas_trie::{KnownNodes, RandomTrie, nodes_by_path, storage_roots};
use gigagas_workload::{GeneratorConfig, Profile, TrieSizes, WorkloadContract};
use std::path::Path;

/// A scratch folder on the disk the tests build in.
fn scratch() -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(root).unwrap();
    tempfile::tempdir_in(root).unwrap()
}

/// A small generated dump whose account trie is padded to 2^20 accounts (5 levels) and whose
/// large contracts' storage tries to 2^20 slots each.
fn padded(dir: &Path) -> (Dump, DumpFileInfo) {
    let config = GeneratorConfig {
        profile: Profile::MainnetLike,
        blocks: 2,
        gas_per_block: 3_000_000,
        seed: 28,
        fork: EthereumHardfork::Prague,
        users: 50,
    };
    let sizes = TrieSizes::accounts(1 << 20).with_storage(&WorkloadContract::LARGE, 1 << 20);
    let dump = gigagas_workload::generate_with_padded_witness(&config, &sizes, |_, _| {})
        .expect("dump generates");
    let info = gigagas_dump::write_dump(&dump, &dir.join("padded.gigagas")).unwrap();
    (dump, info)
}

#[test]
fn a_padded_store_holds_a_clients_trie_nodes_each_at_its_true_path() {
    let dir = scratch();
    let (dump, info) = padded(dir.path());
    let segment = &dump.segments[0];
    let witness = segment.witness.as_ref().expect("a witness");
    let by_path = nodes_by_path(witness, segment.blocks.iter().map(|b| &b.access_list));
    let known = KnownNodes::new(witness);
    let storage: Vec<(B256, B256)> = storage_roots(&by_path)
        .into_iter()
        .filter(|(_, root)| known.padded_levels(*root) >= 2)
        .collect();
    assert_eq!(known.padded_levels(witness.parent_state_root), 5);
    assert!(!storage.is_empty(), "a padded storage trie is touched");

    let build = |name: &str, pad_to| {
        let out = dir.path().join(name);
        gigagas_state::build_store(&dump, &info, &out, &BuildOptions { pad_to }, &mut |_| {})
            .expect("store builds")
    };
    let bare = build("bare", None);
    assert_eq!(bare.meta.pad_trie_nodes, 0);
    assert_eq!(bare.meta.trie_nodes, by_path.len() as u64);

    let pad_to = 40 << 20;
    let summary = build("padded", Some(pad_to));
    let meta = summary.meta;
    // `--pad-to` is the whole store's size, the nodes included.
    assert!(summary.file_bytes >= pad_to, "{summary:?}");
    assert!(summary.used_bytes < pad_to + pad_to / 8, "{summary:?}");
    assert_eq!(meta.trie_nodes, bare.meta.trie_nodes);
    // The formula's count for the padding's accounts in the account trie and its slots shared
    // out over the padded storage tries (each depth's count rounded), less the paths where the
    // witness holds the node and those inside a real subtrie the witness does not open (the
    // accounts no block touches: under 1 %).
    let shares = storage.len() as u64;
    let stated = RandomTrie::of(meta.pad_accounts).nodes()
        + shares as f64 * RandomTrie::of(meta.pad_slots / shares).nodes();
    let stored = meta.pad_trie_nodes as f64;
    let rounding = 6.0 * (1 + shares) as f64;
    assert!(
        stored <= stated + rounding && stored >= 0.99 * stated - rounding - meta.trie_nodes as f64,
        "{stored} virtual nodes stored, {stated} stated: {meta:?}"
    );
    assert!(stored > 2.0 * meta.trie_nodes as f64, "{meta:?}");
    let table = summary
        .tables
        .iter()
        .find(|t| t.name == "TrieNodes")
        .unwrap();
    assert_eq!(table.entries, meta.trie_nodes + meta.pad_trie_nodes);

    // Every witness node reads back as it was; every node at a sampled path of a padded trie
    // is the one the witness proves there, or none.
    let store = open_store(&summary.path, info.checksum).unwrap();
    let mut reader = store.reader().unwrap();
    for n in &by_path {
        let path = n.path.to_vec();
        assert_eq!(
            reader.trie_node(0, n.owner.as_ref(), &path).unwrap(),
            Some(n.rlp.clone())
        );
    }
    let tries = std::iter::once((None, witness.parent_state_root))
        .chain(storage.iter().map(|(owner, root)| (Some(*owner), *root)));
    let mut found = 0;
    for (t, (owner, root)) in tries.enumerate() {
        for i in 0..4_000u64 {
            let depth = (i % 6) as usize;
            let path: Vec<u8> = (0..depth)
                .map(|d| ((i * 2_654_435_761 + t as u64) >> (4 * d) & 15) as u8)
                .collect();
            if let Some(node) = reader.trie_node(0, owner.as_ref(), &path).unwrap() {
                assert_eq!(
                    Some(&node),
                    known.node_at(root, &path),
                    "{owner:?} {path:?}"
                );
                found += 1;
            }
        }
    }
    assert!(found > 1_000, "{found} sampled paths hold a node");
}
