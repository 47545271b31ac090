//! The header checks a client makes before executing a block: its body against the roots
//! the header commits to, and the header against its parent (number, timestamp, extra data,
//! gas limit, base fee, excess blob gas). Execution-dependent fields are checked after
//! execution (gigagas-record's `RecordedBlock::check_header`), with the same
//! [`HeaderMismatch`].

use crate::spec::ChainSpec;
use alloy_consensus::{Header, TxEnvelope, proofs, transaction::Recovered};
use alloy_eips::{
    eip1559::{
        BaseFeeParams, DEFAULT_ELASTICITY_MULTIPLIER, GAS_LIMIT_BOUND_DIVISOR, INITIAL_BASE_FEE,
    },
    eip4895::Withdrawal,
};
use alloy_hardforks::EthereumHardforks;

/// A value the header commits to that the block's body, its parent or its execution does
/// not reproduce.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: header says {expected}, execution gives {got}")]
pub struct HeaderMismatch {
    /// Header field in words, e.g. `gas used`, `receipts root`.
    pub field: &'static str,
    /// The header's value.
    pub expected: String,
    /// The value the body, the parent or the execution gives.
    pub got: String,
}

/// Most bytes of `extraData` (the yellow paper's limit).
pub const MAX_EXTRA_DATA: usize = 32;

/// Lowest gas limit a block may have.
pub const MIN_GAS_LIMIT: u64 = 5000;

fn differs(
    field: &'static str,
    expected: impl std::fmt::Display,
    got: impl std::fmt::Display,
) -> Result<(), HeaderMismatch> {
    Err(HeaderMismatch {
        field,
        expected: expected.to_string(),
        got: got.to_string(),
    })
}

/// Check the block's body against its header: [`check_transactions_root`],
/// [`check_withdrawals_root`], and the ommers hash. `expected` is the header's value, `got`
/// the body's.
pub fn check_body(
    header: &Header,
    transactions: &[Recovered<TxEnvelope>],
    withdrawals: Option<&[Withdrawal]>,
    ommers: &[Header],
) -> Result<(), HeaderMismatch> {
    check_transactions_root(header, transactions)?;
    check_withdrawals_root(header, withdrawals)?;
    let root = proofs::calculate_ommers_root(ommers);
    if root != header.ommers_hash {
        return differs("ommers hash", header.ommers_hash, root);
    }
    Ok(())
}

/// The transactions hash to the header's transactions root.
pub fn check_transactions_root(
    header: &Header,
    transactions: &[Recovered<TxEnvelope>],
) -> Result<(), HeaderMismatch> {
    let envelopes: Vec<&TxEnvelope> = transactions.iter().map(|t| t.inner()).collect();
    let root = proofs::calculate_transaction_root(&envelopes);
    if root != header.transactions_root {
        return differs("transactions root", header.transactions_root, root);
    }
    Ok(())
}

/// The withdrawals hash to the header's withdrawals root, and come exactly with one
/// (Shanghai on).
pub fn check_withdrawals_root(
    header: &Header,
    withdrawals: Option<&[Withdrawal]>,
) -> Result<(), HeaderMismatch> {
    match (header.withdrawals_root, withdrawals) {
        (Some(expected), Some(w)) => {
            let root = proofs::calculate_withdrawals_root(w);
            if root != expected {
                return differs("withdrawals root", expected, root);
            }
            Ok(())
        }
        (Some(expected), None) => differs("withdrawals root", expected, "no withdrawals"),
        (None, Some(_)) => differs("withdrawals root", "none", "withdrawals in the body"),
        (None, None) => Ok(()),
    }
}

/// Check `header` against its `parent` under the chain's rules: the number follows, the
/// timestamp is later, `extraData` has at most [`MAX_EXTRA_DATA`] bytes, the gas limit moves
/// by less than 1/1024 of the parent's (doubled at the London block) and stays at least
/// [`MIN_GAS_LIMIT`], gas used is within it, the base fee is EIP-1559's (the initial one at
/// London), and from Cancun the excess blob gas is the parent's carried forward under the
/// block's blob parameters (EIP-4844, EIP-7918 from Osaka). Proof-of-work fields are not
/// checked.
pub fn check_against_parent(
    spec: &ChainSpec,
    header: &Header,
    parent: &Header,
) -> Result<(), HeaderMismatch> {
    if Some(header.number) != parent.number.checked_add(1) {
        return differs("block number", parent.number + 1, header.number);
    }
    if header.timestamp <= parent.timestamp {
        return differs(
            "timestamp",
            format!("after the parent's {}", parent.timestamp),
            header.timestamp,
        );
    }
    if header.extra_data.len() > MAX_EXTRA_DATA {
        return differs(
            "extra data size",
            format!("at most {MAX_EXTRA_DATA} bytes"),
            header.extra_data.len(),
        );
    }
    if header.gas_used > header.gas_limit {
        return differs(
            "gas used",
            format!("at most the gas limit {}", header.gas_limit),
            header.gas_used,
        );
    }
    let london = spec.is_london_active_at_block(header.number);
    let parent_london = spec.is_london_active_at_block(parent.number);
    let parent_limit = if london && !parent_london {
        parent
            .gas_limit
            .saturating_mul(DEFAULT_ELASTICITY_MULTIPLIER)
    } else {
        parent.gas_limit
    };
    let bound = parent_limit / GAS_LIMIT_BOUND_DIVISOR;
    if header.gas_limit.abs_diff(parent_limit) >= bound || header.gas_limit < MIN_GAS_LIMIT {
        return differs(
            "gas limit",
            format!("within {bound} of the parent's {parent_limit}, at least {MIN_GAS_LIMIT}"),
            header.gas_limit,
        );
    }
    if london {
        let expected = if parent_london {
            parent.next_block_base_fee(BaseFeeParams::ethereum())
        } else {
            Some(INITIAL_BASE_FEE)
        };
        if header.base_fee_per_gas != expected {
            return differs("base fee", show(expected), show(header.base_fee_per_gas));
        }
    }
    if spec.is_cancun_active_at_timestamp(header.timestamp) {
        let expected = match (
            parent.excess_blob_gas,
            spec.blob_params_at(header.timestamp),
        ) {
            (Some(_), Some(params)) => parent.next_block_excess_blob_gas(params),
            _ => Some(0),
        };
        if header.excess_blob_gas != expected {
            return differs(
                "excess blob gas",
                show(expected),
                show(header.excess_blob_gas),
            );
        }
    }
    Ok(())
}

fn show(v: Option<u64>) -> String {
    v.map_or_else(|| "none".into(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_eips::eip4844::DATA_GAS_PER_BLOB;
    use alloy_hardforks::EthereumHardfork;
    use gigagas_dump::ChainConfig;

    fn cancun() -> ChainSpec {
        ChainSpec::from_config(
            &ChainConfig::all_active_from_genesis(1, EthereumHardfork::Cancun).unwrap(),
        )
        .unwrap()
    }

    /// A Cancun parent that used exactly its gas target and six blobs.
    fn parent() -> Header {
        Header {
            number: 7,
            timestamp: 1_000,
            gas_limit: 30_000_000,
            gas_used: 15_000_000,
            base_fee_per_gas: Some(1_000_000_000),
            excess_blob_gas: Some(0),
            blob_gas_used: Some(6 * DATA_GAS_PER_BLOB),
            ..Default::default()
        }
    }

    /// Its child as the rules make it: base fee unchanged (target met), excess blob gas
    /// three blobs over Cancun's target of three.
    fn child(parent: &Header) -> Header {
        Header {
            number: 8,
            timestamp: 1_012,
            gas_limit: 30_000_000,
            base_fee_per_gas: Some(1_000_000_000),
            excess_blob_gas: Some(3 * DATA_GAS_PER_BLOB),
            blob_gas_used: Some(0),
            parent_hash: parent.hash_slow(),
            ..Default::default()
        }
    }

    fn field(r: Result<(), HeaderMismatch>) -> &'static str {
        r.map(|()| "ok").unwrap_or_else(|m| m.field)
    }

    #[test]
    fn a_child_made_by_the_rules_passes_and_each_broken_field_is_named() {
        let spec = cancun();
        let p = parent();
        let c = child(&p);
        assert_eq!(field(check_against_parent(&spec, &c, &p)), "ok");
        type Break = fn(&mut Header);
        let broken: [(&str, Break); 7] = [
            ("block number", |h| h.number = 9),
            ("timestamp", |h| h.timestamp = 1_000),
            ("extra data size", |h| h.extra_data = vec![0; 33].into()),
            ("gas limit", |h| {
                h.gas_limit = 30_000_000 + 30_000_000 / 1024
            }),
            ("gas used", |h| h.gas_used = h.gas_limit + 1),
            ("base fee", |h| h.base_fee_per_gas = Some(1_000_000_001)),
            ("excess blob gas", |h| h.excess_blob_gas = Some(0)),
        ];
        for (name, f) in broken {
            let mut c = child(&p);
            f(&mut c);
            assert_eq!(field(check_against_parent(&spec, &c, &p)), name);
        }
        // Just inside the gas limit bound is fine.
        let mut c = child(&p);
        c.gas_limit = 30_000_000 + 30_000_000 / 1024 - 1;
        assert_eq!(field(check_against_parent(&spec, &c, &p)), "ok");
    }

    #[test]
    fn the_body_must_match_the_header_roots() {
        let mut h = Header {
            transactions_root: proofs::calculate_transaction_root::<TxEnvelope>(&[]),
            ommers_hash: proofs::calculate_ommers_root::<Header>(&[]),
            withdrawals_root: Some(proofs::calculate_withdrawals_root(&[])),
            ..Default::default()
        };
        assert_eq!(field(check_body(&h, &[], Some(&[]), &[])), "ok");
        assert_eq!(field(check_body(&h, &[], None, &[])), "withdrawals root");
        let w = [Withdrawal {
            index: 1,
            validator_index: 2,
            address: alloy_primitives::Address::repeat_byte(3),
            amount: 4,
        }];
        assert_eq!(
            field(check_body(&h, &[], Some(&w), &[])),
            "withdrawals root"
        );
        assert_eq!(
            field(check_body(&h, &[], Some(&[]), &[Header::default()])),
            "ommers hash"
        );
        h.transactions_root = alloy_primitives::B256::repeat_byte(1);
        assert_eq!(
            field(check_body(&h, &[], Some(&[]), &[])),
            "transactions root"
        );
    }
}
