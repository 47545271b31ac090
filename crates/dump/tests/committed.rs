//! Every dump committed under `dumps/` loads: it passes the format's bounds and the whole
//! validation ([`gigagas_dump::Dump::validate`]), and has work to measure.

use std::path::{Path, PathBuf};

/// Every `*.gigagas` under `dir`, recursively, sorted.
fn dumps_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            dumps_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "gigagas") {
            out.push(path);
        }
    }
}

#[test]
fn every_committed_dump_loads_and_has_work() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps");
    let mut paths = Vec::new();
    dumps_under(&root, &mut paths);
    paths.sort();
    assert!(
        paths.len() > 200,
        "{} dumps under {}",
        paths.len(),
        root.display()
    );
    let mut failures = Vec::new();
    for path in &paths {
        match gigagas_dump::read_dump(path) {
            Ok((dump, _)) => {
                if let Err(e) = dump.check_has_work() {
                    failures.push(format!("{}: {e}", path.display()));
                }
            }
            Err(e) => {
                let mut msg = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(s) = source {
                    msg.push_str(&format!(": {s}"));
                    source = s.source();
                }
                failures.push(msg);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
