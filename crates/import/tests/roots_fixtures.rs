//! Every block of every committed blockchain-test fixture (they all carry their full
//! pre-state): the witness built from the fixture's `pre` by `witness_for_blocks`, each
//! block's root computed from that witness alone (sequentially and in parallel) equals the
//! block header's `stateRoot`. With `GIGAGAS_CORPORA` set, over the full corpora (every
//! folder of `eest/` included). gigagas-trie's roots checked here, in the import crate
//! (which depends on it), because the fixtures are read by the importer.

use alloy_eip7928::BlockAccessList;
use alloy_primitives::keccak256;
use alloy_trie::KECCAK_EMPTY;
use gigagas_import::{BlockchainTest, FixtureFile, fixture_files, import_test};
use gigagas_trie::{FullAccount, FullState, RootRules, StateTrie, witness_for_blocks};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;

/// The fixture's `pre` as a whole state.
fn full_state(test: &BlockchainTest) -> FullState {
    test.pre
        .iter()
        .map(|(address, a)| {
            let account = FullAccount {
                nonce: u64::try_from(a.nonce).expect("a nonce fits 64 bits"),
                balance: a.balance,
                code_hash: if a.code.is_empty() {
                    KECCAK_EMPTY
                } else {
                    keccak256(&a.code)
                },
                storage: a.storage.clone(),
            };
            (*address, account)
        })
        .collect()
}

/// EIP-161 from Spurious Dragon on; the fixtures' networks all come later, but the rule
/// follows the network's name where an older one turns up in the full corpora.
fn rules(network: &str) -> RootRules {
    let before_spurious = ["Frontier", "Homestead", "EIP150", "TangerineWhistle"];
    RootRules {
        delete_empty_accounts: !before_spurious.iter().any(|n| network.starts_with(n)),
    }
}

#[derive(Default)]
struct Tally {
    tests: usize,
    blocks: usize,
    not_imported: usize,
    failures: Vec<String>,
}

impl Tally {
    fn add(mut self, other: Tally) -> Tally {
        self.tests += other.tests;
        self.blocks += other.blocks;
        self.not_imported += other.not_imported;
        self.failures.extend(other.failures);
        self
    }
}

/// Checks one fixture file's tests.
fn check_file(path: &Path) -> Tally {
    let mut tally = Tally::default();
    let file = FixtureFile::read(path).unwrap();
    for (name, json) in &file.tests {
        let Ok(test) = BlockchainTest::from_json(name, json) else {
            tally.not_imported += 1;
            continue;
        };
        // Tests the import skips or rejects are the import tests' business.
        let Ok((Some(dump), _)) = import_test(path, name, &test) else {
            tally.not_imported += 1;
            continue;
        };
        assert_eq!(dump.segments.len(), 1, "{name}: one chain, one segment");
        let blocks = &dump.segments[0].blocks;
        let bals: Vec<&BlockAccessList> = blocks.iter().map(|b| &b.access_list).collect();
        let rules = rules(&test.network);
        let state = full_state(&test);
        let witness = match witness_for_blocks(&state, &bals, rules) {
            Ok(w) => w,
            Err(e) => {
                tally.failures.push(format!("{name}: witness: {e}"));
                continue;
            }
        };
        let mut seq = StateTrie::from_witness(&witness).unwrap();
        let mut par = StateTrie::from_witness(&witness).unwrap();
        tally.tests += 1;
        for (i, block) in blocks.iter().enumerate() {
            tally.blocks += 1;
            let expected = block.header.state_root;
            let got = seq.apply_block(&block.access_list, rules);
            let got_par = par.apply_block_parallel(&block.access_list, rules);
            if got.as_ref() != Ok(&expected) || got != got_par {
                tally.failures.push(format!(
                    "{name}: block {i} (number {}): expected {expected}, got {got:?} (parallel {got_par:?})",
                    block.header.number
                ));
                break;
            }
        }
    }
    tally
}

fn check_corpus(dir: &Path) -> Tally {
    let files = fixture_files(dir).unwrap();
    files
        .par_iter()
        .map(|f| check_file(f))
        .reduce(Tally::default, Tally::add)
}

fn report(corpus: &str, tally: &Tally) {
    eprintln!(
        "{corpus}: {} tests, {} blocks: every root equals its header ({} tests not imported)",
        tally.tests, tally.blocks, tally.not_imported
    );
    assert!(
        tally.failures.is_empty(),
        "{corpus}: {} tests with a wrong or missing root:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
}

#[test]
fn ethereum_tests_roots_from_witnesses_equal_the_headers() {
    let tally = check_corpus(&corpora::path("ethereum-tests"));
    report("ethereum-tests", &tally);
    // The subset holds the whole corpus: 292 tests, all with a valid block.
    assert_eq!(tally.tests, 292);
}

#[test]
fn eest_roots_from_witnesses_equal_the_headers() {
    let mut dirs: Vec<PathBuf> = ["osaka", "amsterdam-bal", "bpo-transitions"]
        .iter()
        .map(|d| corpora::path(&format!("eest/{d}")))
        .collect();
    if corpora::full() {
        // Every folder of the full corpus, those the subset leaves out included.
        let eest = corpora::path("eest");
        for entry in std::fs::read_dir(&eest).unwrap() {
            let dir = entry.unwrap().path();
            if dir.is_dir() && !dirs.iter().any(|d| d.file_name() == dir.file_name()) {
                dirs.push(dir);
            }
        }
    } else {
        corpora::skipped(
            "eest_roots_from_witnesses_equal_the_headers (the folders beyond the subset)",
            "eest (full)",
        );
    }
    // The subset's folders are whole: tests with a valid block (a dump) in each.
    let pinned = [
        ("osaka", 368),
        ("amsterdam-bal", 20),
        ("bpo-transitions", 11),
    ];
    for dir in &dirs {
        let tally = check_corpus(dir);
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        report(&format!("eest/{name}"), &tally);
        if let Some((_, tests)) = pinned.iter().find(|(n, _)| *n == name) {
            assert_eq!(tally.tests, *tests, "eest/{name}");
        }
    }
}
