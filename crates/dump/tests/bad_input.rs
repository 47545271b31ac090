// Integration tests see every dependency of the crate; not all are used here.
#![allow(unused_crate_dependencies)]

//! Every kind of bad input gives the right `DumpError` variant, a message that names the
//! file and the problem, and never a panic.
//!
//! The inputs are derived from a real (tiny) generated dump: either its encoded bytes are
//! damaged, or its sections are re-framed by hand following the format documented in
//! `crates/dump/src/format.rs` (32-byte header + framed zstd sections, xxh3-64 checksum of
//! everything after the header), so that the checksum passes and the section parser is
//! what has to catch the problem.

use alloy_hardforks::EthereumHardfork;
use gigagas_dump::{Dump, DumpError, FORMAT_VERSION, MAGIC, decode_dump, encode_dump, read_dump};
use gigagas_workload::{GeneratorConfig, Profile};
use std::{
    path::{Path, PathBuf},
    sync::OnceLock,
};

const HEADER_LEN: usize = 32;

/// A tiny but complete dump (contracts, storage, codes, withdrawals, two blocks).
fn dump() -> &'static Dump {
    static DUMP: OnceLock<Dump> = OnceLock::new();
    DUMP.get_or_init(|| {
        let config = GeneratorConfig {
            profile: Profile::MainnetLike,
            blocks: 2,
            gas_per_block: 3_000_000,
            seed: 7,
            fork: EthereumHardfork::Prague,
            users: 50,
        };
        gigagas_workload::generate(&config, |_, _| {}).expect("tiny dump generates")
    })
}

fn encoded() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| encode_dump(dump()))
}

/// Write `bytes` to a fresh file and read it back with `read_dump`, expecting an error.
fn read_bytes(bytes: &[u8], name: &str) -> (DumpError, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let err = read_dump(&path).expect_err("bad input must not decode");
    (err, path, dir)
}

/// The message names the file and contains every one of `words`.
fn assert_message(err: &DumpError, path: &Path, words: &[&str]) {
    let msg = err.to_string();
    let shown = path.display().to_string();
    assert!(
        msg.contains(&shown),
        "message `{msg}` does not name the file {shown}"
    );
    for w in words {
        assert!(msg.contains(w), "message `{msg}` does not mention `{w}`");
    }
    assert!(!msg.contains('\n'), "message `{msg}` is not a single line");
}

// ------------------------------------------------------------ re-framing helpers

/// One section as it is stored: tag, announced raw length, compressed bytes.
#[derive(Clone)]
struct Frame {
    tag: [u8; 4],
    raw_len: u64,
    comp: Vec<u8>,
}

impl Frame {
    fn new(tag: [u8; 4], raw: &[u8]) -> Self {
        Self {
            tag,
            raw_len: raw.len() as u64,
            comp: zstd::bulk::compress(raw, 1).unwrap(),
        }
    }
    fn raw(&self) -> Vec<u8> {
        zstd::stream::decode_all(self.comp.as_slice()).unwrap()
    }
}

/// Split a well-formed file into its header fields and frames, following the documented
/// format (independently of the crate's decoder).
fn parse_frames(bytes: &[u8]) -> Vec<Frame> {
    assert_eq!(&bytes[..8], &MAGIC);
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
        FORMAT_VERSION
    );
    let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap());
    let content_len = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
    let checksum = u64::from_le_bytes(bytes[24..32].try_into().unwrap());
    let content = &bytes[HEADER_LEN..];
    assert_eq!(content.len() as u64, content_len);
    assert_eq!(xxhash_rust::xxh3::xxh3_64(content), checksum);
    let mut frames = Vec::new();
    let mut off = 0;
    for _ in 0..count {
        let tag: [u8; 4] = content[off..off + 4].try_into().unwrap();
        let raw_len = u64::from_le_bytes(content[off + 4..off + 12].try_into().unwrap());
        let comp_len = u64::from_le_bytes(content[off + 12..off + 20].try_into().unwrap()) as usize;
        off += 20;
        frames.push(Frame {
            tag,
            raw_len,
            comp: content[off..off + comp_len].to_vec(),
        });
        off += comp_len;
    }
    assert_eq!(
        off,
        content.len(),
        "documented framing accounts for every byte"
    );
    frames
}

/// Frame bytes exactly as the format documents them (comp_len taken from `comp`).
fn frame_bytes(f: &Frame, comp_len: u64) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&f.tag);
    out.extend_from_slice(&f.raw_len.to_le_bytes());
    out.extend_from_slice(&comp_len.to_le_bytes());
    out.extend_from_slice(&f.comp);
    out
}

/// Assemble a file with a correct content length and checksum; `section_count` is written
/// as given (normally `frames.len()`).
fn assemble_content(content: &[u8], section_count: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + content.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&section_count.to_le_bytes());
    out.extend_from_slice(&(content.len() as u64).to_le_bytes());
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(content).to_le_bytes());
    out.extend_from_slice(content);
    out
}

fn assemble(frames: &[Frame]) -> Vec<u8> {
    let content: Vec<u8> = frames
        .iter()
        .flat_map(|f| frame_bytes(f, f.comp.len() as u64))
        .collect();
    assemble_content(&content, frames.len() as u32)
}

/// The original frames with section `tag`'s raw content replaced by `raw`.
fn with_section(tag: &[u8; 4], raw: &[u8]) -> Vec<u8> {
    let mut frames = parse_frames(encoded());
    let f = frames
        .iter_mut()
        .find(|f| &f.tag == tag)
        .expect("section present");
    *f = Frame::new(*tag, raw);
    assemble(&frames)
}

fn original_raw(tag: &[u8; 4]) -> Vec<u8> {
    parse_frames(encoded())
        .into_iter()
        .find(|f| &f.tag == tag)
        .expect("section present")
        .raw()
}

/// Decode crafted bytes; they must fail with `CorruptSection` for `tag`.
fn expect_corrupt(bytes: &[u8], tag: &str, words: &[&str]) -> String {
    let path = Path::new("/crafted/dir/corrupt-section.gigagas");
    let err = decode_dump(bytes, path).expect_err("crafted section must not decode");
    match &err {
        DumpError::CorruptSection {
            path: p,
            section,
            detail,
        } => {
            assert_eq!(p, path);
            assert_eq!(section, tag, "wrong section blamed: {err}");
            assert!(!detail.is_empty());
        }
        other => panic!("expected CorruptSection({tag}), got {other:?}"),
    }
    let mut all = vec![tag];
    all.extend_from_slice(words);
    assert_message(&err, path, &all);
    err.to_string()
}

/// Deterministic pseudo-random bytes (xorshift64*).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

// ------------------------------------------------------------ sanity of the helpers

#[test]
fn reframing_an_untouched_dump_decodes_to_the_same_dump() {
    // The re-framing helpers reproduce a valid file, so every failure below is caused by
    // the one thing each test changes.
    let frames = parse_frames(encoded());
    let tags: Vec<&[u8]> = frames.iter().map(|f| f.tag.as_slice()).collect();
    assert_eq!(
        tags,
        [
            b"META", b"SEGS", b"HASH", b"ACCT", b"STOR", b"CODE", b"BLKS", b"BALS"
        ]
        .map(|t| t.as_slice())
    );
    let rebuilt: Vec<Frame> = frames.iter().map(|f| Frame::new(f.tag, &f.raw())).collect();
    let bytes = assemble(&rebuilt);
    let (decoded, info) =
        decode_dump(&bytes, Path::new("reframed.gigagas")).expect("re-framed dump decodes");
    assert_eq!(&decoded, dump());
    assert_eq!(info.size, bytes.len() as u64);
    assert!(dump().blocks.len() >= 2 && dump().transaction_count() > 0);
    assert!(
        !dump().segments[0].pre_state.storage.is_empty()
            && !dump().segments[0].pre_state.codes.is_empty()
    );
}

// ------------------------------------------------------------ Io

#[test]
fn missing_file_is_io_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("does-not-exist.gigagas");
    let err = read_dump(&path).expect_err("missing file");
    match &err {
        DumpError::Io { path: p, source } => {
            assert_eq!(p, &path);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected Io, got {other:?}"),
    }
    assert_message(&err, &path, &[]);
}

#[test]
fn directory_instead_of_file_is_io() {
    let dir = tempfile::tempdir().unwrap();
    let err = read_dump(dir.path()).expect_err("a directory is not a dump");
    assert!(
        matches!(&err, DumpError::Io { path, .. } if path == dir.path()),
        "{err:?}"
    );
    assert_message(&err, dir.path(), &[]);
}

#[test]
fn writing_below_a_regular_file_is_io() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("plain-file");
    std::fs::write(&blocker, b"x").unwrap();
    let path = blocker.join("out.gigagas");
    let err = gigagas_dump::write_dump(dump(), &path).expect_err("parent is a file");
    assert!(
        matches!(&err, DumpError::Io { path: p, .. } if p == &path),
        "{err:?}"
    );
    assert_message(&err, &path, &[]);
}

// ------------------------------------------------------------ NotADump

#[test]
fn text_file_is_not_a_dump() {
    let text = b"this is a perfectly ordinary text file, not a dump at all\n";
    let (err, path, _dir) = read_bytes(text, "notes.txt");
    match &err {
        DumpError::NotADump {
            expected, found, ..
        } => {
            assert_eq!(expected.as_bytes(), MAGIC);
            assert_eq!(found.as_bytes(), &text[..8]);
        }
        other => panic!("expected NotADump, got {other:?}"),
    }
    assert_message(&err, &path, &["not a gigagas dump"]);
}

#[test]
fn empty_and_tiny_files_are_not_dumps() {
    for len in [0usize, 1, 7] {
        let (err, path, _dir) = read_bytes(&MAGIC[..len], "short.gigagas");
        assert!(
            matches!(err, DumpError::NotADump { .. }),
            "{len} bytes: {err:?}"
        );
        assert_message(&err, &path, &["not a gigagas dump"]);
    }
}

#[test]
fn wrong_magic_on_a_real_dump_is_not_a_dump() {
    for i in 0..8 {
        let mut bytes = encoded().to_vec();
        bytes[i] ^= 0x20;
        let (err, path, _dir) = read_bytes(&bytes, "bad-magic.gigagas");
        assert!(
            matches!(err, DumpError::NotADump { .. }),
            "magic byte {i}: {err:?}"
        );
        assert_message(&err, &path, &["not a gigagas dump"]);
    }
}

// ------------------------------------------------------------ UnsupportedVersion

#[test]
fn newer_version_is_unsupported() {
    for version in [FORMAT_VERSION + 1, FORMAT_VERSION + 41, u32::MAX, 0] {
        let mut bytes = encoded().to_vec();
        bytes[8..12].copy_from_slice(&version.to_le_bytes());
        let (err, path, _dir) = read_bytes(&bytes, "future.gigagas");
        match &err {
            DumpError::UnsupportedVersion {
                found, supported, ..
            } => {
                assert_eq!(*found, version);
                assert_eq!(*supported, FORMAT_VERSION);
            }
            other => panic!("version {version}: expected UnsupportedVersion, got {other:?}"),
        }
        assert_message(
            &err,
            &path,
            &[&format!("version {version}"), "not supported"],
        );
    }
}

// ------------------------------------------------------------ Truncated

#[test]
fn truncated_file_is_truncated() {
    let full = encoded();
    let content = (full.len() - HEADER_LEN) as u64;
    for cut in [1usize, 2, 100, full.len() / 2, full.len() - HEADER_LEN] {
        let (err, path, _dir) = read_bytes(&full[..full.len() - cut], "cut.gigagas");
        match &err {
            DumpError::Truncated {
                expected, actual, ..
            } => {
                assert_eq!(*expected, content, "cut {cut}");
                assert_eq!(*actual, content - cut as u64, "cut {cut}");
            }
            other => panic!("cut {cut}: expected Truncated, got {other:?}"),
        }
        assert_message(&err, &path, &["truncated", &content.to_string()]);
    }
}

#[test]
fn header_cut_short_is_truncated() {
    for len in [8usize, 12, 20, 31] {
        let (err, path, _dir) = read_bytes(&encoded()[..len], "header-only.gigagas");
        assert!(
            matches!(err, DumpError::Truncated { .. }),
            "{len} bytes: {err:?}"
        );
        assert_message(&err, &path, &["truncated"]);
    }
}

#[test]
fn padded_file_is_truncated_or_padded() {
    let mut bytes = encoded().to_vec();
    bytes.extend_from_slice(&[0u8; 5]);
    let (err, path, _dir) = read_bytes(&bytes, "padded.gigagas");
    match &err {
        DumpError::Truncated {
            expected, actual, ..
        } => assert_eq!(*actual, *expected + 5),
        other => panic!("expected Truncated, got {other:?}"),
    }
    assert_message(&err, &path, &["padded"]);
}

// ------------------------------------------------------------ ChecksumMismatch

#[test]
fn flipped_content_byte_is_a_checksum_mismatch() {
    let full = encoded();
    let header_checksum = u64::from_le_bytes(full[24..32].try_into().unwrap());
    for pos in [HEADER_LEN, HEADER_LEN + 5, full.len() / 2, full.len() - 1] {
        for bit in [0x01u8, 0x80] {
            let mut bytes = full.to_vec();
            bytes[pos] ^= bit;
            let (err, path, _dir) = read_bytes(&bytes, "flipped.gigagas");
            match &err {
                DumpError::ChecksumMismatch {
                    expected, actual, ..
                } => {
                    assert_eq!(*expected, header_checksum);
                    assert_eq!(*actual, xxhash_rust::xxh3::xxh3_64(&bytes[HEADER_LEN..]));
                    assert_ne!(expected, actual);
                }
                other => panic!("byte {pos}: expected ChecksumMismatch, got {other:?}"),
            }
            assert_message(&err, &path, &["checksum mismatch", "corrupted"]);
        }
    }
}

#[test]
fn flipped_checksum_byte_in_header_is_a_checksum_mismatch() {
    let mut bytes = encoded().to_vec();
    bytes[27] ^= 0x10;
    let (err, path, _dir) = read_bytes(&bytes, "bad-sum.gigagas");
    assert!(matches!(err, DumpError::ChecksumMismatch { .. }), "{err:?}");
    assert_message(&err, &path, &["checksum mismatch"]);
}

// ------------------------------------------------------------ CorruptSection

#[test]
fn garbage_blocks_section_is_corrupt() {
    // Pure garbage: the block count itself is nonsense.
    expect_corrupt(
        &with_section(b"BLKS", b"definitely not RLP-encoded blocks"),
        "BLKS",
        &[],
    );
    // A plausible count followed by garbage.
    let n = dump().blocks.len() as u64;
    let mut raw = n.to_le_bytes().to_vec();
    raw.extend_from_slice(&noise(1, 3_000));
    expect_corrupt(&with_section(b"BLKS", &raw), "BLKS", &[]);
    // An empty section cannot even hold the count.
    expect_corrupt(&with_section(b"BLKS", &[]), "BLKS", &[]);
    // A count that promises more blocks than the bytes could hold.
    let mut raw = original_raw(b"BLKS");
    raw[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    expect_corrupt(&with_section(b"BLKS", &raw), "BLKS", &["announced"]);
}

#[test]
fn blocks_section_with_extra_or_missing_bytes_is_corrupt() {
    let raw = original_raw(b"BLKS");
    let mut longer = raw.clone();
    longer.extend_from_slice(&[0xc0, 0x80, 0x80]);
    expect_corrupt(
        &with_section(b"BLKS", &longer),
        "BLKS",
        &["unexpected bytes"],
    );
    let n = dump().blocks.len() as u64;
    let mut more = raw.clone();
    more[..8].copy_from_slice(&(n + 1).to_le_bytes());
    expect_corrupt(&with_section(b"BLKS", &more), "BLKS", &[]);
    // Every prefix of the section is a section that ends in the middle of a block.
    let step = (raw.len() / 40).max(1);
    for cut in (0..raw.len()).step_by(step).chain([raw.len() - 1]) {
        expect_corrupt(&with_section(b"BLKS", &raw[..cut]), "BLKS", &[]);
    }
}

#[test]
fn random_garbage_in_rlp_sections_never_panics() {
    for (tag, count) in [
        (b"BLKS", dump().blocks.len()),
        (b"BALS", dump().access_lists.len()),
    ] {
        for seed in 0..48u64 {
            let mut raw = (count as u64).to_le_bytes().to_vec();
            raw.extend_from_slice(&noise(seed + 100, 16 + (seed as usize * 37) % 700));
            expect_corrupt(
                &with_section(tag, &raw),
                std::str::from_utf8(tag).unwrap(),
                &[],
            );
        }
    }
}

#[test]
fn garbage_access_lists_section_is_corrupt() {
    let raw = original_raw(b"BALS");
    let mut bad = raw.clone();
    bad.truncate(raw.len() - 3);
    expect_corrupt(&with_section(b"BALS", &bad), "BALS", &["access list"]);
    let mut bad = raw.clone();
    bad.push(0xc0);
    expect_corrupt(&with_section(b"BALS", &bad), "BALS", &["unexpected bytes"]);
}

#[test]
fn bad_account_record_is_corrupt() {
    let raw = original_raw(b"ACCT");
    // First record's existence flag (after the 8-byte count and a 20-byte address).
    let mut bad = raw.clone();
    bad[8 + 20] = 7;
    expect_corrupt(&with_section(b"ACCT", &bad), "ACCT", &["existence flag 7"]);
    // A partial record.
    let mut bad = raw.clone();
    bad.pop();
    expect_corrupt(&with_section(b"ACCT", &bad), "ACCT", &[]);
}

#[test]
fn bad_storage_and_code_sections_are_corrupt() {
    let raw = original_raw(b"STOR");
    let mut bad = raw.clone();
    bad.extend_from_slice(&[0u8; 10]);
    expect_corrupt(&with_section(b"STOR", &bad), "STOR", &["records"]);
    expect_corrupt(&with_section(b"STOR", &raw[..5]), "STOR", &[]);

    let raw = original_raw(b"CODE");
    // First code's length field (after the count and the 32-byte hash) made huge.
    let mut bad = raw.clone();
    bad[8 + 32..8 + 36].copy_from_slice(&u32::MAX.to_le_bytes());
    expect_corrupt(&with_section(b"CODE", &bad), "CODE", &["truncated"]);
    let mut bad = raw.clone();
    bad.push(0);
    expect_corrupt(&with_section(b"CODE", &bad), "CODE", &["unexpected bytes"]);
}

#[test]
fn bad_metadata_and_hashes_are_corrupt() {
    expect_corrupt(&with_section(b"META", b"{\"name\": 12"), "META", &["JSON"]);
    let raw = original_raw(b"HASH");
    expect_corrupt(&with_section(b"HASH", &raw[..raw.len() - 1]), "HASH", &[]);
}

#[test]
fn missing_section_is_corrupt() {
    for missing in [*b"META", *b"CODE", *b"BALS"] {
        let frames: Vec<Frame> = parse_frames(encoded())
            .into_iter()
            .filter(|f| f.tag != missing)
            .collect();
        expect_corrupt(
            &assemble(&frames),
            std::str::from_utf8(&missing).unwrap(),
            &["missing"],
        );
    }
}

#[test]
fn broken_compression_is_corrupt() {
    // Not zstd at all.
    let mut frames = parse_frames(encoded());
    frames[2].comp = b"not zstd data".to_vec();
    expect_corrupt(&assemble(&frames), "HASH", &["zstd"]);
    // Valid zstd, but a different length than announced.
    let mut frames = parse_frames(encoded());
    frames[3].raw_len += 1;
    expect_corrupt(&assemble(&frames), "ACCT", &["decompressed"]);
}

#[test]
fn bad_section_framing_is_corrupt() {
    let frames = parse_frames(encoded());
    // Last frame announces more compressed bytes than the file holds.
    let mut content: Vec<u8> = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let extra = if i + 1 == frames.len() { 1 } else { 0 };
        content.extend(frame_bytes(f, f.comp.len() as u64 + extra));
    }
    expect_corrupt(
        &assemble_content(&content, frames.len() as u32),
        "BALS",
        &["compressed bytes"],
    );
    // The header (outside the checksum) claims one section more or one fewer.
    let content: Vec<u8> = frames
        .iter()
        .flat_map(|f| frame_bytes(f, f.comp.len() as u64))
        .collect();
    expect_corrupt(
        &assemble_content(&content, frames.len() as u32 + 1),
        "?",
        &["past the end"],
    );
    expect_corrupt(
        &assemble_content(&content, frames.len() as u32 - 1),
        "?",
        &["after the last section"],
    );
    expect_corrupt(&assemble_content(&content, u32::MAX), "?", &[]);
}

// ------------------------------------------------------------ Inconsistent

fn expect_inconsistent(d: &Dump, words: &[&str]) {
    let bytes = encode_dump(d);
    let (err, path, _dir) = read_bytes(&bytes, "inconsistent.gigagas");
    assert!(
        matches!(err, DumpError::Inconsistent { .. }),
        "expected Inconsistent, got {err:?}"
    );
    let mut all = vec!["inconsistent"];
    all.extend_from_slice(words);
    assert_message(&err, &path, &all);
}

#[test]
fn fewer_access_lists_than_blocks_is_inconsistent() {
    let mut d = dump().clone();
    d.access_lists.pop();
    let (bals, blocks) = (d.access_lists.len(), d.blocks.len());
    assert_ne!(bals, blocks);
    expect_inconsistent(
        &d,
        &[&format!("{bals} block access lists for {blocks} blocks")],
    );
}

#[test]
fn more_access_lists_than_blocks_is_inconsistent() {
    let mut d = dump().clone();
    d.access_lists.push(d.access_lists[0].clone());
    expect_inconsistent(&d, &["block access lists"]);
}

#[test]
fn gap_between_blocks_is_inconsistent() {
    let mut d = dump().clone();
    d.blocks[1].header.number += 1;
    expect_inconsistent(&d, &["consecutive"]);
}

#[test]
fn receipts_not_matching_transactions_is_inconsistent() {
    let mut d = dump().clone();
    let b = d
        .blocks
        .iter()
        .position(|b| !b.receipts.is_empty())
        .expect("a block with transactions");
    d.blocks[b].receipts.pop();
    expect_inconsistent(&d, &["receipts for"]);

    let mut d = dump().clone();
    d.blocks[b].receipts[0].cumulative_gas_used += 1;
    expect_inconsistent(&d, &["cumulative gas"]);
}

#[test]
fn withdrawals_without_root_is_inconsistent() {
    let mut d = dump().clone();
    assert!(
        !d.blocks[0].withdrawals.is_empty(),
        "generated blocks carry withdrawals"
    );
    // A pre-Shanghai header (RLP cannot carry later fields without the withdrawals root).
    let h = &mut d.blocks[0].header;
    h.withdrawals_root = None;
    h.blob_gas_used = None;
    h.excess_blob_gas = None;
    h.parent_beacon_block_root = None;
    h.requests_hash = None;
    h.block_access_list_hash = None;
    h.slot_number = None;
    expect_inconsistent(&d, &["withdrawals"]);
}

#[test]
fn unordered_block_hashes_are_inconsistent() {
    let mut d = dump().clone();
    d.segments[0].block_hashes.swap(0, 1);
    expect_inconsistent(&d, &["block hashes"]);
}

// ------------------------------------------------------------ crafted files: never a panic

/// Mutate valid dumps many ways — flipped bytes, counts and lengths set huge, truncated
/// sections, announced lengths far past the data — with the framing and checksum made
/// right again so the decoder really parses the crafted content. Every outcome must be a
/// clear one-line error or a dump that encodes back to a valid file; never a panic (an
/// abort on a huge allocation would end the test process and fail it too).
#[test]
fn mutated_dumps_give_an_error_or_a_valid_dump_never_a_panic() {
    let frames = parse_frames(encoded());
    let mut seed = 0x5eed_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut errors, mut decoded) = (0, 0);
    for round in 0..600 {
        let mut frames = frames.clone();
        let s = (next() % frames.len() as u64) as usize;
        let mut raw = frames[s].raw();
        let kind = round % 5;
        match kind {
            // One byte flipped.
            0 if !raw.is_empty() => {
                let i = (next() % raw.len() as u64) as usize;
                raw[i] ^= 1 << (next() % 8);
            }
            // A u64 (a count, a length, a number) made huge.
            1 if raw.len() >= 8 => {
                let i = (next() % (raw.len() as u64 - 7)) as usize;
                let v = [u64::MAX, u64::MAX / 2, 1 << 40, 1 << 32, next()][(next() % 5) as usize];
                raw[i..i + 8].copy_from_slice(&v.to_le_bytes());
            }
            // A u32 (a code length) made huge.
            2 if raw.len() >= 4 => {
                let i = (next() % (raw.len() as u64 - 3)) as usize;
                raw[i..i + 4].copy_from_slice(&u32::MAX.to_le_bytes());
            }
            // Cut short.
            3 => raw.truncate((next() % (raw.len() as u64 + 1)) as usize),
            _ => {}
        }
        frames[s] = Frame::new(frames[s].tag, &raw);
        if kind == 4 {
            // The announced decompressed length far past the data.
            frames[s].raw_len =
                [u64::MAX, 1 << 40, frames[s].raw_len * 4096][(next() % 3) as usize];
        }
        let bytes = assemble(&frames);
        let tag = String::from_utf8_lossy(&frames[s].tag).into_owned();
        let outcome =
            std::panic::catch_unwind(|| decode_dump(&bytes, Path::new("mutated.gigagas")));
        match outcome {
            Err(_) => {
                panic!("round {round}: mutation {kind} of section {tag} panicked the decoder")
            }
            Ok(Err(e)) => {
                errors += 1;
                let msg = e.to_string();
                assert!(
                    msg.contains("mutated.gigagas") && !msg.contains('\n'),
                    "round {round}: {msg}"
                );
            }
            Ok(Ok((dump, _))) => {
                decoded += 1;
                // Whatever decodes is a consistent dump that survives a round trip.
                let again = encode_dump(&dump);
                let (back, _) = decode_dump(&again, Path::new("again.gigagas"))
                    .expect("a decoded dump re-encodes");
                assert_eq!(back, dump, "round {round}");
            }
        }
    }
    assert!(
        errors > 300,
        "most mutations must be caught ({errors} errors, {decoded} decoded)"
    );
}

#[test]
fn a_section_announcing_a_huge_expansion_is_refused_before_allocating() {
    let mut frames = parse_frames(encoded());
    let i = frames.iter().position(|f| &f.tag == b"ACCT").unwrap();
    frames[i].raw_len = 1 << 50;
    expect_corrupt(&assemble(&frames), "ACCT", &["more than"]);
}

#[test]
fn a_block_numbered_u64_max_is_inconsistent_not_an_overflow() {
    let mut d = dump().clone();
    d.blocks[0].header.number = u64::MAX;
    expect_inconsistent(&d, &["consecutive"]);
}

#[test]
fn segments_that_do_not_cover_the_blocks_are_inconsistent() {
    let mut d = dump().clone();
    d.segments[0].blocks += 1;
    expect_inconsistent(&d, &["segments hold"]);
    let mut d = dump().clone();
    let mut second = d.segments[0].clone();
    d.segments[0].blocks = 1;
    second.blocks = 0;
    d.segments.push(second);
    expect_inconsistent(&d, &["segment 1 has no blocks"]);
}

#[test]
fn a_dump_of_independent_segments_round_trips() {
    // Two segments whose blocks are not consecutive across the boundary.
    let mut d = dump().clone();
    let mut second = d.segments[0].clone();
    d.segments[0].blocks = 1;
    second.blocks = 1;
    second.block_hashes.truncate(3);
    d.segments.push(second);
    d.blocks[1].header.number += 1000;
    let bytes = encode_dump(&d);
    let (back, _) =
        decode_dump(&bytes, Path::new("segments.gigagas")).expect("two segments decode");
    assert_eq!(back, d);
    assert_eq!(
        back.segment_ranges().map(|(_, r)| r).collect::<Vec<_>>(),
        [0..1, 1..2]
    );
    assert_eq!(back.summary().segments.len(), 2);
}
