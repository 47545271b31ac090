//! Verification: every item's gas, status and writes against the receipts and the BAL.

use crate::{
    exec::{ExecError, ItemOutput, SequentialOutputs, TxResult},
    expected::{AccountWrites, ExpectedWrites, account_writes_at},
    replay::{Blocks, ReplayBlock},
    replay::{ItemKind, Replay, WorkItem},
};
use alloy_consensus::{ReceiptEnvelope, proofs::calculate_receipt_root};
use alloy_hardforks::EthereumHardforks;
use alloy_primitives::{Address, B256, U256};
use gigagas_chain::Expected;
use revm::state::{
    EvmState,
    bal::{Bal, BlockAccessIndex},
};
use std::{collections::BTreeMap, fmt};

/// Why verifying a whole run gave no verdict, or a negative one.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The run diverged.
    #[error(transparent)]
    Diverged(Box<Divergence>),
    /// The replay does not keep its blocks and reading them again from the file failed:
    /// nothing was verified past that block.
    #[error(transparent)]
    Blocks(#[from] crate::replay::BlockReadError),
}

impl VerifyError {
    /// The divergence, when the run diverged.
    pub fn divergence(self) -> Option<Divergence> {
        match self {
            Self::Diverged(d) => Some(*d),
            Self::Blocks(_) => None,
        }
    }
}

impl From<Divergence> for VerifyError {
    fn from(d: Divergence) -> Self {
        Self::Diverged(Box::new(d))
    }
}

/// The first difference between an execution and what the dump says.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "verification failed at block {block}, {item}{}: {mismatch}",
    address.map(|a| format!(", account {a}")).unwrap_or_default()
)]
pub struct Divergence {
    /// Block number.
    pub block: u64,
    /// Which item.
    pub item: ItemKind,
    /// Account concerned, if any.
    pub address: Option<Address>,
    /// What differs, with the expected and the produced value (boxed: a storage write's
    /// values and an execution error are large, and a divergence is passed up by value).
    pub mismatch: Box<Mismatch>,
}

impl Divergence {
    /// At `item` of block number `block`, concerning no account in particular.
    pub(crate) fn new(block: u64, item: ItemKind, mismatch: Mismatch) -> Self {
        Self {
            block,
            item,
            address: None,
            mismatch: Box::new(mismatch),
        }
    }

    /// The field that differs.
    pub fn field(&self) -> DivergenceField {
        self.mismatch.field()
    }
}

impl From<ExecError> for Divergence {
    fn from(e: ExecError) -> Self {
        Divergence::new(e.block, e.item, Mismatch::Execution(e))
    }
}

/// What a [`Divergence`] is about: a receipt's or a header's field, or a write of the
/// block access list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DivergenceField {
    /// Whether the item executed at all.
    Execution,
    /// Whether the dump has a receipt for the transaction.
    Receipt,
    /// A transaction's gas used.
    GasUsed,
    /// A transaction's status.
    Status,
    /// A transaction's log count.
    LogCount,
    /// A block's gas used (header).
    BlockGasUsed,
    /// How many receipts a pass built for a block.
    ReceiptsBuilt,
    /// A block's receipts root (header).
    ReceiptsRoot,
    /// The block access indices the access list writes at.
    BlockAccessIndex,
    /// An account's balance write.
    Balance,
    /// An account's nonce write.
    Nonce,
    /// An account's code write (by hash).
    CodeHash,
    /// A storage slot's write.
    Storage(U256),
    /// A block's state root (header), computed by the root phase.
    StateRoot,
}

impl fmt::Display for DivergenceField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Execution => f.write_str("execution"),
            Self::Receipt => f.write_str("receipt"),
            Self::GasUsed => f.write_str("gas used"),
            Self::Status => f.write_str("status"),
            Self::LogCount => f.write_str("log count"),
            Self::BlockGasUsed => f.write_str("block gas used"),
            Self::ReceiptsBuilt => f.write_str("receipts built"),
            Self::ReceiptsRoot => f.write_str("receipts root"),
            Self::BlockAccessIndex => f.write_str("block access index"),
            Self::Balance => f.write_str("balance"),
            Self::Nonce => f.write_str("nonce"),
            Self::CodeHash => f.write_str("code hash"),
            Self::Storage(slot) => write!(f, "storage[{slot:#x}]"),
            Self::StateRoot => f.write_str("state root"),
        }
    }
}

/// What the dump says and what the execution produced, typed by field (like revme's
/// `{ got, expected }` errors): each pair is a [`gigagas_chain::Expected`], the type every
/// comparison error of gigagas holds. A write the access list or the execution does not
/// make is `None`, shown as `no write`.
#[derive(Debug, Clone)]
pub enum Mismatch {
    /// The item failed to execute (expected: success).
    Execution(ExecError),
    /// The sequential pass gave no result for a transaction (expected: a result).
    NoResult,
    /// The dump has no receipt for a transaction the block holds.
    NoReceipt,
    /// A transaction's gas used: the receipt's against the execution's.
    GasUsed(Expected<u64>),
    /// A transaction's status (success): the receipt's against the execution's.
    Status(Expected<bool>),
    /// A transaction's log count: the receipt's against the execution's.
    LogCount(Expected<u64>),
    /// A block's gas used: the header's against the sum of its transactions'.
    BlockGasUsed(Expected<u64>),
    /// How many receipts a pass built for a block: its transactions against the receipts.
    ReceiptsBuilt(Expected<usize>),
    /// A block's receipts root: the header's against the built receipts'.
    ReceiptsRoot(Expected<B256>),
    /// The access list writes past the block's last block access index (a bound, not a
    /// value: any index up to `last` would do).
    IndexPastBlock {
        /// The block's last index (its post-block changes).
        last: u64,
        /// The highest index the access list writes at.
        got: u64,
    },
    /// An account's balance write: the access list's against the execution's.
    Balance(Expected<Option<U256>>),
    /// An account's nonce write: the access list's against the execution's.
    Nonce(Expected<Option<u64>>),
    /// An account's code write, by code hash: the access list's against the execution's.
    CodeHash(Expected<Option<B256>>),
    /// A storage slot's write.
    Storage {
        /// The slot.
        slot: U256,
        /// The access list's write against the execution's.
        values: Expected<Option<U256>>,
    },
    /// A block's state root: the header's against the one the root phase computed from
    /// the witness and the access lists.
    StateRoot(Expected<B256>),
    /// The root phase could not compute a block's state root (a node the witness lacks, or
    /// one that does not decode): never a guessed root.
    RootNotComputable(gigagas_trie::RootError),
    /// The root phase cannot start: no witness in the dump, or one that does not open.
    NoRoot(crate::replay::RootSetupError),
}

impl Mismatch {
    /// The field that differs.
    pub fn field(&self) -> DivergenceField {
        match self {
            Self::Execution(_) | Self::NoResult => DivergenceField::Execution,
            Self::NoReceipt => DivergenceField::Receipt,
            Self::GasUsed(_) => DivergenceField::GasUsed,
            Self::Status(_) => DivergenceField::Status,
            Self::LogCount(_) => DivergenceField::LogCount,
            Self::BlockGasUsed(_) => DivergenceField::BlockGasUsed,
            Self::ReceiptsBuilt(_) => DivergenceField::ReceiptsBuilt,
            Self::ReceiptsRoot(_) => DivergenceField::ReceiptsRoot,
            Self::IndexPastBlock { .. } => DivergenceField::BlockAccessIndex,
            Self::Balance(_) => DivergenceField::Balance,
            Self::Nonce(_) => DivergenceField::Nonce,
            Self::CodeHash(_) => DivergenceField::CodeHash,
            Self::Storage { slot, .. } => DivergenceField::Storage(*slot),
            Self::StateRoot(_) | Self::RootNotComputable(_) | Self::NoRoot(_) => {
                DivergenceField::StateRoot
            }
        }
    }
}

/// A written value, or `no write`.
struct Write<'a, T>(&'a Option<T>);

impl<T: fmt::Display> fmt::Display for Write<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(v) => v.fmt(f),
            None => f.write_str("no write"),
        }
    }
}

/// Both writes, each a value or `no write`.
fn writes<T>(values: &Expected<Option<T>>) -> Expected<Write<'_, T>> {
    values.as_ref().map(Write)
}

/// `<field> expected <value>, got <value>`.
impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = self.field();
        match self {
            Self::Execution(e) => write!(f, "{field} expected success, got {}", e.failure),
            Self::NoResult => write!(f, "{field} expected a result, got none"),
            Self::NoReceipt => write!(f, "{field} expected none, got a transaction"),
            Self::GasUsed(values) | Self::LogCount(values) | Self::BlockGasUsed(values) => {
                write!(f, "{field} {values}")
            }
            Self::Status(values) => write!(f, "{field} {values}"),
            Self::ReceiptsBuilt(values) => write!(f, "{field} {values}"),
            Self::ReceiptsRoot(values) | Self::StateRoot(values) => write!(f, "{field} {values}"),
            Self::IndexPastBlock { last, got } => {
                write!(
                    f,
                    "{field} expected at most {last}, got writes at index {got}"
                )
            }
            Self::Balance(values) | Self::Storage { values, .. } => {
                write!(f, "{field} {}", writes(values))
            }
            Self::Nonce(values) => write!(f, "{field} {}", writes(values)),
            Self::CodeHash(values) => write!(f, "{field} {}", writes(values)),
            Self::RootNotComputable(e) => write!(f, "{field} expected a root, got {e}"),
            Self::NoRoot(e) => write!(f, "{field}: {e}"),
        }
    }
}

/// Compare the writes an item made with the access list's writes at its index: the first
/// difference, with the account it concerns.
fn compare_writes(
    expected: Option<&BTreeMap<Address, AccountWrites>>,
    got: &BTreeMap<Address, AccountWrites>,
) -> Result<(), (Address, Box<Mismatch>)> {
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
        let differs = |mismatch| Err((*address, Box::new(mismatch)));
        if e.balance != g.balance {
            return differs(Mismatch::Balance(Expected::new(e.balance, g.balance)));
        }
        if e.nonce != g.nonce {
            return differs(Mismatch::Nonce(Expected::new(e.nonce, g.nonce)));
        }
        if e.code != g.code {
            return differs(Mismatch::CodeHash(Expected::new(e.code, g.code)));
        }
        let slots: std::collections::BTreeSet<&U256> =
            e.storage.keys().chain(g.storage.keys()).collect();
        for slot in slots {
            let (ev, gv) = (e.storage.get(slot).copied(), g.storage.get(slot).copied());
            if ev != gv {
                return differs(Mismatch::Storage {
                    slot: *slot,
                    values: Expected::new(ev, gv),
                });
            }
        }
    }
    Ok(())
}

/// The writes an access list makes at `index`, by account.
fn writes_of(bal: &Bal, index: BlockAccessIndex) -> BTreeMap<Address, AccountWrites> {
    bal.accounts
        .iter()
        .map(|(a, acc)| (*a, account_writes_at(acc, index)))
        .filter(|(_, w)| !w.is_empty())
        .collect()
}

/// The writes a transaction's state changes make at `index`, in the form an access list's
/// are compared in: revm's `Bal` built from the changes the way its builder records a
/// transaction, then read back at the index.
fn tx_writes(state: &EvmState, index: BlockAccessIndex) -> BTreeMap<Address, AccountWrites> {
    let mut built = Bal::new();
    for (address, account) in state.iter() {
        built.update_account(index, *address, account);
    }
    writes_of(&built, index)
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
    let mismatch = Mismatch::BlockGasUsed(Expected::new(block.header.gas_used, gas));
    let number = block.header.number;
    Err(Divergence::new(number, ItemKind::PostBlock, mismatch))
}

/// A transaction's gas, status and log count against its receipt summary in the dump.
fn check_tx_result(block: &ReplayBlock, i: usize, got: &TxResult) -> Result<(), Divergence> {
    let at = |mismatch| Divergence::new(block.header.number, ItemKind::Tx(i as u32), mismatch);
    let Some(receipt) = block.receipts.get(i) else {
        return Err(at(Mismatch::NoReceipt));
    };
    let mismatch = if got.gas_used != receipt.gas_used {
        Mismatch::GasUsed(Expected::new(receipt.gas_used, got.gas_used))
    } else if got.success != receipt.success {
        Mismatch::Status(Expected::new(receipt.success, got.success))
    } else if got.logs != receipt.logs {
        Mismatch::LogCount(Expected::new(receipt.logs, got.logs))
    } else {
        return Ok(());
    };
    Err(at(mismatch))
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

/// An item that failed, as its error's message: runs on different thread counts fail
/// with errors that hold the same values but not the same (shared, uncomparable) sources,
/// so failures compare by what they say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedItem {
    /// The error's one-line message.
    pub message: String,
}

impl Replay {
    /// Verify one item's output: gas and status against the receipt (transactions), and
    /// its writes against `expected`, the access list's writes at the item's index
    /// (grouped once per block by [`Replay::verify_items`]).
    fn verify_item(
        &self,
        block: &ReplayBlock,
        item: &WorkItem,
        output: &Result<ItemOutput, ExecError>,
        expected: Option<&BTreeMap<Address, AccountWrites>>,
    ) -> Result<(), Divergence> {
        let index = item.bal_index(block.transactions.len());
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
                tx_writes(state, bal_index)
            }
            ItemOutput::System { writes } => writes_of(writes, bal_index),
        };
        compare_writes(expected, &got).map_err(|(address, mismatch)| Divergence {
            block: block.header.number,
            item: item.kind,
            address: Some(address),
            mismatch,
        })
    }

    /// Verify a whole run: every item, each block's gas against its header, and that the
    /// access list has no writes at indices past the block's end.
    pub fn verify_all(&self, outputs: &[Result<ItemOutput, ExecError>]) -> Result<(), VerifyError> {
        for chunk in self.chunks(0..self.block_count()) {
            let blocks = self.blocks(chunk.clone())?;
            let range = self.block_items(chunk.start).start..self.block_items(chunk.end - 1).end;
            let Some(outputs) = outputs.get(range.clone()) else {
                // Fewer outputs than items: the first item without one.
                let item = &self.items()[outputs.len().min(self.items().len() - 1)];
                let block = self.header(item.block as usize).number;
                return Err(Divergence::new(block, item.kind, Mismatch::NoResult).into());
            };
            self.verify_items(range, outputs, false, &blocks)?;
        }
        Ok(())
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
        blocks: &Blocks<'_>,
    ) -> Result<(), Divergence> {
        let items = &self.items()[range.clone()];
        let (Some(first), Some(last)) = (items.first(), items.last()) else {
            return Ok(());
        };
        for b in first.block as usize..=last.block as usize {
            let block = blocks.get(b);
            let own = self.block_items(b);
            let n = block.transactions.len() + 2;
            // The access list's writes grouped by index, for this block only.
            let expected =
                ExpectedWrites::from_bal(&block.bal, n as u64).map_err(|e| Divergence {
                    block: block.header.number,
                    item: ItemKind::PostBlock,
                    address: Some(e.address),
                    mismatch: Box::new(Mismatch::IndexPastBlock {
                        last: e.last,
                        got: e.index,
                    }),
                })?;
            let outputs = &outputs[own.start - range.start..own.end - range.start];
            for (item, out) in self.items()[own.clone()].iter().zip(outputs) {
                self.verify_item(
                    block,
                    item,
                    out,
                    expected.at(item.bal_index(block.transactions.len())),
                )?;
            }
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
        }
        Ok(())
    }
    /// Check one block's receipts (built inside the timed window) against its header's
    /// `receiptsRoot`, from Byzantium on; one check for both paths.
    pub fn check_receipts_root<R: alloy_eips::Encodable2718>(
        &self,
        block: &ReplayBlock,
        receipts: &[R],
    ) -> Result<ReceiptsRootCheck, Divergence> {
        let number = block.header.number;
        let at = |mismatch| Divergence::new(number, ItemKind::PostBlock, mismatch);
        let built = Expected::new(block.transactions.len(), receipts.len());
        if built.expected != built.got {
            return Err(at(Mismatch::ReceiptsBuilt(built)));
        }
        if !self.spec.is_byzantium_active_at_block(number) {
            return Ok(ReceiptsRootCheck::NotCheckedBeforeByzantium);
        }
        let root = Expected::new(block.header.receipts_root, calculate_receipt_root(receipts));
        if root.expected != root.got {
            return Err(at(Mismatch::ReceiptsRoot(root)));
        }
        Ok(ReceiptsRootCheck::Matches)
    }

    /// How [`Replay::check_receipts_root`] treats each block: the number of blocks whose
    /// receipts root is checked and of those before Byzantium that are not.
    pub fn receipts_root_coverage(&self) -> (usize, usize) {
        let checked = self
            .headers()
            .filter(|h| self.spec.is_byzantium_active_at_block(h.number))
            .count();
        (checked, self.block_count() - checked)
    }

    /// Every computed root in `roots` (per block, `None`: not computed) against its
    /// header's `stateRoot`, in block order: the first difference, or the first root that
    /// could not be computed, as a divergence.
    pub(crate) fn check_roots(
        &self,
        roots: &[Option<Result<B256, gigagas_trie::RootError>>],
    ) -> Result<(), Divergence> {
        for (b, root) in roots.iter().enumerate() {
            let header = self.header(b);
            let mismatch = match root {
                None => continue,
                Some(Ok(got)) if *got == header.state_root => continue,
                Some(Ok(got)) => Mismatch::StateRoot(Expected::new(header.state_root, *got)),
                Some(Err(e)) => Mismatch::RootNotComputable(e.clone()),
            };
            let last = &self.items()[self.block_items(b).end - 1];
            return Err(Divergence::new(header.number, last.kind, mismatch));
        }
        Ok(())
    }

    /// Verify a sequential pass: every transaction's gas, status and log count against its
    /// receipt summary, each block's gas against its header and, when the pass built
    /// receipts, their root against the header's.
    pub fn verify_sequential(&self, outputs: &SequentialOutputs) -> Result<(), VerifyError> {
        let mut txs = outputs.txs.iter();
        let mut offset = 0;
        for chunk in self.chunks(0..self.block_count()) {
            for (_, block) in self.blocks(chunk)?.iter() {
                let mut total = 0;
                let n = block.transactions.len();
                for i in 0..n {
                    let item = ItemKind::Tx(i as u32);
                    let got = txs.next().ok_or_else(|| {
                        Divergence::new(block.header.number, item, Mismatch::NoResult)
                    })?;
                    check_tx_result(block, i, got)?;
                    total += got.gas_used;
                }
                check_block_gas(block, total)?;
                if !outputs.receipts.is_empty() {
                    let start = offset.min(outputs.receipts.len());
                    let end = (offset + n).min(outputs.receipts.len());
                    self.check_receipts_root(block, &outputs.receipts[start..end])?;
                }
                offset += n;
            }
        }
        Ok(self.check_roots(&outputs.roots)?)
    }
    /// The comparable outcome of every item of a run.
    pub fn outcomes(
        &self,
        outputs: &[Result<ItemOutput, ExecError>],
    ) -> Vec<Result<ItemOutcome, FailedItem>> {
        self.items()
            .iter()
            .zip(outputs)
            .map(|(item, out)| {
                let index = BlockAccessIndex::new(self.bal_index(item));
                match out {
                    Err(e) => Err(FailedItem {
                        message: e.to_string(),
                    }),
                    Ok(ItemOutput::Tx {
                        gas_used,
                        success,
                        state,
                        ..
                    }) => Ok(ItemOutcome {
                        gas_used: Some(*gas_used),
                        success: Some(*success),
                        writes: tx_writes(state, index),
                    }),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::ExecFailure;

    fn at(address: Option<Address>, mismatch: Mismatch) -> String {
        Divergence {
            block: 7,
            item: ItemKind::Tx(2),
            address,
            mismatch: Box::new(mismatch),
        }
        .to_string()
    }

    /// The typed divergence prints as the string fields it replaced did:
    /// `<where>: <field> expected <value>, got <value>`, `no write` for a missing write.
    #[test]
    fn divergences_print_field_expected_and_got() {
        let a = Address::repeat_byte(0xaa);
        assert_eq!(
            at(
                Some(a),
                Mismatch::Storage {
                    slot: U256::from(16),
                    values: Expected::new(Some(U256::from(5)), None),
                }
            ),
            format!(
                "verification failed at block 7, tx 2, account {a}: storage[0x10] expected 5, \
                 got no write"
            )
        );
        assert_eq!(
            at(None, Mismatch::Status(Expected::new(true, false))),
            "verification failed at block 7, tx 2: status expected true, got false"
        );
        assert_eq!(
            at(None, Mismatch::IndexPastBlock { last: 3, got: 9 }),
            "verification failed at block 7, tx 2: block access index expected at most 3, got \
             writes at index 9"
        );
        let stored = Address::repeat_byte(1);
        let recovered = Address::repeat_byte(2);
        let failed = Divergence::from(ExecError {
            block: 7,
            item: ItemKind::Tx(2),
            failure: ExecFailure::SenderMismatch { recovered, stored },
        });
        assert_eq!(failed.field(), DivergenceField::Execution);
        assert_eq!(
            failed.to_string(),
            format!(
                "verification failed at block 7, tx 2: execution expected success, got sender \
                 recovery: the signature gives {recovered}, the dump says {stored}"
            )
        );
    }
}
