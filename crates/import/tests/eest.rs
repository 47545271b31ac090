//! execution-spec-tests fixtures of today's forks: the blob-parameter-only transitions
//! import and replay with no skip; the Amsterdam (EIP-7928) fixtures import with revm's
//! access list checked against the fixture's, each test passed or skipped with a named
//! reason, none failed, and the passed ones replay on the fixture's own access lists.

use gigagas_executor::{
    SchedulerKind, TimedWork,
    test_utils::{self, Point},
};
use gigagas_import::{
    Difference, Expected, FixtureFile, ImportError, ImportSummary, Outcome, RejectedBlock,
    RejectedBy, TestReport, import, import_one,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;

fn eest(dir: &str) -> PathBuf {
    corpora::path(&format!("eest/{dir}"))
}

struct Imported {
    summary: ImportSummary,
    /// (test, dump path if passed with a valid block, report line)
    reports: Vec<(String, Option<PathBuf>, String)>,
    /// The blocks each passed test's fixture expects rejected, as the import rejected them.
    rejected: Vec<(String, RejectedBlock)>,
}

fn import_dir(dir: &Path, out: &Path) -> Imported {
    let mut reports = Vec::new();
    let mut rejected = Vec::new();
    let (_, summary) = import(dir, None, out, |r: &TestReport| {
        let output = match &r.outcome {
            Outcome::Passed { output, stats } => {
                rejected.extend(stats.rejected.iter().map(|b| (r.test.clone(), b.clone())));
                output.clone()
            }
            _ => None,
        };
        reports.push((r.test.clone(), output, r.to_string()));
    })
    .expect("the fixture directory imports");
    Imported {
        summary,
        reports,
        rejected,
    }
}

/// Names of the tests under `dir` with a block the fixture expects rejected: the tests
/// `revme blockchaintest` 43.0.3 passes in these suites (it passes no other Amsterdam test).
fn tests_expecting_a_rejection(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for path in gigagas_import::fixture_files(dir).unwrap() {
        let file = FixtureFile::read(&path).unwrap();
        for (name, test) in &file.tests {
            let blocks = test["blocks"].as_array().unwrap();
            if blocks.iter().any(|b| b.get("expectException").is_some()) {
                names.push(name.clone());
            }
        }
    }
    names
}

/// Every test with a block to reject passes: each such block rejected, on the tip it is
/// offered to, by a check its exception names (on Amsterdam an execution field may refuse
/// it first under revm's rules, and the line says so); the chain and post-state checked.
fn assert_rejections_pass(dir: &Path, r: &Imported) {
    let expecting = tests_expecting_a_rejection(dir);
    for name in &expecting {
        let line = &r.reports.iter().find(|t| &t.0 == name).unwrap().2;
        assert!(line.starts_with("pass"), "{line}");
    }
    let tests: std::collections::BTreeSet<&String> = r.rejected.iter().map(|(t, _)| t).collect();
    assert_eq!(tests.len(), expecting.len());
    for (test, b) in &r.rejected {
        assert!(!b.reason.is_empty());
        if !b.as_named {
            assert_eq!(b.by, RejectedBy::Header, "{test}: {b}");
            assert!(
                b.to_string().contains("revm's Amsterdam rules differ"),
                "{b}"
            );
        } else {
            let named = RejectedBy::named_by(&b.exception);
            assert!(named.is_empty() || named.contains(&b.by), "{test}: {b}");
        }
    }
}

/// Replay a dump from its file ([`test_utils::replay_and_verify`]): the sequential baseline,
/// then 2 threads (one block per batch, recovering senders, and all in one, the latter also
/// with every block's state root computed beside the transactions from the dump's witness),
/// and verify every transaction against the dump's receipts and access lists, and every
/// root against its header.
fn replay(path: &Path) -> Result<(), String> {
    let (dump, _) = gigagas_dump::read_dump(path).map_err(|e| e.to_string())?;
    if dump.segments.iter().any(|s| s.witness.is_none()) {
        return Err(format!(
            "{}: no witness ({:?})",
            path.display(),
            dump.meta.provenance.get("witness")
        ));
    }
    let with_root = TimedWork {
        state_root: gigagas_executor::StateRootPhase::Overlapped,
        ..TimedWork::default()
    };
    let points = test_utils::grid(&[2], &[1, dump.block_count()], &[SchedulerKind::ALL[0]])
        .into_iter()
        .flat_map(|c| {
            if c.batch == 1 {
                vec![Point::Bal(c.with_work(test_utils::RECOVER_SENDERS))]
            } else {
                vec![Point::Bal(c), Point::Bal(c.with_work(with_root))]
            }
        });
    let sequential = Point::Sequential(TimedWork::default());
    test_utils::replay_and_verify(dump, std::iter::once(sequential).chain(points))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn bpo_transitions_import_and_replay_with_no_skip() {
    let out = tempfile::tempdir().unwrap();
    let r = import_dir(&eest("bpo-transitions"), out.path());
    let not_passed: Vec<&str> = r
        .reports
        .iter()
        .filter(|r| r.1.is_none())
        .map(|r| r.2.as_str())
        .collect();
    assert!(
        not_passed.is_empty(),
        "every BPO transition test passes:\n{}",
        not_passed.join("\n")
    );
    assert_eq!(
        r.summary,
        ImportSummary {
            passed: 11,
            failed: 0,
            skipped: 0
        }
    );
    for (test, output, _) in &r.reports {
        let path = output.as_ref().unwrap();
        let (dump, _) = gigagas_dump::read_dump(path).unwrap();
        let network = dump.meta.provenance.get("network").unwrap();
        assert!(
            network == "OsakaToBPO1AtTime15k" || network == "BPO1ToBPO2AtTime15k",
            "{network}"
        );
        assert!(dump.meta.chain.forks.iter().any(|f| f.fork == "Bpo1"));
        // The fixture's blob schedule travels with the dump.
        assert!(
            dump.meta.chain.blob_schedule.contains_key("Bpo1"),
            "{:?}",
            dump.meta.chain.blob_schedule
        );
        replay(path).unwrap_or_else(|e| panic!("{test}: {e}"));
    }
}

/// What a skipped Amsterdam test says: revm's rules.
const AMSTERDAM_SKIP_REASONS: &[&str] = &["revm's Amsterdam rules differ"];

/// What a skip for revm's access-list rules says: the only difference is a read-only access
/// revm lists and the fixture does not.
const READ_ONLY_ACCESS: &str = "(revm lists a read-only access the fixture's list does not)";

#[test]
fn amsterdam_fixtures_pass_on_equal_access_lists_or_skip_with_a_reason() {
    let out = tempfile::tempdir().unwrap();
    let r = import_dir(&eest("amsterdam-bal"), out.path());
    eprintln!("amsterdam-bal: {}", r.summary);
    let failed: Vec<&str> = r
        .reports
        .iter()
        .filter(|r| r.2.starts_with("FAIL"))
        .map(|r| r.2.as_str())
        .collect();
    assert!(
        failed.is_empty(),
        "{} Amsterdam tests failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    for (_, _, line) in r.reports.iter().filter(|r| r.2.starts_with("skip")) {
        assert!(
            AMSTERDAM_SKIP_REASONS.iter().any(|w| line.contains(w)),
            "skip without a named reason: {line}"
        );
        // An access-list skip names the entry, expected and got.
        if line.contains("block access list") {
            assert!(
                line.contains(READ_ONLY_ACCESS)
                    && line.contains(": expected ")
                    && line.contains(", got "),
                "{line}"
            );
        }
    }
    let access_list_skips = r
        .reports
        .iter()
        .filter(|r| r.2.contains(READ_ONLY_ACCESS))
        .count();
    // Four CALLs and two CREATEs out of gas before the target is accessed (an account
    // revm lists), one SSTORE out of gas at the EIP-2200 stipend (a slot read revm lists).
    assert_eq!(access_list_skips, 7);
    assert_eq!(
        r.summary,
        ImportSummary {
            passed: 67,
            failed: 0,
            skipped: 391
        }
    );
    // The 47 tests whose only block must be rejected (46 invalid access lists, one
    // malformed): 36 refused by the access list check itself, 11 by the header first
    // (gas used or logs bloom under revm's rules).
    assert_rejections_pass(&eest("amsterdam-bal"), &r);
    let by = |b: RejectedBy| r.rejected.iter().filter(|(_, x)| x.by == b).count();
    assert_eq!(r.rejected.len(), 47);
    assert_eq!(
        (
            by(RejectedBy::AccessListFormat),
            by(RejectedBy::AccessList),
            by(RejectedBy::Header)
        ),
        (17, 19, 11)
    );

    let mut replay_failures = Vec::new();
    for (test, output, _) in &r.reports {
        let Some(path) = output else { continue };
        let (dump, _) = gigagas_dump::read_dump(path).unwrap();
        assert_eq!(
            dump.meta.provenance.get("network").map(String::as_str),
            Some("Amsterdam")
        );
        if let Err(e) = replay(path) {
            replay_failures.push(format!("{test}: {e}"));
        }
    }
    assert!(
        replay_failures.is_empty(),
        "{} fail to replay:\n{}",
        replay_failures.len(),
        replay_failures.join("\n")
    );
}

/// The first Amsterdam test (in file order) that imports, with a balance change in its
/// first block's access list.
fn a_passing_amsterdam_test() -> (PathBuf, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    for path in gigagas_import::fixture_files(&eest("amsterdam-bal")).unwrap() {
        let file = FixtureFile::read(&path).unwrap();
        for name in file.names() {
            let test = &file.tests[name];
            let has_balance = test["blocks"][0]["blockAccessList"]
                .as_array()
                .is_some_and(|bal| {
                    bal.iter()
                        .any(|a| !a["balanceChanges"].as_array().unwrap().is_empty())
                });
            if has_balance && import_one(&file, name, &dir.path().join("t.gigagas")).is_ok() {
                return (path.clone(), name.to_string(), test.clone());
            }
        }
    }
    panic!("no Amsterdam test imports");
}

/// A `postBalance` raised by one wei in an access list (JSON): the first balance change of
/// the first account with one.
struct EditedBalance {
    address: alloy_primitives::Address,
    /// The change's `blockAccessIndex`.
    index: u64,
    /// The balance before the edit.
    was: alloy_primitives::U256,
    /// The balance after it.
    now: alloy_primitives::U256,
}

fn raise_first_post_balance(list: &mut Value) -> EditedBalance {
    let account = list
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|a| !a["balanceChanges"].as_array().unwrap().is_empty())
        .unwrap();
    let address = account["address"].as_str().unwrap().parse().unwrap();
    let change = &mut account["balanceChanges"][0];
    let index = change["blockAccessIndex"].as_str().unwrap();
    let index = u64::from_str_radix(index.trim_start_matches("0x"), 16).unwrap();
    let was: alloy_primitives::U256 = change["postBalance"].as_str().unwrap().parse().unwrap();
    let now = was + alloy_primitives::U256::from(1);
    change["postBalance"] = Value::String(format!("{now:#x}"));
    EditedBalance {
        address,
        index,
        was,
        now,
    }
}

#[test]
fn an_edited_post_balance_in_the_fixture_access_list_is_named() {
    let (path, name, mut test) = a_passing_amsterdam_test();
    let edit = raise_first_post_balance(&mut test["blocks"][0]["blockAccessList"]);

    let text = serde_json::json!({ name.clone(): test }).to_string();
    let file = FixtureFile::parse(&path, &text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let err = import_one(&file, &name, &dir.path().join("bad.gigagas")).unwrap_err();
    assert!(
        matches!(err, ImportError::Mismatch(_)),
        "a failure, not a skip: {err}"
    );
    let m = err.mismatch().unwrap();
    assert_eq!(m.account, Some(edit.address));
    assert_eq!(
        m.field(),
        format!(
            "block access list postBalance at blockAccessIndex {:#x}",
            edit.index
        )
    );
    assert_eq!(
        m.values(),
        Expected::new(edit.now.to_string(), edit.was.to_string())
    );
    let msg = err.to_string();
    assert!(
        msg.contains("postBalance") && msg.contains(&m.account.unwrap().to_string()),
        "{msg}"
    );
}

/// The first Amsterdam test (in file order) whose import `pick`s, with the file and the
/// test's JSON.
fn first_amsterdam_test(
    pick: impl Fn(&Value, Result<gigagas_import::ImportStats, ImportError>) -> bool,
) -> (PathBuf, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    for path in gigagas_import::fixture_files(&eest("amsterdam-bal")).unwrap() {
        let file = FixtureFile::read(&path).unwrap();
        for name in file.names() {
            let test = &file.tests[name];
            if pick(
                test,
                import_one(&file, name, &dir.path().join("t.gigagas")).map(|(_, s)| s),
            ) {
                return (path.clone(), name.to_string(), test.clone());
            }
        }
    }
    panic!("no Amsterdam test fits");
}

fn import_edited(path: &Path, name: &str, test: &Value) -> ImportError {
    let text = serde_json::json!({ name: test }).to_string();
    let file = FixtureFile::parse(path, &text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    import_one(&file, name, &dir.path().join("edited.gigagas")).unwrap_err()
}

/// A skip for an extra read-only access in revm's list is no licence for other
/// differences: the same test with one `postBalance` edited fails on that entry.
#[test]
fn a_changed_value_fails_even_where_revm_lists_an_extra_read() {
    let (path, name, mut test) = first_amsterdam_test(|_, r| {
        r.is_err_and(|e| {
            matches!(e, ImportError::RulesDiffer { .. }) && e.to_string().contains(READ_ONLY_ACCESS)
        })
    });
    let edit = raise_first_post_balance(&mut test["blocks"][0]["blockAccessList"]);

    let err = import_edited(&path, &name, &test);
    let m = err
        .mismatch()
        .unwrap_or_else(|| panic!("a failure, not a skip: {err}"));
    assert_eq!(m.account, Some(edit.address));
    assert!(
        m.field().starts_with("block access list postBalance"),
        "{err}"
    );
}

/// A fixture list that lacks a read-only access revm records is a rule difference only when
/// it is the list the header commits to: with an account's read-only entry deleted from a
/// passing test's list, the import fails on the access list hash.
#[test]
fn a_deleted_read_only_entry_fails_on_the_header_hash() {
    let read_only = |a: &Value| {
        [
            "storageChanges",
            "balanceChanges",
            "nonceChanges",
            "codeChanges",
        ]
        .iter()
        .all(|k| a[*k].as_array().is_none_or(Vec::is_empty))
    };
    let (path, name, mut test) = first_amsterdam_test(|test, r| {
        r.is_ok()
            && test["blocks"][0]["blockAccessList"]
                .as_array()
                .is_some_and(|bal| bal.iter().any(read_only))
    });
    let bal = test["blocks"][0]["blockAccessList"].as_array_mut().unwrap();
    let i = bal.iter().position(read_only).unwrap();
    bal.remove(i);

    let err = import_edited(&path, &name, &test);
    let m = err
        .mismatch()
        .unwrap_or_else(|| panic!("a failure, not a skip: {err}"));
    let Difference::AccessListHash(hashes) = m.difference else {
        panic!("{err}")
    };
    assert_ne!(hashes.expected, hashes.got);
    assert_eq!(
        m.field(),
        "block access list hash (the fixture's blockAccessList)",
    );
}

/// The Osaka fixtures import with no failure: every test passes, except those of pre-merge
/// networks (a few files also hold London and Berlin variants); the blocks to reject are
/// rejected by the transaction check their exception names (blob counts, blob gas per
/// block, the EIP-7825 gas cap, intrinsic gas, block gas).
#[test]
fn osaka_fixtures_import_with_no_failure() {
    let out = tempfile::tempdir().unwrap();
    let r = import_dir(&eest("osaka"), out.path());
    eprintln!("osaka: {}", r.summary);
    let count = |what: &str| {
        r.reports
            .iter()
            .filter(|r| r.2.starts_with("skip") && r.2.contains(what))
            .count()
    };
    let pre_merge = count("pre-merge rules");
    assert_eq!(pre_merge, 28);
    assert_eq!(
        r.summary,
        ImportSummary {
            passed: 376,
            failed: 0,
            skipped: pre_merge
        }
    );
    assert_rejections_pass(&eest("osaka"), &r);
    assert_eq!(r.rejected.len(), 13);
    assert!(
        r.rejected
            .iter()
            .all(|(_, b)| b.as_named && b.by == RejectedBy::Transaction),
        "{:#?}",
        r.rejected
    );
    // The pre-merge skips are exactly the London and Berlin variants.
    for (_, _, line) in r.reports.iter().filter(|r| r.2.contains("pre-merge rules")) {
        assert!(
            line.contains("unsupported network London")
                || line.contains("unsupported network Berlin"),
            "{line}"
        );
    }
}

/// A passing one-block Amsterdam test turned into a rejected-block test: its block marked
/// `INVALID_BLOCK_ACCESS_LIST`, its list moved to `rlp_decoded` (where the fixtures keep a
/// rejected block's list), the chain left at the genesis with the `pre` state.
fn as_rejected_block_test() -> (PathBuf, String, Value) {
    let has_balance_change = |test: &Value| {
        test["blocks"][0]["blockAccessList"]
            .as_array()
            .is_some_and(|bal| {
                bal.iter()
                    .any(|a| !a["balanceChanges"].as_array().unwrap().is_empty())
            })
    };
    let (path, name, mut test) = first_amsterdam_test(|test, r| {
        r.is_ok_and(|s| s.rejected.is_empty())
            && test["blocks"].as_array().unwrap().len() == 1
            && has_balance_change(test)
    });
    let block = &mut test["blocks"][0];
    let list = block
        .as_object_mut()
        .unwrap()
        .remove("blockAccessList")
        .unwrap();
    block["rlp_decoded"] = serde_json::json!({ "blockAccessList": list });
    block["expectException"] = Value::String("BlockException.INVALID_BLOCK_ACCESS_LIST".into());
    test["lastblockhash"] = test["genesisBlockHeader"]["hash"].clone();
    test["postState"] = test["pre"].clone();
    test.as_object_mut().unwrap().remove("postStateHash");
    (path, name, test)
}

/// A block with its true access list is not rejected: marked as one to reject, the import
/// fails, naming the block as accepted by every check.
#[test]
fn a_valid_block_marked_for_rejection_fails() {
    let (path, name, test) = as_rejected_block_test();
    let err = import_edited(&path, &name, &test);
    let m = err
        .mismatch()
        .unwrap_or_else(|| panic!("a failure, not a skip: {err}"));
    assert_eq!(
        m.difference,
        Difference::Accepted {
            index: 0,
            exception: "BlockException.INVALID_BLOCK_ACCESS_LIST".into()
        }
    );
    assert_eq!(m.field(), "validity of fixture block 0");
    assert_eq!(
        m.values().expected,
        "rejected (BlockException.INVALID_BLOCK_ACCESS_LIST)"
    );
    assert!(
        m.values().got.starts_with("accepted by every check"),
        "{err}"
    );
}

/// The same block with one `postBalance` of its list edited is rejected by the access list
/// check, which names the entry; the test passes with nothing to dump.
#[test]
fn an_edited_post_balance_in_a_block_to_reject_is_what_rejects_it() {
    let (path, name, mut test) = as_rejected_block_test();
    let edit = raise_first_post_balance(&mut test["blocks"][0]["rlp_decoded"]["blockAccessList"]);

    let text = serde_json::json!({ name.clone(): test }).to_string();
    let file = FixtureFile::parse(&path, &text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("rejected.gigagas");
    let (output, stats) = import_one(&file, &name, &target).unwrap();
    assert_eq!((output, stats.blocks), (None, 0));
    assert!(!target.exists(), "nothing is written without a valid block");
    let [rejected] = &stats.rejected[..] else {
        panic!("{:?}", stats.rejected)
    };
    assert_eq!((rejected.index, rejected.by), (0, RejectedBy::AccessList));
    assert!(rejected.as_named);
    assert!(
        rejected.reason.contains(&edit.address.to_string())
            && rejected.reason.contains("postBalance")
            && rejected.reason.contains(&format!(
                "the block's list says {}, execution gives {}",
                edit.now, edit.was
            )),
        "{rejected}"
    );
}
