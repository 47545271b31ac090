//! `gigagas compare` end to end: a results folder against a faster copy of itself exits 0
//! and marks every point faster; `--fail-on-regression` exits 1 naming the worst point;
//! a different dump is refused.

use gigagas_report::SweepResults;
use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

mod common;
use common::BIN;

fn shipped_folder() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/mainnet");
    gigagas_report::folder::latest_results_dir(&root)
        .unwrap()
        .expect("a results folder under results/mainnet")
}

/// The shipped results (7 samples a point on a noisy VM: intervals up to ±20 %) with every sample's throughput times `scale`, written to `path`.
fn scaled(path: &Path, scale: f64) {
    let mut r = SweepResults::load(&shipped_folder().join("results.json")).unwrap();
    for row in &mut r.rows {
        for m in &mut row.summary.repeats {
            m.ggas_per_s *= scale;
        }
    }
    std::fs::write(path, r.to_json()).unwrap();
}

fn compare(args: &[&Path], extra: &[&str]) -> Output {
    Command::new(BIN)
        .arg("compare")
        .args(args)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn faster_slower_and_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (fast, slow) = (tmp.path().join("fast.json"), tmp.path().join("slow.json"));
    scaled(&fast, 2.0);
    scaled(&slow, 0.5);
    let old = shipped_folder();

    let out = compare(&[&old, &fast], &["--fail-on-regression", "5"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = stdout.trim_end().lines().last().unwrap();
    assert!(
        summary.contains(" faster, 0 slower, 0 within noise"),
        "{stdout}"
    );
    assert!(summary.contains("geomean NEW/OLD 2.000×"), "{summary}");

    let out = compare(&[&old, &slow], &["--fail-on-regression", "5"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("regression beyond 5 %: dump mainnet, "),
        "{stderr}"
    );
    // Without the flag, the same comparison is a report, not a failure.
    let out = compare(&[&old, &slow], &[]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("| slower |"));

    let mut other = SweepResults::load(&fast).unwrap();
    for row in &mut other.rows {
        row.dump_checksum = "00000000deadbeef".into();
    }
    let other_path = tmp.path().join("other.json");
    std::fs::write(&other_path, other.to_json()).unwrap();
    let out = compare(&[&old, &other_path], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("in OLD, 00000000deadbeef in NEW"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}
