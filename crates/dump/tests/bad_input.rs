//! Every kind of bad input gives the right `DumpError` variant, a message that names the
//! file and the problem, and never a panic.
//!
//! The inputs are derived from a real (tiny) generated dump: either its encoded bytes are
//! damaged, or its sections are re-framed by hand following the format documented in
//! `crates/dump/src/format.rs` (32-byte header + framed zstd sections, xxh3-64 checksum of
//! everything after the header), so that the checksum passes and the section parser is
//! what has to catch the problem.

use alloy_hardforks::EthereumHardfork;
use gigagas_dump::{
    Dump, DumpError, FORMAT_VERSION, InvariantError, MAGIC, decode_dump, encode_dump, inspect_dump,
    read_dump,
};
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

/// Write `bytes` to a fresh file and read it back with `read_dump`, expecting an error;
/// `inspect_dump`, which streams the blocks instead of decoding them all, must refuse the
/// file too.
fn read_bytes(bytes: &[u8], name: &str) -> (DumpError, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let err = read_dump(&path).expect_err("bad input must not decode");
    if path.is_file() {
        let streamed = inspect_dump(&path).expect_err("bad input must not be summarised");
        // Checks that come before any block is read fail the same way in both.
        if matches!(
            err,
            DumpError::Truncated { .. }
                | DumpError::ChecksumMismatch { .. }
                | DumpError::NotADump { .. }
                | DumpError::UnsupportedVersion { .. }
        ) {
            assert_eq!(streamed.to_string(), err.to_string());
        }
    }
    (err, path, dir)
}

/// The whole message as a command line prints it (anyhow's `{:#}`): the error, then each
/// source after a colon.
fn full_message(err: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    msg
}

/// The full message names the file and contains every one of `words`.
fn assert_message(err: &DumpError, path: &Path, words: &[&str]) {
    let msg = full_message(err);
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
    // A dump without witnesses is written as version 2 (the format's docs).
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
        gigagas_dump::version_for(dump())
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
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("corrupt-section.gigagas");
    std::fs::write(&file, bytes).unwrap();
    inspect_dump(&file).expect_err("crafted section must not be summarised");
    match &err {
        DumpError::CorruptSection {
            path: p,
            section,
            problem,
        } => {
            assert_eq!(p, path);
            assert_eq!(section, tag, "wrong section blamed: {err}");
            assert!(!problem.to_string().is_empty());
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
    assert!(dump().block_count() >= 2 && dump().transaction_count() > 0);
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
    let n = dump().block_count() as u64;
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
    let n = dump().block_count() as u64;
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
        (b"BLKS", dump().block_count()),
        (b"BALS", dump().block_count()),
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
    // The streaming summary checks the same invariants, block by block.
    let streamed = inspect_dump(&path).expect_err("an inconsistent dump is not summarised");
    assert_eq!(streamed.to_string(), err.to_string());
    let mut all = vec!["inconsistent"];
    all.extend_from_slice(words);
    assert_message(&err, &path, &all);
}

/// The raw `BALS` section of `d` (each block's access list, in order).
fn bals_of(d: &Dump) -> Vec<u8> {
    parse_frames(&encode_dump(d))
        .into_iter()
        .find(|f| &f.tag == b"BALS")
        .expect("section present")
        .raw()
}

#[test]
fn fewer_access_lists_than_blocks_is_corrupt() {
    // A file whose BALS holds one list fewer than BLKS has blocks.
    let mut d = dump().clone();
    d.segments[0].blocks.pop();
    let blocks = dump().block_count();
    let bals = blocks - 1;
    expect_corrupt(
        &with_section(b"BALS", &bals_of(&d)),
        "BALS",
        &[&format!("{bals} block access lists for {blocks} blocks")],
    );
}

#[test]
fn more_access_lists_than_blocks_is_corrupt() {
    let mut d = dump().clone();
    let first = d.segments[0].blocks[0].clone();
    d.segments[0].blocks.push(first);
    let blocks = dump().block_count();
    expect_corrupt(
        &with_section(b"BALS", &bals_of(&d)),
        "BALS",
        &[&format!(
            "{} block access lists for {blocks} blocks",
            blocks + 1
        )],
    );
}

#[test]
fn gap_between_blocks_is_inconsistent() {
    let mut d = dump().clone();
    d.block_mut(1).unwrap().header.number += 1;
    expect_inconsistent(&d, &["consecutive"]);
}

#[test]
fn receipts_not_matching_transactions_is_inconsistent() {
    let mut d = dump().clone();
    let b = d
        .blocks()
        .position(|b| !b.receipts.is_empty())
        .expect("a block with transactions");
    d.block_mut(b).unwrap().receipts.pop();
    expect_inconsistent(&d, &["receipts for"]);

    let mut d = dump().clone();
    d.block_mut(b).unwrap().receipts[0].cumulative_gas_used += 1;
    expect_inconsistent(&d, &["cumulative gas"]);
}

#[test]
fn withdrawals_without_root_is_inconsistent() {
    let mut d = dump().clone();
    assert!(
        !d.block(0).unwrap().withdrawals.is_empty(),
        "generated blocks carry withdrawals"
    );
    // A pre-Shanghai header (RLP cannot carry later fields without the withdrawals root).
    let h = &mut d.block_mut(0).unwrap().header;
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
                let msg = full_message(&e);
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
    d.block_mut(0).unwrap().header.number = u64::MAX;
    expect_inconsistent(&d, &["consecutive"]);
}

/// A `SEGS` section: the number of segments, then each one's block count.
fn segs(sizes: &[u64]) -> Vec<u8> {
    let mut raw = (sizes.len() as u64).to_le_bytes().to_vec();
    for n in sizes {
        raw.extend_from_slice(&n.to_le_bytes());
    }
    raw
}

#[test]
fn segments_that_do_not_cover_the_blocks_are_corrupt() {
    let blocks = dump().block_count() as u64;
    assert_eq!(
        original_raw(b"SEGS"),
        segs(&[blocks]),
        "the documented layout"
    );
    expect_corrupt(
        &with_section(b"SEGS", &segs(&[blocks + 1])),
        "SEGS",
        &[&format!(
            "the segments hold {} blocks but the dump has {blocks}",
            blocks + 1
        )],
    );
    expect_corrupt(
        &with_section(b"SEGS", &segs(&[blocks - 1])),
        "SEGS",
        &["segments hold"],
    );
    expect_corrupt(
        &with_section(b"SEGS", &segs(&[])),
        "SEGS",
        &["segments hold 0 blocks"],
    );
    expect_corrupt(
        &with_section(b"SEGS", &segs(&[blocks, 0])),
        "SEGS",
        &["segment 1 has no blocks"],
    );
    expect_corrupt(
        &with_section(b"SEGS", &segs(&[u64::MAX, 2])),
        "SEGS",
        &["segments hold"],
    );
}

#[test]
fn a_segment_without_blocks_is_inconsistent() {
    let mut d = dump().clone();
    let mut second = d.segments[0].clone();
    second.blocks.clear();
    d.segments.push(second);
    assert_eq!(d.validate(), Err(InvariantError::EmptySegment(1)));
}

#[test]
fn a_dump_of_independent_segments_round_trips() {
    // Two segments whose blocks are not consecutive across the boundary.
    let mut d = dump().clone();
    let mut second = d.segments[0].clone();
    second.blocks.remove(0);
    second.block_hashes.truncate(3);
    d.segments[0].blocks.truncate(1);
    d.segments.push(second);
    d.segments[1].blocks[0].header.number += 1000;
    assert_eq!(d.block_count(), dump().block_count());
    let bytes = encode_dump(&d);
    let (back, _) =
        decode_dump(&bytes, Path::new("segments.gigagas")).expect("two segments decode");
    assert_eq!(back, d);
    assert_eq!(
        back.segments
            .iter()
            .map(|s| s.blocks.len())
            .collect::<Vec<_>>(),
        [1, 1]
    );
    assert_eq!(back.summary().segments.len(), 2);
}

// ------------------------------------------------------------ bounded reading

/// A 32-byte header as the format documents it.
fn header(section_count: u32, content_len: u64, checksum: u64) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    h.extend_from_slice(&section_count.to_le_bytes());
    h.extend_from_slice(&content_len.to_le_bytes());
    h.extend_from_slice(&checksum.to_le_bytes());
    h
}

#[test]
fn a_huge_sparse_file_whose_header_announces_5_bytes_fails_without_reading_it() {
    // 4 GB on disk (sparse: no blocks are written), a header announcing 5 bytes of
    // content: the size check refuses it before the body is read or allocated.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse.gigagas");
    let file = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut &file, &header(8, 5, 0)).unwrap();
    file.set_len(4 << 30).unwrap();
    drop(file);
    let start = std::time::Instant::now();
    let err = read_dump(&path).expect_err("a sparse file is not a dump");
    let took = start.elapsed();
    match &err {
        DumpError::Truncated {
            expected, actual, ..
        } => assert_eq!((*expected, *actual), (5, (4 << 30) - HEADER_LEN as u64)),
        other => panic!("expected Truncated, got {other:?}"),
    }
    assert_message(&err, &path, &["truncated or padded", "promises 5 bytes"]);
    assert!(took.as_millis() < 1000, "took {took:?}: the body was read");
}

/// `read_dump` on `path` from another thread, which must return within a second (a FIFO
/// opened for reading with no writer would block forever).
#[cfg(unix)]
fn read_within_a_second(path: &Path) -> DumpError {
    let (tx, rx) = std::sync::mpsc::channel();
    let p = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(read_dump(&p).map(drop));
    });
    rx.recv_timeout(std::time::Duration::from_secs(1))
        .expect("read_dump blocked on the input")
        .expect_err("not a dump")
}

#[cfg(unix)]
#[test]
fn dev_zero_a_fifo_and_a_socket_are_refused_before_they_are_read() {
    // Read, `/dev/zero` never ends and a FIFO with no writer blocks the open forever.
    use gigagas_fs_util::{FileKind, NotARegularFile};
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.gigagas");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let socket = dir.path().join("socket.gigagas");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let mut cases = vec![(socket, FileKind::Socket)];
    if Path::new("/dev/zero").exists() {
        cases.push((PathBuf::from("/dev/zero"), FileKind::CharDevice));
    }
    if made {
        cases.push((fifo, FileKind::Fifo));
    } else {
        eprintln!("skipped the FIFO case: mkfifo is not available");
    }
    for (path, kind) in cases {
        let err = read_within_a_second(&path);
        let DumpError::Io { path: p, source } = &err else {
            panic!("{}: expected Io, got {err:?}", path.display())
        };
        assert_eq!(p, &path);
        let refused = source
            .get_ref()
            .and_then(|e| e.downcast_ref::<NotARegularFile>());
        assert_eq!(refused.map(|r| r.kind), Some(kind), "{err:?}");
        assert_message(&err, &path, &["not a regular file"]);
    }
}

#[test]
fn a_header_announcing_more_content_than_any_dump_is_too_large() {
    use gigagas_dump::format::MAX_DECOMPRESSED;
    for announced in [MAX_DECOMPRESSED + 1, 1 << 50, u64::MAX] {
        let bytes = header(8, announced, 0);
        let (err, path, _dir) = read_bytes(&bytes, "huge.gigagas");
        match &err {
            DumpError::TooLarge {
                announced: a,
                limit,
                ..
            } => assert_eq!((*a, *limit), (announced, MAX_DECOMPRESSED)),
            other => panic!("{announced}: expected TooLarge, got {other:?}"),
        }
        assert_message(&err, &path, &["announces", "more than"]);
        let err = decode_dump(&bytes, &path).expect_err("in memory too");
        assert!(matches!(err, DumpError::TooLarge { .. }), "{err:?}");
    }
}

/// A frame whose compressed bytes are not zstd at all: decompressing it would fail with a
/// zstd error, so an error that is not about zstd shows it was refused before.
fn undecompressable(tag: [u8; 4]) -> Frame {
    Frame {
        tag,
        raw_len: 1000,
        comp: b"certainly not a zstd frame".to_vec(),
    }
}

#[test]
fn a_repeated_section_is_refused_before_it_is_decompressed() {
    for (i, tag) in [*b"META", *b"ACCT", *b"BALS"].into_iter().enumerate() {
        let mut frames = parse_frames(encoded());
        frames.insert(i * 3, undecompressable(tag));
        let msg = expect_corrupt(
            &assemble(&frames),
            std::str::from_utf8(&tag).unwrap(),
            &["repeated"],
        );
        assert!(!msg.contains("zstd"), "{msg}");
    }
}

#[test]
fn an_unknown_section_is_refused_before_it_is_decompressed() {
    let mut frames = parse_frames(encoded());
    frames.insert(4, undecompressable(*b"XTRA"));
    let msg = expect_corrupt(&assemble(&frames), "XTRA", &["unknown section"]);
    assert!(!msg.contains("zstd"), "{msg}");
    // A tag of control bytes is named escaped: nothing raw reaches a terminal.
    let mut frames = parse_frames(encoded());
    frames.push(undecompressable(*b"\x1b[2J"));
    let msg = expect_corrupt(&assemble(&frames), "\\x1b[2J", &["unknown section"]);
    assert!(!msg.contains('\x1b'), "{msg:?}");
}

#[test]
fn a_missing_section_is_named_before_anything_is_decompressed() {
    let mut frames = parse_frames(encoded());
    frames.retain(|f| &f.tag != b"HASH");
    frames[0] = undecompressable(*b"META");
    expect_corrupt(&assemble(&frames), "HASH", &["missing"]);
}

#[test]
fn the_decompression_budget_is_for_the_whole_file_not_each_section() {
    // Every section announces what a per-section 1024:1 (+ 1 MiB) bound allows: each on
    // its own is within it, all together far past the file's budget.
    let mut frames = parse_frames(encoded());
    for f in &mut frames {
        f.raw_len = f.comp.len() as u64 * 1024 + (1 << 20);
    }
    let bytes = assemble(&frames);
    // The section at which the running sum passes 1024 × content + 1 MiB is blamed.
    let budget = (bytes.len() - HEADER_LEN) as u64 * 1024 + (1 << 20);
    let mut sum = 0;
    let over = frames
        .iter()
        .find(|f| {
            sum += f.raw_len;
            sum > budget
        })
        .expect("all together they pass the budget");
    let tag = String::from_utf8_lossy(&over.tag).into_owned();
    expect_corrupt(&bytes, &tag, &["budget", "1024:1"]);
}

#[test]
fn the_decompression_budget_has_an_absolute_cap() {
    // 17 MiB of content at 1024:1 would allow 17 GiB; the cap is 16 GiB. The compressed
    // bytes are noise: refused before decompression, they are never looked at.
    use gigagas_dump::format::MAX_DECOMPRESSED;
    let mut frames = parse_frames(encoded());
    let blocks = frames.iter().position(|f| &f.tag == b"BLKS").unwrap();
    frames[blocks].comp = noise(3, 17 << 20);
    frames[blocks].raw_len = MAX_DECOMPRESSED;
    expect_corrupt(
        &assemble(&frames),
        "BLKS",
        &["budget", &format!("at most {MAX_DECOMPRESSED}")],
    );
}

// ------------------------------------------------------------ whole-dump validation

/// Encode `d`, read it back: it must be refused as inconsistent. Returns the broken
/// invariant and the full message (which names the file).
fn inconsistency(d: &Dump) -> (InvariantError, String) {
    let (err, path, _dir) = read_bytes(&encode_dump(d), "inconsistent.gigagas");
    let msg = full_message(&err);
    assert_message(&err, &path, &["inconsistent dump"]);
    match err {
        DumpError::Inconsistent { source, .. } => (*source, msg),
        other => panic!("expected Inconsistent, got {other:?}"),
    }
}

/// Index of the first pre-state account of segment 0 that exists and has code.
fn account_with_code(d: &Dump) -> usize {
    d.segments[0]
        .pre_state
        .accounts
        .iter()
        .position(|a| {
            a.state
                .is_some_and(|s| s.code_hash != alloy_primitives::KECCAK256_EMPTY)
        })
        .expect("the tiny dump has contracts")
}

#[test]
fn code_that_does_not_hash_to_its_hash_is_refused() {
    let mut d = dump().clone();
    let (hash, code) = &mut d.segments[0].pre_state.codes[0];
    let stored = *hash;
    let mut bytes = code.to_vec();
    *bytes.last_mut().unwrap() ^= 1;
    let actual = alloy_primitives::keccak256(&bytes);
    *code = bytes.into();
    let (e, msg) = inconsistency(&d);
    assert_eq!(
        e,
        InvariantError::CodeHash {
            segment: 0,
            code_hash: stored,
            actual
        }
    );
    assert!(
        msg.contains("segment 0") && msg.contains(&stored.to_string()),
        "{msg}"
    );
}

#[test]
fn an_account_whose_code_is_not_held_is_refused() {
    let mut d = dump().clone();
    let i = account_with_code(&d);
    let a = d.segments[0].pre_state.accounts[i];
    let code_hash = a.state.unwrap().code_hash;
    d.segments[0].pre_state.codes.retain(|c| c.0 != code_hash);
    assert_eq!(
        inconsistency(&d).0,
        InvariantError::MissingCode {
            segment: 0,
            account: a.address,
            code_hash
        }
    );
}

#[test]
fn codes_out_of_order_or_twice_are_refused() {
    let mut d = dump().clone();
    let codes = &mut d.segments[0].pre_state.codes;
    codes.push(codes[0].clone());
    let code_hash = codes[0].0;
    assert_eq!(
        inconsistency(&d).0,
        InvariantError::CodeOrder {
            segment: 0,
            code_hash
        }
    );
}

#[test]
fn duplicate_or_unsorted_pre_state_accounts_are_refused() {
    // Duplicate: the first entry would have won the replay's lookup.
    let mut d = dump().clone();
    let accounts = &mut d.segments[0].pre_state.accounts;
    let twice = accounts[1];
    accounts.insert(1, twice);
    let (e, msg) = inconsistency(&d);
    assert_eq!(
        e,
        InvariantError::PreStateAccountOrder {
            segment: 0,
            account: twice.address,
            previous: twice.address
        }
    );
    assert!(msg.contains(&twice.address.to_string()), "{msg}");
    // Unsorted.
    let mut d = dump().clone();
    let accounts = &mut d.segments[0].pre_state.accounts;
    accounts.swap(0, 1);
    let (first, second) = (accounts[0].address, accounts[1].address);
    assert_eq!(
        inconsistency(&d).0,
        InvariantError::PreStateAccountOrder {
            segment: 0,
            account: second,
            previous: first
        }
    );
}

#[test]
fn duplicate_or_unsorted_pre_state_slots_are_refused() {
    let mut d = dump().clone();
    let storage = &mut d.segments[0].pre_state.storage;
    let mut twice = storage[0];
    twice.value += alloy_primitives::U256::from(1);
    storage.insert(1, twice);
    assert_eq!(
        inconsistency(&d).0,
        InvariantError::PreStateSlotOrder {
            segment: 0,
            account: twice.address,
            slot: twice.slot
        }
    );
}

#[test]
fn storage_of_an_unlisted_account_is_refused() {
    let mut d = dump().clone();
    let stranger = alloy_primitives::Address::repeat_byte(0xee);
    assert!(d.segments[0].pre_state.account(stranger).is_none());
    d.segments[0].pre_state.storage.push(gigagas_dump::PreSlot {
        address: stranger,
        slot: alloy_primitives::U256::from(1),
        value: alloy_primitives::U256::from(2),
    });
    assert_eq!(
        inconsistency(&d).0,
        InvariantError::SlotOfUnlistedAccount {
            segment: 0,
            account: stranger,
            slot: alloy_primitives::U256::from(1)
        }
    );
}

#[test]
fn nonzero_storage_of_an_absent_account_is_refused() {
    // The first slot with a nonzero value: its account recorded as absent.
    let mut d = dump().clone();
    let pre = &mut d.segments[0].pre_state;
    let slot = *pre
        .storage
        .iter()
        .find(|s| !s.value.is_zero())
        .expect("the tiny dump has nonzero storage");
    let account = pre
        .accounts
        .iter_mut()
        .find(|a| a.address == slot.address)
        .unwrap();
    account.state = None;
    assert_eq!(
        inconsistency(&d).0,
        InvariantError::StorageOfAbsentAccount {
            segment: 0,
            account: slot.address,
            slot: slot.slot,
            value: slot.value
        }
    );
}

#[test]
fn zero_storage_of_an_absent_account_is_accepted() {
    // What a block that creates an account and writes its storage needs: the account
    // recorded absent, its slots recorded as zero.
    let mut d = dump().clone();
    let pre = &mut d.segments[0].pre_state;
    let created = alloy_primitives::Address::repeat_byte(0xcc);
    pre.accounts.push(gigagas_dump::PreAccount {
        address: created,
        state: None,
    });
    pre.storage.push(gigagas_dump::PreSlot {
        address: created,
        slot: alloy_primitives::U256::from(7),
        value: alloy_primitives::U256::ZERO,
    });
    pre.canonicalize();
    decode_dump(&encode_dump(&d), Path::new("created.gigagas")).expect("consistent");
}

#[test]
fn duplicate_or_unsorted_access_list_accounts_are_refused() {
    use alloy_eip7928::BlockAccessListValidationError as E;
    // Duplicate: the later entry would have won.
    let mut d = dump().clone();
    let first = d.block(1).unwrap().access_list[0].clone();
    d.block_mut(1).unwrap().access_list.insert(1, first.clone());
    let block = d.block(1).unwrap().number();
    let (e, msg) = inconsistency(&d);
    assert_eq!(
        e,
        InvariantError::MalformedAccessList {
            segment: 0,
            block,
            error: E::DuplicateAccount {
                address: first.address
            }
        }
    );
    for word in [
        "segment 0",
        &format!("block {block}"),
        &first.address.to_string(),
    ] {
        assert!(msg.contains(word), "`{msg}` lacks `{word}`");
    }
    // Unsorted.
    let mut d = dump().clone();
    d.block_mut(0).unwrap().access_list.swap(0, 1);
    let (previous, address) = (
        d.block(0).unwrap().access_list[0].address,
        d.block(0).unwrap().access_list[1].address,
    );
    assert_eq!(
        inconsistency(&d).0,
        InvariantError::MalformedAccessList {
            segment: 0,
            block: d.block(0).unwrap().number(),
            error: E::AccountsOutOfOrder { previous, address }
        }
    );
}

#[test]
fn an_access_list_account_missing_from_the_pre_state_is_refused() {
    let mut d = dump().clone();
    let address = d.block(0).unwrap().access_list[0].address;
    let pre = &mut d.segments[0].pre_state;
    pre.accounts.retain(|a| a.address != address);
    pre.storage.retain(|s| s.address != address);
    assert_eq!(
        inconsistency(&d).0,
        InvariantError::AccessListAccountNotInPreState {
            segment: 0,
            block: d.block(0).unwrap().number(),
            account: address
        }
    );
}

#[test]
fn an_access_list_slot_missing_from_the_pre_state_is_refused() {
    let mut d = dump().clone();
    let (b, account) = d
        .blocks()
        .map(|b| &b.access_list)
        .enumerate()
        .find_map(|(b, list)| {
            list.iter()
                .find(|a| !a.storage_changes.is_empty())
                .map(|a| (b, a.clone()))
        })
        .expect("the tiny dump writes storage");
    let slot = account.storage_changes[0].slot;
    // Only the first block naming the slot can be blamed.
    let first = d
        .blocks()
        .map(|b| &b.access_list)
        .position(|list| {
            list.iter().any(|a| {
                a.address == account.address
                    && (a.storage_changes.iter().any(|c| c.slot == slot)
                        || a.storage_reads.contains(&slot))
            })
        })
        .unwrap();
    assert!(first <= b);
    d.segments[0]
        .pre_state
        .storage
        .retain(|s| (s.address, s.slot) != (account.address, slot));
    assert_eq!(
        inconsistency(&d).0,
        InvariantError::AccessListSlotNotInPreState {
            segment: 0,
            block: d.block(first).unwrap().number(),
            account: account.address,
            slot
        }
    );
}

#[test]
fn a_block_hash_at_or_after_the_segments_first_block_is_refused() {
    let first_block = dump().segments[0].blocks[0].number();
    for number in [first_block, first_block + 1, u64::MAX] {
        let mut d = dump().clone();
        d.segments[0]
            .block_hashes
            .push((number, alloy_primitives::B256::repeat_byte(9)));
        let (e, msg) = inconsistency(&d);
        assert_eq!(
            e,
            InvariantError::BlockHashNotBefore {
                segment: 0,
                number,
                first_block
            }
        );
        assert!(msg.contains(&format!("block {number}")), "{msg}");
    }
}

#[test]
fn receipts_that_do_not_add_up_to_the_headers_gas_are_refused() {
    let mut d = dump().clone();
    d.block_mut(1).unwrap().header.gas_used += 1;
    let block = d.block(1).unwrap().number();
    let receipts = d
        .block(1)
        .unwrap()
        .receipts
        .last()
        .unwrap()
        .cumulative_gas_used;
    assert_eq!(
        inconsistency(&d).0,
        InvariantError::BlockGasUsed {
            block,
            header: receipts + 1,
            receipts
        }
    );
}

// ------------------------------------------------------------ empty work

#[test]
fn a_dump_with_nothing_to_measure_loads_but_check_has_work_refuses_it() {
    // No blocks at all: consistent, loads (it can be written and inspected) ...
    let empty = Dump {
        segments: Vec::new(),
        ..dump().clone()
    };
    let (back, _) = decode_dump(&encode_dump(&empty), Path::new("empty.gigagas"))
        .expect("an empty dump is consistent");
    // ... but has nothing to time.
    assert_eq!(back.check_has_work(), Err(InvariantError::NoBlocks));
    assert!(
        InvariantError::NoBlocks
            .to_string()
            .contains("nothing to measure")
    );
    // Blocks without a transaction.
    let mut idle = dump().clone();
    for b in idle.blocks_mut() {
        b.transactions.clear();
        b.receipts.clear();
        b.header.gas_used = 0;
    }
    assert_eq!(
        idle.check_has_work(),
        Err(InvariantError::NoTransactions { blocks: 2 })
    );
    assert_eq!(dump().check_has_work(), Ok(()));
}

// ------------------------------------------------------------ messages

#[test]
fn no_error_repeats_its_source_in_its_own_message() {
    // `File exists (os error 17): File exists (os error 17)` came from a message that
    // printed its source, followed by the source printed again by the caller.
    let dir = tempfile::tempdir().unwrap();
    let missing = read_dump(&dir.path().join("missing.gigagas")).unwrap_err();
    let blocker = dir.path().join("plain-file");
    std::fs::write(&blocker, b"x").unwrap();
    let unwritable = gigagas_dump::write_dump(dump(), &blocker.join("out.gigagas")).unwrap_err();
    let mut d = dump().clone();
    d.block_mut(0).unwrap().header.gas_used += 1;
    let inconsistent = decode_dump(&encode_dump(&d), Path::new("x.gigagas")).unwrap_err();
    for err in [missing, unwritable, inconsistent] {
        let own = err.to_string();
        let source = std::error::Error::source(&err).expect("these errors have a cause");
        assert!(
            !own.contains(&source.to_string()),
            "`{own}` repeats its source `{source}`"
        );
        let full = full_message(&err);
        assert!(full.ends_with(&source.to_string()), "{full}");
        assert_eq!(full.matches(&source.to_string()).count(), 1, "{full}");
    }
}
