//! Imports that must fail, and say why: a wrong expected post-state, a file that is not a
//! fixture, an unsupported network; and the pass/fail/skip accounting of a directory.

use alloy_primitives::{Address, U256};
use alloy_rlp::{Decodable, Encodable};
use gigagas_import::{
    Difference, Expected, FixtureFile, HeaderMismatch, ImportError, Location, OutputLayout, import,
    import_one,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;
/// One block, one transaction, a `postState`.
const BASEFEE: &str = "ValidBlocks__bcExample__basefeeExample.json";
/// `postStateHash` instead of `postState`.
const INTRINSIC_TIP: &str = "ValidBlocks__bcEIP1559__intrinsicTip.json";

fn fixture(name: &str) -> (PathBuf, Value) {
    let path = corpora::path("ethereum-tests").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path, serde_json::from_str(&text).unwrap())
}

/// The only test of a one-test fixture file.
fn only_test(value: &mut Value) -> (String, &mut Value) {
    let map = value.as_object_mut().unwrap();
    assert_eq!(map.len(), 1);
    let (name, test) = map.iter_mut().next().unwrap();
    (name.clone(), test)
}

fn import_edited(path: &Path, value: &Value, out: &Path) -> Result<(), ImportError> {
    let file = FixtureFile::parse(path, &value.to_string())?;
    let name = file.names().next().unwrap().to_string();
    import_one(&file, &name, out).map(|_| ())
}

#[test]
fn the_unedited_fixture_imports() {
    let (path, value) = fixture(BASEFEE);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ok.gigagas");
    import_edited(&path, &value, &out).expect("the original fixture imports");
    let (dump, _) = gigagas_dump::read_dump(&out).unwrap();
    assert_eq!(
        dump.meta.provenance.get("source-file").map(String::as_str),
        Some(BASEFEE)
    );
    assert_eq!(
        dump.segments[0].block_hashes.len(),
        1,
        "the genesis is the only block before the chain"
    );
    assert_eq!(dump.segments[0].block_hashes[0].0, 0);
}

#[test]
fn a_wrong_expected_balance_names_the_account_and_field() {
    let (path, mut value) = fixture(BASEFEE);
    let (_, test) = only_test(&mut value);
    let post = test["postState"].as_object_mut().unwrap();
    let (address, account) = post.iter_mut().next().unwrap();
    let address: Address = address.parse().unwrap();
    let balance: U256 = account["balance"].as_str().unwrap().parse().unwrap();
    let wrong = balance + U256::from(1);
    account["balance"] = Value::String(format!("{wrong:#x}"));

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bad.gigagas");
    let err = import_edited(&path, &value, &out).unwrap_err();
    let m = err
        .mismatch()
        .unwrap_or_else(|| panic!("expected a mismatch, got {err}"));
    assert_eq!(m.location, Location::PostState);
    assert_eq!(m.account, Some(address));
    assert_eq!(
        m.difference,
        Difference::Balance(Expected::new(wrong, balance))
    );
    assert_eq!(
        m.values(),
        Expected::new(wrong.to_string(), balance.to_string())
    );
    let msg = err.to_string();
    assert!(
        msg.contains(&address.to_string()) && msg.contains("balance"),
        "{msg}"
    );
    assert!(!out.exists(), "no dump is written when the check fails");
}

#[test]
fn a_wrong_storage_value_and_a_missing_account_are_reported() {
    let (path, value) = fixture(BASEFEE);

    let mut extra = value.clone();
    let (_, test) = only_test(&mut extra);
    let ghost = "0x00000000000000000000000000000000000000aa";
    test["postState"][ghost] =
        serde_json::json!({"balance": "0x01", "nonce": "0x00", "code": "0x", "storage": {}});
    let dir = tempfile::tempdir().unwrap();
    let err = import_edited(&path, &extra, &dir.path().join("x.gigagas")).unwrap_err();
    let m = err.mismatch().expect("a mismatch");
    assert_eq!(m.difference, Difference::MissingAccount);
    assert_eq!(
        (m.field(), m.values()),
        (
            "account".into(),
            Expected::new("present".into(), "absent".into())
        )
    );
    assert_eq!(m.account, Some(ghost.parse().unwrap()));

    let mut slot = value.clone();
    let (_, test) = only_test(&mut slot);
    let post = test["postState"].as_object_mut().unwrap();
    let (address, account) = post
        .iter_mut()
        .find(|(_, a)| !a["storage"].as_object().unwrap().is_empty())
        .unwrap();
    let address: Address = address.parse().unwrap();
    let storage = account["storage"].as_object_mut().unwrap();
    let key = storage.keys().next().unwrap().clone();
    storage.insert(key.clone(), Value::String("0x0123".into()));
    let err = import_edited(&path, &slot, &dir.path().join("y.gigagas")).unwrap_err();
    let m = err.mismatch().expect("a mismatch");
    assert_eq!(m.account, Some(address));
    assert!(m.field().starts_with("storage[0x"), "{m}");
    assert!(
        matches!(m.difference, Difference::Storage { values, .. } if values.expected == U256::from(0x123)),
        "{m}"
    );
    assert_eq!(m.values().expected, "0x123");
}

#[test]
fn a_wrong_post_state_hash_is_reported() {
    let (path, mut value) = fixture(INTRINSIC_TIP);
    let (_, test) = only_test(&mut value);
    assert!(
        test.get("postState").is_none(),
        "this fixture only has postStateHash"
    );
    test["postStateHash"] =
        Value::String(format!("{:#x}", alloy_primitives::B256::repeat_byte(0x11)));
    let dir = tempfile::tempdir().unwrap();
    let err = import_edited(&path, &value, &dir.path().join("x.gigagas")).unwrap_err();
    let m = err.mismatch().expect("a mismatch");
    assert_eq!(m.location, Location::PostState);
    assert!(matches!(m.difference, Difference::PostStateHash(_)), "{m}");
    assert!(m.field().contains("postStateHash"), "{m}");
}

#[test]
fn a_header_with_the_wrong_gas_used_is_reported_at_its_block() {
    let (path, mut value) = fixture(BASEFEE);
    let (_, test) = only_test(&mut value);
    let rlp: alloy_primitives::Bytes = test["blocks"][0]["rlp"].as_str().unwrap().parse().unwrap();
    let mut block =
        alloy_consensus::Block::<alloy_consensus::TxEnvelope>::decode(&mut rlp.as_ref()).unwrap();
    let real = block.header.gas_used;
    block.header.gas_used += 1;
    let mut buf = Vec::new();
    block.encode(&mut buf);
    test["blocks"][0]["rlp"] = Value::String(format!("0x{}", alloy_primitives::hex::encode(&buf)));
    let dir = tempfile::tempdir().unwrap();
    let err = import_edited(&path, &value, &dir.path().join("x.gigagas")).unwrap_err();
    let m = err.mismatch().expect("a mismatch");
    assert_eq!(m.location, Location::Block(1));
    assert_eq!(
        m.difference,
        Difference::Header(HeaderMismatch::GasUsed(Expected::new(real + 1, real)))
    );
    assert_eq!(
        (m.field(), m.values()),
        (
            "gas used".into(),
            Expected::new((real + 1).to_string(), real.to_string())
        )
    );
}

#[test]
fn a_header_with_the_wrong_state_root_is_reported_at_its_block() {
    let (path, mut value) = fixture(BASEFEE);
    let (_, test) = only_test(&mut value);
    let rlp: alloy_primitives::Bytes = test["blocks"][0]["rlp"].as_str().unwrap().parse().unwrap();
    let mut block =
        alloy_consensus::Block::<alloy_consensus::TxEnvelope>::decode(&mut rlp.as_ref()).unwrap();
    let real = block.header.state_root;
    block.header.state_root = alloy_primitives::B256::repeat_byte(0x22);
    let mut buf = Vec::new();
    block.encode(&mut buf);
    test["blocks"][0]["rlp"] = Value::String(format!("0x{}", alloy_primitives::hex::encode(&buf)));
    let dir = tempfile::tempdir().unwrap();
    let err = import_edited(&path, &value, &dir.path().join("x.gigagas")).unwrap_err();
    let m = err.mismatch().expect("a mismatch");
    assert_eq!(m.location, Location::Block(1));
    assert!(
        matches!(m.difference, Difference::StateRoot(values) if values.got == real),
        "{m}"
    );
    assert_eq!(m.field(), "state root");
}

#[test]
fn a_file_that_is_not_a_fixture_is_one_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.gigagas");
    for (name, text, needle) in [
        ("object.json", r#"{"hello": {"world": 1}}"#, "has no blocks"),
        ("array.json", "[1, 2, 3]", "JSON object"),
        ("garbage.json", "this is not json", "not valid JSON"),
        (
            "state.json",
            r#"{"t": {"env": {}, "pre": {}, "transaction": {}, "post": {}}}"#,
            "GeneralStateTests state test",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let err = import(&path, None, &out, |_| {}).unwrap_err();
        assert!(
            matches!(err, ImportError::NotAFixture { .. }),
            "{name}: {err}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(name)
                && msg.contains("not a BlockchainTests fixture")
                && msg.contains(needle),
            "{msg}"
        );
        assert!(!msg.contains('\n'), "one line: {msg}");
    }
    assert!(!out.exists());
}

#[test]
fn an_unsupported_network_is_one_error_naming_it() {
    let (_, mut value) = fixture(BASEFEE);
    let (_, test) = only_test(&mut value);
    test["network"] = Value::String("Berlin".into());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("berlin.json");
    std::fs::write(&path, value.to_string()).unwrap();
    let out = dir.path().join("out.gigagas");
    let err = import(&path, None, &out, |_| {}).unwrap_err();
    assert!(
        matches!(err, ImportError::UnsupportedNetwork { .. }),
        "{err}"
    );
    assert!(err.is_unsupported());
    let msg = err.to_string();
    assert!(
        msg.contains("unsupported network Berlin") && msg.contains("supported: "),
        "{msg}"
    );
    assert!(!out.exists());

    let (_, test) = only_test(&mut value);
    test["network"] = Value::String("Atlantis".into());
    std::fs::write(&path, value.to_string()).unwrap();
    let msg = import(&path, None, &out, |_| {}).unwrap_err().to_string();
    assert!(msg.contains("unsupported network Atlantis"), "{msg}");
}

#[test]
fn a_directory_reports_every_test_and_file() {
    let (_, good) = fixture(BASEFEE);
    let mut berlin = good.clone();
    let (name, test) = only_test(&mut berlin);
    test["network"] = Value::String("Berlin".into());
    let berlin = serde_json::json!({ format!("{name}_Berlin"): test.clone() });
    // A valid block marked as one to reject: the import's checks accept it, so the test
    // fails (a dump must never hold a block a client refuses, nor call it rejected).
    let mut invalid = fixture(INTRINSIC_TIP).1;
    let (_, test) = only_test(&mut invalid);
    let last = test["blocks"].as_array().unwrap().len() - 1;
    test["blocks"][last]["expectException"] =
        Value::String("TransactionException.INTRINSIC_GAS_TOO_LOW".into());

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir_all(input.join("nested")).unwrap();
    std::fs::write(input.join("a_good.json"), good.to_string()).unwrap();
    std::fs::write(input.join("b_berlin.json"), berlin.to_string()).unwrap();
    std::fs::write(input.join("nested/c_invalid.json"), invalid.to_string()).unwrap();
    std::fs::write(input.join("d_not_a_fixture.json"), "{}").unwrap();
    std::fs::write(input.join("README.md"), "ignored: not .json").unwrap();

    let out = dir.path().join("out");
    let mut lines = Vec::new();
    let (layout, summary) = import(&input, None, &out, |r| lines.push(r.to_string())).unwrap();
    assert_eq!(layout, OutputLayout::Directory);
    assert_eq!(
        (summary.passed, summary.failed, summary.skipped),
        (1, 2, 1),
        "{lines:#?}"
    );
    assert_eq!(
        summary.to_string(),
        "4 tests: 1 passed, 2 failed, 1 skipped"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("pass  basefeeExample")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("skip") && l.contains("unsupported network Berlin")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("FAIL")
                && l.contains(&format!("validity of fixture block {last}: expected rejected (TransactionException.INTRINSIC_GAS_TOO_LOW), got accepted by every check"))),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("FAIL") && l.contains("d_not_a_fixture.json")),
        "{lines:#?}"
    );
    let written: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        written.len(),
        1,
        "only the passing test is written: {written:?}"
    );

    // --test picks one test out of a directory.
    let out2 = dir.path().join("out2");
    let name = good.as_object().unwrap().keys().next().unwrap().clone();
    let (_, summary) = import(&input, Some(&name), &out2, |_| {}).unwrap();
    assert_eq!((summary.passed, summary.total()), (1, 1));
    let err = import(&input, Some("no-such-test"), &out2, |_| {}).unwrap_err();
    assert!(matches!(err, ImportError::TestNotFound { .. }), "{err}");
}

/// A copy of a fixture's first block with its gas limit doubled, offered to the genesis
/// before the real block as one to reject: the header check against the parent refuses it
/// and names the field, and the real block then imports on the same tip.
#[test]
fn a_block_with_a_gas_limit_past_the_bound_is_refused_by_the_header_check() {
    let (path, mut value) = fixture(BASEFEE);
    let (name, test) = only_test(&mut value);
    let blocks = test["blocks"].as_array().unwrap().clone();
    let rlp: alloy_primitives::Bytes = blocks[0]["rlp"].as_str().unwrap().parse().unwrap();
    let mut block =
        alloy_consensus::Block::<alloy_consensus::TxEnvelope>::decode(&mut rlp.as_ref()).unwrap();
    block.header.gas_limit *= 2;
    let mut bad = blocks[0].clone();
    bad["rlp"] = Value::String(alloy_primitives::hex::encode_prefixed(alloy_rlp::encode(
        &block,
    )));
    bad["expectException"] = Value::String("BlockException.INVALID_GASLIMIT".into());
    test["blocks"].as_array_mut().unwrap().insert(0, bad);

    let file = FixtureFile::parse(&path, &value.to_string()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (output, stats) = import_one(&file, &name, &dir.path().join("t.gigagas")).unwrap();
    assert!(output.is_some_and(|p| p.exists()));
    assert_eq!(stats.blocks, blocks.len());
    let [rejected] = &stats.rejected[..] else {
        panic!("{:?}", stats.rejected)
    };
    assert_eq!(
        (rejected.index, rejected.by, rejected.as_named),
        (0, gigagas_import::RejectedBy::Header, true)
    );
    assert!(
        rejected
            .reason
            .starts_with("gas limit: header says within "),
        "{rejected}"
    );

    // The same block expected to fail on a transaction: still refused, by the header
    // first, and the line says the exception names another check.
    value[&name]["blocks"][0]["expectException"] =
        Value::String("TransactionException.INTRINSIC_GAS_TOO_LOW".into());
    let file = FixtureFile::parse(&path, &value.to_string()).unwrap();
    let (_, stats) = import_one(&file, &name, &dir.path().join("t2.gigagas")).unwrap();
    let rejected = &stats.rejected[0];
    assert_eq!(
        (rejected.by, rejected.as_named),
        (gigagas_import::RejectedBy::Header, false)
    );
    assert!(
        rejected.to_string().contains(
            "rejected (TransactionException.INTRINSIC_GAS_TOO_LOW expected) by the header first, not by a transaction as the exception names: gas limit"
        ),
        "{rejected}"
    );
}

/// Three fixture files in different folders whose tests share a name: three dumps, each
/// its own file, and the passed count is the number of files written.
#[test]
fn tests_of_the_same_name_in_different_folders_each_write_their_own_dump() {
    let (_, good) = fixture(BASEFEE);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    for sub in ["a", "b", "c"] {
        std::fs::create_dir_all(input.join(sub)).unwrap();
        std::fs::write(input.join(sub).join("same.json"), good.to_string()).unwrap();
    }
    let out = dir.path().join("out");
    let mut outputs = Vec::new();
    let (_, summary) = import(&input, None, &out, |r| {
        if let gigagas_import::Outcome::Passed {
            output: Some(o), ..
        } = &r.outcome
        {
            outputs.push(o.clone());
        }
    })
    .unwrap();
    assert_eq!((summary.passed, summary.total()), (3, 3));
    let distinct: std::collections::BTreeSet<_> = outputs.iter().collect();
    assert_eq!(distinct.len(), 3, "{outputs:?}");
    let written = std::fs::read_dir(&out).unwrap().count();
    assert_eq!(
        written, 3,
        "every passed test wrote its own file: {outputs:?}"
    );
}

/// A symlink loop and a symlinked duplicate inside the fixture folder: the walk ends, and
/// the one fixture imports once.
#[cfg(unix)]
#[test]
fn a_symlink_loop_in_the_fixture_folder_imports_each_file_once() {
    let (_, good) = fixture(BASEFEE);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir_all(input.join("sub")).unwrap();
    std::fs::write(input.join("sub/good.json"), good.to_string()).unwrap();
    std::os::unix::fs::symlink("..", input.join("sub/loop")).unwrap();
    std::os::unix::fs::symlink("sub/good.json", input.join("alias.json")).unwrap();
    std::os::unix::fs::symlink("sub", input.join("also-sub")).unwrap();
    let files = gigagas_import::fixture_files(&input).unwrap();
    assert_eq!(
        files,
        vec![input.join("sub/good.json")],
        "the real path, once"
    );
    let (_, summary) = import(&input, None, &dir.path().join("out"), |_| {}).unwrap();
    assert_eq!((summary.passed, summary.total()), (1, 1));
}

/// `-o` naming the fixture itself (or a link to it) is refused before any work, the
/// fixture untouched.
#[test]
fn an_output_that_is_the_input_fixture_is_refused_before_any_work() {
    let (_, good) = fixture(BASEFEE);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.json");
    let text = good.to_string();
    std::fs::write(&path, &text).unwrap();
    let mut outputs = vec![path.clone(), dir.path().join(".").join("f.json")];
    #[cfg(unix)]
    {
        let link = dir.path().join("link.gigagas");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let hard = dir.path().join("hard.gigagas");
        std::fs::hard_link(&path, &hard).unwrap();
        outputs.extend([link, hard]);
    }
    for out in &outputs {
        let err = import(&path, None, out, |_| panic!("no test may run")).unwrap_err();
        let ImportError::OutputIsInput(e) = &err else {
            panic!("{err:?}")
        };
        assert_eq!((&e.output, &e.input), (out, &path));
        let msg = err.to_string();
        assert!(
            msg.contains(&out.display().to_string()) && msg.contains(&path.display().to_string()),
            "{msg}"
        );
    }
    // The library entry point for one parsed test checks too.
    let file = FixtureFile::read(&path).unwrap();
    let name = file.names().next().unwrap().to_string();
    let err = import_one(&file, &name, &path).unwrap_err();
    assert!(matches!(err, ImportError::OutputIsInput(_)), "{err:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "untouched");
    // A directory of fixtures whose output folder holds, under a test's dump name, a link
    // to one of them: that test fails, the fixture untouched.
    #[cfg(unix)]
    {
        let input = dir.path().join("in");
        std::fs::create_dir(&input).unwrap();
        let fixture = input.join("f.json");
        std::fs::write(&fixture, &text).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let target = out.join(format!("{}.gigagas", gigagas_import::sanitize_name(&name)));
        std::os::unix::fs::symlink(&fixture, &target).unwrap();
        let mut lines = Vec::new();
        let (_, summary) = import(&input, None, &out, |r| lines.push(r.to_string())).unwrap();
        assert_eq!((summary.failed, summary.total()), (1, 1), "{lines:?}");
        assert!(
            lines[0].contains("refusing to overwrite an input"),
            "{lines:?}"
        );
        assert_eq!(
            std::fs::read_to_string(&fixture).unwrap(),
            text,
            "untouched"
        );
    }
}
