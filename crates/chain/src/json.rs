//! Ethereum JSON-RPC blocks (`eth_getBlockByNumber(n, true)` answers, and the snapshot
//! importer's `block.json` files, which have the same form) in consensus types, checked as
//! far as a block alone allows: header hash, ommer hashes against the ommers hash,
//! transactions and withdrawals roots.

use crate::consensus::{HeaderMismatch, check_transactions_root, check_withdrawals_root};
use alloy_consensus::{EMPTY_OMMER_ROOT_HASH, Header, TxEnvelope, transaction::Recovered};
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::B256;
use alloy_rpc_types_eth::{Block, BlockTransactions, Transaction};
use serde_json::Value;

/// The JSON-RPC block type read here: full transactions with their senders.
pub type RpcBlock = Block<Transaction<TxEnvelope>, alloy_rpc_types_eth::Header>;

/// Most ommers a block may include (the consensus rule of every proof-of-work fork).
pub const MAX_OMMERS: usize = 2;

/// A block's ommer hashes (`uncles`) that do not fit its header ([`check_ommer_hashes`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OmmerHashesError {
    /// No ommers listed, but the header commits to some.
    #[error(
        "no ommers listed (uncles), but the header's ommers hash (sha3Uncles) is {ommers_hash}"
    )]
    Missing {
        /// The header's ommers hash.
        ommers_hash: B256,
    },
    /// Ommers listed, but the header commits to none.
    #[error(
        "{listed} ommer(s) listed (uncles), but the header's ommers hash (sha3Uncles) is the \
         empty list's {EMPTY_OMMER_ROOT_HASH}"
    )]
    Unexpected {
        /// How many are listed.
        listed: usize,
    },
    /// More than [`MAX_OMMERS`] listed.
    #[error("{listed} ommers listed (uncles), a block may have at most {MAX_OMMERS}")]
    TooMany {
        /// How many are listed.
        listed: usize,
    },
    /// The same ommer listed twice.
    #[error("ommer {0} listed twice (uncles)")]
    Repeated(B256),
}

/// A JSON-RPC block that does not parse, or whose parts do not fit together.
#[derive(Debug, thiserror::Error)]
pub enum BlockJsonError {
    /// Not a JSON-RPC block object.
    #[error("block does not parse: {0}")]
    Parse(#[source] serde_json::Error),
    /// Another block than the one asked for.
    #[error("asked for block {asked}, the node returned block {got}")]
    WrongNumber {
        /// The number asked for.
        asked: u64,
        /// The header's number.
        got: u64,
    },
    /// The header does not hash to the block hash given with it.
    #[error(
        "the header fields hash to {computed}, the node says the block hash is {reported} \
         (a header field this tool does not know?)"
    )]
    HeaderHash {
        /// What the header fields hash to.
        computed: B256,
        /// The `hash` given.
        reported: B256,
    },
    /// The ommer hashes do not fit the header.
    #[error(transparent)]
    Ommers(#[from] OmmerHashesError),
    /// Transactions given by hash only.
    #[error("the node returned transaction hashes, not full transactions")]
    TransactionHashes,
    /// The block is an uncle block (no transactions at all).
    #[error("the node returned an uncle block")]
    UncleBlock,
    /// The transactions or withdrawals do not hash to the header's root.
    #[error(transparent)]
    Body(#[from] HeaderMismatch),
}

/// Parse an `eth_getBlockByNumber(n, true)` answer.
pub fn parse_block(v: Value) -> Result<RpcBlock, BlockJsonError> {
    serde_json::from_value(v).map_err(BlockJsonError::Parse)
}

/// A JSON-RPC block in consensus types, checked for consistency ([`to_consensus_block`]).
#[derive(Debug, Clone)]
pub struct ConsensusBlock {
    /// The header (hashes to [`ConsensusBlock::hash`]).
    pub header: Header,
    /// The block hash the node reported.
    pub hash: B256,
    /// Transactions with the `from` the node reported (not recovered here).
    pub transactions: Vec<Recovered<TxEnvelope>>,
    /// Withdrawals (empty before Shanghai).
    pub withdrawals: Vec<Withdrawal>,
    /// Ommer hashes (`uncles`): only hashes, their headers are not in the answer.
    pub ommer_hashes: Vec<B256>,
}

/// Check a block's `uncles` (ommer hashes) against its header as far as hashes alone allow
/// (the header's ommers hash commits to the ommer headers, which the answer does not carry):
/// no ommers exactly when the ommers hash is the empty list's, at most [`MAX_OMMERS`], no
/// hash twice. An ommer list padded onto a block without ommers (whose miner would then be
/// paid 1/32 of a block reward per ommer) is so refused.
pub fn check_ommer_hashes(header: &Header, uncles: &[B256]) -> Result<(), OmmerHashesError> {
    if uncles.is_empty() && header.ommers_hash != EMPTY_OMMER_ROOT_HASH {
        return Err(OmmerHashesError::Missing {
            ommers_hash: header.ommers_hash,
        });
    }
    if !uncles.is_empty() && header.ommers_hash == EMPTY_OMMER_ROOT_HASH {
        return Err(OmmerHashesError::Unexpected {
            listed: uncles.len(),
        });
    }
    if uncles.len() > MAX_OMMERS {
        return Err(OmmerHashesError::TooMany {
            listed: uncles.len(),
        });
    }
    if let [a, b] = uncles
        && a == b
    {
        return Err(OmmerHashesError::Repeated(*a));
    }
    Ok(())
}

/// Convert JSON-RPC block `number` into consensus types, checking that the header hashes to
/// the block hash the node reported, that the transactions and withdrawals hash to the
/// header's roots, and that the ommer hashes fit its ommers hash ([`check_ommer_hashes`]).
/// Senders are taken from `from`, not recovered.
pub fn to_consensus_block(rpc: RpcBlock, number: u64) -> Result<ConsensusBlock, BlockJsonError> {
    let hash = rpc.header.hash;
    let header: Header = rpc.header.inner;
    if header.number != number {
        return Err(BlockJsonError::WrongNumber {
            asked: number,
            got: header.number,
        });
    }
    let computed = header.hash_slow();
    if computed != hash {
        return Err(BlockJsonError::HeaderHash {
            computed,
            reported: hash,
        });
    }
    check_ommer_hashes(&header, &rpc.uncles)?;
    let txs: Vec<Transaction<TxEnvelope>> = match rpc.transactions {
        BlockTransactions::Full(t) => t,
        BlockTransactions::Hashes(h) if h.is_empty() => Vec::new(),
        BlockTransactions::Hashes(_) => return Err(BlockJsonError::TransactionHashes),
        BlockTransactions::Uncle => return Err(BlockJsonError::UncleBlock),
    };
    let transactions: Vec<Recovered<TxEnvelope>> = txs.into_iter().map(|t| t.inner).collect();
    check_transactions_root(&header, &transactions)?;
    let withdrawals: Vec<Withdrawal> = rpc.withdrawals.map(|w| w.into_inner()).unwrap_or_default();
    // Before Shanghai a node may send an empty list or none: both mean no withdrawals.
    let listed = (header.withdrawals_root.is_some() || !withdrawals.is_empty())
        .then_some(withdrawals.as_slice());
    check_withdrawals_root(&header, listed)?;
    Ok(ConsensusBlock {
        header,
        hash,
        transactions,
        withdrawals,
        ommer_hashes: rpc.uncles,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_with_ommers_hash(ommers_hash: B256) -> Header {
        Header {
            ommers_hash,
            ..Header::default()
        }
    }

    #[test]
    fn ommer_hashes_must_fit_the_ommers_hash() {
        let empty = header_with_ommers_hash(EMPTY_OMMER_ROOT_HASH);
        let some = header_with_ommers_hash(B256::repeat_byte(7));
        let (a, b) = (B256::repeat_byte(1), B256::repeat_byte(2));
        assert_eq!(check_ommer_hashes(&empty, &[]), Ok(()));
        assert_eq!(check_ommer_hashes(&some, &[a, b]), Ok(()));
        assert_eq!(
            check_ommer_hashes(&some, &[]),
            Err(OmmerHashesError::Missing {
                ommers_hash: some.ommers_hash
            })
        );
        assert_eq!(
            check_ommer_hashes(&empty, &[a]),
            Err(OmmerHashesError::Unexpected { listed: 1 })
        );
        assert_eq!(
            check_ommer_hashes(&some, &[a, b, a]),
            Err(OmmerHashesError::TooMany { listed: 3 })
        );
        let repeated = check_ommer_hashes(&some, &[a, a]).unwrap_err();
        assert_eq!(repeated, OmmerHashesError::Repeated(a));
        assert_eq!(
            repeated.to_string(),
            format!("ommer {a} listed twice (uncles)")
        );
    }
}
