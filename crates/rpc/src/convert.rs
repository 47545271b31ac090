//! JSON-RPC blocks and receipts to the dump's consensus types, with consistency checks: the
//! block's own (header hash, ommer hashes, transactions and withdrawals roots) are
//! gigagas-chain's [`json`] conversion; the receipts' (counts, hashes, gas) are here.

use crate::RpcDumpError;
use alloy_primitives::{B256, U64};
use gigagas_chain::json::{self, ConsensusBlock, RpcBlock};
use gigagas_dump::{DumpBlock, ReceiptSummary};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    let r: RawReceipt = serde_json::from_value(v)
        .map_err(|e| RpcDumpError::inconsistent(block, format!("receipt does not parse: {e}")))?;
    let status = r.status.ok_or_else(|| {
        RpcDumpError::inconsistent(
            block,
            format!(
                "receipt of {} has no status (pre-Byzantium receipts are not supported)",
                r.transaction_hash
            ),
        )
    })?;
    Ok(NodeReceipt {
        tx: r.transaction_hash,
        success: status == U64::from(1),
        gas_used: r.gas_used.to(),
        cumulative_gas_used: r.cumulative_gas_used.to(),
        logs: r.logs.len() as u64,
    })
}

/// Parse an `eth_getBlockByNumber(n, true)` answer for block `number`.
pub fn parse_block(v: Value, number: u64) -> Result<RpcBlock, RpcDumpError> {
    json::parse_block(v).map_err(|source| RpcDumpError::Block {
        block: number,
        source,
    })
}

/// Convert an RPC block and its receipts into a [`DumpBlock`]: [`json::to_consensus_block`], then
/// check that the receipts belong to the transactions. Blocks with ommers are refused (their
/// rewards need the ommer headers). Returns the block, with an empty access list (the dumper
/// records it by executing the block), and its hash.
pub fn to_dump_block(
    rpc: RpcBlock,
    receipts: &[NodeReceipt],
    number: u64,
) -> Result<(DumpBlock, B256), RpcDumpError> {
    let bad = |detail: String| RpcDumpError::inconsistent(number, detail);
    let ConsensusBlock {
        header,
        hash,
        transactions,
        withdrawals,
        ommer_hashes,
    } = json::to_consensus_block(rpc, number).map_err(|source| RpcDumpError::Block {
        block: number,
        source,
    })?;
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
        access_list: Default::default(),
    };
    Ok((block, hash))
}
