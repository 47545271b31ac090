//! Chain rules: which fork applies to a block, and the EVM environment of a block.
//!
//! [`ChainSpec`] reads a dump's [`ChainConfig`] into the form alloy-evm's block executor
//! takes; every producer and the executor use it, so a block runs under the same rules
//! wherever it runs.

use alloy_consensus::Header;
use alloy_eips::eip7840::BlobParams;
use alloy_evm::{EvmEnv, eth::spec::EthExecutorSpec};
use alloy_hardforks::{EthereumChainHardforks, EthereumHardfork, EthereumHardforks, ForkCondition};
use alloy_primitives::Address;
use gigagas_dump::{BlobSchedule, ChainConfig, ChainConfigError, TIMESTAMP_FORKS};
use revm::primitives::hardfork::SpecId;

/// The fork schedule of a dump, in the form alloy-evm's block executor takes.
#[derive(Debug, Clone)]
pub struct ChainSpec {
    /// EIP-155 chain id.
    pub chain_id: u64,
    hardforks: EthereumChainHardforks,
    deposit_contract: Option<Address>,
    /// Blob parameters from each scheduled blob-changing fork's activation time, in order.
    blob_schedule: Vec<(u64, BlobParams)>,
}

/// The built-in (mainnet) blob parameters of a fork, if it has any.
fn default_blob_params(fork: EthereumHardfork) -> Option<BlobParams> {
    match fork {
        EthereumHardfork::Cancun => Some(BlobParams::cancun()),
        EthereumHardfork::Prague => Some(BlobParams::prague()),
        EthereumHardfork::Osaka => Some(BlobParams::osaka()),
        EthereumHardfork::Bpo1 => Some(BlobParams::bpo1()),
        EthereumHardfork::Bpo2 => Some(BlobParams::bpo2()),
        _ => None,
    }
}

/// A chain config's blob schedule entry for `fork` (names compared case-insensitively,
/// `BPO1` and `Bpo1` alike), on top of the per-transaction rules of the fork's era.
fn configured_blob_params(
    config: &ChainConfig,
    fork: EthereumHardfork,
    era: BlobParams,
) -> Option<BlobParams> {
    let (_, s): (_, &BlobSchedule) = config
        .blob_schedule
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(fork.name()))?;
    Some(BlobParams {
        target_blob_count: s.target,
        max_blob_count: s.max,
        update_fraction: s.base_fee_update_fraction as u128,
        ..era
    })
}

/// The blob parameters of every scheduled blob-changing fork, by activation timestamp.
fn blob_schedule(
    config: &ChainConfig,
    hardforks: &EthereumChainHardforks,
) -> Result<Vec<(u64, BlobParams)>, ChainConfigError> {
    let mut out: Vec<(u64, BlobParams)> = Vec::new();
    // Forks that set blob parameters, oldest first: Cancun and every timestamp fork after
    // it. Amsterdam keeps the parameters before it unless the chain config gives its own.
    for &fork in TIMESTAMP_FORKS
        .iter()
        .filter(|f| **f >= EthereumHardfork::Cancun)
    {
        let at = match hardforks.ethereum_fork_activation(fork) {
            ForkCondition::Timestamp(t) => t,
            ForkCondition::Never => continue,
            other => {
                return Err(ChainConfigError::NotByTimestamp {
                    fork: fork.to_string(),
                    condition: format!("{other:?}"),
                });
            }
        };
        // Per-transaction rules (blob count cap, base cost) follow the newest named fork.
        let era = if fork >= EthereumHardfork::Osaka {
            BlobParams::osaka()
        } else {
            default_blob_params(fork).expect("Cancun and Prague have built-in parameters")
        };
        let params =
            match configured_blob_params(config, fork, era).or_else(|| default_blob_params(fork)) {
                Some(p) => p,
                None if fork == EthereumHardfork::Amsterdam => match out.last() {
                    Some((_, p)) => *p,
                    None => continue,
                },
                None => {
                    return Err(ChainConfigError::MissingBlobParams {
                        fork: fork.to_string(),
                        timestamp: at,
                    });
                }
            };
        out.push((at, params));
    }
    out.sort_by_key(|(t, _)| *t);
    Ok(out)
}

impl ChainSpec {
    /// Build from a dump's chain config.
    /// Build from a dump's chain config. Fails on an unknown fork name, and on a
    /// blob-parameter-only fork (BPO3-5) without an entry in the config's `blob_schedule`.
    pub fn from_config(config: &ChainConfig) -> Result<Self, ChainConfigError> {
        let hardforks = config.hardforks()?;
        let blob_schedule = blob_schedule(config, &hardforks)?;
        Ok(Self {
            chain_id: config.chain_id,
            hardforks,
            deposit_contract: config.deposit_contract,
            blob_schedule,
        })
    }

    /// Blob parameters of the newest blob-changing fork (Cancun, Prague, Osaka, BPOn, ...)
    /// active at `timestamp` (`None` before Cancun).
    pub fn blob_params_at(&self, timestamp: u64) -> Option<BlobParams> {
        self.blob_schedule
            .iter()
            .rev()
            .find(|(t, _)| *t <= timestamp)
            .map(|(_, p)| *p)
    }

    /// Recover a transaction's sender under the rules of block `number`: before Homestead
    /// signatures with a high `s` were valid (EIP-2 came with Homestead).
    pub fn recover_sender(
        &self,
        number: u64,
        tx: &alloy_consensus::TxEnvelope,
    ) -> Result<Address, alloy_consensus::crypto::RecoveryError> {
        use alloy_consensus::transaction::SignerRecoverable;
        if self.is_homestead_active_at_block(number) {
            tx.recover_signer()
        } else {
            tx.recover_signer_unchecked()
        }
    }

    /// The EVM environment (fork rules, block env, blob fee) of a block.
    pub fn evm_env(&self, header: &Header) -> EvmEnv<SpecId> {
        EvmEnv::for_eth_block(
            header,
            self,
            self.chain_id,
            self.blob_params_at(header.timestamp),
        )
    }
}

impl EthereumHardforks for ChainSpec {
    fn ethereum_fork_activation(&self, fork: EthereumHardfork) -> ForkCondition {
        self.hardforks.ethereum_fork_activation(fork)
    }
}

impl EthExecutorSpec for ChainSpec {
    fn deposit_contract_address(&self) -> Option<Address> {
        self.deposit_contract
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gigagas_dump::ForkActivation;

    fn at(fork: &str, t: u64) -> ForkActivation {
        ForkActivation {
            fork: fork.into(),
            block: None,
            timestamp: Some(t),
        }
    }

    #[test]
    fn bpo_forks_change_the_blob_parameters_at_their_timestamps() {
        let mut c = ChainConfig::all_active_from_genesis(1, EthereumHardfork::Osaka).unwrap();
        c.forks.push(at("Bpo1", 100));
        c.forks.push(at("Bpo2", 200));
        let s = ChainSpec::from_config(&c).unwrap();
        assert_eq!(s.blob_params_at(99), Some(BlobParams::osaka()));
        assert_eq!(s.blob_params_at(100), Some(BlobParams::bpo1()));
        assert_eq!(s.blob_params_at(250), Some(BlobParams::bpo2()));
        assert_eq!(
            s.blob_params_at(250).unwrap().max_blobs_per_tx,
            BlobParams::osaka().max_blobs_per_tx
        );
    }

    #[test]
    fn mainnet_schedule_has_bpo1_and_bpo2() {
        let forks = EthereumHardfork::mainnet()
            .iter()
            .filter_map(|(f, c)| match c {
                ForkCondition::Timestamp(t) => Some(at(f.name(), *t)),
                _ => None,
            })
            .collect();
        let s = ChainSpec::from_config(&ChainConfig {
            forks,
            ..ChainConfig::all_active_from_genesis(1, EthereumHardfork::Paris).unwrap()
        })
        .unwrap();
        let bpo2 = alloy_hardforks::ethereum::mainnet::MAINNET_BPO2_TIMESTAMP;
        assert_eq!(s.blob_params_at(bpo2), Some(BlobParams::bpo2()));
        assert_eq!(s.blob_params_at(bpo2 - 1), Some(BlobParams::bpo1()));
    }

    #[test]
    fn a_bpo_fork_without_parameters_is_an_error_and_a_configured_one_is_used() {
        let mut c = ChainConfig::all_active_from_genesis(7, EthereumHardfork::Bpo3).unwrap();
        let err = ChainSpec::from_config(&c).unwrap_err().to_string();
        assert!(
            err.contains("Bpo3") && err.contains("blob_schedule"),
            "{err}"
        );
        c.blob_schedule.insert(
            "BPO3".into(),
            BlobSchedule {
                target: 21,
                max: 32,
                base_fee_update_fraction: 20_000_000,
            },
        );
        let p = ChainSpec::from_config(&c)
            .unwrap()
            .blob_params_at(0)
            .unwrap();
        assert_eq!(
            (p.target_blob_count, p.max_blob_count, p.update_fraction),
            (21, 32, 20_000_000)
        );
        assert_eq!(p.max_blobs_per_tx, BlobParams::osaka().max_blobs_per_tx);
    }
}
