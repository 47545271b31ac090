//! The fork schedule of the node's chain.
//!
//! In order of preference:
//! 1. `--fork F`: F and every fork before it active from genesis.
//! 2. A known public chain id (mainnet, Sepolia, Holesky, Hoodi): alloy-hardforks' schedule
//!    (gigagas-chain's [`known_chain_schedule`]).
//! 3. `eth_config` (EIP-7910), which dev nodes (anvil, geth 1.16) serve: the fork that is
//!    current at the node's head, named by its precompiles and system contracts, must
//!    cover the whole range; it and every fork before it are active from genesis.
//! 4. The first block's header fields: `requests_hash` → Prague (Osaka if an `eth_call`
//!    of `CLZ` succeeds at that block), `parent_beacon_block_root` → Cancun,
//!    `withdrawals_root` → Shanghai, `base_fee_per_gas` → London; all from genesis.
//!    `block_access_list_hash` → Amsterdam. A block using more blob gas than the fork
//!    allows (a blob-parameter-only fork the node does not describe) is an error.
//!
//! Blob-parameter-only forks: mainnet's and the testnets' BPO1 and BPO2 are built in; a
//! node whose `eth_config` blob schedule differs from its fork's gets a BPO fork with the
//! node's values in the dump's `blob_schedule`.

use crate::{RpcClient, RpcDumpError};
use alloy_consensus::Header;
use alloy_hardforks::EthereumHardfork;
use alloy_primitives::Address;
use gigagas_chain::{ChainSpec, KnownChain, UnschedulableFork, known_chain_schedule};
use gigagas_dump::{BLOB_FORKS_WITHOUT_DEFAULTS, BlobSchedule, ChainConfig, ForkActivation};
use serde_json::{Value, json};

/// How the fork schedule was found (recorded in the dump's provenance).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkSource {
    /// `--fork` on the command line.
    Override,
    /// A known public chain's schedule.
    KnownChain,
    /// The node's `eth_config`.
    EthConfig,
    /// The first block's header fields.
    Header,
}

impl ForkSource {
    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            ForkSource::Override => "--fork",
            ForkSource::KnownChain => "known chain",
            ForkSource::EthConfig => "eth_config",
            ForkSource::Header => "header fields",
        }
    }
}

/// Why the fork schedule of a range could not be determined.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainDetectError {
    /// A fork the dump's chain config cannot schedule from genesis.
    #[error("fork {0} cannot be scheduled")]
    NotSchedulable(EthereumHardfork),
    /// `--fork` names a blob-parameter-only fork whose parameters neither gigagas nor the
    /// node knows.
    #[error(
        "--fork {}: its blob parameters (target, max, base fee update fraction) are not built in \
         and the node's eth_config does not give them; name an earlier fork with --fork",
        .fork.name().to_ascii_lowercase()
    )]
    OverrideWithoutBlobParams {
        /// The fork named.
        fork: EthereumHardfork,
    },
    /// The range reaches into a fork of a known chain that gigagas cannot schedule.
    #[error(
        "block {block} (timestamp {timestamp}) is past {} (timestamp {}), whose blob parameters (target, max, \
         base fee update fraction) gigagas does not know for chain {chain_id}; dump blocks before it, or name \
         the fork of the range with --fork",
        .unschedulable.fork, .unschedulable.timestamp
    )]
    PastKnownSchedule {
        /// The last block of the range.
        block: u64,
        /// Its timestamp.
        timestamp: u64,
        /// The chain.
        chain_id: u64,
        /// The fork it reaches.
        unschedulable: UnschedulableFork,
    },
    /// The node's `eth_config` fork activated within or after the range.
    #[error(
        "the node's current fork ({fork}) activated at timestamp {activation}, after block {block} (timestamp {timestamp}); \
         name the fork of the range with --fork"
    )]
    CurrentForkAfterRange {
        /// The node's current fork.
        fork: EthereumHardfork,
        /// When it activated.
        activation: u64,
        /// The first block of the range.
        block: u64,
        /// Its timestamp.
        timestamp: u64,
    },
    /// The node's `eth_config` names a next fork activating within the range.
    #[error(
        "the range crosses a fork activation at timestamp {next}; dump the parts before and after it separately"
    )]
    CrossesActivation {
        /// The next fork's activation timestamp.
        next: u64,
    },
    /// The header has no field telling the fork (no base fee: before London).
    #[error("cannot tell the fork from the header (no base fee): name it with --fork")]
    HeaderTellsNoFork,
    /// A block uses more blob gas than the fork its header implies allows.
    #[error(
        "block {block} uses {used} blob gas, more than {fork} allows ({max}): the chain runs a blob-parameter-only \
             fork whose parameters (target, max, base fee update fraction) the node does not serve (no \
             eth_config); name the fork with --fork"
    )]
    TooMuchBlobGas {
        /// The block.
        block: u64,
        /// Its blob gas used.
        used: u64,
        /// The fork its header implies.
        fork: EthereumHardfork,
        /// The most blob gas that fork allows a block.
        max: u64,
    },
}

/// What `eth_config` says about the fork current at the node's head.
#[derive(Debug, Clone)]
struct EthConfigFork {
    fork: EthereumHardfork,
    activation_time: u64,
    next_activation: Option<u64>,
    deposit_contract: Option<Address>,
    /// The node's blob parameters when they differ from the named fork's (a BPO fork).
    bpo_blob_schedule: Option<BlobSchedule>,
}

fn eth_config(client: &RpcClient) -> Option<EthConfigFork> {
    let v: Value = client.call_value("eth_config", json!([])).ok()?;
    let current = v.get("current")?;
    let precompiles = current.get("precompiles").and_then(Value::as_object);
    let system = current.get("systemContracts").and_then(Value::as_object);
    let has_pre = |n: &str| precompiles.is_some_and(|p| p.contains_key(n));
    let has_sys = |n: &str| system.is_some_and(|s| s.contains_key(n));
    let fork = if has_pre("P256VERIFY") {
        EthereumHardfork::Osaka
    } else if has_sys("HISTORY_STORAGE_ADDRESS") || has_pre("BLS12_G1ADD") {
        EthereumHardfork::Prague
    } else if has_pre("KZG_POINT_EVALUATION") || has_sys("BEACON_ROOTS_ADDRESS") {
        EthereumHardfork::Cancun
    } else {
        return None;
    };
    let activation_time = current.get("activationTime").and_then(Value::as_u64)?;
    let next_activation = v
        .get("next")
        .and_then(|n| n.get("activationTime"))
        .and_then(Value::as_u64);
    // A blob schedule other than the named fork's is a blob-parameter-only fork's.
    let (target, max, fraction) = match fork {
        EthereumHardfork::Cancun => (3, 6, 3_338_477),
        _ => (6, 9, 5_007_716),
    };
    let blobs = current.get("blobSchedule");
    let field = |k: &str| blobs.and_then(|b| b.get(k)).and_then(Value::as_u64);
    let bpo_blob_schedule = match (
        field("target"),
        field("max"),
        field("baseFeeUpdateFraction"),
    ) {
        _ if blobs.is_none() => None,
        (Some(t), Some(m), Some(f)) if (t, m, f) == (target, max, fraction) => None,
        (Some(target), Some(max), Some(base_fee_update_fraction)) => Some(BlobSchedule {
            target,
            max,
            base_fee_update_fraction,
        }),
        // Present but unreadable: not this fork's, and not usable.
        _ => return None,
    };
    let deposit_contract = system
        .and_then(|s| s.get("DEPOSIT_CONTRACT_ADDRESS"))
        .and_then(|a| serde_json::from_value::<Address>(a.clone()).ok());
    Some(EthConfigFork {
        fork,
        activation_time,
        next_activation,
        deposit_contract,
        bpo_blob_schedule,
    })
}

/// Init code that returns `CLZ(1)` (= 255 where Osaka's EIP-7939 is active):
/// `PUSH1 1 CLZ PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN`.
const CLZ_PROBE: &str = "0x60011e60005260206000f3";

fn osaka_by_probe(client: &RpcClient, block: u64) -> bool {
    let r = client.call_value(
        "eth_call",
        json!([{ "data": CLZ_PROBE, "gas": "0x186a0" }, format!("{block:#x}")]),
    );
    matches!(r, Ok(Value::String(s)) if s.ends_with("ff") && s.len() == 66)
}

/// Decide the chain config for blocks `first..=last` (headers of both given).
pub fn detect(
    client: &RpcClient,
    chain_id: u64,
    first: &Header,
    last: &Header,
    fork_override: Option<EthereumHardfork>,
) -> Result<(ChainConfig, ForkSource), RpcDumpError> {
    if let Some(fork) = fork_override {
        return from_override(client, chain_id, fork);
    }
    if let Some(known) = known_chain_schedule(chain_id) {
        return from_known_chain(known, chain_id, last);
    }
    if let Some(e) = eth_config(client) {
        return from_eth_config(&e, chain_id, first, last);
    }
    from_header(client, chain_id, first, last)
}

/// A chain config with every fork up to `fork` active from genesis.
fn from_genesis(chain_id: u64, fork: EthereumHardfork) -> Result<ChainConfig, RpcDumpError> {
    ChainConfig::all_active_from_genesis(chain_id, fork)
        .ok_or(RpcDumpError::Chain(ChainDetectError::NotSchedulable(fork)))
}

/// `--fork`: that fork from genesis, with the node's deposit contract and, for a BPO fork
/// gigagas has no parameters for, the node's blob parameters (or an error saying so).
fn from_override(
    client: &RpcClient,
    chain_id: u64,
    fork: EthereumHardfork,
) -> Result<(ChainConfig, ForkSource), RpcDumpError> {
    let from_genesis = |fork| from_genesis(chain_id, fork);
    let mut c = from_genesis(fork)?;
    let e = eth_config(client);
    c.deposit_contract = e.as_ref().and_then(|e| e.deposit_contract);
    if BLOB_FORKS_WITHOUT_DEFAULTS.contains(&fork) {
        match e.and_then(|e| e.bpo_blob_schedule) {
            Some(params) => {
                c.blob_schedule.insert(fork.name().into(), params);
            }
            None => {
                return Err(ChainDetectError::OverrideWithoutBlobParams { fork }.into());
            }
        }
    }
    Ok((c, ForkSource::Override))
}

/// A chain whose schedule gigagas knows (mainnet, the public testnets), refused past the
/// first fork whose blob parameters it does not know.
fn from_known_chain(
    known: KnownChain,
    chain_id: u64,
    last: &Header,
) -> Result<(ChainConfig, ForkSource), RpcDumpError> {
    if let Some(unschedulable) = known
        .first_unschedulable
        .filter(|u| u.timestamp <= last.timestamp)
    {
        return Err(ChainDetectError::PastKnownSchedule {
            block: last.number,
            timestamp: last.timestamp,
            chain_id,
            unschedulable,
        }
        .into());
    }
    Ok((known.config, ForkSource::KnownChain))
}

/// The node's `eth_config`: its current fork from genesis, if the range lies within it.
fn from_eth_config(
    e: &EthConfigFork,
    chain_id: u64,
    first: &Header,
    last: &Header,
) -> Result<(ChainConfig, ForkSource), RpcDumpError> {
    let from_genesis = |fork| from_genesis(chain_id, fork);
    if e.activation_time > first.timestamp {
        return Err(ChainDetectError::CurrentForkAfterRange {
            fork: e.fork,
            activation: e.activation_time,
            block: first.number,
            timestamp: first.timestamp,
        }
        .into());
    }
    if let Some(next) = e.next_activation.filter(|n| *n <= last.timestamp) {
        return Err(ChainDetectError::CrossesActivation { next }.into());
    }
    let mut c = from_genesis(e.fork)?;
    c.deposit_contract = e.deposit_contract;
    if let Some(params) = e.bpo_blob_schedule {
        // Blob parameters other than the fork's: a blob-parameter-only fork on top of
        // it, with the node's values (the name is a label: eth_config gives none).
        let bpo = EthereumHardfork::Bpo1;
        c.forks.push(ForkActivation {
            fork: bpo.name().into(),
            block: None,
            timestamp: Some(0),
        });
        c.blob_schedule.insert(bpo.name().into(), params);
    }
    Ok((c, ForkSource::EthConfig))
}

/// The fork the first header's fields imply (a probe tells Osaka from Prague), refused when
/// the blocks use more blob gas than that fork allows.
fn from_header(
    client: &RpcClient,
    chain_id: u64,
    first: &Header,
    last: &Header,
) -> Result<(ChainConfig, ForkSource), RpcDumpError> {
    let from_genesis = |fork| from_genesis(chain_id, fork);
    let fork = if first.block_access_list_hash.is_some() {
        EthereumHardfork::Amsterdam
    } else if first.requests_hash.is_some() {
        if osaka_by_probe(client, first.number) {
            EthereumHardfork::Osaka
        } else {
            EthereumHardfork::Prague
        }
    } else if first.parent_beacon_block_root.is_some() || first.blob_gas_used.is_some() {
        EthereumHardfork::Cancun
    } else if first.withdrawals_root.is_some() {
        EthereumHardfork::Shanghai
    } else if first.base_fee_per_gas.is_some() {
        EthereumHardfork::London
    } else {
        return Err(ChainDetectError::HeaderTellsNoFork.into());
    };
    // The header does not say which blob parameters apply: more blob gas than the fork
    // allows means a blob-parameter-only fork whose values are unknown here.
    let spec = ChainSpec::from_config(&from_genesis(fork)?).map_err(RpcDumpError::ChainConfig)?;
    for h in [first, last] {
        if let (Some(used), Some(params)) = (h.blob_gas_used, spec.blob_params_at(h.timestamp))
            && used > params.max_blob_gas_per_block()
        {
            return Err(ChainDetectError::TooMuchBlobGas {
                block: h.number,
                used,
                fork,
                max: params.max_blob_gas_per_block(),
            }
            .into());
        }
    }
    Ok((from_genesis(fork)?, ForkSource::Header))
}
