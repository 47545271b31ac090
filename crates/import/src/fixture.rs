//! The BlockchainTests fixture format (ethereum/tests and execution-spec-tests).
//!
//! A fixture file is a JSON object, test name → test. Only the fields an import needs
//! are typed; everything else is ignored. The blocks' `rlp` is authoritative: the
//! decoded `blockHeader`/`transactions` next to it are convenience copies and unused.

pub use crate::error::BlobScheduleError;
use crate::error::ImportError;
use alloy_primitives::{Address, B256, Bytes, U256};
use serde::Deserialize;
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

/// One account of `pre` or `postState`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FixtureAccount {
    /// Balance in wei.
    pub balance: U256,
    /// Nonce (a quantity; must fit in 64 bits).
    pub nonce: U256,
    /// Bytecode (`0x` for none).
    #[serde(default)]
    pub code: Bytes,
    /// Storage; zero values mean "no entry".
    #[serde(default)]
    pub storage: BTreeMap<U256, U256>,
}

/// The few header fields read from `genesisBlockHeader`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FixtureHeader {
    /// Block hash.
    pub hash: B256,
    /// Block number.
    pub number: U256,
}

/// One entry of `blocks`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixtureBlock {
    /// The whole block, RLP-encoded.
    pub rlp: Bytes,
    /// Set when the block is expected to be rejected.
    #[serde(default)]
    pub expect_exception: Option<String>,
    /// The block's EIP-7928 access list (Amsterdam fixtures), as the fixture's filler
    /// built it.
    #[serde(default)]
    pub block_access_list: Option<alloy_eip7928::BlockAccessList>,
    /// The decoded copy of a block the fixture expects to be rejected (execution-spec-tests
    /// put such a block's `blockAccessList` there, not beside `rlp`). Kept as JSON: a block
    /// meant to be invalid may carry a list that does not even parse.
    #[serde(rename = "rlp_decoded", default)]
    pub rlp_decoded: Option<serde_json::Value>,
}

impl FixtureBlock {
    /// The block's access list as the fixture gives it: beside `rlp` for a valid block,
    /// inside `rlp_decoded` for one expected to be rejected; `Err` names what does not
    /// parse.
    pub fn access_list(
        &self,
    ) -> Result<Option<alloy_eip7928::BlockAccessList>, AccessListJsonError> {
        if let Some(list) = &self.block_access_list {
            return Ok(Some(list.clone()));
        }
        match self
            .rlp_decoded
            .as_ref()
            .and_then(|d| d.get("blockAccessList"))
        {
            None => Ok(None),
            Some(v) => alloy_eip7928::BlockAccessList::deserialize(v)
                .map(Some)
                .map_err(AccessListJsonError),
        }
    }
}

/// `_info` (only its `source`, the filler the test came from).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct FixtureInfo {
    /// Path of the filler in the tests repository.
    #[serde(default)]
    pub source: Option<String>,
}

/// `config` of execution-spec-tests fixtures (the chain id and the blob schedule).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixtureConfig {
    /// Chain id (defaults to 1).
    #[serde(default)]
    pub chainid: Option<U256>,
    /// Blob parameters per fork name (`Cancun`, `BPO1`, ...).
    #[serde(default)]
    pub blob_schedule: BTreeMap<String, FixtureBlobSchedule>,
}

/// One entry of `config.blobSchedule`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixtureBlobSchedule {
    /// Target blobs per block.
    pub target: U256,
    /// Maximum blobs per block.
    pub max: U256,
    /// Blob base fee update fraction.
    pub base_fee_update_fraction: U256,
}

/// One BlockchainTests test.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockchainTest {
    /// Fork rules, e.g. `Cancun` or `ShanghaiToCancunAtTime15k`.
    pub network: String,
    /// The complete state before the first block.
    pub pre: BTreeMap<Address, FixtureAccount>,
    /// The parent of the first block.
    pub genesis_block_header: FixtureHeader,
    /// The genesis block, RLP-encoded (checked against the header's hash when present).
    #[serde(rename = "genesisRLP", default)]
    pub genesis_rlp: Option<Bytes>,
    /// The blocks, in order.
    pub blocks: Vec<FixtureBlock>,
    /// The complete expected state after the last block.
    #[serde(default)]
    pub post_state: Option<BTreeMap<Address, FixtureAccount>>,
    /// The expected state root after the last block (when `postState` is omitted).
    #[serde(default)]
    pub post_state_hash: Option<B256>,
    /// Hash of the last block.
    pub lastblockhash: B256,
    /// Provenance.
    #[serde(rename = "_info", default)]
    pub info: FixtureInfo,
    /// Chain configuration (execution-spec-tests only).
    #[serde(default)]
    pub config: FixtureConfig,
}

impl BlockchainTest {
    /// Parse one test from its JSON value; errors name the test.
    pub fn from_json(name: &str, value: &serde_json::Value) -> Result<Self, ImportError> {
        BlockchainTest::deserialize(value).map_err(|e| ImportError::Malformed {
            test: name.to_string(),
            defect: Box::new(e.into()),
        })
    }

    /// The chain id (from `config.chainid`, else 1 as in ethereum/tests).
    pub fn chain_id(&self) -> u64 {
        self.config.chainid.map(|c| c.saturating_to()).unwrap_or(1)
    }

    /// `config.blobSchedule` in a dump's form (fork name as the fixture spells it).
    pub fn blob_schedule(
        &self,
    ) -> Result<BTreeMap<String, gigagas_dump::BlobSchedule>, BlobScheduleError> {
        let n = |fork: &str, field: &'static str, v: U256| {
            u64::try_from(v).map_err(|_| BlobScheduleError {
                fork: fork.to_string(),
                field,
            })
        };
        self.config
            .blob_schedule
            .iter()
            .map(|(fork, e)| {
                Ok((
                    fork.clone(),
                    gigagas_dump::BlobSchedule {
                        target: n(fork, "target", e.target)?,
                        max: n(fork, "max", e.max)?,
                        base_fee_update_fraction: n(
                            fork,
                            "baseFeeUpdateFraction",
                            e.base_fee_update_fraction,
                        )?,
                    },
                ))
            })
            .collect()
    }
}

/// A block's `rlp_decoded.blockAccessList` that is not an EIP-7928 access list.
#[derive(Debug, thiserror::Error)]
#[error("rlp_decoded.blockAccessList does not parse: {0}")]
pub struct AccessListJsonError(#[source] pub serde_json::Error);

/// The largest fixture file read, bytes (the largest execution-spec-tests benchmark
/// fixtures are a few hundred MB).
pub const MAX_FIXTURE_BYTES: u64 = 4 << 30;

/// Keys every BlockchainTests entry has.
const REQUIRED_KEYS: [&str; 4] = ["blocks", "pre", "genesisBlockHeader", "network"];

/// A fixture file: its tests as JSON values, in file order (sorted by name).
#[derive(Debug, Clone)]
pub struct FixtureFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Test name → test JSON.
    pub tests: BTreeMap<String, serde_json::Value>,
}

impl FixtureFile {
    /// Read and check a fixture file. A file that is not JSON, not an object of objects,
    /// or whose entries lack the BlockchainTests keys is [`ImportError::NotAFixture`]; one
    /// that is not a regular file (a FIFO, a device, a socket) or is over
    /// [`MAX_FIXTURE_BYTES`] is refused before it is read ([`ImportError::Io`]).
    pub fn read(path: &Path) -> Result<Self, ImportError> {
        let io = |source| ImportError::Io {
            path: path.to_path_buf(),
            source,
        };
        let bytes = gigagas_fs_util::read_bounded(path, MAX_FIXTURE_BYTES).map_err(io)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not UTF-8 text: {e}"),
            ))
        })?;
        Self::parse(path, &text)
    }

    /// Parse fixture text; `path` is only used to name the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ImportError> {
        let not = |reason: String| ImportError::NotAFixture {
            path: path.to_path_buf(),
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| not(format!("not valid JSON ({e})")))?;
        let serde_json::Value::Object(map) = value else {
            return Err(not("expected a JSON object of test name → test".into()));
        };
        if map.is_empty() {
            return Err(not("the JSON object holds no tests".into()));
        }
        let mut tests = BTreeMap::new();
        for (name, test) in map {
            let Some(obj) = test.as_object() else {
                return Err(not(format!("entry `{name}` is not an object")));
            };
            let missing: Vec<&str> = REQUIRED_KEYS
                .iter()
                .copied()
                .filter(|k| !obj.contains_key(*k))
                .collect();
            if !missing.is_empty() {
                let hint = if obj.contains_key("transaction") && obj.contains_key("post") {
                    " (this looks like a GeneralStateTests state test, not a BlockchainTests fixture)"
                } else {
                    ""
                };
                return Err(not(format!(
                    "entry `{name}` has no {}{hint}",
                    missing.join(", ")
                )));
            }
            tests.insert(name, test);
        }
        Ok(Self {
            path: path.to_path_buf(),
            tests,
        })
    }

    /// Test names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tests.keys().map(String::as_str)
    }
}
