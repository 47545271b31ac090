//! JSON-RPC blocks and receipts to the dump's consensus types, with consistency checks
//! (header hash, transactions root, withdrawals root, receipt counts).

use crate::RpcDumpError;
use alloy_consensus::{Header, TxEnvelope, transaction::Recovered};
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{B256, U64};
use alloy_rpc_types_eth::{Block, BlockTransactions, Transaction};
use gigagas_dump::{DumpBlock, ReceiptSummary};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The RPC block type this crate reads: full transactions with their senders.
pub type RpcBlock = Block<Transaction<TxEnvelope>, alloy_rpc_types_eth::Header>;

/// The fields of a receipt a dump keeps, as the node reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeReceipt {
    /// Transaction hash.
    pub tx: B256,
    /// Success (EIP-658 status).
    pub success: bool,
    /// Gas used by the transaction alone.
    pub gas_used: u64,
    /// Cumulative gas used in the block.
    pub cumulative_gas_used: u64,
    /// Number of logs.
    pub logs: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawReceipt {
    transaction_hash: B256,
    #[serde(default)]
    status: Option<U64>,
    gas_used: U64,
    cumulative_gas_used: U64,
    #[serde(default)]
    logs: Vec<serde::de::IgnoredAny>,
}

/// Parse one receipt object as `eth_getBlockReceipts` / `eth_getTransactionReceipt` return it.
pub fn parse_receipt(v: Value, block: u64) -> Result<NodeReceipt, RpcDumpError> {
    let r: RawReceipt = serde_json::from_value(v).map_err(|e| RpcDumpError::Inconsistent {
        block,
        detail: format!("receipt does not parse: {e}"),
    })?;
    let status = r.status.ok_or_else(|| RpcDumpError::Inconsistent {
        block,
        detail: format!(
            "receipt of {} has no status (pre-Byzantium receipts are not supported)",
            r.transaction_hash
        ),
    })?;
    Ok(NodeReceipt {
        tx: r.transaction_hash,
        success: status == U64::from(1),
        gas_used: r.gas_used.to(),
        cumulative_gas_used: r.cumulative_gas_used.to(),
        logs: r.logs.len() as u64,
    })
}

/// Parse an `eth_getBlockByNumber(n, true)` answer.
pub fn parse_block(v: Value, number: u64) -> Result<RpcBlock, RpcDumpError> {
    serde_json::from_value(v).map_err(|e| RpcDumpError::Inconsistent {
        block: number,
        detail: format!("block does not parse: {e}"),
    })
}

/// An `eth_getBlockByNumber(n, true)` block in consensus types, checked for consistency.
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

/// Most ommers a block may include (the consensus rule of every proof-of-work fork).
pub const MAX_OMMERS: usize = 2;

/// Check a block's `uncles` (ommer hashes) against its header as far as hashes alone allow
/// (the header's ommers hash commits to the ommer headers, which the answer does not carry):
/// no ommers exactly when the ommers hash is the empty list's, at most [`MAX_OMMERS`], no
/// hash twice. An ommer list padded onto a block without ommers (whose miner would then be
/// paid 1/32 of a block reward per ommer) is so refused. Returns what is wrong.
pub fn check_ommer_hashes(header: &Header, uncles: &[B256]) -> Result<(), String> {
    let empty = alloy_consensus::EMPTY_OMMER_ROOT_HASH;
    if uncles.is_empty() && header.ommers_hash != empty {
        return Err(format!(
            "no ommers listed (uncles), but the header's ommers hash (sha3Uncles) is {}",
            header.ommers_hash
        ));
    }
    if !uncles.is_empty() && header.ommers_hash == empty {
        return Err(format!(
            "{} ommer(s) listed (uncles), but the header's ommers hash (sha3Uncles) is the \
             empty list's {empty}",
            uncles.len()
        ));
    }
    if uncles.len() > MAX_OMMERS {
        return Err(format!(
            "{} ommers listed (uncles), a block may have at most {MAX_OMMERS}",
            uncles.len()
        ));
    }
    if let [a, b] = uncles
        && a == b
    {
        return Err(format!("ommer {a} listed twice (uncles)"));
    }
    Ok(())
}

/// Convert an RPC block into consensus types, checking that the header hashes to the block
/// hash the node reported, that the transactions and withdrawals hash to the header's
/// roots, and that the ommer hashes fit its ommers hash ([`check_ommer_hashes`]). Senders
/// are taken from `from`, not recovered.
pub fn to_consensus_block(rpc: RpcBlock, number: u64) -> Result<ConsensusBlock, RpcDumpError> {
    let bad = |detail: String| RpcDumpError::Inconsistent {
        block: number,
        detail,
    };
    let hash = rpc.header.hash;
    let header: Header = rpc.header.inner;
    if header.number != number {
        return Err(bad(format!(
            "asked for block {number}, the node returned block {}",
            header.number
        )));
    }
    let computed = header.hash_slow();
    if computed != hash {
        return Err(bad(format!(
            "the header fields hash to {computed}, the node says the block hash is {hash} \
             (a header field this tool does not know?)"
        )));
    }
    check_ommer_hashes(&header, &rpc.uncles).map_err(bad)?;
    let txs: Vec<Transaction<TxEnvelope>> = match rpc.transactions {
        BlockTransactions::Full(t) => t,
        BlockTransactions::Hashes(h) if h.is_empty() => Vec::new(),
        BlockTransactions::Hashes(_) => {
            return Err(bad(
                "the node returned transaction hashes, not full transactions".into(),
            ));
        }
        BlockTransactions::Uncle => return Err(bad("the node returned an uncle block".into())),
    };
    let transactions: Vec<Recovered<TxEnvelope>> = txs.into_iter().map(|t| t.inner).collect();
    gigagas_record::check_transactions_root(&header, &transactions)
        .map_err(|m| bad(m.to_string()))?;
    let withdrawals: Vec<Withdrawal> = rpc.withdrawals.map(|w| w.into_inner()).unwrap_or_default();
    // Before Shanghai a node may send an empty list or none: both mean no withdrawals.
    let listed = (header.withdrawals_root.is_some() || !withdrawals.is_empty())
        .then_some(withdrawals.as_slice());
    gigagas_record::check_withdrawals_root(&header, listed).map_err(|m| bad(m.to_string()))?;
    Ok(ConsensusBlock {
        header,
        hash,
        transactions,
        withdrawals,
        ommer_hashes: rpc.uncles,
    })
}

/// Convert an RPC block and its receipts into a [`DumpBlock`]: [`to_consensus_block`], then
/// check that the receipts belong to the transactions. Blocks with ommers are refused (their
/// rewards need the ommer headers). Returns the block and its hash.
pub fn to_dump_block(
    rpc: RpcBlock,
    receipts: &[NodeReceipt],
    number: u64,
) -> Result<(DumpBlock, B256), RpcDumpError> {
    let bad = |detail: String| RpcDumpError::Inconsistent {
        block: number,
        detail,
    };
    let ConsensusBlock {
        header,
        hash,
        transactions,
        withdrawals,
        ommer_hashes,
    } = to_consensus_block(rpc, number)?;
    if !ommer_hashes.is_empty() {
        return Err(bad(format!(
            "{} ommers: blocks with ommers (proof of work) are not supported",
            ommer_hashes.len()
        )));
    }
    if receipts.len() != transactions.len() {
        return Err(bad(format!(
            "{} receipts for {} transactions",
            receipts.len(),
            transactions.len()
        )));
    }
    let mut summaries = Vec::with_capacity(receipts.len());
    let mut prev = 0u64;
    for (i, (tx, r)) in transactions.iter().zip(receipts).enumerate() {
        let tx_hash = *tx.inner().tx_hash();
        if r.tx != tx_hash {
            return Err(bad(format!(
                "receipt {i} is for transaction {}, the block has {tx_hash} there",
                r.tx
            )));
        }
        if r.cumulative_gas_used < prev || r.cumulative_gas_used - prev != r.gas_used {
            return Err(bad(format!(
                "receipt {i}: gas used {} but cumulative gas goes from {prev} to {}",
                r.gas_used, r.cumulative_gas_used
            )));
        }
        prev = r.cumulative_gas_used;
        summaries.push(ReceiptSummary {
            success: r.success,
            gas_used: r.gas_used,
            cumulative_gas_used: r.cumulative_gas_used,
            logs: r.logs,
        });
    }
    if prev != header.gas_used {
        return Err(bad(format!(
            "the receipts add up to {prev} gas, the header says {}",
            header.gas_used
        )));
    }
    let block = DumpBlock {
        header,
        transactions,
        withdrawals,
        receipts: summaries,
        ommers: Vec::new(),
        headerless_ommers: 0,
    };
    Ok((block, hash))
}
