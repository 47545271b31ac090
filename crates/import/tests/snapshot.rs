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

    let points = test_utils::grid(&[1, 2], &[1, dump.block_count()], &SchedulerKind::ALL)
        .into_iter()
        .map(|c| {
            Point::Bal(if c.batch == 1 && c.threads.get() == 2 {
                c.with_work(test_utils::RECOVER_SENDERS)
            } else {
                c
            })
        });
    test_utils::replay_and_verify(
        dump,
        std::iter::once(Point::Sequential(TimedWork::default())).chain(points),
    )
    .unwrap_or_else(|e| panic!("the mainnet dump does not replay: {e}"));
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
