//! Offline mainnet block snapshots → one dump of independent segments.
//!
//! A snapshot is a folder per block (the layout of `../shared/mainnet-blocks`):
//!
//! ```text
//! <number>/block.json        eth_getBlockByNumber(number, true): header, full transactions
//!                            with `from`, uncle hashes, withdrawals
//! <number>/pre_state.json    { "0xaddress": { "basic": { "balance", "nonce" },
//!                              "code": null | { "bytecode", "original_len", .. },
//!                              "code_hash": null | "0x..", "storage": { "0xslot": "0xvalue" } } }
//!                            every existing account and slot the block touches, at its parent
//! <number>/block_hashes.json { "number": "0xhash" }, only where the block runs BLOCKHASH
//! <number>/witness.json      optional: debug_executionWitness's answer for the block,
//!                            { "state": ["0x<rlp trie node>", ..], .. }
//! ```
//!
//! Each block is executed over its pre-state under mainnet's rules for its number and
//! timestamp (block and ommer rewards, DAO transfer, difficulty-era opcodes, every fork up
//! to today) on the one recording path ([`gigagas_record::record_block`]), and checked:
//! every transaction's signature recovers to its `from`, and the header's gas used, logs
//! bloom and — from Byzantium on, where receipts carry a status instead of an intermediate
//! state root — receipts root (plus blob gas, requests and access-list hashes where the
//! header has them). Accounts absent from `pre_state.json` are taken not to exist (that is
//! how the format records them). `block.json` names ommers only by hash, so the miner's
//! 1/32 share per ommer is paid but the ommer beneficiaries' rewards are not recorded.
//!
//! Every block that checks out becomes one segment of the dump: its own pre-state (what
//! its access list touches), its block hashes, the block and its access list, and, where the
//! folder has a `witness.json`, its [`Witness`] (what a state-root phase starts from; a
//! block without one gets none, and runs skip its root).
//!
//! `witness.json` is shaped like `debug_executionWitness`'s answer: `state` lists the trie
//! nodes (account and storage tries together) as 0x-prefixed hex RLP; `codes`, `keys` and any
//! other field are ignored. The witness needs the parent's state root, which a snapshot does
//! not carry (`block.json` is the block itself). It is taken, in this order, from:
//! 1. `headers` (reth and geth answer with the RLP headers of the ancestors the block reads),
//!    the one whose hash is the block's `parentHash`: its `stateRoot`;
//! 2. else the nodes themselves: the account trie's root is the one node that no other node
//!    references, neither as a child of a branch or an extension nor as the storage root of
//!    an account leaf (storage tries' roots are referenced by their accounts' leaves). A
//!    witness with no such node, or several, is refused with the count, never guessed.
//!
//! Either way a node must hash to the root ([`gigagas_dump::Dump::validate`]).

use crate::world::{World, WorldAccount};
use alloy_consensus::{BlockHeader, Transaction as _, TxEnvelope, transaction::Recovered};
use alloy_evm::block::BlockExecutionError;
use alloy_hardforks::EthereumHardforks;
use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use alloy_rlp::Decodable;
use gigagas_chain::json::{ConsensusBlock, check_ommer_hashes, parse_block, to_consensus_block};
use gigagas_chain::{BlockInput, BlockStage, ChainSpec, HeaderMismatch};
use gigagas_dump::{ChainConfig, Dump, DumpBlock, DumpMeta, Segment, Witness};
use gigagas_record::{record_block, touched_pre_state};
use rayon::prelude::*;
use revm::{bytecode::Bytecode, database::State, primitives::KECCAK_EMPTY};
use serde::Deserialize;
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

/// Provenance `source` of snapshot dumps.
pub const SNAPSHOT_SOURCE: &str = "gigagas import snapshot";

/// The three files of a block folder.
pub const BLOCK_FILE: &str = "block.json";
/// See [`BLOCK_FILE`].
pub const PRE_STATE_FILE: &str = "pre_state.json";
/// See [`BLOCK_FILE`].
pub const BLOCK_HASHES_FILE: &str = "block_hashes.json";
/// The optional witness of a block folder (see the module docs).
pub const WITNESS_FILE: &str = "witness.json";

/// Why a snapshot block cannot be imported. Every message is one line naming the block
/// (or folder), the file and the field.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// A file or folder cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The input holds no block folder.
    #[error(
        "{0}: no block folder (a folder with {BLOCK_FILE} and {PRE_STATE_FILE}, or a folder of them)"
    )]
    NoBlocks(PathBuf),
    /// A file is missing, malformed or inconsistent (bad JSON, a code hash that does not
    /// match its code, a signature that does not recover to `from`, an account the
    /// execution needs that the pre-state lacks).
    #[error("block {block}: {}: {field}: {detail}", file.display())]
    Input {
        /// Block number (from the folder name when the block itself does not parse).
        block: String,
        /// The file at fault.
        file: PathBuf,
        /// The field (JSON path or account).
        field: String,
        /// What is wrong.
        detail: String,
    },
    /// Executing the block failed.
    #[error("block {block}: {stage}: execution failed: {source}")]
    Execution {
        /// Block number.
        block: u64,
        /// Where (pre-block, `tx i (hash)`, post-block).
        stage: String,
        /// alloy-evm's error.
        #[source]
        source: BlockExecutionError,
    },
    /// An output path names an input (the folder, or a file of a block folder): refused
    /// before any work.
    #[error(transparent)]
    OutputIsInput(#[from] gigagas_fs_util::OutputIsInput),
    /// Writing the dump failed.
    #[error(transparent)]
    Dump(#[from] gigagas_dump::DumpError),
    /// The execution does not reproduce what the header commits to.
    #[error(
        "block {block}: {}: expected {} (header), got {} (execution)",
        mismatch.field(),
        mismatch.values().expected,
        mismatch.values().got
    )]
    Mismatch {
        /// Block number.
        block: u64,
        /// The header field, the header's value (`expected`) and the execution's (`got`).
        mismatch: HeaderMismatch,
    },
}

impl SnapshotError {
    fn input(
        block: impl ToString,
        file: &Path,
        field: impl Into<String>,
        detail: impl ToString,
    ) -> Self {
        SnapshotError::Input {
            block: block.to_string(),
            file: file.to_path_buf(),
            field: field.into(),
            detail: detail.to_string(),
        }
    }
}

/// One block folder, parsed and checked (signatures, code hashes), not yet executed.
#[derive(Debug)]
pub struct SnapshotBlock {
    /// The folder.
    pub dir: PathBuf,
    /// The block in consensus types, senders checked against their signatures.
    pub block: ConsensusBlock,
    /// The pre-state at the parent, with the block hashes it may ask for.
    pub world: World,
    /// The trie nodes of `witness.json` at the parent's state root, if the folder has one.
    pub witness: Option<Witness>,
}

/// What importing one block produced.
#[derive(Debug)]
pub struct ImportedBlock {
    /// Block number.
    pub number: u64,
    /// The newest fork active at the block.
    pub fork: String,
    /// Transactions.
    pub transactions: usize,
    /// Gas used.
    pub gas_used: u64,
    /// Whether the receipts root was checked (from Byzantium on).
    pub receipts_root_checked: bool,
    /// Ommers known only by hash (their beneficiaries' rewards are not recorded).
    pub headerless_ommers: u32,
    /// Nodes of the block's witness; `None` without `witness.json` (no state-root phase).
    pub witness_nodes: Option<usize>,
    /// The block's own segment: the block with its access list, its block hashes and
    /// pre-state.
    segment: Segment,
}

impl ImportedBlock {
    /// The one-line note about what was checked and what could not be.
    pub fn notes(&self) -> String {
        let mut notes = Vec::new();
        if !self.receipts_root_checked {
            notes.push(
                "receipts root not checked before Byzantium (receipts then carry state roots)"
                    .to_string(),
            );
        }
        if self.witness_nodes.is_none() {
            notes.push(format!(
                "no {WITNESS_FILE}: no witness, the state-root phase is skipped for this block"
            ));
        }
        if self.headerless_ommers > 0 {
            notes.push(format!(
                "{} ommer(s) known only by hash: the miner's 1/32 share each is paid, the ommer beneficiaries' rewards are not recorded",
                self.headerless_ommers
            ));
        }
        notes.join("; ")
    }
}

/// One block's outcome in a snapshot import.
#[derive(Debug)]
pub struct BlockReport {
    /// The block folder.
    pub dir: PathBuf,
    /// The imported block, or why not.
    pub outcome: Result<ImportedBlock, SnapshotError>,
}

/// Block folders of `input`: `input` itself when it holds a `block.json`, else its
/// sub-folders that do, ordered by block number (numeric folder names) then name.
pub fn block_dirs(input: &Path) -> Result<Vec<PathBuf>, SnapshotError> {
    let io = |source| SnapshotError::Io {
        path: input.to_path_buf(),
        source,
    };
    if input.join(BLOCK_FILE).is_file() {
        return Ok(vec![input.to_path_buf()]);
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(input)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join(BLOCK_FILE).is_file())
        .collect();
    let key = |p: &PathBuf| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (name.parse::<u64>().unwrap_or(u64::MAX), name)
    };
    dirs.sort_by_key(key);
    // A block folder reached twice (a symlink next to the real folder) is imported once.
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| seen.insert(d.canonicalize().unwrap_or_else(|_| d.clone())));
    if dirs.is_empty() {
        return Err(SnapshotError::NoBlocks(input.to_path_buf()));
    }
    Ok(dirs)
}

fn folder_block(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

/// The largest snapshot file read (`block.json`, `pre_state.json`, `block_hashes.json`),
/// bytes.
pub const MAX_SNAPSHOT_FILE_BYTES: u64 = 4 << 30;

/// Read and parse `dir/file`: a regular file of at most [`MAX_SNAPSHOT_FILE_BYTES`] (a
/// FIFO, a device or a socket is refused by name before it is opened, so it cannot block).
fn read_json(dir: &Path, file: &str) -> Result<serde_json::Value, SnapshotError> {
    let path = dir.join(file);
    let bytes =
        gigagas_fs_util::read_bounded(&path, MAX_SNAPSHOT_FILE_BYTES).map_err(|source| {
            SnapshotError::Io {
                path: path.clone(),
                source,
            }
        })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| SnapshotError::input(folder_block(dir), &path, "JSON", e))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccount {
    basic: RawBasic,
    code: Option<RawCode>,
    #[serde(default)]
    code_hash: Option<B256>,
    #[serde(default)]
    storage: BTreeMap<HexQuantity, HexQuantity>,
}

#[derive(Deserialize)]
struct RawBasic {
    balance: HexQuantity,
    nonce: u64,
}

#[derive(Deserialize)]
struct RawCode {
    bytecode: Bytes,
    original_len: Option<usize>,
}

/// Parse `pre_state.json` into a world: code hashes checked against their code.
fn read_pre_state(dir: &Path, number: u64) -> Result<World, SnapshotError> {
    let path = dir.join(PRE_STATE_FILE);
    let value = read_json(dir, PRE_STATE_FILE)?;
    let serde_json::Value::Object(map) = value else {
        return Err(SnapshotError::input(
            number,
            &path,
            "(top level)",
            "expected an object of accounts by address",
        ));
    };
    let mut world = World::default();
    for (key, raw) in map {
        let address: Address = key
            .parse()
            .map_err(|e| SnapshotError::input(number, &path, format!("account key {key:?}"), e))?;
        let field = |f: &str| format!("account {address}{f}");
        let acc: RawAccount = serde_json::from_value(raw)
            .map_err(|e| SnapshotError::input(number, &path, field(""), e))?;
        let code = match &acc.code {
            None => None,
            Some(c) => {
                let len = c.original_len.unwrap_or(c.bytecode.len());
                let Some(bytes) = c.bytecode.get(..len) else {
                    return Err(SnapshotError::input(
                        number,
                        &path,
                        field(".code.original_len"),
                        format!("{len} but the bytecode has {} bytes", c.bytecode.len()),
                    ));
                };
                Some(Bytes::copy_from_slice(bytes))
            }
        };
        let code_hash = match (&code, acc.code_hash) {
            (None, None) => KECCAK_EMPTY,
            (None, Some(h)) if h == KECCAK_EMPTY => KECCAK_EMPTY,
            (None, Some(h)) => {
                return Err(SnapshotError::input(
                    number,
                    &path,
                    field(".code"),
                    format!("missing, but code_hash is {h}"),
                ));
            }
            (Some(code), declared) => {
                let hash = keccak256(code);
                if let Some(h) = declared.filter(|h| *h != hash) {
                    return Err(SnapshotError::input(
                        number,
                        &path,
                        field(".code_hash"),
                        format!("{h}, but the code hashes to {hash}"),
                    ));
                }
                if code.is_empty() { KECCAK_EMPTY } else { hash }
            }
        };
        if let Some(code) = code.filter(|c| !c.is_empty()) {
            world.codes.insert(code_hash, Bytecode::new_raw(code));
        }
        let storage = acc
            .storage
            .into_iter()
            .map(|(k, v)| (k.0, v.0))
            .filter(|(_, v)| !v.is_zero())
            .collect();
        world.accounts.insert(
            address,
            WorldAccount {
                balance: acc.basic.balance.0,
                nonce: acc.basic.nonce,
                code_hash,
                storage,
            },
        );
    }
    Ok(world)
}

/// Parse `block_hashes.json` (absent: no hashes) into the world.
fn read_block_hashes(dir: &Path, number: u64, world: &mut World) -> Result<(), SnapshotError> {
    let path = dir.join(BLOCK_HASHES_FILE);
    if !path.exists() {
        return Ok(());
    }
    let value = read_json(dir, BLOCK_HASHES_FILE)?;
    let hashes: BTreeMap<String, B256> = serde_json::from_value(value).map_err(|e| {
        SnapshotError::input(
            number,
            &path,
            "(top level)",
            format!("expected {{\"number\": \"0xhash\"}}: {e}"),
        )
    })?;
    for (n, hash) in hashes {
        let parsed: u64 = n.parse().map_err(|_| {
            SnapshotError::input(
                number,
                &path,
                format!("key {n:?}"),
                "not a decimal block number",
            )
        })?;
        world.block_hashes.insert(parsed, hash);
    }
    Ok(())
}

/// `witness.json` as far as it is read: the trie nodes and, where the producer gave them,
/// the ancestors' headers.
#[derive(Deserialize)]
struct RawWitness {
    state: Vec<Bytes>,
    #[serde(default)]
    headers: Vec<Bytes>,
}

/// Parse `witness.json` (absent: no witness) into a [`Witness`] at the parent's state root,
/// found as the module docs say (`parent_hash` is the block's `parentHash`).
fn read_witness(
    dir: &Path,
    number: u64,
    parent_hash: B256,
) -> Result<Option<Witness>, SnapshotError> {
    let path = dir.join(WITNESS_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let raw: RawWitness = serde_json::from_value(read_json(dir, WITNESS_FILE)?)
        .map_err(|e| SnapshotError::input(number, &path, "(top level)", e))?;
    if let Some(i) = raw.state.iter().position(|n| n.is_empty()) {
        return Err(SnapshotError::input(
            number,
            &path,
            format!("state[{i}]"),
            "an empty node",
        ));
    }
    let mut parent_root = None;
    for (i, rlp) in raw.headers.iter().enumerate() {
        let header = alloy_consensus::Header::decode(&mut rlp.as_ref()).map_err(|e| {
            SnapshotError::input(number, &path, format!("headers[{i}]"), format!("RLP: {e}"))
        })?;
        if header.hash_slow() == parent_hash {
            parent_root = Some(header.state_root);
        }
    }
    let root = match parent_root {
        Some(root) => root,
        None => unreferenced_root(&raw.state)
            .map_err(|detail| SnapshotError::input(number, &path, "state", detail))?,
    };
    Ok(Some(Witness::new(root, raw.state)))
}

/// The hash of the one node of `nodes` that no other node references: as a branch's or an
/// extension's child, or as the storage root of an account leaf. That is the account
/// trie's root, when `nodes` are the nodes of one state's proofs. Errors say why not (a node
/// that does not decode, no such node, several).
pub fn unreferenced_root(nodes: &[Bytes]) -> Result<B256, UnreferencedRootError> {
    use alloy_trie::nodes::TrieNode;
    let mut referenced = std::collections::HashSet::new();
    for (i, rlp) in nodes.iter().enumerate() {
        let node = TrieNode::decode(&mut rlp.as_ref())
            .map_err(|source| UnreferencedRootError::NotANode { index: i, source })?;
        match node {
            TrieNode::Branch(b) => referenced.extend(b.stack.iter().filter_map(|c| c.as_hash())),
            TrieNode::Extension(e) => referenced.extend(e.child.as_hash()),
            TrieNode::Leaf(leaf) => {
                // An account leaf names its storage trie's root; a storage leaf's value is
                // an RLP string, never an account's list.
                if let Ok(account) = alloy_trie::TrieAccount::decode(&mut leaf.value.as_slice()) {
                    referenced.insert(account.storage_root);
                }
            }
            TrieNode::EmptyRoot => {}
        }
    }
    let roots: Vec<B256> = nodes
        .iter()
        .map(keccak256)
        .filter(|h| !referenced.contains(h))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    match roots.as_slice() {
        [root] => Ok(*root),
        [] => Err(UnreferencedRootError::NoRoot { nodes: nodes.len() }),
        many => Err(UnreferencedRootError::Ambiguous {
            roots: many.len(),
            nodes: nodes.len(),
            first: many[0],
        }),
    }
}

/// Why [`unreferenced_root`] finds no root.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnreferencedRootError {
    /// A node does not decode.
    #[error("node {index} is not a trie node: {source}")]
    NotANode {
        /// Its index in the nodes given.
        index: usize,
        /// The decoder's error.
        #[source]
        source: alloy_rlp::Error,
    },
    /// Every node is referenced by another.
    #[error(
        "none of the {nodes} nodes is unreferenced, so none is the parent's state root (and `headers` has no parent header)"
    )]
    NoRoot {
        /// The nodes given.
        nodes: usize,
    },
    /// Several nodes are referenced by no other.
    #[error(
        "{roots} of the {nodes} nodes are referenced by no other node ({first}, ..), so the parent's state root is ambiguous (and `headers` has no parent header)"
    )]
    Ambiguous {
        /// The nodes referenced by no other.
        roots: usize,
        /// The nodes given.
        nodes: usize,
        /// The first of those, by hash.
        first: B256,
    },
}

/// Ethereum JSON-RPC encodes every quantity and every byte string of a block as a
/// 0x-prefixed hex string. `block.json` is held to it: a string without `0x` (`"100"`:
/// decimal or hex?) or a bare JSON number is refused, naming the field, instead of being read
/// one way for one field and another way for the next. `field` is left at the offending
/// JSON path.
fn check_json_rpc_strings(value: &serde_json::Value, field: &mut String) -> Result<(), String> {
    use serde_json::Value;
    match value {
        Value::String(s) if s.starts_with("0x") => Ok(()),
        Value::String(s) => Err(format!(
            "{:?} is not 0x-prefixed hex (JSON-RPC quantities and data are 0x-prefixed hex \
             strings; a decimal string is not accepted)",
            shorten(s)
        )),
        Value::Number(n) => Err(format!(
            "{n} is a JSON number (JSON-RPC quantities are 0x-prefixed hex strings)"
        )),
        Value::Null | Value::Bool(_) => Ok(()),
        Value::Array(items) => {
            let len = field.len();
            for (i, item) in items.iter().enumerate() {
                field.push_str(&format!("[{i}]"));
                check_json_rpc_strings(item, field)?;
                field.truncate(len);
            }
            Ok(())
        }
        Value::Object(map) => {
            let len = field.len();
            for (key, item) in map {
                if !field.is_empty() {
                    field.push('.');
                }
                field.push_str(key);
                check_json_rpc_strings(item, field)?;
                field.truncate(len);
            }
            Ok(())
        }
    }
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(66) {
        Some((end, _)) => format!("{}…", &s[..end]),
        None => s.to_string(),
    }
}

/// A quantity as JSON-RPC writes it: a 0x-prefixed hex string (`"0x0"`, `"0x1b4"`).
fn hex_quantity(value: &serde_json::Value) -> Result<U256, String> {
    let s = value
        .as_str()
        .ok_or_else(|| format!("{value} is not a string (expected a 0x-prefixed hex quantity)"))?;
    parse_hex_quantity(s)
}

fn parse_hex_quantity(s: &str) -> Result<U256, String> {
    let digits = s.strip_prefix("0x").ok_or_else(|| {
        format!(
            "{:?} is not 0x-prefixed hex (quantities are 0x-prefixed hex strings; a decimal \
             string is not accepted)",
            shorten(s)
        )
    })?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("{:?} is not a hex quantity", shorten(s)));
    }
    U256::from_str_radix(digits, 16).map_err(|e| format!("{:?}: {e}", shorten(s)))
}

/// A 0x-prefixed hex quantity in `pre_state.json` (balances, storage slots and values),
/// held to the same rule as `block.json`: a string without `0x` is refused, not read as
/// decimal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct HexQuantity(U256);

impl<'de> Deserialize<'de> for HexQuantity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_hex_quantity(&s)
            .map(HexQuantity)
            .map_err(serde::de::Error::custom)
    }
}

/// Read and check one block folder: the block (every quantity and byte string 0x-prefixed
/// hex, header hash, ommer hashes against the ommers hash, transactions and withdrawals
/// roots, every sender against its signature), its pre-state (code hashes) and block hashes.
pub fn read_block(dir: &Path, spec: &ChainSpec) -> Result<SnapshotBlock, SnapshotError> {
    let path = dir.join(BLOCK_FILE);
    let value = read_json(dir, BLOCK_FILE)?;
    let mut field = String::new();
    check_json_rpc_strings(&value, &mut field)
        .map_err(|detail| SnapshotError::input(folder_block(dir), &path, field.as_str(), detail))?;
    let number = value
        .get("number")
        .ok_or_else(|| "missing".to_string())
        .and_then(|n| hex_quantity(n).map_err(|e| e.to_string()))
        .and_then(|n| u64::try_from(n).map_err(|_| format!("{n} does not fit in 64 bits")))
        .map_err(|detail| SnapshotError::input(folder_block(dir), &path, "number", detail))?;
    let rpc = parse_block(value).map_err(|e| SnapshotError::input(number, &path, "(block)", e))?;
    check_ommer_hashes(&rpc.header.inner, &rpc.uncles)
        .map_err(|detail| SnapshotError::input(number, &path, "uncles", detail))?;
    let block = to_consensus_block(rpc, number)
        .map_err(|e| SnapshotError::input(number, &path, "(block)", e))?;
    for (i, tx) in block.transactions.iter().enumerate() {
        match spec.recover_sender(number, tx.inner()) {
            Ok(signer) if signer == tx.signer() => {}
            Ok(signer) => {
                return Err(SnapshotError::input(
                    number,
                    &path,
                    format!("transactions[{i}].from"),
                    format!(
                        "{}, but the signature of {} recovers to {signer}",
                        tx.signer(),
                        tx.inner().tx_hash()
                    ),
                ));
            }
            Err(e) => {
                return Err(SnapshotError::input(
                    number,
                    &path,
                    format!("transactions[{i}]"),
                    format!(
                        "the signature of {} does not recover: {e}",
                        tx.inner().tx_hash()
                    ),
                ));
            }
        }
    }
    let mut world = read_pre_state(dir, number)?;
    read_block_hashes(dir, number, &mut world)?;
    let witness = read_witness(dir, number, block.header.parent_hash)?;
    // The parent's hash is in the header itself.
    if let Some(parent) = number.checked_sub(1) {
        world
            .block_hashes
            .entry(parent)
            .or_insert(block.header.parent_hash);
    }
    Ok(SnapshotBlock {
        dir: dir.to_path_buf(),
        block,
        world,
        witness,
    })
}

/// Whether `pre_state.json` lacks a transaction's sender. Only an error when the
/// transaction then fails to execute: an earlier transaction of the block may have
/// created the account.
fn missing_sender(snapshot: &SnapshotBlock, tx: &Recovered<TxEnvelope>) -> bool {
    !snapshot.world.accounts.contains_key(&tx.signer())
}

/// Execute one parsed block over its pre-state and check it against its header.
pub fn import_block(
    snapshot: &SnapshotBlock,
    chain: &ChainConfig,
    spec: &ChainSpec,
) -> Result<ImportedBlock, SnapshotError> {
    let b = &snapshot.block;
    let number = b.header.number;
    let pre_path = snapshot.dir.join(PRE_STATE_FILE);
    let sender_missing = |i: usize, tx: &Recovered<TxEnvelope>| {
        SnapshotError::input(
            number,
            &pre_path,
            format!("account {}", tx.signer()),
            format!(
                "missing, but it sends tx {i} ({}) with nonce {}",
                tx.inner().tx_hash(),
                tx.inner().nonce()
            ),
        )
    };
    let headerless_ommers = u32::try_from(b.ommer_hashes.len()).unwrap_or(u32::MAX);
    let withdrawals = b.header.withdrawals_root.map(|_| b.withdrawals.as_slice());
    let input = BlockInput {
        header: &b.header,
        transactions: &b.transactions,
        withdrawals,
        ommers: &[],
        headerless_ommers,
    };
    let mut state = State::builder()
        .with_database_ref(&snapshot.world)
        .with_bal_builder()
        .build();
    let recorded = record_block(&mut state, spec, input).map_err(|e| {
        let source = e.source;
        match e.stage {
            BlockStage::Tx(i) if missing_sender(snapshot, &b.transactions[i]) => {
                sender_missing(i, &b.transactions[i])
            }
            BlockStage::Tx(i) => SnapshotError::Execution {
                block: number,
                stage: format!("tx {i} ({})", b.transactions[i].inner().tx_hash()),
                source,
            },
            stage => SnapshotError::Execution {
                block: number,
                stage: stage.to_string(),
                source,
            },
        }
    })?;
    drop(state);
    recorded
        .check_header(spec, &b.header)
        .map_err(|mismatch| SnapshotError::Mismatch {
            block: number,
            mismatch,
        })?;
    let receipts = recorded.receipt_summaries();
    let access_list = recorded.access_list;
    let pre_state = touched_pre_state(std::slice::from_ref(&access_list), &snapshot.world)
        .map_err(|e| {
            SnapshotError::input(number, &pre_path, "(pre-state of the access list)", e)
        })?;
    let mut block_hashes: Vec<(u64, B256)> = snapshot
        .world
        .block_hashes
        .iter()
        .map(|(n, h)| (*n, *h))
        .collect();
    block_hashes.sort_unstable();
    let block = DumpBlock {
        header: b.header.clone(),
        transactions: b.transactions.clone(),
        withdrawals: b.withdrawals.clone(),
        receipts,
        ommers: Vec::new(),
        headerless_ommers,
        access_list,
    };
    Ok(ImportedBlock {
        number,
        fork: chain.fork_at(number, b.header.timestamp()),
        transactions: b.transactions.len(),
        gas_used: b.header.gas_used,
        receipts_root_checked: spec.is_byzantium_active_at_block(number),
        headerless_ommers,
        witness_nodes: snapshot.witness.as_ref().map(|w| w.nodes.len()),
        segment: Segment {
            blocks: vec![block],
            block_hashes,
            pre_state,
            witness: snapshot.witness.clone(),
        },
    })
}

/// The outcome of [`import_snapshots`].
#[derive(Debug)]
pub struct SnapshotImport {
    /// One report per block folder, in block order.
    pub reports: Vec<BlockReport>,
    /// The dump of every block that checked out (one segment each), `None` if none did.
    pub dump: Option<Dump>,
}

impl SnapshotImport {
    /// Number of blocks that did not check out.
    pub fn failed(&self) -> usize {
        self.reports.iter().filter(|r| r.outcome.is_err()).count()
    }
}

/// Every path a snapshot import of `input` reads: `input` itself, each block folder and its
/// [`BLOCK_FILE`], [`PRE_STATE_FILE`], [`BLOCK_HASHES_FILE`] and [`WITNESS_FILE`] (where
/// present).
pub fn input_paths(input: &Path) -> Result<Vec<PathBuf>, SnapshotError> {
    let mut paths = vec![input.to_path_buf()];
    for dir in block_dirs(input)? {
        for file in [BLOCK_FILE, PRE_STATE_FILE, BLOCK_HASHES_FILE, WITNESS_FILE] {
            let path = dir.join(file);
            if path.exists() {
                paths.push(path);
            }
        }
        paths.push(dir);
    }
    Ok(paths)
}

/// Refuse `output` when it names anything a snapshot import of `input` reads
/// ([`input_paths`]; same device and inode or same canonical path):
/// [`SnapshotError::OutputIsInput`]. Cheap: call it before any work.
pub fn check_snapshot_output(input: &Path, output: &Path) -> Result<(), SnapshotError> {
    gigagas_fs_util::check_output(output, &input_paths(input)?)?;
    Ok(())
}

/// [`import_snapshots`] and write the dump to `output`: `output` is checked against every
/// input first ([`check_snapshot_output`], before any block is read), and the dump is
/// written atomically ([`gigagas_dump::write_dump`]: a temporary file in the same folder,
/// synced, renamed; removed on failure) when at least one block checked out. Returns the
/// import and what was written (`None`: no block checked out, nothing written).
pub fn import_snapshots_to(
    input: &Path,
    name: &str,
    output: &Path,
    on_block: impl Fn(&BlockReport) + Sync,
) -> Result<(SnapshotImport, Option<gigagas_dump::DumpFileInfo>), SnapshotError> {
    check_snapshot_output(input, output)?;
    let import = import_snapshots(input, name, on_block)?;
    let info = match &import.dump {
        Some(dump) => Some(gigagas_dump::write_dump(dump, output)?),
        None => None,
    };
    Ok((import, info))
}

/// Import one block folder or a folder of them into one dump named `name` (mainnet rules),
/// in parallel. `on_block` sees each block's report as it finishes (in any order). Writes
/// nothing: [`import_snapshots_to`] also writes the dump, after checking that its path is
/// no input.
pub fn import_snapshots(
    input: &Path,
    name: &str,
    on_block: impl Fn(&BlockReport) + Sync,
) -> Result<SnapshotImport, SnapshotError> {
    let chain = mainnet_chain();
    let spec = ChainSpec::from_config(&chain).expect("alloy-hardforks' mainnet schedule parses");
    let dirs = block_dirs(input)?;
    // Collected in folder order (rayon keeps the order of the input).
    let reports: Vec<BlockReport> = dirs
        .par_iter()
        .map(|dir| {
            let outcome = read_block(dir, &spec).and_then(|s| import_block(&s, &chain, &spec));
            let report = BlockReport {
                dir: dir.clone(),
                outcome,
            };
            on_block(&report);
            report
        })
        .collect();
    let ok: Vec<&ImportedBlock> = reports
        .iter()
        .filter_map(|r| r.outcome.as_ref().ok())
        .collect();
    let dump = if ok.is_empty() {
        None
    } else {
        let mut provenance = BTreeMap::new();
        provenance.insert("source".to_string(), SNAPSHOT_SOURCE.to_string());
        provenance.insert("source-dir".to_string(), folder_block(input));
        provenance.insert("blocks".to_string(), ok.len().to_string());
        let headerless: Vec<String> = ok
            .iter()
            .filter(|b| b.headerless_ommers > 0)
            .map(|b| format!("{} ({})", b.number, b.headerless_ommers))
            .collect();
        if !headerless.is_empty() {
            provenance.insert(
                "ommers-without-header".to_string(),
                format!(
                    "{}: miner's share paid, ommer beneficiaries' rewards not recorded",
                    headerless.join(", ")
                ),
            );
        }
        let dump = Dump {
            meta: DumpMeta {
                name: name.to_string(),
                provenance,
                chain: chain.clone(),
            },
            segments: ok.iter().map(|b| b.segment.clone()).collect(),
        };
        dump.validate()
            .map_err(|e| SnapshotError::input("-", input, "(assembled dump)", e))?;
        Some(dump)
    };
    Ok(SnapshotImport { reports, dump })
}

/// Mainnet's fork schedule (alloy-hardforks'), with the deposit contract.
pub fn mainnet_chain() -> ChainConfig {
    gigagas_chain::known_chain(1).expect("mainnet is a known chain")
}
