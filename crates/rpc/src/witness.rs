//! The dump's witness, from the node: the trie nodes that prove, at the parent of the first
//! block, every account and slot the range's access lists touch.
//!
//! - A one-block range asks `debug_executionWitness` first (reth, geth): its `state` holds the
//!   nodes the block's own execution reads and writes, deletions' siblings included. Kept
//!   when one of its nodes hashes to the parent's state root.
//! - Otherwise, and for longer ranges (a later block's execution witness is at a later
//!   root, not at the range's parent), `eth_getProof` at the parent block for every touched
//!   account with its touched slots (100 per call), batched: the account proofs and storage
//!   proofs, deduplicated. A deletion can need a sibling no proof contains; it is left
//!   missing (the root phase then says "root not computable" for that block, never guesses).
//!
//! A node that serves neither (a JSON-RPC error: method not found, state pruned) gives a dump
//! without witness and [`WitnessSource::Unavailable`] saying why; a transport failure fails
//! the dump like any other call.

use crate::{RpcClient, RpcDumpError, client::decode};
use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use gigagas_dump::Witness;
use gigagas_record::Touched;
use serde::Deserialize;
use serde_json::{Value, json};

/// Storage keys asked for in one `eth_getProof` call.
const SLOTS_PER_PROOF: usize = 100;

/// Where the dump's witness came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WitnessSource {
    /// `debug_executionWitness` of the one block.
    ExecutionWitness,
    /// `eth_getProof` at the parent block, this many calls.
    Proofs(usize),
    /// Not asked for ([`crate::DumpOptions::witness`] off).
    Off,
    /// The node serves neither method for the parent block: the node's answer.
    Unavailable(String),
}

impl std::fmt::Display for WitnessSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ExecutionWitness => write!(f, "debug_executionWitness"),
            Self::Proofs(calls) => write!(f, "eth_getProof ({calls} calls)"),
            Self::Off => write!(f, "off"),
            Self::Unavailable(why) => write!(f, "unavailable: {why}"),
        }
    }
}

#[derive(Deserialize)]
struct ExecutionWitness {
    state: Vec<Bytes>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Proof {
    account_proof: Vec<Bytes>,
    storage_proof: Vec<StorageProof>,
}

#[derive(Deserialize)]
struct StorageProof {
    proof: Vec<Bytes>,
}

/// The witness at `parent` (whose state root is `root`) for `touched`, or why there is none.
/// `single_block` is the range's block when it has one block (see the module docs).
pub(crate) fn fetch_witness(
    client: &RpcClient,
    parent: u64,
    root: B256,
    single_block: Option<u64>,
    touched: &Touched,
    batch_size: usize,
) -> Result<(Option<Witness>, WitnessSource), RpcDumpError> {
    if let Some(n) = single_block {
        match client.call_value("debug_executionWitness", json!([format!("{n:#x}")])) {
            Ok(v) => {
                let shown = format!("[\"{n:#x}\"]");
                let w: ExecutionWitness = decode(v, "debug_executionWitness", &shown)?;
                let witness = Witness::new(root, w.state);
                if witness.nodes.iter().any(|n| keccak256(n) == root) {
                    return Ok((Some(witness), WitnessSource::ExecutionWitness));
                }
            }
            Err(RpcDumpError::Rpc { .. } | RpcDumpError::BadResponse { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let calls = proof_calls(parent, touched);
    let mut nodes: Vec<Bytes> = Vec::new();
    for chunk in calls.chunks(batch_size.max(1)) {
        let batch: Vec<(&str, Value)> = chunk.iter().map(|p| ("eth_getProof", p.clone())).collect();
        for (answer, params) in client.batch(&batch)?.into_iter().zip(chunk) {
            let v = match answer {
                Ok(v) => v,
                Err(RpcDumpError::Rpc { code, message, .. }) => {
                    return Ok((
                        None,
                        WitnessSource::Unavailable(format!(
                            "eth_getProof at block {parent} answered error {code}: {message}"
                        )),
                    ));
                }
                Err(e) => return Err(e),
            };
            let shown = crate::client::shorten(&params.to_string(), 200);
            let proof: Proof = decode(v, "eth_getProof", &shown)?;
            nodes.extend(proof.account_proof);
            nodes.extend(proof.storage_proof.into_iter().flat_map(|s| s.proof));
        }
    }
    Ok((
        Some(Witness::new(root, nodes)),
        WitnessSource::Proofs(calls.len()),
    ))
}

/// The `eth_getProof` parameters for `touched` at block `parent`: one call per account, more
/// where it has over [`SLOTS_PER_PROOF`] touched slots.
fn proof_calls(parent: u64, touched: &Touched) -> Vec<Value> {
    let block = format!("{parent:#x}");
    let mut calls = Vec::new();
    for &address in &touched.accounts {
        let slots: Vec<String> = slots_of(touched, address)
            .map(|s| format!("{:#066x}", s))
            .collect();
        if slots.is_empty() {
            calls.push(json!([address, Vec::<String>::new(), block]));
        }
        for chunk in slots.chunks(SLOTS_PER_PROOF) {
            calls.push(json!([address, chunk, block]));
        }
    }
    calls
}

fn slots_of(touched: &Touched, address: Address) -> impl Iterator<Item = U256> + '_ {
    touched
        .slots
        .range((address, U256::ZERO)..=(address, U256::MAX))
        .map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_call_per_account_and_100_slots() {
        let a = Address::repeat_byte(1);
        let b = Address::repeat_byte(2);
        let mut touched = Touched::default();
        touched.accounts.extend([a, b]);
        touched
            .slots
            .extend((0..250u64).map(|s| (b, U256::from(s))));
        let calls = proof_calls(7, &touched);
        assert_eq!(calls.len(), 1 + 3);
        assert_eq!(calls[0], json!([a, Vec::<String>::new(), "0x7"]));
        assert_eq!(calls[1][1].as_array().unwrap().len(), 100);
        assert_eq!(calls[3][1].as_array().unwrap().len(), 50);
        assert_eq!(
            calls[1][1][1],
            "0x0000000000000000000000000000000000000000000000000000000000000001"
        );
    }
}
