//! The shipped mainnet dump is exactly what `gigagas import snapshot` makes of the full
//! `mainnet-blocks` corpus (block by block, of the repository's test data); a folder with one
//! bad block still yields a dump of the others and a non-zero exit.

use std::{path::Path, process::Command};

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;

#[test]
fn import_snapshot_reproduces_the_shipped_mainnet_dump_byte_for_byte() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet.gigagas");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mainnet.gigagas");
    let blocks = corpora::path("mainnet-blocks");
    let folders = std::fs::read_dir(&blocks)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("block.json").is_file())
        .count();
    let output = Command::new(env!("CARGO_BIN_EXE_gigagas"))
        .args(["import", "snapshot"])
        .arg(&blocks)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("gigagas runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        folders,
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{folders} blocks: {folders} imported, 0 failed")),
        "{stdout}"
    );
    // Pre-Byzantium blocks say their receipts root is not checked; ommer blocks say what
    // is not recorded.
    let line = |n: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(n))
            .unwrap()
            .to_string()
    };
    assert!(
        line("46147").contains("receipts root not checked before Byzantium"),
        "{stdout}"
    );
    assert!(
        !line("4864590").contains("receipts root not checked"),
        "{stdout}"
    );
    assert!(
        line("5283152").contains("2 ommer(s) known only by hash"),
        "{stdout}"
    );
    if !corpora::full() {
        // The test data's blocks are some of the dump's: each imported as the dump holds it.
        corpora::skipped(
            "import_snapshot_reproduces_the_shipped_mainnet_dump_byte_for_byte",
            "the full mainnet-blocks (all 42 blocks, for the byte-for-byte check)",
        );
        let (shipped, _) = gigagas_dump::read_dump(&committed).unwrap();
        let (made, _) = gigagas_dump::read_dump(&out).unwrap();
        assert_eq!(made.meta.chain, shipped.meta.chain);
        assert_eq!(
            made.segments.len(),
            folders,
            "every block is its own segment"
        );
        for segment in &made.segments {
            let n = segment.blocks[0].number();
            let j = shipped
                .segments
                .iter()
                .position(|s| s.blocks[0].number() == n);
            let j = j.unwrap_or_else(|| panic!("block {n} is not in the shipped dump"));
            // The block, its access list, block hashes and pre-state.
            assert_eq!(segment, &shipped.segments[j], "block {n}");
        }
        return;
    }
    let a = std::fs::read(&committed).expect("dumps/mainnet.gigagas is committed");
    let b = std::fs::read(&out).unwrap();
    assert!(
        a == b,
        "the import differs from the committed dump ({} vs {} bytes)",
        a.len(),
        b.len()
    );
}

#[test]
fn a_bad_block_is_left_out_and_the_exit_is_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    for n in ["46147", "1150000"] {
        let to = dir.path().join(n);
        std::fs::create_dir(&to).unwrap();
        for f in std::fs::read_dir(corpora::path("mainnet-blocks").join(n)).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
        }
    }
    // Block 1150000's pre-state loses a contract's code: its code hash no longer matches.
    let pre = dir.path().join("1150000/pre_state.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&pre).unwrap()).unwrap();
    let contract = v
        .as_object_mut()
        .unwrap()
        .values_mut()
        .find(|a| !a["code"].is_null())
        .unwrap();
    contract["code"]["bytecode"] = serde_json::Value::from("0x00");
    contract["code"]["original_len"] = serde_json::Value::from(1);
    std::fs::write(&pre, v.to_string()).unwrap();

    let out = dir.path().join("two.gigagas");
    let output = Command::new(env!("CARGO_BIN_EXE_gigagas"))
        .args(["import", "snapshot"])
        .arg(dir.path())
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stdout}");
    let fail = stdout
        .lines()
        .find(|l| l.starts_with("FAIL"))
        .expect("a FAIL line");
    assert!(
        fail.contains("block 1150000")
            && fail.contains("pre_state.json")
            && fail.contains("code_hash"),
        "{fail}"
    );
    assert!(
        stdout.contains("2 blocks: 1 imported, 1 failed"),
        "{stdout}"
    );
    assert!(
        stderr.contains("1 of 2 blocks did not check out"),
        "{stderr}"
    );
    let (dump, _) = gigagas_dump::read_dump(&out).expect("the good block is written");
    assert_eq!(
        dump.blocks().map(|b| b.number()).collect::<Vec<_>>(),
        [46147]
    );
}
