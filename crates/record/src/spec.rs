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
use gigagas_dump::ChainConfig;
use revm::primitives::hardfork::SpecId;

/// The fork schedule of a dump, in the form alloy-evm's block executor takes.
#[derive(Debug, Clone)]
pub struct ChainSpec {
    /// EIP-155 chain id.
    pub chain_id: u64,
    hardforks: EthereumChainHardforks,
    deposit_contract: Option<Address>,
}

impl ChainSpec {
    /// Build from a dump's chain config.
    pub fn from_config(config: &ChainConfig) -> Result<Self, String> {
        Ok(Self {
            chain_id: config.chain_id,
            hardforks: config.hardforks()?,
            deposit_contract: config.deposit_contract,
        })
    }

    /// Blob parameters of the fork active at `timestamp` (`None` before Cancun).
    pub fn blob_params_at(&self, timestamp: u64) -> Option<BlobParams> {
        if self.is_osaka_active_at_timestamp(timestamp) {
            Some(BlobParams::osaka())
        } else if self.is_prague_active_at_timestamp(timestamp) {
            Some(BlobParams::prague())
        } else if self.is_cancun_active_at_timestamp(timestamp) {
            Some(BlobParams::cancun())
        } else {
            None
        }
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
        EvmEnv::for_eth_block(header, self, self.chain_id, self.blob_params_at(header.timestamp))
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
