//! Every shipped BlockchainTests fixture imports, checks out against its expected
//! post-state, and replays in parallel on its access lists with verification passing.

use gigagas_executor::{
    SchedulerKind, TimedWork,
    test_utils::{self, Point},
};
use gigagas_import::{Outcome, TestReport, import};
use std::{collections::BTreeMap, path::PathBuf};

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;

/// Tests the import skips as unsupported, with the reason (expected: none — the shipped
/// fixtures are all Cancun with valid blocks).
const EXPECTED_SKIPS: &[(&str, &str)] = &[];

/// Tests that import but whose parallel replay diverges because of a known executor bug:
/// (test name, reason).
const KNOWN_REPLAY_FAILURES: &[(&str, &str)] = &[];

/// Dumps above this much gas replay with one scheduler only (CI time on 2 cores).
const HEAVY_GAS: u64 = 100_000_000;

fn fixtures() -> PathBuf {
    corpora::path("ethereum-tests")
}

#[test]
fn all_fixtures_import_check_out_and_replay() {
    let out = tempfile::tempdir().unwrap();
    let mut reports: Vec<(String, Option<std::path::PathBuf>, String)> = Vec::new();
    let (_, summary) = import(&fixtures(), None, out.path(), |r: &TestReport| {
        let output = match &r.outcome {
            Outcome::Passed { output, .. } => output.clone(),
            _ => None,
        };
        reports.push((r.test.clone(), output, r.to_string()));
    })
    .expect("the fixture directory imports");

    let failed: Vec<&str> = reports
        .iter()
        .filter(|r| r.2.starts_with("FAIL"))
        .map(|r| r.2.as_str())
        .collect();
    assert!(
        failed.is_empty(),
        "{} fixtures failed to import:\n{}",
        failed.len(),
        failed.join("\n")
    );
    let skipped: BTreeMap<&str, &str> = reports
        .iter()
        .filter(|r| r.2.starts_with("skip"))
        .map(|r| (r.0.as_str(), r.2.as_str()))
        .collect();
    let expected_skips: BTreeMap<&str, &str> = EXPECTED_SKIPS.iter().copied().collect();
    assert_eq!(
        skipped.keys().collect::<Vec<_>>(),
        expected_skips.keys().collect::<Vec<_>>(),
        "skipped fixtures differ from the expected list: {skipped:#?}"
    );
    assert_eq!(summary.total(), 292, "the shipped fixtures hold 292 tests");
    assert_eq!(summary.passed + summary.skipped, 292);

    // Replay every imported dump from its file: 2 threads, every scheduler, one block per
    // batch and all blocks in one batch; verification must pass, and the sequential
    // baseline must agree with the receipts. The two ~950 Mgas sha256 fixtures take
    // seconds per run on a 2-core machine: they run once (ols), without the baseline.
    let known: BTreeMap<&str, &str> = KNOWN_REPLAY_FAILURES.iter().copied().collect();
    let mut replay_failures: BTreeMap<String, String> = BTreeMap::new();
    for (test, output, _) in &reports {
        let Some(output) = output else { continue };
        let (dump, _) = gigagas_dump::read_dump(output).expect("an imported dump reads back");
        assert_eq!(&dump.meta.name, test);
        assert_eq!(dump.meta.provenance.get("test"), Some(test));
        assert_eq!(
            dump.meta.provenance.get("network").map(String::as_str),
            Some("Cancun")
        );
        // The heavy ones on one scheduler, without the sequential baseline.
        let heavy = dump.total_gas() > HEAVY_GAS;
        let schedulers: &[SchedulerKind] = if heavy {
            &[SchedulerKind::Ols]
        } else {
            &SchedulerKind::ALL
        };
        let sequential = (!heavy).then_some(Point::Sequential(TimedWork::default()));
        let points = test_utils::grid(&[2], &[1, dump.block_count()], schedulers)
            .into_iter()
            .map(|c| {
                Point::Bal(if c.batch == 1 {
                    c.with_work(test_utils::RECOVER_SENDERS)
                } else {
                    c
                })
            });
        let result = test_utils::replay_and_verify(dump, sequential.into_iter().chain(points));
        if let Err(e) = result {
            replay_failures.insert(test.clone(), e.to_string());
        }
    }
    let unexpected: Vec<String> = replay_failures
        .iter()
        .filter(|(t, _)| !known.contains_key(t.as_str()))
        .map(|(t, e)| format!("{t}: {e}"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} imported fixtures fail to replay:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
    let fixed: Vec<&&str> = known
        .keys()
        .filter(|t| !replay_failures.contains_key(**t))
        .collect();
    assert!(
        fixed.is_empty(),
        "known replay failures now pass, remove them from the list: {fixed:?}"
    );
}
