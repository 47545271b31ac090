//! The fork schedule of the node's chain.
//!
//! In order of preference:
//! 1. `--fork F`: F and every fork before it active from genesis.
//! 2. A known public chain id (mainnet, Sepolia, Holesky, Hoodi): alloy-hardforks' schedule.
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
use alloy_hardforks::{EthereumHardfork, ForkCondition};
use alloy_primitives::{Address, address};
use gigagas_dump::{
    BLOB_FORKS_WITHOUT_DEFAULTS, BLOCK_FORKS, BlobSchedule, ChainConfig, ForkActivation,
    TIMESTAMP_FORKS,
};
use serde_json::{Value, json};

/// Forks a dump can schedule: the dump format's block and timestamp forks, and the DAO
/// block's irregular balance transfer (alloy-evm applies it at that block); the difficulty-bomb
/// glaciers change no execution rule.
fn schedulable() -> impl Iterator<Item = EthereumHardfork> {
    BLOCK_FORKS
        .iter()
        .copied()
        .chain([EthereumHardfork::Dao])
        .chain(TIMESTAMP_FORKS.iter().copied())
}

const MAINNET_DEPOSIT_CONTRACT: Address = address!("0x00000000219ab540356cBB839Cbe05303d7705Fa");

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

/// The schedule of a known public chain, restricted to the forks a dump can schedule.
pub fn known_chain(chain_id: u64) -> Option<ChainConfig> {
    known_chain_with_limit(chain_id).map(|(c, _)| c)
}

/// [`known_chain`], and the first later fork the dump's chain config cannot express (a
/// blob-parameter-only fork without built-in parameters, BPO3-5), with its activation
/// timestamp. Mainnet's and the testnets' BPO1 and BPO2 are scheduled.
fn known_chain_with_limit(chain_id: u64) -> Option<(ChainConfig, Option<(EthereumHardfork, u64)>)> {
    let (forks, deposit): (Vec<(EthereumHardfork, ForkCondition)>, Address) = match chain_id {
        1 => (
            EthereumHardfork::mainnet().to_vec(),
            MAINNET_DEPOSIT_CONTRACT,
        ),
        11155111 => (
            EthereumHardfork::sepolia().to_vec(),
            address!("0x7f02c3e3c98b133055b8b348b2ac625669ed295d"),
        ),
        17000 => (
            EthereumHardfork::holesky().to_vec(),
            address!("0x4242424242424242424242424242424242424242"),
        ),
        560048 => (EthereumHardfork::hoodi().to_vec(), MAINNET_DEPOSIT_CONTRACT),
        _ => return None,
    };
    let mut out = Vec::new();
    let mut limit = None;
    for (fork, cond) in forks {
        if !schedulable().any(|f| f == fork) || BLOB_FORKS_WITHOUT_DEFAULTS.contains(&fork) {
            // Forks between the schedulable ones (difficulty-bomb glaciers) change no execution rule a
            // dump range can meet; a later one (BPO blob parameters, ...) does.
            if let ForkCondition::Timestamp(t) = cond
                && limit.is_none()
            {
                limit = Some((fork, t));
            }
            continue;
        }
        let (block, timestamp) = match cond {
            ForkCondition::Block(b) => (Some(b), None),
            ForkCondition::TTD {
                activation_block_number,
                ..
            } => (Some(activation_block_number), None),
            ForkCondition::Timestamp(t) => (None, Some(t)),
            ForkCondition::Never => continue,
        };
        out.push(ForkActivation {
            fork: fork.name().into(),
            block,
            timestamp,
        });
    }
    Some((
        ChainConfig {
            chain_id,
            forks: out,
            deposit_contract: Some(deposit),
            blob_schedule: Default::default(),
        },
        limit,
    ))
}

/// A fork name `--fork` does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fork `{name}` (expected one of {})", expected.join(", "))]
pub struct UnknownFork {
    /// The name given.
    pub name: String,
    /// The names `--fork` takes, lowercase, oldest first.
    pub expected: Vec<String>,
}

/// Parse a fork name as `--fork` takes it (case-insensitive: `cancun`, `prague`, ...).
pub fn parse_fork(s: &str) -> Result<EthereumHardfork, UnknownFork> {
    schedulable()
        .find(|f| f.name().eq_ignore_ascii_case(s))
        .ok_or_else(|| UnknownFork {
            name: s.to_string(),
            expected: schedulable()
                .map(|f| f.name().to_ascii_lowercase())
                .collect(),
        })
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
    if let Some((c, limit)) = known_chain_with_limit(chain_id) {
        return from_known_chain(c, limit, chain_id, last);
    }
    if let Some(e) = eth_config(client) {
        return from_eth_config(&e, chain_id, first, last);
    }
    from_header(client, chain_id, first, last)
}

/// A chain config with every fork up to `fork` active from genesis.
fn from_genesis(chain_id: u64, fork: EthereumHardfork) -> Result<ChainConfig, RpcDumpError> {
    ChainConfig::all_active_from_genesis(chain_id, fork)
        .ok_or_else(|| RpcDumpError::Chain(format!("fork {fork} cannot be scheduled")))
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
                return Err(RpcDumpError::Chain(format!(
                    "--fork {}: its blob parameters (target, max, base fee update fraction) are not built in \
                     and the node's eth_config does not give them; name an earlier fork with --fork",
                    fork.name().to_ascii_lowercase()
                )));
            }
        }
    }
    Ok((c, ForkSource::Override))
}

/// A chain whose schedule gigagas knows (mainnet, the public testnets), refused past the
/// first fork whose blob parameters it does not know.
fn from_known_chain(
    c: ChainConfig,
    limit: Option<(EthereumHardfork, u64)>,
    chain_id: u64,
    last: &Header,
) -> Result<(ChainConfig, ForkSource), RpcDumpError> {
    if let Some((fork, t)) = limit.filter(|(_, t)| *t <= last.timestamp) {
        return Err(RpcDumpError::Chain(format!(
            "block {} (timestamp {}) is past {fork} (timestamp {t}), whose blob parameters (target, max, \
             base fee update fraction) gigagas does not know for chain {chain_id}; dump blocks before it, or name \
             the fork of the range with --fork",
            last.number, last.timestamp
        )));
    }
    Ok((c, ForkSource::KnownChain))
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
        return Err(RpcDumpError::Chain(format!(
            "the node's current fork ({}) activated at timestamp {}, after block {} (timestamp {}); \
             name the fork of the range with --fork",
            e.fork, e.activation_time, first.number, first.timestamp
        )));
    }
    if let Some(next) = e.next_activation.filter(|n| *n <= last.timestamp) {
        return Err(RpcDumpError::Chain(format!(
            "the range crosses a fork activation at timestamp {next}; dump the parts before and after it separately"
        )));
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
        return Err(RpcDumpError::Chain(
            "cannot tell the fork from the header (no base fee): name it with --fork".into(),
        ));
    };
    // The header does not say which blob parameters apply: more blob gas than the fork
    // allows means a blob-parameter-only fork whose values are unknown here.
    let spec = gigagas_record::ChainSpec::from_config(&from_genesis(fork)?)
        .map_err(RpcDumpError::ChainConfig)?;
    for h in [first, last] {
        if let (Some(used), Some(params)) = (h.blob_gas_used, spec.blob_params_at(h.timestamp))
            && used > params.max_blob_gas_per_block()
        {
            return Err(RpcDumpError::Chain(format!(
                "block {} uses {used} blob gas, more than {fork} allows ({}): the chain runs a blob-parameter-only \
             fork whose parameters (target, max, base fee update fraction) the node does not serve (no \
             eth_config); name the fork with --fork",
                h.number,
                params.max_blob_gas_per_block()
            )));
        }
    }
    Ok((from_genesis(fork)?, ForkSource::Header))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mainnet_schedule_is_known() {
        let c = known_chain(1).unwrap();
        assert_eq!(c.fork_at(22_431_084, 1_746_612_311), "Prague");
        assert!(c.hardforks().is_ok());
    }

    #[test]
    fn mainnet_and_testnets_schedule_bpo1_and_bpo2() {
        use alloy_hardforks::ethereum::mainnet::{MAINNET_BPO1_TIMESTAMP, MAINNET_BPO2_TIMESTAMP};
        let (c, limit) = known_chain_with_limit(1).unwrap();
        assert_eq!(limit, None, "nothing mainnet schedules is out of reach");
        assert_eq!(c.fork_at(24_000_000, MAINNET_BPO1_TIMESTAMP), "Bpo1");
        assert_eq!(c.fork_at(24_000_000, MAINNET_BPO2_TIMESTAMP), "Bpo2");
        let spec = gigagas_record::ChainSpec::from_config(&c).unwrap();
        assert_eq!(
            spec.blob_params_at(MAINNET_BPO2_TIMESTAMP),
            Some(alloy_eips::eip7840::BlobParams::bpo2())
        );
        assert_eq!(
            spec.blob_params_at(MAINNET_BPO1_TIMESTAMP - 1),
            Some(alloy_eips::eip7840::BlobParams::osaka())
        );
        for id in [11155111, 17000, 560048] {
            let (c, limit) = known_chain_with_limit(id).unwrap();
            assert_eq!(limit, None);
            assert!(c.forks.iter().any(|f| f.fork == "Bpo2"), "chain {id}");
            gigagas_record::ChainSpec::from_config(&c).unwrap();
        }
    }

    #[test]
    fn fork_names_parse_case_insensitively() {
        assert_eq!(parse_fork("PRAGUE").unwrap(), EthereumHardfork::Prague);
        assert_eq!(parse_fork("bpo2").unwrap(), EthereumHardfork::Bpo2);
        assert_eq!(
            parse_fork("Amsterdam").unwrap(),
            EthereumHardfork::Amsterdam
        );
        let err = parse_fork("atlantis").unwrap_err();
        assert_eq!(err.name, "atlantis");
        assert!(err.to_string().contains("osaka, bpo1"), "{err}");
    }
}
