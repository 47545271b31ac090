//! `gigagas simulate --state`: the whole block (read, execution, root) projected from a
//! one-thread profile of store passes on the committed witness dump, and the combinations
//! it refuses, each in one line; a simulation's results folder, rendered again by `gigagas
//! report`.

mod common;

use common::{gigagas, s};

const DUMP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../dumps/mainnet-like-witness.gigagas"
);

/// The first line of stderr, and the exit status.
fn refused(args: &[&str]) -> String {
    let out = gigagas(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    err.lines().next().unwrap_or_default().to_string()
}

/// The stdout of a successful `simulate --state STORE`, one quick point (one profiling
/// pass, no warm-up, no validation, the root off) with `extra` arguments.
fn projected(store: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "simulate",
        DUMP,
        "--state",
        store,
        "--no-validate",
        "--profile-repeats",
        "1",
        "--warmup",
        "0",
        "--state-root",
        "off",
    ];
    args.extend_from_slice(extra);
    let out = gigagas(&args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bad_combinations_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = s(dir.path());
    let line = refused(&["simulate", DUMP, "--state", store, "--io", "on-demand"]);
    assert!(
        line.contains("on-demand") && line.contains("not recorded"),
        "{line}"
    );
    let line = refused(&["simulate", DUMP, "--state", store, "--batch", "1,2"]);
    assert!(
        line.contains("--batch") && line.contains("one size"),
        "{line}"
    );
    let line = refused(&["simulate", DUMP, "--state", store, "--scheduler", "oracle"]);
    assert!(
        line.contains("--scheduler") && line.contains("oracle"),
        "{line}"
    );
    // clap's own message: the missing argument on the line after its first.
    let out = gigagas(&["simulate", DUMP, "--state-root", "after", "--no-validate"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("required arguments were not provided") && err.contains("--state <DIR>"),
        "{err}"
    );
    // A bad device curve file, before the store is opened: the file, the line and what was
    // expected.
    let curve = dir.path().join("curve.csv");
    std::fs::write(&curve, "readers,reads_per_s\n1,12000\n1,13000\n").unwrap();
    let out = gigagas(&[
        "simulate",
        DUMP,
        "--state",
        store,
        "--device-curve",
        s(&curve),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default();
    assert!(
        line.contains("curve.csv: line 3: expected each reader count once"),
        "{err}"
    );
    // The whole-block flags need a store.
    for flag in [["--cache", "cold"], ["--device-curve", "none"]] {
        let out = gigagas(&["simulate", DUMP, flag[0], flag[1], "--no-validate"]);
        assert!(!out.status.success(), "{flag:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--state <DIR>"), "{flag:?}: {err}");
    }
}

#[test]
fn the_whole_block_is_projected_from_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let built = gigagas(&["state", "build", DUMP, "-o", s(&store)]);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let (json, folder) = (dir.path().join("sim.json"), dir.path().join("sim"));
    let args = [
        "--threads",
        "1,2,16",
        "--json",
        s(&json),
        "--out",
        s(&folder),
    ];
    let stdout = projected(s(&store), &args);
    assert!(stdout.contains("Whole block: projected"), "{stdout}");
    assert_folder_renders(&folder, &json, &stdout);
    // The JSON holds the same projections: one point, a band per worker count; no
    // execution report without validation.
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(written["simulation"].is_null(), "{written}");
    let points = written["whole_block"]["projections"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{written}");
    assert_eq!(points[0]["point"], "prefetch keys, root off");
    let bands = points[0]["bands"].as_array().unwrap();
    assert_eq!(bands.len(), 3, "{written}");
    assert_eq!(bands[2][0], 16);
    assert!(
        bands[2][1]["flat"]["wall_ns"].as_f64().unwrap() > 0.0,
        "{written}"
    );
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| prefetch keys, root off |"))
        .collect();
    assert_eq!(rows.len(), 3, "{stdout}");
    // At one worker one figure; above the largest validated count (one: none ran) a band.
    assert!(
        !rows[0].split('|').nth(3).unwrap().contains('–'),
        "{}",
        rows[0]
    );
    assert!(
        rows[2].split('|').nth(3).unwrap().contains('–'),
        "{}",
        rows[2]
    );
    // Warm, by default no device curve; one given in a file is printed with the projections.
    assert!(!stdout.contains("Device curve"), "{stdout}");
    let curve = dir.path().join("curve.csv");
    std::fs::write(&curve, "readers,reads_per_s\n1,2000\n4,5000\n").unwrap();
    let stdout = projected(
        s(&store),
        &[
            "--threads",
            "1",
            "--io-threads",
            "2",
            "--device-curve",
            s(&curve),
        ],
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("**Device curve**"))
        .unwrap_or_else(|| panic!("no device curve: {stdout}"));
    assert!(
        line.contains("store's 2 readers") && line.ends_with("1: 2000, 4: 5000 reads/s"),
        "{line}"
    );
}

/// A simulation's results folder: `json`'s contents as simulation.json, and a table.md that
/// begins with the printed tables (`stdout`); `gigagas report` writes the same table.md
/// again and prints the same tables.
fn assert_folder_renders(folder: &std::path::Path, json: &std::path::Path, stdout: &str) {
    let written = std::fs::read(folder.join("simulation.json")).unwrap();
    assert!(
        written == std::fs::read(json).unwrap(),
        "simulation.json is --json's"
    );
    let table = std::fs::read_to_string(folder.join("table.md")).unwrap();
    assert!(table.starts_with(stdout), "{table}");
    assert!(table.contains("- command: `gigagas simulate "), "{table}");
    std::fs::remove_file(folder.join("table.md")).unwrap();
    let out = gigagas(&["report", s(folder)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), stdout);
    assert_eq!(
        std::fs::read_to_string(folder.join("table.md")).unwrap(),
        table
    );
}

/// The execution model alone on the default dump (one profiling run, no validation): its
/// results folder holds its tables and renders again.
#[test]
fn an_execution_simulation_is_a_results_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (json, folder) = (dir.path().join("sim.json"), dir.path().join("sim"));
    let dump = concat!(env!("CARGO_MANIFEST_DIR"), "/../../dumps/mainnet.gigagas");
    let out = gigagas(&[
        "simulate",
        dump,
        "--no-validate",
        "--profile-repeats",
        "1",
        "--warmup",
        "0",
        "--threads",
        "1,4",
        "--batch",
        "1",
        "--scheduler",
        "ols",
        "--json",
        s(&json),
        "--out",
        s(&folder),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.contains("### Schedule simulation: `mainnet`"),
        "{stdout}"
    );
    assert_folder_renders(&folder, &json, &stdout);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(written["whole_block"].is_null(), "{written}");
    assert_eq!(written["dump_path"], "dumps/mainnet.gigagas", "{written}");
}
