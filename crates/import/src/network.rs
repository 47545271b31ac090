//! Fixture networks → gigagas chain configs.

use alloy_hardforks::EthereumHardfork;
use alloy_primitives::{Address, address};
use gigagas_dump::{ChainConfig, ForkActivation};

/// The mainnet deposit contract, whose logs are EIP-6110 deposit requests (Prague+).
pub const MAINNET_DEPOSIT_CONTRACT: Address = address!("0x00000000219ab540356cbb839cbe05303d7705fa");

/// Timestamp of the second fork in the `XToYAtTime15k` transition networks.
pub const TRANSITION_TIMESTAMP: u64 = 15_000;

/// Networks gigagas imports, for error messages.
pub const SUPPORTED_NETWORKS: &str = "Paris (Merge), Shanghai, Cancun, Prague, Osaka, ParisToShanghaiAtTime15k, \
     ShanghaiToCancunAtTime15k, CancunToPragueAtTime15k, PragueToOsakaAtTime15k";

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
        Some("pre-merge rules (block rewards, uncles, difficulty) are not replayed by gigagas")
    } else if network.starts_with("BPO") || network.contains("Amsterdam") || network.contains("+") {
        Some("this fork or EIP combination is not scheduled by gigagas")
    } else {
        None
    }
}

/// The chain config of a fixture network, or why it is unsupported.
pub fn chain_config(network: &str, chain_id: u64) -> Result<ChainConfig, String> {
    use EthereumHardfork::*;
    let (base, next) = match network {
        "Paris" | "Merge" => (Paris, None),
        "Shanghai" => (Shanghai, None),
        "Cancun" => (Cancun, None),
        "Prague" => (Prague, None),
        "Osaka" => (Osaka, None),
        "ParisToShanghaiAtTime15k" => (Paris, Some(Shanghai)),
        "ShanghaiToCancunAtTime15k" => (Shanghai, Some(Cancun)),
        "CancunToPragueAtTime15k" => (Cancun, Some(Prague)),
        "PragueToOsakaAtTime15k" => (Prague, Some(Osaka)),
        other => {
            let why = known_unsupported(other).unwrap_or("unknown network name");
            return Err(format!("{why} (supported: {SUPPORTED_NETWORKS})"));
        }
    };
    let mut config = ChainConfig::all_active_from_genesis(chain_id, base)
        .ok_or_else(|| format!("fork {base} cannot be scheduled"))?;
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
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_hardforks::EthereumHardforks;

    #[test]
    fn transition_activates_at_15k() {
        let c = chain_config("ShanghaiToCancunAtTime15k", 1).unwrap();
        let h = c.hardforks().unwrap();
        assert!(h.is_shanghai_active_at_timestamp(0));
        assert!(!h.is_cancun_active_at_timestamp(14_999));
        assert!(h.is_cancun_active_at_timestamp(15_000));
        assert!(c.deposit_contract.is_none());
        assert!(chain_config("CancunToPragueAtTime15k", 1).unwrap().deposit_contract.is_some());
    }

    #[test]
    fn unsupported_networks_say_why() {
        assert!(chain_config("Berlin", 1).unwrap_err().contains("pre-merge"));
        assert!(chain_config("Atlantis", 1).unwrap_err().contains("unknown network"));
    }
}
