// Integration tests see every dependency of the crate; not all are used here.
#![allow(unused_crate_dependencies)]

//! execution-spec-tests fixtures of today's forks: the blob-parameter-only transitions
//! import and replay with no skip; the Amsterdam (EIP-7928) fixtures import with revm's
//! access list checked against the fixture's, each test passed or skipped with a named
//! reason, none failed, and the passed ones replay on the fixture's own access lists.

use gigagas_executor::{Replay, RunConfig, SchedulerKind};
use gigagas_import::{
    FixtureFile, ImportError, ImportSummary, Outcome, TestReport, import, import_one,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The fixtures live in `shared/` beside the repository root.
const EEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/eest");

fn eest(dir: &str) -> PathBuf {
    let p = Path::new(EEST).join(dir);
    assert!(
        p.is_dir(),
        "{} not found: the eest fixtures are expected in shared/ beside the repository",
        p.display()
    );
    p
}

struct Imported {
    summary: ImportSummary,
    /// (test, network, dump path if passed, report line)
    reports: Vec<(String, Option<PathBuf>, String)>,
}

fn import_dir(dir: &Path, out: &Path) -> Imported {
    let mut reports = Vec::new();
    let (_, summary) = import(dir, None, out, |r: &TestReport| {
        let output = match &r.outcome {
            Outcome::Passed { output, .. } => Some(output.clone()),
            _ => None,
        };
        reports.push((r.test.clone(), output, r.to_string()));
    })
    .expect("the fixture directory imports");
    Imported { summary, reports }
}

/// Replay a dump from its file on 2 threads (one block per batch and all in one), and
/// verify every transaction against the dump's receipts and access lists.
fn replay(path: &Path) -> Result<(), String> {
    let (dump, _) = gigagas_dump::read_dump(path).map_err(|e| e.to_string())?;
    let replay = Replay::new(&dump).map_err(|e| format!("prepare: {e}"))?;
    let mut batches = vec![1, dump.blocks.len()];
    batches.dedup();
    for batch in batches {
        let config = RunConfig {
            threads: 2,
            batch,
            scheduler: SchedulerKind::ALL[0],
            recover_senders: batch == 1,
        };
        let (_, outputs) = replay.run_parallel(&config);
        replay
            .verify_all(&outputs)
            .map_err(|e| format!("parallel (batch {batch}): {e}"))?;
    }
    Ok(())
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

/// What a skipped Amsterdam test may say: revm's rules, or a block the fixture rejects.
const AMSTERDAM_SKIP_REASONS: &[&str] = &["revm's Amsterdam rules differ", "expects an exception"];

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
            passed: 20,
            failed: 0,
            skipped: 438
        }
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

#[test]
fn an_edited_post_balance_in_the_fixture_access_list_is_named() {
    let (path, name, mut test) = a_passing_amsterdam_test();
    let bal = test["blocks"][0]["blockAccessList"].as_array_mut().unwrap();
    let account = bal
        .iter_mut()
        .find(|a| !a["balanceChanges"].as_array().unwrap().is_empty())
        .unwrap();
    let address = account["address"].as_str().unwrap().to_string();
    let change = &mut account["balanceChanges"][0];
    let index = change["blockAccessIndex"].as_str().unwrap().to_string();
    let balance: alloy_primitives::U256 = change["postBalance"].as_str().unwrap().parse().unwrap();
    let wrong = balance + alloy_primitives::U256::from(1);
    change["postBalance"] = Value::String(format!("{wrong:#x}"));

    let text = serde_json::json!({ name.clone(): test }).to_string();
    let file = FixtureFile::parse(&path, &text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let err = import_one(&file, &name, &dir.path().join("bad.gigagas")).unwrap_err();
    assert!(
        matches!(err, ImportError::Mismatch(_)),
        "a failure, not a skip: {err}"
    );
    let m = err.mismatch().unwrap();
    assert_eq!(
        m.account.map(|a| a.to_string().to_lowercase()),
        Some(address.to_lowercase())
    );
    let index: u64 = u64::from_str_radix(index.trim_start_matches("0x"), 16).unwrap();
    assert_eq!(
        m.field,
        format!("block access list postBalance at blockAccessIndex {index:#x}")
    );
    assert_eq!(
        (m.expected.clone(), m.got.clone()),
        (wrong.to_string(), balance.to_string())
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
            if pick(test, import_one(&file, name, &dir.path().join("t.gigagas"))) {
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
    let bal = test["blocks"][0]["blockAccessList"].as_array_mut().unwrap();
    let account = bal
        .iter_mut()
        .find(|a| !a["balanceChanges"].as_array().unwrap().is_empty())
        .unwrap();
    let address: alloy_primitives::Address = account["address"].as_str().unwrap().parse().unwrap();
    let change = &mut account["balanceChanges"][0];
    let balance: alloy_primitives::U256 = change["postBalance"].as_str().unwrap().parse().unwrap();
    change["postBalance"] =
        Value::String(format!("{:#x}", balance + alloy_primitives::U256::from(1)));

    let err = import_edited(&path, &name, &test);
    let m = err
        .mismatch()
        .unwrap_or_else(|| panic!("a failure, not a skip: {err}"));
    assert_eq!(m.account, Some(address));
    assert!(
        m.field.starts_with("block access list postBalance"),
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
    assert_eq!(
        m.field, "block access list hash (the fixture's blockAccessList)",
        "{err}"
    );
    assert_ne!(m.expected, m.got);
}

/// The Osaka fixtures import with no failure: every test passes, except those of pre-merge
/// networks (a few files also hold London and Berlin variants) and those that expect a
/// block to be rejected, which are skipped with that reason.
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
    let (pre_merge, rejected) = (count("pre-merge rules"), count("expects an exception"));
    assert_eq!((pre_merge, rejected), (28, 10));
    assert_eq!(
        r.summary,
        ImportSummary {
            passed: 366,
            failed: 0,
            skipped: pre_merge + rejected
        }
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
