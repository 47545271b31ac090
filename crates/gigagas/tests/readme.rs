//! `gigagas report --readme`: a README's generated figures rendered from the results
//! folders in place, and `--check` failing on a figure that is not its folder's.

mod common;

use common::{gigagas, s, text};
use std::path::Path;

#[test]
fn report_renders_and_checks_the_readme_figures() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let results = repo.join("results");
    let original = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("README.md");
    std::fs::write(&copy, &original).unwrap();
    let check = [
        "report",
        "--readme",
        s(&copy),
        "--results-dir",
        s(&results),
        "--check",
    ];
    let out = gigagas(&check);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // One figure of the mainnet table edited by hand: --check fails and names it.
    let row = original
        .lines()
        .find(|l| l.starts_with("| [mainnet](results/mainnet/"))
        .expect("the mainnet row");
    let edited = original.replacen(row, &row.replacen(" | ", " | 1", 2), 1);
    std::fs::write(&copy, &edited).unwrap();
    let out = gigagas(&check);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("figures differ") && err.contains("mainnet"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&copy).unwrap(),
        edited,
        "--check writes nothing"
    );
    // Rendering restores it.
    let out = gigagas(&check[..5]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("rendered mainnet"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), original);
    // Dirs and --readme do not mix.
    let out = gigagas(&["report", "--readme", s(&copy), s(&results)]);
    assert!(!out.status.success());
}
