//! A store returns exactly a dump's pre-state, refuses other dumps and broken files with a
//! one-line error, pads as asked, and can be made cold and checked.

use alloy_hardforks::EthereumHardfork;
use alloy_primitives::{Address, B256, Bytes, KECCAK256_EMPTY, U256};
use gigagas_dump::{Dump, DumpFileInfo, read_dump};
use gigagas_state::{
    BuildOptions, BuildProgress, BuildStage, COLD_MAX_RESIDENT_BYTES, DATA_FILE, EvictOptions,
    PAD_SEGMENT, SAMPLE_EVERY, Store, StoreError, StoreKey, StoreReader, Timing, build_store,
    evict, open_store, probe_random_reads, residency,
};
use gigagas_workload::{GeneratorConfig, Profile};
use revm_bytecode::Bytecode;
use std::{
    fs,
    path::{Path, PathBuf},
    sync::OnceLock,
    time::Duration,
};

/// A folder on the same file system as the build output (not /tmp, which may be tmpfs).
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch folder")
}

fn mainnet() -> &'static (Dump, DumpFileInfo) {
    static DUMP: OnceLock<(Dump, DumpFileInfo)> = OnceLock::new();
    DUMP.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet.gigagas");
        read_dump(&path).expect("dumps/mainnet.gigagas reads")
    })
}

/// A small generated dump (contracts, storage, codes), with its checksum.
fn generated() -> &'static (Dump, DumpFileInfo) {
    static DUMP: OnceLock<(Dump, DumpFileInfo)> = OnceLock::new();
    DUMP.get_or_init(|| {
        let config = GeneratorConfig {
            profile: Profile::MainnetLike,
            blocks: 3,
            gas_per_block: 3_000_000,
            seed: 28,
            fork: EthereumHardfork::Prague,
            users: 50,
        };
        let dump = gigagas_workload::generate(&config, |_, _| {}).expect("dump generates");
        let dir = scratch();
        let info = gigagas_dump::write_dump(&dump, &dir.path().join("g.gigagas")).unwrap();
        (dump, info)
    })
}

fn build(dump: &(Dump, DumpFileInfo), out: &Path, pad_to: Option<u64>) -> Vec<BuildProgress> {
    let mut seen = Vec::new();
    let summary = build_store(&dump.0, &dump.1, out, &BuildOptions { pad_to }, &mut |p| {
        seen.push(p)
    })
    .expect("store builds");
    assert_eq!(summary.meta.dump_checksum, dump.1.checksum);
    assert!(summary.used_bytes <= summary.file_bytes);
    seen
}

/// A code read from the store is the dump's code, with the jump table revm's own analysis
/// of it gives (the store keeps the analysis; a read does not redo it).
fn assert_same_code(read: Option<Bytecode>, want: &Bytes) {
    let read = read.expect("the store holds the code");
    let analysed = Bytecode::new_raw(want.clone());
    assert_eq!(read.original_bytes(), *want);
    assert_eq!(read.kind(), analysed.kind());
    assert_eq!(read.legacy_jump_table(), analysed.legacy_jump_table());
}

/// Every account, slot, code and block hash of every segment reads back as the dump has
/// it; absent accounts read absent; what the dump does not list reads absent or zero.
fn assert_reads_back(dump: &Dump, reader: &mut StoreReader) {
    for (segment, s) in dump.segments.iter().enumerate() {
        let pre = &s.pre_state;
        for account in &pre.accounts {
            let read = reader.account(segment, account.address).unwrap();
            assert_eq!(
                read, account.state,
                "segment {segment} account {}",
                account.address
            );
            if let Some(state) = &account.state {
                let code = reader.code(state.code_hash).unwrap();
                let want = pre
                    .codes
                    .binary_search_by_key(&state.code_hash, |c| c.0)
                    .map(|i| pre.codes[i].1.clone());
                match want {
                    Ok(want) => assert_same_code(code, &want),
                    Err(_) => assert_eq!(state.code_hash, KECCAK256_EMPTY),
                }
                // A slot the dump does not list reads zero.
                let unlisted = U256::from_be_bytes(B256::repeat_byte(0xa5).0);
                if pre.slot(account.address, unlisted).is_none() {
                    assert_eq!(
                        reader.storage(segment, account.address, unlisted).unwrap(),
                        U256::ZERO
                    );
                }
            }
        }
        for slot in &pre.storage {
            assert_eq!(
                reader.storage(segment, slot.address, slot.slot).unwrap(),
                slot.value,
                "segment {segment} slot {} of {}",
                slot.slot,
                slot.address
            );
        }
        for (hash, code) in &pre.codes {
            assert_same_code(reader.code(*hash).unwrap(), code);
        }
        for (number, hash) in &s.block_hashes {
            assert_eq!(reader.block_hash(segment, *number).unwrap(), Some(*hash));
        }
        let first = s.blocks[0].number();
        assert_eq!(reader.block_hash(segment, first).unwrap(), None);
        // An address no dump holds.
        let nobody = Address::repeat_byte(0x5a);
        assert!(pre.account(nobody).is_none());
        assert_eq!(reader.account(segment, nobody).unwrap(), None);
    }
}

#[test]
fn mainnet_segments_read_back_exactly() {
    let dump = mainnet();
    assert_eq!(dump.0.segments.len(), 42);
    let dir = scratch();
    let out = dir.path().join("store");
    let progress = build(dump, &out, None);
    assert_eq!(progress.last().unwrap().stage, BuildStage::Sync);
    assert!(progress.iter().any(|p| p.stage == BuildStage::State));

    let store = open_store(&out, dump.1.checksum).unwrap();
    let meta = *store.meta();
    assert_eq!(meta.segments, 42);
    assert_eq!(meta.pad_accounts, 0);
    let accounts: usize = dump
        .0
        .segments
        .iter()
        .map(|s| s.pre_state.accounts.len())
        .sum();
    assert_eq!(meta.accounts + meta.absent_accounts, accounts as u64);
    assert!(meta.absent_accounts > 0, "mainnet blocks create accounts");

    let mut reader = store.reader().unwrap();
    reader.meter().set_timing(Timing::Every);
    assert_reads_back(&dump.0, &mut reader);
    let stats = reader.meter().stats();
    assert!(stats.accounts >= accounts as u64);
    assert_eq!(reader.meter().take_latencies().len() as u64, stats.reads());
    assert_eq!(stats.timed_reads, stats.reads());
    assert!(stats.read_ns() == stats.timed_ns && stats.timed_ns > 0 && stats.bytes > 0);

    // Sampled: the same reads counted exactly, about one in SAMPLE_EVERY timed (gaps of 1
    // to 2 × SAMPLE_EVERY - 1 reads), the first read after a reset among them, and the
    // sample's time scaled to all reads.
    reader.meter().reset();
    reader.meter().set_timing(Timing::Sampled);
    assert_reads_back(&dump.0, &mut reader);
    let sampled = reader.meter().stats();
    let timed = sampled.timed_reads;
    assert_eq!(
        (sampled.reads(), sampled.bytes),
        (stats.reads(), stats.bytes),
        "the counts do not depend on the timing"
    );
    let most_gap = 2 * u64::from(SAMPLE_EVERY) - 1;
    assert!(
        timed >= stats.reads() / most_gap && timed <= stats.reads() / 8,
        "{timed} of {} reads timed",
        stats.reads()
    );
    assert_eq!(reader.meter().take_latencies().len() as u64, timed);
    assert_eq!(
        sampled.read_ns(),
        (sampled.timed_ns as u128 * sampled.reads() as u128 / timed as u128) as u64
    );
    reader.meter().reset();
    reader.meter().set_timing(Timing::Off);
    assert_reads_back(&dump.0, &mut reader);
    let off = reader.meter().stats();
    assert_eq!(
        (off.reads(), off.timed_reads, off.read_ns()),
        (stats.reads(), 0, 0)
    );
    assert!(reader.meter().take_latencies().is_empty());
    reader.meter().reset();
    reader.meter().set_timing(Timing::Sampled);
    reader.account(0, Address::ZERO).unwrap();
    assert_eq!(
        reader.meter().stats().timed_reads,
        1,
        "the first read after a reset"
    );

    // Segments do not see each other: an account only in segment 1 is not in segment 0.
    let only_in_1 = dump.0.segments[1]
        .pre_state
        .accounts
        .iter()
        .find(|a| a.state.is_some() && dump.0.segments[0].pre_state.account(a.address).is_none())
        .expect("segment 1 has an account segment 0 lacks");
    assert_eq!(reader.account(0, only_in_1.address).unwrap(), None);
    assert!(matches!(
        reader.account(42, only_in_1.address),
        Err(StoreError::NoSuchSegment {
            segment: 42,
            segments: 42
        })
    ));
    assert!(
        reader
            .account(PAD_SEGMENT as usize, only_in_1.address)
            .is_err()
    );
}

#[test]
fn readers_read_in_parallel_from_several_threads() {
    let dump = generated();
    let dir = scratch();
    let out = dir.path().join("store");
    build(dump, &out, None);
    let store = open_store(&out, dump.1.checksum).unwrap();
    let counts: Vec<u64> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let store = &store;
                scope.spawn(move || {
                    let mut reader = store.reader().unwrap();
                    for _ in 0..3 {
                        assert_reads_back(&dump.0, &mut reader);
                    }
                    reader.meter().stats().reads()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert!(counts.iter().all(|c| *c == counts[0] && *c > 0));
    // A reader made on one thread reads on another.
    let mut reader = store.reader().unwrap();
    std::thread::spawn(move || assert_reads_back(&dump.0, &mut reader))
        .join()
        .unwrap();
}

#[test]
fn padding_grows_the_store_and_never_answers_a_real_read() {
    let dump = generated();
    let dir = scratch();
    let out = dir.path().join("store");
    let pad_to = 24 << 20;
    let progress = build(dump, &out, Some(pad_to));
    assert!(progress.iter().any(|p| p.stage == BuildStage::Padding));
    let file = fs::metadata(out.join(DATA_FILE)).unwrap().len();
    assert!(file >= pad_to, "data file {file} < {pad_to}");
    assert!(file < 2 * pad_to, "data file {file} far past {pad_to}");

    let store = open_store(&out, dump.1.checksum).unwrap();
    let meta = *store.meta();
    assert_eq!(meta.pad_to, Some(pad_to));
    assert!(meta.pad_accounts > 10_000, "{meta:?}");
    assert!(meta.pad_slots > 3 * meta.pad_accounts, "{meta:?}");
    let tables = store.table_stats().unwrap();
    assert!(tables[0].entries >= meta.accounts + meta.pad_accounts);
    assert!(tables[0].depth >= 3, "{tables:?}");
    let mut reader = store.reader().unwrap();
    assert_reads_back(&dump.0, &mut reader);
    drop((reader, store));

    // The padding spans the whole address space, so the dump's accounts lie among it.
    let env = signet_libmdbx::Environment::builder()
        .set_max_dbs(8)
        .set_flags(signet_libmdbx::Mode::ReadOnly.into())
        .open(&out)
        .unwrap();
    let txn = env.begin_ro_unsync().unwrap();
    let db = txn.open_db(Some(gigagas_state::layout::ACCOUNTS)).unwrap();
    let mut cursor = txn.cursor(db).unwrap();
    let (first, _): (Vec<u8>, Vec<u8>) = cursor.first().unwrap().unwrap();
    let (last, _): (Vec<u8>, Vec<u8>) = cursor.last().unwrap().unwrap();
    assert!(
        first[0] < 0x02 && last[0] > 0xfd,
        "{first:02x?} .. {last:02x?}"
    );
    assert_eq!(last[20..], PAD_SEGMENT.to_be_bytes());
}

#[test]
fn a_store_of_another_dump_is_refused_naming_both_checksums() {
    let dump = generated();
    let dir = scratch();
    let out = dir.path().join("store");
    build(dump, &out, None);
    let other = mainnet().1.checksum;
    let err = open_store(&out, other).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, StoreError::WrongDump { .. }), "{msg}");
    assert!(msg.contains(&dump.1.checksum_hex()), "{msg}");
    assert!(msg.contains(&format!("{other:016x}")), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn building_replaces_a_store_and_refuses_anything_else() {
    let dump = generated();
    let dir = scratch();
    let out = dir.path().join("store");
    build(mainnet(), &out, None);
    build(dump, &out, None);
    open_store(&out, dump.1.checksum).unwrap();
    let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary folder is left behind");

    let file = dir.path().join("file");
    fs::write(&file, b"not a store").unwrap();
    let other = dir.path().join("other");
    fs::create_dir(&other).unwrap();
    fs::write(other.join("notes.txt"), b"keep me").unwrap();
    for path in [&file, &other] {
        let err = build_store(
            &dump.0,
            &dump.1,
            path,
            &BuildOptions::default(),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(matches!(err, StoreError::RefuseOverwrite { .. }), "{err}");
        assert!(!err.to_string().contains('\n'));
    }
    assert_eq!(fs::read(other.join("notes.txt")).unwrap(), b"keep me");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 3);

    // An empty folder is built into.
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    build(dump, &empty, None);
    open_store(&empty, dump.1.checksum).unwrap();
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 4);
}

/// Open `dir` and expect a one-line error, never a panic.
fn open_fails(dir: &Path, checksum: u64) -> String {
    let err = open_store(dir, checksum).expect_err("a broken store is refused");
    let msg = err.to_string();
    eprintln!("{}: {msg}", dir.display());
    assert!(!msg.contains('\n'), "one line: {msg}");
    msg
}

fn copy_store(from: &Path, to: &Path) -> PathBuf {
    fs::create_dir(to).unwrap();
    fs::copy(from.join(DATA_FILE), to.join(DATA_FILE)).unwrap();
    to.to_path_buf()
}

#[test]
fn truncated_and_corrupt_stores_give_one_line_errors() {
    let dump = generated();
    let checksum = dump.1.checksum;
    let dir = scratch();
    let good = dir.path().join("good");
    build(dump, &good, Some(4 << 20));
    let len = fs::metadata(good.join(DATA_FILE)).unwrap().len();

    let msg = open_fails(&dir.path().join("missing"), checksum);
    assert!(msg.contains("does not exist"), "{msg}");

    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let msg = open_fails(&empty, checksum);
    assert!(msg.contains("no mdbx.dat"), "{msg}");

    let truncated = copy_store(&good, &dir.path().join("truncated"));
    fs::File::options()
        .write(true)
        .open(truncated.join(DATA_FILE))
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let msg = open_fails(&truncated, checksum);
    assert!(
        msg.contains("truncated") || msg.contains("cannot be opened"),
        "{msg}"
    );

    let tiny = copy_store(&good, &dir.path().join("tiny"));
    fs::File::options()
        .write(true)
        .open(tiny.join(DATA_FILE))
        .unwrap()
        .set_len(100)
        .unwrap();
    open_fails(&tiny, checksum);

    let garbage = copy_store(&good, &dir.path().join("garbage"));
    let noise: Vec<u8> = (0..len)
        .map(|i| (i.wrapping_mul(2654435761) >> 7) as u8)
        .collect();
    fs::write(garbage.join(DATA_FILE), &noise).unwrap();
    let msg = open_fails(&garbage, checksum);
    assert!(msg.contains("cannot be opened"), "{msg}");

    let zeros = copy_store(&good, &dir.path().join("zeros"));
    fs::write(zeros.join(DATA_FILE), vec![0u8; len as usize]).unwrap();
    open_fails(&zeros, checksum);

    // A store whose meta table lacks an entry.
    let no_meta = copy_store(&good, &dir.path().join("no-meta"));
    {
        let env = signet_libmdbx::Environment::builder()
            .set_max_dbs(8)
            .open(&no_meta)
            .unwrap();
        let txn = env.begin_rw_unsync().unwrap();
        let db = txn.open_db(Some(gigagas_state::layout::META)).unwrap();
        assert!(txn.del(db, b"dump_checksum", None).unwrap());
        txn.commit().unwrap();
    }
    let msg = open_fails(&no_meta, checksum);
    assert!(msg.contains("dump_checksum"), "{msg}");

    // Garbage over the middle third of the pages (meta pages and meta table intact): opening may succeed, but every
    // read gives a value or an error, never a panic.
    let scribbled = copy_store(&good, &dir.path().join("scribbled"));
    let mut bytes = fs::read(scribbled.join(DATA_FILE)).unwrap();
    let third = bytes.len() / 3;
    for (i, b) in bytes[third..2 * third].iter_mut().enumerate() {
        *b = (i.wrapping_mul(40503) >> 5) as u8;
    }
    fs::write(scribbled.join(DATA_FILE), &bytes).unwrap();
    match open_store(&scribbled, checksum) {
        Err(e) => {
            eprintln!("scribbled: {e}");
            assert!(!e.to_string().contains('\n'), "{e}")
        }
        Ok(store) => {
            let mut reader = store.reader().unwrap();
            let mut errors = 0;
            for (segment, s) in dump.0.segments.iter().enumerate() {
                for a in &s.pre_state.accounts {
                    if let Err(e) = reader.account(segment, a.address) {
                        if errors == 0 {
                            eprintln!("scribbled read: {e}");
                        }
                        assert!(!e.to_string().contains('\n'), "{e}");
                        errors += 1;
                    }
                }
            }
            assert!(errors > 0, "scribbled pages are noticed");
        }
    }
}

/// A read that fails names the store and the key it read (here a value that does not
/// decode: an account whose stored bytes were overwritten).
#[test]
fn a_failed_read_names_the_store_and_the_key() {
    let dump = generated();
    let dir = scratch();
    let out = dir.path().join("store");
    build(dump, &out, None);
    let address = dump.0.segments[0]
        .pre_state
        .accounts
        .iter()
        .find(|a| a.state.is_some())
        .expect("a present account")
        .address;
    {
        let env = signet_libmdbx::Environment::builder()
            .set_max_dbs(8)
            .open(&out)
            .unwrap();
        let txn = env.begin_rw_unsync().unwrap();
        let db = txn.open_db(Some(gigagas_state::layout::ACCOUNTS)).unwrap();
        let key = [address.as_slice(), &0u32.to_be_bytes()].concat();
        txn.put(db, &key, [0xff], signet_libmdbx::WriteFlags::empty())
            .unwrap();
        txn.commit().unwrap();
    }
    let store = open_store(&out, dump.1.checksum).unwrap();
    let mut reader = store.reader().unwrap();
    let err = reader.account(0, address).unwrap_err();
    let StoreError::BadValue { path, key, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(path, &out);
    assert_eq!(
        key,
        &StoreKey::Account {
            segment: 0,
            address
        }
    );
    let msg = err.to_string();
    assert!(msg.contains(&out.display().to_string()), "{msg}");
    assert!(
        msg.contains(&format!(
            "table PlainAccountState: account {address} of segment 0"
        )),
        "{msg}"
    );
}

/// The file system type of `path` from /proc/mounts (longest matching mount point).
fn fs_type(path: &Path) -> String {
    let path = path.canonicalize().unwrap();
    let mounts = fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, point, kind) = (f.next()?, f.next()?, f.next()?);
            path.starts_with(point)
                .then(|| (point.len(), kind.to_string()))
        })
        .max()
        .map(|(_, kind)| kind)
        .unwrap_or_default()
}

#[test]
fn a_store_just_read_is_not_cold_and_evict_makes_it_cold() {
    let dump = generated();
    let dir = scratch();
    let out = dir.path().join("store");
    build(dump, &out, Some(8 << 20));
    {
        let store = open_store(&out, dump.1.checksum).unwrap();
        let mut reader = store.reader().unwrap();
        assert_reads_back(&dump.0, &mut reader);
        // Read every page: the whole store is now in the page cache.
        let data = fs::read(out.join(DATA_FILE)).unwrap();
        assert!(!data.is_empty());
    }
    let before = residency(&out).unwrap();
    assert!(
        !before.is_cold(),
        "a store just read is not cold: {before:?}"
    );
    assert!(before.fraction() > 0.9, "{before:?}");

    let report = evict(&out, &EvictOptions::default()).unwrap();
    assert_eq!(report.files, 1);
    let kind = fs_type(&out);
    if matches!(kind.as_str(), "tmpfs" | "ramfs") {
        eprintln!(
            "{} is on {kind}: its pages cannot be evicted, skipping",
            out.display()
        );
        return;
    }
    assert!(
        report.after.is_cold(),
        "evict leaves {:.3} resident on {kind}",
        report.after.fraction()
    );

    // Opening the store touches a few pages only: still cold. Reading makes it warm.
    let store = Store::open(&out).unwrap();
    let mut reader = store.reader().unwrap();
    let opened = residency(&out).unwrap();
    assert!(
        opened.resident_bytes <= COLD_MAX_RESIDENT_BYTES,
        "{opened:?}"
    );
    assert_reads_back(&dump.0, &mut reader);
    drop((reader, store));
    assert!(residency(&out).unwrap().resident_bytes > 0);
}

#[test]
fn the_probe_reads_random_blocks_at_depth_one_and_more() {
    let dump = generated();
    let dir = scratch();
    let out = dir.path().join("store");
    build(dump, &out, Some(4 << 20));
    for depth in [1, 2] {
        let r = probe_random_reads(&out.join(DATA_FILE), Duration::from_millis(50), depth).unwrap();
        assert_eq!(r.queue_depth, depth);
        assert!(r.reads > 0 && r.reads_per_s > 0.0, "{r:?}");
        assert!(r.p50 <= r.p99, "{r:?}");
    }
    let empty = dir.path().join("empty");
    fs::write(&empty, b"").unwrap();
    let err = probe_random_reads(&empty, Duration::from_millis(10), 1).unwrap_err();
    assert!(!err.to_string().contains('\n'));
}

/// A written block reads back from the store; taken back, the store holds exactly what it
/// held before (every table's entries, the meta table's included), and reads as the dump.
#[test]
fn a_written_block_reads_back_and_is_taken_back() {
    use gigagas_state::{BlockWrite, StoreWriter, open_store_writable};
    use gigagas_trie::Nibbles;
    let dump = generated();
    let dir = scratch();
    let out = dir.path().join("store");
    build(dump, &out, None);
    let store = open_store_writable(&out, dump.1.checksum).unwrap();
    let before = store.content_digest().unwrap();
    let pre = &dump.0.segments[0].pre_state;
    let account = pre.accounts.iter().find(|a| a.state.is_some()).unwrap();
    let slot = &pre.storage.iter().find(|s| !s.value.is_zero()).unwrap();
    let new = gigagas_dump::AccountState {
        balance: U256::from(12345),
        nonce: 77,
        code_hash: KECCAK256_EMPTY,
    };
    let fresh = Address::repeat_byte(0x5b);
    let code = Bytes::from_static(&[0x60, 0x01, 0x00]);
    let code_hash = alloy_primitives::keccak256(&code);
    let node = Bytes::from(vec![0xc0; 40]);
    let path = Nibbles::from_nibbles([1, 2, 3]);
    let nodes = [(Some(path), Some(node.clone())), (None, None)];
    let account_nodes: Vec<_> = nodes
        .iter()
        .filter_map(|(p, n)| p.map(|p| (p, n.clone())))
        .collect();
    let mut writer = StoreWriter::begin(&store).unwrap();
    let stats = writer
        .write_block(
            0,
            &BlockWrite {
                accounts: &[(account.address, Some(new)), (fresh, Some(new))],
                slots: &[
                    (slot.address, slot.slot, U256::ZERO),
                    (slot.address, U256::from(0xfeed), U256::from(9)),
                ],
                codes: &[(code_hash, code.clone())],
                nodes: &[(None, &account_nodes)],
                wiped: &[],
            },
        )
        .unwrap();
    assert!(stats.bytes > 0 && stats.entries == 6, "{stats:?}");
    assert!(stats.pages > 0, "{stats:?}");
    let mut reader = store.reader().unwrap();
    assert_eq!(reader.account(0, account.address).unwrap(), Some(new));
    assert_eq!(reader.account(0, fresh).unwrap(), Some(new));
    assert_eq!(
        reader.storage(0, slot.address, slot.slot).unwrap(),
        U256::ZERO
    );
    assert_eq!(
        reader.storage(0, slot.address, U256::from(0xfeed)).unwrap(),
        U256::from(9)
    );
    assert_same_code(reader.code(code_hash).unwrap(), &code);
    assert_eq!(
        reader.trie_node(0, None, &[1, 2, 3]).unwrap(),
        Some(node.clone())
    );
    drop(reader);
    assert_ne!(store.content_digest().unwrap(), before);
    assert_eq!(writer.restore().unwrap(), 6);
    assert_eq!(store.content_digest().unwrap(), before);
    drop(store);
    let store = open_store(&out, dump.1.checksum).unwrap();
    assert_reads_back(&dump.0, &mut store.reader().unwrap());
}

/// A store left dirty (the pass never took its blocks back) is refused in one line; a store
/// without write permission, or opened read-only, cannot take a writing pass.
#[test]
fn dirty_and_read_only_stores_are_refused() {
    use gigagas_state::{StoreWriter, open_store_writable};
    use std::os::unix::fs::PermissionsExt;
    let dump = generated();
    let dir = scratch();
    let out = dir.path().join("store");
    build(dump, &out, None);
    let read_only = open_store(&out, dump.1.checksum).unwrap();
    let err = StoreWriter::begin(&read_only).unwrap_err();
    assert!(matches!(err, StoreError::ReadOnly { .. }), "{err}");
    drop(read_only);
    let data = out.join(DATA_FILE);
    let mode = fs::metadata(&data).unwrap().permissions().mode();
    fs::set_permissions(&data, fs::Permissions::from_mode(0o444)).unwrap();
    let err = open_store_writable(&out, dump.1.checksum).unwrap_err();
    fs::set_permissions(&data, fs::Permissions::from_mode(mode)).unwrap();
    assert!(matches!(err, StoreError::ReadOnly { .. }), "{err}");
    assert!(!err.to_string().contains('\n'), "{err}");

    let store = open_store_writable(&out, dump.1.checksum).unwrap();
    let writer = StoreWriter::begin(&store).unwrap();
    drop(writer);
    drop(store);
    let err = open_store(&out, dump.1.checksum).unwrap_err();
    assert!(matches!(err, StoreError::Dirty { .. }), "{err}");
    assert!(err.to_string().contains("rebuild"), "{err}");
}

/// Block `i` of a synthetic chain: `account`'s balance set to `i + 1`, and a node of its
/// own under the account trie's path [i mod 16].
fn balance_block(account: Address, i: usize) -> gigagas_trie::BlockChanges {
    use gigagas_trie::Nibbles;
    gigagas_trie::BlockChanges {
        accounts: vec![(
            account,
            Some(gigagas_dump::AccountState {
                balance: U256::from(i + 1),
                nonce: i as u64,
                code_hash: KECCAK256_EMPTY,
            }),
        )],
        account_nodes: vec![(
            Nibbles::from_nibbles([(i % 16) as u8]),
            Some(Bytes::from(vec![i as u8; 40])),
        )],
        ..Default::default()
    }
}

/// The background writer commits in groups as its backlog says (a group once the head is
/// more than `threshold` ahead, up to `buffer` behind the head; the hand-over stalls past
/// `buffer + backpressure`), and after its drain every block is in the store; taken back,
/// the store holds exactly what it was built with. Stopped part-way (dropped, as a process
/// that ends), it leaves the store marked dirty and refused.
#[test]
fn the_background_writer_commits_in_groups_and_a_stopped_one_leaves_the_store_dirty() {
    use gigagas_grid::Backlog;
    use gigagas_state::{BackgroundWriter, StoreWriter, open_store_writable};
    let dump = generated();
    let dir = scratch();
    let out = dir.path().join("store");
    build(dump, &out, None);
    let account = Address::repeat_byte(0x7c);
    let limits = Backlog {
        threshold: 2,
        buffer: 1,
        backpressure: 1,
    };
    let store = open_store_writable(&out, dump.1.checksum).unwrap();
    let before = store.content_digest().unwrap();
    let writer = BackgroundWriter::start(StoreWriter::begin(&store).unwrap(), limits).unwrap();
    let blocks = 9;
    for i in 0..blocks {
        writer.hand(0, i, balance_block(account, i)).unwrap();
    }
    writer.drain().unwrap();
    let commits = writer.commits();
    assert_eq!(
        commits.iter().map(|c| c.blocks as usize).sum::<usize>(),
        blocks,
        "{commits:?}"
    );
    // Before the drain a group is what is held less `buffer`, and one thread handing
    // blocks never holds more than `buffer + backpressure + 1`: at most `backpressure + 1`
    // blocks a group.
    let (drained, steady) = commits.split_last().unwrap();
    assert!(
        steady.iter().all(|c| c.blocks >= 1 && c.blocks <= 2),
        "{commits:?}"
    );
    assert!(
        commits
            .iter()
            .all(|c| c.stats.pages > 0 && c.stats.bytes > 0)
    );
    assert_eq!(drained.last_block, blocks - 1, "{commits:?}");
    let mut reader = store.reader().unwrap();
    let last = reader.account(0, account).unwrap().unwrap();
    assert_eq!(last.balance, U256::from(blocks), "every block is on disk");
    for i in blocks - 16.min(blocks)..blocks {
        let node = reader.trie_node(0, None, &[(i % 16) as u8]).unwrap();
        assert_eq!(node, Some(Bytes::from(vec![i as u8; 40])), "block {i}");
    }
    drop(reader);
    let (writer, failed) = writer.finish().unwrap();
    assert!(failed.is_none());
    assert!(writer.restore().unwrap() > 0);
    assert_eq!(store.content_digest().unwrap(), before);

    // Stopped part-way: some blocks committed, the rest never written, the store refused.
    let writer = BackgroundWriter::start(StoreWriter::begin(&store).unwrap(), limits).unwrap();
    for i in 0..5 {
        writer.hand(0, i, balance_block(account, i)).unwrap();
    }
    assert!(!writer.commits().is_empty());
    drop(writer);
    drop(store);
    let err = open_store(&out, dump.1.checksum).unwrap_err();
    assert!(matches!(err, StoreError::Dirty { .. }), "{err}");
}

/// Reading ahead the path to a key meets exactly the nodes the store holds at that key's
/// prefixes (each read one by one), for the accounts and slots of the committed witness
/// dump and for keys off every path.
#[test]
fn reading_ahead_a_path_meets_every_node_at_its_prefixes() {
    use alloy_primitives::keccak256;
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet-like-witness.gigagas");
    let dump = read_dump(&path).expect("dumps/mainnet-like-witness.gigagas reads");
    let dir = scratch();
    let out = dir.path().join("store");
    build(&dump, &out, None);
    let store = open_store(&out, dump.1.checksum).unwrap();
    let mut reader = store.reader().unwrap();
    let pre = &dump.0.segments[0].pre_state;
    let unpack = |key: B256| -> Vec<u8> { key.iter().flat_map(|b| [b >> 4, b & 15]).collect() };
    let mut keys: Vec<(Option<B256>, Vec<u8>)> = pre
        .accounts
        .iter()
        .map(|a| (None, unpack(keccak256(a.address))))
        .chain(pre.storage.iter().map(|s| {
            let owner = keccak256(s.address);
            (Some(owner), unpack(keccak256(B256::from(s.slot))))
        }))
        .collect();
    keys.extend((0u8..32).map(|i| (None, unpack(keccak256([i, 0xaa])))));
    let (mut met_total, mut deepest) = (0, 0);
    for (owner, key) in &keys {
        let at_prefixes = (0..=key.len())
            .filter(|&d| {
                reader
                    .trie_node(0, owner.as_ref(), &key[..d])
                    .unwrap()
                    .is_some()
            })
            .count() as u32;
        let met = reader.read_ahead_trie_path(0, owner.as_ref(), key).unwrap();
        assert_eq!(met, at_prefixes, "owner {owner:?}, key {key:?}");
        met_total += met;
        deepest = deepest.max(met);
    }
    assert!(
        met_total > keys.len() as u32 && deepest >= 3,
        "{met_total} nodes, deepest {deepest}"
    );
}
