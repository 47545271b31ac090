//! `gigagas generate` and `gigagas inspect` run as a user would run them.

use std::{path::Path, process::Output};

mod common;
use common::{GENERATE_ARGS, generate_to, generated, gigagas as run, text};

/// The command failed with exactly one `error:` line naming `path`, and did not panic.
fn assert_one_error_line(out: &Output, path: &Path) -> String {
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success(),
        "expected failure, got {:?}; stderr: {stderr}",
        out.status
    );
    assert!(
        !stderr.contains("panicked"),
        "the binary panicked: {stderr}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "expected exactly one stderr line, got: {stderr:?}"
    );
    assert!(
        lines[0].starts_with("error:"),
        "stderr does not start with `error:`: {stderr:?}"
    );
    let shown = path.display().to_string();
    assert!(
        lines[0].contains(&shown),
        "error line does not name {shown}: {stderr:?}"
    );
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout on failure: {}",
        text(&out.stdout)
    );
    lines[0].to_string()
}

fn inspect(path: &Path) -> Output {
    run(&["inspect", path.to_str().unwrap()])
}

#[test]
fn generate_writes_a_readable_dump() {
    let path = generated();
    let (dump, info) = gigagas_dump::read_dump(path).expect("generated file is a valid dump");
    assert_eq!(dump.block_count(), 2);
    assert!(dump.blocks().all(|b| b.header.gas_used >= 3_000_000));
    assert_eq!(
        dump.meta.provenance.get("users").map(String::as_str),
        Some("50")
    );
    assert_eq!(dump.meta.name, "mainnet-like");
    assert_eq!(info.size, std::fs::metadata(path).unwrap().len());
    // Nothing but the dump in the output directory (no leftover temporary file).
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [path.file_name().unwrap()]);
}

#[test]
fn generate_reports_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.gigagas");
    let out = generate_to(&path);
    assert!(out.status.success());
    let stderr = text(&out.stderr);
    let info = gigagas_dump::read_dump(&path).unwrap().1;
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(
        stderr.contains(&info.checksum_hex()),
        "report lacks the checksum: {stderr}"
    );
    assert!(!stderr.contains("panicked"));
}

#[test]
fn inspect_prints_the_summary() {
    let path = generated();
    let out = inspect(path);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "inspect failed: {}",
        text(&out.stderr)
    );
    for key in [
        "transactions",
        "total gas",
        "gas per block",
        "largest tx share",
        "pre-state",
        "BAL entries",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(key)),
            "no `{key}` line in:\n{stdout}"
        );
    }
    // The figures are the dump's own.
    let (dump, info) = gigagas_dump::read_dump(path).unwrap();
    let line = |key: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(key))
            .unwrap()
            .to_string()
    };
    let tx_line = line("transactions");
    assert_eq!(
        tx_line.split_whitespace().nth(1),
        Some(dump.transaction_count().to_string().as_str()),
        "{tx_line}"
    );
    let gas_line = line("total gas");
    assert_eq!(
        gas_line.split_whitespace().nth(2),
        Some(dump.total_gas().to_string().as_str()),
        "{gas_line}"
    );
    assert!(
        line("blocks").starts_with("blocks            2 "),
        "{stdout}"
    );
    assert!(line("file").contains(&info.checksum_hex()), "{stdout}");
    assert!(
        line("pre-state").contains(&format!(
            "{} accounts",
            dump.segments[0].pre_state.accounts.len()
        )),
        "{stdout}"
    );
}

#[test]
fn generate_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let again = dir.path().join("again.gigagas");
    let out = generate_to(&again);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (a, b) = (
        std::fs::read(generated()).unwrap(),
        std::fs::read(&again).unwrap(),
    );
    assert!(
        a == b,
        "two runs with the same arguments wrote different files ({} vs {} bytes)",
        a.len(),
        b.len()
    );

    let other = dir.path().join("seed2.gigagas");
    let mut args = GENERATE_ARGS.to_vec();
    args.extend(["--seed", "2", "-o", other.to_str().unwrap()]);
    assert!(run(&args).status.success());
    assert_ne!(
        std::fs::read(&other).unwrap(),
        a,
        "a different seed wrote the same file"
    );
}

#[test]
fn inspect_missing_file_fails_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-dump.gigagas");
    assert_one_error_line(&inspect(&path), &path);
}

#[test]
fn inspect_text_file_fails_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("readme.txt");
    std::fs::write(&path, "# Not a dump\n\nJust some notes.\n").unwrap();
    let line = assert_one_error_line(&inspect(&path), &path);
    assert!(line.contains("not a gigagas dump"), "{line}");
}

#[test]
fn inspect_truncated_dump_fails_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("truncated.gigagas");
    let bytes = std::fs::read(generated()).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 1000]).unwrap();
    let line = assert_one_error_line(&inspect(&path), &path);
    assert!(line.contains("truncated"), "{line}");
}

#[test]
fn inspect_flipped_byte_fails_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flipped.gigagas");
    let mut bytes = std::fs::read(generated()).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x04;
    std::fs::write(&path, &bytes).unwrap();
    let line = assert_one_error_line(&inspect(&path), &path);
    assert!(line.contains("checksum mismatch"), "{line}");
}

#[test]
fn inspect_directory_fails_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    assert_one_error_line(&inspect(dir.path()), dir.path());
}

#[test]
fn generate_invalid_config_fails_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("never.gigagas");
    let out = run(&[
        "generate",
        "--blocks",
        "0",
        "--users",
        "50",
        "-o",
        path.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(
        stderr.starts_with("error:") && stderr.contains("block"),
        "{stderr:?}"
    );
    assert!(!path.exists(), "no file is written for an invalid config");
}
