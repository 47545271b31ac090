//! Witnesses in the dump (format version 3, section `WITN`): a segment's witness survives
//! encode/decode and write/read, segments without one stay without, files of version 2 (every
//! committed dump) still load with no witness, and a damaged `WITN` section or a witness that
//! breaks its rules gives a one-line error naming the file, the section and the segment.
//!
//! The nodes are real: the `state` trie nodes of mainnet block 21688509's execution witness
//! (`dumps/test-data/mainnet-2025/21688509/witness.json`).

use alloy_hardforks::EthereumHardfork;
use alloy_primitives::{B256, Bytes, keccak256};
use gigagas_dump::{
    Dump, DumpError, FORMAT_VERSION, InvariantError, Witness, decode_dump, encode_dump,
    inspect_dump, read_dump, write_dump,
};
use gigagas_workload::{GeneratorConfig, Profile};
use std::{path::Path, sync::OnceLock};

const HEADER_LEN: usize = 32;

/// A tiny generated dump of two blocks, split into two segments of one block each.
fn two_segments() -> &'static Dump {
    static DUMP: OnceLock<Dump> = OnceLock::new();
    DUMP.get_or_init(|| {
        let config = GeneratorConfig {
            profile: Profile::MainnetLike,
            blocks: 2,
            gas_per_block: 3_000_000,
            seed: 5,
            fork: EthereumHardfork::Prague,
            users: 30,
        };
        let mut d = gigagas_workload::generate(&config, |_, _| {}).expect("tiny dump generates");
        let mut second = d.segments[0].clone();
        second.blocks.remove(0);
        second.block_hashes.clear();
        d.segments[0].blocks.truncate(1);
        d.segments.push(second);
        d
    })
}

/// The trie nodes of block 21688509's witness, as `witness.json` lists them.
fn mainnet_nodes() -> &'static [Bytes] {
    static NODES: OnceLock<Vec<Bytes>> = OnceLock::new();
    NODES.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../dumps/test-data/mainnet-2025/21688509/witness.json");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("the committed witness")).unwrap();
        json["state"]
            .as_array()
            .expect("`state` is an array")
            .iter()
            .map(|n| n.as_str().unwrap().parse::<Bytes>().unwrap())
            .collect()
    })
}

/// A witness of the real nodes whose root is the first node (the format does not look at
/// the trie's shape, only that one node hashes to the root).
fn witness() -> Witness {
    let nodes = mainnet_nodes().to_vec();
    Witness::new(keccak256(&nodes[0]), nodes)
}

fn with_witness_in_first_segment() -> Dump {
    let mut d = two_segments().clone();
    d.segments[0].witness = Some(witness());
    d
}

/// The tags of an encoded file's sections, in order (the framing of format.rs's docs).
fn tags(bytes: &[u8]) -> Vec<String> {
    let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap());
    let mut off = HEADER_LEN;
    let mut out = Vec::new();
    for _ in 0..count {
        out.push(String::from_utf8_lossy(&bytes[off..off + 4]).into_owned());
        let comp = u64::from_le_bytes(bytes[off + 12..off + 20].try_into().unwrap()) as usize;
        off += 20 + comp;
    }
    out
}

/// Re-frame `bytes` with `WITN`'s raw content replaced by `raw` (or added if absent), and
/// the header's version set to `version`, with a correct checksum.
fn reframe(bytes: &[u8], raw: Option<&[u8]>, version: u32, extra_witn: bool) -> Vec<u8> {
    let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap());
    let mut off = HEADER_LEN;
    let mut content = Vec::new();
    let mut sections = 0u32;
    let frame = |tag: &[u8], raw: &[u8], out: &mut Vec<u8>| {
        let comp = zstd::bulk::compress(raw, 1).unwrap();
        out.extend_from_slice(tag);
        out.extend_from_slice(&(raw.len() as u64).to_le_bytes());
        out.extend_from_slice(&(comp.len() as u64).to_le_bytes());
        out.extend_from_slice(&comp);
    };
    let mut seen = false;
    for _ in 0..count {
        let tag = &bytes[off..off + 4];
        let comp = u64::from_le_bytes(bytes[off + 12..off + 20].try_into().unwrap()) as usize;
        let frame_end = off + 20 + comp;
        match (tag == b"WITN", raw) {
            (true, Some(raw)) => frame(b"WITN", raw, &mut content),
            _ => content.extend_from_slice(&bytes[off..frame_end]),
        }
        seen |= tag == b"WITN";
        sections += 1;
        off = frame_end;
    }
    if let Some(raw) = raw.filter(|_| !seen || extra_witn) {
        frame(b"WITN", raw, &mut content);
        sections += 1;
    }
    let mut out = bytes[..8].to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&sections.to_le_bytes());
    out.extend_from_slice(&(content.len() as u64).to_le_bytes());
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&content).to_le_bytes());
    out.extend_from_slice(&content);
    out
}

/// A `WITN` section as format.rs documents it.
fn witn(entries: &[Option<(B256, &[Bytes])>]) -> Vec<u8> {
    let mut raw = (entries.len() as u64).to_le_bytes().to_vec();
    for e in entries {
        match e {
            None => raw.push(0),
            Some((root, nodes)) => {
                raw.push(1);
                raw.extend_from_slice(root.as_slice());
                raw.extend_from_slice(&(nodes.len() as u64).to_le_bytes());
                for n in *nodes {
                    raw.extend_from_slice(&(n.len() as u32).to_le_bytes());
                    raw.extend_from_slice(n);
                }
            }
        }
    }
    raw
}

/// The whole message as the command line prints it (the error, then each source).
fn full_message(err: &DumpError) -> String {
    let mut msg = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        msg.push_str(&format!(": {s}"));
        source = s.source();
    }
    msg
}

/// `bytes` must fail to decode and to summarise, with one line naming the file and `words`.
fn expect_error(bytes: &[u8], words: &[&str]) -> DumpError {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("witness.gigagas");
    std::fs::write(&path, bytes).unwrap();
    let err = read_dump(&path).expect_err("a bad witness must not load");
    let streamed = inspect_dump(&path).expect_err("a bad witness must not be summarised");
    assert_eq!(full_message(&streamed), full_message(&err));
    let msg = full_message(&err);
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
    for w in words {
        assert!(msg.contains(w), "`{msg}` does not mention `{w}`");
    }
    err
}

#[test]
fn a_witness_round_trips_and_a_segment_without_one_stays_without() {
    let d = with_witness_in_first_segment();
    let bytes = encode_dump(&d);
    assert_eq!(&bytes[8..12], &FORMAT_VERSION.to_le_bytes());
    assert_eq!(FORMAT_VERSION, 3);
    assert_eq!(tags(&bytes).last().map(String::as_str), Some("WITN"));
    let (back, _) = decode_dump(&bytes, Path::new("w.gigagas")).expect("decodes");
    assert_eq!(back, d);
    assert_eq!(back.segments[0].witness.as_ref().unwrap().nodes.len(), 671);
    assert_eq!(back.segments[1].witness, None);
    assert_eq!(encode_dump(&back), bytes, "re-encoding is byte-identical");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.gigagas");
    let info = write_dump(&d, &path).unwrap();
    let (read, read_info) = read_dump(&path).unwrap();
    assert_eq!((read, read_info), (d.clone(), info));

    // The summary, decoded and streamed, says which segments have one and how big.
    let (summary, _) = inspect_dump(&path).unwrap();
    assert_eq!(summary, d.summary());
    let w = d.segments[0].witness.as_ref().unwrap();
    assert_eq!(summary.witnesses.segments, 1);
    assert_eq!(summary.witnesses.nodes, 671);
    assert_eq!(summary.witnesses.bytes, w.node_bytes());
    assert_eq!(summary.segments[0].witness, Some((671, w.node_bytes())));
    assert_eq!(summary.segments[1].witness, None);
    let text = summary.to_string();
    assert!(
        text.contains(&format!(
            "witnesses         1 of 2 segments, 671 trie nodes ({} bytes); the state-root phase is skipped for the 1 without",
            w.node_bytes()
        )),
        "{text}"
    );
    assert!(text.contains("no witness"), "{text}");
}

#[test]
fn witness_nodes_are_sorted_and_deduplicated() {
    let mut nodes = mainnet_nodes()[..5].to_vec();
    nodes.push(nodes[2].clone());
    nodes.reverse();
    let w = Witness::new(B256::ZERO, nodes);
    assert_eq!(w.nodes.len(), 5);
    assert!(w.nodes.windows(2).all(|p| p[0] < p[1]));
}

#[test]
fn a_dump_without_witnesses_has_no_witn_section() {
    let bytes = encode_dump(two_segments());
    assert!(
        !tags(&bytes).iter().any(|t| t == "WITN"),
        "{:?}",
        tags(&bytes)
    );
    // Written as version 2, byte for byte what builds before witnesses wrote.
    assert_eq!(&bytes[8..12], &2u32.to_le_bytes());
    // A version 3 header over the same sections reads too (WITN is optional).
    let v3 = reframe(&bytes, None, 3, false);
    let (back3, _) = decode_dump(&v3, Path::new("v3.gigagas")).unwrap();
    assert_eq!(&back3, two_segments());
    let (back, _) = decode_dump(&bytes, Path::new("none.gigagas")).unwrap();
    assert!(back.segments.iter().all(|s| s.witness.is_none()));
    assert!(
        back.summary()
            .to_string()
            .contains("witnesses         none: the state-root phase is skipped for this dump")
    );
}

#[test]
fn committed_version_2_dumps_load_without_witnesses() {
    let dumps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps");
    for name in ["mainnet.gigagas", "mainnet-like.gigagas"] {
        let path = dumps.join(name);
        let head = std::fs::read(&path).unwrap();
        assert_eq!(
            &head[8..12],
            &2u32.to_le_bytes(),
            "{name} is a version 2 file"
        );
        let (d, _) = read_dump(&path).expect("a version 2 dump loads");
        assert!(d.segments.iter().all(|s| s.witness.is_none()), "{name}");
        let (summary, _) = inspect_dump(&path).unwrap();
        assert_eq!(summary.witnesses.segments, 0);
    }
}

#[test]
fn a_witn_section_in_a_version_2_file_is_refused() {
    let bytes = encode_dump(&with_witness_in_first_segment());
    let raw = witn(&[None, None]);
    let v2 = reframe(&bytes, Some(&raw), 2, false);
    expect_error(
        &v2,
        &["section WITN", "unknown section", "format version 2 file"],
    );
    // Without WITN the same file is a valid version 2 file.
    let plain = encode_dump(two_segments());
    let (d, _) = decode_dump(&reframe(&plain, None, 2, false), Path::new("v2.gigagas")).unwrap();
    assert_eq!(&d, two_segments());
}

#[test]
fn a_damaged_witn_section_names_the_segment() {
    let bytes = encode_dump(&with_witness_in_first_segment());
    let nodes = &mainnet_nodes()[..3];
    let root = keccak256(&nodes[0]);
    // One entry for two segments.
    expect_error(
        &reframe(&bytes, Some(&witn(&[None])), 3, false),
        &["section WITN", "1 witness entries for 2 segments"],
    );
    // A flag that is neither 0 nor 1.
    let mut raw = witn(&[None, None]);
    raw[9] = 7;
    expect_error(
        &reframe(&bytes, Some(&raw), 3, false),
        &["section WITN", "segment 1: witness flag 7, expected 0 or 1"],
    );
    // A node cut short.
    let mut raw = witn(&[Some((root, nodes)), None]);
    raw.truncate(raw.len() - 10);
    expect_error(
        &reframe(&bytes, Some(&raw), 3, false),
        &["section WITN", "segment", "truncated"],
    );
    // An empty node.
    let empty = [nodes[0].clone(), Bytes::new()];
    expect_error(
        &reframe(&bytes, Some(&witn(&[Some((root, &empty)), None])), 3, false),
        &["section WITN", "segment 0: witness node 1 is empty"],
    );
    // A node count larger than the bytes that follow.
    let mut raw = witn(&[Some((root, nodes)), None]);
    raw[8 + 1 + 32..8 + 1 + 32 + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    expect_error(
        &reframe(&bytes, Some(&raw), 3, false),
        &["section WITN", "segment 0", "witness nodes announced"],
    );
    // Bytes after the last entry.
    let mut raw = witn(&[None, None]);
    raw.push(0);
    expect_error(
        &reframe(&bytes, Some(&raw), 3, false),
        &["section WITN", "1 unexpected bytes after the witnesses"],
    );
    // WITN twice.
    expect_error(
        &reframe(&bytes, Some(&witn(&[None, None])), 3, true),
        &["section WITN", "repeated"],
    );
}

#[test]
fn a_witness_that_breaks_its_rules_is_inconsistent() {
    let nodes = mainnet_nodes()[..4].to_vec();
    let cases: [(Witness, InvariantError); 2] = [
        (
            Witness {
                parent_state_root: B256::repeat_byte(0xab),
                nodes: nodes.clone(),
            },
            InvariantError::WitnessWithoutRoot {
                segment: 1,
                root: B256::repeat_byte(0xab),
                nodes: 4,
            },
        ),
        (
            Witness {
                parent_state_root: keccak256(&nodes[0]),
                nodes: vec![nodes[0].clone(), nodes[1].clone(), nodes[0].clone()],
            },
            InvariantError::DuplicateWitnessNode {
                segment: 1,
                hash: keccak256(&nodes[0]),
            },
        ),
    ];
    for (w, expected) in cases {
        let mut d = two_segments().clone();
        d.segments[1].witness = Some(w);
        assert_eq!(d.validate(), Err(expected.clone()));
        let err = expect_error(&encode_dump(&d), &["inconsistent dump", "segment 1"]);
        match err {
            DumpError::Inconsistent { source, .. } => assert_eq!(*source, expected),
            other => panic!("expected Inconsistent, got {other:?}"),
        }
    }
    // The empty trie's root needs no node.
    let mut d = two_segments().clone();
    d.segments[0].witness = Some(Witness::new(
        alloy_primitives::b256!(
            "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421"
        ),
        Vec::new(),
    ));
    assert_eq!(d.validate(), Ok(()));
}
