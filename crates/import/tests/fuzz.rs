//! A bounded, deterministic fuzz run of the two JSON readers on the stable toolchain:
//! structure-aware mutations (a value replaced by a boundary value, a string's hex
//! damaged, a key removed, an array element duplicated) of a real BlockchainTests fixture
//! and of a real mainnet block snapshot, each then imported end to end (parse, decode,
//! execute, check). Every case must end in an error or a verified import — never a panic.
//! `GIGAGAS_FUZZ_ITERS` raises the number of cases; a failing case prints its seed, which
//! `GIGAGAS_FUZZ_SEED` replays.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use serde_json::Value;

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;

/// The cases' generator: ChaCha8 seeded with the case's number, so that a seed replays its
/// case exactly.
type Rng = rand_chacha::ChaCha8Rng;

/// A number below `n` (0 when `n` is 0).
fn below(rng: &mut Rng, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

fn iterations(default: u64) -> std::ops::Range<u64> {
    if let Some(seed) = std::env::var("GIGAGAS_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return seed..seed + 1;
    }
    let n = std::env::var("GIGAGAS_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    0..n
}

/// Every node of `v` (pre-order), as paths of keys / indices.
fn paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                at.push(k.clone());
                paths(c, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                at.push(i.to_string());
                paths(c, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn node<'v>(v: &'v mut Value, path: &[String]) -> &'v mut Value {
    path.iter().fold(v, |v, k| match v {
        Value::Object(m) => m.get_mut(k).expect("path exists"),
        Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
        _ => unreachable!("paths only descend into containers"),
    })
}

/// One to three structure-aware mutations of `v`.
fn mutate(rng: &mut Rng, v: &mut Value) {
    for _ in 0..1 + below(rng, 3) {
        let mut all = Vec::new();
        paths(v, &mut Vec::new(), &mut all);
        let path = all[below(rng, all.len())].clone();
        let target = node(v, &path);
        let boundary = [
            Value::Null,
            Value::from("0x"),
            Value::from("0x0"),
            Value::from(format!("0x{}", "f".repeat(70))),
            Value::from("0xzz"),
            Value::from(-1),
            Value::from(u64::MAX),
            Value::from(1e308),
            Value::Array(Vec::new()),
            Value::Object(Default::default()),
            Value::from("12345"),
        ];
        match (below(rng, 4), &mut *target) {
            (0, Value::String(s)) if !s.is_empty() => {
                // Damage the hex: flip a digit, or cut the string.
                let mut bytes = s.clone().into_bytes();
                let i = below(rng, bytes.len());
                if below(rng, 2) == 0 {
                    bytes[i] = b"0123456789abcdefx"[below(rng, 17)];
                } else {
                    bytes.truncate(i);
                }
                *s = String::from_utf8(bytes).unwrap_or_default();
            }
            (1, Value::Object(m)) if !m.is_empty() => {
                let key = m.keys().nth(below(rng, m.len())).unwrap().clone();
                m.remove(&key);
            }
            (2, Value::Array(a)) if !a.is_empty() => {
                let c = a[below(rng, a.len())].clone();
                a.insert(below(rng, a.len() + 1), c);
            }
            _ => *target = boundary[below(rng, boundary.len())].clone(),
        }
    }
}

/// Run `case` for every seed; a panic names its seed.
fn fuzz(default: u64, mut case: impl FnMut(&mut Rng) -> bool) -> (u64, u64) {
    let (mut refused, mut passed) = (0, 0);
    for seed in iterations(default) {
        let rng = &mut Rng::seed_from_u64(seed);
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(rng))) {
            Ok(true) => passed += 1,
            Ok(false) => refused += 1,
            Err(_) => panic!("case GIGAGAS_FUZZ_SEED={seed} panicked"),
        }
    }
    eprintln!(
        "{} cases: {refused} refused, {passed} imported",
        refused + passed
    );
    (refused, passed)
}

#[test]
fn mutated_blockchain_tests_are_refused_or_imported_never_a_panic() {
    let file = corpora::path(
        "ethereum-tests/GeneralStateTests__stRecursiveCreate__recursiveCreateReturnValue.json",
    );
    let text = std::fs::read_to_string(&file).expect("the ethereum-tests fixture");
    let original: Value = serde_json::from_str(&text).unwrap();
    let (refused, _) = fuzz(300, |rng| {
        let mut v = original.clone();
        mutate(rng, &mut v);
        let Ok(fixture) = gigagas_import::FixtureFile::parse(&file, &v.to_string()) else {
            return false;
        };
        fixture.tests.iter().all(|(name, value)| {
            gigagas_import::BlockchainTest::from_json(name, value)
                .and_then(|test| gigagas_import::import_test(&file, name, &test))
                .is_ok()
        })
    });
    assert!(refused > 0, "the mutations reach the checks");
}

#[test]
fn mutated_snapshots_are_refused_or_imported_never_a_panic() {
    let source = corpora::path("mainnet-blocks/46147");
    let read = |f: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(source.join(f)).unwrap()).unwrap()
    };
    let (block, pre) = (read("block.json"), read("pre_state.json"));
    let chain = gigagas_import::snapshot::mainnet_chain();
    let spec = gigagas_chain::ChainSpec::from_config(&chain).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("46147");
    std::fs::create_dir(&dir).unwrap();
    let (refused, _) = fuzz(300, |rng| {
        let (mut b, mut p) = (block.clone(), pre.clone());
        if below(rng, 2) == 0 {
            mutate(rng, &mut b);
        } else {
            mutate(rng, &mut p);
        }
        std::fs::write(dir.join("block.json"), b.to_string()).unwrap();
        std::fs::write(dir.join("pre_state.json"), p.to_string()).unwrap();
        gigagas_import::snapshot::read_block(&dir, &spec)
            .and_then(|s| gigagas_import::snapshot::import_block(&s, &chain, &spec))
            .is_ok()
    });
    assert!(refused > 0, "the mutations reach the checks");
}
