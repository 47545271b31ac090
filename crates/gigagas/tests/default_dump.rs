//! The committed default dump is exactly what `gigagas generate` makes from its
//! recorded provenance (profile, seed, blocks, gas, fork, users).

use std::{path::Path, process::Command};

#[test]
fn generate_reproduces_the_committed_default_dump_byte_for_byte() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet-like.gigagas");
    let (dump, _) = gigagas_dump::read_dump(&committed).expect("the default dump loads");
    let p = &dump.meta.provenance;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("regenerated.gigagas");
    let status = Command::new(env!("CARGO_BIN_EXE_gigagas"))
        .args([
            "generate",
            "--profile",
            &p["profile"],
            "--seed",
            &p["seed"],
            "--blocks",
            &p["blocks"],
        ])
        .args([
            "--gas-per-block",
            &p["gas-per-block"],
            "--fork",
            &p["fork"],
            "--users",
            &p["users"],
        ])
        // A dump generated without a witness (the committed one, made before witnesses):
        // `--no-witness` reproduces it.
        .args((!p.contains_key("witness")).then_some("--no-witness"))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("gigagas runs");
    assert!(status.success());
    let a = std::fs::read(&committed).unwrap();
    let b = std::fs::read(&out).unwrap();
    assert!(
        a == b,
        "regenerated dump differs from the committed one ({} vs {} bytes)",
        a.len(),
        b.len()
    );
    // And the default dump meets its size contract.
    assert!(dump.block_count() >= 100 && dump.total_gas() >= 2_000_000_000 && a.len() <= 25 << 20);
}
