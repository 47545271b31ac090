//! Setup the CLI test files share: the built binary, running it as a user would, and a
//! small generated dump. Each test binary uses the part it needs.
#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
    sync::OnceLock,
};

/// The `gigagas` binary cargo built for these tests.
pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_gigagas");

/// `gigagas generate` of a small synthetic dump: 2 blocks of 3 Mgas from 50 users.
pub(crate) const GENERATE_ARGS: [&str; 7] = [
    "generate",
    "--blocks",
    "2",
    "--gas-per-block",
    "3000000",
    "--users",
    "50",
];

/// Run the binary with `args` and wait for it.
pub(crate) fn gigagas(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run the gigagas binary")
}

/// Generate the small dump ([`GENERATE_ARGS`]) into `path`.
pub(crate) fn generate_to(path: &Path) -> Output {
    let mut args = GENERATE_ARGS.to_vec();
    args.extend(["-o", s(path)]);
    gigagas(&args)
}

/// The small dump ([`GENERATE_ARGS`]) generated once per test binary and shared by its
/// tests, kept alive in its temp dir.
pub(crate) fn generated() -> &'static Path {
    static DUMP: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = DUMP.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tiny.gigagas");
        let out = generate_to(&path);
        assert!(out.status.success(), "generate: {}", text(&out.stderr));
        (dir, path)
    });
    path
}

/// Output bytes as text (lossy).
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A temporary path as `&str` (they are UTF-8 here).
pub(crate) fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}
