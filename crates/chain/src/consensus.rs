//! The header checks a client makes before executing a block: its body against the roots
//! the header commits to, and the header against its parent (number, timestamp, extra data,
//! gas limit, base fee, excess blob gas). Execution-dependent fields are checked after
//! execution (gigagas-record's `RecordedBlock::check_header`), with the same
//! [`HeaderMismatch`].

use crate::{expected::Expected, spec::ChainSpec};
use alloy_consensus::{Header, TxEnvelope, proofs, transaction::Recovered};
use alloy_eips::{
    eip1559::{
        BaseFeeParams, DEFAULT_ELASTICITY_MULTIPLIER, GAS_LIMIT_BOUND_DIVISOR, INITIAL_BASE_FEE,
    },
    eip4895::Withdrawal,
};
use alloy_hardforks::EthereumHardforks;
use alloy_primitives::{B256, Bloom};
use std::fmt;

/// A value the header commits to that the block's body, its parent or its execution does
/// not reproduce, typed by field. Where the rule gives one value, the pair is an
/// [`Expected`] (`expected`: the header's value, or the one the parent implies; `got`: the
/// body's, the execution's or the header's); where it gives a bound, the variant holds the
/// bound. Displayed as `<field>: header says <expected>, execution gives <got>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderMismatch {
    /// The block's number is not its parent's plus one (`expected`: the parent's plus one).
    BlockNumber(Expected<u64>),
    /// The timestamp is not after the parent's.
    Timestamp {
        /// The parent's timestamp.
        parent: u64,
        /// The block's.
        got: u64,
    },
    /// `extraData` is longer than [`MAX_EXTRA_DATA`] bytes (its length).
    ExtraDataSize(usize),
    /// Gas used exceeds the gas limit.
    GasUsedOverLimit {
        /// The header's gas limit.
        limit: u64,
        /// The header's gas used.
        got: u64,
    },
    /// The gas limit moves by 1/1024 of the parent's or more, or is below
    /// [`MIN_GAS_LIMIT`].
    GasLimit {
        /// The parent's gas limit (doubled at the London block).
        parent: u64,
        /// How far it may move (exclusive).
        bound: u64,
        /// The block's.
        got: u64,
    },
    /// The base fee is not EIP-1559's (`None`: no base fee).
    BaseFee(Expected<Option<u64>>),
    /// The excess blob gas is not the parent's carried forward (`None`: none).
    ExcessBlobGas(Expected<Option<u64>>),
    /// The transactions do not hash to the transactions root.
    TransactionsRoot(Expected<B256>),
    /// The withdrawals do not hash to the withdrawals root.
    WithdrawalsRoot(Expected<B256>),
    /// The header has a withdrawals root (this one) but the body no withdrawals.
    MissingWithdrawals(B256),
    /// The body has withdrawals but the header no withdrawals root.
    UnexpectedWithdrawals,
    /// The ommers do not hash to the ommers hash.
    OmmersHash(Expected<B256>),
    /// The block's gas used against its transactions'.
    GasUsed(Expected<u64>),
    /// The block's blob gas used against its transactions'.
    BlobGasUsed(Expected<u64>),
    /// The logs bloom against the receipts' (boxed: two blooms are 512 bytes).
    LogsBloom(Box<Expected<Bloom>>),
    /// The receipts root against the receipts'.
    ReceiptsRoot(Expected<B256>),
    /// The requests hash against the requests'.
    RequestsHash(Expected<B256>),
    /// The block access list hash against the list's.
    BlockAccessListHash(Expected<B256>),
}

impl HeaderMismatch {
    /// `Ok` where `got` is `expected`, else the mismatch `field` makes of the two (e.g.
    /// `HeaderMismatch::check(HeaderMismatch::GasUsed, header.gas_used, gas_used)`).
    pub fn check<T: PartialEq>(
        field: fn(Expected<T>) -> Self,
        expected: T,
        got: T,
    ) -> Result<(), Self> {
        if expected == got {
            Ok(())
        } else {
            Err(field(Expected::new(expected, got)))
        }
    }

    /// The header field in words, e.g. `gas used`, `receipts root`.
    pub const fn field(&self) -> &'static str {
        match self {
            Self::BlockNumber(_) => "block number",
            Self::Timestamp { .. } => "timestamp",
            Self::ExtraDataSize(_) => "extra data size",
            Self::GasUsedOverLimit { .. } | Self::GasUsed(_) => "gas used",
            Self::GasLimit { .. } => "gas limit",
            Self::BaseFee(_) => "base fee",
            Self::ExcessBlobGas(_) => "excess blob gas",
            Self::TransactionsRoot(_) => "transactions root",
            Self::WithdrawalsRoot(_)
            | Self::MissingWithdrawals(_)
            | Self::UnexpectedWithdrawals => "withdrawals root",
            Self::OmmersHash(_) => "ommers hash",
            Self::BlobGasUsed(_) => "blob gas used",
            Self::LogsBloom(_) => "logs bloom",
            Self::ReceiptsRoot(_) => "receipts root",
            Self::RequestsHash(_) => "requests hash",
            Self::BlockAccessListHash(_) => "block access list hash",
        }
    }

    /// What the rule expects and what was found, in display form: a bound in words
    /// (`after the parent's 1000`), a missing value as `none`.
    pub fn values(&self) -> Expected<String> {
        fn text<T: fmt::Display>(e: &Expected<T>) -> Expected<String> {
            e.as_ref().map(ToString::to_string)
        }
        fn optional(e: &Expected<Option<u64>>) -> Expected<String> {
            e.map(|v| v.map_or_else(|| "none".into(), |v| v.to_string()))
        }
        match self {
            Self::BlockNumber(e) | Self::GasUsed(e) | Self::BlobGasUsed(e) => text(e),
            Self::Timestamp { parent, got } => {
                Expected::new(format!("after the parent's {parent}"), got.to_string())
            }
            Self::ExtraDataSize(got) => {
                Expected::new(format!("at most {MAX_EXTRA_DATA} bytes"), got.to_string())
            }
            Self::GasUsedOverLimit { limit, got } => {
                Expected::new(format!("at most the gas limit {limit}"), got.to_string())
            }
            Self::GasLimit { parent, bound, got } => Expected::new(
                format!("within {bound} of the parent's {parent}, at least {MIN_GAS_LIMIT}"),
                got.to_string(),
            ),
            Self::BaseFee(e) | Self::ExcessBlobGas(e) => optional(e),
            Self::TransactionsRoot(e)
            | Self::WithdrawalsRoot(e)
            | Self::OmmersHash(e)
            | Self::ReceiptsRoot(e)
            | Self::RequestsHash(e)
            | Self::BlockAccessListHash(e) => text(e),
            Self::MissingWithdrawals(root) => {
                Expected::new(root.to_string(), "no withdrawals".into())
            }
            Self::UnexpectedWithdrawals => {
                Expected::new("none".into(), "withdrawals in the body".into())
            }
            Self::LogsBloom(e) => text(e),
        }
    }
}

impl fmt::Display for HeaderMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Expected { expected, got } = self.values();
        write!(
            f,
            "{}: header says {expected}, execution gives {got}",
            self.field()
        )
    }
}

impl std::error::Error for HeaderMismatch {}

/// Most bytes of `extraData` (the yellow paper's limit).
pub const MAX_EXTRA_DATA: usize = 32;

/// Lowest gas limit a block may have.
pub const MIN_GAS_LIMIT: u64 = 5000;

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
    HeaderMismatch::check(HeaderMismatch::OmmersHash, header.ommers_hash, root)
}

/// The transactions hash to the header's transactions root.
pub fn check_transactions_root(
    header: &Header,
    transactions: &[Recovered<TxEnvelope>],
) -> Result<(), HeaderMismatch> {
    let envelopes: Vec<&TxEnvelope> = transactions.iter().map(|t| t.inner()).collect();
    let root = proofs::calculate_transaction_root(&envelopes);
    HeaderMismatch::check(
        HeaderMismatch::TransactionsRoot,
        header.transactions_root,
        root,
    )
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
            HeaderMismatch::check(HeaderMismatch::WithdrawalsRoot, expected, root)
        }
        (Some(expected), None) => Err(HeaderMismatch::MissingWithdrawals(expected)),
        (None, Some(_)) => Err(HeaderMismatch::UnexpectedWithdrawals),
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
        return Err(HeaderMismatch::BlockNumber(Expected::new(
            parent.number + 1,
            header.number,
        )));
    }
    if header.timestamp <= parent.timestamp {
        return Err(HeaderMismatch::Timestamp {
            parent: parent.timestamp,
            got: header.timestamp,
        });
    }
    if header.extra_data.len() > MAX_EXTRA_DATA {
        return Err(HeaderMismatch::ExtraDataSize(header.extra_data.len()));
    }
    if header.gas_used > header.gas_limit {
        return Err(HeaderMismatch::GasUsedOverLimit {
            limit: header.gas_limit,
            got: header.gas_used,
        });
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
        return Err(HeaderMismatch::GasLimit {
            parent: parent_limit,
            bound,
            got: header.gas_limit,
        });
    }
    if london {
        let expected = if parent_london {
            parent.next_block_base_fee(BaseFeeParams::ethereum())
        } else {
            Some(INITIAL_BASE_FEE)
        };
        HeaderMismatch::check(HeaderMismatch::BaseFee, expected, header.base_fee_per_gas)?;
    }
    if spec.is_cancun_active_at_timestamp(header.timestamp) {
        let expected = match (
            parent.excess_blob_gas,
            spec.blob_params_at(header.timestamp),
        ) {
            (Some(_), Some(params)) => parent.next_block_excess_blob_gas(params),
            _ => Some(0),
        };
        HeaderMismatch::check(
            HeaderMismatch::ExcessBlobGas,
            expected,
            header.excess_blob_gas,
        )?;
    }
    Ok(())
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
        r.map(|()| "ok").unwrap_or_else(|m| m.field())
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

    /// The typed mismatch prints as the string fields it replaced did.
    #[test]
    fn mismatches_print_the_field_and_both_values() {
        let p = parent();
        let mut c = child(&p);
        c.gas_limit *= 2;
        let m = check_against_parent(&cancun(), &c, &p).unwrap_err();
        assert_eq!(
            m,
            HeaderMismatch::GasLimit {
                parent: 30_000_000,
                bound: 30_000_000 / 1024,
                got: 60_000_000
            }
        );
        assert_eq!(
            m.to_string(),
            "gas limit: header says within 29296 of the parent's 30000000, at least 5000, \
             execution gives 60000000"
        );
        let m = HeaderMismatch::BaseFee(Expected::new(Some(7), None));
        assert_eq!(
            m.to_string(),
            "base fee: header says 7, execution gives none"
        );
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
