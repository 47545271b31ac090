//! Three designs of a block access list and their encoded sizes: `full`, `keys`
//! and `writes`, as the follow-up to the original experiment compared them ("Reducing BAL
//! size with 10 GigaGas/s EVM throughput in the presence of I/O").
//!
//! - **`full`** ([`FullAccessList`]): the state diffs plus every key the block reads or
//!   writes *with its value at the start of the block*: every account's balance, nonce and
//!   code hash (or that it does not exist), every read or written slot's value. A replay
//!   that decodes it needs no state read but bytecode.
//! - **`keys`**: [EIP-7928](https://eips.ethereum.org/EIPS/eip-7928) as specified, the
//!   dump's own [`BlockAccessList`]: the state diffs plus the read keys without values.
//! - **`writes`** ([`writes_only`]): the state diffs only: no `storage_reads`, and no
//!   account that the block only reads.
//!
//! Every size is the length of the design's RLP encoding, the encoding EIP-7928 gives the
//! list (the bytes whose keccak is the header's `block_access_list_hash` for `keys`), for
//! one block ([`BlockDesignSizes`]); [`design_sizes`] gives them for every block of a dump
//! with a summary per design (mean, median, largest; [`SizeSummary`]).
//!
//! # The `full` encoding
//!
//! RLP, in EIP-7928's shape with the values added. Integers are RLP scalars (big endian,
//! no leading zero bytes, zero as the empty string `0x80`), `address` 20 bytes, `code_hash`
//! 32 bytes, `code` a byte string:
//!
//! ```text
//! FullAccessList  = [FullAccount, ...]          accounts ascending by address, exactly the
//!                                               accounts of the block's EIP-7928 list
//! FullAccount     = [address, storage_changes, storage_reads,
//!                    balance_changes, nonce_changes, code_changes, pre?]
//! storage_changes = [[slot, pre_value, [[block_access_index, post_value], ...]], ...]
//! storage_reads   = [[slot, value], ...]
//! balance_changes = [[block_access_index, post_balance], ...]     as EIP-7928
//! nonce_changes   = [[block_access_index, post_nonce], ...]       as EIP-7928
//! code_changes    = [[block_access_index, code], ...]             as EIP-7928
//! pre             = [balance, nonce, code_hash]
//! ```
//!
//! Against EIP-7928's `AccountChanges` (`[address, [[slot, [[index, value], ...]], ...],
//! [slot, ...], balance_changes, nonce_changes, code_changes]`) three things are added and
//! nothing is removed or reordered:
//!
//! - each written slot carries `pre_value`, its value at the start of the block, after its
//!   key;
//! - each read slot is a pair `[slot, value]`, its value at the start of the block (a slot
//!   the block reads and does not write; its value through the whole block);
//! - the account ends with `pre`, the account at the start of the block, or ends after
//!   `code_changes` when the account does not exist there (a block that creates it, or
//!   only looks at an empty address). An account without code has the empty code's hash
//!   (`KECCAK256_EMPTY`).
//!
//! Slots and changes keep EIP-7928's order (slots ascending, changes by index), so dropping
//! the values gives the block's EIP-7928 list back ([`FullAccessList::to_block_access_list`]).
//! "The start of the block" is the segment's pre-state overridden by what the segment's
//! earlier blocks wrote (the last write of every field in their access lists; an account
//! that was absent and had any field written exists from then on, with the fields not
//! written zero and empty code), the state the executor's replay starts each block from.
//!
//! Decoding ([`alloy_rlp::Decodable`], derived) checks the RLP shape and nothing more:
//! what it gives is every account of the block with its fields at the start of the block
//! ([`FullAccount::pre_state`]) and every slot with its value there
//! ([`FullAccount::pre_slots`]), enough to build a replay's state without reading
//! anything but bytecode. The code itself is not in the list: code deployed by the block is
//! in `code_changes`, code that existed before is read by its hash.

use crate::{AccountState, Dump, PreState, Segment};
use alloy_eip7928::{
    AccountChanges, BalanceChange, BlockAccessList, CodeChange, NonceChange, SlotChanges,
    StorageChange,
};
use alloy_primitives::{Address, B256, U256, map::HashMap};
use alloy_rlp::{Encodable, RlpDecodable, RlpDecodableWrapper, RlpEncodable, RlpEncodableWrapper};

/// A state the `full` list's values could not be taken from: an account or slot that a
/// block's access list names and its segment's pre-state lacks (a dump that passed
/// [`Dump::validate`] has none), or a block the segment does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DesignError {
    /// The access list of block `block` names an account the segment's pre-state does not
    /// list (neither present nor recorded absent).
    #[error("block {block}: account {account} is in the access list but not in the pre-state")]
    AccountNotInPreState {
        /// Block number.
        block: u64,
        /// The account.
        account: Address,
    },
    /// The access list of block `block` names a slot the segment's pre-state does not hold.
    #[error(
        "block {block}: storage slot {slot:#x} of {account} is in the access list but not in the pre-state"
    )]
    SlotNotInPreState {
        /// Block number.
        block: u64,
        /// The account.
        account: Address,
        /// The slot.
        slot: U256,
    },
    /// A block index past the segment's end.
    #[error("block index {index} is past the end of a segment of {blocks} blocks")]
    NoSuchBlock {
        /// The index asked for, counted from the segment's first block.
        index: usize,
        /// The segment's block count.
        blocks: usize,
    },
}

/// One of the three access-list designs (the [module documentation](self) describes
/// each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessListDesign {
    /// State diffs plus every read or written key with its value at the start of the block
    /// ([`FullAccessList`]).
    Full,
    /// EIP-7928 as specified: state diffs plus read keys without values.
    Keys,
    /// State diffs only ([`writes_only`]).
    Writes,
}

impl AccessListDesign {
    /// Every design, largest list first.
    pub const ALL: [Self; 3] = [Self::Full, Self::Keys, Self::Writes];

    /// The design's name as the command line and the tables write it: `full`, `keys`,
    /// `writes`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Keys => "keys",
            Self::Writes => "writes",
        }
    }
}

impl std::fmt::Display for AccessListDesign {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An account's fields at the start of a block, the `pre` item of a [`FullAccount`]:
/// `[balance, nonce, code_hash]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, RlpEncodable, RlpDecodable)]
pub struct PreAccountFields {
    /// Balance in wei.
    pub balance: U256,
    /// Nonce.
    pub nonce: u64,
    /// Keccak of the code (`KECCAK256_EMPTY` for none).
    pub code_hash: B256,
}

impl From<AccountState> for PreAccountFields {
    fn from(s: AccountState) -> Self {
        Self {
            balance: s.balance,
            nonce: s.nonce,
            code_hash: s.code_hash,
        }
    }
}

impl From<PreAccountFields> for AccountState {
    fn from(p: PreAccountFields) -> Self {
        Self {
            balance: p.balance,
            nonce: p.nonce,
            code_hash: p.code_hash,
        }
    }
}

/// A written slot of the `full` list: `[slot, pre_value, [[block_access_index,
/// post_value], ...]]`, EIP-7928's `SlotChanges` with the value at the start of the block
/// after the key.
#[derive(Debug, Clone, PartialEq, Eq, RlpEncodable, RlpDecodable)]
pub struct FullSlotChanges {
    /// The slot's key.
    pub slot: U256,
    /// The slot's value at the start of the block.
    pub pre_value: U256,
    /// The block's writes to it, by block access index, as EIP-7928 lists them.
    pub changes: Vec<StorageChange>,
}

/// A slot the block reads and does not write, in the `full` list: `[slot, value]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, RlpEncodable, RlpDecodable)]
pub struct SlotRead {
    /// The slot's key.
    pub slot: U256,
    /// Its value at the start of the block (and through it: the block does not write it).
    pub value: U256,
}

/// One account of a [`FullAccessList`]: EIP-7928's `AccountChanges` with every slot's value
/// at the start of the block and, last, the account there (`pre`; omitted from the encoding
/// when the account does not exist at the start of the block).
#[derive(Debug, Clone, PartialEq, Eq, RlpEncodable, RlpDecodable)]
#[rlp(trailing(no_gaps))]
pub struct FullAccount {
    /// The account's address.
    pub address: Address,
    /// The slots the block writes, ascending, each with its value at the start of the block.
    pub storage_changes: Vec<FullSlotChanges>,
    /// The slots the block only reads, ascending, each with its value.
    pub storage_reads: Vec<SlotRead>,
    /// Balance changes, as EIP-7928 lists them.
    pub balance_changes: Vec<BalanceChange>,
    /// Nonce changes, as EIP-7928 lists them.
    pub nonce_changes: Vec<NonceChange>,
    /// Code changes, as EIP-7928 lists them.
    pub code_changes: Vec<CodeChange>,
    /// The account at the start of the block; `None` if it does not exist there.
    pub pre: Option<PreAccountFields>,
}

impl FullAccount {
    /// The account at the start of the block: `None` if it does not exist there.
    pub fn pre_state(&self) -> Option<AccountState> {
        self.pre.map(AccountState::from)
    }

    /// Every slot the block reads or writes with its value at the start of the block:
    /// the written slots (ascending), then the read ones (ascending).
    pub fn pre_slots(&self) -> impl Iterator<Item = (U256, U256)> + '_ {
        (self.storage_changes.iter().map(|s| (s.slot, s.pre_value)))
            .chain(self.storage_reads.iter().map(|r| (r.slot, r.value)))
    }

    /// The account's EIP-7928 entry: this one without its values.
    pub fn to_account_changes(&self) -> AccountChanges {
        AccountChanges {
            address: self.address,
            storage_changes: (self.storage_changes.iter())
                .map(|s| SlotChanges::new(s.slot, s.changes.clone()))
                .collect(),
            storage_reads: self.storage_reads.iter().map(|r| r.slot).collect(),
            balance_changes: self.balance_changes.clone(),
            nonce_changes: self.nonce_changes.clone(),
            code_changes: self.code_changes.clone(),
        }
    }
}

/// The `full` design of one block's access list: the block's EIP-7928 list with the value
/// of every key it names at the start of the block. Its RLP encoding is the one the
/// [module documentation](self#the-full-encoding) gives; `alloy_rlp::encode` and
/// `<FullAccessList as alloy_rlp::Decodable>::decode` write and read it.
#[derive(Debug, Clone, Default, PartialEq, Eq, RlpEncodableWrapper, RlpDecodableWrapper)]
pub struct FullAccessList(pub Vec<FullAccount>);

impl FullAccessList {
    /// The list of a block whose EIP-7928 list is `bal`, its values read from `state` (the
    /// state at the start of block number `block`, which names it in errors).
    pub fn build(
        state: &BlockStartState<'_>,
        block: u64,
        bal: &BlockAccessList,
    ) -> Result<Self, DesignError> {
        bal.iter()
            .map(|a| {
                let address = a.address;
                let pre = state
                    .account(address)
                    .ok_or(DesignError::AccountNotInPreState {
                        block,
                        account: address,
                    })?;
                let slot = |slot: U256| {
                    state
                        .slot(address, slot)
                        .ok_or(DesignError::SlotNotInPreState {
                            block,
                            account: address,
                            slot,
                        })
                };
                Ok(FullAccount {
                    address,
                    storage_changes: (a.storage_changes.iter())
                        .map(|s| {
                            Ok(FullSlotChanges {
                                slot: s.slot,
                                pre_value: slot(s.slot)?,
                                changes: s.changes.clone(),
                            })
                        })
                        .collect::<Result<_, DesignError>>()?,
                    storage_reads: (a.storage_reads.iter())
                        .map(|&s| {
                            Ok(SlotRead {
                                slot: s,
                                value: slot(s)?,
                            })
                        })
                        .collect::<Result<_, DesignError>>()?,
                    balance_changes: a.balance_changes.clone(),
                    nonce_changes: a.nonce_changes.clone(),
                    code_changes: a.code_changes.clone(),
                    pre: pre.map(PreAccountFields::from),
                })
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// The accounts, ascending by address.
    pub fn accounts(&self) -> &[FullAccount] {
        &self.0
    }

    /// The block's EIP-7928 list: this one without its values (equal to the list it was
    /// built from).
    pub fn to_block_access_list(&self) -> BlockAccessList {
        self.0.iter().map(FullAccount::to_account_changes).collect()
    }

    /// The RLP encoding ([module documentation](self#the-full-encoding)).
    pub fn encode_to_vec(&self) -> Vec<u8> {
        alloy_rlp::encode(self)
    }
}

/// The state at the start of one block of a segment, for what its access lists name: the
/// segment's pre-state overridden by what its earlier blocks wrote. It starts at the
/// segment's first block ([`BlockStartState::new`]) and moves on a block at a time
/// ([`BlockStartState::apply`]); what it keeps is the writes of the blocks passed, not a
/// copy of the pre-state.
#[derive(Debug, Clone)]
pub struct BlockStartState<'a> {
    pre: &'a PreState,
    accounts: HashMap<Address, Option<AccountState>>,
    slots: HashMap<(Address, U256), U256>,
}

impl<'a> BlockStartState<'a> {
    /// The state at the start of the first block of the segment whose pre-state is `pre`
    /// (its tables sorted, as [`Dump::validate`] checks).
    pub fn new(pre: &'a PreState) -> Self {
        Self {
            pre,
            accounts: HashMap::default(),
            slots: HashMap::default(),
        }
    }

    /// The account: `None` if neither the pre-state nor an earlier block has it,
    /// `Some(None)` if it does not exist at the start of the block.
    pub fn account(&self, address: Address) -> Option<Option<AccountState>> {
        match self.accounts.get(&address) {
            Some(written) => Some(*written),
            None => self.pre.account(address).map(|s| s.copied()),
        }
    }

    /// The slot's value: `None` if neither the pre-state nor an earlier block has it.
    pub fn slot(&self, address: Address, slot: U256) -> Option<U256> {
        self.slots
            .get(&(address, slot))
            .copied()
            .or_else(|| self.pre.slot(address, slot))
    }

    /// Move past a block whose access list is `bal`: the last write of every field and
    /// slot it changes becomes the value at the start of the next block. An account with
    /// any field written exists from then on (an absent one with the fields not written
    /// zero and empty code), as the executor's replay carries state from block to block.
    /// Accounts the pre-state does not list are left to [`FullAccessList::build`] to
    /// refuse.
    pub fn apply(&mut self, bal: &BlockAccessList) {
        for a in bal {
            let (balance, nonce, code_hash) = (
                a.balance_post_state(),
                a.nonce_post_state(),
                a.code_hash_post_state(),
            );
            if (balance.is_some() || nonce.is_some() || code_hash.is_some())
                && let Some(before) = self.account(a.address)
            {
                let mut state = before.unwrap_or(AccountState {
                    balance: U256::ZERO,
                    nonce: 0,
                    code_hash: alloy_primitives::KECCAK256_EMPTY,
                });
                state.balance = balance.unwrap_or(state.balance);
                state.nonce = nonce.unwrap_or(state.nonce);
                state.code_hash = code_hash.unwrap_or(state.code_hash);
                self.accounts.insert(a.address, Some(state));
            }
            for (slot, value) in a.storage_post_states() {
                self.slots.insert((a.address, slot), value);
            }
        }
    }
}

/// The `full` list of every block of `segment`, in order, walking it once.
pub fn full_access_lists(segment: &Segment) -> Result<Vec<FullAccessList>, DesignError> {
    let mut state = BlockStartState::new(&segment.pre_state);
    segment
        .blocks
        .iter()
        .map(|block| {
            let full = FullAccessList::build(&state, block.number(), &block.access_list)?;
            state.apply(&block.access_list);
            Ok(full)
        })
        .collect()
}

/// The `full` list of the block at index `b` of `segment` (0 for its first block): its
/// values are the segment's pre-state overridden by what blocks `0..b` wrote.
pub fn full_access_list(segment: &Segment, b: usize) -> Result<FullAccessList, DesignError> {
    let block = segment.blocks.get(b).ok_or(DesignError::NoSuchBlock {
        index: b,
        blocks: segment.blocks.len(),
    })?;
    let mut state = BlockStartState::new(&segment.pre_state);
    for earlier in &segment.blocks[..b] {
        state.apply(&earlier.access_list);
    }
    FullAccessList::build(&state, block.number(), &block.access_list)
}

/// The `writes` design of `bal`: its accounts without `storage_reads`, less the accounts
/// that then change nothing (those the block only reads).
pub fn writes_only(bal: &BlockAccessList) -> BlockAccessList {
    bal.iter()
        .filter(|a| {
            a.storage_changes.iter().any(|s| !s.changes.is_empty())
                || !a.balance_changes.is_empty()
                || !a.nonce_changes.is_empty()
                || !a.code_changes.is_empty()
        })
        .map(|a| AccountChanges {
            storage_reads: Vec::new(),
            ..a.clone()
        })
        .collect()
}

/// One block's access list in each design, as the length in bytes of its RLP encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct BlockDesignSizes {
    /// Block number.
    pub block: u64,
    /// The `full` list ([`FullAccessList`]).
    pub full: usize,
    /// The EIP-7928 list as specified (the dump's own).
    pub keys: usize,
    /// The state diffs only ([`writes_only`]).
    pub writes: usize,
}

impl BlockDesignSizes {
    /// The sizes of a block numbered `block` whose EIP-7928 list is `bal`, at the start of
    /// which the state is `state`.
    pub fn of(
        state: &BlockStartState<'_>,
        block: u64,
        bal: &BlockAccessList,
    ) -> Result<Self, DesignError> {
        Ok(Self {
            block,
            full: FullAccessList::build(state, block, bal)?.length(),
            keys: bal.length(),
            writes: writes_only(bal).length(),
        })
    }

    /// The size of `design`'s list, bytes.
    pub const fn get(&self, design: AccessListDesign) -> usize {
        match design {
            AccessListDesign::Full => self.full,
            AccessListDesign::Keys => self.keys,
            AccessListDesign::Writes => self.writes,
        }
    }
}

/// One design's sizes over the blocks of a dump, bytes; the `_kb` methods give them in KB
/// (1 KB = 1000 bytes, as the follow-up's figures are written).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SizeSummary {
    /// The design.
    pub design: AccessListDesign,
    /// Mean over the blocks (0 for none).
    pub mean: f64,
    /// Median over the blocks: the middle block's, or the mean of the two middle blocks'
    /// for an even count (0 for none).
    pub p50: f64,
    /// The largest block's (0 for none).
    pub max: usize,
    /// Sum over the blocks.
    pub total: usize,
}

impl SizeSummary {
    /// The summary of `sizes`, `design`'s size of each block, in any order.
    pub fn of(design: AccessListDesign, sizes: impl IntoIterator<Item = usize>) -> Self {
        let mut sizes: Vec<usize> = sizes.into_iter().collect();
        sizes.sort_unstable();
        let n = sizes.len();
        let total: usize = sizes.iter().sum();
        let p50 = match n {
            0 => 0.0,
            _ if n % 2 == 1 => sizes[n / 2] as f64,
            _ => (sizes[n / 2 - 1] + sizes[n / 2]) as f64 / 2.0,
        };
        Self {
            design,
            mean: if n == 0 { 0.0 } else { total as f64 / n as f64 },
            p50,
            max: sizes.last().copied().unwrap_or(0),
            total,
        }
    }

    /// [`SizeSummary::mean`] in KB.
    pub fn mean_kb(&self) -> f64 {
        self.mean / 1000.0
    }

    /// [`SizeSummary::p50`] in KB.
    pub fn p50_kb(&self) -> f64 {
        self.p50 / 1000.0
    }

    /// [`SizeSummary::max`] in KB.
    pub fn max_kb(&self) -> f64 {
        self.max as f64 / 1000.0
    }
}

/// Every block's size in every design, in the dump's block order ([`Dump::blocks`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DesignSizes {
    /// One entry per block.
    pub blocks: Vec<BlockDesignSizes>,
}

impl DesignSizes {
    /// The sizes of the blocks of `dump`, each segment walked once from its pre-state.
    pub fn of(dump: &Dump) -> Result<Self, DesignError> {
        let mut blocks = Vec::with_capacity(dump.block_count());
        for segment in &dump.segments {
            let mut state = BlockStartState::new(&segment.pre_state);
            for block in &segment.blocks {
                blocks.push(BlockDesignSizes::of(
                    &state,
                    block.number(),
                    &block.access_list,
                )?);
                state.apply(&block.access_list);
            }
        }
        Ok(Self { blocks })
    }

    /// `design`'s summary over the blocks.
    pub fn summary(&self, design: AccessListDesign) -> SizeSummary {
        SizeSummary::of(design, self.blocks.iter().map(|b| b.get(design)))
    }

    /// Every design's summary, [`AccessListDesign::ALL`]'s order.
    pub fn summaries(&self) -> [SizeSummary; 3] {
        AccessListDesign::ALL.map(|d| self.summary(d))
    }
}

/// The lines `gigagas inspect` prints, one per design, in its `key  value` layout: the
/// mean, median and largest block's list in KB (RLP), and the share of `full`'s mean, e.g.
/// `BAL size keys     mean 110.3 KB, p50 104.2 KB, max 301.9 KB (52 % of full)`.
impl std::fmt::Display for DesignSizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [full, ..] = self.summaries();
        for s in self.summaries() {
            write!(
                f,
                "{:<18}mean {:.1} KB, p50 {:.1} KB, max {:.1} KB",
                format!("BAL size {}", s.design),
                s.mean_kb(),
                s.p50_kb(),
                s.max_kb(),
            )?;
            match s.design {
                AccessListDesign::Full => writeln!(f, " per block (RLP)")?,
                _ if full.mean > 0.0 => {
                    writeln!(f, " ({:.0} % of full)", 100.0 * s.mean / full.mean)?
                }
                _ => writeln!(f)?,
            }
        }
        Ok(())
    }
}

/// Every block's size in every design ([`DesignSizes::of`]).
pub fn design_sizes(dump: &Dump) -> Result<DesignSizes, DesignError> {
    DesignSizes::of(dump)
}
