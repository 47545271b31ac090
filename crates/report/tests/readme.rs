//! The README's generated figures are what `gigagas report --readme README.md` renders from
//! the committed results folders (the newest of each sweep its markers name).

use gigagas_report::readme;
use std::path::{Path, PathBuf};

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The sweeps the README's figures come from: the 2-core throughput tables.
const SWEEPS: [&str; 9] = [
    "mainnet",
    "schedulers",
    "benchmark-compute",
    "pevm",
    "io",
    "bal-designs",
    "state-root",
    "state-root-store",
    "big-blocks",
];

/// Every generated table of README.md is its folder's (the newest of its sweep, or the one
/// its marker names), as `gigagas report --readme` renders it, and all of them come from one
/// commit; after a sweep is run again, that command renders the README anew.
#[test]
fn readme_figures_are_the_committed_folders() {
    let path = repo().join("README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    // A block names its sweep, or its sweep and the one folder it shows (`io/<folder>`).
    let names: Vec<String> = readme::blocks(&text, &path)
        .unwrap()
        .into_iter()
        .map(|b| b.name.split('/').next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(names, SWEEPS, "the README's generated figures");
    readme::check_one_commit(&text, &path, &repo().join("results"))
        .expect("the README's figures come from one commit");
    let stale = readme::stale(&text, &path, &repo().join("results")).unwrap();
    assert!(
        stale.is_empty(),
        "README.md: the figures of {stale:?} differ from their newest results folders \
         (run `gigagas report --readme README.md`)"
    );
}

/// A copy of the README with one figure edited by hand fails the check, naming its
/// block; an edit outside the markers does not, and rendering the copy restores it.
#[test]
fn an_edited_copy_of_the_readme_fails() {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("README.md");
    let results = repo().join("results");
    // A figure of the mainnet table, changed.
    let block = readme::blocks(&text, &copy)
        .unwrap()
        .into_iter()
        .find(|b| b.name == "mainnet")
        .unwrap();
    let inner = &text[block.text.clone()];
    let row = inner
        .lines()
        .find(|l| l.starts_with("| [mainnet]"))
        .expect("the mainnet row");
    let edited_row = row.replacen("×)", "1×)", 1);
    assert_ne!(row, edited_row);
    let edited = format!(
        "{}{}{}",
        &text[..block.text.start],
        inner.replacen(row, &edited_row, 1),
        &text[block.text.end..]
    );
    std::fs::write(&copy, &edited).unwrap();
    let on_disk = std::fs::read_to_string(&copy).unwrap();
    assert_eq!(
        readme::stale(&on_disk, &copy, &results).unwrap(),
        ["mainnet"]
    );
    assert_eq!(readme::render(&on_disk, &copy, &results).unwrap(), text);
    // Prose is not a figure.
    let prose = text.replacen("Every 2-core table", "Each 2-core table", 1);
    assert_ne!(prose, text);
    assert!(readme::stale(&prose, &copy, &results).unwrap().is_empty());
}
