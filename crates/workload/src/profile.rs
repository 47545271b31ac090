//! Workload profiles: which transactions a block is made of.

use std::{fmt, str::FromStr};

/// A workload profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// A mix whose gas-per-transaction distribution resembles mainnet: many small
    /// transactions (transfers, ERC-20, swaps), some mints, deployments and precompile
    /// calls, and a heavy tail of compute-bound transactions.
    MainnetLike,
    /// Plain ETH transfers only (21,000 gas each), some to fresh accounts.
    Transfers,
    /// ERC-20 transfers only.
    Erc20,
    /// AMM swaps on one shared constant-product pair (every swap writes the same reserves).
    Amm,
    /// Small transactions plus a few very large compute transactions carrying about half
    /// of the block's gas.
    HeavyTail,
    /// Small transactions plus one very large transaction placed last in each block: the
    /// case where ordered list scheduling is worst and gas-priority scheduling wins.
    Adversarial,
}

impl Profile {
    /// All profiles, in the order `--help` lists them.
    pub const ALL: [Profile; 6] = [
        Profile::MainnetLike,
        Profile::Transfers,
        Profile::Erc20,
        Profile::Amm,
        Profile::HeavyTail,
        Profile::Adversarial,
    ];

    /// The name used on the command line and in dumps.
    pub fn name(self) -> &'static str {
        match self {
            Profile::MainnetLike => "mainnet-like",
            Profile::Transfers => "transfers",
            Profile::Erc20 => "erc20",
            Profile::Amm => "amm",
            Profile::HeavyTail => "heavy-tail",
            Profile::Adversarial => "adversarial",
        }
    }

    /// One-line description.
    pub fn description(self) -> &'static str {
        match self {
            Profile::MainnetLike => {
                "mainnet-like mix: many small txs, a heavy tail, ~25 Mgas blocks"
            }
            Profile::Transfers => "plain ETH transfers",
            Profile::Erc20 => "ERC-20 token transfers",
            Profile::Amm => "swaps on one shared AMM pair",
            Profile::HeavyTail => "small txs plus a few huge compute txs (~half the gas)",
            Profile::Adversarial => "small txs plus one very large tx placed last in each block",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_name(s, "profile", &Self::ALL, Self::name)
    }
}

/// The one of `all` named `s` (by `name`), or `unknown WHAT `s` (expected one of: …)`.
pub(crate) fn parse_name<T: Copy>(
    s: &str,
    what: &str,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<T, String> {
    let names = || all.iter().map(|t| name(*t)).collect::<Vec<_>>().join(", ");
    let found = all.iter().copied().find(|t| name(*t) == s);
    found.ok_or_else(|| format!("unknown {what} `{s}` (expected one of: {})", names()))
}

/// The kinds of transaction the generator can emit (ordered, so that the generator can key
/// what it measured of a kind by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum TxKindChoice {
    EthTransfer,
    EthToFresh,
    Erc20Transfer,
    Swap,
    NftMint,
    Deploy,
    Keccak,
    Memory,
    Arith,
    Store,
    Ecrecover,
    Sha256,
    Pairing,
    Modexp,
    PointEvaluation,
    /// A compute transaction of roughly the given gas.
    Heavy(u64),
}

/// Weighted choice table of a profile (weights in per-mille of transaction count).
pub(crate) fn mix(profile: Profile) -> &'static [(TxKindChoice, u32)] {
    use TxKindChoice::*;
    match profile {
        Profile::MainnetLike => &[
            (EthTransfer, 270),
            (EthToFresh, 30),
            (Erc20Transfer, 280),
            (Swap, 120),
            (NftMint, 60),
            (Deploy, 15),
            (Keccak, 25),
            (Memory, 15),
            (Arith, 25),
            (Store, 20),
            (Ecrecover, 25),
            (Sha256, 15),
            (Pairing, 10),
            (Modexp, 10),
            (PointEvaluation, 10),
            (Heavy(0), 10),
        ],
        Profile::Transfers => &[(EthTransfer, 900), (EthToFresh, 100)],
        Profile::Erc20 => &[(Erc20Transfer, 1000)],
        Profile::Amm => &[(Swap, 1000)],
        Profile::HeavyTail | Profile::Adversarial => &[
            (EthTransfer, 400),
            (Erc20Transfer, 350),
            (Swap, 150),
            (NftMint, 50),
            (Keccak, 20),
            (Arith, 30),
        ],
    }
}
