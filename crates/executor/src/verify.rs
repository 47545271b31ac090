//! Verification: every item's gas, status and writes against the receipts and the BAL.

use crate::{
    exec::{ExecError, ItemOutput, TxResult},
    expected::{AccountWrites, account_writes_at},
    replay::ReplayBlock,
    replay::{ItemKind, Replay, WorkItem},
    run::SequentialOutputs,
};
use alloy_consensus::{ReceiptEnvelope, proofs::calculate_receipt_root};
use alloy_hardforks::EthereumHardforks;
use alloy_primitives::{Address, U256};
use revm::state::bal::{Bal, BlockAccessIndex};
use std::{collections::BTreeMap, fmt};

/// The first difference between an execution and what the dump says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// Block number.
    pub block: u64,
    /// Which item.
    pub item: ItemKind,
    /// Account concerned, if any.
    pub address: Option<Address>,
    /// Field (`gas used`, `status`, `balance`, `nonce`, `code`, `storage[0x..]`, ...).
    pub field: String,
    /// What the receipt, header or BAL says.
    pub expected: String,
    /// What the execution produced.
    pub got: String,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "verification failed at block {}, {}",
            self.block, self.item
        )?;
        if let Some(a) = self.address {
            write!(f, ", account {a}")?;
        }
        write!(
            f,
            ": {} expected {}, got {}",
            self.field, self.expected, self.got
        )
    }
}

impl std::error::Error for Divergence {}

impl From<ExecError> for Divergence {
    fn from(e: ExecError) -> Self {
        Divergence {
            block: e.block,
            item: e.item,
            address: None,
            field: "execution".into(),
            expected: "success".into(),
            got: e.message,
        }
    }
}

fn fmt_opt<T: fmt::Display>(v: &Option<T>) -> String {
    v.as_ref()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "no write".into())
}

/// Compare the writes an item made with the access list's writes at its index.
fn compare_writes(
    expected: Option<&BTreeMap<Address, AccountWrites>>,
    got: &BTreeMap<Address, AccountWrites>,
    at: impl Fn(Option<Address>, String, String, String) -> Divergence,
) -> Result<(), Divergence> {
    let empty = BTreeMap::new();
    let expected = expected.unwrap_or(&empty);
    let none = AccountWrites::default();
    let addresses: std::collections::BTreeSet<&Address> =
        expected.keys().chain(got.keys()).collect();
    for address in addresses {
        let e = expected.get(address).unwrap_or(&none);
        let g = got.get(address).unwrap_or(&none);
        if e == g {
            continue;
        }
        let a = Some(*address);
        if e.balance != g.balance {
            return Err(at(
                a,
                "balance".into(),
                fmt_opt(&e.balance),
                fmt_opt(&g.balance),
            ));
        }
        if e.nonce != g.nonce {
            return Err(at(a, "nonce".into(), fmt_opt(&e.nonce), fmt_opt(&g.nonce)));
        }
        if e.code != g.code {
            return Err(at(
                a,
                "code hash".into(),
                fmt_opt(&e.code),
                fmt_opt(&g.code),
            ));
        }
        let slots: std::collections::BTreeSet<&U256> =
            e.storage.keys().chain(g.storage.keys()).collect();
        for slot in slots {
            let (ev, gv) = (e.storage.get(slot).copied(), g.storage.get(slot).copied());
            if ev != gv {
                return Err(at(
                    a,
                    format!("storage[{slot:#x}]"),
                    fmt_opt(&ev),
                    fmt_opt(&gv),
                ));
            }
        }
    }
    Ok(())
}

fn writes_of(bal: &Bal, index: BlockAccessIndex) -> BTreeMap<Address, AccountWrites> {
    bal.accounts
        .iter()
        .map(|(a, acc)| (*a, account_writes_at(acc, index)))
        .filter(|(_, w)| !w.is_empty())
        .collect()
}

impl Replay {
    /// Verify one item's output: gas and status against the receipt (transactions), and
    /// its writes against the block access list at its index.
    pub fn verify_item(
        &self,
        item: &WorkItem,
        output: &Result<ItemOutput, ExecError>,
    ) -> Result<(), Divergence> {
        let block = &self.blocks[item.block as usize];
        let index = item.bal_index(block);
        let number = block.header.number;
        let at = |address, field, expected, got| Divergence {
            block: number,
            item: item.kind,
            address,
            field,
            expected,
            got,
        };
        let output = output.as_ref().map_err(|e| Divergence::from(e.clone()))?;
        let bal_index = BlockAccessIndex::new(index);
        let got = match output {
            ItemOutput::Tx {
                gas_used,
                success,
                logs,
                state,
                ..
            } => {
                let ItemKind::Tx(i) = item.kind else {
                    unreachable!("tx output for a system item")
                };
                let result = TxResult {
                    gas_used: *gas_used,
                    success: *success,
                    logs: *logs,
                };
                check_tx_result(block, i as usize, &result)?;
                let mut built = Bal::new();
                for (address, account) in state.iter() {
                    built.update_account(bal_index, *address, account);
                }
                writes_of(&built, bal_index)
            }
            ItemOutput::System { writes } => writes_of(writes, bal_index),
        };
        compare_writes(block.expected.at(index), &got, at)
    }

    /// Verify a whole run: every item, each block's gas against its header, and that the
    /// access list has no writes at indices past the block's end.
    pub fn verify_all(&self, outputs: &[Result<ItemOutput, ExecError>]) -> Result<(), Divergence> {
        self.verify_items(0..self.items.len(), outputs, false)
    }

    /// Verify the items `range` of a run (whole blocks: a batch, or every item), with
    /// `outputs[k]` the output of item `range.start + k`: every item, and every block's gas
    /// against its header, its receipts' root (when built; with `require_receipts`, a
    /// missing receipt is a divergence) and that its access list has no writes at indices
    /// past its end.
    pub fn verify_items(
        &self,
        range: std::ops::Range<usize>,
        outputs: &[Result<ItemOutput, ExecError>],
        require_receipts: bool,
    ) -> Result<(), Divergence> {
        let items = &self.items[range.clone()];
        for (item, out) in items.iter().zip(outputs) {
            self.verify_item(item, out)?;
        }
        let (Some(first), Some(last)) = (items.first(), items.last()) else {
            return Ok(());
        };
        for b in first.block as usize..=last.block as usize {
            let block = &self.blocks[b];
            let own = self.block_items(b);
            let outputs = &outputs[own.start - range.start..own.end - range.start];
            let gas: u64 = outputs
                .iter()
                .map(|o| match o {
                    Ok(ItemOutput::Tx { gas_used, .. }) => *gas_used,
                    _ => 0,
                })
                .sum();
            check_block_gas(block, gas)?;
            let receipts: Vec<&ReceiptEnvelope> = outputs
                .iter()
                .filter_map(|o| match o {
                    Ok(ItemOutput::Tx { receipt, .. }) => receipt.as_ref(),
                    _ => None,
                })
                .collect();
            if !receipts.is_empty() || (require_receipts && !block.transactions.is_empty()) {
                self.check_receipts_root(block, &receipts)?;
            }
            let n = block.transactions.len() + 2;
            if block.expected.len() > n {
                return Err(Divergence {
                    block: block.header.number,
                    item: ItemKind::PostBlock,
                    address: None,
                    field: "block access index".into(),
                    expected: format!("at most {}", n - 1),
                    got: format!("writes at index {}", block.expected.len() - 1),
                });
            }
        }
        Ok(())
    }
}

/// How the receipts of a pass were checked against the headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptsRootCheck {
    /// The receipts hash to the header's `receiptsRoot`.
    Matches,
    /// Not checked: before Byzantium a receipt holds the post-transaction state root,
    /// which a replay on access-list views does not compute.
    NotCheckedBeforeByzantium,
}

/// A block's summed transaction gas against its header: one check for both paths.
fn check_block_gas(block: &ReplayBlock, gas: u64) -> Result<(), Divergence> {
    if gas == block.header.gas_used {
        return Ok(());
    }
    Err(Divergence {
        block: block.header.number,
        item: ItemKind::PostBlock,
        address: None,
        field: "block gas used".into(),
        expected: block.header.gas_used.to_string(),
        got: gas.to_string(),
    })
}

/// A transaction's gas, status and log count against its receipt summary in the dump.
fn check_tx_result(block: &ReplayBlock, i: usize, got: &TxResult) -> Result<(), Divergence> {
    let at = |field: &str, expected: String, got: String| Divergence {
        block: block.header.number,
        item: ItemKind::Tx(i as u32),
        address: None,
        field: field.into(),
        expected,
        got,
    };
    let Some(receipt) = block.receipts.get(i) else {
        return Err(at("receipt", "none".into(), "a transaction".into()));
    };
    if got.gas_used != receipt.gas_used {
        return Err(at(
            "gas used",
            receipt.gas_used.to_string(),
            got.gas_used.to_string(),
        ));
    }
    if got.success != receipt.success {
        return Err(at(
            "status",
            receipt.success.to_string(),
            got.success.to_string(),
        ));
    }
    if got.logs != receipt.logs {
        return Err(at(
            "log count",
            receipt.logs.to_string(),
            got.logs.to_string(),
        ));
    }
    Ok(())
}

impl Replay {
    /// Check one block's receipts (built inside the timed window) against its header's
    /// `receiptsRoot`, from Byzantium on; one check for both paths.
    pub fn check_receipts_root<R: alloy_eips::Encodable2718>(
        &self,
        block: &ReplayBlock,
        receipts: &[R],
    ) -> Result<ReceiptsRootCheck, Divergence> {
        let number = block.header.number;
        let at = |field: &str, expected: String, got: String| Divergence {
            block: number,
            item: ItemKind::PostBlock,
            address: None,
            field: field.into(),
            expected,
            got,
        };
        if receipts.len() != block.transactions.len() {
            return Err(at(
                "receipts built",
                block.transactions.len().to_string(),
                receipts.len().to_string(),
            ));
        }
        if !self.spec.is_byzantium_active_at_block(number) {
            return Ok(ReceiptsRootCheck::NotCheckedBeforeByzantium);
        }
        let root = calculate_receipt_root(receipts);
        if root != block.header.receipts_root {
            return Err(at(
                "receipts root",
                block.header.receipts_root.to_string(),
                root.to_string(),
            ));
        }
        Ok(ReceiptsRootCheck::Matches)
    }

    /// How [`Replay::check_receipts_root`] treats each block: the number of blocks whose
    /// receipts root is checked and of those before Byzantium that are not.
    pub fn receipts_root_coverage(&self) -> (usize, usize) {
        let checked = self
            .blocks
            .iter()
            .filter(|b| self.spec.is_byzantium_active_at_block(b.header.number))
            .count();
        (checked, self.blocks.len() - checked)
    }

    /// Verify a sequential pass: every transaction's gas, status and log count against its
    /// receipt summary, each block's gas against its header and, when the pass built
    /// receipts, their root against the header's.
    pub fn verify_sequential(&self, outputs: &SequentialOutputs) -> Result<(), Divergence> {
        let mut txs = outputs.txs.iter();
        let mut offset = 0;
        for block in &self.blocks {
            let mut total = 0;
            let n = block.transactions.len();
            for i in 0..n {
                let got = txs.next().ok_or_else(|| Divergence {
                    block: block.header.number,
                    item: ItemKind::Tx(i as u32),
                    address: None,
                    field: "execution".into(),
                    expected: "a result".into(),
                    got: "none".into(),
                })?;
                check_tx_result(block, i, got)?;
                total += got.gas_used;
            }
            check_block_gas(block, total)?;
            if !outputs.receipts.is_empty() {
                let end = (offset + n).min(outputs.receipts.len());
                self.check_receipts_root(block, &outputs.receipts[offset..end])?;
            }
            offset += n;
        }
        Ok(())
    }
}

/// What an item did, in a form comparable across runs (thread counts, schedulers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemOutcome {
    /// Gas used (transactions only).
    pub gas_used: Option<u64>,
    /// Status (transactions only).
    pub success: Option<bool>,
    /// The writes it made at its block access index.
    pub writes: BTreeMap<Address, AccountWrites>,
}

impl Replay {
    /// The comparable outcome of every item of a run (errors as their messages).
    pub fn outcomes(
        &self,
        outputs: &[Result<ItemOutput, ExecError>],
    ) -> Vec<Result<ItemOutcome, String>> {
        self.items
            .iter()
            .zip(outputs)
            .map(|(item, out)| {
                let index =
                    BlockAccessIndex::new(item.bal_index(&self.blocks[item.block as usize]));
                match out {
                    Err(e) => Err(e.to_string()),
                    Ok(ItemOutput::Tx {
                        gas_used,
                        success,
                        state,
                        ..
                    }) => {
                        let mut built = Bal::new();
                        for (address, account) in state.iter() {
                            built.update_account(index, *address, account);
                        }
                        Ok(ItemOutcome {
                            gas_used: Some(*gas_used),
                            success: Some(*success),
                            writes: writes_of(&built, index),
                        })
                    }
                    Ok(ItemOutput::System { writes }) => Ok(ItemOutcome {
                        gas_used: None,
                        success: None,
                        writes: writes_of(writes, index),
                    }),
                }
            })
            .collect()
    }
}
