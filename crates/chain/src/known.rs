//! The public chains whose fork schedule gigagas knows (mainnet, Sepolia, Holesky, Hoodi),
//! from alloy-hardforks, restricted to the forks a dump can schedule; and fork names as the
//! command line takes them.

use alloy_hardforks::{EthereumHardfork, ForkCondition};
use alloy_primitives::{Address, address};
use gigagas_dump::{
    BLOB_FORKS_WITHOUT_DEFAULTS, BLOCK_FORKS, ChainConfig, ForkActivation, TIMESTAMP_FORKS,
};

/// The mainnet deposit contract, whose logs are EIP-6110 deposit requests (Prague+); Hoodi
/// uses the same address.
pub const MAINNET_DEPOSIT_CONTRACT: Address =
    address!("0x00000000219ab540356cBB839Cbe05303d7705Fa");

/// Forks a dump can schedule: the dump format's block and timestamp forks, and the DAO
/// block's irregular balance transfer (alloy-evm applies it at that block); the difficulty-bomb
/// glaciers change no execution rule.
pub fn schedulable_forks() -> impl Iterator<Item = EthereumHardfork> {
    BLOCK_FORKS
        .iter()
        .copied()
        .chain([EthereumHardfork::Dao])
        .chain(TIMESTAMP_FORKS.iter().copied())
}

/// A fork a known chain schedules that a dump's chain config cannot express: a
/// blob-parameter-only fork without built-in parameters (BPO3-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnschedulableFork {
    /// The fork.
    pub fork: EthereumHardfork,
    /// Its activation timestamp: blocks from it on cannot be dumped under the known schedule.
    pub timestamp: u64,
}

/// A known public chain's schedule, as far as a dump can express it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownChain {
    /// The schedule, restricted to the forks a dump can schedule, with the deposit contract.
    pub config: ChainConfig,
    /// The first later fork the chain config cannot express, if the chain schedules one.
    pub first_unschedulable: Option<UnschedulableFork>,
}

/// The schedule of a known public chain, restricted to the forks a dump can schedule.
pub fn known_chain(chain_id: u64) -> Option<ChainConfig> {
    known_chain_schedule(chain_id).map(|k| k.config)
}

/// [`known_chain`], and the first later fork the dump's chain config cannot express
/// ([`UnschedulableFork`]). Mainnet's and the testnets' BPO1 and BPO2 are scheduled.
pub fn known_chain_schedule(chain_id: u64) -> Option<KnownChain> {
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
        if !schedulable_forks().any(|f| f == fork) || BLOB_FORKS_WITHOUT_DEFAULTS.contains(&fork) {
            // Forks between the schedulable ones (difficulty-bomb glaciers) change no execution rule a
            // dump range can meet; a later one (BPO blob parameters, ...) does.
            if let ForkCondition::Timestamp(timestamp) = cond
                && limit.is_none()
            {
                limit = Some(UnschedulableFork { fork, timestamp });
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
    Some(KnownChain {
        config: ChainConfig {
            chain_id,
            forks: out,
            deposit_contract: Some(deposit),
            blob_schedule: Default::default(),
        },
        first_unschedulable: limit,
    })
}

/// A fork name [`parse_fork`] does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fork `{name}` (expected one of {})", expected.join(", "))]
pub struct UnknownFork {
    /// The name given.
    pub name: String,
    /// The names [`parse_fork`] takes, lowercase, oldest first.
    pub expected: Vec<String>,
}

/// Parse the name of a fork a dump can schedule ([`schedulable_forks`]), case-insensitively
/// (`cancun`, `Prague`, `BPO2`, ...).
pub fn parse_fork(s: &str) -> Result<EthereumHardfork, UnknownFork> {
    schedulable_forks()
        .find(|f| f.name().eq_ignore_ascii_case(s))
        .ok_or_else(|| UnknownFork {
            name: s.to_string(),
            expected: schedulable_forks()
                .map(|f| f.name().to_ascii_lowercase())
                .collect(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ChainSpec;

    #[test]
    fn mainnet_schedule_is_known() {
        let c = known_chain(1).unwrap();
        assert_eq!(c.fork_at(22_431_084, 1_746_612_311), "Prague");
        assert!(c.hardforks().is_ok());
    }

    #[test]
    fn mainnet_and_testnets_schedule_bpo1_and_bpo2() {
        use alloy_hardforks::ethereum::mainnet::{MAINNET_BPO1_TIMESTAMP, MAINNET_BPO2_TIMESTAMP};
        let KnownChain {
            config: c,
            first_unschedulable: limit,
        } = known_chain_schedule(1).unwrap();
        assert_eq!(limit, None, "nothing mainnet schedules is out of reach");
        assert_eq!(c.fork_at(24_000_000, MAINNET_BPO1_TIMESTAMP), "Bpo1");
        assert_eq!(c.fork_at(24_000_000, MAINNET_BPO2_TIMESTAMP), "Bpo2");
        let spec = ChainSpec::from_config(&c).unwrap();
        assert_eq!(
            spec.blob_params_at(MAINNET_BPO2_TIMESTAMP),
            Some(alloy_eips::eip7840::BlobParams::bpo2())
        );
        assert_eq!(
            spec.blob_params_at(MAINNET_BPO1_TIMESTAMP - 1),
            Some(alloy_eips::eip7840::BlobParams::osaka())
        );
        for id in [11155111, 17000, 560048] {
            let k = known_chain_schedule(id).unwrap();
            assert_eq!(k.first_unschedulable, None);
            assert!(
                k.config.forks.iter().any(|f| f.fork == "Bpo2"),
                "chain {id}"
            );
            ChainSpec::from_config(&k.config).unwrap();
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
