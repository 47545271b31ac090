//! The timed work: what both paths do inside their timed windows, defined once.
//!
//! A ratio (BAL replay over the sequential loop, N threads over one, one scheduler over
//! another) means something only when both sides time the same work. In gigagas both
//! paths do exactly this inside the window, and nothing else:
//!
//! - **per transaction**: execute it and produce its state changes — the sequential loop
//!   commits them to its revm `State`, the replay returns them for verification;
//! - **per block**: the system calls (EIP-2935, EIP-4788, EIP-7002/7251), the block and
//!   ommer rewards and the withdrawals;
//! - **optionally** ([`gigagas_grid::TimedWork`]): each transaction's sender recovered from its
//!   signature, and each transaction's receipt built with its logs bloom
//!   ([`tx_receipt`], the one function both paths call) — what a client needs to check the
//!   header's `receiptsRoot`.
//!
//! Scheduling (the scheduler's order of every batch) is inside the replay's window too.
//! Loading, preparing the views, spawning workers and verification are outside both.
//! The receipts' root is computed and compared with the header after the pass, like every
//! other check, so the receipts cannot be optimised away.

use alloy_consensus::{Eip658Value, Receipt, ReceiptEnvelope, TxType};
use alloy_primitives::Log;

/// A transaction's receipt with its logs bloom, as a client builds it to check
/// `receiptsRoot` (the same receipt alloy-evm's `AlloyReceiptBuilder` builds). The one
/// receipt step of both paths: the sequential loop passes its running cumulative gas,
/// the replay the receipt's cumulative gas from the dump (checked after the pass).
#[inline]
pub fn tx_receipt(
    tx_type: TxType,
    success: bool,
    cumulative_gas_used: u64,
    logs: Vec<Log>,
) -> ReceiptEnvelope {
    let receipt = Receipt {
        status: Eip658Value::Eip658(success),
        cumulative_gas_used,
        logs,
    }
    .with_bloom();
    match tx_type {
        TxType::Legacy => ReceiptEnvelope::Legacy(receipt),
        TxType::Eip2930 => ReceiptEnvelope::Eip2930(receipt),
        TxType::Eip1559 => ReceiptEnvelope::Eip1559(receipt),
        TxType::Eip4844 => ReceiptEnvelope::Eip4844(receipt),
        TxType::Eip7702 => ReceiptEnvelope::Eip7702(receipt),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{Address, B256, Bloom, Bytes, LogData};

    #[test]
    fn a_receipt_carries_the_bloom_of_its_logs() {
        let log = Log {
            address: Address::repeat_byte(0x11),
            data: LogData::new_unchecked(vec![B256::repeat_byte(0x22)], Bytes::new()),
        };
        let r = tx_receipt(TxType::Eip1559, true, 21_000, vec![log.clone()]);
        let mut bloom = Bloom::ZERO;
        bloom.accrue_log(&log);
        assert_eq!(r.logs_bloom(), &bloom);
        assert_ne!(bloom, Bloom::ZERO);
        assert_eq!(r.cumulative_gas_used(), 21_000);
        assert!(matches!(r, ReceiptEnvelope::Eip1559(_)));
    }
}
