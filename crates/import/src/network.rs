//! Fixture networks → gigagas chain configs.

use alloy_hardforks::EthereumHardfork;
use gigagas_chain::MAINNET_DEPOSIT_CONTRACT;
use gigagas_dump::{BlobSchedule, ChainConfig, ChainConfigError, ForkActivation};
use std::collections::BTreeMap;

/// Timestamp of the second fork in the `XToYAtTime15k` transition networks.
pub const TRANSITION_TIMESTAMP: u64 = 15_000;

/// The forks a fixture network may name, as fixtures spell them, oldest first. Every
/// supported network is one of these, or `<A>To<B>AtTime15k` for two consecutive entries;
/// [`supported_networks`] lists them for error messages.
pub const FORKS: &[(&str, EthereumHardfork)] = &[
    ("Paris", EthereumHardfork::Paris),
    ("Shanghai", EthereumHardfork::Shanghai),
    ("Cancun", EthereumHardfork::Cancun),
    ("Prague", EthereumHardfork::Prague),
    ("Osaka", EthereumHardfork::Osaka),
    ("BPO1", EthereumHardfork::Bpo1),
    ("BPO2", EthereumHardfork::Bpo2),
    ("BPO3", EthereumHardfork::Bpo3),
    ("BPO4", EthereumHardfork::Bpo4),
    ("BPO5", EthereumHardfork::Bpo5),
    ("Amsterdam", EthereumHardfork::Amsterdam),
];

/// Other names of table entries.
const ALIASES: &[(&str, EthereumHardfork)] = &[("Merge", EthereumHardfork::Paris)];

/// Every network [`chain_config`] accepts, generated from [`FORKS`]: single forks, then
/// the transitions between consecutive ones.
pub fn supported_networks() -> Vec<String> {
    let mut out: Vec<String> = FORKS.iter().map(|(n, _)| n.to_string()).collect();
    out.extend(ALIASES.iter().map(|(n, _)| n.to_string()));
    out.extend(FORKS.windows(2).map(|w| {
        format!(
            "{}To{}AtTime{}k",
            w[0].0,
            w[1].0,
            TRANSITION_TIMESTAMP / 1000
        )
    }));
    out
}

fn fork_named(name: &str) -> Option<EthereumHardfork> {
    FORKS
        .iter()
        .chain(ALIASES)
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
}

/// `(base, next)` of a supported network name.
fn parse_network(network: &str) -> Option<(EthereumHardfork, Option<EthereumHardfork>)> {
    if let Some(f) = fork_named(network) {
        return Some((f, None));
    }
    let suffix = format!("AtTime{}k", TRANSITION_TIMESTAMP / 1000);
    let pair = network.strip_suffix(&suffix)?;
    FORKS
        .windows(2)
        .find(|w| pair == format!("{}To{}", w[0].0, w[1].0))
        .map(|w| (w[0].1, Some(w[1].1)))
}

/// Networks named in fixtures that are known but not imported, and why.
fn known_unsupported(network: &str) -> Option<&'static str> {
    const PRE_MERGE: &[&str] = &[
        "Frontier",
        "Homestead",
        "EIP150",
        "TangerineWhistle",
        "EIP158",
        "SpuriousDragon",
        "Byzantium",
        "Constantinople",
        "ConstantinopleFix",
        "Petersburg",
        "Istanbul",
        "MuirGlacier",
        "Berlin",
        "London",
        "ArrowGlacier",
        "GrayGlacier",
        "FrontierToHomesteadAt5",
        "HomesteadToDaoAt5",
        "HomesteadToEIP150At5",
        "EIP158ToByzantiumAt5",
        "ByzantiumToConstantinopleAt5",
        "ByzantiumToConstantinopleFixAt5",
        "BerlinToLondonAt5",
        "ArrowGlacierToParisAtDiffC0000",
    ];
    if PRE_MERGE.contains(&network) {
        Some(
            "pre-merge rules (block rewards, uncles, difficulty) are not scheduled for fixture networks by the importer",
        )
    } else if network.contains('+') {
        Some("this fork or EIP combination is not scheduled by gigagas")
    } else {
        None
    }
}

/// Why a fixture network has no chain config gigagas can schedule.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    /// The name is not a supported network: a known unsupported one (pre-merge, EIP
    /// combinations) or an unknown name; the message lists the supported networks.
    #[error("{why} (supported: {})", supported_networks().join(", "))]
    Unsupported {
        /// Why this name is not supported.
        why: &'static str,
    },
    /// The network's base fork has no schedule with every fork up to it from genesis.
    #[error("fork {0} cannot be scheduled")]
    Unschedulable(EthereumHardfork),
    /// The chain config built for the network is not usable (a fork without blob
    /// parameters, ...).
    #[error(transparent)]
    Chain(#[from] ChainConfigError),
}

/// The chain config of a fixture network, or why it is unsupported. `blob_schedule` is the
/// fixture's `config.blobSchedule` (fork name → parameters), stored in the config so
/// blob-parameter-only forks run with the fixture's own values.
pub fn chain_config(
    network: &str,
    chain_id: u64,
    blob_schedule: &BTreeMap<String, BlobSchedule>,
) -> Result<ChainConfig, NetworkError> {
    use EthereumHardfork::*;
    let Some((base, next)) = parse_network(network) else {
        let why = known_unsupported(network).unwrap_or("unknown network name");
        return Err(NetworkError::Unsupported { why });
    };
    let mut config = ChainConfig::all_active_from_genesis(chain_id, base)
        .ok_or(NetworkError::Unschedulable(base))?;
    if let Some(next) = next {
        config.forks.push(ForkActivation {
            fork: next.name().into(),
            block: None,
            timestamp: Some(TRANSITION_TIMESTAMP),
        });
    }
    if base >= Prague || next.is_some_and(|n| n >= Prague) {
        config.deposit_contract = Some(MAINNET_DEPOSIT_CONTRACT);
    }
    // Only the scheduled forks' entries, under alloy's spelling of the name.
    for (name, params) in blob_schedule {
        let Some(fork) = FORKS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, f)| *f)
        else {
            continue;
        };
        if config.forks.iter().any(|a| a.fork == fork.name()) {
            config
                .blob_schedule
                .insert(fork.name().to_string(), *params);
        }
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_hardforks::EthereumHardforks;

    #[test]
    fn transition_activates_at_15k() {
        let c = chain_config("ShanghaiToCancunAtTime15k", 1, &BTreeMap::new()).unwrap();
        let h = c.hardforks().unwrap();
        assert!(h.is_shanghai_active_at_timestamp(0));
        assert!(!h.is_cancun_active_at_timestamp(14_999));
        assert!(h.is_cancun_active_at_timestamp(15_000));
        assert!(c.deposit_contract.is_none());
        assert!(
            chain_config("CancunToPragueAtTime15k", 1, &BTreeMap::new())
                .unwrap()
                .deposit_contract
                .is_some()
        );
    }

    #[test]
    fn bpo_networks_and_their_blob_schedules() {
        let mut schedule = BTreeMap::new();
        schedule.insert(
            "BPO2".to_string(),
            BlobSchedule {
                target: 14,
                max: 21,
                base_fee_update_fraction: 11_684_671,
            },
        );
        schedule.insert(
            "BPO4".to_string(),
            BlobSchedule {
                target: 1,
                max: 2,
                base_fee_update_fraction: 3,
            },
        );
        let c = chain_config("BPO1ToBPO2AtTime15k", 1, &schedule).unwrap();
        let h = c.hardforks().unwrap();
        assert!(h.is_ethereum_fork_active_at_timestamp(EthereumHardfork::Bpo1, 0));
        assert!(!h.is_ethereum_fork_active_at_timestamp(EthereumHardfork::Bpo2, 14_999));
        assert!(h.is_ethereum_fork_active_at_timestamp(EthereumHardfork::Bpo2, 15_000));
        assert_eq!(
            c.blob_schedule.keys().collect::<Vec<_>>(),
            ["Bpo2"],
            "only scheduled forks' entries"
        );
        assert!(chain_config("OsakaToBPO1AtTime15k", 1, &schedule).is_ok());
        assert!(chain_config("BPO3", 1, &schedule).is_ok());
        assert!(chain_config("Amsterdam", 1, &schedule).is_ok());
    }

    #[test]
    fn unsupported_networks_say_why() {
        let none = BTreeMap::new();
        assert!(
            chain_config("Berlin", 1, &none)
                .unwrap_err()
                .to_string()
                .contains("pre-merge")
        );
        let err = chain_config("Atlantis", 1, &none).unwrap_err().to_string();
        assert!(err.contains("unknown network"));
        for n in supported_networks() {
            assert!(err.contains(&n), "{n} missing from {err}");
            assert!(
                chain_config(&n, 1, &none).is_ok(),
                "{n} is listed but not accepted"
            );
        }
        assert!(err.contains("OsakaToBPO1AtTime15k") && err.contains("BPO1ToBPO2AtTime15k"));
    }
}
