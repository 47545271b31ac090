//! Root-only witnesses of imported dumps: for every committed blockchain-test
//! fixture with a witness and the 2025 mainnet block with a zk prover's witness
//! (`mainnet-2025`, `../shared/mainnet-2025` with `GIGAGAS_CORPORA` set), the root-only
//! witness gives every block's header root, as the full one does; on a few small fixtures
//! and the mainnet block, removing any one of its nodes makes a root "not computable". In
//! the import crate because the dumps come from the importer (gigagas-trie has no
//! dev-dependency on it).

use gigagas_dump::Dump;
use gigagas_import::{BlockchainTest, FixtureFile, fixture_files, import_test};
use gigagas_trie::{root_only_dump, witness_roots, witness_sizes};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;

/// Whether every block's root from the dump's witness equals its header's; the first
/// difference otherwise.
fn roots_match(dump: &Dump) -> Result<usize, String> {
    let roots = witness_roots(dump).map_err(|e| e.to_string())?;
    for ((number, root), block) in roots.iter().zip(dump.blocks()) {
        if *root != block.header.state_root {
            return Err(format!(
                "block {number}: root {root}, header {}",
                block.header.state_root
            ));
        }
    }
    Ok(roots.len())
}

/// Removing each node of the dump's (one) witness in turn: every root is then "not
/// computable", none wrong.
fn every_node_needed(name: &str, dump: &Dump) -> usize {
    let witness = dump.segments[0].witness.as_ref().expect("a witness");
    for n in 0..witness.nodes.len() {
        let mut cut = dump.clone();
        cut.segments[0].witness.as_mut().unwrap().nodes.remove(n);
        match witness_roots(&cut) {
            Ok(_) => panic!("{name}: node {n} removed, yet every root computed"),
            Err(e) => {
                let text = std::error::Error::source(&e).map(ToString::to_string);
                let text = text.unwrap_or_default();
                assert!(text.starts_with("root not computable: "), "{name}: {e}");
            }
        }
    }
    witness.nodes.len()
}

#[derive(Default)]
struct Tally {
    tests: usize,
    blocks: usize,
    nodes: usize,
    root_only_nodes: usize,
    failures: Vec<String>,
}

impl Tally {
    fn add(mut self, other: Tally) -> Tally {
        self.tests += other.tests;
        self.blocks += other.blocks;
        self.nodes += other.nodes;
        self.root_only_nodes += other.root_only_nodes;
        self.failures.extend(other.failures);
        self
    }
}

/// The dumps of one fixture file's tests that import with a witness.
fn dumps(path: &Path) -> Vec<(String, Dump)> {
    let file = FixtureFile::read(path).unwrap();
    let mut out = Vec::new();
    for (name, json) in &file.tests {
        let Ok(test) = BlockchainTest::from_json(name, json) else {
            continue;
        };
        if let Ok((Some(dump), _)) = import_test(path, name, &test)
            && dump.segments.iter().any(|s| s.witness.is_some())
        {
            out.push((name.clone(), dump));
        }
    }
    out
}

fn check_file(path: &Path) -> Tally {
    let mut tally = Tally::default();
    for (name, mut dump) in dumps(path) {
        let before = dump.segments[0]
            .witness
            .as_ref()
            .map_or(0, |w| w.nodes.len());
        if let Err(e) = roots_match(&dump) {
            tally.failures.push(format!("{name}: full witness: {e}"));
            continue;
        }
        if let Err(e) = root_only_dump(&mut dump) {
            tally.failures.push(format!("{name}: root-only: {e}"));
            continue;
        }
        match roots_match(&dump) {
            Ok(blocks) => {
                tally.tests += 1;
                tally.blocks += blocks;
                tally.nodes += before;
                tally.root_only_nodes += dump.segments[0].witness.as_ref().unwrap().nodes.len();
            }
            Err(e) => tally
                .failures
                .push(format!("{name}: root-only witness: {e}")),
        }
    }
    tally
}

fn check_corpus(corpus: &str, dir: &Path) -> Tally {
    let tally = fixture_files(dir)
        .unwrap()
        .par_iter()
        .map(|f| check_file(f))
        .reduce(Tally::default, Tally::add);
    eprintln!(
        "{corpus}: {} tests, {} blocks: every root from the root-only witness equals its header \
         ({} of {} nodes kept)",
        tally.tests, tally.blocks, tally.root_only_nodes, tally.nodes
    );
    assert!(
        tally.failures.is_empty(),
        "{corpus}: {} failures:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
    assert!(tally.tests > 0, "{corpus}: no test with a witness");
    tally
}

#[test]
fn fixtures_root_only_witnesses_give_the_header_roots() {
    let mut dirs = vec![(
        "ethereum-tests".to_string(),
        corpora::path("ethereum-tests"),
    )];
    for d in ["osaka", "amsterdam-bal", "bpo-transitions"] {
        dirs.push((format!("eest/{d}"), corpora::path(&format!("eest/{d}"))));
    }
    for (corpus, dir) in &dirs {
        check_corpus(corpus, dir);
    }
}

/// A few small fixtures (the first ten of the Amsterdam access-list tests with a witness):
/// each node of the root-only witness is needed.
#[test]
fn small_fixtures_every_root_only_node_is_needed() {
    let dir = corpora::path("eest/amsterdam-bal");
    let mut checked = 0;
    let mut nodes = 0;
    for file in fixture_files(&dir).unwrap() {
        for (name, mut dump) in dumps(&file) {
            if checked == 10 {
                break;
            }
            root_only_dump(&mut dump).unwrap_or_else(|e| panic!("{name}: {e}"));
            nodes += every_node_needed(&name, &dump);
            checked += 1;
        }
    }
    eprintln!("{checked} fixtures: each of {nodes} root-only nodes is needed");
    assert_eq!(checked, 10);
}

/// The mainnet-2025 block folders with a `witness.json`: from `../shared/mainnet-2025` when
/// `GIGAGAS_CORPORA` names the shared folder, else the committed copy of block 21688509.
fn mainnet_2025_blocks() -> Option<Vec<PathBuf>> {
    let root = corpora::find("mainnet-2025")?;
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .ok()?
        .map(|e| e.unwrap().path())
        .filter(|d| d.join("witness.json").is_file())
        .collect();
    dirs.sort();
    Some(dirs)
}

#[test]
fn mainnet_2025_root_only_witness_gives_the_header_root() {
    let Some(dirs) = mainnet_2025_blocks() else {
        corpora::skipped(
            "mainnet_2025_root_only_witness_gives_the_header_root",
            "mainnet-2025",
        );
        return;
    };
    assert!(
        !dirs.is_empty(),
        "mainnet-2025: no block folder with a witness"
    );
    for dir in &dirs {
        let import = gigagas_import::import_snapshots(dir, "mainnet-2025", |_| {}).unwrap();
        assert_eq!(import.failed(), 0, "{}", dir.display());
        let mut dump = import.dump.unwrap();
        assert_eq!(roots_match(&dump), Ok(1), "{}", dir.display());
        let sizes = witness_sizes(&dump).unwrap();
        let figures = root_only_dump(&mut dump).unwrap();
        assert_eq!(roots_match(&dump), Ok(1), "{}: root-only", dir.display());
        eprintln!("{}: {figures}\n{sizes}", dir.display());
        assert!(figures.bytes_after < figures.bytes_before, "{figures}");
        let nodes = every_node_needed(&dir.display().to_string(), &dump);
        eprintln!(
            "{}: each of the {nodes} root-only nodes is needed",
            dir.display()
        );
    }
}
