//! `gigagas run` on a folder of real fixture dumps: one row per dump and grid point, a
//! suite total per grid point, a corrupted dump that fails only its own row, and a dump
//! without transactions skipped once, out of the totals.

use gigagas_report::SweepResults;
use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

mod common;
use common::BIN;

/// Small Osaka fixture folders of execution-spec-tests (83 one-block tests together).
const FIXTURES: [&str; 2] = ["eip7939_count_leading_zeros", "eip7918_blob_reserve_price"];

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;

fn eest() -> PathBuf {
    corpora::path("eest/osaka")
}

/// Import the fixtures into `dir` with the import library; the gas of every dump, by file.
fn import_suite(dir: &Path) -> Vec<(PathBuf, u64)> {
    for f in FIXTURES {
        let (_, summary) = gigagas_import::import(&eest().join(f), None, dir, |_| {})
            .unwrap_or_else(|e| panic!("import {f}: {e}"));
        assert_eq!(summary.failed, 0, "{f}: {summary}");
    }
    let mut dumps: Vec<(PathBuf, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "gigagas"))
        .map(|p| {
            let (dump, _) = gigagas_dump::read_dump(&p).unwrap();
            (p, dump.total_gas())
        })
        .collect();
    dumps.sort();
    dumps
}

fn run_suite(dir: &Path, json: &Path) -> (Output, SweepResults) {
    let out = Command::new(BIN)
        .args(["run"])
        .arg(dir)
        .args([
            "--threads",
            "1",
            "--batch",
            "1",
            "--scheduler",
            "ols",
            "--warmup",
            "0",
            "--repeats",
            "2",
            "--min-sample-ms",
            "2",
            "--json",
        ])
        .arg(json)
        .output()
        .expect("run the gigagas binary");
    let text = std::fs::read_to_string(json).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; stderr: {}",
            json.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        out,
        serde_json::from_str(&text).expect("results.json parses"),
    )
}

fn check_rows(results: &SweepResults, dumps: &[(PathBuf, u64)]) {
    let n = dumps.len();
    assert_eq!(results.dumps.len(), n);
    assert_eq!(
        results.rows.len(),
        2 * n,
        "a baseline and one point per dump"
    );
    for r in &results.rows {
        assert!(r.verified);
        assert_eq!(r.passes_per_sample.len(), 2, "{r:?}");
        assert!(r.passes_per_sample.iter().all(|&p| p >= 1), "{r:?}");
        assert_eq!(r.summary.repeats.len(), 2);
        let d = results
            .dumps
            .iter()
            .find(|d| d.checksum == r.dump_checksum)
            .unwrap();
        assert_eq!(r.total_gas, d.total_gas);
    }
    // The dumps are the folder's files, sorted, each with its gas.
    for (record, (path, gas)) in results.dumps.iter().zip(dumps) {
        assert_eq!(Path::new(&record.path), path.as_path());
        assert_eq!(record.total_gas, *gas);
    }
    let gas: u64 = dumps.iter().map(|(_, g)| g).sum();
    assert_eq!(results.totals.len(), 2, "one total per grid point");
    for t in &results.totals {
        assert_eq!(t.dumps, n);
        assert_eq!(t.total_gas, gas, "total gas is the sum of the dumps' gas");
        let wall: f64 = results
            .rows
            .iter()
            .filter(|r| r.point == t.point)
            .map(|r| r.summary.median.wall_s)
            .sum();
        assert!((t.total_wall_s - wall).abs() <= 1e-9 * wall.max(1.0));
        let geo = t.geomean_speedup.expect("baselines ran");
        if t.point.is_sequential() {
            assert!((geo - 1.0).abs() < 1e-12);
        }
    }
}

#[test]
fn a_folder_of_fixture_dumps_runs_as_one_suite() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("suite");
    std::fs::create_dir_all(&dir).unwrap();
    let dumps = import_suite(&dir);
    assert!(dumps.len() >= 50, "{} dumps", dumps.len());

    let (out, results) = run_suite(&dir, &tmp.path().join("ok.json"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_rows(&results, &dumps);
    assert!(results.failures.is_empty());
    // Printed: a row per dump and point, and the suite totals.
    let printed = |prefix: &str| stdout.lines().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.contains("| BAL | 1 | ols |"))
            .count(),
        dumps.len()
    );
    assert_eq!(printed("| sequential |"), 1, "the suite total line");
    assert_eq!(printed("| BAL 1t b1 ols |"), 1, "the suite total line");

    // A corrupted copy of one dump fails its own row only, and the exit code.
    let bad = dir.join("zz-corrupted.gigagas");
    let mut bytes = std::fs::read(&dumps[0].0).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&bad, bytes).unwrap();
    let (out, results) = run_suite(&dir, &tmp.path().join("bad.json"));
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // FAIL lines go to stderr only, once.
    assert!(!stdout.contains("FAIL "), "{stdout}");
    let fails: Vec<&str> = stderr.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert_eq!(fails.len(), 1, "{stderr}");
    assert!(
        fails[0].contains("zz-corrupted.gigagas") && fails[0].contains("checksum"),
        "{}",
        fails[0]
    );
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("error: 1 of {} dump(s) failed", dumps.len() + 1)),
        "{stderr}"
    );
    assert_eq!(results.failures.len(), 1);
    check_rows(&results, &dumps);
}

/// A fixture folder whose one test holds one block without transactions (a BPO blob-fee
/// transition test of execution-spec-tests).
const EMPTY_BLOCK: &str = "eest/bpo-transitions/for_osakatobpo1attime15k/osaka/eip7918_blob_reserve_price/blob_reserve_price_with_bpo";

/// Two small one-block CLZ tests.
const SMALL: &str = "eest/osaka/eip7939_count_leading_zeros/test_clz_mainnet.json";

#[test]
fn dumps_without_transactions_are_skipped_once_and_kept_out_of_the_totals() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("suite");
    // `import` says which dump holds no transactions.
    let out = Command::new(BIN)
        .args(["import", "blockchain-test"])
        .arg(corpora::path(EMPTY_BLOCK))
        .arg("-o")
        .arg(&dir)
        .output()
        .expect("run the gigagas binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let empty: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(empty.len(), 1, "{empty:?}");
    let empty = &empty[0];
    let name = empty.file_name().unwrap().to_str().unwrap();
    let said: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("no transactions"))
        .collect();
    assert_eq!(said.len(), 2, "the pass line and the summary: {stdout}");
    assert!(said.iter().all(|l| l.contains(name)), "{stdout}");
    assert!(
        said[1].starts_with("1 dump(s) hold no transactions"),
        "{stdout}"
    );

    // A suite of it and two dumps with transactions: exit 0, the empty one listed once as
    // skipped, out of the rows, the totals and the failures.
    let (_, summary) = gigagas_import::import(&corpora::path(SMALL), None, &dir, |_| {})
        .unwrap_or_else(|e| panic!("import {SMALL}: {e}"));
    assert_eq!((summary.passed, summary.failed), (2, 0), "{summary}");
    let mut measured: Vec<(PathBuf, u64)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p != empty)
        .map(|p| {
            let (dump, _) = gigagas_dump::read_dump(&p).unwrap();
            assert!(dump.transaction_count() > 0);
            (p, dump.total_gas())
        })
        .collect();
    measured.sort();
    assert_eq!(measured.len(), 2);
    let (out, results) = run_suite(&dir, &tmp.path().join("r.json"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let skipped: Vec<&str> = stderr
        .lines()
        .chain(stdout.lines())
        .filter(|l| l.contains("skipped"))
        .collect();
    assert_eq!(skipped.len(), 1, "{stderr}");
    assert_eq!(
        skipped[0],
        format!("skipped {}: no transactions (1 block)", empty.display())
    );
    assert!(!stderr.contains("FAIL"), "{stderr}");
    assert!(results.failures.is_empty(), "{:?}", results.failures);
    assert_eq!(results.skipped.len(), 1);
    assert_eq!(Path::new(&results.skipped[0].path), empty.as_path());
    check_rows(&results, &measured);

    // Only the empty dump: nothing measured, a non-zero exit with that reason.
    let out = Command::new(BIN)
        .arg("run")
        .arg(empty)
        .args(["--threads", "1", "--batch", "1", "--scheduler", "ols"])
        .args(["--warmup", "0", "--repeats", "1", "--min-sample-ms", "0"])
        .output()
        .expect("run the gigagas binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let last = stderr.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        "error: nothing was measured: 1 of 1 dump(s) hold no transactions (skipped lines above)"
    );
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("skipped ")).count(),
        1,
        "{stderr}"
    );
}
