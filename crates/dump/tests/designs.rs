//! The access-list designs (`gigagas_dump::designs`) on real data: the `keys` size against
//! the encoded lists of execution-spec-tests' Amsterdam fixtures (each checked against its
//! header's `blockAccessListHash`), and the `full` list on every block of the committed
//! dumps (round trip, the EIP-7928 list inside it, the values at the start of each block,
//! full ≥ keys ≥ writes).

use alloy_eip7928::BlockAccessList;
use alloy_primitives::{Address, B256, Bytes, KECCAK256_EMPTY, U256, keccak256};
use alloy_rlp::{Decodable, Encodable};
use gigagas_dump::{
    AccessListDesign, AccountState, BlockDesignSizes, BlockStartState, Dump, FullAccessList,
    PreAccount, PreSlot, PreState, design_sizes, full_access_list, full_access_lists, read_dump,
    writes_only,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;

fn committed(name: &str) -> Dump {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../dumps")
        .join(name);
    read_dump(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .0
}

fn u256(v: &Value) -> U256 {
    v.as_str().unwrap().parse().unwrap()
}

/// The pre-state of a fixture test for every account and slot its blocks' lists name: the
/// fixture's `pre` allocation, accounts it lacks recorded absent and slots it lacks zero
/// (as the importer records them).
fn fixture_pre_state(pre: &Value, lists: &[BlockAccessList]) -> PreState {
    let mut accounts = BTreeSet::new();
    let mut slots = BTreeSet::new();
    for a in lists.iter().flatten() {
        accounts.insert(a.address);
        for s in a.storage_slots() {
            slots.insert((a.address, s));
        }
    }
    let alloc = |a: &Address| {
        pre.as_object()
            .unwrap()
            .iter()
            .find(|(k, _)| k.parse::<Address>().unwrap() == *a)
            .map(|(_, v)| v)
    };
    let mut state = PreState::default();
    for address in &accounts {
        let account = alloc(address).map(|v| {
            let code: Bytes = v["code"].as_str().unwrap().parse().unwrap();
            if !code.is_empty() {
                state.codes.push((keccak256(&code), code.clone()));
            }
            AccountState {
                balance: u256(&v["balance"]),
                nonce: u256(&v["nonce"]).to(),
                code_hash: keccak256(&code),
            }
        });
        state.accounts.push(PreAccount {
            address: *address,
            state: account,
        });
    }
    for &(address, slot) in &slots {
        let value = alloc(&address)
            .and_then(|v| v["storage"].as_object())
            .and_then(|storage| {
                storage
                    .iter()
                    .find(|(k, _)| k.parse::<U256>().unwrap() == slot)
                    .map(|(_, v)| u256(v))
            })
            .unwrap_or(U256::ZERO);
        state.storage.push(PreSlot {
            address,
            slot,
            value,
        });
    }
    state.canonicalize();
    state
}

/// Every `*.json` under `dir`, recursively.
fn json_files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            json_files_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

/// Every Amsterdam fixture whose blocks all carry their access list: each list's encoding
/// hashes to the header's `blockAccessListHash` (so its length is the length of the list
/// the block commits to), and that length is the `keys` size; `full` ≥ `keys` ≥ `writes`,
/// and the `full` list round-trips, over the blocks of the test walked from its `pre`.
#[test]
fn the_keys_size_is_the_length_of_the_list_an_amsterdam_header_commits_to() {
    let dir = corpora::path("eest/amsterdam-bal");
    let mut files = Vec::new();
    json_files_under(&dir, &mut files);
    files.sort();
    assert!(!files.is_empty(), "{}: no fixtures", dir.display());
    let (mut blocks, mut largest) = (0usize, 0usize);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let file: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
        for (name, test) in &file {
            let fixture_blocks = test["blocks"].as_array().unwrap();
            if fixture_blocks
                .iter()
                .any(|b| b.get("expectException").is_some() || b.get("blockAccessList").is_none())
            {
                continue;
            }
            let lists: Vec<BlockAccessList> = fixture_blocks
                .iter()
                .map(|b| serde_json::from_value(b["blockAccessList"].clone()).unwrap())
                .collect();
            let pre = fixture_pre_state(&test["pre"], &lists);
            let mut state = BlockStartState::new(&pre);
            for (block, list) in fixture_blocks.iter().zip(&lists) {
                let header = &block["blockHeader"];
                let number: u64 = u256(&header["number"]).to();
                let encoded = alloy_rlp::encode(list);
                let committed: B256 = header["blockAccessListHash"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert_eq!(keccak256(&encoded), committed, "{name}, block {number}");

                let sizes = BlockDesignSizes::of(&state, number, list).unwrap();
                assert_eq!(sizes.keys, encoded.len(), "{name}, block {number}");
                assert!(
                    sizes.full >= sizes.keys && sizes.keys >= sizes.writes,
                    "{name}, block {number}: {sizes:?}"
                );
                let full = FullAccessList::build(&state, number, list).unwrap();
                let bytes = full.encode_to_vec();
                assert_eq!(bytes.len(), sizes.full);
                assert_eq!(FullAccessList::decode(&mut bytes.as_slice()).unwrap(), full);
                assert_eq!(&full.to_block_access_list(), list);
                state.apply(list);
                blocks += 1;
                largest = largest.max(encoded.len());
            }
        }
    }
    eprintln!(
        "{blocks} Amsterdam blocks in {} files, the largest list {largest} bytes",
        files.len()
    );
    assert!(blocks > 50, "only {blocks} blocks carry their access list");
}

/// The `full` list of every block of `dump`: it encodes to its size, decodes to itself
/// (with nothing left over), holds the block's EIP-7928 list, and full ≥ keys ≥ writes.
fn check_full_on_every_block(dump: &Dump) {
    let sizes = design_sizes(dump).unwrap();
    assert_eq!(sizes.blocks.len(), dump.block_count());
    let mut i = 0;
    for segment in &dump.segments {
        let lists = full_access_lists(segment).unwrap();
        assert_eq!(lists.len(), segment.blocks.len());
        for (block, full) in segment.blocks.iter().zip(&lists) {
            let n = block.number();
            let bytes = full.encode_to_vec();
            let mut rest = bytes.as_slice();
            let decoded = FullAccessList::decode(&mut rest).unwrap();
            assert!(rest.is_empty(), "block {n}: bytes left after decoding");
            assert_eq!(&decoded, full, "block {n}");
            assert_eq!(
                decoded.to_block_access_list(),
                block.access_list,
                "block {n}"
            );
            // Every account and slot the block names has its value, once.
            for (a, f) in block.access_list.iter().zip(decoded.accounts()) {
                assert_eq!(a.address, f.address);
                assert_eq!(
                    f.pre_slots().map(|(s, _)| s).collect::<Vec<_>>(),
                    a.storage_slots().collect::<Vec<_>>()
                );
            }
            let s = sizes.blocks[i];
            assert_eq!(s.block, n);
            assert_eq!(s.full, bytes.len(), "block {n}");
            assert_eq!(s.keys, block.access_list.length(), "block {n}");
            assert_eq!(s.writes, writes_only(&block.access_list).length());
            assert!(s.full >= s.keys && s.keys >= s.writes, "block {n}: {s:?}");
            i += 1;
        }
    }
    // The summary is over every block, and the designs are ordered.
    let [full, keys, writes] = sizes.summaries();
    assert_eq!(
        full.total,
        sizes.blocks.iter().map(|b| b.full).sum::<usize>()
    );
    assert!(full.mean >= keys.mean && keys.mean >= writes.mean);
    assert_eq!(keys.design, AccessListDesign::Keys);
}

/// The `full` list of a segment's first block holds the segment's pre-state.
fn check_first_blocks_hold_the_pre_state(dump: &Dump) {
    for segment in &dump.segments {
        let full = full_access_list(segment, 0).unwrap();
        let pre = &segment.pre_state;
        for a in full.accounts() {
            assert_eq!(
                Some(a.pre_state().as_ref()),
                pre.account(a.address),
                "{}",
                a.address
            );
            for (slot, value) in a.pre_slots() {
                assert_eq!(
                    Some(value),
                    pre.slot(a.address, slot),
                    "{} {slot}",
                    a.address
                );
            }
        }
    }
}

#[test]
fn full_round_trips_and_holds_the_pre_state_on_every_mainnet_block() {
    let dump = committed("mainnet.gigagas");
    check_full_on_every_block(&dump);
    check_first_blocks_hold_the_pre_state(&dump);
    // Mainnet's blocks read a good deal: `full` adds values to many keys, `writes` drops
    // many keys.
    let sizes = design_sizes(&dump).unwrap();
    let [full, keys, writes] = sizes.summaries();
    assert!(
        full.total > keys.total && keys.total > writes.total,
        "{sizes}"
    );
}

/// On a segment of 100 blocks, a block's values are what the blocks before it wrote last:
/// each account's balance, nonce and code hash after a block that changes them is the
/// next block's (or a later one's) `pre`, and each written slot's last value is a later
/// block's value of it.
#[test]
fn later_blocks_start_from_what_earlier_blocks_wrote() {
    let dump = committed("mainnet-like.gigagas");
    assert_eq!(dump.segments.len(), 1);
    check_full_on_every_block(&dump);
    check_first_blocks_hold_the_pre_state(&dump);
    let segment = &dump.segments[0];
    let lists = full_access_lists(segment).unwrap();
    let mut accounts: BTreeMap<Address, AccountState> = BTreeMap::new();
    let mut slots: BTreeMap<(Address, U256), U256> = BTreeMap::new();
    let (mut carried_accounts, mut carried_slots) = (0, 0);
    for (block, full) in segment.blocks.iter().zip(&lists) {
        for a in full.accounts() {
            if let Some(expected) = accounts.get(&a.address) {
                assert_eq!(a.pre_state(), Some(*expected), "block {}", block.number());
                carried_accounts += 1;
            }
            for (slot, value) in a.pre_slots() {
                if let Some(expected) = slots.get(&(a.address, slot)) {
                    assert_eq!(value, *expected, "block {}", block.number());
                    carried_slots += 1;
                }
            }
        }
        for a in &block.access_list {
            let written = !a.balance_changes.is_empty()
                || !a.nonce_changes.is_empty()
                || !a.code_changes.is_empty();
            if written {
                let before = full
                    .accounts()
                    .iter()
                    .find(|f| f.address == a.address)
                    .unwrap()
                    .pre_state();
                let before = before.unwrap_or(AccountState {
                    balance: U256::ZERO,
                    nonce: 0,
                    code_hash: KECCAK256_EMPTY,
                });
                accounts.insert(
                    a.address,
                    AccountState {
                        balance: a.balance_post_state().unwrap_or(before.balance),
                        nonce: a.nonce_post_state().unwrap_or(before.nonce),
                        code_hash: a.code_hash_post_state().unwrap_or(before.code_hash),
                    },
                );
            }
            for (slot, value) in a.storage_post_states() {
                slots.insert((a.address, slot), value);
            }
        }
    }
    assert!(
        carried_accounts > 100 && carried_slots > 100,
        "{carried_accounts} accounts and {carried_slots} slots carried from an earlier block"
    );
}

/// A block index past the segment's end is an error, not a panic.
#[test]
fn a_block_past_the_segment_is_refused() {
    let dump = committed("mainnet.gigagas");
    let segment = &dump.segments[0];
    let err = full_access_list(segment, segment.blocks.len()).unwrap_err();
    assert!(err.to_string().contains("past the end"), "{err}");
}

/// The items of the RLP list at the start of `bytes`, each as its encoded bytes.
fn list_items(mut bytes: &[u8]) -> Vec<&[u8]> {
    let header = alloy_rlp::Header::decode(&mut bytes).unwrap();
    assert!(header.list);
    let mut payload = &bytes[..header.payload_length];
    let mut items = Vec::new();
    while !payload.is_empty() {
        let start = payload;
        let h = alloy_rlp::Header::decode(&mut payload).unwrap();
        payload = &payload[h.payload_length..];
        items.push(&start[..start.len() - payload.len()]);
    }
    items
}

/// The RLP list of these already encoded items.
fn list_of(items: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
    let payload: Vec<u8> = items.into_iter().flatten().collect();
    let mut out = Vec::new();
    alloy_rlp::Header {
        list: true,
        payload_length: payload.len(),
    }
    .encode(&mut out);
    out.extend(payload);
    out
}

/// The `full` encoding is the one the module documentation gives, on every account of the
/// mainnet blocks: EIP-7928's six items with the values added, then `pre` (three items)
/// only for an account that exists at the start of the block; an account without slots has
/// EIP-7928's bytes plus `pre`, exactly.
#[test]
fn the_full_encoding_is_the_documented_one() {
    let dump = committed("mainnet.gigagas");
    let (mut absent, mut existing) = (0, 0);
    for segment in &dump.segments {
        for (block, full) in segment
            .blocks
            .iter()
            .zip(full_access_lists(segment).unwrap())
        {
            let bytes = full.encode_to_vec();
            let accounts = list_items(&bytes);
            assert_eq!(accounts.len(), block.access_list.len());
            for ((item, f), a) in accounts.iter().zip(full.accounts()).zip(&block.access_list) {
                let fields = list_items(item);
                let keys = alloy_rlp::encode(a);
                let eip7928 = list_items(&keys);
                assert_eq!(fields.len(), 6 + usize::from(f.pre.is_some()));
                // address, balance, nonce and code changes as EIP-7928 writes them.
                for i in [0, 3, 4, 5] {
                    assert_eq!(fields[i], eip7928[i]);
                }
                assert_eq!(list_items(fields[1]).len(), a.storage_changes.len());
                assert_eq!(list_items(fields[2]).len(), a.storage_reads.len());
                // Each written slot: its key, its value at the start, EIP-7928's writes.
                for (written, s) in list_items(fields[1]).iter().zip(&f.storage_changes) {
                    let expected = list_of([
                        alloy_rlp::encode(s.slot),
                        alloy_rlp::encode(s.pre_value),
                        alloy_rlp::encode(&s.changes),
                    ]);
                    assert_eq!(*written, expected.as_slice());
                }
                for (pair, (slot, value)) in list_items(fields[2])
                    .iter()
                    .zip(f.pre_slots().skip(a.storage_changes.len()))
                {
                    let expected = list_of([alloy_rlp::encode(slot), alloy_rlp::encode(value)]);
                    assert_eq!(*pair, expected.as_slice());
                }
                match f.pre {
                    None => absent += 1,
                    Some(pre) => {
                        existing += 1;
                        let expected = list_of([
                            alloy_rlp::encode(pre.balance),
                            alloy_rlp::encode(pre.nonce),
                            alloy_rlp::encode(pre.code_hash),
                        ]);
                        assert_eq!(fields[6], expected.as_slice());
                    }
                }
                if a.storage_changes.is_empty() && a.storage_reads.is_empty() {
                    // EIP-7928's fields, then `pre` where the account exists.
                    let expected = list_of(eip7928.iter().chain(fields.get(6)).map(|i| i.to_vec()));
                    assert_eq!(*item, expected.as_slice());
                }
            }
        }
    }
    assert!(
        absent > 100 && existing > 1000,
        "{absent} absent, {existing} existing"
    );
}
