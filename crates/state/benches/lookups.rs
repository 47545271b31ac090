//! Warm random lookups in a padded store: accounts, slots and codes, at 1 reader and at N
//! readers (N = the cores available), each reader on its own thread with its own read
//! transaction, as a prefetching pass reads.
//!
//! ```sh
//! cargo bench -p gigagas-state --bench lookups
//! GIGAGAS_BENCH_PAD=8GiB cargo bench -p gigagas-state --bench lookups     # a node-sized tree
//! GIGAGAS_BENCH_STORE=target/state/mainnet-8g cargo bench -p gigagas-state --bench lookups
//! ```
//!
//! The store is built in the setup from `dumps/mainnet.gigagas`, padded to
//! `GIGAGAS_BENCH_PAD` (default 1 GiB), into a temporary folder beside the build output,
//! or `GIGAGAS_BENCH_STORE` names one already built from that dump (a relative path is
//! taken from the workspace root). The keys are every
//! account, slot and code of the dump's pre-state (what its blocks read), scattered among
//! the padding, read in a fixed shuffled order after one warm pass over all of them.
//!
//! One iteration is one lookup on every reader at once: criterion's *time* is the wall
//! time of a lookup per reader (µs per lookup), its *thrpt* the lookups per second of all
//! readers together. The readers time a sample of their reads as a pass's do
//! ([`Timing::Sampled`]); the `timing` group shows what each [`Timing`] costs.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_main};
use gigagas_dump::Dump;
use gigagas_state::{BuildOptions, Store, StoreReader, Timing, build_store, open_store};
use std::{
    hint::black_box,
    path::Path,
    time::{Duration, Instant},
};

/// What a lookup reads.
#[derive(Debug, Clone, Copy)]
enum Key {
    Account(usize, alloy_primitives::Address),
    Slot(usize, alloy_primitives::Address, alloy_primitives::U256),
    Code(alloy_primitives::B256),
}

/// One lookup; panics on a read error (the store was just built from this dump).
#[inline]
fn look_up(reader: &mut StoreReader, key: Key) {
    match key {
        Key::Account(segment, address) => {
            black_box(reader.account(segment, address).expect("account read"));
        }
        Key::Slot(segment, address, slot) => {
            black_box(reader.storage(segment, address, slot).expect("slot read"));
        }
        Key::Code(hash) => {
            black_box(reader.code(hash).expect("code read"));
        }
    }
}

/// `"8GiB"`, `"512MiB"` or bytes.
fn parse_size(s: &str) -> u64 {
    let s = s.trim();
    let (num, mult) = [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        .into_iter()
        .find_map(|(suffix, mult)| s.strip_suffix(suffix).map(|n| (n, mult)))
        .unwrap_or((s, 1));
    let n: f64 = num
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("GIGAGAS_BENCH_PAD={s}: not a size such as 8GiB"));
    (n * mult as f64) as u64
}

/// The store and the dump's keys, shuffled (a fixed seed: every run reads in one order).
struct Setup {
    store: Store,
    accounts: Vec<Key>,
    slots: Vec<Key>,
    codes: Vec<Key>,
    _dir: Option<tempfile::TempDir>,
}

fn shuffle(keys: &mut [Key], seed: u64) {
    let mut x = seed;
    for i in (1..keys.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        keys.swap(i, (x % (i as u64 + 1)) as usize);
    }
}

fn keys_of(dump: &Dump) -> (Vec<Key>, Vec<Key>, Vec<Key>) {
    let (mut accounts, mut slots, mut codes) = (Vec::new(), Vec::new(), Vec::new());
    for (segment, s) in dump.segments.iter().enumerate() {
        let pre = &s.pre_state;
        accounts.extend(
            pre.accounts
                .iter()
                .map(|a| Key::Account(segment, a.address)),
        );
        slots.extend(
            pre.storage
                .iter()
                .map(|s| Key::Slot(segment, s.address, s.slot)),
        );
        codes.extend(pre.codes.iter().map(|(hash, _)| Key::Code(*hash)));
    }
    shuffle(&mut accounts, 0x5eed_0001);
    shuffle(&mut slots, 0x5eed_0002);
    shuffle(&mut codes, 0x5eed_0003);
    (accounts, slots, codes)
}

fn setup() -> Setup {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (dump, info) =
        gigagas_dump::read_dump(&root.join("dumps/mainnet.gigagas")).expect("the mainnet dump");
    let (dir, path) = match std::env::var_os("GIGAGAS_BENCH_STORE") {
        // Relative to the workspace root (cargo runs a bench in its crate's folder).
        Some(path) => (None, root.join(path)),
        None => {
            let pad = std::env::var("GIGAGAS_BENCH_PAD").map_or(1 << 30, |s| parse_size(&s));
            std::fs::create_dir_all(env!("CARGO_TARGET_TMPDIR")).expect("the scratch folder");
            let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a scratch folder");
            let path = dir.path().join("store");
            let start = Instant::now();
            let summary = build_store(
                &dump,
                &info,
                &path,
                &BuildOptions { pad_to: Some(pad) },
                &mut |_| {},
            )
            .expect("the store builds");
            eprintln!(
                "built a store of {:.2} GiB in {:.1} s",
                summary.file_bytes as f64 / (1u64 << 30) as f64,
                start.elapsed().as_secs_f64()
            );
            (Some(dir), path)
        }
    };
    let store = open_store(&path, info.checksum).expect("the store opens");
    for t in store.table_stats().expect("table stats") {
        eprintln!("  {}: {} entries, depth {}", t.name, t.entries, t.depth);
    }
    let (accounts, slots, codes) = keys_of(&dump);
    eprintln!(
        "keys: {} accounts, {} slots, {} codes",
        accounts.len(),
        slots.len(),
        codes.len()
    );
    Setup {
        store,
        accounts,
        slots,
        codes,
        _dir: dir,
    }
}

/// `iters` lookups on each of `readers` at once, each reader walking `keys` from where it
/// stopped last time (`at`); the wall time from the first start to the last finish.
fn run(readers: &mut [StoreReader], at: &mut [usize], keys: &[Key], iters: u64) -> Duration {
    let barrier = std::sync::Barrier::new(readers.len() + 1);
    std::thread::scope(|scope| {
        for (reader, at) in readers.iter_mut().zip(at.iter_mut()) {
            let barrier = &barrier;
            scope.spawn(move || {
                barrier.wait();
                let mut i = *at;
                for _ in 0..iters {
                    look_up(reader, keys[i]);
                    i += 1;
                    if i == keys.len() {
                        i = 0;
                    }
                }
                *at = i;
            });
        }
        barrier.wait();
        let start = Instant::now();
        // Leaving the scope joins every reader.
        start
    })
    .elapsed()
}

fn readers(
    store: &Store,
    n: usize,
    timing: Timing,
    keys: &[Key],
) -> (Vec<StoreReader>, Vec<usize>) {
    let readers: Vec<StoreReader> = (0..n)
        .map(|_| {
            let reader = store.reader().expect("a reader");
            reader.meter().set_timing(timing);
            reader
        })
        .collect();
    // Spread the readers over the keys, as a prefetch splits them.
    let at = (0..n).map(|i| i * keys.len() / n).collect();
    (readers, at)
}

fn lookups(c: &mut Criterion) {
    let setup = setup();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut counts = vec![1];
    if cores > 1 {
        counts.push(cores);
    }
    for (name, keys) in [
        ("accounts", &setup.accounts),
        ("slots", &setup.slots),
        ("codes", &setup.codes),
    ] {
        // Warm: every key once.
        let (mut warm, _) = readers(&setup.store, 1, Timing::Off, keys);
        for key in keys {
            look_up(&mut warm[0], *key);
        }
        let mut group = c.benchmark_group(name);
        for &n in &counts {
            let (mut rs, mut at) = readers(&setup.store, n, Timing::Sampled, keys);
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new("readers", n), |b| {
                b.iter_custom(|iters| run(&mut rs, &mut at, keys, iters))
            });
        }
        group.finish();
    }
    // What metering costs: slots on one reader, at each timing.
    let mut group = c.benchmark_group("timing");
    group.throughput(Throughput::Elements(1));
    for (name, timing) in [
        ("off", Timing::Off),
        ("sampled", Timing::Sampled),
        ("every", Timing::Every),
    ] {
        let (mut rs, mut at) = readers(&setup.store, 1, timing, &setup.slots);
        group.bench_function(BenchmarkId::new("slots", name), |b| {
            b.iter_custom(|iters| run(&mut rs, &mut at, &setup.slots, iters))
        });
    }
    group.finish();
}

/// The benchmarks, with a short warm-up and measurement (each lookup is a microsecond).
fn benches() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    lookups(&mut c);
}
criterion_main!(benches);
