//! The tables of a store and how keys and values are encoded in them.
//!
//! | table | key | value | like reth's |
//! |---|---|---|---|
//! | [`ACCOUNTS`] | address (20) ++ segment (u32 BE) | `encode_account`: compact nonce, balance, code hash | `PlainAccountState` |
//! | [`STORAGE`] (DUPSORT) | address (20) ++ segment (u32 BE) | slot (32) ++ value (BE, leading zeros stripped) | `PlainStorageState` |
//! | [`BYTECODES`] | code hash (32) | `encode_code`: the code with its jump table (analysed once, when the store is built) | `Bytecodes` (reth keeps analysed code too) |
//! | [`BLOCK_HASHES`] | segment (u32 BE) ++ number (u64 BE) | hash (32) | `CanonicalHeaders` |
//! | [`TRIE_NODES`] | segment (u32 BE) ++ `0` ++ path, or segment ++ `1` ++ keccak256(address) (32) ++ path; a path one nibble per byte | the node's RLP | `AccountsTrie` / `StoragesTrie` |
//! | [`META`] | name (ASCII) | u64 LE | – |
//!
//! The segment comes *after* the address: segments still never see each other's entries
//! (every lookup names its segment), and the accounts a block reads lie spread over the
//! whole table among the padding, as in a node's database, rather than packed into a few
//! leaf pages at one end of it. Padding uses segment [`PAD_SEGMENT`], which no dump
//! segment has, so a padded entry can never answer a real read.

use crate::StoreError;
use alloy_primitives::{Address, B256, Bytes, KECCAK256_EMPTY, U256};
use gigagas_dump::AccountState;
use revm_bytecode::{Bytecode, JumpTable};
use std::path::Path;

/// Version of the layout described in this module; a store of another version is refused
/// (rebuild it). Version 5 counts the padded tries' virtual nodes in the meta table
/// (`pad_trie_nodes`); version 4 keys trie nodes by trie and path (version 3 by hash).
pub const FORMAT_VERSION: u32 = 5;

/// Accounts by address and segment (reth's `PlainAccountState`).
pub const ACCOUNTS: &str = "PlainAccountState";
/// Storage by address and segment, dup-sorted by slot (reth's `PlainStorageState`).
pub const STORAGE: &str = "PlainStorageState";
/// Bytecode by code hash (reth's `Bytecodes`), shared by all segments.
pub const BYTECODES: &str = "Bytecodes";
/// Block hashes by segment and number (reth's `CanonicalHeaders`).
pub const BLOCK_HASHES: &str = "CanonicalHeaders";
/// The trie nodes of each segment by trie and path, as reth keys its `AccountsTrie` and
/// `StoragesTrie` (storage tries by the hashed address): the state-root phase of a store run
/// reads each block's nodes from here as the block needs them. Every node of the witness
/// that the segment's blocks can read is stored, leaves included (reth keeps branch nodes
/// only and rebuilds leaves from its hashed state; a witness carries its leaves, so they are
/// read as nodes here, as go-ethereum's path-keyed tables keep them); a node under 32 bytes
/// lies inside its parent. A padded store adds, at their true paths, nodes of the padded
/// tries' virtual subtries, as many as a client's tries hold for the padding's accounts and
/// slots, so the table has a client's size and the witness's nodes lie among nodes a block
/// does not need. Empty for segments without a witness.
pub const TRIE_NODES: &str = "TrieNodes";
/// What the store was built from, and counts.
pub const META: &str = "GigagasMeta";

/// The meta-table key that marks a store changed by a `--persist` pass not yet taken back.
pub(crate) const DIRTY: &str = "persist_dirty";

/// The segment number of padding entries; a dump segment never has it.
pub const PAD_SEGMENT: u32 = u32::MAX;

/// Length of an account or storage key.
pub(crate) const STATE_KEY_LEN: usize = 24;

/// The key of `address` in segment `segment` in [`ACCOUNTS`] and [`STORAGE`].
pub(crate) fn state_key(address: &Address, segment: u32) -> [u8; STATE_KEY_LEN] {
    let mut key = [0u8; STATE_KEY_LEN];
    key[..20].copy_from_slice(address.as_slice());
    key[20..].copy_from_slice(&segment.to_be_bytes());
    key
}

/// Longest [`TRIE_NODES`] key: segment, trie kind, hashed address, 64 nibbles.
const TRIE_NODE_KEY_MAX: usize = 4 + 1 + 32 + 64;

/// A key of [`TRIE_NODES`]: segment (u32 BE), `0` for the account trie or `1` and the
/// storage trie's hashed address, then the node's path, one nibble per byte (so a path
/// sorts before the paths below it, as in reth's tables).
#[derive(Clone, Copy)]
pub(crate) struct TrieNodeKey {
    bytes: [u8; TRIE_NODE_KEY_MAX],
    len: usize,
}

impl TrieNodeKey {
    /// The key of the node at `path` (nibbles, each under 16; at most 64) of the account
    /// trie (`owner` `None`) or of the storage trie whose hashed address is `owner`.
    pub(crate) fn new(segment: u32, owner: Option<&B256>, path: &[u8]) -> Option<Self> {
        if path.len() > 64 || path.iter().any(|n| *n > 15) {
            return None;
        }
        let mut bytes = [0u8; TRIE_NODE_KEY_MAX];
        bytes[..4].copy_from_slice(&segment.to_be_bytes());
        let mut len = 5;
        if let Some(owner) = owner {
            bytes[4] = 1;
            bytes[5..37].copy_from_slice(owner.as_slice());
            len = 37;
        }
        bytes[len..len + path.len()].copy_from_slice(path);
        Some(Self {
            bytes,
            len: len + path.len(),
        })
    }

    /// The key's bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// splitmix64: a fast, well-mixed 64-bit hash of a counter, what the padding's entries and
/// the device probe's reads are drawn from (the same counter gives the same store).
pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The key of block `number` of segment `segment` in [`BLOCK_HASHES`].
pub(crate) fn block_hash_key(segment: u32, number: u64) -> [u8; 12] {
    let mut key = [0u8; 12];
    key[..4].copy_from_slice(&segment.to_be_bytes());
    key[4..].copy_from_slice(&number.to_be_bytes());
    key
}

/// A key of a table as a reader asks for it: what a failed read names
/// ([`StoreError::ReadKey`], [`StoreError::BadValue`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreKey {
    /// An account of a segment ([`ACCOUNTS`]).
    Account {
        /// The segment.
        segment: usize,
        /// The account.
        address: Address,
    },
    /// A storage slot of an account of a segment ([`STORAGE`]).
    Slot {
        /// The segment.
        segment: usize,
        /// The account.
        address: Address,
        /// The slot.
        slot: U256,
    },
    /// Code by hash ([`BYTECODES`]).
    Code(B256),
    /// The hash of a block before a segment's first ([`BLOCK_HASHES`]).
    BlockHash {
        /// The segment.
        segment: usize,
        /// The block's number.
        number: u64,
    },
    /// A trie node of a segment ([`TRIE_NODES`]).
    TrieNode {
        /// The segment.
        segment: usize,
        /// `None` for the account trie, else the storage trie's hashed address.
        owner: Option<B256>,
        /// The node's path, one nibble per byte.
        path: Vec<u8>,
    },
}

impl StoreKey {
    /// The table the key is read from.
    pub fn table(&self) -> &'static str {
        match self {
            Self::Account { .. } => ACCOUNTS,
            Self::Slot { .. } => STORAGE,
            Self::Code(_) => BYTECODES,
            Self::BlockHash { .. } => BLOCK_HASHES,
            Self::TrieNode { .. } => TRIE_NODES,
        }
    }
}

impl std::fmt::Display for StoreKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Account { segment, address } => {
                write!(f, "account {address} of segment {segment}")
            }
            Self::Slot {
                segment,
                address,
                slot,
            } => write!(f, "slot {slot:#x} of {address} in segment {segment}"),
            Self::Code(hash) => write!(f, "code {hash}"),
            Self::BlockHash { segment, number } => {
                write!(f, "the hash of block {number} in segment {segment}")
            }
            Self::TrieNode {
                segment,
                owner,
                path,
            } => {
                let nibbles: String = path.iter().map(|n| format!("{n:x}")).collect();
                match owner {
                    None => write!(f, "trie node [{nibbles}] of the account trie")?,
                    Some(owner) => write!(f, "trie node [{nibbles}] of storage trie {owner}")?,
                }
                write!(f, " in segment {segment}")
            }
        }
    }
}

/// The big-endian bytes of `bytes` without leading zeros.
fn strip(bytes: &[u8]) -> &[u8] {
    let zeros = bytes.iter().take_while(|b| **b == 0).count();
    &bytes[zeros..]
}

/// An account's value: `[nonce length][balance length | 0x80 if it has code]`, then the
/// nonce and the balance big-endian without leading zeros, then the code hash if it is
/// not the empty code's hash. 2–74 bytes (reth's compact `Account` is similar).
pub(crate) fn encode_account(account: &AccountState, out: &mut Vec<u8>) {
    out.clear();
    let nonce = account.nonce.to_be_bytes();
    let nonce = strip(&nonce);
    let balance = account.balance.to_be_bytes::<32>();
    let balance = strip(&balance);
    let has_code = account.code_hash != KECCAK256_EMPTY;
    out.push(nonce.len() as u8);
    out.push(balance.len() as u8 | if has_code { 0x80 } else { 0 });
    out.extend_from_slice(nonce);
    out.extend_from_slice(balance);
    if has_code {
        out.extend_from_slice(account.code_hash.as_slice());
    }
}

/// Why a value read from a table does not decode (the store is corrupt, or was not
/// written by this layout). Each variant displays as one phrase naming the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// An account value shorter than its two header bytes.
    #[error("account value of {len} bytes")]
    AccountTooShort {
        /// Bytes of the value.
        len: usize,
    },
    /// An account header with a nonce longer than 8 bytes, a balance longer than 32 or
    /// a flag the layout never sets.
    #[error("account header {nonce_len:#04x} {flags:#04x} is not one this layout writes")]
    AccountHeader {
        /// The first header byte: the nonce's length.
        nonce_len: u8,
        /// The second: the balance's length and the code flag.
        flags: u8,
    },
    /// An account value whose length after the header is not what the header says.
    #[error("account value has {found} bytes after its header, its header says {expected}")]
    AccountLength {
        /// Bytes after the header.
        found: usize,
        /// Bytes the header announces (nonce, balance, code hash).
        expected: usize,
    },
    /// A storage entry shorter than its slot or longer than a slot and a full value.
    #[error("storage entry of {len} bytes")]
    SlotEntry {
        /// Bytes of the entry.
        len: usize,
    },
    /// A block hash that is not 32 bytes.
    #[error("block hash of {len} bytes")]
    BlockHash {
        /// Bytes of the value.
        len: usize,
    },
    /// A bytecode value whose kind byte is not one this layout writes, or that is too
    /// short for its kind's header (`kind` is `None` for an empty value).
    #[error("bytecode value of {len} bytes with kind {kind:?}")]
    CodeHeader {
        /// Bytes of the value.
        len: usize,
        /// Its first byte.
        kind: Option<u8>,
    },
    /// A legacy bytecode value whose jump table does not cover its code.
    #[error("bytecode of {code_len} bytes with a jump table of {table_len} bytes")]
    CodeJumpTable {
        /// Bytes of code the value holds.
        code_len: usize,
        /// Bytes of jump table the value holds (one bit per byte of code is needed).
        table_len: usize,
    },
    /// A delegation (EIP-7702) value that is not a valid delegation.
    #[error("delegation bytecode of {len} bytes is not an EIP-7702 designator")]
    CodeDelegation {
        /// Bytes of the code.
        len: usize,
    },
}

/// [`encode_code`]'s kind byte of legacy code, followed by its jump table.
const CODE_LEGACY: u8 = 0;
/// [`encode_code`]'s kind byte of an EIP-7702 delegation, followed by the designator.
const CODE_DELEGATION: u8 = 1;
/// The zero bytes a legacy code read from the store is given after its end: a `PUSH32` in
/// its last byte reads 32 bytes past it and the next opcode must still be inside (a
/// `STOP`), so no instruction of any code reads past this (revm's own analysis pads by at
/// most 34 bytes too).
const CODE_PADDING: usize = 34;

/// A bytecode's value: a kind byte, then for legacy code (kind 0) its original length
/// (u32 BE), its jump table (one bit per byte of code, as revm's analysis makes it) and the
/// code; for an EIP-7702 delegation (kind 1), the 23-byte designator. A read then needs no
/// analysis, as reth's `Bytecodes` keeps code analysed.
pub(crate) fn encode_code(code: &Bytes, out: &mut Vec<u8>) {
    out.clear();
    match Bytecode::new_raw_checked(code.clone()) {
        Ok(analysed) if analysed.is_legacy() => {
            let table = analysed
                .legacy_jump_table()
                .expect("legacy code has a jump table");
            out.push(CODE_LEGACY);
            out.extend_from_slice(&(code.len() as u32).to_be_bytes());
            out.extend_from_slice(&table.as_slice()[..code.len().div_ceil(8)]);
        }
        // A delegation, or bytes that start like one and are not one (the chain cannot
        // hold those; a read gives the same error `new_raw_checked` gives here).
        _ => out.push(CODE_DELEGATION),
    }
    out.extend_from_slice(code);
}

/// Decode [`encode_code`]'s value into the analysed bytecode revm runs, copying the code
/// out of the page once; `Err` says what is wrong with it. Whatever the value holds, the
/// result is safe to run: the code is padded here (not trusted to be padded), and the jump
/// table is checked to cover it.
pub(crate) fn decode_code(value: &[u8]) -> Result<Bytecode, ValueError> {
    match value.split_first() {
        Some((&CODE_LEGACY, rest)) if rest.len() >= 4 => {
            let (len, rest) = rest.split_at(4);
            let len = u32::from_be_bytes(len.try_into().expect("four bytes")) as usize;
            let table_len = len.div_ceil(8);
            if len == 0 {
                return Ok(Bytecode::new());
            }
            if rest.len() != table_len + len {
                return Err(ValueError::CodeJumpTable {
                    code_len: rest.len().saturating_sub(table_len),
                    table_len: rest.len().min(table_len),
                });
            }
            let (table, code) = rest.split_at(table_len);
            let mut padded = Vec::with_capacity(len + CODE_PADDING);
            padded.extend_from_slice(code);
            padded.resize(len + CODE_PADDING, 0);
            // SAFETY: `padded` ends in CODE_PADDING zero bytes, more than any instruction
            // reads past the code's end (see CODE_PADDING), so running it never reads past
            // the allocation whatever the code; the jump table covers `len` bits (checked
            // above), and a wrong table can only allow jumps inside the code (a divergence
            // that verification reports, not a read out of bounds).
            Ok(unsafe {
                Bytecode::new_analyzed(Bytes::from(padded), len, JumpTable::from_slice(table, len))
            })
        }
        Some((&CODE_DELEGATION, code)) => Bytecode::new_eip7702_raw(Bytes::copy_from_slice(code))
            .map_err(|_| ValueError::CodeDelegation { len: code.len() }),
        _ => Err(ValueError::CodeHeader {
            len: value.len(),
            kind: value.first().copied(),
        }),
    }
}

/// Decode [`encode_account`]'s value; `Err` says what is wrong with it.
pub(crate) fn decode_account(value: &[u8]) -> Result<AccountState, ValueError> {
    let [nonce_len, flags, rest @ ..] = value else {
        return Err(ValueError::AccountTooShort { len: value.len() });
    };
    let (header_nonce, flags) = (*nonce_len, *flags);
    let nonce_len = header_nonce as usize;
    let balance_len = (flags & 0x3f) as usize;
    let has_code = flags & 0x80 != 0;
    if nonce_len > 8 || balance_len > 32 || flags & 0x40 != 0 {
        return Err(ValueError::AccountHeader {
            nonce_len: header_nonce,
            flags,
        });
    }
    let want = nonce_len + balance_len + if has_code { 32 } else { 0 };
    if rest.len() != want {
        return Err(ValueError::AccountLength {
            found: rest.len(),
            expected: want,
        });
    }
    let mut nonce = [0u8; 8];
    nonce[8 - nonce_len..].copy_from_slice(&rest[..nonce_len]);
    let balance = U256::from_be_slice(&rest[nonce_len..nonce_len + balance_len]);
    let code_hash = if has_code {
        B256::from_slice(&rest[nonce_len + balance_len..])
    } else {
        KECCAK256_EMPTY
    };
    Ok(AccountState {
        balance,
        nonce: u64::from_be_bytes(nonce),
        code_hash,
    })
}

/// A storage entry's value: the slot, then the value big-endian without leading zeros.
pub(crate) fn encode_slot(slot: &U256, value: &U256, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&slot.to_be_bytes::<32>());
    out.extend_from_slice(strip(&value.to_be_bytes::<32>()));
}

/// The value of `slot` from the storage entry `entry` found at or after it: `Ok(None)`
/// where the entry is for another slot (the slot is not stored, so it is zero).
pub(crate) fn decode_slot(slot: &[u8; 32], entry: &[u8]) -> Result<Option<U256>, ValueError> {
    if entry.len() < 32 || entry.len() > 64 {
        return Err(ValueError::SlotEntry { len: entry.len() });
    }
    if entry[..32] != slot[..] {
        return Ok(None);
    }
    Ok(Some(U256::from_be_slice(&entry[32..])))
}

/// The store's meta table, decoded: what it was built from and what it holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreMeta {
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// xxh3-64 checksum of the dump's content ([`gigagas_dump::DumpFileInfo::checksum`]).
    pub dump_checksum: u64,
    /// Size of the dump file in bytes.
    pub dump_size: u64,
    /// Segments of the dump; reads name one of `0..segments`.
    pub segments: u32,
    /// The size the store was padded to ([`crate::BuildOptions::pad_to`]), if any.
    pub pad_to: Option<u64>,
    /// Accounts stored (existing ones, summed over segments).
    pub accounts: u64,
    /// Accounts the dump records absent: not stored, they read as `None`.
    pub absent_accounts: u64,
    /// Non-zero storage slots stored (summed over segments).
    pub slots: u64,
    /// Slots the dump records as zero: not stored (as in reth), they read as zero.
    pub zero_slots: u64,
    /// Bytecodes stored (once per hash over all segments).
    pub codes: u64,
    /// Block hashes stored (summed over segments).
    pub block_hashes: u64,
    /// Witness trie nodes stored (summed over segments; 0 when the dump has no witness).
    pub trie_nodes: u64,
    /// Nodes of the padded tries' virtual subtries stored beside the witness's, for the
    /// padding's accounts and slots (0 unpadded, or when no segment's tries are padded).
    pub pad_trie_nodes: u64,
    /// Synthetic accounts added by padding.
    pub pad_accounts: u64,
    /// Synthetic storage slots added by padding.
    pub pad_slots: u64,
}

impl StoreMeta {
    /// The meta table's entries, in key order.
    pub(crate) fn entries(&self) -> Vec<(&'static str, u64)> {
        let mut entries = vec![
            ("absent_accounts", self.absent_accounts),
            ("accounts", self.accounts),
            ("block_hashes", self.block_hashes),
            ("codes", self.codes),
            ("dump_checksum", self.dump_checksum),
            ("dump_size", self.dump_size),
            ("format_version", u64::from(self.format_version)),
            ("pad_accounts", self.pad_accounts),
            ("pad_slots", self.pad_slots),
            ("pad_to", self.pad_to.unwrap_or(0)),
            ("pad_trie_nodes", self.pad_trie_nodes),
            ("segments", u64::from(self.segments)),
            ("slots", self.slots),
            ("trie_nodes", self.trie_nodes),
            ("zero_slots", self.zero_slots),
        ];
        entries.sort_unstable_by_key(|e| e.0);
        entries
    }

    /// Decode the meta table from `get` (the value of a key, if present). The format
    /// version is checked first, so a store of another version says so.
    pub(crate) fn decode(
        path: &Path,
        mut get: impl FnMut(&str) -> Result<Option<Vec<u8>>, StoreError>,
    ) -> Result<Self, StoreError> {
        let mut field = |name: &str| -> Result<u64, StoreError> {
            let value = get(name)?.ok_or_else(|| {
                StoreError::corrupt(path, format!("its meta table has no `{name}`"))
            })?;
            let bytes: [u8; 8] = value.as_slice().try_into().map_err(|_| {
                StoreError::corrupt(
                    path,
                    format!("meta `{name}` has {} bytes, not 8", value.len()),
                )
            })?;
            Ok(u64::from_le_bytes(bytes))
        };
        let version = field("format_version")?;
        if version != u64::from(FORMAT_VERSION) {
            return Err(StoreError::Version {
                path: path.to_path_buf(),
                found: version,
                expected: FORMAT_VERSION,
            });
        }
        let segments = field("segments")?;
        let segments = u32::try_from(segments)
            .ok()
            .filter(|s| *s < PAD_SEGMENT)
            .ok_or_else(|| StoreError::corrupt(path, format!("meta `segments` is {segments}")))?;
        let pad_to = field("pad_to")?;
        Ok(Self {
            format_version: FORMAT_VERSION,
            dump_checksum: field("dump_checksum")?,
            dump_size: field("dump_size")?,
            segments,
            pad_to: (pad_to > 0).then_some(pad_to),
            accounts: field("accounts")?,
            absent_accounts: field("absent_accounts")?,
            slots: field("slots")?,
            zero_slots: field("zero_slots")?,
            codes: field("codes")?,
            block_hashes: field("block_hashes")?,
            trie_nodes: field("trie_nodes")?,
            pad_trie_nodes: field("pad_trie_nodes")?,
            pad_accounts: field("pad_accounts")?,
            pad_slots: field("pad_slots")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_roundtrip() {
        let mut buf = Vec::new();
        for account in [
            AccountState {
                balance: U256::ZERO,
                nonce: 0,
                code_hash: KECCAK256_EMPTY,
            },
            AccountState {
                balance: U256::MAX,
                nonce: u64::MAX,
                code_hash: B256::repeat_byte(7),
            },
            AccountState {
                balance: U256::from(1_000_000_007u64),
                nonce: 300,
                code_hash: B256::ZERO,
            },
        ] {
            encode_account(&account, &mut buf);
            assert_eq!(decode_account(&buf), Ok(account));
        }
        assert_eq!(
            decode_account(&[7]),
            Err(ValueError::AccountTooShort { len: 1 })
        );
        assert_eq!(
            decode_account(&[9, 0]),
            Err(ValueError::AccountHeader {
                nonce_len: 9,
                flags: 0
            })
        );
        assert_eq!(
            decode_account(&[0, 0x40]),
            Err(ValueError::AccountHeader {
                nonce_len: 0,
                flags: 0x40
            })
        );
        assert_eq!(
            decode_account(&[1, 0]),
            Err(ValueError::AccountLength {
                found: 0,
                expected: 1
            })
        );
        // The message names the value, as a store's error line shows it.
        assert_eq!(
            ValueError::AccountLength {
                found: 0,
                expected: 1
            }
            .to_string(),
            "account value has 0 bytes after its header, its header says 1"
        );
    }

    #[test]
    fn slots_roundtrip() {
        let mut buf = Vec::new();
        let slot = U256::from(5);
        encode_slot(&slot, &U256::from(0x1234), &mut buf);
        assert_eq!(buf.len(), 34);
        let key = slot.to_be_bytes::<32>();
        assert_eq!(decode_slot(&key, &buf), Ok(Some(U256::from(0x1234))));
        let other = U256::from(4).to_be_bytes::<32>();
        assert_eq!(decode_slot(&other, &buf), Ok(None));
        assert_eq!(
            decode_slot(&key, &buf[..31]),
            Err(ValueError::SlotEntry { len: 31 })
        );
    }

    #[test]
    fn state_keys_sort_by_address_then_segment() {
        let a = Address::repeat_byte(1);
        let b = Address::repeat_byte(2);
        assert!(state_key(&a, PAD_SEGMENT) < state_key(&b, 0));
        assert!(state_key(&a, 0) < state_key(&a, 1));
    }

    /// Codes read back as revm analyses them: the same original bytes and kind, the same
    /// jump table, and zero padding at least as long as revm's own (a trailing `PUSH32`
    /// included), so a code runs exactly as the analysed one does.
    #[test]
    fn codes_roundtrip_with_their_jump_table() {
        use revm_bytecode::opcode::{JUMPDEST, PUSH1, PUSH32, STOP};
        let delegation = Bytecode::new_eip7702(Address::repeat_byte(9));
        let mut buf = Vec::new();
        for code in [
            vec![],
            vec![STOP],
            vec![JUMPDEST, PUSH1, JUMPDEST, JUMPDEST],
            vec![PUSH1, 1, PUSH32],
            (0..=255u8).collect(),
            delegation.original_bytes().to_vec(),
        ] {
            let code = Bytes::from(code);
            encode_code(&code, &mut buf);
            let read = decode_code(&buf).unwrap();
            let analysed = Bytecode::new_raw(code.clone());
            assert_eq!(read.original_bytes(), code);
            assert_eq!(read.kind(), analysed.kind());
            assert_eq!(read.legacy_jump_table(), analysed.legacy_jump_table());
            assert!(read.bytes_slice().len() >= analysed.bytes_slice().len());
            assert!(
                read.bytes_slice()[read.original_byte_slice().len()..]
                    .iter()
                    .all(|b| *b == 0)
            );
        }
    }

    /// A corrupt bytecode value is an error naming what is wrong, never a panic or a code
    /// that could run past its end.
    #[test]
    fn corrupt_codes_are_refused() {
        let mut good = Vec::new();
        encode_code(&Bytes::from(vec![0x60, 1, 0x5b]), &mut good);
        assert_eq!(
            decode_code(&[]),
            Err(ValueError::CodeHeader { len: 0, kind: None })
        );
        assert_eq!(
            decode_code(&[7, 1, 2]),
            Err(ValueError::CodeHeader {
                len: 3,
                kind: Some(7)
            })
        );
        assert_eq!(
            decode_code(&good[..3]),
            Err(ValueError::CodeHeader {
                len: 3,
                kind: Some(0)
            })
        );
        // One byte of code short, one too many, and a length that overflows the value.
        assert!(matches!(
            decode_code(&good[..good.len() - 1]),
            Err(ValueError::CodeJumpTable { .. })
        ));
        let mut long = good.clone();
        long.push(0);
        assert!(matches!(
            decode_code(&long),
            Err(ValueError::CodeJumpTable { .. })
        ));
        let mut huge = good.clone();
        huge[1..5].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(
            decode_code(&huge),
            Err(ValueError::CodeJumpTable { .. })
        ));
        assert_eq!(
            decode_code(&[1, 0xef, 0x01, 0x00]),
            Err(ValueError::CodeDelegation { len: 3 })
        );
    }
}
