//! Chain rules stored with a dump.

use alloy_hardforks::{EthereumChainHardforks, EthereumHardfork, ForkCondition};
use alloy_primitives::Address;
use serde::{Deserialize, Serialize};

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
}

/// Forks activated by block number (everything before Shanghai).
const BLOCK_FORKS: &[EthereumHardfork] = &[
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
const TIMESTAMP_FORKS: &[EthereumHardfork] = &[
    EthereumHardfork::Shanghai,
    EthereumHardfork::Cancun,
    EthereumHardfork::Prague,
    EthereumHardfork::Osaka,
];

impl ChainConfig {
    /// A chain on which `fork` and every fork before it are active from genesis.
    ///
    /// Returns `None` for forks gigagas does not know how to schedule (e.g. Amsterdam).
    pub fn all_active_from_genesis(chain_id: u64, fork: EthereumHardfork) -> Option<Self> {
        let mut forks = Vec::new();
        let mut reached = false;
        for f in BLOCK_FORKS {
            forks.push(ForkActivation { fork: f.name().into(), block: Some(0), timestamp: None });
            if *f == fork {
                reached = true;
                break;
            }
        }
        if !reached {
            for f in TIMESTAMP_FORKS {
                forks.push(ForkActivation {
                    fork: f.name().into(),
                    block: None,
                    timestamp: Some(0),
                });
                if *f == fork {
                    reached = true;
                    break;
                }
            }
        }
        reached.then_some(Self { chain_id, forks, deposit_contract: None })
    }

    /// The fork schedule in alloy's form.
    pub fn hardforks(&self) -> Result<EthereumChainHardforks, String> {
        let mut out = Vec::with_capacity(self.forks.len());
        for a in &self.forks {
            let fork: EthereumHardfork =
                a.fork.parse().map_err(|e| format!("chain config: {e}"))?;
            let condition = match (a.block, a.timestamp) {
                (Some(b), None) => ForkCondition::Block(b),
                (None, Some(t)) => ForkCondition::Timestamp(t),
                _ => {
                    return Err(format!(
                        "chain config: fork {} needs exactly one of `block` or `timestamp`",
                        a.fork
                    ));
                }
            };
            out.push((fork, condition));
        }
        Ok(EthereumChainHardforks::new(out))
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
            forks: vec![ForkActivation { fork: "Atlantis".into(), block: Some(0), timestamp: None }],
            deposit_contract: None,
        };
        assert!(c.hardforks().unwrap_err().contains("Atlantis"));
    }
}
