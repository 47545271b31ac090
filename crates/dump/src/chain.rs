//! Chain rules stored with a dump.

use alloy_hardforks::{EthereumChainHardforks, EthereumHardfork, ForkCondition};
use alloy_primitives::Address;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A chain config that does not describe a usable fork schedule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainConfigError {
    /// A fork name alloy-hardforks does not know.
    #[error("chain config: unknown fork {fork:?}: {detail}")]
    UnknownFork {
        /// The name as written.
        fork: String,
        /// alloy-hardforks' parse error.
        detail: String,
    },
    /// A fork with both or neither of `block` and `timestamp`.
    #[error("chain config: fork {fork} needs exactly one of `block` or `timestamp`")]
    Activation {
        /// The fork.
        fork: String,
    },
    /// A fork from Cancun on scheduled by block number.
    #[error("chain config: fork {fork} must activate by timestamp, not {condition}")]
    NotByTimestamp {
        /// The fork.
        fork: String,
        /// How it is scheduled instead.
        condition: String,
    },
    /// A blob-changing fork whose blob parameters are neither built in nor configured.
    #[error(
        "chain config: fork {fork} (timestamp {timestamp}) has no blob parameters: gigagas knows mainnet's \
         Cancun to BPO2 values only; give its target, max and base_fee_update_fraction in the chain \
         config's `blob_schedule`"
    )]
    MissingBlobParams {
        /// The fork.
        fork: String,
        /// Its activation timestamp.
        timestamp: u64,
    },
}

/// One fork and the block number or timestamp at which it activates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkActivation {
    /// Fork name as alloy-hardforks spells it (`Prague`, `Osaka`, ...; case-insensitive).
    pub fork: String,
    /// Activation block (forks up to Paris).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<u64>,
    /// Activation timestamp (Shanghai and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
}

/// Chain id and fork schedule: which rules apply to which block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainConfig {
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// Fork activations; forks not listed never activate.
    pub forks: Vec<ForkActivation>,
    /// Address of the deposit contract whose logs are EIP-6110 deposit requests, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deposit_contract: Option<Address>,
    /// Blob parameters per fork name (EIP-7840 `blobSchedule`), for forks whose values are
    /// not the mainnet ones gigagas knows (Cancun, Prague, Osaka, BPO1, BPO2). Empty in
    /// dumps written before BPO forks were scheduled.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub blob_schedule: BTreeMap<String, BlobSchedule>,
}

/// One fork's blob parameters (an EIP-7840 `blobSchedule` entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlobSchedule {
    /// Target blobs per block.
    pub target: u64,
    /// Maximum blobs per block.
    pub max: u64,
    /// Blob base fee update fraction.
    pub base_fee_update_fraction: u64,
}

/// Forks activated by block number (everything before Shanghai), in order.
pub const BLOCK_FORKS: &[EthereumHardfork] = &[
    EthereumHardfork::Frontier,
    EthereumHardfork::Homestead,
    EthereumHardfork::Tangerine,
    EthereumHardfork::SpuriousDragon,
    EthereumHardfork::Byzantium,
    EthereumHardfork::Constantinople,
    EthereumHardfork::Petersburg,
    EthereumHardfork::Istanbul,
    EthereumHardfork::Berlin,
    EthereumHardfork::London,
    EthereumHardfork::Paris,
];

/// Forks activated by timestamp, in order.
pub const TIMESTAMP_FORKS: &[EthereumHardfork] = &[
    EthereumHardfork::Shanghai,
    EthereumHardfork::Cancun,
    EthereumHardfork::Prague,
    EthereumHardfork::Osaka,
    EthereumHardfork::Bpo1,
    EthereumHardfork::Bpo2,
    EthereumHardfork::Bpo3,
    EthereumHardfork::Bpo4,
    EthereumHardfork::Bpo5,
    EthereumHardfork::Amsterdam,
];

/// Blob-parameter-only forks with no built-in parameters: a chain that schedules one must
/// say its values (`eth_config`'s `blobSchedule`, or [`ChainConfig::blob_schedule`]);
/// mainnet's BPO1 and BPO2 values are built in.
pub const BLOB_FORKS_WITHOUT_DEFAULTS: &[EthereumHardfork] = &[
    EthereumHardfork::Bpo3,
    EthereumHardfork::Bpo4,
    EthereumHardfork::Bpo5,
];

impl ChainConfig {
    /// A chain on which `fork` and every fork before it are active from genesis. BPO3-5
    /// are left out when `fork` is later than them (they change blob parameters only, and
    /// have no built-in values); when `fork` is one of them its blob parameters must be
    /// added to [`Self::blob_schedule`].
    ///
    /// Returns `None` for forks gigagas does not know how to schedule.
    pub fn all_active_from_genesis(chain_id: u64, fork: EthereumHardfork) -> Option<Self> {
        let by_block = BLOCK_FORKS.iter().map(|f| (f, Some(0), None));
        let by_timestamp = TIMESTAMP_FORKS
            .iter()
            .filter(|f| **f == fork || !BLOB_FORKS_WITHOUT_DEFAULTS.contains(f))
            .map(|f| (f, None, Some(0)));
        let mut forks = Vec::new();
        for (f, block, timestamp) in by_block.chain(by_timestamp) {
            forks.push(ForkActivation {
                fork: f.name().into(),
                block,
                timestamp,
            });
            if *f == fork {
                return Some(Self {
                    chain_id,
                    forks,
                    deposit_contract: None,
                    blob_schedule: BTreeMap::new(),
                });
            }
        }
        None
    }

    /// The fork schedule in alloy's form.
    pub fn hardforks(&self) -> Result<EthereumChainHardforks, ChainConfigError> {
        let mut out = Vec::with_capacity(self.forks.len());
        for a in &self.forks {
            let fork: EthereumHardfork =
                a.fork
                    .parse()
                    .map_err(|e: alloy_hardforks::ParseHardforkError| {
                        ChainConfigError::UnknownFork {
                            fork: a.fork.clone(),
                            detail: e.to_string(),
                        }
                    })?;
            let condition = match (a.block, a.timestamp) {
                (Some(b), None) => ForkCondition::Block(b),
                (None, Some(t)) => ForkCondition::Timestamp(t),
                _ => {
                    return Err(ChainConfigError::Activation {
                        fork: a.fork.clone(),
                    });
                }
            };
            out.push((fork, condition));
        }
        Ok(EthereumChainHardforks::new(out))
    }

    /// Whether EIP-161 holds at block `number` (Spurious Dragon on): an empty account a
    /// block touches is deleted, which a state root depends on.
    pub fn deletes_empty_accounts_at(&self, number: u64) -> Result<bool, ChainConfigError> {
        use alloy_hardforks::EthereumHardforks;
        Ok(self.hardforks()?.is_spurious_dragon_active_at_block(number))
    }

    /// Name of the newest fork active at a block, for display.
    pub fn fork_at(&self, number: u64, timestamp: u64) -> String {
        self.forks
            .iter()
            .rev()
            .find(|a| {
                a.block.is_some_and(|b| b <= number) || a.timestamp.is_some_and(|t| t <= timestamp)
            })
            .map(|a| a.fork.clone())
            .unwrap_or_else(|| "Frontier".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_hardforks::EthereumHardforks;

    #[test]
    fn prague_from_genesis_activates_everything_up_to_prague_only() {
        let c = ChainConfig::all_active_from_genesis(1, EthereumHardfork::Prague).unwrap();
        let h = c.hardforks().unwrap();
        assert!(h.is_prague_active_at_timestamp(0));
        assert!(h.is_cancun_active_at_timestamp(0));
        assert!(h.is_paris_active_at_block(0));
        assert!(!h.is_osaka_active_at_timestamp(u64::MAX));
        assert_eq!(c.fork_at(5, 5), "Prague");
    }

    #[test]
    fn unknown_fork_name_is_an_error() {
        let c = ChainConfig {
            chain_id: 1,
            forks: vec![ForkActivation {
                fork: "Atlantis".into(),
                block: Some(0),
                timestamp: None,
            }],
            deposit_contract: None,
            blob_schedule: BTreeMap::new(),
        };
        assert!(c.hardforks().unwrap_err().to_string().contains("Atlantis"));
    }

    #[test]
    fn blob_schedule_round_trips_and_old_configs_still_decode() {
        let old = r#"{"chain_id":1,"forks":[{"fork":"Osaka","timestamp":0}]}"#;
        let c: ChainConfig = serde_json::from_str(old).unwrap();
        assert!(c.blob_schedule.is_empty());
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            old,
            "no new field in configs without one"
        );
        let mut c = ChainConfig::all_active_from_genesis(7, EthereumHardfork::Bpo3).unwrap();
        assert_eq!(c.fork_at(0, 0), "Bpo3");
        c.blob_schedule.insert(
            "Bpo3".into(),
            BlobSchedule {
                target: 21,
                max: 32,
                base_fee_update_fraction: 20_000_000,
            },
        );
        let back: ChainConfig = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        let a = ChainConfig::all_active_from_genesis(1, EthereumHardfork::Amsterdam).unwrap();
        let names: Vec<&str> = a.forks.iter().map(|f| f.fork.as_str()).collect();
        assert!(
            names.ends_with(&["Osaka", "Bpo1", "Bpo2", "Amsterdam"]),
            "{names:?}"
        );
    }
}
