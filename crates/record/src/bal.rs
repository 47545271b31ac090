//! Comparing two EIP-7928 block access lists entry by entry.

use alloy_eip7928::{AccountChanges, BlockAccessList};
use alloy_primitives::{Address, Bytes, U256};
use gigagas_chain::Expected;
use std::{
    borrow::Cow,
    collections::{BTreeMap, BTreeSet},
    fmt,
};

/// The first entry in which two block access lists differ. Displayed as
/// `block access list: account <address>: <entry>: expected <expected>, got <got>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("block access list: account {address}: {}: {}", entry.name(), entry.values())]
pub struct BalDifference {
    /// The account.
    pub address: Address,
    /// The entry, with the expected side's value and the other's.
    pub entry: BalEntry,
}

/// An entry of one account in which two block access lists differ, typed by kind: the
/// expected side's value and the other's as an [`Expected`]. A change one side lists and
/// the other does not is `None` on the side without it (shown `absent`). Block access
/// indices are EIP-7928's (0 before the first transaction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BalEntry {
    /// Whether the account is listed at all (shown `present` or `absent`).
    Account(Expected<bool>),
    /// A storage slot's value after the transaction at a block access index.
    StorageChange {
        /// The slot.
        slot: U256,
        /// The block access index.
        index: u64,
        /// The slot's new value on each side.
        values: Expected<Option<U256>>,
    },
    /// Whether a storage slot is read (shown `read` or `not read`).
    StorageRead {
        /// The slot.
        slot: U256,
        /// Whether each side reads it.
        read: Expected<bool>,
    },
    /// The balance after the transaction at a block access index.
    Balance {
        /// The block access index.
        index: u64,
        /// The balance on each side.
        values: Expected<Option<U256>>,
    },
    /// The nonce after the transaction at a block access index.
    Nonce {
        /// The block access index.
        index: u64,
        /// The nonce on each side.
        values: Expected<Option<u64>>,
    },
    /// The code deployed by the transaction at a block access index.
    Code {
        /// The block access index.
        index: u64,
        /// The code on each side.
        values: Expected<Option<Bytes>>,
    },
    /// Lists with the same content that differ in order or duplicates: the entries at the
    /// first position where their encodings part (`None` past a list's end; boxed: two
    /// accounts' changes are large). Shown in their debug form.
    Encoding {
        /// The position in the lists.
        position: usize,
        /// Each list's entry at that position.
        entries: Box<Expected<Option<AccountChanges>>>,
    },
}

impl BalEntry {
    /// The entry in the fixture JSON's words: `account`, `storageChanges[slot 0x1]
    /// postValue at blockAccessIndex 0x1`, `storageReads[slot 0x1]`, `postBalance at
    /// blockAccessIndex 0x1`, `postNonce ...`, `newCode ...`, `encoding of entry 0 (order
    /// or duplicates)`.
    pub fn name(&self) -> Cow<'static, str> {
        match self {
            Self::Account(_) => "account".into(),
            Self::StorageChange { slot, index, .. } => {
                format!("storageChanges[slot {slot:#x}] postValue at blockAccessIndex {index:#x}")
                    .into()
            }
            Self::StorageRead { slot, .. } => format!("storageReads[slot {slot:#x}]").into(),
            Self::Balance { index, .. } => {
                format!("postBalance at blockAccessIndex {index:#x}").into()
            }
            Self::Nonce { index, .. } => format!("postNonce at blockAccessIndex {index:#x}").into(),
            Self::Code { index, .. } => format!("newCode at blockAccessIndex {index:#x}").into(),
            Self::Encoding { position, .. } => {
                format!("encoding of entry {position} (order or duplicates)").into()
            }
        }
    }

    /// The expected side's value and the other's, in display form: `absent` for a change
    /// a side lacks, values in decimal, code in hex.
    pub fn values(&self) -> Expected<String> {
        fn shown<T: fmt::Display>(e: &Expected<Option<T>>) -> Expected<String> {
            e.as_ref()
                .map(|v| v.as_ref().map_or_else(|| "absent".into(), T::to_string))
        }
        let words = |e: &Expected<bool>, yes: &str, no: &str| {
            e.map(|b| if b { yes } else { no }.to_string())
        };
        match self {
            Self::Account(e) => words(e, "present", "absent"),
            Self::StorageRead { read, .. } => words(read, "read", "not read"),
            Self::StorageChange { values, .. } | Self::Balance { values, .. } => shown(values),
            Self::Nonce { values, .. } => shown(values),
            Self::Code { values, .. } => shown(values),
            Self::Encoding { entries, .. } => entries.as_ref().as_ref().map(|e| format!("{e:?}")),
        }
    }
}

/// Compare `got` with `expected`, account by account in address order, then for each
/// account its storage changes (slot by slot, then block access index), storage reads,
/// balance, nonce and code changes (by block access index). `None` when equal.
pub fn first_difference(
    expected: &BlockAccessList,
    got: &BlockAccessList,
) -> Option<BalDifference> {
    let (e, g) = (by_address(expected), by_address(got));
    let addresses: BTreeSet<Address> = e.keys().chain(g.keys()).copied().collect();
    for address in addresses {
        let (a, b) = (e.get(&address), g.get(&address));
        let found = match (a, b) {
            (Some(a), Some(b)) => account_difference(a, b),
            _ => Some(BalEntry::Account(Expected::new(a.is_some(), b.is_some()))),
        };
        if let Some(entry) = found {
            return Some(BalDifference { address, entry });
        }
    }
    encoding_difference(expected, got)
}

/// The first difference between two entries of the same account, in the order
/// [`first_difference`] documents.
fn account_difference(e: &AccountChanges, g: &AccountChanges) -> Option<BalEntry> {
    storage_changes_difference(e, g)
        .or_else(|| storage_reads_difference(e, g))
        .or_else(|| {
            let balance = |a: &AccountChanges| {
                per_index(&a.balance_changes, |c| {
                    (c.block_access_index.0, c.post_balance)
                })
            };
            first_keyed(&balance(e), &balance(g))
                .map(|(index, values)| BalEntry::Balance { index, values })
        })
        .or_else(|| {
            let nonce = |a: &AccountChanges| {
                per_index(&a.nonce_changes, |c| (c.block_access_index.0, c.new_nonce))
            };
            first_keyed(&nonce(e), &nonce(g))
                .map(|(index, values)| BalEntry::Nonce { index, values })
        })
        .or_else(|| {
            let code = |a: &AccountChanges| {
                per_index(&a.code_changes, |c| {
                    (c.block_access_index.0, c.new_code.clone())
                })
            };
            first_keyed(&code(e), &code(g)).map(|(index, values)| BalEntry::Code { index, values })
        })
}

/// Storage changes: slot by slot, then by block access index.
fn storage_changes_difference(e: &AccountChanges, g: &AccountChanges) -> Option<BalEntry> {
    let slots = |a: &AccountChanges| -> BTreeMap<U256, BTreeMap<u64, U256>> {
        a.storage_changes
            .iter()
            .map(|s| {
                let values = s.changes.iter();
                (
                    s.slot,
                    values
                        .map(|c| (c.block_access_index.0, c.new_value))
                        .collect(),
                )
            })
            .collect()
    };
    let (es, gs) = (slots(e), slots(g));
    let none = BTreeMap::new();
    let all: BTreeSet<U256> = es.keys().chain(gs.keys()).copied().collect();
    all.into_iter().find_map(|slot| {
        first_keyed(
            es.get(&slot).unwrap_or(&none),
            gs.get(&slot).unwrap_or(&none),
        )
        .map(|(index, values)| BalEntry::StorageChange {
            slot,
            index,
            values,
        })
    })
}

/// Storage reads: the first slot one side reads and the other does not.
fn storage_reads_difference(e: &AccountChanges, g: &AccountChanges) -> Option<BalEntry> {
    let reads =
        |a: &AccountChanges| -> BTreeSet<U256> { a.storage_reads.iter().copied().collect() };
    let (er, gr) = (reads(e), reads(g));
    let slot = *er.symmetric_difference(&gr).next()?;
    Some(BalEntry::StorageRead {
        slot,
        read: Expected::new(er.contains(&slot), gr.contains(&slot)),
    })
}

/// Changes keyed by block access index.
fn per_index<T, V>(changes: &[T], entry: impl Fn(&T) -> (u64, V)) -> BTreeMap<u64, V> {
    changes.iter().map(entry).collect()
}

/// Lists with the same content may still differ in order or duplicates: the first entry
/// where their encodings part.
fn encoding_difference(expected: &BlockAccessList, got: &BlockAccessList) -> Option<BalDifference> {
    if expected == got {
        return None;
    }
    let i = expected
        .iter()
        .zip(got.iter())
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(got.len()));
    let address = expected
        .get(i)
        .or(got.get(i))
        .map(|a| a.address)
        .unwrap_or_default();
    Some(BalDifference {
        address,
        entry: BalEntry::Encoding {
            position: i,
            entries: Box::new(Expected::new(expected.get(i).cloned(), got.get(i).cloned())),
        },
    })
}

/// `got` without the read-only accesses `expected` lacks: accounts `expected` does not list
/// that `got` lists with no change at all (an address access, maybe with storage reads), and
/// storage reads of listed accounts that `expected` neither reads nor changes.
///
/// revm's builder records such accesses where EIP-7928 does not count them (typically an
/// access after an exceptional halt, e.g. out of gas before the target is accessed). When
/// `first_difference(expected, &without_extra_reads(expected, got))` is `None`, every
/// difference between the two lists is such an extra read-only access in `got`; any
/// other difference (a change value or index, an entry `got` lacks) remains.
pub fn without_extra_reads(expected: &BlockAccessList, got: &BlockAccessList) -> BlockAccessList {
    let expected = by_address(expected);
    got.iter()
        .filter_map(|a| match expected.get(&a.address) {
            None => {
                let changes = !a.storage_changes.is_empty()
                    || !a.balance_changes.is_empty()
                    || !a.nonce_changes.is_empty()
                    || !a.code_changes.is_empty();
                changes.then(|| a.clone())
            }
            Some(e) => {
                let mut a = a.clone();
                a.storage_reads.retain(|slot| {
                    e.storage_reads.contains(slot)
                        || e.storage_changes.iter().any(|c| c.slot == *slot)
                });
                Some(a)
            }
        })
        .collect()
}

/// The EIP-8282 builder-request predeploys, which alloy-evm 0.39 calls after every
/// Amsterdam block; the devnet the execution-spec-tests Amsterdam fixtures were filled for
/// (bal@v5.7.0) makes no such calls.
pub const EIP8282_PREDEPLOYS: [Address; 2] = [
    alloy_primitives::address!("0x0000BFF46984E3725691FA540A8C7589300D8282"),
    alloy_primitives::address!("0x000064D678505AD48F8CCB093BC65613800E8282"),
];

/// `bal` without the entries of the [`EIP8282_PREDEPLOYS`] that only record a touch (no
/// reads, no changes: the predeploys have no code) and that `reference` (the list to
/// compare with, when there is one) does not list. Everything else is kept as built.
pub fn without_eip8282_touches(
    bal: &BlockAccessList,
    reference: Option<&BlockAccessList>,
) -> BlockAccessList {
    bal.iter()
        .filter(|a| {
            let untouched = a.storage_changes.is_empty()
                && a.storage_reads.is_empty()
                && a.balance_changes.is_empty()
                && a.nonce_changes.is_empty()
                && a.code_changes.is_empty();
            !(EIP8282_PREDEPLOYS.contains(&a.address)
                && untouched
                && !reference.is_some_and(|r| r.iter().any(|f| f.address == a.address)))
        })
        .cloned()
        .collect()
}

/// Why an access list a block carries is not a well-formed EIP-7928 list for a block of
/// `transactions` transactions and `gas_limit` gas: accounts, storage keys and block access
/// indices in canonical order without duplicates, indices within the block, no empty
/// storage change list (alloy-eip7928's validation), and at most one item per
/// [`alloy_eip7928::ITEM_COST`] gas of the block's limit.
pub fn structure_error(
    bal: &BlockAccessList,
    transactions: usize,
    gas_limit: u64,
) -> Option<String> {
    if let Err(e) = alloy_eip7928::validate_block_access_list(bal, transactions) {
        return Some(e.to_string());
    }
    let items = alloy_eip7928::total_bal_items(bal);
    let max = gas_limit / alloy_eip7928::ITEM_COST as u64;
    (items > max)
        .then(|| format!("{items} items, more than the {max} a gas limit of {gas_limit} allows"))
}

fn by_address(bal: &BlockAccessList) -> BTreeMap<Address, &AccountChanges> {
    bal.iter().map(|a| (a.address, a)).collect()
}

/// First key at which two maps differ, with both values (`None` for a missing one).
fn first_keyed<V: PartialEq + Clone>(
    a: &BTreeMap<u64, V>,
    b: &BTreeMap<u64, V>,
) -> Option<(u64, Expected<Option<V>>)> {
    let keys: BTreeSet<u64> = a.keys().chain(b.keys()).copied().collect();
    keys.into_iter()
        .find(|k| a.get(k) != b.get(k))
        .map(|k| (k, Expected::new(a.get(&k).cloned(), b.get(&k).cloned())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_eip7928::{BalanceChange, BlockAccessIndex};

    #[test]
    fn names_the_first_differing_balance() {
        let mut a = AccountChanges::new(Address::repeat_byte(1));
        a.balance_changes
            .push(BalanceChange::new(BlockAccessIndex(1), U256::from(5)));
        let expected = vec![a.clone()];
        assert_eq!(first_difference(&expected, &expected), None);
        a.balance_changes[0].post_balance = U256::from(6);
        let d = first_difference(&expected, &vec![a]).unwrap();
        assert_eq!(
            d.entry,
            BalEntry::Balance {
                index: 1,
                values: Expected::new(Some(U256::from(5)), Some(U256::from(6)))
            }
        );
        assert_eq!(
            d.to_string(),
            format!(
                "block access list: account {}: postBalance at blockAccessIndex 0x1: expected 5, got 6",
                d.address
            )
        );
        let d = first_difference(&expected, &vec![]).unwrap();
        assert_eq!(d.entry, BalEntry::Account(Expected::new(true, false)));
        assert_eq!(
            (d.entry.name(), d.entry.values().got),
            ("account".into(), "absent".into())
        );
    }

    /// Every kind of entry, displayed as the comparison has always shown it.
    #[test]
    fn displays_every_kind_of_entry() {
        use alloy_eip7928::{CodeChange, NonceChange, SlotChanges, StorageChange};
        let address = Address::repeat_byte(1);
        let shown = |expected: &AccountChanges, got: &AccountChanges| {
            let d = first_difference(&vec![expected.clone()], &vec![got.clone()]).unwrap();
            assert_eq!(d.address, address);
            d.to_string()
                .strip_prefix(&format!("block access list: account {address}: "))
                .unwrap()
                .to_string()
        };
        let empty = AccountChanges::new(address);

        let mut slot = empty.clone();
        slot.storage_changes.push(SlotChanges::new(
            U256::from(0x10),
            vec![StorageChange::new(BlockAccessIndex(2), U256::from(9))],
        ));
        assert_eq!(
            shown(&slot, &empty),
            "storageChanges[slot 0x10] postValue at blockAccessIndex 0x2: expected 9, got absent"
        );
        let mut nonce = empty.clone();
        nonce
            .nonce_changes
            .push(NonceChange::new(BlockAccessIndex(3), 7));
        assert_eq!(
            shown(&empty, &nonce),
            "postNonce at blockAccessIndex 0x3: expected absent, got 7"
        );
        let mut code = empty.clone();
        code.code_changes.push(CodeChange::new(
            BlockAccessIndex(1),
            Bytes::from_static(&[0x60, 0x00]),
        ));
        assert_eq!(
            shown(&code, &empty),
            "newCode at blockAccessIndex 0x1: expected 0x6000, got absent"
        );

        // The same content in another order.
        let (a, b) = (account(1), account(2));
        let d = first_difference(&vec![a.clone(), b.clone()], &vec![b.clone(), a.clone()]).unwrap();
        assert_eq!(
            d.entry,
            BalEntry::Encoding {
                position: 0,
                entries: Box::new(Expected::new(Some(a.clone()), Some(b.clone())))
            }
        );
        assert_eq!(
            d.to_string(),
            format!(
                "block access list: account {}: encoding of entry 0 (order or duplicates): expected {:?}, got {:?}",
                a.address,
                Some(&a),
                Some(&b)
            )
        );
    }

    /// An account with one balance change and one storage read.
    fn account(byte: u8) -> AccountChanges {
        let mut a = AccountChanges::new(Address::repeat_byte(byte));
        a.balance_changes
            .push(BalanceChange::new(BlockAccessIndex(1), U256::from(5)));
        a.storage_reads.push(U256::from(7));
        a
    }

    #[test]
    fn only_extra_read_only_accesses_are_taken_out() {
        let expected = vec![account(1)];
        // An extra account with no change, and an extra read of a listed account.
        let mut got = expected.clone();
        got[0].storage_reads.push(U256::from(8));
        let mut touched = AccountChanges::new(Address::repeat_byte(2));
        touched.storage_reads.push(U256::from(1));
        got.push(touched);
        let d = first_difference(&expected, &got).unwrap();
        assert_eq!(
            d.entry,
            BalEntry::StorageRead {
                slot: U256::from(8),
                read: Expected::new(false, true)
            }
        );
        assert_eq!(
            (d.entry.name(), d.entry.values()),
            (
                "storageReads[slot 0x8]".into(),
                Expected::new("not read".into(), "read".into())
            )
        );
        assert_eq!(without_extra_reads(&expected, &got), expected);

        // An extra account with a change is no read-only access.
        let mut changed = got.clone();
        changed[1]
            .balance_changes
            .push(BalanceChange::new(BlockAccessIndex(1), U256::from(1)));
        let d = first_difference(&expected, &without_extra_reads(&expected, &changed)).unwrap();
        assert_eq!(d.entry, BalEntry::Account(Expected::new(false, true)));
        assert_eq!(d.entry.values().got, "present");

        // Nor is a missing read, a missing account or a different value.
        let mut missing = got.clone();
        missing[0].storage_reads.clear();
        let d = first_difference(&expected, &without_extra_reads(&expected, &missing)).unwrap();
        assert_eq!(
            (d.entry.name(), d.entry.values().got),
            ("storageReads[slot 0x7]".into(), "not read".into())
        );
        let d = first_difference(&expected, &without_extra_reads(&expected, &vec![])).unwrap();
        assert_eq!(d.entry, BalEntry::Account(Expected::new(true, false)));
        let mut value = got;
        value[0].balance_changes[0].post_balance = U256::from(6);
        let d = first_difference(&expected, &without_extra_reads(&expected, &value)).unwrap();
        assert_eq!(d.entry.name(), "postBalance at blockAccessIndex 0x1");
    }
}
