//! A real generated dump survives encode/decode and write/read unchanged.

use alloy_hardforks::EthereumHardfork;
use gigagas_dump::{Dump, decode_dump, encode_dump, read_dump, write_dump};
use gigagas_workload::{GeneratorConfig, Profile};
use std::{path::Path, sync::OnceLock};

fn config(profile: Profile) -> GeneratorConfig {
    GeneratorConfig {
        profile,
        blocks: 3,
        gas_per_block: 3_000_000,
        seed: 11,
        fork: EthereumHardfork::Prague,
        users: 50,
    }
}

fn dump() -> &'static Dump {
    static DUMP: OnceLock<Dump> = OnceLock::new();
    DUMP.get_or_init(|| {
        gigagas_workload::generate(&config(Profile::MainnetLike), |_, _| {}).unwrap()
    })
}

fn assert_roundtrips(d: &Dump) {
    let bytes = encode_dump(d);
    let (decoded, info) =
        decode_dump(&bytes, Path::new("memory.gigagas")).expect("own encoding decodes");
    assert_eq!(&decoded, d, "decode(encode(d)) == d");
    assert_eq!(info.size, bytes.len() as u64);
    assert_eq!(
        info.checksum,
        u64::from_le_bytes(bytes[24..32].try_into().unwrap())
    );
    assert_eq!(info.checksum, xxhash_rust::xxh3::xxh3_64(&bytes[32..]));
    assert_eq!(
        encode_dump(&decoded),
        bytes,
        "re-encoding is byte-identical"
    );
}

#[test]
fn encode_decode_reencode_is_identity() {
    let d = dump();
    assert_eq!(d.block_count(), 3);
    assert!(d.transaction_count() > 0);
    assert_roundtrips(d);
}

fn generate_one_block(profile: Profile, fork: EthereumHardfork) -> Dump {
    gigagas_workload::generate(
        &GeneratorConfig {
            blocks: 1,
            fork,
            ..config(profile)
        },
        |_, _| {},
    )
    .unwrap_or_else(|e| panic!("{profile} on {fork}: {e}"))
}

// Other profiles and forks exercise other transaction mixes and header shapes. One block
// each keeps these quick.

#[test]
fn osaka_amm_dump_roundtrips() {
    assert_roundtrips(&generate_one_block(Profile::Amm, EthereumHardfork::Osaka));
}

#[test]
fn adversarial_dump_roundtrips() {
    assert_roundtrips(&generate_one_block(
        Profile::Adversarial,
        EthereumHardfork::Prague,
    ));
}

#[test]
fn cancun_dump_roundtrips() {
    let d = generate_one_block(Profile::Transfers, EthereumHardfork::Cancun);
    let (decoded, _) = decode_dump(&encode_dump(&d), Path::new("cancun.gigagas")).expect("decodes");
    for (orig, back) in d.blocks().zip(decoded.blocks()) {
        // RLP headers are positional: a later optional field (the BAL hash) present while
        // an earlier one (the requests hash, Prague+) is absent is read back into the
        // wrong field.
        assert_eq!(
            (
                back.header.requests_hash,
                back.header.block_access_list_hash
            ),
            (
                orig.header.requests_hash,
                orig.header.block_access_list_hash
            ),
            "block {}: header (requests_hash, block_access_list_hash) changed in the round trip",
            orig.number()
        );
    }
    assert_roundtrips(&d);
}

#[test]
fn encoding_is_deterministic() {
    assert_eq!(encode_dump(dump()), encode_dump(&dump().clone()));
}

#[test]
fn write_then_read_gives_the_same_dump_and_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.gigagas");
    let written = write_dump(dump(), &path).expect("write");
    let file = std::fs::read(&path).unwrap();
    let bytes = encode_dump(dump());
    assert_eq!(file, bytes, "write_dump writes exactly encode_dump's bytes");
    assert_eq!(written.size, bytes.len() as u64);
    assert_eq!(
        written.checksum,
        u64::from_le_bytes(bytes[24..32].try_into().unwrap())
    );

    let (read, info) = read_dump(&path).expect("read");
    assert_eq!(&read, dump());
    assert_eq!(info, written);
    assert_eq!(info.checksum_hex(), format!("{:016x}", written.checksum));
    assert_eq!(info.checksum_hex().len(), 16);
}

#[test]
fn write_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("only.gigagas");
    write_dump(dump(), &path).unwrap();
    // Overwriting an existing dump also goes through a temporary file.
    write_dump(dump(), &path).unwrap();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["only.gigagas"]);
    assert_eq!(&read_dump(&path).unwrap().0, dump());
}

#[test]
fn write_creates_missing_directories() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/c.gigagas");
    write_dump(dump(), &path).unwrap();
    assert_eq!(&read_dump(&path).unwrap().0, dump());
    let names: Vec<_> = std::fs::read_dir(dir.path().join("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["c.gigagas"]);
}

#[test]
fn decoded_access_lists_hash_to_the_header_commitment() {
    let (decoded, _) = decode_dump(&encode_dump(dump()), Path::new("x.gigagas")).unwrap();
    for (block, bal) in decoded.blocks().map(|b| (b, &b.access_list)) {
        assert!(
            !bal.is_empty(),
            "block {} has an empty access list",
            block.number()
        );
        let expected = block
            .header
            .block_access_list_hash
            .expect("BAL hash in header");
        assert_eq!(
            alloy_eip7928::compute_block_access_list_hash(bal),
            expected,
            "block {}",
            block.number()
        );
    }
    // The hash really depends on the list: different blocks' lists hash differently.
    let hashes: Vec<_> = decoded
        .blocks()
        .map(|b| b.header.block_access_list_hash)
        .collect();
    assert_ne!(hashes[0], hashes[1]);
}

#[test]
fn decoded_transactions_keep_their_senders() {
    use alloy_consensus::transaction::SignerRecoverable;
    let (decoded, _) = decode_dump(&encode_dump(dump()), Path::new("x.gigagas")).unwrap();
    for block in decoded.blocks() {
        for tx in &block.transactions {
            assert_eq!(tx.inner().recover_signer().unwrap(), tx.signer());
        }
    }
}

#[test]
fn summary_matches_the_dump() {
    let d = dump();
    let s = d.summary();
    assert_eq!(s.blocks, d.block_count());
    assert_eq!(s.transactions, d.transaction_count());
    assert_eq!(
        s.total_gas,
        d.blocks().map(|b| b.header.gas_used).sum::<u64>()
    );
    assert_eq!(
        s.range,
        Some((d.block(0).unwrap().number(), d.block(2).unwrap().number()))
    );
    assert_eq!(
        s.accounts.0 + s.accounts.1,
        d.segments[0].pre_state.accounts.len()
    );
    assert_eq!(
        s.bal_entries.0,
        d.blocks().map(|b| b.access_list.len()).sum::<usize>()
    );
    assert!(s.largest_tx_share.0 > 0.0 && s.largest_tx_share.2 <= 1.0);
    assert_eq!(s.fork, "Prague");
    let text = s.to_string();
    for key in [
        "transactions",
        "total gas",
        "gas per block",
        "largest tx share",
        "pre-state",
        "BAL entries",
    ] {
        assert!(text.contains(key), "summary lacks `{key}`:\n{text}");
    }
}
