//! Offline mainnet block snapshots: the shipped mainnet dump (built from every block of the
//! full `mainnet-blocks` corpus) replays verified in parallel, and every kind of bad input gives
//! the documented one-line error naming block, file and field.

use alloy_consensus::transaction::SignerRecoverable;
use gigagas_executor::{
    SchedulerKind, TimedWork,
    test_utils::{self, Point},
};
use gigagas_import::{Expected, HeaderMismatch, SnapshotError, import_snapshots};
use serde_json::Value;
use std::path::{Path, PathBuf};

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;
/// The dump `gigagas import snapshot` makes of them (reproduced byte for byte by a CLI test).
const MAINNET_DUMP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../dumps/mainnet.gigagas");

fn blocks() -> PathBuf {
    corpora::path("mainnet-blocks")
}

/// The block numbers of the corpus's block folders, checked against the shipped dump: on the
/// full corpus they are its blocks, on the repository's test data some of them.
fn folders_are_blocks_of(dump: &gigagas_dump::Dump) -> Vec<u64> {
    let mut folders: Vec<u64> = std::fs::read_dir(blocks())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("block.json").is_file())
        .map(|p| p.file_name().unwrap().to_str().unwrap().parse().unwrap())
        .collect();
    folders.sort();
    let in_dump: Vec<u64> = dump.blocks().map(|b| b.number()).collect();
    if corpora::full() {
        assert_eq!(in_dump, folders, "one block per snapshot folder");
    } else {
        let missing: Vec<&u64> = folders.iter().filter(|n| !in_dump.contains(n)).collect();
        assert!(missing.is_empty(), "not in the shipped dump: {missing:?}");
    }
    folders
}

#[test]
fn the_mainnet_dump_holds_every_block_and_replays_verified() {
    let (dump, _) =
        gigagas_dump::read_dump(Path::new(MAINNET_DUMP)).expect("the mainnet dump loads");
    folders_are_blocks_of(&dump);
    assert_eq!(
        dump.segments.len(),
        dump.block_count(),
        "every block is its own segment"
    );
    assert!(
        dump.blocks()
            .zip(dump.blocks().skip(1))
            .all(|(a, b)| a.number() < b.number()),
        "blocks in number order"
    );
    // The header totals of the shared set (its README: 9,489 transactions, 453 Mgas).
    assert_eq!(dump.transaction_count(), 9489);
    assert_eq!(dump.total_gas(), 453_046_751);
    // Pre-merge blocks with ommers record the miner's share only.
    let headerless: Vec<(u64, u32)> = dump
        .blocks()
        .filter(|b| b.headerless_ommers > 0)
        .map(|b| (b.number(), b.headerless_ommers))
        .collect();
    assert_eq!(headerless, [(1796867, 1), (5283152, 2), (8889776, 1)]);

    // At 2 threads every named scheduler, heavy-first and the oracle (on the first point's
    // item times) included; at 1 thread, where the order moves nothing between workers,
    // those `all` runs.
    let batches = [1, dump.block_count()];
    let points = test_utils::grid(&[1], &batches, &SchedulerKind::ALL)
        .into_iter()
        .chain(test_utils::grid(&[2], &batches, &SchedulerKind::NAMED))
        .map(|c| {
            Point::Bal(if c.batch == 1 && c.threads.get() == 2 {
                c.with_work(test_utils::RECOVER_SENDERS)
            } else {
                c
            })
        });
    let replay = test_utils::replay_and_verify(
        dump,
        std::iter::once(Point::Sequential(TimedWork::default())).chain(points),
    )
    .unwrap_or_else(|e| panic!("the mainnet dump does not replay: {e}"));
    assert!(
        replay.has_measured_times(),
        "the oracle ordered by measured times"
    );
}

/// A copy of one shared block folder to edit.
fn copy_block(number: u64) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(number.to_string());
    std::fs::create_dir(&dir).unwrap();
    for f in std::fs::read_dir(blocks().join(number.to_string())).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
    (tmp, dir)
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(path, serde_json::to_string(&v).unwrap()).unwrap();
}

/// Import one edited folder: it must fail with a one-line error; returns it.
fn import_error(dir: &Path) -> SnapshotError {
    let out = import_snapshots(dir, "edited", |_| {}).expect("the folder is readable");
    assert_eq!(out.reports.len(), 1);
    assert!(
        out.dump.is_none(),
        "a block that does not check out is not written"
    );
    let err = out
        .reports
        .into_iter()
        .next()
        .unwrap()
        .outcome
        .expect_err("the edited block must not check out");
    assert!(!err.to_string().contains('\n'), "one line: {err}");
    err
}

/// Homestead block 1150000: 9 transactions.
const BLOCK: u64 = 1150000;

fn first_sender(dir: &Path) -> String {
    let block: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("block.json")).unwrap()).unwrap();
    block["transactions"][0]["from"]
        .as_str()
        .unwrap()
        .to_lowercase()
}

#[test]
fn an_unedited_copy_imports() {
    let (_tmp, dir) = copy_block(BLOCK);
    let out = import_snapshots(&dir, "copy", |_| {}).unwrap();
    assert_eq!(out.failed(), 0);
    let dump = out.dump.unwrap();
    assert_eq!(
        (
            dump.block_count(),
            dump.block(0).unwrap().number(),
            dump.transaction_count()
        ),
        (1, BLOCK, 9)
    );
}

#[test]
fn a_changed_balance_is_named() {
    let (_tmp, dir) = copy_block(BLOCK);
    let sender = first_sender(&dir);
    edit_json(&dir.join("pre_state.json"), |v| {
        v[&sender]["basic"]["balance"] = Value::from("0x1")
    });
    let msg = import_error(&dir).to_string();
    assert!(
        msg.starts_with(&format!("block {BLOCK}: tx 0 (0x")) && msg.contains("execution failed"),
        "{msg}"
    );
}

#[test]
fn a_dropped_account_is_named() {
    let (_tmp, dir) = copy_block(BLOCK);
    let sender = first_sender(&dir);
    edit_json(&dir.join("pre_state.json"), |v| {
        v.as_object_mut()
            .unwrap()
            .remove(&sender)
            .expect("the sender is in the pre-state");
    });
    let err = import_error(&dir);
    let msg = err.to_string();
    let SnapshotError::Input {
        block, file, field, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (block.as_str(), file.file_name().unwrap().to_str().unwrap()),
        ("1150000", "pre_state.json")
    );
    assert_eq!(field.to_lowercase(), format!("account {sender}"), "{msg}");
    assert!(msg.contains("missing, but it sends tx 0"), "{msg}");
}

#[test]
fn a_wrong_code_hash_is_named() {
    let (_tmp, dir) = copy_block(BLOCK);
    let mut account = String::new();
    edit_json(&dir.join("pre_state.json"), |v| {
        let (a, acc) = v
            .as_object_mut()
            .unwrap()
            .iter_mut()
            .find(|(_, acc)| !acc["code"].is_null())
            .expect("a contract");
        account = a.clone();
        acc["code_hash"] = Value::from(format!("0x{}", "ab".repeat(32)));
    });
    let err = import_error(&dir);
    let SnapshotError::Input { field, detail, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(field.to_lowercase(), format!("account {account}.code_hash"));
    assert!(detail.contains("but the code hashes to"), "{err}");
}

#[test]
fn an_edited_gas_used_is_named() {
    // Edited alone, the header no longer hashes to the block hash.
    let (_tmp, dir) = copy_block(BLOCK);
    edit_json(&dir.join("block.json"), |v| {
        v["gasUsed"] = Value::from("0x1")
    });
    let msg = import_error(&dir).to_string();
    assert!(
        msg.contains("block.json") && msg.contains("hash to"),
        "{msg}"
    );

    // Edited with a matching block hash, execution disagrees with the header.
    let (_tmp, dir) = copy_block(BLOCK);
    let mut real = 0u64;
    edit_json(&dir.join("block.json"), |v| {
        real = u64::from_str_radix(v["gasUsed"].as_str().unwrap().trim_start_matches("0x"), 16)
            .unwrap();
        v["gasUsed"] = Value::from(format!("{:#x}", real + 1));
        let block: gigagas_chain::json::RpcBlock = serde_json::from_value(v.clone()).unwrap();
        v["hash"] = Value::from(block.header.inner.hash_slow().to_string());
    });
    let err = import_error(&dir);
    let SnapshotError::Mismatch { block, mismatch } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*block, mismatch),
        (
            BLOCK,
            &HeaderMismatch::GasUsed(Expected::new(real + 1, real))
        )
    );
}

#[test]
fn a_changed_from_is_named() {
    let (_tmp, dir) = copy_block(BLOCK);
    let other = "0x00000000000000000000000000000000000000aa";
    edit_json(&dir.join("block.json"), |v| {
        v["transactions"][2]["from"] = Value::from(other)
    });
    let err = import_error(&dir);
    let SnapshotError::Input {
        file,
        field,
        detail,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (file.file_name().unwrap().to_str().unwrap(), field.as_str()),
        ("block.json", "transactions[2].from")
    );
    assert!(detail.contains("recovers to"), "{err}");
}

#[test]
fn bad_input_is_one_line_naming_the_file() {
    let (_tmp, dir) = copy_block(BLOCK);
    std::fs::write(dir.join("pre_state.json"), "{ not json").unwrap();
    let msg = import_error(&dir).to_string();
    assert!(
        msg.contains("pre_state.json") && msg.contains("JSON"),
        "{msg}"
    );

    let (_tmp, dir) = copy_block(BLOCK);
    std::fs::remove_file(dir.join("pre_state.json")).unwrap();
    let msg = import_error(&dir).to_string();
    assert!(msg.contains("pre_state.json"), "{msg}");

    let empty = tempfile::tempdir().unwrap();
    let err = import_snapshots(empty.path(), "none", |_| {}).expect_err("no block folder");
    assert!(matches!(err, SnapshotError::NoBlocks(_)), "{err}");
}

#[test]
fn senders_recover_before_and_after_homestead() {
    // Frontier block 46147 and a Cancun block: every `from` matches its signature (the
    // import checks it; here the check itself is checked on the dump's transactions).
    let (dump, _) = gigagas_dump::read_dump(Path::new(MAINNET_DUMP)).unwrap();
    for b in dump.blocks().filter(|b| b.number() >= 1150000) {
        for tx in &b.transactions {
            assert_eq!(
                tx.inner().recover_signer().unwrap(),
                tx.signer(),
                "block {}",
                b.number()
            );
        }
    }
}

/// Ommers added to a block's `uncles` that its `sha3Uncles` does not commit to (the miner
/// would be paid 1/32 of a block reward more per ommer): refused, naming the file and field.
#[test]
fn uncles_that_do_not_fit_the_ommers_hash_are_refused() {
    let fake = "0x1111111111111111111111111111111111111111111111111111111111111111";
    // (block, edit): an ommer on a block without ommers (sha3Uncles of the empty list), a
    // third ommer, the one ommer listed twice.
    type Edit = Box<dyn Fn(&mut Vec<Value>)>;
    let cases: [(u64, Edit, &str); 3] = [
        (BLOCK, Box::new(|u| u.push(fake.into())), "the empty list's"),
        (5283152, Box::new(|u| u.push(fake.into())), "at most 2"),
        (8889776, Box::new(|u| u.push(u[0].clone())), "listed twice"),
    ];
    for (number, edit, says) in cases {
        let (_tmp, dir) = copy_block(number);
        edit_json(&dir.join("block.json"), |v| {
            edit(v["uncles"].as_array_mut().unwrap())
        });
        let err = import_error(&dir);
        let SnapshotError::Input {
            file,
            field,
            detail,
            ..
        } = &err
        else {
            panic!("{number}: {err:?}")
        };
        assert_eq!(
            (file.file_name().unwrap().to_str().unwrap(), field.as_str()),
            ("block.json", "uncles"),
            "{err}"
        );
        assert!(detail.contains(says), "{number}: {err}");
    }
}

/// JSON-RPC quantities are 0x-prefixed hex: a decimal string is refused wherever it is, in
/// `number` as in `gasUsed`, in block.json as in pre_state.json (not read as hex in one
/// field and as decimal in the next).
#[test]
fn quantities_without_0x_are_refused_in_every_field() {
    let decimal = |v: &Value| {
        let hex = v.as_str().unwrap().trim_start_matches("0x");
        Value::from(u128::from_str_radix(hex, 16).unwrap().to_string())
    };
    for field in ["number", "gasUsed", "timestamp"] {
        let (_tmp, dir) = copy_block(BLOCK);
        edit_json(&dir.join("block.json"), |v| v[field] = decimal(&v[field]));
        let err = import_error(&dir);
        let SnapshotError::Input {
            file,
            field: f,
            detail,
            ..
        } = &err
        else {
            panic!("{field}: {err:?}")
        };
        assert_eq!(
            (file.file_name().unwrap().to_str().unwrap(), f.as_str()),
            ("block.json", field),
            "{err}"
        );
        assert!(detail.contains("0x-prefixed"), "{err}");
    }
    // Deeper fields are named by their JSON path; a bare JSON number is refused too.
    let (_tmp, dir) = copy_block(BLOCK);
    edit_json(&dir.join("block.json"), |v| {
        v["transactions"][1]["nonce"] = decimal(&v["transactions"][1]["nonce"])
    });
    let msg = import_error(&dir).to_string();
    assert!(
        msg.contains("transactions[1].nonce") && msg.contains("0x-prefixed"),
        "{msg}"
    );
    let (_tmp, dir) = copy_block(BLOCK);
    edit_json(&dir.join("block.json"), |v| {
        v["gasLimit"] = Value::from(5000)
    });
    let msg = import_error(&dir).to_string();
    assert!(
        msg.contains("gasLimit") && msg.contains("JSON number"),
        "{msg}"
    );

    // pre_state.json: a balance as a decimal string.
    let (_tmp, dir) = copy_block(BLOCK);
    let sender = first_sender(&dir);
    edit_json(&dir.join("pre_state.json"), |v| {
        v[&sender]["basic"]["balance"] = decimal(&v[&sender]["basic"]["balance"])
    });
    let msg = import_error(&dir).to_string();
    assert!(
        msg.contains("pre_state.json") && msg.contains("0x-prefixed"),
        "{msg}"
    );
}

/// `-o` naming a file the import reads (block.json of the block folder, through any
/// spelling or link) is refused before any block is read, the file untouched; a new path
/// is written atomically.
#[test]
fn an_output_that_is_an_input_file_is_refused_before_any_work() {
    let (tmp, dir) = copy_block(BLOCK);
    let block = std::fs::read(dir.join("block.json")).unwrap();
    let mut outputs = vec![
        dir.join("block.json"),
        dir.join("pre_state.json"),
        dir.join("..").join(BLOCK.to_string()).join("block.json"),
        dir.clone(),
    ];
    #[cfg(unix)]
    {
        let link = tmp.path().join("link.gigagas");
        std::os::unix::fs::symlink(dir.join("block.json"), &link).unwrap();
        outputs.push(link);
    }
    for input in [dir.clone(), tmp.path().to_path_buf()] {
        for out in &outputs {
            let err = gigagas_import::import_snapshots_to(&input, "x", out, |_| {
                panic!("no block may be imported")
            })
            .unwrap_err();
            let SnapshotError::OutputIsInput(e) = &err else {
                panic!("{err:?}")
            };
            assert_eq!(&e.output, out);
            assert!(err.to_string().contains("refusing to overwrite"), "{err}");
        }
    }
    assert_eq!(std::fs::read(dir.join("block.json")).unwrap(), block);

    let out = tmp.path().join("new/out.gigagas");
    let (import, info) = gigagas_import::import_snapshots_to(&dir, "x", &out, |_| {}).unwrap();
    assert_eq!(import.failed(), 0);
    assert!(info.is_some());
    let (dump, _) = gigagas_dump::read_dump(&out).unwrap();
    assert_eq!(dump.block_count(), 1);
    let names: Vec<_> = std::fs::read_dir(tmp.path().join("new"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["out.gigagas"], "no temporary file left");
}

/// Every shipped block folder meets the rules the reader holds block.json and
/// pre_state.json to (0x-prefixed hex quantities, ommer hashes fitting the ommers hash).
#[test]
fn every_shipped_block_folder_reads_under_the_json_rpc_rules() {
    let chain = gigagas_import::snapshot::mainnet_chain();
    let spec = gigagas_chain::ChainSpec::from_config(&chain).unwrap();
    let dirs = gigagas_import::snapshot::block_dirs(&blocks()).unwrap();
    let (shipped, _) = gigagas_dump::read_dump(Path::new(MAINNET_DUMP)).unwrap();
    assert_eq!(dirs.len(), folders_are_blocks_of(&shipped).len());
    for dir in dirs {
        gigagas_import::snapshot::read_block(&dir, &spec)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
}

// ------------------------------------------------------------ witness.json

/// Mainnet block 21688509 (Cancun, January 2025) with `witness.json`, a zk prover's input
/// shaped like `debug_executionWitness`'s answer (671 trie nodes, 23 codes).
fn witness_block() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/test-data/mainnet-2025/21688509")
}

/// A copy of block 21688509's folder to edit.
fn copy_witness_block() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("21688509");
    std::fs::create_dir(&dir).unwrap();
    for f in std::fs::read_dir(witness_block()).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
        let mut perms = std::fs::metadata(dir.join(f.file_name().unwrap()))
            .unwrap()
            .permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(dir.join(f.file_name().unwrap()), perms).unwrap();
    }
    (tmp, dir)
}

/// The account at `address` found by walking the account trie from `root` over `nodes`
/// alone: `None` where the path ends in a hash the nodes do not hold.
fn walk_account(
    nodes: &[alloy_primitives::Bytes],
    root: alloy_primitives::B256,
    address: alloy_primitives::Address,
) -> Option<alloy_trie::TrieAccount> {
    use alloy_rlp::Decodable;
    use alloy_trie::nodes::TrieNode;
    let by_hash: std::collections::HashMap<_, _> = nodes
        .iter()
        .map(|n| (alloy_primitives::keccak256(n), n.to_vec()))
        .collect();
    let key = alloy_trie::Nibbles::unpack(alloy_primitives::keccak256(address));
    let mut at = 0;
    let mut rlp = by_hash.get(&root)?.clone();
    loop {
        let child = match TrieNode::decode(&mut rlp.as_slice()).unwrap() {
            TrieNode::Branch(b) => {
                let nibble = key.get(at).unwrap();
                at += 1;
                if !b.state_mask.is_bit_set(nibble) {
                    return None;
                }
                let index = (0..nibble).filter(|i| b.state_mask.is_bit_set(*i)).count();
                b.stack[index].clone()
            }
            TrieNode::Extension(e) => {
                assert_eq!(key.slice(at..at + e.key.len()), e.key);
                at += e.key.len();
                e.child
            }
            TrieNode::Leaf(l) => {
                assert_eq!(key.slice(at..), l.key, "the leaf of another account");
                return Some(alloy_trie::TrieAccount::decode(&mut l.value.as_slice()).unwrap());
            }
            TrieNode::EmptyRoot => return None,
        };
        rlp = match child.as_hash() {
            Some(h) => by_hash.get(&h)?.clone(),
            None => child.to_vec(),
        };
    }
}

#[test]
fn a_witness_json_gives_the_block_its_witness_at_the_parent_root() {
    let out = import_snapshots(&witness_block(), "2025", |_| {}).unwrap();
    assert_eq!(out.failed(), 0, "{:?}", out.reports[0].outcome);
    let imported = out.reports[0].outcome.as_ref().unwrap();
    assert_eq!(imported.witness_nodes, Some(671));
    assert!(
        !imported.notes().contains("witness"),
        "{}",
        imported.notes()
    );
    let dump = out.dump.unwrap();
    let witness = dump.segments[0].witness.as_ref().expect("a witness");
    assert_eq!(witness.nodes.len(), 671);
    // The root found (the one node no other references) is the parent's state root: every
    // existing account of the pre-state is found under it, with its nonce and balance.
    let root = witness.parent_state_root;
    let pre = &dump.segments[0].pre_state;
    let mut walked = 0;
    for account in &pre.accounts {
        let found = walk_account(&witness.nodes, root, account.address);
        match (&account.state, found) {
            (Some(s), Some(t)) => {
                // pre_state.json leaves out the code of an account whose code the block
                // never runs (its code hash is then recorded empty): only a code it holds is
                // compared.
                assert_eq!(
                    (t.nonce, t.balance),
                    (s.nonce, s.balance),
                    "{}",
                    account.address
                );
                if s.code_hash != revm::primitives::KECCAK_EMPTY {
                    assert_eq!(t.code_hash, s.code_hash, "{}", account.address);
                }
                walked += 1;
            }
            (None, None) => {}
            (state, found) => panic!("{}: pre-state {state:?}, trie {found:?}", account.address),
        }
    }
    assert!(walked >= 40, "{walked} accounts walked");
    // It survives the file.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.gigagas");
    gigagas_dump::write_dump(&dump, &path).unwrap();
    let (back, _) = gigagas_dump::read_dump(&path).unwrap();
    assert_eq!(back, dump);
    assert!(
        back.summary()
            .to_string()
            .contains("witnesses         1 of 1 segments, 671 trie nodes")
    );
}

#[test]
fn a_block_without_witness_json_has_no_witness_and_says_so() {
    let (_tmp, dir) = copy_witness_block();
    std::fs::remove_file(dir.join("witness.json")).unwrap();
    let out = import_snapshots(&dir, "2025", |_| {}).unwrap();
    let imported = out.reports[0].outcome.as_ref().unwrap();
    assert_eq!(imported.witness_nodes, None);
    assert!(
        imported
            .notes()
            .contains("no witness.json: no witness, the state-root phase is skipped"),
        "{}",
        imported.notes()
    );
    assert_eq!(out.dump.unwrap().segments[0].witness, None);
}

/// Edit `witness.json`'s `state` list and import: the one-line error.
fn witness_error(edit: impl FnOnce(&mut Vec<Value>)) -> String {
    let (_tmp, dir) = copy_witness_block();
    edit_json(&dir.join("witness.json"), |v| {
        edit(v["state"].as_array_mut().unwrap())
    });
    let msg = import_error(&dir).to_string();
    assert!(
        msg.contains("block 21688509") && msg.contains("witness.json"),
        "{msg}"
    );
    msg
}

#[test]
fn a_witness_whose_root_cannot_be_told_is_refused() {
    // The root removed: its children are now all unreferenced.
    let root = {
        let out = import_snapshots(&witness_block(), "2025", |_| {}).unwrap();
        out.dump.unwrap().segments[0]
            .witness
            .as_ref()
            .unwrap()
            .parent_state_root
    };
    let msg = witness_error(|state| {
        state.retain(|n| {
            let bytes: alloy_primitives::Bytes = n.as_str().unwrap().parse().unwrap();
            alloy_primitives::keccak256(&bytes) != root
        })
    });
    assert!(
        msg.contains("state: ")
            && msg.contains("nodes are referenced by no other node")
            && msg.contains("ambiguous"),
        "{msg}"
    );
    // A stray node beside the root (an unrelated leaf).
    let msg = witness_error(|state| {
        state.push(Value::from(
            "0xe2a0200000000000000000000000000000000000000000000000000000000000000001",
        ))
    });
    assert!(
        msg.contains("2 of the 672 nodes are referenced by no other node"),
        "{msg}"
    );
    // Not a trie node.
    let msg = witness_error(|state| state.push(Value::from("0x01")));
    assert!(msg.contains("node 671 is not a trie node"), "{msg}");
    // Not hex.
    let msg = witness_error(|state| state[3] = Value::from("zz"));
    assert!(msg.contains("(top level)"), "{msg}");
    // Empty.
    let msg = witness_error(|state| state[5] = Value::from("0x"));
    assert!(msg.contains("state[5]: an empty node"), "{msg}");
}

#[test]
fn witness_json_headers_that_are_not_the_parent_are_ignored_and_bad_ones_named() {
    // A header that is not the parent's: the root is found from the nodes as without one.
    let (_tmp, dir) = copy_witness_block();
    let other = alloy_consensus::Header::default();
    let mut rlp = Vec::new();
    alloy_rlp::Encodable::encode(&other, &mut rlp);
    edit_json(&dir.join("witness.json"), |v| {
        v["headers"] = Value::from(vec![Value::from(alloy_primitives::hex::encode_prefixed(
            &rlp,
        ))])
    });
    let out = import_snapshots(&dir, "2025", |_| {}).unwrap();
    assert_eq!(out.failed(), 0);
    assert!(out.dump.unwrap().segments[0].witness.is_some());
    // A header that does not decode is named.
    let (_tmp, dir) = copy_witness_block();
    edit_json(&dir.join("witness.json"), |v| {
        v["headers"] = Value::from(vec![Value::from("0xc0")])
    });
    let msg = import_error(&dir).to_string();
    assert!(msg.contains("witness.json: headers[0]: RLP"), "{msg}");
}
