//! The sizes the generator pads its state's tries to: the account trie to a state of `N`
//! accounts, chosen contracts' storage tries to `N` slots each ([`gigagas_trie::Padding`]).

use crate::profile::parse_name;
use gigagas_trie::MAINNET_LARGE_STORAGE;
use std::{collections::BTreeMap, fmt, str::FromStr};

/// A contract the generator deploys, by its role in the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkloadContract {
    /// The first ERC-20 token: every user's balance and allowance, written by transfers and
    /// swaps.
    TokenA,
    /// The second ERC-20 token, the pair's other side.
    TokenB,
    /// The constant-product pair of the two tokens (a few slots: its reserves).
    Pair,
    /// The NFT: an owner and data slot per minted token, a balance per holder.
    Nft,
    /// The compute contract: state per caller, and the fresh slots its `store` loop writes.
    Compute,
    /// The precompile caller: a few slots of state per caller.
    Precompiles,
}

impl WorkloadContract {
    /// Every contract, in deployment order.
    pub const ALL: [WorkloadContract; 6] = [
        WorkloadContract::TokenA,
        WorkloadContract::TokenB,
        WorkloadContract::Pair,
        WorkloadContract::Nft,
        WorkloadContract::Compute,
        WorkloadContract::Precompiles,
    ];

    /// The contracts whose storage grows with their users, as mainnet's largest storage
    /// tries (tokens' balances and allowances, an NFT's owners) do: those a storage size
    /// without a contract name pads.
    pub const LARGE: [WorkloadContract; 3] = [
        WorkloadContract::TokenA,
        WorkloadContract::TokenB,
        WorkloadContract::Nft,
    ];

    /// The name on the command line and in a dump's provenance.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadContract::TokenA => "token-a",
            WorkloadContract::TokenB => "token-b",
            WorkloadContract::Pair => "pair",
            WorkloadContract::Nft => "nft",
            WorkloadContract::Compute => "compute",
            WorkloadContract::Precompiles => "precompiles",
        }
    }
}

impl fmt::Display for WorkloadContract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for WorkloadContract {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_name(s, "contract", &Self::ALL, Self::name)
    }
}

/// The sizes to pad a generated state's tries to; the default pads none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrieSizes {
    /// The account trie to the depth of a state of this many accounts
    /// ([`gigagas_trie::MAINNET_ACCOUNTS`] is mainnet's).
    pub accounts: Option<u64>,
    /// These contracts' storage tries to the depth of this many slots each
    /// ([`gigagas_trie::MAINNET_LARGE_STORAGE`] is that of mainnet's largest).
    pub storage: BTreeMap<WorkloadContract, u64>,
}

impl TrieSizes {
    /// The account trie padded to `accounts` accounts, no storage trie.
    pub fn accounts(accounts: u64) -> Self {
        Self {
            accounts: Some(accounts),
            storage: BTreeMap::new(),
        }
    }

    /// The storage tries of [`WorkloadContract::LARGE`] padded to
    /// [`MAINNET_LARGE_STORAGE`] slots each, as on mainnet.
    pub fn mainnet_storage() -> Self {
        Self::default().with_storage(&WorkloadContract::LARGE, MAINNET_LARGE_STORAGE)
    }

    /// Pads `contracts`' storage tries to `slots` slots each (replacing their sizes so far).
    pub fn with_storage(mut self, contracts: &[WorkloadContract], slots: u64) -> Self {
        self.storage.extend(contracts.iter().map(|c| (*c, slots)));
        self
    }

    /// Whether nothing is padded.
    pub fn is_empty(&self) -> bool {
        self.accounts.is_none() && self.storage.is_empty()
    }

    /// The storage sizes as the provenance records them: `token-a=128000000,nft=4096`.
    pub fn storage_provenance(&self) -> String {
        let sizes: Vec<String> = self
            .storage
            .iter()
            .map(|(c, slots)| format!("{c}={slots}"))
            .collect();
        sizes.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_names_round_trip_and_unknown_ones_are_named() {
        for c in WorkloadContract::ALL {
            assert_eq!(c.name().parse::<WorkloadContract>(), Ok(c));
        }
        let err = "usdt".parse::<WorkloadContract>().unwrap_err();
        assert!(err.contains("`usdt`") && err.contains("token-a"), "{err}");
        let sizes = TrieSizes::mainnet_storage().with_storage(&[WorkloadContract::Nft], 4_096);
        assert_eq!(
            sizes.storage_provenance(),
            "token-a=128000000,token-b=128000000,nft=4096"
        );
    }
}
