//! Root-only witnesses from the command line: a run that computes state roots refuses a
//! dump without a witness before any pass, in one line naming the dump and how to give it
//! a witness; `gigagas prune-witness` writes a root-only witness whose roots a run verifies, and
//! `gigagas inspect` shows both witnesses' sizes per block.

mod common;

use common::{GENERATE_ARGS, gigagas};
use std::{path::Path, process::Output};

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The small generated dump ([`GENERATE_ARGS`]) at `path`, with `extra` args.
fn generate(path: &Path, extra: &[&str]) {
    let mut args = GENERATE_ARGS.to_vec();
    args.extend(["-o", path.to_str().unwrap()]);
    args.extend(extra);
    let out = gigagas(&args);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn state_root_on_a_dump_without_a_witness_is_refused_before_any_pass() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.gigagas");
    generate(&path, &["--no-witness"]);
    let shown = path.to_str().unwrap();
    for phase in ["after", "overlapped"] {
        let out = gigagas(&[
            "run",
            shown,
            "--state-root",
            phase,
            "--threads",
            "1",
            "--batch",
            "1",
            "--repeats",
            "1",
        ]);
        let all = text(&out);
        assert!(!out.status.success(), "{all}");
        let lines: Vec<&str> = all
            .lines()
            .filter(|l| l.contains("needs a witness"))
            .collect();
        assert_eq!(lines.len(), 1, "{all}");
        let line = lines[0];
        assert!(line.contains(shown), "{line}");
        assert!(line.contains(&format!("--state-root {phase}")), "{line}");
        assert!(line.contains("gigagas generate"), "{line}");
        assert!(!all.contains("verification failed"), "{all}");
        // Refused before any pass: no row was measured.
        assert!(!all.contains("| BAL |"), "{all}");
    }
}

#[test]
fn pruned_witness_verifies_and_inspect_shows_both_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.gigagas");
    let pruned = dir.path().join("pruned.gigagas");
    generate(&full, &[]);
    let out = gigagas(&[
        "prune-witness",
        full.to_str().unwrap(),
        "-o",
        pruned.to_str().unwrap(),
    ]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("root-only witness of 1 segment(s)"), "{all}");

    let out = gigagas(&["inspect", full.to_str().unwrap()]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("witness accessed  mean"), "{all}");
    assert!(all.contains("witness root-only mean"), "{all}");
    let out = gigagas(&["inspect", pruned.to_str().unwrap()]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("witness root-only mean"), "{all}");

    let out = gigagas(&[
        "run",
        pruned.to_str().unwrap(),
        "--state-root",
        "after,overlapped",
        "--threads",
        "1,2",
        "--batch",
        "1,2",
        "--repeats",
        "1",
    ]);
    assert!(out.status.success(), "{}", text(&out));

    // Its own output is refused as an input, in one line.
    let out = gigagas(&[
        "prune-witness",
        full.to_str().unwrap(),
        "-o",
        full.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
}
