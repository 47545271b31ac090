//! The in-memory dump: segments that own their blocks, blocks that own their access lists.

use crate::{ChainConfig, DumpSummary, InvariantError};
use alloy_consensus::{Header, TxEnvelope, transaction::Recovered};
use alloy_eip7928::BlockAccessList;
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Address, B256, Bytes, KECCAK256_EMPTY, U256, keccak256};

/// The root of the empty trie: keccak-256 of the RLP of an empty string.
const EMPTY_ROOT_HASH: B256 =
    alloy_primitives::b256!("0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421");
use rayon::prelude::*;
use std::collections::BTreeMap;

/// A complete, self-contained replay input: metadata and one or more independent
/// segments, each owning its blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dump {
    /// Name, provenance and chain rules.
    pub meta: DumpMeta,
    /// The independent runs of blocks, in order.
    pub segments: Vec<Segment>,
}

/// A run of consecutive blocks that starts from its own pre-state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Segment {
    /// The segment's blocks in ascending order with no gaps; at least one.
    pub blocks: Vec<DumpBlock>,
    /// Hashes of blocks before the segment's first block that its blocks may ask for with
    /// `BLOCKHASH` (up to 256), ascending by number.
    pub block_hashes: Vec<(u64, B256)>,
    /// State at the parent of the segment's first block, restricted to what its access
    /// lists touch.
    pub pre_state: PreState,
    /// The trie nodes that prove that pre-state at the parent's state root, where the
    /// producer had them (format version 3 on): what a state-root phase starts from. `None`
    /// (every dump of format 1 or 2, snapshots without `witness.json`): no root is computed
    /// for the segment's blocks.
    pub witness: Option<Witness>,
}

/// Descriptive data about a dump: where it came from and which chain rules apply.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DumpMeta {
    /// Short name, e.g. `mainnet-like`.
    pub name: String,
    /// Free-form provenance, e.g. `source = generate`, `profile = mainnet-like`, `seed = 1`.
    /// Sorted, so the encoding is deterministic.
    pub provenance: BTreeMap<String, String>,
    /// Chain id and fork activations.
    pub chain: ChainConfig,
}

/// One block with its transactions (senders recovered), withdrawals and receipts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpBlock {
    /// The consensus header.
    pub header: Header,
    /// Transactions in block order, each with its sender.
    pub transactions: Vec<Recovered<TxEnvelope>>,
    /// Withdrawals (empty before Shanghai; present iff the header has a withdrawals root).
    pub withdrawals: Vec<Withdrawal>,
    /// One receipt summary per transaction.
    pub receipts: Vec<ReceiptSummary>,
    /// Ommer (uncle) headers, where the source had them: their beneficiaries are paid the
    /// ommer reward and the miner 1/32 of the block reward for each (before the Merge).
    pub ommers: Vec<Header>,
    /// Ommers the source named only by hash (e.g. `eth_getBlockByNumber` gives `uncles` as
    /// hashes): the miner's 1/32 share for each is paid, the ommer beneficiaries' own
    /// rewards cannot be and are not. Receipts and gas do not depend on it.
    pub headerless_ommers: u32,
    /// The block's EIP-7928 block access list.
    pub access_list: BlockAccessList,
}

impl DumpBlock {
    /// Block number.
    pub fn number(&self) -> u64 {
        self.header.number
    }

    /// Withdrawals as the block body carries them: `None` before Shanghai.
    pub fn withdrawals_opt(&self) -> Option<&[Withdrawal]> {
        self.header
            .withdrawals_root
            .map(|_| self.withdrawals.as_slice())
    }

    /// The block's own invariants: one receipt summary per transaction with cumulative gas
    /// the running sum of gas used, the last one the header's gas used (0 without
    /// transactions), and withdrawals only with a withdrawals root.
    pub fn validate(&self) -> Result<(), InvariantError> {
        let block = self.number();
        if self.receipts.len() != self.transactions.len() {
            return Err(InvariantError::ReceiptCount {
                block,
                receipts: self.receipts.len(),
                transactions: self.transactions.len(),
            });
        }
        let mut sum = 0u64;
        for (tx, r) in self.receipts.iter().enumerate() {
            sum = sum.saturating_add(r.gas_used);
            if r.cumulative_gas_used != sum {
                return Err(InvariantError::CumulativeGas {
                    block,
                    tx,
                    cumulative: r.cumulative_gas_used,
                    sum,
                });
            }
        }
        if self.header.withdrawals_root.is_none() && !self.withdrawals.is_empty() {
            return Err(InvariantError::WithdrawalsWithoutRoot(block));
        }
        if sum != self.header.gas_used {
            return Err(InvariantError::BlockGasUsed {
                block,
                header: self.header.gas_used,
                receipts: sum,
            });
        }
        Ok(())
    }
}

/// What a replay needs from a receipt to verify a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, alloy_rlp::RlpEncodable, alloy_rlp::RlpDecodable)]
pub struct ReceiptSummary {
    /// `true` if the transaction succeeded.
    pub success: bool,
    /// Gas used by this transaction alone.
    pub gas_used: u64,
    /// Cumulative gas used in the block up to and including this transaction.
    pub cumulative_gas_used: u64,
    /// Number of logs emitted.
    pub logs: u64,
}

/// Account fields at the parent of the first block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountState {
    /// Balance in wei.
    pub balance: U256,
    /// Nonce.
    pub nonce: u64,
    /// Keccak of the code (`KECCAK_EMPTY` for none).
    pub code_hash: B256,
}

/// One account of the pre-state; `state == None` records that the account does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreAccount {
    /// Address.
    pub address: Address,
    /// Fields, or `None` if the account is absent from the state.
    pub state: Option<AccountState>,
}

/// One storage slot of the pre-state (a slot that was never written is recorded as zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreSlot {
    /// Account address.
    pub address: Address,
    /// Slot key.
    pub slot: U256,
    /// Value at the parent of the first block.
    pub value: U256,
}

/// The Merkle-Patricia trie nodes that prove, at a segment's parent state root, every account
/// and slot the segment's access lists touch: enough to apply every write of its blocks and
/// recompute each block's state root without the rest of the state.
///
/// `nodes` holds account-trie and storage-trie nodes together, each the RLP encoding of one
/// node (a node is found by its keccak hash; a node shorter than 32 bytes is inlined in its
/// parent and appears alone only as the root of a trie). Where a deletion needs a sibling
/// that no proof contains, the producer adds it if it can; a witness without it makes that
/// block's root "not computable", never wrong.
///
/// [`Dump::validate`] checks that no node is empty or listed twice and that one node hashes
/// to `parent_state_root` (none need, for the empty trie's root).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Witness {
    /// The state root of the parent of the segment's first block (the root node's hash).
    pub parent_state_root: B256,
    /// RLP-encoded trie nodes, in no particular order, without duplicates.
    pub nodes: Vec<Bytes>,
}

impl Witness {
    /// A witness of `nodes` at `parent_state_root`, the nodes sorted and deduplicated (so
    /// that equal node sets encode to equal bytes, whatever order a producer found them in).
    pub fn new(parent_state_root: B256, mut nodes: Vec<Bytes>) -> Self {
        nodes.sort_unstable();
        nodes.dedup();
        Self {
            parent_state_root,
            nodes,
        }
    }

    /// Total bytes of the nodes' RLP.
    pub fn node_bytes(&self) -> usize {
        self.nodes.iter().map(|n| n.len()).sum()
    }

    /// [`Dump::validate`]'s checks of segment `segment`'s witness: no node empty or listed
    /// twice, and a node hashing to the parent state root unless that is the empty trie's.
    pub(crate) fn validate(&self, segment: usize) -> Result<(), InvariantError> {
        if let Some(node) = self.nodes.iter().position(|n| n.is_empty()) {
            return Err(InvariantError::EmptyWitnessNode { segment, node });
        }
        let mut hashes: Vec<B256> = self.nodes.par_iter().map(keccak256).collect();
        hashes.sort_unstable();
        if let Some(pair) = hashes.windows(2).find(|p| p[0] == p[1]) {
            return Err(InvariantError::DuplicateWitnessNode {
                segment,
                hash: pair[0],
            });
        }
        let root = self.parent_state_root;
        if root != EMPTY_ROOT_HASH && hashes.binary_search(&root).is_err() {
            return Err(InvariantError::WitnessWithoutRoot {
                segment,
                root,
                nodes: self.nodes.len(),
            });
        }
        Ok(())
    }
}

/// State at the parent of the first block for everything the access lists touch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreState {
    /// Accounts sorted by address.
    pub accounts: Vec<PreAccount>,
    /// Slots sorted by (address, slot).
    pub storage: Vec<PreSlot>,
    /// Bytecode once per code hash, sorted by hash.
    pub codes: Vec<(B256, Bytes)>,
}

impl PreState {
    /// Sort every table into its canonical order (needed for deterministic encoding).
    pub fn canonicalize(&mut self) {
        self.accounts.sort_unstable_by_key(|a| a.address);
        self.accounts.dedup_by_key(|a| a.address);
        self.storage.sort_unstable_by_key(|s| (s.address, s.slot));
        self.storage.dedup_by_key(|s| (s.address, s.slot));
        self.codes.sort_unstable_by_key(|c| c.0);
        self.codes.dedup_by_key(|c| c.0);
    }

    /// Total bytes of bytecode.
    pub fn code_bytes(&self) -> usize {
        self.codes.iter().map(|(_, c)| c.len()).sum()
    }

    /// The account's entry: `None` if the pre-state does not list it, `Some(None)` if it
    /// is recorded absent. The accounts must be sorted (as [`Dump::validate`] checks).
    pub fn account(&self, address: Address) -> Option<Option<&AccountState>> {
        self.accounts
            .binary_search_by_key(&address, |a| a.address)
            .ok()
            .map(|i| self.accounts[i].state.as_ref())
    }

    /// The slot's value, `None` if the pre-state does not hold it. The slots must be
    /// sorted (as [`Dump::validate`] checks).
    pub fn slot(&self, address: Address, slot: U256) -> Option<U256> {
        self.storage
            .binary_search_by_key(&(address, slot), |s| (s.address, s.slot))
            .ok()
            .map(|i| self.storage[i].value)
    }

    /// [`Dump::validate`]'s checks of the tables themselves, for segment `segment`.
    pub(crate) fn validate(&self, segment: usize) -> Result<(), InvariantError> {
        if let Some(pair) = self
            .accounts
            .windows(2)
            .find(|p| p[1].address <= p[0].address)
        {
            return Err(InvariantError::PreStateAccountOrder {
                segment,
                account: pair[1].address,
                previous: pair[0].address,
            });
        }
        let key = |s: &PreSlot| (s.address, s.slot);
        if let Some(pair) = self.storage.windows(2).find(|p| key(&p[1]) <= key(&p[0])) {
            return Err(InvariantError::PreStateSlotOrder {
                segment,
                account: pair[1].address,
                slot: pair[1].slot,
            });
        }
        for s in &self.storage {
            match self.account(s.address) {
                None => {
                    return Err(InvariantError::SlotOfUnlistedAccount {
                        segment,
                        account: s.address,
                        slot: s.slot,
                    });
                }
                Some(None) if !s.value.is_zero() => {
                    return Err(InvariantError::StorageOfAbsentAccount {
                        segment,
                        account: s.address,
                        slot: s.slot,
                        value: s.value,
                    });
                }
                Some(_) => {}
            }
        }
        if let Some(pair) = self.codes.windows(2).find(|p| p[1].0 <= p[0].0) {
            return Err(InvariantError::CodeOrder {
                segment,
                code_hash: pair[1].0,
            });
        }
        if let Some(e) = self.codes.par_iter().find_map_first(|(code_hash, code)| {
            let actual = keccak256(code);
            (actual != *code_hash).then_some(InvariantError::CodeHash {
                segment,
                code_hash: *code_hash,
                actual,
            })
        }) {
            return Err(e);
        }
        for a in &self.accounts {
            if let Some(s) = &a.state
                && s.code_hash != KECCAK256_EMPTY
                && self
                    .codes
                    .binary_search_by_key(&s.code_hash, |c| c.0)
                    .is_err()
            {
                return Err(InvariantError::MissingCode {
                    segment,
                    account: a.address,
                    code_hash: s.code_hash,
                });
            }
        }
        Ok(())
    }
}

impl Segment {
    /// [`Dump::validate`]'s checks of this segment's block hashes (segment number
    /// `index`): strictly ascending by block number. Blocks not checked.
    pub(crate) fn validate_block_hashes(&self, index: usize) -> Result<(), InvariantError> {
        if self.block_hashes.windows(2).any(|p| p[1].0 <= p[0].0) {
            return Err(InvariantError::UnorderedBlockHashes(index));
        }
        Ok(())
    }

    /// [`Dump::validate`]'s checks of this segment's witness, if it has one (segment number
    /// `index`): [`Witness`]'s own rules.
    pub(crate) fn validate_witness(&self, index: usize) -> Result<(), InvariantError> {
        match &self.witness {
            Some(w) => w.validate(index),
            None => Ok(()),
        }
    }

    /// [`Dump::validate`]'s checks of one block of this segment (segment number
    /// `index`), `previous` the number of the block before it in the segment (`None` for
    /// the first): consecutive numbers, no block hash at or after the first block, the
    /// block's own invariants, and a well-formed access list naming only what the
    /// pre-state holds. The pre-state itself is checked apart ([`PreState`]'s tables are
    /// sorted for the lookups here). The block need not be one of [`Segment::blocks`]
    /// (the streaming [`crate::inspect_dump`] checks blocks as they are decoded).
    pub(crate) fn validate_block(
        &self,
        index: usize,
        previous: Option<u64>,
        block: &DumpBlock,
    ) -> Result<(), InvariantError> {
        let number = block.number();
        match previous {
            Some(previous) if previous.checked_add(1) != Some(number) => {
                return Err(InvariantError::NotConsecutive {
                    previous,
                    next: number,
                });
            }
            Some(_) => {}
            None => {
                if let Some(&(n, _)) = self.block_hashes.iter().find(|(n, _)| *n >= number) {
                    return Err(InvariantError::BlockHashNotBefore {
                        segment: index,
                        number: n,
                        first_block: number,
                    });
                }
            }
        }
        block.validate()?;
        let bal = &block.access_list;
        alloy_eip7928::validate_block_access_list(bal, block.transactions.len()).map_err(
            |error| InvariantError::MalformedAccessList {
                segment: index,
                block: number,
                error,
            },
        )?;
        let pre = &self.pre_state;
        for account in bal {
            let address = account.address;
            if pre.account(address).is_none() {
                return Err(InvariantError::AccessListAccountNotInPreState {
                    segment: index,
                    block: number,
                    account: address,
                });
            }
            let slots = (account.storage_changes.iter().map(|c| c.slot))
                .chain(account.storage_reads.iter().copied());
            for slot in slots {
                if pre.slot(address, slot).is_none() {
                    return Err(InvariantError::AccessListSlotNotInPreState {
                        segment: index,
                        block: number,
                        account: address,
                        slot,
                    });
                }
            }
        }
        Ok(())
    }

    /// [`Dump::validate`]'s checks of this segment (segment number `index`): at least one
    /// block, its pre-state, its block hashes, then its blocks and their access lists in
    /// order.
    pub(crate) fn validate(&self, index: usize) -> Result<(), InvariantError> {
        if self.blocks.is_empty() {
            return Err(InvariantError::EmptySegment(index));
        }
        self.validate_block_hashes(index)?;
        self.pre_state.validate(index)?;
        self.validate_witness(index)?;
        let mut previous = None;
        for block in &self.blocks {
            self.validate_block(index, previous, block)?;
            previous = Some(block.number());
        }
        Ok(())
    }
}

impl Dump {
    /// A dump of one segment: consecutive blocks (each with its access list) starting from
    /// one pre-state.
    pub fn single_segment(
        meta: DumpMeta,
        blocks: Vec<DumpBlock>,
        block_hashes: Vec<(u64, B256)>,
        pre_state: PreState,
    ) -> Self {
        Self {
            meta,
            segments: vec![Segment {
                blocks,
                block_hashes,
                pre_state,
                witness: None,
            }],
        }
    }

    /// Every block of every segment, segment after segment.
    pub fn blocks(&self) -> impl DoubleEndedIterator<Item = &DumpBlock> + Clone {
        self.segments.iter().flat_map(|s| s.blocks.iter())
    }

    /// Every block of every segment, mutably, segment after segment.
    pub fn blocks_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut DumpBlock> {
        self.segments.iter_mut().flat_map(|s| s.blocks.iter_mut())
    }

    /// The `index`th block of the dump, counting across segments ([`Dump::blocks`]).
    pub fn block(&self, index: usize) -> Option<&DumpBlock> {
        self.blocks().nth(index)
    }

    /// The `index`th block of the dump, mutably ([`Dump::block`]).
    pub fn block_mut(&mut self, index: usize) -> Option<&mut DumpBlock> {
        self.blocks_mut().nth(index)
    }

    /// Number of blocks in all segments.
    pub fn block_count(&self) -> usize {
        self.segments.iter().map(|s| s.blocks.len()).sum()
    }

    /// Number of transactions in all blocks.
    pub fn transaction_count(&self) -> usize {
        self.blocks().map(|b| b.transactions.len()).sum()
    }

    /// Total gas used by all blocks (from the headers).
    pub fn total_gas(&self) -> u64 {
        self.blocks().map(|b| b.header.gas_used).sum()
    }

    /// Check the invariants a replay relies on; [`crate::decode_dump`] and
    /// [`crate::read_dump`] call this, so a dump that loads is consistent as a whole. The
    /// first broken one is returned, naming its segment, block and account where it has
    /// them:
    ///
    /// - per segment: at least one block, the blocks consecutive;
    /// - per block ([`DumpBlock::validate`]): one receipt summary per transaction,
    ///   cumulative gas the running sum of the gas used and the last one the header's gas
    ///   used, withdrawals only with a withdrawals root;
    /// - per segment: block hashes strictly ascending and all for blocks before the
    ///   segment's first block; pre-state accounts sorted by address and each once; slots
    ///   sorted by (address, slot) and each once, every slot of an account the pre-state
    ///   lists, and zero where that account is recorded absent; codes sorted by hash, each
    ///   once, each hashing to its hash, and held for every existing account with code;
    /// - per segment with a witness: no node empty or listed twice, and one node hashing to
    ///   the parent state root (unless that is the empty trie's root);
    /// - per block access list: well-formed EIP-7928 (accounts sorted and unique, storage
    ///   keys and indices sorted, unique and within the block:
    ///   [`alloy_eip7928::validate_block_access_list`]), and every account and slot it
    ///   names in its segment's pre-state.
    ///
    /// Accounts a block creates are in the pre-state too, recorded absent (`state: None`),
    /// with their slots recorded as zero: that is how every producer writes a dump (the
    /// record crate's `touched_pre_state` reads every account and slot the access lists
    /// name at the parent of the segment's first block), and what a replay needs to tell
    /// "does not exist yet" from "missing from the dump".
    ///
    /// A dump without blocks or transactions is consistent (producers may write one);
    /// [`Dump::check_has_work`] refuses it before anything is timed.
    pub fn validate(&self) -> Result<(), InvariantError> {
        // Segments are independent: check them in parallel, report the first in order.
        match self
            .segments
            .par_iter()
            .enumerate()
            .find_map_first(|(i, segment)| segment.validate(i).err())
        {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Refuse a dump with nothing to measure: no blocks, or blocks without a single
    /// transaction (its figures would be 0 gas over some time, or NaN). Loading such a
    /// dump is allowed ([`Dump::validate`] accepts it: a range of empty blocks is a valid
    /// dump to write, read and inspect); anything that times a replay calls this first.
    pub fn check_has_work(&self) -> Result<(), InvariantError> {
        let blocks = self.block_count();
        if blocks == 0 {
            return Err(InvariantError::NoBlocks);
        }
        if self.transaction_count() == 0 {
            return Err(InvariantError::NoTransactions { blocks });
        }
        Ok(())
    }

    /// A summary for `gigagas inspect`.
    pub fn summary(&self) -> DumpSummary {
        DumpSummary::of(self)
    }
}
