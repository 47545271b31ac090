//! A bounded, deterministic fuzz run of the dump decoder on the stable toolchain: seeded
//! mutations (bit flips, byte overwrites, truncations, chunk deletion, duplication and
//! insertion, header fields set to boundary values) of real dumps, at three depths: the
//! file's bytes as they are (the header and checksum checks), the bytes with the header's
//! length and checksum made to fit (the section framing and zstd), and one section's
//! decompressed content, recompressed and re-framed (the decoders behind it: JSON
//! metadata, fixed records, RLP blocks and access lists, and the whole-dump validation). The decoder must return
//! an error or a valid dump — never panic, never abort on an allocation — whatever it is
//! given. `GIGAGAS_FUZZ_ITERS` raises the number of cases (CI runs the default); a case
//! that fails prints its seed and is replayed by `GIGAGAS_FUZZ_SEED`.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use std::path::Path;

/// The cases' generator: ChaCha8 seeded with the case's number, so that a seed replays its
/// case exactly.
type Rng = rand_chacha::ChaCha8Rng;

/// A number below `n` (0 when `n` is 0).
fn below(rng: &mut Rng, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

/// One to four mutations of `bytes`.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..1 + below(rng, 4) {
        let len = bytes.len();
        match below(rng, 8) {
            0 if len > 0 => {
                let i = below(rng, len);
                bytes[i] ^= 1 << below(rng, 8);
            }
            1 if len > 0 => {
                let i = below(rng, len);
                bytes[i] = rng.next_u64() as u8;
            }
            2 => bytes.truncate(below(rng, len + 1)),
            3 if len > 1 => {
                let a = below(rng, len);
                let b = (a + 1 + below(rng, 64)).min(len);
                bytes.drain(a..b);
            }
            4 if len > 1 => {
                let a = below(rng, len);
                let b = (a + 1 + below(rng, 256)).min(len);
                let chunk = bytes[a..b].to_vec();
                let at = below(rng, len);
                bytes.splice(at..at, chunk);
            }
            5 => {
                let at = below(rng, len + 1);
                let n = 1 + below(rng, 16);
                let junk: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
                bytes.splice(at..at, junk);
            }
            // A header field (the 32-byte header holds sizes and lengths) set to a
            // boundary value.
            _ if len >= 32 => {
                let at = 8 * below(rng, 4);
                let v = [0u64, 1, u32::MAX as u64, u64::MAX, rng.next_u64()][below(rng, 5)];
                bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
            }
            _ => {}
        }
    }
}

const HEADER: usize = 32;

/// Set the header's content length and checksum to fit the content.
fn fit_header(bytes: &mut [u8]) {
    if bytes.len() < HEADER {
        return;
    }
    let len = (bytes.len() - HEADER) as u64;
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[HEADER..]);
    bytes[16..24].copy_from_slice(&len.to_le_bytes());
    bytes[24..32].copy_from_slice(&sum.to_le_bytes());
}

/// The sections of a well-formed dump: (tag, decompressed content).
fn sections(bytes: &[u8]) -> Vec<([u8; 4], Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = HEADER;
    while at + 20 <= bytes.len() {
        let tag: [u8; 4] = bytes[at..at + 4].try_into().unwrap();
        let comp = u64::from_le_bytes(bytes[at + 12..at + 20].try_into().unwrap()) as usize;
        let data = &bytes[at + 20..at + 20 + comp];
        out.push((tag, zstd::decode_all(data).unwrap()));
        at += 20 + comp;
    }
    out
}

/// A dump file from a header and sections (framed and compressed as the writer does).
fn assemble(header: &[u8], sections: &[([u8; 4], Vec<u8>)]) -> Vec<u8> {
    let mut out = header[..HEADER].to_vec();
    for (tag, raw) in sections {
        let comp = zstd::encode_all(&raw[..], 1).unwrap();
        out.extend_from_slice(tag);
        out.extend_from_slice(&(raw.len() as u64).to_le_bytes());
        out.extend_from_slice(&(comp.len() as u64).to_le_bytes());
        out.extend_from_slice(&comp);
    }
    fit_header(&mut out);
    out
}

fn corpus() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/benchmark-compute");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the committed benchmark-compute dumps")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "gigagas"))
        .collect();
    files.sort();
    // A few small dumps of different shapes (the folder is sorted by test name).
    files
        .iter()
        .step_by(files.len() / 4)
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}

#[test]
fn mutated_dumps_are_refused_or_decoded_never_a_panic() {
    let iters: u64 = std::env::var("GIGAGAS_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let only: Option<u64> = std::env::var("GIGAGAS_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok());
    let corpus = corpus();
    assert!(corpus.len() >= 4);
    let path = Path::new("fuzz.gigagas");
    let (mut refused, mut decoded) = (0u64, 0u64);
    for seed in only.map_or(0..iters, |s| s..s + 1) {
        let rng = &mut Rng::seed_from_u64(seed);
        let original = &corpus[below(rng, corpus.len())];
        let bytes = match below(rng, 3) {
            0 => {
                let mut bytes = original.clone();
                mutate(rng, &mut bytes);
                bytes
            }
            1 => {
                let mut bytes = original.clone();
                mutate(rng, &mut bytes);
                fit_header(&mut bytes);
                bytes
            }
            _ => {
                let mut parts = sections(original);
                let k = below(rng, parts.len());
                mutate(rng, &mut parts[k].1);
                assemble(original, &parts)
            }
        };
        let outcome = std::panic::catch_unwind(|| gigagas_dump::decode_dump(&bytes, path).is_ok());
        match outcome {
            Ok(true) => decoded += 1,
            Ok(false) => refused += 1,
            Err(_) => panic!("case GIGAGAS_FUZZ_SEED={seed} panicked the decoder"),
        }
    }
    eprintln!(
        "{} cases: {refused} refused, {decoded} decoded",
        refused + decoded
    );
    assert!(refused > 0, "the mutations reach the checks");
}
