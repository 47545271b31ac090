//! Comparing two EIP-7928 block access lists entry by entry.

use alloy_eip7928::{AccountChanges, BlockAccessList};
use alloy_primitives::{Address, U256};
use std::collections::{BTreeMap, BTreeSet};

/// The first entry in which two block access lists differ.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("block access list: account {address}: {entry}: expected {expected}, got {got}")]
pub struct BalDifference {
    /// The account.
    pub address: Address,
    /// The entry, in the fixture JSON's words: `account`, `storageChanges[slot 0x01]`,
    /// `storageReads`, `postBalance at blockAccessIndex 0x01`, `postNonce ...`,
    /// `newCode ...`.
    pub entry: String,
    /// The expected side's value (`absent` if it has none).
    pub expected: String,
    /// The other side's value (`absent` if it has none).
    pub got: String,
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
        let found = match (e.get(&address), g.get(&address)) {
            (Some(a), Some(b)) => account_difference(a, b),
            (Some(_), None) => Some(("account".into(), "present".into(), "absent".into())),
            (None, Some(_)) => Some(("account".into(), "absent".into(), "present".into())),
            (None, None) => unreachable!("the address comes from one of the maps"),
        };
        if let Some((entry, expected, got)) = found {
            return Some(BalDifference {
                address,
                entry,
                expected,
                got,
            });
        }
    }
    encoding_difference(expected, got)
}

/// A difference inside one account: (entry, expected, got).
type Found = (String, String, String);

/// The first difference between two entries of the same account, in the order
/// [`first_difference`] documents.
fn account_difference(e: &AccountChanges, g: &AccountChanges) -> Option<Found> {
    storage_changes_difference(e, g)
        .or_else(|| storage_reads_difference(e, g))
        .or_else(|| {
            let balance = |a: &AccountChanges| {
                per_index(&a.balance_changes, |c| {
                    (c.block_access_index.0, c.post_balance.to_string())
                })
            };
            let nonce = |a: &AccountChanges| {
                per_index(&a.nonce_changes, |c| {
                    (c.block_access_index.0, c.new_nonce.to_string())
                })
            };
            let code = |a: &AccountChanges| {
                per_index(&a.code_changes, |c| {
                    (c.block_access_index.0, c.new_code.to_string())
                })
            };
            [
                ("postBalance", balance(e), balance(g)),
                ("postNonce", nonce(e), nonce(g)),
                ("newCode", code(e), code(g)),
            ]
            .into_iter()
            .find_map(|(name, x, y)| {
                first_keyed(&x, &y)
                    .map(|(index, x, y)| (format!("{name} at blockAccessIndex {index:#x}"), x, y))
            })
        })
}

/// Storage changes: slot by slot, then by block access index.
fn storage_changes_difference(e: &AccountChanges, g: &AccountChanges) -> Option<Found> {
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
        .map(|(index, x, y)| {
            (
                format!("storageChanges[slot {slot:#x}] postValue at blockAccessIndex {index:#x}"),
                x,
                y,
            )
        })
    })
}

/// Storage reads: the first slot one side reads and the other does not.
fn storage_reads_difference(e: &AccountChanges, g: &AccountChanges) -> Option<Found> {
    let reads =
        |a: &AccountChanges| -> BTreeSet<U256> { a.storage_reads.iter().copied().collect() };
    let (er, gr) = (reads(e), reads(g));
    let slot = er.symmetric_difference(&gr).next()?;
    let has = |s: &BTreeSet<U256>| if s.contains(slot) { "read" } else { "not read" };
    Some((
        format!("storageReads[slot {slot:#x}]"),
        has(&er).into(),
        has(&gr).into(),
    ))
}

/// Changes keyed by block access index, values as text.
fn per_index<T>(changes: &[T], entry: impl Fn(&T) -> (u64, String)) -> BTreeMap<u64, String> {
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
        entry: format!("encoding of entry {i} (order or duplicates)"),
        expected: format!("{:?}", expected.get(i)),
        got: format!("{:?}", got.get(i)),
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

/// First key at which two maps differ, with both values (`absent` for a missing one).
fn first_keyed<V: PartialEq + ToString>(
    a: &BTreeMap<u64, V>,
    b: &BTreeMap<u64, V>,
) -> Option<(u64, String, String)> {
    let show = |v: Option<&V>| v.map(|v| v.to_string()).unwrap_or_else(|| "absent".into());
    let keys: std::collections::BTreeSet<u64> = a.keys().chain(b.keys()).copied().collect();
    keys.into_iter()
        .find(|k| a.get(k) != b.get(k))
        .map(|k| (k, show(a.get(&k)), show(b.get(&k))))
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
        assert_eq!(d.entry, "postBalance at blockAccessIndex 0x1");
        assert_eq!((d.expected.as_str(), d.got.as_str()), ("5", "6"));
        let d = first_difference(&expected, &vec![]).unwrap();
        assert_eq!((d.entry.as_str(), d.got.as_str()), ("account", "absent"));
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
            (d.entry.as_str(), d.expected.as_str(), d.got.as_str()),
            ("storageReads[slot 0x8]", "not read", "read")
        );
        assert_eq!(without_extra_reads(&expected, &got), expected);

        // An extra account with a change is no read-only access.
        let mut changed = got.clone();
        changed[1]
            .balance_changes
            .push(BalanceChange::new(BlockAccessIndex(1), U256::from(1)));
        let d = first_difference(&expected, &without_extra_reads(&expected, &changed)).unwrap();
        assert_eq!((d.entry.as_str(), d.got.as_str()), ("account", "present"));

        // Nor is a missing read, a missing account or a different value.
        let mut missing = got.clone();
        missing[0].storage_reads.clear();
        let d = first_difference(&expected, &without_extra_reads(&expected, &missing)).unwrap();
        assert_eq!(
            (d.entry.as_str(), d.got.as_str()),
            ("storageReads[slot 0x7]", "not read")
        );
        let d = first_difference(&expected, &without_extra_reads(&expected, &vec![])).unwrap();
        assert_eq!((d.entry.as_str(), d.got.as_str()), ("account", "absent"));
        let mut value = got;
        value[0].balance_changes[0].post_balance = U256::from(6);
        let d = first_difference(&expected, &without_extra_reads(&expected, &value)).unwrap();
        assert_eq!(d.entry, "postBalance at blockAccessIndex 0x1");
    }
}
