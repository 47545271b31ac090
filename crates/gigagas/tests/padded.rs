//! `gigagas generate --state-size --storage-size` from the command line: a dump whose
//! account trie and large contracts' storage tries are padded to mainnet's depth verifies
//! its roots against its own headers at 1 to 3 threads, per block and as one mega-block of
//! all its blocks, both state-root phases; the flags are refused without a witness and
//! below 16 accounts or slots, and a contract the generator does not deploy is named.

mod common;

use common::{GENERATE_ARGS, gigagas, s, text};

#[test]
fn a_padded_dump_verifies_at_one_to_three_threads_per_block_and_as_one_mega_block() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("padded.gigagas");
    let mut args = GENERATE_ARGS.to_vec();
    // Four blocks; the flags alone pad to mainnet's account count and largest contracts.
    args[2] = "4";
    args.extend(["--state-size", "--storage-size", "-o", s(&path)]);
    let out = gigagas(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let out = gigagas(&["inspect", s(&path)]);
    let all = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(all.contains("state-size      300000000"), "{all}");
    assert!(
        all.contains("storage-size    token-a=128000000,token-b=128000000,nft=128000000"),
        "{all}"
    );

    let out = gigagas(&[
        "run",
        s(&path),
        "--state-root",
        "after,overlapped",
        "--threads",
        "1,2,3",
        "--batch",
        "1,4",
        "--scheduler",
        "ols",
        "--repeats",
        "1",
        "--warmup",
        "0",
    ]);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{all}");
    // 2 phases × 3 thread counts × 2 batch sizes, each pass verified.
    let rows = all.lines().filter(|l| l.starts_with("| BAL |")).count();
    assert_eq!(rows, 12, "{all}");
    assert!(!all.contains("FAIL"), "{all}");
}

#[test]
fn state_size_is_refused_without_a_witness_and_below_16_accounts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("refused.gigagas");
    let mut args = GENERATE_ARGS.to_vec();
    args.extend(["--state-size", "1000", "--no-witness", "-o", s(&path)]);
    let out = gigagas(&args);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--no-witness"),
        "{}",
        text(&out.stderr)
    );

    let mut args = GENERATE_ARGS.to_vec();
    args.extend(["--state-size", "15", "-o", s(&path)]);
    let out = gigagas(&args);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("state size") && err.contains("16 accounts"),
        "{err}"
    );
    assert!(!path.exists());
}

#[test]
fn storage_size_is_refused_without_a_witness_below_16_slots_and_for_unknown_contracts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("refused.gigagas");
    for (flags, expected) in [
        (
            &["--storage-size", "4096", "--no-witness"][..],
            &["--no-witness"][..],
        ),
        (
            &["--storage-size", "nft=15"],
            &["storage size of nft", "16 slots"],
        ),
        (
            &["--storage-size", "usdt=4096"],
            &["unknown contract `usdt`", "token-a"],
        ),
        (&["--storage-size", "many"], &["`many` is not a slot count"]),
    ] {
        let mut args = GENERATE_ARGS.to_vec();
        args.extend(flags);
        args.extend(["-o", s(&path)]);
        let out = gigagas(&args);
        assert!(!out.status.success(), "{flags:?}");
        let err = text(&out.stderr);
        let first = err.lines().next().unwrap_or_default();
        assert!(
            expected.iter().all(|e| first.contains(e)),
            "{flags:?}: {err}"
        );
        assert!(!path.exists());
    }
}
