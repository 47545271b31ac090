//! The results folders committed under `results/`: each loads, whatever schema version
//! wrote it, and re-renders to the files committed beside it, whose CSV keys are unique.

use gigagas_report::{SweepResults, table};
use std::path::{Path, PathBuf};

/// Every committed `results/**/results.json`, sorted.
fn committed() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.file_name().is_some_and(|n| n == "results.json") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
    let mut out = Vec::new();
    walk(&root, &mut out);
    out.sort();
    out
}

/// Every results.json loads, the version-1 ones through their upgrade: no committed
/// folder is left unreadable by a change of the model.
#[test]
fn every_committed_results_file_loads() {
    let files = committed();
    assert!(files.len() >= 10, "found {files:?}");
    for f in &files {
        let r = SweepResults::load(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(!r.rows.is_empty(), "{}", f.display());
        assert_eq!(r.format, gigagas_report::results::RESULTS_FORMAT);
    }
}

/// The lines of a CSV text, split into the key columns and the rest.
fn keys(text: &str, key: &[&str]) -> Vec<Vec<String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let head = reader.headers().unwrap().clone();
    let at: Vec<usize> = key
        .iter()
        .map(|k| {
            head.iter()
                .position(|h| h == *k)
                .unwrap_or_else(|| panic!("no column {k} in {head:?}"))
        })
        .collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            at.iter().map(|&i| r[i].to_string()).collect()
        })
        .collect()
}

/// The key columns (the machine, the dump where there is one, every dimension of the
/// point) name one line each in every committed folder's results.csv and totals.csv, as
/// rendered from its results.json.
#[test]
fn csv_keys_are_unique_in_every_committed_folder() {
    let machine = ["machine_cpu", "machine_cores", "commit"];
    let results_key: Vec<&str> = machine
        .iter()
        .chain(&["dump", "dump_checksum"])
        .chain(&table::POINT_COLUMNS)
        .copied()
        .collect();
    let totals_key: Vec<&str> = machine
        .iter()
        .chain(&table::POINT_COLUMNS)
        .copied()
        .collect();
    for f in committed() {
        let r = SweepResults::load(&f).unwrap();
        let sets = std::slice::from_ref(&r);
        for (name, text, key) in [
            ("results.csv", table::render_csv(sets), &results_key),
            ("totals.csv", table::render_totals_csv(sets), &totals_key),
        ] {
            let mut lines = keys(&text, key);
            let n = lines.len();
            lines.sort();
            lines.dedup();
            assert_eq!(lines.len(), n, "{}: {name} repeats a key", f.display());
        }
    }
}

/// Every file a re-render writes is the one committed: the folders were re-rendered
/// after the last change to what they show (`gigagas report DIR`), and the Markdown and
/// plots come out byte for byte.
#[test]
fn committed_folders_are_rendered_from_their_results() {
    for f in committed() {
        let dir = f.parent().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        std::fs::copy(&f, tmp.path().join("results.json")).unwrap();
        gigagas_report::render_dir(tmp.path()).unwrap();
        for entry in std::fs::read_dir(tmp.path()).unwrap() {
            let rendered = entry.unwrap().path();
            let name = rendered.file_name().unwrap();
            let committed = dir.join(name);
            assert!(
                committed.is_file(),
                "{}: {} is rendered but not committed",
                dir.display(),
                name.to_string_lossy()
            );
            assert!(
                std::fs::read(&rendered).unwrap() == std::fs::read(&committed).unwrap(),
                "{}: {} differs from its re-render (run `gigagas report {}`)",
                dir.display(),
                name.to_string_lossy(),
                dir.display()
            );
        }
    }
}
