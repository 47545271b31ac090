//! Where the tests find their corpora: the one copy of that logic, included by the test files
//! of every crate that reads a corpus (`#[path = "../../../dumps/test-data/corpora.rs"] mod
//! corpora;`).
//!
//! - With `GIGAGAS_CORPORA` set, it names a folder holding the full corpora (`mainnet-blocks/`,
//!   `ethereum-tests/`, `eest/`), as `shared/` beside the checkout does; a corpus missing from
//!   it fails the test that asks for it.
//! - Unset, the tests use the compact subset the repository carries here, in
//!   `dumps/test-data/` (see its README): zstd-compressed files, unpacked on first use into
//!   cargo's target folder, once per content.
#![allow(dead_code)]

use std::{
    hash::{Hash, Hasher},
    path::{Path, PathBuf},
};

/// The variable naming the folder of the full corpora.
const VAR: &str = "GIGAGAS_CORPORA";

/// The repository's test data (this file's folder).
const TEST_DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../dumps/test-data");

/// The folder of the full corpora, when `GIGAGAS_CORPORA` names one.
fn full_corpora() -> Option<PathBuf> {
    std::env::var_os(VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Whether the tests run on the full corpora (`GIGAGAS_CORPORA` set) rather than on the
/// repository's subset.
pub(crate) fn full() -> bool {
    full_corpora().is_some()
}

/// `rel` (a corpus, a folder in one or a file: `mainnet-blocks`, `eest/osaka`, ...) in the
/// corpora in use; `None` when the repository's subset does not carry it. Panics when
/// `GIGAGAS_CORPORA` is set but lacks it.
pub(crate) fn find(rel: &str) -> Option<PathBuf> {
    if let Some(root) = full_corpora() {
        let path = root.join(rel);
        assert!(
            path.exists(),
            "{}: not found, but {VAR}={} names the full corpora",
            path.display(),
            root.display()
        );
        return Some(path);
    }
    unpacked(rel)
}

/// `rel`, which the repository's subset carries: [`find`], panicking when it is missing.
pub(crate) fn path(rel: &str) -> PathBuf {
    find(rel).unwrap_or_else(|| {
        panic!("{rel}: not in {TEST_DATA} (nor in the full corpora: {VAR} is not set)")
    })
}

/// Says that `test` did not run (or not all of it) because `corpus` is only in the full set.
pub(crate) fn skipped(test: &str, corpus: &str) {
    eprintln!("SKIPPED: {test}: {corpus} not found (set {VAR}=/path/to/shared to run it)");
}

/// `rel` of the repository's subset, unpacked (`.zst` files decompressed, others copied) into
/// a folder of cargo's target folder named by a hash of what it holds.
fn unpacked(rel: &str) -> Option<PathBuf> {
    let packed = Path::new(TEST_DATA).join(rel);
    let src = if packed.exists() {
        packed
    } else {
        let file = PathBuf::from(format!("{}.zst", packed.display()));
        file.is_file().then_some(file)?
    };
    let mut files = Vec::new();
    list(&src, &mut files);
    let mut hash = std::hash::DefaultHasher::new();
    rel.hash(&mut hash);
    for f in &files {
        (f.strip_prefix(&src).unwrap(), std::fs::read(f).unwrap()).hash(&mut hash);
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("test-data")
        .join(format!("{:016x}", hash.finish()));
    let name = Path::new(rel).file_name().unwrap();
    // One test of this binary unpacks at a time; the others wait and find it unpacked.
    static UNPACKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = UNPACKING.lock().unwrap_or_else(|e| e.into_inner());
    if !dir.is_dir() {
        // Unpacked beside, then renamed into place: a test binary running alongside sees
        // the whole folder or none.
        let tmp = dir.with_extension(format!("tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        for f in &files {
            // `f` is `src` itself when `rel` is one file, named `name` once unpacked.
            let mut to = tmp.join(name);
            let inner = f.strip_prefix(&src).unwrap();
            if !inner.as_os_str().is_empty() {
                to.push(inner);
                if to.extension().is_some_and(|x| x == "zst") {
                    to.set_extension("");
                }
            }
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            if f.extension().is_some_and(|x| x == "zst") {
                let mut out = std::fs::File::create(&to).unwrap();
                zstd::stream::copy_decode(std::fs::File::open(f).unwrap(), &mut out)
                    .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            } else {
                std::fs::copy(f, &to).unwrap();
            }
        }
        if std::fs::rename(&tmp, &dir).is_err() {
            // Another test binary was first.
            std::fs::remove_dir_all(&tmp).unwrap();
            assert!(dir.is_dir(), "{}: not unpacked", dir.display());
        }
    }
    Some(dir.join(name))
}

/// Every file under `path` (or `path` itself), sorted.
fn list(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for e in entries {
            list(&e, out);
        }
    } else {
        out.push(path.to_path_buf());
    }
}
